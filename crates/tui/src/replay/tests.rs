//! The replay's clock, cursor and keys, and the player that joins it to an app.

use super::*;
use crate::agent::context::{Change, Summary};
use crate::agent::history::Message;
use crate::protocol::{HistoryEntryKind, StopReason};
use crate::session::{FORMAT, Header};
use crate::tui::app::Pane;
use crate::tui::overlay::Overlay;
use crate::tui::theme::Theme;
use pretty_assertions::assert_eq;

fn header() -> Header {
    Header {
        id: "20261122-040438-abcd".into(),
        created: "2026-11-22T04:04:38Z".into(),
        workspace: "/nowhere/on/this/machine".into(),
        model: "claude-test".into(),
        provider: "anthropic".into(),
        version: "0.1.0".into(),
        format: FORMAT,
        fixed_tokens: 100,
    }
}

/// A log of these records, read back as a file would be.
fn log(records: &[Record]) -> Loaded {
    let mut text = serde_json::to_string(&Record::Header(header())).unwrap();
    for record in records {
        text.push('\n');
        text.push_str(&serde_json::to_string(record).unwrap());
    }
    text.push('\n');
    crate::session::load::parse(text.as_bytes(), "test.jsonl").unwrap()
}

fn event(ts: u64, event: Event) -> Record {
    Record::Event { ts, event }
}

fn text(delta: &str) -> Event {
    Event::TextDelta { delta: delta.into() }
}

fn key(code: KeyCode) -> KeyEvent {
    KeyEvent::new(code, KeyModifiers::NONE)
}

fn events(played: &[Played]) -> Vec<(u64, Event)> {
    played
        .iter()
        .map(|p| (u64::try_from(p.at.as_millis()).unwrap(), p.event.clone()))
        .collect()
}

/// A turn: prompt, two deltas 100 ms apart, then a long silence, then the answer.
fn one_turn() -> Vec<Record> {
    vec![
        event(1_000, Event::TurnStarted { text: "hi".into() }),
        event(1_100, text("Hel")),
        event(61_100, text("lo")),
        event(61_300, Event::TurnComplete { text: "Hello".into() }),
    ]
}

#[test]
fn events_play_at_their_recorded_times_with_long_pauses_cut() {
    let mut replay = Replay::new(&log(&one_turn()));
    assert_eq!((replay.len(), replay.length()), (4, Duration::from_millis(1_800)));
    let t0 = Instant::now();
    let ms = |n: u64| t0 + Duration::from_millis(n);
    replay.play(t0);
    assert_eq!(
        events(&replay.advance(t0)),
        vec![(0, Event::TurnStarted { text: "hi".into() })]
    );
    assert_eq!(replay.advance(ms(99)), vec![]);
    assert_eq!(replay.next_due(ms(99)), Some(Duration::from_millis(1)));
    assert_eq!(events(&replay.advance(ms(100))), vec![(100, text("Hel"))]);
    // The minute of silence plays as a second and a half.
    assert_eq!(replay.next_due(ms(100)), Some(Duration::from_millis(1_500)));
    replay.change_speed(true, ms(100));
    assert_eq!(replay.next_due(ms(100)), Some(Duration::from_millis(750)));
    assert_eq!(events(&replay.advance(ms(850))), vec![(1_600, text("lo"))]);
    replay.pause(ms(850));
    assert_eq!(replay.advance(ms(10_000)), vec![]);
    assert_eq!(replay.next_due(ms(10_000)), None);
    assert_eq!(
        replay.status(ms(10_000)).head(),
        "‖ replay 2× · event 3/4 · 00:01/00:01"
    );
    let last = replay.step(ms(10_000)).map(|p| p.event);
    assert_eq!(last, Some(Event::TurnComplete { text: "Hello".into() }));
    assert_eq!(replay.state(), PlayState::Ended);
    assert_eq!(replay.step(ms(10_000)), None);
}

#[test]
fn playing_stops_after_the_last_event_and_jumping_plays_the_rest_at_once() {
    let mut replay = Replay::new(&log(&one_turn()));
    let t0 = Instant::now();
    replay.play(t0);
    let all = replay.advance(t0 + Duration::from_secs(60));
    assert_eq!(all.len(), 4);
    assert_eq!(replay.state(), PlayState::Ended);
    assert_eq!(replay.next_due(t0 + Duration::from_secs(61)), None);

    let mut replay = Replay::new(&log(&one_turn()));
    replay.play(t0);
    replay.advance(t0);
    let rest = replay.jump_to_end();
    assert_eq!(rest.len(), 3);
    assert_eq!(replay.status(t0).head(), "■ replay 1× · event 4/4 · 00:01/00:01");
}

#[test]
fn a_calls_recorded_output_plays_just_before_it_ends() {
    let records = vec![
        event(1_000, Event::TurnStarted { text: "go".into() }),
        event(
            1_100,
            Event::ToolCallStarted {
                id: "c1".into(),
                name: "bash".into(),
            },
        ),
        Record::Output {
            ts: 1_300,
            id: "c1".into(),
            head: "1\n2\n".into(),
            tail: "99\n100\n".into(),
            dropped: 280,
        },
        event(
            1_300,
            Event::ToolCallFinished {
                id: "c1".into(),
                name: "bash".into(),
                ok: true,
                outcome: crate::protocol::ToolOutcome::Ok,
                duration_ms: 200,
                output_preview: "1".into(),
                output: "1\n…\n100\n".into(),
                effects: Vec::new(),
            },
        ),
    ];
    let mut replay = Replay::new(&log(&records));
    let played = replay.jump_to_end();
    assert_eq!(
        played[2].event,
        Event::ToolOutputDelta {
            id: "c1".into(),
            delta: "1\n2\n\n[... 280 bytes of output cut ...]\n99\n100\n".into()
        }
    );
    assert_eq!(played[2].at, Duration::from_millis(300));
    assert!(matches!(&played[3].event, Event::ToolCallFinished { .. }));
}

#[test]
fn what_a_killed_session_left_open_is_closed_at_the_end() {
    let records = vec![
        event(1_000, Event::TurnStarted { text: "go".into() }),
        event(
            1_200,
            Event::ToolCallRequested {
                id: "c1".into(),
                name: "bash".into(),
                arguments: serde_json::json!({"command": "sleep 100"}),
                summary: String::new(),
            },
        ),
    ];
    let mut replay = Replay::new(&log(&records));
    assert_eq!(replay.len(), 4);
    let end = replay.jump_to_end();
    assert!(
        matches!(&end[2].event, Event::ToolCallFinished { id, .. } if id == "c1"),
        "{end:?}"
    );
    assert!(matches!(&end[3].event, Event::TurnAborted { .. }), "{end:?}");
    assert_eq!(end[3].at, Duration::from_millis(200));
}

#[test]
fn keys_pause_step_restart_change_speed_and_quit() {
    let mut replay = Replay::new(&log(&one_turn()));
    let now = Instant::now();
    assert_eq!(replay.on_key(key(KeyCode::Char(' ')), now), ReplayAction::Changed);
    assert_eq!(replay.state(), PlayState::Playing);
    assert_eq!(replay.on_key(key(KeyCode::Char(' ')), now), ReplayAction::Changed);
    assert_eq!(replay.state(), PlayState::Paused);
    let ReplayAction::Played(first) = replay.on_key(key(KeyCode::Right), now) else {
        panic!("a step plays an event");
    };
    assert_eq!(
        events(&first),
        vec![(0, Event::TurnStarted { text: "hi".into() })]
    );
    assert!(matches!(
        replay.on_key(key(KeyCode::Char('.')), now),
        ReplayAction::Played(_)
    ));
    for _ in 0..10 {
        replay.on_key(key(KeyCode::Char('+')), now);
    }
    assert_eq!(replay.speed(), 16.0);
    for _ in 0..10 {
        replay.on_key(key(KeyCode::Char('-')), now);
    }
    assert_eq!(replay.speed(), 0.25);
    assert_eq!(
        replay.status(now).head(),
        "‖ replay 0.25× · event 2/4 · 00:00/00:01"
    );
    assert!(matches!(replay.on_key(key(KeyCode::End), now), ReplayAction::Played(rest) if rest.len() == 2));
    // At the end, Space plays again from the start.
    assert_eq!(
        replay.on_key(key(KeyCode::Char(' ')), now),
        ReplayAction::Restarted
    );
    assert_eq!((replay.played(), replay.state()), (0, PlayState::Playing));
    assert_eq!(replay.on_key(key(KeyCode::Home), now), ReplayAction::Restarted);
    assert_eq!(replay.on_key(key(KeyCode::Char('x')), now), ReplayAction::Ignored);
    assert_eq!(replay.on_key(key(KeyCode::Char('q')), now), ReplayAction::Quit);
    let ctrl_c = KeyEvent::new(KeyCode::Char('c'), KeyModifiers::CONTROL);
    assert_eq!(replay.on_key(ctrl_c, now), ReplayAction::Quit);
}

#[test]
fn an_empty_log_is_over_before_it_starts() {
    let mut replay = Replay::new(&log(&[]));
    let now = Instant::now();
    replay.play(now);
    assert_eq!((replay.state(), replay.advance(now)), (PlayState::Ended, vec![]));
    assert_eq!(replay.status(now).head(), "■ replay 1× · event 0/0 · 00:00/00:00");
}

/// A session whose history is summarized between its two turns.
fn summarized() -> Vec<Record> {
    let summary = Summary {
        start: 0,
        end: 2,
        text: "SUMMARY: said hello".into(),
        tokens_before: 50,
        tokens: 10,
        fallback: false,
        nested: Vec::new(),
    };
    vec![
        event(1_000, Event::TurnStarted { text: "hello".into() }),
        Record::from_change(
            1_000,
            Change::Messages {
                from: 0,
                messages: vec![Message::user("hello")],
            },
        ),
        Record::from_change(
            1_500,
            Change::Messages {
                from: 1,
                messages: vec![Message::assistant_text("hi there")],
            },
        ),
        event(
            1_500,
            Event::AssistantMessage {
                thinking: String::new(),
                text: "hi there".into(),
                tool_calls: Vec::new(),
                stop_reason: StopReason::EndTurn,
            },
        ),
        event(
            1_600,
            Event::TurnComplete {
                text: "hi there".into(),
            },
        ),
        event(2_000, Event::TurnStarted { text: "again".into() }),
        Record::from_change(
            2_000,
            Change::Messages {
                from: 2,
                messages: vec![Message::user("again")],
            },
        ),
        event(
            2_100,
            Event::CompactionStarted {
                reason: "budget".into(),
            },
        ),
        Record::from_change(2_200, Change::Summary(summary)),
        event(
            2_200,
            Event::ContextCompacted {
                tokens_before: 900,
                tokens_after: 300,
                summary: "SUMMARY: said hello".into(),
                start: 0,
                end: 2,
                fallback: false,
            },
        ),
        event(2_300, Event::TurnComplete { text: String::new() }),
    ]
}

fn kinds(snapshot: &HistorySnapshot) -> Vec<HistoryEntryKind> {
    snapshot.entries.iter().map(|e| e.kind).collect()
}

#[test]
fn the_inspector_sees_the_history_at_the_cursor_including_summaries() {
    let mut replay = Replay::new(&log(&summarized()));
    let counter = TokenCounter::estimate_only();
    assert_eq!(replay.snapshot(counter, 100).entries, vec![]);
    let now = Instant::now();
    replay.step(now);
    replay.step(now);
    use HistoryEntryKind::{Assistant, Summary, User};
    // After the reply was recorded: both messages, no summary.
    assert_eq!(kinds(&replay.snapshot(counter, 100)), vec![User, Assistant]);
    for _ in 0..4 {
        replay.step(now);
    }
    // After the compaction: the summary stands in for the first two.
    let snapshot = replay.snapshot(counter, 100);
    assert_eq!(kinds(&snapshot), vec![Summary, User]);
    assert_eq!(snapshot.compactions.len(), 1);
    assert!(snapshot.prompt_tokens > 100, "{snapshot:?}");
}

#[test]
fn the_player_feeds_the_app_answers_the_inspector_and_refuses_the_rest() {
    let mut player = Player::new(&log(&summarized()), Theme::monochrome());
    player.counter = TokenCounter::estimate_only();
    assert_eq!(player.app.session.model, "claude-test");
    assert!(player.app.replay.is_some());
    let now = Instant::now();
    // Typing a command: the replay's keys are letters in it until it is sent.
    for c in "/history".chars() {
        player.on_key(key(KeyCode::Char(c)), now);
    }
    player.on_key(key(KeyCode::Enter), now);
    assert!(matches!(player.app.overlays.last(), Some(Overlay::History(inspector)) if !inspector.waiting));
    assert_eq!(player.app.history.as_ref().map(|h| h.entries.len()), Some(0));
    player.on_key(key(KeyCode::Esc), now);
    assert!(player.app.overlays.is_empty());

    player.jump_to_end();
    assert_eq!(player.app.stats.turns, 2);
    assert_eq!(player.app.tokens.compactions, 1);
    assert!(!player.app.turn_running);
    player.app.open_history();
    player.tick(now);
    assert!(player.app.outbox.is_empty());
    assert_eq!(
        player.app.history.as_ref().map(kinds).unwrap_or_default().len(),
        2
    );

    player.app.focus = Pane::Conversation;
    player.app.submit("what next?".into());
    player.tick(now);
    assert_eq!(
        player.app.last_notice.as_ref().map(|(_, text)| text.as_str()),
        Some("this is a replay: nothing is sent to a model")
    );
    // Home starts the view over with the replay.
    player.app.overlays.clear();
    player.on_key(key(KeyCode::Home), now);
    assert_eq!((player.app.stats.turns, player.replay.played()), (1, 1));
    assert_eq!(
        player.app.session.session_id.as_deref(),
        Some("20261122-040438-abcd")
    );
    let ctrl_c = KeyEvent::new(KeyCode::Char('c'), KeyModifiers::CONTROL);
    player.on_key(ctrl_c, now);
    assert!(player.app.quit);
}
