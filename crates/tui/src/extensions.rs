//! The `/mcp` and `/skills` overlays: which MCP servers are connected (and reconnecting
//! one), and which skills the agent can load.

use crossterm::event::{KeyCode, KeyEvent};
use ratatui::text::{Line, Span};

use super::keys::{KeyHint, OverlayAction};
use super::theme::Theme;
use miniagent_protocol::{DeferredServer, McpState, Op, SkillInfo};

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
        McpState::Ready { tools } => {
            let count = tools.len();
            let noun = if count == 1 { "tool" } else { "tools" };
            (format!("ready, {count} {noun}"), theme.ok)
        }
        McpState::Failed { .. } => ("failed".to_string(), theme.error),
    }
}

/// Tools listed under each server in `/mcp` but the selected one, which gets the rows
/// left: the overlay does not scroll, and a server with thousands of tools would hide
/// every server after it.
const TOOLS_SHOWN: usize = 5;

/// Rows a server takes in `/mcp` when it shows at most `shown` of its tools (`held`:
/// what the model is not sent of them, [`held_back_lines`]).
fn server_rows(state: &McpState, shown: usize, held: Option<&DeferredServer>) -> usize {
    1 + match state {
        McpState::Ready { tools } => {
            tools.len().min(shown) + usize::from(tools.len() > shown) + held.map_or(0, held_rows)
        }
        McpState::Failed { .. } => 1,
        McpState::Connecting | McpState::Disabled => 0,
    }
}

/// Rows of [`held_back_lines`].
fn held_rows(held: &DeferredServer) -> usize {
    1 + usize::from(!held.found.is_empty())
}

/// Most names of found tools listed on their line; the rest are counted.
const FOUND_NAMED: usize = 5;

/// What `/mcp` says under a server whose tools are held back from the model: that they
/// are, how the model reaches them, and the ones it found (declared to it now). Without
/// it the list reads as if the model saw every tool.
fn held_back_lines(held: &DeferredServer, theme: &Theme) -> Vec<Line<'static>> {
    let mut lines = vec![Line::from(Span::styled(
        "    not sent to the model: it finds them with search_mcp_tools",
        theme.warning,
    ))];
    if !held.found.is_empty() {
        let mut named: Vec<String> = held
            .found
            .iter()
            .take(FOUND_NAMED)
            .map(|name| miniagent_text::clean(name).into_owned())
            .collect();
        if held.found.len() > FOUND_NAMED {
            named.push(format!("{} more", held.found.len() - FOUND_NAMED));
        }
        lines.push(Line::from(Span::styled(
            format!("    found by the model (sent now): {}", named.join(", ")),
            theme.dim,
        )));
    }
    lines
}

/// The `/mcp` overlay's lines, to fit in about `rows` rows.
pub fn mcp_lines(
    servers: &[(String, McpState)],
    deferred: &[DeferredServer],
    selected: usize,
    rows: usize,
    theme: &Theme,
) -> Vec<Line<'static>> {
    let held = |server: &str| deferred.iter().find(|held| held.server == server);
    if servers.is_empty() {
        return vec![
            Line::from(Span::styled("No MCP servers are configured.", theme.dim)),
            Line::from(Span::styled(
                "Add them to mcp.json in the config folder (see config/mcp.json), or pass --mcp-config FILE.",
                theme.dim,
            )),
        ];
    }
    let others: usize = servers
        .iter()
        .enumerate()
        .filter(|(index, _)| *index != selected)
        .map(|(_, (server, state))| server_rows(state, TOOLS_SHOWN, held(server)))
        .sum();
    // The selected server's lines about its tools held back.
    let held_rows = servers
        .get(selected)
        .and_then(|(server, _)| held(server))
        .map_or(0, held_rows);
    // Its header and the "more" line besides the tools.
    let room = rows.saturating_sub(others + 2 + held_rows).max(TOOLS_SHOWN);
    let mut lines = Vec::new();
    for (index, (server, state)) in servers.iter().enumerate() {
        let (label, style) = state_label(state, theme);
        let server = miniagent_text::clean(server);
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
                if let Some(held) = held(server.as_ref()) {
                    lines.extend(held_back_lines(held, theme));
                }
                let shown = if index == selected { room } else { TOOLS_SHOWN };
                for tool in tools.iter().take(shown) {
                    let tool = miniagent_text::clean(tool);
                    lines.push(Line::from(Span::styled(format!("    {tool}"), theme.tool)));
                }
                if tools.len() > shown {
                    let more = tools.len() - shown;
                    let hint = if index == selected {
                        ""
                    } else {
                        " (select it to see more)"
                    };
                    lines.push(Line::from(Span::styled(
                        format!("    … and {more} more{hint}"),
                        theme.dim,
                    )));
                }
            }
            McpState::Failed { reason } => {
                let reason = miniagent_text::clean(reason);
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
                format!("  {}", miniagent_text::clean(line)),
                theme.text,
            )));
        }
        if !skill.pre_approves.is_empty() {
            lines.push(Line::from(vec![
                Span::styled("  pre-approves while in use: ", theme.dim),
                Span::styled(
                    miniagent_text::clean(&skill.pre_approves.join(", ")).into_owned(),
                    theme.tool,
                ),
            ]));
        }
        for ignored in &skill.not_pre_approved {
            lines.push(Line::from(Span::styled(
                format!("  {}", miniagent_text::clean(ignored)),
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
