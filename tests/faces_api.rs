//! The api the ACP and HTTP faces start sessions through, driven as a face drives it
//! against the scripted server: a client's own MCP server (this repository's test server)
//! joins the session, and the session it recorded is found, read and continued through
//! the session store without a file path in sight; an editor's files are what the file
//! tools read and write.
#![allow(clippy::unwrap_used, clippy::expect_used)] // A test fails by panicking.

use crate::mcp_harness;
use crate::support;

use miniagent_api::{
    BoxFuture, ClientFileError, ClientFiles, FaceExtras, Handle, McpServerSpec, RemoveError, SessionOrigin,
    SessionStore, StartOptions,
};
use miniagent_core::config::{Env, Overrides};
use miniagent_protocol::{Decision, Event, Op};
use pretty_assertions::assert_eq;
use serde_json::{Value, json};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use support::harness::{TEST_KEY, is_turn_end};
use support::*;

/// A face's environment: miniagent's folders in `home`, the test key.
fn face_env(home: &TempDir) -> Env {
    let home = home.path().to_path_buf();
    Env::with(move |name: &str| match name {
        "MINIAGENT_CONFIG_DIR" => Some(home.join("config").display().to_string()),
        "MINIAGENT_DATA_DIR" => Some(home.join("data").display().to_string()),
        "MINIAGENT_LOG_DIR" => Some(home.join("logs").display().to_string()),
        "MINIAGENT_API_KEY" => Some(TEST_KEY.to_string()),
        _ => None,
    })
}

fn options(workspace: &TempDir, server: &ScriptedServer) -> StartOptions {
    StartOptions {
        workspace: Some(workspace.path().to_path_buf()),
        overrides: Overrides {
            base_url: Some(server.anthropic_base_url()),
            model: Some("scripted-model".into()),
            ..Overrides::default()
        },
        ..StartOptions::default()
    }
}

/// Events up to the end of the turn; every approval asked is granted and its tool
/// named in the returned list.
async fn run_turn(agent: &mut Handle) -> (Vec<Event>, Vec<String>) {
    let mut events = Vec::new();
    let mut asked = Vec::new();
    loop {
        let event = tokio::time::timeout(mcp_harness::READY_TIMEOUT, agent.events.recv())
            .await
            .expect("the turn ends in time")
            .expect("the agent is running");
        if let Event::ApprovalRequested { id, name, .. } = &event {
            asked.push(name.clone());
            agent
                .ops
                .send(Op::Approval {
                    id: id.clone(),
                    decision: Decision::Approve,
                })
                .unwrap();
        }
        let end = is_turn_end(&event);
        events.push(event);
        if end {
            return (events, asked);
        }
    }
}

/// Waits for `wanted` and returns it.
async fn wait_for(agent: &mut Handle, wanted: impl Fn(&Event) -> bool) -> Event {
    loop {
        let event = tokio::time::timeout(mcp_harness::READY_TIMEOUT, agent.events.recv())
            .await
            .expect("the event comes in time")
            .expect("the agent is running");
        if wanted(&event) {
            return event;
        }
    }
}

/// The text of the tool result the model got last in request `n`.
fn last_result(server: &ScriptedServer, n: usize) -> String {
    let block = server.last_block(n);
    match &block["content"] {
        Value::String(text) => text.clone(),
        other => other[0]["text"].as_str().unwrap_or_default().to_string(),
    }
}

/// A client's stdio server starts as the user's own servers do (outside the workspace,
/// its calls asked about, its credential-looking values redacted) and its tools are
/// offered to the model beside the built-in ones.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_clients_mcp_server_joins_the_session_as_a_users_server() {
    let server = ScriptedServer::start(vec![
        Reply::tool("m1", "mcp__editor__args", "{}"),
        Reply::tool("m2", "mcp__editor__env", "{}"),
        Reply::text("Both answered."),
    ])
    .await;
    let home = TempDir::new();
    let workspace = TempDir::new();
    let token = format!("editor-token-{}", std::process::id());
    let client = McpServerSpec::Stdio {
        name: "editor".into(),
        command: mcp_harness::server_binary().display().to_string(),
        args: vec!["--name".into(), "editor".into()],
        env: vec![("EDITOR_TOKEN".into(), token.clone())],
    };
    let extras = FaceExtras::default().with_mcp_servers(vec![client]);
    let mut agent =
        miniagent_api::start_with(&options(&workspace, &server), extras, &face_env(&home)).unwrap();
    let ready = wait_for(&mut agent, |event| {
        matches!(event, Event::McpServerStatus { server, state } if server == "editor" && !matches!(state, miniagent_protocol::McpState::Connecting))
    })
    .await;
    let Event::McpServerStatus { state, .. } = ready else {
        unreachable!()
    };
    let offered: Vec<String> = mcp_harness::TOOLS
        .iter()
        .map(|tool| format!("mcp__editor__{tool}"))
        .collect();
    assert_eq!(
        state,
        miniagent_protocol::McpState::Ready {
            tools: offered.clone()
        }
    );

    agent
        .ops
        .send(Op::UserInput {
            text: "ask the editor's server".into(),
        })
        .unwrap();
    let (events, asked) = run_turn(&mut agent).await;
    assert!(
        matches!(events.last(), Some(Event::TurnComplete { .. })),
        "{events:?}"
    );
    assert_eq!(asked, vec!["mcp__editor__args", "mcp__editor__env"]);

    let requests = server.requests();
    assert_eq!(requests.len(), 3);
    let sent_tools: Vec<String> = requests[0].body["tools"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|tool| tool["name"].as_str())
        .filter(|name| name.starts_with("mcp__editor__"))
        .map(str::to_string)
        .collect();
    assert_eq!(sent_tools, offered);
    // It ran in the neutral folder, not the workspace, with the arguments given.
    let args: Value = serde_json::from_str(&last_result(&server, 1)).unwrap();
    assert_eq!(args, json!({"args": ["--name", "editor"], "cwd": "/"}));
    // Its variable reached it, and the model saw it redacted like a configured secret.
    let env: Value = serde_json::from_str(&last_result(&server, 2)).unwrap();
    assert_eq!(env["EDITOR_TOKEN"], "[redacted]");
    agent.ops.send(Op::Shutdown).unwrap();
}

/// A session recorded by a face is found by its id in the store, listed for its
/// workspace, read back event by event, and continued by a new start that resumes it:
/// the model then gets the earlier turn's history.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_recorded_session_is_found_read_and_continued_through_the_store() {
    let server =
        ScriptedServer::start(vec![Reply::text("First answer."), Reply::text("Second answer.")]).await;
    let home = TempDir::new();
    let workspace = TempDir::new();
    let elsewhere = TempDir::new();
    let env = face_env(&home);
    let mut agent =
        miniagent_api::start_with(&options(&workspace, &server), FaceExtras::default(), &env).unwrap();
    agent
        .ops
        .send(Op::UserInput {
            text: "first question".into(),
        })
        .unwrap();
    let (first, _) = run_turn(&mut agent).await;
    agent.ops.send(Op::Shutdown).unwrap();
    wait_for(&mut agent, |event| matches!(event, Event::ShutdownComplete)).await;
    let id = first
        .iter()
        .find_map(|event| match event {
            Event::SessionConfigured { session_id, .. } => session_id.clone(),
            _ => None,
        })
        .expect("the session is recorded");

    let store = SessionStore::new(&env);
    let listed: Vec<String> = store
        .list_in(workspace.path())
        .into_iter()
        .map(|info| info.id)
        .collect();
    assert_eq!(listed, vec![id.clone()]);
    assert!(store.list_in(elsewhere.path()).is_empty());
    let session = store.find(&id).unwrap();
    assert_eq!(session.id(), id);
    assert_eq!(
        store.origin(&session).unwrap(),
        SessionOrigin {
            id: id.clone(),
            workspace: workspace.path().canonicalize().unwrap(),
            model: "scripted-model".into(),
            provider: "anthropic".into(),
        }
    );
    // The recorded events are those the face was sent (output deltas aside).
    let recorded = store.events(&session).unwrap();
    let streamed: Vec<Event> = first
        .into_iter()
        .filter(|event| !matches!(event, Event::ToolOutputDelta { .. }))
        .collect();
    assert_eq!(recorded, streamed);
    // Only ids of its own sessions: no prefix, no path, nothing outside.
    let log = home.join(format!("data/sessions/{id}.jsonl"));
    for other in [&id[..8], log.to_str().unwrap(), "../sessions/x", ""] {
        assert!(store.find(other).is_err(), "{other} was found");
    }

    let extras = FaceExtras::default().resuming(session.clone());
    let mut resumed = miniagent_api::start_with(&options(&workspace, &server), extras, &env).unwrap();
    let Event::SessionResumed {
        id: continued, turns, ..
    } = wait_for(&mut resumed, |event| {
        matches!(event, Event::SessionResumed { .. })
    })
    .await
    else {
        unreachable!()
    };
    assert_eq!((continued.as_str(), turns), (id.as_str(), 1));
    resumed
        .ops
        .send(Op::UserInput {
            text: "second question".into(),
        })
        .unwrap();
    let (second, _) = run_turn(&mut resumed).await;
    assert!(
        matches!(second.last(), Some(Event::TurnComplete { .. })),
        "{second:?}"
    );
    let messages = server.requests()[1].body["messages"].clone();
    assert_eq!(
        messages,
        json!([
            {"role": "user", "content": [{"type": "text", "text": "first question", "cache_control": {"type": "ephemeral"}}]},
            {"role": "assistant", "content": [{"type": "text", "text": "First answer."}]},
            {"role": "user", "content": [{"type": "text", "text": "second question", "cache_control": {"type": "ephemeral"}}]},
        ])
    );
    // Both turns are in the one log; it is not removed while the session has it open.
    assert_eq!(store.info(&session).unwrap().turns, 2);
    assert_eq!(store.remove(&session), Err(RemoveError::InUse));
    resumed.ops.send(Op::Shutdown).unwrap();
    wait_for(&mut resumed, |event| matches!(event, Event::ShutdownComplete)).await;
    drop(resumed);
    // The agent lets the log go as its task ends, just after its last event.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    while store.remove(&session) == Err(RemoveError::InUse) {
        assert!(std::time::Instant::now() < deadline, "the log stayed in use");
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    assert!(store.find(&id).is_err());
    assert!(!log.exists());
}

/// Nobody answers a trust question on a face's start: the workspace's own servers stay
/// out with a notice saying so, unless the options trust the workspace.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_workspaces_own_servers_wait_for_trust_on_a_faces_start() {
    let server = ScriptedServer::start(Vec::new()).await;
    let home = TempDir::new();
    let workspace = TempDir::new();
    workspace.write(
        ".miniagent/mcp.json",
        r#"{"mcpServers": {"repo-tool": {"command": "no-such-program-from-the-repo", "connect_timeout": 5}}}"#,
    );
    let env = face_env(&home);
    let mut agent =
        miniagent_api::start_with(&options(&workspace, &server), FaceExtras::default(), &env).unwrap();
    agent.ops.send(Op::Shutdown).unwrap();
    let mut notices = Vec::new();
    let mut repo_tool = false;
    loop {
        match tokio::time::timeout(mcp_harness::READY_TIMEOUT, agent.events.recv())
            .await
            .unwrap()
        {
            // The own-folders notice (the test's folders are in /tmp) is not this one's.
            Some(Event::Notice { message }) if message.contains(".miniagent/") => notices.push(message),
            Some(Event::McpServerStatus { server, .. }) => repo_tool |= server == "repo-tool",
            Some(Event::ShutdownComplete) | None => break,
            Some(_) => {}
        }
    }
    assert!(!repo_tool);
    assert_eq!(
        notices,
        vec![
            "this workspace has its own settings in .miniagent/ (repo-tool: runs no-such-program-from-the-repo): MCP servers and hooks run programs, skills, commands and permission rules steer the agent, so they are used only if you trust the workspace (--trust-workspace)"
                .to_string()
        ]
    );

    let trusting = StartOptions {
        trust_workspace: true,
        ..options(&workspace, &server)
    };
    let mut agent = miniagent_api::start_with(&trusting, FaceExtras::default(), &env).unwrap();
    wait_for(
        &mut agent,
        |event| matches!(event, Event::McpServerStatus { server, .. } if server == "repo-tool"),
    )
    .await;
    agent.ops.send(Op::Shutdown).unwrap();
}

/// An editor as a face hands it over: buffers in memory, every call written down.
#[derive(Debug, Default)]
struct Editor {
    buffers: Mutex<BTreeMap<PathBuf, String>>,
    calls: Mutex<Vec<String>>,
    /// It never answers a read (a client that hangs).
    stalls: bool,
}

impl ClientFiles for Editor {
    fn read_text(&self, path: &Path) -> BoxFuture<'_, Result<String, ClientFileError>> {
        self.calls
            .lock()
            .unwrap()
            .push(format!("read {}", path.display()));
        if self.stalls {
            return Box::pin(std::future::pending());
        }
        let text = self.buffers.lock().unwrap().get(path).cloned();
        Box::pin(async move { text.ok_or(ClientFileError::NotFound) })
    }

    fn write_text(&self, path: &Path, text: String) -> BoxFuture<'_, Result<(), ClientFileError>> {
        self.calls
            .lock()
            .unwrap()
            .push(format!("write {}", path.display()));
        self.buffers.lock().unwrap().insert(path.to_path_buf(), text);
        Box::pin(async { Ok(()) })
    }
}

/// With the client's files, the model reads the editor's unsaved buffer, the edit it
/// asks for is matched and shown (in the question, as a diff and whole texts) on that
/// buffer, and lands in the editor; the disk keeps the saved text, and a path outside
/// the workspace never reaches the editor.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_editors_unsaved_buffer_is_read_and_edited_through_the_client() {
    let server = ScriptedServer::start(vec![
        Reply::tool("r1", "read_file", json!({"path": "main.rs"}).to_string()),
        Reply::tool(
            "e1",
            "edit_file",
            json!({"path": "main.rs", "old_str": "unsaved()", "new_str": "edited()"}).to_string(),
        ),
        Reply::tool("r2", "read_file", json!({"path": "../elsewhere.rs"}).to_string()),
        Reply::text("Done."),
    ])
    .await;
    let home = TempDir::new();
    let workspace = TempDir::new();
    let root = workspace.path().canonicalize().unwrap();
    let file = root.join("main.rs");
    std::fs::write(&file, "fn main() {}\n").unwrap();
    let editor = Arc::new(Editor::default());
    editor
        .buffers
        .lock()
        .unwrap()
        .insert(file.clone(), "fn main() {\n    unsaved();\n}\n".into());
    let extras = FaceExtras::default().with_client_files(Arc::clone(&editor) as Arc<dyn ClientFiles>);
    let mut agent =
        miniagent_api::start_with(&options(&workspace, &server), extras, &face_env(&home)).unwrap();
    agent
        .ops
        .send(Op::UserInput {
            text: "rename the call".into(),
        })
        .unwrap();
    let (events, asked) = run_turn(&mut agent).await;
    assert!(
        matches!(events.last(), Some(Event::TurnComplete { .. })),
        "{events:?}"
    );
    assert_eq!(asked, vec!["edit_file"]);
    let diff =
        "--- a/main.rs\n+++ b/main.rs\n@@ -1,3 +1,3 @@\n fn main() {\n-    unsaved();\n+    edited();\n }\n";
    let request = events.iter().find_map(|event| match event {
        Event::ApprovalRequested { request, .. } => request.clone(),
        _ => None,
    });
    assert_eq!(
        request,
        Some(miniagent_protocol::ApprovalRequest::Edit {
            path: "main.rs".into(),
            abs_path: file.display().to_string(),
            summary: "edit main.rs (1 replacement)".into(),
            diff: diff.into(),
            change: Some(miniagent_protocol::TextChange {
                old_text: Some("fn main() {\n    unsaved();\n}\n".into()),
                new_text: "fn main() {\n    edited();\n}\n".into(),
            }),
        })
    );
    assert_eq!(
        (1..=3).map(|n| last_result(&server, n)).collect::<Vec<_>>(),
        vec![
            "     1|fn main() {\n     2|    unsaved();\n     3|}".to_string(),
            format!("edited main.rs: 1 replacement\n{diff}"),
            format!(
                "`../elsewhere.rs` resolves to {}, which is outside the workspace {} or the allowed read-only folders; file tools only work inside it",
                root.parent().unwrap().join("elsewhere.rs").display(),
                root.display()
            ),
        ]
    );
    assert_eq!(
        editor.buffers.lock().unwrap().get(&file).map(String::as_str),
        Some("fn main() {\n    edited();\n}\n")
    );
    assert_eq!(std::fs::read_to_string(&file).unwrap(), "fn main() {}\n");
    let shown = file.display();
    assert_eq!(
        *editor.calls.lock().unwrap(),
        vec![
            format!("read {shown}"),
            format!("read {shown}"),
            format!("read {shown}"),
            format!("write {shown}"),
        ]
    );
    agent.ops.send(Op::Shutdown).unwrap();
}

/// An editor that never answers the read an edit's question needs does not hold the
/// turn: an interrupt ends it at once, nothing is written, and the model hears of it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_editor_that_never_answers_does_not_hold_an_interrupt() {
    let server = ScriptedServer::start(vec![
        Reply::tool(
            "e1",
            "edit_file",
            json!({"path": "main.rs", "old_str": "main", "new_str": "start"}).to_string(),
        ),
        Reply::text("Understood."),
    ])
    .await;
    let home = TempDir::new();
    let workspace = TempDir::new();
    let file = workspace.path().canonicalize().unwrap().join("main.rs");
    std::fs::write(&file, "fn main() {}\n").unwrap();
    let editor = Arc::new(Editor {
        stalls: true,
        ..Editor::default()
    });
    let extras = FaceExtras::default().with_client_files(Arc::clone(&editor) as Arc<dyn ClientFiles>);
    let mut agent =
        miniagent_api::start_with(&options(&workspace, &server), extras, &face_env(&home)).unwrap();
    agent
        .ops
        .send(Op::UserInput {
            text: "rename main".into(),
        })
        .unwrap();
    wait_for(
        &mut agent,
        |event| matches!(event, Event::ToolCallRequested { id, .. } if id == "e1"),
    )
    .await;
    // The question is being built: the editor was asked, and has not answered.
    tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    let interrupted = std::time::Instant::now();
    agent.ops.send(Op::Interrupt).unwrap();
    let end = wait_for(&mut agent, |event| {
        matches!(
            event,
            Event::TurnAborted { .. } | Event::ApprovalRequested { .. } | Event::TurnComplete { .. }
        )
    })
    .await;
    let waited = interrupted.elapsed();
    assert!(matches!(end, Event::TurnAborted { .. }), "{end:?}");
    assert!(waited < std::time::Duration::from_millis(500), "{waited:?}");
    assert_eq!(
        *editor.calls.lock().unwrap(),
        vec![format!("read {}", file.display())]
    );
    assert_eq!(std::fs::read_to_string(&file).unwrap(), "fn main() {}\n");

    agent
        .ops
        .send(Op::UserInput {
            text: "never mind".into(),
        })
        .unwrap();
    let (events, _) = run_turn(&mut agent).await;
    assert!(
        matches!(events.last(), Some(Event::TurnComplete { .. })),
        "{events:?}"
    );
    let requests = server.requests();
    assert_eq!(requests.len(), 2);
    assert!(
        requests[1].body["messages"]
            .to_string()
            .contains("interrupted by the user"),
        "{}",
        requests[1].body["messages"]
    );
    agent.ops.send(Op::Shutdown).unwrap();
}
