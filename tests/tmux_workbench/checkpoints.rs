//! Checkpoints on the real binary, end to end: a scripted turn writes one file, edits a
//! second and changes a third with `bash`; `/diff` lists all three and `]` goes from one
//! to the next; a hand edit makes the rewind picker's code rewind refuse, naming the file
//! and changing nothing; once it is undone, Esc Esc, the message and `b` put every file
//! back byte for byte and the conversation before the message, with the message back in
//! the input.

use super::*;
use pretty_assertions::assert_eq;

const EDITED: &str = "one\ntwo\n";
const COMMANDED: &str = "c before\n";

fn file(workspace: &TempDir, name: &str) -> Option<String> {
    std::fs::read_to_string(workspace.path().join(name)).ok()
}

/// The picker lists turn 1's message with the files a code rewind would put back.
fn listing(screen: &str) -> bool {
    screen.contains(" Rewind ") && screen.contains("1  change three files") && screen.contains("3 files")
}

/// Esc Esc, Enter on turn 1's message, then `choice` (`c`, `v` or `b`). The picker and
/// its choice arm before they take a key (a burst cannot pick by accident), so each
/// step waits for its screen and a moment more.
fn rewind_turn_one(tmux: &Tmux, choice: &str) {
    tmux.keys(&["Escape"]);
    std::thread::sleep(Duration::from_millis(150));
    tmux.keys(&["Escape"]);
    tmux.wait_for("the rewind picker", listing);
    std::thread::sleep(Duration::from_millis(700));
    tmux.keys(&["Enter"]);
    tmux.wait_for_text("b  both");
    std::thread::sleep(Duration::from_millis(700));
    tmux.keys(&[choice]);
}

#[test]
fn diff_and_rewind_put_a_turns_files_back_in_tmux() {
    let server = ScriptedServer::start_blocking(vec![
        Reply::tool(
            "w",
            "write_file",
            r#"{"path": "new.txt", "content": "brand new\n"}"#,
        ),
        Reply::tool(
            "e",
            "edit_file",
            r#"{"path": "edit.txt", "old_str": "two", "new_str": "TWO"}"#,
        ),
        Reply::tool("b", "bash", r#"{"command": "printf 'c after\\n' > c.txt"}"#),
        Reply::text("Changed three files."),
    ]);
    let (workspace, home) = (TempDir::new(), TempDir::new());
    std::fs::write(workspace.path().join("edit.txt"), EDITED).unwrap();
    std::fs::write(workspace.path().join("c.txt"), COMMANDED).unwrap();
    let tmux = Tmux::start(&workspace);
    launch_and_ask(
        &tmux,
        &home,
        &server,
        "change three files",
        "Changed three files.",
    );
    assert_eq!(file(&workspace, "c.txt").as_deref(), Some("c after\n"));

    // /diff: the three files, and `]` moves from the first to the second.
    tmux.type_text("/diff");
    tmux.keys(&["Enter"]);
    let diff = tmux.wait_for("the diff of three files", |s| {
        s.contains("3 files changed") && s.contains("c.txt  modified")
    });
    for row in ["M c.txt", "M edit.txt", "A new.txt", "+c after"] {
        assert!(diff.contains(row), "{row} in\n{diff}");
    }
    tmux.keys(&["]"]);
    let next = tmux.wait_for("the second file", |s| s.contains("edit.txt  modified"));
    assert!(next.contains("+TWO"), "{next}");
    tmux.keys(&["Escape"]);
    tmux.wait_for("the diff closed", |s| !s.contains("Changes this session"));

    // A hand edit since: the code rewind refuses by name and nothing changes.
    std::fs::write(workspace.path().join("c.txt"), "the person's edit\n").unwrap();
    rewind_turn_one(&tmux, "c");
    let refused = tmux.wait_for("the refusal", |s| s.contains("rewind refused:"));
    assert!(refused.contains("c.txt"), "{refused}");
    assert_eq!(file(&workspace, "c.txt").as_deref(), Some("the person's edit\n"));
    assert_eq!(file(&workspace, "edit.txt").as_deref(), Some("one\nTWO\n"));
    assert_eq!(file(&workspace, "new.txt").as_deref(), Some("brand new\n"));
    tmux.keys(&["Escape"]);
    tmux.wait_for("the picker closed", |s| !s.contains(" Rewind "));

    // The edit undone, both go back: every file byte for byte, the message in the input.
    std::fs::write(workspace.path().join("c.txt"), "c after\n").unwrap();
    std::thread::sleep(Duration::from_millis(700));
    rewind_turn_one(&tmux, "b");
    let rewound = tmux.wait_for("the rewind", |s| s.contains("put back 3 files"));
    assert!(rewound.contains("rewound to before turn 1"), "{rewound}");
    assert!(!rewound.contains("Changed three files."), "{rewound}");
    assert_eq!(file(&workspace, "c.txt").as_deref(), Some(COMMANDED));
    assert_eq!(file(&workspace, "edit.txt").as_deref(), Some(EDITED));
    assert_eq!(file(&workspace, "new.txt"), None);
    // The message is back in the input, to send again.
    let input = rewound
        .lines()
        .rev()
        .find(|line| line.contains("change three files"));
    assert!(input.is_some(), "{rewound}");
    // None of it went to the model: one turn, four requests.
    assert_eq!(server.requests().len(), 4);
    // Ctrl-C clears the input (Ctrl-D quits only an empty one).
    tmux.keys(&["C-c"]);
    tmux.wait_for("the input cleared", |s| s.contains("Ask miniagent"));
    tmux.quit_with_ctrl_d();
}
