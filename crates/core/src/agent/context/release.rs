//! Letting go of what summaries stand in for: once the session log holds a message that
//! a summary replaced, its text leaves memory (the message stays, with its role, its
//! calls' ids and names, and its token count), except the person's own words. Nothing that builds the prompt reads those
//! messages; the inspector reads them back from the log.

use std::collections::HashSet;

use serde_json::Value;

use super::{ContentBlock, ContextState, Message, ViewItem};

impl ContextState {
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
        let shown_results: HashSet<String> = self
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
                // The person's own words stay: a summary of the older history keeps them
                // verbatim when they are short, and they are few next to tool output.
                if !super::is_persons(&self.messages[index]) {
                    strip(&mut self.messages[index], &shown_results);
                }
                self.released[index] = true;
                released += 1;
            }
        }
        released
    }
}

/// Empties a message's text, keeping its blocks, roles, call ids and tool names, and the
/// arguments of the calls in `keep_arguments`.
fn strip(message: &mut Message, keep_arguments: &HashSet<String>) {
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
