//! Keys that must mean the same at every width, and the conversation's "new output
//! below" hint, and a refusal's reason typed into the approval dialog, on the real binary
//! (keys sent in bursts, as a person types them).

use super::*;

fn resize(tmux: &Tmux, width: u16, height: u16) {
    tmux.ok(&[
        "resize-window",
        "-t",
        "main",
        "-x",
        &width.to_string(),
        "-y",
        &height.to_string(),
    ]);
}

/// The workbench in tmux at 160x48 after one prompt, whose answer ran
/// `echo first-call-output` and said "Done with it.": the server, the workspace, the home
/// and the window (held in that order, so the window goes first).
fn after_one_call() -> (ScriptedServer, TempDir, TempDir, Tmux) {
    let server = ScriptedServer::start_blocking(vec![
        Reply::tool("s1", "bash", r#"{"command": "echo first-call-output"}"#),
        Reply::text("Done with it."),
    ]);
    let (workspace, home) = (TempDir::new(), TempDir::new());
    let tmux = Tmux::start(&workspace);
    launch_and_ask(&tmux, &home, &server, "run it", "Done with it.");
    (server, workspace, home, tmux)
}

/// "F4, ↑, Enter" opens the last call at 160 columns as at 80, and again right after Esc
/// closed it (the tools pane still focused, where F4 had once put the pane away and left
/// ↑ and Enter to the input, which sent the last prompt again): F4 only ever shows the
/// pane and gives it the keys. `q` in the pane puts it away at both widths.
#[test]
fn f4_up_enter_opens_the_last_call_at_every_width_in_tmux() {
    let (server, _workspace, _home, tmux) = after_one_call();
    assert_eq!(server.requests().len(), 2);
    for (width, height) in [(160, 48), (80, 24)] {
        resize(&tmux, width, height);
        tmux.wait_for("the workbench redrawn", |s| {
            s.lines()
                .next()
                .is_some_and(|l| l.chars().count() <= usize::from(width))
                && s.contains("Conversation")
        });
        // One burst, as typed.
        tmux.keys(&["F4", "Up", "Enter"]);
        let detail = tmux.wait_for(&format!("the call's detail at {width}x{height}"), |s| {
            s.contains("Tool call") && s.contains("first-call-output")
        });
        assert!(detail.contains("echo first-call-output"), "{detail}");
        tmux.keys(&["Escape"]);
        tmux.wait_for("the detail closed", |s| !s.contains("Tool call"));
        // The tools pane kept the keys: the same burst opens the call again.
        let tools_shown = |s: &str| s.contains("Tools · 1");
        assert!(tools_shown(&tmux.screen()), "{}", tmux.screen());
        tmux.keys(&["F4", "Up", "Enter"]);
        tmux.wait_for(&format!("the call's detail again at {width}x{height}"), |s| {
            s.contains("Tool call") && s.contains("first-call-output")
        });
        tmux.keys(&["Escape"]);
        tmux.wait_for("the detail closed again", |s| !s.contains("Tool call"));
        // `q` puts the pane away and gives the keys back to the input.
        tmux.keys(&["q"]);
        tmux.wait_for("the tools pane put away", |s| !tools_shown(s));
        tmux.type_text("typed");
        tmux.wait_for_text("┃typed");
        tmux.keys(&["C-u"]);
        tmux.wait_for("the input cleared", |s| !s.contains("┃typed"));
        // Shown again with the keys, and F4 pressed twice leaves it so.
        tmux.keys(&["F4", "F4"]);
        tmux.wait_for("the tools pane again", tools_shown);
        std::thread::sleep(std::time::Duration::from_millis(200));
        assert!(tools_shown(&tmux.screen()), "{}", tmux.screen());
        tmux.keys(&["q"]);
        tmux.wait_for("the tools pane put away again", |s| !tools_shown(s));
    }
    // Nothing was sent again.
    assert_eq!(server.requests().len(), 2, "the last prompt was sent again");
    tmux.quit_with_ctrl_d();
}

/// "F4, ↑, Enter" opens the last call also after the selection was moved earlier (a
/// fresh-eyes user's finding 7): the tools pane follows its newest call, as a log view
/// follows its tail, whenever F4 gives it the keys; ↑ and ↓ move from there. At 80x24
/// the 2nd of 3 calls is opened (F4, ↑, ↑, Enter), closed, the pane put away (`q`); at 160x48
/// F4, ↑, Enter opens the 3rd, and at 80x24 again too.
#[test]
fn f4_up_enter_opens_the_last_call_after_the_selection_moved_in_tmux() {
    let server = ScriptedServer::start_blocking(vec![
        Reply::tool(
            "toolu_1",
            "write_file",
            r#"{"path": "a.txt", "content": "first\n"}"#,
        ),
        Reply::tool("toolu_2", "bash", r#"{"command": "echo second-call"}"#),
        Reply::tool("toolu_3", "bash", r#"{"command": "wc -l a.txt"}"#),
        Reply::text("All three done."),
    ]);
    let (workspace, home) = (TempDir::new(), TempDir::new());
    let tmux = Tmux::start(&workspace);
    resize(&tmux, 80, 24);
    launch_and_ask(&tmux, &home, &server, "three calls", "All three done.");
    let opened = |tmux: &Tmux, id: &str, width: u16| {
        let detail = tmux.wait_for(&format!("the detail of {id} at {width} columns"), |s| {
            s.contains("Tool call") && s.contains("toolu_")
        });
        assert!(detail.contains(&format!("({id})")), "{detail}");
        tmux.keys(&["Escape"]);
        tmux.wait_for("the detail closed", |s| !s.contains("Tool call"));
    };
    tmux.keys(&["F4", "Up", "Up", "Enter"]);
    opened(&tmux, "toolu_2", 80);
    // The pane still has the keys: `q` puts it away.
    tmux.keys(&["q"]);
    tmux.wait_for("the tools pane put away", |s| !s.contains("Tools · 3"));
    for (width, height) in [(160, 48), (80, 24)] {
        resize(&tmux, width, height);
        // Drawn at the new width (its title bar fills it, but for a blank at the end),
        // not the old screen still there.
        let width_now = usize::from(width);
        tmux.wait_for("the workbench redrawn", |s| {
            s.lines()
                .next()
                .is_some_and(|l| (width_now - 2..=width_now).contains(&l.chars().count()))
                && s.contains("Conversation")
        });
        tmux.keys(&["F4", "Up", "Enter"]);
        opened(&tmux, "toolu_3", width);
        // Put away at every width (a weaker wait let the next resize come first, and F4
        // then opened the pane over the conversation at 80 columns).
        tmux.keys(&["q"]);
        tmux.wait_for("the tools pane put away", |s| !s.contains("Tools · 3"));
    }
    assert_eq!(server.requests().len(), 4, "a prompt was sent again");
    tmux.quit_with_ctrl_d();
}

/// The hint shows once something new arrived below the view, not the moment the view
/// is scrolled up; End from the input (nothing typed) follows again, as the hint says.
#[test]
fn the_new_output_hint_waits_for_output_and_end_follows_from_the_input_in_tmux() {
    let first: String = (1..=80).map(|n| format!("- answer line {n}\n")).collect();
    let second: String = (1..=40).map(|n| format!("- second line {n}\n")).collect();
    let server = ScriptedServer::start_blocking(vec![
        Reply::text(first),
        Reply::tool("s1", "bash", r#"{"command": "sleep 4"}"#),
        Reply::text(second),
    ]);
    let (workspace, home) = (TempDir::new(), TempDir::new());
    let tmux = Tmux::start(&workspace);
    launch_and_ask(&tmux, &home, &server, "first", "answer line 80");
    tmux.send("second");
    tmux.wait_for_text("running bash for");
    // Scrolled up from the input while the command runs: nothing new yet.
    tmux.keys(&["PPage"]);
    let scrolled = tmux.wait_for_text("Conversation (scrolled)");
    assert!(!scrolled.contains("new output below"), "{scrolled}");
    std::thread::sleep(Duration::from_millis(500));
    let still = tmux.screen();
    assert!(!still.contains("new output below"), "{still}");
    // The answer arrives below the view.
    let arrived = tmux.wait_for_text("↓ new output below (End)");
    assert!(!arrived.contains("second line 40"), "{arrived}");
    tmux.wait_for_text("ready");
    tmux.keys(&["End"]);
    let following = tmux.wait_for("the conversation following again", |s| {
        s.contains("second line 40") && !s.contains("(scrolled)")
    });
    assert!(!following.contains("new output below"), "{following}");
    // A burst: up two pages and back with End.
    tmux.keys(&["PPage", "PPage", "End"]);
    std::thread::sleep(Duration::from_millis(300));
    let back = tmux.wait_for("following after the burst", |s| {
        s.contains("second line 40") && !s.contains("(scrolled)")
    });
    assert!(!back.contains("new output below"), "{back}");
    // End still moves the cursor in what is typed first.
    tmux.type_text("abc");
    tmux.keys(&["Home", "PPage", "End"]);
    tmux.wait_for_text("Conversation (scrolled)");
    std::thread::sleep(Duration::from_millis(300));
    let typed = tmux.screen();
    assert!(
        typed.contains("Conversation (scrolled)") && typed.contains("┃abc"),
        "{typed}"
    );
    tmux.keys(&["End"]);
    tmux.wait_for("following once the cursor is at the end", |s| {
        s.contains("second line 40") && !s.contains("(scrolled)")
    });
    assert_eq!(server.requests().len(), 3);
    tmux.keys(&["C-c"]);
    tmux.quit_with_ctrl_d();
}

/// A refusal's reason longer than the dialog is wide wraps inside it, its end and the
/// terminal's cursor in view as it is typed, at 80×24 as at 160×48; all of it reaches
/// the model.
#[test]
fn a_long_deny_reason_wraps_with_the_cursor_at_its_end_in_tmux() {
    let server = ScriptedServer::start_blocking(vec![
        Reply::tool("b1", "bash", r#"{"command": "touch refused-file"}"#),
        Reply::text("Understood, not touching it."),
    ]);
    let (workspace, home) = (TempDir::new(), TempDir::new());
    let tmux = Tmux::start(&workspace);
    resize(&tmux, 80, 24);
    launch_asking(&tmux, &home, &server);
    tmux.wait_for_text("Conversation");
    tmux.send("make the file");
    tmux.wait_for_text("● armed");
    tmux.keys(&["n"]);
    tmux.wait_for_text("Why not?");
    let reason = "that file is generated by the build and checked in by the release script, so touching it here would put a stray change into the next release that nobody reviewed; leave it alone. FIN";
    assert!(reason.chars().count() >= 160);
    tmux.type_text(reason);
    let screen = tmux.wait_for_text("FIN▏");
    // The dialog's rows, joined: the whole reason is there.
    let inside: Vec<&str> = screen
        .lines()
        .filter_map(|row| row.split('║').nth(1))
        .map(str::trim_end)
        .collect();
    let joined = inside.join(" ");
    assert!(joined.contains(reason.split_at(60).1), "{screen}");
    // The terminal's cursor stands on the mark after the last character typed.
    let (row, line) = screen
        .lines()
        .enumerate()
        .find(|(_, line)| line.contains("FIN▏"))
        .expect("the reason's end");
    let column = line.split("FIN▏").next().unwrap_or_default().chars().count() + 3;
    let deadline = Instant::now() + Duration::from_secs(15);
    while cursor(&tmux) != (column, row, true) && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(50));
    }
    assert_eq!(cursor(&tmux), (column, row, true), "{screen}");
    // Wider, it takes fewer rows and still ends in view.
    resize(&tmux, 160, 48);
    tmux.wait_for("the dialog at 160 columns", |s| {
        s.contains("FIN▏") && s.lines().any(|l| l.chars().count() > 100)
    });
    tmux.keys(&["Enter"]);
    tmux.wait_for_text("Understood, not touching it.");
    assert!(!workspace.join("refused-file").exists());
    let sent = server.requests()[1].body["messages"].to_string();
    assert!(sent.contains(reason), "{sent}");
    tmux.quit_with_ctrl_d();
}

/// Flags (a pair of regional indicators: one cluster, two columns) at a different column
/// on each line, scrolled past line by line and by pages: every line on screen reads as
/// written, with no stray half of a flag left behind by an earlier frame.
#[test]
fn flags_leave_nothing_behind_when_the_conversation_scrolls_in_tmux() {
    let line = |n: usize| format!("• {}🇯🇵 flag {n} 🇺🇸{}", "x".repeat(n % 7), "y".repeat(n % 5));
    let answer: String = (1..=60)
        .map(|n| format!("- {}🇯🇵 flag {n} 🇺🇸{}\n", "x".repeat(n % 7), "y".repeat(n % 5)))
        .collect();
    let server = ScriptedServer::start_blocking(vec![Reply::text(answer)]);
    let (workspace, home) = (TempDir::new(), TempDir::new());
    let tmux = Tmux::start(&workspace);
    resize(&tmux, 80, 24);
    launch_and_ask(&tmux, &home, &server, "flags", "flag 60 ");
    // The conversation has the keys: line by line, then by pages, up and back down.
    tmux.keys(&["M-Left"]);
    tmux.wait_for_text("┏ Conversation");
    for keys in [
        &["Up"][..],
        &["Up", "Up", "Up"],
        &["PPage"],
        &["Up", "Up"],
        &["Down"],
        &["NPage"],
        &["Down", "Down", "Down", "Down"],
    ] {
        tmux.keys(keys);
        std::thread::sleep(Duration::from_millis(300));
        let screen = tmux.wait_for("a frame", |s| s.contains("flag "));
        let shown: Vec<String> = screen
            .lines()
            .filter(|l| l.contains(" flag "))
            .map(|l| {
                l.trim_start_matches('┃')
                    .trim_end_matches('┃')
                    .trim_end()
                    .to_string()
            })
            .collect();
        let expected: Vec<String> = shown
            .iter()
            .map(|l| {
                let n = numbers_after(l, "flag ").first().copied().unwrap_or(0);
                line(n as usize)
            })
            .collect();
        assert!(shown.len() > 10, "{screen}");
        assert_eq!(shown, expected, "after {keys:?}:\n{screen}");
    }
    tmux.quit_with_ctrl_d();
}

/// Esc ↑ Enter in one burst (a fresh-eyes user's finding 6): crossterm read `ESC ESC [ A`
/// as one Esc and dropped the second ESC, so `[A` reached the input and Enter sent it to
/// the model. Now the burst is Esc (the detail closes), ↑ (the tools pane keeps its
/// call) and Enter (the detail opens again), and nothing is sent.
#[test]
fn esc_up_enter_in_one_burst_are_three_keys_in_tmux() {
    let (server, _workspace, _home, tmux) = after_one_call();
    tmux.keys(&["F4", "Up", "Enter"]);
    tmux.wait_for("the call's detail", |s| s.contains("Tool call"));
    for round in 0..3 {
        tmux.keys(&["Escape", "Up", "Enter"]);
        // The detail closed and opened again: wait for the screen to settle on it.
        std::thread::sleep(std::time::Duration::from_millis(300));
        let screen = tmux.wait_for(&format!("the detail open again ({round})"), |s| {
            s.contains("Tool call") && s.contains("first-call-output")
        });
        assert!(!screen.contains("[A"), "{screen}");
    }
    assert_eq!(server.requests().len(), 2, "the burst sent a message");
    tmux.keys(&["Escape"]);
    tmux.wait_for("the detail closed", |s| !s.contains("Tool call"));
    // `q` in the focused tools pane gives the keys back to the input, where Ctrl-D quits.
    tmux.keys(&["q"]);
    tmux.wait_for("the tools pane put away", |s| !s.contains("Tools · 1"));
    tmux.quit_with_ctrl_d();
}
