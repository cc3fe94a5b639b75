//! The editor's view of files. A face whose client is an editor (ACP's
//! `fs/read_text_file` and `fs/write_text_file`) hands the session a [`ClientFiles`]; the
//! file tools then read a file's text from the editor (so an unsaved buffer is what the
//! model sees and what an edit's diff and match are made on) and write through it (so
//! the edit lands in the buffer), while every check stays the tools' own: a path is
//! confined to the workspace, and found a regular, singly linked text file on disk,
//! before the editor is asked anything. miniagent's own folders, files outside the
//! workspace root (skills, saved results), `bash` and the notes file stay on the disk.
//!
//! What the disk checks cannot make atomic with an editor's write: the folder checks
//! (a symlink or a protected folder swapped in on the way) are re-run just before the
//! write is handed over, but the editor opens the path itself afterwards.

use std::path::Path;

use futures_util::future::BoxFuture;

use std::sync::Arc;

/// The editor's side of file reading and writing. Paths are absolute, real (no symlink
/// on the way) and already confined to the workspace.
pub trait ClientFiles: Send + Sync + std::fmt::Debug {
    /// The text the editor has for `path`: an open buffer's, saved or not, else the file's.
    fn read_text(&self, path: &Path) -> BoxFuture<'_, Result<String, ClientFileError>>;
    /// Puts `text` in `path` as the editor does (into its buffer, creating the file).
    fn write_text(&self, path: &Path, text: String) -> BoxFuture<'_, Result<(), ClientFileError>>;
}

/// Why the editor did not read or write a file.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ClientFileError {
    /// The editor has no such file.
    #[error("the editor has no such file")]
    NotFound,
    /// Anything else, in the editor's words.
    #[error("the editor could not do it: {0}")]
    Other(String),
}

/// What the editor said a file holds.
pub(super) enum ClientText {
    /// Its text.
    Text(String),
    /// It has no such file.
    NotFound,
    /// No editor reads this file (none is set, or the file is one the disk keeps), or it
    /// failed (logged): read the disk.
    Disk,
}

/// Where files may be read through an editor (the workspace): the editor to ask about
/// `path`, if any. A trait, so this module need not know the workspace's type.
pub(super) trait ThroughClient {
    fn client_files_for(&self, path: &Path) -> Option<&Arc<dyn ClientFiles>>;
}

/// The file at `path` (real, confined) as the editor has it, when the workspace reads
/// through one and the file is one the editor may be asked about.
pub(super) async fn read(workspace: &impl ThroughClient, path: &Path) -> ClientText {
    let Some(client) = workspace.client_files_for(path) else {
        return ClientText::Disk;
    };
    match client.read_text(path).await {
        Ok(text) => ClientText::Text(text),
        Err(ClientFileError::NotFound) => ClientText::NotFound,
        Err(ClientFileError::Other(why)) => {
            // The disk still has the file: the model gets its saved text, not an error.
            tracing::warn!(
                "the editor did not read {}; read from disk: {why}",
                path.display()
            );
            ClientText::Disk
        }
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use std::collections::BTreeMap;
    use std::path::PathBuf;
    use std::sync::Mutex;

    /// One call the fake editor got.
    #[derive(Clone, Debug, PartialEq, Eq)]
    pub(crate) enum Asked {
        Read(PathBuf),
        Write(PathBuf, String),
    }

    /// An editor held in memory: its buffers (which may differ from the disk), the
    /// paths it fails on, and every call it got.
    #[derive(Debug, Default)]
    pub(crate) struct FakeEditor {
        pub(crate) buffers: Mutex<BTreeMap<PathBuf, String>>,
        /// Paths it answers with `Other`.
        pub(crate) failing: Vec<PathBuf>,
        pub(crate) asked: Mutex<Vec<Asked>>,
    }

    impl FakeEditor {
        pub(crate) fn with_buffer(path: &Path, text: &str) -> Self {
            let editor = Self::default();
            editor.set(path, text);
            editor
        }

        pub(crate) fn set(&self, path: &Path, text: &str) {
            self.buffers
                .lock()
                .unwrap()
                .insert(path.to_path_buf(), text.to_string());
        }

        pub(crate) fn buffer(&self, path: &Path) -> Option<String> {
            self.buffers.lock().unwrap().get(path).cloned()
        }

        pub(crate) fn asked(&self) -> Vec<Asked> {
            self.asked.lock().unwrap().clone()
        }
    }

    impl ClientFiles for FakeEditor {
        fn read_text(&self, path: &Path) -> BoxFuture<'_, Result<String, ClientFileError>> {
            self.asked.lock().unwrap().push(Asked::Read(path.to_path_buf()));
            let answer = if self.failing.iter().any(|failing| failing == path) {
                Err(ClientFileError::Other("the buffer is locked".into()))
            } else {
                self.buffer(path).ok_or(ClientFileError::NotFound)
            };
            Box::pin(async move { answer })
        }

        fn write_text(&self, path: &Path, text: String) -> BoxFuture<'_, Result<(), ClientFileError>> {
            self.asked
                .lock()
                .unwrap()
                .push(Asked::Write(path.to_path_buf(), text.clone()));
            let answer = if self.failing.iter().any(|failing| failing == path) {
                Err(ClientFileError::Other("the buffer is read-only".into()))
            } else {
                self.set(path, &text);
                Ok(())
            };
            Box::pin(async move { answer })
        }
    }
}

/// The file tools against [`tests::FakeEditor`], whose buffers differ from the disk.
#[cfg(test)]
mod through_the_editor {
    use super::tests::*;
    use super::*;
    use crate::tools::edit::{EditFileTool, WriteFileTool};
    use crate::tools::read::ReadFileTool;
    use crate::tools::{OutputSink, Tool, ToolContext, ToolOutput, Workspace};
    use miniagent_protocol::{ApprovalRequest, TextChange};
    use pretty_assertions::assert_eq;
    use serde_json::{Value, json};
    use std::path::PathBuf;
    use std::sync::Arc;
    use tokio_util::sync::CancellationToken;

    /// A fresh workspace folder (resolved, so paths compare with what the tools use).
    fn scratch(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("miniagent-client-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        dir.canonicalize().unwrap()
    }

    fn workspace(dir: &Path, editor: &Arc<FakeEditor>) -> Workspace {
        Workspace::new(dir, &[]).with_client_files(Arc::clone(editor) as Arc<dyn ClientFiles>)
    }

    async fn run(tool: &dyn Tool, workspace: &Workspace, arguments: Value) -> ToolOutput {
        let context = ToolContext {
            workspace: Arc::new(workspace.clone()),
            cancel: CancellationToken::new(),
            output: OutputSink::discard(),
            approval: crate::config::ApprovalMode::FullAuto,
            unasked: false,
            sub_agents: None,
            save_to: None,
        };
        tool.run(arguments, context).await
    }

    fn read_tool() -> ReadFileTool {
        ReadFileTool::new(1000, crate::tokens::Encoding::Cl100kBase)
    }

    /// read_file shows the editor's unsaved buffer, windowed as a file on disk is.
    #[tokio::test]
    async fn read_file_sees_the_unsaved_buffer() {
        let dir = scratch("read");
        let file = dir.join("notes.txt");
        std::fs::write(&file, "saved\n").unwrap();
        let editor = Arc::new(FakeEditor::with_buffer(&file, "unsaved\nsecond\nthird\n"));
        let workspace = workspace(&dir, &editor);
        assert_eq!(
            run(
                &read_tool(),
                &workspace,
                json!({"path": "notes.txt", "offset": 2, "limit": 1})
            )
            .await,
            ToolOutput::ok("     2|second")
        );
        assert_eq!(
            run(&read_tool(), &workspace, json!({"path": "notes.txt"})).await,
            ToolOutput::ok("     1|unsaved\n     2|second\n     3|third")
        );
        assert_eq!(editor.asked(), vec![Asked::Read(file.clone()), Asked::Read(file)]);
        std::fs::remove_dir_all(dir).unwrap();
    }

    /// An edit's question and its match are made on the buffer (`old_str` is only in the
    /// unsaved text), and the edited text is written to the editor, not to the disk.
    #[tokio::test]
    async fn an_edit_is_made_on_the_buffer_and_lands_in_the_editor() {
        let dir = scratch("edit");
        let file = dir.join("f.rs");
        std::fs::write(&file, "let a = 1;\n").unwrap();
        let editor = Arc::new(FakeEditor::with_buffer(&file, "let a = 1;\nlet b = 2;\n"));
        let workspace = workspace(&dir, &editor);
        let edit = json!({"path": "f.rs", "old_str": "b = 2", "new_str": "b = 3"});
        let change = Some(TextChange {
            old_text: Some("let a = 1;\nlet b = 2;\n".into()),
            new_text: "let a = 1;\nlet b = 3;\n".into(),
        });
        let diff = "--- a/f.rs\n+++ b/f.rs\n@@ -1,2 +1,2 @@\n let a = 1;\n-let b = 2;\n+let b = 3;\n";
        assert_eq!(
            EditFileTool.approval_request(&edit, &workspace).await,
            Ok(ApprovalRequest::Edit {
                path: "f.rs".into(),
                abs_path: file.display().to_string(),
                summary: "edit f.rs (1 replacement)".into(),
                diff: diff.into(),
                change: change.clone(),
            })
        );
        assert_eq!(
            run(&EditFileTool, &workspace, edit).await,
            ToolOutput::ok(format!("edited f.rs: 1 replacement\n{diff}")).changing(change)
        );
        assert_eq!(editor.buffer(&file).as_deref(), Some("let a = 1;\nlet b = 3;\n"));
        assert_eq!(std::fs::read_to_string(&file).unwrap(), "let a = 1;\n");
        assert_eq!(
            editor.asked(),
            vec![
                Asked::Read(file.clone()),
                Asked::Read(file.clone()),
                Asked::Write(file, "let a = 1;\nlet b = 3;\n".into()),
            ]
        );
        std::fs::remove_dir_all(dir).unwrap();
    }

    /// write_file replaces what the buffer holds (its diff and its "replaced" say so),
    /// and a new file, with its folders made on the way, is the editor's to create.
    #[tokio::test]
    async fn a_write_replaces_the_buffer_and_a_new_file_is_made_by_the_editor() {
        let dir = scratch("write");
        let file = dir.join("a.txt");
        std::fs::write(&file, "on disk\n").unwrap();
        let editor = Arc::new(FakeEditor::with_buffer(&file, "in the buffer\n"));
        let workspace = workspace(&dir, &editor);
        let write = json!({"path": "a.txt", "content": "new\n"});
        let change = Some(TextChange {
            old_text: Some("in the buffer\n".into()),
            new_text: "new\n".into(),
        });
        assert_eq!(
            WriteFileTool.preview(&write, &workspace).await,
            Ok(
                "replace a.txt (4 bytes)\n--- a/a.txt\n+++ b/a.txt\n@@ -1 +1 @@\n-in the buffer\n+new\n"
                    .into()
            )
        );
        assert_eq!(
            run(&WriteFileTool, &workspace, write).await,
            ToolOutput::ok("wrote 4 bytes to a.txt (replaced 14 bytes)").changing(change)
        );
        let new = dir.join("sub/new.txt");
        assert_eq!(
            run(
                &WriteFileTool,
                &workspace,
                json!({"path": "sub/new.txt", "content": "hi\n"})
            )
            .await,
            ToolOutput::ok("wrote 3 bytes to sub/new.txt (new file)").changing(Some(TextChange {
                old_text: None,
                new_text: "hi\n".into()
            }))
        );
        assert_eq!(
            (
                editor.buffer(&file),
                editor.buffer(&new),
                std::fs::read_to_string(&file).unwrap(),
                dir.join("sub").is_dir(),
                new.exists()
            ),
            (
                Some("new\n".into()),
                Some("hi\n".into()),
                "on disk\n".into(),
                true,
                false
            )
        );
        assert_eq!(
            editor.asked(),
            vec![
                Asked::Read(file.clone()),
                Asked::Read(file.clone()),
                Asked::Write(file, "new\n".into()),
                Asked::Write(new, "hi\n".into()),
            ]
        );
        std::fs::remove_dir_all(dir).unwrap();
    }

    /// Paths the tools refuse (outside the workspace, by `..` or a symlink; a write into
    /// miniagent's own folder) are refused before the editor is asked, and files the disk
    /// keeps (miniagent's own folder, a file with two hard links, a folder) are read or
    /// replaced on the disk: the editor is never asked about any of them.
    #[tokio::test]
    async fn refused_and_disk_kept_paths_never_reach_the_editor() {
        let dir = scratch("refused");
        let outside = scratch("refused-outside");
        std::fs::write(outside.join("secret.txt"), "secret\n").unwrap();
        std::os::unix::fs::symlink(&outside, dir.join("out")).unwrap();
        std::fs::create_dir(dir.join(".miniagent")).unwrap();
        std::fs::write(dir.join(".miniagent/mcp.json"), "{}\n").unwrap();
        std::fs::write(dir.join("linked.txt"), "shared\n").unwrap();
        std::fs::hard_link(dir.join("linked.txt"), outside.join("linked.txt")).unwrap();
        let editor = Arc::new(FakeEditor::default());
        for path in [
            outside.join("secret.txt"),
            dir.join(".miniagent/mcp.json"),
            dir.join("linked.txt"),
        ] {
            editor.set(&path, "the editor's\n");
        }
        let workspace = workspace(&dir, &editor);
        let secret = outside.join("secret.txt").display().to_string();
        let outside_message = |path: &str| {
            format!(
                "`{path}` resolves to {secret}, which is outside the workspace {}; file tools only work inside it",
                dir.display()
            )
        };
        let read = |path: &str| json!({"path": path});
        let edit = |path: &str| json!({"path": path, "old_str": "s", "new_str": "t"});
        let write = |path: &str| json!({"path": path, "content": "x\n"});
        let by_dots = format!(
            "../miniagent-client-refused-outside-{}/secret.txt",
            std::process::id()
        );
        let read_file = read_tool();
        for path in [by_dots.as_str(), "out/secret.txt"] {
            for (tool, arguments) in [
                (&read_file as &dyn Tool, read(path)),
                (&EditFileTool, edit(path)),
                (&WriteFileTool, write(path)),
            ] {
                let refused = ToolOutput::error(outside_message(path));
                assert_eq!(run(tool, &workspace, arguments.clone()).await, refused);
                if tool.name() != "read_file" {
                    assert_eq!(
                        tool.approval_request(&arguments, &workspace).await,
                        Err(crate::tools::InvalidCall(outside_message(path)))
                    );
                }
            }
        }
        assert_eq!(
            run(&read_tool(), &workspace, read(".miniagent/mcp.json")).await,
            ToolOutput::ok("     1|{}")
        );
        std::os::unix::fs::symlink(".miniagent", dir.join("settings")).unwrap();
        for path in [".miniagent/mcp.json", "settings/mcp.json"] {
            let refused = run(&WriteFileTool, &workspace, write(path)).await;
            assert_eq!(
                refused,
                ToolOutput::error(format!(
                    "cannot write .miniagent/mcp.json: {} is in {}, which holds miniagent's own settings, and this call was not approved as changing them (a folder on the way changed after the check); nothing was written",
                    dir.join(".miniagent/mcp.json").display(),
                    dir.join(".miniagent").display()
                ))
            );
        }
        assert_eq!(
            run(&WriteFileTool, &workspace, write("linked.txt")).await,
            ToolOutput::ok("wrote 2 bytes to linked.txt (replaced a file with 2 hard links)")
        );
        assert_eq!(
            (
                std::fs::read_to_string(dir.join("linked.txt")).unwrap(),
                std::fs::read_to_string(outside.join("linked.txt")).unwrap()
            ),
            ("x\n".into(), "shared\n".into())
        );
        assert_eq!(
            run(&read_tool(), &workspace, read("out")).await,
            ToolOutput::error(outside_message("out").replace("/secret.txt", ""))
        );
        assert_eq!(editor.asked(), Vec::new());
        std::fs::remove_dir_all(dir).unwrap();
        std::fs::remove_dir_all(outside).unwrap();
    }

    /// An editor that has no such file: read_file and edit_file say the file is not
    /// found, write_file creates it. An editor that fails otherwise: reading falls back
    /// to the disk, and a write it refuses is said to the model, the disk left alone.
    #[tokio::test]
    async fn not_found_is_said_and_other_failures_read_the_disk() {
        let dir = scratch("failing");
        let gone = dir.join("gone.txt");
        let locked = dir.join("locked.txt");
        std::fs::write(&gone, "still on disk\n").unwrap();
        std::fs::write(&locked, "saved text\n").unwrap();
        let editor = Arc::new(FakeEditor {
            failing: vec![locked.clone()],
            ..FakeEditor::default()
        });
        let workspace = workspace(&dir, &editor);
        assert_eq!(
            run(&read_tool(), &workspace, json!({"path": "gone.txt"})).await,
            ToolOutput::error("file not found: gone.txt")
        );
        let edit = |path: &str| json!({"path": path, "old_str": "text", "new_str": "words"});
        assert_eq!(
            run(&EditFileTool, &workspace, edit("gone.txt")).await,
            ToolOutput::error("file not found: gone.txt; use write_file to create it")
        );
        assert_eq!(
            WriteFileTool
                .preview(&json!({"path": "gone.txt", "content": "x\n"}), &workspace)
                .await,
            Ok("create gone.txt (2 bytes)\n--- a/gone.txt\n+++ b/gone.txt\n@@ -0,0 +1 @@\n+x\n".into())
        );
        assert_eq!(
            run(&read_tool(), &workspace, json!({"path": "locked.txt"})).await,
            ToolOutput::ok("     1|saved text")
        );
        assert_eq!(
            run(&EditFileTool, &workspace, edit("locked.txt")).await,
            ToolOutput::error("cannot write locked.txt: the editor could not do it: the buffer is read-only")
        );
        assert_eq!(std::fs::read_to_string(&locked).unwrap(), "saved text\n");
        assert_eq!(
            editor.asked(),
            vec![
                Asked::Read(gone.clone()),
                Asked::Read(gone.clone()),
                Asked::Read(gone),
                Asked::Read(locked.clone()),
                Asked::Read(locked.clone()),
                Asked::Write(locked, "saved words\n".into()),
            ]
        );
        std::fs::remove_dir_all(dir).unwrap();
    }

    /// A buffer with a NUL byte is binary, as such a file on disk is.
    #[tokio::test]
    async fn a_binary_buffer_is_refused_as_a_binary_file_is() {
        let dir = scratch("binary");
        let file = dir.join("a.txt");
        std::fs::write(&file, "text\n").unwrap();
        let editor = Arc::new(FakeEditor::with_buffer(&file, "te\0xt\n"));
        let workspace = workspace(&dir, &editor);
        assert_eq!(
            run(&read_tool(), &workspace, json!({"path": "a.txt"})).await,
            ToolOutput::error("a.txt is a binary file (6 bytes); read_file shows text only")
        );
        assert_eq!(
            run(
                &EditFileTool,
                &workspace,
                json!({"path": "a.txt", "old_str": "t", "new_str": "u"})
            )
            .await,
            ToolOutput::error("a.txt is a binary file (6 bytes); edit_file edits text files only")
        );
        std::fs::remove_dir_all(dir).unwrap();
    }
}
