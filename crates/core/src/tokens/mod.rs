//! Counting tokens with tiktoken's BPE (bundled, offline). Each encoding's ranks are a
//! table `build.rs` wrote into the binary from tiktoken-rs's encodings (`ranks`), read in
//! place: nothing is built when a process starts. ASCII text is split into pieces
//! without the tokenizer's regex (`pieces`); other text goes through the encoding's
//! pattern, compiled the first time such text comes.

mod layout;
mod pieces;
mod ranks;

use std::sync::OnceLock;

use ranks::Ranks;
use tiktoken_rs::CoreBPE;

use crate::llm::ToolSpec;
use miniagent_protocol::message::{ContentBlock, Message};

/// Framing tokens each message costs on the wire (role, separators).
pub const PER_MESSAGE_TOKENS: u64 = 4;

pub use miniagent_protocol::Encoding;

static CL100K_TABLE: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/cl100k_base.ranks"));
static O200K_TABLE: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/o200k_base.ranks"));

/// tiktoken's split patterns (its `cl100k_base` and `O200K_BASE_PAT_STR`).
const CL100K_PATTERN: &str = "'(?i:[sdmt]|ll|ve|re)|[^\\r\\n\\p{L}\\p{N}]?+\\p{L}++|\\p{N}{1,3}+| ?[^\\s\\p{L}\\p{N}]++[\\r\\n]*+|\\s++$|\\s*[\\r\\n]|\\s+(?!\\S)|\\s";
const O200K_PATTERN: &str = concat!(
    r"[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?",
    "|",
    r"[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?",
    "|",
    r"\p{N}{1,3}",
    "|",
    r" ?[^\s\p{L}\p{N}]+[\r\n/]*",
    "|",
    r"\s*[\r\n]+",
    "|",
    r"\s+(?!\S)",
    "|",
    r"\s+"
);

/// One encoding: its ranks, and its pattern once text that is not ASCII needed it.
struct Tokenizer {
    ranks: Ranks,
    encoding: Encoding,
    pattern: OnceLock<Option<fancy_regex::Regex>>,
}

impl Tokenizer {
    /// The encoding's ranks, read from the binary (a few pointer checks).
    fn load(encoding: Encoding) -> Option<Tokenizer> {
        let table = match encoding {
            Encoding::Cl100kBase => CL100K_TABLE,
            Encoding::O200kBase => O200K_TABLE,
        };
        Some(Tokenizer {
            ranks: Ranks::read(table)?,
            encoding,
            pattern: OnceLock::new(),
        })
    }

    /// The split pattern, compiled on first use (it takes milliseconds, and ASCII text
    /// never needs it).
    fn pattern(&self) -> Option<&fancy_regex::Regex> {
        self.pattern
            .get_or_init(|| {
                let source = match self.encoding {
                    Encoding::Cl100kBase => CL100K_PATTERN,
                    Encoding::O200kBase => O200K_PATTERN,
                };
                fancy_regex::Regex::new(source)
                    .inspect_err(|err| {
                        tracing::warn!("cannot compile the {:?} pattern: {err}", self.encoding)
                    })
                    .ok()
            })
            .as_ref()
    }

    /// Tokens of `text` split by the pattern, as tiktoken splits it.
    fn count_split(&self, text: &str) -> u64 {
        let Some(pattern) = self.pattern() else {
            return (text.len() as u64).div_ceil(4);
        };
        let mut total = 0;
        for found in pattern.find_iter(text) {
            match found {
                Ok(piece) => total += self.ranks.count(piece.as_str().as_bytes()),
                // The backtracking limit: the rest is estimated.
                Err(_) => return total + (text.len() as u64).div_ceil(4),
            }
        }
        total
    }
}

static CL100K: OnceLock<Option<Tokenizer>> = OnceLock::new();
static O200K: OnceLock<Option<Tokenizer>> = OnceLock::new();

fn tokenizer(encoding: Encoding) -> Option<&'static Tokenizer> {
    let cell = match encoding {
        Encoding::Cl100kBase => &CL100K,
        Encoding::O200kBase => &O200K,
    };
    cell.get_or_init(|| {
        let loaded = Tokenizer::load(encoding);
        if loaded.is_none() {
            tracing::warn!("the {encoding:?} table is malformed, estimating by size instead");
        }
        loaded
    })
    .as_ref()
}

/// tiktoken's own encoder, built on first use: only the reference the counts are
/// checked against uses it.
fn reference(encoding: Encoding) -> Option<&'static CoreBPE> {
    static CL100K: OnceLock<Option<CoreBPE>> = OnceLock::new();
    static O200K: OnceLock<Option<CoreBPE>> = OnceLock::new();
    let (cell, load): (_, fn() -> anyhow::Result<CoreBPE>) = match encoding {
        Encoding::Cl100kBase => (&CL100K, tiktoken_rs::cl100k_base),
        Encoding::O200kBase => (&O200K, tiktoken_rs::o200k_base),
    };
    cell.get_or_init(|| load().ok()).as_ref()
}

/// Makes `encoding` ready: its tables are in the binary, so this only checks their
/// layout (it built them, on a thread of its own, before).
pub fn preload(encoding: Encoding) {
    let _ = tokenizer(encoding);
}

/// Text longer than this is estimated (four bytes a token), not tokenized.
const EXACT_LIMIT_BYTES: usize = 1 << 20;

/// Counts tokens of text and of messages.
#[derive(Clone, Copy)]
pub struct TokenCounter {
    tokenizer: Option<&'static Tokenizer>,
    encoding: Encoding,
}

impl std::fmt::Debug for TokenCounter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(if self.tokenizer.is_some() {
            "TokenCounter(bpe)"
        } else {
            "TokenCounter(estimate)"
        })
    }
}

impl TokenCounter {
    /// The counter for `encoding`.
    pub fn new(encoding: Encoding) -> Self {
        Self {
            tokenizer: tokenizer(encoding),
            encoding,
        }
    }

    /// A counter that estimates four bytes per token (when the tokenizer is unavailable).
    pub fn estimate_only() -> Self {
        Self {
            tokenizer: None,
            encoding: Encoding::Cl100kBase,
        }
    }

    pub fn count(&self, text: &str) -> u64 {
        match self.tokenizer {
            // Past a megabyte the tokenizer can take seconds (a long run without spaces is
            // its worst case); such text is far over any budget, and an estimate does.
            Some(tokenizer) if text.len() <= EXACT_LIMIT_BYTES => {
                let piece = |piece: &str| tokenizer.ranks.count(piece.as_bytes());
                if text.is_ascii() {
                    return pieces::count_ascii(text, self.encoding, piece);
                }
                pieces::split_at_lines(text)
                    .map(|part| match part.is_ascii() {
                        true => pieces::count_ascii(part, self.encoding, piece),
                        false => tokenizer.count_split(part),
                    })
                    .sum()
            }
            Some(_) | None => (text.len() as u64).div_ceil(4),
        }
    }

    /// What tiktoken itself counts for `text`, every piece through its regex and its
    /// own tables: the reference [`count`](Self::count) is checked against.
    pub fn count_by_regex(&self, text: &str) -> u64 {
        match self.tokenizer.and_then(|_| reference(self.encoding)) {
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

    /// Pieces of 100 bytes or more merge through the heap (`merge_long`), shorter ones
    /// on the list; both give what tiktoken gives, with its own tables.
    #[test]
    fn long_and_short_pieces_count_as_tiktoken_does() {
        let mut rng = fastrand::Rng::with_seed(26);
        let letters: String = (0..5000).map(|_| rng.alphabetic()).collect();
        let texts = [
            "a".repeat(1000),
            "ab".repeat(777),
            letters.clone(),
            letters.to_uppercase(),
            "-=".repeat(400),
            " ".repeat(300) + "x",
            "é".repeat(250),
            "中文字符".repeat(120),
            "aé".repeat(300),
            format!("{letters} {}\n\tfn main() {{}}", "0123456789".repeat(50)),
            "The quick brown fox's jumps, over the lazy dog's back.\r\n".repeat(20),
        ];
        for encoding in [Encoding::Cl100kBase, Encoding::O200kBase] {
            let counter = TokenCounter::new(encoding);
            for text in &texts {
                assert_eq!(
                    counter.count(text),
                    counter.count_by_regex(text),
                    "{encoding:?} on {}",
                    text.chars().take(40).collect::<String>()
                );
            }
        }
    }
}

#[cfg(test)]
mod start_cost {
    use super::*;

    fn thread_cpu() -> std::time::Duration {
        let mut now = libc::timespec {
            tv_sec: 0,
            tv_nsec: 0,
        };
        // SAFETY: clock_gettime writes one timespec into `now`.
        unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut now) };
        std::time::Duration::new(now.tv_sec as u64, now.tv_nsec as u32)
    }

    /// Building tiktoken's tables for both encodings took about 0.3 s of CPU here (0.1 s
    /// for cl100k in a release build, a quarter of a short `exec`), in every process.
    #[test]
    fn an_encoding_is_ready_without_building_its_tables() {
        let started = thread_cpu();
        let cl100k = Tokenizer::load(Encoding::Cl100kBase).unwrap();
        let o200k = Tokenizer::load(Encoding::O200kBase).unwrap();
        assert_eq!(cl100k.ranks.count(b"hello") + cl100k.ranks.count(b" world"), 2);
        assert_eq!(o200k.ranks.count(b"hello") + o200k.ranks.count(b" world"), 2);
        let spent = thread_cpu() - started;
        assert!(spent < std::time::Duration::from_millis(5), "{spent:?}");
    }
}
