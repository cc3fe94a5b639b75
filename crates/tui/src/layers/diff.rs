//! `/diff`: what the session changed in the workspace (`Op::Diff`, answered by
//! `Event::DiffReport`), file by file: the list of files (status, lines added and
//! removed, whether one was changed outside miniagent since, why one has no text) beside
//! the selected file's unified diff when the screen is wide, above it when narrow.
//! `/diff N` or `t` shows one turn's changes. It opens at once and fills when the answer
//! comes; the answer's text is made inert before it is drawn.

pub mod file;

use std::cell::Cell;

use crossterm::event::{KeyCode, KeyEvent};
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};

use super::{Layer, text_area};
use crate::app::App;
use crate::command::Command;
use crate::conversation::NoticeKind;
use crate::keys::{KeyHint, OverlayAction, OverlayContext, is_plain_press};
use crate::popup::popup;
use crate::text::wrap::{display_width, truncate, truncate_spans};
use crate::theme::Theme;
use file::{FileView, one_line, truncate_start};
use miniagent_protocol::{Event, Op, TurnChanges};

/// The command that opens it (registered in `commands::COMMANDS`).
pub const COMMAND: Command = Command {
    name: "/diff",
    aliases: &[],
    args: "[TURN]",
    help: "what this session changed, file by file (or one turn's changes)",
    run: open,
};

/// The overlay's keys, for the bottom bar and the help (the most used first: the bar
/// shows what fits). `n`/`p` and Tab/Shift-Tab also change the file.
pub const DIFF_HINTS: [KeyHint; 7] = [
    KeyHint::new("]/[", "file"),
    KeyHint::new("↑/↓", "scroll"),
    KeyHint::new("t", "one turn"),
    KeyHint::new("Esc/q", "close"),
    KeyHint::new("PgUp/PgDn", "page"),
    KeyHint::new("Home/End", "top / bottom"),
    KeyHint::new("←/→", "sideways"),
];

/// At this many columns inside the frame the file list stands beside the diff.
const WIDE_COLUMNS: u16 = 100;
/// The widest the list beside the diff gets.
const LIST_COLUMNS: u16 = 40;
/// Rows of the list above the diff when narrow.
const NARROW_LIST_ROWS: usize = 4;
/// Files and turns of a report kept; a report naming more says how many it left out.
const MAX_FILES: usize = 1_000;
const MAX_TURNS: usize = 1_000;

fn open(app: &mut App, argument: Option<&str>) {
    if app.refused_in_replay("/diff shows what a live session changed") {
        return;
    }
    let turn = match argument.map(str::trim).filter(|text| !text.is_empty()) {
        None => None,
        Some(text) => match text.parse::<u32>() {
            Ok(turn) if turn > 0 => Some(turn),
            _ => {
                app.notice(
                    NoticeKind::Warning,
                    format!(
                        "/diff takes a turn's number (as /diff 3), not `{}`",
                        truncate(&one_line(text), 40)
                    ),
                );
                return;
            }
        },
    };
    app.open_layer(Box::new(DiffOverlay::new(turn)));
    app.send(Op::Diff { turn });
}

/// The `/diff` overlay.
#[derive(Debug, Default)]
pub struct DiffOverlay {
    /// The turn whose changes it shows (`None`: the whole session's).
    asked: Option<u32>,
    /// The files of the answer; `None` while it is awaited.
    files: Option<Vec<FileView>>,
    /// Files the answer named past [`MAX_FILES`].
    files_left_out: usize,
    /// The turns that changed files, from the last answer.
    turns: Vec<TurnChanges>,
    /// The turn picker, open at this entry (0: the whole session, then each turn).
    picker: Option<usize>,
    /// The selected file.
    selected: usize,
    /// The first file the list shows (drawing keeps the selected one in view).
    list_top: Cell<usize>,
}

impl DiffOverlay {
    /// Waiting for the changes of `turn` (`None`: the whole session).
    pub fn new(turn: Option<u32>) -> Self {
        Self {
            asked: turn,
            ..Self::default()
        }
    }

    /// The turn it shows or waits for.
    #[cfg(test)]
    pub fn asked(&self) -> Option<u32> {
        self.asked
    }

    /// The selected file's path as the report gave it.
    pub(crate) fn selected_path(&self) -> Option<&str> {
        Some(&self.files.as_ref()?.get(self.selected)?.raw_path)
    }

    /// The turn picker's highlighted entry, while it is open.
    #[cfg(test)]
    pub fn picker(&self) -> Option<usize> {
        self.picker
    }

    /// The selected file's first row shown and columns scrolled off to the left.
    #[cfg(test)]
    pub fn position(&self) -> (usize, usize) {
        self.files
            .as_ref()
            .and_then(|files| files.get(self.selected))
            .map_or((0, 0), FileView::position)
    }

    fn selected_file_mut(&mut self) -> Option<&mut FileView> {
        self.files.as_mut()?.get_mut(self.selected)
    }

    fn select_file(&mut self, forward: bool) -> OverlayAction {
        let count = self.files.as_ref().map_or(0, Vec::len);
        let next = if forward {
            (self.selected + 1).min(count.saturating_sub(1))
        } else {
            self.selected.saturating_sub(1)
        };
        if next == self.selected {
            return OverlayAction::Ignored;
        }
        self.selected = next;
        OverlayAction::Changed
    }

    /// The picker's entries: the whole session, then each turn that changed files.
    fn entries(&self) -> Vec<Option<u32>> {
        std::iter::once(None)
            .chain(self.turns.iter().map(|turn| Some(turn.turn)))
            .collect()
    }

    fn picker_key(&mut self, at: usize, key: KeyEvent) -> OverlayAction {
        let entries = self.entries();
        let last = entries.len().saturating_sub(1);
        let next = match key.code {
            KeyCode::Esc | KeyCode::Char('q' | 't') => {
                self.picker = None;
                return OverlayAction::Changed;
            }
            KeyCode::Up | KeyCode::Char('k') => at.saturating_sub(1),
            KeyCode::Down | KeyCode::Char('j') => (at + 1).min(last),
            KeyCode::Home | KeyCode::Char('g') => 0,
            KeyCode::End | KeyCode::Char('G') => last,
            KeyCode::Enter => return self.choose(entries.get(at).copied().flatten()),
            _ => return OverlayAction::Ignored,
        };
        self.picker = Some(next);
        OverlayAction::Changed
    }

    /// Shows the changes of `turn` (`None`: the whole session), asking the agent for them
    /// unless they are the ones shown.
    fn choose(&mut self, turn: Option<u32>) -> OverlayAction {
        self.picker = None;
        if turn == self.asked && self.files.is_some() {
            return OverlayAction::Changed;
        }
        self.asked = turn;
        self.files = None;
        self.selected = 0;
        self.list_top.set(0);
        OverlayAction::Send(Op::Diff { turn })
    }

    /// The line above the files: what they are, how much changed, how to pick a turn.
    fn summary(&self, files: &[FileView], theme: &Theme) -> Line<'static> {
        let (added, removed) = files
            .iter()
            .filter_map(|file| file.diff.as_ref())
            .fold((0, 0), |(added, removed), diff| {
                (added + diff.added, removed + diff.removed)
            });
        let count = files.len() + self.files_left_out;
        let plural = if count == 1 { "file" } else { "files" };
        let mut spans = vec![Span::styled(format!("{count} {plural} changed"), theme.text)];
        if let Some(turn) = self.asked {
            let text = self
                .turns
                .iter()
                .find(|changes| changes.turn == turn)
                .map(|changes| format!(": “{}”", truncate(&short_line(&changes.text), 40)))
                .unwrap_or_default();
            spans.insert(0, Span::styled(format!("turn {turn}{text} · "), theme.heading));
        }
        spans.push(Span::styled(format!("  +{added}"), theme.diff_add));
        spans.push(Span::styled(format!(" -{removed}"), theme.diff_remove));
        if self.files_left_out > 0 {
            spans.push(Span::styled(
                format!("  ({} not listed)", self.files_left_out),
                theme.warning,
            ));
        }
        spans.push(Span::styled("  · t: one turn", theme.dim));
        Line::from(spans)
    }

    fn render_files(&self, files: &[FileView], area: Rect, buf: &mut Buffer, theme: &Theme) {
        let width = usize::from(area.width);
        buf.set_line(
            area.x,
            area.y,
            &Line::from(truncate_spans(&self.summary(files, theme).spans, width)),
            area.width,
        );
        let rest = Rect {
            y: area.y.saturating_add(1),
            height: area.height.saturating_sub(1),
            ..area
        };
        let (list, diff) = if rest.width >= WIDE_COLUMNS {
            let list_width = (rest.width / 3).min(LIST_COLUMNS);
            for y in rest.top()..rest.bottom() {
                buf.set_string(rest.x + list_width, y, "│", theme.border);
            }
            let diff = Rect {
                x: rest.x + list_width + 2,
                width: rest.width.saturating_sub(list_width + 2),
                ..rest
            };
            (
                Rect {
                    width: list_width,
                    ..rest
                },
                diff,
            )
        } else {
            let rows = files
                .len()
                .min(NARROW_LIST_ROWS)
                .min(usize::from(rest.height / 3).max(1));
            let rows = u16::try_from(rows).unwrap_or(1);
            let list = Rect { height: rows, ..rest };
            let rule_y = rest.y.saturating_add(rows);
            if rule_y < rest.bottom() {
                buf.set_string(rest.x, rule_y, "─".repeat(width), theme.border);
            }
            let diff = Rect {
                y: rule_y.saturating_add(1),
                height: rest.height.saturating_sub(rows + 1),
                ..rest
            };
            (list, diff)
        };
        self.render_list(files, list, buf, theme);
        if let Some(file) = files.get(self.selected) {
            file.render(diff, buf, theme);
        }
    }

    /// The files, the selected one highlighted and kept in view.
    fn render_list(&self, files: &[FileView], area: Rect, buf: &mut Buffer, theme: &Theme) {
        let rows = usize::from(area.height);
        if rows == 0 {
            return;
        }
        let mut top = self.list_top.get().min(self.selected);
        if self.selected >= top + rows {
            top = self.selected + 1 - rows;
        }
        self.list_top.set(top);
        let width = usize::from(area.width);
        for (y, (index, file)) in (area.y..area.bottom()).zip(files.iter().enumerate().skip(top)) {
            let line = list_row(file, width, theme);
            let line = if index == self.selected {
                theme.selected(line)
            } else {
                line
            };
            buf.set_line(area.x, y, &line, area.width);
        }
    }

    fn render_picker(&self, at: usize, area: Rect, buf: &mut Buffer, theme: &Theme) {
        let width = usize::from(area.width);
        buf.set_string(
            area.x,
            area.y,
            truncate("Show the changes of:", width),
            theme.heading,
        );
        let list = Rect {
            y: area.y.saturating_add(1),
            height: area.height.saturating_sub(2),
            ..area
        };
        let shown = usize::from(list.height);
        let top = (at + 1).saturating_sub(shown);
        // Only the rows on screen are made: a message may be long.
        let rows = std::iter::once(("the whole session".to_string(), String::new()))
            .chain(self.turns.iter().map(|turn| {
                let plural = if turn.files == 1 { "file" } else { "files" };
                (
                    format!("turn {}  “{}”", turn.turn, short_line(&turn.text)),
                    format!("{} {plural}", turn.files),
                )
            }))
            .enumerate()
            .skip(top)
            .take(shown);
        for (y, (index, (label, files))) in (list.y..list.bottom()).zip(rows) {
            let label = truncate(&label, width.saturating_sub(display_width(&files) + 4));
            let pad = width.saturating_sub(display_width(&label) + display_width(&files) + 2);
            let line = Line::from(vec![
                Span::styled(format!("  {label}{}", " ".repeat(pad)), theme.text),
                Span::styled(files, theme.dim),
            ]);
            let line = if index == at { theme.selected(line) } else { line };
            buf.set_line(list.x, y, &line, list.width);
        }
        if self.turns.is_empty() && list.height > 1 {
            // Before any answer, the turns are not known yet.
            let text = if self.files.is_some() {
                "  no turn has changed a file yet"
            } else {
                "  (the turns come with the agent's answer)"
            };
            buf.set_string(list.x, list.y + 1, truncate(text, width), theme.dim);
        }
    }
}

/// A message's start as one line: no more of it is ever shown on one row.
fn short_line(text: &str) -> String {
    let end = text.char_indices().nth(400).map_or(text.len(), |(at, _)| at);
    one_line(&text[..end])
}

/// A file's row in the list: status, path (cut from the left), `!` when changed outside
/// since, lines added and removed (or why there is no text).
fn list_row(file: &FileView, width: usize, theme: &Theme) -> Line<'static> {
    let (figure, figure_style) = match (file.counts(), &file.note) {
        (_, Some(note)) => (truncate(note, 14), theme.dim),
        (Some(counts), None) => (counts, theme.dim),
        (None, None) => ("no text".to_string(), theme.dim),
    };
    let outside = if file.changed_outside { " !" } else { "" };
    let path_width = width.saturating_sub(2 + display_width(&figure) + 1 + outside.len());
    let path = truncate_start(&file.path, path_width);
    let pad = path_width.saturating_sub(display_width(&path));
    Line::from(vec![
        file.letter(theme),
        Span::styled(format!(" {path}{}", " ".repeat(pad)), theme.text),
        Span::styled(outside, theme.warning),
        Span::styled(format!(" {figure}"), figure_style),
    ])
}

impl Layer for DiffOverlay {
    type State = App;

    fn title(&self) -> String {
        match self.asked {
            None => "Changes this session".to_string(),
            Some(turn) => format!("Changes of turn {turn}"),
        }
    }

    fn key_hints(&self) -> Vec<KeyHint> {
        if self.picker.is_some() {
            return vec![
                KeyHint::new("↑/↓", "choose"),
                KeyHint::new("Enter", "show"),
                KeyHint::new("Esc", "back"),
            ];
        }
        DIFF_HINTS.to_vec()
    }

    fn on_key(&mut self, key: KeyEvent, _context: OverlayContext<'_>) -> OverlayAction {
        if !is_plain_press(&key) {
            return OverlayAction::Ignored;
        }
        if let Some(at) = self.picker {
            return self.picker_key(at, key);
        }
        match key.code {
            KeyCode::Esc | KeyCode::Char('q') => OverlayAction::Close,
            KeyCode::Tab | KeyCode::Char(']' | 'n') => self.select_file(true),
            KeyCode::BackTab | KeyCode::Char('[' | 'p') => self.select_file(false),
            KeyCode::Char('t') => {
                let at = self
                    .entries()
                    .iter()
                    .position(|entry| *entry == self.asked)
                    .unwrap_or(0);
                self.picker = Some(at);
                OverlayAction::Changed
            }
            _ => self
                .selected_file_mut()
                .map_or(OverlayAction::Ignored, |file| file.on_key(key)),
        }
    }

    fn scroll(&mut self, lines: i32) -> bool {
        self.picker.is_none() && self.selected_file_mut().is_some_and(|file| file.scroll(lines))
    }

    fn render(&self, app: &App, size: Rect, buf: &mut Buffer) {
        let theme = app.look.theme();
        let inner = popup(buf, text_area(size), &self.title(), Vec::new(), 0, app, false);
        if inner.is_empty() {
            return;
        }
        if let Some(at) = self.picker {
            self.render_picker(at, inner, buf, theme);
            return;
        }
        let what = match self.asked {
            None => "this session".to_string(),
            Some(turn) => format!("turn {turn}"),
        };
        let say = |text: String, buf: &mut Buffer| {
            buf.set_string(
                inner.x,
                inner.y,
                truncate(&text, usize::from(inner.width)),
                theme.text,
            );
        };
        match &self.files {
            None => say(format!("asking the agent what {what} changed…"), buf),
            Some(files) if files.is_empty() => {
                let text = match self.asked {
                    None => "this session has not changed any file".to_string(),
                    Some(turn) => format!("turn {turn} did not change any file"),
                };
                say(text, buf);
                if inner.height > 2 {
                    buf.set_string(
                        inner.x,
                        inner.y + 2,
                        truncate("t: pick a turn", usize::from(inner.width)),
                        theme.dim,
                    );
                }
            }
            Some(files) => self.render_files(files, inner, buf, theme),
        }
    }

    fn about_session(&self) -> bool {
        true
    }

    fn on_event(&mut self, event: &Event) -> bool {
        let Event::DiffReport { turn, files, turns } = event else {
            return false;
        };
        // An answer to another question (the tree's preview asks for the whole session).
        if *turn != self.asked {
            return false;
        }
        let was = self.selected_path().map(str::to_string);
        let kept = &files[..files.len().min(MAX_FILES)];
        let views = file::views(kept);
        self.selected = was
            .and_then(|path| views.iter().position(|view| view.raw_path == path))
            .unwrap_or(0);
        self.files_left_out = files.len() - kept.len();
        self.files = Some(views);
        self.turns = turns.iter().take(MAX_TURNS).cloned().collect();
        true
    }
}
