//! One file's change as `/diff` and the file tree's preview draw it: a heading (path,
//! status, lines added and removed, whether it was changed outside miniagent since, why
//! there is no text), then its unified diff, scrolled both ways. Only the rows on screen
//! are drawn at each frame.

use std::cell::Cell;
use std::time::Instant;

use crossterm::event::{KeyCode, KeyEvent};
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use unicode_segmentation::UnicodeSegmentation;

use crate::keys::OverlayAction;
use crate::scroll::Scroll;
use crate::text::diff::ParsedDiff;
use crate::text::wrap::{display_width, truncate_spans};
use crate::theme::Theme;
use crate::tree::slice_columns;
use miniagent_protocol::{FileDiff, FileStatus};

/// Columns a Left/Right key scrolls.
const SIDEWAYS_STEP: usize = 8;
/// Most diff lines one file keeps.
pub const MAX_FILE_ROWS: usize = 5_000;
/// Most diff lines a whole report keeps, over all its files; the files past it keep
/// fewer (or none) and say how many were left out.
pub const MAX_REPORT_ROWS: usize = 20_000;
/// How long the line diffs of one report may take before they are made coarser.
const REPORT_DIFF_TIME: std::time::Duration = std::time::Duration::from_millis(500);

/// One file of a diff report, ready to draw.
#[derive(Debug)]
pub struct FileView {
    /// Relative to the workspace: one line, every control character shown as what it is.
    pub path: String,
    /// The path as the report gave it, to find the file again in a later report.
    pub raw_path: String,
    pub status: FileStatus,
    pub changed_outside: bool,
    /// Why there is no text to show (one line, made inert).
    pub note: Option<String>,
    pub diff: Option<ParsedDiff>,
    scroll: Cell<Scroll>,
    left: usize,
    /// The diff's columns at the last frame, for keeping sideways moves in the text.
    columns: Cell<usize>,
}

/// The files of a report as views, their diffs within the report's caps.
pub fn views(files: &[FileDiff]) -> Vec<FileView> {
    let deadline = Instant::now() + REPORT_DIFF_TIME;
    let mut budget = MAX_REPORT_ROWS;
    files
        .iter()
        .map(|file| {
            let view = FileView::of(file, budget.min(MAX_FILE_ROWS), deadline);
            let kept = view
                .diff
                .as_ref()
                .map_or(0, |diff| diff.len() - usize::from(diff.left_out > 0));
            budget = budget.saturating_sub(kept);
            view
        })
        .collect()
}

/// One file's view alone (the tree's preview): its diff within one file's cap and the
/// time a whole report may take.
pub fn view(file: &FileDiff) -> FileView {
    FileView::of(file, MAX_FILE_ROWS, Instant::now() + REPORT_DIFF_TIME)
}

/// `text` on one line with nothing a terminal would act on: controls as their pictures,
/// a newline as `⏎`, a tab as a space.
pub fn one_line(text: &str) -> String {
    miniagent_text::visible(text)
        .replace('\n', "⏎")
        .replace('\t', " ")
}

/// `text` cut from the left to `width` columns, starting with `…` when cut: the end of a
/// path (the file's name) is the part worth keeping.
pub fn truncate_start(text: &str, width: usize) -> String {
    if display_width(text) <= width {
        return text.to_string();
    }
    if width == 0 {
        return String::new();
    }
    let mut used = 1;
    let mut kept = Vec::new();
    for grapheme in text.graphemes(true).rev() {
        let columns = display_width(grapheme);
        if used + columns > width {
            break;
        }
        used += columns;
        kept.push(grapheme);
    }
    kept.reverse();
    format!("…{}", kept.concat())
}

impl FileView {
    /// `file`, its diff keeping at most `max_rows` lines.
    pub fn of(file: &FileDiff, max_rows: usize, deadline: Instant) -> Self {
        Self {
            path: one_line(&file.path),
            raw_path: file.path.clone(),
            status: file.status,
            changed_outside: file.changed_outside,
            note: file.note.as_deref().map(one_line),
            diff: file
                .change
                .as_ref()
                .map(|change| ParsedDiff::of_change(change, max_rows, deadline)),
            scroll: Cell::new(Scroll::default()),
            left: 0,
            columns: Cell::new(0),
        }
    }

    /// The status as one letter, and its style.
    pub fn letter(&self, theme: &Theme) -> Span<'static> {
        match self.status {
            FileStatus::Added => Span::styled("A", theme.diff_add),
            FileStatus::Modified => Span::styled("M", theme.warning),
            FileStatus::Deleted => Span::styled("D", theme.diff_remove),
        }
    }

    /// Lines added and removed, as `+3 -1`.
    pub fn counts(&self) -> Option<String> {
        self.diff
            .as_ref()
            .map(|diff| format!("+{} -{}", diff.added, diff.removed))
    }

    /// What stands above the diff.
    fn heading(&self, theme: &Theme) -> Vec<Line<'static>> {
        let status = match self.status {
            FileStatus::Added => "added",
            FileStatus::Modified => "modified",
            FileStatus::Deleted => "deleted",
        };
        let mut first = vec![
            Span::styled(self.path.clone(), theme.strong),
            Span::styled(format!("  {status}"), theme.dim),
        ];
        if let Some(diff) = &self.diff {
            first.push(Span::styled(format!("  +{}", diff.added), theme.diff_add));
            first.push(Span::styled(format!(" -{}", diff.removed), theme.diff_remove));
        }
        let mut lines = vec![Line::from(first)];
        if self.changed_outside {
            lines.push(Line::from(Span::styled(
                "! changed outside miniagent since: the file on disk is not what is shown here",
                theme.warning,
            )));
        }
        match (&self.note, &self.diff) {
            (Some(note), _) => lines.push(Line::from(Span::styled(
                format!("no diff shown: {note}"),
                theme.dim,
            ))),
            (None, None) => lines.push(Line::from(Span::styled("no text to show", theme.dim))),
            (None, Some(diff)) if diff.is_empty() => {
                lines.push(Line::from(Span::styled("the text is the same", theme.dim)));
            }
            (None, Some(_)) => {}
        }
        lines
    }

    /// Draws the heading then the rows from the scroll's position; rows wider than the
    /// area are cut (←/→ show the rest).
    pub fn render(&self, area: Rect, buf: &mut Buffer, theme: &Theme) {
        if area.is_empty() {
            return;
        }
        let width = usize::from(area.width);
        let mut y = area.y;
        for line in self.heading(theme) {
            if y >= area.bottom() {
                return;
            }
            buf.set_line(
                area.x,
                y,
                &Line::from(truncate_spans(&line.spans, width)),
                area.width,
            );
            y += 1;
        }
        let Some(diff) = &self.diff else {
            return;
        };
        let rows = usize::from(area.bottom() - y);
        let mut scroll = self.scroll.get();
        let top = scroll.fit(diff.len(), rows);
        self.scroll.set(scroll);
        self.columns.set(width);
        // A resize may have made the stored offset too large; draw as if clamped.
        let left = self.left.min(diff.widest().saturating_sub(width));
        for (y, index) in (y..area.bottom()).zip(top..) {
            let Some(line) = diff.line(index, theme) else {
                break;
            };
            buf.set_line(area.x, y, &slice_columns(&line, left, width), area.width);
        }
    }

    /// Scrolling keys: ↑/↓ (k/j), pages, Home/End (g/G), ←/→ (h/l).
    pub fn on_key(&mut self, key: KeyEvent) -> OverlayAction {
        let rightwards = match key.code {
            KeyCode::Left | KeyCode::Char('h') => false,
            KeyCode::Right | KeyCode::Char('l') => true,
            // Closing is the caller's.
            KeyCode::Esc | KeyCode::Char('q') => return OverlayAction::Ignored,
            _ => return super::super::scroll_key(self.scroll.get_mut(), key),
        };
        let widest = self.diff.as_ref().map_or(0, ParsedDiff::widest);
        let most = widest.saturating_sub(self.columns.get());
        let left = if !rightwards {
            self.left.min(most).saturating_sub(SIDEWAYS_STEP)
        } else {
            self.left.saturating_add(SIDEWAYS_STEP).min(most)
        };
        if left == self.left {
            return OverlayAction::Ignored;
        }
        self.left = left;
        OverlayAction::Changed
    }

    /// Scrolls by `lines` (the wheel); whether it moved.
    pub fn scroll(&mut self, lines: i32) -> bool {
        self.scroll.get_mut().by(i64::from(lines))
    }

    /// The first row shown and the columns scrolled off to the left (for tests).
    #[cfg(test)]
    pub fn position(&self) -> (usize, usize) {
        (self.scroll.get().top(), self.left)
    }
}
