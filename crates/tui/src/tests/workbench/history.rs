use pretty_assertions::assert_eq;

use crate::conversation::Entry;

use super::*;

#[path = "history/stats.rs"]
mod stats;

#[path = "history/set_aside.rs"]
mod set_aside;

#[test]
fn f6_and_slash_history_open_the_inspector_and_ask_for_a_snapshot() {
    let workspace = TempDir::new();
    let mut app = app_in(&workspace);
    app.on_key(key(KeyCode::F(6)));
    assert_eq!(app.sent, vec![Op::InspectHistory]);
    assert_eq!(inspector(&app).map(|i| i.waiting), Some(true));
    assert!(screen(&mut app, 80, 24).contains("loading the history…"));
    app.on_key(key(KeyCode::Esc));
    assert!(app.layers.is_empty());

    // The snapshot goes stale: every opening asks again.
    app.on_agent_event(Event::HistorySnapshot {
        snapshot: summarized_history(),
    });
    type_text(&mut app, "/history");
    app.on_key(key(KeyCode::Enter));
    assert_eq!(app.sent, vec![Op::InspectHistory, Op::InspectHistory]);
    assert_eq!(inspector(&app).map(|i| i.waiting), Some(true));
    app.on_agent_event(Event::HistorySnapshot {
        snapshot: summarized_history(),
    });
    assert_eq!(inspector(&app).map(|i| i.waiting), Some(false));

    // Tab on a plain message does nothing; on a summary it shows the originals.
    app.on_key(key(KeyCode::Char('j')));
    app.on_key(key(KeyCode::Char('j')));
    assert!(!app.on_key(key(KeyCode::Tab)));
    app.on_key(key(KeyCode::Home));
    app.on_key(key(KeyCode::Tab));
    let view = inspector(&app).cloned();
    assert_eq!(view.map(|i| (i.selected, i.originals)), Some((0, true)));
    let text = screen(&mut app, 80, 24);
    assert!(text.contains("Replaced messages 2–12 (Tab: summary)"), "{text}");
    assert!(text.contains("Add a --json flag to the report command"), "{text}");
    // Moving on drops back to the summary text; Enter toggles too.
    app.on_key(key(KeyCode::Down));
    assert_eq!(
        inspector(&app).map(|i| (i.selected, i.originals)),
        Some((1, false))
    );
    app.on_key(key(KeyCode::Enter));
    assert_eq!(inspector(&app).map(|i| i.originals), Some(true));

    // A compaction while the inspector is open asks again.
    app.sent.clear();
    app.on_agent_event(Event::ContextCompacted {
        tokens_before: 30_000,
        tokens_after: 12_000,
        summary: "…".into(),
        start: 26,
        end: 30,
        fallback: false,
    });
    assert_eq!(app.sent, vec![Op::InspectHistory]);
    assert_eq!(inspector(&app).map(|i| i.waiting), Some(true));
    app.on_key(key(KeyCode::Char('q')));
    assert!(app.layers.is_empty());
}

#[test]
fn the_inspector_on_a_summarized_history() {
    let workspace = TempDir::new();
    let mut app = app_in(&workspace);
    two_compactions(&mut app);
    app.on_key(key(KeyCode::F(6)));
    app.on_agent_event(Event::HistorySnapshot {
        snapshot: summarized_history(),
    });
    assert_screen!("history_80x24", screen(&mut app, 80, 24));
    assert_screen!("history_160x48", screen(&mut app, 160, 48));
    app.on_key(key(KeyCode::Tab));
    assert_screen!("history_originals_80x24", screen(&mut app, 80, 24));
    assert_screen!("history_originals_160x48", screen(&mut app, 160, 48));
    // The text scrolls by pages and stops at its end.
    screen(&mut app, 80, 24);
    app.on_key(key(KeyCode::PageDown));
    let scrolled = inspector(&app).map_or(0, |i| i.scroll);
    assert!(scrolled > 0);
    for _ in 0..10 {
        app.on_key(key(KeyCode::PageDown));
    }
    screen(&mut app, 80, 24);
    let end = inspector(&app).map_or(0, |i| i.scroll);
    app.on_key(key(KeyCode::PageUp));
    assert!(inspector(&app).map_or(0, |i| i.scroll) < end);
    // A CJK message, selected, at 80 columns.
    app.on_key(key(KeyCode::End));
    app.on_key(key(KeyCode::Up));
    let text = screen(&mut app, 80, 24);
    assert!(text.contains("The model's message"), "{text}");
    for (width, height) in [(20, 6), (40, 10), (109, 30), (112, 30), (300, 100)] {
        screen(&mut app, width, height);
    }
}

#[test]
fn the_status_bar_marks_compactions() {
    let workspace = TempDir::new();
    let mut app = app_in(&workspace);
    app.on_agent_event(Event::TurnStarted {
        text: "keep going".into(),
    });
    two_compactions(&mut app);
    // Compacting ends in waiting for the model, within a turn.
    assert_eq!(app.status_text(), "waiting for the model 0.0 s");
    assert_eq!(app.figures.tokens().compactions, 2);
    assert_eq!(app.figures.tokens().context_tokens, 19_100);
    let last_row = |text: String| text.lines().last().unwrap_or_default().to_string();
    assert_screen!("status_compactions_80x24", last_row(screen(&mut app, 80, 24)));
    assert_screen!("status_compactions_160x48", last_row(screen(&mut app, 160, 48)));
    // Outside a turn (`/compact`), compaction ends in ready.
    app.on_agent_event(Event::TurnComplete { text: "done".into() });
    app.on_agent_event(Event::CompactionStarted {
        reason: "asked for".into(),
    });
    assert_eq!(app.status_text(), "compacting");
    app.on_agent_event(Event::ContextCompacted {
        tokens_before: 19_100,
        tokens_after: 9_000,
        summary: "…".into(),
        start: 26,
        end: 30,
        fallback: false,
    });
    assert_eq!(app.status_text(), "ready");
}

#[test]
fn failed_and_denied_calls_say_how_in_the_transcript() {
    let workspace = TempDir::new();
    let mut app = app_in(&workspace);
    let start = app.now;
    let call = |id: &str, name: &str, arguments: serde_json::Value| Event::ToolCallRequested {
        id: id.into(),
        name: name.into(),
        summary: miniagent_core::tools::output::summarize_arguments(&arguments),
        arguments,
        kind: Default::default(),
        locations: Vec::new(),
    };
    let finished = |id: &str, name: &str, outcome: ToolOutcome, ms: u64, line: &str, output: &str| {
        Event::ToolCallFinished {
            id: id.into(),
            name: name.into(),
            ok: outcome == ToolOutcome::Ok,
            outcome,
            duration_ms: ms,
            output_preview: line.into(),
            output: output.into(),
            effects: Vec::new(),
        }
    };
    app.on_agent_event(Event::TurnStarted {
        text: "run the script, then save the result".into(),
    });
    app.on_agent_event(call("b1", "bash", json!({"command": "python3 -c 'print(x)'"})));
    app.on_agent_event(Event::ApprovalRequested {
        id: "b1".into(),
        name: "bash".into(),
        preview: "$ python3 -c 'print(x)'".into(),
        session_rule: None,
        request: None,
        notes: Vec::new(),
    });
    // The person takes 12 s to answer; the command runs for 46 ms.
    app.now = start + Duration::from_secs(12);
    app.on_agent_event(Event::ToolCallStarted {
        id: "b1".into(),
        name: "bash".into(),
    });
    app.on_agent_event(finished(
        "b1",
        "bash",
        ToolOutcome::Error,
        46,
        "exit code 1 · NameError: name 'x' is not defined",
        "[stderr]\nTraceback (most recent call last):\n  File \"<string>\", line 1, in <module>\nNameError: name 'x' is not defined\n[exit code: 1]",
    ));
    app.on_agent_event(call(
        "w1",
        "write_file",
        json!({"path": "result.txt", "content": "x"}),
    ));
    app.on_agent_event(finished(
        "w1",
        "write_file",
        ToolOutcome::Denied,
        0,
        "denied by you: not in this repo, write it under /tmp",
        "the person refused this call: not in this repo, write it under /tmp. Do not retry it; adjust the plan or ask them.",
    ));
    app.on_agent_event(call(
        "w2",
        "write_file",
        json!({"path": "other.txt", "content": "x"}),
    ));
    app.on_agent_event(finished(
        "w2",
        "write_file",
        ToolOutcome::Denied,
        0,
        "denied by you",
        "the person refused this call. Do not retry it; adjust the plan or ask them.",
    ));
    app.on_agent_event(Event::TurnComplete { text: String::new() });
    assert_screen!("failed_and_denied_80x24", screen(&mut app, 80, 24));
    assert_screen!("failed_and_denied_160x48", screen(&mut app, 160, 48));
    // The detail view gives the run time, and the wait for approval apart from it.
    app.layout.focus_on(Pane::Timeline);
    app.on_key(key(KeyCode::Up));
    app.on_key(key(KeyCode::Up));
    app.on_key(key(KeyCode::Up));
    app.on_key(key(KeyCode::Enter));
    let detail = screen(&mut app, 160, 48);
    assert!(
        detail.contains("bash  error  ran 46 ms · waited 12.0 s for your approval  (b1)"),
        "{detail}"
    );
}

/// The detail view keeps the colours of what a call printed, and shows the result the
/// model received as exactly that: plain text when the escape sequences were removed
/// (and says so), the sequences made visible when the model did get them (a file's own
/// bytes, or a session recorded before they were removed).
#[test]
fn the_tool_detail_shows_coloured_output_and_the_result_as_the_model_got_it() {
    let workspace = TempDir::new();
    let mut app = app_in(&workspace);
    let call = |id: &str, streamed: &str, result: &str| {
        vec![
            Event::ToolCallRequested {
                id: id.into(),
                name: "bash".into(),
                arguments: json!({"command": "make"}),
                summary: "make".into(),
                kind: Default::default(),
                locations: Vec::new(),
            },
            Event::ToolCallStarted {
                id: id.into(),
                name: "bash".into(),
            },
            Event::ToolOutputDelta {
                id: id.into(),
                delta: streamed.into(),
            },
            Event::ToolCallFinished {
                id: id.into(),
                name: "bash".into(),
                ok: true,
                outcome: ToolOutcome::Ok,
                duration_ms: 5,
                output_preview: "red".into(),
                output: result.into(),
                effects: Vec::new(),
            },
        ]
    };
    let coloured = "\u{1b}[31mred\u{1b}[0m\n";
    for event in call("c1", coloured, "red\n[exit code: 0]")
        .into_iter()
        .chain(call("c2", coloured, "\u{1b}[31mred\u{1b}[0m\n[exit code: 0]"))
    {
        app.on_agent_event(event);
    }
    let detail = |app: &mut Bench, id: &str| {
        app.open_layer(Box::new(ToolDetail::for_call(id.into())));
        let mut terminal = Terminal::new(TestBackend::new(100, 30)).unwrap();
        terminal.draw(|frame| render::draw(frame, app)).unwrap();
        app.close_layer();
        let buffer = terminal.backend().buffer().clone();
        let (width, height) = (buffer.area.width, buffer.area.height);
        let rows: Vec<String> = (0..height)
            .map(|y| (0..width).map(|x| buffer[(x, y)].symbol()).collect())
            .collect();
        // The colour of the first `red` on the screen (the live output).
        let first_red = (0..height)
            .flat_map(|y| (0..width.saturating_sub(2)).map(move |x| (x, y)))
            .find(|&(x, y)| (0..3).all(|i| buffer[(x + i, y)].symbol() == &"red"[i as usize..i as usize + 1]))
            .unwrap();
        (rows.join("\n"), buffer[first_red].fg)
    };
    let (clean, colour) = detail(&mut app, "c1");
    assert_ne!(
        colour,
        ratatui::style::Color::Reset,
        "the live output lost its colour"
    );
    assert!(
        clean.contains("Result sent to the model (escape sequences removed)"),
        "{clean}"
    );
    let (raw, _) = detail(&mut app, "c2");
    assert!(raw.contains("Result sent to the model"), "{raw}");
    assert!(!raw.contains("escape sequences removed"), "{raw}");
    assert!(raw.contains("␛[31mred␛[0m"), "{raw}");
}

/// A call a guard refused says so on its line and in its detail view: "refused", with
/// the guard's reason, never "denied" as if the person had refused it.
#[test]
fn a_call_refused_by_a_guard_says_refused_with_its_reason() {
    let workspace = TempDir::new();
    let mut app = app_in(&workspace);
    let refusal = "refused: the same call a fourth time in a row, with the same result each time. `read_file` only reads, so it would tell you nothing new.";
    for event in [
        Event::TurnStarted {
            text: "read it".into(),
        },
        Event::ToolCallRequested {
            id: "r4".into(),
            name: "read_file".into(),
            arguments: json!({"path": "a.txt"}),
            summary: "a.txt".into(),
            kind: Default::default(),
            locations: Vec::new(),
        },
        Event::ToolCallFinished {
            id: "r4".into(),
            name: "read_file".into(),
            ok: false,
            outcome: ToolOutcome::Refused,
            duration_ms: 0,
            output_preview: refusal.into(),
            output: refusal.into(),
            effects: Vec::new(),
        },
    ] {
        app.on_agent_event(event);
    }
    let text = screen(&mut app, 100, 30);
    assert!(
        text.contains("⊘ read_file a.txt  refused: the same call a fourth time in a row"),
        "{text}"
    );
    app.open_layer(Box::new(ToolDetail::for_call("r4".into())));
    let detail = screen(&mut app, 100, 30);
    assert!(detail.contains("read_file  refused  (r4)"), "{detail}");
    assert!(!detail.contains("denied"), "{detail}");
}

/// Summaries nest as compaction repeats: from a summary's originals, Enter opens the
/// earlier summary among them, Tab its own originals, Backspace goes back up.
#[test]
fn the_inspector_walks_down_nested_summaries_to_the_originals() {
    let workspace = TempDir::new();
    let mut app = app_in(&workspace);
    two_compactions(&mut app);
    app.on_key(key(KeyCode::F(6)));
    app.on_agent_event(Event::HistorySnapshot {
        snapshot: summarized_history(),
    });
    // The second summary, on its originals: the earlier summary is among them.
    app.on_key(key(KeyCode::Down));
    app.on_key(key(KeyCode::Tab));
    let text = screen(&mut app, 160, 48);
    assert!(
        text.contains("Replaced messages 13–26 (Tab: summary · Enter: earlier summary)"),
        "{text}"
    );
    assert!(text.contains("Enter opens this earlier summary"), "{text}");
    // Into the earlier summary, then its originals.
    assert!(app.on_key(key(KeyCode::Enter)));
    let text = screen(&mut app, 160, 48);
    assert!(
        text.contains("Earlier summary of messages 13–18 (Tab: originals · ⌫ back)"),
        "{text}"
    );
    assert!(text.contains("9.8k tokens of originals → 640 tokens"), "{text}");
    app.on_key(key(KeyCode::Tab));
    assert_screen!("history_nested_originals_80x24", screen(&mut app, 80, 24));
    assert_screen!("history_nested_originals_160x48", screen(&mut app, 160, 48));
    let text = screen(&mut app, 160, 48);
    assert!(text.contains("message 13 · Two tests fail"), "{text}");
    // Back up: the outer summary's originals, then nothing further up.
    assert!(app.on_key(key(KeyCode::Backspace)));
    let text = screen(&mut app, 160, 48);
    assert!(text.contains("Replaced messages 13–26"), "{text}");
    assert!(!app.on_key(key(KeyCode::Backspace)));
    // Another entry starts from the top again.
    app.on_key(key(KeyCode::Enter));
    app.on_key(key(KeyCode::Up));
    assert_eq!(inspector(&app).map(|i| i.path.is_empty()), Some(true));
}

/// The figure the agent reports when it starts (the system prompt and tool schemas),
/// shown by the gauge before the first request, and the same in `/stats`.
#[test]
fn the_gauge_shows_the_prompt_size_before_the_first_request() {
    let workspace = TempDir::new();
    let mut app = app_in(&workspace);
    app.on_agent_event(Event::TokenUsage {
        context_tokens: 2_140,
        estimated: true,
        token_limit: 80_000,
        context_window: 200_000,
        input_tokens: 0,
        output_tokens: 0,
        total_input_tokens: 0,
        total_output_tokens: 0,
        cache_read_tokens: 0,
        cache_write_tokens: 0,
        total_cache_read_tokens: 0,
        total_cache_write_tokens: 0,
        cost_usd: None,
    });
    let last_row = |text: String| text.lines().last().unwrap_or_default().to_string();
    assert_screen!(
        "gauge_before_first_request_80x24",
        last_row(screen(&mut app, 80, 24))
    );
    let status = last_row(screen(&mut app, 160, 48));
    assert_screen!("gauge_before_first_request_160x48", status.clone());
    assert!(status.contains("~2.1k/80k 3%"), "{status}");
    app.submit("/stats".into());
    let stats = screen(&mut app, 160, 48);
    assert!(stats.contains("context now (tokens)  2.1k of 80k"), "{stats}");
}

/// Issue 26 point 9: `/compact` says what it did once: the agent's report, not also a
/// "context compacted" line for its summary (an automatic compaction, within a turn,
/// has no report and keeps its line).
#[test]
fn compact_now_reports_once_and_a_turns_compaction_keeps_its_line() {
    let workspace = TempDir::new();
    let mut app = app_in(&workspace);
    let notices = |app: &App| -> Vec<String> {
        app.conversation
            .entries()
            .iter()
            .filter_map(|entry| match entry {
                Entry::Notice { text, .. } => Some(text.clone()),
                _ => None,
            })
            .collect()
    };
    let before = notices(&app).len();
    app.submit("/compact".into());
    assert_eq!(app.sent, vec![Op::CompactNow]);
    let compacted = |app: &mut Bench| {
        app.on_agent_event(Event::CompactionStarted {
            reason: "summarizing messages 1–4 (about 900 tokens in the prompt)".into(),
        });
        app.on_agent_event(Event::ContextCompacted {
            tokens_before: 3149,
            tokens_after: 2299,
            summary: "…".into(),
            start: 1,
            end: 5,
            fallback: false,
        });
    };
    compacted(&mut app);
    app.on_agent_event(Event::Notice {
        message: "compacted: the prompt went from about 3149 to 2299 tokens (1 summary)".into(),
    });
    // Fresh-eyes finding 4: the progress line gives way to the report; one line remains.
    assert_eq!(
        notices(&app)[before..],
        ["compacted: the prompt went from about 3149 to 2299 tokens (1 summary)"]
    );
    assert_eq!(app.figures.tokens().compactions, 1);
    let before = notices(&app).len();
    app.on_agent_event(Event::TurnStarted { text: "go on".into() });
    compacted(&mut app);
    assert_eq!(
        notices(&app)[before..],
        [
            "compacting: summarizing messages 1–4 (about 900 tokens in the prompt)",
            "context compacted: 3149 → 2299 tokens",
        ]
    );
    assert_eq!(app.figures.tokens().compactions, 2);
}

/// Issue 26 point 18: the text pane's title is never cut by its frame: where it does not
/// fit whole (120 columns, the list beside it), it goes without its key hint (the key
/// bar has the keys); where it fits, it has it.
#[test]
fn the_inspectors_pane_title_fits_at_120_columns() {
    let workspace = TempDir::new();
    let mut app = app_in(&workspace);
    two_compactions(&mut app);
    app.on_key(key(KeyCode::F(6)));
    app.on_agent_event(Event::HistorySnapshot {
        snapshot: summarized_history(),
    });
    app.on_key(key(KeyCode::Down));
    app.on_key(key(KeyCode::Tab));
    let title_row = |text: &str| text.lines().nth(3).unwrap_or_default().to_string();
    let narrow_screen = screen(&mut app, 120, 30);
    assert_screen!("history_originals_nested_120x30", narrow_screen.clone());
    let narrow = title_row(&narrow_screen);
    assert!(
        narrow.ends_with("┌ Replaced messages 13–26 ───────────────────────────────┃ │\""),
        "{narrow}"
    );
    let wide = title_row(&screen(&mut app, 160, 30));
    assert!(
        wide.contains("┌ Replaced messages 13–26 (Tab: summary · Enter: earlier summary) ─"),
        "{wide}"
    );
}

/// Issue 26 point 18: the inspector's header counts trimmed results, not "0 masked".
#[test]
fn the_inspectors_header_counts_trimmed_results() {
    let workspace = TempDir::new();
    let mut app = app_in(&workspace);
    app.on_key(key(KeyCode::F(6)));
    let mut snapshot = summarized_history();
    let header = |app: &mut Bench| {
        screen(app, 160, 30)
            .lines()
            .nth(2)
            .unwrap_or_default()
            .to_string()
    };
    for ((masked, trimmed), expected) in [
        (
            (0, 1),
            "prompt 19k tokens · 1 tool result trimmed · 2 compactions",
        ),
        (
            (3, 2),
            "prompt 19k tokens · 3 tool results masked, 2 trimmed · 2 compactions",
        ),
        ((1, 0), "prompt 19k tokens · 1 tool result masked · 2 compactions"),
    ] {
        snapshot.masked_results = masked;
        snapshot.trimmed_results = trimmed;
        app.on_agent_event(Event::HistorySnapshot {
            snapshot: snapshot.clone(),
        });
        let row = header(&mut app);
        assert!(row.contains(&format!("┃{expected} · ")), "{row}");
    }
}
