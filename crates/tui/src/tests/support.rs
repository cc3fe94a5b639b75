//! The workbench's `App` as the workbench tests build it: on a workspace, with a session
//! start in the future (so no file counts as touched unless marked), a fixed clock and
//! the token figures the snapshots show. [`Bench`] keeps what its handlers asked the
//! event loop to do, for the tests to assert on.

use std::time::{Duration, Instant, SystemTime};

use crate::app::{Action, App, Outcome};
use crate::theme::Theme;
use miniagent_protocol::ApprovalMode;
use miniagent_protocol::{Event, SandboxState, ToolInfo};

#[path = "../../../../tests/support/tempdir.rs"]
mod tempdir;

pub use tempdir::TempDir;

/// A key with no modifiers, pressed.
pub fn key(code: crossterm::event::KeyCode) -> crossterm::event::KeyEvent {
    crossterm::event::KeyEvent::new(code, crossterm::event::KeyModifiers::NONE)
}

/// The app drawn on a `width`×`height` test terminal, as text.
pub fn screen(app: &App, width: u16, height: u16) -> String {
    let mut terminal = ratatui::Terminal::new(ratatui::backend::TestBackend::new(width, height)).unwrap();
    terminal.draw(|frame| crate::render::draw(frame, app)).unwrap();
    terminal.backend().to_string()
}

/// An app under test: its handlers return whether the screen changed, as the event loop
/// sees it, and what they asked the loop to do is kept here. Everything else is the
/// app's own (it dereferences to [`App`]).
pub struct Bench {
    pub app: App,
    /// Every op sent to the agent, in order (a test clears it at will).
    pub sent: Vec<miniagent_protocol::Op>,
    /// Whether a handler asked to leave the workbench.
    pub quit: bool,
    /// Every action asked for, in order.
    pub actions: Vec<Action>,
}

impl From<App> for Bench {
    fn from(app: App) -> Self {
        Self {
            app,
            sent: Vec::new(),
            quit: false,
            actions: Vec::new(),
        }
    }
}

impl std::ops::Deref for Bench {
    type Target = App;

    fn deref(&self) -> &App {
        &self.app
    }
}

impl std::ops::DerefMut for Bench {
    fn deref_mut(&mut self) -> &mut App {
        &mut self.app
    }
}

impl Bench {
    /// Keeps what a handler asked for; whether the screen changed.
    fn took(&mut self, outcome: Outcome) -> bool {
        for action in outcome.actions {
            match &action {
                Action::Send(op) => self.sent.push(op.clone()),
                Action::Quit => self.quit = true,
                Action::Trust(_)
                | Action::UseLocalServer { .. }
                | Action::Clipboard(_)
                | Action::MouseCapture(_)
                | Action::EditInput { .. }
                | Action::Notify(_) => {}
            }
            self.actions.push(action);
        }
        outcome.changed
    }

    pub fn on_key(&mut self, key: crossterm::event::KeyEvent) -> bool {
        let outcome = self.app.on_key(key);
        self.took(outcome)
    }

    pub fn on_paste(&mut self, text: &str) -> bool {
        let outcome = self.app.on_paste(text);
        self.took(outcome)
    }

    pub fn on_mouse(&mut self, mouse: crossterm::event::MouseEvent) -> bool {
        let outcome = self.app.on_mouse(mouse);
        self.took(outcome)
    }

    pub fn on_agent_event(&mut self, event: Event) -> bool {
        let outcome = self.app.on_agent_event(event);
        self.took(outcome)
    }

    pub fn on_tick(&mut self) -> bool {
        let outcome = self.app.on_tick();
        self.took(outcome)
    }

    /// Lets a held answer key settle, as the event loop's tick does once
    /// [`ANSWER_SETTLE`](crate::app::ANSWER_SETTLE) has passed with no other key.
    pub fn settle(&mut self) -> bool {
        self.app.now += crate::app::ANSWER_SETTLE;
        self.on_tick()
    }

    pub fn submit(&mut self, text: String) {
        let outcome = self.app.submit(text);
        self.took(outcome);
    }

    pub fn resume_session(&mut self, path: &std::path::Path) {
        let outcome = self.app.resume_session(path);
        self.took(outcome);
    }
}

/// An app on `workspace` before any agent event.
pub fn bare_app(workspace: &TempDir) -> Bench {
    let start = SystemTime::now() + Duration::from_secs(3600);
    let mut app = App::new(
        Theme::dark(),
        workspace.path().to_path_buf(),
        ApprovalMode::Ask,
        50,
        start,
    );
    app.now = Instant::now();
    app.figures.set_budget(80_000, 200_000);
    Bench::from(app)
}

/// The `session_configured` the snapshots show: claude-test on anthropic with `bash`.
pub fn configured(workspace: &str, session_id: Option<&str>) -> Event {
    Event::SessionConfigured {
        model: "claude-test".into(),
        provider: "anthropic".into(),
        workspace: workspace.into(),
        tools: vec![ToolInfo {
            name: "bash".into(),
            description: "run".into(),
        }],
        session_id: session_id.map(str::to_string),
        sandbox: SandboxState::Enforced,
        endpoint: "https://api.anthropic.com".into(),
        instruction_files: Vec::new(),
    }
}

/// A workbench showing a recording's playback, joined as the event loop joins them (the
/// app's ops to the playback, its events back to the app) but driven by the `Instant`s
/// a test gives, with no timers.
pub struct Player {
    pub app: Bench,
    pub playback: miniagent_core::playback::Playback,
    /// Every op the app sent, in order.
    pub sent: Vec<miniagent_protocol::Op>,
}

impl Player {
    /// A player at the start of the log, paused; the inspector counts with cl100k.
    pub fn new(loaded: &miniagent_core::session::Loaded, theme: Theme) -> Self {
        let counter = miniagent_core::tokens::TokenCounter::new(miniagent_core::tokens::Encoding::Cl100kBase);
        Self::counting(loaded, theme, counter)
    }

    /// The same, the inspector counting with `counter`.
    pub fn counting(
        loaded: &miniagent_core::session::Loaded,
        theme: Theme,
        counter: miniagent_core::tokens::TokenCounter,
    ) -> Self {
        Self::playing(miniagent_core::playback::Playback::new(loaded, counter), theme)
    }

    /// A player of `playback` (as the api's `Recording` plays it), at its start.
    pub fn playing(mut playback: miniagent_core::playback::Playback, theme: Theme) -> Self {
        let now = Instant::now();
        let status = playback.clock().status(now);
        let mut player = Self {
            app: Bench::from(App::for_replay(
                crate::app::AppSettings::new(theme, playback.recording().workspace.clone().into()),
                playback.recording(),
                status,
            )),
            playback: playback.clone(),
            sent: Vec::new(),
        };
        let opened = playback.open(now);
        player.playback = playback;
        player.feed(opened);
        player
    }

    /// Shows `events`; whether the screen changed.
    fn feed(&mut self, events: Vec<Event>) -> bool {
        let mut changed = false;
        for event in events {
            changed |= self.app.on_agent_event(event);
        }
        changed
    }

    /// Answers what the app asked of the playback, until it asks nothing more.
    pub fn pump(&mut self, now: Instant) -> bool {
        let mut changed = false;
        while !self.app.sent.is_empty() {
            for op in std::mem::take(&mut self.app.sent) {
                self.sent.push(op.clone());
                let events = self.playback.on_op(op, now);
                changed |= self.feed(events);
            }
        }
        changed
    }

    /// A key at `now`; whether the screen changed.
    pub fn on_key(&mut self, key: crossterm::event::KeyEvent, now: Instant) -> bool {
        let changed = self.app.on_key(key);
        self.pump(now) || changed
    }

    /// Plays what is due at `now`; whether anything changed.
    pub fn tick(&mut self, now: Instant) -> bool {
        let events = self.playback.tick(now);
        let changed = self.feed(events);
        self.pump(now) || changed
    }

    /// How long until the playback needs the loop; `None` while paused.
    pub fn next_wake(&self, now: Instant) -> Option<Duration> {
        self.playback.next_wake(now)
    }

    /// Plays every event left, now.
    pub fn jump_to_end(&mut self) {
        let now = Instant::now();
        let events = self.playback.on_op(
            miniagent_protocol::Op::Playback {
                control: miniagent_protocol::PlaybackControl::ToEnd,
            },
            now,
        );
        self.feed(events);
        self.pump(now);
    }
}
