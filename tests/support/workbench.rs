//! The workbench's `App` as the workbench tests build it: on a workspace, with a session
//! start in the future (so no file counts as touched unless marked), a fixed clock and
//! the token figures the snapshots show.

use std::time::{Duration, Instant, SystemTime};

use miniagent::config::ApprovalMode;
use miniagent::protocol::{Event, SandboxState, ToolInfo};
use miniagent::tui::app::App;
use miniagent::tui::theme::Theme;

use super::TempDir;

/// An app on `workspace` before any agent event.
pub fn bare_app(workspace: &TempDir) -> App {
    let start = SystemTime::now() + Duration::from_secs(3600);
    let mut app = App::new(
        Theme::dark(),
        workspace.path().to_path_buf(),
        ApprovalMode::Ask,
        50,
        start,
    );
    app.now = Instant::now();
    app.tokens.token_limit = 80_000;
    app.tokens.context_window = 200_000;
    app
}

/// The `session_configured` the snapshots show: claude-test on anthropic with `bash`.
pub fn configured(workspace: &str, session_id: Option<&str>) -> Event {
    Event::SessionConfigured {
        model: "claude-test".into(),
        provider: "anthropic".into(),
        workspace: workspace.into(),
        tools: vec![ToolInfo {
            name: "bash".into(),
            description: "run".into(),
        }],
        session_id: session_id.map(str::to_string),
        sandbox: SandboxState::Enforced,
    }
}
