//! Target 1: SSE decoding, both providers. Every stream, valid or mutated, ends in
//! exactly one completion or one error after deltas only, and decodes the same however
//! its bytes are cut into chunks.

use std::convert::Infallible;
use std::task::{Context, Poll, Waker};

use fastrand::Rng;
use miniagent_core::agent::history::ContentBlock;
use miniagent_core::llm::anthropic::AnthropicDecoder;
use miniagent_core::llm::openai::OpenAiDecoder;
use miniagent_core::llm::sse::decode_stream;
use miniagent_core::llm::{LlmError, ModelEvent, ModelResponse};
use pretty_assertions::assert_eq;
use serde_json::{Value, json};

use super::fuzz;
use super::mutate::Mutator;

#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) enum Provider {
    Anthropic,
    OpenAi,
}

/// An Anthropic stream: each payload framed as an SSE event named by its `type`.
fn anthropic_stream(events: &[Value]) -> Vec<u8> {
    events
        .iter()
        .map(|event| {
            let name = event["type"].as_str().unwrap_or("message");
            format!("event: {name}\ndata: {event}\n\n")
        })
        .collect::<String>()
        .into_bytes()
}

/// An OpenAI stream: each chunk as a `data:` event, then `[DONE]` when asked.
fn openai_stream(chunks: &[Value], done: bool) -> Vec<u8> {
    let mut text: String = chunks.iter().map(|chunk| format!("data: {chunk}\n\n")).collect();
    if done {
        text.push_str("data: [DONE]\n\n");
    }
    text.into_bytes()
}

pub(crate) fn block_start(index: u64, block: Value) -> Value {
    json!({"type": "content_block_start", "index": index, "content_block": block})
}

pub(crate) fn block_delta(index: u64, delta: Value) -> Value {
    json!({"type": "content_block_delta", "index": index, "delta": delta})
}

fn anthropic_seeds() -> Vec<Vec<u8>> {
    let start = json!({"type": "message_start", "message": {"id": "msg_1", "usage": {"input_tokens": 12, "cache_read_input_tokens": 3, "output_tokens": 1}}});
    let full = anthropic_stream(&[
        start.clone(),
        json!({"type": "ping"}),
        block_start(0, json!({"type": "thinking", "thinking": ""})),
        block_delta(
            0,
            json!({"type": "thinking_delta", "thinking": "Let me look… 先看看"}),
        ),
        block_delta(0, json!({"type": "signature_delta", "signature": "c2ln"})),
        json!({"type": "content_block_stop", "index": 0}),
        block_start(1, json!({"type": "text", "text": ""})),
        block_delta(
            1,
            json!({"type": "text_delta", "text": "Sure — 我来看看 😀\n\ndata: not an event"}),
        ),
        block_start(
            2,
            json!({"type": "tool_use", "id": "toolu_1", "name": "edit_file", "input": {}}),
        ),
        block_delta(
            2,
            json!({"type": "input_json_delta", "partial_json": "{\"path\": \"src/主.rs\", "}),
        ),
        block_delta(
            2,
            json!({"type": "input_json_delta", "partial_json": "\"old_str\": \"a\\\"b\\n\", \"new_str\""}),
        ),
        block_delta(
            2,
            json!({"type": "input_json_delta", "partial_json": ": \"\\u00e9\"}"}),
        ),
        json!({"type": "message_delta", "delta": {"stop_reason": "tool_use"}, "usage": {"output_tokens": 40}}),
        json!({"type": "message_stop"}),
    ]);
    // Some compatible servers end after message_delta, without message_stop.
    let no_stop = anthropic_stream(&[
        start.clone(),
        block_start(0, json!({"type": "text", "text": "Hi"})),
        block_delta(0, json!({"type": "text_delta", "text": " there"})),
        json!({"type": "message_delta", "delta": {"stop_reason": "end_turn"}, "usage": {"output_tokens": 2}}),
    ]);
    let odd_blocks = anthropic_stream(&[
        start.clone(),
        block_start(0, json!({"type": "redacted_thinking", "data": "ZW5jcnlwdGVk"})),
        block_start(
            1,
            json!({"type": "server_tool_use", "id": "srv_1", "name": "web_search"}),
        ),
        block_delta(
            1,
            json!({"type": "input_json_delta", "partial_json": "{\"q\":1}"}),
        ),
        block_start(
            2,
            json!({"type": "tool_use", "id": "toolu_a", "name": "bash", "input": {}}),
        ),
        block_delta(
            2,
            json!({"type": "input_json_delta", "partial_json": "{\"command\": \"ls"}),
        ),
        block_start(
            3,
            json!({"type": "tool_use", "id": "toolu_b", "name": "read_file", "input": {}}),
        ),
        json!({"type": "message_delta", "delta": {"stop_reason": "max_tokens"}}),
        json!({"type": "message_stop"}),
    ]);
    let error = anthropic_stream(&[
        start,
        block_start(0, json!({"type": "text", "text": ""})),
        block_delta(0, json!({"type": "text_delta", "text": "partial"})),
        json!({"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}),
    ]);
    with_crlf_variants(vec![full, no_stop, odd_blocks, error])
}

fn openai_seeds() -> Vec<Vec<u8>> {
    let delta = |delta: Value| json!({"choices": [{"index": 0, "delta": delta}]});
    let full = openai_stream(
        &[
            delta(
                json!({"role": "assistant", "reasoning_details": [{"type": "reasoning.text", "id": "r1", "index": 0, "text": "Let me "}]}),
            ),
            delta(
                json!({"reasoning_details": [{"type": "reasoning.text", "index": 0, "text": "look. 想一想"}]}),
            ),
            delta(json!({"content": "Sure — 我来 😀"})),
            delta(
                json!({"tool_calls": [{"index": 0, "id": "call_a", "type": "function", "function": {"name": "bash", "arguments": ""}}]}),
            ),
            delta(
                json!({"tool_calls": [{"index": 1, "id": "call_b", "type": "function", "function": {"name": "read_file", "arguments": "{\"path\":"}}]}),
            ),
            delta(
                json!({"tool_calls": [{"index": 0, "function": {"arguments": "{\"command\":\"ls\\n\"}"}}]}),
            ),
            delta(json!({"tool_calls": [{"index": 1, "function": {"arguments": " \"主.rs\"}"}}]})),
            json!({"choices": [{"index": 0, "delta": {}, "finish_reason": "tool_calls"}]}),
            json!({"choices": [], "usage": {"prompt_tokens": 11, "completion_tokens": 4}}),
        ],
        true,
    );
    // Some compatible servers close after the finish reason, without `[DONE]`.
    let no_done = openai_stream(
        &[
            delta(json!({"reasoning_content": "thinking"})),
            delta(json!({"content": "Hello"})),
            json!({"choices": [{"index": 0, "delta": {"content": "!"}, "finish_reason": "stop"}]}),
        ],
        false,
    );
    let no_ids = openai_stream(
        &[
            delta(json!({"tool_calls": [{"function": {"name": "bash", "arguments": "{\"command\""}}]})),
            delta(json!({"tool_calls": [{"function": {"arguments": ": \"pwd\"}"}}]})),
            json!({"choices": [{"index": 1, "delta": {"content": "other choice"}}]}),
            json!({"choices": [{"index": 0, "delta": {}, "finish_reason": "length"}]}),
        ],
        true,
    );
    let error = openai_stream(
        &[
            delta(json!({"content": "partial"})),
            json!({"error": {"type": "server_error", "message": "boom"}}),
        ],
        true,
    );
    with_crlf_variants(vec![full, no_done, no_ids, error])
}

/// Each seed, the same with CRLF line endings, and the same after a byte-order mark (SSE
/// allows both; a leading BOM once crashed the decoder).
fn with_crlf_variants(seeds: Vec<Vec<u8>>) -> Vec<Vec<u8>> {
    let crlf: Vec<Vec<u8>> = seeds
        .iter()
        .map(|seed| String::from_utf8_lossy(seed).replace('\n', "\r\n").into_bytes())
        .collect();
    let bom: Vec<Vec<u8>> = seeds
        .iter()
        .map(|seed| [b"\xef\xbb\xbf".as_slice(), seed].concat())
        .collect();
    seeds.into_iter().chain(crlf).chain(bom).collect()
}

const SSE_TOKENS: &[&[u8]] = &[
    b"event: message_stop\n",
    b"event: error\ndata: {\"type\":\"error\",\"error\":{\"type\":\"api_error\",\"message\":\"x\"}}\n\n",
    b"data: [DONE]\n\n",
    b"data: {}\n\n",
    b"data: {\"type\":\"message_stop\"}\n\n",
    b"data: {\"type\":\"content_block_start\",\"index\":4095,\"content_block\":{\"type\":\"text\",\"text\":\"\"}}\n\n",
    b"data: {\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":4095,\"function\":{\"arguments\":\"{\"}}]}}]}\n\n",
    b"id: 1\n",
    b"retry: 10\n",
    b": keep-alive comment\n\n",
    b"data",
    b"\n\n\n",
    b"\xef\xbb\xbf",
];

/// Polls a stream whose input is all there; it must never wait.
fn drain(mut stream: miniagent_core::llm::ModelStream) -> Vec<Result<ModelEvent, LlmError>> {
    let mut context = Context::from_waker(Waker::noop());
    let mut items = Vec::new();
    loop {
        match stream.as_mut().poll_next(&mut context) {
            Poll::Ready(Some(item)) => items.push(item),
            Poll::Ready(None) => return items,
            Poll::Pending => panic!("the decoder waited although its whole input was there"),
        }
    }
}

/// Decodes `chunks` as one provider's stream.
fn decode(provider: Provider, chunks: Vec<Vec<u8>>) -> Vec<Result<ModelEvent, LlmError>> {
    // The OpenAI decoder makes up ids for calls that have none; make them repeatable.
    fastrand::seed(7);
    let bytes = futures_util::stream::iter(chunks.into_iter().map(Ok::<Vec<u8>, Infallible>));
    let transport = |never: Infallible| -> LlmError { match never {} };
    match provider {
        Provider::Anthropic => drain(decode_stream(bytes, AnthropicDecoder::default(), transport)),
        Provider::OpenAi => drain(decode_stream(bytes, OpenAiDecoder::default(), transport)),
    }
}

/// `bytes` cut into random chunks: one byte each, all in one, or random sizes (empty
/// chunks included), so cuts fall inside lines, `\r\n` pairs and UTF-8 sequences.
///
/// At most a few hundred chunks: the SSE parser rescans a line it has not seen the end
/// of on every chunk, so a long line in tiny chunks costs quadratic time.
fn chunked(rng: &mut Rng, bytes: &[u8]) -> Vec<Vec<u8>> {
    match rng.u8(..6) {
        0 if bytes.len() <= 2048 => bytes.chunks(1).map(<[u8]>::to_vec).collect(),
        1 => vec![bytes.to_vec()],
        _ => {
            let largest = [2, 3, 7, 17, 64, 500][rng.usize(..6)].max(bytes.len() / 200);
            let mut chunks = Vec::new();
            let mut at = 0;
            while at < bytes.len() {
                let size = rng.usize(..=largest).min(bytes.len() - at);
                chunks.push(bytes[at..at + size].to_vec());
                at += size;
            }
            chunks
        }
    }
}

/// What every decoded stream must look like: deltas, then exactly one completion or one
/// error, last; a completion whose tool calls are objects and whose invalid-argument
/// reports name calls it holds.
fn check_stream_shape(items: &[Result<ModelEvent, LlmError>]) {
    let Some((last, deltas)) = items.split_last() else {
        panic!("the stream ended with neither a completion nor an error");
    };
    for item in deltas {
        assert!(
            matches!(
                item,
                Ok(ModelEvent::TextDelta(_) | ModelEvent::ThinkingDelta(_) | ModelEvent::Usage(_))
            ),
            "only deltas and usage may come before the end: {item:?}"
        );
    }
    match last {
        Ok(ModelEvent::Completed(response)) => check_response(response),
        Ok(other) => panic!("the stream ended on a delta: {other:?}"),
        Err(err) => assert!(!err.to_string().is_empty()),
    }
}

fn check_response(response: &ModelResponse) {
    let ids: Vec<&str> = response
        .content
        .iter()
        .filter_map(|block| match block {
            ContentBlock::ToolUse { id, input, .. } => {
                assert!(input.is_object(), "tool input is not an object: {input}");
                Some(id.as_str())
            }
            _ => None,
        })
        .collect();
    for invalid in &response.invalid_arguments {
        assert!(
            ids.contains(&invalid.call_id.as_str()),
            "{invalid:?} names no call of {ids:?}"
        );
        assert!(!invalid.error.is_empty());
    }
}

/// The text (or thinking) the deltas streamed, and the text the completion holds.
fn streamed_and_completed(items: &[Result<ModelEvent, LlmError>], thinking: bool) -> (String, String) {
    let mut streamed = String::new();
    let mut completed = String::new();
    for item in items {
        match item {
            Ok(ModelEvent::TextDelta(piece)) if !thinking => streamed.push_str(piece),
            Ok(ModelEvent::ThinkingDelta(piece)) if thinking => streamed.push_str(piece),
            Ok(ModelEvent::Completed(response)) => {
                for block in &response.content {
                    match block {
                        ContentBlock::Text { text } if !thinking => completed.push_str(text),
                        ContentBlock::Thinking { thinking: text, .. } if thinking => completed.push_str(text),
                        _ => {}
                    }
                }
            }
            _ => {}
        }
    }
    (streamed, completed)
}

#[test]
fn sse_valid_streams_decode_the_same_whatever_the_chunking() {
    let seeds: Vec<(Provider, Vec<u8>)> = anthropic_seeds()
        .into_iter()
        .map(|seed| (Provider::Anthropic, seed))
        .chain(openai_seeds().into_iter().map(|seed| (Provider::OpenAi, seed)))
        .collect();
    fuzz(
        "sse_valid_streams_decode_the_same_whatever_the_chunking",
        1000,
        |rng, input| {
            let (provider, seed) = &seeds[rng.usize(..seeds.len())];
            input.clone_from(seed);
            let whole = decode(*provider, vec![input.clone()]);
            check_stream_shape(&whole);
            for thinking in [false, true] {
                let (streamed, completed) = streamed_and_completed(&whole, thinking);
                if matches!(whole.last(), Some(Ok(ModelEvent::Completed(_)))) {
                    assert_eq!(streamed, completed, "the deltas are the reply's text");
                }
            }
            let chunks = chunked(rng, input);
            assert_eq!(decode(*provider, chunks), whole);
        },
    );
}

#[test]
fn sse_mutated_streams_end_in_one_completion_or_one_error() {
    let anthropic = anthropic_seeds();
    let openai = openai_seeds();
    let mutators = [
        (
            Provider::Anthropic,
            Mutator {
                seeds: &anthropic,
                dictionary: SSE_TOKENS,
                json_eighths: 3,
            },
        ),
        (
            Provider::OpenAi,
            Mutator {
                seeds: &openai,
                dictionary: SSE_TOKENS,
                json_eighths: 3,
            },
        ),
    ];
    fuzz(
        "sse_mutated_streams_end_in_one_completion_or_one_error",
        3000,
        |rng, input| {
            let (provider, mutator) = &mutators[rng.usize(..2)];
            *input = mutator.mutated(rng);
            let whole = decode(*provider, vec![input.clone()]);
            check_stream_shape(&whole);
            // Where the network cuts the bytes never changes what they mean.
            let chunks = chunked(rng, input);
            assert_eq!(decode(*provider, chunks), whole);
        },
    );
}
