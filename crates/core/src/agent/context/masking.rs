//! Keep-last-K masking: tool results older than the last K are shown to the model as
//! one-line stubs. A result's tokens are counted once for its stub, and a message shown
//! with stubs is counted once per masking. Trimming: an oversized result (one that
//! dominates the prompt) is shown as its first and last lines under a line saying what
//! it was; the history keeps it whole.

use std::collections::{BTreeSet, HashMap};

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
        if self.masked_results == 0 && self.trimmed.is_empty() {
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
            let altered = (first < self.masked_results && ordinal > first) || self.has_trimmed(index);
            if altered && !counted {
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
        if self.masked_results == 0 && self.trimmed.is_empty() {
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
                    let trim = shown && self.trimmed.contains(tool_use_id);
                    if shown && !trim {
                        return block.clone();
                    }
                    let (name, input) = calls
                        .get(tool_use_id.as_str())
                        .copied()
                        .unwrap_or(("a tool", &Value::Null));
                    let content = if trim {
                        trimmed(name, input, content)
                    } else {
                        stub(name, input, content, self.content_tokens(tool_use_id, content))
                    };
                    ContentBlock::ToolResult {
                        tool_use_id: tool_use_id.clone(),
                        content,
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

impl ContextState {
    /// Whether `messages()[index]` holds a result the prompt shows trimmed.
    pub(super) fn has_trimmed(&self, index: usize) -> bool {
        !self.trimmed.is_empty()
            && self.messages[index].content.iter().any(|block| {
                matches!(block, ContentBlock::ToolResult { tool_use_id, .. } if self.trimmed.contains(tool_use_id))
            })
    }

    pub(super) fn set_trimmed(&mut self, trimmed: BTreeSet<String>) {
        if trimmed != self.trimmed {
            self.trimmed = trimmed;
            self.trimmed_shared = None;
            // Rare (a compaction): every message's count under the new trimming is redone.
            self.masked_counts.clear();
        }
        self.journal.masked = true;
    }

    /// Results the prompt shows whole (not summarized, masked or trimmed) that take more
    /// than `min_tokens`, in history order: the call's id, the message's index and the
    /// result's tokens.
    pub fn oversized_results(&self, min_tokens: u64) -> Vec<(String, usize, u64)> {
        let mut found = Vec::new();
        let mut ordinal = 0;
        for item in self.view_items() {
            let index = match item {
                ViewItem::Summary(summary) => {
                    ordinal += self.summary_results(summary);
                    continue;
                }
                ViewItem::Message(index) => index,
            };
            for block in &self.messages[index].content {
                let ContentBlock::ToolResult {
                    tool_use_id, content, ..
                } = block
                else {
                    continue;
                };
                let masked = ordinal < self.masked_results;
                ordinal += 1;
                // A token is at least a byte: shorter results are not counted at all.
                if masked || self.trimmed.contains(tool_use_id) || (content.len() as u64) <= min_tokens {
                    continue;
                }
                let tokens = self.counter.count(content);
                if tokens > min_tokens {
                    found.push((tool_use_id.clone(), index, tokens));
                }
            }
        }
        found
    }

    /// Shows the result of call `id` trimmed from now on.
    pub fn trim_result(&mut self, id: &str) {
        let mut trimmed = self.trimmed.clone();
        if trimmed.insert(id.to_string()) {
            self.set_trimmed(trimmed);
        }
    }

    /// Calls whose results the prompt shows trimmed.
    pub fn trimmed_results(&self) -> usize {
        self.trimmed.len()
    }
}

/// Characters of an oversized result's beginning and end that its trimmed form keeps.
const TRIM_HEAD_CHARS: usize = 800;
const TRIM_TAIL_CHARS: usize = 400;

/// What an oversized result becomes in the prompt: a line saying what it was, then its
/// first and last lines.
pub fn trimmed(name: &str, input: &Value, content: &str) -> String {
    let mut arguments = input.to_string();
    if arguments.chars().count() > 120 {
        arguments = arguments.chars().take(119).collect::<String>() + "…";
    }
    // The prompt is rebuilt every step with every trimmed result in it: only the ends of
    // the content are walked, and lines are counted with memchr (what `str::lines`
    // counts: the newlines, plus a last line without one).
    let bytes = content.as_bytes();
    let lines = memchr::memchr_iter(b'\n', bytes).count()
        + usize::from(!bytes.is_empty() && !content.ends_with('\n'));
    let head_end = content
        .char_indices()
        .nth(TRIM_HEAD_CHARS)
        .map_or(content.len(), |(at, _)| at);
    let head = &content[..head_end];
    // Whole lines where the cut allows it.
    let head = match head.rfind('\n') {
        Some(end) if end > TRIM_HEAD_CHARS / 2 => &head[..end],
        _ => head,
    };
    let last_chars = match TRIM_TAIL_CHARS.checked_sub(1) {
        Some(back) => content.char_indices().rev().nth(back).map_or(0, |(at, _)| at),
        None => content.len(),
    };
    let tail = &content[last_chars.max(head.len())..];
    let tail = match tail.find('\n') {
        Some(start) if start < TRIM_TAIL_CHARS / 2 && start + 1 < tail.len() => &tail[start + 1..],
        _ => tail,
    };
    let cut = content.len().saturating_sub(head.len() + tail.len());
    format!(
        "[result trimmed to save context: {name} {arguments} returned {} bytes in {lines} lines; its first and last lines follow; run it again, or read just the part you need, for the rest]\n{head}\n[… {cut} bytes cut …]\n{tail}",
        content.len()
    )
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

impl ContextState {
    /// Results the prompt shows as stubs: masked results a summary took in are not in
    /// the prompt (the masking counts them, in history order, all the same).
    pub fn shown_masked_results(&self) -> usize {
        let mut ordinal = 0;
        let mut count = 0;
        for item in self.view_items() {
            match item {
                ViewItem::Summary(summary) => ordinal += self.summary_results(summary),
                ViewItem::Message(index) => {
                    let results = results_in(&self.messages[index]);
                    count += (ordinal..ordinal + results)
                        .filter(|n| *n < self.masked_results)
                        .count();
                    ordinal += results;
                }
            }
        }
        count
    }

    /// Results the prompt shows, as stubs or not (those a summary took in are not shown).
    pub fn shown_results(&self) -> usize {
        self.view_items()
            .into_iter()
            .map(|item| match item {
                ViewItem::Summary(_) => 0,
                ViewItem::Message(index) => results_in(&self.messages[index]),
            })
            .sum()
    }

    /// Results the prompt shows (not summarized or masked) trimmed.
    pub fn shown_trimmed_results(&self) -> usize {
        self.count_shown_trimmed(|_| true)
    }

    /// Of the results of calls `ids`, those the prompt shows trimmed (one trimmed and
    /// then masked shows as a stub).
    pub fn shown_trimmed_of(&self, ids: &[String]) -> usize {
        self.count_shown_trimmed(|id| ids.iter().any(|wanted| wanted == id))
    }

    fn count_shown_trimmed(&self, among: impl Fn(&str) -> bool) -> usize {
        if self.trimmed.is_empty() {
            return 0;
        }
        let mut ordinal = 0;
        let mut count = 0;
        for item in self.view_items() {
            let index = match item {
                ViewItem::Summary(summary) => {
                    ordinal += self.summary_results(summary);
                    continue;
                }
                ViewItem::Message(index) => index,
            };
            for block in &self.messages[index].content {
                if let ContentBlock::ToolResult { tool_use_id, .. } = block {
                    if ordinal >= self.masked_results
                        && self.trimmed.contains(tool_use_id)
                        && among(tool_use_id)
                    {
                        count += 1;
                    }
                    ordinal += 1;
                }
            }
        }
        count
    }
}
