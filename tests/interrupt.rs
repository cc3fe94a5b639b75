//! Interrupts at every moment of a turn: during the stream, while a tool runs, while an
//! approval is pending. Each ends the turn before it would have ended by itself (what
//! it was doing is cut short) and leaves a history the provider accepts. How quickly is
//! measured by `cargo bench --bench interrupt` (budget 500 ms): a clock in a test fails
//! on a loaded machine.
#![allow(clippy::unwrap_used, clippy::expect_used)] // A test fails by panicking.

use crate::support;

use std::time::{Duration, Instant};

use miniagent_core::config::{ApprovalMode, Provider};
use miniagent_protocol::{Decision, Event, Op};
use pretty_assertions::assert_eq;
use serde_json::json;
use support::harness::{Harness, test_config};
use support::validate::{assert_valid_anthropic, assert_valid_openai, unmarked};
use support::*;

/// Sends an interrupt and waits for the `turn_aborted`.
async fn interrupt(agent: &mut Harness) {
    agent.send(Op::Interrupt);
    agent.wait_for(|e| matches!(e, Event::TurnAborted { .. })).await;
}

fn assert_valid(provider: Provider, body: &serde_json::Value) {
    match provider {
        Provider::Anthropic => assert_valid_anthropic(body),
        _ => assert_valid_openai(body),
    }
}

#[tokio::test]
async fn interrupt_during_the_stream() {
    for provider in [Provider::Anthropic, Provider::Openai] {
        let long = "word ".repeat(200);
        let server = ScriptedServer::start(vec![Reply::slow(Turn::text(long.clone()), 50)]).await;
        let mut agent = Harness::start(test_config(provider, &server));
        agent.send(Op::UserInput {
            text: "tell me a story".into(),
        });
        agent.wait_for(|e| matches!(e, Event::TextDelta { .. })).await;
        interrupt(&mut agent).await;

        server.push(Reply::text("fine"));
        let next = agent.turn("never mind").await;
        assert_eq!(next.last(), Some(&Event::TurnComplete { text: "fine".into() }));
        let body = &server.requests()[1].body;
        assert_valid(provider, body);
        // The partial reply is kept, marked, before the new message.
        let messages = body["messages"].as_array().unwrap();
        let partial = match provider {
            Provider::Anthropic => messages[1]["content"][0]["text"].as_str().unwrap().to_string(),
            _ => messages[2]["content"].as_str().unwrap().to_string(),
        };
        let kept = partial
            .strip_suffix("\n\n[interrupted by the user]")
            .unwrap_or_else(|| panic!("{provider}: not marked: {partial}"));
        // The stream was cut short: what was kept is a part of the reply, not all of it.
        assert!(kept.starts_with("word"), "{partial}");
        assert!(
            long.starts_with(kept) && kept.len() < long.trim_end().len(),
            "{provider}: kept {} of {} bytes",
            kept.len(),
            long.len()
        );
    }
}

#[tokio::test]
async fn interrupt_while_a_tool_runs_kills_its_process_group() {
    for provider in [Provider::Anthropic, Provider::Openai] {
        let server = ScriptedServer::start(vec![Reply::Stream(
            Turn::new()
                .tool(
                    "call_1",
                    "bash",
                    r#"{"command": "echo $$ > pid; sleep 30 & echo $! > child; wait"}"#,
                )
                .tool("call_2", "bash", r#"{"command": "echo never runs"}"#),
        )])
        .await;
        let mut agent = Harness::start(test_config(provider, &server));
        agent.send(Op::UserInput {
            text: "wait a while".into(),
        });
        agent
            .wait_for(|e| matches!(e, Event::ToolCallStarted { .. }))
            .await;
        // Give bash a moment to write its pid files.
        let child_file = agent.workspace.join("child");
        let deadline = Instant::now() + Duration::from_secs(5);
        while !std::fs::read_to_string(&child_file).is_ok_and(|s| s.ends_with('\n')) {
            assert!(Instant::now() < deadline, "the command never started");
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        interrupt(&mut agent).await;

        // The shell and its background child are both gone (TERM, then KILL at worst).
        for file in ["pid", "child"] {
            let pid = std::fs::read_to_string(agent.workspace.join(file))
                .unwrap()
                .trim()
                .to_string();
            let deadline = Instant::now() + Duration::from_secs(4);
            while std::path::Path::new(&format!("/proc/{pid}")).exists() && !is_zombie(&pid) {
                assert!(
                    Instant::now() < deadline,
                    "{file} process {pid} survived the interrupt"
                );
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
        }

        server.push(Reply::text("ok"));
        agent.turn("what happened?").await;
        let body = &server.requests()[1].body;
        assert_valid(provider, body);
        let text = body["messages"].to_string();
        assert_eq!(
            text.matches("interrupted by the user").count(),
            2,
            "both calls answered: {text}"
        );
        assert!(
            !text.contains("never runs\\n[exit"),
            "the second call must not run: {text}"
        );
    }
}

fn is_zombie(pid: &str) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .map(|stat| {
            stat.rsplit(')')
                .next()
                .is_some_and(|rest| rest.trim_start().starts_with('Z'))
        })
        .unwrap_or(true)
}

#[tokio::test]
async fn interrupt_while_an_approval_is_pending() {
    for provider in [Provider::Anthropic, Provider::Openai] {
        let server = ScriptedServer::start(vec![Reply::tool(
            "call_9",
            "bash",
            r#"{"command": "touch made-it"}"#,
        )])
        .await;
        let mut config = test_config(provider, &server);
        config.agent.approval = ApprovalMode::Ask;
        let mut agent = Harness::start(config);
        agent.send(Op::UserInput {
            text: "make a file".into(),
        });
        let request = agent
            .wait_for(|e| matches!(e, Event::ApprovalRequested { .. }))
            .await;
        let Event::ApprovalRequested {
            id,
            name,
            preview,
            session_rule,
            ..
        } = request
        else {
            unreachable!()
        };
        assert_eq!((id.as_str(), name.as_str()), ("call_9", "bash"));
        assert!(preview.starts_with("$ touch made-it\n(in "), "{preview}");
        assert_eq!(
            session_rule,
            Some(miniagent_protocol::ApprovalRule::Command {
                program: "touch".into()
            })
        );
        interrupt(&mut agent).await;
        // A late answer finds nothing waiting, and nothing runs.
        agent.send(Op::Approval {
            id: "call_9".into(),
            decision: Decision::Approve,
        });
        agent.wait_for(|e| matches!(e, Event::Notice { .. })).await;
        assert!(!agent.workspace.join("made-it").exists());

        server.push(Reply::text("understood"));
        agent.turn("skip that").await;
        let body = &server.requests()[1].body;
        assert_valid(provider, body);
        assert!(body["messages"].to_string().contains("interrupted by the user"));
    }
}

#[tokio::test]
async fn approvals_run_deny_and_remember() {
    let server = ScriptedServer::start(vec![
        Reply::tool("c1", "bash", r#"{"command": "echo first"}"#),
        Reply::tool("c2", "bash", r#"{"command": "echo second"}"#),
        Reply::tool("c3", "bash", r#"{"command": "echo third"}"#),
        Reply::text("done"),
    ])
    .await;
    let mut config = test_config(Provider::Anthropic, &server);
    config.agent.approval = ApprovalMode::Ask;
    let mut agent = Harness::start(config);
    agent.send(Op::UserInput {
        text: "three commands".into(),
    });
    agent
        .wait_for(|e| matches!(e, Event::ApprovalRequested { id, .. } if id == "c1"))
        .await;
    agent.send(Op::Approval {
        id: "c1".into(),
        decision: Decision::Deny {
            reason: Some("not now".into()),
        },
    });
    agent
        .wait_for(|e| matches!(e, Event::ApprovalRequested { id, .. } if id == "c2"))
        .await;
    agent.send(Op::Approval {
        id: "c2".into(),
        decision: Decision::ApproveForSession,
    });
    // c3 runs without asking.
    agent.wait_for(|e| matches!(e, Event::TurnComplete { .. })).await;
    let asked: Vec<&Event> = agent
        .events
        .iter()
        .filter(|e| matches!(e, Event::ApprovalRequested { .. }))
        .collect();
    assert_eq!(asked.len(), 2);
    let results: Vec<serde_json::Value> = server.requests()[1..]
        .iter()
        .map(|r| unmarked(&r.body["messages"].as_array().unwrap().last().unwrap()["content"][0]))
        .collect();
    assert_eq!(
        results,
        vec![
            json!({"type": "tool_result", "tool_use_id": "c1", "content": "the person refused this call: not now. Do not retry it; adjust the plan or ask them.", "is_error": true}),
            json!({"type": "tool_result", "tool_use_id": "c2", "content": "second\n[exit code: 0]", "is_error": false}),
            json!({"type": "tool_result", "tool_use_id": "c3", "content": "third\n[exit code: 0]", "is_error": false}),
        ]
    );
}

#[tokio::test]
async fn read_only_mode_refuses_commands_without_asking() {
    let server = ScriptedServer::start(vec![
        Reply::tool("c1", "bash", r#"{"command": "touch x"}"#),
        Reply::text("ok"),
    ])
    .await;
    let mut config = test_config(Provider::Openai, &server);
    config.agent.approval = ApprovalMode::ReadOnly;
    let mut agent = Harness::start(config);
    let events = agent.turn("try").await;
    assert!(
        !events
            .iter()
            .any(|e| matches!(e, Event::ApprovalRequested { .. }))
    );
    assert!(!agent.workspace.join("x").exists());
    let tool_message = server.requests()[1].body["messages"][3].clone();
    assert!(
        tool_message["content"]
            .as_str()
            .unwrap()
            .starts_with("Error: refused: the approval mode is read-only")
    );
}

#[tokio::test]
async fn messages_sent_during_a_turn_are_queued() {
    let server = ScriptedServer::start(vec![
        Reply::slow(Turn::text("first reply"), 30),
        Reply::text("second reply"),
    ])
    .await;
    let mut agent = Harness::start(test_config(Provider::Anthropic, &server));
    agent.send(Op::UserInput { text: "one".into() });
    agent.send(Op::UserInput { text: "two".into() });
    agent
        .wait_for(|e| matches!(e, Event::TurnComplete { text } if text == "first reply"))
        .await;
    agent
        .wait_for(|e| matches!(e, Event::TurnComplete { text } if text == "second reply"))
        .await;
    let body = &server.requests()[1].body;
    assert_valid_anthropic(body);
    assert_eq!(body["messages"][2]["content"][0]["text"], "two");
}
