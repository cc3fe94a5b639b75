//! The context: every message of the session (nothing is ever deleted), the summaries
//! that stand in for ranges of them, the masking of old tool results and the trimming of
//! oversized ones, and the prompt the model sees next, built from those. Token counts are cached per message, so a step
//! costs the new messages only.
//!
//! Masking lives in `masking`; letting go of summarized messages once they are logged
//! (memory stays flat over a long session) in `release`.

use std::collections::{BTreeSet, HashMap};
use std::sync::Arc;

use super::history::{ContentBlock, Message, Role};
use crate::tokens::{PER_MESSAGE_TOKENS, TokenCounter};

mod arguments;
mod masking;
mod release;
mod rewind;

pub use arguments::{argument_stub, stub_arguments};
pub use masking::{stub, trimmed};
pub use rewind::{RewindError, SetAside};

pub use miniagent_protocol::record::{Change, SUMMARY_MARK, Summary};

/// One item of the prompt view.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ViewItem {
    /// `messages[index]`, with masked results if any.
    Message(usize),
    /// `summaries[index]`.
    Summary(usize),
}

/// What changed since the session log last took the changes.
#[derive(Clone, Debug, Default)]
struct Journal {
    /// Changes made before a rewind, in order, then the rewind itself: what follows is
    /// journaled against the shorter history.
    before: Vec<Change>,
    cleared: bool,
    /// The first message appended or changed.
    dirty_from: Option<usize>,
    /// A message only appended to since the last take: its index and how many blocks it
    /// had then. Covered by `dirty_from` when that is at or before it.
    appended: Option<(usize, usize)>,
    summaries: Vec<Summary>,
    /// The masking (or the trimming) changed.
    masked: bool,
}

/// The session's context.
#[derive(Clone, Debug)]
pub struct ContextState {
    messages: Vec<Message>,
    counts: Vec<Option<u64>>,
    summaries: Vec<Summary>,
    /// Tool results (counted in history order) that the prompt shows as stubs.
    masked_results: usize,
    /// Calls whose (oversized) results the prompt shows trimmed to their first and last
    /// lines.
    trimmed: BTreeSet<String>,
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
    /// The masking (`masked_results`, `trimmed`) when each of the person's messages was
    /// added, by the message's index: what a rewind to just before it goes back to.
    masking_at: HashMap<usize, (usize, Arc<BTreeSet<String>>)>,
    /// `trimmed` as `masking_at` shares it, until it changes (it rarely does, and a long
    /// session has many messages).
    trimmed_shared: Option<Arc<BTreeSet<String>>>,
    /// What rewinds set aside, in the order they were made (a branch set aside again by
    /// a later rewind to an earlier message is nested in that one's).
    set_aside: Vec<SetAside>,
}

impl ContextState {
    pub fn new(counter: TokenCounter) -> Self {
        Self {
            messages: Vec::new(),
            counts: Vec::new(),
            summaries: Vec::new(),
            masked_results: 0,
            trimmed: BTreeSet::new(),
            counter,
            journal: Journal::default(),
            stub_counts: HashMap::new(),
            masked_counts: HashMap::new(),
            released: Vec::new(),
            masking_at: HashMap::new(),
            trimmed_shared: None,
            set_aside: Vec::new(),
        }
    }

    /// The changes since the last call, oldest first, for the session log.
    pub fn take_changes(&mut self) -> Vec<Change> {
        let journal = std::mem::take(&mut self.journal);
        let mut changes = journal.before;
        if journal.cleared {
            changes.push(Change::Cleared);
        }
        if let Some((message, from)) = journal.appended
            && journal.dirty_from.is_none_or(|dirty| dirty > message)
            && let Some(appended) = self.messages.get(message)
        {
            changes.push(Change::Blocks {
                message,
                from,
                blocks: appended.content.get(from..).unwrap_or_default().to_vec(),
            });
        }
        if let Some(from) = journal.dirty_from {
            let from = from.min(self.messages.len());
            changes.push(Change::Messages {
                from,
                messages: self.messages[from..].to_vec(),
            });
        }
        changes.extend(journal.summaries.into_iter().map(Change::Summary));
        if journal.masked {
            changes.push(Change::Masked {
                results: self.masked_results,
                trimmed: self.trimmed.iter().cloned().collect(),
            });
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
                self.masking_at.retain(|index, _| *index < from);
                for message in messages {
                    self.push(message);
                }
                self.mark_dirty(from);
            }
            Change::Blocks {
                message,
                from,
                blocks,
            } => {
                if let Some(target) = self.messages.get_mut(message) {
                    target.content.truncate(from);
                    target.content.extend(blocks);
                    self.counts[message] = None;
                    self.mark_dirty(message);
                }
            }
            Change::Summary(summary) => self.apply_summary(summary),
            Change::Masked { results, trimmed } => {
                self.set_masked(results);
                self.set_trimmed(trimmed.into_iter().collect());
            }
            Change::Cleared => self.clear(),
            Change::Rewound {
                to,
                turn,
                results,
                trimmed,
            } => self.set_aside_from(to, turn, results, trimmed.into_iter().collect()),
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
        self.journal.masked = true;
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
        if is_persons(&message) {
            let trimmed = match &self.trimmed_shared {
                Some(shared) => Arc::clone(shared),
                None => Arc::clone(self.trimmed_shared.insert(Arc::new(self.trimmed.clone()))),
            };
            self.masking_at
                .insert(self.messages.len(), (self.masked_results, trimmed));
        }
        self.messages.push(message);
        self.counts.push(None);
        self.released.push(false);
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

    /// Appends `block` to the last message (a tool result to the step's results), journaled
    /// as that block alone unless the message changed otherwise since the last take.
    pub fn append_to_last(&mut self, block: ContentBlock) {
        let Some(last) = self.messages.len().checked_sub(1) else {
            return;
        };
        self.counts[last] = None;
        if self.masked_counts.keys().any(|i| *i >= last) {
            self.masked_counts.retain(|i, _| *i < last);
        }
        let covered = self.journal.dirty_from.is_some_and(|dirty| dirty <= last);
        if !covered {
            let from = match self.journal.appended {
                Some((message, from)) if message == last => from,
                Some((message, _)) => {
                    // Appended to an earlier message before: keep that in the full form.
                    self.mark_dirty(message);
                    self.messages[last].content.len()
                }
                None => self.messages[last].content.len(),
            };
            if self.journal.dirty_from.is_none_or(|dirty| dirty > last) {
                self.journal.appended = Some((last, from));
            }
        }
        self.messages[last].content.push(block);
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

    /// Takes the last message back out of the history when it is the person's (a
    /// message that could not be sent): `None`, and nothing changes, otherwise.
    pub fn take_back_last_user(&mut self) -> Option<Message> {
        let last = self.messages.len().checked_sub(1)?;
        if !is_persons(&self.messages[last]) || self.summaries.iter().any(|s| s.end > last) {
            return None;
        }
        self.mark_dirty(last);
        self.counts.truncate(last);
        self.released.truncate(last);
        self.masking_at.remove(&last);
        self.messages.pop()
    }

    pub fn clear(&mut self) {
        self.messages.clear();
        self.counts.clear();
        self.released.clear();
        self.summaries.clear();
        self.masked_results = 0;
        self.trimmed.clear();
        self.trimmed_shared = None;
        self.stub_counts.clear();
        self.masked_counts.clear();
        self.masking_at.clear();
        // The log has them; a new conversation has no branches of the old one.
        self.set_aside.clear();
        self.journal = Journal {
            // A rewind's changes still go to the log, ahead of the clearing.
            before: std::mem::take(&mut self.journal.before),
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

    /// Tokens of the prompt's messages (without system prompt and tools).
    pub fn prompt_tokens(&mut self) -> u64 {
        // Saturating: a summary's token count comes from the log and may be garbage.
        self.item_tokens()
            .iter()
            .fold(0, |total: u64, (_, tokens)| total.saturating_add(*tokens))
    }

    /// The prompt's items with the tokens each takes in the prompt (masked and trimmed
    /// results counted as shown).
    pub fn item_tokens(&mut self) -> Vec<(ViewItem, u64)> {
        self.count_masked_results();
        self.count_masked_messages();
        let mut ordinal = 0;
        let items = self.view_items();
        let mut out = Vec::with_capacity(items.len());
        for item in items {
            let tokens = match item {
                ViewItem::Summary(index) => {
                    ordinal += self.summary_results(index);
                    self.summaries[index].tokens
                }
                ViewItem::Message(index) => {
                    let results = results_in(&self.messages[index]);
                    let first = ordinal;
                    ordinal += results;
                    if results == 0 || (first >= self.masked_results && !self.has_trimmed(index)) {
                        self.message_tokens(index)
                    } else {
                        // Counted just now, or under this same masking before.
                        self.masked_counts.get(&index).map_or(0, |(_, _, tokens)| *tokens)
                    }
                }
            };
            out.push((item, tokens));
        }
        out
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

    /// Tool results in the whole history.
    pub fn result_count(&self) -> usize {
        self.messages.iter().map(results_in).sum()
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

    /// Tokens that `start..end` take in the prompt now (summaries inside counted as such,
    /// masked and trimmed results as shown).
    pub fn range_tokens(&mut self, start: usize, end: usize) -> u64 {
        let items = self.item_tokens();
        items
            .into_iter()
            .filter(|(item, _)| match item {
                ViewItem::Summary(index) => summaries_inside(&self.summaries[*index], start, end),
                ViewItem::Message(index) => (start..end).contains(index),
            })
            .fold(0, |total: u64, (_, tokens)| total.saturating_add(tokens))
    }

    /// Tokens the original messages `start..end` took before anything was summarized,
    /// masked or trimmed: what a summary of them stands for.
    pub fn original_tokens(&mut self, start: usize, end: usize) -> u64 {
        (start..end.min(self.messages.len()))
            // Cached for every message a summary let go of.
            .map(|index| self.message_tokens(index))
            .fold(0, u64::saturating_add)
    }
}

/// Whether `message` is the person's own words: a user message that is neither tool
/// results nor a summary.
pub fn is_persons(message: &Message) -> bool {
    message.role == Role::User
        && !message
            .content
            .iter()
            .any(|block| matches!(block, ContentBlock::ToolResult { .. }))
        && !message.text().starts_with(SUMMARY_MARK)
}

fn summaries_inside(summary: &Summary, start: usize, end: usize) -> bool {
    summary.start >= start && summary.end <= end
}

fn results_in(message: &Message) -> usize {
    message
        .content
        .iter()
        .filter(|block| matches!(block, ContentBlock::ToolResult { .. }))
        .count()
}

#[cfg(test)]
mod tests;
