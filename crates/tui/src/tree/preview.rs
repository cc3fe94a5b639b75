//! The read-only file preview overlay: highlighted, line-numbered, scrollable.

use crate::keys::KeyHint;
use crate::text::highlight;
use crate::text::wrap::{display_width, truncate};
use crate::theme::Theme;
use crossterm::event::{KeyCode, KeyEvent};
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use std::cell::{Cell, RefCell};
use std::io::Read;
use std::path::{Path, PathBuf};
use unicode_width::UnicodeWidthChar;

use super::{PreviewAction, escape_controls, is_plain_press, needs_escape};

/// The most of a file the preview reads.
pub(super) const PREVIEW_LIMIT: usize = 1024 * 1024;
/// A NUL within this many leading bytes makes a file binary (git's rule).
const BINARY_PROBE: usize = 8 * 1024;
/// Syntax colours stop after this much text: highlighting a whole megabyte would stall
/// the interface for seconds.
const HIGHLIGHT_LIMIT: usize = 256 * 1024;
/// Colours stop at the first line longer than this (minified code makes the regex
/// engine crawl).
const HIGHLIGHT_LINE_LIMIT: usize = 4 * 1024;
/// Colours stop after this many lines, below the highlighter's own limit (over which
/// it would leave everything plain).
const HIGHLIGHT_LINES: usize = 10_000;
/// Columns between tab stops.
const TAB_WIDTH: usize = 4;
/// Columns a Left/Right key scrolls.
const SIDEWAYS_STEP: usize = 8;
/// The code area assumed before the first render.
const DEFAULT_VIEWPORT: (usize, usize) = (80, 24);

/// The read-only file preview overlay.
#[derive(Debug)]
pub struct FilePreview {
    path: PathBuf,
    pub(super) body: PreviewBody,
    /// The first visible line.
    pub(super) top: usize,
    /// Display columns scrolled off to the left.
    pub(super) left: usize,
    /// The code area of the last render (columns, rows), for paging and clamping.
    viewport: Cell<(usize, usize)>,
}

#[derive(Debug)]
pub(super) enum PreviewBody {
    Text(PreviewText),
    /// A binary, unreadable or empty file: one line saying so.
    Message(String),
}

#[derive(Debug)]
pub(super) struct PreviewText {
    /// The file's lines with tabs expanded and control characters escaped.
    pub(super) source: Vec<String>,
    language: String,
    /// The drawn lines: plain until syntect has loaded, coloured after.
    lines: RefCell<Vec<Line<'static>>>,
    /// Whether `lines` are still the plain ones taken before syntect was ready.
    plain: Cell<bool>,
    /// The widest line's display width.
    widest: usize,
    /// Shown after the last line, e.g. that the file was cut.
    note: Option<String>,
}

impl PreviewText {
    fn new(source: Vec<String>, language: String, note: Option<String>, theme: &Theme) -> Self {
        let widest = source.iter().map(|line| display_width(line)).max().unwrap_or(0);
        // Asked before highlighting, so a load finishing meanwhile still upgrades later.
        let ready = highlight::is_ready();
        let lines = highlight_lines(&source, &language, theme);
        Self {
            source,
            language,
            lines: RefCell::new(lines),
            plain: Cell::new(!ready),
            widest,
            note,
        }
    }

    /// Lines plus the note.
    fn height(&self) -> usize {
        self.source.len() + usize::from(self.note.is_some())
    }
}

/// Highlights the leading part of `source` that is cheap to colour; the rest is plain.
fn highlight_lines(source: &[String], language: &str, theme: &Theme) -> Vec<Line<'static>> {
    let mut budget = HIGHLIGHT_LIMIT;
    let coloured = source
        .iter()
        .take(HIGHLIGHT_LINES)
        .take_while(|line| {
            let fits = line.len() <= HIGHLIGHT_LINE_LIMIT && line.len() < budget;
            budget = budget.saturating_sub(line.len() + 1);
            fits
        })
        .count();
    let mut lines = if coloured > 0 {
        highlight::highlight(&source[..coloured].join("\n"), language, theme)
    } else {
        Vec::new()
    };
    // Whatever the highlighter does with a trailing blank line, one line per source
    // line; the rest in the style the highlighter uses for plain code.
    lines.truncate(coloured);
    let plain = source[lines.len()..]
        .iter()
        .map(|line| Line::styled(line.clone(), theme.code));
    lines.extend(plain);
    lines
}

impl FilePreview {
    /// Reads the file (at most 1 MB; larger files show their first 1 MB and say so),
    /// tells binary files apart (NUL in the first 8 KB: show a one-line description),
    /// decodes non-UTF-8 lossily, highlights by `language_for_path`.
    pub fn open(path: &Path, theme: &Theme) -> Self {
        Self {
            path: path.to_path_buf(),
            body: read_preview(path, theme),
            top: 0,
            left: 0,
            viewport: Cell::new(DEFAULT_VIEWPORT),
        }
    }

    /// The title for the overlay frame: the path relative to `root` when inside it.
    pub fn title(&self, root: &Path) -> String {
        let relative = self
            .path
            .strip_prefix(root)
            .ok()
            .map(Path::to_path_buf)
            .or_else(|| {
                let path = self.path.canonicalize().ok()?;
                let root = root.canonicalize().ok()?;
                path.strip_prefix(root).ok().map(Path::to_path_buf)
            });
        let shown = relative
            .filter(|relative| !relative.as_os_str().is_empty())
            .unwrap_or_else(|| self.path.clone());
        escape_controls(&shown.to_string_lossy())
    }

    /// Handles a key while the preview is open.
    pub fn on_key(&mut self, key: KeyEvent) -> PreviewAction {
        if !is_plain_press(&key) {
            return PreviewAction::Ignored;
        }
        let page = crate::scroll::page_of(self.viewport.get().1);
        match key.code {
            KeyCode::Esc | KeyCode::Char('q') => PreviewAction::Close,
            KeyCode::Up | KeyCode::Char('k') => self.scroll_to(self.top.saturating_sub(1), self.left),
            KeyCode::Down | KeyCode::Char('j') => self.scroll_to(self.top.saturating_add(1), self.left),
            KeyCode::PageUp => self.scroll_to(self.top.saturating_sub(page), self.left),
            KeyCode::PageDown => self.scroll_to(self.top.saturating_add(page), self.left),
            KeyCode::Home | KeyCode::Char('g') => self.scroll_to(0, self.left),
            KeyCode::End | KeyCode::Char('G') => self.scroll_to(usize::MAX, self.left),
            KeyCode::Left | KeyCode::Char('h') => {
                self.scroll_to(self.top, self.left.saturating_sub(SIDEWAYS_STEP))
            }
            KeyCode::Right | KeyCode::Char('l') => {
                self.scroll_to(self.top, self.left.saturating_add(SIDEWAYS_STEP))
            }
            _ => PreviewAction::Ignored,
        }
    }

    /// Scrolls by `lines` (negative: up), e.g. for the mouse wheel.
    pub fn on_scroll(&mut self, lines: i32) -> PreviewAction {
        let step = usize::try_from(lines.unsigned_abs()).unwrap_or(usize::MAX);
        let top = if lines < 0 {
            self.top.saturating_sub(step)
        } else {
            self.top.saturating_add(step)
        };
        self.scroll_to(top, self.left)
    }

    /// Draws into the overlay's inner area: a line-number gutter (dim) then the code;
    /// long lines are cut at the right edge (horizontal scroll shows the rest).
    pub fn render(&self, area: Rect, buf: &mut Buffer, theme: &Theme) {
        if area.is_empty() {
            return;
        }
        let width = usize::from(area.width);
        let text = match &self.body {
            PreviewBody::Message(message) => {
                self.viewport.set((width, usize::from(area.height)));
                buf.set_stringn(area.x, area.y, truncate(message, width), width, theme.dim);
                return;
            }
            PreviewBody::Text(text) => text,
        };
        if text.plain.get() && highlight::is_ready() {
            // syntect finished loading after the file was opened: colour it now, once.
            *text.lines.borrow_mut() = highlight_lines(&text.source, &text.language, theme);
            text.plain.set(false);
        }
        let digits = text.source.len().max(1).to_string().len();
        let gutter = digits + 3;
        let columns = width.saturating_sub(gutter);
        let rows = usize::from(area.height);
        self.viewport.set((columns, rows));
        // A resize may have made the stored offsets too large; draw as if clamped.
        let top = self.top.min(text.height().saturating_sub(rows));
        let left = self.left.min(text.widest.saturating_sub(columns));
        let lines = text.lines.borrow();
        for (y, index) in (area.y..area.bottom()).zip(top..) {
            if let Some(line) = lines.get(index) {
                let number = format!("{:>digits$} │ ", index + 1);
                buf.set_stringn(area.x, y, number, width, theme.dim);
                if columns > 0 {
                    let x = area.x.saturating_add(u16::try_from(gutter).unwrap_or(u16::MAX));
                    let code = slice_columns(line, left, columns);
                    buf.set_line(x, y, &code, u16::try_from(columns).unwrap_or(u16::MAX));
                }
            } else if index == lines.len()
                && let Some(note) = &text.note
            {
                buf.set_stringn(area.x, y, truncate(note, width), width, theme.dim);
            }
        }
    }

    /// The bindings the preview offers, for the help overlay and the bottom bar.
    pub fn key_hints(&self) -> Vec<KeyHint> {
        vec![
            KeyHint::new("↑/↓", "scroll"),
            KeyHint::new("PgUp/PgDn", "page"),
            KeyHint::new("Home/End", "top / bottom"),
            KeyHint::new("←/→", "scroll sideways"),
            KeyHint::new("Esc/q", "close"),
        ]
    }

    /// Moves to `top`/`left`, clamped to the text as the last render laid it out.
    fn scroll_to(&mut self, top: usize, left: usize) -> PreviewAction {
        let PreviewBody::Text(text) = &self.body else {
            return PreviewAction::Ignored;
        };
        let (columns, rows) = self.viewport.get();
        let top = top.min(text.height().saturating_sub(rows));
        let left = left.min(text.widest.saturating_sub(columns));
        if (top, left) == (self.top, self.left) {
            return PreviewAction::Ignored;
        }
        self.top = top;
        self.left = left;
        PreviewAction::Changed
    }
}

fn read_preview(path: &Path, theme: &Theme) -> PreviewBody {
    match std::fs::metadata(path) {
        Ok(meta) if meta.is_dir() => return PreviewBody::Message("a folder: not shown".to_string()),
        // Opening a named pipe would block the interface until something writes to it.
        Ok(meta) if !meta.is_file() => {
            return PreviewBody::Message(
                "not a regular file (a pipe, socket or device): not shown".to_string(),
            );
        }
        Ok(_) => {}
        Err(err) => return PreviewBody::Message(format!("cannot read this file: {err}")),
    }
    let mut bytes = Vec::new();
    let read = std::fs::File::open(path).and_then(|file| {
        let size = file.metadata()?.len();
        // One byte past the limit tells a file of exactly 1 MB from a longer one.
        file.take(PREVIEW_LIMIT as u64 + 1).read_to_end(&mut bytes)?;
        Ok(size)
    });
    let size = match read {
        Ok(size) => size,
        Err(err) => return PreviewBody::Message(format!("cannot read this file: {err}")),
    };
    if bytes[..bytes.len().min(BINARY_PROBE)].contains(&0) {
        return PreviewBody::Message(format!("binary file, {}: not shown", human_size(size)));
    }
    if bytes.is_empty() {
        return PreviewBody::Message("empty file".to_string());
    }
    let note = if bytes.len() > PREVIEW_LIMIT {
        bytes.truncate(PREVIEW_LIMIT);
        // Don't let the cut turn a character split in half into a replacement mark.
        if let Err(err) = std::str::from_utf8(&bytes)
            && err.error_len().is_none()
        {
            bytes.truncate(err.valid_up_to());
        }
        Some(format!("… showing the first 1 MB of {}", human_size(size)))
    } else {
        None
    };
    let text = String::from_utf8_lossy(&bytes);
    let body = text.strip_suffix('\n').unwrap_or(&text);
    let source = body.split('\n').map(clean_line).collect();
    PreviewBody::Text(PreviewText::new(
        source,
        highlight::language_for_path(path),
        note,
        theme,
    ))
}

/// A line as it can be drawn: no `\r`, tabs expanded to tab stops, control characters
/// escaped.
fn clean_line(line: &str) -> String {
    let line = line.strip_suffix('\r').unwrap_or(line);
    let mut out = String::with_capacity(line.len());
    let mut column = 0;
    for c in line.chars() {
        if c == '\t' {
            let spaces = TAB_WIDTH - column % TAB_WIDTH;
            out.extend(std::iter::repeat_n(' ', spaces));
            column += spaces;
        } else if needs_escape(c) {
            let escaped: String = c.escape_default().collect();
            column += escaped.len();
            out.push_str(&escaped);
        } else {
            out.push(c);
            column += c.width().unwrap_or(0);
        }
    }
    out
}

/// The part of `line` from display column `skip` on, at most `width` columns wide. A
/// wide character cut by either edge becomes a space.
pub(crate) fn slice_columns(line: &Line<'_>, skip: usize, width: usize) -> Line<'static> {
    let mut spans = Vec::new();
    let mut column = 0;
    let end = skip + width;
    'spans: for span in &line.spans {
        let mut text = String::new();
        for c in span.content.chars() {
            let c_width = c.width().unwrap_or(0);
            let next = column + c_width;
            if next > end {
                if column < end {
                    text.extend(std::iter::repeat_n(' ', end - column.max(skip)));
                }
                spans.push(Span::styled(text, span.style));
                break 'spans;
            }
            if column >= skip {
                text.push(c);
            } else if next > skip {
                text.extend(std::iter::repeat_n(' ', next - skip));
            }
            column = next;
        }
        spans.push(Span::styled(text, span.style));
    }
    Line::from(spans).style(line.style)
}

/// A size as the workbench says it: `512 bytes`, `40.0 KB`, `3.1 MB`.
pub(crate) fn human_size(bytes: u64) -> String {
    const KB: f64 = 1024.0;
    let size = bytes as f64;
    if size < KB {
        format!("{bytes} bytes")
    } else if size < KB * KB {
        format!("{:.1} KB", size / KB)
    } else {
        format!("{:.1} MB", size / (KB * KB))
    }
}
