use pretty_assertions::assert_eq;

use super::*;

#[test]
fn the_welcome_panel_closes_as_a_person_would_try_and_the_rest_works_without_a_key() {
    let workspace = TempDir::new();
    for close in [
        key(KeyCode::Esc),
        key(KeyCode::Char('q')),
        key(KeyCode::Enter),
        key(KeyCode::F(1)),
    ] {
        let mut app = app_in(&workspace);
        app.show_welcome(welcome(None));
        app.on_key(close);
        assert!(
            !app.layers.iter().any(|o| o.as_any().is::<FirstRun>()),
            "{close:?} closes the welcome panel"
        );
        if close.code == KeyCode::F(1) {
            assert!(app.layers.top().is_some_and(|top| top.title() == "Help"));
        }
    }
    let mut app = app_in(&workspace);
    app.show_welcome(welcome(None));
    assert_screen!("welcome_80x24", screen(&mut app, 80, 24));
    assert_screen!("welcome_160x48", screen(&mut app, 160, 48));
    // Drawn at 80×24 again: what follows reads the size drawn last.
    screen(&mut app, 80, 24);
    app.on_key(key(KeyCode::Esc));
    // The files can be browsed.
    app.on_key(key(KeyCode::F(2)));
    screen(&mut app, 80, 24);
    assert_eq!(app.layout.focus(), Pane::Tree);
    app.on_key(key(KeyCode::Esc));
    // A prompt is not lost: it stays in the input, and the panel says how to set a key.
    type_text(&mut app, "hello there");
    app.on_key(key(KeyCode::Enter));
    assert!(!app.sent.iter().any(|op| matches!(op, Op::UserInput { .. })));
    assert_eq!(app.input.text(), "hello there");
    assert!(app.top::<FirstRun>().is_some());
    assert_eq!(
        app.turn.last_notice().map(|n| n.1.as_str()),
        Some(
            "not sent: no model is set up yet. Set an API key (the panel says how) and start miniagent again"
        )
    );
    app.on_key(key(KeyCode::Esc));
    // `/resume` still opens the picker.
    app.input.clear();
    app.submit("/resume".into());
    assert!(app.top::<SessionPicker>().is_some());
    // With a local server found, Enter still uses it.
    let mut app = app_in(&workspace);
    app.show_welcome(welcome(Some((
        "http://127.0.0.1:11434/v1".into(),
        "llama3.2".into(),
    ))));
    app.on_key(key(KeyCode::Enter));
    assert_eq!(
        app.actions,
        vec![Action::UseLocalServer {
            base_url: "http://127.0.0.1:11434/v1".into(),
            model: "llama3.2".into()
        }]
    );
    assert!(app.top::<FirstRun>().is_none() && app.welcome.is_none());
    assert_eq!(app.session.view().model, "llama3.2");
}

#[test]
fn the_terminal_cursor_stands_where_the_input_types_and_only_there() {
    let workspace = TempDir::new();
    let mut app = app_in(&workspace);
    let mut terminal = Terminal::new(TestBackend::new(160, 48)).unwrap();
    type_text(&mut app, "你好 ab");
    terminal.draw(|frame| render::draw(frame, &app)).unwrap();
    let input = app.areas().get(Pane::Input).expect("the input is on screen");
    assert!(terminal.backend().cursor_visible());
    // Two wide characters, a space and two letters: seven columns in.
    assert_eq!(
        terminal.backend().cursor_position(),
        ratatui::layout::Position::new(input.x + 1 + 7, input.y + 1)
    );
    // A second line.
    app.on_key(KeyEvent::new(KeyCode::Enter, KeyModifiers::ALT));
    type_text(&mut app, "x");
    terminal.draw(|frame| render::draw(frame, &app)).unwrap();
    let input = app.areas().get(Pane::Input).expect("the input is on screen");
    assert_eq!(
        terminal.backend().cursor_position(),
        ratatui::layout::Position::new(input.x + 1 + 1, input.y + 2)
    );
    // Another pane focused, or an overlay on top: no cursor.
    app.layout.focus_on(Pane::Conversation);
    terminal.draw(|frame| render::draw(frame, &app)).unwrap();
    assert!(!terminal.backend().cursor_visible());
    app.layout.focus_on(Pane::Input);
    app.on_key(key(KeyCode::F(1)));
    terminal.draw(|frame| render::draw(frame, &app)).unwrap();
    assert!(!terminal.backend().cursor_visible());
    app.on_key(key(KeyCode::Esc));
    terminal.draw(|frame| render::draw(frame, &app)).unwrap();
    assert!(terminal.backend().cursor_visible());
}

#[test]
fn colours_follow_what_the_terminal_supports() {
    use crate::palette::ColorDepth;
    use ratatui::style::Color;
    let workspace = TempDir::new();
    let kinds = |app: &mut Bench| {
        let mut terminal = Terminal::new(TestBackend::new(160, 48)).unwrap();
        terminal.draw(|frame| render::draw(frame, app)).unwrap();
        let mut rgb = 0;
        let mut indexed = 0;
        let mut any = 0;
        for cell in terminal.backend().buffer().content() {
            for color in [cell.fg, cell.bg] {
                match color {
                    Color::Rgb(..) => rgb += 1,
                    Color::Indexed(_) => indexed += 1,
                    Color::Reset => continue,
                    _ => {}
                }
                any += 1;
            }
        }
        (rgb, indexed, any)
    };
    let mut app = app_in(&workspace);
    busy_session(&mut app);
    let (rgb, _, _) = kinds(&mut app);
    assert!(rgb > 0, "the dark theme and the highlighted code are truecolour");
    app.look.set_color_depth(ColorDepth::Ansi256);
    let (rgb, indexed, _) = kinds(&mut app);
    assert_eq!(rgb, 0);
    assert!(indexed > 0);
    app.look.set_color_depth(ColorDepth::Ansi16);
    let (rgb, indexed, any) = kinds(&mut app);
    assert_eq!((rgb, indexed), (0, 0));
    assert!(any > 0, "still in colour");
    app.look.set_color_depth(ColorDepth::None);
    assert_eq!(kinds(&mut app), (0, 0, 0));
}

#[test]
fn help_keys_never_run_into_their_text() {
    let workspace = TempDir::new();
    let mut app = app_in(&workspace);
    app.on_key(key(KeyCode::F(1)));
    for (width, height) in [(80, 24), (160, 48)] {
        // Every page of the help.
        let mut seen = String::new();
        for _ in 0..12 {
            seen.push_str(&screen(&mut app, width, height));
            app.on_key(key(KeyCode::PageDown));
        }
        for joined in ["Endmove", "Ctrl-Jnew", "PgDnscroll", "MODEread"] {
            assert!(!seen.contains(joined), "{joined} at {width}x{height}:\n{seen}");
        }
        assert!(seen.contains("PgUp/PgDn/Home/End"), "{seen}");
        app.on_key(key(KeyCode::Home));
    }
}

#[test]
fn slash_theme_enter_opens_the_choice_and_the_choice_is_saved() {
    let workspace = TempDir::new();
    let config_dir = TempDir::new();
    config_dir.write(
        "config.toml",
        "# my settings\n[agent]\nmax_steps = 7 # keep\n\n[ui]\nshow_thinking = false\n",
    );
    let mut app = app_in(&workspace);
    app.places.config_dir = Some(config_dir.path().to_path_buf());
    type_text(&mut app, "/theme");
    app.on_key(key(KeyCode::Enter));
    assert!(
        app.layers.top().is_some_and(|top| top.title() == "Theme"),
        "one Enter opens the theme choice"
    );
    assert_screen!("theme_choice_80x24", screen(&mut app, 80, 24));
    assert_screen!("theme_choice_160x48", screen(&mut app, 160, 48));
    app.on_key(key(KeyCode::Down));
    app.on_key(key(KeyCode::Enter));
    assert_eq!(app.look.theme().name, "light");
    assert!(app.layers.is_empty());
    let saved = std::fs::read_to_string(config_dir.join("config.toml")).unwrap();
    assert_eq!(
        saved,
        "# my settings\n[agent]\nmax_steps = 7 # keep\n\n[ui]\ntheme = \"light\"\nshow_thinking = false\n"
    );
    // The next start reads it.
    let env = miniagent_core::config::Env::empty();
    let config = miniagent_core::config::load(&miniagent_core::config::LoadOptions {
        config_dir: Some(config_dir.path().to_path_buf()),
        config_file: None,
        overrides: Default::default(),
        env: &env,
    })
    .unwrap();
    assert_eq!((config.ui.theme.as_str(), config.agent.max_steps), ("light", 7));
    // `/theme NAME` saves too; a config without `[ui]` gets one.
    std::fs::write(config_dir.join("config.toml"), "[agent]\nmax_steps = 7\n").unwrap();
    app.submit("/theme high-contrast".into());
    assert_eq!(
        std::fs::read_to_string(config_dir.join("config.toml")).unwrap(),
        "[agent]\nmax_steps = 7\n\n[ui]\ntheme = \"high-contrast\"\n"
    );
}

#[test]
fn slash_popup_and_tiny_sizes_do_not_break() {
    let workspace = TempDir::new();
    let mut app = app_in(&workspace);
    type_text(&mut app, "/");
    assert_screen!("slash_popup_80x24", screen(&mut app, 80, 24));
    assert_screen!("slash_popup_160x48", screen(&mut app, 160, 48));
    busy_session(&mut app);
    for (width, height) in [
        (1, 1),
        (2, 3),
        (10, 5),
        (40, 10),
        (119, 30),
        (120, 30),
        (300, 100),
    ] {
        screen(&mut app, width, height);
    }
}

#[test]
fn file_preview_overlay_at_both_sizes() {
    let workspace = TempDir::new();
    let mut app = app_in(&workspace);
    app.layout.focus_on(Pane::Tree);
    screen(&mut app, 160, 48);
    // README.md is the third row (src/, .gitignore, README.md).
    app.on_key(key(KeyCode::Down));
    app.on_key(key(KeyCode::Down));
    app.on_key(key(KeyCode::Enter));
    assert!(app.top::<FilePreviewLayer>().is_some());
    assert_screen!("file_preview_160x48", screen(&mut app, 160, 48));
    assert_screen!("file_preview_80x24", screen(&mut app, 80, 24));
    app.on_key(key(KeyCode::Esc));
    assert!(app.layers.is_empty());
}

#[test]
fn monochrome_theme_has_no_colours() {
    let workspace = TempDir::new();
    let mut app = app_in(&workspace);
    app.set_theme(Theme::monochrome());
    busy_session(&mut app);
    let mut terminal = Terminal::new(TestBackend::new(120, 30)).unwrap();
    terminal.draw(|frame| render::draw(frame, &app)).unwrap();
    let buffer = terminal.backend().buffer();
    for cell in buffer.content() {
        assert_eq!(
            cell.fg,
            ratatui::style::Color::Reset,
            "coloured cell {:?}",
            cell.symbol()
        );
        assert_eq!(
            cell.bg,
            ratatui::style::Color::Reset,
            "coloured cell {:?}",
            cell.symbol()
        );
    }
}

#[test]
fn the_title_bar_says_whether_commands_are_sandboxed_in_the_current_mode() {
    use miniagent_protocol::SandboxState;
    use std::path::PathBuf;
    use std::time::{Instant, SystemTime};

    let title = |state: SandboxState, mode: ApprovalMode| {
        let mut app = App::new(
            Theme::dark(),
            PathBuf::from("/home/dev/project"),
            mode,
            50,
            SystemTime::now(),
        );
        app.now = Instant::now();
        app.on_agent_event(Event::SessionConfigured {
            model: "claude-test".into(),
            provider: "anthropic".into(),
            workspace: "/home/dev/project".into(),
            tools: vec![],
            session_id: None,
            sandbox: state,
            endpoint: String::new(),
            instruction_files: Vec::new(),
        });
        let mut terminal = Terminal::new(TestBackend::new(120, 10)).unwrap();
        terminal.draw(|frame| render::draw(frame, &app)).unwrap();
        let buffer = terminal.backend().buffer().clone();
        let line: String = (0..buffer.area.width)
            .map(|x| buffer[(x, 0)].symbol().to_string())
            .collect();
        let left = line.split("  ").next().unwrap_or_default().trim().to_string();
        // The mode and the sandbox come first, right after the name.
        left.split(" · ").skip(1).take(2).collect::<Vec<_>>().join(" · ")
    };
    let unavailable = || SandboxState::Unavailable {
        reason: "the kernel has no Landlock".into(),
    };
    assert_eq!(
        title(SandboxState::Enforced, ApprovalMode::FullAuto),
        "full-auto · sandbox ✓"
    );
    assert_eq!(
        title(SandboxState::Off, ApprovalMode::FullAuto),
        "full-auto · no sandbox"
    );
    assert_eq!(title(SandboxState::Off, ApprovalMode::Ask), "ask · sandbox ✓");
    assert_eq!(title(unavailable(), ApprovalMode::Ask), "ask · no sandbox");
    assert_eq!(
        title(SandboxState::Unknown, ApprovalMode::Ask),
        "ask · max 50 steps"
    );
}

/// Files made outside the agent (another terminal, an editor) show in the tree when it
/// gets the focus and when the terminal gets it back, without a tool call.
#[test]
fn the_tree_reads_its_folders_again_on_focus() {
    let workspace = TempDir::new();
    let mut app = app_in(&workspace);
    let shown = |app: &mut Bench| screen(app, 160, 48);
    assert!(!shown(&mut app).contains("NOTES.md"));
    workspace.write("NOTES.md", "made in another terminal\n");
    assert!(!shown(&mut app).contains("NOTES.md"), "not read at every frame");
    // Tab until the tree has the focus.
    while app.layout.focus() != Pane::Tree {
        app.on_key(key(KeyCode::Tab));
    }
    assert!(shown(&mut app).contains("NOTES.md"));
    // The person went to another window and came back.
    std::fs::remove_file(workspace.path().join("NOTES.md")).unwrap();
    workspace.write("TODO.md", "also from outside\n");
    let outcome = app.on_focus_gained();
    assert!(outcome.changed);
    let text = shown(&mut app);
    assert!(text.contains("TODO.md") && !text.contains("NOTES.md"), "{text}");
}

/// A wide table with CJK cells in the conversation, as the model writes one: its cells
/// wrap inside their columns at every width (they were cut with `…` even at 150).
#[test]
fn a_wide_cjk_table_in_the_conversation_wraps_at_80_120_and_150_columns() {
    let workspace = TempDir::new();
    let mut app = app_in(&workspace);
    app.on_agent_event(Event::TurnStarted {
        text: "各模块的状态？".into(),
    });
    app.on_agent_event(Event::AssistantMessage {
        thinking: String::new(),
        text: "| 模块 | 职责 | Owner | 状态 | Notes |\n|---|---|---|:---:|---|\n| agent | 运行模型循环，执行工具调用，并在上下文过长时压缩历史记录 | core team | 稳定 | the loop and its history, summarised on long tasks |\n| tui | 全屏终端工作台：对话、文件树、思考过程和工具时间线 | ui team | 开发中 | panes, overlays and themes; tested in tmux |\n".into(),
        tool_calls: Vec::new(),
        stop_reason: StopReason::EndTurn,
    });
    for (width, text) in [
        (80, screen(&mut app, 80, 30)),
        (120, screen(&mut app, 120, 30)),
        (150, screen(&mut app, 150, 30)),
    ] {
        assert!(
            !text.contains("调…") && !text.contains("histo…"),
            "{width}:\n{text}"
        );
        match width {
            80 => assert_screen!("cjk_table_80x30", text),
            120 => assert_screen!("cjk_table_120x30", text),
            _ => assert_screen!("cjk_table_150x30", text),
        }
    }
}

/// Blanks that are not spaces (no-break, ideographic, the blank Braille pattern) and
/// characters that draw nothing are shown as what they are on a call's row in the
/// conversation, in the Tools pane and on the row under a failed call, as the approval
/// dialog shows them: `rm -rf` with a no-break space is not the command it reads as.
#[test]
fn calls_show_blanks_that_are_not_spaces() {
    let workspace = TempDir::new();
    let mut app = app_in(&workspace);
    let command = "echo hi &&\u{3000}ls\u{2800} -la\u{a0}/tmp\u{200b}";
    let calls = [
        (
            "c1",
            ToolOutcome::Refused,
            "refused: the approval mode is read-only\u{a0}x\u{3000}y",
        ),
        ("c2", ToolOutcome::Error, "no such\u{a0}file:\u{2800}/tmp\u{3000}"),
    ];
    app.on_agent_event(Event::TurnStarted { text: "go".into() });
    for (id, outcome, output) in calls {
        app.on_agent_event(Event::ToolCallRequested {
            id: id.into(),
            name: "bash".into(),
            arguments: json!({ "command": command }),
            summary: command.into(),
            kind: Default::default(),
            locations: Vec::new(),
        });
        app.on_agent_event(Event::ToolCallFinished {
            id: id.into(),
            name: "bash".into(),
            ok: false,
            outcome,
            duration_ms: 3,
            output_preview: output.into(),
            output: output.into(),
            effects: Vec::new(),
        });
    }
    app.layout.focus_on(Pane::Timeline);
    let wide = screen(&mut app, 160, 48);
    assert!(
        wide.contains("bash echo hi &&<U+3000>ls<U+2800> -la<U+00A0>/tmp<U+200B>"),
        "{wide}"
    );
    assert_screen!("blanks_that_are_not_spaces_160x48", wide);
    assert_screen!("blanks_that_are_not_spaces_80x24", screen(&mut app, 80, 24));
}

/// Issue 26, a fresh-eyes finding: an escape in a failed call's path shows on its row
/// (conversation and Tools pane) and in its error as the model got it (`a0␛[31m.txt`),
/// never stripped to the name of another file.
#[test]
fn a_failed_calls_error_shows_escapes_as_its_row_does() {
    let workspace = TempDir::new();
    let mut app = app_in(&workspace);
    let path = "a0\u{1b}[31m.txt";
    app.on_agent_event(Event::TurnStarted {
        text: "read it".into(),
    });
    app.on_agent_event(Event::ToolCallRequested {
        id: "r1".into(),
        name: "read_file".into(),
        arguments: json!({ "path": path }),
        summary: path.into(),
        kind: Default::default(),
        locations: Vec::new(),
    });
    let error = format!("file not found: {path}");
    app.on_agent_event(Event::ToolCallFinished {
        id: "r1".into(),
        name: "read_file".into(),
        ok: false,
        outcome: ToolOutcome::Error,
        duration_ms: 0,
        output_preview: error.clone(),
        output: error,
        effects: Vec::new(),
    });
    app.layout.focus_on(Pane::Timeline);
    // Each row naming the file, between its pane's borders.
    let rows = |text: &str| -> Vec<String> {
        text.lines()
            .flat_map(|line| line.split(['│', '┃']))
            .filter(|cell| cell.contains("a0"))
            .map(|cell| cell.trim().to_string())
            .collect()
    };
    let wide = screen(&mut app, 160, 48);
    let narrow = screen(&mut app, 80, 24);
    let conversation = [
        "✗ read_file a0␛[31m.txt  0 ms".to_string(),
        "└ file not found: a0␛[31m.txt".to_string(),
    ];
    let mut with_tools = conversation.to_vec();
    with_tools.push("✗ read_file a0␛[31m.txt                   0 ms".to_string());
    assert_eq!((rows(&wide), rows(&narrow)), (with_tools, conversation.to_vec()));
    assert_screen!("failed_call_escapes_160x48", wide);
    assert_screen!("failed_call_escapes_80x24", narrow);
    // Its detail shows the result the model got, the same way.
    app.on_key(key(KeyCode::Enter));
    let detail = screen(&mut app, 80, 24);
    assert!(
        rows(&detail).contains(&"file not found: a0␛[31m.txt".to_string()),
        "{detail}"
    );
}

/// Issue 26, a fresh-eyes finding: a notice that wraps keeps its two-column indent on
/// every row (the opening note about miniagent's folders in /tmp at 80 columns), for
/// every kind: a note, a warning, an error, and the lines of a notice of several.
#[test]
fn wrapped_notices_keep_their_indent() {
    let workspace = TempDir::new();
    let mut app = app_in(&workspace);
    app.on_agent_event(Event::Notice {
        message: "sandboxed commands may write anywhere inside /tmp, and miniagent's own folders are there: /tmp/miniagent-test-1; a command could change its settings, sessions or saved results. Keep MINIAGENT_CONFIG_DIR and MINIAGENT_DATA_DIR elsewhere".into(),
    });
    app.on_agent_event(Event::TurnStarted { text: "go".into() });
    app.on_agent_event(Event::Retrying {
        attempt: 1,
        max_attempts: 3,
        delay_ms: 800,
        reason: "HTTP 500 from the provider: scripted server: script exhausted (request #2 to /v1/messages)"
            .into(),
        discard_partial: false,
    });
    app.on_agent_event(Event::Error {
        message: "the model call failed: HTTP 500 from the provider: scripted server: script exhausted (request #5 to /v1/messages)\nsecond line of the error".into(),
    });
    let text = screen(&mut app, 80, 24);
    // The conversation's rows of the notices, inside its borders.
    let rows: Vec<&str> = text
        .lines()
        .filter_map(|line| line.strip_prefix("\"│")?.strip_suffix("│\""))
        .filter(|row| !row.trim().is_empty() && !row.starts_with("› you") && !row.starts_with("go "))
        .collect();
    let at_margin: Vec<&&str> = rows.iter().filter(|row| !row.starts_with("  ")).collect();
    assert_eq!((rows.len(), at_margin), (9, Vec::<&&str>::new()), "{text}");
    assert_screen!("wrapped_notices_80x24", text);
}

/// The agent's plan shows in the conversation as one line a plan: how far it got and
/// the step in progress (the plan section shows it whole). What the model wrote is
/// cleaned of what a terminal would act on.
#[test]
fn a_plan_shows_as_a_one_line_note_in_the_conversation() {
    use miniagent_protocol::{PlanEntry, PlanPriority, PlanStatus};
    let workspace = TempDir::new();
    let mut app = app_in(&workspace);
    app.on_agent_event(Event::TurnStarted {
        text: "fix it".into(),
    });
    let step = |content: &str, status, priority| PlanEntry {
        content: content.into(),
        status,
        priority,
        note: None,
    };
    app.on_agent_event(Event::PlanUpdated {
        entries: vec![
            step("read the parser", PlanStatus::Completed, Some(PlanPriority::High)),
            step("fix the \u{1b}]0;owned\u{7}bug", PlanStatus::InProgress, None),
            step(
                "add a test that feeds the parser every malformed header the fuzzer found last week",
                PlanStatus::Pending,
                Some(PlanPriority::Low),
            ),
        ],
    });
    app.on_agent_event(Event::PlanUpdated {
        entries: vec![
            step("read the parser", PlanStatus::Completed, None),
            step("fix the bug", PlanStatus::Completed, None),
        ],
    });
    let text = screen(&mut app, 80, 24);
    assert!(
        text.contains("plan 1/3 · now: fix the bug") && text.contains("plan 2/2"),
        "{text}"
    );
    assert!(!text.contains('\u{1b}'), "{text}");
    assert_screen!("plan_80x24", text);
    assert_screen!("plan_160x48", screen(&mut app, 160, 48));
}

/// An input's own popup never shows through a question on top: a `/` typed as the
/// trust question came goes on into the input, and its command list was drawn over the
/// question (fresh check).
#[test]
fn the_slash_popup_hides_under_a_question() {
    use crate::layers::trust::TrustPrompt;
    let workspace = TempDir::new();
    let mut app = app_in(&workspace);
    app.open_layer(Box::new(TrustPrompt::new(vec!["docs: commands".into()], false)));
    type_text(&mut app, "/");
    assert_eq!(app.input.text(), "/");
    for (width, height) in [(80, 24), (160, 48)] {
        let under = screen(&mut app, width, height);
        assert!(!under.contains("Tab completes"), "{under}");
        assert!(under.contains("Trust"), "{under}");
    }
}
