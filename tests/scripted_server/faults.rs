//! Faults the server injects and requests it refuses: status replies with provider-shaped
//! bodies, streams cut or malformed, a script run out, unknown routes and bad bodies, and
//! the raw HTTP framing with no async runtime.

use super::*;

use pretty_assertions::assert_eq;

use std::io::{Read, Write};
use std::time::Duration;

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
