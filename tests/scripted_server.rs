//! Self-test of the scripted model server in `tests/support/`, driven with
//! plain reqwest (and raw TCP where the exact bytes matter).
#![allow(clippy::unwrap_used, clippy::expect_used)] // A test fails by panicking.

use crate::support;

use std::collections::BTreeMap;
use std::io::{Read, Write};
use std::time::{Duration, Instant};

use pretty_assertions::assert_eq;
use serde_json::{Value, json};
use support::*;

fn client() -> reqwest::Client {
    // reqwest is built with `rustls-no-provider`: install one (idempotent).
    let _ = rustls::crypto::aws_lc_rs::default_provider().install_default();
    reqwest::Client::builder().no_proxy().build().unwrap()
}

/// One parsed SSE event.
#[derive(Debug, Clone)]
struct Sse {
    event: Option<String>,
    data: String,
}

impl Sse {
    fn json(&self) -> Value {
        serde_json::from_str(&self.data)
            .unwrap_or_else(|e| panic!("event data is not JSON ({e}): {}", self.data))
    }
}

fn parse_sse(text: &str) -> Vec<Sse> {
    assert!(
        text.is_empty() || text.ends_with("\n\n"),
        "stream does not end with a blank line: {text:?}"
    );
    text.split("\n\n")
        .filter(|block| !block.is_empty())
        .map(|block| {
            let mut event = None;
            let mut data = Vec::new();
            for line in block.lines() {
                if let Some(v) = line.strip_prefix("event: ") {
                    event = Some(v.to_string());
                } else if let Some(v) = line.strip_prefix("data: ") {
                    data.push(v.to_string());
                } else {
                    panic!("unexpected SSE line {line:?} in {block:?}");
                }
            }
            Sse {
                event,
                data: data.join("\n"),
            }
        })
        .collect()
}

async fn post(url: String, body: Value) -> reqwest::Response {
    client()
        .post(url)
        .header("x-api-key", "test-key")
        .header("anthropic-version", "2023-06-01")
        .header("authorization", "Bearer test-key")
        .json(&body)
        .send()
        .await
        .unwrap()
}

async fn post_anthropic(server: &ScriptedServer, body: Value) -> reqwest::Response {
    post(format!("{}/v1/messages", server.anthropic_base_url()), body).await
}

async fn post_openai(server: &ScriptedServer, body: Value) -> reqwest::Response {
    post(format!("{}/chat/completions", server.openai_base_url()), body).await
}

fn anthropic_request() -> Value {
    json!({
        "model": "claude-test-1",
        "max_tokens": 1024,
        "stream": true,
        "system": "You are a test.",
        "messages": [{"role": "user", "content": "hello"}]
    })
}

fn openai_request(include_usage: bool) -> Value {
    let mut body = json!({
        "model": "gpt-test-1",
        "stream": true,
        "messages": [{"role": "user", "content": "hello"}]
    });
    if include_usage {
        body["stream_options"] = json!({"include_usage": true});
    }
    body
}

/// Reads a body chunk by chunk until it ends or fails.
async fn read_until_error(resp: &mut reqwest::Response) -> (String, Option<reqwest::Error>) {
    let mut got = Vec::new();
    loop {
        match resp.chunk().await {
            Ok(Some(bytes)) => got.extend_from_slice(&bytes),
            Ok(None) => return (String::from_utf8(got).unwrap(), None),
            Err(e) => return (String::from_utf8(got).unwrap(), Some(e)),
        }
    }
}

fn pieces(s: &str) -> usize {
    s.chars().count().div_ceil(8)
}

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

#[derive(Debug, Default, PartialEq)]
struct OpenAiTurn {
    reasoning: String,
    content: String,
    /// index -> (id, name, arguments)
    tools: BTreeMap<u64, (String, String, String)>,
    finish_reason: String,
    usage: Option<Value>,
}

fn assemble_openai(events: &[Sse]) -> OpenAiTurn {
    let mut out = OpenAiTurn::default();
    let (last, chunks) = events.split_last().unwrap();
    assert_eq!(last.data, "[DONE]");
    assert!(events.iter().all(|e| e.event.is_none()));
    for (n, e) in chunks.iter().enumerate() {
        let chunk = e.json();
        assert_eq!(chunk["object"], "chat.completion.chunk");
        assert_eq!(chunk["model"], "gpt-test-1");
        assert!(chunk["id"].as_str().unwrap().starts_with("chatcmpl-"));
        assert!(chunk["created"].is_u64());
        let choices = chunk["choices"].as_array().unwrap();
        if choices.is_empty() {
            assert_eq!(n, chunks.len() - 1, "usage chunk must be last");
            out.usage = Some(chunk["usage"].clone());
            continue;
        }
        let choice = &choices[0];
        assert_eq!(choice["index"], 0);
        let delta = &choice["delta"];
        assert_eq!(
            n == 0,
            delta.get("role").is_some(),
            "role only on the first delta"
        );
        if n == 0 {
            assert_eq!(delta["role"], "assistant");
        }
        if let Some(f) = choice["finish_reason"].as_str() {
            assert_eq!(delta, &json!({}));
            out.finish_reason = f.to_string();
        }
        if let Some(s) = delta.get("reasoning_content") {
            out.reasoning.push_str(s.as_str().unwrap());
        }
        if let Some(details) = delta.get("reasoning_details") {
            let d = &details[0];
            assert_eq!(d["type"], "reasoning.text");
            assert_eq!(d["id"], "reasoning-text-1");
            assert_eq!(d["format"], "MiniMax-response-v1");
            assert_eq!(d["index"], 0);
            out.reasoning.push_str(d["text"].as_str().unwrap());
        }
        if let Some(s) = delta.get("content") {
            out.content.push_str(s.as_str().unwrap());
        }
        if let Some(calls) = delta.get("tool_calls") {
            for call in calls.as_array().unwrap() {
                let k = call["index"].as_u64().unwrap();
                let entry = out.tools.entry(k).or_insert_with(|| {
                    assert_eq!(call["type"], "function", "first delta of a call");
                    (
                        call["id"].as_str().unwrap().to_string(),
                        call["function"]["name"].as_str().unwrap().to_string(),
                        String::new(),
                    )
                });
                entry.2.push_str(call["function"]["arguments"].as_str().unwrap());
            }
        }
    }
    out
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

#[tokio::test]
async fn status_replies_have_provider_shaped_bodies_and_retry_after() {
    let server = ScriptedServer::start(vec![
        Reply::Status {
            status: 429,
            retry_after: Some(7),
            message: "slow down".into(),
        },
        Reply::status(529, "busy"),
        Reply::status_retry_after(429, 2, "openai slow down"),
        Reply::status(500, "boom"),
        Reply::text("finally"),
    ])
    .await;

    let resp = post_anthropic(&server, anthropic_request()).await;
    assert_eq!(resp.status(), 429);
    assert_eq!(resp.headers()["retry-after"], "7");
    assert_eq!(resp.headers()["content-type"], "application/json");
    let body: Value = resp.json().await.unwrap();
    assert_eq!(
        body,
        json!({"type": "error", "error": {"type": "rate_limit_error", "message": "slow down"}})
    );

    let resp = post_anthropic(&server, anthropic_request()).await;
    assert_eq!(resp.status(), 529);
    assert!(resp.headers().get("retry-after").is_none());
    let body: Value = resp.json().await.unwrap();
    assert_eq!(body["error"]["type"], "overloaded_error");
    assert_eq!(body["error"]["message"], "busy");

    let resp = post_openai(&server, openai_request(false)).await;
    assert_eq!(resp.status(), 429);
    assert_eq!(resp.headers()["retry-after"], "2");
    let body: Value = resp.json().await.unwrap();
    assert_eq!(body["error"]["message"], "openai slow down");
    assert_eq!(body["error"]["type"], "requests");
    assert_eq!(body["error"]["code"], "rate_limit_exceeded");

    let resp = post_openai(&server, openai_request(false)).await;
    assert_eq!(resp.status(), 500);
    let body: Value = resp.json().await.unwrap();
    assert_eq!(body["error"]["message"], "boom");

    // The script goes on after errors.
    let resp = post_anthropic(&server, anthropic_request()).await;
    assert_eq!(resp.status(), 200);
    assert_eq!(server.requests().len(), 5);
}

#[tokio::test]
async fn drop_after_gives_the_client_a_body_error() {
    let turn = Turn::thinking_text("pondering deeply", "sig", "an answer that never completes");
    let server = ScriptedServer::start(vec![
        Reply::DropAfter {
            turn: turn.clone(),
            events: 4,
        },
        Reply::drop_after(turn, 3),
    ])
    .await;

    let mut resp = post_anthropic(&server, anthropic_request()).await;
    assert_eq!(resp.status(), 200);
    let (got, err) = read_until_error(&mut resp).await;
    assert!(err.is_some(), "expected a body error, got a clean end: {got:?}");
    let events = parse_sse(&got);
    let names: Vec<_> = events.iter().map(|e| e.event.clone().unwrap()).collect();
    assert_eq!(
        names,
        [
            "message_start",
            "ping",
            "content_block_start",
            "content_block_delta"
        ]
    );

    let mut resp = post_openai(&server, openai_request(true)).await;
    let (got, err) = read_until_error(&mut resp).await;
    assert!(err.is_some(), "expected a body error, got a clean end: {got:?}");
    assert_eq!(parse_sse(&got).len(), 3);
    assert!(!got.contains("[DONE]"));

    // text() surfaces it too.
    server.push(Reply::drop_after(Turn::text("x"), 1));
    let resp = post_anthropic(&server, anthropic_request()).await;
    assert!(resp.text().await.is_err());
}

#[tokio::test]
async fn malformed_sends_the_bad_data_then_ends_normally() {
    let raw = r#"{"type": "content_blo"#;
    let server = ScriptedServer::start(vec![Reply::malformed(raw), Reply::malformed(raw)]).await;

    let resp = post_anthropic(&server, anthropic_request()).await;
    assert_eq!(resp.status(), 200);
    let text = resp.text().await.unwrap();
    let events = parse_sse(&text);
    assert_eq!(events.len(), 1);
    assert_eq!(events[0].data, raw);
    assert!(serde_json::from_str::<Value>(&events[0].data).is_err());

    let resp = post_openai(&server, openai_request(false)).await;
    let text = resp.text().await.unwrap();
    assert_eq!(text, format!("data: {raw}\n\n"));
}

#[tokio::test]
async fn script_exhaustion_gives_500_and_push_refills() {
    let server = ScriptedServer::start(vec![]).await;
    assert_eq!(server.remaining(), 0);

    let resp = post_anthropic(&server, anthropic_request()).await;
    assert_eq!(resp.status(), 500);
    let body: Value = resp.json().await.unwrap();
    let msg = body["error"]["message"].as_str().unwrap();
    assert!(msg.contains("scripted server: script exhausted"), "{msg}");

    let resp = post_openai(&server, openai_request(false)).await;
    assert_eq!(resp.status(), 500);
    let body: Value = resp.json().await.unwrap();
    let msg = body["error"]["message"].as_str().unwrap();
    assert!(msg.contains("scripted server: script exhausted"), "{msg}");

    server.push(Reply::text("more"));
    server.push(Reply::text("and more"));
    assert_eq!(server.remaining(), 2);
    let resp = post_openai(&server, openai_request(false)).await;
    assert_eq!(resp.status(), 200);
    let got = assemble_openai(&parse_sse(&resp.text().await.unwrap()));
    assert_eq!(got.content, "more");
    assert_eq!(server.remaining(), 1);
    assert_eq!(server.requests().len(), 3);
}

#[tokio::test]
async fn unknown_routes_and_bad_bodies_are_recorded_errors() {
    let server = ScriptedServer::start(vec![Reply::text("kept")]).await;
    let c = client();

    let resp = c
        .get(format!("{}/v1/models", server.anthropic_base_url()))
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 404);
    let body: Value = resp.json().await.unwrap();
    assert!(body["error"]["message"].as_str().unwrap().contains("no route"));

    let resp = c
        .post(format!("{}/v1/messages", server.anthropic_base_url()))
        .body("this is not json")
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 400);

    let reqs = server.requests();
    assert_eq!(reqs.len(), 2);
    assert_eq!(
        (reqs[0].method.as_str(), reqs[0].path.as_str()),
        ("GET", "/v1/models")
    );
    assert_eq!(reqs[1].body, Value::Null);
    assert_eq!(reqs[1].raw_body, "this is not json");
    // Neither consumed a reply.
    assert_eq!(server.remaining(), 1);

    // A query string does not change the route.
    let resp = post(
        format!("{}/v1/messages?beta=true", server.anthropic_base_url()),
        anthropic_request(),
    )
    .await;
    assert_eq!(resp.status(), 200);
    assert_eq!(server.last_request().unwrap().path, "/v1/messages?beta=true");
}

/// Sends `request` over raw TCP and returns the whole raw response.
fn raw_exchange(server: &ScriptedServer, request: &[u8]) -> String {
    let mut s = std::net::TcpStream::connect(server.addr()).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    s.write_all(request).unwrap();
    let mut out = Vec::new();
    s.read_to_end(&mut out).unwrap();
    String::from_utf8(out).unwrap()
}

#[test]
fn raw_wire_framing_without_an_async_runtime() {
    let server = ScriptedServer::start_blocking(vec![Reply::text("hi")]);

    // A chunked request body, odd header casing.
    let body = r#"{"model":"m","stream":true}"#;
    let (a, b) = body.split_at(10);
    let request = format!(
        "POST /v1/messages HTTP/1.1\r\nHost: x\r\nX-API-KEY: k\r\nTransfer-Encoding: chunked\r\n\r\n{:x}\r\n{a}\r\n{:x}\r\n{b}\r\n0\r\n\r\n",
        a.len(),
        b.len()
    );
    let response = raw_exchange(&server, request.as_bytes());
    let (head, rest) = response.split_once("\r\n\r\n").unwrap();
    let head_lower = head.to_ascii_lowercase();
    assert!(head.starts_with("HTTP/1.1 200 OK\r\n"), "{head}");
    assert!(head_lower.contains("\r\ntransfer-encoding: chunked"), "{head}");
    assert!(head_lower.contains("\r\nconnection: close"), "{head}");
    assert!(
        head_lower.contains("\r\ncontent-type: text/event-stream"),
        "{head}"
    );

    // Each chunk is exactly one SSE event; the body ends with 0\r\n\r\n.
    let mut rest = rest;
    let mut events = Vec::new();
    loop {
        let (size, after) = rest.split_once("\r\n").unwrap();
        let size = usize::from_str_radix(size, 16).unwrap();
        if size == 0 {
            assert_eq!(after, "\r\n");
            break;
        }
        let chunk = &after[..size];
        assert!(
            chunk.ends_with("\n\n") && chunk.matches("\n\n").count() == 1,
            "{chunk:?}"
        );
        events.push(chunk.to_string());
        assert_eq!(&after[size..size + 2], "\r\n");
        rest = &after[size + 2..];
    }
    assert_eq!(events.len(), 7);
    assert!(events[0].starts_with("event: message_start\ndata: {"));
    assert_eq!(
        events[6],
        "event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n"
    );

    let reqs = server.requests();
    assert_eq!(reqs[0].header("x-api-key"), Some("k"));
    assert_eq!(reqs[0].headers[0], ("host".to_string(), "x".to_string()));
    assert_eq!(reqs[0].body, json!({"model": "m", "stream": true}));

    // Garbage gets a 400 (and the server keeps serving).
    let response = raw_exchange(&server, b"BLAH\r\n\r\n");
    assert!(response.starts_with("HTTP/1.1 400 "), "{response}");
    let response = raw_exchange(
        &server,
        b"POST /v1/messages HTTP/1.1\r\nContent-Length: nope\r\n\r\n",
    );
    assert!(response.starts_with("HTTP/1.1 400 "), "{response}");
    assert_eq!(server.requests().len(), 3);
    assert_eq!(server.requests()[2].path, "/v1/messages");
    // Connect-and-close is not a request.
    drop(std::net::TcpStream::connect(server.addr()).unwrap());
    assert_eq!(server.remaining(), 0);
}

#[tokio::test]
async fn hang_sends_nothing() {
    let server = ScriptedServer::start(vec![Reply::Hang]).await;
    let started = Instant::now();
    let err = client()
        .post(format!("{}/v1/messages", server.anthropic_base_url()))
        .timeout(Duration::from_millis(150))
        .json(&anthropic_request())
        .send()
        .await
        .unwrap_err();
    assert!(err.is_timeout(), "{err:?}");
    assert!(started.elapsed() < Duration::from_secs(5));
    // It was still read and recorded.
    assert_eq!(server.requests().len(), 1);
}

#[tokio::test]
async fn stall_after_goes_silent_mid_stream() {
    let server = ScriptedServer::start(vec![Reply::stall_after(Turn::text("never finished"), 2)]).await;
    let mut resp = post_openai(&server, openai_request(false)).await;
    assert_eq!(resp.status(), 200);
    let mut got = String::new();
    while got.matches("\n\n").count() < 2 {
        let bytes = tokio::time::timeout(Duration::from_secs(5), resp.chunk())
            .await
            .unwrap()
            .unwrap()
            .unwrap();
        got.push_str(std::str::from_utf8(&bytes).unwrap());
    }
    let events = parse_sse(&got);
    assert_eq!(events.len(), 2);
    assert_eq!(events[1].json()["choices"][0]["delta"]["content"], "nished");
    // Then nothing more arrives.
    let next = tokio::time::timeout(Duration::from_millis(150), resp.chunk()).await;
    assert!(next.is_err(), "expected silence, got {next:?}");
}

#[tokio::test]
async fn slow_spaces_the_events() {
    let server = ScriptedServer::start(vec![Reply::slow(Turn::text("hi"), 25)]).await;
    let started = Instant::now();
    let mut resp = post_anthropic(&server, anthropic_request()).await;
    let first = resp.chunk().await.unwrap().unwrap();
    assert!(
        std::str::from_utf8(&first)
            .unwrap()
            .starts_with("event: message_start")
    );
    let (rest, err) = read_until_error(&mut resp).await;
    assert!(err.is_none());
    // 7 events, 6 gaps of 25 ms: the server's sleeps make this a floor, whatever the load.
    assert_eq!(parse_sse(&rest).len(), 6);
    assert!(
        started.elapsed() >= Duration::from_millis(150),
        "{:?}",
        started.elapsed()
    );
}

/// The head and first event come at once, before the first gap: with a gap far longer
/// than any stall of a loaded machine, the first event comes before it has passed.
#[tokio::test]
async fn slow_sends_the_first_event_before_the_first_gap() {
    let gap = Duration::from_secs(20);
    let server = ScriptedServer::start(vec![Reply::slow(Turn::text("hi"), gap.as_millis() as u64)]).await;
    let started = Instant::now();
    let mut resp = post_anthropic(&server, anthropic_request()).await;
    let first = tokio::time::timeout(gap, resp.chunk())
        .await
        .expect("the first event before the first gap")
        .unwrap()
        .unwrap();
    assert!(
        std::str::from_utf8(&first)
            .unwrap()
            .starts_with("event: message_start")
    );
    assert!(started.elapsed() < gap, "{:?}", started.elapsed());
}

#[tokio::test]
async fn concurrent_requests_take_script_entries_in_arrival_order() {
    let server = ScriptedServer::start((0..8).map(|i| Reply::text(format!("reply {i}"))).collect()).await;
    let mut tasks = Vec::new();
    for _ in 0..8 {
        let url = server.openai_base_url();
        tasks.push(tokio::spawn(async move {
            post(format!("{url}/chat/completions"), openai_request(false))
                .await
                .text()
                .await
                .unwrap()
        }));
    }
    let mut contents = Vec::new();
    for t in tasks {
        contents.push(assemble_openai(&parse_sse(&t.await.unwrap())).content);
    }
    contents.sort();
    let want: Vec<String> = (0..8).map(|i| format!("reply {i}")).collect();
    assert_eq!(contents, want);
    assert_eq!(server.wait_for_requests(8, Duration::from_secs(1)).await.len(), 8);
    assert_eq!(server.remaining(), 0);
}

#[test]
fn temp_dir_is_unique_and_removed_on_drop() {
    let a = TempDir::new();
    let b = TempDir::new();
    assert_ne!(a.path(), b.path());
    assert!(a.path().is_dir());
    let name = a.path().file_name().unwrap().to_str().unwrap().to_string();
    assert!(name.contains(&std::process::id().to_string()), "{name}");
    let file = a.write("sub/dir/f.txt", "x");
    assert_eq!(std::fs::read_to_string(&file).unwrap(), "x");
    let path = a.path().to_path_buf();
    drop(a);
    assert!(!path.exists());
    assert!(b.path().is_dir());
}

#[test]
fn split_is_char_boundary_safe() {
    let s = "aé日🎉bcdefghij";
    let parts = support::script::split_chars(s, 3);
    assert_eq!(parts, ["aé日", "🎉bc", "def", "ghi", "j"]);
    assert!(support::script::split_chars("", 8).is_empty());
}
