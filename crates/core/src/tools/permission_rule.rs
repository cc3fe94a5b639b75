//! Matching the `[permissions]` rules (`config::permissions`) against tool calls.
//!
//! A rule names tools (`bash`, `mcp__github__*`) and, in parentheses, what a call's
//! subject ([`ToolCall::rule_subject`]) must be: a command line for `bash`, a path for the
//! file tools, `domain:<host>` for `web_fetch`. Deny wins over ask, ask over allow.
//!
//! A command line is read as the shell reads it ([`split`]): a prefix rule covers one
//! simple command, so `git status; rm -rf x` is not `bash(git status*)`. For `allow` a
//! compound command is covered only when it splits cleanly into simple commands (no
//! substitution, subshell or redirection) and each is allowed. For `deny` and `ask` every
//! command found anywhere in the line counts, with leading variable assignments and
//! wrappers (`env`, `sudo`, `timeout 5`, …) taken off and `sh -c '…'` looked into: a deny
//! rule is meant to hold however the command is dressed. It is still a rule about the
//! words of a command line, not a sandbox: a script, an alias or an interpreter can run
//! anything (the README says so).
//!
//! A path is matched from the workspace root (absolute outside it), both as written (with
//! `.` and `..` folded) and as it resolves through symlinks: `deny` and `ask` hold when
//! either form matches, `allow` only when both do, so `src/../.git/config` or a link in
//! `src/` to elsewhere does not pass as `src/**`.

use std::path::{Path, PathBuf};

use miniagent_protocol::{PermanentRule, RuleList, RuleSource};

use super::command_rule;
use super::paths::{Access, Workspace, normalize};
use super::skills::glob_matches;
use super::typed::ToolCall;
use crate::config::permissions::{PATH_TOOLS, Pattern};
use crate::config::{Config, PermissionSettings};

/// How deep `sh -c '…'` is looked into for deny and ask rules.
const NESTING: usize = 3;

/// Programs that run the command in their arguments: taken off before deny and ask rules
/// are matched, with their options.
const WRAPPERS: &[&str] = &[
    "env", "command", "exec", "nohup", "time", "nice", "sudo", "doas", "builtin", "xargs", "timeout",
    "stdbuf", "setsid", "ionice", "chrt", "taskset", "unbuffer", "unshare", "watch",
];

/// The shell's own words that may stand before a command in a compound one
/// (`{ rm x; }`, `if true; then rm x; fi`, `! rm x`, `coproc rm x`): taken off too, so the
/// command after them is what deny and ask rules see.
const RESERVED: &[&str] = &[
    "{", "}", "!", "if", "then", "elif", "else", "fi", "while", "until", "do", "done", "coproc", "select",
    "in", "esac", "case",
];

/// Shells whose `-c` argument is a command line.
const SHELLS: &[&str] = &["sh", "bash", "zsh", "dash", "ksh", "fish"];

/// One rule in force.
#[derive(Clone, Debug)]
struct Rule {
    listed: PermanentRule,
    pattern: Pattern,
}

/// The rules of a session: the user's configuration and the trusted workspace's, and the
/// ones `A` added since.
#[derive(Clone, Debug, Default)]
pub struct PermissionRules {
    rules: Vec<Rule>,
    home: Option<PathBuf>,
    user_file: Option<PathBuf>,
}

/// A pattern that is not a rule, in the words of [`Pattern::parse`].
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("`{pattern}` is not a rule: {why}")]
pub struct BadRule {
    pub pattern: String,
    pub why: String,
}

impl PermissionRules {
    /// The rules `config` gives (checked when it was loaded).
    pub fn from_config(config: &Config) -> PermissionRules {
        let sources = &config.permission_sources;
        let mut rules = PermissionRules {
            rules: Vec::new(),
            home: sources.home.clone(),
            user_file: sources.user_file.clone(),
        };
        rules.extend(&config.permissions, RuleSource::User);
        rules.extend(&sources.workspace, RuleSource::Workspace);
        rules
    }

    fn extend(&mut self, settings: &PermissionSettings, source: RuleSource) {
        for (list, pattern) in settings.entries() {
            // Each was checked at load; one that is not a rule covers nothing.
            let _ = self.add(PermanentRule {
                list,
                pattern: pattern.to_string(),
                source,
            });
        }
    }

    /// Adds a rule; false when it was there already.
    pub fn add(&mut self, rule: PermanentRule) -> Result<bool, BadRule> {
        let pattern = Pattern::parse(&rule.pattern).map_err(|why| BadRule {
            pattern: rule.pattern.clone(),
            why,
        })?;
        if self.rules.iter().any(|kept| kept.listed == rule) {
            return Ok(false);
        }
        self.rules.push(Rule {
            listed: rule,
            pattern,
        });
        Ok(true)
    }

    /// Removes a rule; false when there was no such rule.
    pub fn remove(&mut self, rule: &PermanentRule) -> bool {
        let before = self.rules.len();
        self.rules.retain(|kept| kept.listed != *rule);
        self.rules.len() != before
    }

    /// The rules, deny first, each list in the order written.
    pub fn listed(&self) -> Vec<PermanentRule> {
        let mut listed: Vec<PermanentRule> = self.rules.iter().map(|rule| rule.listed.clone()).collect();
        listed.sort_by_key(|rule| match rule.list {
            RuleList::Deny => 0,
            RuleList::Ask => 1,
            RuleList::Allow => 2,
        });
        listed
    }

    /// The user's `config.toml`, where `A` saves a rule.
    pub fn user_file(&self) -> Option<&Path> {
        self.user_file.as_deref()
    }

    /// The rule that decides a call of `tool`: the first deny rule covering it, else the
    /// first ask rule, else the first allow rule.
    pub fn decide(
        &self,
        tool: &str,
        call: &dyn ToolCall<'_>,
        workspace: &Workspace,
    ) -> Option<&PermanentRule> {
        if self.rules.is_empty() {
            return None;
        }
        let subject = Subject::of(tool, call, workspace);
        let of = |list: RuleList| self.rules.iter().filter(move |rule| rule.listed.list == list);
        let found = of(RuleList::Deny)
            .chain(of(RuleList::Ask))
            .find(|rule| self.covers(&rule.pattern, rule.listed.list, tool, &subject));
        if let Some(rule) = found {
            return Some(&rule.listed);
        }
        match &subject {
            // Each command of a compound one may be allowed by another rule.
            Subject::Command(command) if tool == "bash" => {
                let command = &joined_lines(command);
                if let Some(whole) = of(RuleList::Allow)
                    .find(|rule| rule.pattern.spec.is_none() && glob_matches(&rule.pattern.tool, tool, false))
                {
                    return Some(&whole.listed);
                }
                let parts = split(command);
                let mut allowed = parts.commands.iter().map(|part| {
                    let part = Subject::Command(part.clone());
                    of(RuleList::Allow).find(|rule| self.covers(&rule.pattern, RuleList::Allow, tool, &part))
                });
                let first = allowed.next().flatten()?;
                (parts.clean && allowed.all(|rule| rule.is_some())).then_some(&first.listed)
            }
            _ => of(RuleList::Allow)
                .find(|rule| self.covers(&rule.pattern, RuleList::Allow, tool, &subject))
                .map(|rule| &rule.listed),
        }
    }

    /// Whether `pattern`, as an allow rule, covers this call (what `A` saves must).
    pub fn allows(&self, pattern: &str, tool: &str, call: &dyn ToolCall<'_>, workspace: &Workspace) -> bool {
        Pattern::parse(pattern).is_ok_and(|pattern| {
            self.covers(
                &pattern,
                RuleList::Allow,
                tool,
                &Subject::of(tool, call, workspace),
            )
        })
    }

    fn covers(&self, pattern: &Pattern, list: RuleList, tool: &str, subject: &Subject) -> bool {
        if !glob_matches(&pattern.tool, tool, false) {
            return false;
        }
        let Some(spec) = &pattern.spec else {
            return true;
        };
        match subject {
            Subject::None => false,
            Subject::Command(command) if tool == "bash" => command_matches(spec, command, list),
            Subject::Command(text) => glob_matches(spec, text, false),
            Subject::Paths(paths) => {
                let spec = self.path_pattern(spec);
                let matches = |path: &PathForm| path.matches(&spec);
                match list {
                    RuleList::Allow => !paths.is_empty() && paths.iter().all(matches),
                    RuleList::Ask | RuleList::Deny => paths.iter().any(matches),
                }
            }
        }
    }

    /// A path pattern as it is matched: `~/` is the home folder, `./` the workspace root.
    fn path_pattern(&self, spec: &str) -> String {
        match (spec.strip_prefix("~/"), &self.home) {
            (Some(rest), Some(home)) => home.join(rest).display().to_string(),
            _ => spec.strip_prefix("./").unwrap_or(spec).to_string(),
        }
    }
}

/// What a call's rules are matched against.
enum Subject {
    None,
    /// A command line, or another tool's subject (`domain:docs.rs`).
    Command(String),
    /// A file tool's path as written and as it resolves.
    Paths(Vec<PathForm>),
}

/// One form of a file tool's path: absolute, and from the workspace root when inside it.
#[derive(Debug, PartialEq, Eq)]
struct PathForm {
    absolute: String,
    relative: Option<String>,
}

impl PathForm {
    fn new(path: &Path, roots: [&Path; 2]) -> PathForm {
        PathForm {
            absolute: path.display().to_string(),
            relative: roots
                .iter()
                .find_map(|root| path.strip_prefix(root).ok())
                .map(|relative| relative.display().to_string()),
        }
    }

    /// An absolute pattern (`/etc/**`, `~/.ssh/**`) matches the absolute form; another,
    /// the form from the workspace root.
    fn matches(&self, pattern: &str) -> bool {
        if pattern.starts_with('/') {
            glob_matches(pattern, &self.absolute, true)
        } else {
            self.relative
                .as_ref()
                .is_some_and(|relative| glob_matches(pattern, relative, true))
        }
    }
}

impl Subject {
    fn of(tool: &str, call: &dyn ToolCall<'_>, workspace: &Workspace) -> Subject {
        match call.rule_subject() {
            None => Subject::None,
            Some(path) if PATH_TOOLS.contains(&tool) => {
                let access = if tool == "read_file" {
                    Access::Read
                } else {
                    Access::Write
                };
                Subject::Paths(path_subjects(&path, workspace, access))
            }
            Some(text) => Subject::Command(text),
        }
    }
}

/// `raw` as written with `.` and `..` folded, and as it resolves, when it does.
fn path_subjects(raw: &str, workspace: &Workspace, access: Access) -> Vec<PathForm> {
    let root = workspace.root();
    let real_root = root.canonicalize().unwrap_or_else(|_| root.to_path_buf());
    let roots = [root, real_root.as_path()];
    let written = Path::new(raw);
    let written = if written.is_absolute() {
        written.to_path_buf()
    } else {
        root.join(written)
    };
    let mut subjects = vec![PathForm::new(&normalize(&written), roots)];
    if let Ok(real) = workspace.resolve(raw, access) {
        subjects.push(PathForm::new(&real, roots));
    }
    subjects.dedup();
    subjects
}

/// Whether a `bash(…)` spec covers `command`, for `list`.
fn command_matches(spec: &str, command: &str, list: RuleList) -> bool {
    let command = &joined_lines(command);
    match list {
        // One simple command (`decide` cuts a compound one and asks for each part).
        RuleList::Allow => {
            let parts = split(command);
            parts.clean
                && parts.commands.len() == 1
                && command_rule::shell_words(command)
                    .filter(|words| !words.is_empty())
                    .is_some_and(|words| spec_matches(spec, &joined(words.iter().map(|w| w.text.as_str()))))
        }
        RuleList::Ask | RuleList::Deny => {
            let mut forms = Vec::new();
            every_form(command, 0, &mut forms);
            forms.iter().any(|form| spec_matches(spec, form))
        }
    }
}

/// `command` with its line continuations (a backslash before a newline) taken out, as
/// the shell takes them out: `r\<newline>m` is `rm`.
fn joined_lines(command: &str) -> String {
    command.replace("\\\r\n", "").replace("\\\n", "")
}

/// Whether `spec` matches one command's words: `*` is any run of characters, and a
/// final ` *` or `:*` (Claude Code's form) is the words before it, alone or followed by
/// more (`git status:*` covers `git status` and `git status -s`, not `git statusx`).
fn spec_matches(spec: &str, line: &str) -> bool {
    let spec = joined(spec.split_whitespace());
    match spec.strip_suffix(":*").or_else(|| spec.strip_suffix(" *")) {
        Some(prefix) if !prefix.is_empty() => {
            glob_matches(prefix, line, false) || glob_matches(&format!("{prefix} *"), line, false)
        }
        _ => glob_matches(&spec, line, false),
    }
}

fn joined<'a>(words: impl Iterator<Item = &'a str>) -> String {
    words.collect::<Vec<_>>().join(" ")
}

/// Every way `command` could be read as a command, for deny and ask rules: the line,
/// each command in it, each without its assignments and wrappers, and what `sh -c` runs.
fn every_form(command: &str, depth: usize, forms: &mut Vec<String>) {
    forms.push(joined(command.split_whitespace()));
    for part in split(command).commands {
        let words: Vec<String> = match command_rule::shell_words(&part) {
            Some(words) => words.into_iter().map(|word| word.text).collect(),
            // An unclosed quote (a part cut at a substitution): its words, roughly.
            None => part
                .replace(['\'', '"'], " ")
                .split_whitespace()
                .map(str::to_string)
                .collect(),
        };
        forms.push(joined(words.iter().map(String::as_str)));
        let mut bare = unwrapped(&words);
        if let Some(program) = bare.first_mut()
            && let Some(name) = program.rsplit('/').next()
        {
            *program = name.to_string();
        }
        forms.push(joined(bare.iter().map(String::as_str)));
        forms.extend(after_wrappers(&words));
        if depth < NESTING {
            for inner in inner_commands(&bare) {
                every_form(&inner, depth + 1, forms);
            }
        }
    }
}

/// How many words after a wrapper are each tried as the program it runs.
const WRAPPED_TRIES: usize = 16;

/// After a wrapper (named with or without its folder: `/usr/bin/env`), each of the next
/// words read as the program it runs, with what follows: a wrapper's options may take a
/// value (`sudo -u user rm`, `exec -a name rm`) that [`unwrapped`] cannot tell from the
/// program, so every reading is a form deny and ask rules are matched against.
fn after_wrappers(words: &[String]) -> Vec<String> {
    let base = |word: &str| word.rsplit('/').next().unwrap_or(word).to_string();
    let Some(at) = words
        .iter()
        .position(|word| WRAPPERS.contains(&base(word).as_str()))
    else {
        return Vec::new();
    };
    (at + 1..words.len())
        .take(WRAPPED_TRIES)
        .filter(|&start| !words[start].starts_with('-'))
        .map(|start| {
            let program = base(&words[start]);
            joined(std::iter::once(program.as_str()).chain(words[start + 1..].iter().map(String::as_str)))
        })
        .collect()
}

/// `words` without leading assignments (`FOO=1`) and wrappers with their options
/// (`sudo -u x`, `timeout 5`, `env -i`).
fn unwrapped(words: &[String]) -> Vec<String> {
    let is_assignment = |word: &str| {
        word.split_once('=').is_some_and(|(name, _)| {
            !name.is_empty()
                && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
                && !name.starts_with(|c: char| c.is_ascii_digit())
        })
    };
    let mut rest = words;
    loop {
        match rest.split_first() {
            Some((word, tail)) if is_assignment(word) || word.starts_with('-') => rest = tail,
            Some((word, tail)) if RESERVED.contains(&word.as_str()) => rest = tail,
            // `function f { rm x; }`, `coproc NAME { rm x; }`: a name before a brace is
            // not the program.
            Some((word, tail)) if word == "function" => rest = tail.get(1..).unwrap_or_default(),
            Some((_, tail)) if tail.first().is_some_and(|next| next == "{") => rest = &tail[1..],
            Some((word, tail)) if WRAPPERS.contains(&word.as_str()) => {
                rest = tail;
                // `timeout 5 x`, `nice -n 5 x`: a number is the wrapper's, not a program.
                while let Some((next, more)) = rest.split_first() {
                    if next.starts_with('-') || next.chars().next().is_some_and(|c| c.is_ascii_digit()) {
                        rest = more;
                    } else {
                        break;
                    }
                }
            }
            _ => return rest.to_vec(),
        }
    }
}

/// The command lines a shell (`sh -c '…'`) or `eval` would run.
fn inner_commands(words: &[String]) -> Vec<String> {
    let Some((program, args)) = words.split_first() else {
        return Vec::new();
    };
    if program == "eval" {
        return vec![args.join(" ")];
    }
    // `find . -exec rm -rf {} +`: what each of `-exec`, `-execdir`, `-ok` runs.
    if program == "find" {
        let mut inner = Vec::new();
        let mut words = args.iter();
        while let Some(word) = words.next() {
            if matches!(word.as_str(), "-exec" | "-execdir" | "-ok" | "-okdir") {
                let run: Vec<&str> = words
                    .by_ref()
                    .take_while(|word| !matches!(word.as_str(), ";" | "+"))
                    .map(String::as_str)
                    .collect();
                inner.push(run.join(" "));
            }
        }
        return inner;
    }
    if !SHELLS.contains(&program.as_str()) {
        return Vec::new();
    }
    args.iter()
        .position(|arg| arg.starts_with('-') && !arg.starts_with("--") && arg.contains('c'))
        // `bash -c -- 'rm x'`: the end of the options is not the command.
        .and_then(|index| args[index + 1..].iter().find(|arg| *arg != "--"))
        .cloned()
        .into_iter()
        .collect()
}

/// A command line cut into its commands.
#[derive(Debug, PartialEq, Eq)]
pub struct Parts {
    /// Each command's text, as written (quotes kept).
    pub commands: Vec<String>,
    /// Whether the line is only simple commands joined by `;`, `&&`, `||`, `|`, `&` or
    /// newlines: no substitution, subshell, redirection or unclosed quote, so its
    /// commands are all it runs.
    pub clean: bool,
}

/// Where the reading stands inside a command line.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Inside {
    Double,
    /// `$( … )`, or a subshell `( … )`.
    Substitution,
    Backticks,
}

/// Cuts `command` where the shell separates commands: at `;`, `&`, `|` and newlines, and
/// into and out of substitutions (`$(…)`, backticks, also inside double quotes),
/// subshells and redirections, which make it not clean. Quotes and backslashes are
/// honoured, so `echo 'a; b'` is one command.
pub fn split(command: &str) -> Parts {
    let mut parts = Parts {
        commands: Vec::new(),
        clean: true,
    };
    let mut current = String::new();
    let mut stack: Vec<Inside> = Vec::new();
    let mut chars = command.chars().peekable();
    let cut = |current: &mut String, commands: &mut Vec<String>| {
        let text = current.trim();
        if !text.is_empty() {
            commands.push(text.to_string());
        }
        current.clear();
    };
    while let Some(c) = chars.next() {
        let quoted = stack.last() == Some(&Inside::Double);
        match c {
            '\\' => {
                current.push(c);
                current.extend(chars.next());
            }
            '\'' if !quoted => {
                current.push(c);
                loop {
                    match chars.next() {
                        Some('\'') => {
                            current.push('\'');
                            break;
                        }
                        Some(c) => current.push(c),
                        None => {
                            parts.clean = false;
                            break;
                        }
                    }
                }
            }
            '"' if quoted => {
                stack.pop();
                current.push(c);
            }
            '"' => {
                stack.push(Inside::Double);
                current.push(c);
            }
            '$' if chars.peek() == Some(&'(') => {
                chars.next();
                parts.clean = false;
                stack.push(Inside::Substitution);
                cut(&mut current, &mut parts.commands);
            }
            '`' => {
                parts.clean = false;
                if stack.last() == Some(&Inside::Backticks) {
                    stack.pop();
                } else {
                    stack.push(Inside::Backticks);
                }
                cut(&mut current, &mut parts.commands);
            }
            _ if quoted => current.push(c),
            '(' => {
                parts.clean = false;
                stack.push(Inside::Substitution);
                cut(&mut current, &mut parts.commands);
            }
            ')' => {
                parts.clean = false;
                if stack.last() == Some(&Inside::Substitution) {
                    stack.pop();
                }
                cut(&mut current, &mut parts.commands);
            }
            '<' | '>' => {
                parts.clean = false;
                cut(&mut current, &mut parts.commands);
            }
            ';' | '&' | '|' | '\n' | '\r' => cut(&mut current, &mut parts.commands),
            _ => current.push(c),
        }
    }
    if !stack.is_empty() {
        parts.clean = false;
    }
    cut(&mut current, &mut parts.commands);
    parts
}

#[cfg(test)]
mod tests;
