//! Rewinding the conversation: the history goes back to just before one of the person's
//! messages. What followed is set aside, not deleted: the context keeps it as a branch
//! (the inspector and `sessions show` open it), and the session log keeps every record.
//! The masking goes back to what it was when that message was added, so the next prompt
//! is the one the model saw then (a summary made since of messages before the point
//! stays: the text it replaced may already be let go of).

use std::collections::BTreeSet;

use super::{Change, ContextState, Message, Summary, results_in};

/// Messages a rewind set aside: they were the history from `at` on.
#[derive(Clone, Debug, PartialEq)]
pub struct SetAside {
    /// The turn whose message the history went back to just before.
    pub turn: u32,
    /// Where they stood in the history (the first set-aside message's index).
    pub at: usize,
    pub messages: Vec<Message>,
    /// The summaries that stood in for ranges of them (their indices the history's).
    pub summaries: Vec<Summary>,
    /// Branches set aside earlier from among these messages, set aside again with them.
    pub nested: Vec<SetAside>,
}

/// Why the history cannot go back to a message.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum RewindError {
    #[error("the history has no message {0}")]
    NoMessage(usize),
    #[error(
        "messages {start}–{end} were summarized when the context was compacted, and their text was let go of: the conversation cannot go back to a message among them (go back to a later one, or rewind the code only)"
    )]
    Summarized { start: usize, end: usize },
}

impl ContextState {
    /// Whether the history can go back to just before message `to`: not past its end, and
    /// not into a range a summary stands in for (a summary starting at `to` goes too).
    pub fn can_rewind_to(&self, to: usize) -> Result<(), RewindError> {
        if to >= self.messages.len() {
            return Err(RewindError::NoMessage(to));
        }
        match self.summaries.iter().find(|s| s.start < to && to < s.end) {
            // Numbered from 1, as everywhere the person reads them.
            Some(summary) => Err(RewindError::Summarized {
                start: summary.start + 1,
                end: summary.end,
            }),
            None => Ok(()),
        }
    }

    /// Goes back to just before message `to` (turn `turn`'s): sets the messages from there
    /// on aside, journaled as one change. Returns how many were set aside.
    pub fn rewind_to(&mut self, to: usize, turn: u32) -> Result<usize, RewindError> {
        self.can_rewind_to(to)?;
        let (results, trimmed) = self.masking_before(to);
        let count = self.messages.len() - to;
        self.set_aside_from(to, turn, results, trimmed);
        Ok(count)
    }

    /// What a rewind set aside, oldest first.
    pub fn set_aside(&self) -> &[SetAside] {
        &self.set_aside
    }

    /// The masking a rewind to just before message `to` goes back to: as it was when that
    /// message was added, else (a history from an older log) the current one limited to
    /// the messages that stay.
    fn masking_before(&self, to: usize) -> (usize, BTreeSet<String>) {
        if let Some((results, trimmed)) = self.masking_at.get(&to) {
            return (*results, BTreeSet::clone(trimmed));
        }
        let kept = &self.messages[..to.min(self.messages.len())];
        let results = kept.iter().map(results_in).sum::<usize>();
        let calls: BTreeSet<&str> = kept
            .iter()
            .flat_map(|message| message.tool_uses().map(|call| call.id))
            .collect();
        let trimmed = self
            .trimmed
            .iter()
            .filter(|id| calls.contains(id.as_str()))
            .cloned()
            .collect();
        (self.masked_results.min(results), trimmed)
    }

    /// Sets the history from `to` on aside, with the summaries starting among it and the
    /// branches set aside from it before, and puts the masking at `results`/`trimmed`.
    /// Changes made before are journaled ahead of it, so the log keeps their order.
    pub(super) fn set_aside_from(&mut self, to: usize, turn: u32, results: usize, trimmed: BTreeSet<String>) {
        let pending = self.take_changes();
        let to = to.min(self.messages.len());
        let messages = self.messages.split_off(to);
        self.counts.truncate(to);
        self.released.truncate(to);
        self.masking_at.retain(|index, _| *index < to);
        self.masked_counts.retain(|index, _| *index < to);
        let (summaries, kept): (Vec<Summary>, Vec<Summary>) = std::mem::take(&mut self.summaries)
            .into_iter()
            .partition(|summary| summary.start >= to);
        self.summaries = kept;
        let (nested, kept): (Vec<SetAside>, Vec<SetAside>) = std::mem::take(&mut self.set_aside)
            .into_iter()
            .partition(|branch| branch.at >= to);
        self.set_aside = kept;
        // Only a rewind that set something aside leaves a branch to open.
        if !messages.is_empty() {
            self.set_aside.push(SetAside {
                turn,
                at: to,
                messages,
                summaries,
                nested,
            });
        }
        self.masked_results = results;
        if trimmed != self.trimmed {
            self.trimmed = trimmed;
            self.trimmed_shared = None;
            self.masked_counts.clear();
        }
        self.journal.before = pending;
        self.journal.before.push(Change::Rewound {
            to,
            turn,
            results: self.masked_results,
            trimmed: self.trimmed.iter().cloned().collect(),
        });
    }
}

#[cfg(test)]
mod tests;
