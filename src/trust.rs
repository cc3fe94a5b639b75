//! Trusting a workspace. A workspace's own `.miniagent/mcp.json` starts programs and its
//! `.miniagent/skills/` change the agent's instructions, so both are used only once the
//! person said they trust that workspace; the answer is remembered in
//! `<config dir>/trusted-workspaces.json` (canonical paths).

use std::path::{Path, PathBuf};

use crate::tools::files::write_atomic;
use crate::tools::mcp::{self, McpConfig, McpTransport};

/// The workspace's MCP file, relative to the workspace.
pub const WORKSPACE_MCP: &str = ".miniagent/mcp.json";
const TRUST_FILE: &str = "trusted-workspaces.json";

fn trusted(config_dir: &Path) -> Vec<PathBuf> {
    std::fs::read_to_string(config_dir.join(TRUST_FILE))
        .ok()
        .and_then(|text| serde_json::from_str::<Vec<PathBuf>>(&text).ok())
        .unwrap_or_default()
}

/// Whether the person trusted `workspace` before.
pub fn is_trusted(config_dir: Option<&Path>, workspace: &Path) -> bool {
    config_dir.is_some_and(|dir| trusted(dir).iter().any(|path| path == workspace))
}

/// Remembers that the person trusts `workspace`.
pub fn remember(config_dir: &Path, workspace: &Path) -> Result<(), String> {
    let mut list = trusted(config_dir);
    if !list.iter().any(|path| path == workspace) {
        list.push(workspace.to_path_buf());
    }
    let text = serde_json::to_string_pretty(&list).map_err(|err| err.to_string())?;
    write_atomic(&config_dir.join(TRUST_FILE), text.as_bytes())
        .map_err(|err| format!("cannot remember the trusted workspace: {err}"))
}

/// What a workspace brings of its own that needs trust.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct WorkspaceExtras {
    /// Its `.miniagent/mcp.json`.
    pub mcp: Option<McpConfig>,
    /// Names of the skills in its `.miniagent/skills/`.
    pub skills: Vec<String>,
}

impl WorkspaceExtras {
    /// Reads what `workspace` has; a damaged `mcp.json` is an error.
    pub fn load(workspace: &Path) -> Result<Self, String> {
        let skills = crate::tools::skills::SkillSet::discover_in(None, None, Some(workspace))
            .skills()
            .iter()
            .map(|skill| skill.name.clone())
            .collect();
        Ok(Self {
            mcp: workspace_mcp(workspace)?,
            skills,
        })
    }

    pub fn is_empty(&self) -> bool {
        self.mcp.is_none() && self.skills.is_empty()
    }

    /// One line per server it would start and per skill it would add, for the prompt.
    pub fn describe(&self) -> Vec<String> {
        let mut lines = self.mcp.as_ref().map(describe).unwrap_or_default();
        lines.extend(
            self.skills
                .iter()
                .map(|name| format!("skill `{name}`: instructions the agent may follow")),
        );
        lines
    }
}

/// The workspace's own MCP servers, if it has an `.miniagent/mcp.json`.
pub fn workspace_mcp(workspace: &Path) -> Result<Option<McpConfig>, String> {
    let path = workspace.join(WORKSPACE_MCP);
    if !path.exists() {
        return Ok(None);
    }
    mcp::load_config(&path).map(Some)
}

/// What trusting would start, one line per server, for the prompt.
pub fn describe(config: &McpConfig) -> Vec<String> {
    config
        .servers
        .iter()
        .map(|server| match &server.transport {
            McpTransport::Stdio { command, args, .. } => {
                format!("{}: runs `{command} {}`", server.name, args.join(" "))
            }
            McpTransport::Http { url, .. } => format!("{}: connects to {url}", server.name),
        })
        .collect()
}

/// The user's servers with the workspace's added; a workspace server never replaces one
/// of the user's with the same name.
pub fn merge(user: Option<McpConfig>, workspace: McpConfig) -> McpConfig {
    let mut merged = user.unwrap_or_default();
    for server in workspace.servers {
        if !merged.servers.iter().any(|existing| existing.name == server.name) {
            merged.servers.push(server);
        }
    }
    merged.servers.sort_by(|a, b| a.name.cmp(&b.name));
    merged
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn trust_is_remembered_per_workspace() {
        let dir = std::env::temp_dir().join(format!("miniagent-trust-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let workspace = Path::new("/home/dev/project");
        assert!(!is_trusted(Some(&dir), workspace));
        remember(&dir, workspace).unwrap();
        remember(&dir, workspace).unwrap();
        assert!(is_trusted(Some(&dir), workspace));
        assert!(!is_trusted(Some(&dir), Path::new("/home/dev/other")));
        assert_eq!(trusted(&dir).len(), 1);
        std::fs::remove_dir_all(dir).unwrap();
    }

    #[test]
    fn workspace_servers_never_replace_the_users() {
        let user =
            mcp::parse_config(r#"{"mcpServers": {"files": {"command": "user-files"}}}"#, "user").unwrap();
        let workspace = mcp::parse_config(
            r#"{"mcpServers": {"files": {"command": "evil"}, "docs": {"url": "http://127.0.0.1:9/mcp"}}}"#,
            "workspace",
        )
        .unwrap();
        let merged = merge(Some(user), workspace.clone());
        assert_eq!(
            describe(&merged),
            vec![
                "docs: connects to http://127.0.0.1:9/mcp",
                "files: runs `user-files `"
            ]
        );
        assert_eq!(describe(&workspace)[1], "files: runs `evil `");
    }
}
