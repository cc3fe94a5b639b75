//! The SSE each provider's format streams for a scripted turn, event by event: Anthropic's
//! thinking, text and tool blocks and stop reasons; OpenAI's chunks with either reasoning
//! style, with and without usage, and its finish reasons.

use super::*;

use pretty_assertions::assert_eq;

#[tokio::test]
async fn anthropic_thinking_text_tool_turn_streams_the_exact_event_sequence() {
    let thinking = "Let me think about this carefully, step by step.";
    let text = "Here is the answer: héllo wörld, 日本語テキスト 🎉!";
    let args = r#"{"command":"ls -la /tmp","timeout":30}"#;
    let server = ScriptedServer::start(vec![Reply::Stream(
        Turn::new()
            .thinking(thinking, "sig-abc==")
            .text(text)
            .tool("toolu_01", "bash", args)
            .usage(42, 17),
    )])
    .await;

    let resp = post_anthropic(&server, anthropic_request()).await;
    assert_eq!(resp.status(), 200);
    assert_eq!(resp.headers()["content-type"], "text/event-stream; charset=utf-8");
    assert_eq!(resp.headers()["transfer-encoding"], "chunked");
    let events = parse_sse(&resp.text().await.unwrap());

    // Exact sequence of event types.
    let mut expected = vec!["message_start", "ping"];
    let block = |n: usize, v: &mut Vec<&str>| {
        v.push("content_block_start");
        v.extend(std::iter::repeat_n("content_block_delta", n));
        v.push("content_block_stop");
    };
    block(pieces(thinking) + 1, &mut expected); // + signature_delta
    block(pieces(text), &mut expected);
    block(pieces(args) + 1, &mut expected); // + leading empty partial_json
    expected.extend(["message_delta", "message_stop"]);
    let names: Vec<&str> = events.iter().map(|e| e.event.as_deref().unwrap()).collect();
    assert_eq!(names, expected);
    assert!(pieces(thinking) > 2 && pieces(text) > 2 && pieces(args) > 2);

    // Every data payload is JSON whose "type" is the event name.
    let data: Vec<Value> = events.iter().map(Sse::json).collect();
    for (name, d) in names.iter().zip(&data) {
        assert_eq!(d["type"], *name);
    }

    let start = &data[0]["message"];
    assert_eq!(start["model"], "claude-test-1");
    assert_eq!(start["role"], "assistant");
    assert_eq!(start["content"], json!([]));
    assert_eq!(start["stop_reason"], Value::Null);
    assert_eq!(start["usage"]["input_tokens"], 42);
    assert!(start["id"].as_str().unwrap().starts_with("msg_"));

    // Reassemble the blocks.
    let mut blocks: BTreeMap<u64, (Value, String, String)> = BTreeMap::new();
    for d in &data {
        match d["type"].as_str().unwrap() {
            "content_block_start" => {
                let i = d["index"].as_u64().unwrap();
                assert!(
                    blocks
                        .insert(i, (d["content_block"].clone(), String::new(), String::new()))
                        .is_none()
                );
            }
            "content_block_delta" => {
                let b = blocks.get_mut(&d["index"].as_u64().unwrap()).unwrap();
                let delta = &d["delta"];
                match delta["type"].as_str().unwrap() {
                    "thinking_delta" => b.1.push_str(delta["thinking"].as_str().unwrap()),
                    "text_delta" => b.1.push_str(delta["text"].as_str().unwrap()),
                    "input_json_delta" => b.1.push_str(delta["partial_json"].as_str().unwrap()),
                    "signature_delta" => b.2.push_str(delta["signature"].as_str().unwrap()),
                    other => panic!("unexpected delta {other}"),
                }
            }
            _ => {}
        }
    }
    assert_eq!(blocks.len(), 3);
    assert_eq!(blocks[&0].0, json!({"type": "thinking", "thinking": ""}));
    assert_eq!(blocks[&0].1, thinking);
    assert_eq!(blocks[&0].2, "sig-abc==");
    assert_eq!(blocks[&1].0, json!({"type": "text", "text": ""}));
    assert_eq!(blocks[&1].1, text);
    assert_eq!(
        blocks[&2].0,
        json!({"type": "tool_use", "id": "toolu_01", "name": "bash", "input": {}})
    );
    assert_eq!(blocks[&2].1, args);

    let message_delta = &data[data.len() - 2];
    assert_eq!(
        message_delta["delta"],
        json!({"stop_reason": "tool_use", "stop_sequence": null})
    );
    assert_eq!(message_delta["usage"]["output_tokens"], 17);
    // The ping is exactly as the real API spells it.
    assert_eq!(events[1].data, r#"{"type": "ping"}"#);

    // The request was recorded.
    let reqs = server.requests();
    assert_eq!(reqs.len(), 1);
    assert_eq!(reqs[0].method, "POST");
    assert_eq!(reqs[0].path, "/v1/messages");
    assert_eq!(reqs[0].header("X-Api-Key"), Some("test-key"));
    assert_eq!(reqs[0].header("anthropic-version"), Some("2023-06-01"));
    assert_eq!(reqs[0].header("content-type"), Some("application/json"));
    assert_eq!(reqs[0].body, anthropic_request());
    assert_eq!(
        serde_json::from_str::<Value>(&reqs[0].raw_body).unwrap(),
        anthropic_request()
    );
    assert_eq!(server.remaining(), 0);
}

#[tokio::test]
async fn anthropic_stop_reasons() {
    let server = ScriptedServer::start(vec![
        Reply::text("plain"),
        Reply::Stream(Turn::text("cut off").stop(Stop::MaxTokens)),
        Reply::Stream(Turn::tool("t1", "read", "{}").stop(Stop::EndTurn)),
    ])
    .await;
    for want in ["end_turn", "max_tokens", "end_turn"] {
        let resp = post_anthropic(&server, anthropic_request()).await;
        let events = parse_sse(&resp.text().await.unwrap());
        let delta = events[events.len() - 2].json();
        assert_eq!(delta["delta"]["stop_reason"], want);
    }
}

async fn openai_round(style: ReasoningStyle, include_usage: bool) {
    let thinking = "The user wants a listing; I should call two tools.";
    let text = "Sure — let me look at that for you. ✓";
    let args1 = r#"{"command":"ls -la","timeout":30}"#;
    let args2 = r#"{"path":"/etc/hosts","offset":0,"limit":200}"#;
    let server = ScriptedServer::start(vec![Reply::Stream(
        Turn::new()
            .thinking(thinking, "unused")
            .text(text)
            .tool("call_1", "bash", args1)
            .tool("call_2", "read_file", args2)
            .usage(100, 25)
            .openai_reasoning(style),
    )])
    .await;
    let resp = post_openai(&server, openai_request(include_usage)).await;
    assert_eq!(resp.status(), 200);
    assert!(
        resp.headers()["content-type"]
            .to_str()
            .unwrap()
            .starts_with("text/event-stream")
    );
    let raw = resp.text().await.unwrap();
    match style {
        ReasoningStyle::Details => {
            assert!(raw.contains("reasoning_details") && !raw.contains("reasoning_content"))
        }
        ReasoningStyle::Content => {
            assert!(raw.contains("reasoning_content") && !raw.contains("reasoning_details"))
        }
    }
    let events = parse_sse(&raw);
    // Texts and arguments arrive in several pieces.
    assert!(events.len() > 4 + pieces(thinking) + pieces(text));
    let got = assemble_openai(&events);
    let mut tools = BTreeMap::new();
    tools.insert(0, ("call_1".into(), "bash".into(), args1.into()));
    tools.insert(1, ("call_2".into(), "read_file".into(), args2.into()));
    assert_eq!(
        got,
        OpenAiTurn {
            reasoning: thinking.into(),
            content: text.into(),
            tools,
            finish_reason: "tool_calls".into(),
            usage: include_usage
                .then(|| { json!({"prompt_tokens": 100, "completion_tokens": 25, "total_tokens": 125, "prompt_tokens_details": {"cached_tokens": 0}}) }),
        }
    );
    let reqs = server.requests();
    assert_eq!(reqs.len(), 1);
    assert_eq!(reqs[0].path, "/v1/chat/completions");
    assert_eq!(reqs[0].header("authorization"), Some("Bearer test-key"));
    assert_eq!(reqs[0].body, openai_request(include_usage));
}

#[tokio::test]
async fn openai_reasoning_details_with_usage() {
    openai_round(ReasoningStyle::Details, true).await;
}

#[tokio::test]
async fn openai_reasoning_details_without_usage() {
    openai_round(ReasoningStyle::Details, false).await;
}

#[tokio::test]
async fn openai_reasoning_content_with_usage() {
    openai_round(ReasoningStyle::Content, true).await;
}

#[tokio::test]
async fn openai_reasoning_content_without_usage() {
    openai_round(ReasoningStyle::Content, false).await;
}

#[tokio::test]
async fn openai_finish_reasons() {
    let server = ScriptedServer::start(vec![
        Reply::text("hello there, general"),
        Reply::Stream(Turn::text("trunc").stop(Stop::MaxTokens)),
        Reply::Stream(Turn::new()),
    ])
    .await;
    for (want_finish, want_content) in [
        ("stop", "hello there, general"),
        ("length", "trunc"),
        ("stop", ""),
    ] {
        let resp = post_openai(&server, openai_request(false)).await;
        let got = assemble_openai(&parse_sse(&resp.text().await.unwrap()));
        assert_eq!(got.finish_reason, want_finish);
        assert_eq!(got.content, want_content);
        assert_eq!(got.usage, None);
    }
}
