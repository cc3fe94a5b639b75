//! `/approvals`: the approvals remembered for this session, then what was refused for it,
//! then the permanent `[permissions]` rules (the user's config, the trusted workspace's);
//! `d` revokes the selected one, a permanent one after a confirmation (it is taken out of
//! the config file).

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
use miniagent_protocol::{ApprovalRule, Op, PermanentRule, RuleList, RuleSource};

/// The command that opens it (registered in `commands::COMMANDS`).
pub const COMMAND: Command = Command {
    name: "/approvals",
    aliases: &[],
    args: "",
    help: "list and revoke approvals, refusals and rules",
    run: |app, _| {
        app.open_layer(Box::new(ApprovalsLayer {
            selected: 0,
            confirming: None,
        }))
    },
};

/// The `/approvals` overlay.
pub struct ApprovalsLayer {
    selected: usize,
    /// The permanent rule `d` would remove, while the person confirms it.
    confirming: Option<PermanentRule>,
}

/// One row of the list.
enum Row<'a> {
    Session(&'a ApprovalRule),
    Refused(&'a ApprovalRule),
    Permanent(&'a PermanentRule),
}

/// The rows as drawn: approved, refused, then permanent.
fn rows<'a>(
    rules: &'a [ApprovalRule],
    refused: &'a [ApprovalRule],
    permanent: &'a [PermanentRule],
) -> Vec<Row<'a>> {
    rules
        .iter()
        .map(Row::Session)
        .chain(refused.iter().map(Row::Refused))
        .chain(permanent.iter().map(Row::Permanent))
        .collect()
}

impl Layer for ApprovalsLayer {
    type State = crate::app::App;

    fn title(&self) -> String {
        "Approvals and permission rules".to_string()
    }

    fn key_hints(&self) -> Vec<KeyHint> {
        if self.confirming.is_some() {
            return vec![
                KeyHint::new("y", "remove it from your config"),
                KeyHint::new("n/Esc", "keep it"),
            ];
        }
        vec![
            KeyHint::new("↑/↓", "select"),
            KeyHint::new("d", "revoke"),
            KeyHint::new("Esc", "close"),
        ]
    }

    fn on_key(&mut self, key: KeyEvent, context: OverlayContext<'_>) -> OverlayAction {
        if let Some(rule) = &self.confirming {
            return match key.code {
                KeyCode::Char('y') | KeyCode::Enter => {
                    let op = Op::RemovePermissionRule { rule: rule.clone() };
                    self.confirming = None;
                    // The selection stays on the row that takes the removed one's place.
                    let count = context.rules.len() + context.refused.len() + context.permanent.len();
                    self.selected = self
                        .selected
                        .saturating_sub(usize::from(self.selected + 1 >= count));
                    OverlayAction::Send(op)
                }
                KeyCode::Char('n') | KeyCode::Esc | KeyCode::Char('q') => {
                    self.confirming = None;
                    OverlayAction::Changed
                }
                _ => OverlayAction::Ignored,
            };
        }
        let rows = rows(context.rules, context.refused, context.permanent);
        let selected = &mut self.selected;
        match key.code {
            KeyCode::Esc | KeyCode::Char('q') => OverlayAction::Close,
            KeyCode::Up | KeyCode::Char('k') => {
                *selected = selected.saturating_sub(1);
                OverlayAction::Changed
            }
            KeyCode::Down | KeyCode::Char('j') => {
                *selected = (*selected + 1).min(rows.len().saturating_sub(1));
                OverlayAction::Changed
            }
            KeyCode::Char('d') | KeyCode::Delete | KeyCode::Backspace => match rows.get(*selected) {
                Some(Row::Session(rule) | Row::Refused(rule)) => {
                    let op = Op::RevokeApproval {
                        rule: (*rule).clone(),
                    };
                    // The selection stays on the row that takes the revoked one's place.
                    *selected = selected.saturating_sub(usize::from(*selected + 1 >= rows.len()));
                    OverlayAction::Send(op)
                }
                Some(Row::Permanent(rule)) => {
                    self.confirming = Some((*rule).clone());
                    OverlayAction::Changed
                }
                None => OverlayAction::Ignored,
            },
            _ => OverlayAction::Ignored,
        }
    }

    fn render(&self, app: &App, size: Rect, buf: &mut Buffer) {
        let mut lines = rule_lines(app, self.selected);
        if let Some(rule) = &self.confirming {
            lines.push(Line::default());
            lines.push(Line::from(Span::styled(
                confirmation(rule),
                app.look.theme().warning,
            )));
        }
        let area = centered(
            crate::popup::between_bars(size),
            90.min(size.width),
            u16::try_from(lines.len()).unwrap_or(u16::MAX).saturating_add(4),
        );
        popup(buf, area, &self.title(), lines, 0, app, true);
    }

    /// The rules belong to the session: another one resumed has its own.
    fn about_session(&self) -> bool {
        true
    }
}

/// What `d` on a permanent rule asks.
fn confirmation(rule: &PermanentRule) -> String {
    match rule.source {
        RuleSource::User => format!(
            "Remove `{}` from the {} list of [permissions] in your config.toml? y: remove · n: keep",
            rule.pattern,
            rule.list.key()
        ),
        RuleSource::Workspace => format!(
            "`{}` is the workspace's own rule (.miniagent/config.toml); it can only be changed there. y: say so · n: back",
            rule.pattern
        ),
    }
}

fn rule_lines(app: &App, selected: usize) -> Vec<Line<'static>> {
    let session = &app.session;
    let theme = app.look.theme();
    let rows = rows(session.rules(), session.refused(), session.permanent_rules());
    if rows.is_empty() {
        return vec![Line::from(Span::styled(
            "Nothing is remembered. Answer `a` at an approval to allow a tool (or a command) for the session, `A` to allow it always (saved to [permissions] in your config.toml).",
            theme.dim,
        ))];
    }
    rows.iter()
        .enumerate()
        .map(|(index, row)| {
            let line = match row {
                Row::Session(rule) => Line::from(Span::styled(format!("  {rule}"), theme.text)),
                Row::Refused(rule) => Line::from(vec![
                    Span::styled("  refused: ", theme.warning),
                    Span::styled(rule.to_string(), theme.text),
                ]),
                Row::Permanent(rule) => {
                    let list = rule.list.key();
                    let style = match rule.list {
                        RuleList::Allow => theme.ok,
                        RuleList::Ask => theme.warning,
                        RuleList::Deny => theme.error,
                    };
                    let source = match rule.source {
                        RuleSource::User => "your config",
                        RuleSource::Workspace => "workspace",
                    };
                    Line::from(vec![
                        Span::styled(format!("  {list:<6}"), style),
                        // Written in a config file, maybe the workspace's: drawn inert.
                        Span::styled(miniagent_text::clean(&rule.pattern).into_owned(), theme.text),
                        Span::styled(format!("  ({source})"), theme.dim),
                    ])
                }
            };
            if index == selected {
                theme.selected(line)
            } else {
                line
            }
        })
        .collect()
}
