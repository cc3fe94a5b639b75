//! Counting tokens with tiktoken's BPE (bundled, offline). The encoding is loaded once
//! per process; `preload` starts that in the background so nothing waits for it later.

use std::sync::OnceLock;

use serde::{Deserialize, Serialize};
use tiktoken_rs::CoreBPE;

use super::history::{ContentBlock, Message};
use crate::llm::ToolSpec;

/// Framing tokens each message costs on the wire (role, separators).
pub const PER_MESSAGE_TOKENS: u64 = 4;

/// Which BPE encoding counts tokens (`agent.tokenizer`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Encoding {
    /// GPT-4 era; close enough for Claude and MiniMax budgeting.
    Cl100kBase,
    /// GPT-4o and later.
    O200kBase,
}

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

/// Text at least this long is split and counted on several threads.
const PARALLEL_BYTES: usize = 16 * 1024;

/// Exact counts of long text (tool output, mostly) in parts, one per core. A part ends
/// after a newline that is followed by a character other than whitespace: both
/// encodings' pre-tokenizers always start a new piece there (no piece runs from a line
/// break into the text after it), and tokens never cross pieces, so the parts' counts
/// add up to the whole's.
fn count_in_parallel(bpe: &CoreBPE, text: &str) -> u64 {
    static CORES: OnceLock<usize> = OnceLock::new();
    let cores = *CORES.get_or_init(|| std::thread::available_parallelism().map_or(1, |n| n.get()));
    let parts = cores.min(text.len() / (PARALLEL_BYTES / 2)).max(1);
    if parts == 1 {
        return bpe.count_ordinary(text) as u64;
    }
    let mut bounds = vec![0];
    for part in 1..parts {
        let at = split_point(text, text.len() * part / parts);
        if at > *bounds.last().unwrap_or(&0) && at < text.len() {
            bounds.push(at);
        }
    }
    bounds.push(text.len());
    std::thread::scope(|scope| {
        let counting: Vec<_> = bounds
            .windows(2)
            .skip(1)
            .map(|range| {
                let part = &text[range[0]..range[1]];
                scope.spawn(move || bpe.count_ordinary(part) as u64)
            })
            .collect();
        let first = bpe.count_ordinary(&text[..bounds[1]]) as u64;
        // A part whose thread failed is counted here instead.
        counting
            .into_iter()
            .zip(bounds.windows(2).skip(1))
            .map(|(handle, range)| {
                handle
                    .join()
                    .unwrap_or_else(|_| bpe.count_ordinary(&text[range[0]..range[1]]) as u64)
            })
            .sum::<u64>()
            + first
    })
}

/// The first place at or after `from` just past a `\n` whose next character is not
/// whitespace; the text's end when there is none.
fn split_point(text: &str, from: usize) -> usize {
    let bytes = text.as_bytes();
    let mut at = from;
    while let Some(offset) = bytes
        .get(at..)
        .and_then(|rest| rest.iter().position(|b| *b == b'\n'))
    {
        let next = at + offset + 1;
        match text.get(next..).and_then(|rest| rest.chars().next()) {
            Some(c) if !c.is_whitespace() => return next,
            Some(_) => at = next,
            None => return text.len(),
        }
    }
    text.len()
}

/// Counts tokens of text and of messages.
#[derive(Clone, Copy)]
pub struct TokenCounter {
    bpe: Option<&'static CoreBPE>,
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
        Self { bpe: bpe(encoding) }
    }

    /// A counter that estimates four bytes per token (when the tokenizer is unavailable).
    pub fn estimate_only() -> Self {
        Self { bpe: None }
    }

    pub fn count(&self, text: &str) -> u64 {
        match self.bpe {
            // Past a megabyte the tokenizer can take seconds (a long run without spaces is
            // its worst case); such text is far over any budget, and an estimate does.
            Some(bpe) if text.len() <= EXACT_LIMIT_BYTES => count_in_parallel(bpe, text),
            Some(_) | None => (text.len() as u64).div_ceil(4),
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

    #[test]
    fn long_text_counted_in_parts_counts_the_same() {
        let counter = TokenCounter::new(Encoding::Cl100kBase);
        let o200k = TokenCounter::new(Encoding::O200kBase);
        let numbers: String = (1..=9000).map(|n| format!("{n}\n")).collect();
        let mut prose = String::new();
        let mut rng = fastrand::Rng::with_seed(3);
        let pieces = [
            "word",
            " ",
            "\n",
            "\n\n",
            "  ",
            "\t",
            "'s",
            "don't",
            "(x)",
            ".",
            "先看看",
            "😀",
            "\r\n",
            "  \n",
            "=>",
            "42",
        ];
        while prose.len() < 40_000 {
            prose.push_str(pieces[rng.usize(..pieces.len())]);
        }
        for text in [&numbers, &prose] {
            let whole = |c: &TokenCounter| c.bpe.map(|bpe| bpe.count_ordinary(text) as u64);
            assert_eq!(Some(counter.count(text)), whole(&counter));
            assert_eq!(Some(o200k.count(text)), whole(&o200k));
        }
        // Every possible split point, not only the ones the halves land on.
        let mut at = 0;
        while at < prose.len() {
            let next = split_point(&prose, at);
            if next >= prose.len() {
                break;
            }
            let bpe = counter.bpe.unwrap();
            assert_eq!(
                bpe.count_ordinary(&prose[..next]) + bpe.count_ordinary(&prose[next..]),
                bpe.count_ordinary(&prose),
                "split at {next}"
            );
            at = next + 997;
        }
    }
}
