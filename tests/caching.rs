//! Prompt caching end to end: what each provider is sent (breakpoints, the cache key),
//! that a request reads what the one before it wrote, that one-off requests and the off
//! switch mark nothing, and that what the provider reports about its cache reaches the
//! front ends.

use crate::support;

use miniagent_core::config::Provider;
use miniagent_core::llm::CacheKeyField;
use miniagent_protocol::{Event, Op};
use serde_json::{Value, json};
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
    // Steps that say something as they go: a run of a few tokens is not worth a summary.
    let mut script: Vec<Reply> = (0..4)
        .map(|n| {
            Reply::Stream(
                Turn::new()
                    .with_text("Echoing the next step now. ".repeat(40))
                    .with_tool(
                        format!("call_{n}"),
                        "bash",
                        format!(r#"{{"command": "echo step {n}"}}"#),
                    ),
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
/// carries the session's id as its cache key (where the server takes the field), and
/// each request's messages begin with the previous request's, byte for byte (an
/// append-only prompt).
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
    let mut config = test_config(Provider::Openai, &server);
    // The scripted server stands for OpenAI itself here.
    config.model.prompt_cache_key = CacheKeyField::Always;
    let mut agent = Harness::start_recorded(config, log);
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

/// By default the cache key goes to OpenAI's own API only: several OpenAI-compatible
/// servers (Groq, Cerebras, NVIDIA) refuse a request with a field they do not know.
#[tokio::test]
async fn other_openai_compatible_servers_get_no_cache_key_by_default() {
    let server = ScriptedServer::start(vec![Reply::text("hi")]).await;
    let data = TempDir::new();
    let log = session_log_in(&data);
    let config = test_config(Provider::Openai, &server);
    assert_eq!(config.model.prompt_cache_key, CacheKeyField::Auto);
    let mut agent = Harness::start_recorded(config, log);
    agent.turn("hello").await;
    let request = server.last_request().unwrap();
    assert!(request.body.get("prompt_cache_key").is_none(), "{}", request.body);
    assert!(request.body.get("max_tokens").is_some(), "{}", request.body);
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

/// The bill of one recorded session, computed by hand at the default prices of
/// claude-sonnet-4-5 ($3 input, $15 output, $3.75 cache write, $0.30 cache read per
/// million tokens), is what `exec` shows, what `--json` carries and what the log keeps.
#[test]
fn costs_shown_match_a_hand_computation() {
    let script = || {
        vec![
            Reply::Stream(
                Turn::tool("call_a", "bash", r#"{"command": "echo one"}"#).cache_usage(1000, 40, 3000, 500),
            ),
            Reply::Stream(Turn::text("Ran.").cache_usage(1100, 12, 2500, 500)),
        ]
    };
    // Call 1: 1000 × 3 + 3000 × 0.30 + 500 × 3.75 + 40 × 15 = 6,375 millionths of a dollar.
    // Call 2: 1100 × 3 + 2500 × 0.30 + 500 × 3.75 + 12 × 15 = 6,105.
    let by_hand = (6_375.0 + 6_105.0) / 1e6;
    let home = TempDir::new();
    let workspace = TempDir::new();
    let server = ScriptedServer::start_blocking(script());
    let priced = |home: &TempDir, server: &ScriptedServer| {
        let mut command = support::cli::miniagent(home);
        command
            .arg("--workspace")
            .arg(workspace.path())
            .args([
                "--base-url",
                &server.anthropic_base_url(),
                "--model",
                "claude-sonnet-4-5",
            ])
            .args(["exec", "--approval", "full-auto"]);
        command
    };
    let output = priced(&home, &server)
        .args(["--json", "run it"])
        .output()
        .unwrap();
    assert_eq!(
        output.status.code(),
        Some(0),
        "{}",
        support::cli::text(&output.stderr)
    );
    let events: Vec<Value> = support::cli::text(&output.stdout)
        .lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect();
    let turn = events
        .iter()
        .find(|e| e["type"] == "turn_usage")
        .expect("a turn_usage event");
    assert_eq!(turn["model_calls"], 2);
    assert_eq!(turn["input_tokens"], 1000 + 3000 + 500 + 1100 + 2500 + 500);
    assert_eq!(turn["cache_read_tokens"], 5500);
    assert_eq!(turn["cache_write_tokens"], 1000);
    assert_eq!(turn["output_tokens"], 52);
    let cost = turn["cost_usd"].as_f64().unwrap();
    assert!((cost - by_hand).abs() < 1e-12, "{cost} != {by_hand}");
    // The session's figure, in the last token_usage event and in the log.
    let usage = events.iter().rev().find(|e| e["type"] == "token_usage").unwrap();
    assert!((usage["cost_usd"].as_f64().unwrap() - by_hand).abs() < 1e-12);
    let log = std::fs::read_to_string(support::cli::session_logs(&home).pop().unwrap()).unwrap();
    let logged = log
        .lines()
        .rev()
        .filter_map(|line| serde_json::from_str::<Value>(line).ok())
        .find_map(|record| record["event"]["cost_usd"].as_f64())
        .unwrap();
    assert!((logged - by_hand).abs() < 1e-12, "the log keeps {logged}");
    let id = support::cli::session_id(&support::cli::session_logs(&home)[0]);
    let shown = support::cli::miniagent(&home)
        .args(["sessions", "show", &id])
        .output()
        .unwrap();
    let shown = support::cli::text(&shown.stdout);
    assert!(shown.contains("\ncost       $0.012\n"), "{shown}");
    // exec's closing line says it, as every face shows a cost.
    let server = ScriptedServer::start_blocking(script());
    let output = priced(&TempDir::new(), &server).arg("run it").output().unwrap();
    let stderr = support::cli::text(&output.stderr);
    assert!(
        stderr.contains("turn: 2 model calls · in 8.6k, 5.5k of it from the cache · out 52 · $0.012"),
        "{stderr}"
    );
}

/// agent.max_cost: a turn whose next step and progress report would pass it stops with
/// the report instead; one that could not afford its first request sends none.
#[tokio::test]
async fn a_turn_stops_with_a_report_before_it_would_pass_its_cost_limit() {
    // Each call reports 2,000 input and 500 output tokens: $0.0135 at Sonnet's prices.
    let step = |n: usize| {
        Reply::Stream(Turn::tool(format!("call_{n}"), "bash", r#"{"command": "echo step"}"#).usage(2000, 500))
    };
    let server = ScriptedServer::start((0..5).map(step).collect()).await;
    server.push(Reply::Stream(
        Turn::text("Report: ran one step.").usage(2000, 500),
    ));
    let mut config = support::harness::test_config(Provider::Anthropic, &server);
    config.model.model = "claude-sonnet-4-5".into();
    config.agent.max_cost = 0.05;
    let mut agent = Harness::start(config);
    let events = agent.turn("run steps").await;
    let notice = events.iter().find_map(|e| match e {
        Event::Notice { message } if message.contains("agent.max_cost") => Some(message.clone()),
        _ => None,
    });
    assert!(
        notice
            .as_deref()
            .is_some_and(|m| m.starts_with("this turn has cost $")),
        "{notice:?}"
    );
    assert!(
        matches!(events.last(), Some(Event::StepLimitReached { .. })),
        "{:#?}",
        events.last()
    );
    let requests = server.requests();
    // Some steps, then the report, asked for because of the cost, long before the five
    // steps the model wanted.
    assert!((2..=4).contains(&requests.len()), "{} requests", requests.len());
    let report = requests.last().unwrap().body["messages"].to_string();
    assert!(report.contains("reached the cost limit set for it"));
    let spent = events.iter().find_map(|e| match e {
        Event::TurnUsage { cost_usd, .. } => *cost_usd,
        _ => None,
    });
    assert!(spent.is_some_and(|cost| cost <= 0.05), "{spent:?}");
    // The report's call is in the session's totals too (found by a fresh-eyes run: the
    // gauge and the log missed it), as the session's only turn's cost.
    let total = events.iter().rev().find_map(|e| match e {
        Event::TokenUsage { cost_usd, .. } => Some(*cost_usd),
        _ => None,
    });
    assert_eq!(total, Some(spent), "the session's total is the turn's cost");

    // A limit below what the first request would cost: nothing is sent.
    let server = ScriptedServer::start(vec![step(0)]).await;
    let mut config = support::harness::test_config(Provider::Anthropic, &server);
    config.model.model = "claude-sonnet-4-5".into();
    config.agent.max_cost = 0.001;
    let mut agent = Harness::start(config);
    let events = agent.turn("run steps").await;
    assert!(
        matches!(events.last(), Some(Event::Error { message }) if message.starts_with("the turn stopped before its first request")),
        "{:#?}",
        events.last()
    );
    assert!(server.requests().is_empty());
}

/// Found by a fresh-eyes run: a provider's impossible counts (u64::MAX) were billed as
/// real, showing costs in the trillions for the rest of the session. A count beyond any
/// context is not a count (the call is reckoned from what was sent, as one the provider
/// reported nothing for); a cache read is never more than the prompt it is part of.
#[tokio::test]
async fn impossible_usage_counts_are_not_billed() {
    for provider in [Provider::Anthropic, Provider::Openai] {
        let server = ScriptedServer::start(vec![
            Reply::Stream(
                Turn::tool("call_a", "bash", r#"{"command": "echo one"}"#).cache_usage(
                    u64::MAX / 4,
                    u64::MAX / 4,
                    u64::MAX / 4,
                    u64::MAX / 4,
                ),
            ),
            Reply::Stream(Turn::text("Ran.").cache_usage(1000, 10, 0, 0)),
        ])
        .await;
        let mut config = test_config(provider, &server);
        config.model.model = "claude-sonnet-4-5".into();
        let mut agent = Harness::start(config);
        let events = agent.turn("run one command").await;
        let (_, input, _, cost) = turn_usage(&events);
        // The impossible call is reckoned from what was sent (the system prompt, the
        // tools' schemas, the message: thousands of tokens, not trillions).
        assert!(
            input > 1000 + 1000 && input < 1000 + 50_000,
            "{provider}: {input}"
        );
        let cost = cost.unwrap();
        assert!(cost < 0.2, "{provider}: {cost}");
    }
}

/// The issue's bar, checked on every run (billing is arithmetic on what was sent, not a
/// timing): the 30-step task (each step a command printing 109 KB) with the default
/// settings makes no summary call, 31 requests, and is billed at most 150k input tokens
/// under each provider's published caching rules (`cargo bench --bench wire` prints the
/// figures).
#[test]
fn the_thirty_step_task_makes_no_summary_call_and_bills_at_most_150k_input_tokens() {
    use miniagent_core::tokens::{Encoding, TokenCounter};
    let counter = TokenCounter::new(Encoding::Cl100kBase);
    let count = |text: &str| counter.count(text);
    for provider in ["anthropic", "openai"] {
        let (home, workspace) = (TempDir::new(), TempDir::new());
        let server = ScriptedServer::start_blocking(counting_turn(30));
        server.answer_toolless_with(Reply::text("Counted."));
        let base_url = match provider {
            "anthropic" => server.anthropic_base_url(),
            _ => server.openai_base_url(),
        };
        let output = support::cli::miniagent(&home)
            .arg("--workspace")
            .arg(workspace.path())
            .args([
                "--provider",
                provider,
                "--base-url",
                &base_url,
                "--model",
                "scripted-model",
            ])
            .args([
                "exec",
                "--approval",
                "full-auto",
                "--max-steps",
                "31",
                "count to 20000, thirty times",
            ])
            .output()
            .unwrap();
        assert_eq!(
            output.status.code(),
            Some(0),
            "{}",
            support::cli::text(&output.stderr)
        );
        let requests = server.requests();
        let bill = match provider {
            "anthropic" => support::billing::anthropic(&requests, &count),
            _ => support::billing::openai(&requests, &count),
        };
        eprintln!("{provider}: {bill:?}, billed {}", bill.billed());
        assert_eq!((bill.requests, bill.summary_calls), (31, 0), "{provider}");
        assert!(bill.billed() <= 150_000.0, "{provider}: {} billed", bill.billed());
    }
}

/// The benchmark's billing rules, on two hand-made Anthropic requests: each block costs
/// 1,000 tokens; the second request reads what the first wrote at its breakpoint and
/// writes its new blocks.
#[test]
fn the_billing_rules_read_what_an_earlier_request_wrote() {
    let request = |body: Value| RecordedRequest {
        method: "POST".into(),
        path: "/v1/messages".into(),
        headers: Vec::new(),
        raw_body: body.to_string(),
        body,
    };
    let mark = serde_json::json!({"type": "ephemeral"});
    let first = serde_json::json!({
        "tools": [{"name": "bash"}],
        "system": [{"type": "text", "text": "sys", "cache_control": mark}],
        "messages": [{"role": "user", "content": [{"type": "text", "text": "task", "cache_control": mark}]}],
    });
    let second = serde_json::json!({
        "tools": [{"name": "bash"}],
        "system": [{"type": "text", "text": "sys", "cache_control": mark}],
        "messages": [
            {"role": "user", "content": [{"type": "text", "text": "task", "cache_control": mark}]},
            {"role": "assistant", "content": [{"type": "text", "text": "step"}]},
            {"role": "user", "content": [{"type": "text", "text": "more", "cache_control": mark}]},
        ],
    });
    let count = |_: &str| 1_000;
    let bill = support::billing::anthropic(&[request(first.clone()), request(second.clone())], &count);
    // First: tools + system written at the system mark (2k), the task at its mark (1k).
    // Second: 3k read at the task's mark, 2k written at the end.
    assert_eq!(
        (bill.requests, bill.sent, bill.read, bill.written, bill.uncached),
        (2, 8_000, 3_000, 5_000, 0)
    );
    assert_eq!(bill.billed(), 3_000.0 * 0.1 + 5_000.0 * 1.25);
    // Under 1,024 tokens nothing is cached: all billed in full.
    let small = |_: &str| 100;
    let bill = support::billing::anthropic(&[request(first), request(second)], &small);
    assert_eq!((bill.read, bill.written, bill.uncached), (0, 0, 800));
}

/// The figures of a turn's `TurnUsage`: (model calls, input, output, cost).
fn turn_usage(events: &[Event]) -> (u64, u64, u64, Option<f64>) {
    events
        .iter()
        .find_map(|e| match e {
            Event::TurnUsage {
                model_calls,
                input_tokens,
                output_tokens,
                cost_usd,
                ..
            } => Some((*model_calls, *input_tokens, *output_tokens, *cost_usd)),
            _ => None,
        })
        .expect("every turn says what it used")
}

/// A reply cut short (the connection dropped and the call was made again) is billed by
/// the provider all the same, so it is metered: Anthropic's count of the prompt, reported
/// when the reply starts; for OpenAI, which reports only at the end, our count of the
/// prompt it was sent.
#[tokio::test]
async fn a_reply_cut_short_is_metered() {
    let text = "This reply is long enough to arrive in many small pieces over the wire.";
    for provider in [Provider::Anthropic, Provider::Openai] {
        let server = ScriptedServer::start(vec![
            Reply::drop_after(Turn::text(text).cache_usage(1000, 40, 3000, 0), 9),
            Reply::Stream(Turn::text(text).cache_usage(1000, 20, 4000, 0)),
        ])
        .await;
        let mut config = test_config(provider, &server);
        config.model.model = match provider {
            Provider::Anthropic => "claude-sonnet-4-5".into(),
            _ => "gpt-4o".into(),
        };
        let mut agent = Harness::start(config);
        let events = agent.turn("talk").await;
        assert_eq!(
            events.last(),
            Some(&Event::TurnComplete { text: text.into() }),
            "{provider}"
        );
        assert_eq!(server.request_count(), 2);
        let (calls, input, output, cost) = turn_usage(&events);
        assert_eq!(calls, 2, "{provider}: the cut reply is a call");
        match provider {
            // 4,000 reported at the start of the cut reply, then 5,000.
            Provider::Anthropic => assert_eq!(input, 9_000),
            // The completed call's 5,000, and the cut one's prompt as counted here: the
            // system prompt, the tools' schemas and the message (thousands of tokens).
            _ => assert!(input > 5_000 + 1_000 && input < 5_000 + 50_000, "{input}"),
        }
        // The cut reply's output so far is counted (the scripted server's final counts
        // never arrived for it).
        assert!(output > 20, "{provider}: {output}");
        let cost = cost.expect("a priced model");
        assert!(cost > 0.0, "{provider}");
        // The gauge's session total holds it too.
        let total = events
            .iter()
            .rev()
            .find_map(|e| match e {
                Event::TokenUsage {
                    total_input_tokens, ..
                } => Some(*total_input_tokens),
                _ => None,
            })
            .unwrap();
        assert_eq!(total, input, "{provider}");
    }
}

/// An interrupted reply is billed too: the turn's figures and the session's totals (the
/// gauge, the log a resume starts from) count it.
#[tokio::test]
async fn an_interrupted_reply_is_metered() {
    for provider in [Provider::Anthropic, Provider::Openai] {
        let long = "word ".repeat(200);
        let server = ScriptedServer::start(vec![Reply::slow(
            Turn::text(long).cache_usage(2000, 400, 6000, 0),
            50,
        )])
        .await;
        let mut config = test_config(provider, &server);
        config.model.model = "claude-sonnet-4-5".into();
        let mut agent = Harness::start(config);
        agent.send(Op::UserInput {
            text: "tell me a story".into(),
        });
        let mut events = vec![agent.wait_for(|e| matches!(e, Event::TextDelta { .. })).await];
        agent.send(Op::Interrupt);
        loop {
            let event = agent.next().await;
            let end = matches!(event, Event::TurnAborted { .. });
            events.push(event);
            if end {
                break;
            }
        }
        let (calls, input, output, cost) = turn_usage(&events);
        assert_eq!(calls, 1, "{provider}");
        match provider {
            Provider::Anthropic => assert_eq!(input, 8_000),
            _ => assert!(input > 1_000 && input < 50_000, "{input}"),
        }
        assert!(output >= 1, "{provider}: {output}");
        assert!(cost.unwrap() > 0.0, "{provider}");
        let total = events
            .iter()
            .find_map(|e| match e {
                Event::TokenUsage {
                    total_input_tokens,
                    cost_usd,
                    ..
                } => Some((*total_input_tokens, *cost_usd)),
                _ => None,
            })
            .expect("the totals after the interrupted call");
        assert_eq!(total, (input, cost), "{provider}");
    }
}

/// A provider that reports no usage (an OpenAI-compatible server without
/// `stream_options` support, a proxy that drops it) still bills: the call is reckoned
/// from the prompt it was sent and the reply it gave (its tool calls' arguments
/// included), not counted as free, so the cost shown and `agent.max_cost` go on working;
/// a later call's prompt is reckoned as read from the cache as far as the earlier one
/// went, as the provider would.
#[tokio::test]
async fn a_call_the_provider_reports_nothing_for_is_reckoned() {
    for provider in [Provider::Anthropic, Provider::Openai] {
        let content = "lorem ipsum dolor sit amet ".repeat(400);
        let server = ScriptedServer::start(vec![
            Reply::tool(
                "call_w",
                "write_file",
                json!({"path": "notes.txt", "content": content}).to_string(),
            ),
            Reply::Stream(Turn::text("word ".repeat(300))),
        ])
        .await;
        let mut config = test_config(provider, &server);
        config.model.model = "claude-sonnet-4-5".into();
        let mut agent = Harness::start(config);
        let events = agent.turn("hi").await;
        let (calls, input, output, cost) = turn_usage(&events);
        assert_eq!(calls, 2, "{provider}");
        assert!(input > 2_000 && input < 60_000, "{provider}: {input}");
        // The file's 2,400 words were written by the model: they are output.
        assert!(output >= 2_000 + 300, "{provider}: {output}");
        assert!(cost.unwrap() > 0.0, "{provider}");
        let cache_read = events
            .iter()
            .find_map(|e| match e {
                Event::TurnUsage {
                    cache_read_tokens, ..
                } => Some(*cache_read_tokens),
                _ => None,
            })
            .unwrap();
        // The second prompt begins with the first one: reckoned as read from the cache.
        assert!(
            cache_read > 1_000 && cache_read < input,
            "{provider}: {cache_read}"
        );
        // The gauge says the call's own figures were reckoned, and carries them.
        let last = events
            .iter()
            .rev()
            .find_map(|e| match e {
                Event::TokenUsage {
                    estimated,
                    input_tokens,
                    ..
                } => Some((*estimated, *input_tokens)),
                _ => None,
            })
            .unwrap();
        assert!(last.0, "{provider}: marked estimated");
        assert!(last.1 > 1_000, "{provider}: {}", last.1);
    }
}
