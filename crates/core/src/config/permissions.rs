//! The `[permissions]` table: `allow`, `ask` and `deny` lists of patterns, `Tool` or
//! `Tool(spec)` (`bash(git status*)`, `write_file(src/**)`, `mcp__github__*`), as Claude
//! Code's `permissions` object has them. Here they are read and checked for their shape;
//! `tools::permission_rule` matches them against calls.

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use miniagent_protocol::RuleList;

/// `[permissions]`.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PermissionSettings {
    /// Calls these cover run without asking in the modes that ask.
    #[serde(default)]
    pub allow: Vec<String>,
    /// Calls these cover are asked about in every mode but read-only.
    #[serde(default)]
    pub ask: Vec<String>,
    /// Calls these cover are refused in every mode.
    #[serde(default)]
    pub deny: Vec<String>,
}

impl PermissionSettings {
    /// The patterns of one list.
    pub fn list(&self, list: RuleList) -> &[String] {
        match list {
            RuleList::Allow => &self.allow,
            RuleList::Ask => &self.ask,
            RuleList::Deny => &self.deny,
        }
    }

    /// Every pattern with its list, deny first.
    pub fn entries(&self) -> impl Iterator<Item = (RuleList, &str)> {
        [RuleList::Deny, RuleList::Ask, RuleList::Allow]
            .into_iter()
            .flat_map(move |list| {
                self.list(list)
                    .iter()
                    .map(move |pattern| (list, pattern.as_str()))
            })
    }

    /// The first pattern that is not a rule, as `permissions.deny: `x(`: why`.
    pub fn check(&self) -> Result<(), String> {
        for (list, pattern) in self.entries() {
            Pattern::parse(pattern).map_err(|why| {
                format!(
                    "permissions.{}: `{}` is not a rule: {why}",
                    list.key(),
                    pattern.escape_debug()
                )
            })?;
        }
        Ok(())
    }

    /// The `[permissions]` table of a workspace's `.miniagent/config.toml` (its other
    /// tables are for nothing miniagent reads from a workspace, and are left alone).
    pub fn from_workspace(bytes: &[u8]) -> Result<PermissionSettings, String> {
        let text = std::str::from_utf8(bytes).map_err(|_| "it is not UTF-8 text".to_string())?;
        let table: toml::Table = toml::from_str(text).map_err(|err| err.message().to_string())?;
        let Some(permissions) = table.get("permissions") else {
            return Ok(PermissionSettings::default());
        };
        let settings = PermissionSettings::deserialize(permissions.clone())
            .map_err(|err| format!("[permissions]: {}", err.message()))?;
        settings.check()?;
        Ok(settings)
    }
}

/// Where the `[permissions]` rules come from besides the config layers (not config keys).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PermissionSources {
    /// The user's `config.toml`, which `A` at an approval and `/approvals` change.
    pub user_file: Option<PathBuf>,
    /// The home folder, for path patterns starting with `~/`.
    pub home: Option<PathBuf>,
    /// The trusted workspace's `.miniagent/config.toml` rules.
    pub workspace: PermissionSettings,
}

/// Tool names other agents use in their rules, and miniagent's for them.
const OTHER_NAMES: &[(&str, &str)] = &[
    ("Bash", "bash"),
    ("Read", "read_file"),
    ("Write", "write_file"),
    ("Edit", "edit_file"),
    ("MultiEdit", "edit_file"),
    ("WebFetch", "web_fetch"),
];

/// Tools whose rule subject is a path: their specs are path patterns.
pub const PATH_TOOLS: &[&str] = &["read_file", "write_file", "edit_file"];

/// One pattern, read: the tool names it covers (`*` any run of characters) and what it
/// asks of the call's subject, when anything.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Pattern {
    pub tool: String,
    pub spec: Option<String>,
}

impl Pattern {
    /// Reads `Tool` or `Tool(spec)`; the error says what is wrong in a few words.
    pub fn parse(text: &str) -> Result<Pattern, String> {
        let text = text.trim();
        if text.is_empty() {
            return Err("it is empty".into());
        }
        if text.chars().any(char::is_control) {
            return Err("it holds a control character".into());
        }
        let (name, spec) = match text.split_once('(') {
            None => (text, None),
            Some((name, rest)) => {
                let spec = rest
                    .strip_suffix(')')
                    .ok_or("a `(` must be closed by a `)` at the end")?;
                if spec.trim().is_empty() {
                    return Err(
                        "the part in parentheses is empty (write the tool alone to cover all its calls)"
                            .into(),
                    );
                }
                (name.trim(), Some(spec.trim().to_string()))
            }
        };
        if name.is_empty()
            || !name
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '*'))
        {
            return Err(format!(
                "`{name}` is not a tool name (letters, digits, `_`, `-`, and `*` for any run of them)"
            ));
        }
        let tool = OTHER_NAMES
            .iter()
            .find(|(other, _)| *other == name)
            .map_or(name, |(_, own)| own)
            .to_string();
        if let Some(spec) = &spec {
            if tool.contains('*') {
                return Err("a pattern with a `*` in the tool name cannot have a part in parentheses".into());
            }
            if tool.starts_with("mcp__") {
                return Err(
                    "MCP tools are matched by name only (`mcp__server__tool`, `mcp__server__*`)".into(),
                );
            }
            if tool == "web_fetch" && !spec.starts_with("domain:") {
                return Err("web_fetch rules name a host: `web_fetch(domain:docs.rs)`".into());
            }
        }
        Ok(Pattern { tool, spec })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn patterns_are_read_or_refused_with_a_reason() {
        let read = |text: &str| Pattern::parse(text).map(|p| (p.tool, p.spec));
        assert_eq!(read("bash"), Ok(("bash".into(), None)));
        assert_eq!(
            read(" Bash(git status:*) "),
            Ok(("bash".into(), Some("git status:*".into())))
        );
        assert_eq!(
            read("write_file(src/**)"),
            Ok(("write_file".into(), Some("src/**".into())))
        );
        assert_eq!(read("mcp__github__*"), Ok(("mcp__github__*".into(), None)));
        assert_eq!(
            read("web_fetch(domain:docs.rs)"),
            Ok(("web_fetch".into(), Some("domain:docs.rs".into())))
        );
        for (text, why) in [
            ("", "it is empty"),
            ("bash(git status", "a `(` must be closed by a `)` at the end"),
            (
                "bash()",
                "the part in parentheses is empty (write the tool alone to cover all its calls)",
            ),
            (
                "ba sh",
                "`ba sh` is not a tool name (letters, digits, `_`, `-`, and `*` for any run of them)",
            ),
            (
                "mcp__github__x(a)",
                "MCP tools are matched by name only (`mcp__server__tool`, `mcp__server__*`)",
            ),
            (
                "web_fetch(docs.rs)",
                "web_fetch rules name a host: `web_fetch(domain:docs.rs)`",
            ),
            (
                "*(x)",
                "a pattern with a `*` in the tool name cannot have a part in parentheses",
            ),
            ("bash(ls\u{1b}[2J)", "it holds a control character"),
        ] {
            assert_eq!(read(text), Err(why.to_string()), "{text}");
        }
        // Shown with its control characters spelled out, never as they are.
        assert_eq!(
            PermissionSettings::from_workspace(b"[permissions]\ndeny = [\"bash(\\u001b]0;x\\u0007)\"]\n"),
            Err(
                "permissions.deny: `bash(\\u{1b}]0;x\\u{7})` is not a rule: it holds a control character"
                    .into()
            )
        );
    }

    #[test]
    fn a_workspace_config_gives_its_permissions_table_only() {
        let settings = PermissionSettings::from_workspace(
            b"[model]\nmodel = \"x\"\n[permissions]\ndeny = [\"bash(curl*)\"]\n",
        );
        assert_eq!(
            settings,
            Ok(PermissionSettings {
                deny: vec!["bash(curl*)".into()],
                ..PermissionSettings::default()
            })
        );
        assert_eq!(
            PermissionSettings::from_workspace(b"[permissions]\nallow = [\"bash(\"]\n"),
            Err("permissions.allow: `bash(` is not a rule: a `(` must be closed by a `)` at the end".into())
        );
        assert_eq!(
            PermissionSettings::from_workspace(b""),
            Ok(PermissionSettings::default())
        );
        assert!(PermissionSettings::from_workspace(b"[permissions]\nallwo = []\n").is_err());
    }
}
