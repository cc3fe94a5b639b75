//! A look at the workspace's files before and after a command: each unignored regular
//! file's stat (size, times, inode), so what a command changed is found by comparing
//! two looks, and only files whose stat changed are read again.

use std::collections::HashMap;
use std::io::Read;
use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

use super::ledger::Content;

/// What tells a file's versions apart without reading it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Stat {
    pub size: u64,
    pub mtime: (i64, i64),
    pub ctime: (i64, i64),
    pub ino: u64,
    pub dev: u64,
    pub mode: u32,
}

impl Stat {
    pub fn of(meta: &std::fs::Metadata) -> Self {
        Self {
            size: meta.size(),
            mtime: (meta.mtime(), meta.mtime_nsec()),
            ctime: (meta.ctime(), meta.ctime_nsec()),
            ino: meta.ino(),
            dev: meta.dev(),
            mode: meta.mode(),
        }
    }
}

/// One look at the workspace.
#[derive(Debug, Default)]
pub struct Look {
    /// Regular files, relative to the workspace, with their stats.
    pub files: Vec<(String, Stat)>,
    /// The walk stopped at `checkpoints.max_files`: files past it were not seen.
    pub truncated: bool,
}

/// The workspace's regular files that `.gitignore` (and `.ignore`, the global excludes)
/// do not leave out, without following symlinks, leaving out `.git` and every folder
/// `skip` says (miniagent's own), at most `max_files` of them, sorted by path.
pub fn look(root: &Path, skip: &[PathBuf], max_files: usize) -> Look {
    let skip = skip.to_vec();
    let walker = ignore::WalkBuilder::new(root)
        .hidden(false)
        .follow_links(false)
        .require_git(false)
        .same_file_system(true)
        .sort_by_file_name(|a, b| a.cmp(b))
        .filter_entry(move |entry| {
            entry.file_name() != ".git" && !skip.iter().any(|folder| entry.path().starts_with(folder))
        })
        .build();
    let mut look = Look::default();
    for entry in walker.filter_map(Result::ok) {
        if !entry.file_type().is_some_and(|kind| kind.is_file()) {
            continue;
        }
        let Some(relative) = entry
            .path()
            .strip_prefix(root)
            .ok()
            .and_then(Path::to_str)
            .map(str::to_string)
        else {
            // A name that is not UTF-8 cannot be named in the log.
            continue;
        };
        let Ok(meta) = entry.metadata() else { continue };
        if look.files.len() >= max_files {
            look.truncated = true;
            break;
        }
        look.files.push((relative, Stat::of(&meta)));
    }
    look
}

/// What reading a file found.
#[derive(Debug)]
pub enum Found {
    Absent,
    Bytes(Vec<u8>, u32),
    /// Over the cap (its size).
    TooLarge(u64),
    /// Not a regular file now, or not readable.
    Unreadable(String),
}

/// Reads the regular file at `path` (no symlink followed at its end, no pipe waited on),
/// at most `limit` bytes of it.
pub fn read_file(path: &Path, limit: u64) -> Found {
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK)
        .open(path);
    let file = match file {
        Ok(file) => file,
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => return Found::Absent,
        Err(err) => return Found::Unreadable(err.to_string()),
    };
    let meta = match file.metadata() {
        Ok(meta) if meta.is_file() => meta,
        Ok(_) => return Found::Unreadable("not a regular file".to_string()),
        Err(err) => return Found::Unreadable(err.to_string()),
    };
    if meta.len() > limit {
        return Found::TooLarge(meta.len());
    }
    let mut bytes = Vec::new();
    if let Err(err) = file.take(limit.saturating_add(1)).read_to_end(&mut bytes) {
        return Found::Unreadable(err.to_string());
    }
    if u64::try_from(bytes.len()).unwrap_or(u64::MAX) > limit {
        return Found::TooLarge(u64::try_from(bytes.len()).unwrap_or(u64::MAX));
    }
    Found::Bytes(bytes, meta.mode() & 0o7777)
}

/// The last look's files with their contents as last seen: what a command is compared
/// against. At most `checkpoints.max_files` entries.
#[derive(Debug, Default)]
pub struct Index {
    pub files: HashMap<String, (Stat, Content)>,
    /// The look it came from stopped at the cap.
    pub truncated: bool,
}
