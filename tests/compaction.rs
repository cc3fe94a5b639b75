//! Compaction end to end: long sessions stay within the budget, summaries are requested
//! without tools and with the replaced steps, user messages and the last steps survive
//! verbatim, masking keeps the last K results, and a failing summarizer falls back.

mod support;

use miniagent::agent::compaction::Strategy;
use miniagent::agent::tokens::{Encoding, TokenCounter};
use miniagent::config::Provider;
use miniagent::protocol::{Event, HistoryEntry, HistoryEntryKind, HistorySnapshot};
use miniagent::session;
use serde_json::{Value, json};
use support::harness::{Harness, test_config};
use support::validate::{assert_valid_anthropic, assert_valid_openai};
use support::*;

const TASK: &str = "Read big.txt thirty times and tell me how many lines it has.";

/// Our own estimate of a recorded request, computed the way the agent counts.
fn estimate(request: &RecordedRequest, counter: &TokenCounter) -> u64 {
    let body = &request.body;
    let mut total = counter.count(body["system"].as_str().unwrap_or(""));
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
        let mut config = test_config(provider, &server);
        config.agent.token_limit = 80_000;
        config.agent.max_steps = steps as u32 + 5;
        config.model.max_output_tokens = 4096;
        config.tools.read_file.max_tokens = 40_000;
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
    let compactions = events
        .iter()
        .filter(|e| matches!(e, Event::ContextCompacted { .. }))
        .count();
    assert!(compactions >= 5, "{provider}: only {compactions} compactions");
    let last_line = file.lines().last().unwrap().to_string();
    let mut after_summary = false;
    let mut largest = 0;
    for request in &requests {
        if is_summary_request(request) {
            let text = request.body["messages"].to_string();
            assert!(
                text.contains("Called read_file"),
                "a summary request without the replaced steps"
            );
            assert!(
                text.contains("line 1: the quick brown fox"),
                "a summary request without the results"
            );
            after_summary = true;
            continue;
        }
        match provider {
            Provider::Anthropic => assert_valid_anthropic(&request.body),
            Provider::Openai => assert_valid_openai(&request.body),
        }
        let tokens = estimate(request, &counter);
        largest = largest.max(tokens);
        assert!(
            tokens <= 80_000,
            "{provider}: a request of about {tokens} tokens was sent"
        );
        let messages = request.body["messages"].to_string();
        assert!(messages.contains(TASK), "the user's message must stay verbatim");
        if after_summary {
            // The newest read is there whole, down to its last line.
            assert!(
                messages.contains(&last_line),
                "the last step is not verbatim after a compaction"
            );
            after_summary = false;
        }
    }
    eprintln!("{provider}: {compactions} compactions, largest request about {largest} tokens");
}

#[test]
fn a_long_session_stays_within_the_budget_anthropic() {
    check_long_session(Provider::Anthropic);
}

#[test]
fn a_long_session_stays_within_the_budget_openai() {
    check_long_session(Provider::Openai);
}

#[test]
fn repeated_compaction_over_a_hundred_steps_stays_bounded() {
    let (requests, events, _) = long_session(Provider::Anthropic, 100, 6_000);
    let counter = TokenCounter::new(Encoding::Cl100kBase);
    assert!(matches!(events.last(), Some(Event::TurnComplete { .. })));
    let sizes: Vec<u64> = requests
        .iter()
        .filter(|r| !is_summary_request(r))
        .map(|r| estimate(r, &counter))
        .collect();
    let largest = sizes.iter().max().copied().unwrap_or(0);
    let last_ten = &sizes[sizes.len() - 10..];
    eprintln!("100 steps: largest request about {largest} tokens; the last ten: {last_ten:?}");
    assert!(largest <= 80_000, "largest {largest}");
    // Converging: the prompt does not creep up over the session.
    assert!(last_ten.iter().all(|size| *size <= 80_000));
    let summaries = requests.iter().filter(|r| is_summary_request(r)).count();
    assert!(summaries >= 3, "{summaries} summaries");
}

#[tokio::test]
async fn masking_keeps_the_last_five_results_whole() {
    let mut script: Vec<Reply> = (1..=11)
        .map(|n| {
            Reply::tool(
                format!("t{n}"),
                "bash",
                json!({"command": format!("echo result-number-{n}")}).to_string(),
            )
        })
        .collect();
    script.push(Reply::text("done"));
    let server = ScriptedServer::start(script).await;
    let mut config = test_config(Provider::Anthropic, &server);
    config.agent.compaction = Strategy::MaskToolResults;
    config.agent.keep_tool_results = 5;
    let mut agent = Harness::start(config);
    let events = agent.turn("echo eleven times").await;
    assert_eq!(events.last(), Some(&Event::TurnComplete { text: "done".into() }));
    let last = &server.requests()[11].body;
    assert_valid_anthropic(last);
    let results: Vec<String> = last["messages"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|m| m["content"].as_array().cloned().unwrap_or_default())
        .filter(|b| b["type"] == "tool_result")
        .map(|b| b["content"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(results.len(), 11);
    // The 6th newest (and everything older) is a stub; the 5 newest are whole.
    for (index, result) in results.iter().enumerate().take(6) {
        let n = index + 1;
        assert!(
            result.starts_with(&format!(
                "[result omitted to save context: bash {{\"command\":\"echo result-number-{n}\"}} returned"
            )),
            "result {n}: {result}"
        );
    }
    for (index, result) in results.iter().enumerate().skip(6) {
        assert_eq!(result, &format!("result-number-{}\n[exit code: 0]", index + 1));
    }
}

#[test]
fn a_failing_summarizer_falls_back_to_a_digest_and_the_turn_goes_on() {
    let runtime = tokio::runtime::Runtime::new().unwrap();
    runtime.block_on(async {
        let mut script: Vec<Reply> = (0..6)
            .map(|n| Reply::tool(format!("call_{n}"), "read_file", read_big(n)))
            .collect();
        script.push(Reply::text("finished anyway"));
        let server = ScriptedServer::start(script).await;
        server.answer_toolless_with(Reply::status(500, "the summarizer is down"));
        let mut config = test_config(Provider::Anthropic, &server);
        config.agent.token_limit = 80_000;
        config.model.max_output_tokens = 4096;
        config.tools.read_file.max_tokens = 40_000;
        let mut agent = Harness::start(config);
        big_file(&agent.workspace, 30_000);
        let events = agent.turn(TASK).await;
        assert_eq!(
            events.last(),
            Some(&Event::TurnComplete {
                text: "finished anyway".into()
            })
        );
        let compactions: Vec<(u64, u64, bool)> = events
            .iter()
            .filter_map(|e| match e {
                Event::ContextCompacted {
                    tokens_before,
                    tokens_after,
                    fallback,
                    ..
                } => Some((*tokens_before, *tokens_after, *fallback)),
                _ => None,
            })
            .collect();
        assert!(!compactions.is_empty());
        for (before, after, fallback) in &compactions {
            assert!(*fallback, "the summarizer always fails");
            assert!(after < before, "the prompt must shrink: {before} → {after}");
        }
        // Each summary call was retried (4 attempts) before the digest stood in.
        let summary_calls = server.requests().iter().filter(|r| is_summary_request(r)).count();
        assert_eq!(summary_calls, compactions.len() * 4);
        let counter = TokenCounter::new(Encoding::Cl100kBase);
        for request in server.requests().iter().filter(|r| !is_summary_request(r)) {
            assert!(estimate(request, &counter) <= 80_000);
        }
    });
}

/// Four reads of big.txt, compacted on the way, then the inspector's snapshot; with
/// `log`, the session is recorded there.
async fn snapshot_after_compaction(log: Option<session::SessionLog>) -> (Harness, HistorySnapshot) {
    let mut script: Vec<Reply> = (0..4)
        .map(|n| Reply::tool(format!("call_{n}"), "read_file", read_big(n)))
        .collect();
    script.push(Reply::text("done"));
    let server = ScriptedServer::start(script).await;
    server.answer_toolless_with(Reply::text("Read big.txt twice; it lists numbered lines."));
    let mut config = test_config(Provider::Anthropic, &server);
    config.agent.token_limit = 80_000;
    config.model.max_output_tokens = 4096;
    config.tools.read_file.max_tokens = 40_000;
    let mut agent = match log {
        Some(log) => Harness::start_recorded(config, log),
        None => Harness::start(config),
    };
    big_file(&agent.workspace, 30_000);
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

#[test]
fn the_history_snapshot_shows_summaries_and_their_originals() {
    let runtime = tokio::runtime::Runtime::new().unwrap();
    runtime.block_on(async {
        let (_agent, snapshot) = snapshot_after_compaction(None).await;
        assert_eq!(snapshot.entries[0].kind, HistoryEntryKind::User);
        assert_eq!(snapshot.entries[0].title, TASK);
        let summary = snapshot
            .entries
            .iter()
            .find(|e| e.kind == HistoryEntryKind::Summary)
            .expect("a summary entry");
        assert!(
            summary.title.starts_with("summary of messages 1–"),
            "{}",
            summary.title
        );
        assert_eq!(summary.body, "Read big.txt twice; it lists numbered lines.");
        let detail = summary.summary.as_ref().expect("summary detail");
        assert!(
            detail
                .originals
                .iter()
                .any(|e| e.kind == HistoryEntryKind::ToolResults && e.body.contains("line 1: the quick"))
        );
        assert!(
            detail
                .originals
                .iter()
                .any(|e| e.kind == HistoryEntryKind::Assistant && e.title.contains("calls read_file"))
        );
        assert!(detail.tokens_before > 25_000, "{}", detail.tokens_before);
        assert!(!snapshot.compactions.is_empty());
        assert!(
            snapshot
                .by_tool
                .iter()
                .any(|(name, tokens)| name == "read_file" && *tokens > 0)
        );
        assert!(snapshot.prompt_tokens < 80_000);
    });
}

#[test]
fn a_recorded_session_keeps_summarized_messages_only_in_its_log() {
    let runtime = tokio::runtime::Runtime::new().unwrap();
    runtime.block_on(async {
        let (_plain, unrecorded) = snapshot_after_compaction(None).await;
        let data = TempDir::new();
        let log = support::harness::session_log_in(&data);
        let (mut agent, recorded) = snapshot_after_compaction(Some(log.clone())).await;
        // The inspector shows the same history, what the summary replaced included: it
        // reads the summarized messages back from the log.
        assert_eq!(recorded, unrecorded);
        let originals = summarized(&recorded);
        assert!(originals.iter().any(|e| e.body.contains("line 1: the quick")));

        // Without the log, the inspector cannot show them: memory no longer holds them.
        let path = log.path().expect("a recorded session");
        let away = path.with_extension("moved");
        std::fs::rename(&path, &away).unwrap();
        let without_log = agent.inspect().await;
        std::fs::rename(&away, &path).unwrap();
        let released = summarized(&without_log);
        assert_eq!(released.len(), originals.len());
        let messages = originals
            .iter()
            .filter(|e| e.kind != HistoryEntryKind::Summary)
            .count();
        assert!(messages >= 2, "{originals:?}");
        // Earlier summaries it absorbed are kept in memory; the messages are not.
        for (shown, original) in released.iter().zip(originals) {
            assert_eq!(shown.kind, original.kind);
            if original.kind == HistoryEntryKind::Summary {
                assert_eq!(shown, original);
                continue;
            }
            assert_eq!(shown.tokens, original.tokens, "the counts stay");
            assert!(
                shown.title.ends_with("its text is in the session log"),
                "{}",
                shown.title
            );
            assert!(shown.body.contains("cannot read"), "{}", shown.body);
        }
        // The prompt itself never needed them.
        let entries = |s: &HistorySnapshot| {
            s.entries
                .iter()
                .filter(|e| e.kind != HistoryEntryKind::Summary)
                .cloned()
                .collect::<Vec<_>>()
        };
        assert_eq!(entries(&without_log), entries(&recorded));
        assert_eq!(without_log.prompt_tokens, recorded.prompt_tokens);

        // And the log has all of it.
        let loaded = session::load(&path).unwrap();
        let restored = loaded.restore(TokenCounter::estimate_only());
        let history = serde_json::to_string(restored.context.messages()).unwrap();
        assert_eq!(
            history.matches("line 1: the quick").count(),
            4,
            "every read is in the log"
        );
    });
}
