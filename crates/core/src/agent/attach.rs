//! `@path` in the person's message attaches that file: its text goes with the message
//! (capped, the model told what was cut), or for a large file a reference telling the
//! model to read it with `read_file`. Files are found through the workspace's
//! confinement, as the file tools find them: a path that leads out of the workspace
//! (through `..` or a link) or into miniagent's own folders, and a binary file, are
//! refused with a note instead. An `@word` that names no file stays plain text.
//!
//! The attachments are extra text blocks of the person's message, so they are in the
//! history, the session log and every request after, and survive resume like any
//! message; front ends hear of them as [`Event::FilesAttached`].

use std::collections::HashSet;
use std::io::Read;
use std::path::Path;

use super::history::{ContentBlock, Message};
use crate::secrets::Secrets;
use crate::tools::paths::{Access, Kind, Located, Workspace};
use miniagent_protocol::{Attached, AttachedFile, Event};

/// Mentions looked at in one message; more are left as plain text.
pub(crate) const MAX_MENTIONS: usize = 20;
/// Bytes of one file's text attached whole; a longer file's first lines go instead.
pub(crate) const MAX_FILE_BYTES: usize = 32 * 1024;
/// Lines of one file attached whole; a longer file's first lines go instead.
pub(crate) const MAX_FILE_LINES: usize = 400;
/// Above this size a file is attached by reference only (and never read).
pub(crate) const REFERENCE_ABOVE: u64 = 256 * 1024;
/// Bytes of file text one message carries over all its attachments; files after the
/// budget is spent go by reference.
pub(crate) const MAX_MESSAGE_BYTES: usize = 96 * 1024;

/// What ends a mention besides whitespace, when the path with it names no file
/// (`see @src/main.rs.`).
const TRAILING: &[char] = &['.', ',', ';', ':', '!', '?', ')', ']', '}', '\'', '"', '`'];

/// The person's message with its attachments.
pub(crate) struct WithAttachments {
    pub message: Message,
    pub files: Vec<AttachedFile>,
}

impl WithAttachments {
    /// The event that tells front ends, when the message named any file.
    pub fn event(&self) -> Option<Event> {
        (!self.files.is_empty()).then(|| Event::FilesAttached {
            files: self.files.clone(),
        })
    }
}

/// The person's own words in a message this module built: its first block (the
/// attachments are the blocks after it).
pub(crate) fn persons_words(message: &Message) -> String {
    match message.content.first() {
        Some(ContentBlock::Text { text }) => text.clone(),
        _ => message.text(),
    }
}

/// Why the `[permissions]` rules keep a file from being attached (a deny or ask rule for
/// reading it), given its path as the message named it; `None`: nothing keeps it.
pub(crate) type RuleCheck = Box<dyn Fn(&str) -> Option<String> + Send>;

/// `text` as a user message, with the files its mentions name attached. Reads files:
/// call it off the async workers.
pub(crate) fn attach(
    workspace: &Workspace,
    secrets: &Secrets,
    text: String,
    rules: &RuleCheck,
) -> WithAttachments {
    let mut content = Vec::new();
    let mut files = Vec::new();
    let mut seen = HashSet::new();
    let mut budget = MAX_MESSAGE_BYTES;
    for candidates in mentions(&text) {
        let Some((file, block)) = candidates
            .iter()
            .find_map(|path| attach_one(workspace, path, &mut budget, &mut seen, rules))
        else {
            continue;
        };
        content.push(ContentBlock::Text {
            text: secrets.redact(&block).into_owned(),
        });
        files.push(file);
    }
    content.insert(0, ContentBlock::Text { text });
    WithAttachments {
        message: Message {
            role: super::history::Role::User,
            content,
        },
        files,
    }
}

/// Each `@path` of `text` (at its start or after whitespace; `@"a b.txt"` for a path with
/// spaces), as the paths to try in order: the word whole, then without trailing
/// punctuation. At most [`MAX_MENTIONS`], each once.
pub(crate) fn mentions(text: &str) -> Vec<Vec<String>> {
    let mut found: Vec<Vec<String>> = Vec::new();
    let mut previous: Option<char> = None;
    for (at, c) in text.char_indices() {
        let starts = c == '@' && previous.is_none_or(char::is_whitespace);
        previous = Some(c);
        if !starts {
            continue;
        }
        let rest = &text[at + 1..];
        let candidates = match rest.strip_prefix('"') {
            Some(quoted) => match quoted.find(['"', '\n']) {
                Some(end) if quoted[end..].starts_with('"') && end > 0 => vec![quoted[..end].to_string()],
                _ => continue,
            },
            None => {
                let word = rest.split(char::is_whitespace).next().unwrap_or_default();
                let trimmed = word.trim_end_matches(TRAILING);
                let mut candidates = vec![word.to_string()];
                if trimmed != word && !trimmed.is_empty() {
                    candidates.push(trimmed.to_string());
                }
                candidates
            }
        };
        if candidates[0].is_empty() || found.contains(&candidates) {
            continue;
        }
        found.push(candidates);
        if found.len() == MAX_MENTIONS {
            break;
        }
    }
    found
}

/// What one mention's path names.
enum Lookup {
    /// No file: the mention stays plain text.
    Plain,
    /// A file that may not be attached, and why.
    Refused(String),
    /// A file in the workspace, found.
    File(Located),
}

/// The file `path` names, attached (its chip and its text for the model); `None` when
/// it names no file or one already attached.
fn attach_one(
    workspace: &Workspace,
    path: &str,
    budget: &mut usize,
    seen: &mut HashSet<std::path::PathBuf>,
    rules: &RuleCheck,
) -> Option<(AttachedFile, String)> {
    let located = match look_up(workspace, path) {
        Lookup::Plain => return None,
        Lookup::Refused(reason) => return Some(refused(path, 0, reason)),
        Lookup::File(located) => located,
    };
    // What a rule keeps from `read_file` is not sent by a mention either.
    if let Some(reason) = rules(path) {
        return Some(refused(path, 0, reason));
    }
    if !seen.insert(located.path().to_path_buf()) {
        return None;
    }
    let shown = workspace.display(located.path());
    Some(read(&located, &shown, budget))
}

fn look_up(workspace: &Workspace, path: &str) -> Lookup {
    let located = match workspace.locate(path, Access::Read) {
        Ok(located) => located,
        // Refused by the confinement: said only when something is there (a typo of a
        // path stays plain text, as any `@word` that names nothing).
        Err(why) if exists_outside(workspace, path) => return Lookup::Refused(why.into()),
        Err(_) => return Lookup::Plain,
    };
    let real = located.path();
    if !real.starts_with(workspace.root()) {
        return Lookup::Refused(format!("it leads to {}, outside the workspace", real.display()));
    }
    match located.kind() {
        Ok(None | Some(Kind::Folder)) => Lookup::Plain,
        Ok(Some(Kind::Other)) => {
            Lookup::Refused("it is not a regular file (a device, pipe or socket)".into())
        }
        Ok(Some(Kind::File | Kind::Symlink)) if workspace.protects(real) => Lookup::Refused(
            "it is in miniagent's own folders (settings, sessions, logs), which are not attached".into(),
        ),
        Ok(Some(Kind::File | Kind::Symlink)) => Lookup::File(located),
        Err(err) => Lookup::Refused(format!("it cannot be read: {err}")),
    }
}

/// Whether a file is at `path` as the system would resolve it (links followed), for a
/// path the confinement refused: only to decide whether to say so.
fn exists_outside(workspace: &Workspace, path: &str) -> bool {
    let named = Path::new(path);
    let full = if named.is_absolute() {
        named.to_path_buf()
    } else {
        workspace.root().join(named)
    };
    std::fs::metadata(full).is_ok_and(|meta| meta.is_file())
}

fn refused(path: &str, bytes: u64, reason: String) -> (AttachedFile, String) {
    let block = format!("\n\n[@{path} was not attached: {reason}.]");
    let file = AttachedFile {
        path: path.to_string(),
        bytes,
        lines: None,
        attached: Attached::Refused { reason },
    };
    (file, block)
}

fn by_reference(shown: &str, bytes: u64, lines: Option<u64>) -> (AttachedFile, String) {
    let block = format!(
        "\n\n[Attached by reference: {shown:?} ({bytes} bytes) is too large to include here; read the parts you need with read_file.]"
    );
    let file = AttachedFile {
        path: shown.to_string(),
        bytes,
        lines,
        attached: Attached::Reference,
    };
    (file, block)
}

/// The found file read and attached: whole, its first lines, or by reference.
fn read(located: &Located, shown: &str, budget: &mut usize) -> (AttachedFile, String) {
    let opened = match located.open_file() {
        Ok(opened) => opened,
        Err(err) => return refused(shown, 0, err.message(shown)),
    };
    if opened.size > REFERENCE_ABOVE || *budget == 0 {
        return by_reference(shown, opened.size, None);
    }
    let mut bytes = Vec::new();
    // Bounded: the file may have grown since it was measured.
    if let Err(err) = (&opened.file).take(REFERENCE_ABOVE + 1).read_to_end(&mut bytes) {
        return refused(shown, opened.size, format!("it cannot be read: {err}"));
    }
    let size = bytes.len() as u64;
    if size > REFERENCE_ABOVE {
        return by_reference(shown, size, None);
    }
    // A NUL byte (or a hole, which reads as NULs) means binary, as for read_file.
    if bytes.contains(&0) {
        return refused(shown, size, "it is a binary file".into());
    }
    let text = String::from_utf8_lossy(&bytes);
    let total = text.lines().count();
    let lines = Some(total as u64);
    let limit = MAX_FILE_BYTES.min(*budget);
    if text.len() <= limit && total <= MAX_FILE_LINES {
        *budget -= text.len();
        let block = format!(
            "\n\n<file path={shown:?} lines=\"{total}\">\n{}\n</file>",
            text.trim_end_matches('\n')
        );
        let file = AttachedFile {
            path: shown.to_string(),
            bytes: size,
            lines,
            attached: Attached::Whole,
        };
        return (file, block);
    }
    let (part, taken) = first_lines(&text, limit, MAX_FILE_LINES);
    if taken == 0 {
        return by_reference(shown, size, lines);
    }
    *budget -= part.len();
    let block = format!(
        "\n\n<file path={shown:?} lines=\"1-{taken}\" of=\"{total}\">\n{part}\n</file>\n[Only lines 1-{taken} of {shown:?} ({total} lines) were attached; read the rest with read_file (offset {}).]",
        taken + 1
    );
    let file = AttachedFile {
        path: shown.to_string(),
        bytes: size,
        lines,
        attached: Attached::Part { lines: taken as u64 },
    };
    (file, block)
}

/// The first whole lines of `text` within `max_bytes` and `max_lines`, and how many.
fn first_lines(text: &str, max_bytes: usize, max_lines: usize) -> (&str, usize) {
    let mut end = 0;
    let mut taken = 0;
    for line in text.split_inclusive('\n').take(max_lines) {
        if end + line.len() > max_bytes {
            break;
        }
        end += line.len();
        taken += 1;
    }
    (text[..end].trim_end_matches('\n'), taken)
}

#[cfg(test)]
mod tests;
