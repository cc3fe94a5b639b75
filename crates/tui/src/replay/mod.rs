//! `miniagent replay FILE`: a recorded session played back in the workbench, with no
//! agent, no model and no network.
//!
//! [`Replay`] is the playback itself (a cursor over the log's events, a clock with a
//! speed, stepping and jumping), pure and driven by the `Instant`s it is given.
//! [`Player`] joins it to an [`App`](super::app::App): it feeds the events, answers
//! the inspector from the history at the cursor and refuses everything else. `run`
//! puts a `Player` on the terminal.

mod player;
mod run;

use std::time::{Duration, Instant};

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

use super::keys::KeyHint;
use crate::agent::Restored;
use crate::protocol::{Event, HistorySnapshot};
use crate::session::{Loaded, Record};
use crate::tokens::TokenCounter;
use crate::tools::output::HeadTailBuffer;

pub use player::Player;
pub use run::replay;

/// Playback speeds, slowest first.
pub const SPEEDS: [f64; 7] = [0.25, 0.5, 1.0, 2.0, 4.0, 8.0, 16.0];
/// The speed playback starts at (1×).
const NORMAL_SPEED: usize = 2;
/// The longest wait between two events, in recorded time: idle time is skipped.
pub const GAP_CAP: Duration = Duration::from_millis(1500);

/// The replay's keys, for the help overlay.
pub const REPLAY_HINTS: [KeyHint; 6] = [
    KeyHint::new("Space", "play / pause"),
    KeyHint::new("→ or .", "step one event (pauses)"),
    KeyHint::new("End", "jump to the end"),
    KeyHint::new("Home", "start over"),
    KeyHint::new("+/-", "faster / slower (¼× to 16×)"),
    KeyHint::new("q/Ctrl-C", "quit"),
];

/// The keys the bottom bar offers during a replay (the input box lists the others).
pub const REPLAY_BAR_HINTS: [KeyHint; 3] = [
    KeyHint::new("Home", "start over"),
    KeyHint::new("F6", "history"),
    KeyHint::new("/", "commands"),
];

const PLAYING_HINTS: [KeyHint; 5] = [
    KeyHint::new("space", "pause"),
    KeyHint::new("→", "step"),
    KeyHint::new("q", "quit"),
    KeyHint::new("+/-", "speed"),
    KeyHint::new("end", "skip"),
];
const PAUSED_HINTS: [KeyHint; 5] = [
    KeyHint::new("space", "play"),
    KeyHint::new("→", "step"),
    KeyHint::new("q", "quit"),
    KeyHint::new("+/-", "speed"),
    KeyHint::new("end", "skip"),
];
const ENDED_HINTS: [KeyHint; 3] = [
    KeyHint::new("space", "again"),
    KeyHint::new("q", "quit"),
    KeyHint::new("F6", "history"),
];

/// One event as played: where in the replay it happens, and what it is.
#[derive(Clone, Debug, PartialEq)]
pub struct Played {
    /// Time into the replay (recorded time, long pauses cut to [`GAP_CAP`]).
    pub at: Duration,
    pub event: Event,
}

/// Whether the replay moves.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PlayState {
    Playing,
    Paused,
    /// Every event was played.
    Ended,
}

/// What a key did to the replay.
#[derive(Clone, Debug, PartialEq)]
pub enum ReplayAction {
    /// Not a replay key.
    Ignored,
    /// The state changed (paused, played, faster) but no event was played.
    Changed,
    /// These events were played now.
    Played(Vec<Played>),
    /// Playback starts over from the first event: the view must start over too.
    Restarted,
    Quit,
}

/// What the input box shows during a replay.
#[derive(Clone, Debug, PartialEq)]
pub struct ReplayStatus {
    pub state: PlayState,
    pub speed: f64,
    /// Events played, and all of them.
    pub played: usize,
    pub events: usize,
    /// Where the replay stands, and how long it is.
    pub position: Duration,
    pub length: Duration,
}

impl ReplayStatus {
    /// `▶ replay 2× · event 45/300 · 00:12/01:40`.
    pub fn head(&self) -> String {
        let mark = match self.state {
            PlayState::Playing => "▶",
            PlayState::Paused => "‖",
            PlayState::Ended => "■",
        };
        format!(
            "{mark} replay {} · event {}/{} · {}/{}",
            speed_label(self.speed),
            self.played,
            self.events,
            clock(self.position),
            clock(self.length)
        )
    }

    /// The keys that matter now, in the order they are worth the room.
    pub fn hints(&self) -> &'static [KeyHint] {
        match self.state {
            PlayState::Playing => &PLAYING_HINTS,
            PlayState::Paused => &PAUSED_HINTS,
            PlayState::Ended => &ENDED_HINTS,
        }
    }
}

/// `0.25×`, `1×`, `16×`.
pub fn speed_label(speed: f64) -> String {
    format!("{speed}×")
}

/// `01:40`, or `1:02:03` from an hour on.
fn clock(duration: Duration) -> String {
    let secs = duration.as_secs();
    if secs >= 3600 {
        format!("{}:{:02}:{:02}", secs / 3600, secs / 60 % 60, secs % 60)
    } else {
        format!("{:02}:{:02}", secs / 60, secs % 60)
    }
}

/// One event of the log and where it plays.
#[derive(Clone, Debug)]
struct Step {
    /// The record it came from (the records before it are the history at this point).
    record: usize,
    at: Duration,
    event: Event,
}

/// The playback of one log: a cursor over its events and a clock that runs at a speed.
#[derive(Clone, Debug)]
pub struct Replay {
    steps: Vec<Step>,
    records: Vec<Record>,
    /// The next event to play.
    cursor: usize,
    /// Where the replay stood at `anchor`; while paused, where it stands.
    position: Duration,
    /// While playing: the moment `position` was taken.
    anchor: Option<Instant>,
    speed: usize,
}

impl Replay {
    /// A replay of the log's events, then of the events that close what it left open;
    /// paused at the start, at 1×.
    pub fn new(loaded: &Loaded) -> Self {
        let mut steps = Vec::new();
        let mut at = Duration::ZERO;
        let mut last_ts: Option<u64> = None;
        for (index, record) in loaded.records.iter().enumerate() {
            // A call's output plays as one piece, just before the call ends.
            let output;
            let (ts, event) = match record {
                Record::Event { ts, event } => (ts, event),
                Record::Output {
                    ts,
                    id,
                    head,
                    tail,
                    dropped,
                } => {
                    let text = HeadTailBuffer::from_parts(0, head, tail, *dropped).text();
                    output = Event::ToolOutputDelta {
                        id: id.clone(),
                        delta: text,
                    };
                    (ts, &output)
                }
                _ => continue,
            };
            if let Some(last) = last_ts {
                at += Duration::from_millis(ts.saturating_sub(last)).min(GAP_CAP);
            }
            last_ts = Some(*ts);
            steps.push(Step {
                record: index,
                at,
                event: event.clone(),
            });
        }
        let end = loaded.records.len();
        steps.extend(loaded.closing_events().into_iter().map(|event| Step {
            record: end,
            at,
            event,
        }));
        Self {
            steps,
            records: loaded.records.clone(),
            cursor: 0,
            position: Duration::ZERO,
            anchor: None,
            speed: NORMAL_SPEED,
        }
    }

    /// Events in the replay.
    pub fn len(&self) -> usize {
        self.steps.len()
    }

    pub fn is_empty(&self) -> bool {
        self.steps.is_empty()
    }

    /// Events played so far.
    pub fn played(&self) -> usize {
        self.cursor
    }

    pub fn speed(&self) -> f64 {
        SPEEDS[self.speed]
    }

    /// How long the replay is at 1×.
    pub fn length(&self) -> Duration {
        self.steps.last().map_or(Duration::ZERO, |step| step.at)
    }

    pub fn state(&self) -> PlayState {
        if self.cursor >= self.steps.len() {
            PlayState::Ended
        } else if self.anchor.is_some() {
            PlayState::Playing
        } else {
            PlayState::Paused
        }
    }

    /// Where the replay stands at `now`.
    pub fn position(&self, now: Instant) -> Duration {
        let moved = match self.anchor {
            Some(anchor) => scale(now.saturating_duration_since(anchor), self.speed()),
            None => Duration::ZERO,
        };
        self.position.saturating_add(moved).min(self.length())
    }

    /// Starts (or goes on) playing from where it stands.
    pub fn play(&mut self, now: Instant) {
        if self.state() == PlayState::Paused {
            self.anchor = Some(now);
        }
    }

    pub fn pause(&mut self, now: Instant) {
        self.position = self.position(now);
        self.anchor = None;
    }

    /// The events due at `now`, played. Playing stops after the last one.
    pub fn advance(&mut self, now: Instant) -> Vec<Played> {
        let position = self.position(now);
        let mut played = Vec::new();
        while let Some(step) = self.steps.get(self.cursor)
            && step.at <= position
        {
            played.push(Played {
                at: step.at,
                event: step.event.clone(),
            });
            self.cursor += 1;
        }
        if self.cursor >= self.steps.len() {
            self.position = self.length();
            self.anchor = None;
        }
        played
    }

    /// Plays the next event now, whenever it was due, and pauses.
    pub fn step(&mut self, now: Instant) -> Option<Played> {
        self.pause(now);
        let step = self.steps.get(self.cursor)?;
        self.cursor += 1;
        self.position = self.position.max(step.at);
        Some(Played {
            at: step.at,
            event: step.event.clone(),
        })
    }

    /// Plays every event left, now.
    pub fn jump_to_end(&mut self) -> Vec<Played> {
        let played = self.steps[self.cursor.min(self.steps.len())..]
            .iter()
            .map(|step| Played {
                at: step.at,
                event: step.event.clone(),
            })
            .collect();
        self.cursor = self.steps.len();
        self.position = self.length();
        self.anchor = None;
        played
    }

    /// Back to the first event, playing.
    pub fn restart(&mut self, now: Instant) {
        self.cursor = 0;
        self.position = Duration::ZERO;
        self.anchor = (!self.steps.is_empty()).then_some(now);
    }

    /// One speed up (`faster`) or down, from `now` on.
    pub fn change_speed(&mut self, faster: bool, now: Instant) {
        self.position = self.position(now);
        if self.anchor.is_some() {
            self.anchor = Some(now);
        }
        self.speed = if faster {
            (self.speed + 1).min(SPEEDS.len() - 1)
        } else {
            self.speed.saturating_sub(1)
        };
    }

    /// How long until the next event is due; `None` while nothing plays.
    pub fn next_due(&self, now: Instant) -> Option<Duration> {
        self.anchor?;
        let step = self.steps.get(self.cursor)?;
        let ahead = step.at.saturating_sub(self.position(now));
        Some(scale(ahead, 1.0 / self.speed()))
    }

    /// Applies a replay key (`Space`, `→`/`.`, `End`, `Home`, `+`/`-`, `q`, `Ctrl-C`).
    pub fn on_key(&mut self, key: KeyEvent, now: Instant) -> ReplayAction {
        let chord = key
            .modifiers
            .intersects(KeyModifiers::CONTROL | KeyModifiers::ALT);
        if chord {
            return match key.code {
                KeyCode::Char('c') if key.modifiers.contains(KeyModifiers::CONTROL) => ReplayAction::Quit,
                _ => ReplayAction::Ignored,
            };
        }
        match key.code {
            KeyCode::Char(' ') => match self.state() {
                PlayState::Playing => {
                    self.pause(now);
                    ReplayAction::Changed
                }
                PlayState::Paused => {
                    self.play(now);
                    ReplayAction::Changed
                }
                PlayState::Ended => {
                    self.restart(now);
                    ReplayAction::Restarted
                }
            },
            KeyCode::Right | KeyCode::Char('.') => match self.step(now) {
                Some(played) => ReplayAction::Played(vec![played]),
                None => ReplayAction::Changed,
            },
            KeyCode::End => ReplayAction::Played(self.jump_to_end()),
            KeyCode::Home => {
                self.restart(now);
                ReplayAction::Restarted
            }
            KeyCode::Char('+' | '=') => {
                self.change_speed(true, now);
                ReplayAction::Changed
            }
            KeyCode::Char('-' | '_') => {
                self.change_speed(false, now);
                ReplayAction::Changed
            }
            KeyCode::Char('q') => ReplayAction::Quit,
            _ => ReplayAction::Ignored,
        }
    }

    /// What the input box shows at `now`.
    pub fn status(&self, now: Instant) -> ReplayStatus {
        ReplayStatus {
            state: self.state(),
            speed: self.speed(),
            played: self.cursor,
            events: self.steps.len(),
            position: self.position(now),
            length: self.length(),
        }
    }

    /// The records up to the cursor: the history as it stood when the last event played.
    pub fn records_so_far(&self) -> &[Record] {
        let end = self
            .steps
            .get(self.cursor)
            .map_or(self.records.len(), |next| next.record);
        &self.records[..end.min(self.records.len())]
    }

    /// The history inspector's view at the cursor: the prompt with its summaries, as the
    /// agent would have shown it then. `fixed_tokens` are the system prompt's and tools'.
    pub fn snapshot(&self, counter: TokenCounter, fixed_tokens: u64) -> HistorySnapshot {
        let mut restored = Restored::new(counter);
        for record in self.records_so_far() {
            restored.apply(record);
        }
        restored.snapshot(fixed_tokens)
    }
}

/// `duration × factor`, saturating instead of panicking on absurd values.
fn scale(duration: Duration, factor: f64) -> Duration {
    Duration::try_from_secs_f64(duration.as_secs_f64() * factor).unwrap_or(Duration::MAX)
}

#[cfg(test)]
mod tests;
