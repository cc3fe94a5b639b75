//! The playback of one log: a cursor over its events and a clock that runs at a speed,
//! pure and driven by the `Instant`s it is given.

use std::time::{Duration, Instant};

use crate::session::{Loaded, Record};
use crate::tools::output::HeadTailBuffer;
use miniagent_protocol::{Event, PlayState, PlaybackStatus};

/// Playback speeds, slowest first.
pub const SPEEDS: [f64; 7] = [0.25, 0.5, 1.0, 2.0, 4.0, 8.0, 16.0];
/// The speed playback starts at (1×).
const NORMAL_SPEED: usize = 2;
/// The longest wait between two events, in recorded time: idle time is skipped.
pub const GAP_CAP: Duration = Duration::from_millis(1500);

/// One event as played: where in the replay it happens, and what it is.
#[derive(Clone, Debug, PartialEq)]
pub struct Played {
    /// Time into the replay (recorded time, long pauses cut to [`GAP_CAP`]).
    pub at: Duration,
    pub event: Event,
}

impl Played {
    /// The event as a front end gets it.
    pub fn into_event(self) -> Event {
        Event::Replayed {
            at_ms: millis(self.at),
            event: Box::new(self.event),
        }
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

/// The playback of one log.
#[derive(Clone, Debug)]
pub struct Clock {
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

impl Clock {
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

    /// Where the replay stands at `now`, as a front end shows it.
    pub fn status(&self, now: Instant) -> PlaybackStatus {
        PlaybackStatus {
            state: self.state(),
            speed: self.speed(),
            played: self.cursor,
            events: self.steps.len(),
            position_ms: millis(self.position(now)),
            length_ms: millis(self.length()),
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
}

/// `duration × factor`, saturating instead of panicking on absurd values.
fn scale(duration: Duration, factor: f64) -> Duration {
    Duration::try_from_secs_f64(duration.as_secs_f64() * factor).unwrap_or(Duration::MAX)
}

/// Whole milliseconds, saturating.
fn millis(duration: Duration) -> u64 {
    u64::try_from(duration.as_millis()).unwrap_or(u64::MAX)
}
