//! MCP through the agent loop: a real server (the test server, `tests/mcp-server`),
//! started from the configuration by startup, announced through the event stream, its
//! tools called by the scripted model, the results carried back in the next requests.
#![allow(clippy::unwrap_used, clippy::expect_used)] // A test fails by panicking.

use crate::support;

use crate::mcp_harness;

use std::time::Duration;

use miniagent_core::config::{ApprovalMode, Provider};
use miniagent_core::startup;
use miniagent_protocol::{Event, McpState, Op};
use serde_json::json;
use support::harness::test_config;
use support::*;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn mcp_tools_run_through_the_agent_loop() {
    let server = ScriptedServer::start(vec![
        Reply::tool(
            "m1",
            "mcp__everything__echo",
            r#"{"message": "hello from the loop"}"#,
        ),
        Reply::tool("m2", "mcp__everything__add", r#"{"a": 2, "b": 3}"#),
        Reply::text("Both MCP calls worked."),
    ])
    .await;
    let mut config = test_config(Provider::Anthropic, &server);
    config.agent.approval = ApprovalMode::FullAuto;
    // `startup::build` records sessions in the user's data folder: not from a test.
    config.session.record = false;
    let workspace = TempDir::new();
    // A tag no other test's server has finds this one's process.
    let tag = format!("agent-loop-{}", std::process::id());
    let mcp = mcp_harness::config(json!({
        "everything": mcp_harness::server(&["--tag", &tag]),
        "missing": {"command": "no-such-mcp-server-binary", "connect_timeout": 5},
    }));
    // miniagent's own folders (the MCP servers' log among them) in the test's folder.
    let folders = workspace.path().join(".folders");
    let env = miniagent_core::config::Env::with(move |name: &str| match name {
        "MINIAGENT_CONFIG_DIR" => Some(folders.join("config").display().to_string()),
        "MINIAGENT_DATA_DIR" => Some(folders.join("data").display().to_string()),
        "MINIAGENT_LOG_DIR" => Some(folders.join("logs").display().to_string()),
        _ => None,
    });
    let options = startup::build(
        config,
        workspace.path().to_path_buf(),
        "sk-test".into(),
        Some(mcp),
        false,
        &env,
    )
    .unwrap();
    let mut agent = miniagent_core::agent::spawn(options);

    // Both servers report; the missing one fails without holding up the other.
    let mut ready = None;
    let mut failed = None;
    let deadline = tokio::time::Instant::now() + mcp_harness::READY_TIMEOUT;
    while ready.is_none() || failed.is_none() {
        let event = tokio::time::timeout_at(deadline, agent.events.recv())
            .await
            .expect("MCP servers report in time")
            .unwrap();
        if let Event::McpServerStatus { server, state } = event {
            match state {
                McpState::Ready { tools } if server == "everything" => ready = Some(tools),
                McpState::Failed { reason } if server == "missing" => failed = Some(reason),
                _ => {}
            }
        }
    }
    assert!(ready.unwrap().contains(&"mcp__everything__echo".to_string()));
    assert!(!failed.unwrap().is_empty());

    agent
        .ops
        .send(Op::UserInput {
            text: "try the MCP tools".into(),
        })
        .unwrap();
    loop {
        let event = tokio::time::timeout(Duration::from_secs(60), agent.events.recv())
            .await
            .expect("turn ends")
            .unwrap();
        match event {
            Event::TurnComplete { text } => {
                assert_eq!(text, "Both MCP calls worked.");
                break;
            }
            Event::Error { message } | Event::TurnAborted { reason: message } => panic!("{message}"),
            _ => {}
        }
    }
    let requests = server.requests();
    let tools: Vec<String> = requests[0].body["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|tool| tool["name"].as_str().unwrap().to_string())
        .collect();
    assert!(tools.contains(&"mcp__everything__echo".to_string()), "{tools:?}");
    let result =
        |n: usize| requests[n].body["messages"].as_array().unwrap().last().unwrap()["content"][0].clone();
    assert_eq!(result(1)["content"], "Echo: hello from the loop");
    assert_eq!(result(1)["is_error"], false);
    assert_eq!(result(2)["content"], "The sum of 2 and 3 is 5.");

    // Shutting the agent down stops the servers.
    let pids_before = processes_mentioning(&tag);
    assert!(
        !pids_before.is_empty(),
        "the everything server should be running before shutdown"
    );
    agent.ops.send(Op::Shutdown).unwrap();
    while let Some(event) = agent.events.recv().await {
        if event == Event::ShutdownComplete {
            break;
        }
    }
    mcp_harness::wait_for("the MCP children to exit", || {
        pids_before.iter().all(|pid| !mcp_harness::running(*pid))
    })
    .await;
}

/// Live processes whose command line mentions `needle`.
fn processes_mentioning(needle: &str) -> Vec<u32> {
    std::fs::read_dir("/proc")
        .unwrap()
        .flatten()
        .filter_map(|entry| entry.file_name().to_string_lossy().parse::<u32>().ok())
        .filter(|pid| *pid != std::process::id())
        .filter(|pid| {
            std::fs::read(format!("/proc/{pid}/cmdline"))
                .is_ok_and(|line| String::from_utf8_lossy(&line).contains(needle))
        })
        .filter(|pid| mcp_harness::running(*pid))
        .collect()
}

/// The test server answering `initialize` as `gate` says, given `connect_timeout_s`.
fn slow_server(gate: &[&str], connect_timeout_s: u64) -> serde_json::Value {
    let mut server = mcp_harness::server(gate);
    server["connect_timeout"] = json!(connect_timeout_s);
    server
}

/// The names of the tools a recorded request offered.
fn offered(request: &RecordedRequest) -> Vec<String> {
    request.body["tools"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|tool| tool["name"].as_str().map(str::to_string))
        .collect()
}

/// `exec` waits for configured servers before the first model request, saying so on
/// stderr: a slow one is waited for and its tools are in every request; one that never
/// answers is given up at its `connect_timeout` and one that cannot start fails at once,
/// both reported, neither blocking the turn for longer.
#[test]
fn exec_waits_for_mcp_servers_before_the_first_request() {
    let server = ScriptedServer::start_blocking(vec![
        Reply::tool("m1", "mcp__slow__echo", r#"{"message": "hi"}"#),
        Reply::text("done"),
    ]);
    let home = TempDir::new();
    let workspace = TempDir::new();
    home.write(
        "mcp.json",
        json!({"mcpServers": {
            "slow": slow_server(&["--init-delay-ms", "1500"], 20),
            "silent": slow_server(&["--init-never"], 3),
            "missing": {"command": "no-such-mcp-server-binary", "connect_timeout": 20},
        }})
        .to_string(),
    );
    let started = std::time::Instant::now();
    let output = support::cli::exec(&home, &workspace, &server, &["echo hi"]);
    let elapsed = started.elapsed();
    let stderr = support::cli::text(&output.stderr);
    assert_eq!(output.status.code(), Some(0), "{stderr}");
    let requests = server.requests();
    assert_eq!(requests.len(), 2, "{stderr}");
    for request in &requests {
        assert!(
            offered(request).contains(&"mcp__slow__echo".to_string()),
            "{:?}",
            offered(request)
        );
    }
    let result = requests[1].body["messages"].as_array().unwrap().last().unwrap()["content"][0].clone();
    assert_eq!(result["content"], "Echo: hi", "{result}");
    let waiting = stderr
        .find("waiting for MCP servers")
        .unwrap_or_else(|| panic!("{stderr}"));
    let ready = stderr
        .find("mcp: slow ready")
        .unwrap_or_else(|| panic!("{stderr}"));
    assert!(waiting < ready, "{stderr}");
    assert!(stderr.contains("mcp: missing failed"), "{stderr}");
    assert!(stderr.contains("mcp: silent failed"), "{stderr}");
    // The silent server held the turn for its 3 s, not the others' 20.
    assert!(elapsed < Duration::from_secs(15), "{elapsed:?}");
}

/// A server that becomes ready while a turn runs is offered from the next request of
/// that turn on: the tool list is not fixed when the turn starts. The server (the test
/// server) answers `initialize` only once the test opens its gate, which it does while
/// the turn waits for the approval of its first call, after the first request.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tools_that_appear_during_a_turn_are_offered_from_the_next_request() {
    let server = ScriptedServer::start(vec![
        Reply::tool("w1", "write_file", r#"{"path": "note.txt", "content": "hi"}"#),
        Reply::tool("p1", "mcp__late__echo", r#"{"message": "ping"}"#),
        Reply::text("pinged"),
    ])
    .await;
    let gate = TempDir::new();
    let open = gate.join("open");
    let mut late = mcp_harness::server(&["--init-after-file", open.to_str().unwrap()]);
    late["approval"] = json!("auto");
    let manager = miniagent_core::tools::mcp::McpManager::start(
        mcp_harness::config(json!({ "late": late })),
        None,
        mcp_harness::Recorder::default().callback(),
    );
    let mut config = test_config(Provider::Anthropic, &server);
    // The write waits for the test's answer: the turn is held there.
    config.agent.approval = ApprovalMode::Ask;
    let mut tools = miniagent_core::tools::ToolRegistry::builtin(&config);
    tools.add_source(std::sync::Arc::new(manager.clone()));
    let mut agent = support::harness::Harness::start_with_registry(
        config,
        miniagent_core::session::SessionLog::disabled(),
        tools,
    );
    agent.send(Op::UserInput {
        text: "connect and ping".into(),
    });
    let asked = agent
        .wait_for(|event| matches!(event, Event::ApprovalRequested { .. }))
        .await;
    let Event::ApprovalRequested { id, .. } = asked else {
        unreachable!()
    };
    assert_eq!(server.requests().len(), 1);
    std::fs::write(&open, "").unwrap();
    assert_eq!(
        mcp_harness::settle(&manager, "late").await,
        mcp_harness::ready("late", mcp_harness::TOOLS)
    );
    agent.send(Op::Approval {
        id,
        decision: miniagent_protocol::Decision::Approve,
    });
    let end = agent.wait_for(support::harness::is_turn_end).await;
    assert_eq!(
        end,
        Event::TurnComplete {
            text: "pinged".into()
        }
    );
    let requests = server.requests();
    let late = "mcp__late__echo".to_string();
    assert!(!offered(&requests[0]).contains(&late));
    assert!(
        offered(&requests[1]).contains(&late),
        "{:?}",
        offered(&requests[1])
    );
    let result = requests[2].body["messages"].as_array().unwrap().last().unwrap()["content"][0].clone();
    assert_eq!(result["content"], "Echo: ping", "{result}");
    manager.shutdown().await;
}

/// A small MCP server in Python, run as `python3 -m where_server`: its one tool `where`
/// answers with the folder it runs in and the `WHERE_WS` it was given.
const WHERE_SERVER: &str = r#"
import json, os, sys
for line in sys.stdin:
    message = json.loads(line)
    if "id" not in message:
        continue
    method = message["method"]
    if method == "initialize":
        result = {"protocolVersion": message["params"]["protocolVersion"], "capabilities": {"tools": {}},
                  "serverInfo": {"name": "where", "version": "1"}}
    elif method == "tools/list":
        result = {"tools": [{"name": "where", "description": "Where the server runs.",
                             "inputSchema": {"type": "object", "properties": {}}}]}
    elif method == "tools/call":
        text = json.dumps({"cwd": os.getcwd(), "workspace": os.environ.get("WHERE_WS")}, separators=(",", ":"))
        result = {"content": [{"type": "text", "text": text}]}
    else:
        print(json.dumps({"jsonrpc": "2.0", "id": message["id"],
                          "error": {"code": -32601, "message": "unknown method"}}), flush=True)
        continue
    print(json.dumps({"jsonrpc": "2.0", "id": message["id"], "result": result}), flush=True)
"#;

/// What a hostile repository plants for servers that would start inside it: a
/// `where_server` package `python3 -m` imports from the folder it runs in. It leaves a
/// file in the workspace if it ever runs.
fn plant_workspace_servers(workspace: &TempDir) {
    workspace.write(
        "where_server/__main__.py",
        "import pathlib\n(pathlib.Path(__file__).resolve().parent.parent / 'ran-python').write_text('yes')\n",
    );
}

/// Issue 26, point 1: the user's own servers (no `cwd` in their entries) start outside
/// an untrusted workspace, so `python3 -m` (as `npx` would with a planted
/// `node_modules/.bin`) does not pick up the copy a repository plants; `${workspace}`
/// gives them its path (in `args` and `env`). The real servers answer: both run in the
/// neutral folder, one told the workspace in its `env`, the other in its `args`.
#[test]
fn user_servers_start_outside_the_workspace_and_get_its_path_by_substitution() {
    let server = ScriptedServer::start_blocking(vec![
        Reply::tool("w1", "mcp__py__where", "{}"),
        Reply::tool("f1", "mcp__files__args", "{}"),
        Reply::text("done"),
    ]);
    let home = TempDir::new();
    let workspace = TempDir::new();
    plant_workspace_servers(&workspace);
    home.write("pylib/where_server/__main__.py", WHERE_SERVER);
    let files = mcp_harness::server(&["--tag", "${workspace}"]);
    home.write(
        "mcp.json",
        json!({"mcpServers": {
            "py": {
                "command": "python3",
                "args": ["-m", "where_server"],
                "env": {"PYTHONPATH": home.join("pylib"), "WHERE_WS": "${workspace}"},
                "connect_timeout": 60,
            },
            "files": files,
        }})
        .to_string(),
    );
    // Started from inside the workspace, as a person does after `cd repo`.
    let output = support::cli::exec_command(&home, &workspace, &server, &["where are you?"])
        .current_dir(workspace.path())
        .output()
        .unwrap();
    let stderr = support::cli::text(&output.stderr);
    assert_eq!(output.status.code(), Some(0), "{stderr}");
    let mut planted: Vec<String> = std::fs::read_dir(workspace.path())
        .unwrap()
        .map(|entry| entry.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    planted.sort();
    assert_eq!(planted, ["where_server"], "{stderr}");
    let requests = server.requests();
    assert_eq!(requests.len(), 3, "{stderr}");
    let offered = offered(&requests[0]);
    for tool in ["mcp__py__where", "mcp__files__args"] {
        assert!(offered.contains(&tool.to_string()), "{offered:?}\n{stderr}");
    }
    let result = |request: &RecordedRequest| {
        request.body["messages"].as_array().unwrap().last().unwrap()["content"][0].clone()
    };
    let root = workspace.path().canonicalize().unwrap().display().to_string();
    assert_eq!(
        result(&requests[1]),
        json!({"type": "tool_result", "tool_use_id": "w1", "is_error": false,
               "cache_control": {"type": "ephemeral"},
               "content": json!({"cwd": "/", "workspace": root}).to_string()})
    );
    assert_eq!(
        result(&requests[2]),
        json!({"type": "tool_result", "tool_use_id": "f1", "is_error": false,
               "cache_control": {"type": "ephemeral"},
               "content": json!({"args": ["--tag", root], "cwd": "/"}).to_string()})
    );
}
