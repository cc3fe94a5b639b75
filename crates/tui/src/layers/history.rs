//! The history inspector: the prompt as the model will see it next, one row per entry,
//! with the selected entry's text below (or beside, when wide). On a summary, Enter or
//! Tab swaps its text for the original messages it replaced; when those hold an earlier
//! summary (summaries nest as compaction repeats), Enter opens it, and so on down to the
//! original messages at any depth; Backspace goes back up. After the prompt's entries,
//! one row per branch a rewind set aside: selected, it shows the messages it holds.

use crossterm::event::{KeyCode, KeyEvent};
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::Style;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, BorderType, Borders, Widget};

use crate::keys::{KeyHint, OverlayAction};
use crate::popup::{clear_for_popup, tokens};
use crate::text::wrap::{display_width, truncate, wrap_lines};
use crate::theme::Theme;
pub use miniagent_protocol::message_range;
use miniagent_protocol::{
    HistoryEntry, HistoryEntryKind, HistorySnapshot, Op, SetAsideBranch, SummaryDetail,
};

/// The inspector's keys, for the bottom bar and the help overlay (closing first, so it
/// stays in the bottom bar at 80 columns).
pub const INSPECTOR_HINTS: [KeyHint; 7] = [
    KeyHint::new("↑/↓", "select"),
    KeyHint::new("Esc/q", "close"),
    KeyHint::new("Enter/Tab", "summary / originals"),
    KeyHint::new("Enter/⌫", "into / out of an earlier summary"),
    KeyHint::new("PgUp/PgDn", "scroll the text"),
    KeyHint::new("Home/End", "first / last entry"),
    KeyHint::new("r", "refresh"),
];

/// The inspector's frame title.
pub const INSPECTOR_TITLE: &str = "History · the prompt as the model sees it";

/// From this inner width on, the text stands beside the list instead of under it.
const SIDE_BY_SIDE_COLUMNS: u16 = 110;
/// Columns of the kind mark (`tools` and a space).
const MARK_COLUMNS: usize = 6;
/// Columns of the right-aligned token count.
const COUNT_COLUMNS: usize = 6;

/// The inspector's state; the snapshot itself lives in the app (`App::history`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HistoryInspector {
    /// The selected entry of the snapshot.
    pub selected: usize,
    /// The first row of the selected entry's text that shows.
    pub scroll: u16,
    /// On a summary: show the original messages it replaced instead of its text.
    pub originals: bool,
    /// The earlier summaries opened from the selected entry, outermost first: each is
    /// the index of a summary among the originals of the one before.
    pub path: Vec<usize>,
    /// A snapshot was asked for and has not arrived yet.
    pub waiting: bool,
    /// The first list row shown, kept so the selection stays in view.
    list_offset: std::cell::Cell<usize>,
    /// Rows of text the last frame showed, for paging.
    page: std::cell::Cell<u16>,
    /// The largest useful `scroll` at the last frame.
    max_scroll: std::cell::Cell<u16>,
}

impl HistoryInspector {
    /// A fresh inspector waiting for the snapshot it has just asked for.
    pub fn awaiting_snapshot() -> Self {
        Self {
            selected: 0,
            scroll: 0,
            originals: false,
            path: Vec::new(),
            waiting: true,
            list_offset: std::cell::Cell::new(0),
            page: std::cell::Cell::new(10),
            max_scroll: std::cell::Cell::new(u16::MAX),
        }
    }

    /// A snapshot arrived: stop waiting and keep the selection inside it.
    pub fn snapshot_arrived(&mut self, snapshot: &HistorySnapshot) {
        self.waiting = false;
        let last = rows(snapshot).saturating_sub(1);
        if self.selected > last {
            self.select(last);
        }
        if node(snapshot, self.selected, &self.path).is_none() {
            self.path.clear();
        }
        if node(snapshot, self.selected, &self.path)
            .and_then(|entry| entry.summary.as_ref())
            .is_none()
        {
            self.originals = false;
        }
    }

    fn select(&mut self, index: usize) {
        if index != self.selected {
            self.selected = index;
            self.scroll = 0;
            self.originals = false;
            self.path.clear();
            self.max_scroll.set(u16::MAX);
        }
    }

    /// Applies a key; `snapshot` is the app's latest one, if any.
    pub fn on_key(&mut self, key: KeyEvent, snapshot: Option<&HistorySnapshot>) -> OverlayAction {
        let count = snapshot.map_or(0, rows);
        let last = count.saturating_sub(1);
        match key.code {
            KeyCode::Esc | KeyCode::Char('q') | KeyCode::F(6) => return OverlayAction::Close,
            KeyCode::Char('r') => {
                self.waiting = true;
                return OverlayAction::Send(Op::InspectHistory);
            }
            KeyCode::Up | KeyCode::Char('k') => self.select(self.selected.saturating_sub(1)),
            KeyCode::Down | KeyCode::Char('j') => self.select((self.selected + 1).min(last)),
            KeyCode::Home | KeyCode::Char('g') => self.select(0),
            KeyCode::End | KeyCode::Char('G') => self.select(last),
            KeyCode::Enter | KeyCode::Tab => {
                let Some(detail) = snapshot
                    .and_then(|s| node(s, self.selected, &self.path))
                    .and_then(|entry| entry.summary.as_ref())
                else {
                    return OverlayAction::Ignored;
                };
                // Enter on the originals opens the earlier summary among them, if any.
                let earlier = detail.originals.iter().position(|e| e.summary.is_some());
                match earlier {
                    Some(index) if self.originals && key.code == KeyCode::Enter => {
                        self.path.push(index);
                        self.originals = false;
                    }
                    _ => self.originals = !self.originals,
                }
                self.scroll = 0;
                self.max_scroll.set(u16::MAX);
            }
            KeyCode::Backspace | KeyCode::Left | KeyCode::Char('h') => {
                if self.path.pop().is_none() {
                    return OverlayAction::Ignored;
                }
                // Back on the originals the earlier summary was opened from.
                self.originals = true;
                self.scroll = 0;
                self.max_scroll.set(u16::MAX);
            }
            KeyCode::PageUp => return changed(self.scroll_text(-i32::from(self.page.get().max(1)))),
            KeyCode::PageDown | KeyCode::Char(' ') => {
                return changed(self.scroll_text(i32::from(self.page.get().max(1))));
            }
            _ => return OverlayAction::Ignored,
        }
        OverlayAction::Changed
    }

    /// Scrolls the selected entry's text by `lines` (negative: up). Returns whether it moved.
    pub fn scroll_text(&mut self, lines: i32) -> bool {
        let next = i32::from(self.scroll)
            .saturating_add(lines)
            .clamp(0, i32::from(self.max_scroll.get()));
        let next = u16::try_from(next).unwrap_or(0);
        let moved = next != self.scroll;
        self.scroll = next;
        moved
    }

    /// Draws the inspector as a popup over `area` (borders included).
    pub fn draw(&self, snapshot: Option<&HistorySnapshot>, theme: &Theme, area: Rect, buf: &mut Buffer) {
        clear_for_popup(area, buf);
        let block = Block::default()
            .borders(Borders::ALL)
            .border_type(BorderType::Thick)
            .border_style(theme.border_focused)
            .title(Span::styled(
                " History · the prompt as the model sees it ",
                theme.title,
            ));
        let inner = block.inner(area);
        block.render(area, buf);
        if inner.width < 8 || inner.height < 4 {
            return;
        }
        let header = header_line(snapshot, self.waiting, theme, usize::from(inner.width));
        buf.set_line(inner.x, inner.y, &header, inner.width);
        let body = Rect {
            y: inner.y + 1,
            height: inner.height - 1,
            ..inner
        };
        let Some(snapshot) = snapshot else {
            let note = Line::from(Span::styled(
                "The agent answers at once when it is idle, and at its next step during a turn.",
                theme.dim,
            ));
            let width = body.width.saturating_sub(4);
            for (row, line) in wrap_lines(&[note], width)
                .iter()
                .take(usize::from(body.height))
                .enumerate()
            {
                let y = body.y + 1 + u16::try_from(row).unwrap_or(0);
                if y < body.bottom() {
                    buf.set_line(body.x + 2, y, line, width);
                }
            }
            return;
        };
        let (list_area, text_area) = if inner.width >= SIDE_BY_SIDE_COLUMNS {
            let list_width = (inner.width / 2).clamp(40, 90);
            (
                Rect {
                    width: list_width,
                    ..body
                },
                Rect {
                    x: body.x + list_width,
                    width: body.width - list_width,
                    ..body
                },
            )
        } else {
            let entries = u16::try_from(rows(snapshot)).unwrap_or(u16::MAX);
            // The rule above the list, then at most two fifths of the rest for the list.
            let list_rows = entries.clamp(1, ((body.height - 1) * 2 / 5).max(3)) + 1;
            let list_rows = list_rows.min(body.height.saturating_sub(3));
            (
                Rect {
                    height: list_rows,
                    ..body
                },
                Rect {
                    y: body.y + list_rows,
                    height: body.height - list_rows,
                    ..body
                },
            )
        };
        self.draw_list(snapshot, theme, list_area, buf);
        self.draw_text(snapshot, theme, text_area, list_area.y == text_area.y, buf);
    }

    fn draw_list(&self, snapshot: &HistorySnapshot, theme: &Theme, area: Rect, buf: &mut Buffer) {
        let entries = snapshot.entries.len();
        let count = rows(snapshot);
        let branches = match snapshot.set_aside.len() {
            0 => String::new(),
            n => format!(" · {n} set aside by rewinds"),
        };
        let block = Block::default()
            .borders(Borders::TOP)
            .border_style(theme.border)
            .title(Span::styled(
                format!(
                    " Prompt, oldest first · {entries} entr{}{branches} ",
                    if entries == 1 { "y" } else { "ies" }
                ),
                theme.dim,
            ));
        let inner = block.inner(area);
        block.render(area, buf);
        if inner.height == 0 {
            return;
        }
        if count == 0 {
            let empty = Line::from(Span::styled("  The prompt has no messages yet.", theme.dim));
            buf.set_line(inner.x, inner.y, &empty, inner.width);
            return;
        }
        let rows = usize::from(inner.height);
        let mut offset = self.list_offset.get();
        if self.selected < offset {
            offset = self.selected;
        } else if self.selected >= offset + rows {
            offset = self.selected + 1 - rows;
        }
        offset = offset.min(count.saturating_sub(rows));
        self.list_offset.set(offset);
        let width = usize::from(inner.width);
        for (row, index) in (offset..count).take(rows).enumerate() {
            let selected = index == self.selected;
            let line = if let Some(entry) = snapshot.entries.get(index) {
                list_row(entry, selected, width, theme)
            } else if let Some(branch) = branch(snapshot, index) {
                branch_row(branch, selected, width, theme)
            } else {
                continue;
            };
            let y = inner.y + u16::try_from(row).unwrap_or(0);
            buf.set_line(inner.x, y, &line, inner.width);
        }
    }

    fn draw_text(
        &self,
        snapshot: &HistorySnapshot,
        theme: &Theme,
        area: Rect,
        beside: bool,
        buf: &mut Buffer,
    ) {
        let width = area.width.saturating_sub(u16::from(beside));
        let text = if let Some(entry) = node(snapshot, self.selected, &self.path) {
            self.entry_text(entry, theme, width)
        } else if let Some(branch) = branch(snapshot, self.selected) {
            branch_text(branch, theme, width)
        } else {
            return;
        };
        self.draw_scrolled(text, area, beside, theme, buf);
    }

    /// The selected prompt entry's title, key hint and text (a summary's, or its originals).
    fn entry_text(&self, entry: &HistoryEntry, theme: &Theme, width: u16) -> Text {
        let nested = !self.path.is_empty();
        let back = if nested { " · ⌫ back" } else { "" };
        match (&entry.summary, self.originals) {
            (Some(detail), true) => {
                let earlier = if detail.originals.iter().any(|e| e.summary.is_some()) {
                    " · Enter: earlier summary"
                } else {
                    ""
                };
                (
                    format!("Replaced {}", range(detail)),
                    format!("Tab: summary{earlier}{back}"),
                    originals_lines(detail, theme, width),
                )
            }
            (Some(detail), false) => {
                let what = match (nested, detail.fallback) {
                    (true, true) => "Earlier digest",
                    (true, false) => "Earlier summary",
                    (false, true) => "Digest",
                    (false, false) => "Summary",
                };
                let mut lines = vec![
                    Line::from(Span::styled(
                        format!(
                            "Stands in for {}: {} tokens of originals → {} tokens in the prompt.{}{}",
                            range(detail),
                            tokens(detail.tokens_before),
                            tokens(entry.tokens),
                            if detail.fallback {
                                " A digest: the model could not summarize them."
                            } else {
                                ""
                            },
                            if nested {
                                " A later summary absorbed it; the model sees that one."
                            } else {
                                ""
                            }
                        ),
                        theme.dim,
                    )),
                    Line::default(),
                ];
                lines.extend(body_lines(&entry.body, theme));
                (
                    format!("{what} of {}", range(detail)),
                    format!("Tab: originals{back}"),
                    lines,
                )
            }
            (None, _) => (
                kind_name(entry.kind).to_string(),
                String::new(),
                body_lines(&entry.body, theme),
            ),
        }
    }

    /// `text`'s lines under a frame with its title and hint, scrolled as far as the person
    /// scrolled.
    fn draw_scrolled(&self, text: Text, area: Rect, beside: bool, theme: &Theme, buf: &mut Buffer) {
        let (title, hint, lines) = text;
        let width = area.width.saturating_sub(u16::from(beside));
        let borders = if beside {
            Borders::TOP | Borders::LEFT
        } else {
            Borders::TOP
        };
        let wrapped = wrap_lines(&lines, width);
        let height = area.height.saturating_sub(1);
        let total = wrapped.len();
        self.page.set(height.max(1));
        let max_scroll = u16::try_from(total.saturating_sub(usize::from(height))).unwrap_or(u16::MAX);
        self.max_scroll.set(max_scroll);
        // Drawn within the text; a scroll past its end (the screen grew) is taken back
        // by the next key.
        let first = usize::from(self.scroll.min(max_scroll));
        let position = (total > usize::from(height)).then(|| {
            let last = (first + usize::from(height)).min(total);
            format!(" {}–{last} of {total} ", first + 1)
        });
        // The frame's corner takes a column.
        let room = usize::from(area.width).saturating_sub(1);
        let (title, position) = fit_title(&title, &hint, position, room);
        let mut block = Block::default()
            .borders(borders)
            .border_style(theme.border)
            .title(Span::styled(title, theme.title));
        if let Some(position) = position {
            block = block.title_top(Line::from(Span::styled(position, theme.dim)).right_aligned());
        }
        let inner = block.inner(area);
        block.render(area, buf);
        for (row, line) in wrapped
            .iter()
            .skip(first)
            .take(usize::from(inner.height))
            .enumerate()
        {
            let y = inner.y + u16::try_from(row).unwrap_or(0);
            buf.set_line(inner.x, y, line, inner.width);
        }
    }
}

/// The text pane's title in `room` columns, whole where it fits: with its key hint and
/// the scroll position; short of room, without the hint (the key bar has the keys), then
/// without the position, then cut with a mark, never cut silently mid-word by the frame.
fn fit_title(title: &str, hint: &str, position: Option<String>, room: usize) -> (String, Option<String>) {
    let plain = format!(" {title} ");
    let hinted = if hint.is_empty() {
        plain.clone()
    } else {
        format!(" {title} ({hint}) ")
    };
    let with_position =
        |text: &str| display_width(text) + position.as_deref().map_or(0, display_width) <= room;
    if with_position(&hinted) {
        return (hinted, position);
    }
    if with_position(&plain) {
        return (plain, position);
    }
    if display_width(&plain) <= room {
        return (plain, None);
    }
    (format!(" {} ", truncate(title, room.saturating_sub(2))), None)
}

fn changed(moved: bool) -> OverlayAction {
    if moved {
        OverlayAction::Changed
    } else {
        OverlayAction::Ignored
    }
}

/// The text pane's title, key hint and lines.
type Text = (String, String, Vec<Line<'static>>);

/// Rows of the list: the prompt's entries, then what rewinds set aside.
fn rows(snapshot: &HistorySnapshot) -> usize {
    snapshot.entries.len() + snapshot.set_aside.len()
}

/// Row `index`'s branch, when it is one of what rewinds set aside (after the prompt's).
fn branch(snapshot: &HistorySnapshot, index: usize) -> Option<&SetAsideBranch> {
    snapshot.set_aside.get(index.checked_sub(snapshot.entries.len())?)
}

/// The entry shown: the selected one, or the earlier summary `path` leads to from it.
fn node<'a>(snapshot: &'a HistorySnapshot, selected: usize, path: &[usize]) -> Option<&'a HistoryEntry> {
    let mut entry = snapshot.entries.get(selected)?;
    for index in path {
        entry = entry.summary.as_ref()?.originals.get(*index)?;
    }
    Some(entry)
}

/// The prompt's size, masked results and compactions, then its parts as far as they fit.
fn header_line(
    snapshot: Option<&HistorySnapshot>,
    waiting: bool,
    theme: &Theme,
    width: usize,
) -> Line<'static> {
    let mut spans = Vec::new();
    if waiting {
        spans.push(Span::styled("loading the history…", theme.warning));
    }
    if let Some(snapshot) = snapshot {
        if waiting {
            spans.push(Span::styled(" · ", theme.dim));
        }
        let compactions = snapshot.compactions.len();
        spans.push(Span::styled(
            format!("prompt {} tokens", tokens(snapshot.prompt_tokens)),
            theme.strong,
        ));
        spans.push(Span::styled(
            format!(
                " · {} · {compactions} compaction{}",
                results_shown(snapshot.masked_results, snapshot.trimmed_results),
                if compactions == 1 { "" } else { "s" }
            ),
            theme.text,
        ));
        // Where the tokens go, when all of it fits.
        let used: usize = spans.iter().map(|span| display_width(&span.content)).sum();
        let roles: String = snapshot
            .by_role
            .iter()
            .map(|(role, count)| format!(" · {role} {}", tokens(*count)))
            .collect();
        if used + display_width(&roles) <= width {
            spans.push(Span::styled(roles, theme.dim));
        }
    }
    let line = Line::from(spans);
    if line.width() > width {
        return Line::from(crate::text::wrap::truncate_spans(&line.spans, width));
    }
    line
}

/// How many tool results the prompt shows as stubs and how many trimmed.
fn results_shown(masked: u64, trimmed: u64) -> String {
    let results = |n: u64| format!("{n} tool result{}", if n == 1 { "" } else { "s" });
    match (masked, trimmed) {
        (masked, 0) => format!("{} masked", results(masked)),
        (0, trimmed) => format!("{} trimmed", results(trimmed)),
        (masked, trimmed) => format!("{} masked, {trimmed} trimmed", results(masked)),
    }
}

/// One list row: selection mark, kind, title, tokens (right-aligned).
fn list_row(entry: &HistoryEntry, selected: bool, width: usize, theme: &Theme) -> Line<'static> {
    let title_width = width.saturating_sub(2 + MARK_COLUMNS + 1 + COUNT_COLUMNS);
    let title = truncate(&entry_title(entry), title_width);
    let padding = title_width.saturating_sub(display_width(&title));
    let mark_style = match entry.kind {
        HistoryEntryKind::User => theme.user,
        HistoryEntryKind::Assistant => theme.assistant,
        HistoryEntryKind::ToolResults => theme.tool,
        HistoryEntryKind::Summary => theme.accent.patch(theme.strong),
    };
    let line = Line::from(vec![
        Span::styled(if selected { "▸ " } else { "  " }, theme.strong),
        Span::styled(pad(kind_mark(entry.kind), MARK_COLUMNS), mark_style),
        Span::styled(format!("{title}{} ", " ".repeat(padding)), theme.text),
        Span::styled(format!("{:>COUNT_COLUMNS$}", tokens(entry.tokens)), theme.dim),
    ]);
    if selected { theme.selected(line) } else { line }
}

/// What a rewind set aside, as a row under the prompt's: marked `aside`, with what it
/// held in tokens (none of them in the prompt).
fn branch_row(branch: &SetAsideBranch, selected: bool, width: usize, theme: &Theme) -> Line<'static> {
    let title_width = width.saturating_sub(2 + MARK_COLUMNS + 1 + COUNT_COLUMNS);
    let title = truncate(&branch_title(branch), title_width);
    let padding = title_width.saturating_sub(display_width(&title));
    let held: u64 = branch.entries.iter().map(|entry| entry.tokens).sum();
    let line = Line::from(vec![
        Span::styled(if selected { "▸ " } else { "  " }, theme.strong),
        Span::styled(pad("aside", MARK_COLUMNS), theme.dim),
        Span::styled(format!("{title}{} ", " ".repeat(padding)), theme.dim),
        Span::styled(format!("{:>COUNT_COLUMNS$}", tokens(held)), theme.dim),
    ]);
    if selected { theme.selected(line) } else { line }
}

/// `rewound to before turn 3 · 4 messages`, and the later rewind's branch it is inside.
fn branch_title(branch: &SetAsideBranch) -> String {
    let count = branch.entries.len();
    let within = branch
        .within
        .map(|turn| format!(" · inside turn {turn}'s"))
        .unwrap_or_default();
    format!(
        "rewound to before turn {} · {count} message{}{within}",
        branch.turn,
        if count == 1 { "" } else { "s" }
    )
}

/// A set-aside branch's title, hint and text: what it is, then its messages.
fn branch_text(branch: &SetAsideBranch, theme: &Theme, width: u16) -> Text {
    let mut lines = vec![
        Line::from(Span::styled(
            format!(
                "The conversation went back to just before turn {}'s message; these messages followed it (from message {}) and are no longer in the prompt.{} The session log keeps them.",
                branch.turn,
                branch.from,
                branch
                    .within
                    .map(|turn| format!(
                        " A later rewind, to before turn {turn}, set them aside again with its own."
                    ))
                    .unwrap_or_default()
            ),
            theme.dim,
        )),
        Line::default(),
    ];
    lines.extend(entries_lines(&branch.entries, theme, width));
    (
        format!("Set aside by a rewind to before turn {}", branch.turn),
        "not in the prompt".to_string(),
        lines,
    )
}

/// A mark readable without colour.
fn kind_mark(kind: HistoryEntryKind) -> &'static str {
    match kind {
        HistoryEntryKind::User => "you",
        HistoryEntryKind::Assistant => "ai",
        HistoryEntryKind::ToolResults => "tools",
        HistoryEntryKind::Summary => "Σ",
    }
}

fn kind_name(kind: HistoryEntryKind) -> &'static str {
    match kind {
        HistoryEntryKind::User => "Your message",
        HistoryEntryKind::Assistant => "The model's message",
        HistoryEntryKind::ToolResults => "Tool results",
        HistoryEntryKind::Summary => "Summary",
    }
}

/// A summary's title built from its figures; other entries keep the agent's title.
fn entry_title(entry: &HistoryEntry) -> String {
    let title = match &entry.summary {
        // The digest mark comes first so that a cut title keeps it. The figure at the
        // right is what it takes in the prompt, on the gauge's scale; the title says what
        // its originals took, untrimmed and unmasked.
        Some(detail) => format!(
            "{}summary{} of {} · originals {} tokens",
            if entry.title.starts_with("earlier ") {
                "earlier "
            } else {
                ""
            },
            if detail.fallback { " (digest)" } else { "" },
            range(detail),
            tokens(detail.tokens_before),
        ),
        None => entry.title.clone(),
    };
    title.replace(|c: char| c.is_control(), " ")
}

/// "message 6", "messages 6–9".
fn range(detail: &SummaryDetail) -> String {
    miniagent_protocol::messages_named(detail.start, detail.end)
}

fn pad(text: &str, width: usize) -> String {
    format!("{text}{}", " ".repeat(width.saturating_sub(display_width(text))))
}

/// The replaced messages one after another: a heading row each (kind, title, tokens),
/// then its text.
fn originals_lines(detail: &SummaryDetail, theme: &Theme, width: u16) -> Vec<Line<'static>> {
    if detail.originals.is_empty() {
        return vec![Line::from(Span::styled(
            "The original messages are not available.",
            theme.dim,
        ))];
    }
    entries_lines(&detail.originals, theme, width)
}

/// Entries one after another: a heading row each (kind, title, tokens), then its text.
fn entries_lines(entries: &[HistoryEntry], theme: &Theme, width: u16) -> Vec<Line<'static>> {
    let mut lines = Vec::new();
    for (index, original) in entries.iter().enumerate() {
        if index > 0 {
            lines.push(Line::default());
        }
        let count = format!("{} tokens", tokens(original.tokens));
        let title_width = usize::from(width).saturating_sub(MARK_COLUMNS + 2 + display_width(&count));
        let title = truncate(&entry_title(original), title_width);
        let padding = title_width.saturating_sub(display_width(&title));
        lines.push(Line::from(vec![
            Span::styled(pad(kind_mark(original.kind), MARK_COLUMNS), theme.heading),
            Span::styled(format!("{title}{}  ", " ".repeat(padding)), theme.heading),
            Span::styled(count, theme.dim),
        ]));
        if original.summary.is_some() {
            lines.push(Line::from(Span::styled(
                "Enter opens this earlier summary and what it replaced.",
                theme.accent,
            )));
        }
        lines.extend(body_lines(&original.body, theme));
    }
    lines
}

/// An entry's text with its parts told apart: thinking, tool calls (`→`) and results (`←`).
fn body_lines(body: &str, theme: &Theme) -> Vec<Line<'static>> {
    let body = body.trim_end();
    if body.is_empty() {
        return vec![Line::from(Span::styled("(no text)", theme.dim))];
    }
    let mut in_thinking = false;
    let mut lines = Vec::new();
    for raw in body.lines() {
        let text = crate::text::wrap::expand_tabs(raw, 4);
        let style: Style = match text.as_str() {
            "[thinking]" => {
                in_thinking = true;
                theme.thinking
            }
            "[/thinking]" => {
                in_thinking = false;
                theme.thinking
            }
            _ if in_thinking => theme.thinking,
            _ if text.starts_with("→ ") || text.starts_with("← ") => theme.tool,
            _ => theme.text,
        };
        lines.push(Line::from(Span::styled(text, style)));
    }
    lines
}

impl crate::layers::Layer for HistoryInspector {
    type State = crate::app::App;

    fn title(&self) -> String {
        INSPECTOR_TITLE.to_string()
    }

    fn key_hints(&self) -> Vec<crate::keys::KeyHint> {
        INSPECTOR_HINTS.to_vec()
    }

    fn on_key(&mut self, key: KeyEvent, context: crate::keys::OverlayContext<'_>) -> OverlayAction {
        HistoryInspector::on_key(self, key, context.history)
    }

    fn scroll(&mut self, lines: i32) -> bool {
        self.scroll_text(lines)
    }

    fn render(&self, app: &crate::app::App, size: Rect, buf: &mut Buffer) {
        // The inspector wants the room: the list and the text side by side when wide.
        let area = crate::popup::centered(
            size,
            size.width.saturating_sub(4).min(200),
            size.height.saturating_sub(2),
        );
        self.draw(app.session.history(), app.look.theme(), area, buf);
    }

    fn about_session(&self) -> bool {
        true
    }

    fn shows_history(&self) -> bool {
        true
    }

    fn on_event(&mut self, event: &miniagent_protocol::Event) -> bool {
        if let miniagent_protocol::Event::HistorySnapshot { snapshot } = event {
            self.snapshot_arrived(snapshot);
            return true;
        }
        false
    }
}
