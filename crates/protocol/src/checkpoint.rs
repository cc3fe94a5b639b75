//! What a session changed in the workspace, as front ends see it (`/diff`) and take it
//! back (`/rewind`, `/undo`). Turns are numbered from 1 in the order the session started
//! them ([`crate::Event::TurnStarted`]); a number is never reused, also after a rewind.

use serde::{Deserialize, Serialize};

use crate::TextChange;

/// What a rewind puts back as it was just before a turn's message.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RewindScope {
    /// The workspace's files the session changed from that turn on.
    Code,
    /// The conversation: the next request carries the history from before that message
    /// (what followed is set aside, kept in the session log).
    Conversation,
    /// Both.
    Both,
}

/// One message a rewind can go back to ([`crate::Event::RewindPoints`]).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct RewindPoint {
    pub turn: u32,
    /// The person's message, as they wrote it.
    pub text: String,
    /// Files the session changed from this turn on that a code rewind would put back.
    pub files: u32,
    /// The conversation can go back to here (not inside a range a summary replaced).
    pub conversation: bool,
}

/// How a file stands after the changes a [`FileDiff`] covers.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FileStatus {
    Added,
    Modified,
    Deleted,
}

/// One file's change over a session or a turn ([`crate::Event::DiffReport`]).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct FileDiff {
    /// Relative to the workspace.
    pub path: String,
    pub status: FileStatus,
    /// The text before and after (`old_text` `None`: the file was new; `new_text` empty
    /// for a deleted file), when both are text and small enough to carry.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub change: Option<TextChange>,
    /// Why there is no text to show (binary, too large, its earlier content not kept).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
    /// The file on disk is no longer what the session left (changed by someone else
    /// since); the diff shows what the session wrote.
    #[serde(default)]
    pub changed_outside: bool,
}

/// A turn that changed files, for picking one turn's diff.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct TurnChanges {
    pub turn: u32,
    /// The person's message of that turn.
    pub text: String,
    /// How many files it changed.
    pub files: u32,
}
