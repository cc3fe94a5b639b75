//! The session's kept file contents: one file per content, named by its SHA-256, in a
//! private folder of the data folder (`checkpoints/<session id>/`), each written whole
//! under a temporary name and renamed into place.
//! Never in the workspace.

use std::io::Write;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};

/// Why a content could not be kept or read back.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// Keeping it would pass `checkpoints.max_session_bytes`.
    #[error(
        "the session keeps {} already, and {} is the most (checkpoints.max_session_bytes)",
        crate::tools::files::human_size(*kept),
        crate::tools::files::human_size(*max)
    )]
    Full { kept: u64, max: u64 },
    #[error("the checkpoint store {path}: {source}")]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    /// What is kept under that name is not that content (changed on disk since).
    #[error("the kept copy {0} is damaged")]
    Damaged(String),
}

/// The SHA-256 of `bytes`, in hex: a content's name in the store and in the log.
pub fn digest(bytes: &[u8]) -> String {
    let hash = Sha256::digest(bytes);
    hash.iter().map(|byte| format!("{byte:02x}")).collect()
}

/// One session's store.
#[derive(Debug)]
pub struct Store {
    dir: PathBuf,
    /// Bytes kept so far (measured from the folder when it was opened).
    kept: u64,
    max: u64,
}

impl Store {
    /// The store in `dir` (made, private, at the first content kept), keeping at most
    /// `max` bytes in all.
    pub fn open(dir: PathBuf, max: u64) -> Self {
        let kept = std::fs::read_dir(&dir)
            .map(|entries| {
                entries
                    .filter_map(Result::ok)
                    .filter_map(|entry| entry.metadata().ok())
                    .filter(std::fs::Metadata::is_file)
                    .map(|meta| meta.len())
                    .sum()
            })
            .unwrap_or(0);
        Self { dir, kept, max }
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }

    pub fn kept_bytes(&self) -> u64 {
        self.kept
    }

    /// Keeps `bytes` whose SHA-256 is `id`; kept already costs nothing.
    pub fn put(&mut self, id: &str, bytes: &[u8]) -> Result<(), StoreError> {
        let path = self.path_of(id)?;
        // Kept already (not through a symlink: one swapped in is replaced below).
        if std::fs::symlink_metadata(&path).is_ok_and(|meta| meta.is_file()) {
            return Ok(());
        }
        let size = u64::try_from(bytes.len()).unwrap_or(u64::MAX);
        if self.kept.saturating_add(size) > self.max {
            return Err(StoreError::Full {
                kept: self.kept,
                max: self.max,
            });
        }
        let io = |source| StoreError::Io {
            path: self.dir.clone(),
            source,
        };
        crate::config::private_dir(&self.dir).map_err(io)?;
        let temp = self.dir.join(format!(".{id}.{:08x}.tmp", fastrand::u32(..)));
        let written = (|| {
            let mut file = std::fs::OpenOptions::new()
                .write(true)
                .create_new(true)
                .mode(0o600)
                .open(&temp)?;
            file.write_all(bytes)?;
            // Not flushed to disk one by one: the first look keeps thousands of files, and
            // a flush each made it seconds long. A copy a crash cut short no longer matches
            // its name, and `get` then refuses it (a rewind says it was not kept).
            std::fs::rename(&temp, &path)
        })();
        if let Err(err) = written {
            let _ = std::fs::remove_file(&temp);
            return Err(io(err));
        }
        self.kept = self.kept.saturating_add(size);
        Ok(())
    }

    /// The content kept as `id` (`size` bytes, as recorded), checked against its name.
    /// Only a regular file is read, never through a symlink and never more than `size`
    /// bytes and one: whoever can write the data folder could have put a FIFO or a link to
    /// `/dev/zero` in its place.
    pub fn get(&self, id: &str, size: u64) -> Result<Vec<u8>, StoreError> {
        use std::io::Read;
        use std::os::unix::fs::MetadataExt;
        let path = self.path_of(id)?;
        let io = |source| StoreError::Io {
            path: path.clone(),
            source,
        };
        let file = std::fs::OpenOptions::new()
            .read(true)
            .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK | libc::O_CLOEXEC)
            .open(&path)
            .map_err(io)?;
        let meta = file.metadata().map_err(io)?;
        if !meta.is_file() || meta.size() != size {
            return Err(StoreError::Damaged(id.to_string()));
        }
        let mut bytes = Vec::new();
        file.take(size.saturating_add(1))
            .read_to_end(&mut bytes)
            .map_err(io)?;
        if digest(&bytes) != id {
            return Err(StoreError::Damaged(id.to_string()));
        }
        Ok(bytes)
    }

    /// Only a digest names a file here (a log edited by hand cannot name another path).
    fn path_of(&self, id: &str) -> Result<PathBuf, StoreError> {
        if id.len() != 64
            || !id
                .bytes()
                .all(|b| b.is_ascii_hexdigit() && !b.is_ascii_uppercase())
        {
            return Err(StoreError::Damaged(id.to_string()));
        }
        Ok(self.dir.join(id))
    }
}
