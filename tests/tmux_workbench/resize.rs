//! What a resize does to a side pane that has the keys, on the real binary.

use super::*;

/// A side pane given the keys at full width stays on screen with them when the window
/// narrows (a fresh-eyes finding: it held the keys unseen at 80 columns, so ↑ and Enter
/// went to a pane nobody could see); Esc then puts it away and the draft in the input is
/// still there, and Enter sends it.
#[test]
fn a_focused_side_pane_stays_shown_when_the_window_narrows_in_tmux() {
    let server = ScriptedServer::start_blocking(vec![
        Reply::tool("s1", "bash", r#"{"command": "echo first-call-output"}"#),
        Reply::text("Done with it."),
        Reply::text("Draft received."),
    ]);
    let workspace = TempDir::new();
    let home = TempDir::new();
    let tmux = Tmux::start(&workspace);
    tmux.ok(&["resize-window", "-t", "main", "-x", "160", "-y", "48"]);
    launch_and_ask(&tmux, &home, &server, "run it", "Done with it.");
    tmux.type_text("my draft");
    tmux.keys(&["F4"]);
    tmux.wait_for("the tools pane with the keys", |s| {
        s.contains("Tools · 1") && s.contains("select a call")
    });
    tmux.ok(&["resize-window", "-t", "main", "-x", "80", "-y", "24"]);
    let narrow = tmux.wait_for("the tools pane over the conversation at 80 columns", |s| {
        s.lines().next().is_some_and(|l| l.chars().count() <= 80) && s.contains("Tools · 1")
    });
    assert!(narrow.contains("select a call"), "{narrow}");
    // ↑ Enter in the pane opens its call, as the bar says, not a recalled prompt.
    tmux.keys(&["Up", "Enter"]);
    tmux.wait_for("the call's detail", |s| {
        s.contains("Tool call") && s.contains("first-call-output")
    });
    tmux.keys(&["Escape"]);
    tmux.wait_for("the detail closed", |s| !s.contains("Tool call"));
    tmux.keys(&["Escape"]);
    tmux.wait_for("the tools pane put away, the draft there", |s| {
        !s.contains("Tools · 1") && s.contains("my draft")
    });
    tmux.keys(&["Enter"]);
    tmux.wait_for_text("Draft received.");
    let sent = server.requests();
    assert_eq!(sent.len(), 3, "only the draft was sent");
    let last = sent[2].body["messages"].to_string();
    assert!(last.contains("my draft"), "{last}");
    tmux.quit_with_ctrl_d();
}

/// Quitting after the window grew leaves the shell's screen as it was: its lines where
/// they were and nothing of the workbench. A fresh-eyes tester found the bottom rows of
/// the 160-column workbench on lines 1–12 of the shell after growing the window from
/// 80x24 and quitting: tmux (3.3) rewraps the alternate screen to the old width as it
/// leaves it, and the rows longer than 80 columns spilled into the shell's screen.
#[test]
fn quitting_after_the_window_grew_leaves_the_shell_screen_as_it_was_in_tmux() {
    let server = ScriptedServer::start_blocking(vec![Reply::text(
        "A long answer that fills more than eighty columns of the conversation pane once the window is wide.",
    )]);
    let (workspace, home) = (TempDir::new(), TempDir::new());
    let tmux = Tmux::start(&workspace);
    tmux.ok(&["resize-window", "-t", "main", "-x", "80", "-y", "24"]);
    let start = home.write(
        "start.sh",
        format!(
            "MINIAGENT_CONFIG_DIR={home} MINIAGENT_LOG_DIR={home} MINIAGENT_DATA_DIR={home} MINIAGENT_API_KEY={TEST_KEY} exec {} --base-url {} --model scripted-model --approval full-auto\n",
            shell_quote(env!("CARGO_BIN_EXE_miniagent")),
            server.anthropic_base_url(),
            home = shell_quote(home.path().to_str().unwrap()),
        ),
    );
    tmux.send("export PS1='$ '");
    tmux.send("clear; echo FIRSTLINE");
    tmux.wait_for("the marker", |s| s.lines().any(|l| l == "FIRSTLINE"));
    let command = format!("sh {}", start.display());
    tmux.send(&command);
    tmux.wait_for_text("Conversation");
    tmux.send("answer at length");
    tmux.wait_for_text("A long answer");
    tmux.ok(&["resize-window", "-t", "main", "-x", "160", "-y", "48"]);
    tmux.wait_for("the workbench at 160 columns", |s| {
        s.lines().next().is_some_and(|l| l.chars().count() > 80) && s.contains("once the window is wide.")
    });
    let screen = tmux.quit_with_ctrl_d();
    let lines: Vec<&str> = screen.lines().map(str::trim_end).collect();
    let log = support::cli::session_logs(&home)
        .pop()
        .expect("a recorded session");
    let id = support::cli::session_id(&log);
    let mut expected = vec![
        "FIRSTLINE".to_string(),
        format!("$ {command}"),
        format!("session {id} · continue it with: miniagent --resume {id}"),
        "$".to_string(),
    ];
    expected.resize(lines.len().max(4), String::new());
    assert_eq!(lines, expected, "the shell's screen:\n{screen}");
    assert_eq!(server.requests().len(), 1);
}
