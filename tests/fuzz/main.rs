//! Seeded, structure-aware fuzzing of every parser that reads outside input: the SSE
//! decoding of both providers, the tool-call argument assembly inside it, the session-log
//! loader (and restoring a session from what it loads), the markdown renderer, the
//! skill front-matter parser and the escape-sequence scanner.
//!
//! Each target edits valid seeds the way fuzzers do (bit flips, truncation, splicing,
//! duplication), inserts tokens that matter to parsers (`\r`, `\n\n`, `data:`, `{`, `"`,
//! multi-byte and invalid UTF-8, huge numbers, deep nesting) and edits any JSON it finds
//! as JSON (wrong types, garbage indices, deleted fields). It then checks invariants, not
//! only that nothing panicked:
//!
//! - SSE: every stream ends in exactly one completion or one error, after deltas only;
//!   tool inputs are objects and invalid-argument reports name real calls; the result is
//!   the same however the bytes are cut into chunks; for valid streams, what streamed as
//!   deltas is the reply's text and thinking.
//! - Tool-call arguments: split anywhere, both providers assemble what parsing the whole
//!   text gives (an object, `{}` for nothing, or a reported error).
//! - Session logs: a valid log round-trips to the same context and prompt; a damaged one
//!   loads what it can, writes back and loads the same, and restoring, building the
//!   prompt, counting it and closing open calls never panic.
//! - Markdown: no rendered line is wider than the width, measured the way ratatui paints
//!   it; rendering is repeatable.
//! - Skill front matter: parsing is repeatable; CRLF and a byte-order mark read the same
//!   as without; a parsed skill's name, description and tools are trimmed and non-empty.
//! - Terminal text: cleaned text holds nothing a terminal acts on and reads the same
//!   however it is cut into pieces; drawn tool output and text for the model hold no
//!   control characters.
//! - Token counts: the regex-free count of ASCII (and of mixed text cut at line starts)
//!   equals tiktoken's own, for both encodings.
//!
//! By default each target runs a fixed number of cases from a fixed seed: quick and
//! repeatable. Longer runs by hand:
//!
//! ```text
//! MINIAGENT_FUZZ_ITERATIONS=200000 MINIAGENT_FUZZ_SEED=12345 \
//!     cargo test --release --test all fuzz:: -- --nocapture
//! ```
//!
//! A failing case prints its target, the case seed that reproduces it on its own
//! (`MINIAGENT_FUZZ_CASE=… cargo test --test all fuzz::TARGET`) and its input, escaped; the
//! input is also saved under `target/tmp/`. A stack overflow aborts the process before
//! anything can be printed: rerun with `MINIAGENT_FUZZ_VERBOSE=1` and `--nocapture` to see
//! each case's seed as it starts.
//!
//! The harness that runs and reports cases is here; the mutation engine is in [`mutate`],
//! and each group of targets has its own module: [`sse`], [`tool_call_arguments`],
//! [`session_log`], [`markdown`], [`front_matter`] and [`terminal_text`].
#![allow(clippy::unwrap_used, clippy::expect_used)] // A test fails by panicking.

mod front_matter;
mod markdown;
mod mutate;
mod session_log;
mod sse;
mod terminal_text;
mod tokens;
mod tool_call_arguments;

use std::panic::{AssertUnwindSafe, catch_unwind, resume_unwind};
use std::path::PathBuf;
use std::time::Instant;

use fastrand::Rng;

/// The seed of a default run ("miniagen" in ASCII).
const DEFAULT_SEED: u64 = 0x6d69_6e69_6167_656e;

/// The seed of a run's `iteration`th case (SplitMix64 of the two), so that runs from
/// different seeds try different cases.
fn case_seed(run_seed: u64, iteration: u64) -> u64 {
    let mut z = run_seed
        .wrapping_add(iteration.wrapping_mul(0x9e37_79b9_7f4a_7c15))
        .wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// Runs `case` for the configured number of iterations, each with its own generator
/// seeded from the run's seed and the iteration number (or only the case
/// `MINIAGENT_FUZZ_CASE` names). `case` writes the input it is about to check into its
/// second argument first, so that a panic can show it.
fn fuzz(target: &str, default_iterations: u64, mut case: impl FnMut(&mut Rng, &mut Vec<u8>)) {
    let read = |name: &str| {
        std::env::var(name)
            .ok()
            .and_then(|value| value.trim().parse::<u64>().ok())
    };
    let seed = read("MINIAGENT_FUZZ_SEED").unwrap_or(DEFAULT_SEED);
    let cases: Vec<u64> = match read("MINIAGENT_FUZZ_CASE") {
        Some(only) => vec![only],
        None => {
            let iterations = read("MINIAGENT_FUZZ_ITERATIONS").unwrap_or(default_iterations);
            (0..iterations)
                .map(|iteration| case_seed(seed, iteration))
                .collect()
        }
    };
    let verbose = std::env::var_os("MINIAGENT_FUZZ_VERBOSE").is_some();
    let started = Instant::now();
    for &case_seed in &cases {
        if verbose {
            eprintln!("{target}: case seed {case_seed}");
        }
        let mut rng = Rng::with_seed(case_seed);
        let mut input = Vec::new();
        if let Err(panic) = catch_unwind(AssertUnwindSafe(|| case(&mut rng, &mut input))) {
            report(target, case_seed, &input);
            resume_unwind(panic);
        }
    }
    eprintln!(
        "{target}: {} cases from seed {seed} in {:.2} s",
        cases.len(),
        started.elapsed().as_secs_f64()
    );
}

fn report(target: &str, case_seed: u64, input: &[u8]) {
    let file = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(format!("fuzz-{target}-{case_seed}.bin"));
    let saved = match std::fs::write(&file, input) {
        Ok(()) => format!("saved to {}", file.display()),
        Err(err) => format!("could not be saved: {err}"),
    };
    let shown = match std::str::from_utf8(input) {
        Ok(text) => format!("{text:?}"),
        Err(_) => format!("b\"{}\"", input.escape_ascii()),
    };
    let shown: String = if shown.len() > 4_000 {
        format!(
            "{}… (cut; see the file)",
            shown.chars().take(4_000).collect::<String>()
        )
    } else {
        shown
    };
    eprintln!(
        "\n=== fuzz target `{target}` failed ===\n\
         reproduce: MINIAGENT_FUZZ_CASE={case_seed} cargo test --test all fuzz::{target}\n\
         input: {} bytes, {saved}\n{shown}\n",
        input.len()
    );
}
