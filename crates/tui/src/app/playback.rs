//! A replay in the workbench: the playback's events (`Event::PlaybackOpened`,
//! `PlaybackStatus`, `Replayed`) drive the same app a live agent does. The app's clock
//! is the replay's: a recorded event is shown at the moment it happened, so durations
//! and spinners read as they did in the session.

use std::path::PathBuf;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

use super::{Action, App, AppSettings, Pane, Playback, SessionView};
use crate::conversation::NoticeKind;
use miniagent_protocol::{ApprovalMode, Op, PlaybackStatus, RecordingInfo};

impl App {
    /// A workbench for replaying `recording`, standing at `status` (what the core's
    /// playback opens with, so the first frame is already the replay's). The recording
    /// gives the workspace, the step limit and when it started; `settings` the rest.
    pub fn for_replay(settings: AppSettings, recording: &RecordingInfo, status: PlaybackStatus) -> Self {
        let started = UNIX_EPOCH + Duration::from_millis(recording.started_at_ms);
        let mut app = App::build(AppSettings {
            workspace: PathBuf::from(&recording.workspace),
            approval: ApprovalMode::Ask,
            max_steps: recording.max_steps,
            session_start: started.min(SystemTime::now()),
            ..settings
        });
        app.open_recording(recording, status);
        app
    }

    /// Sets the clock to `wall`, the time now, unless a replay keeps its own.
    pub fn set_now(&mut self, wall: Instant) {
        if self.replay.is_none() {
            // The loop runs at least every tick while an answer key settles; a longer gap
            // means this process was stalled, and keys typed meanwhile are not read yet:
            // the key's wait starts over, so they are read (as typing) before it counts.
            self.answers.clock_moved(self.now, wall);
            self.now = wall;
        }
    }

    /// The replay opens (or starts over): a fresh view of the recorded session.
    pub(crate) fn open_recording(&mut self, recording: &RecordingInfo, status: PlaybackStatus) {
        self.reset_session_view();
        self.replay_origin = Instant::now();
        self.now = self.replay_origin;
        self.figures
            .set_budget(recording.token_limit, recording.context_window);
        let view = SessionView {
            model: recording.model.clone(),
            provider: recording.provider.clone(),
            workspace: recording.workspace.clone(),
            tools: Vec::new(),
            session_id: Some(recording.session_id.clone()),
            sandbox: Default::default(),
            endpoint: String::new(),
            instruction_files: Vec::new(),
        };
        self.session.recorded(view, recording.max_steps);
        for warning in &recording.warnings {
            self.notice(NoticeKind::Warning, warning.clone());
        }
        self.playback_moved(status);
    }

    /// Where the replay stands: its clock and its status line.
    pub(crate) fn playback_moved(&mut self, status: PlaybackStatus) {
        self.now = self.replay_origin + Duration::from_millis(status.position_ms);
        self.replay = Some(status);
    }

    /// A recorded event came due `at_ms` into the replay.
    pub(crate) fn replayed(&mut self, at_ms: u64, event: miniagent_protocol::Event) -> bool {
        self.now = self.replay_origin + Duration::from_millis(at_ms);
        self.apply_recorded(event, Playback::Replay)
    }

    /// A replay key, on a workbench showing a replay: `Some(changed)` when the replay
    /// took it (a playback control goes to the core, `q` and Ctrl-C quit); `None` lets
    /// it go on to the overlays and panes. A recorded approval is shown, never
    /// answered: no other key reaches it.
    pub(crate) fn replay_key(&mut self, key: KeyEvent) -> Option<bool> {
        self.replay.as_ref()?;
        let ctrl_c = key.code == KeyCode::Char('c') && key.modifiers.contains(KeyModifiers::CONTROL);
        let typing = self.layout.focus() == Pane::Input && !self.input.is_empty();
        let approval = self.approval().is_some();
        if ctrl_c && typing && !approval {
            // As in a live session: Ctrl-C clears what was typed before it quits.
            self.input.clear();
            return Some(true);
        }
        if ctrl_c || approval || (self.layers.is_empty() && !typing) {
            let replay = crate::replay::REPLAY.iter();
            if let Some(binding) = replay.clone().find(|binding| (binding.takes)(key)) {
                match (binding.control)(key) {
                    Some(control) => self.request(Action::Send(Op::Playback { control })),
                    None => self.request(Action::Quit),
                }
                return Some(true);
            }
            // Only `/` starts typing in a replay (a command); other letters are neither
            // controls nor anything to send.
            let letter = crate::keys::types_char(key) && key.code != KeyCode::Char('/');
            if letter && !typing && self.layers.is_empty() {
                return Some(false);
            }
        }
        approval.then_some(false)
    }
}
