//! Rendering of turns and errors in the two providers' wire formats.

use serde_json::{Value, json};

use super::script::{Block, ReasoningStyle, StopReason, Turn, split_chars};

/// Characters per text / thinking delta.
pub const TEXT_PIECE_CHARS: usize = 8;
/// Characters per tool-argument delta.
pub const ARGS_PIECE_CHARS: usize = 8;

/// Which API a request was addressed to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    /// `POST /v1/messages`
    Anthropic,
    /// `POST /v1/chat/completions`
    OpenAi,
}

/// One framed SSE event, ready to be written as one chunk.
fn anthropic_event(name: &str, data: &Value) -> String {
    format!("event: {name}\ndata: {data}\n\n")
}

fn openai_event(data: &Value) -> String {
    format!("data: {data}\n\n")
}

/// The full event sequence of `turn` in the Anthropic Messages format.
pub fn anthropic_events(turn: &Turn, model: &str, seq: u64) -> Vec<String> {
    let mut out = Vec::new();
    out.push(anthropic_event(
        "message_start",
        &json!({
            "type": "message_start",
            "message": {
                "id": format!("msg_scripted_{seq:06}"),
                "type": "message",
                "role": "assistant",
                "model": model,
                "content": [],
                "stop_reason": null,
                "stop_sequence": null,
                "usage": {
                    "input_tokens": turn.input_tokens,
                    "cache_creation_input_tokens": turn.cache_write_tokens,
                    "cache_read_input_tokens": turn.cache_read_tokens,
                    "output_tokens": 1
                }
            }
        }),
    ));
    // The real API sends exactly this spacing for pings.
    out.push("event: ping\ndata: {\"type\": \"ping\"}\n\n".to_string());

    for (index, block) in turn.blocks.iter().enumerate() {
        let start = match block {
            Block::Thinking { .. } => json!({"type": "thinking", "thinking": ""}),
            Block::Text(_) => json!({"type": "text", "text": ""}),
            Block::ToolCall { id, name, .. } => {
                json!({"type": "tool_use", "id": id, "name": name, "input": {}})
            }
        };
        out.push(anthropic_event(
            "content_block_start",
            &json!({"type": "content_block_start", "index": index, "content_block": start}),
        ));
        let mut deltas = Vec::new();
        match block {
            Block::Thinking { text, signature } => {
                for piece in split_chars(text, TEXT_PIECE_CHARS) {
                    deltas.push(json!({"type": "thinking_delta", "thinking": piece}));
                }
                deltas.push(json!({"type": "signature_delta", "signature": signature}));
            }
            Block::Text(text) => {
                for piece in split_chars(text, TEXT_PIECE_CHARS) {
                    deltas.push(json!({"type": "text_delta", "text": piece}));
                }
            }
            Block::ToolCall { arguments, .. } => {
                // Like the real API: an empty partial_json first.
                deltas.push(json!({"type": "input_json_delta", "partial_json": ""}));
                for piece in split_chars(arguments, ARGS_PIECE_CHARS) {
                    deltas.push(json!({"type": "input_json_delta", "partial_json": piece}));
                }
            }
        }
        for delta in deltas {
            out.push(anthropic_event(
                "content_block_delta",
                &json!({"type": "content_block_delta", "index": index, "delta": delta}),
            ));
        }
        out.push(anthropic_event(
            "content_block_stop",
            &json!({"type": "content_block_stop", "index": index}),
        ));
    }

    let stop_reason = match turn.stop_reason() {
        StopReason::EndTurn => "end_turn",
        StopReason::ToolUse => "tool_use",
        StopReason::MaxTokens => "max_tokens",
    };
    out.push(anthropic_event(
        "message_delta",
        &json!({
            "type": "message_delta",
            "delta": {"stop_reason": stop_reason, "stop_sequence": null},
            "usage": {"output_tokens": turn.output_tokens}
        }),
    ));
    out.push(anthropic_event("message_stop", &json!({"type": "message_stop"})));
    out
}

/// The full event sequence of `turn` in the OpenAI Chat Completions format.
pub fn openai_events(turn: &Turn, model: &str, seq: u64, include_usage: bool) -> Vec<String> {
    let id = format!("chatcmpl-scripted{seq:06}");
    let created = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0);
    let chunk = |delta: Value, finish_reason: Option<&str>| -> String {
        let mut v = json!({
            "id": id,
            "object": "chat.completion.chunk",
            "created": created,
            "model": model,
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish_reason}]
        });
        if include_usage {
            v["usage"] = Value::Null;
        }
        openai_event(&v)
    };

    // All non-final deltas, in order; the first one gets "role":"assistant".
    let mut deltas: Vec<Value> = Vec::new();
    let mut tool_index = 0usize;
    for block in &turn.blocks {
        match block {
            Block::Thinking { text, .. } => {
                for piece in split_chars(text, TEXT_PIECE_CHARS) {
                    deltas.push(match turn.reasoning_style {
                        ReasoningStyle::Details => json!({
                            "reasoning_details": [{
                                "type": "reasoning.text",
                                "id": "reasoning-text-1",
                                "format": "MiniMax-response-v1",
                                "index": 0,
                                "text": piece
                            }]
                        }),
                        ReasoningStyle::Content => json!({"reasoning_content": piece}),
                    });
                }
            }
            Block::Text(text) => {
                for piece in split_chars(text, TEXT_PIECE_CHARS) {
                    deltas.push(json!({"content": piece}));
                }
            }
            Block::ToolCall { id, name, arguments } => {
                deltas.push(json!({
                    "tool_calls": [{
                        "index": tool_index,
                        "id": id,
                        "type": "function",
                        "function": {"name": name, "arguments": ""}
                    }]
                }));
                for piece in split_chars(arguments, ARGS_PIECE_CHARS) {
                    deltas.push(json!({
                        "tool_calls": [{"index": tool_index, "function": {"arguments": piece}}]
                    }));
                }
                tool_index += 1;
            }
        }
    }
    if deltas.is_empty() {
        deltas.push(json!({"content": ""}));
    }
    if let Some(Value::Object(first)) = deltas.first_mut() {
        let mut with_role = serde_json::Map::new();
        with_role.insert("role".into(), json!("assistant"));
        with_role.extend(std::mem::take(first));
        *first = with_role;
    }

    let mut out: Vec<String> = deltas.into_iter().map(|d| chunk(d, None)).collect();
    let finish = match turn.stop_reason() {
        StopReason::EndTurn => "stop",
        StopReason::ToolUse => "tool_calls",
        StopReason::MaxTokens => "length",
    };
    out.push(chunk(json!({}), Some(finish)));
    if include_usage {
        let prompt_tokens = turn.input_tokens + turn.cache_read_tokens + turn.cache_write_tokens;
        out.push(openai_event(&json!({
            "id": id,
            "object": "chat.completion.chunk",
            "created": created,
            "model": model,
            "choices": [],
            "usage": {
                "prompt_tokens": prompt_tokens,
                "completion_tokens": turn.output_tokens,
                "total_tokens": prompt_tokens + turn.output_tokens,
                "prompt_tokens_details": {"cached_tokens": turn.cache_read_tokens}
            }
        })));
    }
    out.push("data: [DONE]\n\n".to_string());
    out
}

/// The events of `turn` in `format`.
pub fn events(format: Format, turn: &Turn, model: &str, seq: u64, include_usage: bool) -> Vec<String> {
    match format {
        Format::Anthropic => anthropic_events(turn, model, seq),
        Format::OpenAi => openai_events(turn, model, seq, include_usage),
    }
}

/// One SSE event whose `data:` payload is `raw` (deliberately not JSON).
pub fn malformed_event(format: Format, raw: &str) -> String {
    match format {
        Format::Anthropic => format!("event: content_block_delta\ndata: {raw}\n\n"),
        Format::OpenAi => format!("data: {raw}\n\n"),
    }
}

/// A provider-shaped JSON error body for `status`.
pub fn error_body(format: Format, status: u16, message: &str) -> String {
    match format {
        Format::Anthropic => {
            let kind = match status {
                400 => "invalid_request_error",
                401 => "authentication_error",
                402 => "billing_error",
                403 => "permission_error",
                404 => "not_found_error",
                413 => "request_too_large",
                429 => "rate_limit_error",
                504 => "timeout_error",
                529 => "overloaded_error",
                _ => "api_error",
            };
            json!({"type": "error", "error": {"type": kind, "message": message}}).to_string()
        }
        Format::OpenAi => {
            let (kind, code) = match status {
                400 => ("invalid_request_error", Value::Null),
                401 => ("invalid_request_error", json!("invalid_api_key")),
                403 => (
                    "invalid_request_error",
                    json!("unsupported_country_region_territory"),
                ),
                404 => ("invalid_request_error", json!("model_not_found")),
                429 => ("requests", json!("rate_limit_exceeded")),
                503 => ("server_error", json!("service_unavailable")),
                _ => ("server_error", Value::Null),
            };
            json!({"error": {"message": message, "type": kind, "param": null, "code": code}}).to_string()
        }
    }
}

/// `Content-Type` of a streamed reply.
pub const SSE_CONTENT_TYPE: &str = "text/event-stream; charset=utf-8";

/// A one-text-block reply cut open where its text goes, for replies too big to build:
/// the events before the text, the start and end of one text delta event (the text
/// between them must need no JSON escaping), and the events after it.
pub struct TextFrame {
    pub before: Vec<String>,
    pub delta_open: String,
    pub delta_close: String,
    pub after: Vec<String>,
}

/// The [`TextFrame`] of a text reply in `format`.
pub fn text_frame(format: Format, model: &str, seq: u64, include_usage: bool) -> TextFrame {
    let mut all = events(format, &Turn::text(""), model, seq, include_usage);
    // Anthropic: message_start, ping and the block start come first; OpenAI: the chunk
    // with the role.
    let split = match format {
        Format::Anthropic => 3,
        Format::OpenAi => 1,
    };
    let after = all.split_off(split.min(all.len()));
    let (delta_open, delta_close) = match format {
        Format::Anthropic => (
            "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"",
            "\"}}\n\n",
        ),
        Format::OpenAi => (
            "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"",
            "\"},\"finish_reason\":null}]}\n\n",
        ),
    };
    TextFrame {
        before: all,
        delta_open: delta_open.to_string(),
        delta_close: delta_close.to_string(),
        after,
    }
}
