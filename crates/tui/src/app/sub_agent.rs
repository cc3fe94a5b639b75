//! A sub-agent's events: its tool calls and approvals join the main agent's timeline and
//! queue; the rest stays out of the main conversation.

use super::{Activity, App, PendingApproval};
use crate::conversation::NoticeKind;
use crate::timeline::CallStatus;
use miniagent_protocol::Event;

impl App {
    /// A sub-agent's event: its tool calls join the timeline beneath the delegate call,
    /// its approvals queue like the agent's own (naming it); the rest stays out of the
    /// conversation and the gauge, which are the main agent's.
    pub(crate) fn on_sub_agent_event(&mut self, agent: &str, event: Event) {
        let now = self.now;
        match event {
            Event::ToolCallRequested {
                id,
                name,
                arguments,
                summary,
                ..
            } => {
                self.timeline
                    .requested(&id, &format!("↳ {name}"), &arguments, &summary);
            }
            event @ Event::ApprovalRequested { .. } => {
                let Some(mut pending) = PendingApproval::asked(event) else {
                    return;
                };
                pending.name = format!("{} (for sub-agent {agent})", pending.name);
                self.timeline
                    .set_status(&pending.id, CallStatus::AwaitingApproval, now);
                self.ask_approval(pending);
                self.turn.set_activity(Activity::AwaitingApproval);
            }
            Event::ToolCallStarted { id, name } => {
                self.timeline.set_status(&id, CallStatus::Running, now);
                self.approval_settled(&id);
                self.turn.set_activity(Activity::Running {
                    name: format!("{name} for {agent}"),
                    since: now,
                });
            }
            Event::ToolOutputDelta { id, delta } => self.timeline.output(&id, &delta),
            event @ Event::ToolCallFinished { .. } => {
                self.call_finished(event);
                self.turn.set_activity(Activity::Running {
                    name: "delegate".to_string(),
                    since: now,
                });
            }
            Event::Retrying { reason, .. } => {
                self.notice(
                    NoticeKind::Warning,
                    format!("sub-agent {agent} retrying: {reason}"),
                );
            }
            Event::Error { message } => {
                self.notice(NoticeKind::Error, format!("sub-agent {agent}: {message}"))
            }
            // Its own conversation, thinking and context are not the main agent's.
            Event::SessionConfigured { .. }
            | Event::SessionResumed { .. }
            | Event::PromptReturned { .. }
            | Event::TurnStarted { .. }
            | Event::FilesAttached { .. }
            | Event::StepStarted { .. }
            | Event::ThinkingDelta { .. }
            | Event::TextDelta { .. }
            | Event::AssistantMessage { .. }
            | Event::ApprovalRulesChanged { .. }
            | Event::PermissionRulesChanged { .. }
            // Its plan is its own; its report is what the main agent gets.
            | Event::PlanUpdated { .. }
            | Event::ApprovalModeChanged { .. }
            | Event::HistoryCleared
            | Event::TokenUsage { .. }
            | Event::TurnUsage { .. }
            | Event::CompactionStarted { .. }
            | Event::CompactionEnded { .. }
            | Event::ContextCompacted { .. }
            | Event::McpServerStatus { .. }
            | Event::McpToolsDeferred { .. }
            | Event::SkillsLoaded { .. }
            | Event::HooksLoaded { .. }
            | Event::CommandsLoaded { .. }
            | Event::ContextReport { .. }
            | Event::DiffReport { .. }
            | Event::RewindPoints { .. }
            | Event::Rewound { .. }
            | Event::RewindRefused { .. }
            | Event::ModelChoices { .. }
            | Event::ModelChanged { .. }
            | Event::ModelChangeRefused { .. }
            | Event::SubAgent { .. }
            | Event::HistorySnapshot { .. }
            | Event::Notes { .. }
            | Event::RecordedCall { .. }
            | Event::HistoryRestored { .. }
            | Event::Notice { .. }
            | Event::TurnComplete { .. }
            | Event::TurnAborted { .. }
            | Event::StepLimitReached { .. }
            | Event::ShutdownComplete
            | Event::PlaybackOpened { .. }
            | Event::PlaybackStatus { .. }
            | Event::Replayed { .. } => {}
        }
    }
}
