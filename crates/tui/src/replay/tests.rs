//! The replay's keys and status line, and a workbench driven by a recording's playback
//! the way the event loop drives it (ops out, events in), without timers.

use std::path::PathBuf;
use std::time::Instant;

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use pretty_assertions::assert_eq;

use super::*;
use crate::layers::history::HistoryInspector;
use crate::tests::support::Player;
use crate::theme::Theme;
use miniagent_api::{self, Recording};
use miniagent_core::tokens::TokenCounter;
use miniagent_protocol::Op;

fn key(code: KeyCode) -> KeyEvent {
    KeyEvent::new(code, KeyModifiers::NONE)
}

/// A session log: a header, then two turns (the history recorded as it grew).
const LOG: &str = r#"{"kind":"header","id":"20261122-040438-abcd","created":"2026-11-22T04:04:38Z","workspace":"/nowhere/on/this/machine","model":"claude-test","provider":"anthropic","version":"0.1.0","format":2,"fixed_tokens":100}
{"kind":"event","ts":1000,"event":{"type":"turn_started","text":"hello"}}
{"kind":"messages","ts":1000,"from":0,"messages":[{"role":"user","content":[{"type":"text","text":"hello"}]}]}
{"kind":"messages","ts":1500,"from":1,"messages":[{"role":"assistant","content":[{"type":"text","text":"hi there"}]}]}
{"kind":"event","ts":1500,"event":{"type":"assistant_message","thinking":"","text":"hi there","tool_calls":[],"stop_reason":"end_turn"}}
{"kind":"event","ts":1600,"event":{"type":"turn_complete","text":"hi there"}}
{"kind":"event","ts":2000,"event":{"type":"turn_started","text":"again"}}
{"kind":"event","ts":2300,"event":{"type":"turn_complete","text":""}}
"#;

/// A workbench playing `log` as `miniagent replay` opens it (the api's `Recording` opens
/// on the same recording), joined to its playback as the event loop joins them.
fn open(log: &str) -> Player {
    let dir = std::env::temp_dir().join(format!(
        "miniagent-tui-replay-{}-{:?}",
        std::process::id(),
        std::thread::current().id()
    ));
    std::fs::create_dir_all(&dir).unwrap();
    let path: PathBuf = dir.join("session.jsonl");
    std::fs::write(&path, log).unwrap();
    let recording = Recording::open(path.to_str().unwrap(), &miniagent_api::Env::empty()).unwrap();
    let loaded = miniagent_core::session::load(&path).unwrap();
    let _ = std::fs::remove_dir_all(&dir);
    let player = Player::counting(&loaded, Theme::monochrome(), TokenCounter::estimate_only());
    // The api's recording opens on what this playback plays.
    assert_eq!(&recording.opening().0, player.playback.recording());
    player
}

#[test]
fn the_status_line_says_where_the_replay_stands() {
    let status = PlaybackStatus {
        state: PlayState::Paused,
        speed: 2.0,
        played: 3,
        events: 4,
        position_ms: 1_600,
        length_ms: 1_800,
    };
    assert_eq!(status_head(&status), "‖ replay 2× · event 3/4 · 00:01/00:01");
    let long = PlaybackStatus {
        state: PlayState::Ended,
        speed: 0.25,
        played: 4,
        position_ms: 3_723_000,
        length_ms: 3_723_000,
        ..status
    };
    assert_eq!(status_head(&long), "■ replay 0.25× · event 4/4 · 1:02:03/1:02:03");
    assert_eq!(status_hints(&long)[0].action, "again");
}

#[test]
fn keys_send_the_playbacks_controls_and_q_quits() {
    let mut driven = open(LOG);
    let now = Instant::now();
    let sent = |driven: &mut Player, code: KeyCode| {
        driven.app.on_key(key(code));
        std::mem::take(&mut driven.app.sent)
    };
    let playback = |control| vec![Op::Playback { control }];
    assert_eq!(
        sent(&mut driven, KeyCode::Char(' ')),
        playback(PlaybackControl::Toggle)
    );
    assert_eq!(sent(&mut driven, KeyCode::Right), playback(PlaybackControl::Step));
    assert_eq!(
        sent(&mut driven, KeyCode::Char('.')),
        playback(PlaybackControl::Step)
    );
    assert_eq!(sent(&mut driven, KeyCode::End), playback(PlaybackControl::ToEnd));
    assert_eq!(
        sent(&mut driven, KeyCode::Home),
        playback(PlaybackControl::Restart)
    );
    assert_eq!(
        sent(&mut driven, KeyCode::Char('+')),
        playback(PlaybackControl::Faster)
    );
    assert_eq!(
        sent(&mut driven, KeyCode::Char('=')),
        playback(PlaybackControl::Faster)
    );
    assert_eq!(
        sent(&mut driven, KeyCode::Char('-')),
        playback(PlaybackControl::Slower)
    );
    // Playback controls typed into a command are letters of it.
    driven.on_key(key(KeyCode::Char('/')), now);
    assert_eq!(sent(&mut driven, KeyCode::Char(' ')), vec![]);
    assert_eq!(driven.app.input.text(), "/ ");
    // Ctrl-C clears what was typed, as in a live session; only then does it quit.
    driven.on_key(KeyEvent::new(KeyCode::Char('c'), KeyModifiers::CONTROL), now);
    assert!(driven.app.input.is_empty() && !driven.app.quit);
    // Letters that are no control start nothing: only `/` types a command.
    driven.on_key(key(KeyCode::Char('y')), now);
    assert!(driven.app.input.is_empty());
    assert!(!driven.app.quit);
    driven.on_key(key(KeyCode::Char('q')), now);
    assert!(driven.app.quit);
    let mut again = open(LOG);
    again.on_key(KeyEvent::new(KeyCode::Char('c'), KeyModifiers::CONTROL), now);
    assert!(again.app.quit);
}

#[test]
fn a_replayed_workbench_shows_the_recording_answers_the_inspector_and_refuses_the_rest() {
    let mut driven = open(LOG);
    assert_eq!(driven.app.session.view().model, "claude-test");
    assert!(driven.app.replay.is_some());
    let now = Instant::now();
    // Typing a command: the replay's keys are letters in it until it is sent.
    for c in "/history".chars() {
        driven.on_key(key(KeyCode::Char(c)), now);
    }
    driven.on_key(key(KeyCode::Enter), now);
    assert!(matches!(driven.app.top::<HistoryInspector>(), Some(inspector) if !inspector.waiting));
    assert_eq!(driven.app.session.history().map(|h| h.entries.len()), Some(0));
    driven.on_key(key(KeyCode::Esc), now);
    assert!(driven.app.layers.is_empty());

    driven.on_key(key(KeyCode::End), now);
    assert_eq!(driven.app.figures.stats().turns, 2);
    assert!(!driven.app.turn.running());
    assert!(matches!(&driven.app.replay, Some(status) if status.state == PlayState::Ended));
    // The inspector now sees the history the recording ended with.
    driven.on_key(key(KeyCode::F(6)), now);
    assert_eq!(driven.app.session.history().map(|h| h.entries.len()), Some(2));
    driven.on_key(key(KeyCode::Esc), now);

    driven.app.layout.focus_on(crate::app::Pane::Conversation);
    driven.app.submit("what next?".into());
    driven.pump(now);
    assert_eq!(
        driven.app.turn.last_notice().map(|(_, text)| text.as_str()),
        Some(miniagent_api::NOT_SENT)
    );
    assert_eq!(driven.app.input.text(), "what next?", "what was typed stays");
    driven.app.input.clear();
    // Home starts the view over with the replay.
    driven.app.layout.focus_on(crate::app::Pane::Input);
    driven.on_key(key(KeyCode::Home), now);
    assert_eq!(driven.app.figures.stats().turns, 1);
    assert_eq!(
        driven.app.session.view().session_id.as_deref(),
        Some("20261122-040438-abcd")
    );
}
