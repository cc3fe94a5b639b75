//! Instruction files: `AGENTS.md` (the file Codex, opencode, Goose, Crush and Claude Code
//! read) and its fallbacks, from the user's config folder and from every folder between
//! the repository root and the workspace, merged top-down into the system prompt.
//!
//! They are plain text that steers the model, read without asking for trust (as Codex and
//! opencode read them): the session announces every file it used, so the person sees what
//! steers the agent. A file in the repository that is a link is followed only while it
//! stays inside the repository; anything but a regular file is skipped.

use std::io::Read;
use std::path::{Path, PathBuf};

use crate::config::InstructionSettings;

/// Bytes read of one file at most, whatever the cap says: a file a repository brings can
/// claim to be huge.
const MAX_FILE_BYTES: u64 = 1024 * 1024;

/// Folders looked at between the repository root and the workspace, at most (the root
/// and the workspace always).
const MAX_DEPTH: usize = 64;

/// One instruction file read for the prompt.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct InstructionFile {
    /// Where it was found (as found, not resolved through a link).
    pub path: PathBuf,
    /// Its text as it goes into the prompt: cleaned for the model, cut at the cap.
    pub text: String,
    /// The text was cut at `instructions.max_bytes` (or the file was larger than read).
    pub truncated: bool,
    /// From the user's config folder (applies to every project).
    pub user: bool,
}

/// The instruction files of a session, in the order they go into the prompt, and what
/// was skipped and why.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Instructions {
    pub files: Vec<InstructionFile>,
    /// One line each, for the person (a file left out, unreadable or cut).
    pub notices: Vec<String>,
}

impl Instructions {
    /// Reads the instruction files for `workspace`: the user's (in `config_dir`), then one
    /// per folder from the repository root down to the workspace.
    pub fn discover(settings: &InstructionSettings, config_dir: Option<&Path>, workspace: &Path) -> Self {
        let mut found = Self::default();
        if settings.files.is_empty() {
            return found;
        }
        let mut room = settings.max_bytes;
        if let Some(dir) = config_dir {
            found.take_first(settings, dir, None, true, &mut room);
        }
        let root = repository_root(workspace);
        let boundary = std::fs::canonicalize(&root).unwrap_or_else(|_| root.clone());
        for folder in folders_down(&root, workspace) {
            found.take_first(settings, &folder, Some(&boundary), false, &mut room);
        }
        found
    }

    /// The first of the configured names that exists in `folder`, read into the list.
    /// `inside`: a link must resolve under this folder.
    fn take_first(
        &mut self,
        settings: &InstructionSettings,
        folder: &Path,
        inside: Option<&Path>,
        user: bool,
        room: &mut usize,
    ) {
        let Some(path) = settings
            .files
            .iter()
            .map(|name| folder.join(name))
            .find(|path| path.symlink_metadata().is_ok())
        else {
            return;
        };
        if let Some(boundary) = inside {
            match std::fs::canonicalize(&path) {
                Ok(real) if real.starts_with(boundary) => {}
                _ => {
                    self.notices.push(format!(
                        "{}: not used as instructions: it is a link that leads out of the repository",
                        path.display()
                    ));
                    return;
                }
            }
        }
        if *room == 0 {
            self.notices.push(format!(
                "{}: not used as instructions: the files before it fill instructions.max_bytes ({} bytes)",
                path.display(),
                settings.max_bytes
            ));
            return;
        }
        match read_capped(&path, *room) {
            Ok((text, truncated)) => {
                if truncated {
                    self.notices.push(format!(
                        "{}: cut to fit instructions.max_bytes ({} bytes for all instruction files)",
                        path.display(),
                        settings.max_bytes
                    ));
                }
                *room = room.saturating_sub(text.len());
                self.files.push(InstructionFile {
                    path,
                    text,
                    truncated,
                    user,
                });
            }
            Err(why) => self
                .notices
                .push(format!("{}: not used as instructions: {why}", path.display())),
        }
    }

    /// The section the files make in the system prompt (empty when there are none).
    pub fn prompt_section(&self) -> String {
        if self.files.is_empty() {
            return String::new();
        }
        let mut section = String::from(
            "\n\n## Project Instructions\n\nThe person and the project wrote these instruction files for you. Each governs the folder it is in and the folders under it; where they differ, a deeper folder's file is more specific and weighs more, and the person's own requests in the conversation weigh most.\n",
        );
        for file in &self.files {
            let whose = if file.user {
                " (the person's own, for every project)"
            } else {
                ""
            };
            section.push_str(&format!(
                "\n### {}{whose}\n\n{}",
                file.path.display(),
                file.text.trim_end()
            ));
            if file.truncated {
                section.push_str("\n\n[The rest of this file was cut: instruction files may fill only part of the prompt.]");
            }
            section.push('\n');
        }
        section
    }
}

/// The nearest folder from `workspace` up holding `.git` (a folder, or a file for a
/// worktree), else the workspace itself.
pub fn repository_root(workspace: &Path) -> PathBuf {
    workspace
        .ancestors()
        .take(MAX_DEPTH)
        .find(|folder| folder.join(".git").symlink_metadata().is_ok())
        .unwrap_or(workspace)
        .to_path_buf()
}

/// `root`, then each folder under it down to `workspace` (`workspace` under `root`).
fn folders_down(root: &Path, workspace: &Path) -> Vec<PathBuf> {
    let mut folders: Vec<PathBuf> = workspace
        .ancestors()
        .take(MAX_DEPTH)
        .take_while(|folder| folder.starts_with(root))
        .map(Path::to_path_buf)
        .collect();
    folders.reverse();
    folders
}

/// At most `room` bytes of the regular file at `path` as text for the model, cut at a
/// character boundary, and whether anything was left out. A pipe is not waited on.
fn read_capped(path: &Path, room: usize) -> Result<(String, bool), String> {
    use std::os::unix::fs::OpenOptionsExt;
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK)
        .open(path)
        .map_err(|err| err.to_string())?;
    let meta = file.metadata().map_err(|err| err.to_string())?;
    if !meta.is_file() {
        return Err("it is not a regular file".to_string());
    }
    let limit = u64::try_from(room).unwrap_or(u64::MAX).min(MAX_FILE_BYTES);
    let mut bytes = Vec::new();
    file.take(limit.saturating_add(1))
        .read_to_end(&mut bytes)
        .map_err(|err| err.to_string())?;
    let mut truncated = u64::try_from(bytes.len()).unwrap_or(u64::MAX) > limit;
    bytes.truncate(usize::try_from(limit).unwrap_or(usize::MAX));
    let text = String::from_utf8_lossy(&bytes);
    let text = miniagent_text::for_model(&text).into_owned();
    let mut end = text.len().min(room);
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    truncated |= end < text.len();
    Ok((text[..end].to_string(), truncated))
}

#[cfg(test)]
mod tests;
