//! A turn in the workbench: the agent's events from its start to its end (streamed
//! thinking and text, steps, retries, how it ended), sending a message to start one, and
//! giving queued messages back to the input when a turn is stopped.

use super::{App, Pane};
use crate::conversation::{Entry, NoticeKind};
use miniagent_protocol::Op;

impl App {
    pub(crate) fn on_turn_started(&mut self, text: String) {
        self.turn.started(self.now);
        self.figures.turn_started();
        self.conversation.push_turn(text);
        self.conversation.scroll_to_bottom();
    }

    /// The files the person's message attached: chips under it.
    pub(crate) fn on_files_attached(&mut self, files: Vec<miniagent_protocol::AttachedFile>) {
        let plain = self.look.color_depth() == crate::palette::ColorDepth::None;
        self.conversation.push(Entry::Files { files, plain });
        self.conversation.scroll_to_bottom();
    }

    pub(crate) fn on_step_started(&mut self, step: u32, max_steps: u32) {
        self.session.set_max_steps(max_steps);
        let turn = self.figures.step_started();
        self.thinking.start_step(turn, step);
        self.turn.step_started(step, self.now);
    }

    pub(crate) fn on_thinking_delta(&mut self, delta: &str) {
        self.thinking.push_delta(delta);
        self.turn.thinking(self.now);
    }

    pub(crate) fn on_text_delta(&mut self, delta: &str) {
        self.conversation.push_assistant_delta(delta);
        self.turn.writing(self.now);
    }

    pub(crate) fn on_assistant_message(
        &mut self,
        text: &str,
        tool_calls: Vec<miniagent_protocol::ToolCallSummary>,
    ) {
        self.turn
            .replied(tool_calls.into_iter().map(|call| call.id).collect(), self.now);
        self.conversation.finish_assistant(text);
    }

    pub(crate) fn on_retrying(
        &mut self,
        attempt: u32,
        max_attempts: u32,
        delay_ms: u64,
        reason: String,
        discard_partial: bool,
    ) {
        if discard_partial {
            self.conversation.discard_streaming();
            self.thinking.discard_current();
        }
        self.figures.retried();
        self.turn.retrying(attempt, max_attempts, delay_ms, self.now);
        self.notice(NoticeKind::Warning, format!("retrying: {reason}"));
    }

    pub(crate) fn on_turn_aborted(&mut self, reason: String) {
        self.conversation.stop_streaming();
        // Only the person stops a turn: what they queued waits for them again.
        let returned = self.return_queued_to_input();
        self.end_turn();
        self.notice(NoticeKind::Warning, reason);
        if let Some(where_they_went) = returned {
            self.notice(NoticeKind::Info, where_they_went);
        }
    }

    pub(crate) fn on_step_limit_reached(&mut self, steps: u32, report: &str) {
        self.conversation.finish_assistant(report);
        self.end_turn();
        self.notice(
            NoticeKind::Warning,
            format!("stopped at the step limit ({steps} steps)"),
        );
    }

    pub(crate) fn on_error(&mut self, message: String) {
        self.conversation.stop_streaming();
        self.end_turn();
        self.notice(NoticeKind::Error, message);
        if let Some(returned) = self.turn.take_returned() {
            self.notice(NoticeKind::Info, returned);
        }
    }

    /// The agent took the turn's message back out of the session (it could not be made to
    /// fit): it goes back in the input, before the messages queued behind it (which would
    /// meet the same budget) and what is typed there, for the person to shorten or send.
    pub(crate) fn on_prompt_returned(&mut self, text: String) {
        self.figures.turn_taken_back();
        let mut parts = vec![text];
        let queued = self.turn.take_queued();
        let count = queued.len();
        parts.extend(queued);
        let draft = self.input.text();
        if !draft.trim().is_empty() {
            parts.push(draft);
        }
        self.input.set_text(&parts.join("\n\n"));
        self.layout.focus_on(Pane::Input);
        self.turn.set_returned(match count {
            0 => "your message is back in the input (edit it, or Enter sends it again)".to_string(),
            1 => "your message and the one queued behind it are back in the input".to_string(),
            n => format!("your message and the {n} queued behind it are back in the input"),
        });
    }

    pub(crate) fn end_turn(&mut self) {
        let next = self.turn.ended();
        self.close_approvals();
        self.timeline.cancel_open();
        self.tree.refresh();
        if let Some(text) = next {
            self.send_message(text);
        }
    }

    /// Whether a turn runs or is about to: a message sent now would wait behind it.
    pub fn turn_busy(&self) -> bool {
        self.turn.busy()
    }

    /// Sends a message for the agent to start a turn with.
    pub(crate) fn send_message(&mut self, text: String) {
        self.turn.requested();
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
        let mut parts = self.turn.take_queued();
        let count = parts.len();
        if count == 0 {
            return None;
        }
        let draft = self.input.text();
        if !draft.trim().is_empty() {
            parts.push(draft);
        }
        self.input.set_text(&parts.join("\n\n"));
        self.layout.focus_on(Pane::Input);
        Some(if count == 1 {
            "the turn was stopped; your queued message is back in the input (Enter sends it)".to_string()
        } else {
            format!(
                "the turn was stopped; your {count} queued messages are back in the input (Enter sends them)"
            )
        })
    }
}
