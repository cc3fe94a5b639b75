//! Ops a front end sends besides messages, through a real agent and the scripted server:
//! `/clear` (`Op::ClearHistory`) and resuming the session it cleared, and reconnecting an
//! MCP server (`Op::ReconnectMcp`), which lists its tools again.
#![allow(clippy::unwrap_used, clippy::expect_used)] // A test fails by panicking.

use crate::mcp_harness;
use crate::support;

use miniagent_core::config::Provider;
use miniagent_protocol::{Event, McpState, Op};
use pretty_assertions::assert_eq;
use serde_json::{Value, json};
use support::cli::{session_id, session_logs};
use support::harness::{Harness, session_log_in, test_config};
use support::{Reply, ScriptedServer, TempDir};

/// The conversation request `n` carried.
fn messages(server: &ScriptedServer, n: usize) -> Value {
    server.requests()[n].body["messages"].clone()
}

/// A user's or the model's text as the Anthropic wire carries it.
fn said(role: &str, text: &str) -> Value {
    json!({"role": role, "content": [{"type": "text", "text": text}]})
}

/// The same message marked as a cache breakpoint (the conversation's end, and where the
/// previous request's ended).
fn marked(role: &str, text: &str) -> Value {
    json!({"role": role, "content": [{"type": "text", "text": text, "cache_control": {"type": "ephemeral"}}]})
}

#[tokio::test]
async fn clear_starts_the_conversation_over_and_a_resumed_session_goes_on_after_the_clear() {
    let server = ScriptedServer::start(vec![
        Reply::text("first answer"),
        Reply::text("second answer"),
        Reply::text("third answer"),
    ])
    .await;
    let data = TempDir::new();
    let mut agent = Harness::start_recorded(test_config(Provider::Anthropic, &server), session_log_in(&data));
    agent.turn("first question").await;
    agent.send(Op::ClearHistory);
    agent.wait_for(|event| *event == Event::HistoryCleared).await;
    agent.turn("second question").await;
    agent.send(Op::Shutdown);
    agent.wait_for(|event| *event == Event::ShutdownComplete).await;
    // The request after /clear carries only what was said since.
    assert_eq!(messages(&server, 1), json!([marked("user", "second question")]));

    let log = session_logs(&data).pop().expect("the session was recorded");
    let mut resumed =
        Harness::start_recorded(test_config(Provider::Anthropic, &server), session_log_in(&data));
    resumed.send(Op::Resume { path: log.clone() });
    let announced = resumed
        .wait_for(|event| matches!(event, Event::SessionResumed { .. } | Event::Error { .. }))
        .await;
    // Both turns are the session's; the conversation is what followed the clear.
    assert_eq!(
        announced,
        Event::SessionResumed {
            id: session_id(&log),
            messages: 2,
            turns: 2,
        }
    );
    resumed.turn("third question").await;
    assert_eq!(server.requests().len(), 3);
    assert_eq!(
        messages(&server, 2),
        json!([
            marked("user", "second question"),
            said("assistant", "second answer"),
            marked("user", "third question"),
        ])
    );
}

/// The next state `server` reports, skipping other events (a server may take long to
/// start on a loaded machine: longer than the harness waits for one event).
async fn status_of(agent: &mut Harness, server: &str) -> McpState {
    let deadline = tokio::time::Instant::now() + mcp_harness::READY_TIMEOUT;
    loop {
        let event = tokio::time::timeout_at(deadline, agent.handle.events.recv())
            .await
            .unwrap_or_else(|_| panic!("{server} reports in time"))
            .unwrap();
        match event {
            Event::McpServerStatus { server: name, state } if name == server => return state,
            _ => {}
        }
    }
}

/// A server whose tool list changed since it started shows the new list only once it
/// is started again: the reconnect restarts it, and the model is offered the new tool.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reconnecting_an_mcp_server_lists_its_tools_again() {
    let server = ScriptedServer::start(vec![
        Reply::tool("m1", "mcp__listed__shout", r#"{"message": "hi"}"#),
        Reply::text("shouted"),
    ])
    .await;
    let workspace = TempDir::new();
    let folders = TempDir::new();
    // The test server reads its tool list from this file when it starts.
    let tools = folders.join("tools.json");
    let listed = |names: &[&str]| {
        let list: Vec<serde_json::Value> = names
            .iter()
            .map(|name| json!({"name": name, "description": name, "inputSchema": {"type": "object"}}))
            .collect();
        std::fs::write(&tools, serde_json::Value::from(list).to_string()).unwrap();
    };
    listed(&["echo"]);
    let mcp = mcp_harness::config(json!({
        "listed": mcp_harness::server(&["--tools-file", tools.to_str().unwrap()]),
    }));
    let mut config = test_config(Provider::Anthropic, &server);
    config.session.record = false;
    let mut agent = Harness::start_up(config, workspace, folders.path(), Some(mcp));
    assert_eq!(status_of(&mut agent, "listed").await, McpState::Connecting);
    assert_eq!(
        status_of(&mut agent, "listed").await,
        McpState::Ready {
            tools: vec!["mcp__listed__echo".into()]
        }
    );

    listed(&["echo", "shout"]);
    agent.send(Op::ReconnectMcp {
        server: "listed".into(),
    });
    assert_eq!(status_of(&mut agent, "listed").await, McpState::Connecting);
    assert_eq!(
        status_of(&mut agent, "listed").await,
        McpState::Ready {
            tools: vec!["mcp__listed__echo".into(), "mcp__listed__shout".into()]
        }
    );
    agent.send(Op::ReconnectMcp {
        server: "nowhere".into(),
    });
    assert_eq!(
        agent
            .wait_for(|event| matches!(event, Event::Notice { .. }))
            .await,
        Event::Notice {
            message: "cannot reconnect `nowhere`: there is no MCP server named `nowhere`".into()
        }
    );

    let turn = agent.turn("shout hi").await;
    assert_eq!(
        turn.last(),
        Some(&Event::TurnComplete {
            text: "shouted".into()
        })
    );
    let requests = server.requests();
    let offered: Vec<&str> = requests[0].body["tools"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|tool| tool["name"].as_str())
        .filter(|name| name.starts_with("mcp__"))
        .collect();
    assert_eq!(offered, ["mcp__listed__echo", "mcp__listed__shout"]);
    assert_eq!(
        server.last_block(1),
        json!({
            "type": "tool_result",
            "tool_use_id": "m1",
            "content": "shout answered",
            "is_error": false,
            "cache_control": {"type": "ephemeral"},
        })
    );
    agent.send(Op::Shutdown);
    agent.wait_for(|event| *event == Event::ShutdownComplete).await;
}

/// An op a front end sends the moment it sees a turn's last event meets the turn as over
/// (the ACP face sends `/clear` right after a turn: the router had not yet seen the turn's
/// task return, and refused it with "a turn is running"; the router now joins a job whose
/// last event went out before it takes the next op). Repeated, as it is a race; it did not
/// fail here without the fix, so it guards rather than proves.
#[tokio::test]
async fn an_op_sent_on_a_turns_last_event_meets_the_turn_as_over() {
    const ROUNDS: usize = 10;
    let server =
        ScriptedServer::start((0..ROUNDS).map(|n| Reply::text(format!("answer {n}"))).collect()).await;
    let data = TempDir::new();
    let mut agent = Harness::start_recorded(test_config(Provider::Anthropic, &server), session_log_in(&data));
    for round in 0..ROUNDS {
        agent.turn(&format!("question {round}")).await;
        agent.send(Op::ClearHistory);
        let answer = agent
            .wait_for(|e| matches!(e, Event::HistoryCleared | Event::Notice { .. }))
            .await;
        assert_eq!(answer, Event::HistoryCleared, "round {round}");
    }
}
