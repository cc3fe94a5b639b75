//! The history snapshot: the prompt as the model will see it next, with what the
//! summaries replaced and every compaction so far.

use serde::{Deserialize, Serialize};

/// The prompt as the model will see it next, with what the summaries replaced.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct HistorySnapshot {
    /// In prompt order: user messages, assistant messages, tool results, summaries.
    pub entries: Vec<HistoryEntry>,
    /// Tokens of the whole prompt (system prompt and tool schemas included).
    pub prompt_tokens: u64,
    /// Tokens of the prompt's messages by kind: `user`, `assistant`, `tool results`, `summaries`.
    pub by_role: Vec<(String, u64)>,
    /// Tokens of tool results in the prompt, by tool.
    pub by_tool: Vec<(String, u64)>,
    /// Every compaction of the session, oldest first.
    pub compactions: Vec<CompactionRecord>,
    /// Tool results the prompt shows as one-line stubs.
    pub masked_results: u64,
    /// Tool results the prompt shows trimmed to their first and last lines.
    #[serde(default)]
    pub trimmed_results: u64,
    /// What rewinds set aside from this conversation (no longer in the prompt; the
    /// session log keeps it too), oldest first, a branch set aside again with a later
    /// one right after it.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub set_aside: Vec<SetAsideBranch>,
}

/// Messages a rewind set aside ([`HistorySnapshot::set_aside`]).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SetAsideBranch {
    /// The turn whose message the conversation went back to just before.
    pub turn: u32,
    /// The number (from 1) its first message had in the history.
    pub from: u64,
    /// The turn of a later rewind, to an earlier message, that set this branch aside
    /// again with its own.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub within: Option<u32>,
    /// Its messages in order, each titled with its number.
    pub entries: Vec<HistoryEntry>,
}

/// One item of a [`HistorySnapshot`].
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct HistoryEntry {
    pub kind: HistoryEntryKind,
    /// One line: the first words of a message, the tools called, or the summary's range.
    pub title: String,
    pub tokens: u64,
    /// The whole text as the model sees it (capped for very long entries).
    pub body: String,
    /// For summaries: what they replaced.
    pub summary: Option<SummaryDetail>,
}

/// What kind of prompt item a [`HistoryEntry`] is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum HistoryEntryKind {
    User,
    Assistant,
    /// The results of one step's tool calls; some may be masked stubs.
    ToolResults,
    Summary,
}

/// A summary's record: the range it replaced and the original messages.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SummaryDetail {
    /// History messages `start..end`.
    pub start: u64,
    pub end: u64,
    /// Tokens the range took before it was summarized.
    pub tokens_before: u64,
    /// True when the model could not summarize and a digest stands in.
    pub fallback: bool,
    /// The replaced messages (earlier summaries it absorbed appear as summary entries).
    pub originals: Vec<HistoryEntry>,
}

/// How a summary call that replaced nothing ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CompactionOutcome {
    Failed,
    Cancelled,
}

/// One compaction, as the session log and `/stats` show it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct CompactionRecord {
    /// The whole prompt's tokens before and after.
    pub tokens_before: u64,
    pub tokens_after: u64,
    pub start: u64,
    pub end: u64,
    pub fallback: bool,
}
