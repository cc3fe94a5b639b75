//! Target 6: escape sequences in text for a terminal. Whatever the bytes, cleaned text
//! holds no character a terminal would act on, reads the same however it is cut into
//! pieces, and is never longer than the input; tool output drawn in the workbench holds
//! only characters that are shown, and the text for the model no control characters.

use fastrand::Rng;
use miniagent_text::{self as terminal_text, Cleaner};
use miniagent_tui::text::ansi::ansi_lines;
use miniagent_tui::theme::Theme;
use pretty_assertions::assert_eq;

use super::fuzz;
use super::mutate::Mutator;

const TERMINAL_SEEDS: &[&str] = &[
    "\x1b[1m\x1b[32m   Compiling\x1b[0m miniagent v0.1.0\n\x1b[1;33mwarning\x1b[0m: unused\n",
    "[>    ] 10%\r[==>  ] 60%\r[=====] 100%\x1b[K\ndone\r\n",
    "\x1b]0;title\x07\x1b]8;;https://x.test\x1b\\link\x1b]8;;\x1b\\ \x1b]52;c;cm0gLXJm\x1b\\\n",
    "\u{9b}31mc1\u{9b}0m \u{9d}0;t\u{9c} \u{90}dcs\u{9c} \x1bPq#0;2\x1b\\ \x1bX sos \x1b\\\n",
    "\x1b[38;2;255;128;0morange\x1b[38:2::1:2:3mrgb\x1b[48;5;208mbg\x1b[?25l\x1b[2J\x1b[H\t.\n",
    "e\u{301} 你好 👨\u{200d}👩\u{200d}👧 🇺🇸 ❤\u{fe0f} कि \u{202e}bidi\u{202c} \x07\x08\x7f\0\n",
];

const TERMINAL_TOKENS: &[&[u8]] = &[
    b"\x1b",
    b"\x1b[",
    b"\x1b]",
    b"\x1bP",
    b"\x1b\\",
    b"\x1b(",
    b"\x07",
    b"\x18",
    b"\x1a",
    b"\r",
    b"\n",
    b"\t",
    b"\x08",
    b";",
    b":",
    b"?",
    b" ",
    b"m",
    b"K",
    b"38;5;",
    b"48;2;",
    b"99999",
    "\u{9b}".as_bytes(),
    "\u{9c}".as_bytes(),
    "\u{9d}".as_bytes(),
    "\u{90}".as_bytes(),
    "\u{85}".as_bytes(),
    "\u{202e}".as_bytes(),
    "\u{301}".as_bytes(),
    "\u{200d}".as_bytes(),
    "\u{fe0f}".as_bytes(),
    "你".as_bytes(),
    "👩".as_bytes(),
    "🇺".as_bytes(),
    b"\xc3",
];

/// Whether `c` may be in cleaned text.
fn inert(c: char) -> bool {
    c == '\n' || terminal_text::shown(c)
}

#[test]
fn terminal_text_is_inert_however_it_is_cut() {
    let seeds: Vec<Vec<u8>> = TERMINAL_SEEDS
        .iter()
        .map(|seed| seed.as_bytes().to_vec())
        .collect();
    let mutator = Mutator {
        seeds: &seeds,
        dictionary: TERMINAL_TOKENS,
        json_eighths: 0,
    };
    fuzz(
        "terminal_text_is_inert_however_it_is_cut",
        3000,
        |rng: &mut Rng, input| {
            *input = mutator.mutated(rng);
            let text = String::from_utf8_lossy(input);
            let clean = terminal_text::clean(&text);
            assert!(clean.chars().all(inert), "cleaned: {clean:?}");
            assert!(clean.len() <= text.len());

            // The same text in pieces cut at random character boundaries.
            let mut cleaner = Cleaner::default();
            let mut pieces = String::new();
            let mut rest: &str = &text;
            while !rest.is_empty() {
                let mut end = rng.usize(..=rest.len().min(16));
                while !rest.is_char_boundary(end) {
                    end += 1;
                }
                cleaner.push(&rest[..end], &mut pieces);
                rest = &rest[end..];
            }
            assert_eq!(pieces, clean, "cut into pieces");

            let model = terminal_text::for_model(&text);
            assert!(
                model.chars().all(|c| c == '\n' || c == '\t' || !c.is_control()),
                "for the model: {model:?}"
            );

            let lines = ansi_lines(&text, &Theme::dark());
            let drawn: String = lines
                .iter()
                .flat_map(|line| line.spans.iter().map(|span| span.content.as_ref()))
                .collect();
            assert!(
                drawn.chars().all(inert) && !drawn.contains('\n'),
                "drawn: {drawn:?}"
            );
            // Tabs expand to at most eight columns; nothing else grows.
            assert!(drawn.len() <= 8 * text.len());
        },
    );
}
