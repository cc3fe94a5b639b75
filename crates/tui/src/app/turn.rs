//! The turn's state: what the agent is doing, which step it is on, whether a turn runs
//! or was asked for, the messages queued behind it, and the status bar's latest notice.
//! Agent events move it (`App::on_*` in `events.rs`); keys ask it whether a turn is busy.

use std::collections::VecDeque;
use std::time::{Duration, Instant};

use crate::conversation::NoticeKind;

/// What the agent is doing, as precisely as the events say.
#[derive(Clone, Debug, PartialEq)]
pub enum Activity {
    Idle,
    /// Waiting for the model's first output of a step.
    Waiting {
        since: Instant,
    },
    Thinking {
        since: Instant,
    },
    Writing {
        since: Instant,
    },
    Running {
        name: String,
        since: Instant,
    },
    AwaitingApproval,
    Retrying {
        until: Instant,
        attempt: u32,
        of: u32,
    },
    Compacting,
    Interrupting,
}

/// The turn now running (or none) and what waits behind it.
#[derive(Clone, Debug)]
pub struct Turn {
    activity: Activity,
    step: Option<u32>,
    running: bool,
    /// A message was sent and its turn has not started yet.
    requested: bool,
    /// Messages typed while a turn runs, sent one per turn as each ends. They stay here,
    /// not with the agent, so that stopping the turn can give them back to the input.
    queued: VecDeque<String>,
    /// The tool calls of the model's latest reply, by id, in order.
    step_calls: Vec<String>,
    /// Where in the transcript the progress line of a compaction outside a turn
    /// (`/compact`) is: the next notice (its report) takes its place, so one line remains.
    compact_line: Option<usize>,
    /// Until when a Ctrl-C on an empty input quits (the first one says so).
    quit_armed_until: Option<Instant>,
    /// Until when an Esc on an empty input opens the rewind picker (one came shortly
    /// before, with nothing else to do).
    rewind_armed_until: Option<Instant>,
    /// The latest notice, shown in the status bar until the next turn.
    last_notice: Option<(NoticeKind, String)>,
    /// What to tell once the turn's error is shown: the agent gave its message back.
    returned: Option<String>,
}

impl Default for Turn {
    fn default() -> Self {
        Self {
            activity: Activity::Idle,
            step: None,
            running: false,
            requested: false,
            queued: VecDeque::new(),
            step_calls: Vec::new(),
            compact_line: None,
            quit_armed_until: None,
            rewind_armed_until: None,
            last_notice: None,
            returned: None,
        }
    }
}

impl Turn {
    pub fn activity(&self) -> &Activity {
        &self.activity
    }

    /// The step running now (or the last one of the last turn).
    pub fn step(&self) -> Option<u32> {
        self.step
    }

    /// Whether a turn runs.
    pub fn running(&self) -> bool {
        self.running
    }

    /// Whether a turn runs or is about to: a message sent now would wait behind it.
    pub fn busy(&self) -> bool {
        self.running || self.requested
    }

    pub fn queued(&self) -> &VecDeque<String> {
        &self.queued
    }

    pub fn last_notice(&self) -> Option<&(NoticeKind, String)> {
        self.last_notice.as_ref()
    }

    /// The status line at `now`: exactly what the agent is doing.
    pub fn status_text(&self, now: Instant) -> String {
        let secs = |since: Instant| now.saturating_duration_since(since).as_secs_f64();
        match &self.activity {
            Activity::Idle => "ready".to_string(),
            Activity::Waiting { since } => format!("waiting for the model {:.1} s", secs(*since)),
            Activity::Thinking { .. } => "thinking".to_string(),
            Activity::Writing { .. } => "writing".to_string(),
            Activity::Running { name, since } => format!("running {name} for {:.1} s", secs(*since)),
            Activity::AwaitingApproval => "waiting for approval".to_string(),
            Activity::Retrying { until, attempt, of } => {
                let left = until.saturating_duration_since(now).as_secs_f64().ceil();
                format!("retrying in {left:.0} s (attempt {attempt} of {of})")
            }
            Activity::Compacting => "compacting".to_string(),
            Activity::Interrupting => "interrupting…".to_string(),
        }
    }

    pub(crate) fn set_activity(&mut self, activity: Activity) {
        self.activity = activity;
    }

    /// A message was sent to start a turn.
    pub(crate) fn requested(&mut self) {
        self.requested = true;
    }

    /// A message typed while a turn is busy waits for it to end.
    pub(crate) fn queue(&mut self, text: String) {
        self.queued.push_back(text);
    }

    /// The agent gave the turn's message back: `notice` is told after the turn's error.
    pub(crate) fn set_returned(&mut self, notice: String) {
        self.returned = Some(notice);
    }

    pub(crate) fn take_returned(&mut self) -> Option<String> {
        self.returned.take()
    }

    /// Takes every queued message, oldest first.
    pub(crate) fn take_queued(&mut self) -> Vec<String> {
        self.queued.drain(..).collect()
    }

    pub(crate) fn started(&mut self, now: Instant) {
        self.running = true;
        self.requested = false;
        self.last_notice = None;
        self.activity = Activity::Waiting { since: now };
    }

    pub(crate) fn step_started(&mut self, step: u32, now: Instant) {
        self.step = Some(step);
        self.activity = Activity::Waiting { since: now };
    }

    /// Thinking streams; the clock starts at its first delta.
    pub(crate) fn thinking(&mut self, now: Instant) {
        if !matches!(self.activity, Activity::Thinking { .. }) {
            self.activity = Activity::Thinking { since: now };
        }
    }

    /// Text streams; the clock starts at its first delta.
    pub(crate) fn writing(&mut self, now: Instant) {
        if !matches!(self.activity, Activity::Writing { .. }) {
            self.activity = Activity::Writing { since: now };
        }
    }

    /// The model's reply asked for `calls` (by id, in order).
    pub(crate) fn replied(&mut self, calls: Vec<String>, now: Instant) {
        self.step_calls = calls;
        self.activity = Activity::Waiting { since: now };
    }

    /// Which of its step's calls `id` is, as (n, of), when the step made more than one.
    pub(crate) fn call_in_step(&self, id: &str) -> Option<(usize, usize)> {
        self.step_calls
            .iter()
            .position(|call| call == id)
            .map(|index| (index + 1, self.step_calls.len()))
            .filter(|(_, of)| *of > 1)
    }

    pub(crate) fn retrying(&mut self, attempt: u32, max_attempts: u32, delay_ms: u64, now: Instant) {
        self.activity = Activity::Retrying {
            until: now + Duration::from_millis(delay_ms),
            attempt: attempt + 1,
            of: max_attempts + 1,
        };
    }

    /// The turn ended: returns the next queued message, to be sent now.
    pub(crate) fn ended(&mut self) -> Option<String> {
        self.running = false;
        self.requested = false;
        self.activity = Activity::Idle;
        self.queued.pop_front()
    }

    /// Nothing runs any more (a recorded session ends mid-turn with no event saying so).
    pub(crate) fn settle(&mut self) {
        self.running = false;
        self.activity = Activity::Idle;
    }

    /// A fresh session view: no turn, no step, nothing queued or noticed.
    pub(crate) fn start_over(&mut self) {
        self.step = None;
        self.settle();
        self.queued.clear();
        self.last_notice = None;
    }

    /// The conversation was cleared: its steps with it.
    pub(crate) fn history_cleared(&mut self) {
        self.step = None;
    }

    pub(crate) fn compaction_started(&mut self) {
        self.activity = Activity::Compacting;
    }

    /// Outside a turn (`/compact`), the transcript's `line` is a compaction's progress
    /// line, which the notice after it (its report) replaces.
    pub(crate) fn compaction_progress_at(&mut self, line: Option<usize>) {
        if !self.running {
            self.compact_line = line;
        }
    }

    /// A compaction ended: the turn waits for the model again, or nothing runs.
    pub(crate) fn compaction_over(&mut self, now: Instant) {
        if self.activity == Activity::Compacting {
            self.activity = if self.running {
                Activity::Waiting { since: now }
            } else {
                Activity::Idle
            };
        }
    }

    /// The status bar shows `text` until the next turn.
    pub(crate) fn noticed(&mut self, kind: NoticeKind, text: String) {
        self.last_notice = Some((kind, text));
    }

    /// The agent sent a notice: a `/compact` outside a turn ends with one when nothing
    /// was compacted.
    pub(crate) fn agent_noticed(&mut self) {
        if self.activity == Activity::Compacting && !self.running {
            self.activity = Activity::Idle;
        }
    }

    /// Where `/compact`'s progress line is, once: the notice after it takes its place.
    pub(crate) fn take_compact_line(&mut self) -> Option<usize> {
        self.compact_line.take()
    }

    /// The agent was asked to stop the turn.
    pub(crate) fn interrupting(&mut self) {
        self.activity = Activity::Interrupting;
    }

    /// Whether a Ctrl-C now quits (one came shortly before).
    pub(crate) fn quit_armed(&self, now: Instant) -> bool {
        self.quit_armed_until.is_some_and(|until| now < until)
    }

    /// Whether an Esc now is the second of Esc Esc (the first came shortly before); it
    /// counts once.
    pub(crate) fn take_rewind_armed(&mut self, now: Instant) -> bool {
        self.rewind_armed_until.take().is_some_and(|until| now < until)
    }

    /// An Esc that did nothing else: another one before `until` opens the rewind picker.
    pub(crate) fn arm_rewind(&mut self, until: Instant) {
        self.rewind_armed_until = Some(until);
    }

    /// A key other than Esc came between: the next Esc is a first one again.
    pub(crate) fn disarm_rewind(&mut self) {
        self.rewind_armed_until = None;
    }

    pub(crate) fn arm_quit(&mut self, until: Instant) {
        self.quit_armed_until = Some(until);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_compaction_outside_a_turn_keeps_its_line_and_ends_idle() {
        let now = Instant::now();
        let mut turn = Turn::default();
        turn.compaction_started();
        turn.compaction_progress_at(Some(4));
        assert_eq!(turn.activity(), &Activity::Compacting);
        turn.compaction_over(now);
        let line = turn.take_compact_line();
        assert_eq!((turn.activity(), line), (&Activity::Idle, Some(4)));
        assert_eq!(turn.take_compact_line(), None);

        turn.started(now);
        turn.compaction_started();
        turn.compaction_progress_at(Some(9));
        turn.compaction_over(now);
        let line = turn.take_compact_line();
        assert_eq!((turn.activity(), line), (&Activity::Waiting { since: now }, None));
    }

    #[test]
    fn a_turn_is_busy_from_its_request_and_hands_over_its_queue_in_order() {
        let now = Instant::now();
        let mut turn = Turn::default();
        turn.requested();
        assert_eq!((turn.busy(), turn.running()), (true, false));
        turn.started(now);
        turn.queue("one".to_string());
        turn.queue("two".to_string());
        assert_eq!(turn.ended(), Some("one".to_string()));
        assert_eq!((turn.busy(), turn.activity()), (false, &Activity::Idle));
        assert_eq!(turn.take_queued(), ["two"]);
    }

    #[test]
    fn only_a_step_of_several_calls_numbers_them() {
        let now = Instant::now();
        let mut turn = Turn::default();
        turn.replied(vec!["a".to_string()], now);
        assert_eq!(turn.call_in_step("a"), None);
        turn.replied(vec!["a".to_string(), "b".to_string()], now);
        assert_eq!(
            (turn.call_in_step("b"), turn.call_in_step("c")),
            (Some((2, 2)), None)
        );
    }
}
