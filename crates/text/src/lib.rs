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
//! The scanner is hand-written because it must be a streaming state machine shared by
//! both users (exec cleans deltas as they arrive) and know the C1 introducers; the crates
//! that strip escapes work on whole strings of bytes.
//!
//! `--json` output carries the raw text instead, with [`escape_json_controls`] so that
//! even the C1 and bidi characters JSON allows raw are escaped.

use std::borrow::Cow;
use std::io::Write;

const ESC: char = '\u{1b}';
const BEL: char = '\u{7}';
/// C1 forms of the introducers and terminator, which some terminals honour in UTF-8.
const C1_DCS: char = '\u{90}';
const C1_SOS: char = '\u{98}';
const C1_CSI: char = '\u{9b}';
const C1_ST: char = '\u{9c}';
const C1_OSC: char = '\u{9d}';
const C1_PM: char = '\u{9e}';
const C1_APC: char = '\u{9f}';
/// Parameters kept of one control sequence; longer ones are consumed but have no effect,
/// so a hostile stream cannot grow the scanner.
const MAX_PARAMS: usize = 64;

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

/// `text` as a model should read a command's output: what a terminal would show of it,
/// without colours. Escape sequences are removed entirely (not made visible: they cost
/// tokens and mean nothing to a model), a carriage return lets later text overwrite the
/// line as on a terminal (a progress bar keeps only its final state; `\r\n` is a plain
/// newline), erase-in-line is applied, and other control characters are dropped. Bidi
/// controls stay: for the model they are text, and it may need to see them.
pub fn for_model(text: &str) -> Cow<'_, str> {
    if !text.chars().any(|c| c.is_control() && c != '\n' && c != '\t') {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len());
    let mut line: Vec<char> = Vec::new();
    let mut column = 0;
    let mut sequences = Sequences::default();
    for c in text.chars() {
        match sequences.feed(c) {
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
            Step::Char(_) | Step::Consumed => {}
            Step::Csi {
                params,
                intermediates: false,
                final_byte: 'K',
            } => match params {
                "" | "0" => line.truncate(column),
                "1" => line.iter_mut().take(column).for_each(|cell| *cell = ' '),
                "2" => {
                    line.clear();
                    line.resize(column, ' ');
                }
                _ => {}
            },
            Step::Csi { .. } => {}
        }
    }
    out.extend(line);
    Cow::Owned(out)
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
        for c in text.chars() {
            if let Step::Char(c) = self.sequences.feed(c)
                && (c == '\n' || shown(c))
            {
                out.push(c);
            }
        }
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

/// What one character of input comes to.
#[derive(Debug, PartialEq)]
pub enum Step<'a> {
    /// A character outside any sequence, control characters included.
    Char(char),
    /// A control sequence ended: its parameters (empty if too long to keep), whether it
    /// had intermediate bytes, and its final byte.
    Csi {
        params: &'a str,
        intermediates: bool,
        final_byte: char,
    },
    /// Part of a sequence, or the end of one that does nothing but be removed.
    Consumed,
}

/// Where the scanner is.
#[derive(Debug, Default, Clone, Copy, PartialEq)]
enum State {
    #[default]
    Ground,
    /// After ESC.
    Escape,
    /// After ESC and an intermediate byte (`ESC ( B`).
    EscapeIntermediate,
    /// Inside a control sequence (`ESC [` or C1 CSI).
    Csi { intermediates: bool },
    /// Inside an OSC, DCS, SOS, PM or APC string.
    String,
    /// After ESC inside a string: `\` ends it, anything else starts a new escape.
    StringEscape,
}

/// The escape-sequence scanner, fed one character at a time.
///
/// A control sequence broken by an unexpected character ends there and that character
/// is read normally. A string never terminated ends at the end of its line, so a stray
/// introducer cannot swallow all the output after it.
#[derive(Debug, Default)]
pub struct Sequences {
    state: State,
    params: String,
    params_overflowed: bool,
}

impl Sequences {
    pub fn feed(&mut self, c: char) -> Step<'_> {
        match self.state {
            State::Ground => self.ground(c),
            State::Escape => self.escape(c),
            State::EscapeIntermediate => match c {
                ' '..='/' => Step::Consumed,
                '0'..='~' => {
                    self.state = State::Ground;
                    Step::Consumed
                }
                _ => self.ground(c),
            },
            State::Csi { intermediates } => match c {
                '0'..='?' if !intermediates => {
                    if self.params.len() < MAX_PARAMS {
                        self.params.push(c);
                    } else {
                        self.params_overflowed = true;
                    }
                    Step::Consumed
                }
                ' '..='/' => {
                    self.state = State::Csi { intermediates: true };
                    Step::Consumed
                }
                '@'..='~' => {
                    self.state = State::Ground;
                    if self.params_overflowed {
                        self.params.clear();
                    }
                    Step::Csi {
                        params: &self.params,
                        intermediates,
                        final_byte: c,
                    }
                }
                _ => self.ground(c),
            },
            State::String => {
                match c {
                    '\n' => return self.ground(c),
                    BEL | C1_ST => self.state = State::Ground,
                    ESC => self.state = State::StringEscape,
                    _ => {}
                }
                Step::Consumed
            }
            State::StringEscape => {
                if c == '\\' {
                    self.state = State::Ground;
                    Step::Consumed
                } else {
                    self.escape(c)
                }
            }
        }
    }

    /// `c` outside any sequence.
    fn ground(&mut self, c: char) -> Step<'_> {
        self.state = State::Ground;
        match c {
            ESC => self.state = State::Escape,
            C1_CSI => self.start_csi(),
            C1_OSC | C1_DCS | C1_SOS | C1_PM | C1_APC => self.state = State::String,
            c => return Step::Char(c),
        }
        Step::Consumed
    }

    /// `c` right after ESC. Anything that cannot follow ESC leaves the ESC alone to be
    /// dropped and is read normally.
    fn escape(&mut self, c: char) -> Step<'_> {
        self.state = State::Ground;
        match c {
            '[' => self.start_csi(),
            ']' | 'P' | 'X' | '^' | '_' => self.state = State::String,
            ' '..='/' => self.state = State::EscapeIntermediate,
            '0'..='~' => {}
            _ => return self.ground(c),
        }
        Step::Consumed
    }

    fn start_csi(&mut self) {
        self.state = State::Csi { intermediates: false };
        self.params.clear();
        self.params_overflowed = false;
    }
}

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

#[cfg(test)]
mod tests {
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
    fn long_parameters_are_consumed_without_being_kept() {
        let mut sequences = Sequences::default();
        for c in "\x1b[".chars().chain(std::iter::repeat_n('1', 10_000)) {
            assert_eq!(sequences.feed(c), Step::Consumed);
        }
        assert_eq!(
            sequences.feed('m'),
            Step::Csi {
                params: "",
                intermediates: false,
                final_byte: 'm'
            }
        );
        assert!(sequences.params.capacity() <= 2 * MAX_PARAMS);
    }

    #[test]
    fn json_keeps_the_value_and_escapes_what_a_terminal_acts_on() {
        let value = serde_json::json!({ "text": "a\x1b]0;t\x07\u{9b}2J\u{7f}\u{202e}b", "n": 1 });
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
}
