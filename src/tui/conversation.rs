//! The conversation pane: user and assistant messages (markdown), one line per tool
//! call, notices. Each entry caches its wrapped lines for the width it was last drawn
//! at, and only the visible slice is rendered, so a long transcript costs little per frame.

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::Style;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Paragraph, Widget};

use super::keys::KeyHint;
use super::text::{markdown::render_markdown, wrap};
use super::theme::Theme;
use super::timeline::CallStatus;

/// What kind of notice a line is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NoticeKind {
    Info,
    Warning,
    Error,
}

/// One item of the transcript.
#[derive(Clone, Debug, PartialEq)]
pub enum Entry {
    User(String),
    /// Markdown; `streaming` while deltas still arrive.
    Assistant {
        text: String,
        streaming: bool,
    },
    /// A tool call, shown as one line; its status is looked up in the timeline.
    Tool {
        id: String,
        name: String,
        summary: String,
    },
    Notice {
        kind: NoticeKind,
        text: String,
    },
}

struct Cached {
    width: u16,
    lines: Vec<Line<'static>>,
}

/// The transcript and its scroll position.
#[derive(Default)]
pub struct Conversation {
    entries: Vec<Entry>,
    cache: Vec<Option<Cached>>,
    /// `None` follows the bottom; `Some(top)` keeps the view where the person scrolled.
    top: Option<usize>,
    /// From the last render: total wrapped lines and the visible height.
    total_lines: usize,
    height: usize,
}

impl Conversation {
    pub fn entries(&self) -> &[Entry] {
        &self.entries
    }

    pub fn push(&mut self, entry: Entry) {
        self.entries.push(entry);
        self.cache.push(None);
    }

    pub fn clear(&mut self) {
        self.entries.clear();
        self.cache.clear();
        self.top = None;
    }

    /// Appends streamed assistant text, opening a new message when needed.
    pub fn push_assistant_delta(&mut self, delta: &str) {
        match self.entries.last_mut() {
            Some(Entry::Assistant {
                text,
                streaming: true,
            }) => {
                text.push_str(delta);
                self.invalidate_last();
            }
            _ => self.push(Entry::Assistant {
                text: delta.to_string(),
                streaming: true,
            }),
        }
    }

    /// The model call ended: its text is final (the authoritative copy replaces what
    /// streamed); an empty message is dropped.
    pub fn finish_assistant(&mut self, final_text: &str) {
        if let Some(Entry::Assistant { streaming: true, .. }) = self.entries.last() {
            self.entries.pop();
            self.cache.pop();
        }
        if !final_text.trim().is_empty() {
            self.push(Entry::Assistant {
                text: final_text.to_string(),
                streaming: false,
            });
        }
    }

    /// A retry starts the reply over: drop what streamed of it.
    pub fn discard_streaming(&mut self) {
        if let Some(Entry::Assistant { streaming: true, .. }) = self.entries.last() {
            self.entries.pop();
            self.cache.pop();
        }
    }

    /// An interrupted reply keeps what streamed, no longer streaming.
    pub fn stop_streaming(&mut self) {
        if let Some(Entry::Assistant { streaming, .. }) = self.entries.last_mut() {
            *streaming = false;
            self.invalidate_last();
        }
    }

    /// Tool lines show live status: redraw them when a call changes.
    pub fn invalidate_tool(&mut self, call_id: &str) {
        for (entry, cache) in self.entries.iter().zip(self.cache.iter_mut()).rev() {
            if matches!(entry, Entry::Tool { id, .. } if id == call_id) {
                *cache = None;
                return;
            }
        }
    }

    /// Forgets every cached rendering (the highlighter became ready, the theme changed).
    pub fn invalidate_all(&mut self) {
        for cached in &mut self.cache {
            *cached = None;
        }
    }

    fn invalidate_last(&mut self) {
        if let Some(last) = self.cache.last_mut() {
            *last = None;
        }
    }

    /// Whether the view follows new output.
    pub fn is_following(&self) -> bool {
        self.top.is_none()
    }

    pub fn scroll_up(&mut self, lines: usize) {
        let bottom_top = self.total_lines.saturating_sub(self.height);
        let current = self.top.unwrap_or(bottom_top);
        self.top = Some(current.saturating_sub(lines));
    }

    pub fn scroll_down(&mut self, lines: usize) {
        if let Some(top) = self.top {
            let bottom_top = self.total_lines.saturating_sub(self.height);
            let next = top + lines;
            self.top = if next >= bottom_top { None } else { Some(next) };
        }
    }

    pub fn scroll_to_top(&mut self) {
        self.top = Some(0);
    }

    pub fn scroll_to_bottom(&mut self) {
        self.top = None;
    }

    pub fn page(&self) -> usize {
        self.height.saturating_sub(2).max(1)
    }

    pub fn key_hints(&self) -> Vec<KeyHint> {
        vec![
            KeyHint::new("PgUp/PgDn", "scroll"),
            KeyHint::new("Home/End", "top / follow"),
            KeyHint::new("↑/↓", "scroll a line"),
        ]
    }

    /// Draws the visible slice into `area`; `status_of` gives tool lines their status.
    pub fn render(
        &mut self,
        area: Rect,
        buf: &mut Buffer,
        theme: &Theme,
        status_of: &dyn Fn(&str) -> Option<(CallStatus, String)>,
    ) {
        let width = area.width.max(1);
        self.height = usize::from(area.height);
        // Heights first (cheap once cached), then lines for the visible window only.
        let mut heights = Vec::with_capacity(self.entries.len());
        for index in 0..self.entries.len() {
            let fresh = matches!(&self.cache[index], Some(cached) if cached.width == width);
            if !fresh {
                let lines = render_entry(&self.entries[index], width, theme, status_of);
                self.cache[index] = Some(Cached { width, lines });
            }
            heights.push(self.cache[index].as_ref().map_or(0, |c| c.lines.len()));
        }
        self.total_lines = heights.iter().sum();
        let bottom_top = self.total_lines.saturating_sub(self.height);
        let top = match self.top {
            Some(top) if top < bottom_top => top,
            _ => {
                self.top = None;
                bottom_top
            }
        };
        let mut visible: Vec<Line<'static>> = Vec::with_capacity(self.height);
        let mut line_index = 0usize;
        for (index, height) in heights.iter().enumerate() {
            if line_index + height <= top {
                line_index += height;
                continue;
            }
            if let Some(cached) = &self.cache[index] {
                let skip = top.saturating_sub(line_index);
                for line in cached.lines.iter().skip(skip) {
                    if visible.len() >= self.height {
                        break;
                    }
                    visible.push(line.clone());
                }
            }
            line_index += height;
            if visible.len() >= self.height {
                break;
            }
        }
        Paragraph::new(visible).style(theme.text).render(area, buf);
        if self.top.is_some() && area.height > 0 {
            let marker = " ↓ new output below (End) ";
            let marker_width = u16::try_from(wrap::display_width(marker))
                .unwrap_or(u16::MAX)
                .min(area.width);
            let x = area.x + area.width.saturating_sub(marker_width);
            buf.set_stringn(
                x,
                area.y + area.height - 1,
                marker,
                usize::from(marker_width),
                theme.selection,
            );
        }
        if self.entries.is_empty() && area.height > 2 {
            let hint = "Type a message below and press Enter. F1 shows every key.";
            buf.set_stringn(
                area.x + 1,
                area.y + 1,
                hint,
                usize::from(area.width.saturating_sub(2)),
                theme.dim,
            );
        }
    }
}

fn render_entry(
    entry: &Entry,
    width: u16,
    theme: &Theme,
    status_of: &dyn Fn(&str) -> Option<(CallStatus, String)>,
) -> Vec<Line<'static>> {
    let mut lines = match entry {
        Entry::User(text) => {
            let mut lines = vec![Line::from(Span::styled("› you", theme.user))];
            let body: Vec<Line> = text
                .lines()
                .map(|l| Line::from(Span::styled(l.to_string(), theme.text)))
                .collect();
            lines.extend(wrap::wrap_lines(&body, width));
            lines
        }
        Entry::Assistant { text, streaming } => {
            let label = if *streaming {
                "● miniagent …"
            } else {
                "● miniagent"
            };
            let mut lines = vec![Line::from(Span::styled(label, theme.accent))];
            lines.extend(render_markdown(text, width, theme));
            lines
        }
        Entry::Tool { id, name, summary } => {
            let (status, duration) = status_of(id).unwrap_or((CallStatus::Queued, String::new()));
            let (mark, style) = status.mark(theme);
            let mut spans = vec![
                Span::styled(format!("  {mark} "), style),
                Span::styled(name.clone(), theme.tool),
                Span::raw(" "),
            ];
            // "  ✓ " + name + " " + summary + "  " + duration
            let used = 4 + wrap::display_width(name) + 1 + 2 + wrap::display_width(&duration);
            let room = usize::from(width).saturating_sub(used);
            spans.push(Span::styled(wrap::truncate(summary, room), theme.dim));
            if !duration.is_empty() {
                spans.push(Span::styled(format!("  {duration}"), theme.dim));
            }
            return vec![Line::from(spans)];
        }
        Entry::Notice { kind, text } => {
            let style = match kind {
                NoticeKind::Info => theme.dim,
                NoticeKind::Warning => theme.warning,
                NoticeKind::Error => theme.error,
            };
            let body = vec![Line::from(Span::styled(format!("  {text}"), style))];
            wrap::wrap_lines(&body, width)
        }
    };
    // A blank line between messages.
    lines.push(Line::from(Span::styled(String::new(), Style::default())));
    lines
}
