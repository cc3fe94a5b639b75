//! The conversation pane: user and assistant messages (markdown), one line per tool
//! call, notices. Each entry caches its wrapped lines for the width it was last drawn
//! at, and only the visible slice is rendered, so a long transcript costs little per frame.

use std::cell::{Cell, RefCell};

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::Style;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Paragraph, Widget};

use crate::search::Query;

use super::keys::KeyHint;
use super::text::markdown::{CodeBlock, render_markdown, render_markdown_blocks};
use super::text::wrap;
use super::theme::Theme;
use super::timeline::{CallStatus, ToolLine};

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
    /// The files the person's message attached, as chips; `plain` in words instead of
    /// symbols (`NO_COLOR`).
    Files {
        files: Vec<miniagent_protocol::AttachedFile>,
        plain: bool,
    },
}

struct Cached {
    width: u16,
    lines: Vec<Line<'static>>,
    /// For a message still streaming: `lines` holds its whole markdown blocks so far,
    /// rendered once; the text after them is rendered into `tail` on each change.
    streamed: Option<Streamed>,
    /// A finished reply's code blocks, by the rows of `lines` that show them.
    blocks: Vec<CodeBlock>,
    /// The matches of the search, for the query they were found for.
    found: Option<reading::Found>,
    /// A call drawn with the lines of its result the search's query matched: that query.
    query: Option<String>,
}

struct Streamed {
    /// Bytes of the text rendered into `lines`.
    settled: usize,
    tail: Vec<Line<'static>>,
    /// The text's length when `tail` was rendered (a streaming text only grows).
    rendered: usize,
}

impl Cached {
    fn height(&self) -> usize {
        self.lines.len() + self.streamed.as_ref().map_or(0, |s| s.tail.len())
    }

    fn all_lines(&self) -> impl Iterator<Item = &Line<'static>> {
        self.lines
            .iter()
            .chain(self.streamed.iter().flat_map(|s| s.tail.iter()))
    }
}

/// The transcript and its scroll position.
#[derive(Default)]
pub struct Conversation {
    entries: Vec<Entry>,
    /// Each entry's rendering, parallel to `entries`, kept between frames. Drawing
    /// borrows the app immutably, so this and what the frame adjusts are in cells.
    cache: RefCell<Vec<Option<Cached>>>,
    /// `None` follows the bottom; `Some(top)` keeps the view where the person scrolled.
    top: Cell<Option<usize>>,
    /// From the last render: total wrapped lines, the visible height and the width.
    total_lines: Cell<usize>,
    height: Cell<usize>,
    width: Cell<u16>,
    /// While scrolled up: the transcript's height (and the width it was measured at)
    /// when the view left the bottom, and whether anything has been added below since.
    /// The hint "new output below" shows only then, not the moment the person scrolls.
    left_bottom: Cell<Option<LeftBottom>>,
    /// The search and the block selected for copying.
    reading: reading::Reading,
    /// The turn number of each `Entry::User` in the view, in order: the agent numbers
    /// turns by their `TurnStarted` (from 1, never reused), and a rewind names one.
    user_turns: Vec<u32>,
    /// The number the next turn's message gets. A cleared view goes on counting, as the
    /// agent does; a fresh one (a resumed session) counts its restored turns again.
    next_turn: u32,
}

#[derive(Clone, Copy, Debug)]
struct LeftBottom {
    lines: usize,
    width: u16,
    grown: bool,
}

impl Conversation {
    pub fn entries(&self) -> &[Entry] {
        &self.entries
    }

    pub fn push(&mut self, entry: Entry) {
        self.entries.push(entry);
        self.cache.get_mut().push(None);
    }

    /// Puts `entry` in place of the entry at `index` (a progress line its result
    /// replaces); out of range, it is appended instead.
    pub fn replace(&mut self, index: usize, entry: Entry) {
        match self.entries.get_mut(index) {
            Some(slot) => {
                *slot = entry;
                self.cache.get_mut()[index] = None;
            }
            None => self.push(entry),
        }
    }

    pub fn clear(&mut self) {
        self.entries.clear();
        self.cache.get_mut().clear();
        self.user_turns.clear();
        self.top.set(None);
        self.reading.forget_selection();
    }

    /// Appends streamed assistant text, opening a new message when needed.
    pub fn push_assistant_delta(&mut self, delta: &str) {
        match self.entries.last_mut() {
            Some(Entry::Assistant {
                text,
                streaming: true,
            }) => {
                text.push_str(delta);
            }
            _ => self.push(Entry::Assistant {
                text: delta.to_string(),
                streaming: true,
            }),
        }
    }

    /// The model call ended: its text is final (the authoritative copy replaces what
    /// streamed, where it streamed: a notice emitted during the call, such as repaired
    /// call ids, may follow it); an empty message is dropped.
    pub fn finish_assistant(&mut self, final_text: &str) {
        let streamed = self.streaming_index();
        let final_entry = (!final_text.trim().is_empty()).then(|| Entry::Assistant {
            text: final_text.to_string(),
            streaming: false,
        });
        match (streamed, final_entry) {
            (Some(index), Some(entry)) => {
                self.entries[index] = entry;
                self.cache.get_mut()[index] = None;
            }
            (Some(index), None) => {
                self.entries.remove(index);
                self.cache.get_mut().remove(index);
                self.reading.forget_selection();
            }
            (None, Some(entry)) => self.push(entry),
            (None, None) => {}
        }
    }

    /// A retry starts the reply over: drop what streamed of it.
    pub fn discard_streaming(&mut self) {
        if let Some(index) = self.streaming_index() {
            self.entries.remove(index);
            self.cache.get_mut().remove(index);
            self.reading.forget_selection();
        }
    }

    /// Where the reply being streamed is: the last assistant entry, while it streams.
    fn streaming_index(&self) -> Option<usize> {
        self.entries
            .iter()
            .rposition(|entry| matches!(entry, Entry::Assistant { .. }))
            .filter(|&index| matches!(self.entries[index], Entry::Assistant { streaming: true, .. }))
    }

    /// An interrupted reply keeps what streamed, no longer streaming.
    pub fn stop_streaming(&mut self) {
        if let Some(Entry::Assistant { streaming, .. }) = self.entries.last_mut() {
            *streaming = false;
            self.invalidate_last();
        }
    }

    /// Tool lines show live status: redraw them when a call changes.
    pub fn invalidate_tool(&self, call_id: &str) {
        let mut caches = self.cache.borrow_mut();
        for (entry, cache) in self.entries.iter().zip(caches.iter_mut()).rev() {
            if matches!(entry, Entry::Tool { id, .. } if id == call_id) {
                *cache = None;
                return;
            }
        }
    }

    /// Forgets every cached rendering (the highlighter became ready, the theme changed).
    pub fn invalidate_all(&mut self) {
        for cached in self.cache.get_mut() {
            *cached = None;
        }
    }

    fn invalidate_last(&mut self) {
        if let Some(last) = self.cache.get_mut().last_mut() {
            *last = None;
        }
    }

    /// Whether the view follows new output.
    pub fn is_following(&self) -> bool {
        self.top.get().is_none()
    }

    pub fn scroll_up(&mut self, lines: usize) {
        let bottom_top = self.total_lines.get().saturating_sub(self.height.get());
        let current = self.top.get().unwrap_or(bottom_top);
        self.leave_bottom();
        self.top.set(Some(current.saturating_sub(lines)));
    }

    /// Notes how tall the transcript is as the view stops following it.
    fn leave_bottom(&self) {
        if self.top.get().is_none() {
            self.left_bottom.set(Some(LeftBottom {
                lines: self.total_lines.get(),
                width: self.width.get(),
                grown: false,
            }));
        }
    }

    /// Whether output was added below the view since it stopped following.
    pub fn new_output_below(&self) -> bool {
        self.top.get().is_some() && self.left_bottom.get().is_some_and(|left| left.grown)
    }

    /// Compares the transcript's height now with the one noted when the view left the
    /// bottom. A new width rewraps everything: the height is noted afresh, not compared.
    fn note_growth(&self, total_lines: usize, width: u16) {
        let Some(mut left) = self.left_bottom.get() else {
            return;
        };
        if left.width == width {
            left.grown |= total_lines > left.lines;
        }
        // A dropped reply (a retry) shrinks it: what comes next is new again.
        left.lines = if left.width == width {
            left.lines.min(total_lines)
        } else {
            total_lines
        };
        left.width = width;
        self.left_bottom.set(Some(left));
    }

    pub fn scroll_down(&mut self, lines: usize) {
        if let Some(top) = self.top.get() {
            let bottom_top = self.total_lines.get().saturating_sub(self.height.get());
            let next = top.saturating_add(lines);
            self.top.set(if next >= bottom_top { None } else { Some(next) });
        }
    }

    pub fn scroll_to_top(&mut self) {
        self.leave_bottom();
        self.top.set(Some(0));
    }

    pub fn scroll_to_bottom(&mut self) {
        self.top.set(None);
        self.left_bottom.set(None);
    }

    pub fn page(&self) -> usize {
        super::scroll::page_of(self.height.get())
    }

    /// Every key of the pane, for the help (the first three are the bottom bar's when
    /// no search or selection shows: [`Self::bar_hints`]).
    pub fn key_hints(&self) -> Vec<KeyHint> {
        vec![
            KeyHint::new("PgUp/PgDn", "scroll"),
            KeyHint::new("Home/End", "top / follow"),
            KeyHint::new("↑/↓", "scroll a line"),
            KeyHint::new("/", "search the conversation (Ctrl-F anywhere)"),
            KeyHint::new("n/N", "next / previous match"),
            KeyHint::new("[/]", "select the previous / next code block or tool call"),
            KeyHint::new("y", "copy the selected block (OSC 52)"),
            KeyHint::new("Esc", "end the search / unselect"),
        ]
    }

    /// Draws the visible slice into `area`; `status_of` gives tool lines their status.
    pub fn render(
        &self,
        area: Rect,
        buf: &mut Buffer,
        theme: &Theme,
        status_of: &dyn Fn(&str) -> Option<ToolLine>,
    ) {
        let width = area.width.max(1);
        // The search line takes the pane's last row.
        let search_row = self.reading.search_line_shown() && area.height > 1;
        let text_area = Rect {
            height: area.height - u16::from(search_row),
            ..area
        };
        let height = usize::from(text_area.height);
        self.height.set(height);
        let mut cache = self.cache.borrow_mut();
        // A call's result is looked into while a search runs: its matching lines show.
        let query = self.reading.query();
        // Heights first (cheap once cached), then lines for the visible window only.
        let mut heights = Vec::with_capacity(self.entries.len());
        for index in 0..self.entries.len() {
            if let Entry::Assistant {
                text,
                streaming: true,
            } = &self.entries[index]
            {
                render_streaming(&mut cache[index], text, width, theme);
            } else if !matches!(&cache[index], Some(cached) if cached.width == width
                && (!matches!(self.entries[index], Entry::Tool { .. }) || cached.query.as_deref() == query.map(Query::text)))
            {
                let entry = &self.entries[index];
                let (lines, blocks) = render_entry(entry, width, theme, status_of, query);
                cache[index] = Some(Cached {
                    width,
                    lines,
                    streamed: None,
                    blocks,
                    found: None,
                    query: matches!(entry, Entry::Tool { .. })
                        .then(|| query.map(|query| query.text().to_string()))
                        .flatten(),
                });
            }
            heights.push(cache[index].as_ref().map_or(0, Cached::height));
        }
        let total_lines: usize = heights.iter().sum();
        self.total_lines.set(total_lines);
        self.width.set(width);
        let bottom_top = total_lines.saturating_sub(height);
        let top = match self.top.get() {
            Some(top) if top < bottom_top => top,
            _ => {
                self.top.set(None);
                self.left_bottom.set(None);
                bottom_top
            }
        };
        // The search's matches, and a match or block to bring into view.
        let top = match self.reading.settle(&mut cache, &heights, top, height) {
            Some(wanted) if wanted < bottom_top => {
                self.leave_bottom();
                self.top.set(Some(wanted));
                wanted
            }
            Some(_) => {
                self.top.set(None);
                self.left_bottom.set(None);
                bottom_top
            }
            None => top,
        };
        self.note_growth(total_lines, width);
        let mut visible: Vec<Line<'static>> = Vec::with_capacity(height);
        let mut line_index = 0usize;
        for (index, entry_height) in heights.iter().enumerate() {
            if line_index + entry_height <= top {
                line_index += entry_height;
                continue;
            }
            if let Some(cached) = &cache[index] {
                let skip = top.saturating_sub(line_index);
                for (row, line) in cached.all_lines().enumerate().skip(skip) {
                    if visible.len() >= height {
                        break;
                    }
                    visible.push(self.reading.decorate(index, cached, row, line, theme));
                }
            }
            line_index += entry_height;
            if visible.len() >= height {
                break;
            }
        }
        Paragraph::new(visible).style(theme.text).render(text_area, buf);
        if search_row {
            let row = Rect {
                y: area.y + area.height - 1,
                height: 1,
                ..area
            };
            self.reading.render_search_line(row, buf, theme);
        }
        self.render_notes(text_area, buf, theme);
    }

    /// Draws over the text in `area`: the mark that new output arrived below the slice
    /// shown, and the first hint when there is nothing yet.
    fn render_notes(&self, area: Rect, buf: &mut Buffer, theme: &Theme) {
        if self.new_output_below() && area.height > 0 {
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

/// The most of one message the conversation draws. Real replies are far shorter (a
/// model's longest output is a few hundred KB); a hostile or damaged one (a 20 MB reply
/// in a replayed log) would otherwise take gigabytes and seconds to lay out. The whole
/// text stays in the session log.
pub const MAX_DRAWN_BYTES: usize = 512 * 1024;

/// The part of `text` drawn, cut at a line end near the limit when there is one, and how
/// many bytes are left out.
pub(crate) fn drawn_part(text: &str) -> (&str, usize) {
    if text.len() <= MAX_DRAWN_BYTES {
        return (text, 0);
    }
    let mut cut = MAX_DRAWN_BYTES;
    while !text.is_char_boundary(cut) {
        cut -= 1;
    }
    if let Some(line_end) = text[..cut].rfind('\n').filter(|end| cut - end < 4096) {
        cut = line_end + 1;
    }
    (&text[..cut], text.len() - cut)
}

/// The line that says how much of a message was left out.
pub(crate) fn not_drawn(left: usize, theme: &Theme) -> Line<'static> {
    Line::from(Span::styled(
        format!(
            "⋯ {:.1} MB more of this message is not drawn; it is whole in the session log (miniagent sessions export)",
            left as f64 / 1_048_576.0
        ),
        theme.warning,
    ))
}

/// Brings a streaming message's cached rendering up to date. Its whole blocks (text
/// before the last blank line that starts a new block outside a code fence) are
/// rendered once, a block at a time; only the text after them is rendered again, so a
/// long reply costs the same per frame as a short one. The finished message is
/// rendered whole again, so a block this splits differently (a loose list, a link
/// defined further down) shows right in the end.
fn render_streaming(cache: &mut Option<Cached>, text: &str, width: u16, theme: &Theme) {
    let (text, left) = drawn_part(text);
    let fresh = matches!(cache, Some(Cached { width: w, streamed: Some(s), .. }) if *w == width && s.settled <= text.len());
    if !fresh {
        *cache = Some(Cached {
            width,
            lines: vec![Line::from(Span::styled("● miniagent …", theme.accent))],
            streamed: Some(Streamed {
                settled: 0,
                tail: Vec::new(),
                rendered: usize::MAX,
            }),
            blocks: Vec::new(),
            found: None,
            query: None,
        });
    }
    let Some(Cached {
        lines,
        streamed: Some(streamed),
        found,
        ..
    }) = cache
    else {
        return;
    };
    if streamed.rendered == text.len() + left {
        return;
    }
    // The text changed: the search looks at it again.
    *found = None;
    let boundary = settled_boundary(text, streamed.settled);
    if boundary > streamed.settled {
        let blocks = render_markdown(&text[streamed.settled..boundary], width, theme);
        if !blocks.is_empty() {
            if lines.len() > 1 {
                lines.push(Line::default());
            }
            lines.extend(blocks);
        }
        streamed.settled = boundary;
    }
    let mut tail = render_markdown(&text[streamed.settled..], width, theme);
    if lines.len() > 1 && !tail.is_empty() {
        tail.insert(0, Line::default());
    }
    if left > 0 {
        tail.push(not_drawn(left, theme));
    }
    // A blank line between messages.
    tail.push(Line::from(Span::styled(String::new(), Style::default())));
    streamed.tail = tail;
    streamed.rendered = text.len() + left;
}

/// Where the whole blocks of `text` end, looking from `from` (a block boundary itself,
/// outside any code fence): the start of the last line that follows a blank line, starts
/// in its first column and is outside a fenced code block or an HTML comment.
fn settled_boundary(text: &str, from: usize) -> usize {
    let mut boundary = from;
    let mut offset = from;
    // The open fence's character and length, or an open `<!--` comment.
    let mut fence: Option<(char, usize)> = None;
    let mut in_comment = false;
    let mut after_blank = false;
    for line in text[from..].split_inclusive('\n') {
        let start = offset;
        offset += line.len();
        let trimmed = line.trim_start_matches(' ');
        let indent = line.len() - trimmed.len();
        if let Some((mark, length)) = fence {
            let run = trimmed.chars().take_while(|c| *c == mark).count();
            if indent < 4 && run >= length && trimmed[run * mark.len_utf8()..].trim().is_empty() {
                fence = None;
            }
            continue;
        }
        if in_comment {
            in_comment = !line.contains("-->");
            after_blank = false;
            continue;
        }
        let blank = line.trim().is_empty();
        if after_blank && !blank && !line.starts_with([' ', '\t']) {
            boundary = start;
        }
        after_blank = blank;
        if indent < 4 {
            for mark in ['`', '~'] {
                let run = trimmed.chars().take_while(|c| *c == mark).count();
                if run >= 3 {
                    fence = Some((mark, run));
                }
            }
            if trimmed.starts_with("<!--") && !trimmed.contains("-->") {
                in_comment = true;
            }
        }
    }
    boundary
}

/// The most lines of one call's result a search shows under it.
const RESULT_MATCHES_SHOWN: usize = 20;

/// The lines of a call's `result` that `query` matches, as drawn under the call while a
/// search runs (each made inert and cut to the width), so the search finds what the call
/// printed and `n`/`N` reach it; past [`RESULT_MATCHES_SHOWN`], how many more there are.
fn result_matches(result: &str, query: &Query, width: u16, theme: &Theme) -> Vec<Line<'static>> {
    let room = usize::from(width).saturating_sub(6);
    let mut matching = result.lines().filter(|line| !query.find(line).is_empty());
    let mut lines: Vec<Line<'static>> = matching
        .by_ref()
        .take(RESULT_MATCHES_SHOWN)
        .map(|line| {
            let shown = miniagent_text::visible(line).replace('\t', "    ");
            Line::from(vec![
                Span::styled("    │ ", theme.dim),
                Span::styled(wrap::truncate(&shown, room), theme.text),
            ])
        })
        .collect();
    let more = matching.count();
    if more > 0 {
        lines.push(Line::from(Span::styled(
            format!(
                "    │ … {more} more matching lines in its result (Enter on the call in Tools: all of it)"
            ),
            theme.dim,
        )));
    }
    lines
}

/// An entry's lines, and (for a finished reply) where its code blocks are among them.
fn render_entry(
    entry: &Entry,
    width: u16,
    theme: &Theme,
    status_of: &dyn Fn(&str) -> Option<ToolLine>,
    query: Option<&Query>,
) -> (Vec<Line<'static>>, Vec<CodeBlock>) {
    let mut blocks = Vec::new();
    let mut lines = match entry {
        Entry::User(text) => {
            let mut lines = vec![Line::from(Span::styled("› you", theme.user))];
            let (text, left) = drawn_part(text);
            let body: Vec<Line> = text
                .lines()
                .map(|l| Line::from(Span::styled(l.to_string(), theme.text)))
                .collect();
            lines.extend(wrap::wrap_lines(&body, width));
            if left > 0 {
                lines.push(not_drawn(left, theme));
            }
            lines
        }
        Entry::Assistant { text, streaming } => {
            let label = if *streaming {
                "● miniagent …"
            } else {
                "● miniagent"
            };
            let mut lines = vec![Line::from(Span::styled(label, theme.accent))];
            let (text, left) = drawn_part(text);
            let (body, body_blocks) = render_markdown_blocks(text, width, theme);
            let header = lines.len();
            blocks = body_blocks
                .into_iter()
                .map(|block| CodeBlock {
                    lines: block.lines.start + header..block.lines.end + header,
                    code: block.code,
                })
                .collect();
            lines.extend(body);
            if left > 0 {
                lines.push(not_drawn(left, theme));
            }
            lines
        }
        Entry::Tool { id, name, summary } => {
            let ToolLine {
                status,
                duration,
                outcome,
                result,
            } = status_of(id).unwrap_or(ToolLine {
                status: CallStatus::Queued,
                duration: String::new(),
                outcome: None,
                result: None,
            });
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
            let mut lines = vec![Line::from(spans)];
            // How it failed, or why it was refused, under the call: one line, cut to fit.
            if let Some(outcome) = outcome {
                let outcome_style = match status {
                    CallStatus::Error => theme.error,
                    CallStatus::Queued
                    | CallStatus::AwaitingApproval
                    | CallStatus::Running
                    | CallStatus::Ok
                    | CallStatus::Denied
                    | CallStatus::Refused
                    | CallStatus::Cancelled => theme.dim,
                };
                let room = usize::from(width).saturating_sub(6);
                lines.push(Line::from(vec![
                    Span::raw("    └ "),
                    Span::styled(wrap::truncate(&outcome, room), outcome_style),
                ]));
            }
            if let (Some(query), Some(result)) = (query, result) {
                lines.extend(result_matches(&result, query, width, theme));
            }
            return (lines, blocks);
        }
        Entry::Notice { kind, text } => {
            let style = match kind {
                NoticeKind::Info => theme.dim,
                NoticeKind::Warning => theme.warning,
                NoticeKind::Error => theme.error,
            };
            // Set in by two columns, every row of it: a continuation at the margin would
            // read as the start of something else.
            miniagent_text::clean(text)
                .split('\n')
                .flat_map(|line| {
                    wrap::wrap_indented(&Line::from(Span::styled(line.to_string(), style)), width, 2)
                })
                .collect()
        }
        Entry::Files { files, plain } => files
            .iter()
            .map(|file| chip(file, *plain || width < CHIP_SYMBOL_WIDTH, width, theme))
            .collect(),
    };
    // A blank line between messages.
    lines.push(Line::from(Span::styled(String::new(), Style::default())));
    (lines, blocks)
}

mod reading;
mod turns;
pub use reading::Selection;
/// Below this width chips are drawn in words: a narrow terminal may well be one that
/// draws emoji badly.
const CHIP_SYMBOL_WIDTH: u16 = 60;

/// One attached file's line: its path and what of it went with the message.
fn chip(file: &miniagent_protocol::AttachedFile, plain: bool, width: u16, theme: &Theme) -> Line<'static> {
    let refused = matches!(file.attached, miniagent_protocol::Attached::Refused { .. });
    let (mark, style) = match (plain, refused) {
        (false, false) => ("📎", theme.dim),
        (false, true) => ("⚠", theme.warning),
        (true, false) => ("[file]", theme.dim),
        (true, true) => ("[!]", theme.warning),
    };
    let shown = miniagent_protocol::attached_line(file);
    // A path is one line: a newline or tab in a file's name is shown, not acted on.
    let shown = miniagent_text::visible(&shown)
        .replace('\n', "␊")
        .replace('\t', "␉");
    let text = format!("  {mark} {shown}");
    Line::from(Span::styled(wrap::truncate(&text, usize::from(width)), style))
}

#[cfg(test)]
mod tests;
