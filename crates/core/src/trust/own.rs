//! The workspace's own files trust covers besides its servers and skills: how
//! `hooks.json` and `config.toml` are read (once, for the fingerprint and for use) and how
//! the trust question shows the permission rules a `config.toml` would add.

use std::path::Path;

use super::{MAX_MCP_JSON_BYTES, WORKSPACE_CONFIG, visible_word};
use crate::tools::files::{Capped, human_size, read_at_most};

/// One line per permission rule the workspace's `config.toml` would add, so the person
/// sees an `allow = ["bash"]` before trusting it; the file named alone when it holds none
/// (or cannot be read as TOML: then it is refused at the start, and says why).
pub(super) fn permission_lines(settings: &[u8]) -> Vec<String> {
    let table = std::str::from_utf8(settings)
        .ok()
        .and_then(|text| text.parse::<toml::Table>().ok());
    let mut lines = Vec::new();
    if let Some(toml::Value::Table(permissions)) = table.as_ref().and_then(|table| table.get("permissions")) {
        for list in ["deny", "ask", "allow"] {
            let Some(toml::Value::Array(patterns)) = permissions.get(list) else {
                continue;
            };
            lines.extend(patterns.iter().map(|pattern| {
                let shown = pattern
                    .as_str()
                    .map_or_else(|| pattern.to_string(), str::to_string);
                format!(
                    "{WORKSPACE_CONFIG}: permission rule {list} {}",
                    visible_word(&shown)
                )
            }));
        }
    }
    if lines.is_empty() {
        lines.push(format!("{WORKSPACE_CONFIG}: settings such as permission rules"));
    }
    lines
}

/// The workspace's own files the fingerprint covers besides its skills and commands.
pub(super) struct OwnFiles<'a> {
    pub(super) mcp: Option<&'a [u8]>,
    pub(super) hooks: Option<&'a [u8]>,
    pub(super) settings: Option<&'a [u8]>,
}

/// The bytes of one of the workspace's own files (`relative`), at most
/// [`MAX_MCP_JSON_BYTES`]; `None` when it is missing, or too large or unreadable (then
/// `problems` says why).
pub(super) fn read_own_file(workspace: &Path, relative: &str, problems: &mut Vec<String>) -> Option<Vec<u8>> {
    let path = workspace.join(relative);
    match read_at_most(&path, MAX_MCP_JSON_BYTES) {
        Ok(Capped::Whole(bytes)) => Some(bytes),
        Ok(Capped::TooLarge(size)) => {
            problems.push(format!(
                "{relative} is not used: it is {}, more than the {} miniagent reads of it",
                human_size(size),
                human_size(MAX_MCP_JSON_BYTES)
            ));
            None
        }
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => None,
        Err(err) => {
            problems.push(
                miniagent_text::clean(&format!("{relative} is not used: cannot read it: {err}")).into_owned(),
            );
            None
        }
    }
}
