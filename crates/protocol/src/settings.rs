//! Settings the agent and its front ends share: what the configuration names and the
//! workbench shows.

use serde::{Deserialize, Serialize};

/// How much the agent may do without asking.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "clap", derive(clap::ValueEnum))]
#[serde(rename_all = "kebab-case")]
pub enum ApprovalMode {
    /// Only tools that change nothing run; everything else is refused.
    ReadOnly,
    /// Tools that change nothing run; every other call asks.
    Ask,
    /// Reading and editing files in the workspace run; commands and external tools ask.
    AutoEdit,
    /// Everything runs without asking.
    FullAuto,
}

impl std::fmt::Display for ApprovalMode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            ApprovalMode::ReadOnly => "read-only",
            ApprovalMode::Ask => "ask",
            ApprovalMode::AutoEdit => "auto-edit",
            ApprovalMode::FullAuto => "full-auto",
        })
    }
}

/// `tools.bash.sandbox`: whether full-auto sandboxes commands too.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "clap", derive(clap::ValueEnum))]
#[serde(rename_all = "lowercase")]
pub enum SandboxSetting {
    /// Sandbox commands in every approval mode, where the kernel supports it.
    #[default]
    #[serde(alias = "on")]
    #[cfg_attr(feature = "clap", value(name = "on", alias = "auto"))]
    Auto,
    /// Full-auto runs commands unsandboxed; the other modes still sandbox them.
    Off,
}

impl std::fmt::Display for SandboxSetting {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            SandboxSetting::Auto => "auto",
            SandboxSetting::Off => "off",
        })
    }
}

/// `agent.compaction`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum CompactionStrategy {
    Summarize,
    MaskToolResults,
    Both,
    Off,
}

impl CompactionStrategy {
    pub fn summarizes(self) -> bool {
        matches!(self, CompactionStrategy::Summarize | CompactionStrategy::Both)
    }

    pub fn masks(self) -> bool {
        matches!(
            self,
            CompactionStrategy::MaskToolResults | CompactionStrategy::Both
        )
    }
}

/// Which BPE encoding counts tokens (`agent.tokenizer`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Encoding {
    /// GPT-4 era; close enough for Claude and MiniMax budgeting.
    Cl100kBase,
    /// GPT-4o and later.
    O200kBase,
}

/// `ui.notify`: how the workbench tells the person, through the terminal, that an
/// approval waits or a turn ended while its window was not focused.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum NotifySetting {
    /// The terminal's own kind, found by `TERM_PROGRAM`/`TERM`; a bell where unknown.
    #[default]
    Auto,
    /// `OSC 9` (iTerm2).
    Osc9,
    /// `OSC 777;notify` (Ghostty, WezTerm, foot, urxvt).
    Osc777,
    /// `OSC 99` (kitty).
    Osc99,
    /// The bell (BEL), which most terminals and tmux turn into an alert.
    Bell,
    /// Nothing.
    Off,
}
