//! A recorded session in the workbench. Resuming one (`--resume` at start, or `/resume`)
//! fills the panes from its log and asks the agent to continue it; replay feeds the same
//! events one at a time (`tui::replay`).

use std::path::Path;
use std::time::Instant;

use super::{Activity, App, Stats, TokenFigures};
use crate::protocol::{Event, Op};
use crate::session::{self, Loaded};
use crate::tui::conversation::{Conversation, NoticeKind};
use crate::tui::overlay::{Overlay, ResumeQuestion};
use crate::tui::sessions::SessionPicker;
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
            Event::HistorySnapshot { .. } | Event::ShutdownComplete => false,
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
        shown && self.on_agent_event(event)
    }

    /// Fills the panes from a log being resumed: its events, then the events that close
    /// what it left open, then its warnings as notices. The app ends idle. The agent is
    /// about to send the warnings and the closing events again; those are shown once.
    pub fn show_resumed(&mut self, loaded: &Loaded) {
        // Everything happened "now": no recorded call or step keeps ticking.
        self.now = Instant::now();
        for (_, event) in loaded.events() {
            self.apply_recorded(event.clone(), Playback::Resume);
        }
        let closing = loaded.closing_events();
        for event in closing.iter().cloned() {
            self.apply_recorded(event, Playback::Resume);
        }
        self.settle();
        for warning in &loaded.warnings {
            self.notice(NoticeKind::Warning, warning.clone());
        }
        self.conversation.scroll_to_bottom();
        self.resume_echo = loaded
            .warnings
            .iter()
            .map(|message| Event::Notice {
                message: message.clone(),
            })
            .chain(closing)
            .collect();
    }

    /// `/resume`: the picker of recorded sessions (listed now; each is a small file).
    pub fn open_session_picker(&mut self) {
        let picker = SessionPicker::open(
            self.sessions_dir.as_deref(),
            &self.session.workspace,
            self.session.session_id.as_deref(),
        );
        self.overlays.push(Overlay::Sessions(picker));
    }

    /// Continues the session recorded in `path`: a fresh view filled from its log, and
    /// the agent asked to take it up. The session left behind stays in its own log. A log
    /// recorded in another workspace, or not one of this user's sessions, is asked about
    /// first ([`Overlay::ResumeQuestion`]).
    pub fn resume_session(&mut self, path: &Path) {
        self.resume(path, Confirmation::AskIfForeign);
    }

    /// [`Self::resume_session`] once the person said yes to continuing it here.
    pub fn resume_session_confirmed(&mut self, path: &Path) {
        self.resume(path, Confirmation::Given);
    }

    fn resume(&mut self, path: &Path, confirmation: Confirmation) {
        if self.turn_running {
            self.notice(
                NoticeKind::Warning,
                "a turn is running: resume another session once it ends (Esc interrupts it)".to_string(),
            );
            return;
        }
        let loaded = match session::load(path) {
            Ok(loaded) => loaded,
            Err(why) => {
                self.notice(NoticeKind::Error, format!("cannot resume: {why}"));
                return;
            }
        };
        if self.session.session_id.as_deref() == Some(loaded.header.id.as_str()) {
            self.notice(
                NoticeKind::Info,
                format!("session {} is the one you are in", loaded.header.id),
            );
            return;
        }
        let own = session::store::is_own_log(self.sessions_dir.as_deref(), path);
        let recorded = loaded.header.workspace.clone();
        let here = self.session.workspace.clone();
        let elsewhere =
            recorded != here && Path::new(&recorded).canonicalize().ok().as_deref() != Some(Path::new(&here));
        if confirmation == Confirmation::AskIfForeign && (elsewhere || !own) {
            // A new question arms afresh, whatever came before it.
            self.consent_armed_at = None;
            self.overlays.push(Overlay::ResumeQuestion(ResumeQuestion {
                path: path.to_path_buf(),
                id: loaded.header.id.clone(),
                recorded,
                here,
                elsewhere,
                own,
            }));
            return;
        }
        self.reset_session_view();
        self.show_resumed(&loaded);
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
        self.resume_echo.clear();
        // Overlays about the session left behind close with it.
        self.overlays.retain(|overlay| !overlay.about_session());
    }

    /// Nothing runs any more: a log can end mid-turn or mid-compaction with no event
    /// saying so.
    fn settle(&mut self) {
        self.conversation.stop_streaming();
        self.timeline.cancel_open();
        self.turn_running = false;
        self.activity = Activity::Idle;
        self.approvals.clear();
        self.deny_reason = None;
    }

    /// Whether `event` repeats one [`App::show_resumed`] showed already; it is then
    /// dropped. The agent's `session_resumed` (or a new turn) ends the repeats.
    pub(super) fn is_resume_echo(&mut self, event: &Event) -> bool {
        if self.resume_echo.is_empty() {
            return false;
        }
        if matches!(event, Event::SessionResumed { .. } | Event::TurnStarted { .. }) {
            self.resume_echo.clear();
            return false;
        }
        match self.resume_echo.iter().position(|shown| shown == event) {
            Some(index) => {
                self.resume_echo.remove(index);
                true
            }
            None => false,
        }
    }
}

/// Whether a log from elsewhere is asked about before it continues.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Confirmation {
    AskIfForeign,
    Given,
}
