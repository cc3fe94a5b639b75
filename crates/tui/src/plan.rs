//! The agent's plan at a glance ([`Event::PlanUpdated`](miniagent_protocol::Event)): the
//! latest plan, cleaned for the terminal, and the section that shows it. Wide, it stands
//! above the tools pane while there is a plan; narrow, Ctrl-T opens it over the top of the
//! conversation. Either way Ctrl-T toggles it, and the title bar says how far it got.
//! It holds no focus: it is read, not driven.

use std::cell::Cell;

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, BorderType, Borders, Widget};

use super::text::wrap;
use super::theme::Theme;
use miniagent_protocol::{PlanEntry, PlanStatus, plan_progress};

/// Steps the view keeps: the tool allows 50; a recorded plan may have been edited.
const MAX_STEPS: usize = 100;
/// Characters kept of a step or a note (the tool allows 300).
const MAX_CHARS: usize = 300;

/// The plan as the workbench shows it.
#[derive(Debug, Default)]
pub struct PlanView {
    /// The latest plan, each step and note cleaned to one line.
    entries: Vec<PlanEntry>,
    /// Whether it shows in the wide layout, as Ctrl-T chose; `None`: while there is a plan.
    wide: Option<bool>,
    /// Whether it shows over the conversation in the narrow layout: only when asked for,
    /// since it covers what is being said. Each width keeps its own choice, so closing
    /// the narrow popup does not take the section away from the wide layout.
    narrow: bool,
    /// The last [`PlanView::wanted_height`]'s width and answer: the layout asks at every
    /// frame, and the rows only change with the plan or the width.
    height: Cell<Option<(u16, u16)>>,
}

impl PlanView {
    /// A new plan replaces the last.
    pub fn update(&mut self, entries: &[PlanEntry]) {
        self.entries = entries
            .iter()
            .take(MAX_STEPS)
            .map(|entry| PlanEntry {
                content: one_line(&entry.content),
                note: entry
                    .note
                    .as_deref()
                    .map(one_line)
                    .filter(|note| !note.is_empty()),
                ..entry.clone()
            })
            .collect();
        self.height.set(None);
    }

    /// The session's plan is gone (a fresh view, `/clear`); what Ctrl-T chose stays.
    pub fn clear(&mut self) {
        self.entries.clear();
        self.height.set(None);
    }

    /// Whether the section shows in a layout that is `narrow` or not.
    pub fn visible(&self, narrow: bool) -> bool {
        match narrow {
            true => self.narrow,
            false => self.wide.unwrap_or(!self.entries.is_empty()),
        }
    }

    /// Ctrl-T in a layout that is `narrow` or not: shows it there if hidden, hides it if
    /// shown.
    pub fn toggle(&mut self, narrow: bool) {
        let shown = !self.visible(narrow);
        match narrow {
            true => self.narrow = shown,
            false => self.wide = Some(shown),
        }
    }

    /// `plan 3/7`, while there is a plan.
    pub fn progress(&self) -> Option<String> {
        (!self.entries.is_empty()).then(|| plan_progress(&self.entries))
    }

    /// The one-line note the conversation gets for a new plan: how far it got and the
    /// step in progress.
    pub fn note(&self) -> String {
        let Some(progress) = self.progress() else {
            return "plan cleared".to_string();
        };
        match self
            .entries
            .iter()
            .find(|entry| entry.status == PlanStatus::InProgress)
        {
            Some(step) => format!("{progress} · now: {}", step.content),
            None => progress,
        }
    }

    /// Rows the section wants at `width` columns, borders included.
    pub fn wanted_height(&self, width: u16) -> u16 {
        if let Some((measured, height)) = self.height.get()
            && measured == width
        {
            return height;
        }
        let rows = self.rows(width.saturating_sub(2), &Theme::monochrome()).len();
        let height = u16::try_from(rows.max(1)).unwrap_or(u16::MAX).saturating_add(2);
        self.height.set(Some((width, height)));
        height
    }

    /// Draws the section in `area`, `narrow` saying how Ctrl-T reads in its title.
    pub fn render(&self, area: Rect, buf: &mut Buffer, theme: &Theme, narrow: bool) {
        if area.width < 3 || area.height < 3 {
            return;
        }
        let title = match (self.progress(), narrow) {
            (Some(progress), false) => format!(" Plan {} · Ctrl-T ", &progress["plan ".len()..]),
            (Some(progress), true) => format!(" Plan {} · Ctrl-T hides ", &progress["plan ".len()..]),
            (None, _) => " Plan · Ctrl-T ".to_string(),
        };
        let block = Block::default()
            .borders(Borders::ALL)
            .border_type(BorderType::Rounded)
            .border_style(theme.border)
            .title(Span::styled(title, theme.title));
        let inner = block.inner(area);
        block.render(area, buf);
        let rows = self.rows(inner.width, theme);
        for (y, line) in (inner.y..).zip(window(rows, self.current_step(), inner.height, theme)) {
            buf.set_line(inner.x, y, &line, inner.width);
        }
    }

    /// Every row of the plan at `width`, with the step it belongs to: a step wrapped
    /// under its mark, its note dimmed and set in below it.
    fn rows(&self, width: u16, theme: &Theme) -> Vec<(usize, Line<'static>)> {
        if self.entries.is_empty() {
            return vec![(
                0,
                Line::styled(
                    "no plan yet: the agent makes one for work of several steps",
                    theme.dim,
                ),
            )];
        }
        self.entries
            .iter()
            .enumerate()
            .flat_map(|(index, entry)| {
                step_rows(entry, width, theme)
                    .into_iter()
                    .map(move |row| (index, row))
            })
            .collect()
    }

    /// The step in progress (else the first not done), which a plan too long for its
    /// section keeps in sight.
    fn current_step(&self) -> usize {
        self.entries
            .iter()
            .position(|entry| entry.status == PlanStatus::InProgress)
            .or_else(|| {
                self.entries
                    .iter()
                    .position(|entry| entry.status != PlanStatus::Completed)
            })
            .unwrap_or(0)
    }
}

/// One step's rows: `✓` done (dimmed), `▸` in progress (bold, in the accent colour), `○`
/// to do; the marks carry the status without colour.
fn step_rows(entry: &PlanEntry, width: u16, theme: &Theme) -> Vec<Line<'static>> {
    let (mark, mark_style, text_style) = match entry.status {
        PlanStatus::Completed => ("✓ ", theme.ok, theme.dim),
        PlanStatus::InProgress => ("▸ ", theme.accent.patch(theme.strong), theme.strong),
        PlanStatus::Pending => ("○ ", theme.dim, theme.text),
    };
    let step = Line::from(vec![Span::styled(entry.content.clone(), text_style)]);
    let mut rows: Vec<Line<'static>> = wrap::wrap_indented(&step, width, 2)
        .into_iter()
        .enumerate()
        .map(|(index, mut row)| {
            if index == 0 && !row.spans.is_empty() && width > 3 {
                row.spans[0] = Span::styled(mark, mark_style);
            }
            row
        })
        .collect();
    if let Some(note) = &entry.note {
        let note = Line::from(Span::styled(note.clone(), theme.dim));
        rows.extend(wrap::wrap_indented(&note, width, 4));
    }
    rows
}

/// The `height` rows of `rows` (each with its step) to draw: all when they fit, else a
/// window starting one row above the first of step `current`, its first row saying how
/// many steps are above what shows and its last how many below.
fn window(
    rows: Vec<(usize, Line<'static>)>,
    current: usize,
    height: u16,
    theme: &Theme,
) -> Vec<Line<'static>> {
    let height = usize::from(height);
    if rows.len() <= height || height < 3 {
        return rows.into_iter().take(height).map(|(_, row)| row).collect();
    }
    let total = rows.len();
    let steps = rows.last().map_or(0, |(step, _)| step + 1);
    let first_of_current = rows.iter().position(|(step, _)| *step >= current).unwrap_or(0);
    let start = first_of_current.saturating_sub(1).min(total - height);
    let end = start + height;
    // None: only the rest of a step that shows is out of sight.
    let more = |count: usize, arrow: &str| {
        let text = match count {
            0 => format!("  {arrow} …"),
            1 => format!("  {arrow} 1 more step"),
            n => format!("  {arrow} {n} more steps"),
        };
        Line::styled(text, theme.dim)
    };
    let mut shown: Vec<Line<'static>> = rows[start..end].iter().map(|(_, row)| row.clone()).collect();
    if start > 0 {
        // The steps before the first one any of whose rows still shows.
        shown[0] = more(rows[start + 1].0, "↑");
    }
    if end < total {
        shown[height - 1] = more(steps - 1 - rows[end - 2].0, "↓");
    }
    shown
}

/// `text` cleaned of what a terminal would act on, on one line, at most [`MAX_CHARS`].
fn one_line(text: &str) -> String {
    let cleaned = miniagent_text::clean(text);
    let line = cleaned.split_whitespace().collect::<Vec<_>>().join(" ");
    match line.char_indices().nth(MAX_CHARS) {
        Some((cut, _)) => format!("{}…", &line[..cut]),
        None => line,
    }
}
