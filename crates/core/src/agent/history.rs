//! The conversation as the agent keeps it: provider-neutral messages made of content
//! blocks. Each model client converts this to its wire format at the edge.

use std::collections::HashSet;

pub use miniagent_protocol::message::{ContentBlock, Message, Role, ToolUse};

/// Longest tool call id kept as it came.
const MAX_TOOL_ID_BYTES: usize = 64;

/// Whether every provider takes `id` as a tool call id: 1 to 64 of `[A-Za-z0-9_-]`
/// (Anthropic's pattern, which the other providers' ids also fit).
pub fn usable_tool_id(id: &str) -> bool {
    !id.is_empty()
        && id.len() <= MAX_TOOL_ID_BYTES
        && id
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
}

/// A tool call id not in `taken`, which it joins.
pub fn fresh_tool_id(taken: &mut HashSet<String>) -> String {
    loop {
        let id = format!("call_{:016x}", fastrand::u64(..));
        if taken.insert(id.clone()) {
            return id;
        }
    }
}

/// One tool call id replaced: the call's position among the message's calls, the id it
/// had and the one it has now.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Renamed {
    pub call: usize,
    pub old: String,
    pub new: String,
}

/// Gives the tool calls in `content` ids a provider takes back: an empty, malformed or
/// already `taken` id (a repeated one) gets a fresh id. Every kept or given id joins
/// `taken`. Returns what was replaced, in call order.
pub fn repair_call_ids(content: &mut [ContentBlock], taken: &mut HashSet<String>) -> Vec<Renamed> {
    let mut renamed = Vec::new();
    let calls = content.iter_mut().filter_map(|block| match block {
        ContentBlock::ToolUse { id, .. } => Some(id),
        _ => None,
    });
    for (call, id) in calls.enumerate() {
        if usable_tool_id(id) && taken.insert(id.clone()) {
            continue;
        }
        let new = fresh_tool_id(taken);
        let old = std::mem::replace(id, new.clone());
        renamed.push(Renamed { call, old, new });
    }
    renamed
}

/// Mends, in place, a history read back from a session log so that every provider takes
/// it: tool call ids usable and unique (a result follows its call's new id); each call
/// answered by exactly one result in the tool message right after it (a missing result
/// is added there, saying none was recorded; a call with no tool message after it
/// cannot be answered and becomes a note in the text); results that answer no call of
/// the message before them, and calls or results in a message of the wrong role, are
/// dropped. The number and roles of the messages never change (summaries and masking
/// refer to messages by position). The last assistant message's open calls are left for
/// [`close_open_tool_calls`]. Returns one line per thing mended, naming the message.
pub fn mend_history(messages: &mut [Message]) -> Vec<String> {
    let mut notes = Vec::new();
    let mut taken: HashSet<String> = HashSet::new();
    let count = messages.len();
    for index in 0..count {
        let number = index + 1;
        let role = messages[index].role;
        // Blocks that have no place in a message of this role.
        let before = messages[index].content.len();
        messages[index].content.retain(|block| match block {
            ContentBlock::ToolUse { .. } => role == Role::Assistant,
            ContentBlock::ToolResult { .. } => role == Role::Tool,
            _ => true,
        });
        if messages[index].content.len() != before {
            notes.push(format!(
                "message {number} ({}) held tool calls or results that do not belong in it; they were dropped",
                role_name(role)
            ));
        }
        match role {
            Role::Assistant => {
                let renamed = repair_call_ids(&mut messages[index].content, &mut taken);
                if !renamed.is_empty() {
                    notes.push(format!(
                        "message {number} had {} tool call(s) with an empty, malformed or repeated id; they were given new ids",
                        renamed.len()
                    ));
                }
                let (calls, rest) = messages[index..].split_at_mut(1);
                let answers = rest.first_mut().filter(|next| next.role == Role::Tool);
                match answers {
                    // The last calls may just have been running when the log ended:
                    // [`close_open_tool_calls`] answers those, saying so.
                    Some(answers) => {
                        let last = index + 2 == count;
                        pair_results(&calls[0], answers, &renamed, !last, number, &mut notes);
                    }
                    None if index + 1 == count => {}
                    None => unanswerable_calls(&mut calls[0], number, &mut notes),
                }
            }
            Role::Tool => {
                let after_calls = index > 0
                    && messages[index - 1].role == Role::Assistant
                    && messages[index - 1].tool_uses().next().is_some();
                if !after_calls {
                    let before = messages[index].content.len();
                    messages[index]
                        .content
                        .retain(|block| !matches!(block, ContentBlock::ToolResult { .. }));
                    if messages[index].content.len() != before {
                        notes.push(format!(
                            "message {number} holds tool results without the calls they answer; they were dropped"
                        ));
                    }
                }
            }
            Role::User => {}
        }
    }
    notes
}

/// Makes `answers` hold exactly one result per call of `calls`, in call order, following
/// the calls' renamed ids.
fn pair_results(
    calls: &Message,
    answers: &mut Message,
    renamed: &[Renamed],
    fill_missing: bool,
    number: usize,
    notes: &mut Vec<String>,
) {
    let mut results: Vec<Option<ContentBlock>> = std::mem::take(&mut answers.content)
        .into_iter()
        .map(Some)
        .collect();
    let mut paired = Vec::with_capacity(results.len());
    let mut missing = 0;
    for (position, call) in calls.tool_uses().enumerate() {
        // The result still names the id the call had before it was renamed.
        let old = renamed
            .iter()
            .find(|r| r.call == position)
            .map_or(call.id, |r| r.old.as_str());
        let found = results.iter_mut().find(
            |slot| matches!(slot, Some(ContentBlock::ToolResult { tool_use_id, .. }) if tool_use_id == old),
        );
        match found.and_then(Option::take) {
            Some(ContentBlock::ToolResult {
                content, is_error, ..
            }) => paired.push(ContentBlock::ToolResult {
                tool_use_id: call.id.to_string(),
                content,
                is_error,
            }),
            _ if !fill_missing => {}
            _ => {
                missing += 1;
                paired.push(ContentBlock::ToolResult {
                    tool_use_id: call.id.to_string(),
                    content: NO_RESULT_RECORDED.to_string(),
                    is_error: true,
                });
            }
        }
    }
    let orphans = results
        .iter()
        .filter(|slot| matches!(slot, Some(ContentBlock::ToolResult { .. })))
        .count();
    // Anything else the tool message held (text) stays, after the results.
    paired.extend(
        results
            .into_iter()
            .flatten()
            .filter(|block| !matches!(block, ContentBlock::ToolResult { .. })),
    );
    answers.content = paired;
    if missing > 0 {
        notes.push(format!(
            "{missing} tool call(s) of message {number} had no result; one saying so was added"
        ));
    }
    if orphans > 0 {
        notes.push(format!(
            "message {} held {orphans} tool result(s) answering no call of message {number}, or answering one twice; they were dropped",
            number + 1
        ));
    }
}

/// Calls with no tool message after them (another message follows): they become a line
/// of text, since a result cannot be added without a message in between.
fn unanswerable_calls(message: &mut Message, number: usize, notes: &mut Vec<String>) {
    let mut dropped = 0;
    for block in &mut message.content {
        if let ContentBlock::ToolUse { name, .. } = block {
            dropped += 1;
            *block = ContentBlock::Text {
                text: format!("[a call of `{name}` was here; the session log holds no result for it]"),
            };
        }
    }
    if dropped > 0 {
        notes.push(format!(
            "message {number} has {dropped} tool call(s) that no tool result follows; they were turned into a note"
        ));
    }
}

/// The result text a call gets when a resumed log holds none for it.
pub const NO_RESULT_RECORDED: &str =
    "no result was recorded for this call (the session log was damaged or edited)";

fn role_name(role: Role) -> &'static str {
    match role {
        Role::User => "user",
        Role::Assistant => "assistant",
        Role::Tool => "tool results",
    }
}

/// What makes a prompt one a provider would refuse; messages are numbered from 1. The
/// text is one clause, said after "its history is not one a model provider would accept".
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum PromptError {
    /// The prompt starts with the assistant's message or with tool results.
    #[error("its first message is not the person's but {}", if *.0 == Role::Assistant { "the assistant's" } else { "tool results" })]
    FirstNotUser(Role),
    #[error("message {message} has a tool call with an unusable id {id:?}")]
    UnusableId { message: usize, id: String },
    #[error("message {message} repeats the tool call id {id:?}")]
    RepeatedId { message: usize, id: String },
    #[error("message {0} holds tool results that do not answer the calls of the message before it")]
    StrayResults(usize),
    #[error("the tool calls of message {0} are not followed by their results")]
    Unanswered(usize),
    /// The message after `calls` (numbered `calls + 1`) answers some call twice or not at all.
    #[error("message {} does not answer each tool call of message {calls} exactly once", calls + 1)]
    NotExactlyOnce { calls: usize },
}

/// Why a provider would refuse `prompt` (the messages of a request), or `Ok`: it starts
/// with the person's message; every assistant message's tool calls have usable ids,
/// unique in the prompt, and the message right after answers each exactly once; no
/// result answers anything else. An open call at the very end is allowed (it is closed
/// before anything is sent).
pub fn check_prompt(prompt: &[Message]) -> Result<(), PromptError> {
    if let Some(first) = prompt.first()
        && first.role != Role::User
    {
        return Err(PromptError::FirstNotUser(first.role));
    }
    let mut seen: HashSet<&str> = HashSet::new();
    for (index, message) in prompt.iter().enumerate() {
        let number = index + 1;
        let calls: Vec<&str> = message.tool_uses().map(|call| call.id).collect();
        for id in &calls {
            if !usable_tool_id(id) {
                return Err(PromptError::UnusableId {
                    message: number,
                    id: (*id).to_string(),
                });
            }
            if !seen.insert(id) {
                return Err(PromptError::RepeatedId {
                    message: number,
                    id: (*id).to_string(),
                });
            }
        }
        let results: Vec<&str> = message
            .content
            .iter()
            .filter_map(|block| match block {
                ContentBlock::ToolResult { tool_use_id, .. } => Some(tool_use_id.as_str()),
                _ => None,
            })
            .collect();
        if !results.is_empty() {
            let asked: Vec<&str> = match index.checked_sub(1).map(|i| &prompt[i]) {
                Some(previous) if message.role == Role::Tool => {
                    previous.tool_uses().map(|call| call.id).collect()
                }
                _ => Vec::new(),
            };
            let mut sorted = results.clone();
            sorted.sort_unstable();
            let mut expected = asked;
            expected.sort_unstable();
            if sorted != expected {
                return Err(PromptError::StrayResults(number));
            }
        }
        if !calls.is_empty() && index + 1 < prompt.len() && prompt[index + 1].role != Role::Tool {
            return Err(PromptError::Unanswered(number));
        }
        if !calls.is_empty() && prompt.get(index + 1).is_some_and(|next| next.role == Role::Tool) {
            let answered = prompt[index + 1]
                .content
                .iter()
                .filter(|block| matches!(block, ContentBlock::ToolResult { .. }))
                .count();
            if answered != calls.len() {
                return Err(PromptError::NotExactlyOnce { calls: number });
            }
        }
    }
    Ok(())
}

/// Makes the history valid for every provider after an interruption: each tool call of
/// the last assistant message gets a result. Calls that already have one keep it.
pub fn close_open_tool_calls(history: &mut Vec<Message>, reason: &str) {
    let Some(last_assistant) = history.iter().rposition(|m| m.role == Role::Assistant) else {
        return;
    };
    let answered: Vec<String> = history[last_assistant + 1..]
        .iter()
        .flat_map(|m| m.content.iter())
        .filter_map(|block| match block {
            ContentBlock::ToolResult { tool_use_id, .. } => Some(tool_use_id.clone()),
            _ => None,
        })
        .collect();
    let missing: Vec<ContentBlock> = history[last_assistant]
        .tool_uses()
        .filter(|call| !answered.iter().any(|id| id == call.id))
        .map(|call| ContentBlock::ToolResult {
            tool_use_id: call.id.to_string(),
            content: reason.to_string(),
            is_error: true,
        })
        .collect();
    if missing.is_empty() {
        return;
    }
    match history.last_mut() {
        Some(last) if last.role == Role::Tool => last.content.extend(missing),
        _ => history.push(Message {
            role: Role::Tool,
            content: missing,
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;
    use serde_json::json;

    fn call(id: &str) -> ContentBlock {
        ContentBlock::ToolUse {
            id: id.into(),
            name: "bash".into(),
            input: json!({}),
        }
    }

    fn result(id: &str, content: &str, is_error: bool) -> ContentBlock {
        ContentBlock::ToolResult {
            tool_use_id: id.into(),
            content: content.into(),
            is_error,
        }
    }

    #[test]
    fn open_calls_get_a_result_and_answered_ones_keep_theirs() {
        let mut history = vec![
            Message::user("go"),
            Message {
                role: Role::Assistant,
                content: vec![call("a"), call("b")],
            },
            Message {
                role: Role::Tool,
                content: vec![result("a", "done", false)],
            },
        ];
        close_open_tool_calls(&mut history, "interrupted by the user");
        assert_eq!(
            history[2].content,
            vec![
                result("a", "done", false),
                result("b", "interrupted by the user", true)
            ]
        );
        assert_eq!(history.len(), 3);
    }

    #[test]
    fn nothing_to_close_leaves_history_alone() {
        let mut history = vec![Message::user("hi"), Message::assistant_text("hello")];
        let before = history.clone();
        close_open_tool_calls(&mut history, "x");
        assert_eq!(history, before);
    }

    fn message(role: Role, content: Vec<ContentBlock>) -> Message {
        Message { role, content }
    }

    #[test]
    fn repeated_and_empty_ids_are_renamed_with_their_results() {
        let mut history = vec![
            Message::user("go"),
            message(Role::Assistant, vec![call("a"), call("a"), call("")]),
            message(
                Role::Tool,
                vec![
                    result("a", "1", false),
                    result("a", "2", false),
                    result("", "3", false),
                ],
            ),
            Message::user("next"),
        ];
        let notes = mend_history(&mut history);
        assert_eq!(notes.len(), 1, "{notes:?}");
        let ids: Vec<&str> = history[1].tool_uses().map(|c| c.id).collect();
        assert_eq!(ids[0], "a");
        assert!(ids.iter().all(|id| usable_tool_id(id)));
        let answered: Vec<(&str, &str)> = history[2]
            .content
            .iter()
            .filter_map(|b| match b {
                ContentBlock::ToolResult {
                    tool_use_id, content, ..
                } => Some((tool_use_id.as_str(), content.as_str())),
                _ => None,
            })
            .collect();
        assert_eq!(answered, vec![(ids[0], "1"), (ids[1], "2"), (ids[2], "3")]);
        assert_eq!(check_prompt(&history), Ok(()));
    }

    #[test]
    fn unanswerable_calls_and_orphan_results_are_mended_without_moving_messages() {
        let mut history = vec![
            Message::user("go"),
            message(Role::Assistant, vec![call("a")]),
            Message::user("interrupting"),
            message(Role::Tool, vec![result("zzz", "orphan", false)]),
            message(Role::Assistant, vec![call("b"), call("c")]),
            message(
                Role::Tool,
                vec![result("c", "done", false), result("c", "twice", false)],
            ),
            message(
                Role::User,
                vec![ContentBlock::Text { text: "x".into() }, result("q", "y", false)],
            ),
        ];
        assert!(check_prompt(&history).is_err());
        let notes = mend_history(&mut history);
        assert_eq!(history.len(), 7);
        assert!(notes.len() >= 4, "{notes:?}");
        assert!(matches!(&history[1].content[..], [ContentBlock::Text { text }] if text.contains("`bash`")));
        assert!(history[3].content.is_empty());
        assert_eq!(
            history[5].content,
            vec![result("b", NO_RESULT_RECORDED, true), result("c", "done", false)]
        );
        assert_eq!(history[6].content.len(), 1);
        assert_eq!(check_prompt(&history), Ok(()));
    }

    #[test]
    fn the_prompt_check_names_what_a_provider_would_refuse() {
        let starts_wrong = vec![Message::assistant_text("hi"), Message::user("x")];
        assert!(
            check_prompt(&starts_wrong)
                .unwrap_err()
                .to_string()
                .contains("first message")
        );
        let repeated = vec![
            Message::user("x"),
            message(Role::Assistant, vec![call("a")]),
            message(Role::Tool, vec![result("a", "", false)]),
            message(Role::Assistant, vec![call("a")]),
        ];
        assert!(
            check_prompt(&repeated)
                .unwrap_err()
                .to_string()
                .contains("repeats")
        );
        let open_at_end = vec![Message::user("x"), message(Role::Assistant, vec![call("a")])];
        assert_eq!(check_prompt(&open_at_end), Ok(()));
    }
}
