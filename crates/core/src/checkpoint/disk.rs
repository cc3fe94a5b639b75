//! The disk side of a rewind: whether files are still what the session left, and
//! writing back what they were, through the workspace's confinement.

use std::io::Read;

use super::Refusal;
use super::ledger::{Change, Content, Identity, Planned};
use super::store::{Store, digest};
use crate::tools::paths::{Access, Kind, Workspace};

/// What is at a workspace path now.
enum Now {
    Absent,
    Digest(String),
    /// Something that is not a regular file reached directly (a symlink swapped in, a
    /// folder), or unreadable.
    Other,
}

/// Reads `path` (relative to the workspace) through the workspace's confinement: a path
/// that now leads elsewhere (a symlink on the way) is [`Now::Other`], never followed.
fn now(workspace: &Workspace, path: &str, limit: u64) -> Now {
    let Ok(located) = workspace.locate(path, Access::Write) else {
        return Now::Other;
    };
    if located.path() != workspace.root().join(path) {
        return Now::Other;
    }
    match located.kind() {
        Ok(None) => return Now::Absent,
        Ok(Some(Kind::File)) => {}
        Ok(Some(_)) | Err(_) => return Now::Other,
    }
    let Ok(opened) = located.open_file() else {
        return Now::Other;
    };
    if opened.size > limit {
        return Now::Other;
    }
    let mut bytes = Vec::new();
    match opened.file.take(limit.saturating_add(1)).read_to_end(&mut bytes) {
        Ok(_) => Now::Digest(digest(&bytes)),
        Err(_) => Now::Other,
    }
}

/// Whether the disk no longer holds `content` at `path`.
pub(super) fn differs(workspace: &Workspace, path: &str, content: &Content, limit: u64) -> bool {
    !same(&now(workspace, path, limit), content)
}

/// Whether what is on disk is known to be `content`.
fn same(now: &Now, content: &Content) -> bool {
    match (now, content.identity()) {
        (Now::Absent, Identity::Absent) => true,
        (Now::Digest(found), Identity::Digest(recorded)) => found == recorded,
        _ => false,
    }
}

/// A path checkpoints can have recorded: relative, plain names only (no `..`, no root),
/// none of them `.git` (a command's changes there are never looked at, and a file tool's
/// write there is not taken back).
fn recordable(path: &str) -> bool {
    use std::path::Component;
    !path.is_empty()
        && std::path::Path::new(path)
            .components()
            .all(|part| matches!(part, Component::Normal(name) if name != ".git"))
}

/// One file a rewind writes back.
pub(super) struct Write {
    path: String,
    /// What the session left there (on disk now).
    from: Content,
    to: Content,
    /// `None`: the file is removed.
    bytes: Option<Vec<u8>>,
    /// False when the disk already holds `to`: only recorded, nothing written.
    needed: bool,
}

/// Checks every file of `plan` before anything is written: each must still hold what
/// the session left (and have no edit between the changes taken back), and its earlier
/// content must be kept. Any that fails refuses the whole rewind, naming them all.
pub(super) fn check(
    workspace: &Workspace,
    plan: &[Planned],
    store: Option<&Store>,
    limit: u64,
) -> Result<Vec<Write>, Refusal> {
    let mut outside = Vec::new();
    let mut not_kept = Vec::new();
    let mut own = Vec::new();
    let mut writes = Vec::new();
    let mut foreign = Vec::new();
    let mut unread = Vec::new();
    for planned in plan {
        // Checkpoints never record such a path: only an edited log names one.
        if !recordable(&planned.path) {
            foreign.push(planned.path.clone());
            continue;
        }
        let now = now(workspace, &planned.path, limit);
        // Already as it was (the person put it back, or removed a file the turn made):
        // nothing to write, whatever happened to it between.
        if same(&now, &planned.target) {
            writes.push(Write {
                path: planned.path.clone(),
                from: planned.last.clone(),
                to: planned.target.clone(),
                bytes: None,
                needed: false,
            });
            continue;
        }
        // What the session left was never read (too large to keep): whether the file is
        // still that cannot be told, so it is not written over.
        if planned.last.identity() == Identity::Unknown {
            unread.push(planned.path.clone());
            continue;
        }
        if planned.gap || !same(&now, &planned.last) {
            outside.push(planned.path.clone());
            continue;
        }
        // A write there would be refused halfway through: said before anything is written.
        if workspace.protects(&workspace.root().join(&planned.path)) {
            own.push(planned.path.clone());
            continue;
        }
        let bytes = match &planned.target {
            Content::Absent => None,
            Content::Kept { id, size, .. } => match store.map(|store| store.get(id, *size)) {
                Some(Ok(bytes)) => Some(bytes),
                Some(Err(_)) | None => {
                    not_kept.push(planned.path.clone());
                    continue;
                }
            },
            Content::NotKept { .. } => {
                not_kept.push(planned.path.clone());
                continue;
            }
        };
        writes.push(Write {
            path: planned.path.clone(),
            from: planned.last.clone(),
            to: planned.target.clone(),
            bytes,
            needed: true,
        });
    }
    if [&outside, &not_kept, &unread, &own, &foreign]
        .iter()
        .all(|files| files.is_empty())
    {
        return Ok(writes);
    }
    let mut reasons = Vec::new();
    if !foreign.is_empty() {
        reasons.push(format!(
            "the session log names places checkpoints never record (inside a .git folder, or leading out of the workspace): {}",
            foreign.join(", ")
        ));
    }
    if !outside.is_empty() {
        reasons.push(format!(
            "changed outside miniagent since the session changed {}: {}",
            if outside.len() == 1 { "it" } else { "them" },
            outside.join(", ")
        ));
    }
    if !not_kept.is_empty() {
        reasons.push(format!(
            "the earlier content was not kept: {}",
            not_kept.join(", ")
        ));
    }
    if !unread.is_empty() {
        reasons.push(format!(
            "what the session left there was too large to keep, so whether it changed since cannot be told (put it back by hand, or remove a file the session made, and rewind again): {}",
            unread.join(", ")
        ));
    }
    if !own.is_empty() {
        reasons.push(format!(
            "in miniagent's own folders, which a rewind does not write: {}",
            own.join(", ")
        ));
    }
    Err(Refusal {
        message: format!("nothing was put back; {}", reasons.join("; ")),
        files: [outside, not_kept, unread, own, foreign].concat(),
    })
}

/// Writes back what [`check`] found, atomically, file by file. Gives the changes made;
/// a write that fails stops it (the files before it stay put back, and are said).
pub(super) fn write(workspace: &Workspace, turn: u32, writes: Vec<Write>) -> (Vec<Change>, Option<Refusal>) {
    let mut done = Vec::new();
    for write in writes.into_iter() {
        if !write.needed {
            done.push(Change {
                turn,
                call: "rewind".to_string(),
                path: write.path,
                before: write.from,
                after: write.to,
            });
            continue;
        }
        let result = workspace
            .locate(&write.path, Access::Write)
            .map_err(|err| std::io::Error::other(err.to_string()))
            .and_then(|mut located| match &write.bytes {
                Some(bytes) => {
                    let mode = match &write.to {
                        Content::Kept { mode, .. } if *mode != 0 => Some(*mode),
                        _ => None,
                    };
                    located.write_atomic_with_mode(bytes, mode)
                }
                None => located.remove_file(),
            });
        if let Err(err) = result {
            let put_back: Vec<&str> = done.iter().map(|change: &Change| change.path.as_str()).collect();
            let message = match put_back.is_empty() {
                true => format!("nothing was put back: cannot write {}: {err}", write.path),
                false => format!(
                    "cannot write {}: {err}; put back before it: {}",
                    write.path,
                    put_back.join(", ")
                ),
            };
            return (
                done,
                Some(Refusal {
                    message,
                    files: vec![write.path],
                }),
            );
        }
        done.push(Change {
            turn,
            call: "rewind".to_string(),
            path: write.path,
            before: write.from,
            after: write.to,
        });
    }
    (done, None)
}
