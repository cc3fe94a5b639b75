//! Key bindings as components describe them, so the help overlay and the bottom bar
//! are generated from the components themselves, never kept by hand; and what a
//! component did with a key.

use crossterm::event::{KeyCode, KeyEvent, KeyEventKind, KeyModifiers};

/// Whether `key` types a character: a `Char` with neither Ctrl nor Alt held.
pub fn types_char(key: KeyEvent) -> bool {
    matches!(key.code, KeyCode::Char(_))
        && !key
            .modifiers
            .intersects(KeyModifiers::CONTROL | KeyModifiers::ALT)
}

/// Whether `key` is a press a pane or an overlay reads as its own: not a release, and
/// no Ctrl, Alt or Super chord (those belong to the workbench). Shift is part of a
/// character (`G`).
pub fn is_plain_press(key: &KeyEvent) -> bool {
    let chord = KeyModifiers::CONTROL | KeyModifiers::ALT | KeyModifiers::SUPER;
    key.kind != KeyEventKind::Release && !key.modifiers.intersects(chord)
}

/// One binding a component offers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct KeyHint {
    /// How the keys are written, e.g. `Enter`, `PgUp/PgDn`, `Ctrl-C`.
    pub keys: &'static str,
    /// What they do, short, e.g. `send`, `scroll`.
    pub action: &'static str,
}

/// A slash command as completion and the help show it (the table that runs them is
/// `commands::COMMANDS`; this leaf type keeps the input box free of the app).
/// A prompt command (a file under `commands/`) has owned text, a built-in row static.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CommandHint {
    /// With its slash, e.g. `/help`.
    pub name: std::borrow::Cow<'static, str>,
    /// How its argument is written, e.g. `MODE`; empty when it takes none.
    pub args: std::borrow::Cow<'static, str>,
    pub help: std::borrow::Cow<'static, str>,
}

impl KeyHint {
    pub const fn new(keys: &'static str, action: &'static str) -> Self {
        Self { keys, action }
    }
}

/// What an overlay did with a key.
#[derive(Clone, Debug, PartialEq)]
pub enum OverlayAction {
    /// Not its key.
    Ignored,
    Changed,
    Close,
    /// Ask the agent for something.
    Send(miniagent_protocol::Op),
    /// Continue the session recorded in this log (the `/resume` picker's choice).
    Resume(std::path::PathBuf),
    /// Continue it after all: the person said yes to [`ResumeQuestion`].
    ResumeConfirmed(std::path::PathBuf),
    /// Use this theme (and remember it): the `/theme` choice.
    Theme(String),
    /// Switch the session to this profile or model: the `/model` choice.
    SetModel(String),
    /// The trust question's answer: start the session with the workspace's own servers
    /// and skills, or without them.
    Trust(bool),
    /// Start the session with the local model server the welcome panel found.
    UseLocalServer {
        base_url: String,
        model: String,
    },
    /// The person decided on the tool call `id` (the approval dialog's answer).
    Decide {
        id: String,
        decision: miniagent_protocol::Decision,
    },
    /// Stop the turn (Ctrl-C over the approval dialog).
    Interrupt,
}

/// What an overlay may read of the app while it handles a key.
#[derive(Clone, Copy, Debug)]
pub struct OverlayContext<'a> {
    /// The remembered approvals (for `/approvals`).
    pub rules: &'a [miniagent_protocol::ApprovalRule],
    /// What was refused for the rest of the session (listed after them).
    pub refused: &'a [miniagent_protocol::ApprovalRule],
    /// The `[permissions]` rules in force (listed after both).
    pub permanent: &'a [miniagent_protocol::PermanentRule],
    /// The latest history snapshot (for the inspector).
    pub history: Option<&'a miniagent_protocol::HistorySnapshot>,
    /// The MCP servers and their states (for `/mcp`).
    pub mcp: &'a [(String, miniagent_protocol::McpState)],
}
