//! A [`Replay`] joined to an [`App`]: keys go to the replay first, played events to the
//! app, and what the app asks of an agent is answered from the log (the inspector) or
//! refused with a notice (everything else).

use std::path::PathBuf;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use crossterm::event::{KeyCode, KeyEvent, KeyEventKind, KeyModifiers};

use super::{Played, Replay, ReplayAction};
use crate::protocol::{ApprovalMode, Event, Op};
use crate::session::{Header, Loaded, Record};
use crate::tokens::{Encoding, TokenCounter};
use crate::tui::app::{App, Pane, Playback, SessionView};
use crate::tui::conversation::NoticeKind;
use crate::tui::theme::Theme;

/// The step limit shown until the log's first step says what it was (the built-in default).
const UNKNOWN_MAX_STEPS: u32 = 50;
/// How often the screen follows a playing replay (its clock, spinners, durations).
pub(super) const TICK: Duration = Duration::from_millis(100);

/// What a replay starts from, kept to start over.
#[derive(Clone, Debug)]
struct Opening {
    header: Header,
    warnings: Vec<String>,
    /// The step limit and the token budget the log's first events name.
    max_steps: u32,
    token_limit: u64,
    context_window: u64,
}

/// A replay on the workbench's state: build it from a log, give it keys and time, draw
/// its `app` with [`render::draw`](crate::tui::render::draw).
pub struct Player {
    pub app: App,
    pub replay: Replay,
    /// Counts the history's tokens for the inspector.
    pub counter: TokenCounter,
    opening: Opening,
    /// The app's clock at the replay's start: `app.now` is this plus the replay position.
    origin: Instant,
}

impl Player {
    /// A player at the start of the log, paused, with the log's warnings as notices.
    pub fn new(loaded: &Loaded, theme: Theme) -> Self {
        let opening = Opening::of(loaded);
        let first_ts = loaded.records.iter().find_map(Record::ts).unwrap_or(0);
        let session_start = UNIX_EPOCH + Duration::from_millis(first_ts);
        let app = App::new(
            theme,
            PathBuf::from(&opening.header.workspace),
            ApprovalMode::Ask,
            opening.max_steps,
            session_start.min(SystemTime::now()),
        );
        let mut player = Self {
            app,
            replay: Replay::new(loaded),
            counter: TokenCounter::new(Encoding::Cl100kBase),
            opening,
            origin: Instant::now(),
        };
        player.open();
        player.sync(player.origin);
        player
    }

    /// The view before the first event: the recorded session's model and workspace.
    fn open(&mut self) {
        let opening = &self.opening;
        let app = &mut self.app;
        app.now = self.origin;
        app.max_steps = opening.max_steps;
        app.tokens.token_limit = opening.token_limit;
        app.tokens.context_window = opening.context_window;
        app.session = SessionView {
            model: opening.header.model.clone(),
            provider: opening.header.provider.clone(),
            workspace: opening.header.workspace.clone(),
            tools: Vec::new(),
            session_id: Some(opening.header.id.clone()),
            sandbox: Default::default(),
        };
        for warning in &opening.warnings {
            app.notice(NoticeKind::Warning, warning.clone());
        }
    }

    /// Starts playing (the replay opens playing).
    pub fn start(&mut self, now: Instant) {
        self.replay.play(now);
        self.sync(now);
    }

    /// Plays what is due at `now`. Returns whether the screen changed.
    pub fn tick(&mut self, now: Instant) -> bool {
        let played = self.replay.advance(now);
        let any = !played.is_empty();
        self.feed(played);
        self.sync(now) || any
    }

    /// Plays every event left, now (for a look at the end, and for tests).
    pub fn jump_to_end(&mut self) {
        let played = self.replay.jump_to_end();
        self.feed(played);
        self.sync(Instant::now());
    }

    /// How long the event loop may sleep before the replay needs it; `None` while paused.
    pub fn next_wake(&self, now: Instant) -> Option<Duration> {
        let due = self.replay.next_due(now)?;
        Some(due.min(TICK))
    }

    /// Applies a key: Ctrl-C quits; the replay's keys come first unless an overlay is
    /// open or a command is being typed; a recorded approval is shown, never answered.
    pub fn on_key(&mut self, key: KeyEvent, now: Instant) -> bool {
        if key.kind == KeyEventKind::Release {
            return false;
        }
        if key.code == KeyCode::Char('c') && key.modifiers.contains(KeyModifiers::CONTROL) {
            self.app.quit = true;
            return true;
        }
        let typing = self.app.focus == Pane::Input && !self.app.input.is_empty();
        let approval = !self.app.approvals.is_empty();
        if approval || (self.app.overlays.is_empty() && !typing) {
            match self.replay.on_key(key, now) {
                ReplayAction::Ignored => {}
                ReplayAction::Changed => {
                    self.sync(now);
                    return true;
                }
                ReplayAction::Played(played) => {
                    self.feed(played);
                    self.sync(now);
                    return true;
                }
                ReplayAction::Restarted => {
                    self.restart();
                    self.tick(now);
                    return true;
                }
                ReplayAction::Quit => {
                    self.app.quit = true;
                    return true;
                }
            }
        }
        if approval {
            return false;
        }
        let changed = self.app.on_key(key);
        self.answer_outbox();
        changed
    }

    /// Applies played events at the moments they happened.
    fn feed(&mut self, played: Vec<Played>) {
        for Played { at, event } in played {
            self.app.now = self.origin + at;
            self.app.apply_recorded(event, Playback::Replay);
        }
        self.answer_outbox();
    }

    /// The view starts over with the replay.
    fn restart(&mut self) {
        self.app.reset_session_view();
        self.app.mcp.clear();
        self.app.skills.clear();
        self.app.skill_warnings.clear();
        self.app.approval_mode = ApprovalMode::Ask;
        self.open();
    }

    /// Sets the app's clock and status line to the replay's at `now`. Returns whether
    /// the status line changed.
    fn sync(&mut self, now: Instant) -> bool {
        self.app.now = self.origin + self.replay.position(now);
        let status = Some(self.replay.status(now));
        let changed = self.app.replay != status;
        self.app.replay = status;
        changed
    }

    /// Answers what the app asked of the agent: the inspector from the history at the
    /// cursor; the rest with a notice, since nothing here can act.
    fn answer_outbox(&mut self) {
        for op in std::mem::take(&mut self.app.outbox) {
            let refused = match op {
                Op::InspectHistory => {
                    let snapshot = self
                        .replay
                        .snapshot(self.counter, self.opening.header.fixed_tokens);
                    self.app.on_agent_event(Event::HistorySnapshot { snapshot });
                    continue;
                }
                Op::ReadNotes => {
                    let workspace = PathBuf::from(&self.opening.header.workspace);
                    self.app
                        .on_agent_event(crate::agent::answers::notes_event(&workspace));
                    continue;
                }
                Op::Interrupt | Op::Shutdown => continue,
                Op::UserInput { .. } => "this is a replay: nothing is sent to a model",
                Op::Approval { .. }
                | Op::RevokeApproval { .. }
                | Op::SetApprovalMode { .. }
                | Op::ClearHistory
                | Op::CompactNow
                | Op::ReconnectMcp { .. }
                | Op::RecordedCall { .. }
                | Op::Resume { .. } => "this is a replay: it shows what happened and changes nothing",
            };
            self.app.notice(NoticeKind::Info, refused.to_string());
        }
    }
}

impl Opening {
    fn of(loaded: &Loaded) -> Self {
        let mut max_steps = None;
        let mut budget = None;
        for (_, event) in loaded.events() {
            match event {
                Event::StepStarted { max_steps: limit, .. } if max_steps.is_none() => {
                    max_steps = Some(*limit)
                }
                Event::TokenUsage {
                    token_limit,
                    context_window,
                    ..
                } if budget.is_none() => budget = Some((*token_limit, *context_window)),
                _ => {}
            }
            if max_steps.is_some() && budget.is_some() {
                break;
            }
        }
        let (token_limit, context_window) = budget.unwrap_or((0, 0));
        Self {
            header: loaded.header.clone(),
            warnings: loaded.warnings.clone(),
            max_steps: max_steps.unwrap_or(UNKNOWN_MAX_STEPS),
            token_limit,
            context_window,
        }
    }
}
