//! What a run's recorded requests would be billed for their input, under the providers'
//! published prompt-caching rules. The tokenizer is the caller's (`count`), the same for
//! every request, so runs compare with each other whatever it is.
//!
//! Anthropic Messages: the prompt is the sequence tools, system, message content blocks.
//! At each `cache_control` breakpoint, the longest prefix an earlier request wrote that
//! ends on a block boundary at most [`LOOKBACK_BLOCKS`] blocks back is read at 0.1×; the
//! rest up to the breakpoint is written at 1.25×; anything after the last breakpoint is
//! billed in full. A prefix under [`MIN_CACHED_TOKENS`] tokens is neither read nor written.
//!
//! OpenAI Chat Completions: the longest prefix shared with any earlier request, when it is
//! at least [`MIN_CACHED_TOKENS`] tokens, is billed at 0.1×; the rest in full.

use std::collections::HashSet;
use std::hash::{DefaultHasher, Hash, Hasher};

use serde_json::Value;

use super::RecordedRequest;

/// The shortest prefix either provider caches, in tokens.
pub const MIN_CACHED_TOKENS: u64 = 1024;
/// How far back from a breakpoint Anthropic looks for a prefix it wrote, in blocks.
pub const LOOKBACK_BLOCKS: usize = 20;
/// What a cache read costs, as a share of an input token.
pub const READ_RATE: f64 = 0.1;
/// What a cache write costs, as a share of an input token (Anthropic's 5-minute cache).
pub const WRITE_RATE: f64 = 1.25;

/// The input side of a run's bill.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Bill {
    /// Model requests, summary calls included.
    pub requests: usize,
    /// Requests that asked for a summary of the history.
    pub summary_calls: usize,
    /// Input tokens sent, over every request.
    pub sent: u64,
    /// Tokens read from the cache.
    pub read: u64,
    /// Tokens written to the cache.
    pub written: u64,
    /// Tokens billed in full.
    pub uncached: u64,
}

impl Bill {
    /// Input tokens as billed: reads at 0.1×, writes at 1.25×, the rest at 1×.
    pub fn billed(&self) -> f64 {
        self.read as f64 * READ_RATE + self.written as f64 * WRITE_RATE + self.uncached as f64
    }
}

/// Whether a request asks for a summary of the history rather than a step of the task.
pub fn is_summary_call(body: &Value) -> bool {
    // OpenAI's system prompt is the first message.
    let system = match &body["system"] {
        Value::Null => body["messages"][0]["content"].as_str().unwrap_or("").to_string(),
        _ => super::validate::system_text(body),
    };
    system.starts_with("You condense part of a coding agent's working history")
}

fn model_requests(requests: &[RecordedRequest]) -> impl Iterator<Item = &Value> {
    requests
        .iter()
        .filter(|r| r.method == "POST" && r.body.get("messages").is_some())
        .map(|r| &r.body)
}

/// One block of an Anthropic prompt: what identifies its prefix, its size, and whether a
/// breakpoint closes it.
struct PromptBlock {
    /// A hash of every block up to and including this one.
    prefix: u64,
    tokens: u64,
    breakpoint: bool,
}

/// `value` without its `cache_control`, as text (what the block is, wherever the
/// breakpoints are).
fn canonical(value: &Value) -> (String, bool) {
    let mut value = value.clone();
    let marked = value
        .as_object_mut()
        .and_then(|object| object.remove("cache_control"))
        .is_some();
    (value.to_string(), marked)
}

fn anthropic_blocks(body: &Value, count: &dyn Fn(&str) -> u64) -> Vec<PromptBlock> {
    let mut items: Vec<(String, bool)> = Vec::new();
    for tool in body["tools"].as_array().into_iter().flatten() {
        items.push(canonical(tool));
    }
    match &body["system"] {
        Value::String(text) => items.push((format!("system:{text}"), false)),
        Value::Array(blocks) => {
            for block in blocks {
                let (text, marked) = canonical(block);
                items.push((format!("system:{text}"), marked));
            }
        }
        _ => {}
    }
    for message in body["messages"].as_array().into_iter().flatten() {
        let role = message["role"].as_str().unwrap_or("");
        let blocks: Vec<(String, bool)> = match &message["content"] {
            Value::String(text) => vec![(
                serde_json::json!({"type": "text", "text": text}).to_string(),
                false,
            )],
            Value::Array(blocks) => blocks.iter().map(canonical).collect(),
            _ => Vec::new(),
        };
        // A new message starts with its role: the same blocks under another role, or
        // split between messages differently, are another prompt.
        for (n, (text, marked)) in blocks.into_iter().enumerate() {
            let text = if n == 0 { format!("{role}:{text}") } else { text };
            items.push((text, marked));
        }
    }
    let mut hasher = DefaultHasher::new();
    items
        .into_iter()
        .map(|(text, breakpoint)| {
            text.hash(&mut hasher);
            PromptBlock {
                prefix: hasher.finish(),
                tokens: count(&text),
                breakpoint,
            }
        })
        .collect()
}

/// The bill for `requests` sent to an Anthropic Messages endpoint, in the order sent.
pub fn anthropic(requests: &[RecordedRequest], count: &dyn Fn(&str) -> u64) -> Bill {
    let mut bill = Bill::default();
    // Prefixes written to the cache so far.
    let mut written: HashSet<u64> = HashSet::new();
    for body in model_requests(requests) {
        bill.requests += 1;
        bill.summary_calls += usize::from(is_summary_call(body));
        let blocks = anthropic_blocks(body, count);
        let mut prefix_tokens = Vec::with_capacity(blocks.len());
        let mut total = 0u64;
        for block in &blocks {
            total += block.tokens;
            prefix_tokens.push(total);
        }
        bill.sent += total;
        let before = |index: usize| if index == 0 { 0 } else { prefix_tokens[index - 1] };
        // Tokens of blocks before `settled` are accounted for.
        let mut settled = 0usize;
        for (at, block) in blocks.iter().enumerate() {
            if !block.breakpoint || prefix_tokens[at] < MIN_CACHED_TOKENS {
                continue;
            }
            let earliest = at.saturating_sub(LOOKBACK_BLOCKS - 1).max(settled);
            let hit = (earliest..=at)
                .rev()
                .find(|&j| prefix_tokens[j] >= MIN_CACHED_TOKENS && written.contains(&blocks[j].prefix));
            if let Some(j) = hit {
                bill.read += prefix_tokens[j] - before(settled);
                settled = j + 1;
            }
            bill.written += prefix_tokens[at] - before(settled);
            settled = at + 1;
            written.insert(block.prefix);
        }
        bill.uncached += total - before(settled);
    }
    bill
}

/// The prompt of an OpenAI request, piece by piece: tools, then messages, in order.
fn openai_pieces(body: &Value) -> Vec<String> {
    let tools = body["tools"].as_array().into_iter().flatten();
    let messages = body["messages"].as_array().into_iter().flatten();
    tools.chain(messages).map(Value::to_string).collect()
}

fn shared_prefix(a: &str, b: &str) -> usize {
    let mut length = a.bytes().zip(b.bytes()).take_while(|(x, y)| x == y).count();
    while !a.is_char_boundary(length) {
        length -= 1;
    }
    length
}

/// The bill for `requests` sent to an OpenAI Chat Completions endpoint, in the order sent.
pub fn openai(requests: &[RecordedRequest], count: &dyn Fn(&str) -> u64) -> Bill {
    let mut bill = Bill::default();
    let mut earlier: Vec<Vec<String>> = Vec::new();
    for body in model_requests(requests) {
        bill.requests += 1;
        bill.summary_calls += usize::from(is_summary_call(body));
        let pieces = openai_pieces(body);
        let tokens: Vec<u64> = pieces.iter().map(|piece| count(piece)).collect();
        let total: u64 = tokens.iter().sum();
        bill.sent += total;
        // The longest prefix shared with an earlier prompt: whole pieces, then the part
        // of the next piece they share.
        let cached = earlier
            .iter()
            .map(|other| {
                let whole = pieces.iter().zip(other).take_while(|(a, b)| a == b).count();
                let partial = match (pieces.get(whole), other.get(whole)) {
                    (Some(a), Some(b)) => count(&a[..shared_prefix(a, b)]),
                    _ => 0,
                };
                tokens[..whole].iter().sum::<u64>() + partial
            })
            .max()
            .unwrap_or(0)
            .min(total);
        if cached >= MIN_CACHED_TOKENS {
            bill.read += cached;
            bill.uncached += total - cached;
        } else {
            bill.uncached += total;
        }
        earlier.push(pieces);
    }
    bill
}
