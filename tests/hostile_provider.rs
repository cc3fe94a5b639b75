//! A hostile or broken provider: endless lines, huge deltas and replies, keep-alives
//! forever, a web page instead of an event stream, filtered and empty replies. Each ends
//! the turn with a clear error after bounded work, and none of them is retried.
#![allow(clippy::unwrap_used, clippy::expect_used)] // A test fails by panicking.

use crate::support;

use miniagent_core::config::Provider;
use miniagent_protocol::Event;
use support::harness::{Harness, streamed_text, test_config};
use support::*;

const PROVIDERS: [Provider; 2] = [Provider::Anthropic, Provider::Openai];

fn error_of(provider: Provider, events: &[Event]) -> String {
    match events.last() {
        Some(Event::Error { message }) => message.clone(),
        other => panic!("{provider}: expected an error, got {other:#?}"),
    }
}

fn retried(events: &[Event]) -> bool {
    events.iter().any(|e| matches!(e, Event::Retrying { .. }))
}

/// Runs one turn of `replies` (then `ok` is scripted, so a retry would succeed) and
/// returns the events, after checking that exactly one request was sent, and that the
/// session goes on afterwards.
async fn one_attempt(
    provider: Provider,
    reply: Reply,
    configure: impl Fn(&mut miniagent_core::config::Config),
) -> Vec<Event> {
    let server = ScriptedServer::start(vec![reply, Reply::text("a retry was made")]).await;
    let mut config = test_config(provider, &server);
    configure(&mut config);
    let mut agent = Harness::start(config);
    let events = agent.turn("hi").await;
    assert!(!retried(&events), "{provider}: retried: {events:#?}");
    assert_eq!(server.request_count(), 1, "{provider}: one request, no retry");
    let next = agent.turn("again").await;
    assert_eq!(
        next.last(),
        Some(&Event::TurnComplete {
            text: "a retry was made".into()
        }),
        "{provider}: the session goes on"
    );
    events
}

#[tokio::test]
async fn an_endless_line_is_cut_at_the_limit_and_not_retried() {
    for provider in PROVIDERS {
        // Without a limit the client reads all 256 MiB (and would read forever).
        let events = one_attempt(provider, Reply::EndlessLine { limit: 256 << 20 }, |_| {}).await;
        let message = error_of(provider, &events);
        assert!(
            message.contains("longer than") && message.contains("MiB"),
            "{provider}: {message}"
        );
    }
}

#[tokio::test]
async fn a_huge_delta_is_cut_before_it_is_shown() {
    for provider in PROVIDERS {
        let events = one_attempt(provider, Reply::HugeDelta { bytes: 32 << 20 }, |_| {}).await;
        let message = error_of(provider, &events);
        assert!(message.contains("MiB"), "{provider}: {message}");
        assert_eq!(streamed_text(&events), "", "{provider}: nothing of it was shown");
    }
}

#[tokio::test]
async fn a_reply_larger_than_any_model_writes_is_cut() {
    for provider in PROVIDERS {
        let reply = Reply::LongText {
            bytes: 6 << 20,
            piece: 64 << 10,
        };
        let events = one_attempt(provider, reply, |_| {}).await;
        let message = error_of(provider, &events);
        assert!(message.contains("reply is larger than"), "{provider}: {message}");
        let shown = streamed_text(&events).len();
        assert!(shown <= 4 << 20, "{provider}: {shown} bytes shown");
    }
}

#[tokio::test]
async fn keep_alives_forever_meet_the_call_deadline() {
    for provider in PROVIDERS {
        let events = one_attempt(provider, Reply::PingForever { every_ms: 50 }, |config| {
            config.model.stream_idle_timeout_s = 60;
            config.model.call_deadline_s = 2;
        })
        .await;
        let message = error_of(provider, &events);
        assert!(
            message.contains("2 s") && message.contains("model.call_deadline_s"),
            "{provider}: {message}"
        );
    }
}

#[tokio::test]
async fn keep_alives_are_not_progress_for_the_idle_timeout() {
    let server = ScriptedServer::start(vec![
        Reply::PingForever { every_ms: 50 },
        Reply::text("after the silence"),
    ])
    .await;
    let mut config = test_config(Provider::Anthropic, &server);
    config.model.stream_idle_timeout_s = 1;
    let mut agent = Harness::start(config);
    let events = agent.turn("hi").await;
    assert_eq!(
        events.last(),
        Some(&Event::TurnComplete {
            text: "after the silence".into()
        })
    );
    let reasons: Vec<&str> = events
        .iter()
        .filter_map(|e| match e {
            Event::Retrying { reason, .. } => Some(reason.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(reasons, ["no reply from the provider for 1 s (only keep-alives)"]);
    assert_eq!(server.request_count(), 2);
}

#[tokio::test]
async fn a_web_page_with_status_200_is_named_and_not_retried() {
    let page = "<!DOCTYPE html>\n<html><head><title>Just a moment...</title>\
                <style>body{color:red}</style></head>\n<body>Checking   your\n\nbrowser\x1b]0;pwned\x07</body></html>";
    for provider in PROVIDERS {
        let reply = Reply::Raw {
            status: 200,
            content_type: "text/html; charset=UTF-8".into(),
            body: page.into(),
        };
        let events = one_attempt(provider, reply, |_| {}).await;
        let message = error_of(provider, &events);
        assert!(
            message.contains("not an event stream")
                && message.contains("text/html")
                && message.contains("Just a moment... Checking your browser"),
            "{provider}: {message}"
        );
        assert!(
            !message.contains('\x1b') && !message.contains("color:red"),
            "{message:?}"
        );
    }
}

/// A gateway's error page (a 502 from a proxy) is quoted as its text, not its markup.
#[tokio::test]
async fn an_error_page_is_quoted_as_its_text() {
    let page = "<!DOCTYPE html>\n<html><head><title>502 Bad Gateway</title>\
                <style>body{color:red}</style></head>\n<body><h1>Bad   Gateway</h1>\n<p>nginx</p></body></html>";
    for provider in PROVIDERS {
        let reply = Reply::Raw {
            status: 400,
            content_type: "text/html".into(),
            body: page.into(),
        };
        let events = one_attempt(provider, reply, |_| {}).await;
        let message = error_of(provider, &events);
        assert!(
            message.contains("HTTP 400 from the provider: 502 Bad Gateway Bad Gateway nginx"),
            "{provider}: {message}"
        );
        assert!(
            !message.contains('<') && !message.contains("color:red"),
            "{message:?}"
        );
    }
}

#[tokio::test]
async fn a_json_body_with_status_200_is_named_and_not_retried() {
    let body = r#"{"id":"chatcmpl-1","object":"chat.completion","choices":[{"index":0,"message":{"role":"assistant","content":"hello"}}]}"#;
    let reply = Reply::Raw {
        status: 200,
        content_type: "application/json".into(),
        body: body.into(),
    };
    let events = one_attempt(Provider::Openai, reply, |_| {}).await;
    let message = error_of(Provider::Openai, &events);
    assert!(
        message.contains("application/json") && message.contains(r#""object":"chat.completion""#),
        "{message}"
    );
}

fn chunk(choices: &str) -> String {
    format!("data: {{\"id\":\"c1\",\"object\":\"chat.completion.chunk\",\"choices\":{choices}}}\n\n")
}

#[tokio::test]
async fn a_content_filter_stop_is_reported() {
    let reply = Reply::Events(vec![
        chunk(
            r#"[{"index":0,"delta":{"role":"assistant","content":"Here is how to"},"finish_reason":null}]"#,
        ),
        chunk(r#"[{"index":0,"delta":{},"finish_reason":"content_filter"}]"#),
        "data: [DONE]\n\n".into(),
    ]);
    let events = one_attempt(Provider::Openai, reply, |_| {}).await;
    let message = error_of(Provider::Openai, &events);
    assert!(message.contains("content filter"), "{message}");
}

#[tokio::test]
async fn a_stream_without_choices_is_reported() {
    let reply = Reply::Events(vec![
        chunk("[]"),
        "data: {\"id\":\"c1\",\"choices\":[],\"usage\":{\"prompt_tokens\":3,\"completion_tokens\":0}}\n\n"
            .into(),
        "data: [DONE]\n\n".into(),
    ]);
    let events = one_attempt(Provider::Openai, reply, |_| {}).await;
    let message = error_of(Provider::Openai, &events);
    assert!(message.contains("no choices"), "{message}");
}
