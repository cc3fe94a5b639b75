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
const CHECK_EVERY: usize = 200;

/// Whether `text` ends in a loop: a span of up to [`MAX_PERIOD`] bytes repeated back to
/// back at least [`REPEATS`] times, over at least `REPEATS × TAIL_BYTES` bytes, and not
/// just whitespace. Looks at the last `REPEATS × MAX_PERIOD` bytes at most.
pub fn keeps_repeating(text: &str) -> bool {
    repeating_run(text).is_some()
}

/// The start of the loop `text` ends in (see [`keeps_repeating`]) and its period.
fn repeating_run(text: &str) -> Option<(usize, usize)> {
    let bytes = text.as_bytes();
    let n = bytes.len();
    if n < TAIL_BYTES * REPEATS {
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
        let run = (period * REPEATS).max(TAIL_BYTES * REPEATS);
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
        let looping = format!("Intro. {}", "I will check the file again. ".repeat(12));
        assert!(keeps_repeating(&looping));
        let cut = cut_repetition(&looping);
        assert!(cut.starts_with("Intro. I will check the file again."), "{cut}");
        assert!(cut.matches("check the file again").count() <= 2, "{cut}");
        let prose: String = (1..200)
            .map(|n| format!("Line {n} says something new. "))
            .collect();
        assert!(!keeps_repeating(&prose));
        assert_eq!(cut_repetition(&prose), prose);
        assert!(!keeps_repeating(&" ".repeat(1000)), "whitespace is not a loop");
        assert!(!keeps_repeating("short"));
        assert!(keeps_repeating(&"ab".repeat(200)));
        assert!(keeps_repeating(&"重复".repeat(200)));
        // A long paragraph said over and over is a loop too.
        let paragraph: String = (1..40).map(|n| format!("point {n}; ")).collect();
        assert!(keeps_repeating(&format!("Start. {}", paragraph.repeat(7))));
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

    #[test]
    fn the_guard_checks_only_every_so_often() {
        let mut guard = RepetitionGuard::default();
        let looping = "again and again ".repeat(40);
        assert!(!guard.check(&looping[..100]), "too soon to check");
        assert!(guard.check(&looping));
    }
}
