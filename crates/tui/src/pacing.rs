//! When to draw. Changes mark the screen dirty and are coalesced into one frame per
//! interval: 16 ms (60 frames a second), or three times what the last frame took to
//! draw once drawing gets slow, so drawing never takes much more than a quarter of a
//! core however fast events arrive. A key press is drawn at once: the person is
//! waiting for it, and keys come far too slowly to need coalescing.

use std::time::{Duration, Instant};

/// The shortest time between two frames (60 per second at most).
pub(crate) const FRAME_INTERVAL: Duration = Duration::from_millis(16);

/// How many times a frame's own drawing time the next frame waits, at least.
const DRAW_SHARE: u32 = 3;

#[derive(Debug)]
pub(crate) struct FramePacer {
    dirty: bool,
    urgent: bool,
    last: Option<Instant>,
    interval: Duration,
}

impl FramePacer {
    /// Dirty: the first frame is due at once.
    pub(crate) fn new() -> Self {
        FramePacer {
            dirty: true,
            urgent: false,
            last: None,
            interval: FRAME_INTERVAL,
        }
    }

    /// Something changed (or not).
    pub(crate) fn changed(&mut self, changed: bool) {
        self.dirty |= changed;
    }

    /// A key was handled; if it changed the screen, the next frame is due now.
    pub(crate) fn key(&mut self, changed: bool) {
        self.dirty |= changed;
        self.urgent |= changed;
    }

    /// Whether to draw now.
    pub(crate) fn due(&self, now: Instant) -> bool {
        self.dirty
            && (self.urgent
                || self
                    .last
                    .is_none_or(|at| now.saturating_duration_since(at) >= self.interval))
    }

    /// A frame was drawn, starting at `started` and taking `took`.
    pub(crate) fn drawn(&mut self, started: Instant, took: Duration) {
        self.last = Some(started);
        self.dirty = false;
        self.urgent = false;
        self.interval = FRAME_INTERVAL.max(took * DRAW_SHARE);
    }

    /// How long until the next frame is due; `None` when nothing waits to be drawn.
    pub(crate) fn wait(&self, now: Instant) -> Option<Duration> {
        if !self.dirty {
            return None;
        }
        match self.last {
            Some(at) if !self.urgent => Some(self.interval.saturating_sub(now.saturating_duration_since(at))),
            _ => Some(Duration::ZERO),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: Duration = Duration::from_millis(1);

    #[test]
    fn changes_coalesce_into_one_frame_per_interval() {
        let t0 = Instant::now();
        let mut pacer = FramePacer::new();
        assert!(pacer.due(t0), "the first frame is due at once");
        pacer.drawn(t0, MS);
        assert_eq!(pacer.wait(t0), None, "nothing changed: no frame, no wake-up");
        pacer.changed(true);
        assert!(!pacer.due(t0 + 5 * MS));
        assert_eq!(pacer.wait(t0 + 5 * MS), Some(11 * MS));
        assert!(pacer.due(t0 + 16 * MS));
    }

    #[test]
    fn a_key_is_drawn_at_once() {
        let t0 = Instant::now();
        let mut pacer = FramePacer::new();
        pacer.drawn(t0, MS);
        pacer.key(false);
        assert!(!pacer.due(t0 + MS), "a key that changed nothing draws nothing");
        pacer.key(true);
        assert!(pacer.due(t0 + MS));
        assert_eq!(pacer.wait(t0 + MS), Some(Duration::ZERO));
    }

    #[test]
    fn slow_frames_stretch_the_interval() {
        let t0 = Instant::now();
        let mut pacer = FramePacer::new();
        pacer.drawn(t0, 10 * MS);
        pacer.changed(true);
        assert!(!pacer.due(t0 + 20 * MS), "a 10 ms frame waits 30 ms for the next");
        assert!(pacer.due(t0 + 30 * MS));
        pacer.drawn(t0 + 30 * MS, MS);
        pacer.changed(true);
        assert!(pacer.due(t0 + 46 * MS), "fast frames go back to 60 a second");
    }
}
