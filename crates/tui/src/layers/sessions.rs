//! The `/resume` picker: the sessions recorded in this workspace (Tab: in every
//! workspace), newest first, one row each; Enter continues the chosen one.

use std::path::{Path, PathBuf};

use crossterm::event::{KeyCode, KeyEvent};
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, BorderType, Borders, Widget};

use crate::keys::KeyHint;
use crate::keys::OverlayAction;
use crate::popup::{clear_for_popup, tokens};
use crate::text::wrap::{display_width, truncate, wrap_lines};
use crate::theme::Theme;
use miniagent_api::{self, SessionInfo};

/// The picker's keys, for the bottom bar and the help overlay.
pub const PICKER_HINTS: [KeyHint; 5] = [
    KeyHint::new("↑/↓", "select"),
    KeyHint::new("Enter", "resume"),
    KeyHint::new("Esc", "close"),
    KeyHint::new("Tab", "this / every workspace"),
    KeyHint::new("PgUp/PgDn/Home/End", "move faster"),
];

/// The picker's frame title.
pub const PICKER_TITLE: &str = "Resume a session";

/// Columns of the start time (`2026-11-22 04:04`).
const DATE_COLUMNS: usize = 16;
/// Columns of the step count (`123 steps`) and of the token count (`45.2k tok`).
const COUNT_COLUMNS: usize = 9;
/// Columns of the model name, shown when the row has room for it.
const MODEL_COLUMNS: usize = 20;
/// From this inner width on, rows name the model.
const MODEL_FROM: usize = 96;

/// Which sessions the picker lists.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Scope {
    ThisWorkspace,
    AllWorkspaces,
}

/// The picker's state: every recorded session, and which of them shows and is selected.
#[derive(Clone, Debug)]
pub struct SessionPicker {
    /// Every session in the data folder, newest first.
    sessions: Vec<SessionInfo>,
    /// The folder they were read from; `None` when this machine has none.
    folder: Option<PathBuf>,
    workspace: String,
    /// The session the workbench is in now, marked in the list.
    current: Option<String>,
    pub scope: Scope,
    /// Index into the shown sessions.
    pub selected: usize,
    /// The first shown row, kept so the selection stays in view.
    offset: std::cell::Cell<usize>,
    /// Rows the last frame showed, for paging.
    page: std::cell::Cell<usize>,
}

impl SessionPicker {
    /// Lists the sessions in `folder` now (each is a small `.info.json` read).
    pub fn open(folder: Option<&Path>, workspace: &str, current: Option<&str>) -> Self {
        let sessions = miniagent_api::list_sessions(folder);
        Self::new(sessions, folder.map(Path::to_path_buf), workspace, current)
    }

    /// A picker over sessions already listed (newest first).
    pub fn new(
        sessions: Vec<SessionInfo>,
        folder: Option<PathBuf>,
        workspace: &str,
        current: Option<&str>,
    ) -> Self {
        Self {
            sessions,
            folder,
            workspace: workspace.to_string(),
            current: current.map(str::to_string),
            scope: Scope::ThisWorkspace,
            selected: 0,
            offset: std::cell::Cell::new(0),
            page: std::cell::Cell::new(10),
        }
    }

    /// The sessions the current scope shows, newest first.
    pub fn shown(&self) -> Vec<&SessionInfo> {
        self.sessions
            .iter()
            .filter(|info| self.scope == Scope::AllWorkspaces || info.workspace == self.workspace)
            .collect()
    }

    /// Rows the popup wants, borders included: the header, the column heading and one
    /// row per session (when there are none: a gap and two rows for the message).
    pub fn wanted_height(&self) -> u16 {
        let rows = match self.shown().len() {
            0 => 2,
            count => count,
        };
        u16::try_from(rows + 4).unwrap_or(u16::MAX)
    }

    /// Applies a key.
    pub fn on_key(&mut self, key: KeyEvent) -> OverlayAction {
        if let Some(selected) = super::list_move(self.selected, self.shown().len(), self.page.get(), key) {
            self.selected = selected;
            return OverlayAction::Changed;
        }
        self.selected = match key.code {
            KeyCode::Esc | KeyCode::Char('q') => return OverlayAction::Close,
            KeyCode::Enter => {
                return match self.shown().get(self.selected) {
                    Some(info) => OverlayAction::Resume(info.path.clone()),
                    None => OverlayAction::Ignored,
                };
            }
            KeyCode::Tab | KeyCode::BackTab => {
                self.scope = match self.scope {
                    Scope::ThisWorkspace => Scope::AllWorkspaces,
                    Scope::AllWorkspaces => Scope::ThisWorkspace,
                };
                self.offset.set(0);
                0
            }
            _ => return OverlayAction::Ignored,
        };
        OverlayAction::Changed
    }

    /// Draws the picker as a popup over `area` (borders included).
    pub fn draw(&self, theme: &Theme, area: Rect, buf: &mut Buffer) {
        clear_for_popup(area, buf);
        let block = Block::default()
            .borders(Borders::ALL)
            .border_type(BorderType::Thick)
            .border_style(theme.border_focused)
            .title(Span::styled(format!(" {PICKER_TITLE} "), theme.title));
        let inner = block.inner(area);
        block.render(area, buf);
        if inner.width < 8 || inner.height < 3 {
            return;
        }
        let width = usize::from(inner.width);
        let count = self.shown().len();
        let header = self.header_line(count, theme, width);
        buf.set_line(inner.x, inner.y, &header, inner.width);
        if count == 0 {
            let lines = wrap_lines(&self.empty_lines(theme), inner.width);
            for (row, line) in lines.iter().take(usize::from(inner.height) - 2).enumerate() {
                let y = inner.y + 2 + u16::try_from(row).unwrap_or(0);
                buf.set_line(inner.x, y, line, inner.width);
            }
            return;
        }
        let columns = Columns::for_width(width);
        buf.set_line(inner.x, inner.y + 1, &columns.heading(theme), inner.width);
        let rows = usize::from(inner.height) - 2;
        self.page.set(rows.max(1));
        let selected = self.selected.min(count - 1);
        let mut offset = self.offset.get();
        if selected < offset {
            offset = selected;
        } else if selected >= offset + rows {
            offset = selected + 1 - rows;
        }
        offset = offset.min(count.saturating_sub(rows));
        self.offset.set(offset);
        for (row, (index, info)) in self
            .shown()
            .iter()
            .enumerate()
            .skip(offset)
            .take(rows)
            .enumerate()
        {
            let facts = RowFacts {
                current: self.current.as_deref() == Some(info.id.as_str()),
                selected: index == selected,
                workspace: (self.scope == Scope::AllWorkspaces).then_some(info.workspace.as_str()),
            };
            let line = columns.row(info, facts, theme);
            let y = inner.y + 2 + u16::try_from(row).unwrap_or(0);
            buf.set_line(inner.x, y, &line, inner.width);
        }
    }

    fn header_line(&self, count: usize, theme: &Theme, width: usize) -> Line<'static> {
        let plural = if count == 1 { "" } else { "s" };
        let text = match self.scope {
            Scope::ThisWorkspace => format!(
                "{count} session{plural} of {} · Tab: every workspace",
                self.workspace
            ),
            Scope::AllWorkspaces => format!("{count} session{plural} of every workspace · Tab: this one"),
        };
        Line::from(Span::styled(truncate(&text, width), theme.dim))
    }

    fn empty_lines(&self, theme: &Theme) -> Vec<Line<'static>> {
        let text = match (&self.folder, self.scope) {
            (None, _) => "This machine has no data folder for sessions; set MINIAGENT_DATA_DIR.".to_string(),
            (Some(_), Scope::ThisWorkspace) if !self.sessions.is_empty() => {
                "No session was recorded in this workspace. Tab lists every workspace's.".to_string()
            }
            (Some(_), _) => "No session is recorded yet: each one is recorded as it happens.".to_string(),
        };
        vec![Line::from(Span::styled(text, theme.dim))]
    }
}

/// What a row shows besides the session itself.
#[derive(Clone, Copy, Debug)]
struct RowFacts<'a> {
    current: bool,
    selected: bool,
    /// In the every-workspace list: the session's workspace.
    workspace: Option<&'a str>,
}

/// The row layout for one width: marker, start time, first prompt, steps, tokens, model.
#[derive(Clone, Copy, Debug)]
struct Columns {
    prompt: usize,
    model: bool,
}

impl Columns {
    fn for_width(width: usize) -> Self {
        let model = width >= MODEL_FROM;
        let fixed = 2
            + DATE_COLUMNS
            + 2
            + 2
            + COUNT_COLUMNS
            + 2
            + COUNT_COLUMNS
            + if model { 2 + MODEL_COLUMNS } else { 0 };
        Self {
            prompt: width.saturating_sub(fixed).max(8),
            model,
        }
    }

    fn heading(&self, theme: &Theme) -> Line<'static> {
        let mut text = format!(
            "  {:<DATE_COLUMNS$}  {}  {:>COUNT_COLUMNS$}  {:>COUNT_COLUMNS$}",
            "started (UTC)",
            pad("first prompt", self.prompt),
            "steps",
            "tokens"
        );
        if self.model {
            text.push_str("  model");
        }
        Line::from(Span::styled(text, theme.dim))
    }

    fn row(&self, info: &SessionInfo, facts: RowFacts<'_>, theme: &Theme) -> Line<'static> {
        let marker = if facts.selected { "› " } else { "  " };
        let mut lead = String::new();
        if facts.current {
            lead.push_str("(this session) ");
        }
        if let Some(workspace) = facts.workspace {
            let name = Path::new(workspace)
                .file_name()
                .map(|name| name.to_string_lossy().into_owned())
                .unwrap_or_else(|| workspace.to_string());
            lead.push_str(&format!("{name} · "));
        }
        let lead = truncate(&lead, self.prompt);
        let title = info.title(self.prompt.saturating_sub(display_width(&lead)));
        let prompt = pad(&format!("{lead}{title}"), self.prompt);
        let plural = if info.steps == 1 { "" } else { "s" };
        let mut spans = vec![
            Span::styled(marker, theme.key),
            Span::styled(
                format!("{:<DATE_COLUMNS$}  ", start_time(&info.created)),
                theme.dim,
            ),
            Span::styled(prompt, theme.text),
            Span::styled(
                format!("  {:>COUNT_COLUMNS$}", format!("{} step{plural}", info.steps)),
                theme.text,
            ),
            Span::styled(
                format!("  {:>COUNT_COLUMNS$}", format!("{} tok", tokens(info.tokens))),
                theme.text,
            ),
        ];
        if self.model {
            spans.push(Span::styled(
                format!("  {}", truncate(&info.model, MODEL_COLUMNS)),
                theme.dim,
            ));
        }
        let line = Line::from(spans);
        if facts.selected {
            theme.selected(line)
        } else {
            line
        }
    }
}

/// `text` cut or padded to exactly `width` columns.
fn pad(text: &str, width: usize) -> String {
    let cut = truncate(text, width);
    let fill = width.saturating_sub(display_width(&cut));
    format!("{cut}{}", " ".repeat(fill))
}

/// `2026-11-22T04:04:38Z` → `2026-11-22 04:04`; anything else as it is.
fn start_time(created: &str) -> String {
    match (created.get(..10), created.get(11..16)) {
        (Some(date), Some(time)) if created.as_bytes().get(10) == Some(&b'T') => format!("{date} {time}"),
        _ => created.to_string(),
    }
}

impl crate::layers::Layer for SessionPicker {
    type State = crate::app::App;

    fn title(&self) -> String {
        PICKER_TITLE.to_string()
    }

    fn key_hints(&self) -> Vec<KeyHint> {
        PICKER_HINTS.to_vec()
    }

    fn on_key(&mut self, key: KeyEvent, _context: crate::keys::OverlayContext<'_>) -> OverlayAction {
        SessionPicker::on_key(self, key)
    }

    fn render(&self, app: &crate::app::App, size: Rect, buf: &mut Buffer) {
        let area = crate::popup::centered(
            size,
            size.width.saturating_sub(6).min(120),
            self.wanted_height().min(size.height.saturating_sub(2)),
        );
        self.draw(app.look.theme(), area, buf);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crossterm::event::KeyModifiers;
    use pretty_assertions::assert_eq;

    fn info(id: &str, workspace: &str, prompt: &str) -> SessionInfo {
        SessionInfo {
            id: id.to_string(),
            path: PathBuf::from(format!("/data/sessions/{id}.jsonl")),
            created: "2026-11-22T04:04:38Z".to_string(),
            updated: "2026-11-22T04:10:00Z".to_string(),
            workspace: workspace.to_string(),
            model: "claude-test".to_string(),
            provider: "anthropic".to_string(),
            first_prompt: Some(prompt.to_string()),
            turns: 1,
            steps: 3,
            tokens: 12_345,
            cost_usd: None,
            messages: 6,
            bytes: 100,
        }
    }

    fn key(code: KeyCode) -> KeyEvent {
        KeyEvent::new(code, KeyModifiers::NONE)
    }

    #[test]
    fn tab_switches_between_this_workspace_and_every_one_and_enter_resumes() {
        let sessions = vec![
            info("b", "/w/other", "elsewhere"),
            info("a", "/w/here", "here"),
            info("c", "/w/here", "older here"),
        ];
        let mut picker = SessionPicker::new(sessions, Some(PathBuf::from("/data/sessions")), "/w/here", None);
        let ids = |picker: &SessionPicker| picker.shown().iter().map(|i| i.id.clone()).collect::<Vec<_>>();
        assert_eq!(ids(&picker), vec!["a", "c"]);
        assert_eq!(picker.on_key(key(KeyCode::End)), OverlayAction::Changed);
        assert_eq!(
            picker.on_key(key(KeyCode::Enter)),
            OverlayAction::Resume(PathBuf::from("/data/sessions/c.jsonl"))
        );
        picker.on_key(key(KeyCode::Tab));
        assert_eq!(
            (ids(&picker), picker.selected),
            (vec!["b".to_string(), "a".into(), "c".into()], 0)
        );
        picker.on_key(key(KeyCode::Down));
        picker.on_key(key(KeyCode::PageDown));
        assert_eq!(picker.selected, 2);
        assert_eq!(picker.on_key(key(KeyCode::Esc)), OverlayAction::Close);
    }

    #[test]
    fn an_empty_list_ignores_enter() {
        let mut picker = SessionPicker::new(Vec::new(), None, "/w", None);
        assert_eq!(picker.on_key(key(KeyCode::Down)), OverlayAction::Changed);
        assert_eq!(picker.selected, 0);
        assert_eq!(picker.on_key(key(KeyCode::Enter)), OverlayAction::Ignored);
    }

    #[test]
    fn start_times_read_as_dates() {
        assert_eq!(start_time("2026-11-22T04:04:38Z"), "2026-11-22 04:04");
        assert_eq!(start_time("yesterday"), "yesterday");
        assert_eq!(pad("总结一下", 5), "总结…");
        assert_eq!(pad("ok", 4), "ok  ");
    }
}
