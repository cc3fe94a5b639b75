//! An MCP server that answers with a huge result (issue 15, item 6): the call ends at
//! once with a bounded result that says it was cut, instead of hanging until the call's
//! timeout, and the connection keeps working. The server is a small Node.js script
//! speaking MCP over stdio.
#![allow(clippy::unwrap_used, clippy::expect_used)] // A test fails by panicking.

// Shared with tests/mcp.rs, which uses more of it.
#[allow(dead_code)]
use crate::mcp_harness as harness;
#[allow(dead_code)]
use crate::support::tempdir;

use harness::*;
use miniagent::tools::mcp::McpManager;
use pretty_assertions::assert_eq;
use serde_json::json;
use tempdir::TempDir;

/// Answers `initialize`, lists `huge` and `small`, and answers `huge` with a 50 MB text.
const SERVER: &str = r#"
const readline = require('readline');
const rl = readline.createInterface({ input: process.stdin });
const send = (message) => process.stdout.write(JSON.stringify(message) + '\n');
rl.on('line', (line) => {
  const message = JSON.parse(line);
  if (message.id === undefined) return;
  const answer = (result) => send({ jsonrpc: '2.0', id: message.id, result });
  switch (message.method) {
    case 'initialize':
      return answer({
        protocolVersion: message.params.protocolVersion,
        capabilities: { tools: {} },
        serverInfo: { name: 'huge', version: '1.0.0' },
      });
    case 'tools/list':
      return answer({ tools: ['huge', 'small'].map((name) => ({
        name, description: name, inputSchema: { type: 'object', properties: {} },
      })) });
    case 'tools/call':
      if (message.params.name === 'huge') {
        return answer({ content: [{ type: 'text', text: 'BEGIN ' + 'x'.repeat(50 * 1024 * 1024) }] });
      }
      return answer({ content: [{ type: 'text', text: 'small answer' }] });
    default:
      return send({ jsonrpc: '2.0', id: message.id, error: { code: -32601, message: 'unknown method' } });
  }
});
"#;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_huge_mcp_result_is_cut_at_once_and_the_server_stays_usable() {
    let dir = TempDir::new();
    let script = dir.path().join("server.js");
    std::fs::write(&script, SERVER).unwrap();
    let manager = McpManager::start(
        config(json!({ "huge": {
            "command": "node",
            "args": [script],
            "execute_timeout": 120,
        }})),
        None,
        Recorder::default().callback(),
    );
    assert_eq!(settle(&manager, "huge").await, ready(&["huge", "small"]));
    // Before the fix the answer was dropped unseen and this waited out the 120 s timeout,
    // ending in "did not finish within"; the content shows which way it went.
    let output = call(&manager, "mcp__huge__huge", json!({}), dir.path()).await;
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
    let again = call(&manager, "mcp__huge__small", json!({}), dir.path()).await;
    assert_eq!((again.is_error, again.content.as_str()), (false, "small answer"));
    manager.shutdown().await;
}

/// An MCP call is asked about as one: the server, the tool as the server names it and
/// the arguments, so front ends need not take the prefixed name apart.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_mcp_call_is_asked_about_by_server_and_tool() {
    let dir = TempDir::new();
    let script = dir.path().join("server.js");
    std::fs::write(&script, SERVER).unwrap();
    let manager = McpManager::start(
        config(json!({ "huge": {"command": "node", "args": [script]}})),
        None,
        Recorder::default().callback(),
    );
    assert_eq!(settle(&manager, "huge").await, ready(&["huge", "small"]));
    let workspace = miniagent::tools::paths::Workspace::new(dir.path(), &[]);
    let arguments = json!({"level": 3});
    let request = tool(&manager, "mcp__huge__small")
        .approval_request(&arguments, &workspace)
        .unwrap();
    assert_eq!(
        request,
        miniagent::protocol::ApprovalRequest::McpCall {
            server: "huge".into(),
            tool: "small".into(),
            arguments: arguments.clone(),
        }
    );
    manager.shutdown().await;
}
