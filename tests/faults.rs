//! Provider faults: what is retried, what is not, and that a retry never duplicates output.
#![allow(clippy::unwrap_used, clippy::expect_used)] // A test fails by panicking.

use crate::support;

use miniagent_core::config::Provider;
use miniagent_protocol::Event;
use pretty_assertions::assert_eq;
use support::harness::{Harness, streamed_text, test_config};
use support::*;

fn retries(events: &[Event]) -> Vec<(u32, u64, bool)> {
    events
        .iter()
        .filter_map(|e| match e {
            Event::Retrying {
                attempt,
                delay_ms,
                discard_partial,
                ..
            } => Some((*attempt, *delay_ms, *discard_partial)),
            _ => None,
        })
        .collect()
}

#[tokio::test]
async fn rate_limits_and_server_errors_are_retried_then_succeed() {
    for provider in [Provider::Anthropic, Provider::Openai] {
        let server = ScriptedServer::start(vec![
            Reply::rate_limited(1),
            Reply::status(429, "slow down"),
            Reply::status(500, "internal"),
            Reply::text("finally"),
        ])
        .await;
        let mut agent = Harness::start(test_config(provider, &server));
        let events = agent.turn("hi").await;
        assert_eq!(
            events.last(),
            Some(&Event::TurnComplete {
                text: "finally".into()
            }),
            "{provider}"
        );
        let seen = retries(&events);
        assert_eq!(seen.len(), 3, "{seen:?}");
        // Retry-After: 1 is honoured exactly; the others follow the (test-fast) backoff.
        assert_eq!(seen[0], (1, 1000, false));
        assert!(seen[1].1 <= 60 && seen[2].1 <= 60, "{seen:?}");
        let reason = events.iter().find_map(|e| match e {
            Event::Retrying { reason, .. } => Some(reason.clone()),
            _ => None,
        });
        assert_eq!(
            reason.as_deref(),
            Some("HTTP 429 from the provider: scripted rate limit: slow down")
        );
        let requests = server.requests();
        assert_eq!(requests.len(), 4);
        // Every attempt sends the same request.
        assert!(requests.windows(2).all(|w| w[0].body == w[1].body));
    }
}

#[tokio::test]
async fn a_bad_request_is_not_retried() {
    let server = ScriptedServer::start(vec![
        Reply::status(400, "messages: field required"),
        Reply::text("never"),
    ])
    .await;
    let mut agent = Harness::start(test_config(Provider::Anthropic, &server));
    let events = agent.turn("hi").await;
    assert_eq!(
        events.last(),
        Some(&Event::Error {
            message: "the model call failed: HTTP 400 from the provider: messages: field required".into()
        })
    );
    assert_eq!(server.request_count(), 1);
    assert!(retries(&events).is_empty());
}

#[tokio::test]
async fn retries_give_up_after_the_configured_count() {
    let server = ScriptedServer::start((0..5).map(|_| Reply::status(503, "unavailable")).collect()).await;
    let mut agent = Harness::start(test_config(Provider::Openai, &server));
    let events = agent.turn("hi").await;
    assert!(matches!(events.last(), Some(Event::Error { message }) if message.contains("HTTP 503")));
    assert_eq!(server.request_count(), 4, "one attempt and three retries");
    assert_eq!(
        retries(&events).iter().map(|r| r.0).collect::<Vec<_>>(),
        vec![1, 2, 3]
    );
}

#[tokio::test]
async fn a_dropped_stream_is_retried_without_duplicated_text() {
    let long = "This reply is long enough to arrive in many small pieces over the wire.";
    for provider in [Provider::Anthropic, Provider::Openai] {
        let server = ScriptedServer::start(vec![
            Reply::drop_after(Turn::text(long), 9),
            Reply::Stream(Turn::text(long)),
        ])
        .await;
        let mut agent = Harness::start(test_config(provider, &server));
        let events = agent.turn("talk").await;
        assert_eq!(
            events.last(),
            Some(&Event::TurnComplete { text: long.into() }),
            "{provider}"
        );
        let retry_at = events
            .iter()
            .position(|e| matches!(e, Event::Retrying { .. }))
            .expect("a retry");
        assert!(matches!(
            events[retry_at],
            Event::Retrying {
                discard_partial: true,
                ..
            }
        ));
        // What streamed after the retry is the whole reply once; what came before was
        // flagged for discarding.
        assert_eq!(streamed_text(&events[retry_at..]), long);
        assert!(!streamed_text(&events[..retry_at]).is_empty());
        let requests = server.requests();
        assert_eq!(requests.len(), 2);
        assert_eq!(requests[0].body, requests[1].body);
        // The next request carries the reply once.
        server.push(Reply::text("ok"));
        agent.turn("again").await;
        let history = server.requests()[2].body["messages"].to_string();
        assert_eq!(history.matches("many small pieces").count(), 1, "{history}");
    }
}

#[tokio::test]
async fn malformed_sse_ends_the_turn_with_an_error() {
    for provider in [Provider::Anthropic, Provider::Openai] {
        let server = ScriptedServer::start(vec![Reply::malformed("{\"type\": \"content_blo")]).await;
        let mut agent = Harness::start(test_config(provider, &server));
        let events = agent.turn("hi").await;
        let Some(Event::Error { message }) = events.last() else {
            panic!("{provider}: expected an error, got {events:#?}");
        };
        assert!(
            message.starts_with("the model call failed: malformed stream data:"),
            "{message}"
        );
        assert_eq!(server.request_count(), 1, "not retried");
        // The session goes on.
        server.push(Reply::text("recovered"));
        let next = agent.turn("again").await;
        assert_eq!(
            next.last(),
            Some(&Event::TurnComplete {
                text: "recovered".into()
            })
        );
    }
}

#[tokio::test]
async fn a_stalled_or_silent_stream_times_out_and_is_retried() {
    let server = ScriptedServer::start(vec![
        Reply::stall_after(Turn::text("partial then silence"), 3),
        Reply::Hang,
        Reply::text("after the stall"),
    ])
    .await;
    let mut config = test_config(Provider::Anthropic, &server);
    config.model.stream_idle_timeout_s = 1;
    let mut agent = Harness::start(config);
    let events = agent.turn("hi").await;
    assert_eq!(
        events.last(),
        Some(&Event::TurnComplete {
            text: "after the stall".into()
        })
    );
    let reasons: Vec<String> = events
        .iter()
        .filter_map(|e| match e {
            Event::Retrying { reason, .. } => Some(reason.clone()),
            _ => None,
        })
        .collect();
    assert_eq!(reasons.len(), 2, "{reasons:?}");
    assert!(
        reasons.iter().all(|r| r == "no data from the provider for 1 s"),
        "{reasons:?}"
    );
}

#[tokio::test]
async fn an_unreachable_provider_is_an_error_after_retries() {
    let port = support::closed_port();
    let server = ScriptedServer::start(vec![]).await;
    let mut config = test_config(Provider::Openai, &server);
    config.model.base_url = format!("http://127.0.0.1:{port}/v1");
    let mut agent = Harness::start(config);
    let events = agent.turn("hi").await;
    let Some(Event::Error { message }) = events.last() else {
        panic!("{events:#?}");
    };
    // One short line that says what failed; the error chain (reqwest, hyper, the OS
    // error) goes to the log only.
    let what = format!("connection refused at 127.0.0.1:{port}");
    assert_eq!(message, &format!("the model call failed: {what}"));
    let reasons: Vec<String> = events
        .iter()
        .filter_map(|e| match e {
            Event::Retrying { reason, .. } => Some(reason.clone()),
            _ => None,
        })
        .collect();
    assert_eq!(reasons, vec![what.clone(), what.clone(), what]);
}

/// A step that reads `big.txt` (so there is history to compact).
fn read_step(n: usize) -> Reply {
    Reply::tool(format!("read_{n}"), "read_file", r#"{"path": "big.txt"}"#)
}

fn is_summary_request(request: &RecordedRequest) -> bool {
    request.body.get("tools").is_none()
}

#[tokio::test]
async fn a_context_length_error_compacts_once_and_retries() {
    // Steps that say something as they go: a run of stubs alone is too small to be worth
    // a summary call.
    let noted = |n: usize| {
        Reply::Stream(
            Turn::new()
                .with_text("Reading big.txt again to compare the counts. ".repeat(40))
                .with_tool(format!("read_{n}"), "read_file", r#"{"path": "big.txt"}"#),
        )
    };
    let server = ScriptedServer::start(vec![
        noted(1),
        noted(2),
        noted(3),
        Reply::status(400, "prompt is too long: 210000 tokens > 200000 maximum"),
        Reply::text("Done after compacting."),
    ])
    .await;
    server.answer_toolless_with(Reply::text("SUMMARY: read big.txt three times."));
    let mut agent = Harness::start(test_config(Provider::Anthropic, &server));
    agent.workspace.write("big.txt", "some lines\n".repeat(200));
    let events = agent.turn("read it").await;
    assert_eq!(
        events.last(),
        Some(&Event::TurnComplete {
            text: "Done after compacting.".into()
        }),
        "{events:#?}"
    );
    assert!(events.iter().any(|e| matches!(e, Event::Notice { message } if message.contains("the provider says the prompt is too long"))));
    let requests = server.requests();
    let summary_at = requests
        .iter()
        .position(is_summary_request)
        .expect("a summary request");
    assert_eq!(summary_at, 4, "the summary comes right after the refused request");
    let retried = requests.last().unwrap().body["messages"].to_string();
    assert!(
        retried.contains("SUMMARY: read big.txt three times."),
        "{retried}"
    );
}

#[tokio::test]
async fn a_context_length_error_that_persists_ends_the_turn_without_looping() {
    let too_long = || Reply::status(400, "This model's maximum context length is 8192 tokens");
    let server = ScriptedServer::start(vec![
        read_step(1),
        read_step(2),
        read_step(3),
        too_long(),
        too_long(),
        too_long(),
    ])
    .await;
    server.answer_toolless_with(Reply::text("SUMMARY."));
    let mut agent = Harness::start(test_config(Provider::Openai, &server));
    agent.workspace.write("big.txt", "some lines\n".repeat(200));
    let events = agent.turn("read it").await;
    assert!(
        matches!(events.last(), Some(Event::Error { message }) if message.contains("maximum context length")),
        "{:?}",
        events.last()
    );
    let model_requests = server
        .requests()
        .iter()
        .filter(|r| !is_summary_request(r))
        .count();
    assert_eq!(
        model_requests, 5,
        "three steps, the refused request and one retry"
    );
    // The history is valid: the next turn goes out and works.
    server.push(Reply::text("still here"));
    let events = agent.turn("again").await;
    assert_eq!(
        events.last(),
        Some(&Event::TurnComplete {
            text: "still here".into()
        })
    );
}

#[tokio::test]
async fn a_reply_that_keeps_repeating_is_cut_and_asked_again() {
    let looping = format!("Let me look. {}", "I will check the file again. ".repeat(500));
    let server = ScriptedServer::start(vec![
        Reply::Stream(Turn::text(looping)),
        Reply::text("The file is fine."),
    ])
    .await;
    let mut agent = Harness::start(test_config(Provider::Anthropic, &server));
    let events = agent.turn("check it").await;
    assert_eq!(
        events.last(),
        Some(&Event::TurnComplete {
            text: "The file is fine.".into()
        })
    );
    let retry = events.iter().find_map(|e| match e {
        Event::Retrying {
            reason,
            discard_partial,
            ..
        } => Some((reason.clone(), *discard_partial)),
        _ => None,
    });
    assert_eq!(
        retry,
        Some(("the reply kept repeating itself; asking again".to_string(), true))
    );
    assert_eq!(server.request_count(), 2);
}

#[tokio::test]
async fn a_long_answer_that_repeats_its_structure_is_kept_whole() {
    // Before, any exact repeat over 300 bytes was a loop: this answer (a zero table and
    // a box drawn with 140 `─`) was thrown away and asked for again.
    let table = format!("    [{}],\n", ["0"; 32].join(", ")).repeat(32);
    let bar = "─".repeat(140);
    let answer = format!("The table:\n\n```rust\n[\n{table}]\n```\n\n┌{bar}┐\n│ done │\n└{bar}┘\n");
    let server = ScriptedServer::start(vec![Reply::Stream(Turn::text(answer.clone()))]).await;
    let mut agent = Harness::start(test_config(Provider::Anthropic, &server));
    let events = agent.turn("write the table").await;
    assert_eq!(events.last(), Some(&Event::TurnComplete { text: answer }));
    assert!(
        !events.iter().any(|e| matches!(e, Event::Retrying { .. })),
        "no retry"
    );
    assert_eq!(server.request_count(), 1, "asked once");
}

#[tokio::test]
async fn a_reply_that_repeats_twice_is_reported_and_the_history_stays_valid() {
    let looping =
        || Reply::Stream(Turn::new().thinking(format!("Hmm. {}", "again and again ".repeat(1000)), "sig"));
    let server = ScriptedServer::start(vec![looping(), looping(), Reply::text("recovered")]).await;
    let mut agent = Harness::start(test_config(Provider::Openai, &server));
    let events = agent.turn("think").await;
    assert!(
        matches!(events.last(), Some(Event::Error { message }) if message.contains("kept repeating itself")),
        "{:?}",
        events.last()
    );
    let events = agent.turn("try again").await;
    assert_eq!(
        events.last(),
        Some(&Event::TurnComplete {
            text: "recovered".into()
        })
    );
    let messages = server.last_request().unwrap().body["messages"].clone();
    let roles: Vec<&str> = messages
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["role"].as_str().unwrap_or(""))
        .collect();
    assert_eq!(roles.iter().filter(|r| **r == "user").count(), 2, "{roles:?}");
}

#[tokio::test]
async fn the_same_read_with_the_same_result_is_refused_the_fourth_time() {
    let same = |n: usize| Reply::tool(format!("r{n}"), "read_file", r#"{"path": "a.txt"}"#);
    let server = ScriptedServer::start(vec![
        same(1),
        same(2),
        same(3),
        same(4),
        same(5),
        Reply::text("ok, I have it"),
    ])
    .await;
    let mut agent = Harness::start(test_config(Provider::Anthropic, &server));
    agent.workspace.write("a.txt", "alpha\n");
    let events = agent.turn("read a.txt").await;
    assert_eq!(
        events.last(),
        Some(&Event::TurnComplete {
            text: "ok, I have it".into()
        })
    );
    let started = events
        .iter()
        .filter(|e| matches!(e, Event::ToolCallStarted { .. }))
        .count();
    assert_eq!(started, 3, "the fourth and fifth identical reads did not run");
    let refused: Vec<(String, String, String)> = events
        .iter()
        .filter_map(|e| match e {
            Event::ToolCallFinished {
                id,
                outcome,
                output_preview,
                ..
            } if id == "r4" || id == "r5" => {
                Some((id.clone(), format!("{outcome:?}"), output_preview.clone()))
            }
            _ => None,
        })
        .collect();
    let preview = |n| {
        format!(
            "refused: the same call a {n} time in a row, with the same result each time. `read_file` only reads, so it would tell you nothing new: use the result you have, or change the arguments or the approach (to wait for something to change, wait before you look again)."
        )
    };
    assert_eq!(
        refused
            .iter()
            .map(|(id, outcome, text)| (id.as_str(), outcome.as_str(), preview_line(text)))
            .collect::<Vec<_>>(),
        vec![
            ("r4", "Refused", preview_line(&preview("fourth"))),
            ("r5", "Refused", preview_line(&preview("fifth"))),
        ]
    );
    let last = server.last_request().unwrap().body["messages"].to_string();
    assert!(
        last.contains("refused: the same call a fifth time in a row"),
        "{last}"
    );
}

/// The first 60 characters: previews are cut for lists.
fn preview_line(text: &str) -> String {
    text.chars().take(60).collect()
}

/// Polling a background job whose output moves is never refused: the same
/// `bash_output` call again and again, each time with new lines (a read-only call with
/// the same result would be refused at the fourth).
#[tokio::test]
async fn polling_a_read_whose_result_changes_is_never_refused() {
    let job = "i=0; while [ $i -lt 100000 ]; do i=$((i+1)); echo tick $i; sleep 0.01; done";
    let mut script = vec![Reply::tool(
        "b1",
        "bash",
        serde_json::json!({"command": job, "run_in_background": true}).to_string(),
    )];
    // Each poll comes a tenth of a second after the last result, ten of the job's lines
    // later; a read alike would need the job to stall for three polls in a row.
    script.extend((1..=6).map(|n| {
        Reply::slow(
            Turn::tool(format!("c{n}"), "bash_output", r#"{"bash_id": "bash_1"}"#),
            100,
        )
    }));
    script.push(Reply::text("it moved"));
    let server = ScriptedServer::start(script).await;
    let mut agent = Harness::start(test_config(Provider::Anthropic, &server));
    let events = agent.turn("watch the job").await;
    let outcomes: Vec<String> = events
        .iter()
        .filter_map(|e| match e {
            Event::ToolCallFinished { outcome, .. } => Some(format!("{outcome:?}")),
            _ => None,
        })
        .collect();
    assert_eq!(outcomes, vec!["Ok"; 7]);
    let requests = server.requests();
    let reads: Vec<String> = requests[2..]
        .iter()
        .map(|request| {
            let messages = request.body["messages"].as_array().unwrap();
            messages.last().unwrap()["content"][0]["content"]
                .as_str()
                .unwrap()
                .to_string()
        })
        .collect();
    assert_eq!(reads.len(), 6);
    for read in &reads {
        assert!(read.starts_with("[job bash_1: running]\ntick "), "{read}");
    }
}

/// Outside full-auto the person is there: the same change after the same result three
/// times is asked about, whatever the mode says, and the prompt says why.
#[tokio::test]
async fn the_same_write_with_the_same_result_asks_the_person_outside_full_auto() {
    let same = |n: usize| {
        Reply::tool(
            format!("w{n}"),
            "write_file",
            r#"{"path": "a.txt", "content": "same"}"#,
        )
    };
    // The first write creates the file, the next three replace it alike.
    let server = ScriptedServer::start(vec![
        same(1),
        same(2),
        same(3),
        same(4),
        same(5),
        Reply::text("done"),
    ])
    .await;
    let mut config = test_config(Provider::Anthropic, &server);
    config.agent.approval = miniagent_core::config::ApprovalMode::AutoEdit;
    let mut agent = Harness::start(config);
    agent.send(miniagent_protocol::Op::UserInput { text: "loop".into() });
    let asked = agent
        .wait_for(|e| matches!(e, Event::ApprovalRequested { .. }))
        .await;
    let Event::ApprovalRequested { id, preview, .. } = asked else {
        unreachable!()
    };
    assert_eq!(id, "w5");
    assert!(
        preview.starts_with("The model asked for this same call a fourth time in a row, and it returned the same result each time."),
        "{preview}"
    );
    agent.send(miniagent_protocol::Op::Approval {
        id,
        decision: miniagent_protocol::Decision::Deny {
            reason: Some("stop looping".into()),
        },
    });
    agent.wait_for(|e| matches!(e, Event::TurnComplete { .. })).await;
    let last = server.last_request().unwrap().body["messages"].to_string();
    assert!(last.contains("stop looping"), "{last}");
}

#[tokio::test]
async fn a_502_and_a_stream_dropped_before_any_output_are_retried() {
    let server = ScriptedServer::start(vec![
        Reply::status(502, "bad gateway"),
        Reply::drop_after(Turn::text("never shown"), 0),
        Reply::text("through at last"),
    ])
    .await;
    let mut agent = Harness::start(test_config(Provider::Anthropic, &server));
    let events = agent.turn("hi").await;
    assert_eq!(
        events.last(),
        Some(&Event::TurnComplete {
            text: "through at last".into()
        })
    );
    let seen = retries(&events);
    assert_eq!(seen.len(), 2, "{seen:?}");
    assert!(!seen[1].2, "nothing was shown, so nothing is discarded");
    assert!(streamed_text(&events).ends_with("through at last"));
    assert!(!streamed_text(&events).contains("never shown"));
}
