//! A tool call's life as the agent reports it: asked for, waiting for approval, running,
//! finished. Each changes the tools pane, the call's line in the conversation, and what
//! the turn is doing.

use serde_json::Value;

use super::{Activity, App, PendingApproval};
use crate::conversation::Entry;
use crate::timeline::CallStatus;
use miniagent_protocol::{Event, PlanEntry};

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

    /// `Event::PlanUpdated`: the plan section shows the new plan whole; the conversation
    /// gets one line saying how far it got and the step in progress, so a plan updated
    /// at every step does not fill it.
    pub(crate) fn on_plan_updated(&mut self, entries: &[PlanEntry]) {
        self.plan.update(entries);
        self.conversation.push(Entry::Notice {
            kind: crate::conversation::NoticeKind::Info,
            text: self.plan.note(),
        });
    }

    /// Ctrl-T: the plan section shows or hides (over the conversation when narrow).
    pub(crate) fn toggle_plan(&mut self) -> bool {
        self.plan.toggle(self.layout.narrow());
        true
    }

    /// `Event::ApprovalRequested`: the call waits for the person.
    pub(crate) fn on_approval_requested(&mut self, event: Event) {
        let Some(mut pending) = PendingApproval::asked(event) else {
            return;
        };
        self.timeline
            .set_status(&pending.id, CallStatus::AwaitingApproval, self.now);
        self.conversation.invalidate_tool(&pending.id);
        pending.in_step = self.turn.call_in_step(&pending.id);
        self.ask_approval(pending);
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
        let Some(id) = self.call_finished(event) else {
            return;
        };
        self.conversation.invalidate_tool(&id);
        self.tree.refresh();
        self.turn.set_activity(Activity::Waiting { since: self.now });
    }

    /// A call finished (the agent's or a sub-agent's): the timeline keeps its result and
    /// applies what it changed; returns its id.
    pub(crate) fn call_finished(&mut self, event: Event) -> Option<String> {
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
            return None;
        };
        self.apply_effects(&effects);
        self.timeline
            .finished(&id, outcome, duration_ms, &output, &output_preview);
        self.forget_old_results();
        self.approval_settled(&id);
        Some(id)
    }
}
