//! Checkpoints: what a session needs to show and take back its changes to the workspace.
//!
//! Before a call changes files, the content it replaces is kept: for `write_file` and
//! `edit_file`, the files they name; for a command, every unignored file of the workspace
//! (a look before and after each command finds what it changed; a file is read again
//! only when its stat changed). Contents are kept by SHA-256 in the data folder
//! ([`store`]), each change is recorded in the session log ([`Change`]), and the
//! [`Ledger`] of them answers `/diff`, `/undo` and the code half of `/rewind`.
//! Nothing is written into the workspace but the changes themselves, and no git command
//! runs.

mod disk;
pub mod ledger;
pub mod snapshot;
pub mod store;
#[cfg(test)]
mod tests;

use std::collections::BTreeSet;
use std::path::PathBuf;
use std::sync::{Mutex, MutexGuard};

use crate::config::CheckpointSettings;
use crate::tools::paths::Workspace;
pub use ledger::{Change, Content, Ledger, Step};
use snapshot::{Found, Index};
use store::Store;

/// Why the code could not be put back; nothing was changed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Refusal {
    /// Says why, whole.
    pub message: String,
    /// The files that stopped it (relative to the workspace).
    pub files: Vec<String>,
}

/// A session's checkpoints: the ledger of its changes, its store, and the last look at
/// the workspace, behind a lock of their own (never the session's: `/diff` is answered
/// while a turn runs).
pub struct Checkpoints {
    settings: CheckpointSettings,
    /// miniagent's own folders, never looked at.
    skip: Vec<PathBuf>,
    state: Mutex<State>,
}

#[derive(Default)]
struct State {
    ledger: Ledger,
    store: Option<Store>,
    /// The store is this process's alone (the session is not recorded): removed at the end.
    temporary: bool,
    index: Index,
    /// The turn calls run in now (sub-agents' calls count as their parent's turn).
    turn: u32,
    /// Which limits were said already.
    said: BTreeSet<&'static str>,
    /// Notices not yet given to the person.
    notices: Vec<String>,
}

impl Checkpoints {
    /// Checkpoints kept in `dir` (`<data>/checkpoints/<session id>`; `None`: nothing can
    /// be kept). A `temporary` folder is removed when the session ends.
    pub fn new(
        settings: CheckpointSettings,
        skip: Vec<PathBuf>,
        dir: Option<PathBuf>,
        temporary: bool,
    ) -> Self {
        let store = dir
            .filter(|_| settings.enabled)
            .map(|dir| Store::open(dir, settings.max_session_bytes));
        Self {
            state: Mutex::new(State {
                store,
                temporary,
                ..State::default()
            }),
            settings,
            skip,
        }
    }

    fn state(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// Continues a recorded session: its ledger, kept in `dir`.
    pub fn resume(&self, ledger: Ledger, dir: Option<PathBuf>) {
        let mut state = self.state();
        state.remove_temporary();
        state.ledger = ledger;
        state.store = dir
            .filter(|_| self.settings.enabled)
            .map(|dir| Store::open(dir, self.settings.max_session_bytes));
        state.temporary = false;
        state.index = Index::default();
    }

    pub fn enabled(&self) -> bool {
        self.settings.enabled
    }

    /// The turn that runs now, and its message.
    pub fn set_turn(&self, turn: u32, text: &str) {
        let mut state = self.state();
        state.turn = turn;
        state.ledger.name_turn(turn, text);
    }

    /// What was said about limits since the last call, to tell the person.
    pub fn take_notices(&self) -> Vec<String> {
        std::mem::take(&mut self.state().notices)
    }

    /// A copy of the ledger.
    pub fn ledger(&self) -> Ledger {
        self.state().ledger.clone()
    }

    /// The contents of `paths` (relative to the workspace) now, kept: before a file tool
    /// writes them.
    pub fn before_files(&self, workspace: &Workspace, paths: &[String]) -> Vec<(String, Content)> {
        let mut state = self.state();
        paths
            .iter()
            .map(|path| {
                let found = snapshot::read_file(&workspace.root().join(path), self.settings.max_file_bytes);
                (path.clone(), self.keep(&mut state, path, found))
            })
            .collect()
    }

    /// The changes a file tool made to what [`Self::before_files`] kept, recorded in the
    /// ledger (files it did not change are left out).
    pub fn after_files(
        &self,
        workspace: &Workspace,
        call: &str,
        befores: Vec<(String, Content)>,
    ) -> Vec<Change> {
        let mut state = self.state();
        let turn = state.turn;
        let mut changes = Vec::new();
        for (path, before) in befores {
            let found = snapshot::read_file(&workspace.root().join(&path), self.settings.max_file_bytes);
            let after = self.keep(&mut state, &path, found);
            if before.same_as(&after) {
                continue;
            }
            let change = change(turn, call, &path, before, after);
            state.ledger.push(Step::Changed(change.clone()));
            changes.push(change);
        }
        changes
    }

    /// Looks at the workspace before a command runs: every file whose stat changed since
    /// the last look is read and kept, so what the command replaces can be put back.
    pub fn before_command(&self, workspace: &Workspace) {
        let look = snapshot::look(workspace.root(), &self.skip, self.settings.max_files);
        let mut state = self.state();
        self.note_truncated(&mut state, look.truncated);
        let mut files = std::collections::HashMap::with_capacity(look.files.len());
        for (path, stat) in look.files {
            let content = match state.index.files.remove(&path) {
                Some((seen, content)) if seen == stat => content,
                _ => {
                    let found =
                        snapshot::read_file(&workspace.root().join(&path), self.settings.max_file_bytes);
                    self.keep(&mut state, &path, found)
                }
            };
            files.insert(path, (stat, content));
        }
        state.index = Index {
            files,
            truncated: look.truncated,
        };
    }

    /// Looks again after the command: what it added, changed and removed, recorded in the
    /// ledger as call `call`'s changes.
    pub fn after_command(&self, workspace: &Workspace, call: &str) -> Vec<Change> {
        let look = snapshot::look(workspace.root(), &self.skip, self.settings.max_files);
        let mut state = self.state();
        let turn = state.turn;
        let before = std::mem::take(&mut state.index);
        let mut before_files = before.files;
        let mut now = std::collections::HashMap::with_capacity(look.files.len());
        let mut changes = Vec::new();
        for (path, stat) in look.files {
            let (was, content) = match before_files.remove(&path) {
                Some((seen, content)) if seen == stat => (None, content),
                // Past the cap before, it cannot be told whether it is new.
                None if before.truncated => {
                    let found =
                        snapshot::read_file(&workspace.root().join(&path), self.settings.max_file_bytes);
                    (None, self.keep(&mut state, &path, found))
                }
                seen => {
                    let found =
                        snapshot::read_file(&workspace.root().join(&path), self.settings.max_file_bytes);
                    let was = seen.map_or(Content::Absent, |(_, content)| content);
                    (Some(was), self.keep(&mut state, &path, found))
                }
            };
            if let Some(was) = was
                && !was.same_as(&content)
            {
                changes.push(change(turn, call, &path, was, content.clone()));
            }
            now.insert(path, (stat, content));
        }
        // Files not seen again: gone, unless the look stopped before reaching them.
        let mut gone: Vec<(String, Content)> = before_files
            .into_iter()
            .filter(|(path, _)| !look.truncated || !workspace.root().join(path).exists())
            .map(|(path, (_, content))| (path, content))
            .collect();
        gone.sort_by(|a, b| a.0.cmp(&b.0));
        for (path, content) in gone {
            changes.push(change(turn, call, &path, content, Content::Absent));
        }
        changes.sort_by(|a, b| a.path.cmp(&b.path));
        for change in &changes {
            state.ledger.push(Step::Changed(change.clone()));
        }
        state.index = Index {
            files: now,
            truncated: look.truncated,
        };
        changes
    }

    /// Kept in the store when it can be, else recorded as not kept with the reason (said
    /// once per limit).
    fn keep(&self, state: &mut State, path: &str, found: Found) -> Content {
        let (bytes, mode) = match found {
            Found::Absent => return Content::Absent,
            Found::Bytes(bytes, mode) => (bytes, mode),
            Found::TooLarge(size) => {
                state.say_once(
                    "file",
                    format!(
                        "{path} ({}) is larger than checkpoints.max_file_bytes ({}): it is not kept, so a rewind will not put it back (other files over the limit are not said again)",
                        crate::tools::files::human_size(size),
                        crate::tools::files::human_size(self.settings.max_file_bytes)
                    ),
                );
                return Content::NotKept {
                    id: None,
                    reason: "larger than checkpoints.max_file_bytes".to_string(),
                };
            }
            Found::Unreadable(why) => {
                return Content::NotKept {
                    id: None,
                    reason: format!("it could not be read: {why}"),
                };
            }
        };
        let id = store::digest(&bytes);
        let size = u64::try_from(bytes.len()).unwrap_or(u64::MAX);
        let Some(store) = state.store.as_mut() else {
            return Content::NotKept {
                id: Some(id),
                reason: "checkpoints are off or there is no data folder".to_string(),
            };
        };
        match store.put(&id, &bytes) {
            Ok(()) => Content::Kept { id, size, mode },
            Err(err) => {
                let reason = err.to_string();
                state.say_once(
                    "store",
                    format!("file contents are no longer kept for this session: {reason}; a rewind will not put those files back"),
                );
                Content::NotKept { id: Some(id), reason }
            }
        }
    }

    fn note_truncated(&self, state: &mut State, truncated: bool) {
        if truncated {
            state.say_once(
                "walk",
                format!(
                    "the workspace has more than {} files (checkpoints.max_files): changes commands make to files past them are not kept",
                    self.settings.max_files
                ),
            );
        }
    }

    /// The content kept as `content`, when it was kept.
    pub fn bytes_of(&self, content: &Content) -> Option<Vec<u8>> {
        let Content::Kept { id, size, .. } = content else {
            return None;
        };
        self.state().store.as_ref()?.get(id, *size).ok()
    }

    /// Puts back every file changed from turn `turn` on as it was before that turn, or
    /// refuses and changes nothing. Records what it wrote (in the ledger) and gives it; a
    /// write failing midway gives what was written before it with the refusal.
    pub fn restore(&self, workspace: &Workspace, turn: u32) -> (Vec<Change>, Option<Refusal>) {
        let mut state = self.state();
        let plan = state.ledger.plan(turn);
        let writes = match disk::check(
            workspace,
            &plan,
            state.store.as_ref(),
            self.settings.max_file_bytes,
        ) {
            Ok(writes) => writes,
            Err(refusal) => return (Vec::new(), Some(refusal)),
        };
        // Files written here are read again at the next look (their stat changed).
        let (changes, failed) = disk::write(workspace, turn, writes);
        if !changes.is_empty() {
            state.ledger.push(Step::Restored {
                turn,
                changes: changes.clone(),
            });
        }
        (changes, failed)
    }

    /// What is on disk at `path` now, compared with `content`: `true` when it is known to
    /// differ (a content never read, too large to keep, cannot be compared: `false`).
    pub fn changed_since(&self, workspace: &Workspace, path: &str, content: &Content) -> bool {
        content.identity() != ledger::Identity::Unknown
            && disk::differs(workspace, path, content, self.settings.max_file_bytes)
    }
}

impl State {
    fn say_once(&mut self, limit: &'static str, message: String) {
        if self.said.insert(limit) {
            self.notices.push(message);
        }
    }

    fn remove_temporary(&mut self) {
        if self.temporary
            && let Some(store) = &self.store
        {
            let _ = std::fs::remove_dir_all(store.dir());
        }
    }
}

impl Drop for Checkpoints {
    fn drop(&mut self) {
        self.state().remove_temporary();
    }
}

fn change(turn: u32, call: &str, path: &str, before: Content, after: Content) -> Change {
    Change {
        turn,
        call: call.to_string(),
        path: path.to_string(),
        before,
        after,
    }
}
