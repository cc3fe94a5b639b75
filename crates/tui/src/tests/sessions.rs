//! Recorded sessions in the workbench: the `/resume` picker, resuming a log (the panes
//! rebuilt from its events, the agent asked to continue it), and replay (a log played
//! back with no agent), snapshotted on ratatui's `TestBackend`.

use crate::tests::support;
use crate::tests::support::{Bench, key, screen};

/// Asserts against `snapshots/sessions__NAME.snap`, also from a submodule.
macro_rules! assert_screen {
    ($name:literal, $value:expr $(,)?) => {
        assert_screen_in!("sessions", $name, $value)
    };
}

#[path = "sessions/replay.rs"]
mod replay;

use std::path::PathBuf;
use std::time::{Duration, Instant};

use crate::app::App;
use crate::conversation::{Entry, NoticeKind};
use crate::layers::resume_question::ResumeQuestion;
use crate::layers::sessions::SessionPicker;
use crate::layers::tool_detail::ToolDetail;
use crate::theme::Theme;
use crossterm::event::KeyCode;
use miniagent_core::agent::history::{ContentBlock, Message, Role};
use miniagent_core::session::{self, FORMAT, Header, Record};
use miniagent_core::tools::output::{FINISHED_OUTPUT_BYTES, HeadTailBuffer};
use miniagent_protocol::{Decision, Event, Op, StopReason, ToolCallSummary, ToolOutcome};
use pretty_assertions::assert_eq;
use serde_json::json;
use support::Player;
use support::TempDir;

/// 2026-11-22T04:04:38Z, when the recorded sessions begin.
const T0: u64 = 1_795_320_278_000;
const WORKSPACE: &str = "/home/dev/project";

/// A workbench on a small workspace, in a session of its own, with `home` as its data folder.
fn app_in(workspace: &TempDir, home: &TempDir) -> Bench {
    workspace.write("src/main.rs", "fn main() {}\n");
    workspace.write("README.md", "# demo\n");
    let mut app = support::bare_app(workspace);
    app.places.sessions_dir = Some(home.join("sessions"));
    app.on_agent_event(support::configured(WORKSPACE, Some("20261123-090000-ffff")));
    app
}

fn header(id: &str, workspace: &str, created: &str) -> Header {
    Header {
        id: id.into(),
        created: created.into(),
        workspace: workspace.into(),
        model: "claude-test".into(),
        provider: "anthropic".into(),
        version: "0.1.0".into(),
        format: FORMAT,
        fixed_tokens: 1_200,
    }
}

fn ev(ts: u64, event: Event) -> Record {
    Record::Event { ts: T0 + ts, event }
}

fn history(ts: u64, from: usize, messages: Vec<Message>) -> Record {
    Record::Messages {
        ts: T0 + ts,
        from,
        messages,
    }
}

fn tool_use(text: &str, id: &str, name: &str, input: serde_json::Value) -> Message {
    Message {
        role: Role::Assistant,
        content: vec![
            ContentBlock::Text { text: text.into() },
            ContentBlock::ToolUse {
                id: id.into(),
                name: name.into(),
                input,
            },
        ],
    }
}

fn tool_result(id: &str, content: &str) -> Message {
    Message {
        role: Role::Tool,
        content: vec![ContentBlock::ToolResult {
            tool_use_id: id.into(),
            content: content.into(),
            is_error: false,
        }],
    }
}

fn usage(context: u64, total_in: u64, total_out: u64) -> Event {
    Event::TokenUsage {
        context_tokens: context,
        estimated: false,
        token_limit: 80_000,
        context_window: 200_000,
        input_tokens: context,
        output_tokens: 300,
        total_input_tokens: total_in,
        total_output_tokens: total_out,
        cache_read_tokens: 0,
        cache_write_tokens: 0,
        total_cache_read_tokens: 0,
        total_cache_write_tokens: 0,
        cost_usd: None,
    }
}

const PROMPT: &str = "把 README 翻译成中文，然后运行测试。";
const README: &str = "# demo\n\nA terminal workbench for an LLM agent.\n";

/// A turn as the agent records it, up to the moment the test run starts: a prompt in
/// Chinese, thinking, a file read, and an approved `bash` call.
fn turn_until_bash() -> Vec<Record> {
    vec![
        ev(
            0,
            Event::SessionConfigured {
                model: "claude-test".into(),
                provider: "anthropic".into(),
                workspace: WORKSPACE.into(),
                tools: Vec::new(),
                session_id: Some("20261122-040438-a1b2".into()),
                sandbox: miniagent_protocol::SandboxState::Enforced,
                endpoint: String::new(),
                instruction_files: Vec::new(),
            },
        ),
        ev(100, Event::TurnStarted { text: PROMPT.into() }),
        history(100, 0, vec![Message::user(PROMPT)]),
        ev(
            200,
            Event::StepStarted {
                step: 1,
                max_steps: 50,
            },
        ),
        ev(
            300,
            Event::ThinkingDelta {
                delta: "Read the README first, then translate it.".into(),
            },
        ),
        ev(
            900,
            Event::TextDelta {
                delta: "好的，我先读一下 README。".into(),
            },
        ),
        ev(
            1_000,
            Event::AssistantMessage {
                thinking: "Read the README first, then translate it.".into(),
                text: "好的，我先读一下 README。".into(),
                tool_calls: vec![ToolCallSummary {
                    id: "t1".into(),
                    name: "read_file".into(),
                }],
                stop_reason: StopReason::ToolUse,
            },
        ),
        ev(
            1_000,
            Event::ToolCallRequested {
                id: "t1".into(),
                name: "read_file".into(),
                arguments: json!({"path": "README.md"}),
                summary: String::new(),
                kind: Default::default(),
                locations: Vec::new(),
            },
        ),
        ev(
            1_050,
            Event::ToolCallStarted {
                id: "t1".into(),
                name: "read_file".into(),
            },
        ),
        ev(
            1_100,
            Event::ToolCallFinished {
                id: "t1".into(),
                name: "read_file".into(),
                ok: true,
                outcome: ToolOutcome::Ok,
                duration_ms: 12,
                output_preview: "# demo".into(),
                output: README.into(),
                effects: Vec::new(),
            },
        ),
        history(
            1_100,
            1,
            vec![
                tool_use(
                    "好的，我先读一下 README。",
                    "t1",
                    "read_file",
                    json!({"path": "README.md"}),
                ),
                tool_result("t1", README),
            ],
        ),
        ev(1_200, usage(2_400, 2_400, 300)),
        ev(
            1_300,
            Event::StepStarted {
                step: 2,
                max_steps: 50,
            },
        ),
        ev(
            2_000,
            Event::TextDelta {
                delta: "README 已翻译。现在运行测试。".into(),
            },
        ),
        ev(
            2_100,
            Event::AssistantMessage {
                thinking: String::new(),
                text: "README 已翻译。现在运行测试。".into(),
                tool_calls: vec![ToolCallSummary {
                    id: "t2".into(),
                    name: "bash".into(),
                }],
                stop_reason: StopReason::ToolUse,
            },
        ),
        ev(
            2_100,
            Event::ToolCallRequested {
                id: "t2".into(),
                name: "bash".into(),
                arguments: json!({"command": "cargo test -q"}),
                summary: String::new(),
                kind: Default::default(),
                locations: Vec::new(),
            },
        ),
        ev(
            2_150,
            Event::ApprovalRequested {
                id: "t2".into(),
                name: "bash".into(),
                preview: format!("$ cargo test -q\n(in {WORKSPACE})"),
                session_rule: None,
                request: None,
                notes: Vec::new(),
            },
        ),
        Record::Decision {
            ts: T0 + 4_000,
            id: "t2".into(),
            decision: Decision::Approve,
        },
        ev(
            4_000,
            Event::ToolCallStarted {
                id: "t2".into(),
                name: "bash".into(),
            },
        ),
    ]
}

/// The whole session: the tests pass and the turn completes.
fn finished_session() -> Vec<Record> {
    let mut records = turn_until_bash();
    let answer = "测试全部通过（12 个）。README 已翻译成中文。";
    records.extend([
        ev(
            6_300,
            Event::ToolCallFinished {
                id: "t2".into(),
                name: "bash".into(),
                ok: true,
                outcome: ToolOutcome::Ok,
                duration_ms: 2_300,
                output_preview: "test result: ok. 12 passed".into(),
                output: "test result: ok. 12 passed\n[exit code: 0]".into(),
                effects: Vec::new(),
            },
        ),
        history(
            6_300,
            3,
            vec![
                tool_use(
                    "README 已翻译。现在运行测试。",
                    "t2",
                    "bash",
                    json!({"command": "cargo test -q"}),
                ),
                tool_result("t2", "test result: ok. 12 passed\n[exit code: 0]"),
            ],
        ),
        ev(6_400, usage(3_100, 5_500, 700)),
        ev(
            6_500,
            Event::StepStarted {
                step: 3,
                max_steps: 50,
            },
        ),
        ev(7_000, Event::TextDelta { delta: answer.into() }),
        ev(
            7_100,
            Event::AssistantMessage {
                thinking: String::new(),
                text: answer.into(),
                tool_calls: Vec::new(),
                stop_reason: StopReason::EndTurn,
            },
        ),
        history(7_100, 5, vec![Message::assistant_text(answer)]),
        ev(7_200, usage(3_300, 8_800, 1_000)),
        ev(7_200, Event::TurnComplete { text: answer.into() }),
    ]);
    records
}

fn jsonl(header: &Header, records: &[Record]) -> String {
    let mut text = serde_json::to_string(&Record::Header(header.clone())).unwrap();
    text.push('\n');
    for record in records {
        text.push_str(&serde_json::to_string(record).unwrap());
        text.push('\n');
    }
    text
}

/// Writes a session log into `home`'s sessions folder.
fn record(home: &TempDir, header: &Header, records: &[Record], tail: &str) -> PathBuf {
    home.write(
        format!("sessions/{}.jsonl", header.id),
        jsonl(header, records) + tail,
    )
}

/// A session killed while `cargo test` ran, its last line cut in half.
fn killed_log(home: &TempDir) -> PathBuf {
    let header = header("20261122-040438-a1b2", WORKSPACE, "2026-11-22T04:04:38Z");
    record(
        home,
        &header,
        &turn_until_bash(),
        r#"{"kind":"event","ts":1795320284000,"ev"#,
    )
}

fn picker_sessions(home: &TempDir) {
    record(
        home,
        &header("20261122-040438-a1b2", WORKSPACE, "2026-11-22T04:04:38Z"),
        &finished_session(),
        "",
    );
    record(
        home,
        &header("20261123-090000-ffff", WORKSPACE, "2026-11-23T09:00:00Z"),
        &[
            ev(
                90_000_000,
                Event::TurnStarted {
                    text: "Fix the flaky test in tests/net.rs and explain why it was flaky".into(),
                },
            ),
            ev(
                90_000_100,
                Event::StepStarted {
                    step: 1,
                    max_steps: 50,
                },
            ),
            ev(90_000_900, usage(1_000, 1_000, 100)),
        ],
        "",
    );
    record(
        home,
        &header("20261121-120000-0c0c", "/home/dev/other", "2026-11-21T12:00:00Z"),
        &[ev(
            0,
            Event::TurnStarted {
                text: "another project's session".into(),
            },
        )],
        "",
    );
}

#[test]
fn the_resume_picker_lists_this_workspaces_sessions_newest_first() {
    let (workspace, home) = (TempDir::new(), TempDir::new());
    picker_sessions(&home);
    let mut app = app_in(&workspace, &home);
    app.submit("/resume".into());
    let Some(picker) = app.top::<SessionPicker>() else {
        panic!("the picker opens");
    };
    let ids: Vec<&str> = picker.shown().iter().map(|info| info.id.as_str()).collect();
    assert_eq!(ids, vec!["20261123-090000-ffff", "20261122-040438-a1b2"]);
    assert_screen_in!("sessions", "resume_picker_80x24", screen(&app, 80, 24));
    assert_screen_in!("sessions", "resume_picker_160x48", screen(&app, 160, 48));
    app.on_key(key(KeyCode::Tab));
    app.on_key(key(KeyCode::End));
    assert_screen_in!("sessions", "resume_picker_all_80x24", screen(&app, 80, 24));
    assert_screen_in!("sessions", "resume_picker_all_160x48", screen(&app, 160, 48));
}

#[test]
fn an_empty_resume_picker_says_so() {
    let (workspace, home) = (TempDir::new(), TempDir::new());
    let mut app = app_in(&workspace, &home);
    app.submit("/resume".into());
    assert_screen_in!("sessions", "resume_picker_empty_80x24", screen(&app, 80, 24));
    assert_screen_in!("sessions", "resume_picker_empty_160x48", screen(&app, 160, 48));
    app.on_key(key(KeyCode::Enter));
    assert_eq!(app.sent, vec![]);
    app.on_key(key(KeyCode::Esc));
    assert!(app.layers.is_empty());
}

#[test]
fn resuming_from_the_picker_starts_a_fresh_view_from_the_log_and_asks_the_agent() {
    let (workspace, home) = (TempDir::new(), TempDir::new());
    picker_sessions(&home);
    let mut app = app_in(&workspace, &home);
    app.on_agent_event(Event::TurnStarted {
        text: "the session left behind".into(),
    });
    app.on_agent_event(Event::TurnComplete { text: String::new() });
    app.submit("/resume".into());
    // The newest is the session we are in: choosing it changes nothing.
    app.on_key(key(KeyCode::Enter));
    assert_eq!(
        app.turn.last_notice().cloned(),
        Some((
            NoticeKind::Info,
            "session 20261123-090000-ffff is the one you are in".into()
        ))
    );
    app.submit("/resume".into());
    app.on_key(key(KeyCode::Down));
    app.on_key(key(KeyCode::Enter));
    let path = home.join("sessions/20261122-040438-a1b2.jsonl");
    assert_eq!(app.sent, vec![Op::Resume { path: path.clone() }]);
    assert!(app.layers.is_empty());
    // The view changes only once the agent sends the session back.
    assert_eq!(
        app.conversation.entries().first(),
        Some(&Entry::User("the session left behind".into()))
    );
    let bytes = std::fs::read(&path).unwrap();
    let loaded = session::load::parse(&bytes, "20261122-040438-a1b2.jsonl").unwrap();
    agent_resumes(&mut app, &loaded);
    assert_eq!(
        app.conversation.entries().first(),
        Some(&Entry::User(PROMPT.into()))
    );
    assert_eq!(
        (
            app.figures.stats().turns,
            app.figures.stats().steps,
            app.timeline.calls().len()
        ),
        (1, 3, 2)
    );
    assert_eq!(
        (
            app.figures.tokens().total_input,
            app.figures.tokens().total_output
        ),
        (8_800, 1_000)
    );
    assert!(!app.turn.running() && !app.animating());
}

#[test]
fn a_resume_is_refused_while_a_turn_runs() {
    let (workspace, home) = (TempDir::new(), TempDir::new());
    picker_sessions(&home);
    let mut app = app_in(&workspace, &home);
    app.on_agent_event(Event::TurnStarted { text: "busy".into() });
    app.resume_session(&home.join("sessions/20261122-040438-a1b2.jsonl"));
    assert_eq!(app.sent, vec![]);
    assert_eq!(
        app.conversation.entries().first(),
        Some(&Entry::User("busy".into()))
    );
    assert!(
        matches!(&app.turn.last_notice(), Some((NoticeKind::Warning, text)) if text.starts_with("a turn is running"))
    );
}

#[test]
fn a_killed_session_resumes_idle_with_its_warning_shown_once() {
    let (workspace, home) = (TempDir::new(), TempDir::new());
    // Read under its bare name, so the warning reads the same on every machine.
    let bytes = std::fs::read(killed_log(&home)).unwrap();
    let loaded = session::load::parse(&bytes, "20261122-040438-a1b2.jsonl").unwrap();
    assert_eq!(loaded.warnings.len(), 1);
    let mut app = app_in(&workspace, &home);
    let notices = |app: &App| {
        app.conversation
            .entries()
            .iter()
            .filter(|entry| matches!(entry, Entry::Notice { .. }))
            .count()
    };
    let before = notices(&app);
    agent_resumes(&mut app, &loaded);
    assert!(!app.turn.running() && !app.animating());
    assert!(app.approvals_waiting() == 0);
    // The log's warning, the turn it left open and the agent's word that it resumed,
    // once each.
    assert_eq!(notices(&app), before + 3);
    let warned = app
        .conversation
        .entries()
        .iter()
        .filter(|entry| matches!(entry, Entry::Notice { text, .. } if *text == loaded.warnings[0]))
        .count();
    assert_eq!(warned, 1);
    assert_eq!(
        app.session.view().session_id.as_deref(),
        Some("20261122-040438-a1b2")
    );
    assert_screen_in!("sessions", "resumed_80x24", screen(&app, 80, 24));
    assert_screen_in!("sessions", "resumed_160x48", screen(&app, 160, 48));
    // Later events are shown as usual.
    app.on_agent_event(Event::Notice {
        message: loaded.warnings[0].clone(),
    });
    assert_eq!(notices(&app), before + 4);
}

/// A log recorded with another step limit: the title bar says this run's limit from the
/// moment the session is resumed, not the log's until the first turn.
#[test]
fn a_resumed_session_shows_this_runs_step_limit() {
    let (workspace, home) = (TempDir::new(), TempDir::new());
    let records: Vec<Record> = finished_session()
        .into_iter()
        .map(|record| match record {
            Record::Event {
                ts,
                event: Event::StepStarted { step, .. },
            } => Record::Event {
                ts,
                event: Event::StepStarted {
                    step,
                    max_steps: 10_010,
                },
            },
            other => other,
        })
        .collect();
    let header = header("20261122-040438-c3d4", WORKSPACE, "2026-11-22T04:04:38Z");
    let loaded = session::load::parse(jsonl(&header, &records).as_bytes(), "x.jsonl").unwrap();
    let mut app = app_in(&workspace, &home);
    let limit = app.session.max_steps();
    assert_ne!(limit, 10_010);
    agent_resumes(&mut app, &loaded);
    assert_eq!(app.session.max_steps(), limit);
    let shown = screen(&app, 160, 48);
    let title = shown.lines().next().unwrap_or_default();
    assert!(title.contains(&format!("max {limit} steps")), "{title}");
    assert!(!shown.contains("10010"), "{shown}");
}

/// What the agent sends when it takes up `loaded` ([`Op::Resume`]): the recorded events,
/// the closing of what it left open, the log's warnings, and that it resumed.
fn agent_resumes(app: &mut Bench, loaded: &session::Loaded) {
    app.on_agent_event(Event::HistoryRestored {
        events: loaded.events().map(|(_, event)| event.clone()).collect(),
    });
    for event in loaded.closing_events() {
        app.on_agent_event(event);
    }
    for warning in &loaded.warnings {
        app.on_agent_event(Event::Notice {
            message: warning.clone(),
        });
    }
    app.on_agent_event(Event::SessionResumed {
        id: loaded.header.id.clone(),
        messages: 5,
        turns: 1,
    });
}

#[test]
fn a_log_from_another_workspace_or_from_outside_the_data_folder_is_asked_about() {
    let (workspace, home) = (TempDir::new(), TempDir::new());
    picker_sessions(&home);
    let mut app = app_in(&workspace, &home);
    // Another workspace's session, from the every-workspace list: asked first.
    app.submit("/resume".into());
    app.on_key(key(KeyCode::Tab));
    app.on_key(key(KeyCode::End));
    app.on_key(key(KeyCode::Enter));
    let other = home.join("sessions/20261121-120000-0c0c.jsonl");
    assert!(matches!(app.top::<ResumeQuestion>(), Some(q) if q.elsewhere && q.own));
    assert_eq!(app.sent, vec![]);
    // Like an approval, the question takes keys only after a quiet moment on screen.
    app.frame_drawn();
    app.on_key(key(KeyCode::Char('y')));
    assert_eq!(
        app.sent,
        vec![],
        "a key typed as the question opened answers nothing"
    );
    app.now += crate::app::TYPING_QUIET;
    app.input.clear();
    assert_screen_in!("sessions", "resume_elsewhere_80x24", screen(&app, 80, 24));
    assert_screen_in!("sessions", "resume_elsewhere_160x48", screen(&app, 160, 48));
    // n: nothing is resumed.
    app.on_key(key(KeyCode::Char('n')));
    app.settle();
    assert!(app.layers.is_empty());
    assert_eq!(app.sent, vec![]);
    // y: it continues here.
    app.resume_session(&other);
    screen(&app, 80, 24);
    app.frame_drawn();
    app.now += crate::app::APPROVAL_GRACE;
    app.on_key(key(KeyCode::Char('y')));
    app.settle();
    assert!(app.layers.is_empty());
    assert_eq!(app.sent, vec![Op::Resume { path: other }]);

    // A log from outside the data folder, even one naming this workspace.
    let mut app = app_in(&workspace, &home);
    let header = header("20261120-000000-e711", WORKSPACE, "2026-11-20T00:00:00Z");
    let crafted = workspace.write("evil.jsonl", jsonl(&header, &finished_session()));
    app.resume_session(&crafted);
    assert!(matches!(app.top::<ResumeQuestion>(), Some(q) if !q.elsewhere && !q.own));
    // The temporary folder's name changes from run to run; the snapshot shows a fixed one.
    if let Some(question) = app.top_mut::<ResumeQuestion>() {
        question.path = PathBuf::from("/home/dev/Downloads/evil.jsonl");
    }
    screen(&app, 80, 24);
    app.frame_drawn();
    app.now += crate::app::APPROVAL_GRACE;
    assert_screen_in!("sessions", "resume_foreign_log_80x24", screen(&app, 80, 24));
    assert_screen_in!("sessions", "resume_foreign_log_160x48", screen(&app, 160, 48));
    app.on_key(key(KeyCode::Esc));
    assert!(app.layers.is_empty());
    assert_eq!(app.sent, vec![]);
}

/// The workbench half of the top-level `history_integrity` test of a resume (whose half
/// checks the agent sends the recorded session back once, in one `HistoryRestored`,
/// before the log's warnings, with `SessionResumed` last): fed those events, the
/// workbench fills its panes from them alone and shows each warning once.
#[test]
fn a_resumed_session_is_shown_from_the_agents_events_alone_each_warning_once() {
    let (workspace, home) = (TempDir::new(), TempDir::new());
    let header = header("20261122-040438-a1b2", WORKSPACE, "2026-11-22T04:04:38Z");
    let path = record(
        &home,
        &header,
        &[
            ev(
                0,
                Event::TurnStarted {
                    text: "list the files".into(),
                },
            ),
            ev(
                1,
                Event::ToolCallRequested {
                    id: "a".into(),
                    name: "bash".into(),
                    arguments: json!({ "command": "ls" }),
                    summary: "ls".into(),
                    kind: Default::default(),
                    locations: Vec::new(),
                },
            ),
            history(
                1,
                0,
                vec![
                    Message::user("list the files"),
                    tool_use("", "a", "bash", json!({ "command": "ls" })),
                ],
            ),
        ],
        // The process that recorded it was killed mid-line.
        r#"{"kind":"event","ts":2,"ev"#,
    );
    let loaded = session::load(&path).unwrap();
    assert_eq!(loaded.warnings.len(), 1, "{:?}", loaded.warnings);
    let warning = loaded.warnings[0].clone();
    let mut app = support::bare_app(&workspace);
    app.on_agent_event(Event::TurnStarted {
        text: "the session left behind".into(),
    });
    app.on_agent_event(Event::TurnComplete { text: String::new() });
    agent_resumes(&mut app, &loaded);
    assert_eq!(
        app.conversation.entries().first(),
        Some(&Entry::User("list the files".into()))
    );
    let shown = app
        .conversation
        .entries()
        .iter()
        .filter(|entry| matches!(entry, Entry::Notice { text, .. } if *text == warning))
        .count();
    assert_eq!(shown, 1);
    assert_eq!(app.timeline.calls().len(), 1);
    assert!(!app.turn.running() && !app.animating());
}
