//! The workbench without a terminal: sequences of agent events and keys produce the
//! expected state and `Op`s, and every pane and overlay is snapshotted on ratatui's
//! `TestBackend` at 80×24 and 160×48.

mod support;

use std::time::Duration;

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use miniagent::config::ApprovalMode;
use miniagent::protocol::{
    ApprovalRule, CompactionRecord, Decision, Event, HistoryEntry, HistoryEntryKind, HistorySnapshot, Op,
    StopReason, SummaryDetail, ToolCallSummary, ToolOutcome,
};
use miniagent::tui::app::{APPROVAL_GRACE, App, Pane};
use miniagent::tui::inspector::HistoryInspector;
use miniagent::tui::overlay::{FirstRun, Overlay};
use miniagent::tui::render;
use miniagent::tui::theme::Theme;
use pretty_assertions::assert_eq;
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use serde_json::json;
use support::TempDir;

/// A workspace with a few files, and an app on it with a fixed clock.
fn app_in(workspace: &TempDir) -> App {
    workspace.write("src/main.rs", "fn main() {}\n");
    workspace.write("README.md", "# demo\n");
    workspace.write(".gitignore", "target/\n");
    let mut app = support::workbench::bare_app(workspace);
    app.on_agent_event(support::workbench::configured("/home/dev/project", None));
    app
}

fn key(code: KeyCode) -> KeyEvent {
    KeyEvent::new(code, KeyModifiers::NONE)
}

fn ctrl(c: char) -> KeyEvent {
    KeyEvent::new(KeyCode::Char(c), KeyModifiers::CONTROL)
}

fn type_text(app: &mut App, text: &str) {
    for c in text.chars() {
        app.on_key(key(KeyCode::Char(c)));
    }
}

/// Draws a frame as the event loop does (which tells the app it was drawn).
fn screen(app: &mut App, width: u16, height: u16) -> String {
    let mut terminal = Terminal::new(TestBackend::new(width, height)).unwrap();
    terminal.draw(|frame| render::draw(frame, app)).unwrap();
    app.frame_drawn();
    terminal.backend().to_string()
}

/// The front approval on screen for the grace period with no key pressed: keys answer it.
fn arm(app: &mut App) {
    app.frame_drawn();
    app.now += APPROVAL_GRACE;
    assert!(app.approval_armed());
}

/// A turn with thinking, markdown (CJK, a wide table, code), a finished tool call and a
/// running one.
fn busy_session(app: &mut App) {
    let now = app.now;
    let events = vec![
        Event::TurnStarted { text: "总结一下这个项目，然后运行测试。".into() },
        Event::StepStarted { step: 1, max_steps: 50 },
        Event::ThinkingDelta { delta: "The user wants a summary in Chinese and a test run.".into() },
        Event::TextDelta { delta: "这个项目是一个**终端代理**。".into() },
        Event::AssistantMessage {
            thinking: "The user wants a summary in Chinese and a test run.".into(),
            text: "这个项目是一个**终端代理**。它包含：\n\n- 对话窗格\n- 工具时间线\n\n| module | lines | owner | status | notes | since |\n|---|---|---|---|---|---|\n| agent | 812 | core team | stable | the loop and history | 2026-01 |\n| tui | 2400 | ui team | growing | panes, overlays, themes | 2026-11 |\n\n```rust\nfn main() { println!(\"hi\"); }\n```".into(),
            tool_calls: vec![ToolCallSummary { id: "t1".into(), name: "bash".into() }],
            stop_reason: StopReason::ToolUse,
        },
        Event::ToolCallRequested { id: "t1".into(), name: "bash".into(), arguments: json!({"command": "cargo test -q"}) },
        Event::ToolCallStarted { id: "t1".into(), name: "bash".into() },
        Event::ToolOutputDelta { id: "t1".into(), delta: "\u{1b}[32mrunning 12 tests\u{1b}[0m\ntest result: ok\n".into() },
        Event::ToolCallFinished {
            id: "t1".into(),
            name: "bash".into(),
            ok: true,
            outcome: ToolOutcome::Ok,
            duration_ms: 1234,
            output_preview: "running 12 tests".into(),
            output: "running 12 tests\ntest result: ok\n[exit code: 0]".into(),
        },
        Event::TokenUsage {
            context_tokens: 61_000,
            estimated: false,
            token_limit: 80_000,
            context_window: 200_000,
            input_tokens: 60_000,
            output_tokens: 1000,
            total_input_tokens: 120_000,
            total_output_tokens: 3_000,
        },
        Event::StepStarted { step: 2, max_steps: 50 },
        Event::ThinkingDelta { delta: "Tests pass; now read the README.".into() },
        Event::ToolCallRequested { id: "t2".into(), name: "read_file".into(), arguments: json!({"path": "README.md"}) },
        Event::ToolCallStarted { id: "t2".into(), name: "read_file".into() },
    ];
    for event in events {
        app.on_agent_event(event);
    }
    app.now = now + Duration::from_millis(4200);
}

#[test]
fn first_frame_shows_every_pane() {
    let workspace = TempDir::new();
    let mut app = app_in(&workspace);
    insta::assert_snapshot!("empty_160x48", screen(&mut app, 160, 48));
    insta::assert_snapshot!("empty_80x24", screen(&mut app, 80, 24));
}

#[test]
fn a_busy_session_at_both_sizes() {
    let workspace = TempDir::new();
    let mut app = app_in(&workspace);
    busy_session(&mut app);
    insta::assert_snapshot!("busy_160x48", screen(&mut app, 160, 48));
    insta::assert_snapshot!("busy_80x24", screen(&mut app, 80, 24));
    assert_eq!(app.status_text(), "running read_file for 4.2 s");
}

#[test]
fn approval_overlays_for_an_edit_and_a_command() {
    let workspace = TempDir::new();
    let mut app = app_in(&workspace);
    app.on_agent_event(Event::TurnStarted {
        text: "fix the greeting".into(),
    });
    // One reply with three calls: the dialog says which of them it asks about.
    app.on_agent_event(Event::AssistantMessage {
        thinking: String::new(),
        text: String::new(),
        tool_calls: ["e1", "b1", "r1"]
            .into_iter()
            .map(|id| ToolCallSummary {
                id: id.into(),
                name: "bash".into(),
            })
            .collect(),
        stop_reason: StopReason::ToolUse,
    });
    app.on_agent_event(Event::ToolCallRequested {
        id: "e1".into(),
        name: "edit_file".into(),
        arguments: json!({"path": "src/main.rs", "old_str": "hi", "new_str": "hello"}),
    });
    app.on_agent_event(Event::ApprovalRequested {
        id: "e1".into(),
        name: "edit_file".into(),
        preview: "edit src/main.rs (1 replacement)\n--- a/src/main.rs\n+++ b/src/main.rs\n@@ -1,3 +1,3 @@\n fn main() {\n-    println!(\"hi\");\n+    println!(\"hello\");\n }\n".into(),
        session_rule: Some(ApprovalRule::Tool {
            name: "edit_file".into(),
        }),
    });
    app.on_agent_event(Event::ToolCallRequested {
        id: "b1".into(),
        name: "bash".into(),
        arguments: json!({"command": "cargo fmt"}),
    });
    app.on_agent_event(Event::ApprovalRequested {
        id: "b1".into(),
        name: "bash".into(),
        preview: "$ cargo fmt\n(in /home/dev/project, timeout 120 s)".into(),
        session_rule: Some(ApprovalRule::Command {
            program: "cargo".into(),
        }),
    });
    // Just opened: arming, the keys not shown yet.
    insta::assert_snapshot!("approval_edit_arming_80x24", screen(&mut app, 80, 24));
    app.now += APPROVAL_GRACE;
    insta::assert_snapshot!("approval_edit_160x48", screen(&mut app, 160, 48));
    insta::assert_snapshot!("approval_edit_80x24", screen(&mut app, 80, 24));
    app.on_key(key(KeyCode::Char('y')));
    // The next request arms on its own.
    screen(&mut app, 80, 24);
    arm(&mut app);
    insta::assert_snapshot!("approval_command_160x48", screen(&mut app, 160, 48));
    insta::assert_snapshot!("approval_command_80x24", screen(&mut app, 80, 24));
    app.on_key(key(KeyCode::Char('n')));
    type_text(&mut app, "not now");
    // While the reason is typed, the bar shows the keys that apply to it, not `y approve`.
    insta::assert_snapshot!("approval_deny_reason_80x24", screen(&mut app, 80, 24));
}

#[test]
fn a_key_pressed_twice_answers_one_approval_and_types_nothing() {
    let workspace = TempDir::new();
    let mut app = app_in(&workspace);
    app.on_agent_event(Event::TurnStarted { text: "go".into() });
    for id in ["b1", "b2"] {
        app.on_agent_event(Event::ApprovalRequested {
            id: id.into(),
            name: "bash".into(),
            preview: "$ make".into(),
            session_rule: None,
        });
    }
    arm(&mut app);
    // `y y`: the second press lands while the next request arms.
    app.on_key(key(KeyCode::Char('y')));
    screen(&mut app, 80, 24);
    app.on_key(key(KeyCode::Char('y')));
    assert_eq!(
        app.outbox,
        vec![Op::Approval {
            id: "b1".into(),
            decision: Decision::Approve
        }]
    );
    assert_eq!(app.input.text(), "", "the second `y` is not typed into the input");
    app.now += APPROVAL_GRACE;
    app.on_key(key(KeyCode::Char('n')));
    app.on_key(key(KeyCode::Enter));
    assert_eq!(app.outbox.len(), 2);
    // With no approval left, typing goes to the input again.
    type_text(&mut app, "next");
    assert_eq!(app.input.text(), "next");
}

#[test]
fn a_call_that_cannot_be_approved_for_the_session_does_not_offer_it() {
    let workspace = TempDir::new();
    let mut app = app_in(&workspace);
    app.on_agent_event(Event::TurnStarted { text: "go".into() });
    app.on_agent_event(Event::ToolCallRequested {
        id: "c1".into(),
        name: "write_file".into(),
        arguments: json!({"path": ".miniagent/config.toml", "content": "x"}),
    });
    app.on_agent_event(Event::ApprovalRequested {
        id: "c1".into(),
        name: "write_file".into(),
        preview: "This changes miniagent's own settings: asked each time.\n\nreplace .miniagent/config.toml (1 bytes)".into(),
        session_rule: None,
    });
    screen(&mut app, 80, 24);
    arm(&mut app);
    insta::assert_snapshot!("approval_once_only_80x24", screen(&mut app, 80, 24));
    assert!(!app.on_key(key(KeyCode::Char('a'))));
    assert!(app.outbox.is_empty());
    app.on_key(key(KeyCode::Char('y')));
    assert_eq!(
        app.outbox,
        vec![Op::Approval {
            id: "c1".into(),
            decision: Decision::Approve
        }]
    );
}

#[test]
fn keys_typed_before_the_dialog_could_be_read_answer_nothing() {
    let workspace = TempDir::new();
    let mut app = app_in(&workspace);
    type_text(&mut app, "check the logs");
    app.on_key(key(KeyCode::Enter));
    app.on_agent_event(Event::TurnStarted {
        text: "check the logs".into(),
    });
    app.outbox.clear();
    // The person goes on typing their next message while the agent works.
    type_text(&mut app, "and the te");
    app.on_agent_event(Event::ApprovalRequested {
        id: "b1".into(),
        name: "bash".into(),
        preview: "$ rm -rf build".into(),
        session_rule: Some(ApprovalRule::Command { program: "rm".into() }),
    });
    // Keys already queued when the dialog opened, before it was ever drawn.
    type_text(&mut app, "sts a");
    assert!(!app.approval_armed());
    let start = app.now;
    screen(&mut app, 80, 24);
    // Drawn, but a key follows at once: still arming, and the wait starts over.
    app.now = start + Duration::from_millis(300);
    type_text(&mut app, "y");
    app.now = start + Duration::from_millis(600);
    assert!(!app.approval_armed());
    assert!(app.on_key(key(KeyCode::Char('a'))));
    assert!(app.outbox.is_empty(), "{:?}", app.outbox);
    assert_eq!(app.approvals.len(), 1);
    // Nothing typed was lost: it went to the input, where it was meant to go.
    assert_eq!(app.input.text(), "and the tests aya");
    insta::assert_snapshot!("approval_arming_160x48", screen(&mut app, 160, 48));
    // A quiet moment later the dialog is armed, and says so.
    app.now = start + Duration::from_millis(600) + APPROVAL_GRACE;
    assert!(app.approval_armed());
    let armed = screen(&mut app, 160, 48);
    assert!(
        armed.contains("● armed") && armed.contains("y approve"),
        "{armed}"
    );
    app.on_key(key(KeyCode::Char('n')));
    assert_eq!(app.input.text(), "and the tests aya");
    app.on_key(key(KeyCode::Enter));
    assert_eq!(
        app.outbox,
        vec![Op::Approval {
            id: "b1".into(),
            decision: Decision::Deny { reason: None }
        }]
    );
}

#[test]
fn approve_deny_with_reason_and_abort_send_the_right_ops() {
    let workspace = TempDir::new();
    let mut app = app_in(&workspace);
    app.on_agent_event(Event::TurnStarted { text: "go".into() });
    for id in ["a", "b", "c"] {
        app.on_agent_event(Event::ApprovalRequested {
            id: id.into(),
            name: "bash".into(),
            preview: "$ ls".into(),
            session_rule: None,
        });
    }
    arm(&mut app);
    // Keys the approval does not use change nothing.
    assert!(!app.on_key(key(KeyCode::Char('x'))));
    app.on_key(key(KeyCode::Char('y')));
    arm(&mut app);
    app.on_key(key(KeyCode::Char('n')));
    type_text(&mut app, "too risky");
    app.on_key(key(KeyCode::Backspace));
    app.on_key(key(KeyCode::Char('y')));
    app.on_key(key(KeyCode::Enter));
    arm(&mut app);
    app.on_key(key(KeyCode::Esc));
    assert_eq!(
        app.outbox,
        vec![
            Op::Approval {
                id: "a".into(),
                decision: Decision::Approve
            },
            Op::Approval {
                id: "b".into(),
                decision: Decision::Deny {
                    reason: Some("too risky".into())
                }
            },
            Op::Approval {
                id: "c".into(),
                decision: Decision::Abort
            },
        ]
    );
    assert!(app.approvals.is_empty());
    assert_eq!(app.status_text(), "interrupting…");
}

#[test]
fn esc_and_ctrl_c_interrupt_clear_and_quit() {
    let workspace = TempDir::new();
    let mut app = app_in(&workspace);
    app.on_agent_event(Event::TurnStarted {
        text: "long task".into(),
    });
    app.on_key(key(KeyCode::Esc));
    assert_eq!(app.outbox, vec![Op::Interrupt]);
    app.outbox.clear();
    app.on_agent_event(Event::TurnAborted {
        reason: "you interrupted the turn while tools were running".into(),
    });
    assert_eq!(app.status_text(), "ready");
    type_text(&mut app, "draft");
    app.on_key(ctrl('c'));
    assert!(app.input.is_empty() && !app.quit && app.outbox.is_empty());
    app.on_agent_event(Event::TurnStarted { text: "again".into() });
    app.on_key(ctrl('c'));
    assert_eq!(app.outbox, vec![Op::Interrupt]);
    app.on_agent_event(Event::TurnComplete { text: "done".into() });
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
    assert_eq!(app.queued, ["and then this"]);
    type_text(&mut app, "/approval full-auto");
    app.on_key(key(KeyCode::Enter));
    type_text(&mut app, "/compact");
    app.on_key(key(KeyCode::Enter));
    assert_eq!(
        app.outbox,
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
        app.last_notice.as_ref().map(|n| n.1.as_str()),
        Some("unknown command /frobnicate; /help lists them")
    );
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
    insta::assert_snapshot!("help_160x48", screen(&mut app, 160, 48));
    insta::assert_snapshot!("help_80x24", screen(&mut app, 80, 24));
    app.on_key(key(KeyCode::Esc));
    app.focus = Pane::Timeline;
    app.on_key(key(KeyCode::Up));
    app.on_key(key(KeyCode::Up));
    app.on_key(key(KeyCode::Enter));
    insta::assert_snapshot!("tool_detail_80x24", screen(&mut app, 80, 24));
    insta::assert_snapshot!("tool_detail_160x48", screen(&mut app, 160, 48));
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
    });
    app.submit("/approvals".into());
    app.on_key(key(KeyCode::Down));
    app.on_key(key(KeyCode::Char('d')));
    assert_eq!(
        app.outbox.last(),
        Some(&Op::RevokeApproval {
            rule: ApprovalRule::Tool {
                name: "write_file".into()
            }
        })
    );
    insta::assert_snapshot!("approvals_80x24", screen(&mut app, 80, 24));
    insta::assert_snapshot!("approvals_160x48", screen(&mut app, 160, 48));
    app.on_key(key(KeyCode::Esc));
    app.submit("/stats".into());
    insta::assert_snapshot!("stats_80x24", screen(&mut app, 80, 24));
    insta::assert_snapshot!("stats_160x48", screen(&mut app, 160, 48));
    app.on_key(key(KeyCode::Esc));

    let mut fresh = app_in(&workspace);
    fresh.overlays.push(Overlay::FirstRun(FirstRun {
        problem: "no API key: set MINIAGENT_API_KEY or ANTHROPIC_API_KEY, or name another variable with --api-key-env".into(),
        config_path: "/home/dev/.config/miniagent/config.toml".into(),
        local_server: Some(("http://127.0.0.1:11434/v1".into(), "llama3.2".into())),
        accepted: false,
    }));
    insta::assert_snapshot!("first_run_80x24", screen(&mut fresh, 80, 24));
    insta::assert_snapshot!("first_run_160x48", screen(&mut fresh, 160, 48));
    fresh.on_key(key(KeyCode::Enter));
    assert!(matches!(
        fresh.overlays.last(),
        Some(Overlay::FirstRun(FirstRun { accepted: true, .. }))
    ));
}

#[test]
fn narrow_side_panes_open_as_overlays_and_panes_maximise() {
    let workspace = TempDir::new();
    let mut app = app_in(&workspace);
    busy_session(&mut app);
    screen(&mut app, 80, 24);
    app.on_key(key(KeyCode::F(4)));
    assert_eq!(app.focus, Pane::Timeline);
    insta::assert_snapshot!("narrow_tools_80x24", screen(&mut app, 80, 24));
    app.on_key(key(KeyCode::F(4)));
    app.on_key(key(KeyCode::F(2)));
    insta::assert_snapshot!("narrow_files_80x24", screen(&mut app, 80, 24));
    app.on_key(key(KeyCode::Esc));
    screen(&mut app, 160, 48);
    app.focus = Pane::Thinking;
    app.on_key(key(KeyCode::F(5)));
    insta::assert_snapshot!("maximised_thinking_160x48", screen(&mut app, 160, 48));
    insta::assert_snapshot!("maximised_thinking_80x24", screen(&mut app, 80, 24));
    app.on_key(key(KeyCode::F(5)));
    assert_eq!(app.maximized, None);
    // Tab walks the visible panes in order (at full width).
    screen(&mut app, 160, 48);
    app.focus = Pane::Tree;
    let mut order = vec![app.focus];
    for _ in 0..5 {
        app.on_key(key(KeyCode::Tab));
        order.push(app.focus);
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
    app.focus = Pane::Conversation;
    app.on_key(key(KeyCode::PageUp));
    app.on_agent_event(Event::TextDelta {
        delta: "more\n".into(),
    });
    insta::assert_snapshot!("scrolled_up_80x24", screen(&mut app, 80, 24));
    app.on_key(key(KeyCode::PageUp));
    insta::assert_snapshot!("scrolled_up_160x48", screen(&mut app, 160, 48));
    app.on_key(key(KeyCode::End));
    assert!(app.conversation.is_following());
}

/// The output lines `out-NNN` on screen, as numbers.
fn visible_outputs(screen: &str) -> Vec<u32> {
    screen
        .split("out-")
        .skip(1)
        .filter_map(|rest| rest.get(..3)?.parse().ok())
        .collect()
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
    });
    app.focus = Pane::Timeline;
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
    insta::assert_snapshot!("tool_detail_paged_up_80x24", paged);
    assert_eq!(visible_outputs(&paged).last(), Some(&185), "{paged}");
    app.on_key(key(KeyCode::Up));
    assert_eq!(visible_outputs(&screen(&mut app, 80, 24)).last(), Some(&184));
    app.on_key(key(KeyCode::PageDown));
    assert_eq!(visible_outputs(&screen(&mut app, 80, 24)).last(), Some(&200));
    app.on_key(key(KeyCode::Home));
    app.on_key(key(KeyCode::PageDown));
    assert_eq!(visible_outputs(&screen(&mut app, 80, 24)).first(), Some(&11));
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
    insta::assert_snapshot!("queued_two_80x24", screen(&mut app, 80, 24));
    type_text(&mut app, "a draft");
    app.on_key(ctrl('c'));
    app.on_agent_event(Event::TurnAborted {
        reason: "interrupted by the user while the model was replying".into(),
    });
    // Nothing queued was sent, nothing was lost: both are back in the input, before the draft.
    assert_eq!(
        app.outbox,
        vec![Op::UserInput { text: "first".into() }, Op::Interrupt]
    );
    assert_eq!(app.input.text(), "second\n\nthird\n\na draft");
    assert!(!screen(&mut app, 80, 24).contains("Input · "));
    assert_eq!(
        app.last_notice.as_ref().map(|n| n.1.as_str()),
        Some("the turn was stopped; your 2 queued messages are back in the input (Enter sends them)")
    );
    insta::assert_snapshot!("queued_returned_80x24", screen(&mut app, 80, 24));

    // A turn that ends by itself sends the next queued message, one per turn.
    app.input.clear();
    app.outbox.clear();
    type_text(&mut app, "again");
    app.on_key(key(KeyCode::Enter));
    app.on_agent_event(Event::TurnStarted { text: "again".into() });
    type_text(&mut app, "next");
    app.on_key(key(KeyCode::Enter));
    type_text(&mut app, "last");
    app.on_key(key(KeyCode::Enter));
    assert_eq!(app.outbox, vec![Op::UserInput { text: "again".into() }]);
    app.on_agent_event(Event::TurnComplete { text: "ok".into() });
    assert_eq!(app.outbox.last(), Some(&Op::UserInput { text: "next".into() }));
    app.on_agent_event(Event::TurnStarted { text: "next".into() });
    assert!(screen(&mut app, 80, 24).contains("Input · 1 queued"));
    app.on_agent_event(Event::TurnComplete { text: "ok".into() });
    assert_eq!(app.outbox.last(), Some(&Op::UserInput { text: "last".into() }));
}

fn welcome(local_server: Option<(String, String)>) -> FirstRun {
    FirstRun {
        problem: "no API key: set MINIAGENT_API_KEY or ANTHROPIC_API_KEY, or name another variable with --api-key-env".into(),
        config_path: "/home/dev/.config/miniagent/config.toml".into(),
        local_server,
        accepted: false,
    }
}

#[test]
fn the_welcome_panel_closes_as_a_person_would_try_and_the_rest_works_without_a_key() {
    let workspace = TempDir::new();
    for close in [
        key(KeyCode::Esc),
        key(KeyCode::Char('q')),
        key(KeyCode::Enter),
        key(KeyCode::F(1)),
    ] {
        let mut app = app_in(&workspace);
        app.show_welcome(welcome(None));
        app.on_key(close);
        assert!(
            !app.overlays.iter().any(|o| matches!(o, Overlay::FirstRun(_))),
            "{close:?} closes the welcome panel"
        );
        if close.code == KeyCode::F(1) {
            assert!(matches!(app.overlays.last(), Some(Overlay::Help { .. })));
        }
    }
    let mut app = app_in(&workspace);
    app.show_welcome(welcome(None));
    insta::assert_snapshot!("welcome_80x24", screen(&mut app, 80, 24));
    app.on_key(key(KeyCode::Esc));
    // The files can be browsed.
    app.on_key(key(KeyCode::F(2)));
    screen(&mut app, 80, 24);
    assert_eq!(app.focus, Pane::Tree);
    app.on_key(key(KeyCode::Esc));
    // A prompt is not lost: it stays in the input, and the panel says how to set a key.
    type_text(&mut app, "hello there");
    app.on_key(key(KeyCode::Enter));
    assert!(!app.outbox.iter().any(|op| matches!(op, Op::UserInput { .. })));
    assert_eq!(app.input.text(), "hello there");
    assert!(matches!(app.overlays.last(), Some(Overlay::FirstRun(_))));
    assert_eq!(
        app.last_notice.as_ref().map(|n| n.1.as_str()),
        Some(
            "not sent: no model is set up yet. Set an API key (the panel says how) and start miniagent again"
        )
    );
    app.on_key(key(KeyCode::Esc));
    // `/resume` still opens the picker.
    app.input.clear();
    app.submit("/resume".into());
    assert!(matches!(app.overlays.last(), Some(Overlay::Sessions(_))));
    // With a local server found, Enter still uses it.
    let mut app = app_in(&workspace);
    app.show_welcome(welcome(Some((
        "http://127.0.0.1:11434/v1".into(),
        "llama3.2".into(),
    ))));
    app.on_key(key(KeyCode::Enter));
    assert!(matches!(
        app.overlays.last(),
        Some(Overlay::FirstRun(FirstRun { accepted: true, .. }))
    ));
}

#[test]
fn the_terminal_cursor_stands_where_the_input_types_and_only_there() {
    let workspace = TempDir::new();
    let mut app = app_in(&workspace);
    let mut terminal = Terminal::new(TestBackend::new(160, 48)).unwrap();
    type_text(&mut app, "你好 ab");
    terminal.draw(|frame| render::draw(frame, &mut app)).unwrap();
    let input = app.areas.get(Pane::Input).expect("the input is on screen");
    assert!(terminal.backend().cursor_visible());
    // Two wide characters, a space and two letters: seven columns in.
    assert_eq!(
        terminal.backend().cursor_position(),
        ratatui::layout::Position::new(input.x + 1 + 7, input.y + 1)
    );
    // A second line.
    app.on_key(KeyEvent::new(KeyCode::Enter, KeyModifiers::ALT));
    type_text(&mut app, "x");
    terminal.draw(|frame| render::draw(frame, &mut app)).unwrap();
    let input = app.areas.get(Pane::Input).expect("the input is on screen");
    assert_eq!(
        terminal.backend().cursor_position(),
        ratatui::layout::Position::new(input.x + 1 + 1, input.y + 2)
    );
    // Another pane focused, or an overlay on top: no cursor.
    app.focus = Pane::Conversation;
    terminal.draw(|frame| render::draw(frame, &mut app)).unwrap();
    assert!(!terminal.backend().cursor_visible());
    app.focus = Pane::Input;
    app.on_key(key(KeyCode::F(1)));
    terminal.draw(|frame| render::draw(frame, &mut app)).unwrap();
    assert!(!terminal.backend().cursor_visible());
    app.on_key(key(KeyCode::Esc));
    terminal.draw(|frame| render::draw(frame, &mut app)).unwrap();
    assert!(terminal.backend().cursor_visible());
}

#[test]
fn colours_follow_what_the_terminal_supports() {
    use miniagent::tui::palette::ColorDepth;
    use ratatui::style::Color;
    let workspace = TempDir::new();
    let kinds = |app: &mut App| {
        let mut terminal = Terminal::new(TestBackend::new(160, 48)).unwrap();
        terminal.draw(|frame| render::draw(frame, app)).unwrap();
        let mut rgb = 0;
        let mut indexed = 0;
        let mut any = 0;
        for cell in terminal.backend().buffer().content() {
            for color in [cell.fg, cell.bg] {
                match color {
                    Color::Rgb(..) => rgb += 1,
                    Color::Indexed(_) => indexed += 1,
                    Color::Reset => continue,
                    _ => {}
                }
                any += 1;
            }
        }
        (rgb, indexed, any)
    };
    let mut app = app_in(&workspace);
    busy_session(&mut app);
    let (rgb, _, _) = kinds(&mut app);
    assert!(rgb > 0, "the dark theme and the highlighted code are truecolour");
    app.color_depth = ColorDepth::Ansi256;
    let (rgb, indexed, _) = kinds(&mut app);
    assert_eq!(rgb, 0);
    assert!(indexed > 0);
    app.color_depth = ColorDepth::Ansi16;
    let (rgb, indexed, any) = kinds(&mut app);
    assert_eq!((rgb, indexed), (0, 0));
    assert!(any > 0, "still in colour");
    app.color_depth = ColorDepth::None;
    assert_eq!(kinds(&mut app), (0, 0, 0));
}

#[test]
fn help_keys_never_run_into_their_text() {
    let workspace = TempDir::new();
    let mut app = app_in(&workspace);
    app.on_key(key(KeyCode::F(1)));
    for (width, height) in [(80, 24), (160, 48)] {
        // Every page of the help.
        let mut seen = String::new();
        for _ in 0..12 {
            seen.push_str(&screen(&mut app, width, height));
            app.on_key(key(KeyCode::PageDown));
        }
        for joined in ["Endmove", "Ctrl-Jnew", "PgDnscroll", "MODEread"] {
            assert!(!seen.contains(joined), "{joined} at {width}x{height}:\n{seen}");
        }
        assert!(seen.contains("PgUp/PgDn/Home/End"), "{seen}");
        app.on_key(key(KeyCode::Home));
    }
}

#[test]
fn slash_theme_enter_opens_the_choice_and_the_choice_is_saved() {
    let workspace = TempDir::new();
    let config_dir = TempDir::new();
    config_dir.write(
        "config.toml",
        "# my settings\n[agent]\nmax_steps = 7 # keep\n\n[ui]\nshow_thinking = false\n",
    );
    let mut app = app_in(&workspace);
    app.config_dir = Some(config_dir.path().to_path_buf());
    type_text(&mut app, "/theme");
    app.on_key(key(KeyCode::Enter));
    assert!(
        matches!(app.overlays.last(), Some(Overlay::Themes { .. })),
        "one Enter opens the theme choice"
    );
    insta::assert_snapshot!("theme_choice_80x24", screen(&mut app, 80, 24));
    app.on_key(key(KeyCode::Down));
    app.on_key(key(KeyCode::Enter));
    assert_eq!(app.theme.name, "light");
    assert!(app.overlays.is_empty());
    let saved = std::fs::read_to_string(config_dir.join("config.toml")).unwrap();
    assert_eq!(
        saved,
        "# my settings\n[agent]\nmax_steps = 7 # keep\n\n[ui]\ntheme = \"light\"\nshow_thinking = false\n"
    );
    // The next start reads it.
    let env = |_: &str| None;
    let config = miniagent::config::load(&miniagent::config::LoadOptions {
        config_dir: Some(config_dir.path().to_path_buf()),
        config_file: None,
        overrides: Default::default(),
        env: &env,
    })
    .unwrap();
    assert_eq!((config.ui.theme.as_str(), config.agent.max_steps), ("light", 7));
    // `/theme NAME` saves too; a config without `[ui]` gets one.
    std::fs::write(config_dir.join("config.toml"), "[agent]\nmax_steps = 7\n").unwrap();
    app.submit("/theme high-contrast".into());
    assert_eq!(
        std::fs::read_to_string(config_dir.join("config.toml")).unwrap(),
        "[agent]\nmax_steps = 7\n\n[ui]\ntheme = \"high-contrast\"\n"
    );
}

#[test]
fn slash_popup_and_tiny_sizes_do_not_break() {
    let workspace = TempDir::new();
    let mut app = app_in(&workspace);
    type_text(&mut app, "/");
    insta::assert_snapshot!("slash_popup_80x24", screen(&mut app, 80, 24));
    insta::assert_snapshot!("slash_popup_160x48", screen(&mut app, 160, 48));
    busy_session(&mut app);
    for (width, height) in [
        (1, 1),
        (2, 3),
        (10, 5),
        (40, 10),
        (119, 30),
        (120, 30),
        (300, 100),
    ] {
        screen(&mut app, width, height);
    }
}

#[test]
fn file_preview_overlay_at_both_sizes() {
    let workspace = TempDir::new();
    let mut app = app_in(&workspace);
    app.focus = Pane::Tree;
    screen(&mut app, 160, 48);
    // README.md is the third row (src/, .gitignore, README.md).
    app.on_key(key(KeyCode::Down));
    app.on_key(key(KeyCode::Down));
    app.on_key(key(KeyCode::Enter));
    assert!(matches!(app.overlays.last(), Some(Overlay::FilePreview(_))));
    insta::assert_snapshot!("file_preview_160x48", screen(&mut app, 160, 48));
    insta::assert_snapshot!("file_preview_80x24", screen(&mut app, 80, 24));
    app.on_key(key(KeyCode::Esc));
    assert!(app.overlays.is_empty());
}

#[test]
fn monochrome_theme_has_no_colours() {
    let workspace = TempDir::new();
    let mut app = app_in(&workspace);
    app.theme = Theme::monochrome();
    busy_session(&mut app);
    let mut terminal = Terminal::new(TestBackend::new(120, 30)).unwrap();
    terminal.draw(|frame| render::draw(frame, &mut app)).unwrap();
    let buffer = terminal.backend().buffer();
    for cell in buffer.content() {
        assert_eq!(
            cell.fg,
            ratatui::style::Color::Reset,
            "coloured cell {:?}",
            cell.symbol()
        );
        assert_eq!(
            cell.bg,
            ratatui::style::Color::Reset,
            "coloured cell {:?}",
            cell.symbol()
        );
    }
}

/// Entries from (kind, title, tokens, body); an empty title repeats the body.
fn entries(items: &[(HistoryEntryKind, &str, u64, &str)]) -> Vec<HistoryEntry> {
    items
        .iter()
        .map(|&(kind, title, tokens, body)| HistoryEntry {
            kind,
            title: if title.is_empty() { body } else { title }.into(),
            tokens,
            body: body.into(),
            summary: None,
        })
        .collect()
}

/// The session's compactions: prompt before and after, messages `start..end`, fallback.
const COMPACTIONS: [(u64, u64, u64, u64, bool); 2] =
    [(75_400, 41_600, 1, 12, true), (48_200, 19_100, 12, 26, false)];

/// A prompt after two compactions: a fallback digest, a model summary, then the live
/// messages (a masked tool result among them, and CJK text).
fn summarized_history() -> HistorySnapshot {
    use HistoryEntryKind::{Assistant, Summary, ToolResults, User};
    let summary = |title: &str, tokens, body: &str, detail| HistoryEntry {
        kind: Summary,
        title: title.into(),
        tokens,
        body: body.into(),
        summary: Some(detail),
    };
    let digest = summary(
        "summary of messages 1–11 (digest): 36100 → 2350 tokens",
        2_350,
        "[digest of steps 1–11; the summary call failed]\n- user: add a --json flag to `report` and keep the table output as the default\n- read_file src/report.rs (412 lines)\n- edit_file src/report.rs: added `Format::{Table, Json}` and `--json`\n- bash `cargo test -q report`: 2 failed (report::tests::json_has_totals, report::tests::empty_rows)",
        SummaryDetail {
            start: 1,
            end: 12,
            tokens_before: 36_100,
            fallback: true,
            originals: entries(&[
                (
                    User,
                    "",
                    38,
                    "Add a --json flag to the report command; keep the table as the default.",
                ),
                (
                    Assistant,
                    "I'll read the report module first. · calls read_file",
                    164,
                    "[thinking]\nThe flag belongs in the CLI struct; the formatting lives in report.rs.\n[/thinking]\nI'll read the report module first.\n→ read_file {\"path\":\"src/report.rs\"}",
                ),
                (
                    ToolResults,
                    "1 tool result",
                    5_210,
                    "← read_file result:\n//! Monthly reports: rows, totals and the table printer.\n\npub struct Report {\n\tpub rows: Vec<Row>,\n}\n… (408 more lines)",
                ),
            ]),
        },
    );
    let summarized = summary(
        "summary of messages 12–25: 27400 → 1870 tokens",
        1_870,
        "The JSON output now carries per-row totals and a grand total; both failing tests pass. `empty_rows` needed `rows: []` instead of `null`. Remaining: the README still documents only the table output.",
        SummaryDetail {
            start: 12,
            end: 26,
            tokens_before: 27_400,
            fallback: false,
            originals: {
                // Summaries nest: this one absorbed an earlier one, which opens on its own.
                let earlier = summary(
                    "earlier summary of messages 13–18: 9800 → 640 tokens",
                    640,
                    "Fixed the totals (`totals: Some(totals)` in src/report.rs); json_has_totals passes, empty_rows still fails.",
                    SummaryDetail {
                        start: 12,
                        end: 18,
                        tokens_before: 9_800,
                        fallback: false,
                        originals: entries(&[
                            (
                                Assistant,
                                "message 13 · Two tests fail; fixing the totals first. · calls edit_file",
                                412,
                                "Two tests fail; fixing the totals first.\n→ edit_file {\"path\":\"src/report.rs\",\"old_str\":\"totals: None\",\"new_str\":\"totals: Some(totals)\"}",
                            ),
                            (
                                ToolResults,
                                "message 14 · 1 tool result",
                                96,
                                "← edit_file result:\nedited src/report.rs (1 replacement)",
                            ),
                        ]),
                    },
                );
                let mut originals = vec![earlier];
                originals.extend(entries(&[
                    (
                        Assistant,
                        "message 19 · empty_rows wants an empty list. · calls edit_file",
                        230,
                        "empty_rows wants an empty list.\n→ edit_file {\"path\":\"src/report.rs\",\"old_str\":\"rows: None\",\"new_str\":\"rows: Vec::new()\"}",
                    ),
                    (
                        ToolResults,
                        "message 20 · 1 tool result",
                        96,
                        "← edit_file result:\nedited src/report.rs (1 replacement)",
                    ),
                ]));
                originals
            },
        },
    );
    let mut all = vec![digest, summarized];
    all.extend(entries(&[
        (User, "", 21, "now update the README and run the whole suite"),
        (Assistant, "Running the suite before touching the docs. · calls bash, read_file", 236, "[thinking]\nRun everything first so the README describes working behaviour.\n[/thinking]\nRunning the suite before touching the docs.\n→ bash {\"command\":\"cargo test -q\"}\n→ read_file {\"path\":\"README.md\"}"),
        (ToolResults, "2 tool results, 1 masked", 2_940, "← bash result:\n[result omitted to save context: 18.2k tokens of `cargo test -q` output; the model saw it at step 27]\n← read_file result:\n# report\n\nPrints monthly reports as a table."),
        (Assistant, "测试全部通过。我来更新 README，加入 --json 的说明。 · calls edit_file", 188, "测试全部通过。我来更新 README，加入 --json 的说明。\n→ edit_file {\"path\":\"README.md\",\"old_str\":\"as a table.\",\"new_str\":\"as a table, or as JSON with --json.\"}"),
        (ToolResults, "1 tool result", 31, "← edit_file result:\nedited README.md (1 replacement)"),
    ]));
    let named = |pairs: &[(&str, u64)]| pairs.iter().map(|&(name, n)| (name.to_string(), n)).collect();
    HistorySnapshot {
        entries: all,
        prompt_tokens: 19_400,
        by_role: named(&[
            ("assistant", 824),
            ("summaries", 4_220),
            ("tool results", 2_971),
            ("user", 21),
        ]),
        by_tool: named(&[("bash", 1_020), ("edit_file", 31), ("read_file", 1_920)]),
        compactions: COMPACTIONS
            .iter()
            .map(
                |&(tokens_before, tokens_after, start, end, fallback)| CompactionRecord {
                    tokens_before,
                    tokens_after,
                    start,
                    end,
                    fallback,
                },
            )
            .collect(),
        masked_results: 3,
    }
}

/// Two compactions as the agent reports them.
fn two_compactions(app: &mut App) {
    for (before, after, start, end, fallback) in COMPACTIONS {
        app.on_agent_event(Event::CompactionStarted {
            reason: format!("summarizing messages {start}–{}", end - 1),
        });
        app.on_agent_event(Event::ContextCompacted {
            tokens_before: before,
            tokens_after: after,
            summary: "…".into(),
            start,
            end,
            fallback,
        });
    }
}

fn inspector(app: &App) -> Option<&HistoryInspector> {
    match app.overlays.last() {
        Some(Overlay::History(inspector)) => Some(inspector),
        _ => None,
    }
}

#[test]
fn f6_and_slash_history_open_the_inspector_and_ask_for_a_snapshot() {
    let workspace = TempDir::new();
    let mut app = app_in(&workspace);
    app.on_key(key(KeyCode::F(6)));
    assert_eq!(app.outbox, vec![Op::InspectHistory]);
    assert_eq!(inspector(&app).map(|i| i.waiting), Some(true));
    assert!(screen(&mut app, 80, 24).contains("loading the history…"));
    app.on_key(key(KeyCode::Esc));
    assert!(app.overlays.is_empty());

    // The snapshot goes stale: every opening asks again.
    app.on_agent_event(Event::HistorySnapshot {
        snapshot: summarized_history(),
    });
    type_text(&mut app, "/history");
    app.on_key(key(KeyCode::Enter));
    assert_eq!(app.outbox, vec![Op::InspectHistory, Op::InspectHistory]);
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
    app.outbox.clear();
    app.on_agent_event(Event::ContextCompacted {
        tokens_before: 30_000,
        tokens_after: 12_000,
        summary: "…".into(),
        start: 26,
        end: 30,
        fallback: false,
    });
    assert_eq!(app.outbox, vec![Op::InspectHistory]);
    assert_eq!(inspector(&app).map(|i| i.waiting), Some(true));
    app.on_key(key(KeyCode::Char('q')));
    assert!(app.overlays.is_empty());
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
    insta::assert_snapshot!("history_80x24", screen(&mut app, 80, 24));
    insta::assert_snapshot!("history_160x48", screen(&mut app, 160, 48));
    app.on_key(key(KeyCode::Tab));
    insta::assert_snapshot!("history_originals_80x24", screen(&mut app, 80, 24));
    insta::assert_snapshot!("history_originals_160x48", screen(&mut app, 160, 48));
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
fn stats_show_the_history_figures() {
    let workspace = TempDir::new();
    let mut app = app_in(&workspace);
    busy_session(&mut app);
    two_compactions(&mut app);
    app.submit("/stats".into());
    assert_eq!(app.outbox, vec![Op::InspectHistory]);
    app.on_agent_event(Event::HistorySnapshot {
        snapshot: summarized_history(),
    });
    insta::assert_snapshot!("stats_history_80x24", screen(&mut app, 80, 24));
    insta::assert_snapshot!("stats_history_160x48", screen(&mut app, 160, 48));
    let narrow = screen(&mut app, 60, 24);
    assert!(narrow.contains("prompt by role"), "{narrow}");
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
    assert_eq!(app.tokens.compactions, 2);
    assert_eq!(app.tokens.context_tokens, 19_100);
    let last_row = |text: String| text.lines().last().unwrap_or_default().to_string();
    insta::assert_snapshot!("status_compactions_80x24", last_row(screen(&mut app, 80, 24)));
    insta::assert_snapshot!("status_compactions_160x48", last_row(screen(&mut app, 160, 48)));
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
        arguments,
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
    insta::assert_snapshot!("failed_and_denied_80x24", screen(&mut app, 80, 24));
    insta::assert_snapshot!("failed_and_denied_160x48", screen(&mut app, 160, 48));
    // The detail view gives the run time, and the wait for approval apart from it.
    app.focus = Pane::Timeline;
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
    let detail = |app: &mut App, id: &str| {
        app.overlays.push(Overlay::ToolDetail {
            call_id: id.into(),
            scroll: Default::default(),
        });
        let mut terminal = Terminal::new(TestBackend::new(100, 30)).unwrap();
        terminal.draw(|frame| render::draw(frame, app)).unwrap();
        app.overlays.pop();
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
        },
        Event::ToolCallFinished {
            id: "r4".into(),
            name: "read_file".into(),
            ok: false,
            outcome: ToolOutcome::Refused,
            duration_ms: 0,
            output_preview: refusal.into(),
            output: refusal.into(),
        },
    ] {
        app.on_agent_event(event);
    }
    let text = screen(&mut app, 100, 30);
    assert!(
        text.contains("⊘ read_file a.txt  refused: the same call a fourth time in a row"),
        "{text}"
    );
    app.overlays.push(Overlay::ToolDetail {
        call_id: "r4".into(),
        scroll: Default::default(),
    });
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
    insta::assert_snapshot!("history_nested_originals_80x24", screen(&mut app, 80, 24));
    insta::assert_snapshot!("history_nested_originals_160x48", screen(&mut app, 160, 48));
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
    });
    let last_row = |text: String| text.lines().last().unwrap_or_default().to_string();
    insta::assert_snapshot!(
        "gauge_before_first_request_80x24",
        last_row(screen(&mut app, 80, 24))
    );
    let status = last_row(screen(&mut app, 160, 48));
    assert!(status.contains("~2.1k/80k 3%"), "{status}");
    app.submit("/stats".into());
    let stats = screen(&mut app, 160, 48);
    assert!(stats.contains("2.1k of 80k tokens"), "{stats}");
}
