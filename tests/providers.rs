//! Both providers end to end against the scripted server: streaming, tool use, thinking
//! replay, and the exact requests that were sent.
#![allow(clippy::unwrap_used, clippy::expect_used)] // A test fails by panicking.

use crate::support;

use miniagent_core::config::Provider;
use miniagent_core::llm::ReasoningField;
use miniagent_protocol::{Event, StopReason, ToolCallSummary};
use pretty_assertions::assert_eq;
use serde_json::json;
use support::harness::{Harness, TEST_KEY, streamed_text, streamed_thinking, test_config};
use support::validate::{assert_valid_anthropic, assert_valid_openai, system_text, unmarked};
use support::*;

/// The built-in tools, in the order the model sees them (the core's table, which its own
/// test holds to the registry).
fn all_tools() -> Vec<&'static str> {
    miniagent_core::tools::BUILTIN_TOOLS
        .iter()
        .map(|(name, _)| *name)
        .collect()
}

#[tokio::test]
async fn anthropic_thinking_and_text_stream_as_deltas_and_complete() {
    let server = ScriptedServer::start(vec![Reply::Stream(
        Turn::thinking_text(
            "Let me think about greetings.",
            "sig-1",
            "Hello there, how can I help?",
        )
        .usage(42, 9),
    )])
    .await;
    let mut agent = Harness::start(test_config(Provider::Anthropic, &server));
    let events = agent.turn("say hello").await;

    assert_eq!(streamed_thinking(&events), "Let me think about greetings.");
    assert_eq!(streamed_text(&events), "Hello there, how can I help?");
    let deltas = events
        .iter()
        .filter(|e| matches!(e, Event::TextDelta { .. }))
        .count();
    assert!(deltas > 1, "text arrived in {deltas} delta(s)");
    assert_eq!(
        events.last(),
        Some(&Event::TurnComplete {
            text: "Hello there, how can I help?".into()
        })
    );
    // The last figure is the call's (the first is the idle prompt's, before any request).
    let usage = events.iter().rev().find_map(|e| match e {
        Event::TokenUsage {
            input_tokens,
            output_tokens,
            estimated,
            ..
        } => Some((*input_tokens, *output_tokens, *estimated)),
        _ => None,
    });
    assert_eq!(usage, Some((42, 9, false)));

    let request = &server.requests()[0];
    assert_eq!(request.path, "/v1/messages");
    assert_eq!(request.header("x-api-key"), Some(TEST_KEY));
    assert_eq!(request.header("anthropic-version"), Some("2023-06-01"));
    assert_eq!(request.body["model"], "scripted-model");
    assert_eq!(request.body["stream"], true);
    assert_eq!(system_text(&request.body), "You are a test agent.");
    assert_eq!(
        unmarked(&request.body["messages"]),
        json!([{"role": "user", "content": [{"type": "text", "text": "say hello"}]}])
    );
    let tools = request.body["tools"].as_array().unwrap();
    let names: Vec<&str> = tools.iter().map(|t| t["name"].as_str().unwrap()).collect();
    assert_eq!(names, all_tools());
    let bash = tools.iter().find(|t| t["name"] == "bash").unwrap();
    assert!(bash["input_schema"]["properties"]["command"].is_object());
    // The key never leaks into what front ends see.
    let all_events = serde_json::to_string(&agent.events).unwrap();
    assert!(!all_events.contains(TEST_KEY));
}

#[tokio::test]
async fn openai_reasoning_both_ways_and_text_stream_and_complete() {
    let server = ScriptedServer::start(vec![
        Reply::Stream(Turn::thinking_text("Thinking in details.", "", "First answer.").usage(30, 5)),
        Reply::Stream(
            Turn::thinking_text("Thinking in content.", "", "Second answer.")
                .openai_reasoning(ReasoningStyle::Content),
        ),
    ])
    .await;
    // The server speaks as MiniMax does, and is said to.
    let mut config = test_config(Provider::Openai, &server);
    config.model.send_reasoning = ReasoningField::Details;
    let mut agent = Harness::start(config);
    let first = agent.turn("one").await;
    assert_eq!(streamed_thinking(&first), "Thinking in details.");
    assert_eq!(streamed_text(&first), "First answer.");
    assert_eq!(
        first.last(),
        Some(&Event::TurnComplete {
            text: "First answer.".into()
        })
    );
    let second = agent.turn("two").await;
    assert_eq!(streamed_thinking(&second), "Thinking in content.");
    assert_eq!(
        second.last(),
        Some(&Event::TurnComplete {
            text: "Second answer.".into()
        })
    );

    let requests = server.requests();
    assert_eq!(requests[0].path, "/v1/chat/completions");
    assert_eq!(
        requests[0].header("authorization"),
        Some(format!("Bearer {TEST_KEY}").as_str())
    );
    assert_eq!(requests[0].body["stream_options"], json!({"include_usage": true}));
    let tools = requests[0].body["tools"].as_array().unwrap();
    assert!(tools.iter().all(|t| t["type"] == "function"));
    let names: Vec<&str> = tools
        .iter()
        .map(|t| t["function"]["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, all_tools());
    // The first reply's reasoning comes back as reasoning_details, as it was received.
    assert_eq!(
        requests[1].body["messages"],
        json!([
            {"role": "system", "content": "You are a test agent."},
            {"role": "user", "content": "one"},
            {"role": "assistant", "content": "First answer.", "reasoning_details": [
                {"type": "reasoning.text", "id": "reasoning-text-1", "format": "MiniMax-response-v1", "index": 0, "text": "Thinking in details."}
            ]},
            {"role": "user", "content": "two"},
        ])
    );
    assert_valid_openai(&requests[1].body);
}

#[tokio::test]
async fn anthropic_tool_turn_sends_results_and_signed_thinking_back() {
    let server = ScriptedServer::start(vec![
        Reply::Stream(
            Turn::new()
                .thinking("I should list files.", "sig-abc")
                .text("Listing.")
                .tool("toolu_1", "bash", r#"{"command": "echo hello-from-tool"}"#),
        ),
        Reply::Stream(Turn::thinking_text("Done.", "sig-def", "The tool said hello.")),
    ])
    .await;
    let mut agent = Harness::start(test_config(Provider::Anthropic, &server));
    let events = agent.turn("run it").await;

    assert_eq!(
        events.last(),
        Some(&Event::TurnComplete {
            text: "The tool said hello.".into()
        })
    );
    assert!(events.contains(&Event::AssistantMessage {
        thinking: "I should list files.".into(),
        text: "Listing.".into(),
        tool_calls: vec![ToolCallSummary {
            id: "toolu_1".into(),
            name: "bash".into()
        }],
        stop_reason: StopReason::ToolUse,
    }));
    let finished = events.iter().find_map(|e| match e {
        Event::ToolCallFinished {
            id,
            ok,
            output_preview,
            ..
        } => Some((id.clone(), *ok, output_preview.clone())),
        _ => None,
    });
    assert_eq!(finished, Some(("toolu_1".into(), true, "hello-from-tool".into())));

    let second = &server.requests()[1].body;
    assert_valid_anthropic(second);
    assert_eq!(
        unmarked(&second["messages"]),
        json!([
            {"role": "user", "content": [{"type": "text", "text": "run it"}]},
            {"role": "assistant", "content": [
                {"type": "thinking", "thinking": "I should list files.", "signature": "sig-abc"},
                {"type": "text", "text": "Listing."},
                {"type": "tool_use", "id": "toolu_1", "name": "bash", "input": {"command": "echo hello-from-tool"}},
            ]},
            {"role": "user", "content": [
                {"type": "tool_result", "tool_use_id": "toolu_1", "content": "hello-from-tool\n[exit code: 0]", "is_error": false},
            ]},
        ])
    );
}

#[tokio::test]
async fn openai_tool_turn_sends_results_in_tool_messages() {
    let server = ScriptedServer::start(vec![
        Reply::Stream(
            Turn::new()
                .thinking("Two commands.", "")
                .tool("call_a", "bash", r#"{"command": "echo A"}"#)
                .tool("call_b", "bash", r#"{"command": "echo B >&2; exit 4"}"#),
        ),
        Reply::text("A worked, B failed."),
    ])
    .await;
    let mut config = test_config(Provider::Openai, &server);
    config.model.send_reasoning = ReasoningField::Details;
    let mut agent = Harness::start(config);
    let events = agent.turn("run both").await;
    assert_eq!(
        events.last(),
        Some(&Event::TurnComplete {
            text: "A worked, B failed.".into()
        })
    );

    let second = &server.requests()[1].body;
    assert_valid_openai(second);
    let messages = second["messages"].as_array().unwrap();
    assert_eq!(
        messages[2],
        json!({
            "role": "assistant",
            "content": null,
            "tool_calls": [
                {"id": "call_a", "type": "function", "function": {"name": "bash", "arguments": "{\"command\":\"echo A\"}"}},
                {"id": "call_b", "type": "function", "function": {"name": "bash", "arguments": "{\"command\":\"echo B >&2; exit 4\"}"}},
            ],
            "reasoning_details": [{"type": "reasoning.text", "id": "reasoning-text-1", "format": "MiniMax-response-v1", "index": 0, "text": "Two commands."}],
        })
    );
    assert_eq!(
        messages[3],
        json!({"role": "tool", "tool_call_id": "call_a", "content": "A\n[exit code: 0]"})
    );
    assert_eq!(
        messages[4],
        json!({"role": "tool", "tool_call_id": "call_b", "content": "Error: [stderr]\nB\n[exit code: 4]"})
    );
}

#[tokio::test]
async fn invalid_tool_arguments_become_an_error_result() {
    for provider in [Provider::Anthropic, Provider::Openai] {
        let server = ScriptedServer::start(vec![
            Reply::tool("call_x", "bash", r#"{"command": "echo hi"#),
            Reply::tool("call_y", "no_such_tool", r#"{}"#),
            Reply::tool("call_z", "bash", r#"{"command": 42}"#),
            Reply::text("giving up"),
        ])
        .await;
        let mut agent = Harness::start(test_config(provider, &server));
        let events = agent.turn("go").await;
        assert_eq!(
            events.last(),
            Some(&Event::TurnComplete {
                text: "giving up".into()
            }),
            "{provider}"
        );
        let results: Vec<String> = server.requests()[1..]
            .iter()
            .map(|request| {
                let messages = request.body["messages"].as_array().unwrap();
                let last = messages.last().unwrap();
                match provider {
                    Provider::Anthropic => last["content"][0]["content"].as_str().unwrap().to_string(),
                    _ => last["content"].as_str().unwrap().to_string(),
                }
            })
            .collect();
        let prefix = if provider == Provider::Openai {
            "Error: "
        } else {
            ""
        };
        assert!(
            results[0].starts_with(&format!(
                "{prefix}arguments were not valid JSON: EOF while parsing"
            )),
            "{results:?}"
        );
        assert_eq!(
            results[1],
            format!(
                "{prefix}unknown tool `no_such_tool`; the tools are: {}",
                all_tools().join(", ")
            )
        );
        assert_eq!(
            results[2],
            format!("{prefix}invalid arguments for `bash`: `command` must be a string, got integer")
        );
        for request in &server.requests()[1..] {
            match provider {
                Provider::Anthropic => assert_valid_anthropic(&request.body),
                _ => assert_valid_openai(&request.body),
            }
        }
    }
}

#[tokio::test]
async fn a_reply_cut_at_the_token_limit_is_continued_once() {
    let server = ScriptedServer::start(vec![
        Reply::Stream(Turn::text("The first half").stop(Stop::MaxTokens)),
        Reply::Stream(Turn::text(" and the second half.")),
    ])
    .await;
    let mut agent = Harness::start(test_config(Provider::Anthropic, &server));
    let events = agent.turn("write a lot").await;
    assert!(
        events
            .iter()
            .any(|e| matches!(e, Event::Notice { message } if message.contains("output token limit")))
    );
    assert_eq!(
        events.last(),
        Some(&Event::TurnComplete {
            text: "The first half and the second half.".into()
        })
    );
    let second = &server.requests()[1].body;
    assert_valid_anthropic(second);
    assert_eq!(second["messages"][1]["content"][0]["text"], "The first half");
    assert!(
        second["messages"][2]["content"][0]["text"]
            .as_str()
            .unwrap()
            .contains("cut off")
    );
}

#[tokio::test]
async fn the_step_limit_ends_with_a_model_written_report() {
    let mut script: Vec<Reply> = (1..=3)
        .map(|n| Reply::tool(format!("toolu_{n}"), "bash", r#"{"command": "true"}"#))
        .collect();
    script.push(Reply::text("Ran `true` three times; the task itself remains."));
    let server = ScriptedServer::start(script).await;
    let mut config = test_config(Provider::Anthropic, &server);
    config.agent.max_steps = 3;
    let mut agent = Harness::start(config);
    let events = agent.turn("loop forever").await;
    assert_eq!(
        events.last(),
        Some(&Event::StepLimitReached {
            steps: 3,
            report: "Ran `true` three times; the task itself remains.".into()
        })
    );
    let report_request = &server.requests()[3].body;
    assert_valid_anthropic(report_request);
    let last = report_request["messages"]
        .as_array()
        .unwrap()
        .last()
        .unwrap()
        .clone();
    let instruction = last["content"].as_array().unwrap().last().unwrap()["text"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(instruction.contains("do not call any tools"), "{instruction}");
    // The conversation goes on after the report.
    server.push(Reply::text("continuing"));
    let next = agent.turn("go on").await;
    assert_eq!(
        next.last(),
        Some(&Event::TurnComplete {
            text: "continuing".into()
        })
    );
    assert_valid_anthropic(&server.requests()[4].body);
}

/// A server that is not known to take reasoning back (here, one of the user's own) is sent
/// none: `reasoning_details` is an extension that servers refusing unknown fields reject.
#[tokio::test]
async fn a_generic_server_is_sent_no_reasoning_back() {
    let server = ScriptedServer::start(vec![
        Reply::Stream(Turn::new().thinking("Look first.", "").tool(
            "call_a",
            "bash",
            r#"{"command": "echo A"}"#,
        )),
        Reply::Stream(
            Turn::thinking_text("Now answer.", "", "Done.").openai_reasoning(ReasoningStyle::Content),
        ),
        Reply::text("Again."),
    ])
    .await;
    let mut agent = Harness::start(test_config(Provider::Openai, &server));
    agent.turn("one").await;
    agent.turn("two").await;
    let last = &server.requests()[2].body;
    assert_valid_openai(last);
    assert_eq!(
        last["messages"],
        json!([
            {"role": "system", "content": "You are a test agent."},
            {"role": "user", "content": "one"},
            {"role": "assistant", "content": null, "tool_calls": [
                {"id": "call_a", "type": "function", "function": {"name": "bash", "arguments": "{\"command\":\"echo A\"}"}},
            ]},
            {"role": "tool", "tool_call_id": "call_a", "content": "A\n[exit code: 0]"},
            {"role": "assistant", "content": "Done."},
            {"role": "user", "content": "two"},
        ])
    );
}

/// `model.send_reasoning = "reasoning_content"` (DeepSeek's form): the reply that called a
/// tool carries its reasoning back as `reasoning_content`, and nothing else is added.
#[tokio::test]
async fn reasoning_content_goes_back_where_it_is_asked_for() {
    let server = ScriptedServer::start(vec![
        Reply::Stream(
            Turn::new()
                .thinking("Look first.", "")
                .tool("call_a", "bash", r#"{"command": "echo A"}"#)
                .openai_reasoning(ReasoningStyle::Content),
        ),
        Reply::text("Done."),
    ])
    .await;
    let mut config = test_config(Provider::Openai, &server);
    config.model.send_reasoning = ReasoningField::Content;
    let mut agent = Harness::start(config);
    agent.turn("one").await;
    let second = &server.requests()[1].body;
    assert_valid_openai(second);
    assert_eq!(
        second["messages"][2],
        json!({"role": "assistant", "content": null, "reasoning_content": "Look first.", "tool_calls": [
            {"id": "call_a", "type": "function", "function": {"name": "bash", "arguments": "{\"command\":\"echo A\"}"}},
        ]})
    );
}
