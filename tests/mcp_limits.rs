//! An MCP server that answers with a huge result (issue 15, item 6): the call ends at
//! once with a bounded result that says it was cut, instead of hanging until the call's
//! timeout, and the connection keeps working. The server is the test server
//! (`tests/mcp-server`) over stdio, serving long and endless tool lists too.
#![allow(clippy::unwrap_used, clippy::expect_used)] // A test fails by panicking.

// Shared with tests/mcp.rs, which uses more of it.
#[allow(dead_code)]
use crate::mcp_harness as harness;
#[allow(dead_code)]
use crate::support::tempdir;

use harness::*;
use miniagent_core::tools::mcp::{McpManager, McpServerState};
use pretty_assertions::assert_eq;
use serde_json::json;
use tempdir::TempDir;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_huge_mcp_result_is_cut_at_once_and_the_server_stays_usable() {
    let dir = TempDir::new();
    let mut server = server(&[]);
    server["execute_timeout"] = json!(120);
    let manager = McpManager::start(
        config(json!({ "huge": server })),
        None,
        Recorder::default().callback(),
    );
    assert_eq!(settle(&manager, "huge").await, ready("huge", TOOLS));
    // Before the fix the answer was dropped unseen and this waited out the 120 s timeout,
    // ending in "did not finish within"; the content shows which way it went.
    let output = call(&manager, "mcp__huge__huge", json!({"megabytes": 50}), dir.path()).await;
    assert!(
        !output.content.contains("did not finish within"),
        "{}",
        &output.content[..200.min(output.content.len())]
    );
    assert!(
        output.content.starts_with("BEGIN xxxx"),
        "{}",
        &output.content[..200.min(output.content.len())]
    );
    assert!(
        output.content.contains("[cut: the MCP server's answer was 52428") && output.content.len() < 100_000,
        "{} bytes, ending {:?}",
        output.content.len(),
        &output.content[output.content.len().saturating_sub(300)..]
    );
    let again = call(
        &manager,
        "mcp__huge__echo",
        json!({"message": "small"}),
        dir.path(),
    )
    .await;
    assert_eq!((again.is_error, again.content.as_str()), (false, "Echo: small"));
    manager.shutdown().await;
}

/// An MCP call is asked about as one: the server, the tool as the server names it and
/// the arguments, so front ends need not take the prefixed name apart.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_mcp_call_is_asked_about_by_server_and_tool() {
    let dir = TempDir::new();
    let manager = McpManager::start(
        config(json!({ "huge": server(&[]) })),
        None,
        Recorder::default().callback(),
    );
    assert_eq!(settle(&manager, "huge").await, ready("huge", TOOLS));
    let workspace = miniagent_core::tools::paths::Workspace::new(dir.path(), &[]);
    let arguments = json!({"level": 3});
    let request = tool(&manager, "mcp__huge__echo")
        .approval_request(&arguments, &workspace)
        .await
        .unwrap();
    assert_eq!(
        request,
        miniagent_protocol::ApprovalRequest::McpCall {
            server: "huge".into(),
            tool: "echo".into(),
            arguments: arguments.clone(),
        }
    );
    manager.shutdown().await;
}

/// The big server's tools: `tool_0` … `tool_10004`, each described at some length.
fn big_tools() -> Vec<serde_json::Value> {
    (0..10_005)
        .map(|i| {
            json!({
                "name": format!("tool_{i}"),
                "description": format!(
                    "Tool number {i} of the big server: it answers with its own name. {}",
                    "Its description is as long as real ones are. ".repeat(3)
                ),
                "inputSchema": {"type": "object", "properties": {"note": {"type": "string", "description": "Anything"}}},
            })
        })
        .collect()
}

/// Issue 26, point 6: a user server listing 10,005 tools (about 700,000 tokens of
/// declarations) no longer stops every turn. The largest server's tools stay out of the
/// requests, a notice names it, its count and what was done; the small server's tools
/// are still sent whole, and the model reaches the big server's with `search_mcp_tools`,
/// whose finds are declared from the next request on and run; a deferred tool called by
/// its name without a search runs too.
#[test]
fn a_server_with_ten_thousand_tools_is_searched_not_sent() {
    let server = crate::support::ScriptedServer::start_blocking(vec![
        crate::support::Reply::tool("s1", "search_mcp_tools", r#"{"query": "tool_4242", "limit": 2}"#),
        crate::support::Reply::tool("b1", "mcp__big__tool_4242", "{}"),
        // Named without a search (remembered from earlier, say): it still runs.
        crate::support::Reply::tool("b2", "mcp__big__tool_77", "{}"),
        crate::support::Reply::text("done"),
    ]);
    let home = TempDir::new();
    let workspace = TempDir::new();
    let big = big_tools();
    let small = json!([
        {"name": "ping", "description": "Answers.", "inputSchema": {"type": "object"}},
        {"name": "pong", "description": "Answers too.", "inputSchema": {"type": "object"}},
    ]);
    let listing = |name: &str, tools: &serde_json::Value| {
        let file = home.write(format!("{name}.json"), tools.to_string());
        harness::server(&["--tools-file", file.to_str().unwrap()])
    };
    home.write(
        "mcp.json",
        json!({"mcpServers": {"big": listing("big", &json!(big)), "small": listing("small", &small)}})
            .to_string(),
    );
    // Budget 40,000 - 4,000 - 1,000 = 35,000 tokens; the MCP tools' share is a quarter.
    home.write(
        "config.toml",
        "[agent]\ntoken_limit = 40000\n[model]\nmax_output_tokens = 4000\n",
    );
    let output = crate::support::cli::exec(&home, &workspace, &server, &["use tool 4242"]);
    let stderr = crate::support::cli::text(&output.stderr);
    assert_eq!(output.status.code(), Some(0), "{stderr}");
    // What declaring them would take, counted as the notice counts (four bytes a token).
    let bytes: usize = big
        .iter()
        .map(|tool| {
            let name = format!("mcp__big__{}", tool["name"].as_str().unwrap());
            name.len() + tool["description"].as_str().unwrap().len() + tool["inputSchema"].to_string().len()
        })
        .sum();
    let notice = format!(
        "note: MCP server `big` lists 10005 tools, about {} tokens of declarations, more than the 8750 tokens (a quarter of the prompt budget) every request may spend on MCP tools: they are not sent with every request; the model finds the ones it needs with search_mcp_tools",
        bytes.div_ceil(4)
    );
    assert_eq!(
        stderr
            .lines()
            .filter(|line| line.contains("MCP server `big`"))
            .collect::<Vec<_>>(),
        vec![notice.as_str()],
        "{stderr}"
    );
    let requests = server.requests();
    assert_eq!(requests.len(), 4, "{stderr}");
    let mcp_offered = |index: usize| -> Vec<String> {
        requests[index].body["tools"]
            .as_array()
            .unwrap()
            .iter()
            .filter_map(|tool| tool["name"].as_str())
            .filter(|name| name.starts_with("mcp__") || *name == "search_mcp_tools")
            .map(str::to_string)
            .collect()
    };
    assert_eq!(
        mcp_offered(0),
        ["mcp__small__ping", "mcp__small__pong", "search_mcp_tools"]
    );
    assert!(
        requests[0].raw_body.len() < 100_000,
        "{} bytes",
        requests[0].raw_body.len()
    );
    assert_eq!(
        mcp_offered(1),
        [
            "mcp__small__ping",
            "mcp__small__pong",
            "mcp__big__tool_4242",
            "mcp__big__tool_0",
            "search_mcp_tools"
        ]
    );
    let result = |index: usize| {
        let messages = requests[index].body["messages"].as_array().unwrap();
        messages.last().unwrap()["content"][0]["content"].clone()
    };
    let described = |i: usize| {
        format!(
            "Tool number {i} of the big server: it answers with its own name. {}",
            "Its description is as long as real ones are. ".repeat(3)
        )
    };
    assert_eq!(
        result(1),
        format!(
            "Tools of `big` (10005 tools) that match `tool_4242`; they are declared from your next step on, so call them then by these names:\n\
             - mcp__big__tool_4242: {}\n- mcp__big__tool_0: {}\n10003 more match; a narrower query finds them.",
            described(4242),
            described(0)
        )
    );
    assert_eq!(result(2), "tool_4242 answered");
    assert_eq!(result(3), "tool_77 answered");
    assert_eq!(mcp_offered(3), mcp_offered(1));
    // Front ends are told what is held back and what the model found (the workbench's
    // `/mcp` shows it), each time that changes: as the requests above were sent.
    let logs = crate::support::cli::session_logs(&home);
    let log = std::fs::read_to_string(&logs[0]).unwrap();
    let told: Vec<serde_json::Value> = log
        .lines()
        .filter_map(|line| serde_json::from_str::<serde_json::Value>(line).ok())
        .filter(|record| record["event"]["type"] == "mcp_tools_deferred")
        .map(|record| record["event"]["servers"].clone())
        .collect();
    assert_eq!(
        told,
        [
            json!([{"server": "big", "found": []}]),
            json!([{"server": "big", "found": ["mcp__big__tool_4242", "mcp__big__tool_0"]}]),
        ]
    );
}

/// A server whose tool list never ends (a new cursor on every page) or comes back to a
/// cursor it gave before is not used, with the reason, long before its connect timeout:
/// rmcp's own listing collected pages until the timeout, growing memory all the while.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_tool_list_without_end_is_refused_not_collected() {
    for (mode, reason) in [
        (
            "endless",
            "the server listed more than 100000 tools or 64 MB of tool declarations; it is not used",
        ),
        // Empty pages, each with a new cursor of 1 MB: the cursors are what would grow.
        (
            "cursors",
            "the server listed more than 100000 tools or 64 MB of tool declarations; it is not used",
        ),
        (
            "loop",
            "the server's tool list repeated a page cursor (it would never end); it is not used",
        ),
    ] {
        let mut endless = server(&["--endless", mode]);
        endless["connect_timeout"] = json!(600);
        let manager = McpManager::start(
            config(json!({ "endless": endless })),
            None,
            Recorder::default().callback(),
        );
        let started = std::time::Instant::now();
        let state = settle(&manager, "endless").await;
        assert_eq!(
            state,
            McpServerState::Failed {
                reason: reason.to_string()
            },
            "{mode}"
        );
        // Not the 600 s timeout: the bound ended it.
        assert!(
            started.elapsed() < std::time::Duration::from_secs(120),
            "{mode}: {:?}",
            started.elapsed()
        );
        manager.shutdown().await;
    }
}
