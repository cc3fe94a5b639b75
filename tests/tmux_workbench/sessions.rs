use super::*;

#[test]
fn the_workbench_in_tmux() {
    let server = ScriptedServer::start_blocking(vec![
        Reply::slow(
            Turn::text("Hello from the scripted model, streamed in pieces."),
            20,
        ),
        Reply::tool("b1", "bash", r#"{"command": "echo tmux-bash-output"}"#),
        Reply::text("The command ran."),
        Reply::tool("w1", "write_file", r#"{"path": "denied.txt", "content": "no"}"#),
        Reply::text("Understood, I did not write it."),
        Reply::tool("s1", "bash", r#"{"command": "sleep 30"}"#),
    ]);
    let workspace = TempDir::new();
    workspace.write("src/lib.rs", "pub fn f() {}\n");
    let config_dir = TempDir::new();
    let tmux = Tmux::start(&workspace);
    launch_asking(&tmux, &config_dir, &server);

    // The first frame shows every pane.
    let first = tmux.wait_for("all panes", |s| {
        [
            "Files",
            "Conversation",
            "Input",
            "Thinking",
            "Tools",
            "ctx",
            "src/",
        ]
        .iter()
        .all(|t| s.contains(t))
    });
    assert!(first.contains("scripted-model"), "{first}");

    // A prompt streams an answer.
    tmux.send("say hello");
    tmux.wait_for_text("Hello from the scripted model, streamed in pieces.");
    tmux.wait_for_text("ready");

    // A bash call is approved with y and its output reaches the timeline.
    tmux.send("run a command");
    tmux.wait_for_text("Allow bash?");
    tmux.wait_for_text("● armed");
    tmux.keys(&["y"]);
    tmux.wait_for_text("The command ran.");
    let screen = tmux.wait_for("the finished call", |s| {
        s.contains("✓ bash echo tmux-bash-output")
    });
    assert!(screen.contains("ms"), "{screen}");
    // Open the call's detail from the timeline (Input → Thinking → Tools): the output is there.
    tmux.keys(&["Tab"]);
    tmux.keys(&["Tab"]);
    tmux.keys(&["Enter"]);
    tmux.wait_for("the output in the detail", |s| {
        s.contains("Tool call") && s.contains("Output") && s.matches("tmux-bash-output").count() >= 3
    });
    tmux.keys(&["Escape"]);
    tmux.wait_for("the detail closed", |s| !s.contains("Tool call"));
    tmux.keys(&["M-Left"]);
    tmux.keys(&["M-Left"]);

    // A write is denied with n and a reason; the model receives the reason.
    tmux.send("write a file");
    tmux.wait_for_text("Allow write_file?");
    tmux.wait_for_text("● armed");
    tmux.keys(&["n"]);
    tmux.wait_for_text("Why not?");
    tmux.send("not in this repo");
    tmux.wait_for_text("Understood, I did not write it.");
    assert!(!workspace.join("denied.txt").exists());
    tmux.wait_for_text("└ denied by you: not in this repo");
    let denial = server.requests()[4].body["messages"].to_string();
    assert!(
        denial.contains("the person refused this call: not in this repo"),
        "{denial}"
    );

    // Esc during a long tool call interrupts it.
    tmux.send("wait a while");
    tmux.wait_for_text("Allow bash?");
    tmux.wait_for_text("● armed");
    tmux.keys(&["y"]);
    tmux.wait_for_text("running bash for");
    let pressed = Instant::now();
    tmux.keys(&["Escape"]);
    tmux.wait_for_text("you interrupted the turn while tools were running");
    tmux.wait_for_text("ready");
    assert!(
        pressed.elapsed() < Duration::from_secs(5),
        "{:?}",
        pressed.elapsed()
    );

    // Resizes keep the screen whole.
    tmux.ok(&["resize-window", "-t", "main", "-x", "80", "-y", "24"]);
    let small = tmux.wait_for("the 80×24 layout", |s| {
        let lines: Vec<&str> = s.lines().collect();
        lines.len() >= 24
            && lines[0].contains("miniagent")
            && lines[23].contains("ctx")
            && s.contains("Conversation")
            && !s.contains("Files")
    });
    assert!(small.lines().all(|l| l.chars().count() <= 80), "{small}");
    tmux.ok(&["resize-window", "-t", "main", "-x", "160", "-y", "48"]);
    tmux.wait_for("the wide layout again", |s| {
        let lines: Vec<&str> = s.lines().collect();
        lines.len() >= 48 && lines[47].contains("ctx") && s.contains("Files") && s.contains("Thinking")
    });

    // Quitting leaves a clean shell.
    tmux.quit_with_ctrl_d();
    tmux.send("echo done-$((40+2))");
    let after = tmux.wait_for_text("done-42");
    assert!(after.lines().any(|l| l.trim_end() == "done-42"), "{after}");
    tmux.assert_terminal_cooked();
}

#[test]
fn keys_typed_as_an_approval_opens_answer_nothing_in_tmux() {
    let server = ScriptedServer::start_blocking(vec![
        // The call arrives while the person is still typing.
        Reply::slow(
            Turn::tool("b1", "bash", r#"{"command": "touch approved-by-accident"}"#),
            150,
        ),
        Reply::text("I did not run it."),
        Reply::Stream(
            Turn::tool("b2", "bash", r#"{"command": "echo starting; ls no-such-file"}"#).with_tool(
                "b3",
                "bash",
                r#"{"command": "echo second-call"}"#,
            ),
        ),
        Reply::text("It failed."),
    ]);
    let (workspace, home) = (TempDir::new(), TempDir::new());
    let tmux = Tmux::start(&workspace);
    launch_asking(&tmux, &home, &server);
    tmux.wait_for_text("Conversation");
    tmux.send("check the logs");
    // `a` and `y` keep coming, before, as and after the dialog opens.
    let mut after_opening = 0;
    let deadline = Instant::now() + Duration::from_secs(15);
    while after_opening < 8 {
        tmux.type_text("ay");
        let screen = tmux.screen();
        if screen.contains("Allow bash?") {
            after_opening += 1;
        }
        assert!(Instant::now() < deadline, "the approval never opened: {screen}");
    }
    let screen = tmux.wait_for_text("● armed");
    assert!(screen.contains("Allow bash?"), "{screen}");
    assert!(screen.contains("ayay"), "the typing went to the input: {screen}");
    assert!(!workspace.join("approved-by-accident").exists());
    assert_eq!(server.request_count(), 1, "nothing was answered");
    // Armed, and a sentence begun without looking at the dialog arrives in one burst
    // ("a" would approve for the session): it answers nothing, goes to the input, and
    // the dialog arms again.
    tmux.type_text("also, list hidden files");
    let screen = tmux.wait_for_text("list hidden files");
    assert!(screen.contains("Allow bash?"), "{screen}");
    std::thread::sleep(Duration::from_millis(800));
    assert_eq!(
        server.request_count(),
        1,
        "nothing was answered: {}",
        tmux.screen()
    );
    tmux.wait_for_text("● armed");
    // A slow typist, one key every 0.6 s: the letter that answers nothing shows they are
    // writing, so the `y` of "hey" is typing too, not an answer.
    for letter in ["h", "e", "y"] {
        tmux.keys(&[letter]);
        std::thread::sleep(Duration::from_millis(600));
    }
    std::thread::sleep(Duration::from_millis(600));
    assert_eq!(
        server.request_count(),
        1,
        "a slow typist's `y` answered: {}",
        tmux.screen()
    );
    let screen = tmux.wait_for_text("list hidden fileshey");
    assert!(screen.contains("Allow bash?"), "{screen}");
    assert!(!workspace.join("approved-by-accident").exists());
    tmux.wait_for_text("● armed");
    // Once armed, the dialog answers the person.
    tmux.keys(&["n"]);
    tmux.wait_for_text("Why not?");
    tmux.keys(&["Enter"]);
    tmux.wait_for_text("I did not run it.");
    assert!(!workspace.join("approved-by-accident").exists());
    let refused = server.requests()[1].body["messages"].to_string();
    assert!(refused.contains("the person refused this call"), "{refused}");

    // A failed command says how it ended, in the transcript; its time is the run time.
    // Ctrl-C clears what was typed during the first approval.
    tmux.keys(&["C-c"]);
    tmux.send("list it");
    // The first of the reply's two calls says so.
    tmux.wait_for_text("Allow bash? (call 1 of 2)");
    tmux.wait_for_text("● armed");
    // Answered 3 s after it armed; the command runs in far less.
    std::thread::sleep(Duration::from_secs(3));
    tmux.keys(&["y"]);
    tmux.wait_for_text("Allow bash? (call 2 of 2)");
    tmux.wait_for_text("● armed");
    tmux.keys(&["y"]);
    let screen = tmux.wait_for_text("It failed.");
    assert!(
        screen.contains("› you") && !screen.contains("ayaylist it"),
        "{screen}"
    );
    let failed = tmux.wait_for("the failure line", |s| {
        s.contains("└ exit code 2 · ls: cannot access 'no-such-file': No such file or")
    });
    let call_line = failed
        .lines()
        .flat_map(|line| line.split('│'))
        .find(|part| part.contains("✗ bash echo starting"))
        .unwrap_or_else(|| panic!("{screen}"));
    let words: Vec<&str> = call_line.split_whitespace().collect();
    let value: f64 = words[words.len() - 2].parse().unwrap_or(f64::MAX);
    let shown_ms = match words[words.len() - 1] {
        "ms" => value,
        "s" => value * 1000.0,
        _ => f64::MAX,
    };
    assert!(
        shown_ms < 3000.0,
        "the wait for approval is not run time: {call_line}"
    );
}

#[test]
fn resume_and_replay_in_tmux() {
    let server = ScriptedServer::start_blocking(vec![
        Reply::tool("c1", "bash", r#"{"command": "echo recorded-output"}"#),
        Reply::text("First answer, from the recorded run."),
        Reply::slow(Turn::text("Second answer, after the resume."), 10),
    ]);
    let workspace = TempDir::new();
    let home = TempDir::new();
    let recorded = support::cli::exec(&home, &workspace, &server, &["first task"]);
    assert_eq!(recorded.status.code(), Some(0));
    let log = support::cli::session_logs(&home)
        .pop()
        .expect("a recorded session");

    let tmux = Tmux::start(&workspace);
    let env = format!(
        "MINIAGENT_CONFIG_DIR={home} MINIAGENT_LOG_DIR={home} MINIAGENT_DATA_DIR={home} MINIAGENT_API_KEY={TEST_KEY}",
        home = shell_quote(home.path().to_str().unwrap()),
    );
    let binary = shell_quote(env!("CARGO_BIN_EXE_miniagent"));
    tmux.send("export PS1='$ '");
    // The newest session of this workspace comes back in the panes, and goes on.
    tmux.send(&format!(
        "{env} {binary} --base-url {} --model scripted-model --approval full-auto --resume",
        server.anthropic_base_url()
    ));
    let resumed = tmux.wait_for_text("First answer, from the recorded run.");
    assert!(
        resumed.contains("first task") && resumed.contains("✓ bash echo recorded-output"),
        "{resumed}"
    );
    tmux.wait_for_text("resumed session");
    tmux.send("second task");
    tmux.wait_for_text("Second answer, after the resume.");
    let sent = server.last_request().unwrap().body["messages"].to_string();
    assert!(
        sent.contains("first task") && sent.contains("recorded-output"),
        "{sent}"
    );

    // The picker lists it.
    tmux.send("/resume");
    let picker = tmux.wait_for_text("Resume a session");
    assert!(
        picker.contains("(this session) first task") && picker.contains("3 steps"),
        "{picker}"
    );
    tmux.keys(&["Escape"]);
    // A key sent right after Esc reaches the terminal as Alt+key: wait for Esc's effect.
    tmux.wait_for("the picker closed", |s| !s.contains("Resume a session"));
    let after = tmux.quit_with_ctrl_d();
    // Once the terminal is restored, the session is named with how to take it up again.
    let id = log.file_stem().unwrap().to_str().unwrap();
    assert!(
        after
            .lines()
            .any(|l| l.trim_end() == format!("session {id} · continue it with: miniagent --resume {id}")),
        "{after}"
    );

    // The replay plays both turns without a model; End jumps to the end.
    tmux.send(&format!(
        "{env} {binary} replay {}",
        shell_quote(log.to_str().unwrap())
    ));
    tmux.wait_for_text("· event ");
    tmux.keys(&["End"]);
    let end = tmux.wait_for_text("Second answer, after the resume.");
    assert!(end.contains("First answer, from the recorded run."), "{end}");
    // The playback answers each key as it comes, with nothing else happening on screen:
    // the inspector from the history at the end, then Space plays it again from the start.
    tmux.keys(&["F6"]);
    tmux.wait_for_text("entries");
    tmux.keys(&["Escape"]);
    tmux.wait_for("the inspector closed", |s| {
        !s.contains("the prompt as the model sees it")
    });
    tmux.keys(&["Space"]);
    tmux.wait_for_text("▶ replay");
    tmux.keys(&["q"]);
    tmux.wait_for_shell_prompt();
    assert_eq!(server.requests().len(), 3, "the replay sent nothing");
}

#[test]
fn an_old_calls_result_and_output_come_back_from_the_log_in_tmux() {
    // The timeline keeps the newest 20 calls' results and output; older ones are read
    // back from the session log when opened. Both they and the notes are asked of the
    // agent: the workbench reads none of its files.
    let mut script: Vec<Reply> = (0..22)
        .map(|n| {
            Reply::tool(
                format!("c{n}"),
                "bash",
                format!(r#"{{"command": "echo old-output-{n}"}}"#),
            )
        })
        .collect();
    script.push(Reply::text("All twenty-two ran."));
    let server = ScriptedServer::start_blocking(script);
    let workspace = TempDir::new();
    workspace.write(
        ".agent_memory.json",
        r#"[{"timestamp": "2026-11-23T21:00:00Z", "category": "build", "content": "the build needs make"}]"#,
    );
    let home = TempDir::new();
    let tmux = Tmux::start(&workspace);
    launch(&tmux, &home, &server, "--max-steps 30");
    tmux.wait_for_text("Conversation");
    tmux.send("run them all");
    tmux.wait_for_text("All twenty-two ran.");
    tmux.wait_for_text("ready");
    // The oldest call, from the timeline (Input → Thinking → Tools).
    tmux.keys(&["Tab"]);
    tmux.keys(&["Tab"]);
    for _ in 0..25 {
        tmux.keys(&["Up"]);
    }
    tmux.keys(&["Enter"]);
    // The workbench asks the agent for them (`Op::RecordedCall`); they arrive shortly.
    let detail = tmux.wait_for("the oldest call's detail, read back", |s| {
        s.contains("Tool call") && s.contains("(c0)") && s.contains("Result sent to the model")
    });
    // Its arguments, its output and its result: the last two read back from the log.
    assert!(detail.contains("Output"), "{detail}");
    assert!(detail.contains("Result sent to the model"), "{detail}");
    assert!(detail.matches("old-output-0").count() >= 3, "{detail}");
    tmux.keys(&["Escape"]);
    tmux.wait_for("the detail closed", |s| !s.contains("Tool call"));
    tmux.send("/notes");
    tmux.wait_for_text("[build] the build needs make");
    tmux.keys(&["Escape"]);
    tmux.wait_for("the notes closed", |s| !s.contains("the build needs make"));
    tmux.quit_with_ctrl_d();
}
