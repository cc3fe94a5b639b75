//! Model clients: one [`ModelClient`] trait, two streaming providers (Anthropic Messages
//! and OpenAI Chat Completions) in a registry of providers, the SSE decoding they share,
//! and the `[model]` settings they read.

pub mod anthropic;
pub mod endpoint;
mod key;
pub mod openai;
mod provider;
pub mod sse;
pub(crate) mod transport;

pub use key::ApiKey;
use key::NamedKeyClient;
pub use provider::{NAMES, PROVIDERS, Provider, ProviderSpec};
pub(crate) use transport::{error_chain, transport_error};

use std::pin::Pin;
use std::sync::Arc;
use std::time::Duration;

use futures_util::Stream;
use futures_util::future::BoxFuture;
use serde::{Deserialize, Serialize};

use miniagent_protocol::StopReason;
use miniagent_protocol::message::{ContentBlock, Message};

/// `[model]`: which model, where, and how to talk to it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ModelConfig {
    pub provider: Provider,
    pub base_url: String,
    pub model: String,
    pub api_key_env: String,
    pub max_output_tokens: u32,
    pub context_window: u64,
    pub thinking_budget_tokens: u32,
    pub anthropic_version: String,
    pub connect_timeout_s: u64,
    pub stream_idle_timeout_s: u64,
    /// The longest one attempt of a model call may take, start to end.
    pub call_deadline_s: u64,
    /// Ask the provider to cache the prompt's prefix (Anthropic `cache_control`
    /// breakpoints; OpenAI `prompt_cache_key`).
    pub prompt_caching: bool,
    /// Where the OpenAI protocol sends `prompt_cache_key` (with `prompt_caching` on).
    pub prompt_cache_key: CacheKeyField,
    /// How the OpenAI protocol gives the model its earlier reasoning back.
    pub send_reasoning: ReasoningField,
}

/// The field an OpenAI-compatible server takes the model's earlier reasoning back in.
/// Each is one provider's extension, and servers that refuse fields they do not know
/// refuse a request carrying the other (or either).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum ReasoningField {
    /// By the host: `reasoning_details` to MiniMax and OpenRouter, `reasoning_content`
    /// to DeepSeek, nothing to any other server.
    #[serde(rename = "auto")]
    Auto,
    /// `reasoning_details`, as received (MiniMax, OpenRouter).
    #[serde(rename = "reasoning_details")]
    Details,
    /// `reasoning_content`, as DeepSeek takes it: on every reply that called tools (an
    /// empty one where there was no reasoning: DeepSeek refuses such a reply without
    /// it), and on others that had reasoning.
    #[serde(rename = "reasoning_content")]
    Content,
    /// None: the reasoning stays in the session only.
    #[serde(rename = "none")]
    Off,
}

/// Whether requests in the OpenAI protocol carry `prompt_cache_key`. Several
/// OpenAI-compatible servers refuse a request with a field they do not know (Groq,
/// Cerebras, NVIDIA answer 400 or 422), and every one caches prefixes by itself anyway.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum CacheKeyField {
    /// Only to OpenAI's own API (`api.openai.com`).
    Auto,
    /// To every server (one known to take it).
    Always,
    Never,
}

/// A tool as the model sees it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ToolSpec {
    pub name: String,
    pub description: String,
    /// JSON schema of the arguments object.
    pub input_schema: serde_json::Value,
}

/// One model call, provider-neutral. It borrows the history so a step costs no copy.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ModelRequest<'a> {
    pub system: &'a str,
    pub messages: &'a [Message],
    pub tools: &'a [ToolSpec],
    pub max_output_tokens: u32,
    /// How the provider may cache this request's prompt.
    pub cache: PromptCache<'a>,
}

/// Whether, and under which key, a request's prompt is cached by the provider.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum PromptCache<'a> {
    /// Mark nothing (a one-off request such as a summary call, whose prefix no later
    /// request shares, or caching turned off).
    #[default]
    Off,
    /// Mark the stable prefix and the conversation's end; `key` (the session id) routes
    /// requests of one session to the same cache where the provider takes one.
    On { key: Option<&'a str> },
}

/// Token counts a provider reported for one call.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Usage {
    /// The whole prompt, cached parts included.
    pub input_tokens: u64,
    pub output_tokens: u64,
    /// Prompt tokens read from the provider's cache.
    #[serde(default)]
    pub cache_read_tokens: u64,
    /// Prompt tokens written to the provider's cache (Anthropic bills them above the
    /// input price).
    #[serde(default)]
    pub cache_write_tokens: u64,
}

/// More tokens than any call can use (the largest windows hold a few million): a
/// provider's count above it is garbled or hostile, and counts as not reported.
pub const MAX_REPORTED_TOKENS: u64 = 100_000_000;

impl Usage {
    /// The counts as far as they can be true: each at most [`MAX_REPORTED_TOKENS`] (else
    /// not reported), and the cache's parts at most the prompt they are part of.
    pub fn sane(self) -> Usage {
        let sane = |count: u64| if count > MAX_REPORTED_TOKENS { 0 } else { count };
        let input = sane(self.input_tokens);
        let cache_read = sane(self.cache_read_tokens).min(input);
        let cache_write = sane(self.cache_write_tokens).min(input - cache_read);
        Usage {
            input_tokens: input,
            output_tokens: sane(self.output_tokens),
            cache_read_tokens: cache_read,
            cache_write_tokens: cache_write,
        }
    }
}

/// A tool call whose arguments were not valid JSON; the loop answers it with this error.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct InvalidArguments {
    pub call_id: String,
    pub error: String,
}

/// The complete reply of one model call.
#[derive(Clone, Debug, PartialEq)]
pub struct ModelResponse {
    /// Blocks in the order the model produced them (thinking, text, tool calls).
    pub content: Vec<ContentBlock>,
    pub stop_reason: StopReason,
    pub usage: Usage,
    pub invalid_arguments: Vec<InvalidArguments>,
    /// `usage` is reckoned here: the provider reported none.
    pub usage_estimated: bool,
}

/// What a model stream yields.
#[derive(Clone, Debug, PartialEq)]
pub enum ModelEvent {
    ThinkingDelta(String),
    TextDelta(String),
    /// What the provider has reported of the call's token counts so far (Anthropic says
    /// the prompt's when the reply starts): what the meter counts if the reply never
    /// completes. The completed response carries the final counts.
    Usage(Usage),
    /// Always the last item of a successful stream.
    Completed(ModelResponse),
}

/// Why a model call failed.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum LlmError {
    /// `detail` says what failed in a few words ("connection refused"); the whole error
    /// chain went to the log when it happened.
    #[error("{detail} at {address}")]
    Connect { address: String, detail: String },
    /// The TLS handshake failed: the same again would fail the same way.
    #[error("the TLS handshake with {address} failed: {detail}")]
    Tls { address: String, detail: String },
    #[error("no data from the provider for {0} s")]
    Timeout(u64),
    #[error("HTTP {status} from the provider: {message}")]
    Status {
        status: u16,
        message: String,
        retry_after: Option<Duration>,
    },
    #[error("the stream broke: {0}")]
    StreamBroken(String),
    #[error("the provider reported an error mid-stream ({kind}): {message}")]
    StreamError { kind: String, message: String },
    #[error("malformed stream data: {0}")]
    Malformed(String),
    #[error("cannot send the request: {0}")]
    Request(String),
    /// A line, an event or the reply passed its size limit; reading stopped there.
    #[error("{0}")]
    TooLarge(String),
    /// The stream went on, but with keep-alives only, for this many seconds.
    #[error("no reply from the provider for {0} s (only keep-alives)")]
    Stalled(u64),
    /// The attempt passed `model.call_deadline_s`.
    #[error("the model call took longer than {0} s (model.call_deadline_s); stopped")]
    Deadline(u64),
    /// A successful status whose body is not an event stream (a login page, a proxy's
    /// error, a non-streamed reply).
    #[error("the provider's answer is not an event stream (HTTP {status}, {content_type}): {excerpt}")]
    NotEventStream {
        status: u16,
        content_type: String,
        excerpt: String,
    },
    /// The stream ended properly but without a reply to use.
    #[error("the provider gave no reply: {0}")]
    NoReply(String),
}

impl LlmError {
    /// Whether another attempt may succeed: 408/409/429/5xx, connection problems,
    /// timeouts, broken streams, streams of keep-alives only and the provider's own
    /// overload errors. Never other 4xx, context-length errors or malformed data; nor
    /// what a hostile or misconfigured server would simply send again at the same cost:
    /// a reply over the size limits, one past the call deadline (another attempt takes
    /// as long again), a body that is not an event stream, a filtered or empty reply.
    pub fn is_retryable(&self) -> bool {
        match self {
            LlmError::Connect { .. }
            | LlmError::Timeout(_)
            | LlmError::StreamBroken(_)
            | LlmError::Stalled(_) => true,
            LlmError::Status { status, message, .. } => {
                matches!(status, 408 | 409 | 429 | 500..=599) && !is_context_length_message(message)
            }
            LlmError::StreamError { kind, .. } => matches!(
                kind.as_str(),
                "overloaded_error" | "api_error" | "rate_limit_error" | "server_error"
            ),
            LlmError::Malformed(_)
            | LlmError::Tls { .. }
            | LlmError::Request(_)
            | LlmError::TooLarge(_)
            | LlmError::Deadline(_)
            | LlmError::NotEventStream { .. }
            | LlmError::NoReply(_) => false,
        }
    }

    /// Whether the provider refused the request because the prompt is longer than the
    /// model's context (a 400 or 413 saying so, or an error event saying so).
    pub fn is_context_overflow(&self) -> bool {
        match self {
            LlmError::Status { status, message, .. } => {
                matches!(status, 400 | 413) && is_context_length_message(message)
            }
            LlmError::StreamError { message, .. } => is_context_length_message(message),
            LlmError::Connect { .. }
            | LlmError::Tls { .. }
            | LlmError::Timeout(_)
            | LlmError::StreamBroken(_)
            | LlmError::Malformed(_)
            | LlmError::Request(_)
            | LlmError::TooLarge(_)
            | LlmError::Stalled(_)
            | LlmError::Deadline(_)
            | LlmError::NotEventStream { .. }
            | LlmError::NoReply(_) => false,
        }
    }

    /// The delay the provider asked for, if any.
    pub fn retry_after(&self) -> Option<Duration> {
        match self {
            LlmError::Status { retry_after, .. } => *retry_after,
            _ => None,
        }
    }

    /// Whether the provider refused the request because the prompt is too long.
    pub fn is_context_length(&self) -> bool {
        match self {
            LlmError::Status {
                status: 400 | 413,
                message,
                ..
            } => is_context_length_message(message),
            _ => false,
        }
    }
}

fn is_context_length_message(message: &str) -> bool {
    let lower = message.to_ascii_lowercase();
    [
        "context length",
        "context_length",
        "prompt is too long",
        "too many tokens",
        "maximum context",
    ]
    .iter()
    .any(|needle| lower.contains(needle))
}

/// A stream of [`ModelEvent`]s for one model call.
pub type ModelStream = Pin<Box<dyn Stream<Item = Result<ModelEvent, LlmError>> + Send>>;

/// A streaming model provider.
pub trait ModelClient: Send + Sync {
    /// `anthropic` or `openai`.
    fn provider(&self) -> &'static str;
    /// The model name requests carry.
    fn model(&self) -> &str;
    /// Sends the request; resolves once the provider accepted it and the reply streams.
    /// The body is built before this returns, so the request need not outlive the call.
    fn stream(&self, request: &ModelRequest<'_>) -> BoxFuture<'static, Result<ModelStream, LlmError>>;
}

/// Builds the client the configuration names. The key is kept inside the client only,
/// and never goes to another key owner's host (the key lookup refuses that first, with
/// where the URL came from; this holds for every other caller).
pub fn build_client(
    config: &ModelConfig,
    api_key: impl Into<ApiKey>,
) -> anyhow::Result<Arc<dyn ModelClient>> {
    let api_key = api_key.into();
    if let Some(foreign) = endpoint::foreign_key(
        &config.base_url,
        api_key.variable.as_deref().unwrap_or("the key given"),
        &api_key.value,
    ) {
        anyhow::bail!("{}: {}", foreign.describe(), foreign.remedy(false));
    }
    if let Some(owner) = endpoint::plain_http_to_owner(&config.base_url)
        && !api_key.value.is_empty()
    {
        anyhow::bail!(
            "{}'s host over plain http:// would carry the key unencrypted: use {}",
            owner.name,
            owner.base_url
        );
    }
    // reqwest picks aws-lc-rs itself; making it the process default as well keeps every
    // other rustls user on the same provider. A second install is refused harmlessly.
    let _ = rustls::crypto::aws_lc_rs::default_provider().install_default();
    let http = reqwest::Client::builder()
        // A redirect is not followed: the key (Anthropic's x-api-key header goes along
        // to any host) and the prompt would go where the provider's answer says.
        .redirect(reqwest::redirect::Policy::none())
        .connect_timeout(Duration::from_secs(config.connect_timeout_s))
        .read_timeout(Duration::from_secs(config.stream_idle_timeout_s))
        .build()
        .map_err(|err| anyhow::anyhow!("cannot build the HTTP client: {err}"))?;
    let base = endpoint::resolve_base_url(config.provider, &config.base_url)
        .map_err(|err| anyhow::anyhow!("model.base_url {err}"))?;
    let note = api_key.refused_note();
    let client = (config.provider.spec().client)(http, base, api_key.value, config);
    Ok(match note {
        Some(note) => Arc::new(NamedKeyClient { inner: client, note }),
        None => client,
    })
}

/// Parses streamed tool-call arguments: empty means no arguments; anything else must be
/// a JSON object. The error text is what the model is told.
pub(crate) fn parse_tool_arguments(raw: &str) -> Result<serde_json::Value, String> {
    if raw.trim().is_empty() {
        return Ok(serde_json::Value::Object(Default::default()));
    }
    match serde_json::from_str::<serde_json::Value>(raw) {
        Ok(value @ serde_json::Value::Object(_)) => Ok(value),
        Ok(other) => Err(format!(
            "arguments must be a JSON object, got {}",
            json_kind(&other)
        )),
        Err(err) => Err(format!("arguments were not valid JSON: {err}")),
    }
}

fn json_kind(value: &serde_json::Value) -> &'static str {
    match value {
        serde_json::Value::Null => "null",
        serde_json::Value::Bool(_) => "a boolean",
        serde_json::Value::Number(_) => "a number",
        serde_json::Value::String(_) => "a string",
        serde_json::Value::Array(_) => "an array",
        serde_json::Value::Object(_) => "an object",
    }
}

/// The most text, thinking and tool-call arguments (with ids, names and signatures) one
/// reply may carry: 4 MiB. Output limits are about 128k tokens, about 0.5 MB of text
/// (2 MB even at 4 bytes a token with every character escaped), so no model's reply
/// comes near it; a server that goes past it is broken or hostile, and the front ends
/// and the session log would otherwise hold all it sends.
pub const MAX_REPLY_BYTES: usize = 4 << 20;

/// Counts what a reply has carried against [`MAX_REPLY_BYTES`].
#[derive(Debug, Default)]
pub(crate) struct ReplyBudget {
    used: usize,
}

impl ReplyBudget {
    /// Counts `bytes` more; an error once the reply is over the limit.
    pub(crate) fn take(&mut self, bytes: usize) -> Result<(), LlmError> {
        self.used = self.used.saturating_add(bytes);
        if self.used > MAX_REPLY_BYTES {
            return Err(LlmError::TooLarge(format!(
                "the provider's reply is larger than {} MiB, more than any model writes; \
                 stopped reading",
                MAX_REPLY_BYTES >> 20
            )));
        }
        Ok(())
    }

    /// Bytes counted so far.
    pub(crate) fn used(&self) -> usize {
        self.used
    }
}

/// How much of an error body, or of a body that is not an event stream, is read: enough
/// for any provider's message, never a whole hostile download.
const MAX_ERROR_BODY_BYTES: usize = 64 << 10;

/// Characters of a body quoted in an error.
const EXCERPT_CHARS: usize = 200;

/// Sends the request and checks the answer: a success whose body is an event stream, or
/// the matching error, all before `deadline`.
pub(crate) async fn open_stream(
    builder: reqwest::RequestBuilder,
    url: &str,
    idle_timeout_s: u64,
    deadline: tokio::time::Instant,
    deadline_s: u64,
) -> Result<reqwest::Response, LlmError> {
    let opened = tokio::time::timeout_at(deadline, async {
        let response = builder
            .send()
            .await
            .map_err(|err| transport_error(url, &err, idle_timeout_s))?;
        if !response.status().is_success() {
            return Err(status_error(response).await);
        }
        let content_type = response
            .headers()
            .get(reqwest::header::CONTENT_TYPE)
            .map(|value| String::from_utf8_lossy(value.as_bytes()).into_owned());
        // A missing type is let through: some compatible servers send none.
        if let Some(content_type) = content_type {
            let essence = content_type.split(';').next().unwrap_or("").trim();
            if !essence.eq_ignore_ascii_case("text/event-stream") {
                let status = response.status().as_u16();
                let body = read_prefix(response, MAX_ERROR_BODY_BYTES).await;
                let html = essence.to_ascii_lowercase().contains("html");
                return Err(LlmError::NotEventStream {
                    status,
                    content_type: clean_excerpt(content_type.as_bytes(), false),
                    excerpt: clean_excerpt(&body, html),
                });
            }
        }
        Ok(response)
    })
    .await;
    opened.unwrap_or(Err(LlmError::Deadline(deadline_s)))
}

/// The first `limit` bytes of a body (fewer if it is shorter or breaks off).
async fn read_prefix(mut response: reqwest::Response, limit: usize) -> Vec<u8> {
    let mut body = Vec::new();
    while body.len() < limit {
        match response.chunk().await {
            Ok(Some(chunk)) => body.extend_from_slice(&chunk[..chunk.len().min(limit - body.len())]),
            Ok(None) | Err(_) => break,
        }
    }
    body
}

/// A short, one-line, printable excerpt of a body: for HTML the text without tags,
/// scripts and styles; control characters dropped; whitespace runs made one space.
pub(crate) fn clean_excerpt(body: &[u8], html: bool) -> String {
    let text = String::from_utf8_lossy(body);
    let text = if html { html_text(&text) } else { text.into_owned() };
    // Escape sequences go whole (a title's text, a screen clear's parameters), not only
    // their control characters.
    let text = miniagent_text::clean(&text);
    let mut out = String::new();
    let mut chars = 0;
    let mut space = false;
    for c in text.chars() {
        if c.is_whitespace() {
            space = !out.is_empty();
            continue;
        }
        if c.is_control()
            || matches!(c, '\u{200b}'..='\u{200f}' | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}')
        {
            continue;
        }
        if chars >= EXCERPT_CHARS {
            out.push('…');
            break;
        }
        if space {
            out.push(' ');
            space = false;
            chars += 1;
        }
        out.push(c);
        chars += 1;
    }
    if out.is_empty() {
        "(empty body)".to_string()
    } else {
        out
    }
}

/// The text of an HTML page: tags dropped, and what `<script>` and `<style>` hold.
fn html_text(html: &str) -> String {
    // Lower-casing ASCII keeps every byte where it was, so positions fit both.
    let lower = html.to_ascii_lowercase();
    let mut out = String::new();
    let mut at = 0;
    while let Some(open) = html[at..].find('<').map(|i| at + i) {
        out.push_str(&html[at..open]);
        let Some(close) = html[open..].find('>').map(|i| open + i) else {
            at = html.len();
            break;
        };
        let name = lower[open + 1..close]
            .trim_start()
            .split(|c: char| c.is_whitespace() || c == '/')
            .next()
            .unwrap_or("");
        at = close + 1;
        if matches!(name, "script" | "style") {
            let end = format!("</{name}");
            at = match lower[at..].find(&end) {
                Some(i) => lower[at + i..].find('>').map_or(html.len(), |gt| at + i + gt + 1),
                None => html.len(),
            };
        }
        // A tag separates words, as a browser's line breaks and cells do.
        out.push(' ');
    }
    out.push_str(&html[at..]);
    out
}

/// Reads an error response: status, the provider's message and `Retry-After`.
pub(crate) async fn status_error(response: reqwest::Response) -> LlmError {
    let status = response.status().as_u16();
    if response.status().is_redirection() {
        // Where it points, by host only (its path and query may hold anything).
        let to = response
            .headers()
            .get(reqwest::header::LOCATION)
            .and_then(|value| value.to_str().ok())
            .and_then(|location| response.url().join(location).ok())
            .and_then(|url| url.host_str().map(|host| clean_excerpt(host.as_bytes(), false)))
            .unwrap_or_else(|| "an address it did not give".to_string());
        return LlmError::Status {
            status,
            message: format!(
                "a redirect to {to}, not followed (the key and the prompt would go with it); set model.base_url to the address the provider moved to"
            ),
            retry_after: None,
        };
    }
    let retry_after = response
        .headers()
        .get(reqwest::header::RETRY_AFTER)
        .and_then(|value| value.to_str().ok())
        .and_then(|value| value.trim().parse::<u64>().ok())
        .map(Duration::from_secs);
    let html = response
        .headers()
        .get(reqwest::header::CONTENT_TYPE)
        .is_some_and(|value| {
            String::from_utf8_lossy(value.as_bytes())
                .to_ascii_lowercase()
                .contains("html")
        });
    let bytes = read_prefix(response, MAX_ERROR_BODY_BYTES).await;
    let body = String::from_utf8_lossy(&bytes);
    let message = serde_json::from_str::<serde_json::Value>(&body)
        .ok()
        .and_then(|json| {
            json.pointer("/error/message")
                .and_then(|m| m.as_str())
                .map(str::to_string)
        })
        .unwrap_or_else(|| {
            let trimmed = body.trim();
            if trimmed.is_empty() {
                "(empty body)".to_string()
            } else if html || trimmed.starts_with("<!") || trimmed.starts_with("<html") {
                // A proxy's or gateway's error page: its text, not its markup.
                clean_excerpt(trimmed.as_bytes(), true)
            } else {
                trimmed.chars().take(500).collect()
            }
        });
    LlmError::Status {
        status,
        message,
        retry_after,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn status(status: u16, message: &str) -> LlmError {
        LlmError::Status {
            status,
            message: message.into(),
            retry_after: None,
        }
    }

    /// A page that is not an event stream is quoted without its escape sequences whole
    /// (a fresh-eyes run saw `]0;PWN` and `[2J` left over from them).
    #[test]
    fn an_excerpt_drops_escape_sequences_whole() {
        let page = "<html><title>\u{1b}]0;PWN\u{7}Sign in</title><body>\u{1b}[2JPlease log in</body></html>";
        assert_eq!(clean_excerpt(page.as_bytes(), true), "Sign in Please log in");
        assert_eq!(clean_excerpt(b"\x1b[31mred\x1b[0m text", false), "red text");
    }

    #[test]
    fn retryable_failures_are_the_transient_ones() {
        assert!(status(429, "slow down").is_retryable());
        assert!(status(503, "unavailable").is_retryable());
        assert!(status(408, "timeout").is_retryable());
        assert!(!status(400, "bad request").is_retryable());
        assert!(!status(401, "bad key").is_retryable());
        assert!(!status(400, "prompt is too long: 210000 tokens").is_retryable());
        assert!(status(400, "prompt is too long: 210000 tokens").is_context_length());
        assert!(LlmError::StreamBroken("eof".into()).is_retryable());
        assert!(!LlmError::Malformed("x".into()).is_retryable());
        assert!(
            LlmError::StreamError {
                kind: "overloaded_error".into(),
                message: "busy".into()
            }
            .is_retryable()
        );
    }
}
