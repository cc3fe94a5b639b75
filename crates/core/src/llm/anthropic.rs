//! Anthropic Messages API, streamed (`POST {base}/v1/messages`).

use futures_util::future::BoxFuture;
use serde_json::{Value, json};

use super::sse::{SseDecoder, TimeLimits, decode_stream_within, parse_json};
use super::{
    InvalidArguments, LlmError, ModelClient, ModelEvent, ModelRequest, ModelResponse, ModelStream,
    PromptCache, ReplyBudget, Usage, open_stream, parse_tool_arguments, transport_error,
};
use super::{ModelConfig, Provider, ProviderSpec};
use miniagent_protocol::StopReason;
use miniagent_protocol::message::{ContentBlock, Message, Role};

/// Client for the Anthropic Messages API and compatible endpoints (MiniMax `/anthropic`).
pub struct AnthropicClient {
    http: reqwest::Client,
    url: String,
    api_key: String,
    model: String,
    version: String,
    thinking_budget_tokens: u32,
    idle_timeout_s: u64,
    call_deadline_s: u64,
}

/// The provider, for the registry (`llm::PROVIDERS`).
pub(super) const SPEC: ProviderSpec = ProviderSpec {
    name: "anthropic",
    owner: &super::endpoint::ANTHROPIC,
    default_model: "claude-sonnet-4-5",
    minimax_path: "/anthropic",
    client: |http, base, api_key, config| {
        std::sync::Arc::new(AnthropicClient::new(http, base, api_key, config))
    },
};

impl Provider {
    #[allow(non_upper_case_globals)] // Reads as the variant it was: `Provider::Anthropic`.
    pub const Anthropic: Provider = Provider::of(&SPEC);
}

impl AnthropicClient {
    pub fn new(http: reqwest::Client, base: String, api_key: String, config: &ModelConfig) -> Self {
        Self {
            http,
            url: super::endpoint::request_url(&base, "/v1/messages"),
            api_key,
            model: config.model.clone(),
            version: config.anthropic_version.clone(),
            thinking_budget_tokens: config.thinking_budget_tokens,
            idle_timeout_s: config.stream_idle_timeout_s,
            call_deadline_s: config.call_deadline_s,
        }
    }

    /// The JSON body for a request.
    pub fn request_body(&self, request: &ModelRequest<'_>) -> Value {
        let mut max_tokens = request.max_output_tokens;
        let mut messages = messages_to_wire(request.messages);
        let mut body = json!({
            "model": self.model,
            "stream": true,
        });
        let mut tools: Vec<Value> = request
            .tools
            .iter()
            .map(|tool| {
                json!({
                    "name": tool.name,
                    "description": tool.description,
                    "input_schema": tool.input_schema,
                })
            })
            .collect();
        let caching = matches!(request.cache, PromptCache::On { .. });
        let mut system =
            (!request.system.is_empty()).then(|| vec![json!({"type": "text", "text": request.system})]);
        if caching {
            // The prompt is tools, then system, then messages: one breakpoint closing the
            // stable prefix, one where the previous request ended (always a hit, however
            // many blocks the latest step added), one at the end (what the next request
            // reads). Three of the four the API allows.
            let prefix_end = system.as_mut().and_then(|s| s.last_mut()).or(tools.last_mut());
            if let Some(block) = prefix_end {
                mark(block);
            }
            mark_conversation(&mut messages);
        }
        body["messages"] = Value::Array(messages);
        // Blocks only when one is marked: the plain form is the one every compatible
        // server takes.
        if caching && let Some(system) = system {
            body["system"] = Value::Array(system);
        } else if !request.system.is_empty() {
            body["system"] = Value::String(request.system.to_string());
        }
        if !tools.is_empty() {
            body["tools"] = Value::Array(tools);
        }
        if self.thinking_budget_tokens > 0 {
            // The API requires the output budget to exceed the thinking budget.
            max_tokens = max_tokens.max(self.thinking_budget_tokens.saturating_add(1024));
            body["thinking"] = json!({"type": "enabled", "budget_tokens": self.thinking_budget_tokens});
        }
        body["max_tokens"] = json!(max_tokens);
        body
    }
}

/// Makes `block` a cache breakpoint.
fn mark(block: &mut Value) {
    block["cache_control"] = json!({"type": "ephemeral"});
}

/// Marks the last block that may carry a breakpoint (thinking blocks may not) of the last
/// message, and of the last user message before the last assistant message: the end of
/// the request before this one, whose prefix that request wrote.
fn mark_conversation(messages: &mut [Value]) {
    let last_assistant = messages.iter().rposition(|m| m["role"] == "assistant");
    let previous_end = last_assistant.and_then(|at| at.checked_sub(1));
    let ends = [previous_end, messages.len().checked_sub(1)];
    for index in ends.into_iter().flatten() {
        let blocks = messages[index]["content"].as_array_mut();
        let markable = blocks.and_then(|blocks| {
            blocks
                .iter_mut()
                .rev()
                .find(|block| !matches!(block["type"].as_str(), Some("thinking" | "redacted_thinking")))
        });
        if let Some(block) = markable {
            mark(block);
        }
    }
}

impl ModelClient for AnthropicClient {
    fn provider(&self) -> &'static str {
        "anthropic"
    }

    fn model(&self) -> &str {
        &self.model
    }

    fn stream(&self, request: &ModelRequest<'_>) -> BoxFuture<'static, Result<ModelStream, LlmError>> {
        let body = self.request_body(request);
        let mut builder = self
            .http
            .post(&self.url)
            .header("anthropic-version", &self.version)
            .header("accept", "text/event-stream")
            .json(&body);
        // No key (a server on this machine): no empty header saying there is one.
        if !self.api_key.is_empty() {
            builder = builder.header("x-api-key", &self.api_key);
        }
        let url = self.url.clone();
        let idle = self.idle_timeout_s;
        let limits = TimeLimits {
            idle: std::time::Duration::from_secs(idle),
            deadline: tokio::time::Instant::now() + std::time::Duration::from_secs(self.call_deadline_s),
            deadline_s: self.call_deadline_s,
        };
        Box::pin(async move {
            let response = open_stream(builder, &url, idle, limits.deadline, limits.deadline_s).await?;
            Ok(decode_stream_within(
                response.bytes_stream(),
                AnthropicDecoder::default(),
                move |err: reqwest::Error| transport_error(&url, &err, idle),
                limits,
            ))
        })
    }
}

/// Converts the history to Anthropic messages: tool results travel in user messages and
/// consecutive messages of one role are merged, as the API requires alternation.
pub fn messages_to_wire(messages: &[Message]) -> Vec<Value> {
    let mut wire: Vec<(&'static str, Vec<Value>)> = Vec::new();
    for message in messages {
        let role = match message.role {
            Role::User | Role::Tool => "user",
            Role::Assistant => "assistant",
        };
        let blocks: Vec<Value> = message.content.iter().filter_map(block_to_wire).collect();
        if blocks.is_empty() {
            continue;
        }
        match wire.last_mut() {
            Some((last_role, last_blocks)) if *last_role == role => last_blocks.extend(blocks),
            _ => wire.push((role, blocks)),
        }
    }
    wire.into_iter()
        .map(|(role, content)| json!({"role": role, "content": content}))
        .collect()
}

fn block_to_wire(block: &ContentBlock) -> Option<Value> {
    match block {
        ContentBlock::Text { text } if text.is_empty() => None,
        ContentBlock::Text { text } => Some(json!({"type": "text", "text": text})),
        // Unsigned thinking (from another provider, or cut by an interruption) would be
        // refused by the API, so only signed thinking is replayed.
        ContentBlock::Thinking {
            thinking,
            signature: Some(signature),
            ..
        } => Some(json!({"type": "thinking", "thinking": thinking, "signature": signature})),
        ContentBlock::Thinking { signature: None, .. } => None,
        ContentBlock::RedactedThinking { data } => Some(json!({"type": "redacted_thinking", "data": data})),
        ContentBlock::ToolUse { id, name, input } => {
            Some(json!({"type": "tool_use", "id": id, "name": name, "input": input}))
        }
        ContentBlock::ToolResult {
            tool_use_id,
            content,
            is_error,
        } => Some(json!({
            "type": "tool_result",
            "tool_use_id": tool_use_id,
            "content": content,
            "is_error": is_error,
        })),
    }
}

/// One content block as it streams in.
#[derive(Debug)]
enum PartialBlock {
    Text(String),
    Thinking {
        text: String,
        signature: String,
    },
    Redacted(String),
    ToolUse {
        id: String,
        name: String,
        json: String,
    },
    /// A block type this client does not know (e.g. server tools); skipped.
    Unknown,
}

/// The Anthropic stream format as a state machine.
#[derive(Debug, Default)]
pub struct AnthropicDecoder {
    blocks: Vec<PartialBlock>,
    usage: Usage,
    stop_reason: Option<String>,
    saw_message_delta: bool,
    complete: bool,
    budget: ReplyBudget,
}

impl AnthropicDecoder {
    fn block_mut(&mut self, index: usize) -> Result<&mut PartialBlock, LlmError> {
        self.blocks
            .get_mut(index)
            .ok_or_else(|| LlmError::Malformed(format!("delta for unknown content block {index}")))
    }

    fn finish(&mut self, out: &mut Vec<ModelEvent>) {
        let mut content = Vec::new();
        let mut invalid_arguments: Vec<InvalidArguments> = Vec::new();
        for block in std::mem::take(&mut self.blocks) {
            match block {
                PartialBlock::Text(text) if text.is_empty() => {}
                PartialBlock::Text(text) => content.push(ContentBlock::Text { text }),
                PartialBlock::Thinking { text, signature } => content.push(ContentBlock::Thinking {
                    thinking: text,
                    signature: (!signature.is_empty()).then_some(signature),
                    reasoning_details: None,
                }),
                PartialBlock::Redacted(data) => content.push(ContentBlock::RedactedThinking { data }),
                PartialBlock::ToolUse { id, name, json } => {
                    let input = match parse_tool_arguments(&json) {
                        Ok(input) => input,
                        Err(error) => {
                            invalid_arguments.push(InvalidArguments {
                                call_id: id.clone(),
                                error,
                            });
                            Value::Object(Default::default())
                        }
                    };
                    content.push(ContentBlock::ToolUse { id, name, input });
                }
                PartialBlock::Unknown => {}
            }
        }
        let has_tools = content
            .iter()
            .any(|block| matches!(block, ContentBlock::ToolUse { .. }));
        let stop_reason = match self.stop_reason.as_deref() {
            Some("end_turn" | "stop_sequence") => StopReason::EndTurn,
            Some("tool_use") => StopReason::ToolUse,
            Some("max_tokens") => StopReason::MaxTokens,
            None if has_tools => StopReason::ToolUse,
            None => StopReason::EndTurn,
            Some(_) => StopReason::Other,
        };
        out.push(ModelEvent::Completed(ModelResponse {
            content,
            stop_reason,
            usage: self.usage.sane(),
            invalid_arguments,
            usage_estimated: false,
        }));
        self.complete = true;
    }

    /// The reply's opening: the prompt's tokens.
    fn on_message_start(&mut self, json: &Value, out: &mut Vec<ModelEvent>) {
        let usage = json.pointer("/message/usage");
        let count = |key: &str| {
            usage
                .and_then(|u| u.get(key))
                .and_then(Value::as_u64)
                .unwrap_or(0)
        };
        // Saturating: a garbled count must not overflow (a panic in debug builds).
        // `input_tokens` is only what was neither read from nor written to the
        // cache; the prompt is all three.
        self.usage.cache_read_tokens = count("cache_read_input_tokens");
        self.usage.cache_write_tokens = count("cache_creation_input_tokens");
        self.usage.input_tokens = count("input_tokens")
            .saturating_add(self.usage.cache_write_tokens)
            .saturating_add(self.usage.cache_read_tokens);
        self.usage.output_tokens = count("output_tokens");
        out.push(ModelEvent::Usage(self.usage.sane()));
    }

    /// A content block opens (text, thinking, a tool call, or one this client skips).
    fn on_block_start(&mut self, json: &Value, out: &mut Vec<ModelEvent>) -> Result<(), LlmError> {
        let index = index_of(json)?;
        let block = json.get("content_block").cloned().unwrap_or(Value::Null);
        self.budget.take(
            ["/text", "/thinking", "/signature", "/data", "/id", "/name"]
                .iter()
                .map(|pointer| str_at(&block, pointer).len())
                .sum(),
        )?;
        // Text a block starts with is streamed like a delta (the API starts blocks
        // empty; compatible servers may not), so what streamed is the whole reply.
        let partial = match str_at(&block, "/type") {
            "text" => {
                let text = str_at(&block, "/text");
                if !text.is_empty() {
                    out.push(ModelEvent::TextDelta(text.to_string()));
                }
                PartialBlock::Text(text.to_string())
            }
            "thinking" => {
                let text = str_at(&block, "/thinking");
                if !text.is_empty() {
                    out.push(ModelEvent::ThinkingDelta(text.to_string()));
                }
                PartialBlock::Thinking {
                    text: text.to_string(),
                    signature: str_at(&block, "/signature").to_string(),
                }
            }
            "redacted_thinking" => PartialBlock::Redacted(str_at(&block, "/data").to_string()),
            "tool_use" => PartialBlock::ToolUse {
                id: str_at(&block, "/id").to_string(),
                name: str_at(&block, "/name").to_string(),
                json: String::new(),
            },
            _ => PartialBlock::Unknown,
        };
        if self.blocks.len() <= index {
            self.blocks.resize_with(index + 1, || PartialBlock::Unknown);
        }
        self.blocks[index] = partial;
        Ok(())
    }

    /// A piece of an open content block.
    fn on_block_delta(&mut self, json: &Value, out: &mut Vec<ModelEvent>) -> Result<(), LlmError> {
        let index = index_of(json)?;
        let delta = json.get("delta").cloned().unwrap_or(Value::Null);
        // Only one of these is in a real delta.
        self.budget.take(
            ["/text", "/thinking", "/signature", "/partial_json"]
                .iter()
                .map(|pointer| str_at(&delta, pointer).len())
                .sum(),
        )?;
        let block = self.block_mut(index)?;
        match (str_at(&delta, "/type"), block) {
            ("text_delta", PartialBlock::Text(text)) => {
                let piece = str_at(&delta, "/text");
                text.push_str(piece);
                out.push(ModelEvent::TextDelta(piece.to_string()));
            }
            ("thinking_delta", PartialBlock::Thinking { text, .. }) => {
                let piece = str_at(&delta, "/thinking");
                text.push_str(piece);
                out.push(ModelEvent::ThinkingDelta(piece.to_string()));
            }
            ("signature_delta", PartialBlock::Thinking { signature, .. }) => {
                signature.push_str(str_at(&delta, "/signature"));
            }
            ("input_json_delta", PartialBlock::ToolUse { json, .. }) => {
                json.push_str(str_at(&delta, "/partial_json"));
            }
            (_, PartialBlock::Unknown) => {}
            (other, _) => {
                return Err(LlmError::Malformed(format!(
                    "delta `{other}` does not fit content block {index}"
                )));
            }
        }
        Ok(())
    }

    /// The reply's closing figures: its stop reason and token counts.
    fn on_message_delta(&mut self, json: &Value, out: &mut Vec<ModelEvent>) {
        self.saw_message_delta = true;
        if let Some(reason) = json.pointer("/delta/stop_reason").and_then(Value::as_str) {
            self.stop_reason = Some(reason.to_string());
        }
        if let Some(tokens) = json.pointer("/usage/output_tokens").and_then(Value::as_u64) {
            self.usage.output_tokens = tokens;
        }
        // Some compatible servers report the prompt only here.
        let count = |key: &str| json.pointer(&format!("/usage/{key}")).and_then(Value::as_u64);
        if let Some(tokens) = count("cache_read_input_tokens") {
            self.usage.cache_read_tokens = self.usage.cache_read_tokens.max(tokens);
        }
        if let Some(tokens) = count("cache_creation_input_tokens") {
            self.usage.cache_write_tokens = self.usage.cache_write_tokens.max(tokens);
        }
        if let Some(tokens) = count("input_tokens") {
            let prompt = tokens
                .saturating_add(self.usage.cache_read_tokens)
                .saturating_add(self.usage.cache_write_tokens);
            self.usage.input_tokens = self.usage.input_tokens.max(prompt);
        }
        if json.get("usage").is_some() {
            out.push(ModelEvent::Usage(self.usage.sane()));
        }
    }
}

fn str_at<'a>(value: &'a Value, pointer: &str) -> &'a str {
    value.pointer(pointer).and_then(Value::as_str).unwrap_or("")
}

impl SseDecoder for AnthropicDecoder {
    fn on_event(&mut self, event: &str, data: &str, out: &mut Vec<ModelEvent>) -> Result<(), LlmError> {
        if data.is_empty() {
            return Ok(());
        }
        let json = parse_json(event, data)?;
        // The payload's own `type` is authoritative; the SSE event name repeats it.
        let kind = json.get("type").and_then(Value::as_str).unwrap_or(event);
        match kind {
            "message_start" => self.on_message_start(&json, out),
            "content_block_start" => self.on_block_start(&json, out)?,
            "content_block_delta" => self.on_block_delta(&json, out)?,
            "message_delta" => self.on_message_delta(&json, out),
            "message_stop" => self.finish(out),
            "error" => {
                return Err(LlmError::StreamError {
                    kind: str_at(&json, "/error/type").to_string(),
                    message: str_at(&json, "/error/message").to_string(),
                });
            }
            // ping, content_block_stop and future event types carry nothing we need.
            _ => {}
        }
        Ok(())
    }

    fn is_complete(&self) -> bool {
        self.complete
    }

    fn reply_bytes(&self) -> usize {
        self.budget.used()
    }

    fn on_eof(&mut self, out: &mut Vec<ModelEvent>) -> Result<(), LlmError> {
        // A stream that reached message_delta has its stop reason and every block; some
        // compatible servers close without message_stop.
        if self.saw_message_delta {
            self.finish(out);
            return Ok(());
        }
        Err(LlmError::StreamBroken(
            "the stream ended before the reply was complete".to_string(),
        ))
    }
}

fn index_of(json: &Value) -> Result<usize, LlmError> {
    json.get("index")
        .and_then(Value::as_u64)
        .and_then(|i| usize::try_from(i).ok())
        .filter(|i| *i < 4096)
        .ok_or_else(|| LlmError::Malformed("content block event without a valid index".to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    fn feed(decoder: &mut AnthropicDecoder, events: &[(&str, Value)]) -> Vec<ModelEvent> {
        let mut out = Vec::new();
        for (name, data) in events {
            decoder.on_event(name, &data.to_string(), &mut out).unwrap();
        }
        out
    }

    #[test]
    fn decodes_thinking_text_and_tool_use_in_order() {
        let mut decoder = AnthropicDecoder::default();
        let out = feed(
            &mut decoder,
            &[
                (
                    "message_start",
                    json!({"type": "message_start", "message": {"usage": {"input_tokens": 10, "cache_read_input_tokens": 5, "output_tokens": 1}}}),
                ),
                (
                    "content_block_start",
                    json!({"type": "content_block_start", "index": 0, "content_block": {"type": "thinking", "thinking": ""}}),
                ),
                (
                    "content_block_delta",
                    json!({"type": "content_block_delta", "index": 0, "delta": {"type": "thinking_delta", "thinking": "hmm"}}),
                ),
                (
                    "content_block_delta",
                    json!({"type": "content_block_delta", "index": 0, "delta": {"type": "signature_delta", "signature": "sig"}}),
                ),
                (
                    "content_block_start",
                    json!({"type": "content_block_start", "index": 1, "content_block": {"type": "text", "text": ""}}),
                ),
                (
                    "content_block_delta",
                    json!({"type": "content_block_delta", "index": 1, "delta": {"type": "text_delta", "text": "Hi"}}),
                ),
                (
                    "content_block_start",
                    json!({"type": "content_block_start", "index": 2, "content_block": {"type": "tool_use", "id": "t1", "name": "bash", "input": {}}}),
                ),
                (
                    "content_block_delta",
                    json!({"type": "content_block_delta", "index": 2, "delta": {"type": "input_json_delta", "partial_json": "{\"command\":"}}),
                ),
                (
                    "content_block_delta",
                    json!({"type": "content_block_delta", "index": 2, "delta": {"type": "input_json_delta", "partial_json": "\"ls\"}"}}),
                ),
                (
                    "message_delta",
                    json!({"type": "message_delta", "delta": {"stop_reason": "tool_use"}, "usage": {"output_tokens": 7}}),
                ),
                ("message_stop", json!({"type": "message_stop"})),
            ],
        );
        assert!(decoder.is_complete());
        let started = Usage {
            input_tokens: 15,
            output_tokens: 1,
            cache_read_tokens: 5,
            cache_write_tokens: 0,
        };
        assert_eq!(
            out,
            vec![
                // The prompt's count as soon as the reply starts, for a reply cut short.
                ModelEvent::Usage(started),
                ModelEvent::ThinkingDelta("hmm".into()),
                ModelEvent::TextDelta("Hi".into()),
                ModelEvent::Usage(Usage {
                    output_tokens: 7,
                    ..started
                }),
                ModelEvent::Completed(ModelResponse {
                    content: vec![
                        ContentBlock::Thinking {
                            thinking: "hmm".into(),
                            signature: Some("sig".into()),
                            reasoning_details: None
                        },
                        ContentBlock::Text { text: "Hi".into() },
                        ContentBlock::ToolUse {
                            id: "t1".into(),
                            name: "bash".into(),
                            input: json!({"command": "ls"})
                        },
                    ],
                    stop_reason: StopReason::ToolUse,
                    usage: Usage {
                        input_tokens: 15,
                        output_tokens: 7,
                        cache_read_tokens: 5,
                        cache_write_tokens: 0,
                    },
                    invalid_arguments: vec![],
                    usage_estimated: false,
                }),
            ]
        );
    }

    #[test]
    fn invalid_tool_json_is_reported_not_fatal() {
        let mut decoder = AnthropicDecoder::default();
        let out = feed(
            &mut decoder,
            &[
                (
                    "content_block_start",
                    json!({"type": "content_block_start", "index": 0, "content_block": {"type": "tool_use", "id": "t1", "name": "bash", "input": {}}}),
                ),
                (
                    "content_block_delta",
                    json!({"type": "content_block_delta", "index": 0, "delta": {"type": "input_json_delta", "partial_json": "{\"command\": "}}),
                ),
                (
                    "message_delta",
                    json!({"type": "message_delta", "delta": {"stop_reason": "max_tokens"}, "usage": {"output_tokens": 7}}),
                ),
                ("message_stop", json!({"type": "message_stop"})),
            ],
        );
        let Some(ModelEvent::Completed(response)) = out.last() else {
            panic!("no completion: {out:?}");
        };
        assert_eq!(response.stop_reason, StopReason::MaxTokens);
        assert_eq!(response.invalid_arguments.len(), 1);
        assert_eq!(response.invalid_arguments[0].call_id, "t1");
        assert!(
            response.invalid_arguments[0].error.contains("EOF"),
            "{:?}",
            response.invalid_arguments
        );
    }

    #[test]
    fn huge_token_counts_are_not_taken_and_initial_block_text_streams() {
        // Found by tests/fuzz: the counts overflowed, and a block's initial text was in
        // the reply but never streamed.
        let mut decoder = AnthropicDecoder::default();
        let out = feed(
            &mut decoder,
            &[
                (
                    "message_start",
                    json!({"type": "message_start", "message": {"usage": {"input_tokens": u64::MAX, "cache_read_input_tokens": 5}}}),
                ),
                (
                    "content_block_start",
                    json!({"type": "content_block_start", "index": 0, "content_block": {"type": "thinking", "thinking": "so"}}),
                ),
                (
                    "content_block_start",
                    json!({"type": "content_block_start", "index": 1, "content_block": {"type": "text", "text": "Hi"}}),
                ),
                (
                    "content_block_delta",
                    json!({"type": "content_block_delta", "index": 1, "delta": {"type": "text_delta", "text": " there"}}),
                ),
                ("message_stop", json!({"type": "message_stop"})),
            ],
        );
        // Not taken as it streams either.
        assert_eq!(out[0], ModelEvent::Usage(Usage::default()));
        assert_eq!(
            out[1..4],
            [
                ModelEvent::ThinkingDelta("so".into()),
                ModelEvent::TextDelta("Hi".into()),
                ModelEvent::TextDelta(" there".into()),
            ]
        );
        let Some(ModelEvent::Completed(response)) = out.last() else {
            panic!("no completion: {out:?}");
        };
        // Summed without overflowing, then refused as no count at all: no call uses more
        // than `MAX_REPORTED_TOKENS`.
        assert_eq!(response.usage.input_tokens, 0);
        assert_eq!(
            response.content[1],
            ContentBlock::Text {
                text: "Hi there".into()
            }
        );
    }

    #[test]
    fn error_event_and_bad_json_are_errors() {
        let mut decoder = AnthropicDecoder::default();
        let mut out = Vec::new();
        let err = decoder
            .on_event(
                "error",
                r#"{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}"#,
                &mut out,
            )
            .unwrap_err();
        assert!(err.is_retryable());
        let err = decoder
            .on_event("content_block_delta", "{\"type\": \"content_blo", &mut out)
            .unwrap_err();
        assert!(matches!(err, LlmError::Malformed(_)), "{err:?}");
    }

    #[test]
    fn history_converts_with_merged_roles_and_signed_thinking_only() {
        let history = vec![
            Message::user("hi"),
            Message {
                role: Role::Assistant,
                content: vec![
                    ContentBlock::Thinking {
                        thinking: "signed".into(),
                        signature: Some("s".into()),
                        reasoning_details: None,
                    },
                    ContentBlock::Thinking {
                        thinking: "unsigned".into(),
                        signature: None,
                        reasoning_details: None,
                    },
                    ContentBlock::ToolUse {
                        id: "t1".into(),
                        name: "bash".into(),
                        input: json!({"command": "ls"}),
                    },
                ],
            },
            Message {
                role: Role::Tool,
                content: vec![ContentBlock::ToolResult {
                    tool_use_id: "t1".into(),
                    content: "a.txt".into(),
                    is_error: false,
                }],
            },
            Message::user("and now?"),
        ];
        assert_eq!(
            messages_to_wire(&history),
            vec![
                json!({"role": "user", "content": [{"type": "text", "text": "hi"}]}),
                json!({"role": "assistant", "content": [
                    {"type": "thinking", "thinking": "signed", "signature": "s"},
                    {"type": "tool_use", "id": "t1", "name": "bash", "input": {"command": "ls"}},
                ]}),
                json!({"role": "user", "content": [
                    {"type": "tool_result", "tool_use_id": "t1", "content": "a.txt", "is_error": false},
                    {"type": "text", "text": "and now?"},
                ]}),
            ]
        );
    }
}
