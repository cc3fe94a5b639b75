use crate::conversation::NoticeKind;
use pretty_assertions::assert_eq;

use super::*;

#[test]
fn esc_and_ctrl_c_interrupt_clear_and_quit() {
    let workspace = TempDir::new();
    let mut app = app_in(&workspace);
    app.on_agent_event(Event::TurnStarted {
        text: "long task".into(),
    });
    app.on_key(key(KeyCode::Esc));
    assert_eq!(app.sent, vec![Op::Interrupt]);
    app.sent.clear();
    app.on_agent_event(Event::TurnAborted {
        reason: "you interrupted the turn while tools were running".into(),
    });
    assert_eq!(app.status_text(), "ready");
    type_text(&mut app, "draft");
    app.on_key(ctrl('c'));
    assert!(app.input.is_empty() && !app.quit && app.sent.is_empty());
    app.on_agent_event(Event::TurnStarted { text: "again".into() });
    app.on_key(ctrl('c'));
    assert_eq!(app.sent, vec![Op::Interrupt]);
    app.on_agent_event(Event::TurnComplete { text: "done".into() });
    // On an empty input, one Ctrl-C says how to quit; a second soon after quits.
    app.on_key(ctrl('c'));
    assert!(!app.quit);
    assert_eq!(
        app.turn.last_notice().map(|(_, text)| text.as_str()),
        Some("press Ctrl-C again to quit (Ctrl-D on an empty input quits at once)")
    );
    app.now += std::time::Duration::from_secs(3);
    app.on_key(ctrl('c'));
    assert!(!app.quit, "too late: it asks again");
    // Asked again, it is said once in the transcript (a fresh-eyes tester saw them pile up).
    let said = app
        .conversation
        .entries()
        .iter()
        .filter(|entry| matches!(entry, crate::conversation::Entry::Notice { text, .. } if text.starts_with("press Ctrl-C again")))
        .count();
    assert_eq!(said, 1);
    app.now += std::time::Duration::from_millis(500);
    app.on_key(ctrl('c'));
    assert!(app.quit);
    let mut app = app_in(&workspace);
    app.on_key(ctrl('d'));
    assert!(app.quit);
}

#[test]
fn typing_sends_queues_and_runs_commands() {
    let workspace = TempDir::new();
    let mut app = app_in(&workspace);
    type_text(&mut app, "hello");
    app.on_key(key(KeyCode::Enter));
    app.on_agent_event(Event::TurnStarted { text: "hello".into() });
    type_text(&mut app, "and then this");
    app.on_key(key(KeyCode::Enter));
    // Kept until the turn ends (the agent is not sent it yet).
    assert_eq!(*app.turn.queued(), ["and then this"]);
    type_text(&mut app, "/approval full-auto");
    app.on_key(key(KeyCode::Enter));
    type_text(&mut app, "/compact");
    app.on_key(key(KeyCode::Enter));
    assert_eq!(
        app.sent,
        vec![
            Op::UserInput { text: "hello".into() },
            Op::SetApprovalMode {
                mode: ApprovalMode::FullAuto
            },
            Op::CompactNow,
        ]
    );
    type_text(&mut app, "/frobnicate");
    app.on_key(key(KeyCode::Enter));
    assert_eq!(
        app.turn.last_notice().map(|n| n.1.as_str()),
        Some("unknown command /frobnicate; /help lists them")
    );
    // A near miss names the command it is near; the plural of /theme is /theme.
    type_text(&mut app, "/hepl");
    app.on_key(key(KeyCode::Enter));
    assert_eq!(
        app.turn.last_notice().map(|n| n.1.as_str()),
        Some("unknown command /hepl; did you mean /help? /help lists them")
    );
    type_text(&mut app, "/compcat now");
    app.on_key(key(KeyCode::Enter));
    assert_eq!(
        app.turn.last_notice().map(|n| n.1.as_str()),
        Some("unknown command /compcat; did you mean /compact? /help lists them")
    );
    type_text(&mut app, "/themes");
    app.on_key(key(KeyCode::Enter));
    assert!(app.top::<crate::layers::themes::ThemesLayer>().is_some());
    app.on_key(key(KeyCode::Esc));
    // A 1 MB paste is one insert.
    let big = "x".repeat(1 << 20);
    assert!(app.on_paste(&big));
    assert_eq!(app.input.text().len(), 1 << 20);
}

#[test]
fn a_retry_discards_what_streamed() {
    let workspace = TempDir::new();
    let mut app = app_in(&workspace);
    app.on_agent_event(Event::TurnStarted { text: "hi".into() });
    app.on_agent_event(Event::TextDelta {
        delta: "partial repl".into(),
    });
    app.on_agent_event(Event::Retrying {
        attempt: 1,
        max_attempts: 3,
        delay_ms: 3000,
        reason: "HTTP 529".into(),
        discard_partial: true,
    });
    assert_eq!(app.status_text(), "retrying in 3 s (attempt 2 of 4)");
    app.on_agent_event(Event::TextDelta {
        delta: "whole reply".into(),
    });
    app.on_agent_event(Event::TurnComplete {
        text: "whole reply".into(),
    });
    let text = screen(&mut app, 80, 24);
    assert!(
        text.contains("whole reply") && !text.contains("partial repl"),
        "{text}"
    );
}

#[test]
fn overlays_help_detail_stats_approvals_and_first_run() {
    let workspace = TempDir::new();
    let mut app = app_in(&workspace);
    busy_session(&mut app);
    app.on_key(key(KeyCode::F(1)));
    assert_screen!("help_160x48", screen(&mut app, 160, 48));
    assert_screen!("help_80x24", screen(&mut app, 80, 24));
    app.on_key(key(KeyCode::Esc));
    app.layout.focus_on(Pane::Timeline);
    app.on_key(key(KeyCode::Up));
    app.on_key(key(KeyCode::Up));
    app.on_key(key(KeyCode::Enter));
    assert_screen!("tool_detail_80x24", screen(&mut app, 80, 24));
    assert_screen!("tool_detail_160x48", screen(&mut app, 160, 48));
    app.on_key(key(KeyCode::Esc));
    app.on_agent_event(Event::ApprovalRulesChanged {
        rules: vec![
            ApprovalRule::Command {
                program: "cargo".into(),
            },
            ApprovalRule::Tool {
                name: "write_file".into(),
            },
        ],
        refused: vec![ApprovalRule::Command { program: "rm".into() }],
    });
    app.submit("/approvals".into());
    app.on_key(key(KeyCode::Down));
    app.on_key(key(KeyCode::Char('d')));
    assert_eq!(
        app.sent.last(),
        Some(&Op::RevokeApproval {
            rule: ApprovalRule::Tool {
                name: "write_file".into()
            }
        })
    );
    // The refusals are listed after the approvals, and revoked the same way.
    app.on_key(key(KeyCode::Down));
    app.on_key(key(KeyCode::Char('d')));
    assert_eq!(
        app.sent.last(),
        Some(&Op::RevokeApproval {
            rule: ApprovalRule::Command { program: "rm".into() }
        })
    );
    assert_screen!("approvals_80x24", screen(&mut app, 80, 24));
    assert_screen!("approvals_160x48", screen(&mut app, 160, 48));
    app.on_key(key(KeyCode::Esc));
    app.submit("/stats".into());
    assert_screen!("stats_80x24", screen(&mut app, 80, 24));
    assert_screen!("stats_160x48", screen(&mut app, 160, 48));
    app.on_key(key(KeyCode::Esc));

    let mut fresh = app_in(&workspace);
    fresh.open_layer(Box::new(FirstRun {
        problem: "no API key: set MINIAGENT_API_KEY or ANTHROPIC_API_KEY, or name another variable with --api-key-env".into(),
        config_path: "/home/dev/.config/miniagent/config.toml".into(),
        local_server: Some(("http://127.0.0.1:11434/v1".into(), "llama3.2".into())),
    }));
    assert_screen!("first_run_80x24", screen(&mut fresh, 80, 24));
    assert_screen!("first_run_160x48", screen(&mut fresh, 160, 48));
    fresh.on_key(key(KeyCode::Enter));
    assert!(fresh.top::<FirstRun>().is_none());
    assert_eq!(
        fresh.actions,
        vec![Action::UseLocalServer {
            base_url: "http://127.0.0.1:11434/v1".into(),
            model: "llama3.2".into()
        }]
    );
}

#[test]
fn narrow_side_panes_open_as_overlays_and_panes_maximise() {
    let workspace = TempDir::new();
    let mut app = app_in(&workspace);
    busy_session(&mut app);
    screen(&mut app, 80, 24);
    app.on_key(key(KeyCode::F(4)));
    assert_eq!(app.layout.focus(), Pane::Timeline);
    assert_screen!("narrow_tools_80x24", screen(&mut app, 80, 24));
    // F4 again leaves the tools open with the keys; `q` puts them away.
    app.on_key(key(KeyCode::F(4)));
    assert_eq!(
        (app.layout.focus(), app.layout.side_popup()),
        (Pane::Timeline, Some(Pane::Timeline))
    );
    app.on_key(key(KeyCode::Char('q')));
    assert_eq!((app.layout.focus(), app.layout.side_popup()), (Pane::Input, None));
    assert!(!app.input.text().contains('q'));
    // F2 over F4: one popup at a time, the newest.
    app.on_key(key(KeyCode::F(4)));
    app.on_key(key(KeyCode::F(2)));
    assert_eq!(
        (app.layout.focus(), app.layout.side_popup()),
        (Pane::Tree, Some(Pane::Tree))
    );
    assert_screen!("narrow_files_80x24", screen(&mut app, 80, 24));
    app.on_key(key(KeyCode::Esc));
    screen(&mut app, 160, 48);
    app.layout.focus_on(Pane::Thinking);
    app.on_key(key(KeyCode::F(5)));
    assert_screen!("maximised_thinking_160x48", screen(&mut app, 160, 48));
    assert_screen!("maximised_thinking_80x24", screen(&mut app, 80, 24));
    app.on_key(key(KeyCode::F(5)));
    assert_eq!(app.layout.maximized(), None);
    // Tab walks the visible panes in order (at full width).
    screen(&mut app, 160, 48);
    app.layout.focus_on(Pane::Tree);
    let mut order = vec![app.layout.focus()];
    for _ in 0..5 {
        app.on_key(key(KeyCode::Tab));
        order.push(app.layout.focus());
    }
    assert_eq!(
        order,
        vec![
            Pane::Tree,
            Pane::Conversation,
            Pane::Input,
            Pane::Thinking,
            Pane::Timeline,
            Pane::Tree
        ]
    );
}

#[test]
fn scrolling_up_shows_the_new_output_marker() {
    let workspace = TempDir::new();
    let mut app = app_in(&workspace);
    app.on_agent_event(Event::TurnStarted { text: "count".into() });
    let long: String = (1..=80).map(|n| format!("line {n}\n\n")).collect();
    app.on_agent_event(Event::TextDelta { delta: long });
    screen(&mut app, 80, 24);
    app.layout.focus_on(Pane::Conversation);
    app.on_key(key(KeyCode::PageUp));
    // Nothing new yet: scrolling up alone says nothing about new output.
    let scrolled = screen(&mut app, 80, 24);
    assert!(scrolled.contains("Conversation (scrolled)"), "{scrolled}");
    assert!(!scrolled.contains("new output below"), "{scrolled}");
    app.on_agent_event(Event::TextDelta {
        delta: "more\n".into(),
    });
    assert_screen!("scrolled_up_80x24", screen(&mut app, 80, 24));
    app.on_key(key(KeyCode::PageUp));
    assert_screen!("scrolled_up_160x48", screen(&mut app, 160, 48));
    // End from the input (its cursor already at the end) follows again.
    app.layout.focus_on(Pane::Input);
    app.on_key(key(KeyCode::End));
    assert!(app.conversation.is_following());
    let following = screen(&mut app, 80, 24);
    assert!(!following.contains("new output below"), "{following}");
    assert!(following.contains("more"), "{following}");
    app.on_key(key(KeyCode::End));
    assert!(app.conversation.is_following());
}

#[test]
fn a_call_detail_pages_and_scrolls_back_after_end() {
    let workspace = TempDir::new();
    let mut app = app_in(&workspace);
    app.on_agent_event(Event::TurnStarted { text: "count".into() });
    app.on_agent_event(Event::ToolCallRequested {
        id: "s1".into(),
        name: "bash".into(),
        arguments: json!({"command": "seq"}),
        summary: "seq".into(),
        kind: Default::default(),
        locations: Vec::new(),
    });
    app.on_agent_event(Event::ToolCallStarted {
        id: "s1".into(),
        name: "bash".into(),
    });
    let output: String = (1..=200).map(|n| format!("out-{n:03}\n")).collect();
    app.on_agent_event(Event::ToolOutputDelta {
        id: "s1".into(),
        delta: output,
    });
    app.on_agent_event(Event::ToolCallFinished {
        id: "s1".into(),
        name: "bash".into(),
        ok: true,
        outcome: ToolOutcome::Ok,
        duration_ms: 5,
        output_preview: "done".into(),
        output: "done".into(),
        effects: Vec::new(),
    });
    app.layout.focus_on(Pane::Timeline);
    app.on_key(key(KeyCode::Up));
    app.on_key(key(KeyCode::Enter));
    // 24 rows: the popup's 22 rows hold 20 of text; a page is 18.
    let first = screen(&mut app, 80, 24);
    assert_eq!(visible_outputs(&first).first(), Some(&1), "{first}");
    app.on_key(key(KeyCode::End));
    let end = screen(&mut app, 80, 24);
    assert_eq!(visible_outputs(&end).last(), Some(&200), "{end}");
    assert!(end.contains("Result sent to the model"), "{end}");
    app.on_key(key(KeyCode::PageUp));
    let paged = screen(&mut app, 80, 24);
    assert_screen!("tool_detail_paged_up_80x24", paged);
    assert_eq!(visible_outputs(&paged).last(), Some(&185), "{paged}");
    app.on_key(key(KeyCode::Up));
    assert_eq!(visible_outputs(&screen(&mut app, 80, 24)).last(), Some(&184));
    app.on_key(key(KeyCode::PageDown));
    assert_eq!(visible_outputs(&screen(&mut app, 80, 24)).last(), Some(&200));
    app.on_key(key(KeyCode::Home));
    app.on_key(key(KeyCode::PageDown));
    assert_eq!(visible_outputs(&screen(&mut app, 80, 24)).first(), Some(&11));
    // The same page up from the end at 160×48 (a page is the larger popup's).
    screen(&mut app, 160, 48);
    app.on_key(key(KeyCode::End));
    screen(&mut app, 160, 48);
    app.on_key(key(KeyCode::PageUp));
    assert_screen!("tool_detail_paged_up_160x48", screen(&mut app, 160, 48));
}

#[test]
fn messages_queued_during_a_turn_survive_an_interrupt() {
    let workspace = TempDir::new();
    let mut app = app_in(&workspace);
    type_text(&mut app, "first");
    app.on_key(key(KeyCode::Enter));
    app.on_agent_event(Event::TurnStarted { text: "first".into() });
    type_text(&mut app, "second");
    app.on_key(key(KeyCode::Enter));
    type_text(&mut app, "third");
    app.on_key(key(KeyCode::Enter));
    assert_screen!("queued_two_80x24", screen(&mut app, 80, 24));
    assert_screen!("queued_two_160x48", screen(&mut app, 160, 48));
    type_text(&mut app, "a draft");
    app.on_key(ctrl('c'));
    app.on_agent_event(Event::TurnAborted {
        reason: "interrupted by the user while the model was replying".into(),
    });
    // Nothing queued was sent, nothing was lost: both are back in the input, before the draft.
    assert_eq!(
        app.sent,
        vec![Op::UserInput { text: "first".into() }, Op::Interrupt]
    );
    assert_eq!(app.input.text(), "second\n\nthird\n\na draft");
    assert!(!screen(&mut app, 80, 24).contains("Input · "));
    assert_eq!(
        app.turn.last_notice().map(|n| n.1.as_str()),
        Some("the turn was stopped; your 2 queued messages are back in the input (Enter sends them)")
    );
    assert_screen!("queued_returned_80x24", screen(&mut app, 80, 24));
    assert_screen!("queued_returned_160x48", screen(&mut app, 160, 48));

    // A turn that ends by itself sends the next queued message, one per turn.
    app.input.clear();
    app.sent.clear();
    type_text(&mut app, "again");
    app.on_key(key(KeyCode::Enter));
    app.on_agent_event(Event::TurnStarted { text: "again".into() });
    type_text(&mut app, "next");
    app.on_key(key(KeyCode::Enter));
    type_text(&mut app, "last");
    app.on_key(key(KeyCode::Enter));
    assert_eq!(app.sent, vec![Op::UserInput { text: "again".into() }]);
    app.on_agent_event(Event::TurnComplete { text: "ok".into() });
    assert_eq!(app.sent.last(), Some(&Op::UserInput { text: "next".into() }));
    app.on_agent_event(Event::TurnStarted { text: "next".into() });
    assert!(screen(&mut app, 80, 24).contains("Input · 1 queued"));
    app.on_agent_event(Event::TurnComplete { text: "ok".into() });
    assert_eq!(app.sent.last(), Some(&Op::UserInput { text: "last".into() }));
}

/// A message the agent could not make fit comes back (issue 26: a refused prompt stayed
/// in the session and every later one needed more room): it goes back in the input before
/// the message queued behind it and the draft, nothing queued is sent on its own, and
/// after the error a notice says where it went.
#[test]
fn a_message_the_agent_gives_back_returns_to_the_input_with_the_queue() {
    let workspace = TempDir::new();
    let mut app = app_in(&workspace);
    type_text(&mut app, "a long request");
    app.on_key(key(KeyCode::Enter));
    app.on_agent_event(Event::TurnStarted {
        text: "a long request".into(),
    });
    type_text(&mut app, "queued");
    app.on_key(key(KeyCode::Enter));
    type_text(&mut app, "a draft");
    app.on_agent_event(Event::PromptReturned {
        text: "a long request".into(),
    });
    app.on_agent_event(Event::Error {
        message: "the message was not sent, and was taken back out of the session: the prompt needs about 9751 tokens but the budget is 9000".into(),
    });
    assert_eq!(
        app.sent,
        vec![Op::UserInput {
            text: "a long request".into()
        }]
    );
    assert_eq!(app.input.text(), "a long request\n\nqueued\n\na draft");
    assert!(app.turn.queued().is_empty());
    assert!(!app.turn_busy());
    assert_eq!(
        app.turn.last_notice(),
        Some(&(
            NoticeKind::Info,
            "your message and the one queued behind it are back in the input".to_string()
        ))
    );
    assert_screen!("prompt_returned_80x24", screen(&mut app, 80, 24));
}

/// A key right after a resize acts on the layout it will be drawn in: F4 at 160 columns
/// before the first frame there shows the tools pane in the wide layout (not a popup left
/// behind for 80 columns), F4 again leaves it so, `q` puts it away, and back at 80 columns nothing covers
/// the conversation. A popup open at 80 columns joins the wide layout with the keys.
#[test]
fn side_panes_follow_a_resize_before_the_next_frame() {
    let workspace = TempDir::new();
    let mut app = app_in(&workspace);
    busy_session(&mut app);
    screen(&mut app, 80, 24);
    app.layout.side().timeline = false;
    app.resized(160);
    app.on_key(key(KeyCode::F(4)));
    assert_eq!(
        (
            app.layout.focus(),
            app.layout.side_popup(),
            app.layout.side().timeline
        ),
        (Pane::Timeline, None, true)
    );
    // Pressed again it stays (F4 never hides); `q` in the pane puts it away.
    app.on_key(key(KeyCode::F(4)));
    assert_eq!(
        (
            app.layout.focus(),
            app.layout.side_popup(),
            app.layout.side().timeline
        ),
        (Pane::Timeline, None, true)
    );
    app.on_key(key(KeyCode::Char('q')));
    assert_eq!(
        (
            app.layout.focus(),
            app.layout.side_popup(),
            app.layout.side().timeline
        ),
        (Pane::Input, None, false)
    );
    app.resized(80);
    let narrow = screen(&mut app, 80, 24);
    assert!(narrow.contains("Conversation"), "{narrow}");
    // Open over the conversation at 80 columns, then wide: part of the layout, focused.
    app.on_key(key(KeyCode::F(4)));
    assert_eq!(app.layout.side_popup(), Some(Pane::Timeline));
    app.resized(160);
    assert_eq!(
        (
            app.layout.focus(),
            app.layout.side_popup(),
            app.layout.side().timeline
        ),
        (Pane::Timeline, None, true)
    );
    // Narrow again with the keys in it: it opens over the conversation, still focused.
    app.resized(80);
    assert_eq!(
        (
            app.layout.focus(),
            app.layout.side_popup(),
            app.layout.side().timeline
        ),
        (Pane::Timeline, Some(Pane::Timeline), true)
    );
    assert!(screen(&mut app, 80, 24).contains("Tools · "));
}

/// A resumed session's refused message: recorded as given back, it is not counted as a
/// turn, and the transcript says it was never sent (a fresh-eyes tester saw it shown as a
/// message of theirs above the error, as if sent).
#[test]
fn a_resumed_refused_message_says_it_was_not_sent() {
    let workspace = TempDir::new();
    let mut app = app_in(&workspace);
    for event in [
        Event::TurnStarted { text: "hello".into() },
        Event::TurnComplete { text: "hi".into() },
        Event::TurnStarted {
            text: "too long".into(),
        },
        Event::PromptReturned {
            text: "too long".into(),
        },
        Event::Error {
            message: "the message was not sent, and was taken back out of the session".into(),
        },
    ] {
        app.apply_recorded(event, crate::app::Playback::Resume);
    }
    assert_eq!(app.figures.stats().turns, 1);
    assert!(
        app.input.is_empty(),
        "a recorded message is not given back to this input"
    );
    assert_screen!("resumed_refused_80x24", screen(&mut app, 80, 24));
}
