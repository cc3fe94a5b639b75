//! One interoperability test against the reference server from the npm registry,
//! `@modelcontextprotocol/server-everything` (pinned, so its tool names and texts stay
//! what the assertions say); every other MCP test uses the test server this repository
//! builds. The test installs the package itself, once, with `npm install --prefix` into
//! the target folder (`<target>/mcp-interop`); later runs find it there.
//!
//! Without Node.js, npm or npm's registry the test can check nothing, and says so: under
//! `CI=true` it fails, unless `MINIAGENT_TEST_WITHOUT` names `npm` (absent on purpose,
//! e.g. `MINIAGENT_TEST_WITHOUT=npm`); elsewhere it prints why it skipped on stderr.
#![allow(clippy::unwrap_used, clippy::expect_used)] // A test fails by panicking.

use crate::mcp_harness::{Recorder, call, config, settle, tool};
use crate::support::tempdir::TempDir;

use std::path::PathBuf;

use miniagent_core::tools::ToolOutput;
use miniagent_core::tools::mcp::{McpManager, McpServerState};
use pretty_assertions::assert_eq;
use serde_json::json;

const PACKAGE: &str = "@modelcontextprotocol/server-everything";
const VERSION: &str = "2026.8.31";

/// Its tools, as it names them.
const TOOLS: &[&str] = &[
    "echo",
    "get-annotated-message",
    "get-env",
    "get-resource-links",
    "get-resource-reference",
    "get-structured-content",
    "get-sum",
    "get-tiny-image",
    "gzip-file-as-resource",
    "toggle-simulated-logging",
    "toggle-subscriber-updates",
    "trigger-long-running-operation",
    "simulate-research-query",
];

/// The installed server's program, installing it first if need be; why not, when
/// Node.js or npm is missing or fails.
fn install() -> Result<PathBuf, String> {
    // The installed copy needs Node.js as much as installing it needs npm.
    let node = std::process::Command::new("node").arg("--version").output();
    if !node.as_ref().is_ok_and(|output| output.status.success()) {
        return Err(format!("cannot run node (Node.js): {node:?}"));
    }
    // The test binary is `<target>/<profile>/deps/all-<hash>`.
    let exe = std::env::current_exe().unwrap();
    let prefix = exe.ancestors().nth(3).unwrap().join("mcp-interop");
    let program = prefix.join("node_modules/.bin/mcp-server-everything");
    let manifest = prefix.join(format!("node_modules/{PACKAGE}/package.json"));
    let installed = std::fs::read_to_string(&manifest)
        .ok()
        .and_then(|text| serde_json::from_str::<serde_json::Value>(&text).ok())
        .is_some_and(|manifest| manifest["version"] == VERSION);
    if installed && program.exists() {
        return Ok(program);
    }
    let output = std::process::Command::new("npm")
        .args(["install", "--prefix"])
        .arg(&prefix)
        .args(["--prefer-offline", "--no-audit", "--no-fund"])
        .arg(format!("{PACKAGE}@{VERSION}"))
        .stdin(std::process::Stdio::null())
        .output()
        .map_err(|err| format!("cannot run npm: {err}"))?;
    if !output.status.success() {
        // npm's first lines say why (its stack trace follows): the skip stays a few lines.
        let stderr = String::from_utf8_lossy(&output.stderr);
        let why: Vec<&str> = stderr.lines().take(4).collect();
        return Err(format!(
            "`npm install {PACKAGE}@{VERSION}` failed: {}",
            why.join(" / ")
        ));
    }
    Ok(program)
}

#[tokio::test]
async fn the_reference_everything_server_lists_its_tools_and_answers_calls() {
    let program = match tokio::task::spawn_blocking(install).await.unwrap() {
        Ok(program) => program,
        Err(why) => {
            // Fails under CI unless MINIAGENT_TEST_WITHOUT names npm.
            crate::support::skip::missing("npm", why);
            return;
        }
    };
    let dir = TempDir::new();
    let manager = McpManager::start(
        config(json!({"everything": {"command": program, "connect_timeout": 60}})),
        None,
        Recorder::default().callback(),
    );
    let ready = McpServerState::Ready {
        tools: TOOLS
            .iter()
            .map(|name| format!("mcp__everything__{name}"))
            .collect(),
    };
    assert_eq!(settle(&manager, "everything").await, ready);
    assert_eq!(
        tool(&manager, "mcp__everything__echo").input_schema(),
        json!({
            "type": "object",
            "properties": {"message": {"type": "string", "description": "Message to echo"}},
            "required": ["message"]
        })
    );
    let answers = [
        ("echo", json!({"message": "hello 世界"}), "Echo: hello 世界"),
        (
            "get-sum",
            json!({"a": 2, "b": 3.5}),
            "The sum of 2 and 3.5 is 5.5.",
        ),
        (
            "get-tiny-image",
            json!({}),
            "Here's the image you requested:\n[image: 4033 bytes, image/png]\nThe image above is the MCP logo.",
        ),
    ];
    for (name, arguments, expected) in answers {
        assert_eq!(
            call(
                &manager,
                &format!("mcp__everything__{name}"),
                arguments,
                dir.path()
            )
            .await,
            ToolOutput::ok(expected),
            "{name}"
        );
    }
    manager.shutdown().await;
}
