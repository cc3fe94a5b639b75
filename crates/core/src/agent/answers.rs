//! Answers to what front ends ask about the session's files instead of reading them
//! themselves: the workspace's notes ([`Op::ReadNotes`]) and a finished call's result as
//! the session log recorded it ([`Op::RecordedCall`]). Both read files, so they run on
//! the blocking pool and never hold up the agent's loop.
//!
//! [`Op::ReadNotes`]: miniagent_protocol::Op::ReadNotes
//! [`Op::RecordedCall`]: miniagent_protocol::Op::RecordedCall

use std::path::{Path, PathBuf};

use super::EventSink;
use miniagent_protocol::{CallId, Event, NoteInfo, RecordedOutput};

/// Emits [`Event::Notes`] with the notes of the workspace at `root`.
pub(super) fn notes(root: PathBuf, events: EventSink) {
    tokio::task::spawn_blocking(move || events.emit(notes_event(&root)));
}

/// [`Event::Notes`] with the notes of the workspace at `root`, read now.
pub fn notes_event(root: &Path) -> Event {
    match crate::tools::notes::load_notes(root) {
        Ok(notes) => Event::Notes {
            notes: notes
                .into_iter()
                .map(|note| NoteInfo {
                    category: note.category,
                    content: note.content,
                    timestamp: note.timestamp,
                })
                .collect(),
            error: None,
        },
        Err(error) => Event::Notes {
            notes: Vec::new(),
            error: Some(error.to_string()),
        },
    }
}

/// Emits [`Event::RecordedCall`] with what the log at `log` holds of call `id`.
pub(super) fn recorded_call(log: Option<PathBuf>, id: CallId, events: EventSink) {
    tokio::task::spawn_blocking(move || events.emit(recorded_call_event(log.as_deref(), id)));
}

/// [`Event::RecordedCall`] with what the log at `log` holds of call `id`, read now.
pub fn recorded_call_event(log: Option<&Path>, id: CallId) -> Event {
    let read = match log {
        Some(path) => crate::session::load::tool_call(path, &id).map_err(|err| err.to_string()),
        None => Err("this session is not recorded".to_string()),
    };
    match read {
        Ok(call) => Event::RecordedCall {
            id,
            result: call.result,
            output: call.output.map(|output| {
                let (head, tail, dropped) = output.parts();
                RecordedOutput { head, tail, dropped }
            }),
            error: None,
        },
        Err(error) => Event::RecordedCall {
            id,
            result: None,
            output: None,
            error: Some(error),
        },
    }
}
