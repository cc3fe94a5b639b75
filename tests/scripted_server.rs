//! Self-test of the scripted model server in `tests/support/`, driven with
//! plain reqwest (and raw TCP where the exact bytes matter).
#![allow(clippy::unwrap_used, clippy::expect_used)] // A test fails by panicking.
//!
//! Its tests are in `scripted_server/`: `shapes` (the SSE each provider's format streams,
//! event by event), `faults` (status replies, cut and malformed streams, a script run
//! out, bad routes and bodies, the raw HTTP framing), `timing` (hangs, stalls, paced and
//! concurrent streams). The helpers they share are here.

#[path = "scripted_server/faults.rs"]
mod faults;
#[path = "scripted_server/shapes.rs"]
mod shapes;
#[path = "scripted_server/timing.rs"]
mod timing;

use crate::support;

use std::collections::BTreeMap;

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
