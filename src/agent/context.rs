//! The context: every message of the session (nothing is ever deleted), the summaries
//! that stand in for ranges of them, the masking of old tool results, and the prompt the
//! model sees next, built from those. Token counts are cached per message, so a step
//! costs the new messages only.
//!
//! Memory stays flat over a long session: once the session log holds a message that a
//! summary stands in for, [`ContextState::release_summarized`] lets go of its text (the
//! message stays, with its role, its calls' ids and names, and its token count). Nothing
//! that builds the prompt reads those messages; the inspector reads them back from the
//! log.

use std::collections::HashMap;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::history::{ContentBlock, Message, Role};
use super::tokens::{PER_MESSAGE_TOKENS, TokenCounter};

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

/// One item of the prompt view.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ViewItem {
    /// `messages[index]`, with masked results if any.
    Message(usize),
    /// `summaries[index]`.
    Summary(usize),
}

/// A change to the context, as the session log records it. Applying a session's changes
/// in order to an empty context rebuilds it exactly.
#[derive(Clone, Debug, PartialEq)]
pub enum Change {
    /// The history was cut to `from` messages, then `messages` appended (messages are only
    /// ever appended, and the last one completed, so `from` is where the change starts).
    Messages { from: usize, messages: Vec<Message> },
    /// A summary as it was applied (before it absorbed older ones).
    Summary(Summary),
    /// The number of tool results shown as stubs.
    Masked(usize),
    /// The conversation started over.
    Cleared,
}

/// What changed since the session log last took the changes.
#[derive(Clone, Debug, Default)]
struct Journal {
    cleared: bool,
    /// The first message appended or changed.
    dirty_from: Option<usize>,
    summaries: Vec<Summary>,
    masked: Option<usize>,
}

/// The session's context.
#[derive(Clone, Debug)]
pub struct ContextState {
    messages: Vec<Message>,
    counts: Vec<Option<u64>>,
    summaries: Vec<Summary>,
    /// Tool results (counted in history order) that the prompt shows as stubs.
    masked_results: usize,
    counter: TokenCounter,
    journal: Journal,
    /// Tokens of masked results' content by call id (with the content's length, to
    /// notice a replaced result), for their stubs: a result is counted once, not on
    /// every step it stays masked.
    stub_counts: HashMap<String, (usize, u64)>,
    /// Tokens of messages shown with stubs, by index, with the masking (`masked_results`
    /// and the message's first result's ordinal) they were counted under.
    masked_counts: HashMap<usize, (usize, usize, u64)>,
    /// Per message: its text was let go of (the session log has it).
    released: Vec<bool>,
}

impl ContextState {
    pub fn new(counter: TokenCounter) -> Self {
        Self {
            messages: Vec::new(),
            counts: Vec::new(),
            summaries: Vec::new(),
            masked_results: 0,
            counter,
            journal: Journal::default(),
            stub_counts: HashMap::new(),
            masked_counts: HashMap::new(),
            released: Vec::new(),
        }
    }

    /// The changes since the last call, oldest first, for the session log.
    pub fn take_changes(&mut self) -> Vec<Change> {
        let journal = std::mem::take(&mut self.journal);
        let mut changes = Vec::new();
        if journal.cleared {
            changes.push(Change::Cleared);
        }
        if let Some(from) = journal.dirty_from {
            let from = from.min(self.messages.len());
            changes.push(Change::Messages {
                from,
                messages: self.messages[from..].to_vec(),
            });
        }
        changes.extend(journal.summaries.into_iter().map(Change::Summary));
        if let Some(masked) = journal.masked {
            changes.push(Change::Masked(masked));
        }
        changes
    }

    /// Applies a recorded change (rebuilding a session from its log).
    pub fn apply(&mut self, change: Change) {
        match change {
            Change::Messages { from, messages } => {
                let from = from.min(self.messages.len());
                self.messages.truncate(from);
                self.counts.truncate(from);
                self.released.truncate(from);
                for message in messages {
                    self.push(message);
                }
                self.mark_dirty(from);
            }
            Change::Summary(summary) => self.apply_summary(summary),
            Change::Masked(count) => self.set_masked(count),
            Change::Cleared => self.clear(),
        }
    }

    /// Messages from `index` on changed: for the log, and for the cached stub counts.
    fn mark_dirty(&mut self, index: usize) {
        if self.masked_counts.keys().any(|i| *i >= index) {
            self.masked_counts.retain(|i, _| *i < index);
        }
        let from = self.journal.dirty_from.map_or(index, |from| from.min(index));
        self.journal.dirty_from = Some(from);
    }

    fn set_masked(&mut self, count: usize) {
        self.masked_results = count;
        self.journal.masked = Some(count);
    }

    pub fn counter(&self) -> TokenCounter {
        self.counter
    }

    pub fn messages(&self) -> &[Message] {
        &self.messages
    }

    pub fn summaries(&self) -> &[Summary] {
        &self.summaries
    }

    pub fn masked_results(&self) -> usize {
        self.masked_results
    }

    pub fn push(&mut self, message: Message) {
        self.mark_dirty(self.messages.len());
        self.messages.push(message);
        self.counts.push(None);
        self.released.push(false);
    }

    /// The cached token count of `messages()[index]`, if it was counted.
    pub fn counted_tokens(&self, index: usize) -> Option<u64> {
        self.counts.get(index).copied().flatten()
    }

    /// Whether `messages()[index]` was let go of: its text is empty here, and the session
    /// log has it.
    pub fn is_released(&self, index: usize) -> bool {
        self.released.get(index).copied().unwrap_or(false)
    }

    /// Lets go of the text of every message a summary stands in for, once the session log
    /// has it (call it right after the log took [`Self::take_changes`] and wrote them).
    /// The last message is kept whole, since it may still change. Returns how many
    /// messages were let go of now.
    pub fn release_summarized(&mut self) -> usize {
        // Messages changed since the log took them are not on disk yet.
        let logged = self
            .journal
            .dirty_from
            .unwrap_or(self.messages.len())
            .min(self.messages.len().saturating_sub(1));
        // The ranges the prompt shows summaries for, exactly as it skips them (a damaged
        // log's summaries may overlap; one the prompt does not use releases nothing).
        let ranges: Vec<(usize, usize)> = self
            .view_items()
            .into_iter()
            .filter_map(|item| match item {
                ViewItem::Summary(index) => {
                    let start = self.summaries[index].start;
                    Some((start, self.summaries[index].end.max(start + 1).min(logged)))
                }
                ViewItem::Message(_) => None,
            })
            .collect();
        if ranges
            .iter()
            .all(|(start, end)| (*start..*end).all(|index| self.released[index]))
        {
            return 0;
        }
        let inside = |index: usize| ranges.iter().any(|(start, end)| (*start..*end).contains(&index));
        // Calls whose results the prompt still shows (a damaged log can put a call inside
        // a summary and its result outside): their arguments stay, for the stubs.
        let shown_results: std::collections::HashSet<String> = self
            .messages
            .iter()
            .enumerate()
            .filter(|(index, _)| !inside(*index))
            .flat_map(|(_, message)| &message.content)
            .filter_map(|block| match block {
                ContentBlock::ToolResult { tool_use_id, .. } => Some(tool_use_id.clone()),
                _ => None,
            })
            .collect();
        let mut released = 0;
        for (start, end) in ranges.iter().copied() {
            for index in start..end {
                if self.released[index] {
                    continue;
                }
                // The count stays right for whatever still asks for it.
                self.message_tokens(index);
                strip(&mut self.messages[index], &shown_results);
                self.released[index] = true;
                released += 1;
            }
        }
        released
    }

    /// The last message, for adding tool results to it (its count is refreshed).
    pub fn last_mut(&mut self) -> Option<&mut Message> {
        if let Some(count) = self.counts.last_mut() {
            *count = None;
        }
        if let Some(last) = self.messages.len().checked_sub(1) {
            self.mark_dirty(last);
        }
        self.messages.last_mut()
    }

    /// Gives every open tool call a result (after an interruption or a crash).
    pub fn close_open_tool_calls(&mut self, reason: &str) {
        let before = self.messages.len();
        let last_blocks = self.messages.last().map_or(0, |m| m.content.len());
        super::history::close_open_tool_calls(&mut self.messages, reason);
        self.counts.resize(self.messages.len(), None);
        self.released.resize(self.messages.len(), false);
        if self.messages.len() > before {
            self.mark_dirty(before);
        } else if let Some(last) = before.checked_sub(1)
            && self.messages[last].content.len() != last_blocks
        {
            self.counts[last] = None;
            self.mark_dirty(last);
        }
    }

    pub fn clear(&mut self) {
        self.messages.clear();
        self.counts.clear();
        self.released.clear();
        self.summaries.clear();
        self.masked_results = 0;
        self.stub_counts.clear();
        self.masked_counts.clear();
        self.journal = Journal {
            cleared: true,
            ..Journal::default()
        };
    }

    /// Tokens of one message (cached).
    pub fn message_tokens(&mut self, index: usize) -> u64 {
        if let Some(Some(count)) = self.counts.get(index) {
            return *count;
        }
        let count = self.messages.get(index).map_or(0, |m| self.counter.message(m));
        if let Some(slot) = self.counts.get_mut(index) {
            *slot = Some(count);
        }
        count
    }

    /// The prompt's items in order: summaries in place of their ranges.
    pub fn view_items(&self) -> Vec<ViewItem> {
        let mut items = Vec::new();
        let mut index = 0;
        let mut next_summary = 0;
        while index < self.messages.len() {
            // A summary starting inside a range already replaced (only a damaged or edited
            // log holds one) is skipped, so the summaries after it still show.
            while self.summaries.get(next_summary).is_some_and(|s| s.start < index) {
                next_summary += 1;
            }
            if let Some(summary) = self.summaries.get(next_summary)
                && summary.start == index
            {
                items.push(ViewItem::Summary(next_summary));
                index = summary.end.max(index + 1);
                next_summary += 1;
                continue;
            }
            items.push(ViewItem::Message(index));
            index += 1;
        }
        items
    }

    /// The messages the model sees next.
    pub fn prompt(&self) -> Vec<Message> {
        let calls = self.masked_calls();
        // Results are counted in history order, also those inside summarized ranges.
        let mut ordinal = 0;
        self.view_items()
            .into_iter()
            .map(|item| match item {
                ViewItem::Summary(index) => {
                    ordinal += self.summary_results(index);
                    self.summaries[index].message()
                }
                ViewItem::Message(index) => self.masked(&self.messages[index], &calls, &mut ordinal),
            })
            .collect()
    }

    /// Counts the content of masked results not counted yet (for their stubs).
    fn count_masked_results(&mut self) {
        let mut ordinal = 0;
        for ((message, count), released) in self.messages.iter().zip(&self.counts).zip(&self.released) {
            if *released {
                // Summarized: never shown, stub or not.
                ordinal += results_in(message);
                continue;
            }
            for block in &message.content {
                let ContentBlock::ToolResult {
                    tool_use_id, content, ..
                } = block
                else {
                    continue;
                };
                if ordinal >= self.masked_results {
                    return;
                }
                ordinal += 1;
                let known = self
                    .stub_counts
                    .get(tool_use_id)
                    .is_some_and(|(len, _)| *len == content.len());
                if !known {
                    // A message holding just this result was counted already.
                    let tokens = match count {
                        Some(count) if message.content.len() == 1 => count.saturating_sub(PER_MESSAGE_TOKENS),
                        _ => self.counter.count(content),
                    };
                    self.stub_counts
                        .insert(tool_use_id.clone(), (content.len(), tokens));
                }
            }
        }
    }

    /// Tokens of a result's content: from the masking cache, else counted now.
    fn content_tokens(&self, id: &str, content: &str) -> u64 {
        match self.stub_counts.get(id) {
            Some((len, tokens)) if *len == content.len() => *tokens,
            _ => self.counter.count(content),
        }
    }

    /// Counts the messages the prompt shows with stubs that are not counted under the
    /// current masking yet (the stubs' own counts come from `stub_counts`).
    fn count_masked_messages(&mut self) {
        if self.masked_results == 0 {
            return;
        }
        let calls = self.masked_calls();
        let mut fresh = Vec::new();
        let mut ordinal = 0;
        for item in self.view_items() {
            let ViewItem::Message(index) = item else {
                if let ViewItem::Summary(summary) = item {
                    ordinal += self.summary_results(summary);
                }
                continue;
            };
            let first = ordinal;
            ordinal += results_in(&self.messages[index]);
            let counted = self
                .masked_counts
                .get(&index)
                .is_some_and(|(mask, start, _)| (*mask, *start) == (self.masked_results, first));
            if first < self.masked_results && ordinal > first && !counted {
                let mut at = first;
                let masked = self.masked(&self.messages[index], &calls, &mut at);
                fresh.push((index, first, self.counter.message(&masked)));
            }
        }
        for (index, first, tokens) in fresh {
            self.masked_counts
                .insert(index, (self.masked_results, first, tokens));
        }
    }

    /// Tokens of the prompt's messages (without system prompt and tools).
    pub fn prompt_tokens(&mut self) -> u64 {
        self.count_masked_results();
        self.count_masked_messages();
        let mut ordinal = 0;
        let mut total: u64 = 0;
        for item in self.view_items() {
            // Saturating: a summary's token count comes from the log and may be garbage.
            total = total.saturating_add(match item {
                ViewItem::Summary(index) => {
                    ordinal += self.summary_results(index);
                    self.summaries[index].tokens
                }
                ViewItem::Message(index) => {
                    let results = results_in(&self.messages[index]);
                    let first = ordinal;
                    ordinal += results;
                    if results == 0 || first >= self.masked_results {
                        self.message_tokens(index)
                    } else {
                        // Counted just now, or under this same masking before.
                        self.masked_counts.get(&index).map_or(0, |(_, _, tokens)| *tokens)
                    }
                }
            });
        }
        total
    }

    /// Tool results inside `summaries[index]`'s range.
    fn summary_results(&self, index: usize) -> usize {
        let summary = &self.summaries[index];
        // A range past the history's end (or backwards) can only come from a damaged log.
        let end = summary.end.min(self.messages.len());
        self.messages
            .get(summary.start..end)
            .map_or(0, |range| range.iter().map(results_in).sum())
    }

    /// Tool name and arguments by call id, for stubs; empty while nothing is masked, so an
    /// unmasked prompt costs no map.
    fn masked_calls(&self) -> HashMap<&str, (&str, &Value)> {
        if self.masked_results == 0 {
            return HashMap::new();
        }
        self.messages
            .iter()
            .flat_map(|message| message.tool_uses())
            .map(|call| (call.id, (call.name, call.input)))
            .collect()
    }

    fn masked(
        &self,
        message: &Message,
        calls: &HashMap<&str, (&str, &Value)>,
        ordinal: &mut usize,
    ) -> Message {
        if message.role != Role::Tool {
            return message.clone();
        }
        let content = message
            .content
            .iter()
            .map(|block| match block {
                ContentBlock::ToolResult {
                    tool_use_id,
                    content,
                    is_error,
                } => {
                    let shown = *ordinal >= self.masked_results;
                    *ordinal += 1;
                    if shown {
                        return block.clone();
                    }
                    let (name, input) = calls
                        .get(tool_use_id.as_str())
                        .copied()
                        .unwrap_or(("a tool", &Value::Null));
                    ContentBlock::ToolResult {
                        tool_use_id: tool_use_id.clone(),
                        content: stub(name, input, content, self.content_tokens(tool_use_id, content)),
                        is_error: *is_error,
                    }
                }
                other => other.clone(),
            })
            .collect();
        Message {
            role: Role::Tool,
            content,
        }
    }

    /// Tool results in the whole history.
    pub fn result_count(&self) -> usize {
        self.messages.iter().map(results_in).sum()
    }

    /// Keep-last-K masking, moved in batches of K so the prompt's prefix stays the same
    /// for several steps (provider prompt caches keep working). Returns whether it moved.
    pub fn advance_masking(&mut self, keep: usize) -> bool {
        let total = self.result_count();
        let shown = total.saturating_sub(self.masked_results);
        if shown > keep.saturating_mul(2).max(keep + 1) {
            self.set_masked(total - keep);
            return true;
        }
        false
    }

    /// Masks everything but the last `keep` results at once (when over budget).
    pub fn mask_all_but(&mut self, keep: usize) -> bool {
        let target = self.result_count().saturating_sub(keep);
        if target > self.masked_results {
            self.set_masked(target);
            return true;
        }
        false
    }

    /// Puts a summary in place of `start..end`; summaries inside the range are absorbed.
    pub fn apply_summary(&mut self, mut summary: Summary) {
        self.journal.summaries.push(summary.clone());
        let (start, end) = (summary.start, summary.end);
        let mut kept = Vec::new();
        for existing in std::mem::take(&mut self.summaries) {
            if existing.start >= start && existing.end <= end {
                summary.nested.push(existing);
            } else {
                kept.push(existing);
            }
        }
        kept.push(summary);
        kept.sort_by_key(|s| s.start);
        self.summaries = kept;
    }

    /// Tokens that `start..end` take in the prompt now (summaries inside counted as such).
    pub fn range_tokens(&mut self, start: usize, end: usize) -> u64 {
        let mut total: u64 = 0;
        for item in self.view_items() {
            match item {
                ViewItem::Summary(index) => {
                    let summary = &self.summaries[index];
                    if summary.start >= start && summary.end <= end {
                        total = total.saturating_add(summary.tokens);
                    }
                }
                ViewItem::Message(index) if index >= start && index < end => {
                    total = total.saturating_add(self.message_tokens(index))
                }
                ViewItem::Message(_) => {}
            }
        }
        total
    }
}

/// Empties a message's text, keeping its blocks, roles, call ids and tool names, and the
/// arguments of the calls in `keep_arguments`.
fn strip(message: &mut Message, keep_arguments: &std::collections::HashSet<String>) {
    for block in &mut message.content {
        match block {
            ContentBlock::Text { text } => *text = String::new(),
            ContentBlock::Thinking {
                thinking,
                signature,
                reasoning_details,
            } => {
                *thinking = String::new();
                *signature = None;
                *reasoning_details = None;
            }
            ContentBlock::RedactedThinking { data } => *data = String::new(),
            ContentBlock::ToolUse { id, input, .. } if !keep_arguments.contains(id) => *input = Value::Null,
            ContentBlock::ToolUse { .. } => {}
            ContentBlock::ToolResult { content, .. } => *content = String::new(),
        }
    }
}

fn results_in(message: &Message) -> usize {
    message
        .content
        .iter()
        .filter(|block| matches!(block, ContentBlock::ToolResult { .. }))
        .count()
}

/// The one line a masked result becomes; `tokens` are the content's.
pub fn stub(name: &str, input: &Value, content: &str, tokens: u64) -> String {
    let mut arguments = input.to_string();
    if arguments.chars().count() > 120 {
        arguments = arguments.chars().take(119).collect::<String>() + "…";
    }
    format!(
        "[result omitted to save context: {name} {arguments} returned {} bytes (about {} tokens); run it again if you need it]",
        content.len(),
        tokens
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::agent::tokens::Encoding;
    use pretty_assertions::assert_eq;
    use serde_json::json;

    fn step(context: &mut ContextState, n: usize, output: &str) {
        context.push(Message {
            role: Role::Assistant,
            content: vec![ContentBlock::ToolUse {
                id: format!("t{n}"),
                name: "bash".into(),
                input: json!({"command": format!("echo {n}")}),
            }],
        });
        context.push(Message {
            role: Role::Tool,
            content: vec![ContentBlock::ToolResult {
                tool_use_id: format!("t{n}"),
                content: output.to_string(),
                is_error: false,
            }],
        });
    }

    #[test]
    fn masking_moves_in_batches_and_keeps_the_newest() {
        let mut context = ContextState::new(TokenCounter::new(Encoding::Cl100kBase));
        context.push(Message::user("go"));
        for n in 1..=10 {
            step(&mut context, n, &format!("output {n}"));
            assert!(!context.advance_masking(5), "moved at {n}");
        }
        step(&mut context, 11, "output 11");
        assert!(context.advance_masking(5));
        assert_eq!(context.masked_results(), 6);
        let prompt = context.prompt();
        let results: Vec<String> = prompt
            .iter()
            .flat_map(|m| m.content.iter())
            .filter_map(|b| match b {
                ContentBlock::ToolResult { content, .. } => Some(content.clone()),
                _ => None,
            })
            .collect();
        assert!(
            results[5].starts_with(
                "[result omitted to save context: bash {\"command\":\"echo 6\"} returned 8 bytes"
            )
        );
        assert_eq!(
            &results[6..],
            &["output 7", "output 8", "output 9", "output 10", "output 11"]
        );
        // Counting the masked prompt counts the stubs, not the originals.
        let tokens = context.prompt_tokens();
        let counter = context.counter();
        assert_eq!(tokens, prompt.iter().map(|m| counter.message(m)).sum::<u64>());
    }

    #[test]
    fn summarized_messages_are_let_go_of_once_logged_and_the_prompt_is_the_same() {
        let mut context = ContextState::new(TokenCounter::new(Encoding::Cl100kBase));
        context.push(Message::user("go"));
        for n in 1..=4 {
            step(&mut context, n, &format!("output {n} ").repeat(50));
        }
        let summary = Summary {
            start: 1,
            end: 5,
            text: "ran echo twice".into(),
            tokens_before: 0,
            tokens: 5,
            fallback: false,
            nested: vec![],
        };
        context.apply_summary(summary);
        context.set_masked(3);
        let prompt = context.prompt();
        let tokens = context.prompt_tokens();
        // Nothing is let go of before the log took it.
        assert_eq!(context.release_summarized(), 0);
        let logged = context.take_changes();
        assert_eq!(context.release_summarized(), 4);
        assert!((1..5).all(|i| context.is_released(i)));
        assert!(!context.is_released(0) && !context.is_released(5));
        assert_eq!(context.release_summarized(), 0, "once is enough");
        // The texts are gone, the shape stays.
        assert_eq!(context.messages()[2].content.len(), 1);
        assert!(
            !serde_json::to_string(&context.messages()[1..5])
                .unwrap()
                .contains("output")
        );
        assert_eq!(
            context.messages()[1].tool_uses().next().map(|c| c.name),
            Some("bash")
        );
        // The prompt, its count and the log's changes are the same as before.
        assert_eq!(context.prompt(), prompt);
        assert_eq!(context.prompt_tokens(), tokens);
        assert!(context.take_changes().is_empty());
        assert!(
            logged.iter().any(
                |change| matches!(change, Change::Messages { from: 0, messages } if messages.len() == 9)
            )
        );
        // A summary over the end keeps the last message, which may still change; so do
        // messages the log has not taken yet.
        step(&mut context, 5, "output 5");
        context.apply_summary(Summary {
            start: 1,
            end: 11,
            text: "ran echo five times".into(),
            tokens_before: 0,
            tokens: 5,
            fallback: false,
            nested: vec![],
        });
        // 5..9 are in the log; 9 and 10 are not yet.
        assert_eq!(context.release_summarized(), 4);
        assert!(!context.is_released(9));
        context.take_changes();
        assert_eq!(context.release_summarized(), 1);
        assert!(context.is_released(9) && !context.is_released(10));
    }

    #[test]
    fn only_what_the_prompt_summarizes_is_let_go_of() {
        // A damaged log's summary that straddles another is not used by the prompt, so
        // the messages past the first one stay.
        let mut context = ContextState::new(TokenCounter::estimate_only());
        context.push(Message::user("go"));
        for n in 1..=5 {
            step(&mut context, n, "out");
        }
        let summary = |start: usize, end: usize| Summary {
            start,
            end,
            text: format!("{start}..{end}"),
            tokens_before: 0,
            tokens: 1,
            fallback: false,
            nested: vec![],
        };
        context.apply_summary(summary(1, 5));
        context.apply_summary(summary(3, 9));
        context.take_changes();
        let prompt = context.prompt();
        assert_eq!(context.release_summarized(), 4);
        assert!((1..5).all(|i| context.is_released(i)));
        assert!((5..11).all(|i| !context.is_released(i)));
        assert_eq!(context.prompt(), prompt);
    }

    #[test]
    fn garbage_summaries_from_a_damaged_log_do_not_panic() {
        // Found by tests/fuzz: a log's summary ranges and token counts are not to be
        // trusted (backwards, past the end, overlapping, u64::MAX tokens).
        let mut context = ContextState::new(TokenCounter::estimate_only());
        context.push(Message::user("go"));
        for n in 1..=3 {
            step(&mut context, n, "out");
        }
        let summary = |start: usize, end: usize, tokens: u64| Summary {
            start,
            end,
            text: format!("{start}..{end}"),
            tokens_before: 0,
            tokens,
            fallback: false,
            nested: vec![],
        };
        context.apply_summary(summary(1, 5, 10));
        context.apply_summary(summary(2, 3, 10));
        context.apply_summary(summary(5, 2, u64::MAX));
        context.apply_summary(summary(6, usize::MAX, 1));
        context.set_masked(usize::MAX);
        assert_eq!(
            context.view_items(),
            vec![
                ViewItem::Message(0),
                ViewItem::Summary(0),
                ViewItem::Summary(2),
                ViewItem::Summary(3),
            ]
        );
        assert_eq!(context.prompt().len(), 4);
        assert_eq!(context.prompt_tokens(), u64::MAX);
        assert_eq!(context.range_tokens(0, usize::MAX), u64::MAX);
    }

    #[test]
    fn summaries_replace_ranges_and_absorb_older_ones() {
        let mut context = ContextState::new(TokenCounter::new(Encoding::Cl100kBase));
        context.push(Message::user("go"));
        for n in 1..=4 {
            step(&mut context, n, &"x ".repeat(500));
        }
        let before = context.range_tokens(1, 5);
        let first = Summary {
            start: 1,
            end: 5,
            text: "did 1 and 2".into(),
            tokens_before: before,
            tokens: 10,
            fallback: false,
            nested: vec![],
        };
        context.apply_summary(first.clone());
        assert_eq!(
            context.view_items(),
            vec![
                ViewItem::Message(0),
                ViewItem::Summary(0),
                ViewItem::Message(5),
                ViewItem::Message(6),
                ViewItem::Message(7),
                ViewItem::Message(8)
            ]
        );
        assert_eq!(
            context.range_tokens(1, 7),
            10 + context.message_tokens(5) + context.message_tokens(6)
        );
        context.apply_summary(Summary {
            start: 1,
            end: 7,
            text: "did 1 to 3".into(),
            tokens_before: 0,
            tokens: 12,
            fallback: false,
            nested: vec![],
        });
        assert_eq!(context.summaries().len(), 1);
        assert_eq!(context.summaries()[0].nested, vec![first]);
        assert_eq!(
            context.prompt()[1].text(),
            format!("{SUMMARY_MARK}\n\ndid 1 to 3")
        );
        assert_eq!(context.messages().len(), 9, "nothing is deleted");
    }
}
