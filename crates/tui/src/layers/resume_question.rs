//! Asked before a log is continued that was recorded in another workspace, or is not
//! one of this user's recorded sessions: a log names its workspace and its remembered
//! approvals, and a crafted one may name anything.

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

/// Continue this log here, or not.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ResumeQuestion {
    pub path: std::path::PathBuf,
    pub id: String,
    /// Where the log says it was recorded.
    pub recorded: String,
    /// This workspace, where it would continue.
    pub here: String,
    /// Whether `recorded` differs from `here`.
    pub elsewhere: bool,
    /// One of this user's recorded sessions.
    pub own: bool,
    /// When keys answer it.
    arming: Arming,
}

impl ResumeQuestion {
    /// Asks whether to continue the log at `path` (session `id`, recorded in `recorded`)
    /// `here`.
    pub fn new(
        path: std::path::PathBuf,
        id: String,
        recorded: String,
        here: String,
        elsewhere: bool,
        own: bool,
    ) -> Self {
        Self {
            path,
            id,
            recorded,
            here,
            elsewhere,
            own,
            arming: Arming::consent(),
        }
    }
}

impl Layer for ResumeQuestion {
    type State = crate::app::App;

    fn title(&self) -> String {
        "Continue this session here?".to_string()
    }

    fn key_hints(&self) -> Vec<KeyHint> {
        vec![
            KeyHint::new("y", "continue it here"),
            KeyHint::new("n/Esc", "do not resume"),
        ]
    }

    fn on_key(&mut self, key: KeyEvent, _context: OverlayContext<'_>) -> OverlayAction {
        match key.code {
            KeyCode::Char('y') => OverlayAction::ResumeConfirmed(self.path.clone()),
            KeyCode::Char('n') | KeyCode::Esc => OverlayAction::Close,
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
        let theme = app.look.theme();
        let mut lines = Vec::new();
        if self.elsewhere {
            lines.push(Line::from(Span::styled(
                format!(
                    "Session {} was recorded in {}, not in this workspace ({}). Continued here, its conversation goes on with this workspace's files.",
                    self.id, self.recorded, self.here
                ),
                theme.warning,
            )));
        }
        if !self.own {
            lines.push(Line::from(Span::styled(
                format!(
                    "{} is not one of your recorded sessions: it could say anything, and its remembered approvals are not restored.",
                    self.path.display()
                ),
                theme.warning,
            )));
        }
        lines.push(Line::default());
        if self.elsewhere {
            lines.push(Line::from(Span::styled(
                format!(
                    "To continue it in its own workspace instead: miniagent -w {} --resume {}",
                    self.recorded, self.id
                ),
                theme.dim,
            )));
            lines.push(Line::default());
        }
        lines.push(if self.arming.armed(app.now) {
            Line::from(vec![
                Span::styled("y", theme.key),
                Span::styled(" continue it here   ", theme.text),
                Span::styled("n", theme.key),
                Span::styled(" do not resume", theme.text),
            ])
        } else {
            Line::from(Span::styled("◌ arming: keys answer in a moment", theme.dim))
        });
        let width = 90.min(size.width);
        let rows = wrap::wrap_lines(&lines, width.saturating_sub(2)).len();
        let small = centered(
            crate::popup::between_bars(size),
            width,
            u16::try_from(rows).unwrap_or(u16::MAX).saturating_add(2),
        );
        popup(buf, small, &self.title(), lines, 0, app, true);
    }
}
