//! Workspace confinement: every path a file tool touches is resolved one component at a
//! time relative to a handle on the workspace folder (or, for reading only, an extra
//! allowed root), never letting the kernel follow a symlink on its own. Symlinks are
//! followed by hand, as the kernel would (`..` after a symlink goes up from its target),
//! and must stay inside a root. The result is a handle on the folder that holds the file
//! plus its name, so a folder swapped for a symlink after the check cannot redirect the
//! use: a swap is either seen (and refused) or has no effect.
//!
//! Writes are also checked against miniagent's own folders (the workspace's `.miniagent/`
//! and those [`Workspace::protecting`] names) on that very handle: the folder written to
//! and each one above it are compared, by device and inode, with those folders, so a
//! symlink swapped in after the approval policy looked at the path cannot get a write
//! into them unless the call was approved as such ([`Workspace::approving_protected_writes`]).
//! What it cannot see is a folder *renamed* into `.miniagent/` between this check and
//! the write; whatever could do that (a command in the workspace) could as well write
//! there itself, which trust's fingerprint catches at the next start.

use super::at;
mod protected;

use std::collections::VecDeque;
use std::ffi::{OsStr, OsString};
use std::fs::File;
use std::io;
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::path::{Component, Path, PathBuf};
use std::sync::Arc;

use super::client_files::ClientFiles;
pub use at::Kind;
use miniagent_protocol::Location;
use protected::Protection;

/// Why a file tool may not use a path: one line for the model that names the path and,
/// where it resolved somewhere, where it would have led. Callers only ever show it.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct PathError(String);

impl From<PathError> for String {
    fn from(err: PathError) -> Self {
        err.0
    }
}

/// How a path will be used.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Access {
    Read,
    Write,
}

/// The folders file tools may use.
#[derive(Clone, Debug)]
pub struct Workspace {
    root: PathBuf,
    read_roots: Vec<PathBuf>,
    protection: Protection,
    /// The editor file tools read and write through, when a face's client offers one.
    client_files: Option<Arc<dyn ClientFiles>>,
}

/// The workspace's folder of miniagent's own settings, which file tools change only in a
/// call approved as changing it.
const SETTINGS_DIR: &str = ".miniagent";

/// Symlink hops followed before giving up (the kernel's own limit is 40).
const MAX_SYMLINK_HOPS: u32 = 40;
/// The longest path a tool takes (Linux's `PATH_MAX`); a longer one cannot name a file,
/// and echoing megabytes of it back would bury the message.
const MAX_PATH_BYTES: usize = 4096;

/// A path resolved inside a root: the folder that holds it (as a handle) and its name.
#[derive(Debug)]
pub struct Located {
    /// The deepest folder on the way that exists.
    folder: OwnedFd,
    /// Folders under `folder` that do not exist yet, outermost first.
    missing: Vec<OsString>,
    /// The last component; "." when the path names a folder reached through `..` or a root.
    name: OsString,
    /// The real path, for messages.
    path: PathBuf,
    /// The workspace root and what a write here must not enter unapproved.
    root: PathBuf,
    protection: Protection,
}

/// A file opened for reading through [`Located::open_file`].
pub struct OpenedFile {
    pub file: File,
    pub size: u64,
}

/// Why [`Located::open_file`] refused or failed, in words for the model.
#[derive(Debug)]
pub enum OpenError {
    NotFound,
    Folder,
    /// A device, pipe or socket.
    NotRegular,
    /// A symlink appeared where a file was a moment ago.
    Swapped,
    HardLinked(u64),
    Io(io::Error),
}

impl OpenError {
    /// The message for the model about the file shown as `shown`.
    pub fn message(&self, shown: &str) -> String {
        match self {
            OpenError::NotFound => format!("file not found: {shown}"),
            OpenError::Folder => format!("{shown} is a folder, not a file"),
            OpenError::NotRegular => format!("{shown} is not a regular file (a device, pipe or socket)"),
            OpenError::Swapped => {
                format!("{shown} was replaced by a symbolic link while it was being opened; nothing was read")
            }
            OpenError::HardLinked(links) => format!(
                "{shown} has {links} hard links, so it may be shared with a file outside the \
                 workspace; file tools do not read it (write_file can replace it with a file of its own)"
            ),
            OpenError::Io(err) => format!("cannot read {shown}: {err}"),
        }
    }
}

impl Located {
    /// The real path, for messages.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// What is at the path now (a symlink only if one was swapped in after resolving);
    /// `None` when nothing is.
    pub fn kind(&self) -> io::Result<Option<Kind>> {
        if !self.missing.is_empty() {
            return Ok(None);
        }
        match at::stat_at(self.folder.as_fd(), &self.name) {
            Ok(stat) => Ok(Some(at::kind_of(&stat))),
            Err(err) if err.kind() == io::ErrorKind::NotFound => Ok(None),
            Err(err) => Err(err),
        }
    }

    /// Opens the regular file for reading. Refuses folders, devices, pipes and sockets
    /// before opening them (opening has effects on some), symlinks swapped in since the
    /// path was resolved, and files with more than one hard link (one of them may be
    /// outside the workspace).
    pub fn open_file(&self) -> Result<OpenedFile, OpenError> {
        if !self.missing.is_empty() {
            return Err(OpenError::NotFound);
        }
        let before = match at::stat_at(self.folder.as_fd(), &self.name) {
            Ok(stat) => stat,
            Err(err) if err.kind() == io::ErrorKind::NotFound => return Err(OpenError::NotFound),
            Err(err) => return Err(OpenError::Io(err)),
        };
        match at::kind_of(&before) {
            Kind::File => {}
            Kind::Folder => return Err(OpenError::Folder),
            Kind::Symlink => return Err(OpenError::Swapped),
            Kind::Other => return Err(OpenError::NotRegular),
        }
        // O_NONBLOCK: should a pipe be swapped in after the check, opening it does not wait.
        let fd = match at::open_at(
            self.folder.as_fd(),
            &self.name,
            libc::O_RDONLY | libc::O_NONBLOCK,
            0,
        ) {
            Ok(fd) => fd,
            Err(err) if err.raw_os_error() == Some(libc::ELOOP) => return Err(OpenError::Swapped),
            Err(err) if err.kind() == io::ErrorKind::NotFound => return Err(OpenError::NotFound),
            Err(err) => return Err(OpenError::Io(err)),
        };
        let stat = at::stat_fd(fd.as_fd()).map_err(OpenError::Io)?;
        if at::kind_of(&stat) != Kind::File {
            return Err(OpenError::NotRegular);
        }
        if stat.st_nlink > 1 {
            // `st_nlink` is narrower on some targets.
            #[allow(clippy::useless_conversion)]
            return Err(OpenError::HardLinked(u64::from(stat.st_nlink)));
        }
        Ok(OpenedFile {
            file: File::from(fd),
            size: u64::try_from(stat.st_size).unwrap_or(0),
        })
    }

    /// The folder the path names, listed: names with their kinds (symlinks with their
    /// targets, files with their sizes), looked up relative to the folder's handle.
    pub fn list_folder(&self) -> io::Result<Vec<FolderEntry>> {
        if !self.missing.is_empty() {
            return Err(io::Error::from(io::ErrorKind::NotFound));
        }
        let folder = if self.name == "." {
            at::open_subfolder(self.folder.as_fd(), OsStr::new("."))?
        } else {
            at::open_subfolder(self.folder.as_fd(), &self.name)?
        };
        let mut entries = Vec::new();
        for (name, kind) in at::list_folder(folder.as_fd())? {
            let stat = at::stat_at(folder.as_fd(), &name).ok();
            let kind = kind.or_else(|| stat.as_ref().map(at::kind_of));
            let detail = match kind {
                Some(Kind::Symlink) => at::read_link_at(folder.as_fd(), &name)
                    .ok()
                    .map(|target| EntryDetail::LinksTo(PathBuf::from(target))),
                Some(Kind::File) => {
                    stat.map(|stat| EntryDetail::Bytes(u64::try_from(stat.st_size).unwrap_or(0)))
                }
                _ => None,
            };
            entries.push(FolderEntry { name, kind, detail });
        }
        Ok(entries)
    }

    /// Creates the missing folders on the way, each relative to the one before; a folder
    /// replaced by a symlink meanwhile stops it.
    pub fn create_folders(&mut self) -> io::Result<()> {
        for name in std::mem::take(&mut self.missing) {
            match at::make_folder_at(self.folder.as_fd(), &name) {
                Ok(()) => {}
                Err(err) if err.kind() == io::ErrorKind::AlreadyExists => {}
                Err(err) => return Err(err),
            }
            self.folder = at::open_subfolder(self.folder.as_fd(), &name).map_err(|err| {
                if err.raw_os_error() == Some(libc::ENOTDIR) {
                    io::Error::other(format!(
                        "{} is not a folder (it was replaced while the folders were being created)",
                        name.to_string_lossy()
                    ))
                } else {
                    err
                }
            })?;
        }
        Ok(())
    }

    /// Replaces (or creates) the file atomically, creating missing folders first. The
    /// temporary file is made and renamed inside the folder's handle.
    pub fn write_atomic(&mut self, content: &[u8]) -> io::Result<()> {
        self.prepare_write()?;
        super::files::write_atomic_in(self.folder.as_fd(), &self.name, content)
    }

    /// [`Self::write_atomic`], giving a file that is not there yet `mode` (a rewind
    /// recreating a deleted file as it was); an existing file keeps its own.
    pub fn write_atomic_with_mode(&mut self, content: &[u8], mode: Option<u32>) -> io::Result<()> {
        self.prepare_write()?;
        super::files::write_atomic_in_mode(self.folder.as_fd(), &self.name, content, mode)
    }

    /// Removes the file (or a symlink, never what it points to) at the path; nothing
    /// there is not an error. Protected folders are refused as for a write.
    pub fn remove_file(&mut self) -> io::Result<()> {
        if !self.missing.is_empty() {
            return Ok(());
        }
        self.protection.check_path(&self.path)?;
        self.protection
            .check(self.folder.as_fd(), &self.root, &self.path)?;
        match at::remove_file_at(self.folder.as_fd(), &self.name) {
            Err(err) if err.kind() == io::ErrorKind::NotFound => Ok(()),
            result => result,
        }
    }

    /// What a write checks and makes before it writes: the path names a file, no
    /// protected folder is on the way, and the missing folders exist. A write the editor
    /// makes ([`super::client_files`]) is handed over after this.
    pub fn prepare_write(&mut self) -> io::Result<()> {
        if self.name == "." {
            return Err(io::Error::other("the path names a folder"));
        }
        // Before creating folders in a protected one (by the path as resolved, and by the
        // deepest folder that exists), and on the folder finally written to.
        self.protection.check_path(&self.path)?;
        self.protection
            .check(self.folder.as_fd(), &self.root, &self.path)?;
        self.create_folders()?;
        self.protection.check(self.folder.as_fd(), &self.root, &self.path)
    }
}

/// One entry of [`Located::list_folder`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FolderEntry {
    pub name: OsString,
    pub kind: Option<Kind>,
    pub detail: Option<EntryDetail>,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum EntryDetail {
    Bytes(u64),
    LinksTo(PathBuf),
}

/// The walk from a root to a path, as the kernel would take it.
struct Walk<'a> {
    /// The root walked under and its path.
    root: &'a Path,
    /// Folder handles from the root down; `names[i]` is the name of `folders[i + 1]`.
    folders: Vec<OwnedFd>,
    names: Vec<OsString>,
    /// Names under the deepest folder that do not exist yet.
    missing: Vec<OsString>,
}

/// Why `path` could not be resolved at `what`.
fn cannot(path: &str, what: &Path, err: io::Error) -> String {
    format!("cannot resolve `{path}` at {}: {err}", what.display())
}

impl<'a> Walk<'a> {
    /// A walk from `root`, opened, resolving `path`.
    fn start(root: &'a Path, path: &str) -> Result<Self, String> {
        Ok(Walk {
            root,
            folders: vec![at::open_folder(root).map_err(|err| cannot(path, root, err))?],
            names: Vec::new(),
            missing: Vec::new(),
        })
    }

    /// The target of the symlink `name` in the deepest folder.
    fn link_target(&self, name: &OsString, path: &str) -> Result<PathBuf, String> {
        let target = at::read_link_at(self.deepest()?.as_fd(), name)
            .map_err(|err| cannot(path, &self.here().join(name), err))?;
        if target.is_empty() {
            return Err(format!(
                "{} is an empty symbolic link",
                self.here().join(name).display()
            ));
        }
        Ok(PathBuf::from(target))
    }

    fn here(&self) -> PathBuf {
        let mut path = self.root.to_path_buf();
        path.extend(&self.names);
        path.extend(&self.missing);
        path
    }

    fn deepest(&self) -> Result<&OwnedFd, String> {
        self.folders
            .last()
            .ok_or_else(|| "internal error: the walk lost its root".to_string())
    }
}

impl Workspace {
    /// `root` and the extra read-only roots; both are resolved once here, so a workspace
    /// reached through a symlink still matches its resolved paths.
    pub fn new(root: &Path, read_roots: &[PathBuf]) -> Self {
        let canonical = |p: &Path| p.canonicalize().unwrap_or_else(|_| normalize(p));
        let root = canonical(root);
        Self {
            read_roots: read_roots.iter().map(|p| canonical(&root.join(p))).collect(),
            protection: Protection {
                folders: Arc::new(vec![root.join(SETTINGS_DIR)]),
                approved: false,
            },
            root,
            client_files: None,
        }
    }

    /// The same workspace, whose file tools read and write the files in it through the
    /// editor ([`ClientFiles`]).
    pub fn with_client_files(mut self, files: Arc<dyn ClientFiles>) -> Self {
        self.client_files = Some(files);
        self
    }

    /// The editor file tools read and write through, if any.
    pub fn client_files(&self) -> Option<&Arc<dyn ClientFiles>> {
        self.client_files.as_ref()
    }

    /// The editor to ask about the file at `path` (real, confined): one inside the
    /// workspace root and outside miniagent's own folders, which stay on the disk
    /// (their writes are approved as such, and trust fingerprints what is on disk).
    pub(super) fn client_files_for(&self, path: &Path) -> Option<&Arc<dyn ClientFiles>> {
        let files = self.client_files.as_ref()?;
        (path.starts_with(&self.root) && !self.protection.covers(path)).then_some(files)
    }

    /// The same workspace, whose writes also never enter `folders` (miniagent's config,
    /// sessions and log folders) unapproved; the workspace's `.miniagent/` always is.
    pub fn protecting(mut self, folders: &[PathBuf]) -> Self {
        let mut all = vec![self.root.join(SETTINGS_DIR)];
        all.extend(
            folders
                .iter()
                .map(|folder| folder.canonicalize().unwrap_or_else(|_| folder.clone())),
        );
        self.protection.folders = Arc::new(all);
        self
    }

    /// The same workspace for one call the person approved as changing miniagent's own
    /// folders: its writes may enter them.
    pub fn approving_protected_writes(&self) -> Self {
        let mut approved = self.clone();
        approved.protection.approved = true;
        approved
    }

    /// The same workspace, whose file tools may also read in `folder` (one session's
    /// saved results).
    pub fn reading_also(&self, folder: &Path) -> Self {
        let mut wider = self.clone();
        wider
            .read_roots
            .push(folder.canonicalize().unwrap_or_else(|_| normalize(folder)));
        wider
    }

    pub fn root(&self) -> &Path {
        &self.root
    }

    /// Whether `path` (a real path) lies in one of miniagent's own folders (the
    /// workspace's `.miniagent/`, the config, sessions and log folders).
    pub fn protects(&self, path: &Path) -> bool {
        self.protection.covers(path)
    }

    /// Where a call on `path` (as the model named it) works, for front ends: the real
    /// path when it lies inside the workspace, at `line`. `None` for a path the tools
    /// would refuse, or that leads out of the workspace.
    pub fn location(&self, path: &str, line: Option<u64>) -> Option<Location> {
        let real = self.resolve(path, Access::Read).ok()?;
        real.starts_with(&self.root).then(|| Location {
            path: real.display().to_string(),
            line: line.and_then(|line| u32::try_from(line).ok()),
        })
    }

    /// The real path `path` names, if `access` to it is allowed; otherwise a message for
    /// the model that names the resolved path.
    pub fn resolve(&self, path: &str, access: Access) -> Result<PathBuf, PathError> {
        self.locate(path, access).map(|located| located.path)
    }

    /// Resolves `path` for `access`: a handle on the folder holding it, reached without
    /// the kernel following any symlink, or a message for the model that names where it
    /// would have led.
    pub fn locate(&self, path: &str, access: Access) -> Result<Located, PathError> {
        self.locate_text(path, access).map_err(PathError)
    }

    // The checks build their messages as text; `locate` gives them their type.
    fn locate_text(&self, path: &str, access: Access) -> Result<Located, String> {
        if path.trim().is_empty() {
            return Err("the path is empty".to_string());
        }
        if path.contains('\0') {
            return Err("the path contains a NUL byte".to_string());
        }
        if path.len() > MAX_PATH_BYTES {
            return Err(format!(
                "the path is {} bytes long; a path has at most {MAX_PATH_BYTES} bytes",
                path.len()
            ));
        }
        let named = Path::new(path);
        let (root, relative) = if named.is_absolute() {
            match self.root_of(named, access) {
                Some(found) => found,
                // `/ws/a/../ws/b`: where `..` leads depends on symlinks outside the
                // workspace, which are not followed here.
                None if self.root_of(&normalize(named), access).is_some() => {
                    return Err(format!(
                        "`{path}` goes through `..` before it reaches the workspace {}; give the path relative to the workspace",
                        self.root.display()
                    ));
                }
                None => return Err(self.outside(path, &normalize(named), access)),
            }
        } else {
            (self.root.as_path(), named.to_path_buf())
        };
        if let Some(located) = self.fast_path(root, &relative)? {
            return Ok(located);
        }
        self.walk(path, access, root, components(&relative))
    }

    /// The common case in one system call: no symlink anywhere on the way, so the path
    /// folds as text exactly as the kernel would resolve it. `None` sends the path to the
    /// full walk (a symlink, a missing folder, `..` above the root, an old kernel).
    fn fast_path(&self, root: &Path, relative: &Path) -> Result<Option<Located>, String> {
        // With `..` the kernel's answer depends on symlinks before it: only the walk knows.
        if relative.components().any(|c| c == Component::ParentDir) {
            return Ok(None);
        }
        let folded = normalize(relative);
        let (parent, name) = match (folded.parent(), folded.file_name()) {
            (Some(parent), Some(name)) => (parent, name.to_os_string()),
            _ => return Ok(None),
        };
        let Ok(root_fd) = at::open_folder(root) else {
            return Ok(None);
        };
        let folder = if parent.as_os_str().is_empty() {
            root_fd
        } else {
            match at::open_beneath(root_fd.as_fd(), parent) {
                Ok(Some(folder)) => folder,
                Ok(None) | Err(_) => return Ok(None),
            }
        };
        match at::stat_at(folder.as_fd(), &name) {
            Ok(stat) if at::kind_of(&stat) == Kind::Symlink => Ok(None),
            Ok(_) => Ok(Some(Located {
                folder,
                missing: Vec::new(),
                name,
                path: root.join(&folded),
                root: self.root.clone(),
                protection: self.protection.clone(),
            })),
            Err(err) if err.kind() == io::ErrorKind::NotFound => Ok(Some(Located {
                folder,
                missing: Vec::new(),
                name,
                path: root.join(&folded),
                root: self.root.clone(),
                protection: self.protection.clone(),
            })),
            Err(_) => Ok(None),
        }
    }

    /// The root an absolute path is under (the workspace; for reading, also an extra
    /// root; the deepest one when they nest) and the path relative to it.
    fn root_of(&self, path: &Path, access: Access) -> Option<(&Path, PathBuf)> {
        let extra: &[PathBuf] = match access {
            Access::Read => &self.read_roots,
            Access::Write => &[],
        };
        std::iter::once(&self.root)
            .chain(extra)
            .filter_map(|root| {
                path.strip_prefix(root)
                    .ok()
                    .map(|rest| (root.as_path(), rest.to_path_buf()))
            })
            .max_by_key(|(root, _)| root.as_os_str().len())
    }

    fn outside(&self, path: &str, real: &Path, access: Access) -> String {
        let extra = match access {
            Access::Read if !self.read_roots.is_empty() => " or the allowed read-only folders",
            _ => "",
        };
        format!(
            "`{path}` resolves to {}, which is outside the workspace {}{extra}; file tools only work inside it",
            real.display(),
            self.root.display()
        )
    }

    /// Resolves `queue` component by component under `root`: each folder opened with
    /// `O_NOFOLLOW` relative to the one before, each symlink read and its target walked in
    /// its place, `..` going back to the folder walked through (never above the root).
    fn walk(
        &self,
        path: &str,
        access: Access,
        root: &Path,
        queue: VecDeque<OsString>,
    ) -> Result<Located, String> {
        let mut walk = Walk::start(root, path)?;
        let mut queue = queue;
        let mut hops = 0u32;
        // The last name, once reached; it is not opened, only looked at.
        let mut last: Option<OsString> = None;
        while let Some(name) = queue.pop_front() {
            if name == ".." {
                self.step_up(&mut walk, path, access, &queue)?;
                continue;
            }
            let is_last = queue.is_empty();
            if !walk.missing.is_empty() {
                match is_last {
                    true => last = Some(name),
                    false => walk.missing.push(name),
                }
                continue;
            }
            let folder = walk.deepest()?;
            let stat = match at::stat_at(folder.as_fd(), &name) {
                Ok(stat) => Some(stat),
                Err(err) if err.kind() == io::ErrorKind::NotFound => None,
                Err(err) => return Err(cannot(path, &walk.here().join(&name), err)),
            };
            match stat.as_ref().map(at::kind_of) {
                Some(Kind::Symlink) => {
                    hops += 1;
                    if hops > MAX_SYMLINK_HOPS {
                        return Err(format!(
                            "too many levels of symbolic links at {}",
                            walk.here().join(&name).display()
                        ));
                    }
                    let target = walk.link_target(&name, path)?;
                    queue = self.follow(&mut walk, target, path, access, queue)?;
                }
                None if is_last => last = Some(name),
                None => walk.missing.push(name),
                Some(_) if is_last => last = Some(name),
                Some(Kind::Folder) => match at::open_subfolder(folder.as_fd(), &name) {
                    Ok(opened) => {
                        walk.folders.push(opened);
                        walk.names.push(name);
                    }
                    // Swapped for a symlink since the look: look again.
                    Err(err) if err.raw_os_error() == Some(libc::ENOTDIR) => {
                        hops += 1;
                        if hops > MAX_SYMLINK_HOPS {
                            return Err(format!("`{path}` kept changing while it was resolved"));
                        }
                        queue.push_front(name);
                    }
                    Err(err) => return Err(cannot(path, &walk.here().join(&name), err)),
                },
                Some(Kind::File | Kind::Other) => {
                    return Err(format!(
                        "`{path}`: {} is not a folder",
                        self.display(&walk.here().join(&name))
                    ));
                }
            }
        }
        self.located(walk, last)
    }

    /// A `..` in the walk: back to the folder walked through, or a name that did not
    /// exist dropped; never above the root (`queue` is what was still to walk).
    fn step_up(
        &self,
        walk: &mut Walk<'_>,
        path: &str,
        access: Access,
        queue: &VecDeque<OsString>,
    ) -> Result<(), String> {
        if walk.missing.pop().is_some() {
            return Ok(());
        }
        if walk.names.pop().is_some() {
            walk.folders.pop();
            return Ok(());
        }
        let mut beyond = walk.here();
        beyond.push("..");
        beyond.extend(queue);
        let beyond = normalize(&beyond);
        if self.root_of(&beyond, access).is_some() {
            // Out and back in: refused like any step above a root, as
            // `RESOLVE_BENEATH` does, but said as it is.
            return Err(format!(
                "`{path}` goes above {} with `..` before coming back; file tools do not leave the workspace even on the way",
                walk.root.display()
            ));
        }
        Err(self.outside(path, &beyond, access))
    }

    /// What is left to walk after a symlink to `target`: its names, then `queue`. An
    /// absolute target is walked again from the root it is in; one under no root is
    /// outside.
    fn follow<'a>(
        &'a self,
        walk: &mut Walk<'a>,
        target: PathBuf,
        path: &str,
        access: Access,
        queue: VecDeque<OsString>,
    ) -> Result<VecDeque<OsString>, String> {
        let inside = if target.is_absolute() {
            let Some((new_root, inside)) = self.root_of(&target, access) else {
                let mut beyond = target;
                beyond.extend(&queue);
                return Err(self.outside(path, &normalize(&beyond), access));
            };
            *walk = Walk::start(new_root, path)?;
            inside
        } else {
            target
        };
        let mut ahead = components(&inside);
        ahead.extend(queue);
        Ok(ahead)
    }

    /// Where a finished walk ended: the folder holding the last name (`last`), or, when
    /// the path ended at a folder (`..`, a root), that folder named "." in itself, or by
    /// its own name when it does not exist yet.
    fn located(&self, mut walk: Walk<'_>, last: Option<OsString>) -> Result<Located, String> {
        let here = walk.here();
        let (path, name) = match last {
            Some(name) => (here.join(&name), name),
            None => match walk.missing.pop() {
                Some(name) => (here, name),
                None => (here, OsString::from(".")),
            },
        };
        let folder = walk
            .folders
            .pop()
            .ok_or_else(|| "internal error: the walk lost its root".to_string())?;
        Ok(Located {
            folder,
            missing: walk.missing,
            name,
            path,
            root: self.root.clone(),
            protection: self.protection.clone(),
        })
    }

    /// `path` relative to the workspace when inside it, for messages.
    pub fn display(&self, path: &Path) -> String {
        match path.strip_prefix(&self.root) {
            Ok(relative) if relative.as_os_str().is_empty() => ".".to_string(),
            Ok(relative) => relative.display().to_string(),
            Err(_) => path.display().to_string(),
        }
    }
}

/// The names of a path in order, `..` kept as a name and `.` and `/` dropped.
fn components(path: &Path) -> VecDeque<OsString> {
    path.components()
        .filter_map(|component| match component {
            Component::Normal(name) => Some(name.to_os_string()),
            Component::ParentDir => Some(OsString::from("..")),
            Component::CurDir | Component::RootDir | Component::Prefix(_) => None,
        })
        .collect()
}

/// Folds `.` and `..` without touching the file system (`..` at the root stays at the
/// root); only for messages and for paths with no symlink on the way.
pub(crate) fn normalize(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for component in path.components() {
        match component {
            Component::ParentDir => {
                out.pop();
            }
            Component::CurDir => {}
            Component::Prefix(_) | Component::RootDir | Component::Normal(_) => out.push(component),
        }
    }
    out
}

impl super::client_files::ThroughClient for Workspace {
    fn client_files_for(&self, path: &Path) -> Option<&Arc<dyn ClientFiles>> {
        Workspace::client_files_for(self, path)
    }
}

#[cfg(test)]
mod tests;
