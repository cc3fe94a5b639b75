//! A recorded session played back (`miniagent replay`) as a handle like a live agent's:
//! the front end sends `Op`s and gets `Event`s, and runs the same loop for both. No
//! model, no tools, no network: the recording's events come back as they come due
//! ([`Event::Replayed`]), the history inspector and the notes are answered from the log
//! and the workspace, and everything that would act is refused with a notice.
//!
//! [`Clock`] is the cursor and the clock, pure; [`Playback`] answers `Op`s with events,
//! driven by the `Instant`s it is given (so tests need no timers); [`spawn`] runs one on
//! the runtime behind a [`Handle`](crate::agent::AgentHandle).

mod clock;
#[cfg(test)]
mod tests;

use std::path::PathBuf;
use std::time::{Duration, Instant, UNIX_EPOCH};

use tokio::sync::mpsc;

pub use clock::{Clock, GAP_CAP, Played, SPEEDS};

use crate::agent::{AgentHandle, Restored};
use crate::session::{Loaded, Record};
use crate::tokens::TokenCounter;
use miniagent_protocol::{
    Event, HistorySnapshot, Op, PlayState, PlaybackControl, PlaybackStatus, RecordingInfo,
};

/// The step limit shown until the log's first step says what it was (the built-in default).
const UNKNOWN_MAX_STEPS: u32 = 50;
/// How often a playing replay tells where it stands (the front end's clock, spinners).
pub const TICK: Duration = Duration::from_millis(100);

/// What a replay refuses with: nothing here talks to a model or changes anything.
pub const NOT_SENT: &str = "this is a replay: nothing is sent to a model";
pub const NOT_CHANGED: &str = "this is a replay: it shows what happened and changes nothing";

/// A recording's playback: its clock, what it opens on, and what answers the inspector.
#[derive(Clone, Debug)]
pub struct Playback {
    clock: Clock,
    recording: RecordingInfo,
    counter: TokenCounter,
    /// The system prompt's and tools' tokens, as recorded.
    fixed_tokens: u64,
    /// The status last sent, so a tick that changes nothing sends nothing.
    sent: Option<PlaybackStatus>,
}

impl Playback {
    /// A playback of `loaded`, paused at its start; the inspector counts with `counter`.
    pub fn new(loaded: &Loaded, counter: TokenCounter) -> Self {
        Self {
            clock: Clock::new(loaded),
            recording: recording_info(loaded),
            counter,
            fixed_tokens: loaded.header.fixed_tokens,
            sent: None,
        }
    }

    /// The same playback, its inspector counting with `counter`.
    pub fn counting_with(mut self, counter: TokenCounter) -> Self {
        self.counter = counter;
        self
    }

    /// The recording it plays.
    pub fn recording(&self) -> &RecordingInfo {
        &self.recording
    }

    pub fn clock(&self) -> &Clock {
        &self.clock
    }

    /// The first event: the recording the view opens on, and where playback stands.
    pub fn open(&mut self, now: Instant) -> Vec<Event> {
        let status = self.clock.status(now);
        self.sent = Some(status.clone());
        vec![Event::PlaybackOpened {
            recording: self.recording.clone(),
            status,
        }]
    }

    /// The events due at `now`, and the status when it moved.
    pub fn tick(&mut self, now: Instant) -> Vec<Event> {
        let mut events: Vec<Event> = self
            .clock
            .advance(now)
            .into_iter()
            .map(Played::into_event)
            .collect();
        self.push_status(now, &mut events);
        events
    }

    /// How long the driver may sleep before the next event or the next clock tick;
    /// `None` while nothing plays.
    pub fn next_wake(&self, now: Instant) -> Option<Duration> {
        Some(self.clock.next_due(now)?.min(TICK))
    }

    /// Answers `op`: the replay's controls move it; the inspector and the notes are
    /// answered; the rest is refused with a notice (an interrupt needs no answer).
    pub fn on_op(&mut self, op: Op, now: Instant) -> Vec<Event> {
        match op {
            Op::Playback { control } => self.control(control, now),
            Op::InspectHistory => vec![Event::HistorySnapshot {
                snapshot: self.snapshot(),
            }],
            Op::ReadNotes => vec![crate::agent::answers::notes_event(&PathBuf::from(
                &self.recording.workspace,
            ))],
            Op::Interrupt => Vec::new(),
            Op::Shutdown => vec![Event::ShutdownComplete],
            Op::UserInput { .. } | Op::RunCommand { .. } => vec![notice(NOT_SENT)],
            Op::InspectContext => vec![notice(NOT_CHANGED)],
            Op::Approval { .. }
            | Op::RevokeApproval { .. }
            | Op::RemovePermissionRule { .. }
            | Op::SetApprovalMode { .. }
            | Op::ClearHistory
            | Op::CompactNow
            | Op::ReconnectMcp { .. }
            | Op::RecordedCall { .. }
            | Op::SetModel { .. }
            | Op::Diff { .. }
            | Op::ListRewindPoints
            | Op::Rewind { .. }
            | Op::Undo
            | Op::Resume { .. } => vec![notice(NOT_CHANGED)],
        }
    }

    fn control(&mut self, control: PlaybackControl, now: Instant) -> Vec<Event> {
        let mut events = Vec::new();
        match control {
            PlaybackControl::Toggle => match self.clock.state() {
                PlayState::Playing => self.clock.pause(now),
                PlayState::Paused => self.clock.play(now),
                PlayState::Ended => return self.restart(now),
            },
            PlaybackControl::Step => events.extend(self.clock.step(now).map(Played::into_event)),
            PlaybackControl::ToEnd => {
                events.extend(self.clock.jump_to_end().into_iter().map(Played::into_event))
            }
            PlaybackControl::Restart => return self.restart(now),
            PlaybackControl::Faster => self.clock.change_speed(true, now),
            PlaybackControl::Slower => self.clock.change_speed(false, now),
        }
        self.push_status(now, &mut events);
        events
    }

    /// Back to the first event, playing: the view opens again, and what is due plays.
    fn restart(&mut self, now: Instant) -> Vec<Event> {
        self.clock.restart(now);
        let mut events = self.open(now);
        events.extend(self.tick(now));
        events
    }

    fn push_status(&mut self, now: Instant, events: &mut Vec<Event>) {
        let status = self.clock.status(now);
        if self.sent.as_ref() != Some(&status) {
            self.sent = Some(status.clone());
            events.push(Event::PlaybackStatus { status });
        }
    }

    /// The history inspector's view at the cursor: the prompt with its summaries, as the
    /// agent would have shown it then.
    pub fn snapshot(&self) -> HistorySnapshot {
        let mut restored = Restored::new(self.counter);
        for record in self.clock.records_so_far() {
            restored.apply(record);
        }
        restored.snapshot(self.fixed_tokens)
    }
}

fn notice(message: &str) -> Event {
    Event::Notice {
        message: message.to_string(),
    }
}

/// What the view opens on: the header, and the step limit and token budget the log's
/// first events name.
fn recording_info(loaded: &Loaded) -> RecordingInfo {
    let mut max_steps = None;
    let mut budget = None;
    for (_, event) in loaded.events() {
        match event {
            Event::StepStarted { max_steps: limit, .. } if max_steps.is_none() => max_steps = Some(*limit),
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
    let header = &loaded.header;
    let first_ts = loaded.records.iter().find_map(Record::ts).unwrap_or(0);
    // A clock set wrong when it was recorded does not put the session in the future.
    let now_ms = UNIX_EPOCH.elapsed().map_or(u64::MAX, |since| {
        u64::try_from(since.as_millis()).unwrap_or(u64::MAX)
    });
    RecordingInfo {
        session_id: header.id.clone(),
        model: header.model.clone(),
        provider: header.provider.clone(),
        workspace: header.workspace.clone(),
        started_at_ms: first_ts.min(now_ms),
        max_steps: max_steps.unwrap_or(UNKNOWN_MAX_STEPS),
        token_limit,
        context_window,
        warnings: loaded.warnings.clone(),
    }
}

/// Plays `playback` on the runtime: it opens and starts playing at once, and ends after
/// [`Op::Shutdown`] or when the front end drops its sender. Call it inside the runtime.
pub fn spawn(mut playback: Playback) -> AgentHandle {
    let (ops, mut op_rx) = mpsc::unbounded_channel();
    let (event_tx, events) = mpsc::unbounded_channel();
    tokio::spawn(async move {
        let send = |events: Vec<Event>| events.into_iter().all(|event| event_tx.send(event).is_ok());
        let now = Instant::now();
        let mut opening = playback.open(now);
        opening.extend(playback.on_op(
            Op::Playback {
                control: PlaybackControl::Toggle,
            },
            now,
        ));
        if !send(opening) {
            return;
        }
        loop {
            let wake = playback.next_wake(Instant::now());
            let events = tokio::select! {
                op = op_rx.recv() => match op {
                    Some(Op::Shutdown) | None => {
                        let _ = event_tx.send(Event::ShutdownComplete);
                        return;
                    }
                    Some(op) => playback.on_op(op, Instant::now()),
                },
                _ = tokio::time::sleep(wake.unwrap_or(TICK)), if wake.is_some() => {
                    playback.tick(Instant::now())
                }
            };
            if !send(events) {
                return;
            }
        }
    });
    AgentHandle { ops, events }
}
