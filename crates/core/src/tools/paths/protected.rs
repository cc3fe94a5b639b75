//! miniagent's own folders: a write into one is refused, by name or by device and inode
//! up the folder chain, unless the call was approved as changing them.

use super::*;

/// Folders writes may enter only in a call the person approved as changing them.
#[derive(Clone, Debug)]
pub(super) struct Protection {
    /// As given (the workspace's `.miniagent` first); compared by identity when used.
    pub(super) folders: Arc<Vec<PathBuf>>,
    /// This call was approved as changing them.
    pub(super) approved: bool,
}

/// Folder levels looked at above the folder written to, before giving up on finding the
/// workspace root or `/` (a path has at most 4096 bytes, so at most 2048 levels).
const MAX_FOLDER_DEPTH: usize = 2048;

impl Protection {
    fn refusal(shown: &Path, folder: &Path) -> io::Error {
        io::Error::other(format!(
            "{} is in {}, which holds miniagent's own settings, and this call was not approved as changing them (a folder on the way changed after the check); nothing was written",
            shown.display(),
            folder.display()
        ))
    }

    /// Whether `path` (a real path) is in a protected folder, by name, approved or not.
    pub(super) fn covers(&self, path: &Path) -> bool {
        self.folders.iter().any(|folder| path.starts_with(folder))
    }

    /// Refuses a write to `path` (a real path) under a protected folder, by name.
    pub(super) fn check_path(&self, path: &Path) -> io::Result<()> {
        match self.folders.iter().find(|folder| path.starts_with(folder)) {
            Some(folder) if !self.approved => Err(Self::refusal(path, folder)),
            Some(_) | None => Ok(()),
        }
    }

    /// Refuses a write into `folder` (or a folder under it) when it is one of the
    /// protected folders, told by device and inode, walking up through `..` to `root`.
    pub(super) fn check(&self, folder: BorrowedFd<'_>, root: &Path, shown: &Path) -> io::Result<()> {
        if self.approved {
            return Ok(());
        }
        let identity = |stat: &libc::stat| (stat.st_dev, stat.st_ino);
        let protected: Vec<(PathBuf, (libc::dev_t, libc::ino_t))> = self
            .folders
            .iter()
            .filter_map(|path| {
                use std::os::unix::fs::MetadataExt;
                let meta = std::fs::metadata(path).ok()?;
                Some((path.clone(), (meta.dev(), meta.ino())))
            })
            .collect();
        if protected.is_empty() {
            return Ok(());
        }
        let root = std::fs::metadata(root).ok().map(|meta| {
            use std::os::unix::fs::MetadataExt;
            (meta.dev(), meta.ino())
        });
        let mut current = at::open_subfolder(folder, OsStr::new("."))?;
        for _ in 0..MAX_FOLDER_DEPTH {
            let here = identity(&at::stat_fd(current.as_fd())?);
            if let Some((path, _)) = protected.iter().find(|(_, id)| *id == here) {
                return Err(Self::refusal(shown, path));
            }
            let parent = at::open_subfolder(current.as_fd(), OsStr::new(".."))?;
            if Some(here) == root || identity(&at::stat_fd(parent.as_fd())?) == here {
                break;
            }
            current = parent;
        }
        Ok(())
    }
}
