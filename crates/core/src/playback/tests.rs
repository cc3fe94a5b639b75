//! The playback's clock and cursor, and how it answers a front end's ops.

use std::time::{Duration, Instant};

use pretty_assertions::assert_eq;

use super::*;
use crate::agent::context::{Change, Summary};
use crate::agent::history::Message;
use crate::session::{FORMAT, Header};
use miniagent_protocol::{HistoryEntryKind, StopReason};

/// The status of the four-event turn of [`one_turn`] (1.8 s long).
fn status(state: PlayState, speed: f64, played: usize, position_ms: u64) -> PlaybackStatus {
    PlaybackStatus {
        state,
        speed,
        played,
        events: 4,
        position_ms,
        length_ms: 1_800,
    }
}

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
    let mut replay = Clock::new(&log(&one_turn()));
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
        replay.status(ms(10_000)),
        status(PlayState::Paused, 2.0, 3, 1_600)
    );
    let last = replay.step(ms(10_000)).map(|p| p.event);
    assert_eq!(last, Some(Event::TurnComplete { text: "Hello".into() }));
    assert_eq!(replay.state(), PlayState::Ended);
    assert_eq!(replay.step(ms(10_000)), None);
}

#[test]
fn playing_stops_after_the_last_event_and_jumping_plays_the_rest_at_once() {
    let mut replay = Clock::new(&log(&one_turn()));
    let t0 = Instant::now();
    replay.play(t0);
    let all = replay.advance(t0 + Duration::from_secs(60));
    assert_eq!(all.len(), 4);
    assert_eq!(replay.state(), PlayState::Ended);
    assert_eq!(replay.next_due(t0 + Duration::from_secs(61)), None);

    let mut replay = Clock::new(&log(&one_turn()));
    replay.play(t0);
    replay.advance(t0);
    let rest = replay.jump_to_end();
    assert_eq!(rest.len(), 3);
    assert_eq!(replay.status(t0), status(PlayState::Ended, 1.0, 4, 1_800));
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
                outcome: miniagent_protocol::ToolOutcome::Ok,
                duration_ms: 200,
                output_preview: "1".into(),
                output: "1\n…\n100\n".into(),
                effects: Vec::new(),
            },
        ),
    ];
    let mut replay = Clock::new(&log(&records));
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
                kind: Default::default(),
                locations: Vec::new(),
            },
        ),
    ];
    let mut replay = Clock::new(&log(&records));
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
fn an_empty_log_is_over_before_it_starts() {
    let mut replay = Clock::new(&log(&[]));
    let now = Instant::now();
    replay.play(now);
    assert_eq!((replay.state(), replay.advance(now)), (PlayState::Ended, vec![]));
    let over = PlaybackStatus {
        state: PlayState::Ended,
        speed: 1.0,
        played: 0,
        events: 0,
        position_ms: 0,
        length_ms: 0,
    };
    assert_eq!(replay.status(now), over);
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
    let mut playback = Playback::new(&log(&summarized()), TokenCounter::estimate_only());
    assert_eq!(playback.snapshot().entries, vec![]);
    let now = Instant::now();
    let step = || Op::Playback {
        control: PlaybackControl::Step,
    };
    playback.on_op(step(), now);
    playback.on_op(step(), now);
    use HistoryEntryKind::{Assistant, Summary, User};
    // After the reply was recorded: both messages, no summary.
    assert_eq!(kinds(&playback.snapshot()), vec![User, Assistant]);
    for _ in 0..4 {
        playback.on_op(step(), now);
    }
    // After the compaction: the summary stands in for the first two.
    let [Event::HistorySnapshot { snapshot }] = &playback.on_op(Op::InspectHistory, now)[..] else {
        panic!("the inspector is answered with a snapshot");
    };
    assert_eq!(kinds(snapshot), vec![Summary, User]);
    assert_eq!(snapshot.compactions.len(), 1);
    assert!(snapshot.prompt_tokens > 100, "{snapshot:?}");
}

#[test]
fn a_recorded_rewind_plays_like_any_event_and_the_inspector_opens_the_branch() {
    let said = |ts, from, messages| Record::from_change(ts, Change::Messages { from, messages });
    let records = vec![
        event(1_000, Event::TurnStarted { text: "one".into() }),
        said(
            1_000,
            0,
            vec![Message::user("one"), Message::assistant_text("first")],
        ),
        event(2_000, Event::TurnStarted { text: "two".into() }),
        said(
            2_000,
            2,
            vec![Message::user("two"), Message::assistant_text("second")],
        ),
        Record::from_change(
            3_000,
            Change::Rewound {
                to: 2,
                turn: 2,
                results: 0,
                trimmed: vec![],
            },
        ),
        event(
            3_000,
            Event::Rewound {
                turn: 2,
                scope: miniagent_protocol::RewindScope::Conversation,
                files: vec![],
                messages: 2,
                text: "two".into(),
            },
        ),
    ];
    let mut playback = Playback::new(&log(&records), TokenCounter::estimate_only());
    let now = Instant::now();
    for _ in 0..2 {
        playback.on_op(control(PlaybackControl::Step), now);
    }
    let played = replayed(&playback.on_op(control(PlaybackControl::Step), now));
    assert_eq!(
        played,
        vec![Event::Rewound {
            turn: 2,
            scope: miniagent_protocol::RewindScope::Conversation,
            files: vec![],
            messages: 2,
            text: "two".into(),
        }]
    );
    let snapshot = playback.snapshot();
    use HistoryEntryKind::{Assistant, User};
    assert_eq!(kinds(&snapshot), vec![User, Assistant]);
    let branch: Vec<(u32, u64, Vec<String>)> = snapshot
        .set_aside
        .iter()
        .map(|b| {
            (
                b.turn,
                b.from,
                b.entries.iter().map(|e| e.title.clone()).collect(),
            )
        })
        .collect();
    assert_eq!(
        branch,
        vec![(
            2,
            3,
            vec!["message 3 · two".to_string(), "message 4 · second".to_string()]
        )]
    );
}

fn control(control: PlaybackControl) -> Op {
    Op::Playback { control }
}

/// The recorded events among `events`, without their moments.
fn replayed(events: &[Event]) -> Vec<Event> {
    events
        .iter()
        .filter_map(|event| match event {
            Event::Replayed { event, .. } => Some((**event).clone()),
            _ => None,
        })
        .collect()
}

#[test]
fn controls_play_the_recording_as_replayed_events_followed_by_the_status() {
    let mut playback = Playback::new(&log(&one_turn()), TokenCounter::estimate_only());
    let t0 = Instant::now();
    let opened = playback.open(t0);
    let [
        Event::PlaybackOpened {
            recording,
            status: at_open,
        },
    ] = &opened[..]
    else {
        panic!("the replay opens first: {opened:?}");
    };
    assert_eq!(recording.session_id, "20261122-040438-abcd");
    assert_eq!(
        (recording.model.as_str(), recording.started_at_ms),
        ("claude-test", 1_000)
    );
    assert_eq!(*at_open, status(PlayState::Paused, 1.0, 0, 0));
    assert_eq!(playback.next_wake(t0), None);

    // A step plays one event with the moment it happened, then says where it stands.
    let stepped = playback.on_op(control(PlaybackControl::Step), t0);
    assert_eq!(
        stepped,
        vec![
            Event::Replayed {
                at_ms: 0,
                event: Box::new(Event::TurnStarted { text: "hi".into() })
            },
            Event::PlaybackStatus {
                status: status(PlayState::Paused, 1.0, 1, 0)
            },
        ]
    );
    // Playing: ticks bring what is due, and the clock at most a tick apart.
    let playing = playback.on_op(control(PlaybackControl::Toggle), t0);
    assert_eq!(
        playing,
        vec![Event::PlaybackStatus {
            status: status(PlayState::Playing, 1.0, 1, 0)
        }]
    );
    assert_eq!(playback.next_wake(t0), Some(TICK));
    let due = playback.tick(t0 + Duration::from_millis(100));
    assert_eq!(replayed(&due), vec![text("Hel")]);
    assert!(matches!(due.last(), Some(Event::PlaybackStatus { status }) if status.position_ms == 100));
    // Nothing moved: nothing is sent.
    playback.on_op(control(PlaybackControl::Toggle), t0 + Duration::from_millis(100));
    assert_eq!(playback.tick(t0 + Duration::from_secs(9)), vec![]);

    let rest = playback.on_op(control(PlaybackControl::ToEnd), t0);
    assert_eq!(replayed(&rest).len(), 2);
    assert!(
        matches!(rest.last(), Some(Event::PlaybackStatus { status }) if status.state == PlayState::Ended)
    );
    // At the end, play starts over: the view opens again and the first event plays.
    let again = playback.on_op(control(PlaybackControl::Toggle), t0);
    assert!(matches!(&again[0], Event::PlaybackOpened { status, .. } if status.state == PlayState::Playing));
    assert_eq!(replayed(&again), vec![Event::TurnStarted { text: "hi".into() }]);
    let faster = playback.on_op(control(PlaybackControl::Faster), t0);
    assert!(matches!(&faster[..], [Event::PlaybackStatus { status }] if status.speed == 2.0));
    let restarted = playback.on_op(control(PlaybackControl::Restart), t0);
    assert!(matches!(&restarted[0], Event::PlaybackOpened { .. }));
    for _ in 0..10 {
        playback.on_op(control(PlaybackControl::Faster), t0);
    }
    assert_eq!(playback.clock().speed(), 16.0);
    for _ in 0..10 {
        playback.on_op(control(PlaybackControl::Slower), t0);
    }
    assert_eq!(playback.clock().speed(), 0.25);
}

#[test]
fn a_replay_answers_the_inspector_and_the_notes_and_refuses_the_rest() {
    let mut playback = Playback::new(&log(&summarized()), TokenCounter::estimate_only());
    let now = Instant::now();
    assert!(matches!(
        &playback.on_op(Op::InspectHistory, now)[..],
        [Event::HistorySnapshot { snapshot }] if snapshot.entries.is_empty()
    ));
    // The recorded workspace is not on this machine: the notes say so, as the agent would.
    assert!(matches!(
        &playback.on_op(Op::ReadNotes, now)[..],
        [Event::Notes { .. }]
    ));
    let refused = |op: Op| match &Playback::new(&log(&[]), TokenCounter::estimate_only()).on_op(op, now)[..] {
        [Event::Notice { message }] => message.clone(),
        other => panic!("refused with one notice, got {other:?}"),
    };
    assert_eq!(refused(Op::UserInput { text: "hi".into() }), NOT_SENT);
    for op in [
        Op::ClearHistory,
        Op::CompactNow,
        Op::SetApprovalMode {
            mode: miniagent_protocol::ApprovalMode::FullAuto,
        },
        Op::Resume {
            path: "/elsewhere.jsonl".into(),
        },
        Op::RecordedCall { id: "c1".into() },
    ] {
        assert_eq!(refused(op), NOT_CHANGED);
    }
    assert_eq!(playback.on_op(Op::Interrupt, now), vec![]);
    assert_eq!(playback.on_op(Op::Shutdown, now), vec![Event::ShutdownComplete]);
}

/// Behind a handle, the replay opens, plays on its own clock to the end, answers while
/// it plays, and ends on Shutdown.
#[tokio::test]
async fn a_spawned_replay_is_a_handle_like_an_agents() {
    let quick: Vec<Record> = one_turn()
        .into_iter()
        .enumerate()
        .map(|(n, record)| match record {
            Record::Event { event, .. } => Record::Event {
                ts: 1_000 + n as u64,
                event,
            },
            other => other,
        })
        .collect();
    let mut handle = spawn(Playback::new(&log(&quick), TokenCounter::estimate_only()));
    let mut seen = Vec::new();
    while let Some(event) = handle.events.recv().await {
        let ended = matches!(&event, Event::PlaybackStatus { status } if status.state == PlayState::Ended);
        seen.push(event);
        if ended {
            break;
        }
    }
    assert!(
        matches!(seen.first(), Some(Event::PlaybackOpened { .. })),
        "{seen:?}"
    );
    assert_eq!(
        replayed(&seen),
        quick
            .iter()
            .filter_map(|record| match record {
                Record::Event { event, .. } => Some(event.clone()),
                _ => None,
            })
            .collect::<Vec<_>>()
    );
    handle.ops.send(Op::UserInput { text: "go on".into() }).unwrap();
    assert_eq!(
        handle.events.recv().await,
        Some(Event::Notice {
            message: NOT_SENT.to_string()
        })
    );
    handle.ops.send(Op::Shutdown).unwrap();
    assert_eq!(handle.events.recv().await, Some(Event::ShutdownComplete));
    assert_eq!(handle.events.recv().await, None);
}
