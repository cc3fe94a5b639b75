//! The turn queue: ending a turn, sending a message to start one, and giving queued
//! messages back to the input when a turn is stopped.

use super::{Activity, App, Pane};
use miniagent_protocol::Op;

impl App {
    pub(crate) fn end_turn(&mut self) {
        self.turn_running = false;
        self.turn_requested = false;
        self.activity = Activity::Idle;
        self.close_approvals();
        self.timeline.cancel_open();
        self.tree.refresh();
        if let Some(text) = self.queued.pop_front() {
            self.send_message(text);
        }
    }

    /// Whether a turn runs or is about to: a message sent now would wait behind it.
    pub fn turn_busy(&self) -> bool {
        self.turn_running || self.turn_requested
    }

    /// Sends a message for the agent to start a turn with.
    pub(crate) fn send_message(&mut self, text: String) {
        self.turn_requested = true;
        self.send(Op::UserInput { text });
    }

    /// `miniagent PROMPT`: the first message, taken as if typed and submitted.
    pub fn send_first_message(&mut self, text: String) -> super::Outcome {
        self.submit_text(text);
        self.outcome(true)
    }

    /// Puts the queued messages back in the input, before what is typed there; returns
    /// the notice that says so.
    pub(crate) fn return_queued_to_input(&mut self) -> Option<String> {
        if self.queued.is_empty() {
            return None;
        }
        let count = self.queued.len();
        let mut parts: Vec<String> = self.queued.drain(..).collect();
        let draft = self.input.text();
        if !draft.trim().is_empty() {
            parts.push(draft);
        }
        self.input.set_text(&parts.join("\n\n"));
        self.focus = Pane::Input;
        Some(if count == 1 {
            "the turn was stopped; your queued message is back in the input (Enter sends it)".to_string()
        } else {
            format!(
                "the turn was stopped; your {count} queued messages are back in the input (Enter sends them)"
            )
        })
    }
}
