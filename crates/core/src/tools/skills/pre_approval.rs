//! A skill's `allowed-tools`: by the Agent Skills specification, the tools **pre-approved**
//! while the skill is in use, not a restriction. Once `get_skill` loads a skill, the calls
//! its entries cover run without asking for the rest of the turn, within the approval
//! mode's hard limits (the policy applies them: never in read-only, never for miniagent's
//! own settings, never for what is not confined — see `agent::approval`).
//!
//! Entries are Claude-style names mapped to miniagent's tools: `Write` → `write_file`,
//! `Edit`/`MultiEdit` → `edit_file` (with an optional path pattern, `Edit(src/**)`),
//! `Bash` → `bash` (any command) and `bash_kill`, `Bash(git diff:*)` or `Bash(git diff *)`
//! → `bash` commands starting with those words, `Bash(npm test)` → that command,
//! `Grep` → `grep`/`rg` commands and `Glob` → `find`/`ls` commands (only when they carry no
//! option that runs another program). `Read`, `LS` and miniagent's read-only tools run
//! without asking anyway; MCP tools act outside the sandbox and are never pre-approved;
//! other names (`WebFetch`, `Task`) are not miniagent tools. miniagent's own tool names
//! (`write_file`, `bash`, …) work too.

use globset::GlobBuilder;

use crate::tools::command_rule;
use crate::tools::paths::{Access, Workspace};

/// One thing a skill pre-approves.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Grant {
    /// Every call of this tool.
    Tool(String),
    /// Calls of this file tool whose every path (relative to the workspace) matches.
    Paths { tool: String, pattern: String },
    /// `bash` commands that are one simple command (no pipes, chains, redirects or
    /// substitutions) matching this.
    Command(CommandPattern),
}

/// Which `bash` command lines a grant covers.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum CommandPattern {
    /// The command's words start with these (`Bash(git status:*)`).
    Prefix(String),
    /// Exactly this command (`Bash(npm test)`).
    Exact(String),
    /// `*` matching anything (`Bash(uv run * --check)`).
    Wildcard(String),
    /// These programs, when approving them by name is safe (`Grep`, `Glob`).
    Programs(Vec<String>),
}

/// What one skill's `allowed-tools` pre-approves, and what in it pre-approves nothing.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SkillApprovals {
    pub skill: String,
    pub grants: Vec<Grant>,
    /// Entries that grant nothing, each with why, for `/skills`.
    pub ignored: Vec<String>,
}

/// Whether `name` is one of miniagent's built-in tools that change something.
fn own_tool(name: &str) -> bool {
    crate::tools::BUILTIN_TOOLS
        .iter()
        .any(|(own, effect)| *own == name && *effect != crate::tools::ToolEffect::ReadOnly)
}

/// Whether `name` is a tool that only reads (ours, or another agent's name for reading):
/// it runs without asking in every mode.
fn reading_tool(name: &str) -> bool {
    matches!(name, "read" | "ls" | "notebookread" | "get_skill")
        || crate::tools::BUILTIN_TOOLS
            .iter()
            .any(|(own, effect)| *own == name && *effect == crate::tools::ToolEffect::ReadOnly)
}

impl SkillApprovals {
    /// Reads a skill's `allowed-tools` entries.
    pub fn from_entries(skill: &str, entries: &[String]) -> SkillApprovals {
        let mut approvals = SkillApprovals {
            skill: skill.to_string(),
            ..SkillApprovals::default()
        };
        for entry in entries {
            approvals.add(entry.trim());
        }
        approvals
    }

    fn add(&mut self, entry: &str) {
        let (name, argument) = match entry.split_once('(') {
            Some((name, rest)) if rest.ends_with(')') => (name.trim(), Some(rest[..rest.len() - 1].trim())),
            _ => (entry, None),
        };
        // `Bash(*)`, `Edit(**)`: the whole tool.
        let argument = argument.filter(|argument| !matches!(*argument, "" | "*" | "**"));
        let lower = name.to_ascii_lowercase();
        let grants: Vec<Grant> = match (lower.as_str(), argument) {
            ("bash", None) => vec![Grant::Tool("bash".into()), Grant::Tool("bash_kill".into())],
            ("bash", Some(pattern)) => vec![Grant::Command(CommandPattern::parse(pattern))],
            ("write" | "write_file", None) => vec![Grant::Tool("write_file".into())],
            ("edit" | "multiedit" | "edit_file", None) => vec![Grant::Tool("edit_file".into())],
            ("write" | "write_file", Some(pattern)) => vec![Grant::Paths {
                tool: "write_file".into(),
                pattern: pattern.to_string(),
            }],
            ("edit" | "multiedit" | "edit_file", Some(pattern)) => vec![Grant::Paths {
                tool: "edit_file".into(),
                pattern: pattern.to_string(),
            }],
            ("grep", _) => vec![Grant::Command(CommandPattern::Programs(vec![
                "grep".into(),
                "egrep".into(),
                "fgrep".into(),
                "rg".into(),
            ]))],
            ("glob", _) => vec![Grant::Command(CommandPattern::Programs(vec![
                "find".into(),
                "ls".into(),
            ]))],
            (own, None) if own_tool(own) => vec![Grant::Tool(own.to_string())],
            (reading, _) if reading_tool(reading) => {
                self.ignored
                    .push(format!("{entry}: reading runs without asking anyway"));
                Vec::new()
            }
            (mcp, _) if mcp.starts_with("mcp__") => {
                self.ignored.push(format!(
                    "{entry}: MCP tools act outside the sandbox and are never pre-approved"
                ));
                Vec::new()
            }
            _ => {
                self.ignored
                    .push(format!("{entry}: not a miniagent tool; ignored"));
                Vec::new()
            }
        };
        for grant in grants {
            if !self.grants.contains(&grant) {
                self.grants.push(grant);
            }
        }
    }

    pub fn is_empty(&self) -> bool {
        self.grants.is_empty()
    }

    /// One phrase per grant: `edit_file`, `bash: any command`, ``bash: `git status …` ``.
    pub fn describe(&self) -> Vec<String> {
        let mut phrases: Vec<String> = Vec::new();
        for grant in &self.grants {
            let phrase = match grant {
                Grant::Tool(name) if name == "bash" => "bash: any command".to_string(),
                // Part of `Bash`; it only stops what bash started.
                Grant::Tool(name) if name == "bash_kill" => continue,
                Grant::Tool(name) => name.clone(),
                Grant::Paths { tool, pattern } => format!("{tool}: {pattern}"),
                Grant::Command(CommandPattern::Prefix(words)) => format!("bash: `{words} …`"),
                Grant::Command(CommandPattern::Exact(command) | CommandPattern::Wildcard(command)) => {
                    format!("bash: `{command}`")
                }
                Grant::Command(CommandPattern::Programs(programs)) => {
                    format!("bash: {}", programs.join(", "))
                }
            };
            phrases.push(phrase);
        }
        phrases
    }

    /// Whether a call of `tool` (running `command`, for `bash`) is one this skill
    /// pre-approves.
    pub fn covers(
        &self,
        tool: &str,
        command: Option<&str>,
        changed_paths: &[String],
        workspace: &Workspace,
    ) -> bool {
        self.grants.iter().any(|grant| match grant {
            Grant::Tool(name) => name == tool,
            Grant::Paths { tool: name, pattern } => {
                name == tool
                    && !changed_paths.is_empty()
                    && changed_paths.iter().all(|path| {
                        workspace
                            .resolve(path, Access::Write)
                            .ok()
                            .and_then(|real| {
                                real.strip_prefix(workspace.root())
                                    .ok()
                                    .map(|relative| relative.display().to_string())
                            })
                            .is_some_and(|relative| glob_matches(pattern, &relative, true))
                    })
            }
            Grant::Command(pattern) => {
                tool == "bash" && command.is_some_and(|command| pattern.matches(command))
            }
        })
    }
}

impl CommandPattern {
    /// `git status:*` and `git status *` → prefix; a `*` elsewhere → wildcard; else exact.
    fn parse(pattern: &str) -> CommandPattern {
        let words = |text: &str| text.split_whitespace().collect::<Vec<_>>().join(" ");
        if let Some(prefix) = pattern.strip_suffix(":*").or_else(|| pattern.strip_suffix(" *"))
            && !prefix.contains('*')
            && !prefix.trim().is_empty()
        {
            return CommandPattern::Prefix(words(prefix));
        }
        if pattern.contains('*') {
            CommandPattern::Wildcard(words(pattern))
        } else {
            CommandPattern::Exact(words(pattern))
        }
    }

    fn matches(&self, command: &str) -> bool {
        // A chain or pipe is several commands, and a pattern covers one: `git status;
        // rm -rf ~` must not pass as `git status …`.
        if !command_rule::is_simple(command) {
            return false;
        }
        let command = command.split_whitespace().collect::<Vec<_>>().join(" ");
        match self {
            CommandPattern::Prefix(prefix) => {
                command == *prefix
                    || command
                        .strip_prefix(prefix.as_str())
                        .is_some_and(|rest| rest.starts_with(' '))
            }
            CommandPattern::Exact(exact) => command == *exact,
            CommandPattern::Wildcard(pattern) => glob_matches(pattern, &command, false),
            CommandPattern::Programs(programs) => command_rule::program_by_name(&command)
                .is_some_and(|program| programs.iter().any(|allowed| allowed == program)),
        }
    }
}

/// Whether `text` matches `pattern`, where `*` is any run of characters (not `/` when
/// `paths`, where `**` as a path component is any number of folders, as in gitignore).
/// Only `*` is special: the rest is escaped, since `[`, `?` and `{` appear in commands.
/// globset compiles the pattern to a regex, so a hostile one cannot make matching
/// backtrack; one it cannot compile matches nothing (the call asks as usual).
pub(crate) fn glob_matches(pattern: &str, text: &str, paths: bool) -> bool {
    let escaped = pattern
        .split('*')
        .map(globset::escape)
        .collect::<Vec<_>>()
        .join("*");
    GlobBuilder::new(&escaped)
        .literal_separator(paths)
        .backslash_escape(false)
        .build()
        .is_ok_and(|glob| glob.compile_matcher().is_match(text))
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    fn approvals(entries: &[&str]) -> SkillApprovals {
        SkillApprovals::from_entries(
            "demo",
            &entries.iter().map(|entry| entry.to_string()).collect::<Vec<_>>(),
        )
    }

    #[test]
    fn claude_style_names_map_to_miniagents_tools() {
        let mapped = approvals(&[
            "Read",
            "Write",
            "Edit",
            "Bash(git diff:*)",
            "Bash(uv run *)",
            "Bash(npm test)",
            "Grep",
            "Glob",
            "WebFetch",
            "mcp__github__create_issue",
            "Edit(docs/**)",
        ]);
        assert_eq!(
            mapped.describe(),
            vec![
                "write_file",
                "edit_file",
                "bash: `git diff …`",
                "bash: `uv run …`",
                "bash: `npm test`",
                "bash: grep, egrep, fgrep, rg",
                "bash: find, ls",
                "edit_file: docs/**",
            ]
        );
        assert_eq!(
            mapped.ignored,
            vec![
                "Read: reading runs without asking anyway",
                "WebFetch: not a miniagent tool; ignored",
                "mcp__github__create_issue: MCP tools act outside the sandbox and are never pre-approved",
            ]
        );
        assert_eq!(approvals(&["Bash"]).describe(), vec!["bash: any command"]);
        assert_eq!(approvals(&["Bash(*)"]).describe(), vec!["bash: any command"]);
        assert_eq!(approvals(&["read_file"]).describe(), Vec::<String>::new());
    }

    /// Every built-in tool is known by its own name: the ones that change something are
    /// granted, the reading ones said to need no grant. `delegate` had been missing from a
    /// hand-kept list, so a skill naming it was told it was "not a miniagent tool".
    #[test]
    fn every_built_in_tool_is_known_by_its_name() {
        for (name, effect) in crate::tools::BUILTIN_TOOLS {
            let read = approvals(&[name]);
            if *effect == crate::tools::ToolEffect::ReadOnly {
                assert_eq!(
                    (read.describe(), read.ignored),
                    (
                        Vec::<String>::new(),
                        vec![format!("{name}: reading runs without asking anyway")]
                    )
                );
            } else {
                assert_eq!(read.ignored, Vec::<String>::new(), "{name}");
                assert!(!read.grants.is_empty(), "{name}");
            }
        }
    }

    #[test]
    fn command_patterns_cover_one_simple_command() {
        let workspace = Workspace::new(std::path::Path::new("/nonexistent-ws"), &[]);
        let covers = |entries: &[&str], command: &str| {
            approvals(entries).covers("bash", Some(command), &[], &workspace)
        };
        assert!(covers(&["Bash(git status:*)"], "git status"));
        assert!(covers(&["Bash(git status:*)"], "git  status --short"));
        assert!(!covers(&["Bash(git status:*)"], "git statusx"));
        assert!(!covers(&["Bash(git status:*)"], "git status; rm -rf ~"));
        assert!(!covers(&["Bash(git status:*)"], "git status && touch x"));
        assert!(!covers(&["Bash(git status:*)"], "git status $(touch x)"));
        assert!(!covers(&["Bash(git status:*)"], "git status > out"));
        assert!(!covers(&["Bash(git status:*)"], "git log"));
        assert!(covers(&["Bash(npm test)"], "npm test"));
        assert!(!covers(&["Bash(npm test)"], "npm test -- --update"));
        assert!(covers(&["Bash(uv run * --check)"], "uv run ruff --check"));
        assert!(covers(&["Grep"], "rg -n TODO src"));
        assert!(!covers(&["Grep"], "rg --pre sh TODO"));
        assert!(covers(&["Glob"], "find . -name '*.rs'"));
        assert!(!covers(&["Glob"], "find . -delete"));
        assert!(!covers(&["Glob"], "find . -exec rm {} +"));
        // `Bash` alone pre-approves the tool, compound commands included.
        assert!(covers(&["Bash"], "cargo test 2>&1 | tail"));
        assert!(!covers(&["Edit"], "ls"));
    }

    #[test]
    fn path_patterns_cover_paths_inside_the_workspace_only() {
        let scratch = std::env::temp_dir().join(format!("miniagent-pre-approval-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&scratch);
        std::fs::create_dir_all(scratch.join("docs/deep")).unwrap();
        let root = scratch.canonicalize().unwrap();
        let workspace = Workspace::new(&root, &[]);
        let docs = approvals(&["Edit(docs/**)", "Write(*.md)"]);
        let covers = |tool: &str, path: &str| docs.covers(tool, None, &[path.to_string()], &workspace);
        assert!(covers("edit_file", "docs/a.md"));
        assert!(covers("edit_file", "docs/deep/b.md"));
        assert!(covers("edit_file", "./docs/../docs/c.md"));
        assert!(!covers("edit_file", "src/main.rs"));
        assert!(!covers("edit_file", "../outside/docs/a.md"));
        assert!(covers("write_file", "README.md"));
        assert!(!covers("write_file", "docs/a.md"), "`*` stays within one folder");
        std::fs::remove_dir_all(scratch).unwrap();
    }

    #[test]
    fn double_star_matches_any_number_of_folders_as_in_gitignore() {
        assert!(glob_matches("src/**/*.rs", "src/main.rs", true));
        assert!(glob_matches("src/**/*.rs", "src/a/b/lib.rs", true));
        assert!(glob_matches("**/*.md", "README.md", true));
        assert!(glob_matches("**/*.md", "docs/deep/a.md", true));
        assert!(!glob_matches("src/**/*.rs", "src/main.py", true));
        assert!(!glob_matches("src/*.rs", "src/a/lib.rs", true));
        // Only `*` is special: brackets, braces, `?` and backslashes are themselves.
        assert!(glob_matches("a[1]?{b}\\*", "a[1]?{b}\\x", true));
        assert!(!glob_matches("a?", "ab", true));
        assert!(glob_matches("echo [x] *", "echo [x] a/b", false));
    }

    #[test]
    fn globs_match_without_backtracking_blowup() {
        assert!(glob_matches("a*b*c", "axxbyyc", false));
        assert!(!glob_matches("a*b*c", "axxbyy", false));
        let text = "a".repeat(10_000);
        assert!(!glob_matches(&format!("{}b", "*a".repeat(50)), &text, false));
    }
}
