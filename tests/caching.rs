//! Prompt caching end to end: what each provider is sent (breakpoints, the cache key),
//! that a request reads what the one before it wrote, that one-off requests and the off
//! switch mark nothing, and that what the provider reports about its cache reaches the
//! front ends.

use crate::support;

use miniagent::config::Provider;
use miniagent::protocol::{Event, Op};
use serde_json::Value;
use support::harness::{Harness, session_log_in, test_config};
use support::validate::{anthropic_cache_problem, assert_valid_anthropic, unmarked};
use support::*;

/// Every marked block of a request, as (where, the block without its mark).
fn marked(body: &Value) -> Vec<(String, Value)> {
    let mut found = Vec::new();
    for (n, tool) in body["tools"].as_array().into_iter().flatten().enumerate() {
        if tool.get("cache_control").is_some() {
            found.push((format!("tools.{n}"), unmarked(tool)));
        }
    }
    for block in body["system"].as_array().into_iter().flatten() {
        if block.get("cache_control").is_some() {
            found.push(("system".to_string(), unmarked(block)));
        }
    }
    for (n, message) in body["messages"].as_array().into_iter().flatten().enumerate() {
        for (b, block) in message["content"].as_array().into_iter().flatten().enumerate() {
            if block.get("cache_control").is_some() {
                found.push((format!("messages.{n}.{b}"), unmarked(block)));
            }
        }
    }
    found
}

fn last_block(body: &Value) -> (String, Value) {
    let messages = body["messages"].as_array().unwrap();
    let blocks = messages.last().unwrap()["content"].as_array().unwrap();
    (
        format!("messages.{}.{}", messages.len() - 1, blocks.len() - 1),
        unmarked(blocks.last().unwrap()),
    )
}

/// Three steps, one with signed thinking: each request marks the system prompt (which
/// closes the tools and system prefix) and its own end; from the second step on, also the
/// end of the request before it, so the prefix that request wrote is read whatever the
/// step added. Thinking blocks are never marked and reach the provider as they came.
#[tokio::test]
async fn anthropic_requests_mark_the_prefix_the_previous_end_and_their_own_end() {
    let server = ScriptedServer::start(vec![
        Reply::tool("call_a", "bash", r#"{"command": "echo one"}"#),
        Reply::Stream(
            Turn::new()
                .thinking("Now the second command.", "sig-2")
                .with_tool("call_b", "bash", r#"{"command": "echo two"}"#),
        ),
        Reply::text("Both ran."),
    ])
    .await;
    let mut agent = Harness::start(test_config(Provider::Anthropic, &server));
    agent.turn("run two commands").await;
    let requests = server.requests();
    assert_eq!(requests.len(), 3);
    for request in &requests {
        assert_valid_anthropic(&request.body);
        assert_eq!(anthropic_cache_problem(&request.body), None);
        assert!(
            request.body["tools"]
                .as_array()
                .unwrap()
                .iter()
                .all(|t| t.get("cache_control").is_none())
        );
    }
    // The first request: the system prompt and the task.
    let first = marked(&requests[0].body);
    assert_eq!(first.len(), 2, "{first:#?}");
    assert_eq!(first[0].0, "system");
    assert_eq!(first[1], last_block(&requests[0].body));
    // Each later request marks where the one before it ended, then its own end.
    for pair in requests.windows(2) {
        let (before, after) = (&pair[0].body, &pair[1].body);
        let marks = marked(after);
        assert_eq!(marks.len(), 3, "{marks:#?}");
        assert_eq!(marks[0].0, "system");
        assert_eq!(
            marks[1],
            last_block(before),
            "the previous request's end is a breakpoint"
        );
        assert_eq!(marks[2], last_block(after));
    }
    // The thinking went back signed and unmarked.
    let thinking: Vec<&Value> = requests[2].body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|m| m["content"].as_array().unwrap())
        .filter(|b| b["type"] == "thinking")
        .collect();
    assert_eq!(
        thinking,
        vec![
            &serde_json::json!({"type": "thinking", "thinking": "Now the second command.", "signature": "sig-2"})
        ]
    );
}

/// The step-limit report and a resumed session keep the rule: at most four breakpoints,
/// the last on the request's last block.
#[tokio::test]
async fn the_step_limit_report_is_marked_like_any_step() {
    let server = ScriptedServer::start(vec![
        Reply::tool("call_a", "bash", r#"{"command": "echo one"}"#),
        Reply::tool("call_b", "bash", r#"{"command": "echo two"}"#),
        Reply::text("Report: ran two commands."),
    ])
    .await;
    let mut config = test_config(Provider::Anthropic, &server);
    config.agent.max_steps = 2;
    let mut agent = Harness::start(config);
    agent.turn("run commands forever").await;
    let requests = server.requests();
    let report = &requests.last().unwrap().body;
    assert_eq!(anthropic_cache_problem(report), None);
    let marks = marked(report);
    assert!(marks.len() <= 4);
    assert_eq!(marks.last().unwrap(), &last_block(report));
}

/// A summary call's prompt is used once: it is not marked (a cache write costs more than
/// plain input), and its system prompt goes as plain text.
#[tokio::test]
async fn summary_calls_are_not_cached() {
    let mut script: Vec<Reply> = (0..4)
        .map(|n| {
            Reply::tool(
                format!("call_{n}"),
                "bash",
                format!(r#"{{"command": "echo step {n}"}}"#),
            )
        })
        .collect();
    script.push(Reply::text("Four steps done."));
    let server = ScriptedServer::start(script).await;
    server.answer_toolless_with(Reply::text("Echoed four steps."));
    let mut agent = Harness::start(test_config(Provider::Anthropic, &server));
    agent.turn("echo four steps").await;
    agent.send(Op::CompactNow);
    agent
        .wait_for(|e| matches!(e, Event::ContextCompacted { .. } | Event::CompactionEnded { .. }))
        .await;
    let summary = server
        .requests()
        .into_iter()
        .find(|r| support::billing::is_summary_call(&r.body))
        .expect("a summary call was made");
    assert!(
        !summary.raw_body.contains("cache_control"),
        "{}",
        summary.raw_body
    );
    assert!(summary.body["system"].is_string());
}

/// `model.prompt_caching = false`: nothing is marked, the system prompt is plain text,
/// and OpenAI gets no cache key.
#[tokio::test]
async fn the_switch_turns_caching_off() {
    for provider in [Provider::Anthropic, Provider::Openai] {
        let server = ScriptedServer::start(vec![
            Reply::tool("call_a", "bash", r#"{"command": "echo one"}"#),
            Reply::text("Ran."),
        ])
        .await;
        let data = TempDir::new();
        let mut config = test_config(provider, &server);
        config.model.prompt_caching = false;
        let mut agent = Harness::start_recorded(config, session_log_in(&data));
        agent.turn("run one command").await;
        for request in server.requests() {
            assert!(
                !request.raw_body.contains("cache_control"),
                "{}",
                request.raw_body
            );
            assert!(request.body.get("prompt_cache_key").is_none());
            if provider == Provider::Anthropic {
                assert_eq!(request.body["system"], "You are a test agent.");
            }
        }
    }
}

/// OpenAI-style providers cache prefixes by themselves: every request of a session
/// carries the session's id as its cache key, and each request's messages begin with the
/// previous request's, byte for byte (an append-only prompt).
#[tokio::test]
async fn openai_requests_carry_the_session_id_and_grow_append_only() {
    let server = ScriptedServer::start(vec![
        Reply::tool("call_a", "bash", r#"{"command": "echo one"}"#),
        Reply::tool("call_b", "bash", r#"{"command": "echo two"}"#),
        Reply::text("Both ran."),
    ])
    .await;
    let data = TempDir::new();
    let log = session_log_in(&data);
    let mut agent = Harness::start_recorded(test_config(Provider::Openai, &server), log);
    agent.turn("run two commands").await;
    let logs = support::cli::session_logs(&data);
    assert_eq!(logs.len(), 1);
    let id = support::cli::session_id(&logs[0]);
    let requests = server.requests();
    for request in &requests {
        assert_eq!(request.body["prompt_cache_key"], id.as_str());
    }
    for pair in requests.windows(2) {
        let before = pair[0].body["messages"].as_array().unwrap();
        let after = pair[1].body["messages"].as_array().unwrap();
        assert_eq!(before[..], after[..before.len()], "the prompt only grew");
        assert_eq!(pair[0].body["tools"], pair[1].body["tools"]);
    }
}

/// What the provider says it read from and wrote to its cache reaches the front ends:
/// the token figures of the call and of the session.
#[tokio::test]
async fn reported_cache_figures_reach_the_front_ends() {
    for provider in [Provider::Anthropic, Provider::Openai] {
        let server = ScriptedServer::start(vec![
            Reply::Stream(
                Turn::tool("call_a", "bash", r#"{"command": "echo one"}"#).cache_usage(1000, 40, 3000, 0),
            ),
            Reply::Stream(Turn::text("Ran.").cache_usage(1100, 12, 2500, 500)),
        ])
        .await;
        let mut agent = Harness::start(test_config(provider, &server));
        let events = agent.turn("run one command").await;
        let last = events
            .iter()
            .rev()
            .find_map(|e| match e {
                Event::TokenUsage {
                    input_tokens,
                    cache_read_tokens,
                    cache_write_tokens,
                    total_input_tokens,
                    total_cache_read_tokens,
                    total_cache_write_tokens,
                    ..
                } => Some((
                    *input_tokens,
                    *cache_read_tokens,
                    *cache_write_tokens,
                    *total_input_tokens,
                    *total_cache_read_tokens,
                    *total_cache_write_tokens,
                )),
                _ => None,
            })
            .unwrap();
        match provider {
            // Anthropic reports the three parts of the prompt apart.
            Provider::Anthropic => assert_eq!(last, (1100 + 2500 + 500, 2500, 500, 8100, 5500, 500)),
            // OpenAI reports the whole prompt and the part read; writes are not reported.
            _ => assert_eq!(last, (1100 + 2500 + 500, 2500, 0, 8100, 5500, 0)),
        }
    }
}
