//! `/stats`: the history figures, the summary and model calls it counts, its rows at 80
//! columns, and a tall one between the title and status bars.

use pretty_assertions::assert_eq;

use super::*;

#[test]
fn stats_show_the_history_figures() {
    let workspace = TempDir::new();
    let mut app = app_in(&workspace);
    busy_session(&mut app);
    two_compactions(&mut app);
    app.submit("/stats".into());
    assert_eq!(app.sent, vec![Op::InspectHistory]);
    app.on_agent_event(Event::HistorySnapshot {
        snapshot: summarized_history(),
    });
    assert_screen!("stats_history_80x24", screen(&mut app, 80, 24));
    assert_screen!("stats_history_160x48", screen(&mut app, 160, 48));
    let narrow = screen(&mut app, 60, 24);
    assert!(narrow.contains("prompt by role"), "{narrow}");
}

/// Fresh-eyes findings 4 and 5: after a `/compact` whose summary call came after two
/// steps, `/stats` counts three model calls; at 80 columns every label stands apart from
/// its value (a trimmed result among them) and the compaction's figures are whole.
#[test]
fn stats_count_the_summary_call_and_keep_rows_whole_at_80_columns() {
    let workspace = TempDir::new();
    let mut app = app_in(&workspace);
    busy_session(&mut app);
    app.on_agent_event(Event::TurnComplete { text: "done".into() });
    app.submit("/compact".into());
    app.on_agent_event(Event::CompactionStarted {
        reason: "summarizing messages 2–4 (about 1826 tokens in the prompt)".into(),
    });
    app.on_agent_event(Event::ContextCompacted {
        tokens_before: 4_877,
        tokens_after: 2_863,
        summary: "…".into(),
        start: 1,
        end: 4,
        fallback: false,
    });
    app.on_agent_event(Event::Notice {
        message: "compacted: the prompt went from about 4877 to 2863 tokens (1 summary)".into(),
    });
    app.sent.clear();
    app.submit("/stats".into());
    let mut snapshot = summarized_history();
    snapshot.trimmed_results = 2;
    snapshot.compactions = vec![miniagent_protocol::CompactionRecord {
        tokens_before: 4_877,
        tokens_after: 2_863,
        start: 1,
        end: 4,
        fallback: false,
    }];
    app.on_agent_event(Event::HistorySnapshot {
        snapshot: snapshot.clone(),
    });
    assert_screen!("stats_after_compact_80x24", screen(&mut app, 80, 24));
    assert_screen!("stats_after_compact_160x48", screen(&mut app, 160, 48));
    // No price known and no tool result left in the prompt: the cost's long value runs
    // on beside the empty row instead of being cut.
    app.figures.tokens_mut().cost = None;
    snapshot.by_role.retain(|(role, _)| role != "tool results");
    snapshot.trimmed_results = 0;
    app.on_agent_event(Event::HistorySnapshot { snapshot });
    let text = screen(&mut app, 80, 24);
    let cost = text
        .lines()
        .find(|line| line.contains("┃cost"))
        .unwrap_or_default();
    assert!(
        cost.contains("cost                  unknown (no [prices] entry)"),
        "{text}"
    );
}

/// The `/stats` row of `label`, between the overlay's borders, trimmed.
fn stats_row(text: &str, label: &str) -> String {
    text.lines()
        .find_map(|line| line.split('┃').find(|cell| cell.starts_with(label)))
        .unwrap_or_default()
        .trim_end()
        .to_string()
}

/// Issue 26, a fresh-eyes finding: `/stats` counts the model calls the agent made (its
/// `TurnUsage`), not the steps it announced. A turn refused before its request was sent
/// (after a summary call that was made) and a `/compact` that could not compact add
/// no call; a sub-agent's call and a step-limit report, announced by no step, are.
#[test]
fn stats_count_only_the_model_calls_made() {
    let workspace = TempDir::new();
    let mut app = app_in(&workspace);
    let usage = |model_calls| Event::TurnUsage {
        model_calls,
        input_tokens: 900,
        output_tokens: 40,
        cache_read_tokens: 0,
        cache_write_tokens: 0,
        cost_usd: None,
    };
    let answered = [
        Event::TurnStarted {
            text: "list the rows".into(),
        },
        Event::StepStarted {
            step: 1,
            max_steps: 1,
        },
        Event::AssistantMessage {
            thinking: String::new(),
            text: "Listed.".into(),
            tool_calls: Vec::new(),
            stop_reason: StopReason::EndTurn,
        },
        usage(1),
        Event::TurnComplete {
            text: "Listed.".into(),
        },
    ];
    for event in answered {
        app.on_agent_event(event);
    }
    // Refused before sending, after one summary call.
    app.on_agent_event(Event::TurnStarted { text: "again".into() });
    app.on_agent_event(Event::StepStarted {
        step: 1,
        max_steps: 1,
    });
    app.on_agent_event(Event::CompactionStarted {
        reason: "summarizing messages 2–3 (about 4000 tokens in the prompt)".into(),
    });
    app.on_agent_event(Event::ContextCompacted {
        tokens_before: 9_000,
        tokens_after: 8_500,
        summary: "…".into(),
        start: 1,
        end: 3,
        fallback: false,
    });
    // While the turn runs, its announced step and summary count.
    assert_eq!(app.figures.stats().calls(), 3);
    app.on_agent_event(usage(1));
    app.on_agent_event(Event::Error {
        message: "the request was not sent: the prompt needs about 9100 tokens but the budget is 7000; what is left cannot be compacted further".into(),
    });
    // `/compact` with nothing it could compact.
    app.submit("/compact".into());
    app.on_agent_event(Event::Notice {
        message: "nothing to compact: the prompt is about 8500 tokens".into(),
    });
    assert_eq!(app.figures.stats().calls(), 2);
    // A step that delegated (the sub-agent made one call) and the step-limit report:
    // three calls, one step announced.
    app.on_agent_event(Event::TurnStarted { text: "go on".into() });
    app.on_agent_event(Event::StepStarted {
        step: 1,
        max_steps: 1,
    });
    app.on_agent_event(usage(3));
    app.on_agent_event(Event::StepLimitReached {
        steps: 1,
        report: "Stopped.".into(),
    });
    app.sent.clear();
    app.submit("/stats".into());
    let text = screen(&mut app, 80, 24);
    assert_eq!(
        (
            app.figures.stats().calls(),
            app.figures.stats().summary_calls,
            stats_row(&text, "model calls"),
        ),
        (5, 1, "model calls           5 (1 summary)".to_string()),
        "{text}"
    );
}

/// Issue 26, a fresh-eyes finding: a `/stats` taller than the screen stands between the
/// title bar and the status bar (which shows its keys), as the other overlays do, and
/// scrolls; no character of the title is left beside it.
#[test]
fn tall_stats_stay_between_the_title_and_status_bars() {
    let workspace = TempDir::new();
    let mut app = app_in(&workspace);
    busy_session(&mut app);
    app.on_agent_event(Event::TurnComplete { text: "done".into() });
    for (n, name) in [
        "read_file",
        "write_file",
        "edit_file",
        "bash_output",
        "bash_kill",
        "record_note",
        "recall_notes",
        "delegate",
        "get_skill",
    ]
    .into_iter()
    .enumerate()
    {
        app.on_agent_event(Event::ToolCallRequested {
            id: format!("x{n}"),
            name: name.into(),
            arguments: json!({}),
            summary: String::new(),
            kind: Default::default(),
            locations: Vec::new(),
        });
    }
    let before = screen(&mut app, 80, 24);
    app.submit("/stats".into());
    app.on_agent_event(Event::HistorySnapshot {
        snapshot: summarized_history(),
    });
    let text = screen(&mut app, 80, 24);
    let rows: Vec<Vec<char>> = text.lines().map(|row| row.chars().collect()).collect();
    // The box's corners: top left on the row under the title bar, bottom left on the row
    // over the status bar (rows 0 and 23, each quoted).
    let left = text
        .lines()
        .nth(1)
        .and_then(|row| row.split("┏ Session statistics").next())
        .map(|before| before.chars().count());
    let corner = |row: usize| left.and_then(|left| rows.get(row)?.get(left).copied());
    assert_eq!(
        (
            text.lines().next(),
            corner(1),
            corner(22),
            text.lines().last().map(|row| row.contains("Esc/q close")),
        ),
        (before.lines().next(), Some('┏'), Some('┗'), Some(true)),
        "{text}"
    );
    assert_screen!("stats_tall_80x24", text);
    // It scrolls to its last row.
    app.on_key(key(KeyCode::End));
    let end = screen(&mut app, 80, 24);
    assert!(
        !text.contains("write_file") && end.contains("write_file"),
        "{end}"
    );
    // So do the other overlays that size to their text, on a screen too short for it.
    app.on_key(key(KeyCode::Esc));
    for command in ["/stats", "/version", "/theme", "/approvals"] {
        let before = screen(&mut app, 60, 6);
        app.submit(command.into());
        let text = screen(&mut app, 60, 6);
        let edges = |text: &str| {
            let last = text.lines().last().map(|row| row.starts_with("\" ctx "));
            (text.lines().next().map(str::to_string), last)
        };
        assert_eq!(edges(&text), edges(&before), "{command}: {text}");
        app.on_key(key(KeyCode::Esc));
        assert!(app.layers.is_empty(), "{command}");
    }
}
