//! An MCP server that dies while a call runs: the call ends at once with an error, the
//! server's processes are gone, and the caller goes on. (A server that never answers is
//! `calls_time_out_and_cancel_without_harming_the_server` in `tests/mcp.rs`.)
#![allow(clippy::unwrap_used, clippy::expect_used)] // A test fails by panicking.

// Shared with tests/mcp.rs, which uses more of it.
#[allow(dead_code)]
use crate::mcp_harness as harness;
#[allow(dead_code)]
use crate::support::tempdir;

use std::time::{Duration, Instant};

use harness::*;
use miniagent_core::tools::ToolOutput;
use miniagent_core::tools::mcp::{McpManager, McpServerState};
use pretty_assertions::assert_eq;
use serde_json::json;
use tempdir::TempDir;

/// Processes of group `pgid` still running (a dead leader not yet reaped is not).
fn alive_in_group(pgid: u32) -> Vec<u32> {
    group_members(pgid)
        .into_iter()
        .filter(|pid| running(*pid))
        .collect()
}

#[tokio::test]
async fn a_server_that_dies_mid_call_fails_the_call_at_once() {
    let dir = TempDir::new();
    let mut server = server(&[]);
    server["execute_timeout"] = json!(60);
    let manager = McpManager::start(
        config(json!({ "everything": server })),
        None,
        Recorder::default().callback(),
    );
    assert_eq!(settle(&manager, "everything").await, ready("everything", TOOLS));
    let slow = tool(&manager, "mcp__everything__sleep");
    let [pid] = manager.child_pids()[..] else {
        panic!("{:?}", manager.child_pids());
    };
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(300)).await;
        // SAFETY: kill(2) on the server's own process group; no memory is involved.
        unsafe {
            libc::kill(-(pid as i32), libc::SIGKILL);
        }
    });
    let started = Instant::now();
    let output = slow.run(json!({"seconds": 30}), context(dir.path())).await;
    assert!(output.is_error, "{output:?}");
    assert!(
        started.elapsed() < Duration::from_secs(10),
        "the call waited {:?} for a dead server",
        started.elapsed()
    );
    wait_for("the server's processes to be gone", || {
        alive_in_group(pid).is_empty()
    })
    .await;
    wait_for("the server to be marked failed", || {
        matches!(state_of(&manager, "everything"), McpServerState::Failed { .. })
    })
    .await;
    // The caller goes on: the tool says the server is down, and a reconnect brings it back.
    let again = slow.run(json!({"seconds": 1}), context(dir.path())).await;
    assert!(
        again.is_error && again.content.contains("is not connected"),
        "{again:?}"
    );
    assert_eq!(manager.reconnect("everything").await, Ok(()));
    assert_eq!(
        call(
            &manager,
            "mcp__everything__echo",
            json!({"message": "back"}),
            dir.path()
        )
        .await,
        ToolOutput::ok("Echo: back")
    );
    manager.shutdown().await;
}
