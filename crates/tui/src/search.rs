//! Finding a query in the conversation's drawn lines, and marking what was found.
//!
//! Matching works on each drawn line's text and gives byte ranges, never columns: the
//! marks are applied by splitting the line's spans at those bytes, so a wide character
//! (CJK, an emoji) is highlighted where ratatui draws it, whatever its width. A match
//! does not run across the end of a wrapped row.

use std::ops::Range;

use ratatui::style::Style;
use ratatui::text::{Line, Span};

/// What the person searches for. Smart case: without a capital letter the query matches
/// any case; with one, exactly.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Query {
    text: String,
    /// The query's characters as they are compared (folded when matching any case).
    chars: Vec<char>,
    exact_case: bool,
}

impl Query {
    pub fn new(text: &str) -> Self {
        let exact_case = text.chars().any(char::is_uppercase);
        let chars = text
            .chars()
            .map(|c| if exact_case { c } else { fold(c) })
            .collect();
        Query {
            text: text.to_string(),
            chars,
            exact_case,
        }
    }

    pub fn text(&self) -> &str {
        &self.text
    }

    pub fn is_empty(&self) -> bool {
        self.chars.is_empty()
    }

    /// Whether `narrower` is this query typed on (same case mode, this as its start): a
    /// line without a match of this one cannot hold one of `narrower`, so it needs to
    /// look only at the lines that matched before.
    pub fn narrows_to(&self, narrower: &Query) -> bool {
        !self.is_empty() && self.exact_case == narrower.exact_case && narrower.text.starts_with(&self.text)
    }

    /// The byte ranges of `haystack` where the query occurs, left to right, not
    /// overlapping.
    pub fn find(&self, haystack: &str) -> Vec<Range<usize>> {
        let mut found = Vec::new();
        if self.chars.is_empty() {
            return found;
        }
        if self.exact_case {
            return haystack
                .match_indices(self.text.as_str())
                .map(|(at, matched)| at..at + matched.len())
                .collect();
        }
        // The common case, ASCII both, compared in place without a copy of the line.
        if haystack.is_ascii() && self.chars.iter().all(char::is_ascii) {
            let needle: Vec<u8> = self.chars.iter().map(|&c| c as u8).collect();
            let bytes = haystack.as_bytes();
            let mut start = 0;
            while start + needle.len() <= bytes.len() {
                if bytes[start..start + needle.len()]
                    .iter()
                    .zip(&needle)
                    .all(|(b, n)| b.to_ascii_lowercase() == *n)
                {
                    found.push(start..start + needle.len());
                    start += needle.len();
                } else {
                    start += 1;
                }
            }
            return found;
        }
        let chars: Vec<(usize, char)> = haystack.char_indices().map(|(at, c)| (at, fold(c))).collect();
        let n = self.chars.len();
        let mut start = 0;
        while start + n <= chars.len() {
            let window = &chars[start..start + n];
            if window.iter().map(|(_, c)| *c).eq(self.chars.iter().copied()) {
                let end = chars.get(start + n).map_or(haystack.len(), |(at, _)| *at);
                found.push(chars[start].0..end);
                start += n;
            } else {
                start += 1;
            }
        }
        found
    }
}

/// One character in the case it is compared in: its first lowercase form (a character
/// whose lowercase is longer, such as `İ`, compares as its first one, which keeps every
/// match aligned to whole characters of the line).
fn fold(c: char) -> char {
    if c.is_uppercase() {
        c.to_lowercase().next().unwrap_or(c)
    } else {
        c
    }
}

/// The text of a drawn line, as `find` reads it.
pub fn line_text(line: &Line<'_>) -> String {
    line.spans.iter().map(|span| span.content.as_ref()).collect()
}

/// `line` with the bytes in `ranges` (of its text, sorted, not overlapping) patched with
/// `style`; `current`, one of them, with `current_style` instead.
pub fn mark(
    line: &Line<'static>,
    ranges: &[Range<usize>],
    style: Style,
    current: Option<&Range<usize>>,
    current_style: Style,
) -> Line<'static> {
    let mut spans: Vec<Span<'static>> = Vec::with_capacity(line.spans.len() + ranges.len() * 2);
    let mut offset = 0;
    let mut next = 0;
    for span in &line.spans {
        let content = span.content.as_ref();
        let end = offset + content.len();
        let mut at = offset;
        while at < end {
            // The part of the span up to the next range's edge.
            let range = ranges.get(next);
            let (until, marked) = match range {
                Some(range) if range.start <= at => (range.end.min(end), true),
                Some(range) => (range.start.min(end), false),
                None => (end, false),
            };
            let piece = &content[at - offset..until - offset];
            let piece_style = match range {
                Some(range) if marked && current == Some(range) => span.style.patch(current_style),
                Some(_) if marked => span.style.patch(style),
                _ => span.style,
            };
            if !piece.is_empty() {
                spans.push(Span::styled(piece.to_string(), piece_style));
            }
            at = until;
            if marked && range.is_some_and(|range| range.end <= at) {
                next += 1;
            }
        }
        offset = end;
    }
    Line::from(spans).style(line.style)
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;
    use ratatui::style::{Color, Modifier};

    #[test]
    #[allow(clippy::single_range_in_vec_init)] // One match's byte range, meant as such.
    fn smart_case_matches_any_case_until_a_capital_is_typed() {
        let cases: &[(&str, &str, Vec<Range<usize>>)] = &[
            (
                "error",
                "Error: an ERROR and an error",
                vec![0..5, 10..15, 23..28],
            ),
            ("Error", "Error: an ERROR and an error", vec![0..5]),
            ("ERROR", "Error: an ERROR and an error", vec![10..15]),
            ("aa", "aaaa", vec![0..2, 2..4]),
            ("", "anything", vec![]),
            ("x", "", vec![]),
            // Wide and multi-byte characters: byte ranges on character boundaries.
            ("文件", "打开文件 file 文件", vec![6..12, 18..24]),
            ("é", "CAFÉ café", vec![3..5, 9..11]),
            ("ß", "Straße STRASSE", vec![4..6]),
            // A capital whose lowercase is longer still lands on whole characters.
            ("i̇", "İstanbul", vec![]),
            ("🦀", "a🦀b🦀", vec![1..5, 6..10]),
        ];
        for (query, haystack, expected) in cases {
            let found = Query::new(query).find(haystack);
            assert_eq!(&found, expected, "{query:?} in {haystack:?}");
            for range in found {
                assert!(haystack.is_char_boundary(range.start) && haystack.is_char_boundary(range.end));
            }
        }
    }

    #[test]
    fn a_query_typed_on_narrows_only_in_the_same_case_mode() {
        assert!(Query::new("err").narrows_to(&Query::new("erro")));
        assert!(
            !Query::new("err").narrows_to(&Query::new("Erro")),
            "exact case now"
        );
        assert!(!Query::new("err").narrows_to(&Query::new("er")), "shorter");
        assert!(!Query::new("").narrows_to(&Query::new("a")));
    }

    #[test]
    fn marks_split_spans_at_the_matched_bytes() {
        let red = Style::new().fg(Color::Red);
        let line = Line::from(vec![Span::styled("ab文", red), Span::raw("件cd文件")]);
        let text = line_text(&line);
        let ranges = Query::new("文件").find(&text);
        assert_eq!(ranges, vec![2..8, 10..16]);
        let hit = Style::new().bg(Color::Yellow);
        let here = Style::new().add_modifier(Modifier::REVERSED);
        let marked = mark(&line, &ranges, hit, Some(&ranges[1]), here);
        assert_eq!(
            marked,
            Line::from(vec![
                Span::styled("ab", red),
                Span::styled("文", red.patch(hit)),
                Span::styled("件", hit),
                Span::raw("cd"),
                Span::styled("文件", here),
            ])
        );
        assert_eq!(line_text(&marked), text);
        assert_eq!(mark(&line, &[], hit, None, here), line);
    }
}
