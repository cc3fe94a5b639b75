//! The workbench without a terminal: sequences of agent events and keys produce the
//! expected state and `Op`s, and every pane and overlay is snapshotted on ratatui's
//! `TestBackend` at 80×24 and 160×48.

use crate::tests::support;
use crate::tests::support::{Bench, key};

use std::time::Duration;

use crate::app::{APPROVAL_GRACE, Action, App, Pane};
use crate::layers::file_preview::FilePreviewLayer;
use crate::layers::first_run::FirstRun;
use crate::layers::history::HistoryInspector;
use crate::layers::sessions::SessionPicker;
use crate::layers::tool_detail::ToolDetail;
use crate::render;
use crate::theme::Theme;
use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use miniagent_protocol::ApprovalMode;
use miniagent_protocol::{
    ApprovalRule, CompactionRecord, Decision, Event, HistoryEntry, HistoryEntryKind, HistorySnapshot, Op,
    StopReason, SummaryDetail, ToolCallSummary, ToolOutcome,
};
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use serde_json::json;
use support::TempDir;

/// A workspace with a few files, and an app on it with a fixed clock.
fn app_in(workspace: &TempDir) -> Bench {
    workspace.write("src/main.rs", "fn main() {}\n");
    workspace.write("README.md", "# demo\n");
    workspace.write(".gitignore", "target/\n");
    let mut app = support::bare_app(workspace);
    app.on_agent_event(support::configured("/home/dev/project", None));
    app
}

fn ctrl(c: char) -> KeyEvent {
    KeyEvent::new(KeyCode::Char(c), KeyModifiers::CONTROL)
}

fn type_text(app: &mut Bench, text: &str) {
    for c in text.chars() {
        app.on_key(key(KeyCode::Char(c)));
    }
}

/// The app drawn, as the event loop draws it: the frame counts as shown (an approval
/// starts arming).
fn screen(app: &mut Bench, width: u16, height: u16) -> String {
    let text = support::screen(app, width, height);
    app.frame_drawn();
    text
}

/// A `cargo ARGS…` command waiting for approval, `a` covering cargo for the session.
fn cargo_approval(id: &str, args: &[&str]) -> Event {
    let argv: Vec<String> = std::iter::once("cargo")
        .chain(args.iter().copied())
        .map(String::from)
        .collect();
    let command = argv.join(" ");
    Event::ApprovalRequested {
        id: id.into(),
        name: "bash".into(),
        preview: format!("$ {command}\n(in /home/dev/project, timeout 120 s)"),
        session_rule: Some(ApprovalRule::Command {
            program: "cargo".into(),
        }),
        request: Some(miniagent_protocol::ApprovalRequest::Command {
            command,
            program: Some("cargo".into()),
            argv,
            cwd: "/home/dev/project".into(),
            timeout_s: Some(120),
            compound: false,
        }),
        notes: Vec::new(),
    }
}

/// The app showing a replay, paused at its start: no agent to ask.
fn paused_replay(app: &mut Bench) {
    app.replay = Some(miniagent_protocol::PlaybackStatus {
        state: miniagent_protocol::PlayState::Paused,
        speed: 1.0,
        played: 0,
        events: 0,
        position_ms: 0,
        length_ms: 0,
    });
}

/// The front approval on screen for the grace period with no key pressed: keys answer it.
fn arm(app: &mut Bench) {
    screen(app, 80, 24);
    app.now += APPROVAL_GRACE;
    assert!(app.approval_armed());
}

/// A turn with thinking, markdown (CJK, a wide table, code), a finished tool call and a
/// running one.
fn busy_session(app: &mut Bench) {
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
        Event::ToolCallRequested { id: "t1".into(), name: "bash".into(), arguments: json!({"command": "cargo test -q"}), summary: "cargo test -q".into(), kind: Default::default(), locations: Vec::new() },
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
            effects: Vec::new(),
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
            cache_read_tokens: 52_000,
            cache_write_tokens: 8_000,
            total_cache_read_tokens: 52_000,
            total_cache_write_tokens: 60_000,
            cost_usd: Some(0.4213),
        },
        Event::StepStarted { step: 2, max_steps: 50 },
        Event::ThinkingDelta { delta: "Tests pass; now read the README.".into() },
        Event::ToolCallRequested { id: "t2".into(), name: "read_file".into(), arguments: json!({"path": "README.md"}), summary: "README.md".into(), kind: Default::default(), locations: Vec::new() },
        Event::ToolCallStarted { id: "t2".into(), name: "read_file".into() },
        // What the agent reports last: its two steps' calls.
        Event::TurnUsage {
            model_calls: 2,
            input_tokens: 120_000,
            output_tokens: 3_000,
            cache_read_tokens: 52_000,
            cache_write_tokens: 60_000,
            cost_usd: Some(0.4213),
        },
    ];
    for event in events {
        app.on_agent_event(event);
    }
    app.now = now + Duration::from_millis(4200);
}

/// The output lines `out-NNN` on screen, as numbers.
fn visible_outputs(screen: &str) -> Vec<u32> {
    screen
        .split("out-")
        .skip(1)
        .filter_map(|rest| rest.get(..3)?.parse().ok())
        .collect()
}

fn welcome(local_server: Option<(String, String)>) -> FirstRun {
    FirstRun {
        problem: "no API key: set MINIAGENT_API_KEY or ANTHROPIC_API_KEY, or name another variable with --api-key-env".into(),
        config_path: "/home/dev/.config/miniagent/config.toml".into(),
        local_server,
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
        trimmed_results: 0,
        set_aside: Vec::new(),
    }
}

/// Two compactions as the agent reports them.
fn two_compactions(app: &mut Bench) {
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
    app.top::<HistoryInspector>()
}

/// Asserts against `snapshots/workbench__NAME.snap`, also from a submodule.
macro_rules! assert_screen {
    ($name:literal, $value:expr $(,)?) => {
        assert_screen_in!("workbench", $name, $value)
    };
}

#[path = "workbench/approvals.rs"]
mod approvals;
#[path = "workbench/contrast.rs"]
mod contrast;
#[path = "workbench/diff.rs"]
mod diff;
#[path = "workbench/display.rs"]
mod display;
#[path = "workbench/history.rs"]
mod history;
#[path = "workbench/input.rs"]
mod input;
#[path = "workbench/layers.rs"]
mod layers;
#[path = "workbench/mentions.rs"]
mod mentions;
#[path = "workbench/model.rs"]
mod model;
#[path = "workbench/modes.rs"]
mod modes;
#[path = "workbench/permissions.rs"]
mod permissions;
#[path = "workbench/plan.rs"]
mod plan;
#[path = "workbench/project_context.rs"]
mod project_context;
#[path = "workbench/reading.rs"]
mod reading;
#[path = "workbench/rewind.rs"]
mod rewind;
#[path = "workbench/seam.rs"]
mod seam;
