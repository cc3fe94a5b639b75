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
        let mut script: Vec<Reply> = (0..12)
            .map(|n| Reply::tool(format!("call_{n}"), "read_file", read_big(n)))
            .collect();
        script.push(Reply::text("finished anyway"));
        let server = ScriptedServer::start(script).await;
        server.answer_toolless_with(Reply::status(500, "the summarizer is down"));
        let mut config = test_config(Provider::Anthropic, &server);
        config.agent.token_limit = 80_000;
        config.model.max_output_tokens = 4096;
        config.tools.read_file.max_tokens = 40_000;
        config.agent.max_steps = 20;
        let mut agent = Harness::start(config);
        // Under the size that is trimmed rather than summarized.
        big_file(&agent.workspace, 8_000);
        let events = agent.turn(TASK).await;
        assert_eq!(
            events.last(),
            Some(&Event::TurnComplete {
                text: "finished anyway".into()
            })
        );
        assert_every_summary_call_has_an_outcome(&events);
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

/// Ten reads of big.txt, compacted on the way, then the inspector's snapshot; with
/// `log`, the session is recorded there.
async fn snapshot_after_compaction(log: Option<session::SessionLog>) -> (Harness, HistorySnapshot) {
    let mut script: Vec<Reply> = (0..10)
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
            summary.title.starts_with("summary of messages 2–"),
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
                // Its text and figures are in memory; its originals are in the log.
                assert_eq!(
                    (&shown.title, &shown.body, shown.tokens),
                    (&original.title, &original.body, original.tokens)
                );
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
            10,
            "every read is in the log"
        );
    });
}

/// Item: a token limit the output reserve would eat whole. Set alone (the reserve is the
/// built-in default), the reserve is lowered to fit and one line says so; the turn works
/// and the request asks for no more output than fits.
#[test]
fn a_token_limit_below_the_default_output_reserve_is_adjusted_with_one_line() {
    let server = ScriptedServer::start_blocking(vec![Reply::text("It fits.")]);
    let home = TempDir::new();
    let workspace = TempDir::new();
    let output = support::cli::exec_command(&home, &workspace, &server, &["say hello"])
        .env("MINIAGENT_TOKEN_LIMIT", "8000")
        .output()
        .expect("miniagent runs");
    let stderr = support::cli::text(&output.stderr);
    assert_eq!(output.status.code(), Some(0), "stderr: {stderr}");
    assert_eq!(support::cli::text(&output.stdout), "It fits.\n");
    let lines: Vec<&str> = stderr
        .lines()
        .filter(|line| line.contains("model.max_output_tokens"))
        .collect();
    assert_eq!(lines.len(), 1, "{stderr}");
    assert!(lines[0].contains("agent.token_limit 8000"), "{stderr}");
    assert!(lines[0].contains("16384"), "{stderr}");
    assert!(!stderr.contains("the budget is 0"), "{stderr}");
    let requests = server.requests();
    assert_eq!(requests.len(), 1);
    let max_tokens = requests[0].body["max_tokens"].as_u64().unwrap();
    assert!(
        max_tokens * 2 <= 8000,
        "the reply may take {max_tokens} of 8000 tokens"
    );
}

/// Both settings named by the person and in conflict: refused at start-up, one line,
/// nothing sent.
#[test]
fn a_token_limit_below_an_explicit_output_reserve_is_refused_at_start_up() {
    let server = ScriptedServer::start_blocking(vec![Reply::text("never")]);
    let home = TempDir::new();
    let workspace = TempDir::new();
    let config = home.join("small.toml");
    std::fs::write(
        &config,
        "[agent]\ntoken_limit = 8000\n[model]\nmax_output_tokens = 16384\n",
    )
    .unwrap();
    let output = support::cli::miniagent(&home)
        .arg("--config")
        .arg(&config)
        .arg("--workspace")
        .arg(workspace.path())
        .args([
            "--base-url",
            &server.anthropic_base_url(),
            "--model",
            "scripted-model",
        ])
        .args(["exec", "say hello"])
        .output()
        .expect("miniagent runs");
    let stderr = support::cli::text(&output.stderr);
    assert_eq!(output.status.code(), Some(1), "stderr: {stderr}");
    assert_eq!(stderr.trim().lines().count(), 1, "{stderr}");
    assert!(
        stderr.contains("agent.token_limit") && stderr.contains("model.max_output_tokens"),
        "{stderr}"
    );
    assert!(server.requests().is_empty());
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

/// Item 7: with a small token limit, a 10-step turn compacts once or twice, not at
/// every step: a compaction brings the prompt down to a low-water mark, so it buys steps.
/// Results of about a fifth of the room the prompt has.
#[test]
fn a_small_token_limit_compacts_a_ten_step_turn_rarely_and_to_a_low_water_mark() {
    ten_steps_at_a_small_token_limit(1000);
}

/// Results so large that the latest step alone keeps the prompt over the low-water mark
/// (the case that summarized at every step).
#[test]
fn a_small_token_limit_with_large_results_does_not_summarize_at_every_step() {
    ten_steps_at_a_small_token_limit(1800);
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
        config.agent.token_limit = 8000;
        config.model.max_output_tokens = 1000;
        let mut agent = Harness::start(config);
        for n in 0..10 {
            file_of_tokens(&agent.workspace, &format!("part{n}.txt"), &format!("part{n}"), result_tokens);
        }
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
            "10 steps at token_limit 8000, results of {result_tokens} tokens: {summary_calls} summary calls, {compactions} summaries applied, {shrinks} compacted steps; prompts {sizes:?}"
        );
        assert!(compactions >= 1, "the turn outgrows 8000 tokens and must compact");
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

/// Item 7: `/compact` on a prompt one huge tool result dominates goes after that result
/// (trimmed to its first and last lines, the history keeps it), and says how far it got.
#[tokio::test]
async fn compact_now_goes_after_the_result_that_dominates_the_prompt() {
    let server = ScriptedServer::start(vec![
        Reply::tool("a", "read_file", r#"{"path": "small.txt"}"#),
        Reply::tool("b", "read_file", r#"{"path": "huge.txt"}"#),
        Reply::text("Both read."),
        Reply::text("Next."),
    ])
    .await;
    server.answer_toolless_with(Reply::text("Read small.txt and huge.txt."));
    let mut config = test_config(Provider::Anthropic, &server);
    config.agent.token_limit = 80_000;
    config.model.max_output_tokens = 4096;
    config.tools.read_file.max_tokens = 40_000;
    let mut agent = Harness::start(config);
    file_of_tokens(&agent.workspace, "small.txt", "small", 200);
    file_of_tokens(&agent.workspace, "huge.txt", "huge", 14_000);
    agent.turn("Read small.txt and huge.txt.").await;
    let before = agent.inspect().await.prompt_tokens;
    let start = agent.events.len();
    agent.send(miniagent::protocol::Op::CompactNow);
    let notice = agent.wait_for(compact_now_reported).await;
    let Event::Notice { message } = notice else {
        unreachable!()
    };
    assert!(
        message.starts_with("compacted: the prompt went from about"),
        "{message}"
    );
    assert!(message.contains("1 large result trimmed"), "{message}");
    assert_every_summary_call_has_an_outcome(&agent.events[start..]);
    let after = agent.inspect().await.prompt_tokens;
    assert!(
        after * 2 < before,
        "/compact took the prompt from {before} to only {after}"
    );
    // The next request shows the result trimmed: what it was, its first and last lines.
    agent.turn("Go on.").await;
    let last = server.requests().last().unwrap().body["messages"].to_string();
    assert!(
        last.contains("[result trimmed to save context: read_file {\\\"path\\\":\\\"huge.txt\\\"} returned"),
        "{last}"
    );
    assert!(last.contains("huge 1: alpha"), "its first lines stay");
    assert!(!last.contains("huge 900: alpha"), "its middle is cut");
    assert!(
        estimate(
            server.requests().last().unwrap(),
            &TokenCounter::new(Encoding::Cl100kBase)
        ) < before / 2
    );
}

/// Item 7: `/compact` that cannot make progress says so, and a summary call that could
/// not write anything shorter still reports how it ended.
#[tokio::test]
async fn compact_now_without_progress_says_it_cannot_and_every_call_ends() {
    let server = ScriptedServer::start(vec![Reply::text("Hello.")]).await;
    server.answer_toolless_with(Reply::text(
        "A summary far longer than the one short reply it stands for. ".repeat(20),
    ));
    let mut agent = Harness::start(test_config(Provider::Anthropic, &server));
    agent.turn("hi").await;
    let start = agent.events.len();
    agent.send(miniagent::protocol::Op::CompactNow);
    let notice = agent.wait_for(compact_now_reported).await;
    let Event::Notice { message } = notice else {
        unreachable!()
    };
    assert!(message.starts_with("cannot compact further"), "{message}");
    assert!(message.contains("system prompt and tools"), "{message}");
    assert_every_summary_call_has_an_outcome(&agent.events[start..]);
}

/// `/compact`'s closing notice.
fn compact_now_reported(event: &Event) -> bool {
    matches!(event, Event::Notice { message } if message.starts_with("compacted") || message.starts_with("cannot compact"))
}

/// The entry of `entries` that is a summary, with its detail.
fn summary_in(entries: &[HistoryEntry]) -> Option<(&HistoryEntry, &miniagent::protocol::SummaryDetail)> {
    entries
        .iter()
        .find(|e| e.kind == HistoryEntryKind::Summary)
        .and_then(|e| e.summary.as_ref().map(|detail| (e, detail)))
}

/// Item 8: after two compactions of the same run the summary opens on the earlier one,
/// which opens on its own originals; the figures count what each stands for; and the
/// message numbers are the ones `sessions show` prints.
#[test]
fn nested_summaries_open_down_to_the_original_messages_with_one_numbering() {
    let runtime = tokio::runtime::Runtime::new().unwrap();
    runtime.block_on(async {
        let mut script: Vec<Reply> = (0..4)
            .map(|n| {
                Reply::tool(
                    format!("call_{n}"),
                    "read_file",
                    format!(r#"{{"path": "part{n}.txt"}}"#),
                )
            })
            .collect();
        script.push(Reply::text("Four parts read."));
        script.push(Reply::text("Still four."));
        let server = ScriptedServer::start(script).await;
        server.answer_toolless_with(Reply::text("Read the parts in turn."));
        let data = TempDir::new();
        let log = support::harness::session_log_in(&data);
        let mut agent = Harness::start_recorded(test_config(Provider::Anthropic, &server), log.clone());
        for n in 0..4 {
            file_of_tokens(
                &agent.workspace,
                &format!("part{n}.txt"),
                &format!("part{n}"),
                300,
            );
        }
        agent.turn("Read part0.txt to part3.txt.").await;
        for question in ["", "How many parts?"] {
            if !question.is_empty() {
                agent.turn(question).await;
            }
            agent.send(miniagent::protocol::Op::CompactNow);
            agent.wait_for(compact_now_reported).await;
        }
        assert_every_summary_call_has_an_outcome(&agent.events);
        let snapshot = agent.inspect().await;
        let (outer, detail) = summary_in(&snapshot.entries).expect("a summary in the prompt");
        // Messages: 1 the task, 2–9 four steps, 10 the answer, then the second question.
        assert_eq!((detail.start, detail.end), (1, 10), "{}", outer.title);
        assert!(
            outer.title.starts_with("summary of messages 2–10: "),
            "{}",
            outer.title
        );
        let (inner, inner_detail) = summary_in(&detail.originals).expect("the earlier summary opens");
        assert!(
            inner.title.starts_with("earlier summary of messages 2–"),
            "{}",
            inner.title
        );
        // The earlier summary opens on the original messages, the first read among them.
        let first = &inner_detail.originals[0];
        assert!(first.title.starts_with("message 2 · "), "{}", first.title);
        assert!(
            inner_detail
                .originals
                .iter()
                .any(|e| e.body.contains("part0 1: alpha")),
            "{:#?}",
            inner_detail.originals
        );
        // What a summary stands for counts every original under it, however deep.
        let originals_of = |d: &miniagent::protocol::SummaryDetail| -> u64 {
            d.originals
                .iter()
                .map(|e| e.summary.as_ref().map_or(e.tokens, |inner| inner.tokens_before))
                .sum()
        };
        assert_eq!(inner_detail.tokens_before, originals_of(inner_detail));
        assert_eq!(detail.tokens_before, originals_of(detail));
        assert!(detail.tokens_before > 4 * 300, "{}", detail.tokens_before);

        // `sessions show` names the same ranges.
        let path = log.path().expect("recorded");
        let loaded = session::load(&path).unwrap();
        let shown = session::export::show(&loaded, &path);
        assert!(shown.contains("summary of messages 2–10 ("), "{shown}");
        let inner_range = inner.title.trim_start_matches("earlier summary of messages ");
        let inner_range = inner_range.split(':').next().unwrap();
        assert!(
            shown.contains(&format!("summary of messages {inner_range} (")),
            "{inner_range}: {shown}"
        );
    });
}

/// Item 10: the gauge's figure is known before the first request (the system prompt and
/// tool schemas), and after a call it is the same figure `/history` shows, whatever the
/// provider reports.
#[tokio::test]
async fn the_context_figure_is_known_before_the_first_request_and_agrees_with_the_inspector() {
    let server = ScriptedServer::start(vec![Reply::Stream(Turn::text("Hello.").usage(10, 5))]).await;
    let mut agent = Harness::start(test_config(Provider::Anthropic, &server));
    let first = agent.wait_for(|e| matches!(e, Event::TokenUsage { .. })).await;
    assert!(server.requests().is_empty(), "before any request");
    let Event::TokenUsage {
        context_tokens: at_start,
        token_limit,
        ..
    } = first
    else {
        unreachable!()
    };
    assert_eq!(token_limit, 80_000);
    let idle = agent.inspect().await;
    assert_eq!(
        at_start, idle.prompt_tokens,
        "the gauge and /history before the first turn"
    );
    assert!(at_start > 500, "the system prompt and tool schemas: {at_start}");
    // What is sent carries that much besides the messages.
    let counter = TokenCounter::new(Encoding::Cl100kBase);
    let events = agent.turn("say hello").await;
    let sent = estimate(&server.requests()[0], &counter);
    assert!(
        sent.abs_diff(at_start) < 50,
        "sent about {sent}, the gauge said {at_start} before the message"
    );
    let after = events
        .iter()
        .rev()
        .find_map(|e| match e {
            Event::TokenUsage { context_tokens, .. } => Some(*context_tokens),
            _ => None,
        })
        .expect("a figure after the call");
    let snapshot = agent.inspect().await;
    assert_eq!(
        after, snapshot.prompt_tokens,
        "the gauge and /history after a call"
    );
    assert!(
        after > at_start,
        "the provider's 15 tokens are not the prompt's size"
    );
}

/// Item 7: a summary call interrupted by the person ends with a `cancelled` outcome, and
/// the history is left as it was.
#[tokio::test]
async fn an_interrupted_summary_call_reports_that_it_was_cancelled() {
    let server = ScriptedServer::start(vec![
        Reply::tool("a", "read_file", r#"{"path": "one.txt"}"#),
        Reply::tool("b", "read_file", r#"{"path": "two.txt"}"#),
        Reply::tool("c", "read_file", r#"{"path": "three.txt"}"#),
        Reply::text("Three read."),
    ])
    .await;
    server.answer_toolless_with(Reply::slow(
        Turn::text("A summary that never arrives in time."),
        20_000,
    ));
    let mut agent = Harness::start(test_config(Provider::Anthropic, &server));
    for name in ["one", "two", "three"] {
        file_of_tokens(&agent.workspace, &format!("{name}.txt"), name, 200);
    }
    agent.turn("Read the three files.").await;
    let before = agent.inspect().await;
    let start = agent.events.len();
    agent.send(miniagent::protocol::Op::CompactNow);
    agent
        .wait_for(|e| matches!(e, Event::CompactionStarted { .. }))
        .await;
    agent.send(miniagent::protocol::Op::Interrupt);
    let ended = agent
        .wait_for(|e| matches!(e, Event::CompactionEnded { .. }))
        .await;
    assert!(
        matches!(
            ended,
            Event::CompactionEnded {
                outcome: miniagent::protocol::CompactionOutcome::Cancelled,
                ..
            }
        ),
        "{ended:?}"
    );
    agent
        .wait_for(|e| matches!(e, Event::Notice { message } if message == "compaction interrupted"))
        .await;
    assert_every_summary_call_has_an_outcome(&agent.events[start..]);
    assert_eq!(agent.inspect().await, before, "nothing was replaced");
}
