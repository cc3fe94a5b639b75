use super::*;

#[test]
fn page_keys_move_a_page_and_work_after_end_in_tmux() {
    let answer: String = (1..=120).map(|n| format!("- answer line {n}\n")).collect();
    let server = ScriptedServer::start_blocking(vec![
        Reply::tool("s1", "bash", r#"{"command": "seq -f 'out-%03g' 1 200"}"#),
        Reply::text(answer),
    ]);
    let workspace = TempDir::new();
    let home = TempDir::new();
    let tmux = Tmux::start(&workspace);
    launch_and_ask(&tmux, &home, &server, "count", "answer line 120");

    // The conversation (from the input): PgUp moves its height less two lines.
    let bottom = tmux.screen();
    let shown = numbers_after(&bottom, "answer line ");
    let rows = shown.len() as u32;
    assert!(rows > 20, "{bottom}");
    tmux.keys(&["PPage"]);
    let paged = tmux.wait_for("the conversation a page up", |s| {
        numbers_after(s, "answer line ").last() != Some(&120)
    });
    let moved = 120 - numbers_after(&paged, "answer line ").last().copied().unwrap_or(0);
    assert!(
        (rows.saturating_sub(3)..=rows).contains(&moved),
        "moved {moved} of {rows} rows:\n{paged}"
    );
    tmux.keys(&["NPage"]);
    tmux.wait_for("the conversation following again", |s| {
        numbers_after(s, "answer line ").last() == Some(&120)
    });

    // The call's detail (Input → Thinking → Tools): End, then PgUp and ↑ move at once.
    tmux.keys(&["Tab"]);
    tmux.keys(&["Tab"]);
    tmux.keys(&["Enter"]);
    tmux.wait_for("the detail", |s| s.contains("Tool call") && s.contains("out-001"));
    tmux.keys(&["End"]);
    let end = tmux.wait_for("the end of the detail", |s| s.contains("[exit code: 0]"));
    assert!(end.contains("out-200"), "{end}");
    tmux.keys(&["PPage"]);
    let up = tmux.wait_for("a page up from the end", |s| !s.contains("[exit code: 0]"));
    assert!(!up.contains("out-200"), "{up}");
    let top_before = *numbers_after(&up, "out-").first().expect("output on screen");
    tmux.keys(&["Up"]);
    let line_up = tmux.wait_for("a line up", |s| {
        numbers_after(s, "out-").first() != Some(&top_before)
    });
    assert_eq!(
        numbers_after(&line_up, "out-").first(),
        Some(&(top_before - 1)),
        "{line_up}"
    );
    // Each Esc is seen alone before the next key: an Esc followed at once by a key
    // reads as Alt and that key.
    tmux.keys(&["Escape"]);
    tmux.wait_for("the detail closed", |s| !s.contains("Tool call"));
    tmux.quit_with_ctrl_d();
}

#[test]
fn a_message_queued_during_a_turn_survives_ctrl_c_in_tmux() {
    let server = ScriptedServer::start_blocking(vec![
        Reply::tool("s1", "bash", r#"{"command": "sleep 30"}"#),
        Reply::text("Got the queued message."),
    ]);
    let workspace = TempDir::new();
    let home = TempDir::new();
    let tmux = Tmux::start(&workspace);
    launch(&tmux, &home, &server, "");
    tmux.wait_for_text("Conversation");
    tmux.send("start something long");
    tmux.wait_for_text("running bash for");
    tmux.send("and then check the logs");
    tmux.wait_for_text("Input · 1 queued");
    tmux.keys(&["C-c"]);
    let stopped = tmux.wait_for_text("your queued message is back in the input");
    assert!(
        !stopped.contains("queued ━"),
        "the title no longer counts it:\n{stopped}"
    );
    let input_row = stopped
        .lines()
        .skip_while(|l| !l.contains("┏ Input"))
        .nth(1)
        .unwrap_or_default();
    assert!(input_row.contains("and then check the logs"), "{stopped}");
    assert_eq!(server.requests().len(), 1, "the queued message was not sent");
    // It is sent when the person says so.
    tmux.keys(&["Enter"]);
    tmux.wait_for_text("Got the queued message.");
    let sent = server.last_request().unwrap().body["messages"].to_string();
    assert!(sent.contains("and then check the logs"), "{sent}");
    tmux.quit_with_ctrl_d();
}

#[test]
fn the_welcome_panel_without_a_key_closes_and_the_workbench_works_in_tmux() {
    let workspace = TempDir::new();
    workspace.write("src/lib.rs", "pub fn f() {}\n");
    let home = TempDir::new();
    let tmux = Tmux::start(&workspace);
    tmux.send("export PS1='$ '");
    tmux.send(&format!(
        "env -u ANTHROPIC_API_KEY -u OPENAI_API_KEY -u MINIMAX_API_KEY -u MINIAGENT_API_KEY MINIAGENT_CONFIG_DIR={home} MINIAGENT_LOG_DIR={home} MINIAGENT_DATA_DIR={home} {}",
        shell_quote(env!("CARGO_BIN_EXE_miniagent")),
        home = shell_quote(home.path().to_str().unwrap()),
    ));
    tmux.wait_for_text("Welcome to miniagent");
    tmux.keys(&["Escape"]);
    tmux.wait_for("the panel closed", |s| {
        !s.contains("Welcome to miniagent") && s.contains("src/")
    });
    // The file tree opens a file.
    tmux.keys(&["M-Left"]);
    tmux.keys(&["M-Left"]);
    tmux.keys(&["Enter"]);
    tmux.keys(&["Down"]);
    tmux.keys(&["Enter"]);
    tmux.wait_for_text("pub fn f() {}");
    tmux.keys(&["Escape"]);
    tmux.wait_for("the preview closed", |s| !s.contains("pub fn f() {}"));
    // A prompt is kept, and the panel says how to set a key.
    tmux.keys(&["Tab"]);
    tmux.keys(&["Tab"]);
    tmux.send("hello there");
    let refused = tmux.wait_for_text("Welcome to miniagent");
    assert!(refused.contains("export ANTHROPIC_API_KEY"), "{refused}");
    tmux.keys(&["q"]);
    let closed = tmux.wait_for("the panel closed again", |s| !s.contains("Welcome to miniagent"));
    assert!(closed.contains("not sent: no model is set up yet"), "{closed}");
    assert!(closed.contains("┃hello there"), "{closed}");
    // `/resume` opens the picker.
    tmux.keys(&["C-c"]);
    tmux.send("/resume");
    tmux.wait_for_text("Resume a session");
    tmux.keys(&["Escape"]);
    tmux.wait_for("the picker closed", |s| !s.contains("Resume a session"));
    tmux.quit_with_ctrl_d();
}

/// Summaries nest when the same run is compacted twice: in the real workbench, F6, then
/// Tab on the summary, Enter on the earlier summary among its originals, Tab again: the
/// original messages, numbered as `sessions show` numbers them.
#[test]
fn nested_summaries_open_down_to_the_originals_in_tmux() {
    // Steps after the first say something as they go: a few tokens are not worth a
    // summary call.
    let mut script: Vec<Reply> = (0..4)
        .map(|n| {
            let said = if n == 0 {
                String::new()
            } else {
                "Reading the next part in turn. ".repeat(40)
            };
            Reply::Stream(Turn::new().with_text(said).with_tool(
                format!("r{n}"),
                "read_file",
                format!(r#"{{"path": "part{n}.txt"}}"#),
            ))
        })
        .collect();
    script.push(Reply::text("Four parts read."));
    script.push(Reply::text("Still four parts."));
    let server = ScriptedServer::start_blocking(script);
    server.answer_toolless_with(Reply::text("SUMMARY: the parts were read in turn."));
    let workspace = TempDir::new();
    for n in 0..4 {
        workspace.write(format!("part{n}.txt"), format!("part {n} first line\n"));
    }
    let home = TempDir::new();
    let tmux = Tmux::start(&workspace);
    launch(&tmux, &home, &server, "");
    tmux.wait_for_text("Ask miniagent");
    tmux.send("read the four parts");
    tmux.wait_for_text("Four parts read.");
    tmux.send("/compact");
    tmux.wait_for("the first compaction", |s| s.contains("1 compaction,"));
    tmux.send("how many?");
    tmux.wait_for_text("Still four parts.");
    tmux.send("/compact");
    tmux.wait_for("the second compaction", |s| s.contains("2 compactions"));
    tmux.keys(&["F6"]);
    tmux.wait_for_text("summary of messages 2–10");
    tmux.keys(&["Down"]);
    tmux.keys(&["Tab"]);
    tmux.wait_for_text("Enter: earlier summary");
    tmux.keys(&["Enter"]);
    tmux.wait_for_text("Earlier summary of messages 2–");
    tmux.keys(&["Tab"]);
    let originals = tmux.wait_for_text("message 2 · ");
    assert!(originals.contains("calls read_file"), "{originals}");
    tmux.keys(&["BSpace"]);
    tmux.wait_for_text("Replaced messages 2–10");
    tmux.keys(&["Escape"]);
    tmux.wait_for("the inspector closed", |s| !s.contains("Replaced messages"));
    tmux.quit_with_ctrl_d();
}

#[test]
fn the_terminal_cursor_is_in_the_input_while_it_has_focus_in_tmux() {
    let server = ScriptedServer::start_blocking(vec![]);
    let workspace = TempDir::new();
    let home = TempDir::new();
    let tmux = Tmux::start(&workspace);
    launch(&tmux, &home, &server, "");
    tmux.wait_for_text("Conversation");
    tmux.type_text("你好ab");
    let screen = tmux.wait_for_text("你好ab");
    let (row, line) = screen
        .lines()
        .enumerate()
        .find(|(_, line)| line.contains("你好ab"))
        .expect("the typed text");
    let before: String = line.split("你好ab").next().unwrap_or_default().to_string();
    let column = before
        .chars()
        .map(|c| {
            if ('\u{4e00}'..='\u{9fff}').contains(&c) {
                2
            } else {
                1
            }
        })
        .sum::<usize>();
    // Two wide characters and two letters: six columns after the text's start.
    let expected = (column + 6, row, true);
    let deadline = Instant::now() + Duration::from_secs(15);
    while cursor(&tmux) != expected && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(50));
    }
    assert_eq!(cursor(&tmux), expected, "{screen}");
    // Another pane focused: hidden.
    tmux.keys(&["Tab"]);
    let deadline = Instant::now() + Duration::from_secs(15);
    while cursor(&tmux).2 && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(50));
    }
    assert!(!cursor(&tmux).2, "the cursor hides when the input loses focus");
    tmux.keys(&["M-Left"]);
    let deadline = Instant::now() + Duration::from_secs(15);
    while cursor(&tmux) != expected && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(50));
    }
    assert_eq!(cursor(&tmux), expected);
    // Clears the input, then twice to quit.
    tmux.keys(&["C-c"]);
    tmux.keys(&["C-c"]);
    tmux.keys(&["C-c"]);
    tmux.wait_for_shell_prompt();
}

#[test]
fn colours_follow_colorterm_and_term_in_tmux() {
    let server = ScriptedServer::start_blocking(vec![]);
    let workspace = TempDir::new();
    workspace.write("src/lib.rs", "pub fn f() {}\n");
    let home = TempDir::new();
    let tmux = Tmux::start(&workspace);
    tmux.send("export PS1='$ '");
    // (environment, whether 24-bit colours appear, whether 256-palette ones beyond the
    // first 16 do: the built-in theme names none, so only a downgrade brings them)
    for (environment, truecolor, indexed) in [
        ("COLORTERM=truecolor TERM=xterm-256color", true, false),
        ("TERM=xterm-256color", false, true),
        ("TERM=xterm", false, false),
    ] {
        tmux.send(&format!(
            "env -u COLORTERM {environment} MINIAGENT_CONFIG_DIR={home} MINIAGENT_LOG_DIR={home} MINIAGENT_DATA_DIR={home} MINIAGENT_API_KEY={TEST_KEY} {} --base-url {} --model scripted-model",
            shell_quote(env!("CARGO_BIN_EXE_miniagent")),
            server.anthropic_base_url(),
            home = shell_quote(home.path().to_str().unwrap()),
        ));
        tmux.wait_for("the workbench", |s| {
            s.contains("Conversation") && s.contains("ctx")
        });
        let output = tmux
            .run(&["capture-pane", "-e", "-p", "-t", "main"])
            .0
            .output()
            .expect("tmux runs");
        let escapes = String::from_utf8_lossy(&output.stdout).into_owned();
        assert_eq!(escapes.contains("38;2;"), truecolor, "{environment}: {escapes:?}");
        // crossterm writes the 16 ANSI colours as palette indices below 16 too.
        let beyond_16 = ["38;5;", "48;5;"]
            .iter()
            .flat_map(|prefix| numbers_after(&escapes, prefix))
            .any(|index| index >= 16);
        assert_eq!(beyond_16, indexed, "{environment}: {escapes:?}");
        assert!(escapes.contains("\u{1b}["), "{environment}: still in colour");
        tmux.quit_with_ctrl_d();
        tmux.ok(&["clear-history", "-t", "main"]);
    }
}

/// Keys typed as the workbench starts (the person began their first message) must not
/// answer the trust question that opens over it: `y` in "hey, is the build ok" used to
/// trust the workspace and start its servers outside the sandbox.
#[test]
fn keys_typed_as_the_trust_question_opens_answer_nothing_in_tmux() {
    let server = ScriptedServer::start_blocking(vec![]);
    let workspace = TempDir::new();
    let home = TempDir::new();
    let marker = home.join("STARTED");
    workspace.write(
        ".miniagent/mcp.json",
        serde_json::json!({"mcpServers": {"repo-tool": {
            "command": "sh",
            "args": ["-c", format!("touch '{}'", marker.display())],
            "connect_timeout": 5
        }}})
        .to_string(),
    );
    let tmux = Tmux::start(&workspace);
    tmux.send("export PS1='$ '");
    // The command and the first words typed in one burst, as a person types ahead.
    tmux.send(&format!(
        "MINIAGENT_CONFIG_DIR={home} MINIAGENT_LOG_DIR={home} MINIAGENT_DATA_DIR={home} MINIAGENT_API_KEY={TEST_KEY} {} --base-url {} --model scripted-model",
        shell_quote(env!("CARGO_BIN_EXE_miniagent")),
        server.anthropic_base_url(),
        home = shell_quote(home.path().to_str().unwrap()),
    ));
    for _ in 0..6 {
        tmux.type_text("hey, is the build ok ");
    }
    let screen = tmux.wait_for_text("Trust this workspace?");
    assert!(screen.contains("runs sh -c"), "{screen}");
    // Armed once the typing stopped; nothing was trusted and the words are in the input.
    let armed = tmux.wait_for_text("y trust this workspace");
    assert!(armed.contains("hey, is the build ok"), "{armed}");
    assert!(
        !home.join("trusted-workspaces.json").exists(),
        "type-ahead trusted the workspace"
    );
    assert!(!marker.exists(), "the workspace's server was started");
    tmux.keys(&["n"]);
    tmux.wait_for("the question closed", |s| !s.contains("Trust this workspace?"));
    assert!(!marker.exists());
    tmux.keys(&["C-c"]);
    tmux.keys(&["C-d"]);
    // The shell echoed what was typed before miniagent took the terminal: the prompt may
    // follow it on the same line.
    tmux.wait_for("the shell prompt", |s| {
        s.lines().any(|l| l.trim_end().ends_with('$')) && !s.contains("Conversation")
    });
}

/// Issue 26 points 9 and 18 on the real binary: `/compact` says what it did in one line
/// (no "context compacted" beside its report); the inspector's pane title is whole at
/// 120 and 80 columns.
#[test]
fn compact_now_reports_once_and_the_inspectors_title_is_whole_in_tmux() {
    let listing =
        "for i in $(seq 1 330); do echo \"row $i: the quick brown fox jumps over the lazy dog\"; done";
    let server = ScriptedServer::start_blocking(vec![
        Reply::tool("out", "bash", serde_json::json!({"command": listing}).to_string()),
        Reply::text("Listed."),
        Reply::text("Still listed."),
    ]);
    server.answer_toolless_with(Reply::text("SUMMARY: the rows were listed."));
    let workspace = TempDir::new();
    let home = TempDir::new();
    home.write(
        "config.toml",
        "[agent]\ntoken_limit = 9000\n\n[model]\nmax_output_tokens = 2000\n",
    );
    let tmux = Tmux::start(&workspace);
    tmux.ok(&["resize-window", "-t", "main", "-x", "120", "-y", "40"]);
    launch(&tmux, &home, &server, "");
    tmux.wait_for_text("Ask miniagent");
    tmux.send("list the rows");
    tmux.wait_for_text("Listed.");
    tmux.send("again");
    tmux.wait_for_text("Still listed.");
    tmux.send("/compact");
    let screen = tmux.wait_for_text("compacted: the prompt went from about");
    assert!(screen.contains("1 compaction,"), "{screen}");
    assert!(!screen.contains("context compacted:"), "{screen}");
    // Its progress line gave way to the report.
    assert!(!screen.contains("compacting: "), "{screen}");
    tmux.keys(&["F6"]);
    tmux.wait_for_text("summary of messages 2–");
    tmux.keys(&["Home", "Down", "Tab"]);
    let originals = tmux.wait_for_text("┌ Replaced messages 2–4 (Tab: summary) ─");
    assert!(originals.contains(" 1–34 of 341 ┃"), "{originals}");
    tmux.ok(&["resize-window", "-t", "main", "-x", "80", "-y", "24"]);
    tmux.wait_for_text("Replaced messages 2–4 (Tab: summary) ─");
    tmux.keys(&["Escape"]);
    // Closed before Ctrl-D: ESC and ^D read together are Alt-Ctrl-D, as in every terminal
    // (a fresh-clone run sent them so fast that the inspector stayed open).
    tmux.wait_for("the inspector closed", |s| !s.contains("History · "));
    tmux.quit_with_ctrl_d();
}

/// Issue 26, a fresh-eyes finding on the real binary: `/stats` counts the requests the
/// server received. A message refused before its request was sent (the history no longer
/// fits and compaction is off) and a `/compact` that could not compact add none.
#[test]
fn stats_count_the_requests_the_server_received_in_tmux() {
    // Varied, so the repetition guard lets it be: about 9000 tokens.
    let rows: Vec<String> = (1..=2000).map(|i| format!("row {i}")).collect();
    let server = ScriptedServer::start_blocking(vec![Reply::text(format!("Listed: {}", rows.join(", ")))]);
    let workspace = TempDir::new();
    let home = TempDir::new();
    home.write(
        "config.toml",
        "[agent]\ntoken_limit = 9000\ncompaction = \"off\"\n\n[model]\nmax_output_tokens = 2000\n",
    );
    let tmux = Tmux::start(&workspace);
    tmux.ok(&["resize-window", "-t", "main", "-x", "80", "-y", "24"]);
    launch(&tmux, &home, &server, "");
    tmux.wait_for_text("Ask miniagent");
    tmux.send("list the rows");
    tmux.wait_for("the answer", |s| s.contains("row 2000") && s.contains("● ready"));
    tmux.send("again");
    tmux.wait_for_text("the message was not sent, and was taken back out of the session");
    // It is back in the input, to shorten or send again; this test sends something else.
    tmux.wait_for_text("your message is back in the input");
    tmux.keys(&["C-c"]);
    tmux.send("/compact");
    tmux.wait_for_text("cannot compact further");
    tmux.send("/stats");
    // Its history figures come with the agent's answer.
    let stats = tmux.wait_for_text("prompt by role");
    let row = |label: &str| {
        stats
            .lines()
            .find_map(|line| line.split('┃').find(|cell| cell.starts_with(label)))
            // The label's 22 columns, then the value up to the gap before the history's.
            .map(|cell| {
                let (label, value) = cell.split_at(22.min(cell.len()));
                format!("{label}{}", value.split("  ").next().unwrap_or_default())
            })
    };
    assert_eq!(
        (row("turns"), row("model calls"), server.request_count()),
        (
            // The refused message was not a turn.
            Some("turns                 1".to_string()),
            Some("model calls           1".to_string()),
            1
        ),
        "{stats}"
    );
    tmux.keys(&["Escape"]);
    tmux.wait_for("the statistics closed", |s| !s.contains("Session statistics"));
    tmux.quit_with_ctrl_d();
}
