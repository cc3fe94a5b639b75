//! What `sessions list`, `sessions show` and `sessions export` print: pure functions of a
//! loaded log, so the command line only finds files and writes strings.
//!
//! Text and markdown are written from the full history (what happened); JSON holds the
//! history the model saw (summaries in place of their ranges, masked results as stubs).

mod markdown;
mod text;

use std::collections::HashMap;

use serde::Serialize;

use crate::agent::Restored;
use crate::agent::context::SetAside;
use crate::session::{Header, Loaded, Record};
use crate::tokens::TokenCounter;
use crate::tools::output;
use miniagent_protocol::message::{ContentBlock, Message};
use miniagent_protocol::record::Summary;
use miniagent_protocol::{Event, ToolOutcome};
use miniagent_text::clean;

pub use markdown::markdown;
pub use text::{list_lines, session_summary, show};

/// Characters of a tool call's arguments or result on one line.
const PREVIEW_CHARS: usize = 80;

/// One stretch of a session's conversation: all of it, or the part before or after the
/// conversation was started over.
#[derive(Clone, Debug, PartialEq)]
pub struct Conversation {
    pub messages: Vec<Message>,
    /// The summaries standing in for ranges of `messages` when it ended.
    pub summaries: Vec<Summary>,
    /// What rewinds set aside from it: each branch's `at` is the index in `messages`
    /// where the conversation went on without it.
    pub set_aside: Vec<SetAside>,
}

impl Conversation {
    /// A set-aside branch as a conversation of its own: its messages, its summaries and
    /// the branches set aside from among them, numbered from its first message.
    pub fn of_branch(branch: &SetAside) -> Conversation {
        let shift = |summary: &Summary| {
            let mut summary = summary.clone();
            fn move_back(summary: &mut Summary, by: usize) {
                summary.start = summary.start.saturating_sub(by);
                summary.end = summary.end.saturating_sub(by);
                for nested in &mut summary.nested {
                    move_back(nested, by);
                }
            }
            move_back(&mut summary, branch.at);
            summary
        };
        Conversation {
            messages: branch.messages.clone(),
            summaries: branch.summaries.iter().map(shift).collect(),
            set_aside: branch
                .nested
                .iter()
                .map(|nested| SetAside {
                    at: nested.at.saturating_sub(branch.at),
                    ..nested.clone()
                })
                .collect(),
        }
    }

    /// The branches set aside where the conversation went on at message `index`.
    pub(crate) fn set_aside_at(&self, index: usize) -> impl Iterator<Item = &SetAside> {
        self.set_aside.iter().filter(move |branch| branch.at == index)
    }
}

/// The line that opens a set-aside branch in `sessions show` and the markdown export.
pub(crate) fn rewound_line(branch: &SetAside) -> String {
    let count = branch.messages.len();
    format!(
        "rewound to before turn {}: {count} message{} set aside",
        branch.turn,
        if count == 1 { "" } else { "s" }
    )
}

/// The session's conversations, oldest first; a session never cleared has one.
pub fn conversations(loaded: &Loaded) -> Vec<Conversation> {
    // Counts play no part in the messages, so the estimate spares loading the tokenizer.
    let mut restored = Restored::new(TokenCounter::estimate_only());
    let mut done = Vec::new();
    for record in &loaded.records {
        if matches!(record, Record::Cleared { .. }) && !is_empty(&restored) {
            done.push(conversation_of(&restored));
        }
        restored.apply(record);
    }
    if done.is_empty() || !is_empty(&restored) {
        done.push(conversation_of(&restored));
    }
    done
}

/// Nothing was said in the conversation, nor set aside from it.
fn is_empty(restored: &Restored) -> bool {
    restored.context.messages().is_empty() && restored.context.set_aside().is_empty()
}

/// A snapshot of the conversation as it stands.
fn conversation_of(restored: &Restored) -> Conversation {
    Conversation {
        messages: restored.context.messages().to_vec(),
        summaries: restored.context.summaries().to_vec(),
        set_aside: restored.context.set_aside().to_vec(),
    }
}

/// How the log says each call ended, by call id (the history keeps only the result text).
type CallEnds<'a> = HashMap<&'a str, (ToolOutcome, u64)>;

/// How each call of the log ended, from its `tool_call_finished` events.
fn call_ends(loaded: &Loaded) -> CallEnds<'_> {
    loaded
        .events()
        .filter_map(|(_, event)| match event {
            Event::ToolCallFinished {
                id,
                outcome,
                duration_ms,
                ..
            } => Some((id.as_str(), (*outcome, *duration_ms))),
            _ => None,
        })
        .collect()
}

/// What a tool call came to, as both renderers describe it.
struct CallResult<'a> {
    /// The result text, or `None` when the history holds none (the session ended first).
    content: Option<&'a str>,
    outcome: ToolOutcome,
    duration_ms: Option<u64>,
}

impl CallResult<'_> {
    fn ok(&self) -> bool {
        self.outcome == ToolOutcome::Ok && self.content.is_some()
    }

    /// `ok, 12 ms`, `denied`, `no result`.
    fn label(&self) -> String {
        if self.content.is_none() {
            return "no result: the session ended while it ran".to_string();
        }
        let word = match self.outcome {
            ToolOutcome::Ok => "ok",
            ToolOutcome::Error => "error",
            ToolOutcome::Denied => "denied",
            ToolOutcome::Refused => "refused",
            ToolOutcome::Cancelled => "cancelled",
        };
        match self.duration_ms {
            Some(ms) if matches!(self.outcome, ToolOutcome::Ok | ToolOutcome::Error) => {
                format!("{word}, {ms} ms")
            }
            _ => word.to_string(),
        }
    }
}

/// The results of a conversation's calls, by call id.
struct Results<'a> {
    by_call: HashMap<&'a str, (&'a str, bool)>,
    ends: &'a CallEnds<'a>,
}

impl<'a> Results<'a> {
    fn new(messages: &'a [Message], ends: &'a CallEnds<'a>) -> Self {
        let by_call = messages
            .iter()
            .flat_map(|m| m.content.iter())
            .filter_map(|block| match block {
                ContentBlock::ToolResult {
                    tool_use_id,
                    content,
                    is_error,
                } => Some((tool_use_id.as_str(), (content.as_str(), *is_error))),
                _ => None,
            })
            .collect();
        Self { by_call, ends }
    }

    fn of(&self, id: &str) -> CallResult<'a> {
        let found = self.by_call.get(id).copied();
        let recorded = self.ends.get(id).copied();
        let outcome = match (recorded, found) {
            (Some((outcome, _)), _) => outcome,
            (None, Some((_, true))) => ToolOutcome::Error,
            (None, Some((_, false))) => ToolOutcome::Ok,
            (None, None) => ToolOutcome::Cancelled,
        };
        CallResult {
            content: found.map(|(content, _)| content),
            outcome,
            duration_ms: recorded.map(|(_, ms)| ms),
        }
    }
}

/// Call ids asked for by the conversation's assistant messages.
fn requested_calls(messages: &[Message]) -> std::collections::HashSet<&str> {
    messages
        .iter()
        .flat_map(|m| m.tool_uses())
        .map(|call| call.id)
        .collect()
}

/// The results in a tool message whose call no assistant message asked for (shown
/// alone; the others are shown with their calls).
fn orphan_results<'a>(
    message: &'a Message,
    requested: &'a std::collections::HashSet<&str>,
) -> impl Iterator<Item = &'a str> {
    message.content.iter().filter_map(move |block| match block {
        ContentBlock::ToolResult {
            tool_use_id, content, ..
        } if !requested.contains(tool_use_id.as_str()) => Some(content.as_str()),
        _ => None,
    })
}

/// A call's arguments on one line: the command of a shell call, the path of a file
/// tool's, compact JSON otherwise.
/// [`output::preview_line`] of `text` cleaned first: the preview counts what shows, and a
/// sequence left unfinished cannot hide what follows it on the line.
fn preview_line(text: &str, max_chars: usize) -> String {
    output::preview_line(&clean(text), max_chars)
}

fn arguments_line(input: &serde_json::Value) -> String {
    let field = |name: &str| input.get(name).and_then(|v| v.as_str());
    match field("command").or_else(|| field("path")) {
        Some(telling) => preview_line(telling, PREVIEW_CHARS),
        None if input.as_object().is_some_and(|o| o.is_empty()) => String::new(),
        None => preview_line(&input.to_string(), PREVIEW_CHARS),
    }
}

/// A summary and where it sits: `depth` 0 is one the prompt shows, deeper ones were
/// absorbed by a later summary.
struct PlacedSummary<'a> {
    summary: &'a Summary,
    depth: usize,
}

/// Every summary of a conversation, nested ones included, outermost first at each start.
fn placed_summaries(summaries: &[Summary]) -> Vec<PlacedSummary<'_>> {
    fn walk<'a>(summaries: &'a [Summary], depth: usize, out: &mut Vec<PlacedSummary<'a>>) {
        for summary in summaries {
            out.push(PlacedSummary { summary, depth });
            walk(&summary.nested, depth + 1, out);
        }
    }
    let mut out = Vec::new();
    walk(summaries, 0, &mut out);
    out.sort_by(|a, b| a.summary.start.cmp(&b.summary.start).then(a.depth.cmp(&b.depth)));
    out
}

/// `2026-11-22T04:04:38Z` → `2026-11-22 04:04` (UTC); anything else is shown as it is.
pub fn short_time(iso: &str) -> String {
    match (iso.get(..10), iso.get(11..16)) {
        (Some(date), Some(time)) if iso.as_bytes().get(10) == Some(&b'T') => format!("{date} {time}"),
        _ => iso.to_string(),
    }
}

/// `2026-11-22T04:04:38Z` → `2026-11-22 04:04:38 UTC`.
fn long_time(iso: &str) -> String {
    match iso.strip_suffix('Z') {
        Some(stamp) if stamp.len() == 19 => format!("{} UTC", stamp.replacen('T', " ", 1)),
        _ => iso.to_string(),
    }
}

/// The history the model saw, with the session's header: what `sessions export --format
/// json` writes.
#[derive(Serialize)]
struct JsonExport<'a> {
    session: &'a Header,
    /// The prompt's messages: summaries in place of their ranges, masked results as stubs.
    messages: Vec<Message>,
    /// The summaries in the prompt, each with the history range it stands for.
    summaries: &'a [Summary],
    /// Tool results (counted in history order) that the prompt shows as stubs.
    masked_results: usize,
}

/// `sessions export --format json`, pretty-printed.
pub fn json(loaded: &Loaded, restored: &Restored) -> Result<String, ExportError> {
    let export = JsonExport {
        session: &loaded.header,
        messages: restored.context.prompt(),
        summaries: restored.context.summaries(),
        masked_results: restored.context.masked_results(),
    };
    serde_json::to_string_pretty(&export).map_err(ExportError)
}

/// The session could not be written as JSON.
#[derive(Debug, thiserror::Error)]
#[error("cannot write the session as JSON: {0}")]
pub struct ExportError(serde_json::Error);

#[cfg(test)]
mod tests {
    use super::*;
    use miniagent_protocol::message::Role;
    use miniagent_protocol::record::Change;
    use pretty_assertions::assert_eq;
    use serde_json::json;

    pub(super) fn header() -> Header {
        crate::session::test_header()
    }

    pub(super) fn assistant(blocks: Vec<ContentBlock>) -> Message {
        Message {
            role: Role::Assistant,
            content: blocks,
        }
    }

    pub(super) fn call(id: &str, command: &str) -> ContentBlock {
        ContentBlock::ToolUse {
            id: id.into(),
            name: "bash".into(),
            input: json!({"command": command}),
        }
    }

    pub(super) fn result(id: &str, content: &str) -> Message {
        Message {
            role: Role::Tool,
            content: vec![ContentBlock::ToolResult {
                tool_use_id: id.into(),
                content: content.into(),
                is_error: false,
            }],
        }
    }

    pub(super) fn messages(ts: u64, from: usize, messages: Vec<Message>) -> Record {
        Record::from_change(ts, Change::Messages { from, messages })
    }

    /// A sound log of `records`, read as `sessions` commands read one.
    pub(super) fn loaded(records: Vec<Record>) -> Loaded {
        let lines: Vec<String> = std::iter::once(Record::Header(header()))
            .chain(records)
            .map(|record| serde_json::to_string(&record).expect("serializes"))
            .collect();
        crate::session::load::parse((lines.join("\n") + "\n").as_bytes(), "s.jsonl").expect("loads")
    }

    /// A turn: a prompt, thinking and a call, its result, and the answer.
    pub(super) fn one_turn(output: &str) -> Loaded {
        loaded(vec![
            Record::Event {
                ts: 1_795_320_278_000,
                event: Event::TurnStarted {
                    text: "list files".into(),
                },
            },
            messages(
                1_795_320_278_000,
                0,
                vec![
                    Message::user("list files"),
                    assistant(vec![
                        ContentBlock::Thinking {
                            thinking: "Look first.".into(),
                            signature: None,
                            reasoning_details: None,
                        },
                        call("t1", "ls"),
                    ]),
                    result("t1", output),
                ],
            ),
            Record::Event {
                ts: 1_795_320_279_000,
                event: Event::ToolCallFinished {
                    id: "t1".into(),
                    name: "bash".into(),
                    ok: true,
                    outcome: ToolOutcome::Ok,
                    duration_ms: 12,
                    output_preview: "a.txt".into(),
                    output: output.into(),
                    effects: Vec::new(),
                },
            },
            messages(1_795_320_280_000, 3, vec![Message::assistant_text("Two files.")]),
        ])
    }

    /// Two steps of a turn, the first summarized.
    pub(super) fn summarized() -> Loaded {
        let summary = Summary {
            start: 1,
            end: 3,
            text: "Ran ls: two files.".into(),
            tokens_before: 40,
            tokens: 10,
            fallback: false,
            nested: Vec::new(),
        };
        let mut records = one_turn("a.txt\nb.txt").records;
        records.push(Record::Summary {
            ts: 1_795_320_280_000,
            summary,
        });
        loaded(records)
    }

    #[test]
    fn json_holds_the_prompt_the_model_saw() {
        let session = summarized();
        let restored = session.restore(TokenCounter::estimate_only());
        let value: serde_json::Value =
            serde_json::from_str(&json(&session, &restored).expect("json")).expect("parses");
        assert_eq!(value["session"]["id"], "20261122-040438-abcd");
        let prompt: Vec<Message> = serde_json::from_value(value["messages"].clone()).expect("messages");
        assert_eq!(prompt, restored.context.prompt());
        assert_eq!(prompt.len(), 3);
        assert!(
            prompt[1].text().ends_with("Ran ls: two files."),
            "{:?}",
            prompt[1]
        );
        assert_eq!(prompt[2].text(), "Two files.");
        assert_eq!(value["summaries"][0]["start"], 1);
        assert_eq!(value["summaries"][0]["end"], 3);
    }

    #[test]
    fn a_cleared_conversation_is_kept_before_the_new_one() {
        let mut session = one_turn("a.txt");
        session.records.push(Record::Cleared { ts: 6 });
        session.records.push(messages(7, 0, vec![Message::user("again")]));
        let parts = conversations(&session);
        assert_eq!(parts.len(), 2);
        assert_eq!(parts[1].messages, vec![Message::user("again")]);
        let md = markdown(&session);
        let (before, after) = md.split_once("\n---\n").expect("a separator");
        assert!(before.contains("list files") && after.contains("again"), "{md}");
    }
}
