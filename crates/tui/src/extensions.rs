//! The `/mcp` and `/skills` overlays: which MCP servers are connected (and reconnecting
//! one), and which skills the agent can load.

use crossterm::event::{KeyCode, KeyEvent};
use ratatui::text::{Line, Span};

use super::keys::{KeyHint, OverlayAction};
use super::theme::Theme;
use crate::protocol::{McpState, Op, SkillInfo};

/// Keys of the `/mcp` overlay.
pub const MCP_HINTS: [KeyHint; 3] = [
    KeyHint::new("↑/↓", "select"),
    KeyHint::new("r", "reconnect"),
    KeyHint::new("Esc", "close"),
];

/// A key in the `/mcp` overlay.
pub fn mcp_key(key: KeyEvent, selected: &mut usize, servers: &[(String, McpState)]) -> OverlayAction {
    match key.code {
        KeyCode::Up | KeyCode::Char('k') => {
            *selected = selected.saturating_sub(1);
            OverlayAction::Changed
        }
        KeyCode::Down | KeyCode::Char('j') => {
            *selected = (*selected + 1).min(servers.len().saturating_sub(1));
            OverlayAction::Changed
        }
        KeyCode::Char('r') => match servers.get(*selected) {
            Some((server, _)) => OverlayAction::Send(Op::ReconnectMcp {
                server: server.clone(),
            }),
            None => OverlayAction::Ignored,
        },
        _ => OverlayAction::Ignored,
    }
}

/// One word for a state, readable without colour, and its style.
pub fn state_label(state: &McpState, theme: &Theme) -> (String, ratatui::style::Style) {
    match state {
        McpState::Disabled => ("disabled".to_string(), theme.dim),
        McpState::Connecting => ("connecting…".to_string(), theme.warning),
        McpState::Ready { tools } => (format!("ready, {} tools", tools.len()), theme.ok),
        McpState::Failed { .. } => ("failed".to_string(), theme.error),
    }
}

/// The `/mcp` overlay's lines.
pub fn mcp_lines(servers: &[(String, McpState)], selected: usize, theme: &Theme) -> Vec<Line<'static>> {
    if servers.is_empty() {
        return vec![
            Line::from(Span::styled("No MCP servers are configured.", theme.dim)),
            Line::from(Span::styled(
                "Add them to mcp.json in the config folder (see config/mcp.json), or pass --mcp-config FILE.",
                theme.dim,
            )),
        ];
    }
    let mut lines = Vec::new();
    for (index, (server, state)) in servers.iter().enumerate() {
        let (label, style) = state_label(state, theme);
        let server = crate::terminal_text::clean(server);
        let mut header = Line::from(vec![
            Span::styled(format!("{server:<20} "), theme.strong),
            Span::styled(label, style),
        ]);
        if index == selected {
            header = theme.selected(header);
        }
        lines.push(header);
        match state {
            McpState::Ready { tools } => {
                for tool in tools {
                    let tool = crate::terminal_text::clean(tool);
                    lines.push(Line::from(Span::styled(format!("    {tool}"), theme.tool)));
                }
            }
            McpState::Failed { reason } => {
                let reason = crate::terminal_text::clean(reason);
                lines.push(Line::from(Span::styled(format!("    {reason}"), theme.error)))
            }
            McpState::Connecting | McpState::Disabled => {}
        }
    }
    lines
}

/// The `/skills` overlay's lines.
pub fn skills_lines(skills: &[SkillInfo], warnings: &[String], theme: &Theme) -> Vec<Line<'static>> {
    let mut lines = Vec::new();
    if skills.is_empty() {
        lines.push(Line::from(Span::styled("No skills were found.", theme.dim)));
    }
    for skill in skills {
        lines.push(Line::from(vec![
            Span::styled(skill.name.clone(), theme.strong),
            Span::styled(format!("  ({})", skill.source), theme.dim),
        ]));
        // A description written as a YAML block keeps its line breaks: each line is shown
        // as one (a break dropped inside a span would join the words around it).
        for line in skill.description.lines() {
            lines.push(Line::from(Span::styled(
                format!("  {}", crate::terminal_text::clean(line)),
                theme.text,
            )));
        }
        if !skill.pre_approves.is_empty() {
            lines.push(Line::from(vec![
                Span::styled("  pre-approves while in use: ", theme.dim),
                Span::styled(
                    crate::terminal_text::clean(&skill.pre_approves.join(", ")).into_owned(),
                    theme.tool,
                ),
            ]));
        }
        for ignored in &skill.not_pre_approved {
            lines.push(Line::from(Span::styled(
                format!("  {}", crate::terminal_text::clean(ignored)),
                theme.dim,
            )));
        }
        lines.push(Line::from(Span::styled(format!("  {}", skill.root), theme.dim)));
    }
    if !warnings.is_empty() {
        lines.push(Line::default());
        lines.push(Line::from(Span::styled("Warnings", theme.heading)));
        for warning in warnings {
            lines.push(Line::from(Span::styled(format!("  {warning}"), theme.warning)));
        }
    }
    lines
}
