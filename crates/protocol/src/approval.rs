//! Approvals: what a tool call awaiting one asks about, what the person decided, and
//! what "for the session" remembers.

use serde::{Deserialize, Serialize};

use crate::TextChange;

/// What a person (or a headless front end) decided about a tool call awaiting approval.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "decision", rename_all = "snake_case")]
pub enum Decision {
    /// Run this call.
    Approve,
    /// Run this call, and later calls the request's `session_rule` covers, without asking.
    ApproveForSession,
    /// Do not run it; the model is told, with the reason when one is given.
    Deny { reason: Option<String> },
    /// Do not run it, nor, for the rest of the session, any call the request's
    /// `session_rule` covers: those are refused without asking (an editor's "always
    /// reject"). Without a rule it refuses this call only, as [`Decision::Deny`] does.
    DenyForSession { reason: Option<String> },
    /// Do not run it and end the turn, as an interrupt would.
    Abort,
    /// Do not run it: nobody can be asked (`exec`), so the call is refused as the
    /// approval mode refuses one, with the reason the model sees.
    Refuse { reason: String },
    /// Run this call, and save `rule` (a permission pattern such as `bash(cargo test*)`,
    /// the request's `permanent_rule` as the person confirmed it) to the `allow` list
    /// of the user's config, so later calls it covers run without asking.
    ApproveAlways { rule: String },
}

/// An approval remembered for the rest of the session.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum ApprovalRule {
    /// Every call of this tool.
    Tool { name: String },
    /// `bash` running this program as a simple command (no pipes, chains or redirects).
    Command { program: String },
    /// `bash` running exactly this command line: what "for the session" covers for
    /// interpreters, shells, wrappers and compound commands, whose effect is not in
    /// their arguments' shape.
    CommandLine { command: String },
    /// `web_fetch` from this host (exactly: not its subdomains, nor a host it redirects to).
    Domain { host: String },
}

impl std::fmt::Display for ApprovalRule {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ApprovalRule::Tool { name } => write!(f, "tool `{name}`"),
            ApprovalRule::Command { program } => write!(f, "command `{program} …`"),
            ApprovalRule::CommandLine { command } => write!(f, "exactly `{command}`"),
            ApprovalRule::Domain { host } => write!(f, "fetches from `{host}`"),
        }
    }
}

/// Which list of the `[permissions]` table a permanent rule is in.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RuleList {
    Allow,
    Ask,
    Deny,
}

impl RuleList {
    /// The key of the `[permissions]` table.
    pub fn key(self) -> &'static str {
        match self {
            RuleList::Allow => "allow",
            RuleList::Ask => "ask",
            RuleList::Deny => "deny",
        }
    }
}

/// Where a permanent rule was written.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RuleSource {
    /// The person's configuration (their `config.toml`, or a `--config` file).
    User,
    /// The trusted workspace's `.miniagent/config.toml`.
    Workspace,
}

/// A rule of a `[permissions]` table: `allow`, `ask` or `deny`, a pattern (`bash(git
/// status*)`, `write_file(src/**)`, `mcp__github__*`) and where it was written.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct PermanentRule {
    pub list: RuleList,
    pub pattern: String,
    pub source: RuleSource,
}

impl std::fmt::Display for PermanentRule {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let source = match self.source {
            RuleSource::User => "your config",
            RuleSource::Workspace => "the workspace's .miniagent/config.toml",
        };
        write!(f, "the {} rule `{}` in {source}", self.list.key(), self.pattern)
    }
}

/// What an approval request asks about, so front ends can draw it without knowing
/// which tool does what.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum ApprovalRequest {
    /// A file is created, replaced or edited.
    Edit {
        /// As the person reads it: relative to the workspace when inside it.
        path: String,
        /// One line: `create x (12 bytes)`, `edit x (1 replacement)`.
        summary: String,
        /// A unified diff of the change (capped for very large ones).
        diff: String,
        /// The file's absolute path; empty in logs from before it existed.
        #[serde(default, skip_serializing_if = "String::is_empty")]
        abs_path: String,
        /// The whole text before and after, when both are small enough to carry.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        change: Option<TextChange>,
    },
    /// A shell command line.
    Command {
        command: String,
        /// The program it starts, when it is one simple command.
        program: Option<String>,
        /// Its words as the shell would split them, when it is one simple command.
        argv: Vec<String>,
        /// Where it runs.
        cwd: String,
        /// Seconds before it is killed; `None` when it runs in the background.
        timeout_s: Option<u64>,
        /// Pipes, chains, redirections, substitutions: its effect is not in its words.
        compound: bool,
    },
    /// A tool of an MCP server.
    McpCall {
        server: String,
        tool: String,
        arguments: serde_json::Value,
    },
    /// Any other tool: its own description of the call.
    Other { name: String, preview: String },
}

/// The pattern `A` (always) at an approval offers to save to the `allow` list for a call
/// of `tool` asking `request`, whose `session_rule` is the one `a` would remember:
/// `bash(cargo test *)` from a command's program and its first word when that is a
/// subcommand and the program is one remembered by name, else the command's exact words;
/// `write_file(src/**)` from a file's folder; an MCP tool's name;
/// `web_fetch(domain:docs.rs)`. `None` where no rule can be offered safely: a compound
/// command, a `*` in the words or the path, a path outside the workspace.
pub fn proposed_rule(
    tool: &str,
    request: &ApprovalRequest,
    session_rule: Option<&ApprovalRule>,
) -> Option<String> {
    let plain = |text: &str| {
        !text.is_empty()
            && text
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.' | ':' | '+' | '@'))
    };
    match request {
        ApprovalRequest::Command {
            program: Some(program),
            argv,
            compound: false,
            ..
        } => {
            if !matches!(session_rule, Some(ApprovalRule::Command { .. })) {
                // Not safe to approve by its name (an interpreter, a wrapper): exactly
                // these words.
                let words = argv.join(" ");
                let safe =
                    !words.trim().is_empty() && !words.contains('*') && !words.chars().any(char::is_control);
                return safe.then(|| format!("{tool}({words})"));
            }
            if !plain(program) || program.contains('=') {
                return None;
            }
            // A subcommand (`cargo test`, `npm run`) of a program that has them: a word,
            // not an option or a path.
            let words = match argv.get(1) {
                Some(word)
                    if SUBCOMMANDS.contains(&program.as_str())
                        && plain(word)
                        && !word.starts_with('-')
                        && !word.contains('.') =>
                {
                    format!("{program} {word}")
                }
                _ => program.clone(),
            };
            Some(format!("{tool}({words} *)"))
        }
        ApprovalRequest::Command { .. } => None,
        ApprovalRequest::Edit { path, .. } => {
            let relative = !path.starts_with('/') && !path.starts_with('~');
            let safe = relative
                && !path.contains(['*', '(', ')'])
                && !path
                    .split('/')
                    .any(|part| part == ".." || part == "." || part.is_empty());
            if !safe {
                return None;
            }
            Some(match path.rsplit_once('/') {
                Some((folder, _)) => format!("{tool}({folder}/**)"),
                None => format!("{tool}({path})"),
            })
        }
        ApprovalRequest::McpCall { .. } => Some(tool.to_string()),
        // The host the tool itself read from the URL (its session rule), never one parsed
        // again here from what the question shows.
        ApprovalRequest::Other { .. } if tool == "web_fetch" => match session_rule {
            Some(ApprovalRule::Domain { host }) if is_plain_host(host) => {
                Some(format!("{tool}(domain:{host})"))
            }
            _ => None,
        },
        ApprovalRequest::Other { .. } => Some(tool.to_string()),
    }
}

/// Programs whose first word is a subcommand, which `A` keeps in the rule it proposes
/// (`bash(cargo test *)`); for others the program alone (`bash(ls *)`).
const SUBCOMMANDS: &[&str] = &[
    "git",
    "cargo",
    "go",
    "npm",
    "pnpm",
    "yarn",
    "bun",
    "deno",
    "pip",
    "pip3",
    "uv",
    "poetry",
    "docker",
    "podman",
    "kubectl",
    "helm",
    "make",
    "just",
    "gh",
    "rustup",
    "dotnet",
    "mvn",
    "gradle",
    "terraform",
    "systemctl",
    "brew",
    "apt",
];

/// A host a rule can name: lower-case letters, digits, `-` and `.` (an IPv6 address in
/// brackets is not offered: its colons would read as part of the pattern).
fn is_plain_host(host: &str) -> bool {
    !host.is_empty()
        && host
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || matches!(c, '-' | '.'))
}
