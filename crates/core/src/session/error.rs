//! Why a session log could not be read, resolved or continued. The messages are what a
//! person sees (`sessions show`, `--resume`, the workbench's notices), one line each.

use std::path::PathBuf;

#[derive(Debug, thiserror::Error)]
pub enum SessionError {
    /// A file operation failed (`action` is "read", "open", "repair"...).
    #[error("cannot {action} {}: {error}", path.display())]
    Io {
        action: &'static str,
        path: PathBuf,
        error: std::io::Error,
    },
    #[error("{name} was written by a newer miniagent (log format {found}, this one reads {reads})")]
    Newer { name: String, found: u32, reads: u32 },
    #[error("{name} is empty: it holds no session")]
    Empty { name: String },
    #[error("{name} is not a miniagent session log (its first line is not a session header)")]
    NotALog { name: String },
    #[error("session {id} is open in another miniagent; quit that one first")]
    InUse { id: String },
    #[error("{} changed while it was being read; resume it again", path.display())]
    Changed { path: PathBuf },
    #[error("no data folder on this machine holds sessions; set MINIAGENT_DATA_DIR")]
    NoDataFolder,
    #[error("`{0}` is not a session id")]
    BadId(String),
    #[error("no session `{id}` in {}; `miniagent sessions list` shows them", dir.display())]
    NotFound { id: String, dir: PathBuf },
    #[error("`{id}` could be any of {}; give more of the id", candidates.join(", "))]
    Ambiguous { id: String, candidates: Vec<String> },
    /// Writing the log failed earlier; the writer says how.
    #[error("{0}")]
    Write(String),
}

impl SessionError {
    pub(crate) fn io(action: &'static str, path: &std::path::Path, error: std::io::Error) -> Self {
        SessionError::Io {
            action,
            path: path.to_path_buf(),
            error,
        }
    }
}
