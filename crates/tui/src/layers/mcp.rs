//! `/mcp`: the MCP servers, their states and tools; `r` reconnects the selected one.

use crossterm::event::{KeyCode, KeyEvent};
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};

use super::Layer;
use crate::app::App;
use crate::command::Command;
use crate::extensions::{MCP_HINTS, mcp_key, mcp_lines};
use crate::keys::OverlayContext;
use crate::keys::{KeyHint, OverlayAction};
use crate::popup::popup;

/// The command that opens it (registered in `commands::COMMANDS`).
pub const COMMAND: Command = Command {
    name: "/mcp",
    aliases: &[],
    args: "",
    help: "MCP servers, their state and tools; r reconnects",
    run: |app, _| app.open_layer(Box::new(McpLayer { selected: 0 })),
};

/// The `/mcp` overlay.
pub struct McpLayer {
    selected: usize,
}

impl Layer for McpLayer {
    type State = crate::app::App;

    fn title(&self) -> String {
        "MCP servers".to_string()
    }

    fn key_hints(&self) -> Vec<KeyHint> {
        MCP_HINTS.to_vec()
    }

    fn on_key(&mut self, key: KeyEvent, context: OverlayContext<'_>) -> OverlayAction {
        if matches!(key.code, KeyCode::Esc | KeyCode::Char('q')) {
            return OverlayAction::Close;
        }
        mcp_key(key, &mut self.selected, context.mcp)
    }

    fn render(&self, app: &App, size: Rect, buf: &mut Buffer) {
        let servers: Vec<(String, miniagent_protocol::McpState)> = app
            .session
            .mcp()
            .iter()
            .map(|(name, state)| (name.clone(), state.clone()))
            .collect();
        // Inside the frame, less the line about the workspace's servers.
        let rows = usize::from(super::text_area(size).height.saturating_sub(2))
            .saturating_sub(usize::from(app.session.workspace_declined()));
        let mut lines = mcp_lines(
            &servers,
            app.session.mcp_deferred(),
            self.selected,
            rows,
            app.look.theme(),
        );
        if app.session.workspace_declined() {
            lines.push(Line::from(Span::styled(
                "This workspace's own servers (.miniagent/mcp.json) are not used: you did not trust it this session.",
                app.look.theme().dim,
            )));
        }
        popup(buf, super::text_area(size), &self.title(), lines, 0, app, true);
    }
}
