//! The api the ACP and HTTP faces start sessions through, driven as a face drives it
//! against the scripted server: a client's own MCP server (this repository's test server)
//! joins the session, and the session it recorded is found, read and continued through
//! the session store without a file path in sight.
#![allow(clippy::unwrap_used, clippy::expect_used)] // A test fails by panicking.

use crate::mcp_harness;
use crate::support;

use miniagent_api::{
    FaceExtras, Handle, McpServerSpec, RemoveError, SessionOrigin, SessionStore, StartOptions,
};
use miniagent_core::config::{Env, Overrides};
use miniagent_protocol::{Decision, Event, Op};
use pretty_assertions::assert_eq;
use serde_json::{Value, json};
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
            "this workspace has its own MCP servers or skills in .miniagent/ (repo-tool: runs no-such-program-from-the-repo); they run programs or steer the agent, so they are used only if you trust the workspace (--trust-workspace)"
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
