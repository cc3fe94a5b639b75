//! OpenAI Chat Completions, streamed (`POST {base}/chat/completions`), including the
//! reasoning extensions of compatible providers (`reasoning_content`, `reasoning_details`).

use futures_util::future::BoxFuture;
use serde_json::{Map, Value, json};

mod wire;

pub use wire::messages_to_wire;

use super::sse::{SseDecoder, TimeLimits, decode_stream_within, parse_json};
use super::{
    InvalidArguments, LlmError, ModelClient, ModelEvent, ModelRequest, ModelResponse, ModelStream,
    PromptCache, ReplyBudget, Usage, endpoint, open_stream, parse_tool_arguments, transport_error,
};
use super::{ModelConfig, Provider, ProviderSpec, ReasoningField};
use miniagent_protocol::StopReason;
use miniagent_protocol::message::ContentBlock;

/// Client for OpenAI Chat Completions and compatible endpoints.
pub struct OpenAiClient {
    http: reqwest::Client,
    url: String,
    api_key: String,
    model: String,
    /// MiniMax splits reasoning into `reasoning_details` only when asked.
    ask_reasoning_split: bool,
    /// Where earlier reasoning goes back (`model.send_reasoning`, resolved by host).
    reasoning: ReasoningField,
    /// OpenAI's own API takes the reply's limit as `max_completion_tokens`.
    completion_tokens_field: bool,
    /// Whether requests carry `prompt_cache_key` (`model.prompt_cache_key`).
    send_cache_key: bool,
    idle_timeout_s: u64,
    call_deadline_s: u64,
}

/// The provider, for the registry (`llm::PROVIDERS`).
pub(super) const SPEC: ProviderSpec = ProviderSpec {
    name: "openai",
    owner: &super::endpoint::OPENAI,
    // Streams without the organisation check OpenAI asks for before streaming GPT-5.
    default_model: "gpt-4.1",
    minimax_path: "/v1",
    client: |http, base, api_key, config| std::sync::Arc::new(OpenAiClient::new(http, base, api_key, config)),
};

impl Provider {
    #[allow(non_upper_case_globals)] // Reads as the variant it was: `Provider::Openai`.
    pub const Openai: Provider = Provider::of(&SPEC);
}

impl OpenAiClient {
    pub fn new(http: reqwest::Client, base: String, api_key: String, config: &ModelConfig) -> Self {
        Self {
            http,
            url: endpoint::request_url(&base, "/chat/completions"),
            api_key,
            model: config.model.clone(),
            ask_reasoning_split: endpoint::is_minimax(&config.base_url),
            reasoning: match config.send_reasoning {
                ReasoningField::Auto => endpoint::reasoning_field_for(&config.base_url),
                chosen => chosen,
            },
            completion_tokens_field: endpoint::is_openai_api(&config.base_url),
            send_cache_key: match config.prompt_cache_key {
                super::CacheKeyField::Auto => endpoint::is_openai_itself(&config.base_url),
                super::CacheKeyField::Always => true,
                super::CacheKeyField::Never => false,
            },
            idle_timeout_s: config.stream_idle_timeout_s,
            call_deadline_s: config.call_deadline_s,
        }
    }

    /// The JSON body for a request.
    pub fn request_body(&self, request: &ModelRequest<'_>) -> Value {
        let mut messages = Vec::with_capacity(request.messages.len() + 1);
        if !request.system.is_empty() {
            messages.push(json!({"role": "system", "content": request.system}));
        }
        messages.extend(messages_to_wire(request.messages, self.reasoning));
        let mut body = json!({
            "model": self.model,
            "messages": messages,
            "stream": true,
            "stream_options": {"include_usage": true},
        });
        let limit_field = if self.completion_tokens_field {
            "max_completion_tokens"
        } else {
            "max_tokens"
        };
        body[limit_field] = json!(request.max_output_tokens);
        if !request.tools.is_empty() {
            body["tools"] = request
                .tools
                .iter()
                .map(|tool| {
                    json!({
                        "type": "function",
                        "function": {
                            "name": tool.name,
                            "description": tool.description,
                            "parameters": tool.input_schema,
                        },
                    })
                })
                .collect();
        }
        if self.ask_reasoning_split {
            body["reasoning_split"] = Value::Bool(true);
        }
        // OpenAI caches every prompt's prefix by itself; the key keeps one session's
        // requests on the same cache. Other servers may refuse the field.
        if let PromptCache::On { key: Some(key) } = request.cache
            && self.send_cache_key
        {
            body["prompt_cache_key"] = Value::String(key.to_string());
        }
        body
    }
}

impl ModelClient for OpenAiClient {
    fn provider(&self) -> &'static str {
        "openai"
    }

    fn model(&self) -> &str {
        &self.model
    }

    fn stream(&self, request: &ModelRequest<'_>) -> BoxFuture<'static, Result<ModelStream, LlmError>> {
        let body = self.request_body(request);
        let mut builder = self
            .http
            .post(&self.url)
            .header("accept", "text/event-stream")
            .json(&body);
        // No key (a server on this machine): no empty `Bearer` saying there is one.
        if !self.api_key.is_empty() {
            builder = builder.bearer_auth(&self.api_key);
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
                OpenAiDecoder::default(),
                move |err: reqwest::Error| transport_error(&url, &err, idle),
                limits,
            ))
        })
    }
}

#[derive(Debug, Default)]
struct PartialCall {
    id: String,
    name: String,
    arguments: String,
}

/// The Chat Completions stream format as a state machine.
#[derive(Debug, Default)]
pub struct OpenAiDecoder {
    text: String,
    thinking: String,
    /// `reasoning_details` items, merged by their `index`.
    details: Vec<Map<String, Value>>,
    calls: Vec<PartialCall>,
    finish_reason: Option<String>,
    usage: Usage,
    complete: bool,
    /// Whether any chunk carried the choice asked for.
    saw_choice: bool,
    budget: ReplyBudget,
}

/// Roughly the bytes `value` holds (its strings and a little per item): what a
/// `reasoning_details` field costs the reply's budget.
fn value_bytes(value: &Value) -> usize {
    match value {
        Value::String(text) => text.len(),
        Value::Array(items) => items.iter().map(value_bytes).sum::<usize>() + 8,
        Value::Object(map) => map.iter().map(|(k, v)| k.len() + value_bytes(v)).sum::<usize>() + 8,
        Value::Null | Value::Bool(_) | Value::Number(_) => 8,
    }
}

impl OpenAiDecoder {
    fn merge_detail(&mut self, item: &Map<String, Value>, out: &mut Vec<ModelEvent>) -> Result<(), LlmError> {
        let position = item
            .get("index")
            .and_then(Value::as_u64)
            .and_then(|i| usize::try_from(i).ok())
            .filter(|i| *i < 4096)
            .unwrap_or(self.details.len().saturating_sub(1));
        if self.details.len() <= position {
            self.details.resize_with(position + 1, Map::new);
        }
        let merged = &mut self.details[position];
        for (key, value) in item {
            // Appended text costs its length; a replaced field, what it grows by (fields
            // such as `id` and `type` repeat in every chunk and cost nothing again).
            let cost = match (key.as_str(), value, merged.get(key)) {
                ("text" | "summary", Value::String(piece), _) => piece.len(),
                (_, _, Some(old)) => value_bytes(value).saturating_sub(value_bytes(old)),
                (_, _, None) => key.len() + value_bytes(value),
            };
            self.budget.take(cost)?;
            match (key.as_str(), value, merged.get_mut(key)) {
                ("text" | "summary", Value::String(piece), Some(Value::String(existing))) => {
                    existing.push_str(piece);
                }
                _ => {
                    merged.insert(key.clone(), value.clone());
                }
            }
            if let ("text" | "summary", Value::String(piece)) = (key.as_str(), value) {
                self.thinking.push_str(piece);
                out.push(ModelEvent::ThinkingDelta(piece.clone()));
            }
        }
        Ok(())
    }

    fn on_delta(&mut self, delta: &Value, out: &mut Vec<ModelEvent>) -> Result<(), LlmError> {
        if let Some(Value::Array(items)) = delta.get("reasoning_details") {
            for item in items {
                if let Value::Object(item) = item {
                    self.merge_detail(item, out)?;
                }
            }
        }
        // Some providers send the same reasoning both ways; details win when present.
        if self.details.is_empty() {
            for key in ["reasoning_content", "reasoning"] {
                if let Some(piece) = delta.get(key).and_then(Value::as_str)
                    && !piece.is_empty()
                {
                    self.budget.take(piece.len())?;
                    self.thinking.push_str(piece);
                    out.push(ModelEvent::ThinkingDelta(piece.to_string()));
                    break;
                }
            }
        }
        if let Some(piece) = delta.get("content").and_then(Value::as_str)
            && !piece.is_empty()
        {
            self.budget.take(piece.len())?;
            self.text.push_str(piece);
            out.push(ModelEvent::TextDelta(piece.to_string()));
        }
        if let Some(Value::Array(calls)) = delta.get("tool_calls") {
            for (position, call) in calls.iter().enumerate() {
                let index = call
                    .get("index")
                    .and_then(Value::as_u64)
                    .and_then(|i| usize::try_from(i).ok())
                    .filter(|i| *i < 4096)
                    .unwrap_or(position);
                if self.calls.len() <= index {
                    self.calls.resize_with(index + 1, PartialCall::default);
                }
                let id = call.get("id").and_then(Value::as_str).unwrap_or("");
                let name = call
                    .pointer("/function/name")
                    .and_then(Value::as_str)
                    .unwrap_or("");
                let args = call
                    .pointer("/function/arguments")
                    .and_then(Value::as_str)
                    .unwrap_or("");
                self.budget.take(id.len() + name.len() + args.len())?;
                let partial = &mut self.calls[index];
                if let Some(id) = call.get("id").and_then(Value::as_str)
                    && !id.is_empty()
                {
                    partial.id = id.to_string();
                }
                if let Some(name) = call.pointer("/function/name").and_then(Value::as_str) {
                    partial.name.push_str(name);
                }
                if let Some(args) = call.pointer("/function/arguments").and_then(Value::as_str) {
                    partial.arguments.push_str(args);
                }
            }
        }
        Ok(())
    }

    /// Ends the reply: [`ModelEvent::Completed`], unless it was filtered or there was
    /// none (which would otherwise end the turn as if the model had nothing to say).
    fn finish(&mut self, out: &mut Vec<ModelEvent>) -> Result<(), LlmError> {
        if !self.saw_choice {
            return Err(LlmError::NoReply("the stream carried no choices".to_string()));
        }
        if self.finish_reason.as_deref() == Some("content_filter") {
            return Err(LlmError::NoReply(
                "the provider's content filter stopped the reply (finish_reason `content_filter`)"
                    .to_string(),
            ));
        }
        let mut content = Vec::new();
        if !self.thinking.is_empty() || !self.details.is_empty() {
            let details = std::mem::take(&mut self.details);
            content.push(ContentBlock::Thinking {
                thinking: std::mem::take(&mut self.thinking),
                signature: None,
                reasoning_details: (!details.is_empty())
                    .then(|| Value::Array(details.into_iter().map(Value::Object).collect())),
            });
        }
        if !self.text.is_empty() {
            content.push(ContentBlock::Text {
                text: std::mem::take(&mut self.text),
            });
        }
        let mut invalid_arguments = Vec::new();
        for (index, call) in std::mem::take(&mut self.calls).into_iter().enumerate() {
            if call.name.is_empty() && call.arguments.is_empty() {
                continue;
            }
            let id = if call.id.is_empty() {
                format!("call_{index}_{:08x}", fastrand::u32(..))
            } else {
                call.id
            };
            let input = match parse_tool_arguments(&call.arguments) {
                Ok(input) => input,
                Err(error) => {
                    invalid_arguments.push(InvalidArguments {
                        call_id: id.clone(),
                        error,
                    });
                    Value::Object(Map::new())
                }
            };
            content.push(ContentBlock::ToolUse {
                id,
                name: call.name,
                input,
            });
        }
        let has_tools = content
            .iter()
            .any(|block| matches!(block, ContentBlock::ToolUse { .. }));
        let stop_reason = match self.finish_reason.as_deref() {
            Some("stop") => StopReason::EndTurn,
            Some("tool_calls" | "function_call") => StopReason::ToolUse,
            Some("length") => StopReason::MaxTokens,
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
        Ok(())
    }
}

impl SseDecoder for OpenAiDecoder {
    fn on_event(&mut self, event: &str, data: &str, out: &mut Vec<ModelEvent>) -> Result<(), LlmError> {
        let data = data.trim();
        if data.is_empty() {
            return Ok(());
        }
        if data == "[DONE]" {
            return self.finish(out);
        }
        let json = parse_json(event, data)?;
        if let Some(error) = json.get("error").filter(|e| !e.is_null()) {
            let kind = error
                .get("type")
                .and_then(Value::as_str)
                .or_else(|| error.get("code").and_then(Value::as_str))
                .unwrap_or("error");
            return Err(LlmError::StreamError {
                kind: kind.to_string(),
                message: error
                    .get("message")
                    .and_then(Value::as_str)
                    .unwrap_or("(no message)")
                    .to_string(),
            });
        }
        if let Some(usage) = json.get("usage").filter(|u| !u.is_null()) {
            let count = |pointer: &str| usage.pointer(pointer).and_then(Value::as_u64).unwrap_or(0);
            self.usage = Usage {
                // Cached tokens are part of the prompt's count.
                input_tokens: count("/prompt_tokens"),
                output_tokens: count("/completion_tokens"),
                cache_read_tokens: count("/prompt_tokens_details/cached_tokens"),
                cache_write_tokens: 0,
            };
        }
        if let Some(Value::Array(choices)) = json.get("choices") {
            // One completion is asked for; other indices would be a provider quirk.
            for choice in choices
                .iter()
                .filter(|c| c.get("index").and_then(Value::as_u64).unwrap_or(0) == 0)
            {
                self.saw_choice = true;
                if let Some(delta) = choice.get("delta") {
                    self.on_delta(delta, out)?;
                }
                if let Some(reason) = choice.get("finish_reason").and_then(Value::as_str) {
                    self.finish_reason = Some(reason.to_string());
                }
            }
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
        // Some compatible servers close after the finish reason without `[DONE]`.
        if self.finish_reason.is_some() {
            return self.finish(out);
        }
        Err(LlmError::StreamBroken(
            "the stream ended before the reply was complete".to_string(),
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use miniagent_protocol::message::{Message, Role};
    use pretty_assertions::assert_eq;

    fn feed(decoder: &mut OpenAiDecoder, chunks: &[Value]) -> Vec<ModelEvent> {
        let mut out = Vec::new();
        for chunk in chunks {
            decoder.on_event("", &chunk.to_string(), &mut out).unwrap();
        }
        decoder.on_event("", "[DONE]", &mut out).unwrap();
        out
    }

    /// OpenAI's reasoning models (o-series, GPT-5) refuse `max_tokens`; OpenAI takes
    /// `max_completion_tokens` for every model. Other servers know only `max_tokens`.
    #[test]
    fn openai_itself_gets_max_completion_tokens() {
        let mut config = crate::config::built_in().model;
        let request = ModelRequest {
            system: "s",
            messages: &[],
            tools: &[],
            max_output_tokens: 1234,
            cache: PromptCache::On {
                key: Some("session-1"),
            },
        };
        let body = |config: &ModelConfig| {
            OpenAiClient::new(
                reqwest::Client::new(),
                config.base_url.clone(),
                String::new(),
                config,
            )
            .request_body(&request)
        };
        config.base_url = "https://api.openai.com/v1".into();
        let sent = body(&config);
        assert_eq!(sent["max_completion_tokens"], 1234);
        assert!(sent.get("max_tokens").is_none(), "{sent}");
        assert_eq!(sent["prompt_cache_key"], "session-1");
        // Groq, Cerebras and NVIDIA refuse fields they do not know.
        config.base_url = "https://api.groq.com/openai/v1".into();
        let sent = body(&config);
        assert_eq!(sent["max_tokens"], 1234);
        assert!(sent.get("max_completion_tokens").is_none(), "{sent}");
        assert!(sent.get("prompt_cache_key").is_none(), "{sent}");
        config.prompt_cache_key = super::super::CacheKeyField::Always;
        assert_eq!(body(&config)["prompt_cache_key"], "session-1");
        config.base_url = "https://api.openai.com/v1".into();
        config.prompt_cache_key = super::super::CacheKeyField::Never;
        assert!(body(&config).get("prompt_cache_key").is_none());
    }

    fn completed(out: &[ModelEvent]) -> &ModelResponse {
        match out.last() {
            Some(ModelEvent::Completed(response)) => response,
            other => panic!("not completed: {other:?}"),
        }
    }

    #[test]
    fn assembles_reasoning_details_text_and_indexed_tool_calls() {
        let mut decoder = OpenAiDecoder::default();
        let out = feed(
            &mut decoder,
            &[
                json!({"choices": [{"index": 0, "delta": {"role": "assistant", "reasoning_details": [{"type": "reasoning.text", "id": "r1", "format": "MiniMax-response-v1", "index": 0, "text": "Let me "}]}}]}),
                json!({"choices": [{"index": 0, "delta": {"reasoning_details": [{"type": "reasoning.text", "id": "r1", "format": "MiniMax-response-v1", "index": 0, "text": "look."}]}}]}),
                json!({"choices": [{"index": 0, "delta": {"content": "Sure"}}]}),
                json!({"choices": [{"index": 0, "delta": {"tool_calls": [{"index": 0, "id": "call_a", "type": "function", "function": {"name": "bash", "arguments": ""}}]}}]}),
                json!({"choices": [{"index": 0, "delta": {"tool_calls": [{"index": 1, "id": "call_b", "type": "function", "function": {"name": "read", "arguments": "{}"}}]}}]}),
                json!({"choices": [{"index": 0, "delta": {"tool_calls": [{"index": 0, "function": {"arguments": "{\"command\":\"ls\"}"}}]}}]}),
                json!({"choices": [{"index": 0, "delta": {}, "finish_reason": "tool_calls"}]}),
                json!({"choices": [], "usage": {"prompt_tokens": 11, "completion_tokens": 4}}),
            ],
        );
        let response = completed(&out);
        assert_eq!(
            response.content,
            vec![
                ContentBlock::Thinking {
                    thinking: "Let me look.".into(),
                    signature: None,
                    reasoning_details: Some(
                        json!([{"type": "reasoning.text", "id": "r1", "format": "MiniMax-response-v1", "index": 0, "text": "Let me look."}])
                    ),
                },
                ContentBlock::Text { text: "Sure".into() },
                ContentBlock::ToolUse {
                    id: "call_a".into(),
                    name: "bash".into(),
                    input: json!({"command": "ls"})
                },
                ContentBlock::ToolUse {
                    id: "call_b".into(),
                    name: "read".into(),
                    input: json!({})
                },
            ]
        );
        assert_eq!(response.stop_reason, StopReason::ToolUse);
        assert_eq!(
            response.usage,
            Usage {
                input_tokens: 11,
                output_tokens: 4,
                ..Usage::default()
            }
        );
        assert_eq!(
            out[..3].to_vec(),
            vec![
                ModelEvent::ThinkingDelta("Let me ".into()),
                ModelEvent::ThinkingDelta("look.".into()),
                ModelEvent::TextDelta("Sure".into()),
            ]
        );
    }

    #[test]
    fn reasoning_content_is_read_and_replayed_as_details() {
        let mut decoder = OpenAiDecoder::default();
        let out = feed(
            &mut decoder,
            &[
                json!({"choices": [{"index": 0, "delta": {"reasoning_content": "think"}}]}),
                json!({"choices": [{"index": 0, "delta": {"content": "answer"}, "finish_reason": "length"}]}),
            ],
        );
        let response = completed(&out);
        assert_eq!(response.stop_reason, StopReason::MaxTokens);
        let message = Message {
            role: Role::Assistant,
            content: response.content.clone(),
        };
        assert_eq!(
            wire::assistant_to_wire(&message, ReasoningField::Details),
            json!({"role": "assistant", "content": "answer", "reasoning_details": [{"type": "reasoning.text", "text": "think"}]})
        );
    }

    #[test]
    fn bad_tool_arguments_and_errors() {
        let mut decoder = OpenAiDecoder::default();
        let out = feed(
            &mut decoder,
            &[
                json!({"choices": [{"index": 0, "delta": {"tool_calls": [{"index": 0, "id": "c1", "function": {"name": "bash", "arguments": "{oops"}}]}, "finish_reason": "tool_calls"}]}),
            ],
        );
        let response = completed(&out);
        assert_eq!(response.invalid_arguments[0].call_id, "c1");
        assert!(
            response.invalid_arguments[0]
                .error
                .starts_with("arguments were not valid JSON")
        );

        let mut decoder = OpenAiDecoder::default();
        let err = decoder
            .on_event(
                "",
                r#"{"error": {"message": "boom", "type": "server_error"}}"#,
                &mut Vec::new(),
            )
            .unwrap_err();
        assert!(err.is_retryable());
        let mut decoder = OpenAiDecoder::default();
        assert!(decoder.on_eof(&mut Vec::new()).unwrap_err().is_retryable());
    }
}
