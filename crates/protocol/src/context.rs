//! What fills the prompt (`/context`), and the prompt commands a session offers.

use serde::{Deserialize, Serialize};

/// The answer to [`crate::Op::InspectContext`]: what the next prompt is made of, in
/// tokens as the agent counts them for its budget.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ContextReport {
    /// The whole system prompt (the parts below included).
    pub system_prompt_tokens: u64,
    /// Each instruction file in it: its path and tokens.
    pub instruction_files: Vec<(String, u64)>,
    /// The skills listed in it, and the tokens of that list.
    pub skills: u64,
    pub skills_tokens: u64,
    /// The tools declared with every request, and their schemas' tokens.
    pub tools: u64,
    pub tool_tokens: u64,
    /// The history's tokens by kind (`user`, `assistant`, `tool results`, `summaries`).
    pub history: Vec<(String, u64)>,
    /// Items of the history in the prompt: messages, and the summaries standing in for
    /// older ones.
    pub messages: u64,
    pub summaries: u64,
    /// Tool results shown as one-line stubs, and cut to their first and last lines.
    pub masked_results: u64,
    pub trimmed_results: u64,
    /// Kept free for the reply (`model.max_output_tokens`), and for counting error.
    pub output_reserve: u64,
    pub margin: u64,
    /// `agent.token_limit` and the model's context window.
    pub token_limit: u64,
    pub context_window: u64,
}

impl ContextReport {
    /// Tokens of the whole prompt: the system prompt, the tool schemas and the history.
    pub fn prompt_tokens(&self) -> u64 {
        let history: u64 = self.history.iter().map(|(_, tokens)| tokens).sum();
        self.system_prompt_tokens
            .saturating_add(self.tool_tokens)
            .saturating_add(history)
    }

    /// What the prompt may take before compaction starts: the smaller of the limit and
    /// the window, less the reserve and the margin.
    pub fn budget(&self) -> u64 {
        self.token_limit
            .min(self.context_window)
            .saturating_sub(self.output_reserve.saturating_add(self.margin))
    }
}

/// A prompt command (a Markdown file under `commands/`, or built in) as offered to
/// front ends ([`crate::Event::CommandsLoaded`]).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct CommandInfo {
    /// Without the slash; a sub-folder is a namespace (`git:commit`).
    pub name: String,
    /// One line, cleaned of control characters.
    pub description: String,
    /// What the arguments are, as its front matter says (`argument-hint`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub argument_hint: Option<String>,
    /// `built-in`, `user` or `workspace`.
    pub source: String,
}

/// One line naming the instruction files in the system prompt, for every face's session
/// header (`instructions: /repo/AGENTS.md, /repo/crates/AGENTS.md (cut)`); empty when
/// there are none. Paths are as the event carries them: a face cleans them.
pub fn instruction_files_line(files: &[crate::InstructionFileInfo]) -> String {
    if files.is_empty() {
        return String::new();
    }
    let names: Vec<String> = files
        .iter()
        .map(|file| match file.truncated {
            true => format!("{} (cut)", file.path),
            false => file.path.clone(),
        })
        .collect();
    format!("instructions: {}", names.join(", "))
}
