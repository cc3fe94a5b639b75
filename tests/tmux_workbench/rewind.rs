//! The rewind picker on the real binary: Esc Esc after a turn opens it listing the
//! message, Esc closes it, Esc Esc in one burst opens it once, `/rewind` opens it, a
//! pick shows the choice, and `/undo`'s answer is shown.

use super::*;
use pretty_assertions::assert_eq;

/// Whether the screen shows the picker's list.
fn listing(screen: &str) -> bool {
    screen.contains(" Rewind ") && screen.contains("Go back to just before")
}

#[test]
fn esc_esc_and_slash_rewind_open_the_rewind_picker_in_tmux() {
    let server = ScriptedServer::start_blocking(vec![Reply::text("Flag added.")]);
    let (workspace, home) = (TempDir::new(), TempDir::new());
    let tmux = Tmux::start(&workspace);
    launch_and_ask(&tmux, &home, &server, "add a --verbose flag", "Flag added.");

    // Two presses, as a person makes them: the picker lists the message as turn 1.
    tmux.keys(&["Escape"]);
    std::thread::sleep(Duration::from_millis(150));
    tmux.keys(&["Escape"]);
    let picker = tmux.wait_for("the rewind picker", |s| {
        listing(s) && s.contains("1  add a --verbose flag")
    });
    assert!(picker.contains("1  add a --verbose flag"), "{picker}");
    tmux.keys(&["Escape"]);
    tmux.wait_for("the picker closed", |s| !s.contains(" Rewind "));

    // In one burst, as tmux sends them: it opens once and stays (no Esc of the burst
    // closes it). crossterm reads two ESC bytes that arrive in one read as a single Esc
    // (it drops the second), so the burst is four presses: two Escs reach the workbench.
    std::thread::sleep(Duration::from_millis(700));
    tmux.keys(&["Escape", "Escape", "Escape", "Escape"]);
    tmux.wait_for("the picker from a burst", listing);
    std::thread::sleep(Duration::from_millis(300));
    assert!(listing(&tmux.screen()), "{}", tmux.screen());
    tmux.keys(&["Escape"]);
    tmux.wait_for("the picker closed", |s| !s.contains(" Rewind "));

    // `/rewind` opens it; Enter (once the list has been seen a moment) picks the message
    // and shows what can be put back.
    tmux.type_text("/rewind");
    tmux.keys(&["Enter"]);
    tmux.wait_for("the picker from /rewind", listing);
    std::thread::sleep(Duration::from_millis(700));
    tmux.keys(&["Enter"]);
    let choice = tmux.wait_for("the choice", |s| {
        s.contains("Before turn 1: add a --verbose flag")
    });
    for option in ["c  code", "v  conversation", "b  both"] {
        assert!(choice.contains(option), "{option} in\n{choice}");
    }
    // Esc goes back to the list, and Esc again closes it.
    tmux.keys(&["Escape"]);
    tmux.wait_for("back at the list", listing);
    tmux.keys(&["Escape"]);
    tmux.wait_for("the picker closed", |s| !s.contains(" Rewind "));

    // `/undo` sends the agent its op; its answer is shown in the transcript.
    tmux.type_text("/undo");
    tmux.keys(&["Enter"]);
    tmux.wait_for_text("undo refused:");
    // None of it went to the model.
    assert_eq!(server.requests().len(), 1);
    tmux.quit_with_ctrl_d();
}
