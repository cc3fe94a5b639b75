//! The script a [`ScriptedServer`](super::ScriptedServer) plays: one [`Reply`]
//! per model request, in order.

/// What the server does with one request to a model endpoint.
#[derive(Clone, Debug)]
pub enum Reply {
    /// A normal streamed reply.
    Stream(Turn),
    /// Respond with this HTTP status and a provider-shaped JSON error body;
    /// optional `Retry-After` header (seconds).
    Status {
        status: u16,
        retry_after: Option<u64>,
        message: String,
    },
    /// Stream the turn's first `events` SSE events, then close the socket
    /// without finishing the chunked body.
    DropAfter { turn: Turn, events: usize },
    /// Send the response head, then this raw text as an SSE `data:` payload
    /// that is not valid JSON (e.g. `{"type": "content_blo`), then end the
    /// stream normally (terminating chunk; no further events).
    Malformed { raw_data: String },
    /// Accept the request, read it, send nothing at all until the client goes
    /// away (the socket is held open for up to 10 minutes).
    Hang,
    /// Send the response head and the first `events` events, then go silent
    /// (hold the socket open) until the client goes away.
    StallAfter { turn: Turn, events: usize },
    /// Stream the turn but sleep `delay_ms` between SSE events.
    Slow { turn: Turn, delay_ms: u64 },
    /// Stream the turn at a steady `events_per_second`, event `i` due at `i / rate`
    /// after the first (late events go out at once, so the average rate holds).
    Paced { turn: Turn, events_per_second: f64 },
    /// Hostile: a 200 event stream whose first `data:` line never ends: `x` bytes in
    /// 64 KiB chunks until the client goes away or `limit` bytes went out (then the
    /// socket is dropped).
    EndlessLine { limit: u64 },
    /// Hostile: a text reply whose text is ONE delta of `bytes` bytes (`x`), written in
    /// pieces so the server never holds it whole; the reply then ends normally.
    HugeDelta { bytes: usize },
    /// A text reply of `bytes` bytes of never-repeating words in deltas of about
    /// `piece` bytes, made as they are sent; the reply then ends normally.
    LongText { bytes: usize, piece: usize },
    /// Hostile: a 200 event stream that sends only keep-alives (a `: ping` comment, a
    /// blank line, an Anthropic `ping` event) every `every_ms` until the client goes away.
    PingForever { every_ms: u64 },
    /// This status, content type and body exactly (e.g. an HTML page with status 200).
    Raw {
        status: u16,
        content_type: String,
        body: String,
    },
    /// A 200 event stream of exactly these framed SSE events, then the end of the body.
    Events(Vec<String>),
    /// Hostile: a redirect (`status`, e.g. 307) to `location`.
    Redirect { status: u16, location: String },
}

impl Reply {
    /// `Reply::Stream(Turn::text(text))`.
    pub fn text(text: impl Into<String>) -> Reply {
        Reply::Stream(Turn::text(text))
    }

    /// `Reply::Stream(Turn::tool(id, name, arguments))`.
    pub fn tool(id: impl Into<String>, name: impl Into<String>, arguments: impl Into<String>) -> Reply {
        Reply::Stream(Turn::tool(id, name, arguments))
    }

    /// An error status without `Retry-After`.
    pub fn status(status: u16, message: impl Into<String>) -> Reply {
        Reply::Status {
            status,
            retry_after: None,
            message: message.into(),
        }
    }

    /// An error status with `Retry-After: secs`.
    pub fn status_retry_after(status: u16, secs: u64, message: impl Into<String>) -> Reply {
        Reply::Status {
            status,
            retry_after: Some(secs),
            message: message.into(),
        }
    }

    /// HTTP 429 with `Retry-After: secs`.
    pub fn rate_limited(secs: u64) -> Reply {
        Reply::status_retry_after(429, secs, "scripted rate limit: slow down")
    }

    /// HTTP 529 (Anthropic "overloaded"), no `Retry-After`.
    pub fn overloaded() -> Reply {
        Reply::status(529, "scripted server: overloaded")
    }

    pub fn drop_after(turn: Turn, events: usize) -> Reply {
        Reply::DropAfter { turn, events }
    }

    pub fn stall_after(turn: Turn, events: usize) -> Reply {
        Reply::StallAfter { turn, events }
    }

    pub fn malformed(raw_data: impl Into<String>) -> Reply {
        Reply::Malformed {
            raw_data: raw_data.into(),
        }
    }

    pub fn slow(turn: Turn, delay_ms: u64) -> Reply {
        Reply::Slow { turn, delay_ms }
    }

    pub fn paced(turn: Turn, events_per_second: f64) -> Reply {
        Reply::Paced {
            turn,
            events_per_second,
        }
    }
}

/// The benchmarks' long turn: `steps` `bash` calls that each print `seq 1 20000` (about
/// 109 KB), then an answer. The calls differ (`: step N;` does nothing), as a long
/// task's do.
pub fn counting_turn(steps: usize) -> Vec<Reply> {
    let mut replies: Vec<Reply> = (0..steps)
        .map(|n| {
            Reply::tool(
                format!("call_{n}"),
                "bash",
                format!(r#"{{"command": ": step {n}; seq 1 20000"}}"#),
            )
        })
        .collect();
    replies.push(Reply::text("Done counting."));
    replies
}

impl From<Turn> for Reply {
    fn from(turn: Turn) -> Reply {
        Reply::Stream(turn)
    }
}

/// One assistant turn, rendered in either wire format.
///
/// Build it with the constructors (`Turn::text`, `Turn::tool`,
/// `Turn::thinking_text`) or the builder: `Turn::new().thinking(..).text(..)
/// .tool(..).stop(..).usage(..)`. The builder methods `text` and `tool` share
/// their names with the constructors, so they come from the [`TurnExt`] trait
/// (re-exported by `support`); `with_text` / `with_tool` are the same thing
/// as inherent methods.
#[derive(Clone, Debug, Default)]
pub struct Turn {
    pub blocks: Vec<Block>,
    pub stop: Stop,
    pub input_tokens: u64,
    pub output_tokens: u64,
    /// Prompt tokens reported as read from the provider's cache.
    pub cache_read_tokens: u64,
    /// Prompt tokens reported as written to the provider's cache (Anthropic only).
    pub cache_write_tokens: u64,
    /// How thinking blocks are sent in the OpenAI format.
    pub reasoning_style: ReasoningStyle,
}

#[derive(Clone, Debug)]
pub enum Block {
    /// OpenAI format: `signature` is unused.
    Thinking {
        text: String,
        signature: String,
    },
    Text(String),
    /// `arguments` is raw JSON text (may be deliberately invalid).
    ToolCall {
        id: String,
        name: String,
        arguments: String,
    },
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Stop {
    /// `tool_use` if the turn has any tool call, else `end_turn`.
    #[default]
    Auto,
    EndTurn,
    ToolUse,
    MaxTokens,
}

/// How thinking is streamed in the OpenAI Chat Completions format.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum ReasoningStyle {
    /// `"reasoning_details":[{"type":"reasoning.text",..,"text":piece}]` (MiniMax).
    #[default]
    Details,
    /// `"reasoning_content":piece` (DeepSeek).
    Content,
}

/// Resolved stop reason of a turn, independent of the wire format.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum StopReason {
    EndTurn,
    ToolUse,
    MaxTokens,
}

impl Turn {
    /// An empty turn (no blocks, `Stop::Auto`, usage 0/0).
    pub fn new() -> Turn {
        Turn::default()
    }

    /// A turn with a single text block.
    pub fn text(text: impl Into<String>) -> Turn {
        Turn::new().with_text(text)
    }

    /// A turn with a thinking block followed by a text block.
    pub fn thinking_text(
        thinking: impl Into<String>,
        signature: impl Into<String>,
        text: impl Into<String>,
    ) -> Turn {
        Turn::new().thinking(thinking, signature).with_text(text)
    }

    /// A turn with a single tool call (stop reason `tool_use`).
    pub fn tool(id: impl Into<String>, name: impl Into<String>, arguments: impl Into<String>) -> Turn {
        Turn::new().with_tool(id, name, arguments)
    }

    /// Appends a thinking block.
    pub fn thinking(mut self, text: impl Into<String>, signature: impl Into<String>) -> Turn {
        self.blocks.push(Block::Thinking {
            text: text.into(),
            signature: signature.into(),
        });
        self
    }

    /// Appends a text block (the builder form of `text`).
    pub fn with_text(mut self, text: impl Into<String>) -> Turn {
        self.blocks.push(Block::Text(text.into()));
        self
    }

    /// Appends a tool call block (the builder form of `tool`).
    pub fn with_tool(
        mut self,
        id: impl Into<String>,
        name: impl Into<String>,
        arguments: impl Into<String>,
    ) -> Turn {
        self.blocks.push(Block::ToolCall {
            id: id.into(),
            name: name.into(),
            arguments: arguments.into(),
        });
        self
    }

    /// Appends any block.
    pub fn block(mut self, block: Block) -> Turn {
        self.blocks.push(block);
        self
    }

    pub fn stop(mut self, stop: Stop) -> Turn {
        self.stop = stop;
        self
    }

    /// Sets the reported usage (input / output tokens).
    pub fn usage(mut self, input_tokens: u64, output_tokens: u64) -> Turn {
        self.input_tokens = input_tokens;
        self.output_tokens = output_tokens;
        self
    }

    /// Sets the reported usage with the cache's part: `input_tokens` is what was neither
    /// read from nor written to the cache (Anthropic's `input_tokens`); OpenAI's
    /// `prompt_tokens` is the sum of the three, with `cached_tokens` the part read.
    pub fn cache_usage(mut self, input_tokens: u64, output_tokens: u64, read: u64, written: u64) -> Turn {
        self.input_tokens = input_tokens;
        self.output_tokens = output_tokens;
        self.cache_read_tokens = read;
        self.cache_write_tokens = written;
        self
    }

    /// Chooses how thinking is sent in the OpenAI format.
    pub fn openai_reasoning(mut self, style: ReasoningStyle) -> Turn {
        self.reasoning_style = style;
        self
    }

    pub fn has_tool_calls(&self) -> bool {
        self.blocks.iter().any(|b| matches!(b, Block::ToolCall { .. }))
    }

    pub(crate) fn stop_reason(&self) -> StopReason {
        match self.stop {
            Stop::Auto if self.has_tool_calls() => StopReason::ToolUse,
            Stop::Auto | Stop::EndTurn => StopReason::EndTurn,
            Stop::ToolUse => StopReason::ToolUse,
            Stop::MaxTokens => StopReason::MaxTokens,
        }
    }
}

/// Builder methods whose names clash with `Turn`'s constructors:
/// `Turn::new().text("a").tool("call_1", "bash", "{}")`.
pub trait TurnExt {
    fn text(self, text: impl Into<String>) -> Self;
    fn tool(self, id: impl Into<String>, name: impl Into<String>, arguments: impl Into<String>) -> Self;
}

impl TurnExt for Turn {
    fn text(self, text: impl Into<String>) -> Turn {
        self.with_text(text)
    }

    fn tool(self, id: impl Into<String>, name: impl Into<String>, arguments: impl Into<String>) -> Turn {
        self.with_tool(id, name, arguments)
    }
}

/// Splits `s` into pieces of at most `n` characters (char-boundary safe).
/// An empty string gives no pieces.
pub fn split_chars(s: &str, n: usize) -> Vec<String> {
    let n = n.max(1);
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut count = 0;
    for c in s.chars() {
        cur.push(c);
        count += 1;
        if count == n {
            out.push(std::mem::take(&mut cur));
            count = 0;
        }
    }
    if !cur.is_empty() {
        out.push(cur);
    }
    out
}
