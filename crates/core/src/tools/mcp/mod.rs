//! MCP client: tools from Model Context Protocol servers, started from `mcp.json`
//! ([`load_config`]) and kept by an [`McpManager`].
//!
//! Servers connect in the background; each one that answers becomes `Ready` and its
//! tools appear as `mcp__<server>__<tool>` ([`McpTool`]). A server that cannot start,
//! does not answer in time or dies later becomes `Failed` with a reason, and the others
//! carry on. Stdio servers run in their own process group with their stderr in a log
//! file, so they never touch the terminal and none outlives the manager.

mod bounded;
mod config;
mod connect;
mod deferred;
mod manager;
mod sse;
mod tool;

pub use config::{
    DEFAULT_CONNECT_TIMEOUT, DEFAULT_EXECUTE_TIMEOUT, HttpKind, McpApproval, McpConfig, McpConfigError,
    McpServerConfig, McpTransport, NEUTRAL_FOLDER, WORKSPACE, config_from_text, load_config, parse_config,
};
pub use deferred::{SEARCH_TOOL, ToolShare};
pub use manager::{McpManager, McpStateCallback, ReconnectError};
pub use tool::McpTool;

/// Where a configured server stands; reported through the manager's `on_state` callback
/// on every change.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum McpServerState {
    /// `disabled: true` in the configuration; never started.
    Disabled,
    /// Starting, or waiting for `initialize` and the tool list.
    Connecting,
    /// Connected; `tools` are its tools' names as the model calls them
    /// (`mcp__<server>__<tool>`).
    Ready { tools: Vec<String> },
    /// Could not connect, or the connection was lost; `/mcp` can reconnect it.
    Failed { reason: String },
}

impl std::fmt::Display for McpServerState {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            McpServerState::Disabled => f.write_str("disabled"),
            McpServerState::Connecting => f.write_str("connecting"),
            McpServerState::Ready { tools } if tools.len() == 1 => f.write_str("ready, 1 tool"),
            McpServerState::Ready { tools } => write!(f, "ready, {} tools", tools.len()),
            McpServerState::Failed { reason } => write!(f, "failed: {reason}"),
        }
    }
}

impl From<McpServerState> for miniagent_protocol::McpState {
    fn from(state: McpServerState) -> Self {
        match state {
            McpServerState::Disabled => Self::Disabled,
            McpServerState::Connecting => Self::Connecting,
            McpServerState::Ready { tools } => Self::Ready { tools },
            McpServerState::Failed { reason } => Self::Failed { reason },
        }
    }
}
