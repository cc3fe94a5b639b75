//! Layout by display width: measuring, truncating and word-wrapping styled lines so that
//! CJK text and emoji (two columns each) never overflow a pane.
//!
//! Text is measured in *clusters*: Unicode's extended grapheme clusters, found by
//! `unicode-segmentation` (a character with the marks that ride on it, emoji modifier
//! and zero-width-joiner sequences, flag pairs, Hangul syllables). ratatui draws by the
//! same clusters, so a width computed here is the width ratatui will paint. Control
//! characters count as zero columns because ratatui drops them when drawing.

use ratatui::text::{Line, Span};
use unicode_segmentation::UnicodeSegmentation;
use unicode_width::UnicodeWidthStr;

const ELLIPSIS: &str = "…";

/// Replaces tabs with spaces up to the next multiple of `tab_width` columns (a tab would
/// otherwise be dropped when drawn).
pub fn expand_tabs(text: &str, tab_width: usize) -> String {
    if !text.contains('\t') {
        return text.to_string();
    }
    let tab_width = tab_width.max(1);
    let mut out = String::with_capacity(text.len() + tab_width);
    let mut column = 0;
    for c in text.chars() {
        if c == '\t' {
            let spaces = tab_width - column % tab_width;
            out.extend(std::iter::repeat_n(' ', spaces));
            column += spaces;
        } else {
            out.push(c);
            column += display_width(c.encode_utf8(&mut [0; 4]));
        }
    }
    out
}

/// The number of terminal columns `text` occupies.
pub fn display_width(text: &str) -> usize {
    clusters(text).map(|cluster| cluster.width).sum()
}

/// `text` cut to at most `width` columns, ending with `…` when anything was cut.
pub fn truncate(text: &str, width: usize) -> String {
    if display_width(text) <= width {
        return text.to_string();
    }
    if width == 0 {
        return String::new();
    }
    let budget = width - 1;
    let mut used = 0;
    let mut out = String::new();
    for cluster in clusters(text) {
        if used + cluster.width > budget {
            break;
        }
        used += cluster.width;
        out.push_str(cluster.text);
    }
    out.push_str(ELLIPSIS);
    out
}

/// `spans` cut to at most `width` columns, ending with a `…` (in the style of the span
/// that was cut) when anything was cut.
pub(crate) fn truncate_spans(spans: &[Span<'_>], width: usize) -> Vec<Span<'static>> {
    let total: usize = spans.iter().map(|span| display_width(&span.content)).sum();
    if total <= width {
        return spans.iter().map(owned_span).collect();
    }
    let mut out = Vec::new();
    if width == 0 {
        return out;
    }
    let budget = width - 1;
    let mut used = 0;
    for span in spans {
        let mut text = String::new();
        let mut cut = false;
        for cluster in clusters(&span.content) {
            if used + cluster.width > budget {
                cut = true;
                break;
            }
            used += cluster.width;
            text.push_str(cluster.text);
        }
        if cut {
            text.push_str(ELLIPSIS);
            out.push(Span::styled(text, span.style));
            break;
        }
        if !text.is_empty() {
            out.push(Span::styled(text, span.style));
        }
    }
    out
}

/// `line` word-wrapped to `width` columns (0 counts as 1).
///
/// Breaks at spaces (which are dropped at the break) and between CJK characters (which
/// need no spaces), without starting a line with closing punctuation such as `。`.
/// Words longer than the width are broken between characters. Every span keeps its
/// style and every produced line keeps the line's own style and alignment. The first
/// line's leading spaces (indentation) are kept; a line that already fits comes back
/// unchanged, and an empty line stays one empty line.
pub fn wrap_line(line: &Line<'_>, width: u16) -> Vec<Line<'static>> {
    let width = usize::from(width.max(1));
    let cells = line_clusters(line);
    if cells.iter().map(|cell| cell.width).sum::<usize>() <= width {
        return vec![owned_line(line)];
    }
    let rows = layout(&cells, width);
    rows.into_iter()
        .map(|row| {
            let mut spans: Vec<Span<'static>> = Vec::new();
            let mut last_span = usize::MAX;
            for item in row {
                let (span_index, text) = match item {
                    Placed::Cell(index) => (cells[index].span, cells[index].text),
                    Placed::TooWide(index) => (cells[index].span, ELLIPSIS),
                };
                match spans.last_mut() {
                    Some(last) if last_span == span_index => last.content.to_mut().push_str(text),
                    _ => spans.push(Span::styled(text.to_string(), line.spans[span_index].style)),
                }
                last_span = span_index;
            }
            Line {
                spans,
                style: line.style,
                alignment: line.alignment,
            }
        })
        .collect()
}

/// `line` wrapped to `width` columns with `indent` spaces before every row, the first and
/// each continuation, so a block set in from the margin stays set in (unless the width
/// leaves no room for it).
pub fn wrap_indented(line: &Line<'_>, width: u16, indent: u16) -> Vec<Line<'static>> {
    let indent = if width > indent.saturating_add(1) {
        indent
    } else {
        0
    };
    let pad = " ".repeat(usize::from(indent));
    wrap_line(line, width - indent)
        .into_iter()
        .map(|row| {
            let mut spans = vec![Span::raw(pad.clone())];
            spans.extend(row.spans);
            Line { spans, ..row }
        })
        .collect()
}

/// Every line of `lines` wrapped to `width` columns; see [`wrap_line`].
pub fn wrap_lines(lines: &[Line<'_>], width: u16) -> Vec<Line<'static>> {
    lines.iter().flat_map(|line| wrap_line(line, width)).collect()
}

/// `line` broken between characters every `width` columns (0 counts as 1), for code,
/// where moving words around would misrepresent the text.
pub(crate) fn hard_wrap_line(line: &Line<'_>, width: u16) -> Vec<Line<'static>> {
    let width = usize::from(width.max(1));
    let mut rows: Vec<Line<'static>> = Vec::new();
    let mut current: Vec<Span<'static>> = Vec::new();
    let mut used = 0;
    for span in &line.spans {
        let mut text = String::new();
        for cluster in clusters(&span.content) {
            // A character wider than the whole row gets a one-column stand-in.
            let (piece, piece_width) = if cluster.width > width {
                (ELLIPSIS, 1)
            } else {
                (cluster.text, cluster.width)
            };
            if used + piece_width > width {
                if !text.is_empty() {
                    current.push(Span::styled(std::mem::take(&mut text), span.style));
                }
                rows.push(Line {
                    spans: std::mem::take(&mut current),
                    style: line.style,
                    alignment: line.alignment,
                });
                used = 0;
            }
            used += piece_width;
            text.push_str(piece);
        }
        if !text.is_empty() {
            current.push(Span::styled(text, span.style));
        }
    }
    rows.push(Line {
        spans: current,
        style: line.style,
        alignment: line.alignment,
    });
    rows
}

pub(crate) fn owned_span(span: &Span<'_>) -> Span<'static> {
    Span::styled(span.content.to_string(), span.style)
}

pub(crate) fn owned_line(line: &Line<'_>) -> Line<'static> {
    Line {
        spans: line.spans.iter().map(owned_span).collect(),
        style: line.style,
        alignment: line.alignment,
    }
}

/// One visible character and the zero-width marks attached to it.
struct Cluster<'a> {
    text: &'a str,
    width: usize,
}

/// Splits text into extended grapheme clusters, the units ratatui draws by, so a
/// cluster is never cut or wrapped apart. A cluster holding a control character is
/// zero columns wide: ratatui skips it when drawing.
///
/// Two ASCII characters in a row are always two clusters (only CR LF is one), so ASCII
/// text is split byte by byte without the segmenter, which costs a streamed reply's
/// redraws several per cent of the workbench's CPU otherwise.
fn clusters(text: &str) -> impl Iterator<Item = Cluster<'_>> {
    let mut rest = text;
    std::iter::from_fn(move || {
        let bytes = rest.as_bytes();
        let first = *bytes.first()?;
        let next = bytes.get(1).copied();
        let cluster = if first.is_ascii()
            && next.is_none_or(|next| next.is_ascii())
            && !(first == b'\r' && next == Some(b'\n'))
        {
            &rest[..1]
        } else {
            rest.graphemes(true).next()?
        };
        rest = &rest[cluster.len()..];
        Some(Cluster {
            text: cluster,
            width: if cluster.contains(char::is_control) {
                0
            } else {
                cluster.width()
            },
        })
    })
}

/// Punctuation that must not begin a line (kinsoku): it stays with the text before it.
fn is_closing_punctuation(text: &str) -> bool {
    text.chars()
        .next()
        .is_some_and(|c| "，。、．！？）］｝」』】〉》〕〗〙〛：；’”…‥ー々〜・,.!?;:)]}%".contains(c))
}

/// Punctuation that must not end a line: it stays with the text after it.
fn is_opening_punctuation(text: &str) -> bool {
    text.chars()
        .next()
        .is_some_and(|c| "（［｛「『【〈《〔〖〘〚‘“([{".contains(c))
}

/// A cluster of a line together with the span it came from.
struct Cell<'a> {
    text: &'a str,
    width: usize,
    span: usize,
    is_space: bool,
}

fn line_clusters<'a>(line: &'a Line<'_>) -> Vec<Cell<'a>> {
    let mut cells = Vec::new();
    for (span, piece) in line.spans.iter().enumerate() {
        for cluster in clusters(&piece.content) {
            cells.push(Cell {
                text: cluster.text,
                width: cluster.width,
                span,
                is_space: cluster.text == " ",
            });
        }
    }
    cells
}

/// Whether a line may break between two adjacent non-space cells: only around wide
/// (CJK) characters, and never inside an opening/closing punctuation pair.
fn may_break_between(before: &Cell<'_>, after: &Cell<'_>) -> bool {
    (before.width >= 2 || after.width >= 2)
        && !is_closing_punctuation(after.text)
        && !is_opening_punctuation(before.text)
}

/// What goes into a wrapped row: a cell, or a stand-in for a cell wider than the
/// whole width (a CJK character at width 1), so no row ever overflows.
#[derive(Clone, Copy)]
enum Placed {
    Cell(usize),
    TooWide(usize),
}

/// A run of cells that wraps as a unit.
struct Token {
    start: usize,
    end: usize,
    width: usize,
    is_space: bool,
}

fn tokens(cells: &[Cell<'_>]) -> Vec<Token> {
    let mut tokens = Vec::new();
    let mut start = 0;
    while start < cells.len() {
        let is_space = cells[start].is_space;
        let mut end = start + 1;
        while end < cells.len() {
            let same_kind = cells[end].is_space == is_space;
            if !same_kind || (!is_space && may_break_between(&cells[end - 1], &cells[end])) {
                break;
            }
            end += 1;
        }
        let width = cells[start..end].iter().map(|cell| cell.width).sum();
        tokens.push(Token {
            start,
            end,
            width,
            is_space,
        });
        start = end;
    }
    tokens
}

/// Greedy first-fit layout of the cells into rows of at most `width` columns.
fn layout(cells: &[Cell<'_>], width: usize) -> Vec<Vec<Placed>> {
    let mut rows: Vec<Vec<Placed>> = Vec::new();
    let mut row: Vec<Placed> = Vec::new();
    let mut used = 0;
    // Spaces wait here until the next word shows whether they fall inside a row or at
    // a break, where they are dropped.
    let mut pending_space: Option<&Token> = None;
    // Only the first row keeps leading spaces: they are the line's indentation.
    let mut has_word = false;

    let all_tokens = tokens(cells);
    for token in &all_tokens {
        if token.is_space {
            if rows.is_empty() && !has_word {
                place_cells(
                    cells,
                    token.start..token.end,
                    width,
                    &mut rows,
                    &mut row,
                    &mut used,
                );
            } else {
                pending_space = Some(token);
            }
            continue;
        }
        let space_width = pending_space.map_or(0, |space| space.width);
        if used + space_width + token.width <= width {
            if let Some(space) = pending_space {
                row.extend((space.start..space.end).map(Placed::Cell));
            }
            row.extend((token.start..token.end).map(Placed::Cell));
            used += space_width + token.width;
        } else if token.width <= width {
            if has_word || !row.is_empty() {
                rows.push(std::mem::take(&mut row));
            }
            row.extend((token.start..token.end).map(Placed::Cell));
            used = token.width;
        } else {
            // Longer than a whole row: start it on a fresh row (unless this row holds only
            // indentation) and break it between characters.
            if has_word {
                rows.push(std::mem::take(&mut row));
                used = 0;
            }
            place_cells(
                cells,
                token.start..token.end,
                width,
                &mut rows,
                &mut row,
                &mut used,
            );
        }
        pending_space = None;
        has_word = true;
    }
    // Trailing spaces are kept when they fit, so a line's own padding survives.
    if let Some(space) = pending_space
        && used + space.width <= width
    {
        row.extend((space.start..space.end).map(Placed::Cell));
    }
    rows.push(row);
    rows
}

/// Places cells one by one, starting a new row whenever the next one does not fit.
fn place_cells(
    cells: &[Cell<'_>],
    range: std::ops::Range<usize>,
    width: usize,
    rows: &mut Vec<Vec<Placed>>,
    row: &mut Vec<Placed>,
    used: &mut usize,
) {
    for index in range {
        let (placed, cell_width) = if cells[index].width > width {
            (Placed::TooWide(index), 1)
        } else {
            (Placed::Cell(index), cells[index].width)
        };
        if *used + cell_width > width {
            rows.push(std::mem::take(row));
            *used = 0;
        }
        row.push(placed);
        *used += cell_width;
    }
}

/// Renders lines the way the workbench draws them, for snapshot tests.
#[cfg(test)]
pub(crate) mod test_render {
    use ratatui::buffer::Buffer;
    use ratatui::layout::Rect;
    use ratatui::text::Line;
    use ratatui::widgets::{Paragraph, Widget};

    /// The lines drawn into a buffer `width` columns wide.
    pub(crate) fn buffer(lines: Vec<Line<'static>>, width: u16) -> Buffer {
        let height = u16::try_from(lines.len().max(1)).unwrap();
        let area = Rect::new(0, 0, width, height);
        let mut buf = Buffer::empty(area);
        Paragraph::new(lines).render(area, &mut buf);
        buf
    }

    /// The text of the drawn lines, each row trimmed at the right and framed by `|` at
    /// the pane's right edge so overflow would show.
    pub(crate) fn text(lines: Vec<Line<'static>>, width: u16) -> String {
        let buf = buffer(lines, width);
        let mut out = String::new();
        for y in 0..buf.area.height {
            let mut row = String::new();
            let mut skip = 0;
            for x in 0..buf.area.width {
                let cell = &buf[(x, y)];
                if skip > 0 {
                    skip -= 1;
                    continue;
                }
                row.push_str(cell.symbol());
                skip = super::display_width(cell.symbol()).saturating_sub(1);
            }
            out.push_str(&row);
            out.push_str("|\n");
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;
    use ratatui::layout::Alignment;
    use ratatui::style::{Color, Modifier, Style, Stylize};

    fn texts(lines: &[Line<'_>]) -> Vec<String> {
        lines
            .iter()
            .map(|line| line.spans.iter().map(|span| span.content.as_ref()).collect())
            .collect()
    }

    fn width_of(line: &Line<'_>) -> usize {
        line.spans.iter().map(|span| display_width(&span.content)).sum()
    }

    #[test]
    fn widths_count_columns_not_bytes() {
        let cases = [
            ("", 0),
            ("hello", 5),
            ("你好", 4),
            ("你好，世界。", 12),
            ("e\u{301}", 1),
            ("👍", 2),
            ("👍🏽", 2),
            ("👨\u{200d}👩\u{200d}👧", 2),
            ("🇺🇸🇫🇷", 4),
            ("❤\u{fe0f}", 2),
            ("👩\u{1f3fd}\u{200d}💻", 2),
            // Found by tests/fuzz: a joiner before a flag does not glue it on (ratatui
            // draws two clusters, four columns).
            ("👩\u{200d}👩\u{200d}🇯🇵", 4),
            ("a\u{200d}👩", 3),
            ("a\u{1b}b\tc\n", 3),
        ];
        let measured: Vec<(&str, usize)> = cases
            .iter()
            .map(|(text, _)| (*text, display_width(text)))
            .collect();
        assert_eq!(measured, cases.to_vec());
    }

    #[test]
    fn truncate_ends_with_an_ellipsis_only_when_cut() {
        assert_eq!(truncate("hello", 5), "hello");
        assert_eq!(truncate("hello", 10), "hello");
        assert_eq!(truncate("hello world", 8), "hello w…");
        assert_eq!(truncate("hello", 1), "…");
        assert_eq!(truncate("hello", 0), "");
        // A wide character that would straddle the limit is left out entirely.
        assert_eq!(truncate("你好世界", 4), "你…");
        assert_eq!(truncate("你好世界", 5), "你好…");
        assert_eq!(truncate("a👨\u{200d}👩\u{200d}👧b", 3), "a…");
    }

    #[test]
    fn clusters_follow_the_unicode_grapheme_rules() {
        // A spacing mark (Devanagari vowel sign I) belongs to the consonant before it,
        // and Hangul jamo make one syllable: neither may be split by a cut or a wrap.
        assert_eq!(truncate("कि x", 2), "…");
        assert_eq!(
            truncate("\u{1100}\u{1161}\u{11a8}가 x", 3),
            "\u{1100}\u{1161}\u{11a8}…"
        );
        // Three regional indicators: one flag and a lone half.
        assert_eq!(truncate("🇺🇸🇫x", 3), "🇺🇸…");
        let wrapped = wrap_line(&Line::from("कि कि कि"), 2);
        assert_eq!(texts(&wrapped), vec!["कि", "कि", "कि"]);
    }

    /// The ASCII shortcut splits exactly as the segmenter does, at every seam between
    /// ASCII and the rest.
    #[test]
    fn clusters_split_as_the_segmenter_does() {
        for text in [
            "plain ascii, with punctuation!",
            "cafe\u{301} au lait",
            "line\r\nnext\rnext\n\n",
            "tab\there\u{7}bell\u{1b}[31m",
            "a\u{200d}b 👩\u{200d}💻x",
            "x🇺🇸🇫y",
            "中文和English混排。",
            "कि x\u{300}",
            "",
            "\r",
            "e\u{301}",
        ] {
            let ours: Vec<&str> = clusters(text).map(|cluster| cluster.text).collect();
            let theirs: Vec<&str> = text.graphemes(true).collect();
            assert_eq!(ours, theirs, "{text:?}");
        }
    }

    #[test]
    fn truncate_spans_keeps_styles() {
        let spans = [Span::raw("ab"), Span::styled("cdef", Style::new().bold())];
        assert_eq!(
            truncate_spans(&spans, 4),
            vec![Span::raw("ab"), Span::styled("c…", Style::new().bold())]
        );
        assert_eq!(
            truncate_spans(&spans, 6),
            vec![Span::raw("ab"), Span::styled("cdef", Style::new().bold())]
        );
        assert_eq!(truncate_spans(&spans, 2), vec![Span::raw("a…")]);
        assert_eq!(truncate_spans(&spans, 0), Vec::<Span>::new());
    }

    #[test]
    fn wraps_at_spaces_and_drops_the_break_space() {
        let line = Line::from("the quick brown fox jumps over the lazy dog");
        assert_eq!(
            texts(&wrap_line(&line, 10)),
            vec!["the quick", "brown fox", "jumps over", "the lazy", "dog"]
        );
    }

    #[test]
    fn a_line_that_fits_comes_back_unchanged() {
        let line = Line::from(vec![
            Span::raw("  hi "),
            Span::styled("there ", Style::new().red()),
        ])
        .centered();
        assert_eq!(wrap_line(&line, 20), vec![line.clone()]);
        assert_eq!(wrap_line(&line, 11), vec![line]);
    }

    #[test]
    fn keeps_span_styles_and_line_style_and_alignment() {
        let bold = Style::new().add_modifier(Modifier::BOLD);
        let red = Style::new().fg(Color::Red);
        let line = Line::from(vec![
            Span::styled("bold words ", bold),
            Span::styled("red words here", red),
        ])
        .style(Style::new().italic())
        .alignment(Alignment::Right);
        let expected = vec![
            Line::from(vec![Span::styled("bold", bold)]),
            Line::from(vec![Span::styled("words ", bold), Span::styled("red", red)]),
            Line::from(vec![Span::styled("words", red)]),
            Line::from(vec![Span::styled("here", red)]),
        ]
        .into_iter()
        .map(|line| line.style(Style::new().italic()).alignment(Alignment::Right))
        .collect::<Vec<_>>();
        assert_eq!(wrap_line(&line, 9), expected);
    }

    #[test]
    fn hard_breaks_long_words_on_a_fresh_line() {
        let line = Line::from("see https://example.com/a/very/long/path ok");
        assert_eq!(
            texts(&wrap_line(&line, 12)),
            vec!["see", "https://exam", "ple.com/a/ve", "ry/long/path", "ok"]
        );
    }

    #[test]
    fn breaks_between_cjk_characters_but_not_before_closing_punctuation() {
        let line = Line::from("你好，世界。这是一个测试。");
        assert_eq!(
            texts(&wrap_line(&line, 8)),
            vec!["你好，世", "界。这是", "一个测", "试。"]
        );
        let mixed = Line::from("Rust 是一门系统编程语言 language");
        assert_eq!(
            texts(&wrap_line(&mixed, 10)),
            vec!["Rust 是一", "门系统编程", "语言", "language"]
        );
    }

    #[test]
    fn keeps_first_line_indentation() {
        let line = Line::from("    indented text that wraps");
        assert_eq!(
            texts(&wrap_line(&line, 14)),
            vec!["    indented", "text that", "wraps"]
        );
    }

    #[test]
    fn empty_and_zero_width_edge_cases() {
        let empty = Line::from("").style(Style::new().bold());
        assert_eq!(
            wrap_line(&empty, 10),
            vec![Line::from("").style(Style::new().bold())]
        );
        assert_eq!(wrap_line(&Line::default(), 0), vec![Line::default()]);
        assert_eq!(texts(&wrap_line(&Line::from("abc"), 0)), vec!["a", "b", "c"]);
        // A wide character cannot fit one column: it becomes a one-column stand-in.
        assert_eq!(texts(&wrap_line(&Line::from("你好"), 1)), vec!["…", "…"]);
        assert_eq!(texts(&wrap_line(&Line::from("     "), 3)), vec!["   ", "  "]);
    }

    #[test]
    fn wrap_lines_wraps_each_line() {
        let lines = [Line::from("aaa bbb"), Line::from(""), Line::from("ccc")];
        assert_eq!(texts(&wrap_lines(&lines, 4)), vec!["aaa", "bbb", "", "ccc"]);
    }

    #[test]
    fn hard_wrap_breaks_between_characters_and_keeps_styles() {
        let red = Style::new().red();
        let line = Line::from(vec![Span::raw("fn main() "), Span::styled("{ 你好 }", red)]);
        assert_eq!(
            hard_wrap_line(&line, 6),
            vec![
                Line::from(vec![Span::raw("fn mai")]),
                Line::from(vec![Span::raw("n() "), Span::styled("{ ", red)]),
                Line::from(vec![Span::styled("你好 }", red)]),
            ]
        );
        assert_eq!(hard_wrap_line(&Line::default(), 6), vec![Line::default()]);
    }

    /// A small deterministic generator, so the property test needs no extra crates.
    struct Lcg(u64);

    impl Lcg {
        fn next(&mut self, bound: usize) -> usize {
            self.0 = self
                .0
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            ((self.0 >> 33) as usize) % bound
        }
    }

    #[test]
    fn wrapping_never_exceeds_the_width_and_keeps_every_visible_character() {
        let words = [
            "a",
            "word",
            "longer",
            "supercalifragilisticexpialidocious",
            "你好",
            "世界。",
            "这是一个测试",
            "，",
            "（注）",
            "👍",
            "👨\u{200d}👩\u{200d}👧",
            "e\u{301}",
            "🇯🇵",
            "https://example.com/path/to/something",
            "   ",
            "",
            "tab\there",
            "x",
            "混合mixed文本",
            "「引用」",
        ];
        let styles = [Style::new(), Style::new().bold(), Style::new().red()];
        let mut rng = Lcg(7);
        for _ in 0..3000 {
            let span_count = rng.next(6);
            let spans: Vec<Span> = (0..span_count)
                .map(|_| {
                    let word_count = 1 + rng.next(8);
                    let text: Vec<&str> = (0..word_count).map(|_| words[rng.next(words.len())]).collect();
                    let separator = if rng.next(3) == 0 { "" } else { " " };
                    Span::styled(text.join(separator), styles[rng.next(styles.len())])
                })
                .collect();
            let line = Line::from(spans);
            let width = rng.next(30) as u16;
            let wrapped = wrap_line(&line, width);
            assert!(!wrapped.is_empty());
            for row in &wrapped {
                assert!(
                    width_of(row) <= usize::from(width.max(1)),
                    "{line:?} at {width}: {row:?}"
                );
            }
            // Only spaces at breaks go missing (and wide characters at width 1).
            if width >= 2 {
                let strip = |text: String| text.chars().filter(|c| *c != ' ').collect::<String>();
                let before = strip(texts(std::slice::from_ref(&line)).concat());
                let after = strip(texts(&wrapped).concat());
                assert_eq!(after, before, "{line:?} at {width}");
            }
        }
    }

    #[test]
    fn cjk_transcript_snapshot() {
        let lines = vec![
            Line::from(vec![
                "you ".bold(),
                "请把这段话翻译成英文：你好，世界。这是一个测试。".into(),
            ]),
            Line::from(vec![
                "agent ".bold(),
                "Hello, world. This is a test (你好，世界。这是一个测试。).".into(),
            ]),
        ];
        insta::assert_snapshot!(test_render::text(wrap_lines(&lines, 16), 16));
    }
}
