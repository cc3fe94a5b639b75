//! `/version`: what is running (version, the commit when the build recorded one, the
//! provider, model and the endpoint requests go to) and where its settings and sessions
//! are kept.

use ratatui::layout::Rect;
use ratatui::text::{Line, Span};

use super::text::{Text, TextLayer};
use crate::app::App;
use crate::command::Command;
use crate::popup::centered;

/// The command that opens it (registered in `commands::COMMANDS`).
pub const COMMAND: Command = Command {
    name: "/version",
    aliases: &[],
    args: "",
    help: "version, provider and model, config and session paths",
    run: |app, _| open(app),
};

/// The commit the binary was built from, when the build set `MINIAGENT_COMMIT`
/// (`MINIAGENT_COMMIT=$(git rev-parse --short HEAD) cargo build`); no build script needed.
const COMMIT: Option<&str> = option_env!("MINIAGENT_COMMIT");

fn open(app: &mut App) {
    let version = Version { rows: facts(app) };
    app.open_layer(Box::new(TextLayer::new(version)));
}

/// Label and value rows, read when the layer opens.
fn facts(app: &App) -> Vec<(&'static str, String)> {
    let or_unknown = |text: &str| {
        if text.is_empty() {
            "not known yet".to_string()
        } else {
            text.to_string()
        }
    };
    let config = match &app.places.config_dir {
        Some(dir) => {
            let file = dir.join("config.toml");
            let state = if file.exists() { "" } else { " (not created yet)" };
            format!("{}{state}", file.display())
        }
        None => "none: this machine has no config folder".to_string(),
    };
    let sessions = match &app.places.sessions_dir {
        Some(dir) => dir.display().to_string(),
        None => "none: sessions are not recorded".to_string(),
    };
    vec![
        ("miniagent", env!("CARGO_PKG_VERSION").to_string()),
        (
            "commit",
            COMMIT.unwrap_or("not recorded in this build").to_string(),
        ),
        ("provider", or_unknown(&app.session.view().provider)),
        ("model", or_unknown(&app.session.view().model)),
        ("endpoint", or_unknown(&app.session.view().endpoint)),
        ("config file", config),
        (
            // Its MCP servers (`mcp.json`) and skills.
            "workspace extras",
            std::path::Path::new(&app.session.view().workspace)
                .join(".miniagent")
                .display()
                .to_string(),
        ),
        ("sessions", sessions),
        ("theme", app.look.name().to_string()),
    ]
}

/// The `/version` overlay's text.
pub struct Version {
    rows: Vec<(&'static str, String)>,
}

impl Text for Version {
    fn title(&self) -> String {
        "Version".to_string()
    }

    fn layout(&self, app: &App, size: Rect) -> (Rect, Vec<Line<'static>>) {
        let column = self.rows.iter().map(|(label, _)| label.len()).max().unwrap_or(0) + 2;
        let lines: Vec<Line<'static>> = self
            .rows
            .iter()
            .map(|(label, value)| {
                Line::from(vec![
                    Span::styled(format!("{label:<column$}"), app.look.theme().dim),
                    Span::styled(value.clone(), app.look.theme().text),
                ])
            })
            .collect();
        let rows = u16::try_from(lines.len()).unwrap_or(u16::MAX).saturating_add(2);
        let area = centered(crate::popup::between_bars(size), 90.min(size.width), rows);
        (area, lines)
    }

    const WRAPS: bool = true;
}
