//! Session notes: `record_note {content, category?}` and `recall_notes {category?}`, kept
//! in `<workspace>/.agent_memory.json` as Mini-Agent keeps them (a JSON array of
//! `{timestamp, category, content}`), written atomically. The file is opened relative to
//! a handle on the workspace folder and never through a symlink or a hard link.

use std::ffi::OsStr;
use std::io::Read;
use std::os::fd::AsFd;
use std::path::Path;
use std::sync::Arc;

use futures_util::future::BoxFuture;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use tokio::sync::Mutex;

use super::at;
use super::files::{now_iso8601, write_atomic_in};
use super::{ToolContext, ToolEffect, ToolOutput};
use miniagent_protocol::ApprovalRequest;

/// The notes file, relative to the workspace.
pub const NOTES_FILE: &str = ".agent_memory.json";
const DEFAULT_CATEGORY: &str = "general";
/// The largest notes file read; a bigger one is not notes this agent wrote.
const MAX_NOTES_BYTES: u64 = 8 * 1024 * 1024;

/// One note.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Note {
    pub timestamp: String,
    pub category: String,
    pub content: String,
}

/// Serialises writers within the session so two notes never race on the file.
#[derive(Clone, Default)]
pub struct NotesLock(Arc<Mutex<()>>);

/// Reads the notes; a missing file is no notes, a damaged one is an error (never
/// overwritten), and a symlink, a hard link or anything but a regular file is refused.
pub fn load_notes(workspace: &Path) -> Result<Vec<Note>, NotesError> {
    let folder = at::open_folder(workspace).map_err(NotesError::Unreadable)?;
    let flags = libc::O_RDONLY | libc::O_NONBLOCK;
    let fd = match at::open_at(folder.as_fd(), OsStr::new(NOTES_FILE), flags, 0) {
        Ok(fd) => fd,
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(err) if err.raw_os_error() == Some(libc::ELOOP) => return Err(NotesError::Symlink),
        Err(err) => return Err(NotesError::Unreadable(err)),
    };
    let stat = at::stat_fd(fd.as_fd()).map_err(NotesError::Unreadable)?;
    if at::kind_of(&stat) != at::Kind::File {
        return Err(NotesError::NotAFile);
    }
    if stat.st_nlink > 1 {
        return Err(NotesError::HardLinked(stat.st_nlink));
    }
    let size = u64::try_from(stat.st_size).unwrap_or(0);
    if size > MAX_NOTES_BYTES {
        return Err(NotesError::TooLarge(size));
    }
    let mut text = String::new();
    std::fs::File::from(fd)
        .take(MAX_NOTES_BYTES)
        .read_to_string(&mut text)
        .map_err(NotesError::Unreadable)?;
    if text.trim().is_empty() {
        return Ok(Vec::new());
    }
    serde_json::from_str(&text).map_err(NotesError::NotNotes)
}

/// Why the notes could not be read. Each says what was left alone: a damaged or suspect
/// notes file is never overwritten.
#[derive(Debug, thiserror::Error)]
pub enum NotesError {
    #[error("cannot read {file}: {0}", file = NOTES_FILE)]
    Unreadable(std::io::Error),
    #[error("{file} is a symbolic link; notes are kept only in a regular file in the workspace, so it was left as it is", file = NOTES_FILE)]
    Symlink,
    #[error("{file} is not a regular file; it was left as it is", file = NOTES_FILE)]
    NotAFile,
    #[error("{file} has {0} hard links, so it may be shared with a file outside the workspace; it was left as it is", file = NOTES_FILE)]
    HardLinked(u64),
    #[error("{file} is {0} bytes, more than notes take ({max} at most); it was left as it is", file = NOTES_FILE, max = MAX_NOTES_BYTES)]
    TooLarge(u64),
    #[error("{file} is not a JSON array of notes ({0}); it was left as it is", file = NOTES_FILE)]
    NotNotes(serde_json::Error),
}

/// Replaces the notes file with `json`, atomically, inside the workspace folder's handle.
fn save_notes(workspace: &Path, json: &str) -> std::io::Result<()> {
    let folder = at::open_folder(workspace)?;
    write_atomic_in(folder.as_fd(), OsStr::new(NOTES_FILE), json.as_bytes())
}

/// The `record_note` tool.
pub struct RecordNoteTool {
    lock: NotesLock,
}

impl RecordNoteTool {
    pub fn new(lock: NotesLock) -> Self {
        Self { lock }
    }
}

/// `record_note`'s arguments.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RecordArgs {
    /// What to remember.
    pub content: String,
    /// A label to group notes by (default "general").
    pub category: Option<String>,
}

impl super::TypedTool for RecordNoteTool {
    type Args = RecordArgs;

    fn name(&self) -> &str {
        "record_note"
    }

    fn description(&self) -> &str {
        "Record a short note to remember across this session and later ones (decisions, facts \
         about the project, progress). Notes are kept in the workspace."
    }

    fn effect(&self) -> ToolEffect {
        ToolEffect::WritesFiles
    }

    /// It writes the notes file, not a file the person edits: not shown as an edit.
    fn kind(&self) -> miniagent_protocol::ToolKind {
        miniagent_protocol::ToolKind::Other
    }

    fn approval_request<'a>(
        &'a self,
        args: &'a RecordArgs,
        _workspace: &'a super::paths::Workspace,
    ) -> BoxFuture<'a, Result<Option<ApprovalRequest>, super::InvalidCall>> {
        let category = args.category.as_deref().unwrap_or(DEFAULT_CATEGORY);
        let request = ApprovalRequest::Other {
            name: "record_note".to_string(),
            preview: format!("note [{category}] in {NOTES_FILE}:\n{}", args.content),
        };
        Box::pin(async move { Ok(Some(request)) })
    }

    fn run(&self, args: RecordArgs, context: ToolContext) -> BoxFuture<'_, ToolOutput> {
        Box::pin(async move {
            let content = args.content.trim().to_string();
            if content.is_empty() {
                return ToolOutput::error("`content` is empty");
            }
            let category = args
                .category
                .as_deref()
                .map(str::trim)
                .filter(|c| !c.is_empty())
                .unwrap_or(DEFAULT_CATEGORY)
                .to_string();
            let _guard = self.lock.0.lock().await;
            let root = context.workspace.root();
            let mut notes = match load_notes(root) {
                Ok(notes) => notes,
                Err(why) => return ToolOutput::error(why.to_string()),
            };
            notes.push(Note {
                timestamp: now_iso8601(),
                category: category.clone(),
                content,
            });
            let json = match serde_json::to_string_pretty(&notes) {
                Ok(json) => json,
                Err(err) => return ToolOutput::error(format!("cannot encode the notes: {err}")),
            };
            match save_notes(root, &json) {
                Ok(()) => ToolOutput::ok(format!(
                    "noted under \"{category}\" ({} notes in all)",
                    notes.len()
                )),
                Err(err) => ToolOutput::error(format!("cannot write {NOTES_FILE}: {err}")),
            }
        })
    }
}

/// The `recall_notes` tool.
pub struct RecallNotesTool;

/// `recall_notes`'s arguments.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RecallArgs {
    /// Only notes of this category.
    pub category: Option<String>,
}

impl super::TypedTool for RecallNotesTool {
    type Args = RecallArgs;

    fn name(&self) -> &str {
        "recall_notes"
    }

    fn description(&self) -> &str {
        "Read the notes recorded with record_note, optionally only one category."
    }

    fn effect(&self) -> ToolEffect {
        ToolEffect::ReadOnly
    }

    fn run(&self, args: RecallArgs, context: ToolContext) -> BoxFuture<'_, ToolOutput> {
        Box::pin(async move {
            let notes = match load_notes(context.workspace.root()) {
                Ok(notes) => notes,
                Err(why) => return ToolOutput::error(why.to_string()),
            };
            let category = args.category.as_deref();
            let chosen: Vec<&Note> = notes
                .iter()
                .filter(|note| category.is_none_or(|c| note.category == c))
                .collect();
            if chosen.is_empty() {
                return ToolOutput::ok(match category {
                    Some(category) => format!("no notes in category \"{category}\""),
                    None => "no notes recorded yet".to_string(),
                });
            }
            let lines: Vec<String> = chosen
                .iter()
                .enumerate()
                .map(|(i, note)| {
                    format!(
                        "{}. [{}] {} ({})",
                        i + 1,
                        note.category,
                        note.content,
                        note.timestamp
                    )
                })
                .collect();
            ToolOutput::ok(lines.join("\n"))
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tools::OutputSink;
    use crate::tools::Tool;
    use crate::tools::paths::Workspace;
    use pretty_assertions::assert_eq;
    use serde_json::{Value, json};
    use tokio_util::sync::CancellationToken;

    #[tokio::test]
    async fn notes_round_trip_in_the_mini_agent_format() {
        let dir = std::env::temp_dir().join(format!("miniagent-notes-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let context = || ToolContext {
            workspace: Arc::new(Workspace::new(&dir, &[])),
            cancel: CancellationToken::new(),
            output: OutputSink::discard(),
            approval: crate::config::ApprovalMode::FullAuto,
            unasked: false,
            sub_agents: None,
            save_to: None,
        };
        let record = RecordNoteTool::new(NotesLock::default());
        assert_eq!(
            record.run(json!({"content": "uses tokio"}), context()).await,
            ToolOutput::ok("noted under \"general\" (1 notes in all)")
        );
        record
            .run(
                json!({"content": "tests pass", "category": "progress"}),
                context(),
            )
            .await;
        let raw: Vec<serde_json::Map<String, Value>> =
            serde_json::from_str(&std::fs::read_to_string(dir.join(NOTES_FILE)).unwrap()).unwrap();
        assert_eq!(raw.len(), 2);
        assert_eq!(raw[1]["category"], "progress");
        // The keys, whatever order the file has them in.
        let mut keys: Vec<&String> = raw[1].keys().collect();
        keys.sort();
        assert_eq!(keys, vec!["category", "content", "timestamp"]);
        let recalled = RecallNotesTool
            .run(json!({"category": "progress"}), context())
            .await;
        assert!(
            recalled.content.starts_with("1. [progress] tests pass ("),
            "{}",
            recalled.content
        );
        assert_eq!(
            RecallNotesTool.run(json!({"category": "none"}), context()).await,
            ToolOutput::ok("no notes in category \"none\"")
        );
        std::fs::write(dir.join(NOTES_FILE), "{broken").unwrap();
        let broken = record.run(json!({"content": "x"}), context()).await;
        assert!(
            broken.is_error && broken.content.contains("left as it is"),
            "{}",
            broken.content
        );
        assert_eq!(std::fs::read_to_string(dir.join(NOTES_FILE)).unwrap(), "{broken");
        std::fs::remove_dir_all(dir).unwrap();
    }
}
