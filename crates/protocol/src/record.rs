//! What the session log records besides events: summaries as they were applied and the
//! changes to the conversation. The log is a wire format, read back by resume, replay,
//! export and the inspector.

use serde::{Deserialize, Serialize};

use crate::message::{ContentBlock, Message};

/// Opens a summary's text in the prompt, so the model knows what it is reading.
pub const SUMMARY_MARK: &str = "[Summary of earlier work in this conversation, written when the context was compacted; the original messages are not shown]";

/// A model-written (or fallback) summary standing in for `messages[start..end]`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Summary {
    pub start: usize,
    pub end: usize,
    pub text: String,
    /// Tokens the range took in the prompt before this summary.
    pub tokens_before: u64,
    /// Tokens of the summary message.
    pub tokens: u64,
    /// True when the model could not write it and a digest stands in.
    pub fallback: bool,
    /// Earlier summaries this one absorbed.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub nested: Vec<Summary>,
}

impl Summary {
    pub fn message(&self) -> Message {
        Message::user(format!("{SUMMARY_MARK}\n\n{}", self.text))
    }
}

/// A change to the context, as the session log records it. Applying a session's changes
/// in order to an empty context rebuilds it exactly.
#[derive(Clone, Debug, PartialEq)]
pub enum Change {
    /// The history was cut to `from` messages, then `messages` appended (messages are only
    /// ever appended, and the last one completed, so `from` is where the change starts).
    Messages { from: usize, messages: Vec<Message> },
    /// The message at `message` kept its first `from` blocks and `blocks` were appended
    /// (a step's tool results, one call at a time: rewriting the whole message after
    /// each call made the log grow with the square of the calls in a reply).
    Blocks {
        message: usize,
        from: usize,
        blocks: Vec<ContentBlock>,
    },
    /// A summary as it was applied (before it absorbed older ones).
    Summary(Summary),
    /// The number of tool results shown as stubs, and the calls whose results are shown
    /// trimmed (all of them, not only the new ones).
    Masked { results: usize, trimmed: Vec<String> },
    /// The conversation started over.
    Cleared,
    /// A rewind: the history went back to just before message `to` (turn `turn`'s
    /// message). The messages from there on, and the summaries that start among them,
    /// are set aside (the context keeps them as a branch, the log keeps everything); the
    /// prompt then shows the first `results` tool results as stubs and the results of
    /// `trimmed` trimmed, as it did when that message was added.
    Rewound {
        to: usize,
        turn: u32,
        results: usize,
        trimmed: Vec<String>,
    },
}
