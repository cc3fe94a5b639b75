//! Session logs: every session is recorded as it happens, one JSONL file per session, so
//! it can be resumed, replayed and exported without a model.
//!
//! A log is a header line, then one [`Record`] per line: every event the agent emitted
//! (tool output deltas aside; the finished output is in `tool_call_finished`), every
//! change to the history (messages appended, summaries with the ranges they replace,
//! masking), and every approval decision. Rebuilding a session is applying its records
//! in order (`agent::Restored`).

mod error;
pub mod load;
mod log;
pub mod store;

use serde::{Deserialize, Serialize};

use miniagent_protocol::message::{ContentBlock, Message};
use miniagent_protocol::record::{Change, Summary};
use miniagent_protocol::{Decision, Event};

pub use error::SessionError;
pub use load::{Loaded, load};
pub use log::SessionLog;

/// The format written in headers; a loader reads this and older. Format 2 added
/// `output` records, which format-1 readers would stop at.
pub const FORMAT: u32 = 2;

/// The first line of a session log.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Header {
    pub id: String,
    /// When the session began, ISO 8601 UTC.
    pub created: String,
    pub workspace: String,
    pub model: String,
    pub provider: String,
    /// The miniagent version that began the session.
    pub version: String,
    pub format: u32,
    /// Tokens of the system prompt and tool schemas, which every prompt carries.
    #[serde(default)]
    pub fixed_tokens: u64,
}

/// One line of a session log after the header.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Record {
    Header(Header),
    /// Something the agent told its front ends, at `ts` (milliseconds since 1970).
    Event {
        ts: u64,
        event: Event,
    },
    /// The history was cut to `from` messages, then `messages` appended.
    Messages {
        ts: u64,
        from: usize,
        messages: Vec<Message>,
    },
    /// The message at `message` kept its first `from` blocks, then `blocks` were
    /// appended (a step's tool results as each call ends).
    Blocks {
        ts: u64,
        message: usize,
        from: usize,
        blocks: Vec<ContentBlock>,
    },
    /// A summary now stands in for `summary.start..summary.end`.
    Summary {
        ts: u64,
        summary: Summary,
    },
    /// The prompt shows the first `results` tool results as stubs, and the results of the
    /// calls in `trimmed` trimmed to their first and last lines (older readers ignore it).
    Masked {
        ts: u64,
        results: usize,
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        trimmed: Vec<String>,
    },
    /// The conversation started over.
    Cleared {
        ts: u64,
    },
    /// The person's answer to an approval request.
    Decision {
        ts: u64,
        id: String,
        decision: Decision,
    },
    /// What a call printed while it ran (its start and end, and how much was cut
    /// between them), written just before the call's `tool_call_finished`.
    Output {
        ts: u64,
        id: String,
        head: String,
        tail: String,
        dropped: u64,
    },
    /// The session was picked up again, possibly with another model.
    Resumed {
        ts: u64,
        model: String,
        provider: String,
        version: String,
    },
    /// A rewind: the history went back to just before message `to`, turn `turn`'s; the
    /// messages from there on (still in the records above) were set aside, and the
    /// masking became `results` and `trimmed`.
    Rewound {
        ts: u64,
        to: usize,
        turn: u32,
        results: usize,
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        trimmed: Vec<String>,
    },
    /// A call changed a file in the workspace (what it was before and after, by the
    /// content ids of the session's checkpoint store).
    FileChanged {
        ts: u64,
        change: crate::checkpoint::Change,
    },
    /// A rewind put back the files changed from turn `turn` on (`changes`: what it wrote).
    CodeRestored {
        ts: u64,
        turn: u32,
        changes: Vec<crate::checkpoint::Change>,
    },
}

impl Record {
    /// When it happened (the header has no time of its own here).
    pub fn ts(&self) -> Option<u64> {
        match self {
            Record::Header(_) => None,
            Record::Event { ts, .. }
            | Record::Messages { ts, .. }
            | Record::Blocks { ts, .. }
            | Record::Summary { ts, .. }
            | Record::Masked { ts, .. }
            | Record::Cleared { ts }
            | Record::Decision { ts, .. }
            | Record::Output { ts, .. }
            | Record::Resumed { ts, .. }
            | Record::FileChanged { ts, .. }
            | Record::CodeRestored { ts, .. }
            | Record::Rewound { ts, .. } => Some(*ts),
        }
    }

    /// The record of a history change.
    pub fn from_change(ts: u64, change: Change) -> Record {
        match change {
            Change::Messages { from, messages } => Record::Messages { ts, from, messages },
            Change::Blocks {
                message,
                from,
                blocks,
            } => Record::Blocks {
                ts,
                message,
                from,
                blocks,
            },
            Change::Summary(summary) => Record::Summary { ts, summary },
            Change::Masked { results, trimmed } => Record::Masked { ts, results, trimmed },
            Change::Cleared => Record::Cleared { ts },
            Change::Rewound {
                to,
                turn,
                results,
                trimmed,
            } => Record::Rewound {
                ts,
                to,
                turn,
                results,
                trimmed,
            },
        }
    }

    /// The history change this record is, if it is one.
    pub fn to_change(&self) -> Option<Change> {
        match self {
            Record::Messages { from, messages, .. } => Some(Change::Messages {
                from: *from,
                messages: messages.clone(),
            }),
            Record::Blocks {
                message,
                from,
                blocks,
                ..
            } => Some(Change::Blocks {
                message: *message,
                from: *from,
                blocks: blocks.clone(),
            }),
            Record::Summary { summary, .. } => Some(Change::Summary(summary.clone())),
            Record::Masked { results, trimmed, .. } => Some(Change::Masked {
                results: *results,
                trimmed: trimmed.clone(),
            }),
            Record::Cleared { .. } => Some(Change::Cleared),
            Record::Rewound {
                to,
                turn,
                results,
                trimmed,
                ..
            } => Some(Change::Rewound {
                to: *to,
                turn: *turn,
                results: *results,
                trimmed: trimmed.clone(),
            }),
            Record::Header(_)
            | Record::Event { .. }
            | Record::Decision { .. }
            | Record::Output { .. }
            | Record::Resumed { .. }
            | Record::FileChanged { .. }
            | Record::CodeRestored { .. } => None,
        }
    }
}

/// The line a front end prints when it ends, naming session `id` and the command that
/// continues it: `miniagent --resume ID`, or `miniagent exec --resume ID "…"` for `exec`,
/// with `-w` when the session's workspace is not the current folder (a session continues
/// in the workspace it is opened in).
pub fn continue_line(id: &str, workspace: &std::path::Path, exec: bool) -> String {
    let here = std::env::current_dir()
        .ok()
        .and_then(|dir| dir.canonicalize().ok());
    let elsewhere = here.as_deref() != Some(workspace);
    let folder = if elsewhere {
        format!(
            " -w {}",
            crate::tools::command_rule::shell_word(&workspace.display().to_string())
        )
    } else {
        String::new()
    };
    let command = if exec {
        format!("miniagent{folder} exec --resume {id} \"…\"")
    } else {
        format!("miniagent{folder} --resume {id}")
    };
    format!("session {id} · continue it with: {command}")
}

/// Milliseconds since 1970, the time stamp of every record.
pub fn now_ms() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
        .unwrap_or(0)
}

/// A new session id: the UTC time it began (so ids sort by age) and four random hex digits.
pub fn new_id(unix_ms: u64) -> String {
    let iso = crate::tools::files::iso8601(unix_ms / 1000);
    // `2026-11-22T04:04:38Z` → `20261122-040438`
    let digits: String = iso.chars().filter(char::is_ascii_digit).collect();
    let (date, time) = digits.split_at(digits.len().min(8));
    format!("{date}-{time}-{:04x}", fastrand::u16(..))
}

/// A header for unit tests.
#[cfg(test)]
pub(crate) fn test_header() -> Header {
    Header {
        id: "20261122-040438-abcd".into(),
        created: "2026-11-22T04:04:38Z".into(),
        workspace: "/tmp/w".into(),
        model: "m".into(),
        provider: "anthropic".into(),
        version: "0.1.0".into(),
        format: FORMAT,
        fixed_tokens: 0,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn ids_sort_by_time_and_read_as_a_date() {
        let id = new_id(1_795_320_278_000);
        assert!(id.starts_with("20261122-040438-"), "{id}");
        assert_eq!(id.len(), "20261122-040438-abcd".len());
        assert!(new_id(1_795_320_279_000)[..15] > new_id(1_795_320_278_000)[..15]);
    }

    #[test]
    fn records_are_tagged_by_kind() {
        let record = Record::Masked {
            ts: 5,
            results: 3,
            trimmed: Vec::new(),
        };
        let line = serde_json::to_string(&record).expect("serializes");
        assert_eq!(line, r#"{"kind":"masked","ts":5,"results":3}"#);
        let back: Record = serde_json::from_str(&line).expect("parses");
        assert_eq!(back, record);
    }
}
