//! A tool call's life as the agent reports it: asked for, waiting for approval, running,
//! finished. Each changes the tools pane, the call's line in the conversation, and what
//! the turn is doing.

use serde_json::Value;

use super::{Activity, App, PendingApproval};
use crate::conversation::Entry;
use crate::timeline::CallStatus;
use miniagent_protocol::{ApprovalRequest, ApprovalRule, Event};

impl App {
    pub(crate) fn on_tool_call_requested(
        &mut self,
        id: String,
        name: String,
        arguments: &Value,
        summary: &str,
    ) {
        self.timeline.requested(&id, &name, arguments, summary);
        self.figures.tool_called(&name);
        let summary = crate::timeline::shown_line(summary);
        self.conversation.push(Entry::Tool { id, name, summary });
    }

    pub(crate) fn on_approval_requested(
        &mut self,
        id: String,
        name: String,
        preview: String,
        request: Option<ApprovalRequest>,
        notes: Vec<String>,
        session_rule: Option<ApprovalRule>,
    ) {
        self.timeline
            .set_status(&id, CallStatus::AwaitingApproval, self.now);
        self.conversation.invalidate_tool(&id);
        let in_step = self.turn.call_in_step(&id);
        self.ask_approval(PendingApproval::new(
            id,
            name,
            preview,
            request,
            notes,
            session_rule,
            in_step,
        ));
        self.turn.set_activity(Activity::AwaitingApproval);
    }

    pub(crate) fn on_tool_call_started(&mut self, id: &str, name: String) {
        self.timeline.set_status(id, CallStatus::Running, self.now);
        self.conversation.invalidate_tool(id);
        // A call that runs was decided on (here, or in the session being replayed).
        self.approval_settled(id);
        self.turn.set_activity(Activity::Running {
            name,
            since: self.now,
        });
    }

    /// `Event::ToolCallFinished`: its result, and what it changed on disk.
    pub(crate) fn on_tool_call_finished(&mut self, event: Event) {
        let Event::ToolCallFinished {
            id,
            outcome,
            duration_ms,
            output,
            output_preview,
            effects,
            ..
        } = event
        else {
            return;
        };
        self.apply_effects(&effects);
        self.timeline
            .finished(&id, outcome, duration_ms, &output, &output_preview);
        self.forget_old_results();
        self.conversation.invalidate_tool(&id);
        self.approval_settled(&id);
        self.tree.refresh();
        self.turn.set_activity(Activity::Waiting { since: self.now });
    }
}
