//! The file tools against a hostile workspace: a folder swapped for a symlink while the
//! tools write through it, symlinked and hard-linked files pointing outside, `..` after a
//! symlink, temp files left by a killed process, and files too big to read in one go.
#![allow(clippy::unwrap_used, clippy::expect_used)] // A test fails by panicking.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use miniagent_core::config::ApprovalMode;
use miniagent_core::tokens::Encoding;
use miniagent_core::tools::edit::{EditFileTool, WriteFileTool};
use miniagent_core::tools::files::remove_stale_temp_files;
use miniagent_core::tools::notes::{NotesLock, RecallNotesTool, RecordNoteTool};
use miniagent_core::tools::paths::Workspace;
use miniagent_core::tools::read::ReadFileTool;
use miniagent_core::tools::{OutputSink, Tool, ToolContext, ToolOutput};
use pretty_assertions::assert_eq;
use serde_json::json;
use tokio_util::sync::CancellationToken;

use crate::support::skip;

/// `<tmp>/ws` (the workspace) and `<tmp>/outside`, removed on drop.
struct Scratch {
    base: PathBuf,
}

impl Scratch {
    fn new(name: &str) -> Self {
        let base = std::env::temp_dir().join(format!(
            "miniagent-confine-{name}-{}-{}",
            std::process::id(),
            fastrand::u64(..)
        ));
        std::fs::create_dir_all(base.join("ws")).unwrap();
        std::fs::create_dir_all(base.join("outside")).unwrap();
        Self {
            base: base.canonicalize().unwrap(),
        }
    }

    fn ws(&self) -> PathBuf {
        self.base.join("ws")
    }

    fn outside(&self) -> PathBuf {
        self.base.join("outside")
    }

    fn context(&self) -> ToolContext {
        ToolContext {
            workspace: Arc::new(Workspace::new(&self.ws(), &[])),
            cancel: CancellationToken::new(),
            output: OutputSink::discard(),
            approval: ApprovalMode::FullAuto,
            unasked: false,
            sub_agents: None,
            save_to: None,
        }
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.base);
    }
}

/// Every name under `dir`, recursively, relative to it.
fn listing(dir: &Path) -> Vec<String> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(folder) = stack.pop() {
        for entry in std::fs::read_dir(&folder).unwrap() {
            let entry = entry.unwrap();
            out.push(entry.path().strip_prefix(dir).unwrap().display().to_string());
            if entry.file_type().unwrap().is_dir() {
                stack.push(entry.path());
            }
        }
    }
    out.sort();
    out
}

fn c_path(path: &Path) -> std::ffi::CString {
    std::ffi::CString::new(path.as_os_str().as_encoded_bytes()).unwrap()
}

fn read_tool() -> ReadFileTool {
    ReadFileTool::new(20_000, Encoding::Cl100kBase)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_folder_swapped_for_a_symlink_never_lets_a_write_or_read_out() {
    let scratch = Scratch::new("race");
    let ws = scratch.ws();
    std::fs::create_dir(ws.join("d")).unwrap();
    std::fs::write(ws.join("d/secret.txt"), "inside\n").unwrap();
    std::fs::write(scratch.outside().join("secret.txt"), "SECRET\n").unwrap();
    std::os::unix::fs::symlink(scratch.outside(), ws.join("swap")).unwrap();

    let exchange = |a: &std::ffi::CString, b: &std::ffi::CString| {
        // SAFETY: both paths are valid NUL-terminated strings that outlive the call.
        unsafe {
            libc::renameat2(
                libc::AT_FDCWD,
                a.as_ptr(),
                libc::AT_FDCWD,
                b.as_ptr(),
                libc::RENAME_EXCHANGE,
            )
        }
    };
    let (a, b) = (c_path(&ws.join("d")), c_path(&ws.join("swap")));
    if exchange(&a, &b) != 0 || exchange(&a, &b) != 0 {
        let why = std::io::Error::last_os_error();
        skip::missing("renameat2", format!("RENAME_EXCHANGE on this file system: {why}"));
        return;
    }

    // Exchanges `d` (a folder) and `swap` (a symlink to outside) as fast as it can.
    let stop = Arc::new(AtomicBool::new(false));
    let swapper = {
        let stop = Arc::clone(&stop);
        std::thread::spawn(move || {
            let mut swaps = 0u64;
            while !stop.load(Ordering::Relaxed) {
                let done = exchange(&a, &b);
                assert_eq!(done, 0, "{}", std::io::Error::last_os_error());
                swaps += 1;
            }
            swaps
        })
    };

    let context = scratch.context();
    let read = read_tool();
    let mut written = 0;
    for i in 0..400 {
        let out = WriteFileTool
            .run(
                json!({"path": format!("d/f{i}.txt"), "content": "x".repeat(i)}),
                context.clone(),
            )
            .await;
        if !out.is_error {
            written += 1;
        }
        let out = EditFileTool
            .run(
                json!({"path": "d/secret.txt", "old_str": "inside", "new_str": "inside!"}),
                context.clone(),
            )
            .await;
        assert!(!out.content.contains("SECRET"), "{}", out.content);
        let out = read.run(json!({"path": "d/secret.txt"}), context.clone()).await;
        assert!(!out.content.contains("SECRET"), "{}", out.content);
    }
    stop.store(true, Ordering::Relaxed);
    let swaps = swapper.join().unwrap();
    assert!(swaps > 100, "only {swaps} swaps");
    assert!(written > 0, "no write went through");
    assert_eq!(listing(&scratch.outside()), vec!["secret.txt"]);
    assert_eq!(
        std::fs::read_to_string(scratch.outside().join("secret.txt")).unwrap(),
        "SECRET\n"
    );
}

/// The check that a write touches `.miniagent/` is made on the folder actually written
/// to: `d` (a folder) exchanged with `dl` (a symlink to `.miniagent`) in a loop never gets
/// a write or an edit of `d/mcp.json` into `.miniagent/`, in full-auto, unapproved.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_folder_swapped_for_a_link_to_the_settings_never_lets_a_write_in() {
    let scratch = Scratch::new("settings-race");
    let ws = scratch.ws();
    std::fs::create_dir_all(ws.join(".miniagent")).unwrap();
    std::fs::write(ws.join(".miniagent/mcp.json"), "{}\n").unwrap();
    std::fs::create_dir(ws.join("d")).unwrap();
    std::os::unix::fs::symlink(".miniagent", ws.join("dl")).unwrap();
    let exchange = |a: &std::ffi::CString, b: &std::ffi::CString| {
        // SAFETY: both paths are valid NUL-terminated strings that outlive the call.
        unsafe {
            libc::renameat2(
                libc::AT_FDCWD,
                a.as_ptr(),
                libc::AT_FDCWD,
                b.as_ptr(),
                libc::RENAME_EXCHANGE,
            )
        }
    };
    let (a, b) = (c_path(&ws.join("d")), c_path(&ws.join("dl")));
    if exchange(&a, &b) != 0 || exchange(&a, &b) != 0 {
        let why = std::io::Error::last_os_error();
        skip::missing("renameat2", format!("RENAME_EXCHANGE on this file system: {why}"));
        return;
    }
    let stop = Arc::new(AtomicBool::new(false));
    let swapper = {
        let stop = Arc::clone(&stop);
        std::thread::spawn(move || {
            let mut swaps = 0u64;
            while !stop.load(Ordering::Relaxed) {
                assert_eq!(exchange(&a, &b), 0, "{}", std::io::Error::last_os_error());
                swaps += 1;
            }
            swaps
        })
    };

    let context = scratch.context();
    let (mut written, mut refused) = (0, 0);
    for i in 0..400 {
        let content = format!("{{\"mcpServers\": {{\"pwn{i}\": {{\"command\": \"true\"}}}}}}");
        let out = WriteFileTool
            .run(json!({"path": "d/mcp.json", "content": content}), context.clone())
            .await;
        match out.is_error {
            false => written += 1,
            true if out.content.contains("holds miniagent's own settings") => refused += 1,
            true => {}
        }
        let _ = EditFileTool
            .run(
                json!({"path": "d/mcp.json", "old_str": format!("pwn{i}"), "new_str": "PWN"}),
                context.clone(),
            )
            .await;
    }
    stop.store(true, Ordering::Relaxed);
    let swaps = swapper.join().unwrap();
    assert!(swaps > 100, "only {swaps} swaps");
    assert!(written > 0, "no write went through");
    assert_eq!(listing(&ws.join(".miniagent")), vec!["mcp.json"]);
    assert_eq!(
        std::fs::read_to_string(ws.join(".miniagent/mcp.json")).unwrap(),
        "{}\n"
    );
    assert!(refused > 0, "no write met the link ({written} written)");
}

#[tokio::test]
async fn notes_behind_a_symlink_are_neither_read_nor_written() {
    let scratch = Scratch::new("notes");
    let outside_notes = scratch.outside().join("notes.json");
    let planted = r#"[{"timestamp":"t","category":"general","content":"outside secret"}]"#;
    std::fs::write(&outside_notes, planted).unwrap();
    std::os::unix::fs::symlink(&outside_notes, scratch.ws().join(".agent_memory.json")).unwrap();

    let recalled = RecallNotesTool.run(json!({}), scratch.context()).await;
    assert_eq!(
        recalled,
        ToolOutput::error(
            ".agent_memory.json is a symbolic link; notes are kept only in a regular file in the workspace, so it was left as it is"
        )
    );
    let recorded = RecordNoteTool::new(NotesLock::default())
        .run(json!({"content": "mine"}), scratch.context())
        .await;
    assert!(recorded.is_error, "{}", recorded.content);
    assert_eq!(std::fs::read_to_string(&outside_notes).unwrap(), planted);
}

#[tokio::test]
async fn a_hard_link_to_an_outside_file_is_not_read_through() {
    let scratch = Scratch::new("hardlink");
    let secret = scratch.outside().join("secret.txt");
    std::fs::write(&secret, "SECRET\n").unwrap();
    std::fs::hard_link(&secret, scratch.ws().join("link.txt")).unwrap();
    let refused = "link.txt has 2 hard links, so it may be shared with a file outside the workspace; \
                   file tools do not read it (write_file can replace it with a file of its own)";

    let read = read_tool()
        .run(json!({"path": "link.txt"}), scratch.context())
        .await;
    assert_eq!(read, ToolOutput::error(refused));
    let edit = EditFileTool
        .run(
            json!({"path": "link.txt", "old_str": "SECRET", "new_str": "changed"}),
            scratch.context(),
        )
        .await;
    assert_eq!(edit, ToolOutput::error(refused));
    let preview = WriteFileTool
        .preview(
            &json!({"path": "link.txt", "content": "new\n"}),
            &Workspace::new(&scratch.ws(), &[]),
        )
        .await
        .unwrap();
    assert!(!preview.contains("SECRET"), "{preview}");

    // Replacing the link writes a new file; the shared one outside keeps its content.
    let write = WriteFileTool
        .run(json!({"path": "link.txt", "content": "new\n"}), scratch.context())
        .await;
    assert!(!write.is_error, "{}", write.content);
    assert!(!write.content.contains("SECRET"), "{}", write.content);
    assert_eq!(std::fs::read_to_string(&secret).unwrap(), "SECRET\n");
    assert_eq!(
        std::fs::read_to_string(scratch.ws().join("link.txt")).unwrap(),
        "new\n"
    );
}

#[tokio::test]
async fn dot_dot_after_a_symlink_goes_where_the_kernel_goes() {
    let scratch = Scratch::new("dotdot");
    let ws = scratch.ws();
    std::fs::create_dir_all(ws.join("deep/er")).unwrap();
    std::fs::create_dir_all(ws.join("conf")).unwrap();
    std::os::unix::fs::symlink("deep/er", ws.join("linkdir")).unwrap();
    std::fs::write(ws.join("deep/x.txt"), "in deep\n").unwrap();
    std::fs::write(ws.join("x.txt"), "at the top\n").unwrap();
    // A symlink to a folder outside, followed by `..`: textually inside, really outside.
    std::fs::create_dir_all(scratch.outside().join("a/b")).unwrap();
    std::fs::write(scratch.outside().join("a/y.txt"), "SECRET\n").unwrap();
    std::fs::write(ws.join("y.txt"), "top y\n").unwrap();
    std::os::unix::fs::symlink("../outside/a/b", ws.join("out")).unwrap();

    let read = read_tool()
        .run(json!({"path": "linkdir/../x.txt"}), scratch.context())
        .await;
    assert_eq!(read, ToolOutput::ok("     1|in deep"));
    let write = WriteFileTool
        .run(
            json!({"path": "linkdir/../../conf/x", "content": "c"}),
            scratch.context(),
        )
        .await;
    assert_eq!(
        write,
        ToolOutput::ok("wrote 1 bytes to conf/x (new file)").changing(Some(miniagent_protocol::TextChange {
            old_text: None,
            new_text: "c".into()
        }))
    );
    assert_eq!(std::fs::read_to_string(ws.join("conf/x")).unwrap(), "c");

    let read = read_tool()
        .run(json!({"path": "out/../y.txt"}), scratch.context())
        .await;
    assert_eq!(
        read,
        ToolOutput::error(format!(
            "`out/../y.txt` resolves to {}, which is outside the workspace {}; file tools only work inside it",
            scratch.outside().join("a/y.txt").display(),
            ws.display()
        ))
    );
    let write = WriteFileTool
        .run(json!({"path": "out/../y.txt", "content": "z"}), scratch.context())
        .await;
    assert!(write.is_error, "{}", write.content);
    assert_eq!(std::fs::read_to_string(ws.join("y.txt")).unwrap(), "top y\n");
    assert_eq!(
        std::fs::read_to_string(scratch.outside().join("a/y.txt")).unwrap(),
        "SECRET\n"
    );
}

#[test]
fn stale_temp_files_of_dead_processes_are_removed_and_nothing_else() {
    let scratch = Scratch::new("stale");
    let ws = scratch.ws();
    std::fs::create_dir_all(ws.join("sub/deeper")).unwrap();
    // PIDs above the kernel's maximum (4194304) can never be live.
    let stale = [
        ".a.txt.miniagent-99999999-0123abcd.tmp",
        "sub/.b.rs.miniagent-88888888-ffffffff.tmp",
        "sub/deeper/..x.miniagent-77777777-00000000.tmp",
    ];
    let kept = [
        "a.txt",
        // This process is alive.
        &format!(".a.txt.miniagent-{}-0123abcd.tmp", std::process::id()),
        ".a.txt.miniagent-99999999-0123abc.tmp",
        ".a.txt.miniagent-99999999-0123abcg.tmp",
        ".a.txt.miniagent-99999999-0123abcd.tmp.bak",
        "a.txt.miniagent-99999999-0123abcd.tmp",
        ".a.txt.miniagent--0123abcd.tmp",
        ".a.txt.other-99999999-0123abcd.tmp",
    ];
    for name in stale.iter().chain(kept.iter()) {
        std::fs::write(ws.join(name), "half").unwrap();
    }
    // A symlink with the pattern's name and a folder with it are not temp files.
    std::fs::write(scratch.outside().join("target"), "keep").unwrap();
    std::os::unix::fs::symlink(
        scratch.outside().join("target"),
        ws.join(".c.miniagent-99999999-0123abcd.tmp"),
    )
    .unwrap();
    std::fs::create_dir(ws.join(".d.miniagent-99999999-0123abcd.tmp")).unwrap();
    // Files behind a symlinked folder are outside: never touched.
    std::fs::write(
        scratch.outside().join(".e.miniagent-99999999-0123abcd.tmp"),
        "outside",
    )
    .unwrap();
    std::os::unix::fs::symlink(scratch.outside(), ws.join("linked")).unwrap();

    assert_eq!(remove_stale_temp_files(&ws), 3);
    for name in stale {
        assert!(!ws.join(name).exists(), "{name} is still there");
    }
    for name in kept {
        assert!(ws.join(name).exists(), "{name} was removed");
    }
    assert!(ws.join(".c.miniagent-99999999-0123abcd.tmp").is_symlink());
    assert!(ws.join(".d.miniagent-99999999-0123abcd.tmp").is_dir());
    assert_eq!(
        listing(&scratch.outside()),
        vec![".e.miniagent-99999999-0123abcd.tmp", "target"]
    );
}

#[tokio::test]
async fn a_huge_sparse_file_is_binary_without_reading_it() {
    let scratch = Scratch::new("sparse");
    let path = scratch.ws().join("sparse.txt");
    // Text first, then a hole: the first 8 KB look like text.
    std::fs::write(&path, "a".repeat(10_000)).unwrap();
    std::fs::File::options()
        .write(true)
        .open(&path)
        .unwrap()
        .set_len(1 << 30)
        .unwrap();
    let out = read_tool()
        .run(json!({"path": "sparse.txt", "limit": 5}), scratch.context())
        .await;
    assert_eq!(
        out,
        ToolOutput::error("sparse.txt is a binary file (1073741824 bytes); read_file shows text only")
    );
}

#[tokio::test]
async fn a_long_line_is_paged_by_column() {
    let scratch = Scratch::new("longline");
    let line: String = (0..100_000).map(|i| char::from(b'a' + (i % 26) as u8)).collect();
    std::fs::write(scratch.ws().join("one.txt"), format!("{line}\nsecond\n")).unwrap();
    let read = read_tool();

    let first = read
        .run(json!({"path": "one.txt", "limit": 1}), scratch.context())
        .await;
    assert_eq!(
        first,
        ToolOutput::ok(format!(
            "     1|{}\n[line 1 goes on past column 4000; to read on, use offset 1 and column 4001]",
            &line[..4000]
        ))
    );
    let next = read
        .run(
            json!({"path": "one.txt", "offset": 1, "column": 4001, "limit": 1}),
            scratch.context(),
        )
        .await;
    assert_eq!(
        next,
        ToolOutput::ok(format!(
            "     1|{}\n[line 1 goes on past column 8000; to read on, use offset 1 and column 8001]",
            &line[4000..8000]
        ))
    );
    let last = read
        .run(
            json!({"path": "one.txt", "offset": 1, "column": 96001}),
            scratch.context(),
        )
        .await;
    assert_eq!(
        last,
        ToolOutput::ok(format!("     1|{}\n     2|second", &line[96_000..]))
    );
}

#[tokio::test]
async fn a_long_line_is_cut_on_a_character_boundary() {
    let scratch = Scratch::new("utf8line");
    // 3-byte characters: 4000 bytes is not a boundary, 3999 is.
    let line = "語".repeat(5000);
    std::fs::write(scratch.ws().join("cjk.txt"), &line).unwrap();
    let first = read_tool()
        .run(json!({"path": "cjk.txt"}), scratch.context())
        .await;
    assert_eq!(
        first,
        ToolOutput::ok(format!(
            "     1|{}\n[line 1 goes on past column 3999; to read on, use offset 1 and column 4000]",
            "語".repeat(1333)
        ))
    );
}
