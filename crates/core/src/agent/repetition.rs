//! The repetition guard (after MiroThinker's): notices a streamed reply stuck in a loop,
//! the same span said again and again back to back.
//!
//! A check looks only at the end of the reply: where the last [`TAIL_BYTES`] bytes
//! occurred before, within [`MAX_PERIOD`] bytes, and whether the text is periodic with
//! that distance over a long enough stretch. Its cost is bounded by a constant, and the
//! stream checks every [`CHECK_EVERY`] bytes, so a whole reply costs time linear in its
//! length (the old guard counted the tail over the whole reply at every check:
//! quadratic, 10 s of CPU for an 8 MB reply).

/// Bytes of the reply's end that must have been said before, back to back.
const TAIL_BYTES: usize = 50;
/// How many times the repeated span must be there, at least.
const REPEATS: usize = 6;
/// The longest repeated span looked for; a longer loop is left to the reply's size cap.
const MAX_PERIOD: usize = 4096;
/// Earlier occurrences of the tail tried as the loop's start (the nearest first).
const CANDIDATES: usize = 3;
/// How much new text arrives between two checks.
const CHECK_EVERY: usize = 512;
/// The shortest loop reported, in bytes (about 3,000 tokens). Real answers repeat
/// exactly too: a zero-filled table, a box drawn with `─`, a blank snapshot, a golden
/// file's frame, a few KB each. A degenerate loop never ends, so waiting this long
/// costs little and spares those; the corpus test below measures both sides.
const MIN_RUN: usize = 12 * 1024;

/// Whether `text` ends in a loop: a span of up to [`MAX_PERIOD`] bytes repeated back to
/// back at least [`REPEATS`] times, over at least [`MIN_RUN`] bytes, and not just
/// whitespace. Looks at the last `REPEATS × MAX_PERIOD` bytes at most.
pub fn keeps_repeating(text: &str) -> bool {
    repeating_run(text).is_some()
}

/// The start of the loop `text` ends in (see [`keeps_repeating`]) and its period.
fn repeating_run(text: &str) -> Option<(usize, usize)> {
    let bytes = text.as_bytes();
    let n = bytes.len();
    if n < MIN_RUN {
        return None;
    }
    let tail = &bytes[n - TAIL_BYTES..];
    if tail.iter().all(u8::is_ascii_whitespace) {
        return None;
    }
    // Earlier occurrences of the tail, nearest first, within one period's reach.
    let window_start = n.saturating_sub(MAX_PERIOD + TAIL_BYTES);
    let mut search_end = n - 1;
    for _ in 0..CANDIDATES {
        let found = memchr::memmem::rfind(&bytes[window_start..search_end], tail)?;
        let period = n - TAIL_BYTES - (window_start + found);
        let run = (period * REPEATS).max(MIN_RUN);
        // Periodic over the last `run` bytes: each byte equals the one a period before.
        if run <= n && bytes[n - run..n - period] == bytes[n - run + period..] {
            return Some((n - run, period));
        }
        search_end = window_start + found + TAIL_BYTES - 1;
    }
    None
}

/// `text` cut so the repeated span is said once: up to the end of its first occurrence
/// within the loop. Text without a loop comes back whole.
pub fn cut_repetition(text: &str) -> String {
    let Some((mut start, period)) = repeating_run(text) else {
        return text.to_string();
    };
    // Back to where the loop began (once per reply, so linear).
    let bytes = text.as_bytes();
    while start > 0 && bytes[start - 1] == bytes[start - 1 + period] {
        start -= 1;
    }
    // Keep the first full span, and at least one tail's worth, on a character boundary.
    let mut end = (start + period.max(TAIL_BYTES)).min(text.len());
    while !text.is_char_boundary(end) {
        end += 1;
    }
    text[..end].to_string()
}

/// Checks a growing reply every so often (every [`CHECK_EVERY`] new bytes).
#[derive(Debug, Default)]
pub struct RepetitionGuard {
    checked: usize,
}

impl RepetitionGuard {
    /// Whether `text`, the reply so far, has fallen into a loop. Cheap between checks.
    pub fn check(&mut self, text: &str) -> bool {
        if text.len() < self.checked + CHECK_EVERY {
            return false;
        }
        self.checked = text.len();
        keeps_repeating(text)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_looping_tail_is_caught_and_normal_text_is_not() {
        let looping = format!("Intro. {}", "I will check the file again. ".repeat(500));
        assert!(keeps_repeating(&looping));
        let cut = cut_repetition(&looping);
        assert!(cut.starts_with("Intro. I will check the file again."), "{cut}");
        assert!(cut.matches("check the file again").count() <= 2, "{cut}");
        let prose: String = (1..2000)
            .map(|n| format!("Line {n} says something new. "))
            .collect();
        assert!(!keeps_repeating(&prose));
        assert_eq!(cut_repetition(&prose), prose);
        assert!(!keeps_repeating(&" ".repeat(20_000)), "whitespace is not a loop");
        assert!(!keeps_repeating("short"));
        assert!(keeps_repeating(&"ab".repeat(MIN_RUN)));
        assert!(keeps_repeating(&"重复".repeat(MIN_RUN / 3)));
        // A long paragraph said over and over is a loop too.
        let paragraph: String = (1..40).map(|n| format!("point {n}; ")).collect();
        assert!(keeps_repeating(&format!("Start. {}", paragraph.repeat(40))));
    }

    #[test]
    fn a_loop_shorter_than_the_minimum_run_is_left_alone() {
        // 32 rows of zeros, a few KB: a real table, not a loop.
        let table = format!("[\n{}]", format!("    [{}],\n", ["0"; 32].join(", ")).repeat(32));
        assert!(table.len() < MIN_RUN);
        assert!(!keeps_repeating(&table));
        assert!(keeps_repeating(&format!(
            "{table}{}",
            "0, ".repeat(MIN_RUN / 3 + 1)
        )));
    }

    #[test]
    fn a_span_repeated_far_apart_is_not_a_loop() {
        // The same 60-byte line recurring in a long table is structure, not a loop.
        let row = "| the same long cell text in every row of this table |";
        let table: String = (0..100)
            .map(|n| format!("| {n:>4} {row}\n| other {n} |\n"))
            .collect();
        let text = format!("{table}| total {row}");
        assert!(!keeps_repeating(&text));
    }

    /// Streams `text` through a guard in deltas of varied sizes, as a provider sends
    /// them, and returns how many bytes had arrived when the guard fired.
    fn fires_at(text: &str, seed: u64) -> Option<usize> {
        let mut rng = fastrand::Rng::with_seed(seed);
        let mut guard = RepetitionGuard::default();
        let mut end = 0;
        while end < text.len() {
            end = (end + rng.usize(1..600)).min(text.len());
            while !text.is_char_boundary(end) {
                end += 1;
            }
            if guard.check(&text[..end]) {
                return Some(end);
            }
        }
        None
    }

    fn corpus(kind: &str) -> Vec<(String, String)> {
        let folder = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../tests/data/repetition")
            .join(kind);
        let mut files: Vec<(String, String)> = std::fs::read_dir(&folder)
            .unwrap()
            .map(|entry| {
                let path = entry.unwrap().path();
                let name = path.file_name().unwrap().to_string_lossy().into_owned();
                (name, std::fs::read_to_string(&path).unwrap())
            })
            .collect();
        files.sort();
        assert!(files.len() >= 10, "the {kind} corpus is missing");
        files
    }

    /// The false-positive rate on real long answers (configs, tables, generated tests,
    /// fixtures, diagrams, snapshots: structure repeats) must be zero, and the
    /// true-positive rate on real degenerate loops one, each caught within
    /// `MIN_RUN` bytes and a few checks of where it began.
    #[test]
    fn real_answers_pass_and_real_loops_are_caught() {
        let legit = corpus("legit");
        let mut false_alarms = Vec::new();
        for (name, text) in &legit {
            for seed in 0..4 {
                if let Some(at) = fires_at(text, seed) {
                    false_alarms.push(format!("{name} at byte {at}"));
                    break;
                }
            }
        }
        let loops = corpus("loops");
        let mut missed = Vec::new();
        for (name, text) in &loops {
            for seed in 0..4 {
                match fires_at(text, seed) {
                    Some(at) if at <= MIN_RUN + 4 * MAX_PERIOD + 1024 => {}
                    other => {
                        missed.push(format!("{name}: {other:?}"));
                        break;
                    }
                }
            }
        }
        eprintln!(
            "false positives: {}/{} real answers; loops caught: {}/{}",
            false_alarms.len(),
            legit.len(),
            loops.len() - missed.len(),
            loops.len()
        );
        assert_eq!(
            false_alarms,
            Vec::<String>::new(),
            "real answers were taken for loops"
        );
        assert_eq!(
            missed,
            Vec::<String>::new(),
            "degenerate loops were not caught in time"
        );
    }

    #[test]
    fn the_guard_checks_only_every_so_often() {
        let mut guard = RepetitionGuard::default();
        let looping = "again and again ".repeat(MIN_RUN / 8);
        assert!(!guard.check(&looping[..100]), "too soon to check");
        assert!(guard.check(&looping));
    }
}
