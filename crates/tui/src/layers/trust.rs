//! The question asked before a workspace's own `.miniagent/` (MCP servers that start
//! programs, skills that steer the agent) is used. What it lists may be longer than the
//! screen, so it scrolls, and `y` counts only once all of it was on screen.

use std::cell::Cell;

use crossterm::event::{KeyCode, KeyEvent};
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};

use super::Layer;
use crate::app::App;
use crate::keys::KeyHint;
use crate::keys::{OverlayAction, OverlayContext};
use crate::popup::{centered, popup};
use crate::question::Arming;
use crate::text::wrap;

/// The question asked before a workspace's own `.miniagent/mcp.json` may start programs.
///
/// What it lists may be longer than the screen (a hostile file pads a command with
/// spaces or adds many servers), so it scrolls, and `y` counts only once the person has
/// scrolled to the end: nothing trusted was off screen.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TrustPrompt {
    /// One line per server it would start and per skill it would add.
    pub servers: Vec<String>,
    /// Trusted before, but `.miniagent/` changed since.
    pub changed: bool,
    /// Rows scrolled past.
    pub scroll: u16,
    /// Set by the last draw: the most `scroll` can be, and a page's rows.
    pub view: Cell<TrustView>,
    /// When keys answer it.
    arming: Arming,
}

/// How the trust prompt fit on screen when it was last drawn.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct TrustView {
    /// Rows below the first screenful (0: everything fits).
    pub max_scroll: u16,
    /// Rows of the list shown at once.
    pub page: u16,
}

impl TrustPrompt {
    pub fn new(servers: Vec<String>, changed: bool) -> Self {
        Self {
            servers,
            changed,
            scroll: 0,
            view: Cell::new(TrustView::default()),
            arming: Arming::consent(),
        }
    }

    /// Whether every line has been on screen, so `y` may trust.
    pub fn seen_all(&self) -> bool {
        self.scroll >= self.view.get().max_scroll
    }
}

impl Layer for TrustPrompt {
    type State = crate::app::App;

    fn title(&self) -> String {
        "Trust this workspace?".to_string()
    }

    fn key_hints(&self) -> Vec<KeyHint> {
        vec![
            KeyHint::new("y", "trust and start them"),
            KeyHint::new("n", "not now"),
            KeyHint::new("↑/↓/PgUp/PgDn", "scroll"),
        ]
    }

    fn on_key(&mut self, key: KeyEvent, _context: OverlayContext<'_>) -> OverlayAction {
        let view = self.view.get();
        let scroll_to = |to: u16| to.min(view.max_scroll);
        match key.code {
            KeyCode::Char('y') if self.seen_all() => OverlayAction::Trust(true),
            KeyCode::Up | KeyCode::Char('k') => {
                self.scroll = self.scroll.saturating_sub(1);
                OverlayAction::Changed
            }
            KeyCode::Down | KeyCode::Char('j') => {
                self.scroll = scroll_to(self.scroll.saturating_add(1));
                OverlayAction::Changed
            }
            KeyCode::PageUp => {
                self.scroll = self.scroll.saturating_sub(view.page.max(1));
                OverlayAction::Changed
            }
            KeyCode::PageDown | KeyCode::Char(' ') => {
                self.scroll = scroll_to(self.scroll.saturating_add(view.page.max(1)));
                OverlayAction::Changed
            }
            KeyCode::Home => {
                self.scroll = 0;
                OverlayAction::Changed
            }
            KeyCode::End => {
                self.scroll = view.max_scroll;
                OverlayAction::Changed
            }
            KeyCode::Char('n') | KeyCode::Esc => OverlayAction::Trust(false),
            _ => OverlayAction::Ignored,
        }
    }

    fn question(&self) -> Option<&Arming> {
        Some(&self.arming)
    }

    fn question_mut(&mut self) -> Option<&mut Arming> {
        Some(&mut self.arming)
    }

    fn render(&self, app: &App, size: Rect, buf: &mut Buffer) {
        draw(buf, size, &self.title(), self, app);
    }
}

/// The trust question: what it would start, scrollable, and the answer keys pinned below
/// it. `y` is offered only once the whole list has been on screen.
fn draw(buf: &mut Buffer, size: Rect, title: &str, prompt: &TrustPrompt, app: &App) {
    let theme = app.look.theme();
    let intro = if prompt.changed {
        "This workspace's own settings (.miniagent/) changed since you trusted it. Its MCP servers and hooks run programs from this repository; its skills, commands and permission rules steer the agent:"
    } else {
        "This workspace has its own settings (.miniagent/). Its MCP servers and hooks run programs from this repository; its skills, commands and permission rules steer the agent:"
    };
    let mut lines = vec![Line::from(Span::styled(intro, theme.warning)), Line::default()];
    lines.extend(
        prompt
            .servers
            .iter()
            .map(|s| Line::from(Span::styled(format!("  {s}"), theme.code))),
    );
    let width = 90.min(size.width);
    let inner_width = width.saturating_sub(2).max(1);
    let body = wrap::wrap_lines(&lines, inner_width);
    let body_rows = u16::try_from(body.len()).unwrap_or(u16::MAX);
    let armed = prompt.arming.armed(app.now) || app.replay.is_some();
    let footer = |below: u16| {
        let mut spans = Vec::new();
        if !armed {
            spans.push(Span::styled("◌ arming: keys answer in a moment", theme.dim));
            return Line::from(spans);
        }
        if below > 0 {
            spans.push(Span::styled(
                format!("↓ {below} more lines: read them all to trust   "),
                theme.warning,
            ));
        } else {
            spans.push(Span::styled("y", theme.key));
            spans.push(Span::styled(
                " trust this workspace and use them (remembered)   ",
                theme.text,
            ));
        }
        spans.push(Span::styled("n", theme.key));
        spans.push(Span::styled(" continue without them", theme.text));
        Line::from(spans)
    };
    // Borders, a blank row and the keys (as many rows as they wrap to) around the body.
    let keys_rows = [footer(0), footer(u16::MAX)]
        .iter()
        .map(|line| wrap::wrap_lines(std::slice::from_ref(line), inner_width).len())
        .max()
        .and_then(|rows| u16::try_from(rows).ok())
        .unwrap_or(2);
    let chrome = 2 + 1 + keys_rows;
    let height = body_rows.saturating_add(chrome).min(size.height);
    let area = centered(size, width, height);
    let page = area.height.saturating_sub(chrome);
    let max_scroll = body_rows.saturating_sub(page);
    prompt.view.set(TrustView { max_scroll, page });
    let scroll = prompt.scroll.min(max_scroll);
    let below = max_scroll - scroll;
    let shown: Vec<Line<'static>> = body
        .into_iter()
        .skip(usize::from(scroll))
        .take(usize::from(page))
        .collect();
    let mut all = shown;
    all.resize(usize::from(page), Line::default());
    all.push(Line::default());
    all.push(footer(below));
    popup(buf, area, title, all, 0, app, true);
}
