//! A recorded session in the workbench. Resuming one (`--resume` at start, or `/resume`)
//! asks the agent to continue it; the agent sends back the session's recorded events
//! ([`Event::HistoryRestored`]) and the panes are filled from them. Replay feeds the
//! same events one at a time (`tui::replay`).

use std::path::Path;
use std::time::Instant;

use super::{Activity, App, Stats, TokenFigures};
use crate::api;
use crate::protocol::{Event, Op};
use crate::tui::conversation::{Conversation, NoticeKind};
use crate::tui::layers::resume_question::ResumeQuestion;
use crate::tui::layers::sessions::SessionPicker;
use crate::tui::thinking::ThinkingPane;
use crate::tui::timeline::Timeline;

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
        let shown = match &event {
            // Answers to the recording workbench's inspector, and its end, are not ours.
            // A recording holds no restored history; one inside another is not shown.
            Event::HistorySnapshot { .. }
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
            | Event::SkillsLoaded { .. }
            | Event::ApprovalModeChanged { .. } => playback == Playback::Replay,
            Event::SessionResumed { .. }
            | Event::TurnStarted { .. }
            | Event::StepStarted { .. }
            | Event::ThinkingDelta { .. }
            | Event::TextDelta { .. }
            | Event::AssistantMessage { .. }
            | Event::ToolCallRequested { .. }
            | Event::ApprovalRequested { .. }
            | Event::ApprovalRulesChanged { .. }
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
            | Event::TurnComplete { .. }
            | Event::TurnAborted { .. }
            | Event::StepLimitReached { .. }
            | Event::Error { .. } => true,
        };
        shown && self.agent_event(event)
    }

    /// Shows the session the agent took up ([`Event::HistoryRestored`]): a fresh view
    /// filled from its recorded events. The agent's closing events and
    /// [`Event::SessionResumed`] follow, and leave the app idle.
    pub(super) fn show_restored(&mut self, events: Vec<Event>) {
        self.reset_session_view();
        // Everything happened "now": no recorded call or step keeps ticking.
        self.now = Instant::now();
        for event in events {
            self.apply_recorded(event, Playback::Resume);
        }
        self.conversation.scroll_to_bottom();
    }

    /// `/resume`: the picker of recorded sessions (listed now; each is a small file).
    pub(crate) fn open_session_picker(&mut self) {
        let picker = SessionPicker::open(
            self.sessions_dir.as_deref(),
            &self.session.workspace,
            self.session.session_id.as_deref(),
        );
        self.open_layer(Box::new(picker));
    }

    /// Continues the session recorded in `path`: a fresh view filled from its log, and
    /// the agent asked to take it up. The session left behind stays in its own log. A log
    /// recorded in another workspace, or not one of this user's sessions, is asked about
    /// first ([`ResumeQuestion`]).
    pub fn resume_session(&mut self, path: &Path) -> super::Outcome {
        self.resume(path, Confirmation::AskIfForeign);
        self.outcome(true)
    }

    /// [`Self::resume_session`] once the person said yes to continuing it here.
    pub(crate) fn resume_session_confirmed(&mut self, path: &Path) {
        self.resume(path, Confirmation::Given);
    }

    pub(super) fn resume(&mut self, path: &Path, confirmation: Confirmation) {
        if self.turn_running {
            self.notice(
                NoticeKind::Warning,
                "a turn is running: resume another session once it ends (Esc interrupts it)".to_string(),
            );
            return;
        }
        let origin = match api::log_origin(path, self.sessions_dir.as_deref()) {
            Ok(origin) => origin,
            Err(why) => {
                self.notice(NoticeKind::Error, format!("cannot resume: {why}"));
                return;
            }
        };
        if self.session.session_id.as_deref() == Some(origin.id.as_str()) {
            self.notice(
                NoticeKind::Info,
                format!("session {} is the one you are in", origin.id),
            );
            return;
        }
        let own = origin.own;
        let recorded = origin.workspace;
        let here = self.session.workspace.clone();
        let elsewhere =
            recorded != here && Path::new(&recorded).canonicalize().ok().as_deref() != Some(Path::new(&here));
        if confirmation == Confirmation::AskIfForeign && (elsewhere || !own) {
            // A new question arms afresh, whatever came before it.
            self.consent_armed_at = None;
            self.open_layer(Box::new(ResumeQuestion {
                path: path.to_path_buf(),
                id: origin.id,
                recorded,
                here,
                elsewhere,
                own,
            }));
            return;
        }
        // The view changes when the agent sends the session back: a log it cannot
        // continue leaves the session here as it is.
        self.send(Op::Resume {
            path: path.to_path_buf(),
        });
    }

    /// A fresh session view: conversation, thinking, tools, tokens and statistics start
    /// over. The theme, the layout, the input and its history, MCP servers and skills stay.
    pub fn reset_session_view(&mut self) {
        self.conversation = Conversation::default();
        self.thinking = ThinkingPane::default();
        self.timeline = Timeline::default();
        self.tokens = TokenFigures {
            token_limit: self.tokens.token_limit,
            context_window: self.tokens.context_window,
            ..TokenFigures::default()
        };
        self.stats = Stats::default();
        self.step = None;
        self.activity = Activity::Idle;
        self.turn_running = false;
        self.approvals.clear();
        self.deny_reason = None;
        self.approval_scroll = 0;
        self.rules.clear();
        self.queued.clear();
        self.last_notice = None;
        self.history = None;
        // Overlays about the session left behind close with it.
        self.overlays.retain(|overlay| !overlay.about_session());
    }

    /// Nothing runs any more: a log can end mid-turn or mid-compaction with no event
    /// saying so.
    pub(super) fn settle(&mut self) {
        self.conversation.stop_streaming();
        self.timeline.cancel_open();
        self.turn_running = false;
        self.activity = Activity::Idle;
        self.approvals.clear();
        self.deny_reason = None;
    }
}

/// Whether a log from elsewhere is asked about before it continues.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Confirmation {
    AskIfForeign,
    Given,
}
