//! Prompt commands: Markdown files under `<config dir>/commands/` (the person's) and the
//! trusted workspace's `.miniagent/commands/`, each a slash command whose text, with its
//! arguments substituted, is sent as the person's message; a sub-folder is a namespace
//! (`commands/git/commit.md` is `/git:commit`). `/init` is built in.
//!
//! Which wins when names meet: a built-in always, then the person's own over the
//! workspace's (a repository cannot change what a command the person wrote does); the one
//! left out is named in a warning.

use std::path::{Path, PathBuf};

use miniagent_protocol::CommandInfo;

use crate::tools::skills::front_matter::{self, YamlValue};

/// Bytes of one command file at most.
pub const MAX_FILE_BYTES: u64 = 64 * 1024;
/// Commands taken from one folder at most.
pub const MAX_COMMANDS: usize = 500;
/// Sub-folders deep a command may be (`a:b:c:name`).
const MAX_DEPTH: usize = 3;
/// Characters of one part of a name at most.
const MAX_NAME_PART: usize = 64;
/// Characters of a description or argument hint kept.
const MAX_DESCRIPTION: usize = 200;

/// `/init`'s prompt: the model surveys the workspace and writes a starting `AGENTS.md`.
pub const INIT_PROMPT: &str = include_str!("commands/init.md");

/// Where a command came from; earlier wins.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum CommandSource {
    BuiltIn,
    User,
    Workspace,
}

impl CommandSource {
    fn label(self) -> &'static str {
        match self {
            CommandSource::BuiltIn => "built-in",
            CommandSource::User => "user",
            CommandSource::Workspace => "workspace",
        }
    }
}

/// One prompt command.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PromptCommand {
    pub name: String,
    pub description: String,
    pub argument_hint: Option<String>,
    pub source: CommandSource,
    /// The file it was read from (`None`: built in).
    pub path: Option<PathBuf>,
    /// Its text, with `$ARGUMENTS` and `$1`…`$9` still in it.
    pub template: String,
}

/// The session's prompt commands, sorted by name, and what was left out.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PromptCommands {
    commands: Vec<PromptCommand>,
    warnings: Vec<String>,
}

impl PromptCommands {
    /// The built-in commands, the person's under `user` and the workspace's under
    /// `workspace` (pass it only when the workspace is trusted).
    pub fn discover(user: Option<&Path>, workspace: Option<&Path>) -> Self {
        let mut found = Self {
            commands: vec![PromptCommand {
                name: "init".to_string(),
                description: "Ask the model to write a starting AGENTS.md for this workspace".to_string(),
                argument_hint: Some("[what to stress]".to_string()),
                source: CommandSource::BuiltIn,
                path: None,
                template: INIT_PROMPT.trim().to_string(),
            }],
            warnings: Vec::new(),
        };
        for (folder, source) in [(user, CommandSource::User), (workspace, CommandSource::Workspace)] {
            if let Some(folder) = folder {
                found.read_folder(folder, source);
            }
        }
        found.commands.sort_by(|a, b| a.name.cmp(&b.name));
        found
    }

    fn read_folder(&mut self, folder: &Path, source: CommandSource) {
        let mut files = Vec::new();
        collect(folder, &mut Vec::new(), &mut files, &mut self.warnings);
        files.sort();
        if files.len() > MAX_COMMANDS {
            self.warnings.push(format!(
                "{}: holds {} commands; only the first {MAX_COMMANDS} are offered",
                folder.display(),
                files.len()
            ));
            files.truncate(MAX_COMMANDS);
        }
        for (name, path) in files {
            let command = match read_command(&path, name, source) {
                Ok(command) => command,
                Err(why) => {
                    self.warnings
                        .push(format!("{}: not offered as a command: {why}", path.display()));
                    continue;
                }
            };
            if let Some(holder) = self.commands.iter().find(|other| other.name == command.name) {
                self.warnings.push(format!(
                    "{}: not offered: the {} command /{} has its name",
                    path.display(),
                    holder.source.label(),
                    holder.name
                ));
                continue;
            }
            self.commands.push(command);
        }
    }

    pub fn commands(&self) -> &[PromptCommand] {
        &self.commands
    }

    pub fn warnings(&self) -> &[String] {
        &self.warnings
    }

    /// The commands as front ends are told of them.
    pub fn infos(&self) -> Vec<CommandInfo> {
        self.commands
            .iter()
            .map(|command| CommandInfo {
                name: command.name.clone(),
                description: command.description.clone(),
                argument_hint: command.argument_hint.clone(),
                source: command.source.label().to_string(),
            })
            .collect()
    }

    /// The message command `name` sends with `arguments`; `None`: no such command.
    pub fn expand(&self, name: &str, arguments: &str) -> Option<String> {
        let command = self.commands.iter().find(|command| command.name == name)?;
        Some(expand(&command.template, arguments))
    }
}

/// Command files under `folder` (names built from `prefix`), as `(name, path)`. Links are
/// not followed: a folder's files are the ones it holds.
fn collect(
    folder: &Path,
    prefix: &mut Vec<String>,
    files: &mut Vec<(String, PathBuf)>,
    warnings: &mut Vec<String>,
) {
    let Ok(entries) = std::fs::read_dir(folder) else {
        return;
    };
    let mut entries: Vec<std::fs::DirEntry> = entries.flatten().take(MAX_COMMANDS * 4).collect();
    entries.sort_by_key(std::fs::DirEntry::file_name);
    for entry in entries {
        let path = entry.path();
        let Ok(kind) = entry.file_type() else { continue };
        let file_name = entry.file_name();
        let Some(file_name) = file_name.to_str() else {
            warnings.push(format!("{}: not offered: its name is not UTF-8", path.display()));
            continue;
        };
        if file_name.starts_with('.') {
            continue;
        }
        let stem = if kind.is_dir() {
            file_name
        } else if let Some(stem) = file_name.strip_suffix(".md") {
            stem
        } else {
            continue;
        };
        if !valid_part(stem) {
            warnings.push(format!(
                "{}: not offered: a command's name takes letters, digits, - and _ (at most {MAX_NAME_PART})",
                miniagent_text::visible(&path.display().to_string())
            ));
            continue;
        }
        if kind.is_dir() {
            if prefix.len() >= MAX_DEPTH {
                warnings.push(format!(
                    "{}: not read: commands nest at most {MAX_DEPTH} folders deep",
                    path.display()
                ));
                continue;
            }
            prefix.push(stem.to_string());
            collect(&path, prefix, files, warnings);
            prefix.pop();
        } else if kind.is_file() {
            let mut parts = prefix.clone();
            parts.push(stem.to_string());
            files.push((parts.join(":"), path));
        }
    }
}

fn valid_part(part: &str) -> bool {
    !part.is_empty()
        && part.chars().count() <= MAX_NAME_PART
        && part
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
}

/// Reads one command file: optional front matter (`description`, `argument-hint`), then
/// the prompt. Without a description, its first line stands for one.
fn read_command(path: &Path, name: String, source: CommandSource) -> Result<PromptCommand, String> {
    let bytes =
        match crate::tools::files::read_at_most(path, MAX_FILE_BYTES).map_err(|err| err.to_string())? {
            crate::tools::files::Capped::Whole(bytes) => bytes,
            crate::tools::files::Capped::TooLarge(size) => {
                return Err(format!(
                    "it is {size} bytes, more than the {MAX_FILE_BYTES} a command may be"
                ));
            }
        };
    let text = String::from_utf8(bytes).map_err(|_| "it is not UTF-8 text".to_string())?;
    let text = miniagent_text::for_model(&text).into_owned();
    let (fields, body) = if text.trim_start_matches('\u{feff}').starts_with("---") {
        let document = front_matter::split(&text)?;
        let fields = front_matter::parse(&document.yaml).map_err(|err| format!("front matter {err}"))?;
        (fields, document.body)
    } else {
        (Vec::new(), text)
    };
    let field = |key: &str| {
        fields.iter().find_map(|(name, value)| match value {
            YamlValue::Text(text) if name == key => Some(one_line(text)),
            _ => None,
        })
    };
    let template = body.trim().to_string();
    if template.is_empty() {
        return Err("it holds no prompt".to_string());
    }
    let description = field("description")
        .filter(|text| !text.is_empty())
        .unwrap_or_else(|| {
            one_line(
                template
                    .lines()
                    .next()
                    .unwrap_or_default()
                    .trim_start_matches('#'),
            )
        });
    Ok(PromptCommand {
        name,
        description,
        argument_hint: field("argument-hint").filter(|hint| !hint.is_empty()),
        source,
        path: Some(path.to_path_buf()),
        template,
    })
}

/// One line of at most [`MAX_DESCRIPTION`] characters, nothing a terminal acts on.
fn one_line(text: &str) -> String {
    let text = miniagent_text::clean(text);
    let line = text.split_whitespace().collect::<Vec<_>>().join(" ");
    match line.char_indices().nth(MAX_DESCRIPTION) {
        Some((cut, _)) => format!("{}…", &line[..cut]),
        None => line,
    }
}

/// `template` with `$ARGUMENTS` (the whole argument text) and `$1`…`$9` (its words,
/// split as a shell would, quotes honoured) put in, in one pass: an argument's own `$1`
/// stays as written. Arguments given to a template that takes none follow it.
pub fn expand(template: &str, arguments: &str) -> String {
    let arguments = arguments.trim();
    let words = split_words(arguments);
    let mut out = String::with_capacity(template.len() + arguments.len());
    let mut used = false;
    let mut rest = template;
    while let Some(at) = rest.find('$') {
        out.push_str(&rest[..at]);
        let after = &rest[at + 1..];
        if let Some(tail) = after.strip_prefix("ARGUMENTS") {
            out.push_str(arguments);
            used = true;
            rest = tail;
        } else if let Some(digit) = after
            .chars()
            .next()
            .and_then(|c| c.to_digit(10))
            .filter(|d| *d >= 1)
        {
            let index = usize::try_from(digit).unwrap_or(usize::MAX) - 1;
            out.push_str(words.get(index).map(String::as_str).unwrap_or_default());
            used = true;
            rest = &after[1..];
        } else {
            out.push('$');
            rest = after;
        }
    }
    out.push_str(rest);
    if !used && !arguments.is_empty() {
        out.push_str("\n\nARGUMENTS: ");
        out.push_str(arguments);
    }
    out
}

/// Words as a shell splits them: whitespace apart, `'…'` as written, `"…"` with `\"`
/// and `\\`, a backslash outside quotes taking the next character as it is. An unclosed
/// quote runs to the end.
pub fn split_words(text: &str) -> Vec<String> {
    let mut words = Vec::new();
    let mut word = String::new();
    let mut in_word = false;
    let mut chars = text.chars();
    while let Some(c) = chars.next() {
        match c {
            c if c.is_whitespace() => {
                if in_word {
                    words.push(std::mem::take(&mut word));
                    in_word = false;
                }
            }
            '\'' => {
                in_word = true;
                for c in chars.by_ref() {
                    if c == '\'' {
                        break;
                    }
                    word.push(c);
                }
            }
            '"' => {
                in_word = true;
                while let Some(c) = chars.next() {
                    match c {
                        '"' => break,
                        '\\' => match chars.next() {
                            Some(next @ ('"' | '\\')) => word.push(next),
                            Some(next) => {
                                word.push('\\');
                                word.push(next);
                            }
                            None => word.push('\\'),
                        },
                        c => word.push(c),
                    }
                }
            }
            '\\' => {
                in_word = true;
                if let Some(next) = chars.next() {
                    word.push(next);
                }
            }
            c => {
                in_word = true;
                word.push(c);
            }
        }
    }
    if in_word {
        words.push(word);
    }
    words
}

#[cfg(test)]
mod tests;
