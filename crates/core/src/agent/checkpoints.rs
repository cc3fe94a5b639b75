//! BASE SKELETON (issue 30): the checkpoint helper replaces every body here.
//! `/diff`, `/undo` and the code half of a rewind.

use super::{Session, Shared};
use miniagent_protocol::Event;

/// Why the code could not be put back; nothing was changed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Refusal {
    /// Says why, whole.
    pub message: String,
    /// The files changed outside miniagent that stopped it (relative to the workspace).
    pub files: Vec<String>,
}

/// Answers `Op::Diff` with `Event::DiffReport` (without waiting on a running turn).
pub(super) fn diff(shared: &Shared, _turn: Option<u32>) {
    shared.events.emit(Event::Notice {
        message: "checkpoints are not built yet".to_string(),
    });
}

/// `/undo`: the latest turn whose file changes are still in place, taken back.
pub(super) async fn undo(shared: &Shared) {
    shared.events.emit(Event::RewindRefused {
        message: "checkpoints are not built yet".to_string(),
        files: Vec::new(),
    });
}

/// Puts back every workspace file the session changed from turn `turn` on, as it was
/// just before that turn; refuses (changing nothing) when one was changed outside
/// miniagent since. Gives the files put back, relative to the workspace.
pub(super) async fn restore_code(
    _shared: &Shared,
    _session: &mut Session,
    _turn: u32,
) -> Result<Vec<String>, Refusal> {
    Err(Refusal {
        message: "checkpoints are not built yet".to_string(),
        files: Vec::new(),
    })
}

/// How many files a code rewind to turn `turn` would put back.
pub(super) fn files_from(_shared: &Shared, _session: &Session, _turn: u32) -> u32 {
    0
}
