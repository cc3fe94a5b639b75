//! Tool arguments naming paths and files a file tool must refuse: `..` and absolute
//! paths out of the workspace, symlink escapes and loops, devices and FIFOs, folders
//! where files are expected, and files that are not UTF-8.

use std::path::Path;

use pretty_assertions::assert_eq;
use serde_json::json;

use super::{Outside, args, assert_refused, root_of, run_bad_calls};

/// The refusal a write to a path outside the workspace gets.
fn outside_message(named: &str, resolved: &Path, root: &Path) -> String {
    format!(
        "`{named}` resolves to {}, which is outside the workspace {}; file tools only work inside it",
        resolved.display(),
        root.display()
    )
}

/// The refusal a read of a path outside the workspace gets (the session's results
/// folder is the one read-only folder it may read besides).
fn outside_read_message(named: &str, resolved: &Path, root: &Path) -> String {
    format!(
        "`{named}` resolves to {}, which is outside the workspace {} or the allowed read-only folders; file tools only work inside it",
        resolved.display(),
        root.display()
    )
}

#[tokio::test]
async fn paths_with_dot_dot() {
    let outside = Outside::new();
    let name = outside.name();
    let up = format!("../{name}/secret.txt");
    let up_new = format!("../{name}/new.txt");
    let deep = format!("sub/../../{name}/nested/deeper.txt");
    let (received, agent) = run_bad_calls(
        |ws| {
            ws.write("sub/inside.txt", "inside\n");
        },
        &[
            ("read_file", args(json!({"path": up}))),
            ("write_file", args(json!({"path": up_new, "content": "x"}))),
            (
                "edit_file",
                args(json!({"path": deep, "old_str": "nor", "new_str": "and"})),
            ),
            // `..` that stays inside is fine.
            ("read_file", args(json!({"path": "sub/../sub/inside.txt"}))),
        ],
    )
    .await;
    let root = root_of(&agent);
    let out = outside.path();
    assert_eq!(
        received[0],
        (outside_read_message(&up, &out.join("secret.txt"), &root), true)
    );
    assert_eq!(
        received[1],
        (outside_message(&up_new, &out.join("new.txt"), &root), true)
    );
    assert_eq!(
        received[2],
        (
            outside_message(&deep, &out.join("nested/deeper.txt"), &root),
            true
        )
    );
    assert_eq!(received[3], ("     1|inside".into(), false));
    outside.assert_untouched();
}

#[tokio::test]
async fn absolute_paths() {
    let outside = Outside::new();
    let secret = outside.path().join("secret.txt");
    let fresh = outside.path().join("absolute.txt");
    let (received, agent) = run_bad_calls(
        |ws| {
            ws.write("inside.txt", "inside\n");
        },
        &[
            ("read_file", args(json!({"path": "/etc/passwd"}))),
            ("read_file", args(json!({"path": secret}))),
            ("write_file", args(json!({"path": fresh, "content": "x"}))),
            (
                "edit_file",
                args(json!({"path": secret, "old_str": "do", "new_str": "did"})),
            ),
            ("write_file", args(json!({"path": "/", "content": "x"}))),
        ],
    )
    .await;
    let root = root_of(&agent);
    assert_eq!(
        received[0],
        (
            outside_read_message("/etc/passwd", Path::new("/etc/passwd"), &root),
            true
        )
    );
    let shown = |path: &Path| path.display().to_string();
    assert_eq!(
        received[1],
        (outside_read_message(&shown(&secret), &secret, &root), true)
    );
    assert_eq!(
        received[2],
        (outside_message(&shown(&fresh), &fresh, &root), true)
    );
    assert_eq!(
        received[3],
        (outside_message(&shown(&secret), &secret, &root), true)
    );
    assert_eq!(received[4], (outside_message("/", Path::new("/"), &root), true));
    outside.assert_untouched();
}

#[tokio::test]
async fn symlink_escapes() {
    let outside = Outside::new();
    let out = outside.path();
    let (received, agent) = run_bad_calls(
        |ws| {
            std::os::unix::fs::symlink(&out, ws.join("link-out")).expect("symlink");
            std::os::unix::fs::symlink(out.join("ghost.txt"), ws.join("dangling")).expect("symlink");
            std::os::unix::fs::symlink(out.join("secret.txt"), ws.join("secret-link")).expect("symlink");
            std::os::unix::fs::symlink(ws.join("loop-b"), ws.join("loop-a")).expect("symlink");
            std::os::unix::fs::symlink(ws.join("loop-a"), ws.join("loop-b")).expect("symlink");
        },
        &[
            ("read_file", args(json!({"path": "link-out/secret.txt"}))),
            (
                "write_file",
                args(json!({"path": "link-out/new.txt", "content": "x"})),
            ),
            ("write_file", args(json!({"path": "dangling", "content": "x"}))),
            (
                "edit_file",
                args(json!({"path": "secret-link", "old_str": "do", "new_str": "did"})),
            ),
            ("write_file", args(json!({"path": "secret-link", "content": "x"}))),
            ("read_file", args(json!({"path": "loop-a"}))),
        ],
    )
    .await;
    let root = root_of(&agent);
    assert_eq!(
        received[0],
        (
            outside_read_message("link-out/secret.txt", &out.join("secret.txt"), &root),
            true
        )
    );
    assert_eq!(
        received[1],
        (
            outside_message("link-out/new.txt", &out.join("new.txt"), &root),
            true
        )
    );
    assert_eq!(
        received[2],
        (outside_message("dangling", &out.join("ghost.txt"), &root), true)
    );
    assert_eq!(
        received[3],
        (
            outside_message("secret-link", &out.join("secret.txt"), &root),
            true
        )
    );
    assert_eq!(
        received[4],
        (
            outside_message("secret-link", &out.join("secret.txt"), &root),
            true
        )
    );
    assert_refused(&received[5], "too many levels of symbolic links at ");
    assert!(!out.join("ghost.txt").exists() && !out.join("new.txt").exists());
    outside.assert_untouched();
}

#[tokio::test]
async fn device_files() {
    let outside = Outside::new();
    let (received, agent) = run_bad_calls(
        |ws| {
            std::os::unix::fs::symlink("/dev/zero", ws.join("zero")).expect("symlink");
            let fifo = std::ffi::CString::new(ws.join("pipe").into_os_string().into_encoded_bytes())
                .expect("no NUL in the path");
            // SAFETY: `fifo` is a valid NUL-terminated path that outlives the call.
            assert_eq!(unsafe { libc::mkfifo(fifo.as_ptr(), 0o600) }, 0, "mkfifo");
        },
        &[
            ("read_file", args(json!({"path": "/dev/zero"}))),
            ("read_file", args(json!({"path": "zero"}))),
            ("write_file", args(json!({"path": "/dev/null", "content": "x"}))),
            ("read_file", args(json!({"path": "pipe"}))),
            ("write_file", args(json!({"path": "pipe", "content": "x"}))),
            (
                "edit_file",
                args(json!({"path": "pipe", "old_str": "a", "new_str": "b"})),
            ),
        ],
    )
    .await;
    let root = root_of(&agent);
    assert_eq!(
        received[0],
        (
            outside_read_message("/dev/zero", Path::new("/dev/zero"), &root),
            true
        )
    );
    assert_eq!(
        received[1],
        (outside_read_message("zero", Path::new("/dev/zero"), &root), true)
    );
    assert_eq!(
        received[2],
        (outside_message("/dev/null", Path::new("/dev/null"), &root), true)
    );
    assert_eq!(
        received[3],
        (
            "pipe is not a regular file (a device, pipe or socket); read_file reads files only".into(),
            true
        )
    );
    assert_eq!(received[4], ("pipe is not a regular file".into(), true));
    assert_eq!(
        received[5],
        (
            "pipe is not a regular file (a device, pipe or socket); edit_file edits files only".into(),
            true
        )
    );
    outside.assert_untouched();
}

#[tokio::test]
async fn directories_where_files_are_expected() {
    let (received, agent) = run_bad_calls(
        |ws| {
            ws.write("folder/inside.txt", "inside\n");
            ws.write("file.txt", "a file\n");
        },
        &[
            ("write_file", args(json!({"path": "folder", "content": "x"}))),
            (
                "edit_file",
                args(json!({"path": "folder", "old_str": "a", "new_str": "b"})),
            ),
            (
                "write_file",
                args(json!({"path": "file.txt/child.txt", "content": "x"})),
            ),
            ("write_file", args(json!({"path": ".", "content": "x"}))),
        ],
    )
    .await;
    assert_eq!(received[0], ("folder is a folder, not a file".into(), true));
    assert_refused(&received[1], "folder is a folder, not a file");
    assert_refused(&received[2], "`file.txt/child.txt`: file.txt is not a folder");
    assert_eq!(received[3], (". is a folder, not a file".into(), true));
    assert_eq!(
        std::fs::read_to_string(agent.workspace.join("folder/inside.txt")).unwrap_or_default(),
        "inside\n"
    );
    assert_eq!(
        std::fs::read_to_string(agent.workspace.join("file.txt")).unwrap_or_default(),
        "a file\n"
    );
}

#[tokio::test]
async fn files_that_are_not_utf8() {
    let latin1 = b"caf\xe9 au lait\n".to_vec();
    let (received, agent) = run_bad_calls(
        |ws| {
            ws.write("latin1.txt", &latin1);
            ws.write("blob.bin", b"\x00\x01\x02\xff");
        },
        &[
            (
                "edit_file",
                args(json!({"path": "latin1.txt", "old_str": "au", "new_str": "with"})),
            ),
            ("read_file", args(json!({"path": "latin1.txt"}))),
            ("read_file", args(json!({"path": "blob.bin"}))),
            (
                "edit_file",
                args(json!({"path": "blob.bin", "old_str": "a", "new_str": "b"})),
            ),
        ],
    )
    .await;
    assert_eq!(
        received[0],
        (
            "latin1.txt is not UTF-8 text; edit_file edits text files only".into(),
            true
        )
    );
    // Reading shows what can be shown and says what was replaced.
    assert_eq!(
        received[1],
        (
            "     1|caf\u{FFFD} au lait\n[note: the file is not valid UTF-8; invalid bytes are shown as \u{FFFD}]"
                .into(),
            false
        )
    );
    assert_eq!(
        received[2],
        (
            "blob.bin is a binary file (4 bytes); read_file shows text only".into(),
            true
        )
    );
    assert_eq!(
        received[3],
        (
            "blob.bin is a binary file (4 bytes); edit_file edits text files only".into(),
            true
        )
    );
    assert_eq!(
        std::fs::read(agent.workspace.join("latin1.txt")).unwrap_or_default(),
        latin1
    );
}
