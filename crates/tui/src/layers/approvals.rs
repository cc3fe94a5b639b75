//! `/approvals`: the approvals remembered for this session, then what was refused for it;
//! `d` revokes the selected one.

use crossterm::event::{KeyCode, KeyEvent};
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};

use super::Layer;
use crate::app::App;
use crate::command::Command;
use crate::keys::OverlayContext;
use crate::keys::{KeyHint, OverlayAction};
use crate::popup::centered;
use crate::popup::popup;
use miniagent_protocol::{ApprovalRule, Op};

/// The command that opens it (registered in `commands::COMMANDS`).
pub const COMMAND: Command = Command {
    name: "/approvals",
    aliases: &[],
    args: "",
    help: "list and revoke remembered approvals and refusals",
    run: |app, _| app.open_layer(Box::new(ApprovalsLayer { selected: 0 })),
};

/// The `/approvals` overlay.
pub struct ApprovalsLayer {
    selected: usize,
}

impl Layer for ApprovalsLayer {
    type State = crate::app::App;

    fn title(&self) -> String {
        "Remembered approvals".to_string()
    }

    fn key_hints(&self) -> Vec<KeyHint> {
        vec![
            KeyHint::new("↑/↓", "select"),
            KeyHint::new("d", "revoke"),
            KeyHint::new("Esc", "close"),
        ]
    }

    fn on_key(&mut self, key: KeyEvent, context: OverlayContext<'_>) -> OverlayAction {
        // Approved, then refused: the rows as drawn.
        let rules: Vec<&ApprovalRule> = context.rules.iter().chain(context.refused).collect();
        let selected = &mut self.selected;
        match key.code {
            KeyCode::Esc | KeyCode::Char('q') => OverlayAction::Close,
            KeyCode::Up | KeyCode::Char('k') => {
                *selected = selected.saturating_sub(1);
                OverlayAction::Changed
            }
            KeyCode::Down | KeyCode::Char('j') => {
                *selected = (*selected + 1).min(rules.len().saturating_sub(1));
                OverlayAction::Changed
            }
            KeyCode::Char('d') | KeyCode::Delete | KeyCode::Backspace => match rules.get(*selected) {
                Some(rule) => {
                    let op = Op::RevokeApproval {
                        rule: (*rule).clone(),
                    };
                    // The selection stays on the row that takes the revoked one's place.
                    *selected = selected.saturating_sub(usize::from(*selected + 1 >= rules.len()));
                    OverlayAction::Send(op)
                }
                None => OverlayAction::Ignored,
            },
            _ => OverlayAction::Ignored,
        }
    }

    fn render(&self, app: &App, size: Rect, buf: &mut Buffer) {
        let lines = rule_lines(app, self.selected);
        let area = centered(
            crate::popup::between_bars(size),
            70.min(size.width),
            u16::try_from(lines.len()).unwrap_or(u16::MAX).saturating_add(4),
        );
        popup(buf, area, &self.title(), lines, 0, app, true);
    }

    /// The rules belong to the session: another one resumed has its own.
    fn about_session(&self) -> bool {
        true
    }
}

fn rule_lines(app: &App, selected: usize) -> Vec<Line<'static>> {
    let session = &app.session;
    if session.rules().is_empty() && session.refused().is_empty() {
        return vec![Line::from(Span::styled(
            "Nothing is remembered. Answer `a` at an approval to allow a tool (or a command) for the session.",
            app.look.theme().dim,
        ))];
    }
    let theme = app.look.theme();
    let approved = session.rules().iter().map(|rule| (rule, None));
    let refused = session.refused().iter().map(|rule| (rule, Some(theme.warning)));
    approved
        .chain(refused)
        .enumerate()
        .map(|(index, (rule, refused))| {
            let line = match refused {
                None => Line::from(Span::styled(format!("  {rule}"), theme.text)),
                Some(style) => Line::from(vec![
                    Span::styled("  refused: ", style),
                    Span::styled(rule.to_string(), theme.text),
                ]),
            };
            if index == selected {
                app.look.theme().selected(line)
            } else {
                line
            }
        })
        .collect()
}
