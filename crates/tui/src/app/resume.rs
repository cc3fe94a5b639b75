//! A recorded session in the workbench. Resuming one (`--resume` at start, or `/resume`)
//! asks the agent to continue it; the agent sends back the session's recorded events
//! ([`Event::HistoryRestored`]) and the panes are filled from them. Replay feeds the
//! same events one at a time (`crate::replay`).

use std::time::Instant;

use super::App;
use crate::conversation::Conversation;
use crate::thinking::ThinkingPane;
use crate::timeline::Timeline;
use miniagent_protocol::Event;

/// What a recorded event is shown for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Playback {
    /// The session continues here: what describes the process that recorded it (its
    /// model and tools, its MCP servers and skills, its approval mode) gives way to
    /// this workbench's own.
    Resume,
    /// The session plays back as it happened.
    Replay,
}

impl App {
    /// Applies one recorded event. Returns whether the screen changed.
    pub fn apply_recorded(&mut self, event: Event, playback: Playback) -> bool {
        if let Event::PromptReturned { .. } = event {
            // A message taken back out: the turn did not count, and the live input it was
            // given back to is not this one; the transcript says it was never sent.
            self.figures.turn_taken_back();
            self.notice(
                crate::conversation::NoticeKind::Info,
                "this message was taken back out of the session: it was not sent".to_string(),
            );
            return true;
        }
        if let Event::Rewound { .. } = event {
            // The transcript as the live session showed it after the rewind; the message
            // it gave back went to that session's input, not this one.
            self.on_rewound(&event, super::rewind::Answered::Recorded);
            return true;
        }
        let shown = match &event {
            // Answers to the recording workbench's inspector, and its end, are not ours.
            // A recording holds no restored history; one inside another is not shown.
            Event::HistorySnapshot { .. }
            | Event::ContextReport { .. }
            | Event::DiffReport { .. }
            | Event::RewindPoints { .. }
            | Event::Notes { .. }
            | Event::RecordedCall { .. }
            | Event::ShutdownComplete
            | Event::HistoryRestored { .. }
            // A replay's own events are never in a recording.
            | Event::PlaybackOpened { .. }
            | Event::PlaybackStatus { .. }
            | Event::Replayed { .. } => false,
            Event::SessionConfigured { .. }
            | Event::McpServerStatus { .. }
            | Event::McpToolsDeferred { .. }
            | Event::SkillsLoaded { .. }
            | Event::HooksLoaded { .. }
            | Event::CommandsLoaded { .. }
            | Event::ModelChoices { .. }
            | Event::ModelChanged { .. }
            | Event::ModelChangeRefused { .. }
            | Event::ApprovalModeChanged { .. } => playback == Playback::Replay,
            Event::SessionResumed { .. }
            | Event::TurnStarted { .. }
            | Event::FilesAttached { .. }
            | Event::StepStarted { .. }
            | Event::ThinkingDelta { .. }
            | Event::TextDelta { .. }
            | Event::AssistantMessage { .. }
            | Event::ToolCallRequested { .. }
            | Event::ApprovalRequested { .. }
            | Event::ApprovalRulesChanged { .. }
            | Event::PermissionRulesChanged { .. }
            | Event::PlanUpdated { .. }
            | Event::Rewound { .. }
            | Event::RewindRefused { .. }
            | Event::HistoryCleared
            | Event::ToolCallStarted { .. }
            | Event::ToolOutputDelta { .. }
            | Event::ToolCallFinished { .. }
            | Event::TokenUsage { .. }
            | Event::Retrying { .. }
            | Event::CompactionStarted { .. }
            | Event::CompactionEnded { .. }
            | Event::ContextCompacted { .. }
            | Event::SubAgent { .. }
            | Event::Notice { .. }
            | Event::PromptReturned { .. }
            | Event::TurnComplete { .. }
            | Event::TurnAborted { .. }
            | Event::StepLimitReached { .. }
            | Event::TurnUsage { .. }
            | Event::Error { .. } => true,
        };
        shown && self.agent_event(event)
    }

    /// Shows the session the agent took up ([`Event::HistoryRestored`]): a fresh view
    /// filled from its recorded events. The agent's closing events and
    /// [`Event::SessionResumed`] follow, and leave the app idle.
    pub(crate) fn show_restored(&mut self, events: Vec<Event>) {
        self.reset_session_view();
        // Everything happened "now": no recorded call or step keeps ticking.
        self.now = Instant::now();
        // The recorded steps carry the limit of the run that wrote the log; the
        // session goes on under this run's, which the title bar says from now on.
        let max_steps = self.session.max_steps();
        for event in events {
            self.apply_recorded(event, Playback::Resume);
        }
        self.session.set_max_steps(max_steps);
        self.conversation.scroll_to_bottom();
    }

    /// A fresh session view: conversation, thinking, tools, tokens and statistics start
    /// over. The theme, the layout, the input and its history, MCP servers and skills stay.
    pub fn reset_session_view(&mut self) {
        self.conversation = Conversation::default();
        self.thinking = ThinkingPane::default();
        self.timeline = Timeline::default();
        self.plan.clear();
        self.figures.start_over();
        self.turn.start_over();
        self.close_approvals();
        self.session.start_over();
        // Overlays about the session left behind close with it.
        self.layers.close_where(|layer| layer.about_session());
    }

    /// Nothing runs any more: a log can end mid-turn or mid-compaction with no event
    /// saying so.
    pub(crate) fn settle(&mut self) {
        self.conversation.stop_streaming();
        self.timeline.cancel_open();
        self.turn.settle();
        self.close_approvals();
    }
}
