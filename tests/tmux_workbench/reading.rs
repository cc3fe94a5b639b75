//! Reading the conversation on the real binary: Ctrl-F, a query typed in a burst, `n`,
//! `N`, Esc; `/copy` and `y` reaching tmux's clipboard through OSC 52 (tmux's
//! `set-clipboard on` keeps what the program copied as a paste buffer); `/mouse`
//! handing the mouse to the terminal.

use super::*;

/// What the scripted model answers: "needle" three times, once in a code block.
const ANSWER: &str = "First needle here.\n\n```sh\necho needle-in-code\n```\n\nLast NEEDLE.";

/// The workbench after one prompt answered with [`ANSWER`] and a command it ran.
fn answered() -> (ScriptedServer, TempDir, TempDir, Tmux) {
    let server = ScriptedServer::start_blocking(vec![
        Reply::tool("s1", "bash", r#"{"command": "echo call-output"}"#),
        Reply::text(ANSWER),
    ]);
    let (workspace, home) = (TempDir::new(), TempDir::new());
    let tmux = Tmux::start(&workspace);
    // Programs in the pane may set the clipboard (tmux's default is `external`).
    tmux.ok(&["set", "-s", "set-clipboard", "on"]);
    launch_and_ask(&tmux, &home, &server, "find the needle", "Last NEEDLE.");
    let requests = server.requests();
    assert_eq!(requests.len(), 2);
    assert!(
        requests[0].body.to_string().contains("find the needle"),
        "{}",
        requests[0].body
    );
    (server, workspace, home, tmux)
}

/// The search line's count, `3/17`, from the screen.
fn search_count(screen: &str) -> Option<String> {
    let line = screen.lines().find(|line| line.contains(" / needle"))?;
    let inner = line[line.find(" / needle")?..].split(['┃', '│']).next()?;
    inner.split_whitespace().last().map(str::to_string)
}

/// tmux's newest paste buffer: what the program last put on the clipboard.
fn clipboard(tmux: &Tmux) -> String {
    let output = tmux.run(&["show-buffer"]).0.output().expect("tmux runs");
    String::from_utf8_lossy(&output.stdout).into_owned()
}

#[test]
fn ctrl_f_types_a_query_and_n_and_shift_n_move_through_the_matches_in_tmux() {
    let (_server, _workspace, _home, tmux) = answered();
    for (width, height) in [(160u16, 48u16), (80, 24)] {
        tmux.ok(&[
            "resize-window",
            "-t",
            "main",
            "-x",
            &width.to_string(),
            "-y",
            &height.to_string(),
        ]);
        tmux.wait_for("the resized frame", |s| {
            s.lines().all(|line| line.chars().count() <= usize::from(width)) && s.contains("Conversation")
        });
        // One burst: Ctrl-F and the query, as typed.
        tmux.keys(&["C-f", "n", "e", "e", "d", "l", "e"]);
        // The prompt's, twice in the answer's prose and once in its code (NEEDLE too:
        // the query has no capital).
        let found = tmux.wait_for("four matches", |s| {
            search_count(s).is_some_and(|count| count.ends_with("/4"))
        });
        let first = search_count(&found).unwrap_or_default();
        // Enter keeps it; n, then N twice, in one burst: one match before the first.
        tmux.keys(&["Enter", "n", "N", "N"]);
        let before = |at: &str| {
            let at: usize = at.split('/').next().and_then(|n| n.parse().ok()).unwrap_or(1);
            format!("{}/4", (at + 2) % 4 + 1)
        };
        let expected = before(&first);
        tmux.wait_for(&format!("the match before the first, {expected}"), |s| {
            search_count(s).as_deref() == Some(expected.as_str())
        });
        // Esc ends the search; the pane keeps the keys and n is typed nowhere.
        tmux.keys(&["Escape"]);
        tmux.wait_for("the search line gone", |s| search_count(s).is_none());
    }
    tmux.quit_with_ctrl_d();
}

#[test]
fn slash_copy_and_y_put_the_text_on_tmux_s_clipboard() {
    let (_server, _workspace, _home, tmux) = answered();
    tmux.send("/copy");
    tmux.wait_for_text("copied the last answer");
    assert_eq!(clipboard(&tmux), ANSWER);
    // Ctrl-F gives the conversation the keys; Esc ends the search and keeps them.
    tmux.keys(&["C-f", "Escape"]);
    // (A `[` right behind an Esc would read as the start of an escape sequence.)
    tmux.wait_for_text("PgUp/PgDn scroll");
    tmux.type_text("[");
    tmux.wait_for_text("y copy");
    tmux.type_text("y");
    tmux.wait_for_text("copied the code block");
    assert_eq!(clipboard(&tmux), "echo needle-in-code\n");
    // The call before it: its command and output.
    tmux.type_text("[y");
    tmux.wait_for_text("copied the call and its output");
    let call = clipboard(&tmux);
    assert!(call.starts_with("$ echo call-output\ncall-output"), "{call:?}");
    tmux.quit_with_ctrl_d();
}

#[test]
fn slash_mouse_turns_the_terminal_s_mouse_mode_off_and_on_in_tmux() {
    let (_server, _workspace, _home, tmux) = answered();
    let mouse_mode = || {
        let output = tmux
            .run(&[
                "display",
                "-p",
                "-t",
                "main",
                "#{mouse_any_flag}#{mouse_button_flag}",
            ])
            .0
            .output()
            .expect("tmux runs");
        String::from_utf8_lossy(&output.stdout).trim().to_string()
    };
    assert_ne!(mouse_mode(), "00", "the workbench captures the mouse");
    tmux.send("/mouse");
    tmux.wait_for_text("mouse off: select text");
    assert_eq!(mouse_mode(), "00");
    tmux.send("/mouse");
    tmux.wait_for_text("mouse capture on");
    assert_ne!(mouse_mode(), "00");
    tmux.quit_with_ctrl_d();
}
