//! What a recorded session's playback (`miniagent replay`) says and is told. A replay is
//! a handle like a live agent's: the front end sends [`PlaybackControl`]s in
//! `Op::Playback`, and gets the recording's events back as they come due, each wrapped
//! with the moment it happened (`Event::Replayed`), with the playback's state
//! (`Event::PlaybackStatus`) as it changes.

use serde::{Deserialize, Serialize};

/// A key the person pressed on a replay.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PlaybackControl {
    /// Play, or pause; at the end, start over.
    Toggle,
    /// Play the next event now and pause.
    Step,
    /// Play every event left, now.
    ToEnd,
    /// Back to the first event, playing.
    Restart,
    Faster,
    Slower,
}

/// Whether the replay moves.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PlayState {
    Playing,
    Paused,
    /// Every event was played.
    Ended,
}

/// Where a replay stands.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PlaybackStatus {
    pub state: PlayState,
    /// 1.0 is the recorded pace.
    pub speed: f64,
    /// Events played, and all of them.
    pub played: usize,
    pub events: usize,
    /// Where the replay stands and how long it is, in recorded time (long pauses cut),
    /// in milliseconds.
    pub position_ms: u64,
    pub length_ms: u64,
}

/// The recorded session a replay opens on: what its view starts from (sent again when
/// the replay starts over).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct RecordingInfo {
    pub session_id: String,
    pub model: String,
    pub provider: String,
    pub workspace: String,
    /// When its first event happened, in milliseconds since the Unix epoch.
    pub started_at_ms: u64,
    /// The step limit and the token budget its first events name.
    pub max_steps: u32,
    pub token_limit: u64,
    pub context_window: u64,
    /// What reading the log found wrong (lines skipped, a cut-off end).
    pub warnings: Vec<String>,
}
