//! `/diff` on the real binary: typed key by key and in one burst, the overlay opens
//! over the panes (waiting for the agent's answer, or with it), `t` opens its turn
//! picker and Esc goes back, Esc closes it; nothing reaches the model.

use super::*;
use pretty_assertions::assert_eq;

/// The overlay is open: its title, and either its waiting line or the answer for a
/// session that changed nothing (whichever the agent has given by now).
fn diff_open(screen: &str) -> bool {
    screen.contains("Changes this session")
        && (screen.contains("asking the agent what this session changed")
            || screen.contains("this session has not changed any file"))
}

#[test]
fn diff_opens_and_closes_in_tmux() {
    let server = ScriptedServer::start_blocking(Vec::new());
    let (workspace, home) = (TempDir::new(), TempDir::new());
    let tmux = Tmux::start(&workspace);
    launch(&tmux, &home, &server, "");
    tmux.wait_for_text("Conversation");
    // Key by key.
    tmux.type_text("/diff");
    tmux.keys(&["Enter"]);
    let shown = tmux.wait_for("the /diff overlay", diff_open);
    assert!(shown.contains("]/[ file"), "{shown}");
    tmux.keys(&["t"]);
    tmux.wait_for_text("Show the changes of:");
    tmux.keys(&["Escape"]);
    tmux.wait_for("the overlay again", |s| {
        diff_open(s) && !s.contains("Show the changes of:")
    });
    tmux.keys(&["Escape"]);
    tmux.wait_for("the overlay closed", |s| !s.contains("Changes this session"));
    // In bursts, as a person types them: open it, the picker, the whole session taken
    // again (only the picker closes); then the overlay's keys, `q` closing it, and a
    // word typed after it landing in the input. (An Esc is not followed by letters in
    // one burst: a terminal sends Esc and a letter read together as Alt and the letter.)
    tmux.keys(&["/diff", "Enter", "t", "Down", "Up", "Enter"]);
    tmux.wait_for("the overlay, the picker gone", |s| {
        diff_open(s) && !s.contains("Show the changes of:")
    });
    tmux.keys(&[
        "]", "[", "j", "k", "PageDown", "End", "Home", "Right", "q", "after",
    ]);
    let after = tmux.wait_for("the burst's end", |s| {
        !s.contains("Changes this session") && s.contains("after")
    });
    assert!(!after.contains("Show the changes of:"), "{after}");
    // And once more, closed with Esc.
    tmux.keys(&["C-u", "/diff", "Enter"]);
    tmux.wait_for("the /diff overlay", diff_open);
    tmux.keys(&["Escape"]);
    tmux.wait_for("the overlay closed", |s| !s.contains("Changes this session"));
    // /diff asks the agent, not the model.
    assert_eq!(server.requests().len(), 0);
    tmux.quit_with_ctrl_d();
}
