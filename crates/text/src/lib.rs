//! Text from the model, tools, servers and session logs made inert for a terminal.
//!
//! One set of rules for everything a person reads: the workbench's tool output
//! (the workbench's ANSI reader), every line `exec`, `sessions` and `replay --headless`
//! print, errors, and the human-readable files (`mcp.log`, the workbench's log through
//! [`CleanWriter`]). Escape sequences of every kind (CSI, OSC with
//! a BEL or ST terminator, DCS, SOS, PM, APC, short escapes, their C1 forms, and ones
//! never finished) are recognised by [`Sequences`]; the workbench turns colour sequences
//! into styles, everything else drops them. Control characters other than newline and
//! tab, C1 controls, and the bidi embedding, override and isolate controls (which can make
//! a command read differently from what it is) are never shown.
//!
//! The parsing itself is `vte`'s (the ECMA-48 state machine of Alacritty), streaming so
//! that exec can clean deltas as they arrive, and built without its `std` feature so an
//! OSC string is kept in a fixed 1 KiB buffer however long it runs. [`Sequences`] adds
//! the rules of this project on top, which a terminal emulator does not have: the C1
//! introducers in their UTF-8 form start sequences (vte only executes them), a newline
//! ends any sequence or string (a stray introducer cannot swallow the output after
//! it), BEL ends every kind of string, and a character that cannot continue a control
//! sequence ends it and is read normally.
//!
//! `--json` output carries the raw text instead, with [`escape_json_controls`] so that
//! even the C1 and bidi characters JSON allows raw are escaped.

use std::borrow::Cow;
use std::io::Write;

use vte::{Params, Parser, Perform};

const ESC: char = '\u{1b}';
const BEL: char = '\u{7}';
/// Cancel: ends any sequence or string in vte.
const CAN: u8 = 0x18;
/// C1 forms of the introducers and terminator, which some terminals honour in UTF-8.
const C1_DCS: char = '\u{90}';
const C1_SOS: char = '\u{98}';
const C1_CSI: char = '\u{9b}';
const C1_ST: char = '\u{9c}';
const C1_OSC: char = '\u{9d}';
const C1_PM: char = '\u{9e}';
const C1_APC: char = '\u{9f}';

/// `text` with every escape sequence and every control character but newline and tab
/// removed; borrowed when there was nothing to remove.
pub fn clean(text: &str) -> Cow<'_, str> {
    if text.chars().all(|c| shown(c) || c == '\n') {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len());
    Cleaner::default().push(text, &mut out);
    Cow::Owned(out)
}

/// Whether `text` holds a control character (Unicode's Cc: C0, DEL and C1) other than
/// a newline or a tab, looked for byte by byte: C1 is the only one outside ASCII, and
/// UTF-8 writes it as 0xC2 then 0x80..=0x9F. Decoding every character of a command's
/// output to ask was most of the cost of reading output that has none.
fn has_control(text: &str) -> bool {
    let bytes = text.as_bytes();
    bytes.iter().enumerate().any(|(at, &byte)| match byte {
        b'\n' | b'\t' => false,
        0..=0x1f | 0x7f => true,
        0xc2 => bytes.get(at + 1).is_some_and(|next| (0x80..=0x9f).contains(next)),
        _ => false,
    })
}

/// `text` as a model should read a command's output: what a terminal would show of it,
/// without colours. Escape sequences are removed entirely (not made visible: they cost
/// tokens and mean nothing to a model), a carriage return lets later text overwrite the
/// line as on a terminal (a progress bar keeps only its final state; `\r\n` is a plain
/// newline), erase-in-line is applied, and other control characters are dropped. Bidi
/// controls stay: for the model they are text, and it may need to see them.
pub fn for_model(text: &str) -> Cow<'_, str> {
    if !has_control(text) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len());
    let mut line: Vec<char> = Vec::new();
    let mut column = 0;
    Sequences::default().feed(text, &mut |step| match step {
        Step::Char('\n') => {
            out.extend(line.drain(..));
            out.push('\n');
            column = 0;
        }
        Step::Char('\r') => column = 0,
        Step::Char(c) if c == '\t' || !c.is_control() => {
            match line.get_mut(column) {
                Some(cell) => *cell = c,
                None => line.push(c),
            }
            column += 1;
        }
        Step::Char(_) => {}
        Step::Csi {
            params,
            intermediates: [],
            final_byte: 'K',
        } => match erase_mode(params) {
            Some(0) => line.truncate(column),
            Some(1) => line.iter_mut().take(column).for_each(|cell| *cell = ' '),
            Some(2) => {
                line.clear();
                line.resize(column, ' ');
            }
            _ => {}
        },
        Step::Csi { .. } => {}
    });
    out.extend(line);
    Cow::Owned(out)
}

/// The mode of an erase-in-line (`CSI K`): its one parameter, 0 when there is none.
pub fn erase_mode(params: &Params) -> Option<u16> {
    let mut groups = params.iter();
    match (groups.next(), groups.next()) {
        (None, _) => Some(0),
        (Some([mode]), None) => Some(*mode),
        _ => None,
    }
}

/// `text` with every character a terminal would act on made visible instead: C0
/// controls and DEL as their control pictures (`␛`, `␍`), C1 and bidi controls as
/// `<U+XXXX>`; newline and tab stay. For showing exactly what text holds.
pub fn visible(text: &str) -> Cow<'_, str> {
    let plain = |c: char| c == '\n' || c == '\t' || (!c.is_control() && !is_bidi_control(c));
    if text.chars().all(plain) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 16);
    for c in text.chars() {
        match c {
            c if plain(c) => out.push(c),
            '\0'..='\u{1f}' => out.push(char::from_u32(0x2400 + u32::from(c)).unwrap_or('\u{fffd}')),
            '\u{7f}' => out.push('\u{2421}'),
            c => out.push_str(&format!("<U+{:04X}>", u32::from(c))),
        }
    }
    Cow::Owned(out)
}

/// [`visible`], and also every character a reader could not tell from a space or from
/// nothing shown as what it is: a tab (`␉`, which reads as nothing between two words),
/// one that draws nothing or reorders text (zero-width spaces and joiners, fillers,
/// tags, variation selectors, line and paragraph separators), and one drawn as a blank
/// that is not the space a shell splits words at (no-break, ideographic and the other
/// Unicode spaces, the blank Braille pattern) as `<U+XXXX>`. Newlines stay. For what a
/// person approves or reads as a command line.
pub fn exact(text: &str) -> Cow<'_, str> {
    let shown = visible(text);
    if !shown.chars().any(|c| c == '\t' || looks_blank(c)) {
        return shown;
    }
    let mut out = String::with_capacity(shown.len() + 16);
    for c in shown.chars() {
        match c {
            '\t' => out.push('\u{2409}'),
            c if looks_blank(c) => out.push_str(&format!("<U+{:04X}>", u32::from(c))),
            c => out.push(c),
        }
    }
    Cow::Owned(out)
}

/// A character drawn as nothing or as a blank other than the ASCII space (see [`exact`]).
fn looks_blank(c: char) -> bool {
    matches!(c,
        '\u{a0}' | '\u{ad}' | '\u{34f}' | '\u{61c}' | '\u{115f}' | '\u{1160}' | '\u{1680}'
        | '\u{17b4}' | '\u{17b5}' | '\u{180b}'..='\u{180f}' | '\u{2000}'..='\u{200f}'
        | '\u{2028}'..='\u{202f}' | '\u{205f}'..='\u{206f}' | '\u{2800}' | '\u{3000}'
        | '\u{3164}' | '\u{fe00}'..='\u{fe0f}' | '\u{feff}' | '\u{ffa0}'
        | '\u{fff0}'..='\u{fffb}' | '\u{e0000}'..='\u{e0fff}')
}

/// Whether a character may reach the terminal as it is: not a control character (tab
/// aside; newline is the caller's to handle) and not a bidi formatting control.
pub fn shown(c: char) -> bool {
    (c == '\t' || !c.is_control()) && !is_bidi_control(c)
}

/// Embeddings, overrides and isolates (U+202A–U+202E, U+2066–U+2069). The marks
/// (U+200E, U+200F) only hint at direction and stay.
fn is_bidi_control(c: char) -> bool {
    matches!(c, '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}')
}

/// [`clean`] for text that arrives in pieces: a sequence split between two pieces is
/// still removed whole.
#[derive(Debug, Default)]
pub struct Cleaner {
    sequences: Sequences,
}

impl Cleaner {
    /// Appends the shown part of `text` to `out`.
    pub fn push(&mut self, text: &str, out: &mut String) {
        self.sequences.feed(text, &mut |step| {
            if let Step::Char(c) = step
                && (c == '\n' || shown(c))
            {
                out.push(c);
            }
        });
    }
}

/// A writer that cleans the text written through it, for a log file read on a terminal.
/// Each write is taken as UTF-8 (a log line is written whole); a sequence split between
/// writes is still removed whole.
#[derive(Debug)]
pub struct CleanWriter<W> {
    inner: W,
    cleaner: Cleaner,
}

impl<W> CleanWriter<W> {
    pub fn new(inner: W) -> Self {
        Self {
            inner,
            cleaner: Cleaner::default(),
        }
    }
}

impl<W: Write> Write for CleanWriter<W> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let mut out = String::with_capacity(buf.len());
        self.cleaner.push(&String::from_utf8_lossy(buf), &mut out);
        self.inner.write_all(out.as_bytes())?;
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.inner.flush()
    }
}

/// What the scanner reports of its input.
#[derive(Debug)]
pub enum Step<'a> {
    /// A character outside any sequence, control characters included.
    Char(char),
    /// A control sequence ended: its parameters (none if there were more than the parser
    /// keeps), its intermediate and private-marker bytes, and its final byte.
    Csi {
        params: &'a Params,
        intermediates: &'a [u8],
        final_byte: char,
    },
}

/// Where the scanner is, as far as the rules on top of vte need to know.
#[derive(Debug, Default, Clone, Copy, PartialEq)]
enum Mode {
    #[default]
    Ground,
    /// After ESC.
    Escape,
    /// After ESC and an intermediate byte (`ESC ( B`).
    EscapeIntermediate,
    /// Inside a control sequence.
    Csi { intermediates: bool },
    /// Inside an OSC, DCS, SOS, PM or APC string.
    String,
}

/// The escape-sequence scanner: vte's parser with this project's rules on top (see the
/// module header). Text split anywhere between calls to [`Sequences::feed`] reads the
/// same as in one piece.
#[derive(Default)]
pub struct Sequences {
    parser: Parser,
    mode: Mode,
}

impl std::fmt::Debug for Sequences {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Sequences")
            .field("mode", &self.mode)
            .finish_non_exhaustive()
    }
}

impl Sequences {
    /// Reads `text`, reporting each character shown and each control sequence to `on`.
    pub fn feed(&mut self, text: &str, on: &mut impl FnMut(Step<'_>)) {
        let mut rest = text;
        while !rest.is_empty() {
            // Runs that leave the mode as it is go to vte in one piece: text without ESC
            // or C1 controls (vte's fast path), a string's body, a sequence's parameters.
            let run = match self.mode {
                Mode::Ground => rest.find(|c: char| c == ESC || is_c1(c)),
                Mode::String => {
                    rest.find(|c: char| matches!(c, '\n' | BEL | ESC | C1_ST | '\u{18}' | '\u{1a}'))
                }
                Mode::Csi { intermediates: false } => rest.find(|c: char| !('0'..='?').contains(&c)),
                _ => Some(0),
            }
            .unwrap_or(rest.len());
            if run > 0 {
                self.parser.advance(&mut Report(on), &rest.as_bytes()[..run]);
                rest = &rest[run..];
                continue;
            }
            let mut chars = rest.chars();
            let Some(c) = chars.next() else { break };
            rest = chars.as_str();
            self.feed_char(c, on);
        }
    }

    fn feed_char(&mut self, c: char, on: &mut impl FnMut(Step<'_>)) {
        if c == '\n' {
            self.cancel();
            on(Step::Char(c));
            return;
        }
        match self.mode {
            Mode::String => match c {
                BEL | C1_ST => self.cancel(),
                ESC => self.advance(b"\x1b", on),
                // CAN and SUB would end the string in vte; here they are part of it.
                '\u{18}' | '\u{1a}' => {}
                // Anything else is part of the string, C1 introducers included.
                _ => self.advance(c.encode_utf8(&mut [0; 4]).as_bytes(), on),
            },
            Mode::Ground => self.ground(c, on),
            Mode::Escape | Mode::EscapeIntermediate | Mode::Csi { .. } => {
                if self.continues_sequence(c) {
                    self.advance(&[c as u8], on);
                } else {
                    // A character that cannot continue the sequence ends it and is read
                    // as if the sequence had never begun.
                    self.cancel();
                    self.ground(c, on);
                }
            }
        }
    }

    /// `c` outside any sequence: a C1 introducer is given to vte as its 7-bit form.
    fn ground(&mut self, c: char, on: &mut impl FnMut(Step<'_>)) {
        let seven_bit = match c {
            C1_CSI => b'[',
            C1_OSC => b']',
            C1_DCS => b'P',
            C1_SOS => b'X',
            C1_PM => b'^',
            C1_APC => b'_',
            _ => {
                self.advance(c.encode_utf8(&mut [0; 4]).as_bytes(), on);
                return;
            }
        };
        self.advance(b"\x1b", on);
        self.advance(&[seven_bit], on);
    }

    /// Whether `c` can be the next byte of the escape or control sequence under way.
    fn continues_sequence(&self, c: char) -> bool {
        match self.mode {
            Mode::Escape => matches!(c, ESC | ' '..='~'),
            Mode::EscapeIntermediate => matches!(c, ESC | ' '..='~'),
            Mode::Csi { intermediates } => match c {
                ESC | ' '..='/' | '@'..='~' => true,
                '0'..='?' => !intermediates,
                _ => false,
            },
            Mode::Ground | Mode::String => false,
        }
    }

    /// Gives vte `bytes` (one character, or ESC) and follows where that leaves it.
    fn advance(&mut self, bytes: &[u8], on: &mut impl FnMut(Step<'_>)) {
        self.parser.advance(&mut Report(on), bytes);
        let [byte] = bytes else { return };
        self.mode = match (self.mode, byte) {
            (_, 0x1b) => Mode::Escape,
            (Mode::Escape, b'[') => Mode::Csi { intermediates: false },
            (Mode::Escape, b']' | b'P' | b'X' | b'^' | b'_') => Mode::String,
            (Mode::Escape | Mode::EscapeIntermediate, b' '..=b'/') => Mode::EscapeIntermediate,
            (Mode::Csi { .. }, b' '..=b'/') => Mode::Csi { intermediates: true },
            (Mode::Csi { intermediates }, b'0'..=b'?') => Mode::Csi { intermediates },
            (Mode::String, _) => Mode::String,
            _ => Mode::Ground,
        };
    }

    /// Ends whatever sequence or string is under way, as CAN does, reporting nothing.
    fn cancel(&mut self) {
        if self.mode != Mode::Ground {
            self.parser.advance(&mut Silent, &[CAN]);
            self.mode = Mode::Ground;
        }
    }
}

/// C1 controls, which some terminals honour in their UTF-8 form.
fn is_c1(c: char) -> bool {
    ('\u{80}'..='\u{9f}').contains(&c)
}

/// Passes what vte finds on as [`Step`]s.
struct Report<'a, F>(&'a mut F);

impl<F: FnMut(Step<'_>)> Perform for Report<'_, F> {
    fn print(&mut self, c: char) {
        (self.0)(Step::Char(c));
    }

    fn execute(&mut self, byte: u8) {
        (self.0)(Step::Char(char::from(byte)));
    }

    fn csi_dispatch(&mut self, params: &Params, intermediates: &[u8], ignore: bool, action: char) {
        // Past vte's limits the parameters are incomplete: better none than wrong ones.
        let none = Params::default();
        (self.0)(Step::Csi {
            params: if ignore { &none } else { params },
            intermediates,
            final_byte: action,
        });
    }
}

/// Drops what vte reports while a sequence is being cancelled.
struct Silent;

impl Perform for Silent {}

/// A serialized JSON value with the characters JSON allows raw but a terminal may act on
/// (DEL, C1 controls, bidi controls) written as `\u` escapes: the same value, inert.
/// JSON escapes the C0 controls in strings itself, and the newlines and indentation of
/// pretty JSON are left alone.
pub fn escape_json_controls(json: String) -> String {
    let raw = |c: char| ('\u{7f}'..='\u{9f}').contains(&c) || is_bidi_control(c);
    if !json.chars().any(raw) {
        return json;
    }
    let mut out = String::with_capacity(json.len() + 16);
    for c in json.chars() {
        // Outside strings JSON holds only ASCII, so any such character is inside a
        // string, where `\uXXXX` means the same thing.
        if raw(c) {
            out.push_str(&format!("\\u{:04x}", u32::from(c)));
        } else {
            out.push(c);
        }
    }
    out
}

/// Writes `text` cleaned to `out`. Errors are the caller's to ignore: a reader that went
/// away (`| head -1`) is no reason to stop or to panic.
pub fn write_clean(out: &mut impl Write, text: &str) -> std::io::Result<()> {
    out.write_all(clean(text).as_bytes())
}

/// `text` cleaned, on stderr; a closed stderr is ignored (unlike `eprint!`, which panics).
pub fn eprint(text: &str) {
    let mut stderr = std::io::stderr().lock();
    let _ = write_clean(&mut stderr, text);
}

/// [`eprint()`] with a newline.
pub fn eprintln(text: &str) {
    let mut stderr = std::io::stderr().lock();
    let _ = write_clean(&mut stderr, text).and_then(|()| stderr.write_all(b"\n"));
}

/// `text` cleaned, on stdout, flushed; a closed stdout is ignored.
pub fn print(text: &str) {
    let mut stdout = std::io::stdout().lock();
    let _ = write_clean(&mut stdout, text).and_then(|()| stdout.flush());
}

/// The first meaningful line of `text`, shortened to `max_chars` characters, for one-line
/// previews. Our own bracketed marker lines (`[stderr]`, `[exit code: 1]`) are passed over
/// when the text has anything else.
pub fn preview_line(text: &str, max_chars: usize) -> String {
    let is_marker = |line: &str| line.starts_with('[') && line.ends_with(']');
    let mut lines = text.lines().map(str::trim).filter(|l| !l.is_empty());
    let line = lines
        .clone()
        .find(|line| !is_marker(line))
        .or_else(|| lines.next())
        .unwrap_or("");
    if line.chars().count() <= max_chars {
        return line.to_string();
    }
    let mut short: String = line.chars().take(max_chars.saturating_sub(1)).collect();
    short.push('…');
    short
}

#[cfg(test)]
mod tests {
    #[test]
    fn control_characters_are_found_by_bytes_as_by_characters() {
        for c in (0..=0x10ffff).filter_map(char::from_u32) {
            let text = format!("a{c}b");
            assert_eq!(
                super::has_control(&text),
                c.is_control() && c != '\n' && c != '\t',
                "{:?}",
                c
            );
        }
    }

    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn visible_shows_every_control_character() {
        assert_eq!(
            visible("\x1b[31mred\r\n\ttab\x7f\u{9b}\u{202e}"),
            "␛[31mred␍\n\ttab␡<U+009B><U+202E>"
        );
        assert!(matches!(visible("plain\n"), Cow::Borrowed(_)));
    }

    #[test]
    fn exact_shows_blanks_that_are_not_spaces() {
        assert_eq!(
            exact("echo hi &&\u{3000}ls\u{2800} -la\u{a0}/tmp\t\u{200b}x\n\x1b"),
            "echo hi &&<U+3000>ls<U+2800> -la<U+00A0>/tmp␉<U+200B>x\n␛"
        );
        assert!(matches!(exact("plain words\n"), Cow::Borrowed(_)));
    }

    #[test]
    fn text_for_the_model_is_what_a_terminal_shows_without_colours() {
        let cases = [
            ("plain\ttext\n", "plain\ttext\n"),
            ("\x1b[31mred\x1b[0m and \u{9b}1mbold\u{9b}0m", "red and bold"),
            ("\x1b]0;title\x07\x1b]8;;http://x\x1b\\link\x1b]8;;\x1b\\", "link"),
            ("crlf\r\nnext\r\n", "crlf\nnext\n"),
            ("10%\r50%\r100% done\n", "100% done\n"),
            ("downloading\rok\n", "okwnloading\n"),
            ("downloading\r\x1b[Kok\n", "ok\n"),
            ("abcdef\r\x1b[2Kxy", "xy"),
            ("bell\x07 back\x08 nul\0\n", "bell back nul\n"),
            ("\u{202e}bidi stays", "\u{202e}bidi stays"),
            ("unended \x1b]52;c;cHduZWQ=\nnext line", "unended \nnext line"),
        ];
        for (input, expected) in cases {
            assert_eq!(for_model(input), expected, "{input:?}");
        }
        assert!(matches!(for_model("nothing to do\n"), Cow::Borrowed(_)));
    }

    #[test]
    fn every_kind_of_sequence_and_control_is_removed() {
        let cases = [
            (
                "plain text, ünïcode, 你好 and 👍🏽",
                "plain text, ünïcode, 你好 and 👍🏽",
            ),
            ("keeps\ttabs\nand newlines\n", "keeps\ttabs\nand newlines\n"),
            ("crlf\r\nends\r\n", "crlf\nends\n"),
            ("over\rwrite", "overwrite"),
            // OSC: title with BEL, clipboard with ST, hyperlink, C1 form.
            ("a\x1b]0;evil title\x07b", "ab"),
            ("a\x1b]52;c;cm0gLXJmIH4=\x1b\\b", "ab"),
            ("\x1b]8;;https://x.test\x1b\\link\x1b]8;;\x1b\\", "link"),
            ("a\u{9d}0;title\u{9c}b", "ab"),
            ("a\u{9d}0;title\x07b", "ab"),
            // CSI: erase, cursor, private modes, SGR, C1 form, intermediates.
            ("a\x1b[2Jb\x1b[10;20Hc\x1b[?25ld\x1b[?1049he", "abcde"),
            ("\x1b[1;31mred\x1b[0m", "red"),
            ("\u{9b}31mc1\u{9b}2J!", "c1!"),
            ("\x1b[>4;1mkeys\x1b[1 q.", "keys."),
            // DCS, SOS, PM, APC, in both forms.
            ("\x1bPq#0;2;0;0;0#1!6~\x1b\\after", "after"),
            ("\x1bX sos \x1b\\1\x1b^ pm \x1b\\2\x1b_ apc \x1b\\3", "123"),
            (
                "\u{90}dcs\u{9c}1\u{98}sos\u{9c}2\u{9e}pm\u{9c}3\u{9f}apc\u{9c}4",
                "1234",
            ),
            // Short escapes.
            ("\x1b7saved\x1b8\x1b(B\x1bM\x1bc", "saved"),
            // C0, DEL and lone C1 controls.
            (
                "bell\x07 back\x08space\x00\x7f\x0b\x0c\u{85}\u{9c}!",
                "bell backspace!",
            ),
            // Bidi embedding, override and isolate controls; marks stay.
            ("ab\u{202e}cd\u{2066}ef\u{2069}\u{202c}\u{200f}", "abcdef\u{200f}"),
            // An ESC inside a string that is not ST ends the string and starts a sequence.
            ("\x1b]0;t\x1b[31mx", "x"),
            // A broken CSI ends at the character that broke it, which is read normally.
            ("\x1b[31\x1b]0;t\x07x", "x"),
            ("\x1b[3\u{e9}x", "\u{e9}x"),
            ("\x1b\x1b[2Jx", "x"),
        ];
        for (input, expected) in cases {
            assert_eq!(clean(input), expected, "{input:?}");
        }
    }

    #[test]
    fn unterminated_sequences_end_quietly() {
        for tail in [
            "\x1b",
            "\x1b[",
            "\x1b[38;5",
            "\x1b]0;title",
            "\x1b]52;c;cHduZWQ=",
            "\x1bP",
            "\x1b(",
            "\u{9b}",
            "\u{9d}",
            "\x1b]0;t\x1b",
        ] {
            assert_eq!(clean(&format!("ok{tail}")), "ok", "{tail:?}");
        }
        // An unterminated string stops at the end of its line.
        assert_eq!(clean("\x1b]0;never ends\nnext line"), "\nnext line");
    }

    #[test]
    fn clean_text_is_borrowed() {
        assert!(matches!(clean("nothing to do\n\there"), Cow::Borrowed(_)));
        assert!(matches!(clean("x\x1b[0m"), Cow::Owned(_)));
    }

    #[test]
    fn a_sequence_split_between_pieces_is_removed_whole() {
        let text = "think\x1b]52;c;cm0gLXJmIH4=\x07ing \x1b[2Jdone\u{9d}0;t\u{9c}.";
        for size in 1..text.len() {
            let mut cleaner = Cleaner::default();
            let mut out = String::new();
            let mut rest = text;
            while !rest.is_empty() {
                let mut end = size.min(rest.len());
                while !rest.is_char_boundary(end) {
                    end += 1;
                }
                cleaner.push(&rest[..end], &mut out);
                rest = &rest[end..];
            }
            assert_eq!(out, "thinking done.", "pieces of {size}");
        }
    }

    #[test]
    fn long_sequences_are_consumed_in_bounded_memory() {
        let many = "1;".repeat(10_000);
        let text = format!(
            "a\x1b[{many}mb\x1b]0;{}\x07c\x1bP{}\x1b\\d\x1b[{}Ke",
            "x".repeat(1 << 20),
            "y".repeat(1 << 20),
            "9".repeat(10_000),
        );
        assert_eq!(clean(&text), "abcde");
        // Parameters past what the parser keeps come out as none rather than half of them.
        let mut sequences = Sequences::default();
        let mut seen = Vec::new();
        sequences.feed(&format!("\x1b[{many}m"), &mut |step| {
            if let Step::Csi {
                params, final_byte, ..
            } = step
            {
                seen.push((params.len(), final_byte));
            }
        });
        assert_eq!(seen, [(0, 'm')]);
        // The scanner keeps nothing on the heap: its size is all it ever holds.
        assert!(std::mem::size_of::<Sequences>() < 4096);
    }

    #[test]
    fn json_keeps_the_value_and_escapes_what_a_terminal_acts_on() {
        // Keys in sorted order: a `serde_json::Map` keeps them sorted, or in the order given
        // when a crate in the build turns on `preserve_order`; the text is the same either way.
        let value = serde_json::json!({ "n": 1, "text": "a\x1b]0;t\x07\u{9b}2J\u{7f}\u{202e}b" });
        let json = escape_json_controls(serde_json::to_string(&value).unwrap());
        assert_eq!(json, r#"{"n":1,"text":"a\u001b]0;t\u0007\u009b2J\u007f\u202eb"}"#);
        assert_eq!(serde_json::from_str::<serde_json::Value>(&json).unwrap(), value);
        let pretty = serde_json::to_string_pretty(&value).unwrap();
        let escaped = escape_json_controls(pretty.clone());
        assert_eq!(escaped.lines().count(), pretty.lines().count());
        assert_eq!(
            serde_json::from_str::<serde_json::Value>(&escaped).unwrap(),
            value
        );
    }

    #[test]
    fn a_clean_writer_cleans_across_writes() {
        let mut writer = CleanWriter::new(Vec::new());
        for piece in [
            "INFO error: \x1b]52;c;",
            "cHduZWQ=\x07body\r\u{202e}\n",
            "next \u{9b}2Jline\n",
        ] {
            writer.write_all(piece.as_bytes()).unwrap();
        }
        assert_eq!(
            String::from_utf8(writer.inner).unwrap(),
            "INFO error: body\nnext line\n"
        );
    }

    #[test]
    fn a_closed_writer_is_an_error_to_ignore_not_a_panic() {
        struct Closed;
        impl Write for Closed {
            fn write(&mut self, _: &[u8]) -> std::io::Result<usize> {
                Err(std::io::ErrorKind::BrokenPipe.into())
            }
            fn flush(&mut self) -> std::io::Result<()> {
                Ok(())
            }
        }
        assert!(write_clean(&mut Closed, "x\x1b[2J").is_err());
    }

    #[test]
    fn preview_is_one_short_line() {
        assert_eq!(preview_line("\n  first line here\nsecond", 8), "first l…");
        assert_eq!(preview_line("ok", 8), "ok");
        assert_eq!(
            preview_line("[stderr]\ncat: x: No such file\n[exit code: 1]", 80),
            "cat: x: No such file"
        );
        assert_eq!(preview_line("[exit code: 0]", 80), "[exit code: 0]");
    }
}
