//! Ctrl-G's editor, Shift-Tab's approval modes, the pane keys and scrolling behind an
//! approval, on the real binary in tmux (keys sent in bursts, as a person types them).

use super::*;

/// An editor that asks on the terminal for the word to put in place of `foo` and fails
/// on a file that says `fail`. It reads the answer only half a second after asking: a
/// workbench still reading the terminal meanwhile would take the typed line for itself.
const EDITOR_SCRIPT: &str = r#"#!/bin/sh
if grep -q fail "$1"; then echo "the editor refuses" >&2; exit 3; fi
printf 'EDITOR-ASKS: ' > /dev/tty
sleep 0.5
IFS= read -r word < /dev/tty
sed -i "s/foo/$word/" "$1"
"#;

/// Ctrl-G hands the terminal to the editor (which reads its own keys: the workbench
/// paused its reader), takes the edited text back into the input without sending it,
/// and redraws; a failing editor leaves the input and says why; the terminal is cooked
/// again after quitting.
#[test]
fn ctrl_g_edits_the_input_in_the_editor_in_tmux() {
    let server = ScriptedServer::start_blocking(vec![Reply::text("Got the edited text.")]);
    let (workspace, home) = (TempDir::new(), TempDir::new());
    let editor = home.path().join("editor.sh");
    std::fs::write(&editor, EDITOR_SCRIPT).unwrap();
    let tmux = Tmux::start(&workspace);
    tmux.send("unset VISUAL");
    // Words, as a shell splits them: the script through `sh` with an argument first.
    tmux.send(&format!(
        "export EDITOR={}",
        shell_quote(&format!("sh {}", editor.display()))
    ));
    launch(&tmux, &home, &server, "");
    tmux.wait_for_text("Conversation");
    tmux.type_text("hello foo");
    tmux.wait_for_text("hello foo");
    tmux.keys(&["C-g"]);
    tmux.wait_for("the editor's question on the shell's screen", |s| {
        s.contains("EDITOR-ASKS:") && !s.contains("Conversation")
    });
    tmux.send("bar");
    let back = tmux.wait_for("the workbench back with the edited text", |s| {
        s.contains("Conversation") && s.contains("hello bar")
    });
    assert!(!back.contains("EDITOR-ASKS"), "{back}");
    assert_eq!(server.requests().len(), 0, "the edited text is not sent");
    // The keys are the workbench's again: more typing joins the text, Enter sends it.
    tmux.type_text(" baz");
    tmux.keys(&["Enter"]);
    tmux.wait_for_text("Got the edited text.");
    let requests = server.requests();
    assert_eq!(requests.len(), 1);
    assert_eq!(
        requests[0].body["messages"],
        serde_json::json!([{
            "role": "user",
            "content": [{"type": "text", "text": "hello bar baz", "cache_control": {"type": "ephemeral"}}]
        }])
    );
    // A failing editor: the input stays, and a notice says why.
    tmux.type_text("please fail");
    tmux.keys(&["C-g"]);
    let failed = tmux.wait_for_text("exited with status 3");
    assert!(failed.contains("please fail"), "{failed}");
    assert!(failed.contains("the input is as it was"), "{failed}");
    tmux.keys(&["C-c"]);
    tmux.quit_with_ctrl_d();
    tmux.assert_terminal_cooked();
}

/// Ctrl-G while a turn runs: the agent goes on while the editor has the terminal (its
/// command ends and the model is asked again meanwhile), and what it did shows once the
/// editor is done, with the edited text in the input, not sent.
#[test]
fn ctrl_g_while_a_turn_runs_in_tmux() {
    let server = ScriptedServer::start_blocking(vec![
        Reply::tool("s1", "bash", r#"{"command": "sleep 1; echo slept"}"#),
        Reply::text("Finished while you edited."),
    ]);
    let (workspace, home) = (TempDir::new(), TempDir::new());
    let editor = home.path().join("editor.sh");
    std::fs::write(&editor, EDITOR_SCRIPT).unwrap();
    let tmux = Tmux::start(&workspace);
    tmux.send("unset VISUAL");
    tmux.send(&format!(
        "export EDITOR={}",
        shell_quote(&format!("sh {}", editor.display()))
    ));
    launch(&tmux, &home, &server, "");
    tmux.wait_for_text("Conversation");
    tmux.send("go");
    tmux.wait_for_text("sleep 1");
    tmux.type_text("note foo");
    tmux.keys(&["C-g"]);
    tmux.wait_for_text("EDITOR-ASKS:");
    let deadline = Instant::now() + Duration::from_secs(15);
    while server.requests().len() < 2 {
        assert!(
            Instant::now() < deadline,
            "the agent stopped while the editor ran"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    assert!(
        tmux.screen().contains("EDITOR-ASKS:"),
        "the editor still has the terminal"
    );
    tmux.send("bar");
    let back = tmux.wait_for("the turn's end and the edited text", |s| {
        s.contains("Finished while you edited.") && s.contains("note bar")
    });
    assert!(back.contains("✓ bash"), "{back}");
    assert_eq!(server.requests().len(), 2, "the edited text is not sent");
    tmux.keys(&["C-c"]);
    tmux.quit_with_ctrl_d();
}

/// Shift-Tab, pressed in a burst, steps the mode the title bar shows and the core
/// uses: in read-only a write is refused without asking (the model is told so), back in
/// ask the same write asks.
#[test]
fn shift_tab_changes_the_mode_the_core_uses_in_tmux() {
    let server = ScriptedServer::start_blocking(vec![
        Reply::tool("w1", "write_file", r#"{"path": "a.txt", "content": "one"}"#),
        Reply::text("Refused, as the mode says."),
        Reply::tool("w2", "write_file", r#"{"path": "a.txt", "content": "two"}"#),
        Reply::text("Asked this time."),
    ]);
    let (workspace, home) = (TempDir::new(), TempDir::new());
    let tmux = Tmux::start(&workspace);
    launch_asking(&tmux, &home, &server);
    tmux.wait_for("the title bar in ask", |s| s.starts_with(" miniagent · ask ·"));
    // ask → auto-edit → read-only, in one burst.
    tmux.keys(&["BTab", "BTab"]);
    tmux.wait_for("the title bar in read-only", |s| {
        s.starts_with(" miniagent · read-only ·")
    });
    tmux.send("write it");
    tmux.wait_for_text("Refused, as the mode says.");
    assert!(!tmux.screen().contains("Allow write_file?"));
    let refused = server.last_block(1);
    assert_eq!(refused["type"], "tool_result");
    assert!(
        refused["content"]
            .to_string()
            .contains("the approval mode is read-only"),
        "{refused}"
    );
    assert!(!workspace.path().join("a.txt").exists());
    // read-only → ask.
    tmux.keys(&["BTab"]);
    tmux.wait_for("the title bar in ask", |s| s.starts_with(" miniagent · ask ·"));
    tmux.send("write it again");
    tmux.wait_for_text("Allow write_file?");
    tmux.wait_for_text("● armed");
    tmux.keys(&["y"]);
    tmux.wait_for_text("Asked this time.");
    assert_eq!(
        std::fs::read_to_string(workspace.path().join("a.txt")).unwrap(),
        "two"
    );
    tmux.quit_with_ctrl_d();
}

/// Alt-← and Alt-→ move the focus the same way at 160 and at 80 columns, sent in a
/// burst; Shift-Tab, in the same burst, leaves the focus where it is and steps the mode
/// (full-auto, where the workbench started, goes back to ask).
#[test]
fn alt_arrows_move_the_focus_at_every_width_in_tmux() {
    let (_server, _workspace, _home, tmux) = keys_after_one_answer();
    for ((width, height), mode) in [((160, 48), "ask"), ((80, 24), "auto-edit")] {
        tmux.ok(&[
            "resize-window",
            "-t",
            "main",
            "-x",
            &width.to_string(),
            "-y",
            &height.to_string(),
        ]);
        tmux.wait_for("the input focused", |s| s.contains("┏ Input"));
        tmux.keys(&["M-Left", "M-Left", "M-Right"]);
        tmux.wait_for(&format!("the conversation focused at {width}"), |s| {
            s.contains("┏ Conversation") && !s.contains("┏ Input")
        });
        tmux.keys(&["M-Right", "BTab"]);
        let title = format!(" miniagent · {mode} ·");
        tmux.wait_for(&format!("the input focused again at {width}, in {mode}"), |s| {
            s.contains("┏ Input") && s.starts_with(&title)
        });
    }
    tmux.quit_with_ctrl_d();
}

/// The workbench in full-auto after one short answer, for the key tests.
fn keys_after_one_answer() -> (ScriptedServer, TempDir, TempDir, Tmux) {
    let server = ScriptedServer::start_blocking(vec![Reply::text("Short answer.")]);
    let (workspace, home) = (TempDir::new(), TempDir::new());
    let tmux = Tmux::start(&workspace);
    launch_and_ask(&tmux, &home, &server, "hi", "Short answer.");
    (server, workspace, home, tmux)
}

/// While an approval waits, Shift-↑ scrolls the conversation behind the dialog (the
/// dialog stays, unanswered), and the wheel outside the dialog does too; the dialog
/// still answers y afterwards.
#[test]
fn the_conversation_scrolls_behind_a_waiting_approval_in_tmux() {
    let answer: String = (1..=80).map(|n| format!("- answer line {n:03}\n")).collect();
    let server = ScriptedServer::start_blocking(vec![
        Reply::text(answer),
        Reply::tool("b1", "bash", r#"{"command": "echo behind"}"#),
        Reply::text("Ran it."),
    ]);
    let (workspace, home) = (TempDir::new(), TempDir::new());
    let tmux = Tmux::start(&workspace);
    launch_asking(&tmux, &home, &server);
    tmux.wait_for_text("Conversation");
    tmux.send("long");
    tmux.wait_for_text("answer line 080");
    tmux.wait_for_text("ready");
    tmux.send("run");
    tmux.wait_for_text("Allow bash?");
    let before = tmux.screen();
    assert!(!before.contains("answer line 010"), "{before}");
    tmux.keys(&["S-Up"; 60]);
    let scrolled = tmux.wait_for("older lines behind the dialog", |s| {
        s.contains("Allow bash?") && numbers_after(s, "answer line ").iter().any(|n| *n < 25)
    });
    assert!(scrolled.contains("echo behind"), "{scrolled}");
    assert_eq!(server.requests().len(), 2, "nothing answered");
    tmux.wait_for_text("● armed");
    tmux.keys(&["y"]);
    tmux.wait_for("the turn's end", |s| {
        s.contains("ready") && !s.contains("Allow bash?")
    });
    assert_eq!(server.requests().len(), 3, "approved, ran, answered");
    // Scrolled back, the conversation waits there; End brings the newest output.
    tmux.keys(&["End"]);
    tmux.wait_for_text("Ran it.");
    tmux.quit_with_ctrl_d();
}

/// Whether tmux saw a bell in the workbench's window (which is not the one shown).
fn bell_rang(tmux: &Tmux) -> bool {
    let output = tmux
        .run(&["display", "-p", "-t", "main:0", "#{window_bell_flag}"])
        .0
        .output()
        .expect("tmux runs");
    String::from_utf8_lossy(&output.stdout).trim() == "1"
}

/// A turn that ends while the terminal is focused rings nothing; once the terminal
/// reports the focus lost (`ESC [ O`), the next turn's end rings the bell (inside tmux,
/// `auto` is the bell), which tmux flags on the window.
#[test]
fn a_turn_ending_away_from_the_terminal_rings_the_bell_in_tmux() {
    let server =
        ScriptedServer::start_blocking(vec![Reply::text("First answer."), Reply::text("Second answer.")]);
    let (workspace, home) = (TempDir::new(), TempDir::new());
    let tmux = Tmux::start(&workspace);
    launch(&tmux, &home, &server, "");
    tmux.wait_for_text("Conversation");
    // Another window in front: the workbench's bells are then flagged on its own.
    tmux.ok(&["new-window", "-t", "main"]);
    let keys = |keys: &[&str]| {
        let mut args = vec!["send-keys", "-t", "main:0"];
        args.extend_from_slice(keys);
        tmux.ok(&args);
    };
    keys(&["-l", "one"]);
    keys(&["Enter"]);
    let shown = || {
        let output = tmux
            .run(&["capture-pane", "-p", "-t", "main:0"])
            .0
            .output()
            .expect("tmux runs");
        String::from_utf8_lossy(&output.stdout).into_owned()
    };
    let deadline = Instant::now() + Duration::from_secs(15);
    while !shown().contains("First answer.") {
        assert!(Instant::now() < deadline, "no first answer:\n{}", shown());
        std::thread::sleep(Duration::from_millis(50));
    }
    assert!(!bell_rang(&tmux), "focused: no bell");
    keys(&["-H", "1b", "5b", "4f"]);
    keys(&["-l", "two"]);
    keys(&["Enter"]);
    let deadline = Instant::now() + Duration::from_secs(15);
    while !bell_rang(&tmux) {
        assert!(Instant::now() < deadline, "no bell after the turn ended away");
        std::thread::sleep(Duration::from_millis(50));
    }
    assert_eq!(server.requests().len(), 2);
    tmux.ok(&["select-window", "-t", "main:0"]);
    tmux.quit_with_ctrl_d();
}
