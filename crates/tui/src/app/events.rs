//! How an agent event reaches the state it changes: one line per variant, naming the
//! handler. The handlers live with their state: the turn's in `turns.rs`, tool calls'
//! in `calls.rs`, compaction's in `compaction.rs`, the session's in `session.rs`, the
//! figures' in `figures.rs`, a replay's in `playback.rs` and `resume.rs`, a rewind's in
//! `rewind.rs`.

use super::{Action, App, Outcome};
use miniagent_protocol::Event;

impl App {
    /// Applies one agent event.
    pub fn on_agent_event(&mut self, event: Event) -> Outcome {
        // Only live events call the person: a replay's come wrapped in `Replayed`.
        let alert = self.attention.alert(&event);
        let changed = self.agent_event(event);
        if let Some(bytes) = alert {
            self.request(Action::Notify(bytes));
        }
        self.outcome(changed)
    }

    /// Applies one agent event. Returns whether the screen changed.
    pub(crate) fn agent_event(&mut self, event: Event) -> bool {
        match event {
            Event::PlaybackOpened { recording, status } => self.open_recording(&recording, status),
            Event::PlaybackStatus { status } => self.playback_moved(status),
            Event::Replayed { at_ms, event } => return self.replayed(at_ms, *event),
            event @ Event::SessionConfigured { .. } => self.on_session_configured(event),
            Event::HistoryRestored { events } => self.show_restored(events),
            Event::SessionResumed { id, messages, turns } => self.on_session_resumed(id, messages, turns),
            Event::TurnStarted { text } => self.on_turn_started(text),
            Event::FilesAttached { files } => self.on_files_attached(files),
            Event::StepStarted { step, max_steps } => self.on_step_started(step, max_steps),
            Event::ThinkingDelta { delta } => self.on_thinking_delta(&delta),
            Event::TextDelta { delta } => self.on_text_delta(&delta),
            Event::AssistantMessage { text, tool_calls, .. } => self.on_assistant_message(&text, tool_calls),
            Event::ToolCallRequested {
                id,
                name,
                arguments,
                summary,
                ..
            } => self.on_tool_call_requested(id, name, &arguments, &summary),
            event @ Event::ApprovalRequested { .. } => self.on_approval_requested(event),
            Event::ApprovalRulesChanged { rules, refused } => self.session.set_rules(rules, refused),
            Event::PermissionRulesChanged { rules } => self.session.set_permanent_rules(rules),
            Event::PlanUpdated { entries } => self.on_plan_updated(&entries),
            Event::ApprovalModeChanged { mode } => self.on_approval_mode_changed(mode),
            Event::HistoryCleared => self.on_history_cleared(),
            Event::ToolCallStarted { id, name } => self.on_tool_call_started(&id, name),
            Event::ToolOutputDelta { id, delta } => self.timeline.output(&id, &delta),
            event @ Event::ToolCallFinished { .. } => self.on_tool_call_finished(event),
            event @ Event::TokenUsage { .. } => self.figures.token_usage(event),
            event @ Event::TurnUsage { .. } => self.figures.turn_usage(event),
            Event::Retrying {
                attempt,
                max_attempts,
                delay_ms,
                reason,
                discard_partial,
            } => self.on_retrying(attempt, max_attempts, delay_ms, reason, discard_partial),
            Event::SubAgent { agent, event, .. } => self.on_sub_agent_event(&agent, *event),
            Event::McpServerStatus { server, state } => self.on_mcp_server_status(server, state),
            Event::McpToolsDeferred { servers } => self.session.mcp_tools_deferred(servers),
            Event::SkillsLoaded { skills, warnings } => self.session.skills_loaded(skills, warnings),
            Event::HooksLoaded { hooks } => self.session.hooks_loaded(hooks),
            event @ Event::Notes { .. } => self.layers_take(&event),
            Event::RecordedCall {
                id,
                result,
                output,
                error,
            } => self.recorded_call_arrived(&id, result, output, error),
            Event::HistorySnapshot { snapshot } => self.on_history_snapshot(snapshot),
            Event::CompactionStarted { reason } => self.on_compaction_started(&reason),
            Event::ContextCompacted {
                tokens_before,
                tokens_after,
                ..
            } => self.on_context_compacted(tokens_before, tokens_after),
            Event::CompactionEnded { outcome, reason } => self.on_compaction_ended(outcome, &reason),
            Event::Notice { message } => self.on_notice(message),
            Event::TurnComplete { .. } => self.end_turn(),
            Event::TurnAborted { reason } => self.on_turn_aborted(reason),
            Event::StepLimitReached { steps, report } => self.on_step_limit_reached(steps, &report),
            Event::Error { message } => self.on_error(message),
            Event::PromptReturned { text } => self.on_prompt_returned(text),
            Event::ShutdownComplete => self.request(Action::Quit),
            Event::CommandsLoaded { commands, warnings } => self.on_commands_loaded(commands, warnings),
            event @ (Event::ContextReport { .. } | Event::DiffReport { .. } | Event::RewindPoints { .. }) => {
                self.layers_take(&event)
            }
            event @ Event::Rewound { .. } => self.on_rewound(&event, super::rewind::Answered::Live),
            event @ Event::RewindRefused { .. } => self.on_rewind_refused(&event),
            Event::ModelChoices { choices } => self.session.set_model_choices(choices),
            Event::ModelChanged {
                model,
                provider,
                endpoint,
                context_window,
                ..
            } => self.on_model_changed(model, provider, endpoint, context_window),
            Event::ModelChangeRefused { message, .. } => self.on_model_change_refused(message),
        }
        true
    }
}
