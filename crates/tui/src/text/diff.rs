//! Unified diffs (as the `similar` crate writes them) drawn with a gutter of old and new
//! line numbers, additions and removals in the theme's diff colours.
//!
//! The diff is read here rather than by a patch-parsing crate: the input is `similar`'s
//! own output, reading it is a hunk header and a sign per line, and it must never fail
//! (malformed text is shown as it is), where those crates reject what they cannot parse.

use std::time::Instant;

use ratatui::text::{Line, Span};

use crate::theme::Theme;
use miniagent_protocol::TextChange;

const TAB_WIDTH: usize = 4;
/// Lines of context around each change in a diff built here (`git diff`'s default).
const CONTEXT_LINES: usize = 3;
/// A diff line's text is kept up to this many bytes (minified code would otherwise be
/// measured and cut again at every frame); the rest is replaced by `…`.
const MAX_LINE_BYTES: usize = 4 * 1024;

/// `diff` as styled lines: each change line gets a gutter with its old and new line
/// numbers (right-aligned to the widest number), then its sign and text. File headers
/// (`---`/`+++`) are in `theme.strong`, hunk headers in `theme.diff_hunk`, and any
/// other text (a caption before the first `---`, `diff --git` lines) is shown as is.
/// Malformed input never fails: unparsable hunk headers number from 1 and stray lines
/// show as plain text.
pub fn diff_lines(diff: &str, theme: &Theme) -> Vec<Line<'static>> {
    let rows = parse(diff);
    let widest = rows
        .iter()
        .filter_map(|row| match row {
            Row::Change { old, new, .. } => Some(old.unwrap_or(0).max(new.unwrap_or(0))),
            Row::Text { .. } => None,
        })
        .max()
        .unwrap_or(0);
    let number_width = widest.to_string().len();
    rows.into_iter()
        .map(|row| draw(row, number_width, theme))
        .collect()
}

/// One file's change, read once and then drawn a row at a time, so that a frame costs
/// only the rows on screen however large the change. Its text is made inert when built
/// ([`miniagent_text::visible`]: a control character shows as what it is).
#[derive(Debug, Default)]
pub struct ParsedDiff {
    rows: Vec<OwnedRow>,
    number_width: usize,
    /// The widest row as drawn (gutter, sign, text), in columns.
    widest: usize,
    /// Lines added and removed by the whole change, also those not kept.
    pub added: usize,
    pub removed: usize,
    /// Lines of the diff that were not kept ([`ParsedDiff::of_change`]'s `max_rows`).
    pub left_out: usize,
}

/// A [`Row`] that owns its text.
#[derive(Debug)]
struct OwnedRow {
    kind: Kind,
    /// `Some` for a changed or context line: its old and new line numbers.
    numbers: Option<(Option<usize>, Option<usize>)>,
    text: String,
}

impl OwnedRow {
    fn of(row: Row<'_>) -> Self {
        match row {
            Row::Text { kind, text } => Self {
                kind,
                numbers: None,
                text: kept_text(text),
            },
            Row::Change { kind, old, new, text } => Self {
                kind,
                numbers: Some((old, new)),
                text: kept_text(text),
            },
        }
    }

    fn as_row(&self) -> Row<'_> {
        match self.numbers {
            None => Row::Text {
                kind: self.kind,
                text: &self.text,
            },
            Some((old, new)) => Row::Change {
                kind: self.kind,
                old,
                new,
                text: &self.text,
            },
        }
    }
}

/// `text` up to [`MAX_LINE_BYTES`] (on a character boundary), `…` after a cut.
fn kept_text(text: &str) -> String {
    if text.len() <= MAX_LINE_BYTES {
        return text.to_string();
    }
    let mut end = MAX_LINE_BYTES;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}…", &text[..end])
}

impl ParsedDiff {
    /// The unified diff of `change` (a new file when it has no old text), with
    /// [`CONTEXT_LINES`] of context and no file headers (the caller names the file). At
    /// most `max_rows` lines of it are kept, then one line saying how many were not. Past
    /// `deadline` the line diff stops looking for the smallest one and gives a coarser
    /// (still correct) diff, so a large change cannot stall the interface.
    pub fn of_change(change: &TextChange, max_rows: usize, deadline: Instant) -> Self {
        let old = change.old_text.as_deref().unwrap_or("");
        let diff = similar::TextDiff::configure()
            .deadline(deadline)
            .diff_lines(old, change.new_text.as_str());
        let (mut added, mut removed) = (0, 0);
        for op in diff.ops() {
            let (_, old_range, new_range) = op.as_tag_tuple();
            // An equal run covers the same lines on both sides: no change either way.
            if !matches!(op, similar::DiffOp::Equal { .. }) {
                removed += old_range.len();
                added += new_range.len();
            }
        }
        let (text, left_out) = capped_unified(&diff, max_rows);
        let mut parsed = Self::of_kept(&miniagent_text::visible(&text), left_out);
        parsed.added = added;
        parsed.removed = removed;
        parsed
    }

    /// `diff` (a unified diff's text, already made inert), at most `max_rows` lines of it.
    pub fn of_text(diff: &str, max_rows: usize) -> Self {
        let total = diff.lines().count();
        let kept_end = match max_rows.checked_sub(1) {
            None => 0,
            Some(last) => diff
                .match_indices('\n')
                .nth(last)
                .map_or(diff.len(), |(at, _)| at + 1),
        };
        let kept = &diff[..kept_end];
        Self::of_kept(kept, total.saturating_sub(kept.lines().count()))
    }

    /// The rows of `diff`, every one kept, then one saying `left_out` more were not.
    fn of_kept(diff: &str, left_out: usize) -> Self {
        let mut rows: Vec<OwnedRow> = parse(diff).into_iter().map(OwnedRow::of).collect();
        if left_out > 0 {
            rows.push(OwnedRow {
                kind: Kind::Caption,
                numbers: None,
                text: format!("… {left_out} more lines of this diff not shown"),
            });
        }
        let widest_number = rows
            .iter()
            .filter_map(|row| row.numbers)
            .map(|(old, new)| old.unwrap_or(0).max(new.unwrap_or(0)))
            .max()
            .unwrap_or(0);
        let number_width = widest_number.to_string().len();
        let widest = rows
            .iter()
            .map(|row| {
                let gutter = if row.numbers.is_some() {
                    2 * number_width + 3
                } else {
                    0
                };
                gutter
                    + crate::text::wrap::display_width(&crate::text::wrap::expand_tabs(&row.text, TAB_WIDTH))
            })
            .max()
            .unwrap_or(0);
        Self {
            rows,
            number_width,
            widest,
            added: 0,
            removed: 0,
            left_out,
        }
    }

    /// Rows to draw, with the one saying what was left out.
    pub fn len(&self) -> usize {
        self.rows.len()
    }

    pub fn is_empty(&self) -> bool {
        self.rows.is_empty()
    }

    /// The widest row as drawn, in columns.
    pub fn widest(&self) -> usize {
        self.widest
    }

    /// Row `index` drawn as [`diff_lines`] draws it.
    pub fn line(&self, index: usize, theme: &Theme) -> Option<Line<'static>> {
        let row = self.rows.get(index)?;
        Some(draw(row.as_row(), self.number_width, theme))
    }
}

/// The unified diff of `diff` (no file headers) up to `max_rows` lines, and how many
/// lines past them it has. The lines past the cap are counted, never written: a large
/// change costs its diff, not a text of it.
fn capped_unified<'a>(diff: &'a similar::TextDiff<'a, 'a, 'a, str>, max_rows: usize) -> (String, usize) {
    let mut unified = diff.unified_diff();
    unified.context_radius(CONTEXT_LINES);
    let terminated = diff.newline_terminated();
    let mut text = String::new();
    let mut kept = 0;
    let mut left_out = 0;
    let mut keep = |line: std::fmt::Arguments<'_>, text: &mut String| {
        if kept < max_rows {
            use std::fmt::Write as _;
            let _ = text.write_fmt(line);
            if !terminated || !text.ends_with('\n') {
                text.push('\n');
            }
            kept += 1;
        } else {
            left_out += 1;
        }
    };
    for hunk in unified.iter_hunks() {
        keep(format_args!("{}", hunk.header()), &mut text);
        for change in hunk.iter_changes() {
            keep(format_args!("{}{}", change.tag(), change.value()), &mut text);
            if terminated && change.missing_newline() {
                keep(format_args!("\\ No newline at end of file"), &mut text);
            }
        }
    }
    (text, left_out)
}

/// What a line of the diff is.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Kind {
    Caption,
    FileHeader,
    HunkHeader,
    Context,
    Added,
    Removed,
    /// `\ No newline at end of file`.
    Note,
}

#[derive(Debug, PartialEq)]
enum Row<'a> {
    Text {
        kind: Kind,
        text: &'a str,
    },
    Change {
        kind: Kind,
        old: Option<usize>,
        new: Option<usize>,
        text: &'a str,
    },
}

/// Where the parser is inside a hunk: the next line numbers and the lines the header
/// promised on each side.
struct Hunk {
    old_line: usize,
    new_line: usize,
    old_left: usize,
    new_left: usize,
}

fn parse(diff: &str) -> Vec<Row<'_>> {
    let mut rows = Vec::new();
    let mut hunk: Option<Hunk> = None;
    for line in diff.lines() {
        if line.starts_with("@@") {
            hunk = Some(parse_hunk_header(line));
            rows.push(Row::Text {
                kind: Kind::HunkHeader,
                text: line,
            });
            continue;
        }
        if let Some(current) = hunk.as_mut() {
            let exhausted = current.old_left == 0 && current.new_left == 0;
            // Once the header's counts are used up, `---`/`+++`/`diff` begin the next file;
            // before that they are changed lines that happen to start that way.
            let next_file = exhausted
                && ["--- ", "+++ ", "diff "]
                    .iter()
                    .any(|prefix| line.starts_with(prefix));
            if !next_file && let Some(row) = hunk_row(current, line) {
                rows.push(row);
                continue;
            }
            hunk = None;
        }
        let kind = if line.starts_with("---") || line.starts_with("+++") {
            Kind::FileHeader
        } else {
            Kind::Caption
        };
        rows.push(Row::Text { kind, text: line });
    }
    rows
}

/// A line inside a hunk, or `None` when the line cannot belong to one.
fn hunk_row<'a>(hunk: &mut Hunk, line: &'a str) -> Option<Row<'a>> {
    let (sign, text) = match line.chars().next() {
        // Some tools strip the space from empty context lines.
        None => (' ', ""),
        Some(sign @ (' ' | '-' | '+' | '\\')) => (sign, &line[1..]),
        Some(_) => return None,
    };
    let row = match sign {
        '-' => {
            let row = Row::Change {
                kind: Kind::Removed,
                old: Some(hunk.old_line),
                new: None,
                text,
            };
            hunk.old_line += 1;
            hunk.old_left = hunk.old_left.saturating_sub(1);
            row
        }
        '+' => {
            let row = Row::Change {
                kind: Kind::Added,
                old: None,
                new: Some(hunk.new_line),
                text,
            };
            hunk.new_line += 1;
            hunk.new_left = hunk.new_left.saturating_sub(1);
            row
        }
        '\\' => Row::Text {
            kind: Kind::Note,
            text: line,
        },
        _ => {
            let row = Row::Change {
                kind: Kind::Context,
                old: Some(hunk.old_line),
                new: Some(hunk.new_line),
                text,
            };
            hunk.old_line += 1;
            hunk.new_line += 1;
            hunk.old_left = hunk.old_left.saturating_sub(1);
            hunk.new_left = hunk.new_left.saturating_sub(1);
            row
        }
    };
    Some(row)
}

/// Reads `@@ -a,b +c,d @@`; a missing count means 1, anything unreadable means line 1.
fn parse_hunk_header(line: &str) -> Hunk {
    let mut old = (1, 1);
    let mut new = (1, 1);
    for part in line
        .trim_start_matches('@')
        .split_whitespace()
        .take_while(|part| !part.starts_with("@@"))
    {
        if let Some(range) = part.strip_prefix('-') {
            old = parse_range(range);
        } else if let Some(range) = part.strip_prefix('+') {
            new = parse_range(range);
        }
    }
    Hunk {
        old_line: old.0.max(1),
        new_line: new.0.max(1),
        old_left: old.1,
        new_left: new.1,
    }
}

fn parse_range(range: &str) -> (usize, usize) {
    let (start, count) = range.split_once(',').unwrap_or((range, "1"));
    (start.parse().unwrap_or(1), count.parse().unwrap_or(1))
}

fn draw(row: Row<'_>, number_width: usize, theme: &Theme) -> Line<'static> {
    match row {
        Row::Text { kind, text } => {
            let style = match kind {
                // What a cut preview does not show (the core's last line): not the file's.
                Kind::Caption if text.starts_with("… ") => theme.warning,
                Kind::FileHeader => theme.strong,
                Kind::HunkHeader => theme.diff_hunk,
                Kind::Note => theme.dim,
                Kind::Caption | Kind::Context | Kind::Added | Kind::Removed => theme.text,
            };
            Line::from(Span::styled(
                crate::text::wrap::expand_tabs(text, TAB_WIDTH),
                style,
            ))
        }
        Row::Change { kind, old, new, text } => {
            let (sign, style) = match kind {
                Kind::Added => ('+', theme.diff_add),
                Kind::Removed => ('-', theme.diff_remove),
                Kind::Context | Kind::Caption | Kind::FileHeader | Kind::HunkHeader | Kind::Note => {
                    (' ', theme.text)
                }
            };
            let number = |n: Option<usize>| {
                n.map_or_else(|| " ".repeat(number_width), |n| format!("{n:>number_width$}"))
            };
            let gutter = format!("{} {} ", number(old), number(new));
            Line::from(vec![
                Span::styled(gutter, theme.dim),
                Span::styled(
                    format!("{sign}{}", crate::text::wrap::expand_tabs(text, TAB_WIDTH)),
                    style,
                ),
            ])
        }
    }
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

    fn similar_diff(old: &str, new: &str) -> String {
        similar::TextDiff::from_lines(old, new)
            .unified_diff()
            .context_radius(2)
            .header("a/x.txt", "b/x.txt")
            .to_string()
    }

    #[test]
    fn numbers_each_side_and_styles_each_kind() {
        let theme = Theme::dark();
        let diff = format!(
            "replace x.txt (4 bytes)\n{}",
            similar_diff("one\ntwo\nthree\n", "one\nTWO\nthree\nfour\n")
        );
        let gutter = |text: &str| Span::styled(text.to_string(), theme.dim);
        let expected = vec![
            Line::from(Span::styled("replace x.txt (4 bytes)", theme.text)),
            Line::from(Span::styled("--- a/x.txt", theme.strong)),
            Line::from(Span::styled("+++ b/x.txt", theme.strong)),
            Line::from(Span::styled("@@ -1,3 +1,4 @@", theme.diff_hunk)),
            Line::from(vec![gutter("1 1 "), Span::styled(" one", theme.text)]),
            Line::from(vec![gutter("2   "), Span::styled("-two", theme.diff_remove)]),
            Line::from(vec![gutter("  2 "), Span::styled("+TWO", theme.diff_add)]),
            Line::from(vec![gutter("3 3 "), Span::styled(" three", theme.text)]),
            Line::from(vec![gutter("  4 "), Span::styled("+four", theme.diff_add)]),
        ];
        assert_eq!(diff_lines(&diff, &theme), expected);
    }

    #[test]
    fn gutter_width_follows_the_largest_number() {
        let old: String = (1..=120).map(|n| format!("line {n}\n")).collect();
        let new = old.replace("line 99\n", "line ninety-nine\n");
        let lines = diff_lines(&similar_diff(&old, &new), &Theme::dark());
        assert_eq!(
            texts(&lines),
            vec![
                "--- a/x.txt",
                "+++ b/x.txt",
                "@@ -97,5 +97,5 @@",
                " 97  97  line 97",
                " 98  98  line 98",
                " 99     -line 99",
                "     99 +line ninety-nine",
                "100 100  line 100",
                "101 101  line 101",
            ]
        );
    }

    #[test]
    fn lines_that_look_like_headers_inside_a_hunk_are_changes() {
        let diff = "--- a/x\n+++ b/x\n@@ -1,2 +1,2 @@\n--- old rule\n+++ new rule\n-x\n+y\n--- a/next\n+++ b/next\n@@ -5 +5 @@\n-a\n+b\n";
        assert_eq!(
            texts(&diff_lines(diff, &Theme::dark())),
            vec![
                "--- a/x",
                "+++ b/x",
                "@@ -1,2 +1,2 @@",
                "1   --- old rule",
                "  1 +++ new rule",
                "2   -x",
                "  2 +y",
                "--- a/next",
                "+++ b/next",
                "@@ -5 +5 @@",
                "5   -a",
                "  5 +b",
            ]
        );
    }

    #[test]
    fn missing_newline_notes_and_tabs() {
        let theme = Theme::dark();
        let diff = similar_diff("a\n\tb", "a\n\tc");
        let lines = diff_lines(&diff, &theme);
        assert_eq!(
            texts(&lines),
            vec![
                "--- a/x.txt",
                "+++ b/x.txt",
                "@@ -1,2 +1,2 @@",
                "1 1  a",
                "2   -    b",
                "\\ No newline at end of file",
                "  2 +    c",
                "\\ No newline at end of file",
            ]
        );
        assert_eq!(
            lines[5],
            Line::from(Span::styled("\\ No newline at end of file", theme.dim))
        );
    }

    #[test]
    fn malformed_diffs_do_not_fail() {
        let inputs = [
            "",
            "@@",
            "@@ garbage @@\n-x\n+y",
            "@@ -a,b +c,d @@\n x",
            "@@ -1,1 +1,1 @@\n-x\n+y\n z\n-more than promised\nplain trailing text",
            "+++\n---\n@@ -0,0 +1 @@\n+new file\n",
            "no diff here\njust text",
            "@@ -99999999999999999999999,1 +1 @@\n-x",
            "\n\n\n",
        ];
        let got: Vec<Vec<String>> = inputs
            .iter()
            .map(|input| texts(&diff_lines(input, &Theme::dark())))
            .collect();
        let expected: Vec<Vec<&str>> = vec![
            vec![],
            vec!["@@"],
            vec!["@@ garbage @@", "1   -x", "  1 +y"],
            vec!["@@ -a,b +c,d @@", "1 1  x"],
            vec![
                "@@ -1,1 +1,1 @@",
                "1   -x",
                "  1 +y",
                "2 2  z",
                "3   -more than promised",
                "plain trailing text",
            ],
            vec!["+++", "---", "@@ -0,0 +1 @@", "  1 +new file"],
            vec!["no diff here", "just text"],
            vec!["@@ -99999999999999999999999,1 +1 @@", "1   -x"],
            vec!["", "", ""],
        ];
        let expected: Vec<Vec<String>> = expected
            .into_iter()
            .map(|lines| lines.into_iter().map(str::to_string).collect())
            .collect();
        assert_eq!(got, expected);
    }

    fn parsed_texts(parsed: &ParsedDiff) -> Vec<String> {
        let theme = Theme::dark();
        let lines: Vec<Line<'static>> = (0..parsed.len())
            .filter_map(|index| parsed.line(index, &theme))
            .collect();
        texts(&lines)
    }

    fn later() -> Instant {
        Instant::now() + std::time::Duration::from_secs(5)
    }

    /// A change is read once: its counts cover the whole change, its rows draw as
    /// `diff_lines` draws them, and a control character in the text shows as what it is.
    #[test]
    fn a_change_is_counted_and_drawn_a_row_at_a_time() {
        let change = TextChange {
            old_text: Some("one\ntwo\nthree\n".to_string()),
            new_text: "one\nTWO \u{1b}[2J\nthree\nfour\n".to_string(),
        };
        let parsed = ParsedDiff::of_change(&change, 100, later());
        assert_eq!((parsed.added, parsed.removed, parsed.left_out), (2, 1, 0));
        assert_eq!(
            parsed_texts(&parsed),
            vec![
                "@@ -1,3 +1,4 @@",
                "1 1  one",
                "2   -two",
                "  2 +TWO ␛[2J",
                "3 3  three",
                "  4 +four",
            ]
        );
        // The hunk's header is the widest row.
        assert_eq!(parsed.widest(), "@@ -1,3 +1,4 @@".len());
        let theme = Theme::dark();
        assert_eq!(
            parsed.line(2, &theme),
            Some(Line::from(vec![
                Span::styled("2   ", theme.dim),
                Span::styled("-two", theme.diff_remove)
            ]))
        );
        assert_eq!(parsed.line(6, &theme), None);
        // A new file: everything added.
        let new = TextChange {
            old_text: None,
            new_text: "a\nb\n".to_string(),
        };
        let parsed = ParsedDiff::of_change(&new, 100, later());
        assert_eq!((parsed.added, parsed.removed), (2, 0));
        assert_eq!(parsed_texts(&parsed), vec!["@@ -0,0 +1,2 @@", "  1 +a", "  2 +b"]);
    }

    /// The capped writer gives what `similar`'s own unified diff gives, when nothing is
    /// cut: missing newlines at either end, CRLF lines, an empty side, several hunks.
    #[test]
    fn capped_diff_reads_as_similars_own() {
        let long: String = (1..=40).map(|n| format!("{n}\n")).collect();
        let cases = [
            ("a\n\tb", "a\n\tc"),
            ("a\nb\n", "a\nb"),
            ("a\r\nb\r\n", "a\r\nc\r\n"),
            ("", "x\ny\n"),
            ("x\ny\n", ""),
            (long.as_str(), &long.replace("3\n", "three\n").replace("37\n", "")),
        ];
        for (old, new) in cases {
            let change = TextChange {
                old_text: Some(old.to_string()),
                new_text: new.to_string(),
            };
            let ours = ParsedDiff::of_change(&change, 1000, later());
            let theirs = similar::TextDiff::from_lines(old, new)
                .unified_diff()
                .context_radius(CONTEXT_LINES)
                .to_string();
            let theirs = ParsedDiff::of_text(&miniagent_text::visible(&theirs), 1000);
            assert_eq!(parsed_texts(&ours), parsed_texts(&theirs), "{old:?} → {new:?}");
        }
    }

    /// Only `max_rows` rows are kept, then one saying how many were not; a line longer
    /// than the cap keeps its start.
    #[test]
    fn large_changes_keep_a_capped_number_of_rows() {
        let new: String = (1..=50).map(|n| format!("{n}\n")).collect();
        let change = TextChange {
            old_text: None,
            new_text: new,
        };
        let parsed = ParsedDiff::of_change(&change, 4, later());
        assert_eq!((parsed.added, parsed.left_out), (50, 47));
        assert_eq!(
            parsed_texts(&parsed),
            vec![
                "@@ -0,0 +1,50 @@",
                "  1 +1",
                "  2 +2",
                "  3 +3",
                "… 47 more lines of this diff not shown",
            ]
        );
        let none = ParsedDiff::of_change(&change, 0, later());
        assert_eq!(
            parsed_texts(&none),
            vec!["… 51 more lines of this diff not shown"]
        );
        let long = TextChange {
            old_text: None,
            new_text: format!("{}\n", "é".repeat(MAX_LINE_BYTES)),
        };
        let parsed = ParsedDiff::of_change(&long, 10, later());
        let row = &parsed_texts(&parsed)[1];
        assert_eq!(row.chars().count(), "  1 +".len() + MAX_LINE_BYTES / 2 + 1);
        assert!(row.ends_with("éé…"), "{row}");
        // A deadline already past still gives a correct (if coarser) diff.
        let past = ParsedDiff::of_change(&change, 100, Instant::now());
        assert_eq!((past.added, past.removed), (50, 0));
    }

    #[test]
    fn coloured_diff_snapshot() {
        let old = "fn main() {\n    println!(\"hello\");\n}\n";
        let new = "fn main() {\n    // 你好\n    println!(\"hello, world\");\n}\n";
        let diff = format!("edit src/main.rs (1 replacement)\n{}", similar_diff(old, new));
        insta::assert_debug_snapshot!(test_render::buffer(diff_lines(&diff, &Theme::dark()), 44));
    }
}
