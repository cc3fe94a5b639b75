//! Counting tokens with tiktoken's BPE (bundled, offline). The encoding is loaded once
//! per process; `preload` starts that in the background so nothing waits for it later.
//! ASCII text is split into pieces without the tokenizer's regex (`pieces`).

mod pieces;

use std::sync::OnceLock;

use tiktoken_rs::CoreBPE;

use crate::llm::ToolSpec;
use crate::protocol::message::{ContentBlock, Message};

/// Framing tokens each message costs on the wire (role, separators).
pub const PER_MESSAGE_TOKENS: u64 = 4;

pub use crate::protocol::Encoding;

static CL100K: OnceLock<Option<CoreBPE>> = OnceLock::new();
static O200K: OnceLock<Option<CoreBPE>> = OnceLock::new();

/// Where an encoding is kept once loaded, and how it is loaded.
type Slot = (
    &'static OnceLock<Option<CoreBPE>>,
    fn() -> anyhow::Result<CoreBPE>,
);

fn bpe(encoding: Encoding) -> Option<&'static CoreBPE> {
    let (cell, load): Slot = match encoding {
        Encoding::Cl100kBase => (&CL100K, tiktoken_rs::cl100k_base),
        Encoding::O200kBase => (&O200K, tiktoken_rs::o200k_base),
    };
    cell.get_or_init(|| match load() {
        Ok(bpe) => Some(bpe),
        Err(err) => {
            tracing::warn!("cannot load the {encoding:?} tokenizer, estimating by size instead: {err}");
            None
        }
    })
    .as_ref()
}

/// Starts loading the encoding on a background thread (idempotent).
pub fn preload(encoding: Encoding) {
    std::thread::spawn(move || {
        let _ = bpe(encoding);
    });
}

/// Text longer than this is estimated (four bytes a token), not tokenized.
const EXACT_LIMIT_BYTES: usize = 1 << 20;

/// Counts tokens of text and of messages.
#[derive(Clone, Copy)]
pub struct TokenCounter {
    bpe: Option<&'static CoreBPE>,
    encoding: Encoding,
}

impl std::fmt::Debug for TokenCounter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(if self.bpe.is_some() {
            "TokenCounter(bpe)"
        } else {
            "TokenCounter(estimate)"
        })
    }
}

impl TokenCounter {
    /// The counter for `encoding`; loads it on first use (about a tenth of a second).
    pub fn new(encoding: Encoding) -> Self {
        Self {
            bpe: bpe(encoding),
            encoding,
        }
    }

    /// A counter that estimates four bytes per token (when the tokenizer is unavailable).
    pub fn estimate_only() -> Self {
        Self {
            bpe: None,
            encoding: Encoding::Cl100kBase,
        }
    }

    pub fn count(&self, text: &str) -> u64 {
        match self.bpe {
            // Past a megabyte the tokenizer can take seconds (a long run without spaces is
            // its worst case); such text is far over any budget, and an estimate does.
            Some(bpe) if text.len() <= EXACT_LIMIT_BYTES => {
                let whole = |part: &str| bpe.count_ordinary(part) as u64;
                if text.is_ascii() {
                    return pieces::count_ascii(text, self.encoding, whole);
                }
                pieces::split_at_lines(text)
                    .map(|part| match part.is_ascii() {
                        true => pieces::count_ascii(part, self.encoding, whole),
                        false => whole(part),
                    })
                    .sum()
            }
            Some(_) | None => (text.len() as u64).div_ceil(4),
        }
    }

    /// What tiktoken itself counts for `text`, every piece through its regex: the
    /// reference [`count`](Self::count) is checked against.
    pub fn count_by_regex(&self, text: &str) -> u64 {
        match self.bpe {
            Some(bpe) => bpe.count_ordinary(text) as u64,
            None => (text.len() as u64).div_ceil(4),
        }
    }

    /// Tokens of one content block as the provider sees it.
    pub fn block(&self, block: &ContentBlock) -> u64 {
        match block {
            ContentBlock::Text { text } => self.count(text),
            ContentBlock::Thinking { thinking, .. } => self.count(thinking),
            ContentBlock::RedactedThinking { data } => self.count(data),
            ContentBlock::ToolUse { name, input, .. } => self.count(name) + self.count(&input.to_string()),
            ContentBlock::ToolResult { content, .. } => self.count(content),
        }
    }

    /// Tokens of a message, framing included.
    pub fn message(&self, message: &Message) -> u64 {
        message.content.iter().map(|block| self.block(block)).sum::<u64>() + PER_MESSAGE_TOKENS
    }

    /// Tokens the tool schemas add to every request.
    pub fn tools(&self, tools: &[ToolSpec]) -> u64 {
        tools
            .iter()
            .map(|tool| {
                self.count(&tool.name)
                    + self.count(&tool.description)
                    + self.count(&tool.input_schema.to_string())
            })
            .sum()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_with_the_real_encoding() {
        let counter = TokenCounter::new(Encoding::Cl100kBase);
        assert_eq!(counter.count("hello world"), 2);
        assert_eq!(counter.count(""), 0);
        let o200k = TokenCounter::new(Encoding::O200kBase);
        assert!(o200k.count("The quick brown fox jumps over the lazy dog.") >= 9);
        assert_eq!(
            counter.message(&Message::user("hello world")),
            2 + PER_MESSAGE_TOKENS
        );
        assert_eq!(TokenCounter::estimate_only().count("12345678"), 2);
    }
}
