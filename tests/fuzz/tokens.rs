//! Target 6: token counting. Counting ASCII without the tokenizer's regex, and cutting
//! mixed text at line starts, gives exactly what tiktoken counts through its regex, for
//! both encodings.

use miniagent_core::tokens::{Encoding, TokenCounter};
use pretty_assertions::assert_eq;

use super::fuzz;
use super::mutate::Mutator;

/// Pieces that sit on the patterns' rule boundaries: contractions in both cases, case
/// changes, digit runs, every ASCII space, punctuation before letters and line breaks,
/// and Unicode spaces, letters and marks next to them.
const FRAGMENTS: &[&str] = &[
    "a",
    "Z",
    "word",
    "Word",
    "WORD",
    "camelCase",
    "'",
    "'s",
    "'S",
    "'t",
    "'ll",
    "'LL",
    "'Re",
    "'ve",
    "'m",
    "'d",
    "'x",
    "1",
    "12",
    "1234567",
    " ",
    "  ",
    "   ",
    "\t",
    "\n",
    "\r",
    "\r\n",
    "\n\n",
    "\u{b}",
    "\u{c}",
    "!",
    ".",
    "/",
    "//",
    "(",
    "_",
    "\0",
    "\u{7f}",
    " !",
    " a",
    "\ta",
    "é",
    "É",
    "\u{301}",
    "\u{3000}",
    "\u{85}",
    "\u{a0}",
    "\u{2028}",
    "中文",
    "ǅ",
    "ʰ",
    "½",
    "😀",
];

fn random_fragments(rng: &mut fastrand::Rng) -> String {
    (0..rng.usize(1..40))
        .map(|_| {
            // Mostly ASCII, so that the ASCII path is what gets checked most.
            let pick = if rng.u8(..4) == 0 {
                rng.usize(..FRAGMENTS.len())
            } else {
                rng.usize(..FRAGMENTS.iter().position(|f| *f == "é").unwrap_or(1))
            };
            FRAGMENTS[pick]
        })
        .collect()
}

#[test]
fn token_counts_match_the_tokenizer_regex() {
    let counters = [
        TokenCounter::new(Encoding::Cl100kBase),
        TokenCounter::new(Encoding::O200kBase),
    ];
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    // Every seed must be there: a file moved away would quietly shrink the fuzzing.
    let mut seeds: Vec<Vec<u8>> = [
        "README.md",
        "crates/core/src/tokens/pieces.rs",
        "crates/tui/src/run.rs",
        "crates/tui/src/text/markdown/mod.rs",
    ]
    .iter()
    .map(|file| std::fs::read(root.join(file)).unwrap_or_else(|err| panic!("seed {file}: {err}")))
    .collect();
    let numbers: String = (1..=3000).map(|n| format!("{n}\n")).collect();
    seeds.push(numbers.into_bytes());
    seeds.push(b"It's THE end.\r\n\r\n  They'LL say: \"don't\" -- x/y // z\t\t\n".to_vec());
    let dictionary: Vec<&[u8]> = FRAGMENTS.iter().map(|f| f.as_bytes()).collect();
    let mutator = Mutator {
        seeds: &seeds,
        dictionary: &dictionary,
        json_eighths: 0,
    };
    // The real files, whole, first.
    for seed in &seeds {
        let text = String::from_utf8_lossy(seed);
        for counter in &counters {
            assert_eq!(counter.count(&text), counter.count_by_regex(&text));
        }
    }
    fuzz("token_counts_match_the_tokenizer_regex", 3000, |rng, input| {
        *input = if rng.bool() {
            random_fragments(rng).into_bytes()
        } else {
            let mut text = mutator.mutated(rng);
            // Whole files are slow to count twice in debug builds: a window of one.
            let start = rng.usize(..=text.len());
            text.drain(..start);
            text.truncate(rng.usize(..4096));
            text
        };
        let text = String::from_utf8_lossy(input);
        for counter in &counters {
            assert_eq!(
                counter.count(&text),
                counter.count_by_regex(&text),
                "{counter:?} on {text:?}"
            );
        }
    });
}
