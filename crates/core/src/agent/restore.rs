//! A session's state rebuilt from its log's records: the context (messages, summaries,
//! masking) resume continues from, what replay shows in the inspector, what export
//! writes. The session log only reads and writes records; the agent gives them meaning.

use std::collections::BTreeMap;

use crate::agent::context::ContextState;
use crate::agent::history::{check_prompt, mend_history};
use crate::session::load::ENDED_WHILE_RUNNING;
use crate::session::{Loaded, Record};
use crate::tokens::TokenCounter;
use miniagent_protocol::message::{ContentBlock, Message, Role};
use miniagent_protocol::record::Change;
use miniagent_protocol::{ApprovalRule, CompactionRecord, Event};

/// What is kept of a recorded message too large for any prompt.
const OVERSIZED_KEEP_BYTES: usize = 2_000;

impl Loaded {
    /// The session rebuilt from all its records.
    pub fn restore(&self, counter: TokenCounter) -> Restored {
        let mut restored = Restored::new(counter);
        restored.apply(&Record::Header(self.header.clone()));
        for record in &self.records {
            restored.apply(record);
        }
        restored.unsent_turn_without_message();
        // These changes are the log's own; only what happens next is new.
        restored.context.take_changes();
        restored
    }
}

/// A session's state rebuilt from its records: what resume continues from, what replay
/// shows in the inspector, what export writes.
#[derive(Clone, Debug)]
pub struct Restored {
    pub context: ContextState,
    pub compactions: Vec<CompactionRecord>,
    pub rules: Vec<ApprovalRule>,
    /// What was refused for the rest of the session.
    pub refused: Vec<ApprovalRule>,
    /// The latest `token_usage` event, for the gauge.
    pub usage: Option<Event>,
    /// The session's tokens and cost so far.
    pub(crate) meter: super::meter::Meter,
    /// The model and provider that last ran the session.
    pub model: String,
    pub provider: String,
    /// The model and provider it was recorded with (its header's).
    pub recorded_model: String,
    pub recorded_provider: String,
    /// Every turn the session started (its `turn_started` events), numbered as it
    /// numbered them.
    pub(crate) turns: Vec<super::TurnMark>,
    /// The file changes it recorded (checkpoints), for `/diff` and rewinds after a resume.
    pub(crate) file_changes: crate::checkpoint::Ledger,
}

impl Restored {
    pub fn new(counter: TokenCounter) -> Self {
        Self {
            context: ContextState::new(counter),
            compactions: Vec::new(),
            rules: Vec::new(),
            refused: Vec::new(),
            usage: None,
            meter: Default::default(),
            model: String::new(),
            provider: String::new(),
            recorded_model: String::new(),
            recorded_provider: String::new(),
            turns: Vec::new(),
            file_changes: Default::default(),
        }
    }

    /// Applies one record.
    pub fn apply(&mut self, record: &Record) {
        if let Record::Rewound { to, .. } = record {
            super::turns_set_aside(&mut self.turns, *to);
        }
        if let Some(change) = record.to_change() {
            self.context.apply(change);
            return;
        }
        match record {
            Record::Header(header) => {
                self.model = header.model.clone();
                self.provider = header.provider.clone();
                self.recorded_model = header.model.clone();
                self.recorded_provider = header.provider.clone();
            }
            Record::Resumed { model, provider, .. } => {
                self.model = model.clone();
                self.provider = provider.clone();
            }
            Record::Event { event, .. } => self.apply_event(event),
            Record::FileChanged { change, .. } => {
                self.file_changes
                    .push(crate::checkpoint::Step::Changed(change.clone()));
            }
            Record::CodeRestored { turn, changes, .. } => {
                self.file_changes.push(crate::checkpoint::Step::Restored {
                    turn: *turn,
                    changes: changes.clone(),
                });
            }
            Record::Messages { .. }
            | Record::Blocks { .. }
            | Record::Summary { .. }
            | Record::Masked { .. }
            | Record::Cleared { .. }
            | Record::Rewound { .. }
            | Record::Decision { .. }
            | Record::Output { .. } => {}
        }
    }

    fn apply_event(&mut self, event: &Event) {
        match event {
            // `/model`: the one that ran last is the one switched to.
            Event::SessionConfigured { model, provider, .. }
            | Event::ModelChanged { model, provider, .. } => {
                self.model = model.clone();
                self.provider = provider.clone();
            }
            Event::ApprovalRulesChanged { rules, refused } => {
                self.rules = rules.clone();
                self.refused = refused.clone();
            }
            Event::TokenUsage { .. } => {
                self.meter = super::meter::Meter::recorded(event).unwrap_or_default();
                self.usage = Some(event.clone());
            }
            Event::ContextCompacted {
                tokens_before,
                tokens_after,
                start,
                end,
                fallback,
                ..
            } => self.compactions.push(CompactionRecord {
                tokens_before: *tokens_before,
                tokens_after: *tokens_after,
                start: *start,
                end: *end,
                fallback: *fallback,
            }),
            Event::TurnStarted { text } => {
                // A turn whose message never reached the history (the process died first)
                // is no point to go back to.
                self.unsent_turn_without_message();
                let turn = super::start_turn(&mut self.turns, text);
                // Its message is added right after (the log records the event first);
                // `prompt_returned` says when it was not.
                let index = self.context.messages().len();
                super::turn_message(&mut self.turns, Some(index));
                self.file_changes.name_turn(turn, text);
            }
            Event::PromptReturned { .. } => super::turn_message(&mut self.turns, None),
            Event::HistoryCleared => {
                super::turns_set_aside(&mut self.turns, 0);
                // What was spent stays spent: the meter goes on.
                self.compactions.clear();
                self.usage = None;
            }
            _ => {}
        }
    }

    /// The last turn's message, if it is not in the history where its start said it
    /// would be (nothing was added after its `turn_started`), was never sent.
    fn unsent_turn_without_message(&mut self) {
        let len = self.context.messages().len();
        if self
            .turns
            .last()
            .is_some_and(|mark| mark.message.is_some_and(|index| index >= len))
        {
            super::turn_message(&mut self.turns, None);
        }
    }

    /// The history inspector's view of this state: the prompt with its summaries and
    /// what they replaced. `fixed_tokens` are the system prompt's and the tools'.
    pub fn snapshot(&mut self, fixed_tokens: u64) -> miniagent_protocol::HistorySnapshot {
        crate::agent::inspect::snapshot_of(
            &mut self.context,
            &self.compactions,
            fixed_tokens,
            &crate::agent::inspect::Recorded::NotNeeded,
        )
    }

    /// The history with every call answered: a call the log left open (the process was
    /// killed while it ran) gets a result saying so.
    pub fn close_open_calls(&mut self) {
        self.context.close_open_tool_calls(ENDED_WHILE_RUNNING);
    }

    /// [`Self::close_open_calls`], each call's result saying what the matching closing
    /// event (from [`Loaded::closing_events`]) says of it.
    pub fn close_open_calls_as(&mut self, closing: &[Event]) {
        self.close_open_calls();
        let verdicts: BTreeMap<&str, &str> = closing
            .iter()
            .filter_map(|event| match event {
                Event::ToolCallFinished { id, output, .. } => Some((id.as_str(), output.as_str())),
                _ => None,
            })
            .collect();
        let Some(last) = self.context.last_mut() else {
            return;
        };
        for block in &mut last.content {
            if let ContentBlock::ToolResult {
                tool_use_id, content, ..
            } = block
                && content == ENDED_WHILE_RUNNING
                && let Some(verdict) = verdicts.get(tool_use_id.as_str())
            {
                *content = (*verdict).to_string();
            }
        }
    }

    /// Cuts each person's message of the history that alone is over `limit_tokens` (an
    /// older miniagent recorded such a message; no prompt can ever hold it, so the
    /// session could not go on) to its beginning and a line saying so. The changes are
    /// journaled; returns one line per message cut.
    pub fn cut_oversized_messages(&mut self, limit_tokens: u64) -> Vec<String> {
        let mut notes = Vec::new();
        let mut cut: Vec<(usize, Message)> = Vec::new();
        for index in 0..self.context.messages().len() {
            if self.context.messages()[index].role != Role::User
                || self.context.message_tokens(index) <= limit_tokens
            {
                continue;
            }
            let text = self.context.messages()[index].text();
            let mut keep = OVERSIZED_KEEP_BYTES.min(text.len());
            while !text.is_char_boundary(keep) {
                keep -= 1;
            }
            notes.push(format!(
                "message {} ({} bytes) can never fit a prompt of {limit_tokens} tokens; only its beginning was kept",
                index + 1,
                text.len()
            ));
            cut.push((
                index,
                Message::user(format!(
                    "{}\n[cut on resume: this message was {} bytes, too large for any prompt]",
                    &text[..keep],
                    text.len()
                )),
            ));
        }
        if let Some((from, _)) = cut.first() {
            let from = *from;
            let mut messages = self.context.messages()[from..].to_vec();
            for (index, message) in cut {
                messages[index - from] = message;
            }
            self.context.apply(Change::Messages { from, messages });
        }
        notes
    }

    /// Makes the history one a provider takes (see [`mend_history`]): what was mended is
    /// returned, one line each; the changes are journaled, so the log that continues the
    /// session records them. Calls left open are closed as `closing` says. An error says
    /// why the history cannot be sent even so (e.g. a summary cutting a call from its
    /// results in an edited log).
    pub fn make_sendable(&mut self, closing: &[Event]) -> Result<Vec<String>, Unsendable> {
        let mut messages = self.context.messages().to_vec();
        let notes = mend_history(&mut messages);
        let first_changed = messages
            .iter()
            .zip(self.context.messages())
            .position(|(mended, loaded)| mended != loaded);
        if let Some(from) = first_changed {
            self.context.apply(Change::Messages {
                from,
                messages: messages.split_off(from),
            });
        }
        self.close_open_calls_as(closing);
        check_prompt(&self.context.prompt()).map_err(Unsendable)?;
        Ok(notes)
    }
}

/// Why a restored history cannot be sent even once mended (an edited log whose summary
/// cuts a call from its results, say).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("its history is not one a model provider would accept: {0}")]
pub struct Unsendable(super::history::PromptError);

#[cfg(test)]
#[path = "restore/turn_tests.rs"]
mod turn_tests;
