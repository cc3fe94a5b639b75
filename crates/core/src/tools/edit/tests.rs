use super::*;
use crate::tools::files;
use crate::tools::{OutputSink, Tool};
use miniagent_protocol::TextChange;
use pretty_assertions::assert_eq;
use serde_json::json;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use tokio_util::sync::CancellationToken;

fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("miniagent-edit-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir.canonicalize().unwrap()
}

fn context(dir: &Path) -> ToolContext {
    ToolContext {
        workspace: Arc::new(Workspace::new(dir, &[])),
        cancel: CancellationToken::new(),
        output: OutputSink::discard(),
        approval: crate::config::ApprovalMode::FullAuto,
        unasked: false,
        sub_agents: None,
        save_to: None,
    }
}

#[test]
fn many_matches_are_counted_in_one_pass_and_listed_in_part() {
    let text = "zz\n".repeat(200_000);
    let starts: Vec<usize> = text.match_indices("zz").map(|(at, _)| at).collect();
    assert_eq!(
        match_lines(&text, &starts),
        "1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, and 199980 more"
    );
    assert_eq!(match_lines("a\nb a\n\na", &[0, 4, 8]), "1, 2, 4");
}

/// The preview of a large write is cut from the top at a line's end, every line kept
/// with its number, and its last line says what is not shown and how large the file
/// is (a fresh-eyes user approved 4,000 lines having read the first 80); a single
/// long line is shown in part and said to be.
#[tokio::test]
async fn a_large_write_is_previewed_in_part_and_says_what_is_not_shown() {
    let dir = scratch("preview");
    let workspace = Workspace::new(&dir, &[]);
    let request = async |content: String| {
        let arguments = json!({"path": "a.txt", "content": content});
        match WriteFileTool.approval_request(&arguments, &workspace).await {
            Ok(ApprovalRequest::Edit { summary, diff, .. }) => (summary, diff),
            other => panic!("{other:?}"),
        }
    };
    let line = format!("{}\n", "x".repeat(99));
    let (summary, diff) = request(line.repeat(4000)).await;
    assert_eq!(summary, "create a.txt (400000 bytes)");
    let lines: Vec<&str> = diff.lines().collect();
    // The file header, the hunk header, then whole lines up to the limit.
    let kept = lines.len() - 4;
    let plus = format!("+{}", "x".repeat(99));
    assert_eq!(lines[..3], ["--- a/a.txt", "+++ b/a.txt", "@@ -0,0 +1,4000 @@"]);
    assert!(lines[3..3 + kept].iter().all(|l| *l == plus), "{diff}");
    assert_eq!(kept, (DIFF_LIMIT - lines[..3].join("\n").len() - 1) / 101);
    assert_eq!(
        *lines.last().unwrap(),
        format!(
            "… {} more lines of the diff are not shown (whole file: 400,000 bytes, 4,000 lines)",
            grouped(4000 - kept)
        )
    );
    // One line of a megabyte: its start, then what is cut (the rest of it, and the
    // diff's note that the file ends without a newline).
    let (_, diff) = request("y".repeat(1 << 20)).await;
    let lines: Vec<&str> = diff.lines().collect();
    assert_eq!(lines.len(), 5, "{diff}");
    assert!(diff.len() < DIFF_LIMIT + 200, "{} bytes", diff.len());
    assert_eq!(
        lines[4],
        "… the rest of the line above and 1 more line of the diff are not shown (whole file: 1,048,576 bytes, 1 line)"
    );
    // A small write is shown whole.
    let (_, diff) = request("hi\n".into()).await;
    assert_eq!(diff, "--- a/a.txt\n+++ b/a.txt\n@@ -0,0 +1 @@\n+hi\n");
    std::fs::remove_dir_all(dir).unwrap();
}

/// edit_file holds the whole file (and its edited copy) in memory: a file over the cap
/// is refused, saying what to use, and so is a binary one (a NUL byte, or a hole in a
/// sparse file), without reading it. write_file still replaces them, unread.
#[tokio::test]
async fn large_and_binary_files_are_not_read_for_an_edit() {
    let dir = scratch("large");
    let edit = |path: &str| json!({"path": path, "old_str": "needle", "new_str": "pin"});
    let big = format!("needle\n{}", "x".repeat(MAX_EDIT_BYTES as usize));
    std::fs::write(dir.join("big.txt"), &big).unwrap();
    let out = EditFileTool.run(edit("big.txt"), context(&dir)).await;
    assert_eq!(
        out,
        ToolOutput::error(
            "big.txt is 8 MiB; edit_file edits files up to 8 MiB. Change it with bash instead (sed -i, or a script that streams it)"
        )
    );
    assert_eq!(std::fs::read_to_string(dir.join("big.txt")).unwrap(), big);

    std::fs::write(dir.join("sparse.txt"), "needle\n").unwrap();
    let file = std::fs::OpenOptions::new()
        .write(true)
        .open(dir.join("sparse.txt"))
        .unwrap();
    file.set_len(MAX_EDIT_BYTES / 2).unwrap();
    std::fs::write(dir.join("nul.txt"), "needle\0\n").unwrap();
    for (path, size) in [("sparse.txt", MAX_EDIT_BYTES / 2), ("nul.txt", 8)] {
        let out = EditFileTool.run(edit(path), context(&dir)).await;
        assert_eq!(
            out,
            ToolOutput::error(format!(
                "{path} is a binary file ({size} bytes); edit_file edits text files only"
            )),
        );
    }
    let out = WriteFileTool
        .run(json!({"path": "sparse.txt", "content": "new\n"}), context(&dir))
        .await;
    assert_eq!(
        out,
        ToolOutput::ok(format!(
            "wrote 4 bytes to sparse.txt (replaced a binary file of {} bytes)",
            MAX_EDIT_BYTES / 2
        ))
    );
    std::fs::remove_dir_all(dir).unwrap();
}

/// The approval of an edit names the file's absolute path and carries its whole text
/// before and after, as the finished call does, while both are within the cap; a file
/// over it, before or after, carries none (the diff is still there).
#[tokio::test]
async fn changes_are_carried_whole_up_to_the_cap_with_the_absolute_path() {
    let dir = scratch("change");
    let workspace = Workspace::new(&dir, &[]);
    std::fs::write(dir.join("f.rs"), "let a = 1;\n").unwrap();
    let edit = json!({"path": "f.rs", "old_str": "1", "new_str": "2"});
    let asked = async |tool: &dyn Tool, arguments: &serde_json::Value| match tool
        .approval_request(arguments, &workspace)
        .await
    {
        Ok(ApprovalRequest::Edit { abs_path, change, .. }) => (abs_path, change),
        other => panic!("{other:?}"),
    };
    let f = dir.join("f.rs").display().to_string();
    let edited = Some(TextChange {
        old_text: Some("let a = 1;\n".into()),
        new_text: "let a = 2;\n".into(),
    });
    assert_eq!(asked(&EditFileTool, &edit).await, (f.clone(), edited.clone()));
    assert_eq!(EditFileTool.run(edit, context(&dir)).await.change, edited);

    let at_cap = "x".repeat(files::CHANGE_LIMIT_BYTES);
    let new = json!({"path": "sub/new.txt", "content": at_cap});
    let created = Some(TextChange {
        old_text: None,
        new_text: at_cap.clone(),
    });
    let new_path = dir.join("sub/new.txt").display().to_string();
    assert_eq!(
        asked(&WriteFileTool, &new).await,
        (new_path.clone(), created.clone())
    );
    assert_eq!(WriteFileTool.run(new, context(&dir)).await.change, created);

    // One byte over, before or after: no whole texts.
    let over = format!("{at_cap}y");
    let grow = json!({"path": "sub/new.txt", "content": over});
    assert_eq!(asked(&WriteFileTool, &grow).await, (new_path.clone(), None));
    let out = WriteFileTool.run(grow, context(&dir)).await;
    assert_eq!((out.is_error, out.change), (false, None));
    let shrink = json!({"path": "sub/new.txt", "content": "small\n"});
    assert_eq!(asked(&WriteFileTool, &shrink).await, (new_path, None));
    assert_eq!(WriteFileTool.run(shrink, context(&dir)).await.change, None);
    std::fs::remove_dir_all(dir).unwrap();
}

#[tokio::test]
async fn write_creates_folders_and_reports_bytes() {
    let dir = scratch("write");
    let out = WriteFileTool
        .run(json!({"path": "a/b/c.txt", "content": "héllo\n"}), context(&dir))
        .await;
    assert_eq!(
        out,
        ToolOutput::ok("wrote 7 bytes to a/b/c.txt (new file)").changing(Some(TextChange {
            old_text: None,
            new_text: "héllo\n".into()
        }))
    );
    let out = WriteFileTool
        .run(json!({"path": "a/b/c.txt", "content": "bye\n"}), context(&dir))
        .await;
    assert_eq!(
        out,
        ToolOutput::ok("wrote 4 bytes to a/b/c.txt (replaced 7 bytes)").changing(Some(TextChange {
            old_text: Some("héllo\n".into()),
            new_text: "bye\n".into()
        }))
    );
    assert_eq!(std::fs::read_to_string(dir.join("a/b/c.txt")).unwrap(), "bye\n");
    let preview = WriteFileTool
        .preview(
            &json!({"path": "a/b/c.txt", "content": "bye\nnow\n"}),
            &Workspace::new(&dir, &[]),
        )
        .await
        .unwrap();
    assert_eq!(
        preview,
        "replace a/b/c.txt (8 bytes)\n--- a/a/b/c.txt\n+++ b/a/b/c.txt\n@@ -1 +1,2 @@\n bye\n+now\n"
    );
    let out = WriteFileTool
        .run(json!({"path": "a", "content": "x"}), context(&dir))
        .await;
    assert_eq!(out, ToolOutput::error("a is a folder, not a file"));
    std::fs::remove_dir_all(dir).unwrap();
}

#[tokio::test]
async fn edit_requires_one_match_unless_replace_all() {
    let dir = scratch("edit");
    std::fs::write(dir.join("f.rs"), "let a = 1;\nlet b = 2;\nlet a = 1;\n").unwrap();
    let twice = json!({"path": "f.rs", "old_str": "let a = 1;", "new_str": "let a = 3;"});
    let out = EditFileTool.run(twice.clone(), context(&dir)).await;
    assert_eq!(
        out,
        ToolOutput::error(
            "`old_str` matches 2 times in f.rs (lines 1, 3); nothing was changed. Include more surrounding text to make it unique, or set replace_all to true."
        )
    );
    assert_eq!(
        std::fs::read_to_string(dir.join("f.rs")).unwrap(),
        "let a = 1;\nlet b = 2;\nlet a = 1;\n"
    );

    let out = EditFileTool
        .run(
            json!({"path": "f.rs", "old_str": "b = 2", "new_str": "b = 20"}),
            context(&dir),
        )
        .await;
    assert_eq!(
        out,
        ToolOutput::ok(
            "edited f.rs: 1 replacement\n--- a/f.rs\n+++ b/f.rs\n@@ -1,3 +1,3 @@\n let a = 1;\n-let b = 2;\n+let b = 20;\n let a = 1;\n"
        )
        .changing(Some(TextChange {
            old_text: Some("let a = 1;\nlet b = 2;\nlet a = 1;\n".into()),
            new_text: "let a = 1;\nlet b = 20;\nlet a = 1;\n".into()
        }))
    );
    let mut all = twice;
    all["replace_all"] = json!(true);
    let out = EditFileTool.run(all, context(&dir)).await;
    assert!(
        out.content.starts_with("edited f.rs: 2 replacements\n"),
        "{}",
        out.content
    );
    assert_eq!(
        std::fs::read_to_string(dir.join("f.rs")).unwrap(),
        "let a = 3;\nlet b = 20;\nlet a = 3;\n"
    );

    let missing = EditFileTool
        .run(
            json!({"path": "f.rs", "old_str": "nope", "new_str": "x"}),
            context(&dir),
        )
        .await;
    assert!(
        missing
            .content
            .starts_with("`old_str` was not found in f.rs; nothing was changed.")
    );
    let absent = EditFileTool
        .run(
            json!({"path": "g.rs", "old_str": "a", "new_str": "b"}),
            context(&dir),
        )
        .await;
    assert_eq!(
        absent,
        ToolOutput::error("file not found: g.rs; use write_file to create it")
    );
    std::fs::write(dir.join("latin1"), b"caf\xe9").unwrap();
    let binary = EditFileTool
        .run(
            json!({"path": "latin1", "old_str": "caf", "new_str": "x"}),
            context(&dir),
        )
        .await;
    assert_eq!(
        binary,
        ToolOutput::error("latin1 is not UTF-8 text; edit_file edits text files only")
    );
    std::fs::remove_dir_all(dir).unwrap();
}

#[tokio::test]
async fn a_pipe_is_refused_instead_of_read_forever() {
    // Found by tests/bad_input: reading the FIFO waited for a writer that never came.
    let dir = scratch("fifo");
    let fifo = std::ffi::CString::new(dir.join("pipe").into_os_string().into_encoded_bytes()).unwrap();
    // SAFETY: `fifo` is a valid NUL-terminated path that outlives the call.
    assert_eq!(unsafe { libc::mkfifo(fifo.as_ptr(), 0o600) }, 0);
    let out = EditFileTool
        .run(
            json!({"path": "pipe", "old_str": "a", "new_str": "b"}),
            context(&dir),
        )
        .await;
    assert_eq!(
        out,
        ToolOutput::error(
            "pipe is not a regular file (a device, pipe or socket); edit_file edits files only"
        )
    );
    std::fs::remove_dir_all(dir).unwrap();
}
