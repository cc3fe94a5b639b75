//! `miniagent replay FILE`: a recorded session played back in the workbench, with no
//! agent, no model and no network.
//!
//! The playback itself is the core's (`miniagent_api::Recording::play`): a handle like a live
//! agent's, so the workbench runs its one event loop for both (`run::replay`). What is
//! the workbench's is here: the replay's keys (one table that dispatch, the help and the
//! bottom bar read) and how its status reads.

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

use super::keys::KeyHint;
use miniagent_protocol::{PlayState, PlaybackControl, PlaybackStatus};

/// One replay key.
#[derive(Clone, Copy, Debug)]
pub struct ReplayBinding {
    /// How the keys are written, e.g. `→ or .`.
    pub keys: &'static str,
    pub action: &'static str,
    /// Whether it is `key`.
    pub takes: fn(KeyEvent) -> bool,
    /// What `key` does: a control for the playback, or `None` to quit.
    pub control: fn(KeyEvent) -> Option<PlaybackControl>,
}

fn plain(key: KeyEvent, codes: &[KeyCode]) -> bool {
    !key.modifiers
        .intersects(KeyModifiers::CONTROL | KeyModifiers::ALT)
        && codes.contains(&key.code)
}

/// The replay's keys, tried before the panes while no overlay is open and nothing is
/// being typed (and before a recorded approval, which a replay never answers).
pub const REPLAY: &[ReplayBinding] = &[
    ReplayBinding {
        keys: "Space",
        action: "play / pause",
        takes: |key| plain(key, &[KeyCode::Char(' ')]),
        control: |_| Some(PlaybackControl::Toggle),
    },
    ReplayBinding {
        keys: "→ or .",
        action: "step one event (pauses)",
        takes: |key| plain(key, &[KeyCode::Right, KeyCode::Char('.')]),
        control: |_| Some(PlaybackControl::Step),
    },
    ReplayBinding {
        keys: "End",
        action: "jump to the end",
        takes: |key| plain(key, &[KeyCode::End]),
        control: |_| Some(PlaybackControl::ToEnd),
    },
    ReplayBinding {
        keys: "Home",
        action: "start over",
        takes: |key| plain(key, &[KeyCode::Home]),
        control: |_| Some(PlaybackControl::Restart),
    },
    ReplayBinding {
        keys: "+/-",
        action: "faster / slower (¼× to 16×)",
        takes: |key| plain(key, &FASTER) || plain(key, &SLOWER),
        control: |key| {
            Some(if FASTER.contains(&key.code) {
                PlaybackControl::Faster
            } else {
                PlaybackControl::Slower
            })
        },
    },
    ReplayBinding {
        keys: "q/Ctrl-C",
        action: "quit",
        takes: |key| {
            plain(key, &[KeyCode::Char('q')])
                || (key.code == KeyCode::Char('c') && key.modifiers.contains(KeyModifiers::CONTROL))
        },
        control: |_| None,
    },
];

const FASTER: [KeyCode; 2] = [KeyCode::Char('+'), KeyCode::Char('=')];
const SLOWER: [KeyCode; 2] = [KeyCode::Char('-'), KeyCode::Char('_')];

/// The replay's keys, for the help overlay.
pub fn help_hints() -> Vec<KeyHint> {
    REPLAY
        .iter()
        .map(|binding| KeyHint::new(binding.keys, binding.action))
        .collect()
}

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

/// `▶ replay 2× · event 45/300 · 00:12/01:40`.
pub fn status_head(status: &PlaybackStatus) -> String {
    let mark = match status.state {
        PlayState::Playing => "▶",
        PlayState::Paused => "‖",
        PlayState::Ended => "■",
    };
    format!(
        "{mark} replay {} · event {}/{} · {}/{}",
        speed_label(status.speed),
        status.played,
        status.events,
        clock(status.position_ms),
        clock(status.length_ms)
    )
}

/// The keys that matter now, in the order they are worth the room.
pub fn status_hints(status: &PlaybackStatus) -> &'static [KeyHint] {
    match status.state {
        PlayState::Playing => &PLAYING_HINTS,
        PlayState::Paused => &PAUSED_HINTS,
        PlayState::Ended => &ENDED_HINTS,
    }
}

/// `0.25×`, `1×`, `16×`.
pub fn speed_label(speed: f64) -> String {
    format!("{speed}×")
}

/// `01:40`, or `1:02:03` from an hour on.
fn clock(ms: u64) -> String {
    let secs = ms / 1000;
    if secs >= 3600 {
        format!("{}:{:02}:{:02}", secs / 3600, secs / 60 % 60, secs % 60)
    } else {
        format!("{:02}:{:02}", secs / 60, secs % 60)
    }
}

#[cfg(test)]
mod tests;
