//! The server's timing faults and pacing: a hang, a stall mid-stream, events spaced by a
//! gap (the first one sent before it), and concurrent requests taking the script in the
//! order they arrived.

use super::*;

use pretty_assertions::assert_eq;

use std::time::{Duration, Instant};

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
