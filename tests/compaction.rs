//! Compaction end to end: long sessions stay within the budget, summaries are requested
//! without tools and with the replaced steps, user messages and the last steps survive
//! verbatim, masking keeps the last K results, and a failing summarizer falls back.
#![allow(clippy::unwrap_used, clippy::expect_used)] // A test fails by panicking.

#[path = "compaction/budget.rs"]
mod budget;
#[path = "compaction/compact_now.rs"]
mod compact_now;
#[path = "compaction/default_compaction.rs"]
mod default_compaction;
#[path = "compaction/history.rs"]
mod history;
#[path = "compaction/own_messages.rs"]
mod own_messages;
#[path = "compaction/summary_calls.rs"]
mod summary_calls;
use crate::support;

use miniagent_core::agent::compaction::Strategy;
use miniagent_core::config::Provider;
use miniagent_core::session;
use miniagent_core::tokens::{Encoding, TokenCounter};
use miniagent_protocol::{Event, HistoryEntry, HistoryEntryKind, HistorySnapshot};
use serde_json::{Value, json};
use support::harness::Harness;

/// These tests are about the summarizer and trimming: they compact by summaries alone.
/// (The default first turns older results into stubs; `default_compaction` tests it.)
fn test_config(provider: Provider, server: &ScriptedServer) -> miniagent_core::config::Config {
    let mut config = support::harness::test_config(provider, server);
    config.agent.compaction = Strategy::Summarize;
    config
}

/// [`test_config`] on a budget of `token_limit` tokens, with replies of up to 4096 tokens
/// and `read_file` results of up to 40,000 (a huge file comes back whole, to be trimmed).
fn config_for_huge_reads(
    provider: Provider,
    server: &ScriptedServer,
    token_limit: u64,
) -> miniagent_core::config::Config {
    let mut config = test_config(provider, server);
    config.agent.token_limit = token_limit;
    config.model.max_output_tokens = 4096;
    config.tools.read_file.max_tokens = 40_000;
    config
}

/// [`test_config`] compacting by stubs and then summaries (`both`), on a budget of 9000
/// tokens with replies of up to 2000.
fn config_both_at_9000(server: &ScriptedServer) -> miniagent_core::config::Config {
    let mut config = test_config(Provider::Anthropic, server);
    config.agent.compaction = Strategy::Both;
    config.agent.token_limit = 9000;
    config.model.max_output_tokens = 2000;
    config
}
use support::validate::{assert_valid_anthropic, assert_valid_openai};
use support::*;

const TASK: &str = "Read big.txt thirty times and tell me how many lines it has.";

/// Our own estimate of a recorded request, computed the way the agent counts.
fn estimate(request: &RecordedRequest, counter: &TokenCounter) -> u64 {
    let body = &request.body;
    // The system prompt goes as text, or as blocks when it is marked for the cache.
    let mut total = counter.count(&support::validate::system_text(body));
    for tool in body["tools"].as_array().into_iter().flatten() {
        let (name, description, schema) = match tool.get("function") {
            Some(function) => (
                &function["name"],
                &function["description"],
                &function["parameters"],
            ),
            None => (&tool["name"], &tool["description"], &tool["input_schema"]),
        };
        total +=
            counter.count(name.as_str().unwrap_or("")) + counter.count(description.as_str().unwrap_or(""));
        total += counter.count(&schema.to_string());
    }
    for message in body["messages"].as_array().into_iter().flatten() {
        total += 4;
        match &message["content"] {
            Value::String(text) => total += counter.count(text),
            Value::Array(blocks) => {
                for block in blocks {
                    for key in ["text", "content", "thinking"] {
                        if let Some(text) = block[key].as_str() {
                            total += counter.count(text);
                        }
                    }
                    if block["type"] == "tool_use" {
                        total += counter.count(block["name"].as_str().unwrap_or(""));
                        total += counter.count(&block["input"].to_string());
                    }
                }
            }
            _ => {}
        }
        for call in message["tool_calls"].as_array().into_iter().flatten() {
            total += counter.count(call["function"]["name"].as_str().unwrap_or(""));
            total += counter.count(call["function"]["arguments"].as_str().unwrap_or(""));
        }
    }
    total
}

/// A file whose `read_file` result is about `tokens` tokens.
fn big_file(workspace: &TempDir, tokens: u64) -> String {
    let counter = TokenCounter::new(Encoding::Cl100kBase);
    let mut text = String::new();
    let mut n = 0;
    while counter.count(&text) < tokens * 4 / 5 {
        for _ in 0..100 {
            n += 1;
            text.push_str(&format!(
                "line {n}: the quick brown fox jumps over the lazy dog\n"
            ));
        }
    }
    workspace.write("big.txt", &text);
    text
}

/// Arguments reading big.txt, spelled two ways in turn: the agent refuses a fourth
/// identical call in a row, and these steps are meant to run.
fn read_big(n: usize) -> &'static str {
    if n.is_multiple_of(2) {
        r#"{"path": "big.txt"}"#
    } else {
        r#"{"path": "./big.txt"}"#
    }
}

fn is_summary_request(request: &RecordedRequest) -> bool {
    request.body.get("tools").is_none()
}

fn long_session(
    provider: Provider,
    steps: usize,
    tokens_per_step: u64,
) -> (Vec<RecordedRequest>, Vec<Event>, String) {
    let runtime = tokio::runtime::Runtime::new().unwrap();
    runtime.block_on(async {
        let mut script: Vec<Reply> = (0..steps)
            .map(|n| Reply::tool(format!("call_{n}"), "read_file", read_big(n)))
            .collect();
        script.push(Reply::text("It has many lines."));
        let server = ScriptedServer::start(script).await;
        server.answer_toolless_with(Reply::text(
            "Read big.txt repeatedly; every read showed the same lines.",
        ));
        let mut config = config_for_huge_reads(provider, &server, 80_000);
        config.agent.max_steps = steps as u32 + 5;
        let mut agent = Harness::start(config);
        let content = big_file(&agent.workspace, tokens_per_step);
        let events = agent.turn(TASK).await;
        (server.requests(), events, content)
    })
}

fn check_long_session(provider: Provider) {
    let (requests, events, file) = long_session(provider, 30, 30_000);
    let counter = TokenCounter::new(Encoding::Cl100kBase);
    assert_eq!(
        events.last(),
        Some(&Event::TurnComplete {
            text: "It has many lines.".into()
        }),
        "{provider}"
    );
    // Reads this large are trimmed (no model call) rather than summarized.
    let compactions = events
        .iter()
        .filter(|e| match e {
            Event::ContextCompacted { .. } => true,
            Event::Notice { message } => message.contains("trimmed to"),
            _ => false,
        })
        .count();
    assert!(compactions >= 5, "{provider}: only {compactions} compactions");
    let last_line = file.lines().last().unwrap().to_string();
    let mut largest = 0;
    let mut previous = 0;
    for request in &requests {
        if is_summary_request(request) {
            let text = request.body["messages"].to_string();
            assert!(
                text.contains("Called read_file"),
                "a summary request without the replaced steps"
            );
            continue;
        }
        match provider {
            Provider::Anthropic => assert_valid_anthropic(&request.body),
            _ => assert_valid_openai(&request.body),
        }
        let tokens = estimate(request, &counter);
        largest = largest.max(tokens);
        assert!(
            tokens <= 80_000,
            "{provider}: a request of about {tokens} tokens was sent"
        );
        let messages = request.body["messages"].to_string();
        assert!(messages.contains(TASK), "the user's message must stay verbatim");
        if tokens < previous {
            // Compacted: the newest read is there whole, down to its last line.
            assert!(
                messages.contains(&last_line),
                "the last step is not verbatim after a compaction"
            );
        }
        previous = tokens;
    }
    eprintln!("{provider}: {compactions} compactions, largest request about {largest} tokens");
}

/// Ten reads of big.txt, compacted on the way, then the inspector's snapshot; with
/// `log`, the session is recorded there.
async fn snapshot_after_compaction(log: Option<session::SessionLog>) -> (Harness, HistorySnapshot) {
    let mut script: Vec<Reply> = (0..10)
        .map(|n| Reply::tool(format!("call_{n}"), "read_file", read_big(n)))
        .collect();
    script.push(Reply::text("done"));
    let server = ScriptedServer::start(script).await;
    server.answer_toolless_with(Reply::text("Read big.txt twice; it lists numbered lines."));
    let config = config_for_huge_reads(Provider::Anthropic, &server, 80_000);
    let mut agent = match log {
        Some(log) => Harness::start_recorded(config, log),
        None => Harness::start(config),
    };
    big_file(&agent.workspace, 8_000);
    agent.turn(TASK).await;
    let snapshot = agent.inspect().await;
    (agent, snapshot)
}

/// The originals of the snapshot's one summary.
fn summarized(snapshot: &HistorySnapshot) -> &[HistoryEntry] {
    let summary = snapshot
        .entries
        .iter()
        .find(|e| e.kind == HistoryEntryKind::Summary)
        .expect("a summary entry");
    &summary.summary.as_ref().expect("summary detail").originals
}

/// Every summary call the events announce ends with an outcome: a summary applied, or
/// the call failed or was cancelled (the footer counts them from these events).
fn assert_every_summary_call_has_an_outcome(events: &[Event]) {
    let mut open = 0;
    for event in events {
        match event {
            Event::CompactionStarted { .. } => {
                assert_eq!(
                    open, 0,
                    "a summary call began before the last one ended: {events:#?}"
                );
                open += 1;
            }
            Event::ContextCompacted { .. } | Event::CompactionEnded { .. } => {
                assert_eq!(open, 1, "an outcome without a summary call: {events:#?}");
                open -= 1;
            }
            _ => {}
        }
    }
    assert_eq!(open, 0, "a summary call never reported how it ended: {events:#?}");
}

/// A workspace file whose `read_file` result is about `tokens` tokens, lines named `tag`.
fn file_of_tokens(workspace: &TempDir, name: &str, tag: &str, tokens: u64) {
    let counter = TokenCounter::new(Encoding::Cl100kBase);
    let mut text = String::new();
    let mut n = 0;
    while counter.count(&text) < tokens {
        n += 1;
        text.push_str(&format!("{tag} {n}: alpha beta gamma delta epsilon\n"));
    }
    workspace.write(name, &text);
}

/// `part0.txt` to `part{count - 1}.txt` in `workspace`, each as [`file_of_tokens`] writes
/// it, its lines named after it (`part0 1: …`).
fn parts_of_tokens(workspace: &TempDir, count: usize, tokens: u64) {
    for n in 0..count {
        file_of_tokens(workspace, &format!("part{n}.txt"), &format!("part{n}"), tokens);
    }
}

fn ten_steps_at_a_small_token_limit(result_tokens: u64) {
    let runtime = tokio::runtime::Runtime::new().unwrap();
    runtime.block_on(async {
        let mut script: Vec<Reply> = (0..10)
            .map(|n| {
                Reply::tool(
                    format!("call_{n}"),
                    "read_file",
                    format!(r#"{{"path": "part{n}.txt"}}"#),
                )
            })
            .collect();
        script.push(Reply::text("All ten parts read."));
        let server = ScriptedServer::start(script).await;
        server.answer_toolless_with(Reply::text("Read parts in turn; each lists numbered lines."));
        let mut config = test_config(Provider::Anthropic, &server);
        // 8000 tokens for the conversation these steps were tuned to, plus about 150 for
        // the web_fetch tool's schema, which came later.
        config.agent.token_limit = 8150;
        config.model.max_output_tokens = 1000;
        let mut agent = Harness::start(config);
        parts_of_tokens(&agent.workspace, 10, result_tokens);
        let events = agent.turn("Read part0.txt to part9.txt, one by one.").await;
        assert_eq!(
            events.last(),
            Some(&Event::TurnComplete {
                text: "All ten parts read.".into()
            })
        );
        assert_every_summary_call_has_an_outcome(&events);
        let requests = server.requests();
        let summary_calls = requests.iter().filter(|r| is_summary_request(r)).count();
        let compactions = events
            .iter()
            .filter(|e| matches!(e, Event::ContextCompacted { .. }))
            .count();
        let counter = TokenCounter::new(Encoding::Cl100kBase);
        let sizes: Vec<u64> = requests
            .iter()
            .filter(|r| !is_summary_request(r))
            .map(|r| estimate(r, &counter))
            .collect();
        // A step whose prompt is smaller than the one before was compacted first.
        let shrinks = sizes.windows(2).filter(|pair| pair[1] < pair[0]).count();
        eprintln!(
            "10 steps at token_limit 8150, results of {result_tokens} tokens: {summary_calls} summary calls, {compactions} summaries applied, {shrinks} compacted steps; prompts {sizes:?}"
        );
        assert!(compactions >= 1, "the turn outgrows 8150 tokens and must compact");
        // A compaction must buy three steps or more, with at most one summary call.
        assert!(summary_calls <= 3, "{summary_calls} summary calls over 10 steps");
        // Steps that only trimmed a large result made no model call.
        let mut step = 0;
        let mut summarized_at = Vec::new();
        for request in &requests {
            if is_summary_request(request) {
                summarized_at.push(step);
            } else {
                step += 1;
            }
        }
        assert!(
            summarized_at.windows(2).all(|pair| pair[1] - pair[0] >= 3),
            "summaries after steps {summarized_at:?}"
        );
        // What was sent: every step's request within the budget; each summary request
        // without tools, carrying the steps it replaces and asking for a short summary.
        let mut after_summary = false;
        for request in &requests {
            if is_summary_request(request) {
                let text = request.body["messages"].to_string();
                assert!(text.contains("Called read_file"), "{text}");
                assert!(text.contains("part0 1: alpha"), "the oldest step is summarized: {text}");
                assert!(request.body["max_tokens"].as_u64().unwrap() <= 1000);
                after_summary = true;
                continue;
            }
            assert_valid_anthropic(&request.body);
            let tokens = estimate(request, &counter);
            assert!(tokens <= 6000, "a request of about {tokens} tokens was sent");
            if after_summary {
                // Brought down to about half the budget's room, not just under the trigger.
                assert!(tokens <= 4500, "after a compaction the prompt is still {tokens} tokens");
                let messages = request.body["messages"].to_string();
                assert!(messages.contains("Read parts in turn"), "the summary is sent");
                assert!(messages.contains("Read part0.txt to part9.txt"), "the task stays verbatim");
                after_summary = false;
            }
        }
    });
}

/// `/compact`'s closing notice.
fn compact_now_reported(event: &Event) -> bool {
    matches!(event, Event::Notice { message } if message.starts_with("compacted") || message.starts_with("made room") || message.starts_with("cannot compact"))
}

/// Sends `/compact` and waits for its closing notice; returns what the notice says.
async fn compact_now(agent: &mut Harness) -> String {
    agent.send(miniagent_protocol::Op::CompactNow);
    let Event::Notice { message } = agent.wait_for(compact_now_reported).await else {
        unreachable!("`compact_now_reported` matches notices only")
    };
    message
}

/// The entry of `entries` that is a summary, with its detail.
fn summary_in(entries: &[HistoryEntry]) -> Option<(&HistoryEntry, &miniagent_protocol::SummaryDetail)> {
    entries
        .iter()
        .find(|e| e.kind == HistoryEntryKind::Summary)
        .and_then(|e| e.summary.as_ref().map(|detail| (e, detail)))
}
