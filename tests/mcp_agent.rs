//! MCP through the agent loop: a real server from npm (`server-everything` over stdio),
//! started from the configuration by startup, announced through the event stream, its
//! tools called by the scripted model, the results carried back in the next requests.

mod support;

#[path = "mcp/harness.rs"]
#[allow(dead_code)]
mod mcp_harness;

use std::time::Duration;

use miniagent::config::{ApprovalMode, Provider};
use miniagent::protocol::{Event, McpState, Op};
use miniagent::startup;
use serde_json::json;
use support::harness::test_config;
use support::*;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn mcp_tools_run_through_the_agent_loop() {
    mcp_harness::warm_npm_cache().await;
    let server = ScriptedServer::start(vec![
        Reply::tool(
            "m1",
            "mcp__everything__echo",
            r#"{"message": "hello from the loop"}"#,
        ),
        Reply::tool("m2", "mcp__everything__get-sum", r#"{"a": 2, "b": 3}"#),
        Reply::text("Both MCP calls worked."),
    ])
    .await;
    let mut config = test_config(Provider::Anthropic, &server);
    config.agent.approval = ApprovalMode::FullAuto;
    let workspace = TempDir::new();
    let mcp = mcp_harness::config(json!({
        "everything": mcp_harness::npx(mcp_harness::EVERYTHING, &["stdio"]),
        "missing": {"command": "no-such-mcp-server-binary", "connect_timeout": 5},
    }));
    let options = startup::build(
        config,
        workspace.path().to_path_buf(),
        "sk-test".into(),
        Some(mcp),
        false,
    )
    .unwrap();
    let mut agent = miniagent::agent::spawn(options);

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
    assert!(ready.unwrap().contains(&"echo".to_string()));
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
    let pids_before = processes_mentioning("server-everything");
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

/// Live processes whose command line mentions `needle` (npx and the node server it starts).
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
