//! SSE decoding throughput in MB/s: `miniagent_core::llm::sse::decode_stream` with each
//! provider's decoder, over an in-memory reply of about 1 MiB of SSE cut into 4 KiB and
//! 64 KiB chunks. The reply is shaped like a real one: message start, a thinking block,
//! a long text block and a tool call's JSON arguments, all streamed in 8-character
//! deltas (as the providers and tests/support/wire.rs do), then the stop and usage events.
//! Before timing, each reply is decoded once and checked, so an error path is never what
//! gets measured.
//!
//! Run: `cargo bench --bench sse`
#![allow(clippy::unwrap_used, clippy::expect_used)] // A test fails by panicking.

use std::convert::Infallible;
use std::hint::black_box;
use std::time::Duration;

use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use futures_util::StreamExt;
use miniagent_core::agent::history::ContentBlock;
use miniagent_core::llm::anthropic::AnthropicDecoder;
use miniagent_core::llm::openai::OpenAiDecoder;
use miniagent_core::llm::sse::{SseDecoder, decode_stream};
use miniagent_core::llm::{ModelEvent, ModelStream};
use miniagent_protocol::StopReason;
use serde_json::{Value, json};
use tokio::runtime::Runtime;

/// About how many bytes of SSE each reply is.
const TARGET_BYTES: usize = 1 << 20;
/// Characters per delta, as the real providers and the scripted test server send.
const PIECE_CHARS: usize = 8;
const CHUNK_SIZES: [usize; 2] = [4 << 10, 64 << 10];
const TOOL_ID: &str = "call_bench_1";
const TOOL_NAME: &str = "edit_file";

/// What the model "says"; the SSE is generated from it and the decoded output must match.
struct Reply {
    thinking: String,
    text: String,
    tool_input: Value,
}

/// `chars` characters of prose with code, non-ASCII text and characters JSON escapes.
fn prose(chars: usize, offset: usize) -> String {
    const PASSAGE: &str = "The parser reads `src/llm/sse.rs` line by line — each \"data:\" \
        field is JSON; it returns Ok(()) when the café's 先看看 check passes 😀.\n\
        \tfn main() { println!(\"{}\", 42); }\n";
    PASSAGE.chars().cycle().skip(offset).take(chars).collect()
}

impl Reply {
    fn new(text_pieces: usize) -> Self {
        Self {
            thinking: prose(2_000 * PIECE_CHARS, 7),
            text: prose(text_pieces * PIECE_CHARS, 0),
            tool_input: json!({
                "path": "src/llm/sse.rs",
                "old_str": prose(6_000, 13),
                "new_str": prose(6_000, 29),
            }),
        }
    }

    fn arguments(&self) -> String {
        self.tool_input.to_string()
    }
}

/// `text` in pieces of [`PIECE_CHARS`] characters.
fn pieces(text: &str) -> Vec<String> {
    let chars: Vec<char> = text.chars().collect();
    chars
        .chunks(PIECE_CHARS)
        .map(|piece| piece.iter().collect())
        .collect()
}

/// The reply in the Anthropic Messages format, framed like tests/support/wire.rs.
fn anthropic_sse(reply: &Reply) -> String {
    let mut out = String::new();
    let mut event = |data: Value| {
        let name = data["type"].as_str().expect("every event has a type").to_owned();
        out.push_str(&format!("event: {name}\ndata: {data}\n\n"));
    };
    event(json!({"type": "message_start", "message": {
        "id": "msg_bench", "type": "message", "role": "assistant", "model": "claude-bench",
        "content": [], "stop_reason": null, "stop_sequence": null,
        "usage": {"input_tokens": 1200, "cache_creation_input_tokens": 0,
                  "cache_read_input_tokens": 0, "output_tokens": 1}}}));
    event(json!({"type": "ping"}));
    let delta =
        |index: u64, delta: Value| json!({"type": "content_block_delta", "index": index, "delta": delta});
    let start = |index: u64, block: Value| json!({"type": "content_block_start", "index": index, "content_block": block});
    let stop = |index: u64| json!({"type": "content_block_stop", "index": index});

    event(start(0, json!({"type": "thinking", "thinking": ""})));
    for piece in pieces(&reply.thinking) {
        event(delta(0, json!({"type": "thinking_delta", "thinking": piece})));
    }
    event(delta(
        0,
        json!({"type": "signature_delta", "signature": "c2lnbmF0dXJl"}),
    ));
    event(stop(0));

    event(start(1, json!({"type": "text", "text": ""})));
    for piece in pieces(&reply.text) {
        event(delta(1, json!({"type": "text_delta", "text": piece})));
    }
    event(stop(1));

    event(start(
        2,
        json!({"type": "tool_use", "id": TOOL_ID, "name": TOOL_NAME, "input": {}}),
    ));
    event(delta(2, json!({"type": "input_json_delta", "partial_json": ""})));
    for piece in pieces(&reply.arguments()) {
        event(delta(
            2,
            json!({"type": "input_json_delta", "partial_json": piece}),
        ));
    }
    event(stop(2));

    event(json!({"type": "message_delta",
        "delta": {"stop_reason": "tool_use", "stop_sequence": null},
        "usage": {"output_tokens": 9000}}));
    event(json!({"type": "message_stop"}));
    out
}

/// The reply in the OpenAI Chat Completions format, framed like tests/support/wire.rs
/// (with `stream_options.include_usage`; reasoning as `reasoning_content`).
fn openai_sse(reply: &Reply) -> String {
    let chunk = |delta: Value, finish_reason: Option<&str>| {
        let data = json!({
            "id": "chatcmpl-bench", "object": "chat.completion.chunk",
            "created": 1_750_000_000, "model": "gpt-bench",
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish_reason}],
            "usage": null,
        });
        format!("data: {data}\n\n")
    };
    let mut out = chunk(json!({"role": "assistant", "content": ""}), None);
    for piece in pieces(&reply.thinking) {
        out.push_str(&chunk(json!({"reasoning_content": piece}), None));
    }
    for piece in pieces(&reply.text) {
        out.push_str(&chunk(json!({"content": piece}), None));
    }
    out.push_str(&chunk(
        json!({"tool_calls": [{"index": 0, "id": TOOL_ID, "type": "function",
            "function": {"name": TOOL_NAME, "arguments": ""}}]}),
        None,
    ));
    for piece in pieces(&reply.arguments()) {
        out.push_str(&chunk(
            json!({"tool_calls": [{"index": 0, "function": {"arguments": piece}}]}),
            None,
        ));
    }
    out.push_str(&chunk(json!({}), Some("tool_calls")));
    let usage = json!({
        "id": "chatcmpl-bench", "object": "chat.completion.chunk",
        "created": 1_750_000_000, "model": "gpt-bench", "choices": [],
        "usage": {"prompt_tokens": 1200, "completion_tokens": 9000, "total_tokens": 10200},
    });
    out.push_str(&format!("data: {usage}\n\ndata: [DONE]\n\n"));
    out
}

/// A reply whose SSE is about [`TARGET_BYTES`]: the text block is sized to fill it. The
/// bytes are leaked so every iteration can stream `&'static` slices of them without
/// copying.
fn sized_reply(encode: fn(&Reply) -> String) -> (Reply, &'static [u8]) {
    let small = encode(&Reply::new(1_000)).len();
    let per_1000_pieces = encode(&Reply::new(2_000)).len() - small;
    let pieces = 1_000 + TARGET_BYTES.saturating_sub(small) * 1_000 / per_1000_pieces;
    let reply = Reply::new(pieces);
    let sse = encode(&reply).into_bytes().leak();
    (reply, sse)
}

/// `sse` through `decode_stream` with a fresh `D`, arriving in chunks of `chunk` bytes.
fn decode<D: SseDecoder + Default>(sse: &'static [u8], chunk: usize) -> ModelStream {
    let bytes = futures_util::stream::iter(sse.chunks(chunk).map(Ok::<_, Infallible>));
    decode_stream(bytes, D::default(), |never| match never {})
}

/// Panics unless `stream` yields exactly the reply's thinking and text as deltas, then
/// one `Completed` (last) holding the tool call with the arguments that were encoded.
fn check(runtime: &Runtime, provider: &str, mut stream: ModelStream, reply: &Reply) {
    let (mut thinking, mut text, mut completed) = (String::new(), String::new(), None);
    runtime.block_on(async {
        while let Some(item) = stream.next().await {
            assert!(
                completed.is_none(),
                "{provider}: an item after Completed: {item:?}"
            );
            match item.unwrap_or_else(|err| panic!("{provider}: the stream failed: {err}")) {
                ModelEvent::ThinkingDelta(piece) => thinking.push_str(&piece),
                ModelEvent::TextDelta(piece) => text.push_str(&piece),
                ModelEvent::Usage(_) => {}
                ModelEvent::Completed(response) => completed = Some(response),
            }
        }
    });
    assert!(
        thinking == reply.thinking,
        "{provider}: the thinking deltas differ"
    );
    assert!(text == reply.text, "{provider}: the text deltas differ");
    let response = completed.unwrap_or_else(|| panic!("{provider}: no Completed at the end"));
    assert_eq!(response.stop_reason, StopReason::ToolUse, "{provider}");
    assert!(response.invalid_arguments.is_empty(), "{provider}");
    let expected_call = ContentBlock::ToolUse {
        id: TOOL_ID.to_string(),
        name: TOOL_NAME.to_string(),
        input: reply.tool_input.clone(),
    };
    assert_eq!(response.content.last(), Some(&expected_call), "{provider}");
}

/// Polls `stream` to the end, as a consumer would, counting what it yields.
async fn drain(mut stream: ModelStream) -> usize {
    let mut items = 0;
    while let Some(item) = stream.next().await {
        black_box(item.is_ok());
        items += 1;
    }
    items
}

/// One provider's format: how to write a reply in it and how to decode it.
struct Provider {
    name: &'static str,
    encode: fn(&Reply) -> String,
    decode: fn(&'static [u8], usize) -> ModelStream,
}

fn bench_sse(c: &mut Criterion) {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .build()
        .expect("cannot build a tokio runtime");
    let providers = [
        Provider {
            name: "anthropic",
            encode: anthropic_sse,
            decode: decode::<AnthropicDecoder>,
        },
        Provider {
            name: "openai",
            encode: openai_sse,
            decode: decode::<OpenAiDecoder>,
        },
    ];
    let mut group = c.benchmark_group("sse_decode");
    for Provider { name, encode, decode } in providers {
        let (reply, sse) = sized_reply(encode);
        group.throughput(Throughput::Bytes(sse.len() as u64));
        for chunk in CHUNK_SIZES {
            check(&runtime, name, decode(sse, chunk), &reply);
            let id = BenchmarkId::new(name, format!("{}KiB_chunks", chunk >> 10));
            group.bench_with_input(id, &chunk, |b, &chunk| {
                b.iter(|| runtime.block_on(drain(decode(sse, chunk))))
            });
        }
    }
    group.finish();
}

criterion_group! {
    name = benches;
    config = Criterion::default().sample_size(20).measurement_time(Duration::from_secs(5));
    targets = bench_sse
}
criterion_main!(benches);
