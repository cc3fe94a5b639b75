//! Keep-last-K masking: tool results older than the last K are shown to the model as
//! one-line stubs. A result's tokens are counted once for its stub, and a message shown
//! with stubs is counted once per masking.

use std::collections::HashMap;

use serde_json::Value;

use super::{ContentBlock, ContextState, Message, PER_MESSAGE_TOKENS, Role, ViewItem, results_in};

impl ContextState {
    /// Counts the content of masked results not counted yet (for their stubs).
    pub(super) fn count_masked_results(&mut self) {
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
    pub(super) fn count_masked_messages(&mut self) {
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

    /// Tool name and arguments by call id, for stubs; empty while nothing is masked, so an
    /// unmasked prompt costs no map.
    pub(super) fn masked_calls(&self) -> HashMap<&str, (&str, &Value)> {
        if self.masked_results == 0 {
            return HashMap::new();
        }
        self.messages
            .iter()
            .flat_map(|message| message.tool_uses())
            .map(|call| (call.id, (call.name, call.input)))
            .collect()
    }

    pub(super) fn masked(
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
