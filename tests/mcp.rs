//! The MCP client against a real server, the one this repository builds on rmcp's server
//! side (`tests/mcp-server`), over stdio, streamable HTTP and legacy SSE (the `mcp.json`
//! parser is `mcp_config`; the reference server from npm is `mcp_interop`).
#![allow(clippy::unwrap_used, clippy::expect_used)] // A test fails by panicking.

use crate::mcp_harness as harness;
use crate::support::tempdir;

use std::time::{Duration, Instant};

use harness::*;
use miniagent_core::tools::mcp::{McpManager, McpServerState, ReconnectError};
use miniagent_core::tools::{ToolEffect, ToolOutput};
use pretty_assertions::assert_eq;
use serde_json::{Value, json};
use tempdir::TempDir;

// ---------------------------------------------------------------------------------------
// Servers
// ---------------------------------------------------------------------------------------

#[tokio::test]
async fn stdio_server_lists_its_tools_and_answers_calls() {
    let dir = TempDir::new();
    let log = dir.join("mcp-stderr.log");
    let mut server = server(&["--stderr-line", "test server started"]);
    server["env"] = json!({"MINIAGENT_TEST_SETTING": "on"});
    server["approval"] = json!("auto");
    server["tool_approval"] = json!({"add": "ask"});
    let recorder = Recorder::default();
    let manager = McpManager::start(
        config(json!({ "test": server })),
        Some(log.clone()),
        recorder.callback(),
    );

    assert_eq!(settle(&manager, "test").await, ready("test", TOOLS));
    assert_eq!(
        recorder.of("test"),
        vec![McpServerState::Connecting, ready("test", TOOLS)]
    );
    let names: Vec<String> = manager
        .tools()
        .iter()
        .map(|tool| tool.name().to_string())
        .collect();
    let expected: Vec<String> = TOOLS.iter().map(|tool| format!("mcp__test__{tool}")).collect();
    assert_eq!(names, expected);

    let echo = tool(&manager, "mcp__test__echo");
    assert_eq!(echo.description(), "Echoes back the input string");
    assert_eq!(
        echo.input_schema(),
        json!({
            "type": "object",
            "properties": {"message": {"type": "string", "description": "Message to echo"}},
            "required": ["message"]
        })
    );
    assert_eq!(echo.effect(), ToolEffect::External);
    assert!(echo.auto_approved());
    assert!(!tool(&manager, "mcp__test__add").auto_approved());

    let answers = [
        ("echo", json!({"message": "hello 世界"}), ToolOutput::ok("Echo: hello 世界")),
        ("add", json!({"a": 2, "b": 3.5}), ToolOutput::ok("The sum of 2 and 3.5 is 5.5.")),
        // The 1×1 PNG is 70 bytes; the text before it is kept.
        ("image", json!({}), ToolOutput::ok("A picture:\n[image: 70 bytes, image/png]")),
        (
            "resource",
            json!({}),
            ToolOutput::ok("[resource: 15 bytes, text/plain, test://notes/1]"),
        ),
        // The server's error result is the model's error.
        ("fail", json!({}), ToolOutput::error("failed as asked")),
        // The server got the arguments of its entry.
        (
            "args",
            json!({}),
            ToolOutput::ok(
                json!({"args": ["--stderr-line", "test server started"], "cwd": std::env::current_dir().unwrap()}).to_string(),
            ),
        ),
    ];
    for (name, arguments, expected) in answers {
        assert_eq!(
            call(&manager, &format!("mcp__test__{name}"), arguments, dir.path()).await,
            expected,
            "{name}"
        );
    }

    // The server sees its configured `env` but not miniagent's own variables (cargo
    // sets CARGO_MANIFEST_DIR for this test, as an API key would be set for miniagent).
    assert!(std::env::var_os("CARGO_MANIFEST_DIR").is_some());
    let env = call(&manager, "mcp__test__env", json!({}), dir.path()).await;
    let env: serde_json::Map<String, Value> = serde_json::from_str(&env.content).unwrap();
    assert_eq!(env.get("MINIAGENT_TEST_SETTING"), Some(&json!("on")));
    assert_eq!(env.get("CARGO_MANIFEST_DIR"), None);
    assert!(env.contains_key("PATH"));

    manager.shutdown().await;
    assert_eq!(
        recorder.of("test").last(),
        Some(&McpServerState::Failed {
            reason: "shut down".into()
        })
    );
    let log = std::fs::read_to_string(&log).unwrap();
    assert_eq!(log, "[test] test server started\n");
}

#[tokio::test]
async fn calls_time_out_and_cancel_without_harming_the_server() {
    let dir = TempDir::new();
    let mut server = server(&[]);
    server["execute_timeout"] = json!(1);
    let manager = McpManager::start(
        config(json!({ "everything": server })),
        None,
        Recorder::default().callback(),
    );
    assert_eq!(settle(&manager, "everything").await, ready("everything", TOOLS));
    let slow = tool(&manager, "mcp__everything__sleep");

    let started = Instant::now();
    assert_eq!(
        slow.run(json!({"seconds": 30}), context(dir.path())).await,
        ToolOutput::error(
            "MCP tool `sleep` of server `everything` did not finish within 1 s; the call was cancelled"
        )
    );
    assert!(started.elapsed() < Duration::from_secs(10));

    let interrupted = context(dir.path());
    let cancel = interrupted.cancel.clone();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(200)).await;
        cancel.cancel();
    });
    assert_eq!(
        slow.run(json!({"seconds": 30}), interrupted).await,
        ToolOutput::error("[interrupted by the user; the MCP call was cancelled]")
    );

    assert_eq!(
        call(
            &manager,
            "mcp__everything__echo",
            json!({"message": "still here"}),
            dir.path()
        )
        .await,
        ToolOutput::ok("Echo: still here")
    );
    manager.shutdown().await;
}

#[tokio::test]
async fn streamable_http_server_answers_calls() {
    let server = HttpServer::start("http").await;
    let dir = TempDir::new();
    let url = format!("{}/mcp", server.base);
    let manager = McpManager::start(
        config(json!({"remote": {"url": url, "type": "streamable_http", "headers": {"X-Test": "1"}}})),
        None,
        Recorder::default().callback(),
    );
    assert_eq!(settle(&manager, "remote").await, ready("remote", TOOLS));
    assert_eq!(manager.child_pids(), Vec::<u32>::new());
    assert_eq!(
        call(
            &manager,
            "mcp__remote__echo",
            json!({"message": "over http"}),
            dir.path()
        )
        .await,
        ToolOutput::ok("Echo: over http")
    );
    // The configured header reaches the server.
    assert_eq!(
        call(
            &manager,
            "mcp__remote__header",
            json!({"name": "x-test"}),
            dir.path()
        )
        .await,
        ToolOutput::ok("1")
    );
    manager.shutdown().await;
}

#[tokio::test]
async fn legacy_sse_server_answers_calls() {
    let server = HttpServer::start("sse").await;
    let dir = TempDir::new();
    let url = format!("{}/sse", server.base);
    let manager = McpManager::start(
        config(json!({"old": {"url": url, "type": "sse"}})),
        None,
        Recorder::default().callback(),
    );
    assert_eq!(settle(&manager, "old").await, ready("old", TOOLS));
    assert_eq!(
        call(&manager, "mcp__old__add", json!({"a": 40, "b": 2}), dir.path()).await,
        ToolOutput::ok("The sum of 40 and 2 is 42.")
    );
    manager.shutdown().await;
}

#[tokio::test]
async fn broken_servers_fail_within_their_timeout_while_others_connect() {
    let dir = TempDir::new();
    // A unique duration finds this test's `sleep` among other processes.
    let silent_args = ["sleep", "99.4711"];
    let closed_port = crate::support::closed_port();
    let unreachable = format!("http://127.0.0.1:{closed_port}/mcp");
    let servers = config(json!({
        "a-missing": {"command": "miniagent-no-such-command", "connect_timeout": 2},
        "b-silent": {"command": "sleep", "args": [silent_args[1]], "connect_timeout": 2},
        "c-works": server(&[]),
        "d-off": {"command": "sleep", "args": ["1"], "disabled": true},
        "e-unreachable": {"url": unreachable, "connect_timeout": 2},
    }));
    let started = Instant::now();
    let manager = McpManager::start(servers, None, Recorder::default().callback());
    assert!(
        started.elapsed() < Duration::from_secs(1),
        "start must not wait for servers"
    );

    assert_eq!(
        settle(&manager, "a-missing").await,
        McpServerState::Failed {
            reason: "cannot start `miniagent-no-such-command`: No such file or directory (os error 2)".into()
        }
    );
    wait_for("the silent server to start", || {
        !pids_running(&silent_args).is_empty()
    })
    .await;
    assert_eq!(
        settle(&manager, "b-silent").await,
        McpServerState::Failed {
            reason: "no answer to `initialize` within 2 s".into()
        }
    );
    let failed_after = started.elapsed();
    assert!(failed_after >= Duration::from_secs(2), "{failed_after:?}");
    assert!(failed_after < Duration::from_secs(6), "{failed_after:?}");
    wait_for("the silent server to be killed", || {
        pids_running(&silent_args).is_empty()
    })
    .await;
    assert_eq!(state_of(&manager, "d-off"), McpServerState::Disabled);
    let McpServerState::Failed { reason } = settle(&manager, "e-unreachable").await else {
        panic!("{:?}", manager.states());
    };
    // The tail of the cause comes from the OS and hyper; the head is ours.
    assert!(
        reason.starts_with(&format!(
            "send initialize request failed: error sending request for url ({unreachable})"
        )),
        "{reason}"
    );
    assert!(reason.contains("Connection refused"), "{reason}");
    assert_eq!(settle(&manager, "c-works").await, ready("c-works", TOOLS));
    assert_eq!(
        call(
            &manager,
            "mcp__c-works__echo",
            json!({"message": "ok"}),
            dir.path()
        )
        .await,
        ToolOutput::ok("Echo: ok")
    );

    assert_eq!(
        manager.reconnect("b-silent").await,
        Err(ReconnectError::Failed(
            "no answer to `initialize` within 2 s".to_string()
        ))
    );
    assert_eq!(
        manager.reconnect("d-off").await,
        Err(ReconnectError::Disabled("d-off".to_string()))
    );
    assert_eq!(
        manager.reconnect("nope").await,
        Err(ReconnectError::NoSuchServer("nope".to_string()))
    );
    manager.shutdown().await;
}

#[tokio::test]
async fn a_servers_own_token_never_reaches_its_stderr_log_or_failure() {
    let dir = TempDir::new();
    let log = dir.join("mcp-stderr.log");
    let token = "tok-3b1f9a7c5e";
    let manager = McpManager::start(
        config(json!({"leaky": {
            "command": "sh",
            "args": ["-c", "echo \"starting with $API_TOKEN\" >&2; sleep 0.3; exit 3"],
            "env": {"API_TOKEN": token},
            "connect_timeout": 5,
        }})),
        Some(log.clone()),
        Recorder::default().callback(),
    );
    let McpServerState::Failed { reason } = settle(&manager, "leaky").await else {
        panic!("{:?}", manager.states());
    };
    assert!(!reason.contains(token), "{reason}");
    wait_for("the stderr line to be logged", || {
        std::fs::read_to_string(&log).is_ok_and(|written| !written.is_empty())
    })
    .await;
    let written = std::fs::read_to_string(&log).unwrap();
    assert_eq!(written, "[leaky] starting with [redacted]\n");
    manager.shutdown().await;
}

#[tokio::test]
async fn a_dead_server_fails_its_tools_until_reconnected() {
    let dir = TempDir::new();
    let recorder = Recorder::default();
    let manager = McpManager::start(
        config(json!({"everything": server(&[])})),
        None,
        recorder.callback(),
    );
    assert_eq!(settle(&manager, "everything").await, ready("everything", TOOLS));
    let echo = tool(&manager, "mcp__everything__echo");
    let [pid] = manager.child_pids()[..] else {
        panic!("{:?}", manager.child_pids());
    };
    // SAFETY: kill(2) on the server's own process group; no memory is involved.
    unsafe {
        libc::kill(-(pid as i32), libc::SIGKILL);
    }
    wait_for("the server to be marked failed", || {
        matches!(state_of(&manager, "everything"), McpServerState::Failed { .. })
    })
    .await;
    let McpServerState::Failed { reason } = state_of(&manager, "everything") else {
        unreachable!()
    };
    assert!(reason.starts_with("the server closed the connection"), "{reason}");
    assert_eq!(
        recorder.of("everything").last(),
        Some(&McpServerState::Failed {
            reason: reason.clone()
        })
    );
    assert_eq!(manager.tools().len(), 0);
    assert_eq!(
        echo.run(json!({"message": "anyone?"}), context(dir.path())).await,
        ToolOutput::error(format!(
            "MCP server `everything` is not connected (failed: {reason}); /mcp can reconnect it"
        ))
    );

    assert_eq!(manager.reconnect("everything").await, Ok(()));
    assert_eq!(state_of(&manager, "everything"), ready("everything", TOOLS));
    // A tool handed out before the reconnect reaches the new connection.
    assert_eq!(
        echo.run(json!({"message": "back"}), context(dir.path())).await,
        ToolOutput::ok("Echo: back")
    );
    manager.shutdown().await;
}

#[tokio::test]
async fn shutdown_leaves_no_server_process_behind() {
    let dir = TempDir::new();
    let manager = McpManager::start(
        config(json!({
            "everything": server(&["--child"]),
            "files": server(&["--child"]),
        })),
        None,
        Recorder::default().callback(),
    );
    assert_eq!(settle(&manager, "everything").await, ready("everything", TOOLS));
    assert!(matches!(
        settle(&manager, "files").await,
        McpServerState::Ready { .. }
    ));
    let leaders = manager.child_pids();
    assert_eq!(leaders.len(), 2, "{leaders:?}");
    let processes: Vec<u32> = leaders.iter().flat_map(|pid| group_members(*pid)).collect();
    // Each server started a child (as one started through npx does): each group holds
    // more than its leader, and all of it must go.
    assert!(processes.len() > leaders.len(), "{processes:?}");
    assert!(processes.iter().all(|pid| running(*pid)), "{processes:?}");
    let echo = tool(&manager, "mcp__everything__echo");

    manager.shutdown().await;
    let still_running: Vec<u32> = processes.iter().copied().filter(|pid| running(*pid)).collect();
    assert_eq!(still_running, Vec::<u32>::new());
    assert_eq!(manager.child_pids(), Vec::<u32>::new());
    assert_eq!(manager.tools().len(), 0);
    assert_eq!(
        echo.run(json!({"message": "late"}), context(dir.path())).await,
        ToolOutput::error(
            "MCP server `everything` is not connected (failed: shut down); /mcp can reconnect it"
        )
    );
    assert_eq!(
        manager.reconnect("everything").await,
        Err(ReconnectError::ShutDown)
    );
}

#[tokio::test]
async fn dropping_the_manager_kills_its_servers() {
    // Two names that sanitise alike: the second server's tool names get a suffix, and
    // each server's state (what `/mcp` lists) names its tools as the model is offered them.
    let manager = McpManager::start(
        config(json!({"dup.x": server(&["--child"]), "dup_x": server(&["--child"])})),
        None,
        Recorder::default().callback(),
    );
    assert_eq!(settle(&manager, "dup.x").await, ready("dup_x", TOOLS));
    assert_eq!(settle(&manager, "dup_x").await, ready("dup_x_2", TOOLS));
    let offered: Vec<String> = manager
        .tools()
        .iter()
        .map(|tool| tool.name().to_string())
        .collect();
    let listed: Vec<String> = manager
        .states()
        .into_iter()
        .flat_map(|(_, state)| match state {
            McpServerState::Ready { tools } => tools,
            _ => Vec::new(),
        })
        .collect();
    assert_eq!(listed, offered);
    let leaders = manager.child_pids();
    assert_eq!(leaders.len(), 2, "{leaders:?}");
    let processes: Vec<u32> = leaders.iter().flat_map(|pid| group_members(*pid)).collect();
    assert!(processes.len() > 2, "{processes:?}");
    let copy = manager.clone();
    drop(manager);
    assert!(processes.iter().all(|pid| running(*pid)), "a clone keeps them");
    drop(copy);
    wait_for("the servers to die", || {
        processes.iter().all(|pid| !running(*pid))
    })
    .await;
}
