//! `A` (always) at an approval on the real binary: the rule is shown, confirmed, written
//! to the config file, and the next call it covers runs without a question; `A` and
//! Enter sent in one burst do the same at 80×24.

use super::*;

fn resize(tmux: &Tmux, width: u16, height: u16) {
    let (width, height) = (width.to_string(), height.to_string());
    tmux.ok(&["resize-window", "-t", "main", "-x", &width, "-y", &height]);
}

#[test]
fn always_saves_the_rule_and_the_next_call_runs_unasked_in_tmux() {
    let server = ScriptedServer::start_blocking(vec![
        Reply::tool("b1", "bash", r#"{"command": "echo one-said"}"#),
        Reply::text("First done."),
        Reply::tool("b2", "bash", r#"{"command": "echo two-said"}"#),
        Reply::text("Second done."),
        Reply::tool("b3", "bash", r#"{"command": "touch burst-file"}"#),
        Reply::text("Third done."),
    ]);
    let (workspace, home) = (TempDir::new(), TempDir::new());
    let tmux = Tmux::start(&workspace);
    launch_asking(&tmux, &home, &server);
    tmux.wait_for_text("Conversation");
    tmux.send("first");
    tmux.wait_for_text("A always allow (saved to config)");
    tmux.keys(&["A"]);
    tmux.wait_for_text("Always allow, saved to the allow list of [permissions] in your config.toml");
    tmux.wait_for_text("bash(echo *)▏");
    tmux.keys(&["Enter"]);
    tmux.wait_for_text("First done.");
    tmux.wait_for_text("ready");
    let config = std::fs::read_to_string(home.join("config.toml")).unwrap();
    assert_eq!(config, "[permissions]\nallow = [\n    \"bash(echo *)\",\n]\n");
    // The next `echo` runs without a question.
    tmux.send("second");
    let screen = tmux.wait_for_text("Second done.");
    assert!(!screen.contains("Allow bash?"), "{screen}");
    assert_eq!(
        server.last_block(3)["content"],
        "two-said\n[exit code: 0]",
        "{:?}",
        server.last_block(3)
    );
    // At 80×24 `A` is off the dialog's key line, and works all the same; sent with
    // Enter in one burst, it saves what it proposed.
    resize(&tmux, 80, 24);
    tmux.wait_for_text("ready");
    tmux.send("third");
    tmux.wait_for_text("● armed");
    tmux.keys(&["A", "Enter"]);
    tmux.wait_for_text("Third done.");
    assert!(workspace.join("burst-file").exists());
    let config = std::fs::read_to_string(home.join("config.toml")).unwrap();
    assert_eq!(
        config,
        "[permissions]\nallow = [\n    \"bash(echo *)\",\n    \"bash(touch *)\",\n]\n"
    );
    tmux.quit_with_ctrl_d();
}
