//! The plan section on the real binary: a session recorded by `exec` whose model kept a
//! plan, resumed in the workbench (`--resume`), shows its latest plan; Ctrl-T hides and
//! shows it at 160 columns and opens it over the conversation at 80, keys sent in bursts.

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

#[test]
fn a_resumed_plan_shows_and_ctrl_t_toggles_it_in_tmux() {
    let first = r#"{"entries": [{"content": "read the parser", "status": "in_progress"}, {"content": "fix lex()", "status": "pending"}, {"content": "add a test", "status": "pending"}]}"#;
    let second = r#"{"entries": [{"content": "read the parser", "status": "completed", "note": "the bug is in lex()"}, {"content": "fix lex()", "status": "in_progress"}, {"content": "add a test", "status": "pending"}]}"#;
    let server = ScriptedServer::start_blocking(vec![
        Reply::tool("p1", "update_plan", first),
        Reply::tool("p2", "update_plan", second),
        Reply::text("Planned and started."),
    ]);
    let workspace = TempDir::new();
    let home = TempDir::new();
    let recorded = support::cli::exec(&home, &workspace, &server, &["fix the parser"]);
    assert_eq!(recorded.status.code(), Some(0));

    let tmux = Tmux::start(&workspace);
    let env = format!(
        "MINIAGENT_CONFIG_DIR={home} MINIAGENT_LOG_DIR={home} MINIAGENT_DATA_DIR={home} MINIAGENT_API_KEY={TEST_KEY}",
        home = shell_quote(home.path().to_str().unwrap()),
    );
    tmux.send("export PS1='$ '");
    tmux.send(&format!(
        "{env} {} --base-url {} --model scripted-model --approval full-auto --resume",
        shell_quote(env!("CARGO_BIN_EXE_miniagent")),
        server.anthropic_base_url()
    ));
    // The latest plan, whole, above the tools; its progress in the title bar.
    let resumed = tmux.wait_for_text("resumed session");
    assert!(
        resumed.contains("Plan 1/3 · Ctrl-T")
            && resumed.contains("▸ fix lex()")
            && resumed.contains("the bug is in lex()")
            && resumed.lines().next().unwrap().contains("plan 1/3"),
        "{resumed}"
    );
    // A burst of three: hidden, shown, hidden.
    tmux.keys(&["C-t", "C-t", "C-t"]);
    tmux.wait_for("the plan hidden at 160", |s| !s.contains("Plan 1/3"));
    tmux.keys(&["C-t"]);
    tmux.wait_for_text("Plan 1/3 · Ctrl-T");

    // At 80 columns only the progress shows, until Ctrl-T opens it over the conversation.
    resize(&tmux, 80, 24);
    let narrow = tmux.wait_for("the workbench at 80 columns", |s| {
        s.lines().next().is_some_and(|l| l.chars().count() <= 80) && s.contains("Conversation")
    });
    assert!(
        !narrow.contains("Plan 1/3") && narrow.lines().next().unwrap().contains("plan 1/3"),
        "{narrow}"
    );
    tmux.keys(&["C-t"]);
    let open = tmux.wait_for_text("Plan 1/3 · Ctrl-T hides");
    assert!(open.contains("▸ fix lex()"), "{open}");
    // Typing around it in one burst: the text goes to the input, Ctrl-T closes it.
    tmux.keys(&["a", "b", "C-t", "c", "d"]);
    let typed = tmux.wait_for_text("┃abcd");
    assert!(!typed.contains("Plan 1/3"), "{typed}");
    tmux.keys(&["C-u"]);
    tmux.wait_for("the input cleared", |s| !s.contains("┃abcd"));
    // Nothing was sent: the recorded run's three requests are all the server saw.
    assert_eq!(server.requests().len(), 3);
    tmux.quit_with_ctrl_d();
}
