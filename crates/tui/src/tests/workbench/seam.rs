//! The workbench learns through the protocol alone: what a finished call changed marks
//! the tree whatever the tool; `/notes` asks the agent and shows its answer; an approval
//! is drawn from its typed request.

use pretty_assertions::assert_eq;

use super::*;
use miniagent_protocol::{ApprovalRequest, CallEffect, NoteInfo};

fn finished(id: &str, name: &str, effects: Vec<CallEffect>) -> Event {
    Event::ToolCallFinished {
        id: id.into(),
        name: name.into(),
        ok: true,
        outcome: ToolOutcome::Ok,
        duration_ms: 3,
        output_preview: "ok".into(),
        output: "ok".into(),
        effects,
    }
}

/// The tree pane's row naming `file`, trimmed.
fn tree_row(screen: &str, file: &str) -> String {
    screen
        .lines()
        .find(|line| line.contains(file))
        .map(|line| line.split('│').nth(1).unwrap_or(line).trim().to_string())
        .unwrap_or_default()
}

#[test]
fn the_files_a_call_changed_are_marked_whatever_the_tool() {
    let workspace = TempDir::new();
    let mut app = app_in(&workspace);
    app.on_agent_event(Event::TurnStarted { text: "go".into() });
    // A tool the workbench has never heard of, with an argument that names another file.
    app.on_agent_event(Event::ToolCallRequested {
        id: "m1".into(),
        name: "docs_writer".into(),
        arguments: json!({"path": ".gitignore"}),
        summary: ".gitignore".into(),
        kind: Default::default(),
        locations: Vec::new(),
    });
    app.on_agent_event(finished(
        "m1",
        "docs_writer",
        vec![CallEffect::FileChanged {
            path: workspace.join("README.md").display().to_string(),
            change: None,
        }],
    ));
    // `write_file` reporting nothing changed marks nothing.
    app.on_agent_event(Event::ToolCallRequested {
        id: "w1".into(),
        name: "write_file".into(),
        arguments: json!({"path": ".gitignore"}),
        summary: ".gitignore".into(),
        kind: Default::default(),
        locations: Vec::new(),
    });
    app.on_agent_event(finished("w1", "write_file", vec![]));
    let text = screen(&mut app, 160, 48);
    assert_eq!(tree_row(&text, "README.md"), "● README.md", "{text}");
    assert_eq!(tree_row(&text, ".gitignore"), ".gitignore", "{text}");
    assert_eq!(tree_row(&text, "src/"), "▸ src/", "{text}");
    // A sub-agent's writes are the session's changes too.
    app.on_agent_event(Event::SubAgent {
        parent: "d1".into(),
        agent: "helper".into(),
        event: Box::new(finished(
            "s1",
            "write_file",
            vec![CallEffect::FileChanged {
                path: workspace.join("src/main.rs").display().to_string(),
                change: None,
            }],
        )),
    });
    let text = screen(&mut app, 160, 48);
    assert_eq!(tree_row(&text, "src/"), "▸ src/ •", "{text}");
}

#[test]
fn notes_are_asked_of_the_agent_and_shown_when_they_arrive() {
    let workspace = TempDir::new();
    // A notes file the workbench must not read itself.
    workspace.write(
        ".agent_memory.json",
        "[{\"timestamp\": \"t\", \"category\": \"x\", \"content\": \"on disk\"}]",
    );
    let mut app = app_in(&workspace);
    app.submit("/notes".into());
    assert_eq!(app.sent, vec![Op::ReadNotes]);
    assert!(screen(&mut app, 80, 24).contains("reading the notes…"));
    app.on_agent_event(Event::Notes {
        notes: vec![NoteInfo {
            category: "build".into(),
            content: "the build needs make".into(),
            timestamp: "2026-11-23T21:00:00Z".into(),
        }],
        error: None,
    });
    let text = screen(&mut app, 80, 24);
    assert!(
        text.contains("[build] the build needs make  (2026-11-23T21:00:00Z)"),
        "{text}"
    );
    assert!(!text.contains("on disk"), "{text}");
    app.on_agent_event(Event::Notes {
        notes: vec![],
        error: Some("cannot read .agent_memory.json: denied".into()),
    });
    assert!(screen(&mut app, 80, 24).contains("cannot read .agent_memory.json: denied"));
}

#[test]
fn an_mcp_call_and_a_compound_command_are_drawn_from_their_requests() {
    let workspace = TempDir::new();
    let mut app = app_in(&workspace);
    app.on_agent_event(Event::TurnStarted { text: "go".into() });
    app.on_agent_event(Event::ApprovalRequested {
        id: "m1".into(),
        name: "issues_create".into(),
        preview: "{\n  \"title\": \"Crash on start\"\n}".into(),
        request: Some(ApprovalRequest::McpCall {
            server: "tracker".into(),
            tool: "create".into(),
            arguments: json!({"title": "Crash on start"}),
        }),
        notes: Vec::new(),
        session_rule: None,
    });
    app.on_agent_event(Event::ApprovalRequested {
        id: "b1".into(),
        name: "bash".into(),
        preview: "$ make 2>&1 | tail -5\n(in /home/dev/project, timeout 120 s)".into(),
        request: Some(ApprovalRequest::Command {
            command: "make 2>&1 | tail -5".into(),
            program: None,
            argv: Vec::new(),
            cwd: "/home/dev/project".into(),
            timeout_s: Some(120),
            compound: true,
        }),
        notes: Vec::new(),
        session_rule: None,
    });
    arm(&mut app);
    assert_screen!("approval_mcp_call_80x24", screen(&mut app, 80, 24));
    assert_screen!("approval_mcp_call_160x48", screen(&mut app, 160, 48));
    app.on_key(key(KeyCode::Char('y')));
    app.settle();
    screen(&mut app, 80, 24);
    arm(&mut app);
    assert_screen!("approval_compound_command_80x24", screen(&mut app, 80, 24));
    assert_screen!("approval_compound_command_160x48", screen(&mut app, 160, 48));
}

#[test]
fn notes_without_a_model_say_who_reads_them() {
    let workspace = TempDir::new();
    let mut app = app_in(&workspace);
    app.show_welcome(welcome(None));
    app.on_key(key(KeyCode::Esc));
    app.submit("/notes".into());
    // Nobody to ask: the overlay says so at once, and nothing waits in the outbox.
    assert!(app.sent.is_empty(), "{:?}", app.sent);
    let text = screen(&mut app, 80, 24);
    assert!(
        text.contains("the agent reads the notes, and it starts once a model is set up"),
        "{text}"
    );
}

#[test]
fn a_replay_answers_notes_from_the_recorded_workspace() {
    let workspace = TempDir::new();
    workspace.write(
        ".agent_memory.json",
        r#"[{"timestamp": "t", "category": "build", "content": "the build needs make"}]"#,
    );
    let header = miniagent_core::session::Header {
        id: "20261123-210000-abcd".into(),
        created: "2026-11-23T21:00:00Z".into(),
        workspace: workspace.path().display().to_string(),
        model: "claude-test".into(),
        provider: "anthropic".into(),
        version: "0.1.0".into(),
        format: miniagent_core::session::FORMAT,
        fixed_tokens: 0,
    };
    let text = format!(
        "{}\n",
        serde_json::to_string(&miniagent_core::session::Record::Header(header)).unwrap()
    );
    let loaded = miniagent_core::session::load::parse(text.as_bytes(), "s.jsonl").unwrap();
    let mut player = support::Player::new(&loaded, Theme::dark());
    player.app.submit("/notes".into());
    player.jump_to_end();
    assert!(
        player.sent.contains(&miniagent_protocol::Op::ReadNotes),
        "{:?}",
        player.sent
    );
    let text = screen(&mut player.app, 80, 24);
    assert!(text.contains(" Notes "), "{text}");
    assert!(text.contains("[build] the build needs make  (t)"), "{text}");
}
