//! The overlay stack's layers, the one command table and the bindings table: what
//! completion, dispatch, the help and the bottom bar read from them.

use super::*;

/// Opens the help and scrolls through all of it, collecting every line drawn.
fn whole_help(app: &mut Bench) -> String {
    type_text(app, "/help");
    app.on_key(key(KeyCode::Enter));
    let mut seen = String::new();
    for _ in 0..40 {
        seen.push_str(&screen(app, 100, 40));
        app.on_key(key(KeyCode::PageDown));
    }
    app.on_key(key(KeyCode::Esc));
    seen
}

#[test]
fn version_opens_an_overlay_with_the_version_model_and_paths() {
    let workspace = TempDir::new();
    let config = TempDir::new();
    let mut app = app_in(&workspace);
    app.places.config_dir = Some(config.path().to_path_buf());
    type_text(&mut app, "/vers");
    let completing = screen(&mut app, 100, 30);
    assert!(completing.contains("/version"), "{completing}");
    app.on_key(key(KeyCode::Tab));
    app.on_key(key(KeyCode::Enter));
    let shown = screen(&mut app, 120, 30);
    assert!(shown.contains(" Version "), "{shown}");
    assert!(shown.contains(env!("CARGO_PKG_VERSION")), "{shown}");
    assert!(
        shown.contains("claude-test") && shown.contains("anthropic"),
        "{shown}"
    );
    assert!(shown.contains("config.toml (not created yet)"), "{shown}");
    // Nothing is asked of the agent, and the bar offers the overlay's own keys.
    assert!(app.sent.is_empty(), "{:?}", app.sent);
    assert!(shown.contains("Esc/q close"), "{shown}");
    assert!(app.on_key(key(KeyCode::Char('q'))));
    assert!(app.layers.is_empty());
    assert!(!screen(&mut app, 120, 30).contains(" Version "));
}

#[test]
fn version_fits_80x24_and_no_color() {
    let workspace = TempDir::new();
    let mut app = app_in(&workspace);
    app.look.set_no_color(true);
    type_text(&mut app, "/version");
    app.on_key(key(KeyCode::Enter));
    let shown = screen(&mut app, 80, 24);
    assert!(shown.contains(" Version "), "{shown}");
    assert!(shown.contains("commit"), "{shown}");
    assert!(shown.contains("sessions"), "{shown}");
    // Where the requests go, so a proxy or a local server is plain to see.
    assert!(shown.contains("https://api.anthropic.com"), "{shown}");
    assert_screen!("version_80x24", shown);
    assert_screen!("version_160x48", screen(&mut app, 160, 48));
}

#[test]
fn help_lists_every_command_and_every_key_the_workbench_takes() {
    let workspace = TempDir::new();
    let mut app = app_in(&workspace);
    let help = whole_help(&mut app);
    for command in [
        "/help",
        "/clear",
        "/compact",
        "/history",
        "/resume",
        "/approval MODE",
        "/approvals",
        "/notes",
        "/stats",
        "/theme NAME",
        "/mcp",
        "/skills",
        "/version",
        "/quit",
    ] {
        assert!(help.contains(command), "{command} missing from the help");
    }
    // Keys that always worked but the hand-kept list forgot: now listed from the table.
    assert!(help.contains("help (outside the input)"), "{help}");
    assert!(
        help.contains("scroll the conversation (from the input)"),
        "{help}"
    );
    // And they do what the help says.
    app.layout.focus_on(Pane::Conversation);
    app.on_key(key(KeyCode::Char('?')));
    assert!(app.layers.top().is_some_and(|top| top.title() == "Help"));
}

#[test]
fn exit_is_an_alias_of_quit() {
    let workspace = TempDir::new();
    let mut app = app_in(&workspace);
    type_text(&mut app, "/exit");
    app.on_key(key(KeyCode::Enter));
    assert!(app.quit);
}

#[test]
fn notes_and_skills_are_layers_that_scroll_and_close() {
    let workspace = TempDir::new();
    let mut app = app_in(&workspace);
    type_text(&mut app, "/notes");
    app.on_key(key(KeyCode::Enter));
    let shown = screen(&mut app, 80, 24);
    // The agent reads them; the layer waits for its answer.
    assert!(
        shown.contains(" Notes ") && shown.contains("reading the notes…"),
        "{shown}"
    );
    // Keys the layer does not use stay with it: nothing is typed under it.
    app.on_key(key(KeyCode::Char('x')));
    assert!(app.input.is_empty());
    app.on_key(key(KeyCode::Esc));
    assert!(app.layers.is_empty());
    type_text(&mut app, "/skills");
    app.on_key(key(KeyCode::Enter));
    assert!(screen(&mut app, 80, 24).contains(" Skills "));
    app.on_key(key(KeyCode::Char('q')));
    assert!(app.layers.is_empty());
    // Only the notes were asked of the agent; the skills list is the workbench's own.
    assert_eq!(app.sent, vec![miniagent_protocol::Op::ReadNotes]);
}

/// The approval dialog is a layer of the one stack that keeps its top: a layer opened
/// while a call waits goes beneath it and shows under it, the keys stay the dialog's
/// until the call is decided, and then the layer beneath has them.
#[test]
fn a_layer_opened_while_a_call_waits_goes_beneath_the_approval() {
    let workspace = TempDir::new();
    let mut app = app_in(&workspace);
    app.on_agent_event(Event::TurnStarted { text: "go".into() });
    app.on_agent_event(Event::ApprovalRequested {
        id: "b1".into(),
        name: "bash".into(),
        preview: "$ ls".into(),
        session_rule: None,
        request: None,
        notes: Vec::new(),
    });
    app.sent.clear();
    app.open_help();
    let titles = |app: &Bench| app.layers.iter().map(|layer| layer.title()).collect::<Vec<_>>();
    assert_eq!(titles(&app), vec!["Help".to_string(), "Allow bash?".to_string()]);
    arm(&mut app);
    let shown = screen(&mut app, 100, 30);
    assert!(
        shown.contains(" Help ") && shown.contains(" Allow bash? "),
        "{shown}"
    );
    assert!(
        shown.contains("y approve") && !shown.contains("Esc/q close"),
        "{shown}"
    );
    // Esc is the dialog's (stop the turn), not the help's (close).
    app.on_key(key(KeyCode::Esc));
    assert_eq!(
        app.sent,
        vec![Op::Approval {
            id: "b1".into(),
            decision: Decision::Abort
        }]
    );
    assert_eq!(titles(&app), vec!["Help".to_string()]);
    let shown = screen(&mut app, 100, 30);
    assert!(
        shown.contains("Esc/q close") && !shown.contains("Allow bash?"),
        "{shown}"
    );
    app.on_key(key(KeyCode::Esc));
    assert!(app.layers.is_empty());
}
