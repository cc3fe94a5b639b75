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
