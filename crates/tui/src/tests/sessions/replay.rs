//! Replay in the workbench: a paused replay, its end with the inspector, a killed
//! session played back, and old results read back from the log when opened.

use super::*;
use pretty_assertions::assert_eq;

fn player(records: &[Record]) -> Player {
    let header = header("20261122-040438-a1b2", WORKSPACE, "2026-11-22T04:04:38Z");
    let loaded = session::load::parse(jsonl(&header, records).as_bytes(), "demo.jsonl").unwrap();
    Player::counting(
        &loaded,
        Theme::dark(),
        miniagent_core::tokens::TokenCounter::estimate_only(),
    )
}

#[test]
fn a_paused_replay_shows_its_state_where_the_prompt_would_be() {
    let mut player = player(&finished_session());
    let now = Instant::now();
    // Step to the approved `bash` call; the replay's clock stands still while paused.
    let mut approvals_seen = 0;
    while !player.app.timeline.any_running() || player.app.timeline.calls().len() < 2 {
        if player.app.approvals_waiting() > 0 {
            // Keys that would answer it live answer nothing here, and none is offered.
            approvals_seen += 1;
            let shown = screen(&player.app, 80, 24);
            assert!(
                shown.contains("recorded: how it was answered follows in the replay")
                    && !shown.contains("y approve"),
                "{shown}"
            );
            player.on_key(key(KeyCode::Char('y')), now);
            player.on_key(key(KeyCode::Enter), now);
        }
        player.on_key(key(KeyCode::Right), now);
    }
    assert!(approvals_seen > 0, "the recording has an approval");
    // Half a second at 2× later, pause while it runs.
    player.on_key(key(KeyCode::Char('+')), now);
    player.on_key(key(KeyCode::Char(' ')), now);
    let later = now + Duration::from_millis(500);
    player.tick(later);
    player.on_key(key(KeyCode::Char(' ')), later);
    assert_eq!(player.app.status_text(), "running bash for 1.0 s");
    assert_eq!(player.next_wake(now + Duration::from_secs(5)), None);
    assert!(!player.tick(now + Duration::from_secs(5)));
    assert_screen!("replay_paused_80x24", screen(&player.app, 80, 24));
    assert_screen!("replay_paused_160x48", screen(&player.app, 160, 48));
    // The recorded approval showed, and nothing could answer it: only playback
    // controls were sent.
    assert!(
        player.sent.iter().all(|op| matches!(op, Op::Playback { .. })),
        "{:?}",
        player.sent
    );
}

#[test]
fn a_replay_at_its_end_with_the_inspector() {
    let mut player = player(&finished_session());
    player.jump_to_end();
    assert!(!player.app.turn.running());
    assert_screen!("replay_end_120x40", screen(&player.app, 120, 40));
    player.on_key(key(KeyCode::F(6)), Instant::now());
    let entries = player.app.session.history().map(|h| h.entries.len());
    assert_eq!(entries, Some(6));
    assert_screen!("replay_history_80x24", screen(&player.app, 80, 24));
    assert_screen!("replay_history_160x48", screen(&player.app, 160, 48));
}

#[test]
fn a_replay_of_a_killed_session_ends_with_its_calls_closed() {
    let home = TempDir::new();
    let loaded = session::load(&killed_log(&home)).unwrap();
    let mut player = Player::new(&loaded, Theme::monochrome());
    player.jump_to_end();
    assert!(!player.app.turn.running() && player.app.approvals_waiting() == 0);
    let statuses: Vec<&str> = player
        .app
        .timeline
        .calls()
        .iter()
        .map(|c| c.status.label())
        .collect();
    assert_eq!(statuses.len(), 2);
    assert_ne!(
        statuses[0], statuses[1],
        "the killed call is not shown as it finished: {statuses:?}"
    );
    // The torn line's warning is the first thing the conversation says.
    assert!(matches!(
        player.app.conversation.entries().first(),
        Some(Entry::Notice { kind: NoticeKind::Warning, text }) if text.contains("cut short")
    ));
}

/// A recorded session of `calls` finished `bash` calls, as the workbench saw it live.
fn many_calls(calls: usize) -> Vec<Record> {
    let mut records = vec![ev(
        0,
        Event::SessionConfigured {
            model: "claude-test".into(),
            provider: "anthropic".into(),
            workspace: WORKSPACE.into(),
            tools: Vec::new(),
            session_id: Some("20261122-050000-beef".into()),
            sandbox: miniagent_protocol::SandboxState::Enforced,
            endpoint: String::new(),
            instruction_files: Vec::new(),
        },
    )];
    for n in 0..calls {
        let id = format!("c{n}");
        let ts = 10 * n as u64;
        records.push(ev(
            ts,
            Event::ToolCallRequested {
                id: id.clone(),
                name: "bash".into(),
                arguments: json!({"command": format!("seq 1 {n}")}),
                summary: String::new(),
                kind: Default::default(),
                locations: Vec::new(),
            },
        ));
        records.push(ev(
            ts + 1,
            Event::ToolCallStarted {
                id: id.clone(),
                name: "bash".into(),
            },
        ));
        let printed = format!("{n}{}", "x".repeat(40_000 - n.to_string().len()));
        records.push(ev(
            ts + 2,
            Event::ToolOutputDelta {
                id: id.clone(),
                delta: printed.clone(),
            },
        ));
        // As the log writes it: the output's start and end, before the call's end.
        let mut kept = HeadTailBuffer::new(FINISHED_OUTPUT_BYTES);
        kept.push(printed.as_bytes());
        let (head, tail, dropped) = kept.parts();
        records.push(Record::Output {
            ts: ts + 3,
            id: id.clone(),
            head,
            tail,
            dropped,
        });
        records.push(ev(
            ts + 3,
            Event::ToolCallFinished {
                id,
                name: "bash".into(),
                ok: true,
                outcome: ToolOutcome::Ok,
                duration_ms: 5,
                output_preview: format!("result {n}"),
                output: format!("result {n}"),
                effects: Vec::new(),
            },
        ));
    }
    records
}

#[test]
fn old_results_are_let_go_and_read_back_from_the_log_when_opened() {
    let home = TempDir::new();
    let header = header("20261122-050000-beef", WORKSPACE, "2026-11-22T05:00:00Z");
    let records = many_calls(25);
    record(&home, &header, &records, "");
    let workspace = TempDir::new();
    let mut app = support::bare_app(&workspace);
    app.places.sessions_dir = Some(home.join("sessions"));
    for record in records {
        if let Record::Event { event, .. } = record {
            app.on_agent_event(event);
        }
    }
    let calls = app.timeline.calls();
    // The newest 20 keep their results and the start and end of their output; older
    // ones keep neither.
    assert!(
        calls[..5]
            .iter()
            .all(|c| c.result.is_none() && c.in_log && c.streamed.total_bytes() == 0)
    );
    assert!(calls[5..].iter().all(|c| c.result.is_some() && !c.in_log));
    assert!(
        calls[5..]
            .iter()
            .all(|c| c.streamed.total_bytes() == 40_000 && c.streamed.limit() <= 16 * 1024)
    );

    // Opening the oldest call reads its result back.
    app.layout.focus_on(crate::app::Pane::Timeline);
    for _ in 0..25 {
        app.on_key(key(KeyCode::Up));
    }
    app.on_key(key(KeyCode::Enter));
    assert!(matches!(app.top::<ToolDetail>(), Some(detail) if detail.call_id == "c0"));
    // The workbench asks the agent, which reads the log; here, its answer.
    assert_eq!(app.sent, vec![Op::RecordedCall { id: "c0".into() }]);
    let waiting = screen(&app, 80, 24);
    assert!(
        waiting.contains("reading the result back from the session log…"),
        "{waiting}"
    );
    let log = home.join("sessions").join("20261122-050000-beef.jsonl");
    app.on_agent_event(miniagent_core::agent::answers::recorded_call_event(
        Some(&log),
        "c0".into(),
    ));
    let first = &app.timeline.calls()[0];
    assert_eq!(first.result.as_deref(), Some("result 0"));
    assert_eq!(first.streamed.total_bytes(), 40_000, "its output is back too");
    assert!(first.streamed.text().starts_with("0xxx"));
    let text = screen(&app, 80, 24);
    assert!(
        text.contains("40000 bytes in all; the start and the end are kept"),
        "{text}"
    );
    assert_screen!("tool_detail_cut_output_80x24", text);
    assert_screen!("tool_detail_cut_output_160x48", screen(&app, 160, 48));
    // Drawn at 80×24 again: what follows reads the size drawn last.
    screen(&app, 80, 24);
    app.on_key(key(KeyCode::End));
    let text = screen(&app, 80, 24);
    assert!(
        text.contains("Result sent to the model") && text.contains("result 0"),
        "{text}"
    );
}

/// A replay shows the plan as it stood at each point: none before the first
/// `update_plan`, each plan as it comes, none again when it starts over.
#[test]
fn a_replay_shows_the_plan_as_it_was_at_each_point() {
    use miniagent_protocol::{PlanEntry, PlanStatus};
    let step = |content: &str, status| PlanEntry {
        content: content.into(),
        status,
        priority: None,
        note: None,
    };
    let mut player = player(&[
        ev(
            0,
            Event::TurnStarted {
                text: "fix it".into(),
            },
        ),
        ev(
            1_000,
            Event::PlanUpdated {
                entries: vec![
                    step("read", PlanStatus::InProgress),
                    step("fix", PlanStatus::Pending),
                ],
            },
        ),
        ev(
            2_000,
            Event::PlanUpdated {
                entries: vec![
                    step("read", PlanStatus::Completed),
                    step("fix", PlanStatus::InProgress),
                ],
            },
        ),
        ev(3_000, Event::TurnComplete { text: "fixed".into() }),
    ]);
    let now = Instant::now();
    let mut seen = vec![player.app.plan.progress()];
    for _ in 0..4 {
        player.on_key(key(KeyCode::Right), now);
        if seen.last() != Some(&player.app.plan.progress()) {
            seen.push(player.app.plan.progress());
        }
    }
    assert_eq!(
        seen,
        vec![None, Some("plan 0/2".to_string()), Some("plan 1/2".to_string())]
    );
    assert!(screen(&player.app, 160, 48).contains("▸ fix"));
    player.on_key(key(KeyCode::Home), now);
    assert_eq!(player.app.plan.progress(), None);
    player.jump_to_end();
    assert_eq!(player.app.plan.progress(), Some("plan 1/2".to_string()));
}
