//! Issue 26 points 7 and 8, with the shape that showed them through `exec`: a budget of a
//! few thousand tokens, two 18 KB command outputs and a long answer, over two turns; and
//! `/compact`'s figures, report and billing (points 8, 9 and 18).

use super::*;
use support::cli::{exec, session_id, session_logs, text};

/// A command printing about 18 KB (under `tools.large_result_bytes`, so it goes into the
/// prompt whole), different for each `seed`.
fn eighteen_kb(seed: u32) -> String {
    format!(
        "for i in $(seq 1 330); do echo \"row $i of {seed}: the quick brown fox jumps over the lazy dog\"; done"
    )
}

/// What each of the fresh-eyes report's steps says before its call.
const PARAGRAPH: &str = "The step list grows as each command reports back to the agent. ";

/// A step saying [`PARAGRAPH`] `repeats` times, then calling `echo step`.
fn echo_step(id: &str, repeats: usize) -> Reply {
    Reply::Stream(Turn::new().with_text(PARAGRAPH.repeat(repeats)).with_tool(
        id,
        "bash",
        r#"{"command": "echo step"}"#,
    ))
}

/// What each summary call among `events` said it was about to summarize.
fn compactions_started(events: &[Event]) -> Vec<String> {
    events
        .iter()
        .filter_map(|e| match e {
            Event::CompactionStarted { reason } => Some(reason.clone()),
            _ => None,
        })
        .collect()
}

/// The events `exec --json` printed.
fn json_events(stdout: &[u8]) -> Vec<Value> {
    text(stdout)
        .lines()
        .map(|line| serde_json::from_str(line).expect("one JSON event a line"))
        .collect()
}

fn of_type<'a>(events: &'a [Value], kind: &str) -> Vec<&'a Value> {
    events.iter().filter(|e| e["type"] == kind).collect()
}

/// Runs the issue's two `exec` turns; returns what each printed and every request.
fn two_turns(server: &ScriptedServer, compaction: &str) -> (Vec<Value>, Vec<Value>, Vec<RecordedRequest>) {
    let answer = "The two listings agree row by row; here is what each part shows. ".repeat(60);
    for reply in [
        Reply::tool("out_1", "bash", json!({"command": eighteen_kb(1)}).to_string()),
        Reply::tool("out_2", "bash", json!({"command": eighteen_kb(2)}).to_string()),
        Reply::text(answer.clone()),
        Reply::tool("out_3", "bash", json!({"command": eighteen_kb(3)}).to_string()),
        Reply::tool("out_4", "bash", json!({"command": eighteen_kb(4)}).to_string()),
        Reply::text(answer),
    ] {
        server.push(reply);
    }
    server.answer_toolless_with(Reply::text("A summary of the listings."));
    let (home, workspace) = (TempDir::new(), TempDir::new());
    // 9000 tokens as these turns were tuned, plus about 150 for the web_fetch tool's
    // schema, which came later.
    home.write(
        "config.toml",
        format!(
            "[agent]\ntoken_limit = 9150\nkeep_tool_results = 5\ncompaction = \"{compaction}\"\n\n[model]\nmax_output_tokens = 2000\n"
        ),
    );
    let first = exec(
        &home,
        &workspace,
        server,
        &["--json", "Print the two listings and compare them."],
    );
    assert_eq!(first.status.code(), Some(0), "{}", text(&first.stderr));
    let id = session_id(&session_logs(&home)[0]);
    let second = exec(
        &home,
        &workspace,
        server,
        &["--json", "--resume", &id, "Now the next two listings."],
    );
    assert_eq!(second.status.code(), Some(0), "{}", text(&second.stderr));
    (
        json_events(&first.stdout),
        json_events(&second.stdout),
        server.requests(),
    )
}

/// How each request shows the calls' results, in order: `whole`, `trimmed` or `stub`.
fn shown_results(request: &RecordedRequest) -> Vec<&'static str> {
    let messages = request.body["messages"].as_array().unwrap();
    messages
        .iter()
        .filter_map(|m| m["content"].as_array())
        .flatten()
        .filter(|block| block["type"] == "tool_result")
        .map(|block| {
            let content = block["content"].as_str().unwrap_or_default();
            if content.starts_with("[result omitted to save context") {
                "stub"
            } else if content.starts_with("[result trimmed to save context") {
                "trimmed"
            } else {
                "whole"
            }
        })
        .collect()
}

/// Point 7: masking and trimming bring this prompt under the mark, so no summary call is
/// made. Each 18 KB output (about 5,600 tokens) is more than the room the budget leaves,
/// so it is trimmed as it comes; the long answer then leaves stubs to do the rest: the
/// last `keep_tool_results / 2` kept, then (the tools' schemas leave that little room) the
/// latest only.
#[test]
fn no_summary_call_when_masking_and_trimming_suffice() {
    let server = ScriptedServer::start_blocking(Vec::new());
    let (first, second, requests) = two_turns(&server, "both");
    let summaries = requests.iter().filter(|r| is_summary_request(r)).count();
    assert_eq!(summaries, 0, "summary calls");
    let shown: Vec<Vec<&str>> = requests.iter().map(shown_results).collect();
    assert_eq!(
        shown,
        vec![
            vec![],
            vec!["trimmed"],
            vec!["trimmed", "trimmed"],
            vec!["trimmed", "trimmed"],
            vec!["stub", "trimmed", "trimmed"],
            vec!["stub", "stub", "stub", "trimmed"],
        ]
    );
    let notices = |events: &[Value]| -> Vec<String> {
        of_type(events, "notice")
            .iter()
            .map(|e| e["message"].as_str().unwrap().to_string())
            .filter(|m| !m.starts_with("sandboxed commands may write"))
            .collect()
    };
    let trimmed = "1 large tool result is trimmed to its first and last lines to save context (the history keeps it whole)";
    assert_eq!(notices(&first), vec![trimmed, trimmed]);
    assert_eq!(
        notices(&second),
        vec![
            "1 older tool result is shown to the model as a one-line stub (the last 2 are shown trimmed)",
            trimmed,
            "3 older tool results are shown to the model as one-line stubs (the last one is shown trimmed)",
            trimmed,
        ]
    );
    assert!(of_type(&first, "context_compacted").is_empty());
    assert!(of_type(&second, "context_compacted").is_empty());
}

/// Point 8: with summaries alone (`compaction = "summarize"`), the same two turns need
/// summaries; each one's figures are the whole prompt before and after, on the gauge's
/// scale: it starts over the budget (which is why it runs) and ends within it, and the
/// gauge's next figure is the prompt it left plus the reply that followed.
#[test]
fn summary_figures_are_the_prompt_as_sent() {
    let server = ScriptedServer::start_blocking(Vec::new());
    let (first, second, requests) = two_turns(&server, "summarize");
    let budget = 9000 - 2000 - 1000;
    let mut seen = 0;
    for events in [&first, &second] {
        for (n, event) in events.iter().enumerate() {
            if event["type"] != "context_compacted" {
                continue;
            }
            seen += 1;
            let (before, after) = (
                event["tokens_before"].as_u64().unwrap(),
                event["tokens_after"].as_u64().unwrap(),
            );
            assert!(after <= budget && budget < before, "{before} → {after}");
            // The next gauge reading is this prompt and the reply that followed it.
            let gauge = events[n..]
                .iter()
                .find(|e| e["type"] == "token_usage")
                .map(|e| e["context_tokens"].as_u64().unwrap())
                .unwrap();
            assert!((after..after + 1500).contains(&gauge), "{after} then {gauge}");
        }
    }
    assert!(seen > 0, "the summarize strategy summarized");
    assert_eq!(requests.iter().filter(|r| is_summary_request(r)).count(), seen);
}

/// Points 8 and 9: `/compact`'s figures are the inspector's (the gauge's) before and after
/// it, in its event, its record in `/stats` and its one report; its masking and trimming
/// are told in that report, not in notices of their own; its summary call counts in the
/// session's tokens like any other call; the inspector counts the trimmed result.
#[tokio::test]
async fn compact_now_figures_are_the_gauges_and_it_reports_once() {
    let server = ScriptedServer::start(vec![
        Reply::Stream(
            Turn::new()
                .with_text("Reading the small one first. ".repeat(80))
                .with_tool("a", "read_file", r#"{"path": "small.txt"}"#),
        ),
        Reply::tool("b", "read_file", r#"{"path": "huge.txt"}"#),
        Reply::text("Both read."),
    ])
    .await;
    server.answer_toolless_with(Reply::Stream(
        Turn::text("Read small.txt and huge.txt.").usage(1234, 56),
    ));
    let mut agent = Harness::start(config_for_huge_reads(Provider::Anthropic, &server, 80_000));
    file_of_tokens(&agent.workspace, "small.txt", "small", 2_000);
    file_of_tokens(&agent.workspace, "huge.txt", "huge", 14_000);
    agent.turn("Read small.txt and huge.txt.").await;
    let totals = |event: &Event| match event {
        Event::TokenUsage {
            total_input_tokens,
            total_output_tokens,
            ..
        } => Some((*total_input_tokens, *total_output_tokens)),
        _ => None,
    };
    let (input, output) = agent.events.iter().rev().find_map(totals).unwrap();
    let before = agent.inspect().await.prompt_tokens;
    let start = agent.events.len();
    compact_now(&mut agent).await;
    let snapshot = agent.inspect().await;
    let after = snapshot.prompt_tokens;
    let events = &agent.events[start..];
    let compacted: Vec<(u64, u64, u64, u64)> = events
        .iter()
        .filter_map(|e| match e {
            Event::ContextCompacted {
                tokens_before,
                tokens_after,
                start,
                end,
                ..
            } => Some((*tokens_before, *tokens_after, *start, *end)),
            _ => None,
        })
        .collect();
    assert_eq!(compacted, vec![(before, after, 1, 3)]);
    // Point 18: the inspector says the result is trimmed, not "0 masked".
    assert_eq!((snapshot.masked_results, snapshot.trimmed_results), (0, 1));
    let titles: Vec<&str> = snapshot.entries.iter().map(|e| e.title.as_str()).collect();
    assert_eq!(titles.last(), Some(&"Both read."));
    assert!(titles.contains(&"1 tool result, 1 trimmed"), "{titles:?}");
    let usage: Vec<(u64, u64)> = events.iter().filter_map(totals).collect();
    assert_eq!(usage, vec![(input + 1234, output + 56)]);
    assert_eq!(
        snapshot.compactions,
        vec![miniagent_protocol::CompactionRecord {
            tokens_before: before,
            tokens_after: after,
            start: 1,
            end: 3,
            fallback: false,
        }]
    );
    let notices: Vec<&str> = events
        .iter()
        .filter_map(|e| match e {
            Event::Notice { message } => Some(message.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(
        notices,
        vec![format!(
            "compacted: the prompt went from about {before} to {after} tokens (1 summary, 1 large result trimmed)"
        )]
    );
}

/// Point 18's plurals, in `/compact`'s report: one recent step kept is "the last step".
#[tokio::test]
async fn compact_now_names_one_kept_step_in_the_singular() {
    let server = ScriptedServer::start(vec![Reply::text("Hello.")]).await;
    let mut config = test_config(Provider::Anthropic, &server);
    config.agent.keep_recent_steps = 1;
    let mut agent = Harness::start(config);
    agent.turn("hi").await;
    let message = compact_now(&mut agent).await;
    assert!(
        message.starts_with("cannot compact further")
            && message.ends_with(", which are summarized only when the prompt would not fit otherwise, and the last step stays verbatim"),
        "{message}"
    );
}

/// Finding 1 of the fresh-eyes report: a long answer, a six-token answer, then steps whose
/// own replies fill the prompt. The pre-flight compaction summarizes the run that wins
/// back the most first, then the next one on to the mark (the first turn's long answer),
/// and never sends the six-token answer to be summarized; its progress line names one
/// message in the singular.
#[tokio::test]
async fn summary_calls_go_to_the_mark_and_none_for_a_tiny_run() {
    let server = ScriptedServer::start(vec![
        Reply::text(PARAGRAPH.repeat(80)),
        Reply::text("third answer"),
        echo_step("s1", 120),
        echo_step("s2", 120),
        echo_step("s3", 120),
        Reply::text("final answer"),
    ])
    .await;
    server.answer_toolless_with(Reply::text("SUMMARY2 of the work"));
    let mut agent = Harness::start(config_both_at_9000(&server));
    agent.turn("explain").await;
    agent.turn("explain more").await;
    let start = agent.events.len();
    agent.turn("go on").await;
    let requests = server.requests();
    let summaries: Vec<String> = requests
        .iter()
        .filter(|r| is_summary_request(r))
        .map(|r| {
            let asked = r.body["messages"][0]["content"][0]["text"].as_str().unwrap();
            asked.chars().take(60).collect()
        })
        .collect();
    let started = compactions_started(&agent.events[start..]);
    // The runs cannot reach the mark in a few calls: the history before the latest
    // message goes in one (the first turn's long answer, the six-token one never alone,
    // and the person's two short messages kept word for word), then the run of the
    // latest turn's steps.
    assert_eq!(
        started,
        vec![
            "summarizing messages 1–4 (about 1062 tokens in the prompt)",
            "summarizing messages 6–9 (about 3214 tokens in the prompt)",
        ]
    );
    assert_eq!(
        summaries,
        vec![
            "Summarize these steps of the agent's work (messages 1–4 of t",
            "Summarize these steps of the agent's work (messages 6–9 of t",
        ]
    );
    let next = requests.iter().rev().find(|r| !is_summary_request(r)).unwrap();
    assert!(
        next.body["messages"]
            .to_string()
            .contains(r#"message 1: \"explain\"\nmessage 3: \"explain more\""#),
        "{}",
        next.body["messages"]
    );
    // Four steps and two summary calls, in one compaction.
    assert_eq!(requests.len() - 2, 6);
}

/// Fresh-eyes findings 1 and 4, the report's own shape: two command outputs and a long
/// answer, a long answer, a six-token one, then steps whose replies fill the prompt. One
/// compaction, on to the mark; and a masking notice tells only the stubs a request shows:
/// the results masked before the compaction went into its summaries, so only the request
/// before it shows stubs, and the one notice says exactly those
/// (`no_summary_call_when_masking_and_trimming_suffice` has notices with stubs too, each
/// matching its request).
#[tokio::test]
async fn the_masking_notice_tells_the_stubs_the_request_shows() {
    let server = ScriptedServer::start(vec![
        Reply::tool("out_1", "bash", json!({"command": eighteen_kb(1)}).to_string()),
        Reply::tool("out_2", "bash", json!({"command": eighteen_kb(2)}).to_string()),
        Reply::text(PARAGRAPH.repeat(100)),
        Reply::text(PARAGRAPH.repeat(90)),
        Reply::text("third answer"),
        echo_step("s1", 100),
        echo_step("s2", 100),
        echo_step("s3", 100),
        Reply::text("final answer"),
    ])
    .await;
    server.answer_toolless_with(Reply::text("SUMMARY2 of the work"));
    let mut agent = Harness::start(config_both_at_9000(&server));
    agent.turn("list twice").await;
    agent.turn("explain more").await;
    agent.turn("go third").await;
    let start = agent.events.len();
    let seen = server.requests().len();
    agent.turn("go on").await;
    let requests = server.requests().split_off(seen);
    let started = compactions_started(&agent.events[start..]);
    let told: Vec<&str> = agent.events[start..]
        .iter()
        .filter_map(|e| match e {
            Event::Notice { message } if message.contains("shown to the model as") => Some(message.as_str()),
            _ => None,
        })
        .collect();
    // One compaction, at the second step, on to the mark in two calls: the history before
    // this turn as one (its runs would take more calls; the six-token answer is never
    // summarized alone), then this turn's first step. The steps after it fit.
    let kinds: Vec<bool> = requests.iter().map(is_summary_request).collect();
    assert_eq!(kinds, vec![false, false, true, true, false, false]);
    assert_eq!(
        started,
        vec![
            "summarizing messages 1–10 (about 2720 tokens in the prompt)",
            "summarizing messages 12–13 (about 1347 tokens in the prompt)",
        ]
    );
    // The step before the compaction shows two stubs, as its notice says; the results
    // masked are then in the summaries: no later request shows a stub.
    let stubs: Vec<usize> = requests
        .iter()
        .filter(|r| !is_summary_request(r))
        .map(|r| shown_results(r).iter().filter(|s| **s == "stub").count())
        .collect();
    assert_eq!(stubs, vec![0, 2, 0, 0]);
    assert_eq!(
        told,
        vec!["2 older tool results are shown to the model as one-line stubs (the last one stays whole)"]
    );
}

/// A chat of many short turns, each answer under the 256 tokens a summary normally needs:
/// once the prompt is over the budget (it could not be sent at all) those small runs are
/// summarized too, and every turn goes on; under the budget none is.
#[tokio::test]
async fn a_chat_of_short_turns_goes_on_past_its_budget() {
    let answer = "A short answer that says what the file holds and why. ".repeat(12);
    let turns = 40;
    let server = ScriptedServer::start((0..turns).map(|_| Reply::text(answer.clone())).collect()).await;
    server.answer_toolless_with(Reply::text("Short."));
    let mut agent = Harness::start(config_both_at_9000(&server));
    for turn in 0..turns {
        let events = agent.turn(&format!("question {turn}")).await;
        let failed: Vec<&Event> = events
            .iter()
            .filter(|e| matches!(e, Event::Error { .. }))
            .collect();
        assert_eq!(failed, Vec::<&Event>::new(), "turn {turn}");
        assert!(
            events.iter().any(|e| matches!(e, Event::TurnComplete { .. })),
            "turn {turn}: {events:?}"
        );
    }
    let requests = server.requests();
    let summaries = requests.iter().filter(|r| is_summary_request(r)).count();
    assert!(
        summaries > 0,
        "the prompt outgrew the budget: summaries were needed"
    );
    // Every question reached the last request (summaries keep every user message).
    let last = requests.iter().rev().find(|r| !is_summary_request(r)).unwrap();
    let sent = last.body["messages"].to_string();
    for turn in 0..turns {
        assert!(sent.contains(&format!("question {turn}")), "question {turn}");
    }
}

/// The second fresh-eyes report's shape: a budget of a few thousand tokens, two 18 KB
/// command outputs and a 6 KB answer a turn for two turns, then 6 KB answers. Once the
/// budget is reached, a compaction went only just under it (one summary of one answer),
/// so every turn after made a summary call. Now each compaction goes on to the mark, and
/// the turns after it need none: no two turns in a row compact, and fewer than half do.
#[tokio::test]
async fn a_compaction_reaches_the_mark_and_lasts_several_turns() {
    let answer = "The two listings agree row by row; here is what each part shows. ".repeat(90);
    let mut script = Vec::new();
    for turn in 0..2 {
        script.push(Reply::tool(
            format!("a{turn}"),
            "bash",
            json!({"command": eighteen_kb(2 * turn)}).to_string(),
        ));
        script.push(Reply::tool(
            format!("b{turn}"),
            "bash",
            json!({"command": eighteen_kb(2 * turn + 1)}).to_string(),
        ));
        script.push(Reply::text(answer.clone()));
    }
    let turns = 12;
    script.extend((2..turns).map(|_| Reply::text(answer.clone())));
    let server = ScriptedServer::start(script).await;
    server.answer_toolless_with(Reply::text("Summary: the listings were compared."));
    let mut agent = Harness::start(config_both_at_9000(&server));
    let mut compacted = Vec::new();
    for turn in 0..turns {
        let events = agent.turn(&format!("turn {turn}: list and compare")).await;
        assert!(
            events.iter().any(|e| matches!(e, Event::TurnComplete { .. })),
            "turn {turn}: {events:?}"
        );
        compacted.push(events.iter().any(|e| matches!(e, Event::ContextCompacted { .. })));
    }
    let first = compacted.iter().position(|c| *c).expect("the budget was reached");
    let after: Vec<bool> = compacted[first..].to_vec();
    assert!(
        !after.windows(2).any(|pair| pair[0] && pair[1]),
        "two turns in a row compacted: {compacted:?}"
    );
    let compacting = after.iter().filter(|c| **c).count();
    assert!(
        compacting * 2 < after.len(),
        "{compacting} of the {} turns from the first compaction on compacted: {compacted:?}",
        after.len()
    );
}

/// `exec` says when no summary could be written and a digest stands in (a fresh-eyes
/// tester saw only "context compacted" while the summarizer failed every call).
#[test]
fn exec_says_when_a_digest_stands_in_for_a_summary() {
    let server = ScriptedServer::start_blocking(vec![
        echo_step("s1", 120),
        echo_step("s2", 120),
        echo_step("s3", 120),
        echo_step("s4", 120),
        Reply::text("done"),
    ]);
    server.answer_toolless_with(Reply::status(500, "the summarizer is down"));
    let (home, workspace) = (TempDir::new(), TempDir::new());
    home.write(
        "config.toml",
        "[agent]\ntoken_limit = 9000\ncompaction = \"summarize\"\n\n[model]\nmax_output_tokens = 2000\n",
    );
    let output = exec(&home, &workspace, &server, &["go"]);
    let stderr = text(&output.stderr);
    assert_eq!(output.status.code(), Some(0), "{stderr}");
    assert!(
        stderr.lines().any(|line| line.starts_with("context compacted: ")
            && line.ends_with(" tokens (no summary could be written: a digest of the steps stands in)")),
        "{stderr}"
    );
}
