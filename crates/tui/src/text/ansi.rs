//! Tool output with ANSI escape sequences, made safe to draw.
//!
//! Colour and attribute sequences (SGR) become ratatui styles. Everything else that a
//! terminal would act on (cursor movement, erasing, titles, hyperlinks, device control
//! strings, bells, backspaces) is removed by the rules every human-readable output shares
//! ([`miniagent_text`]), so drawn output can never move the cursor or reconfigure
//! the terminal. Each line is kept as a row of cells the way a terminal keeps it, so a
//! carriage return lets later text overwrite earlier text: a progress bar shows only its
//! final state. A cell holds one grapheme cluster, by `unicode-segmentation`'s rules (the
//! ones ratatui draws by), as wide as the whole cluster is.

use ratatui::style::{Color, Modifier, Style};
use ratatui::text::{Line, Span};
use unicode_segmentation::GraphemeCursor;
use unicode_width::{UnicodeWidthChar, UnicodeWidthStr};

use vte::Params;

use crate::theme::Theme;
use miniagent_text::{self, Sequences, Step};

const TAB_STOP: usize = 8;
/// The bytes of marks one cell keeps (a family emoji of seven characters takes 25).
const MAX_MARKS: usize = 64;

/// `text` as styled lines with every escape sequence either turned into a style or
/// removed. Colours are dropped when `!theme.colored`; text outside any SGR carries no
/// style, so the surrounding widget's style shows. A trailing newline does not make an
/// extra empty line.
pub fn ansi_lines(text: &str, theme: &Theme) -> Vec<Line<'static>> {
    let mut screen = Screen {
        colored: theme.colored,
        ..Screen::default()
    };
    Sequences::default().feed(text, &mut |step| match step {
        Step::Char('\n') => screen.newline(),
        Step::Char('\r') => screen.column = 0,
        Step::Char('\t') => screen.tab(),
        Step::Char(c) if miniagent_text::shown(c) => screen.put(c),
        // Bells, backspaces and every other control character would act on the terminal
        // instead of showing.
        Step::Char(_) => {}
        // Only SGR (`m`) and erase-in-line (`K`, applied to the row so progress redraws
        // come out right) have an effect; private (`CSI ? … m`) and intermediate forms
        // mean something else.
        Step::Csi {
            params,
            intermediates: [],
            final_byte,
        } => match final_byte {
            'm' => screen.select_graphic_rendition(params),
            'K' => {
                if let Some(mode) = miniagent_text::erase_mode(params) {
                    screen.erase_in_line(mode);
                }
            }
            _ => {}
        },
        Step::Csi { .. } => {}
    });
    screen.finish()
}

/// One terminal column.
#[derive(Clone, Debug)]
enum Cell {
    /// A character with the zero-width marks drawn on it.
    Glyph { base: char, marks: String, style: Style },
    /// The right half of a two-column character.
    Continuation,
}

impl Cell {
    fn blank() -> Cell {
        Cell::Glyph {
            base: ' ',
            marks: String::new(),
            style: Style::default(),
        }
    }
}

/// The rows written so far and the cursor on the current one.
#[derive(Default)]
struct Screen {
    lines: Vec<Line<'static>>,
    row: Vec<Cell>,
    column: usize,
    style: Style,
    colored: bool,
}

impl Screen {
    fn newline(&mut self) {
        let row = std::mem::take(&mut self.row);
        self.lines.push(row_to_line(row));
        self.column = 0;
    }

    fn finish(mut self) -> Vec<Line<'static>> {
        if !self.row.is_empty() {
            self.newline();
        }
        self.lines
    }

    /// Moves to the next tab stop, padding with blanks past the end of the row; like a
    /// terminal, the tab itself overwrites nothing.
    fn tab(&mut self) {
        self.column = (self.column / TAB_STOP + 1) * TAB_STOP;
        if self.row.len() < self.column {
            self.row.resize(self.column, Cell::blank());
        }
    }

    fn put(&mut self, c: char) {
        if self.extend_cluster(c) {
            return;
        }
        let width = c.width().unwrap_or(0);
        if width == 0 {
            // Nothing to ride on: not drawn, as ratatui would not draw it either.
            return;
        }
        let end = self.column + width;
        if self.row.len() < end {
            self.row.resize(end, Cell::blank());
        }
        for index in self.column..end {
            self.clear_wide_neighbour(index);
        }
        self.row[self.column] = Cell::Glyph {
            base: c,
            marks: String::new(),
            style: self.style,
        };
        for cell in &mut self.row[self.column + 1..end] {
            *cell = Cell::Continuation;
        }
        self.column = end;
    }

    /// Adds `c` to the character before the cursor when Unicode's grapheme rules make it
    /// part of the same cluster (a combining mark, a variation selector, an emoji modifier
    /// or joined emoji, the second half of a flag), widening the cell if the cluster now
    /// takes more columns. Returns whether it did.
    fn extend_cluster(&mut self, c: char) -> bool {
        let Some(mut owner) = self.column.checked_sub(1) else {
            return false;
        };
        if matches!(self.row.get(owner), Some(Cell::Continuation)) && owner > 0 {
            owner -= 1;
        }
        let Some(Cell::Glyph { base, marks, .. }) = self.row.get_mut(owner) else {
            return false;
        };
        // Most text is this: nothing below U+0300 extends a cluster, and only a Prepend
        // character (none below U+0600) joins what follows it.
        if c < '\u{300}' && *base < '\u{600}' && marks.is_empty() {
            return false;
        }
        let mut cluster = String::with_capacity(1 + marks.len() + c.len_utf8());
        cluster.push(*base);
        cluster.push_str(marks);
        let boundary = cluster.len();
        cluster.push(c);
        let mut cursor = GraphemeCursor::new(boundary, cluster.len(), true);
        if cursor.is_boundary(&cluster, 0).unwrap_or(true) {
            return false;
        }
        // A terminal keeps a few marks per cell too; past that they are dropped, so a
        // hostile stream of marks cannot grow one cell (or the work per mark) without end.
        if marks.len() + c.len_utf8() <= MAX_MARKS {
            marks.push(c);
        }
        let width = cluster.width();
        let taken = 1 + self.row[owner + 1..]
            .iter()
            .take_while(|cell| matches!(cell, Cell::Continuation))
            .count();
        if width > taken {
            let end = owner + width;
            if self.row.len() < end {
                self.row.resize(end, Cell::blank());
            }
            for index in owner + taken..end {
                self.clear_wide_neighbour(index);
                self.row[index] = Cell::Continuation;
            }
            self.column = self.column.max(end);
        }
        true
    }

    /// Before `index` is overwritten, a two-column character it is half of turns into a
    /// blank, as a terminal would show it.
    fn clear_wide_neighbour(&mut self, index: usize) {
        match self.row[index] {
            Cell::Continuation if index > 0 => self.row[index - 1] = Cell::blank(),
            Cell::Glyph { .. } if matches!(self.row.get(index + 1), Some(Cell::Continuation)) => {
                self.row[index + 1] = Cell::blank();
            }
            _ => {}
        }
    }

    fn erase_in_line(&mut self, mode: u16) {
        let column = self.column.min(self.row.len());
        match mode {
            0 => {
                if column < self.row.len() {
                    self.clear_wide_neighbour(column);
                }
                self.row.truncate(column);
            }
            1 => {
                let end = (column + 1).min(self.row.len());
                if end < self.row.len() {
                    self.clear_wide_neighbour(end);
                }
                for cell in &mut self.row[..end] {
                    *cell = Cell::blank();
                }
            }
            2 => self.row.clear(),
            _ => {}
        }
    }

    fn select_graphic_rendition(&mut self, params: &Params) {
        let groups: Vec<&[u16]> = params.iter().collect();
        if groups.is_empty() {
            self.simple_attribute(0);
        }
        let mut index = 0;
        while index < groups.len() {
            let group: Vec<u32> = groups[index].iter().map(|&n| u32::from(n)).collect();
            index += 1;
            if group.len() > 1 {
                // The colon form keeps an extended colour in one parameter:
                // `38:5:n`, `38:2:r:g:b` or `38:2:colourspace:r:g:b`.
                match group.as_slice() {
                    [code @ (38 | 48), 5, n, ..] => self.set_colour(*code, indexed(*n)),
                    [code @ (38 | 48), 2, _, r, g, b, ..] | [code @ (38 | 48), 2, r, g, b] => {
                        self.set_colour(*code, rgb(*r, *g, *b));
                    }
                    [4, 0, ..] => self.style.add_modifier.remove(Modifier::UNDERLINED),
                    [4, ..] => self.style.add_modifier.insert(Modifier::UNDERLINED),
                    _ => {}
                }
                continue;
            }
            match group.first().copied().unwrap_or(0) {
                code @ (38 | 48 | 58) => {
                    let rest: Vec<u32> = groups[index..]
                        .iter()
                        .take(4)
                        .map(|group| group.first().map_or(0, |&n| u32::from(n)))
                        .collect();
                    let (colour, used) = match rest.as_slice() {
                        [5, n, ..] => (indexed(*n), 2),
                        [2, r, g, b, ..] => (rgb(*r, *g, *b), 4),
                        _ => (None, rest.len().min(1)),
                    };
                    index += used;
                    // 58 (underline colour) is consumed but not drawn; a malformed colour
                    // changes nothing.
                    if code != 58 && colour.is_some() {
                        self.set_colour(code, colour);
                    }
                }
                code => self.simple_attribute(code),
            }
        }
    }

    fn simple_attribute(&mut self, code: u32) {
        let modifiers = &mut self.style.add_modifier;
        match code {
            0 => self.style = Style::default(),
            1 => modifiers.insert(Modifier::BOLD),
            2 => modifiers.insert(Modifier::DIM),
            3 => modifiers.insert(Modifier::ITALIC),
            4 | 21 => modifiers.insert(Modifier::UNDERLINED),
            7 => modifiers.insert(Modifier::REVERSED),
            9 => modifiers.insert(Modifier::CROSSED_OUT),
            22 => modifiers.remove(Modifier::BOLD | Modifier::DIM),
            23 => modifiers.remove(Modifier::ITALIC),
            24 => modifiers.remove(Modifier::UNDERLINED),
            27 => modifiers.remove(Modifier::REVERSED),
            29 => modifiers.remove(Modifier::CROSSED_OUT),
            30..=37 => self.set_colour(38, Some(basic(code - 30))),
            39 => self.set_colour(38, None),
            40..=47 => self.set_colour(48, Some(basic(code - 40))),
            49 => self.set_colour(48, None),
            90..=97 => self.set_colour(38, Some(bright(code - 90))),
            100..=107 => self.set_colour(48, Some(bright(code - 100))),
            // Blink (5, 6) and hidden (8) are ignored: blinking distracts in a pane and
            // hidden text could conceal what a command printed.
            _ => {}
        }
    }

    /// Sets (or with `None`, resets) the foreground (38) or background (48).
    fn set_colour(&mut self, target: u32, colour: Option<Color>) {
        if !self.colored {
            return;
        }
        if target == 38 {
            self.style.fg = colour;
        } else {
            self.style.bg = colour;
        }
    }
}

fn indexed(n: u32) -> Option<Color> {
    u8::try_from(n).ok().map(Color::Indexed)
}

fn rgb(r: u32, g: u32, b: u32) -> Option<Color> {
    Some(Color::Rgb(
        u8::try_from(r).ok()?,
        u8::try_from(g).ok()?,
        u8::try_from(b).ok()?,
    ))
}

fn basic(n: u32) -> Color {
    match n {
        0 => Color::Black,
        1 => Color::Red,
        2 => Color::Green,
        3 => Color::Yellow,
        4 => Color::Blue,
        5 => Color::Magenta,
        6 => Color::Cyan,
        _ => Color::Gray,
    }
}

fn bright(n: u32) -> Color {
    match n {
        0 => Color::DarkGray,
        1 => Color::LightRed,
        2 => Color::LightGreen,
        3 => Color::LightYellow,
        4 => Color::LightBlue,
        5 => Color::LightMagenta,
        6 => Color::LightCyan,
        _ => Color::White,
    }
}

/// Joins a row's cells into spans of equal style, without trailing unstyled blanks.
/// A row holding bytes that were not UTF-8 (read as U+FFFD) is binary, not text: its
/// other non-ASCII characters are mostly stray byte runs that decoded to something, often
/// code points no font has and whose width terminals disagree about (a terminal's
/// `wcwidth` says -1 for unassigned ones, where the layout counts one column), which
/// pushed the rest of the row past the frame. They are drawn as U+FFFD too, one column
/// each, so the row is exactly as wide as the layout says.
fn settle_binary(row: &mut [Cell]) {
    if !row
        .iter()
        .any(|cell| matches!(cell, Cell::Glyph { base: '\u{fffd}', .. }))
    {
        return;
    }
    let mut style = Style::default();
    for cell in row.iter_mut() {
        match cell {
            Cell::Glyph {
                base,
                marks,
                style: own,
            } => {
                if !base.is_ascii() {
                    *base = '\u{fffd}';
                }
                marks.clear();
                style = *own;
            }
            Cell::Continuation => {
                *cell = Cell::Glyph {
                    base: '\u{fffd}',
                    marks: String::new(),
                    style,
                };
            }
        }
    }
}

fn row_to_line(mut row: Vec<Cell>) -> Line<'static> {
    settle_binary(&mut row);
    while let Some(Cell::Glyph {
        base: ' ',
        marks,
        style,
    }) = row.last()
    {
        if !marks.is_empty() || *style != Style::default() {
            break;
        }
        row.pop();
    }
    let mut spans: Vec<Span<'static>> = Vec::new();
    for cell in row {
        let Cell::Glyph { base, marks, style } = cell else {
            continue;
        };
        match spans.last_mut() {
            Some(last) if last.style == style => {
                let content = last.content.to_mut();
                content.push(base);
                content.push_str(&marks);
            }
            _ => {
                let mut content = String::from(base);
                content.push_str(&marks);
                spans.push(Span::styled(content, style));
            }
        }
    }
    Line::from(spans)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::text::wrap::test_render;
    use pretty_assertions::assert_eq;

    fn texts(lines: &[Line<'_>]) -> Vec<String> {
        lines
            .iter()
            .map(|line| line.spans.iter().map(|span| span.content.as_ref()).collect())
            .collect()
    }

    fn plain(text: &str) -> Vec<String> {
        texts(&ansi_lines(text, &Theme::dark()))
    }

    /// A row with bytes that were not UTF-8 is drawn with every non-ASCII character as
    /// U+FFFD, one column each (a wide one as two): random bytes decode to code points
    /// terminals measure differently from the layout, which broke the frame around them.
    /// Text rows keep their characters.
    #[test]
    fn binary_rows_draw_one_column_per_cell() {
        let lines = plain("\u{fffd}ab\u{378}表e\u{301}\nplain 表 é\n");
        assert_eq!(
            lines,
            vec![
                "\u{fffd}ab\u{fffd}\u{fffd}\u{fffd}e".to_string(),
                "plain 表 é".to_string()
            ]
        );
        let width = |text: &str| unicode_width::UnicodeWidthStr::width(text);
        assert_eq!(width(&lines[0]), 7);
    }

    #[test]
    fn sgr_becomes_styles() {
        let text =
            "\x1b[1;31merror\x1b[0m: \x1b[4mbad\x1b[24m \x1b[38;5;208mx\x1b[39m \x1b[48;2;1;2;3my\x1b[m";
        let expected = Line::from(vec![
            Span::styled("error", Style::new().red().bold()),
            Span::raw(": "),
            Span::styled("bad", Style::new().underlined()),
            Span::raw(" "),
            Span::styled("x", Style::new().fg(Color::Indexed(208))),
            Span::raw(" "),
            Span::styled("y", Style::new().bg(Color::Rgb(1, 2, 3))),
        ]);
        assert_eq!(ansi_lines(text, &Theme::dark()), vec![expected]);
    }

    #[test]
    fn attributes_switch_off_individually() {
        let text =
            "\x1b[1;2;3;7;9ma\x1b[22mb\x1b[23mc\x1b[27md\x1b[29me\x1b[92;104mf\x1b[49mg\x1b[38:2::9:8:7mh";
        let all = Style::new().bold().dim().italic().reversed().crossed_out();
        let expected = Line::from(vec![
            Span::styled("a", all),
            Span::styled("b", Style::new().italic().reversed().crossed_out()),
            Span::styled("c", Style::new().reversed().crossed_out()),
            Span::styled("d", Style::new().crossed_out()),
            Span::styled("e", Style::new()),
            Span::styled("f", Style::new().fg(Color::LightGreen).bg(Color::LightBlue)),
            Span::styled("g", Style::new().fg(Color::LightGreen)),
            Span::styled("h", Style::new().fg(Color::Rgb(9, 8, 7))),
        ]);
        assert_eq!(ansi_lines(text, &Theme::dark()), vec![expected]);
    }

    #[test]
    fn monochrome_keeps_modifiers_but_drops_colours() {
        let text = "\x1b[1;31;42mred\x1b[0m \x1b[38;2;1;2;3;7mx";
        let expected = Line::from(vec![
            Span::styled("red", Style::new().bold()),
            Span::raw(" "),
            Span::styled("x", Style::new().reversed()),
        ]);
        assert_eq!(ansi_lines(text, &Theme::monochrome()), vec![expected]);
    }

    #[test]
    fn non_sgr_sequences_and_controls_disappear() {
        let cases = [
            ("\x1b]0;evil title\x07visible", "visible"),
            ("\x1b]8;;https://x.test\x1b\\link\x1b]8;;\x1b\\", "link"),
            ("a\x1b[2Jb\x1b[10;20Hc\x1b[?25ld\x1b[?1049he", "abcde"),
            ("\x1bPq#0;2;0;0;0#1!6~\x1b\\after", "after"),
            ("\x1b7saved\x1b8\x1b(B\x1bM", "saved"),
            ("bell\x07 back\x08space\x00\x7f", "bell backspace"),
            ("\u{9b}31mc1\u{9d}0;t\u{9c}!", "c1!"),
            ("\x1b[>4;1mkeys", "keys"),
        ];
        for (input, output) in cases {
            assert_eq!(plain(input), vec![output.to_string()], "{input:?}");
        }
    }

    #[test]
    fn drawn_text_is_what_the_command_line_prints() {
        // One set of rules: the workbench shows the characters `exec` would print.
        for input in [
            "a\x1b]52;c;cHduZWQ=\x07b\u{202e}c\u{9b}2Jd\n\x1bP1\x1b\\e\x1b]0;t\x1b[1mf",
            "\x1b[31mred\x1b[0m \u{9d}8;;x\u{9c}link\x1b(B\x07\x00\x7f.",
            "\x1b]0;never ends\nnext\u{2066}line",
        ] {
            let printed: Vec<String> = miniagent_text::clean(input).lines().map(str::to_string).collect();
            assert_eq!(plain(input), printed, "{input:?}");
        }
    }

    #[test]
    fn truncated_sequences_at_the_end_do_not_panic() {
        for tail in [
            "\x1b",
            "\x1b[",
            "\x1b[38;5",
            "\x1b[38;2;1",
            "\x1b]0;title",
            "\x1b]8;;",
            "\x1bP",
            "\x1b(",
            "\u{9b}",
        ] {
            assert_eq!(plain(&format!("ok{tail}")), vec!["ok".to_string()], "{tail:?}");
        }
        assert_eq!(
            plain("\x1b[38;5;999mx\x1b[38;2;300;0;0my\x1b[38;5m"),
            vec!["xy".to_string()]
        );
    }

    #[test]
    fn an_unterminated_osc_stops_at_the_end_of_its_line() {
        assert_eq!(plain("\x1b]0;never ends\nnext line"), vec!["", "next line"]);
    }

    #[test]
    fn carriage_return_overwrites_from_column_zero() {
        assert_eq!(plain("10%\r50%\r100% done\n"), vec!["100% done"]);
        assert_eq!(plain("long line\rshort"), vec!["shortline"]);
        assert_eq!(plain("long line\r\x1b[Kshort"), vec!["short"]);
        assert_eq!(plain("keep\r\nnext\r\n"), vec!["keep", "next"]);
        assert_eq!(plain("abcdef\rab\x1b[1Kx"), vec!["  xdef"]);
        assert_eq!(plain("abc\r\x1b[2Kxy"), vec!["xy"]);
        // Overwriting half of a wide character blanks the other half.
        assert_eq!(plain("你好\rx"), vec!["x 好"]);
        assert_eq!(plain("ab\r你"), vec!["你"]);
        assert_eq!(plain("abc\rx你"), vec!["x你"]);
        // Cursor movement is dropped, not obeyed.
        assert_eq!(plain("abc\r\x1b[2C你"), vec!["你c"]);
    }

    #[test]
    fn tabs_expand_to_multiples_of_eight() {
        assert_eq!(plain("a\tb\tc"), vec!["a       b       c"]);
        assert_eq!(plain("12345678\tx"), vec!["12345678        x"]);
        assert_eq!(plain("你\tx"), vec!["你      x"]);
    }

    #[test]
    fn combining_marks_and_emoji_sequences_stay_whole() {
        assert_eq!(plain("e\u{301}x"), vec!["e\u{301}x"]);
        assert_eq!(plain("👨\u{200d}👩\u{200d}👧!"), vec!["👨\u{200d}👩\u{200d}👧!"]);
        assert_eq!(plain("👍🏽!"), vec!["👍🏽!"]);
        assert_eq!(plain("\u{301}lead"), vec!["lead"]);
    }

    #[test]
    fn cells_hold_whole_grapheme_clusters() {
        // A variation selector makes the heart two columns wide, so the tab stop is six
        // columns on; a vowel sign belongs to its consonant and is overwritten with it.
        assert_eq!(plain("❤\u{fe0f}\tx"), vec!["❤\u{fe0f}      x"]);
        assert_eq!(plain("कि\rx"), vec!["x"]);
        assert_eq!(plain("🇺🇸\tx"), vec!["🇺🇸      x"]);
        // Marks past what one cell keeps are dropped, not piled up without end.
        let zalgo = format!("e{}!", "\u{301}".repeat(10_000));
        let line = &plain(&zalgo)[0];
        assert!(line.starts_with("e\u{301}") && line.ends_with('!') && line.len() < 200);
    }

    #[test]
    fn newlines_split_lines_like_str_lines() {
        assert_eq!(plain(""), Vec::<String>::new());
        assert_eq!(plain("a\n\nb\n"), vec!["a", "", "b"]);
        assert_eq!(plain("a\n\x1b[0m"), vec!["a"]);
        assert_eq!(plain("a   \n"), vec!["a"]);
    }

    #[test]
    fn tool_output_snapshot() {
        let output = concat!(
            "\x1b]0;cargo build — secret title\x07",
            "\x1b[1m\x1b[32m   Compiling\x1b[0m miniagent v0.1.0\n",
            "\x1b[1m\x1b[33mwarning\x1b[0m\x1b[1m: unused variable: `x`\x1b[0m\n",
            "  \x1b[1m\x1b[34m-->\x1b[0m src/main.rs:2:9\n",
            "[>         ] 10%\r[=====>    ] 60%\r[==========] 100%\x1b[K\n",
            "\x1b[31mred\x1b[0m \x1b[7mreversed\x1b[27m \x1b[38;2;255;128;0morange\x1b[0m\tafter tab\n",
            "\x1b[2J\x1b[Hcleared? no: screen controls are dropped\x07\n",
        );
        let lines = ansi_lines(output, &Theme::dark());
        insta::assert_debug_snapshot!(test_render::buffer(lines, 48));
    }
}
