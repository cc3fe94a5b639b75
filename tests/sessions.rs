//! Session logs end to end: recording, resume (also after SIGKILL), damaged logs, and
//! secrets kept out, against the scripted server and the real binary.
#![allow(clippy::unwrap_used, clippy::expect_used)] // A test fails by panicking.

use crate::support;

use miniagent_core::session::{self, Record};
use pretty_assertions::assert_eq;
use support::cli::{exec, exec_command, miniagent, session_id, session_logs, text};
use support::harness::TEST_KEY;
use support::*;

#[test]
fn an_exec_session_is_recorded_with_history_and_events() {
    let server = ScriptedServer::start_blocking(vec![
        Reply::Stream(Turn::new().thinking("Look first.", "sig").tool(
            "t1",
            "bash",
            r#"{"command": "echo hi"}"#,
        )),
        Reply::text("It printed hi."),
    ]);
    let (home, workspace) = (TempDir::new(), TempDir::new());
    let output = exec(&home, &workspace, &server, &["say hi"]);
    assert_eq!(output.status.code(), Some(0), "{}", text(&output.stderr));
    let logs = session_logs(&home);
    assert_eq!(logs.len(), 1, "{logs:?}");
    let loaded = session::load(&logs[0]).expect("loads");
    assert!(loaded.warnings.is_empty(), "{:?}", loaded.warnings);
    assert_eq!(loaded.header.id, session_id(&logs[0]));
    assert_eq!(loaded.header.model, "scripted-model");
    assert_eq!(
        loaded.header.workspace,
        workspace.path().canonicalize().unwrap().display().to_string()
    );
    let restored = loaded.restore(miniagent_core::tokens::TokenCounter::estimate_only());
    let roles: Vec<_> = restored.context.messages().iter().map(|m| m.role).collect();
    use miniagent_core::agent::history::Role::*;
    assert_eq!(roles, vec![User, Assistant, Tool, Assistant]);
    assert_eq!(restored.context.messages()[3].text(), "It printed hi.");
    let kinds: Vec<&str> = loaded
        .events()
        .map(|(_, e)| match e {
            miniagent_protocol::Event::TurnStarted { .. } => "turn",
            miniagent_protocol::Event::ToolCallFinished { .. } => "finished",
            miniagent_protocol::Event::TurnComplete { .. } => "complete",
            _ => "",
        })
        .filter(|k| !k.is_empty())
        .collect();
    assert_eq!(kinds, vec!["turn", "finished", "complete"]);
    assert!(matches!(loaded.records.first(), Some(Record::Event { .. })));
}

#[test]
fn a_commands_output_is_recorded_as_its_start_and_end_beside_its_result() {
    let server = ScriptedServer::start_blocking(vec![
        Reply::tool("c1", "bash", r#"{"command": "seq 1 5000"}"#),
        Reply::text("Counted."),
    ]);
    let (home, workspace) = (TempDir::new(), TempDir::new());
    let output = exec(&home, &workspace, &server, &["count"]);
    assert_eq!(output.status.code(), Some(0), "{}", text(&output.stderr));
    let log = session_logs(&home).pop().expect("a log");
    let call = session::load::tool_call(&log, "c1").expect("reads");
    assert!(call.result.is_some_and(|r| r.contains("5000")));
    // `seq 1 5000` prints 23,893 bytes; the first and last 8 KB are kept.
    let printed = call.output.expect("the output is recorded");
    assert_eq!(printed.total_bytes(), 23_893);
    let kept = printed.text();
    assert!(
        kept.starts_with("1\n2\n3\n") && kept.ends_with("4999\n5000\n"),
        "{kept}"
    );
    assert!(kept.contains("bytes of output cut"));
    // One record, just before the call's end.
    let loaded = session::load(&log).unwrap();
    let at = |wanted: fn(&Record) -> bool| loaded.records.iter().position(wanted);
    let recorded = at(|r| matches!(r, Record::Output { id, .. } if id == "c1")).expect("an output record");
    let finished = at(|r| {
        matches!(
            r,
            Record::Event {
                event: miniagent_protocol::Event::ToolCallFinished { .. },
                ..
            }
        )
    });
    assert_eq!(finished, Some(recorded + 1));
}

/// A workspace file whose `read_file` result is about `lines * 12` tokens.
fn numbered_file(workspace: &TempDir, lines: usize) {
    let text: String = (1..=lines)
        .map(|n| format!("line {n}: the quick brown fox jumps over the lazy dog\n"))
        .collect();
    workspace.write("big.txt", text);
}

/// The messages of a recorded request, as JSON text, for looking things up.
fn messages_text(request: &RecordedRequest) -> String {
    request.body["messages"].to_string()
}

#[test]
fn resume_continues_with_the_earlier_history_including_a_summary() {
    // Reads under the size that is trimmed rather than summarized, spelled two ways (a
    // fourth identical call in a row is refused).
    let mut script: Vec<Reply> = (0..10)
        .map(|n| {
            let path = if n % 2 == 0 { "big.txt" } else { "./big.txt" };
            Reply::tool(format!("r{n}"), "read_file", format!(r#"{{"path": "{path}"}}"#))
        })
        .collect();
    script.push(Reply::text("The file has 300 numbered lines."));
    script.push(Reply::text("It had 300 lines, as I said."));
    let server = ScriptedServer::start_blocking(script);
    server.answer_toolless_with(Reply::text("SUMMARY-7: read big.txt four times; 300 lines."));
    let (home, workspace) = (TempDir::new(), TempDir::new());
    numbered_file(&workspace, 80);
    let config = workspace.write(
        "small.toml",
        // Summaries alone: what is resumed here is a summary (by default, stubs come first).
        "[agent]\ntoken_limit = 16000\ncompaction = \"summarize\"\n[model]\nmax_output_tokens = 1000\n",
    );
    let config = config.to_str().unwrap();

    let first = exec(
        &home,
        &workspace,
        &server,
        &["-c", config, "read big.txt four times"],
    );
    assert_eq!(first.status.code(), Some(0), "{}", text(&first.stderr));
    let requests = server.requests();
    assert!(
        requests.iter().any(|r| r.body.get("tools").is_none()),
        "the first run compacts (summary request sent)"
    );
    let logs = session_logs(&home);
    assert_eq!(logs.len(), 1);
    let id = session_id(&logs[0]);

    let second = exec(
        &home,
        &workspace,
        &server,
        &["-c", config, "--resume", &id[..12], "how many lines?"],
    );
    let stderr = text(&second.stderr);
    assert_eq!(second.status.code(), Some(0), "{stderr}");
    assert!(stderr.contains(&format!("resumed session {id}")), "{stderr}");
    assert_eq!(text(&second.stdout), "It had 300 lines, as I said.\n");
    assert_eq!(
        session_logs(&home),
        logs,
        "the resumed session is appended to its own log"
    );

    let last = server.last_request().expect("a request");
    let sent = messages_text(&last);
    assert!(
        sent.contains("read big.txt four times"),
        "the first prompt is sent again"
    );
    assert!(
        sent.contains("SUMMARY-7"),
        "the summary made before the resume is sent: {sent}"
    );
    assert!(sent.contains("The file has 300 numbered lines."));
    let messages = last.body["messages"].as_array().expect("messages");
    assert_eq!(messages.last().unwrap()["content"][0]["text"], "how many lines?");

    let loaded = session::load(&logs[0]).expect("loads");
    assert!(loaded.warnings.is_empty(), "{:?}", loaded.warnings);
    assert!(loaded.records.iter().any(|r| matches!(r, Record::Resumed { .. })));
    assert!(loaded.records.iter().any(|r| matches!(r, Record::Summary { .. })));
    let restored = loaded.restore(miniagent_core::tokens::TokenCounter::estimate_only());
    assert_eq!(
        restored.context.messages().last().unwrap().text(),
        "It had 300 lines, as I said."
    );
}

#[test]
fn a_session_killed_mid_tool_call_resumes_with_the_call_marked_interrupted() {
    let server = ScriptedServer::start_blocking(vec![
        Reply::tool("c1", "bash", r#"{"command": "echo first-step-done"}"#),
        Reply::Stream(Turn::new().with_text("Now the slow part.").with_tool(
            "c2",
            "bash",
            r#"{"command": "sleep 7.25"}"#,
        )),
        Reply::text("The slow command was cut off; I will not rerun it."),
    ]);
    let (home, workspace) = (TempDir::new(), TempDir::new());
    let mut child = exec_command(&home, &workspace, &server, &["do the two steps"])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("miniagent starts");
    // Wait until the slow call is on disk, then kill without warning.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    let log = loop {
        let started = session_logs(&home).into_iter().find(|log| {
            std::fs::read_to_string(log).is_ok_and(|t| t.contains(r#""type":"tool_call_started","id":"c2""#))
        });
        if let Some(log) = started {
            break log;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "the slow call never started"
        );
        std::thread::sleep(std::time::Duration::from_millis(20));
    };
    child.kill().expect("SIGKILL");
    let _ = child.wait();
    let _ = std::process::Command::new("pkill")
        .args(["-f", "sleep 7.25"])
        .status();

    let id = session_id(&log);
    let resumed = exec(&home, &workspace, &server, &["--resume", &id, "go on"]);
    let stderr = text(&resumed.stderr);
    assert_eq!(resumed.status.code(), Some(0), "{stderr}");
    assert_eq!(
        text(&resumed.stdout),
        "The slow command was cut off; I will not rerun it.\n"
    );

    let sent = server.last_request().expect("a request");
    let messages = sent.body["messages"].as_array().expect("messages").clone();
    let roles: Vec<&str> = messages
        .iter()
        .map(|m| m["role"].as_str().unwrap_or(""))
        .collect();
    // prompt, call 1, result 1, call 2, then result 2 (interrupted) with the new prompt
    assert_eq!(
        roles,
        vec!["user", "assistant", "user", "assistant", "user"],
        "{messages:#?}"
    );
    assert_eq!(messages[4]["content"][1]["text"], "go on");
    assert!(messages[2].to_string().contains("first-step-done"));
    let interrupted = &messages[4]["content"][0];
    assert_eq!(interrupted["tool_use_id"], "c2");
    assert_eq!(interrupted["is_error"], true);
    assert!(
        interrupted["content"]
            .to_string()
            .contains("miniagent stopped while this call was running"),
        "{interrupted}"
    );

    // The log records the closing: the call ended as cancelled after the resume.
    let loaded = session::load(&log).expect("loads");
    let resumed_at = loaded
        .records
        .iter()
        .position(|r| matches!(r, Record::Resumed { .. }))
        .expect("a resumed record");
    assert!(loaded.records[resumed_at..].iter().any(|r| matches!(
        r,
        Record::Event { event: miniagent_protocol::Event::ToolCallFinished { id, outcome: miniagent_protocol::ToolOutcome::Cancelled, .. }, .. } if id == "c2"
    )));
    assert!(
        loaded.closing_events().is_empty(),
        "nothing is left open after the resume"
    );
}

/// Runs one scripted exec session and returns its log.
fn recorded_session(home: &TempDir, workspace: &TempDir, server: &ScriptedServer) -> std::path::PathBuf {
    let output = exec(home, workspace, server, &["first task"]);
    assert_eq!(output.status.code(), Some(0), "{}", text(&output.stderr));
    session_logs(home).pop().expect("a log")
}

#[test]
fn a_log_cut_mid_line_resumes_with_one_warning_and_is_repaired() {
    let server = ScriptedServer::start_blocking(vec![
        Reply::tool("c1", "bash", r#"{"command": "echo one"}"#),
        Reply::text("First answer."),
        Reply::text("Second answer."),
    ]);
    let (home, workspace) = (TempDir::new(), TempDir::new());
    let log = recorded_session(&home, &workspace, &server);
    let bytes = std::fs::read(&log).unwrap();
    let last_line_start = bytes[..bytes.len() - 1]
        .iter()
        .rposition(|&b| b == b'\n')
        .unwrap()
        + 1;
    let cut = last_line_start + (bytes.len() - last_line_start) / 2;
    std::fs::write(&log, &bytes[..cut]).unwrap();
    let torn = session::load(&log).expect("loads");
    assert_eq!(torn.warnings.len(), 1, "{:?}", torn.warnings);
    assert!(torn.warnings[0].contains("cut short"), "{:?}", torn.warnings);

    let id = session_id(&log);
    let output = exec(&home, &workspace, &server, &["--resume", &id, "second task"]);
    let stderr = text(&output.stderr);
    assert_eq!(output.status.code(), Some(0), "{stderr}");
    assert_eq!(stderr.matches("cut short").count(), 1, "{stderr}");
    assert!(
        server.last_request().unwrap().body["messages"]
            .to_string()
            .contains("First answer.")
    );
    let repaired = session::load(&log).expect("loads");
    assert!(repaired.warnings.is_empty(), "{:?}", repaired.warnings);
    assert_eq!(
        repaired
            .restore(miniagent_core::tokens::TokenCounter::estimate_only())
            .context
            .messages()
            .last()
            .unwrap()
            .text(),
        "Second answer."
    );
}

#[test]
fn garbage_mid_log_is_named_and_what_came_before_still_resumes() {
    let server = ScriptedServer::start_blocking(vec![
        Reply::tool("c1", "bash", r#"{"command": "echo one"}"#),
        Reply::text("First answer."),
        Reply::text("Second answer."),
    ]);
    let (home, workspace) = (TempDir::new(), TempDir::new());
    let log = recorded_session(&home, &workspace, &server);
    let original = std::fs::read_to_string(&log).unwrap();
    let lines: Vec<&str> = original.lines().collect();
    // Damage the line after the first user message was recorded.
    let user_line = lines
        .iter()
        .position(|l| l.contains(r#""kind":"messages""#))
        .unwrap();
    let mut damaged: Vec<&str> = lines.clone();
    damaged.insert(user_line + 1, "{\"kind\": \"event\", garbage");
    std::fs::write(&log, damaged.join("\n") + "\n").unwrap();

    let loaded = session::load(&log).expect("loads");
    assert_eq!(loaded.records.len(), user_line, "everything before the bad line");
    assert_eq!(loaded.warnings.len(), 1);
    assert!(
        loaded.warnings[0].starts_with(&format!("line {} of ", user_line + 2)),
        "{:?}",
        loaded.warnings
    );

    let id = session_id(&log);
    let output = exec(&home, &workspace, &server, &["--resume", &id, "second task"]);
    let stderr = text(&output.stderr);
    assert_eq!(output.status.code(), Some(0), "{stderr}");
    assert!(stderr.contains(&format!("line {} of", user_line + 2)), "{stderr}");
    let sent = server.last_request().unwrap().body["messages"].to_string();
    assert!(
        sent.contains("first task") && !sent.contains("First answer."),
        "{sent}"
    );
    // The damaged original is kept beside the log; the log itself loads cleanly now.
    let kept: Vec<_> = std::fs::read_dir(home.join("sessions"))
        .unwrap()
        .filter_map(Result::ok)
        .filter(|e| e.file_name().to_string_lossy().contains(".damaged-"))
        .collect();
    assert_eq!(kept.len(), 1);
    assert!(session::load(&log).expect("loads").warnings.is_empty());
}

#[test]
fn no_api_key_reaches_a_session_file() {
    let server = ScriptedServer::start_blocking(vec![
        Reply::Stream(
            Turn::new()
                .thinking(format!("The key might be {TEST_KEY}."), "sig")
                .tool(
                    "c1",
                    "bash",
                    format!(r#"{{"command": "printenv MINIAGENT_API_KEY; echo {TEST_KEY}"}}"#),
                ),
        ),
        Reply::text(format!("Your key is {TEST_KEY}.")),
    ]);
    let (home, workspace) = (TempDir::new(), TempDir::new());
    let output = exec(&home, &workspace, &server, &[&format!("what is {TEST_KEY}?")]);
    assert_eq!(output.status.code(), Some(0), "{}", text(&output.stderr));
    let request = server.last_request().unwrap();
    assert_eq!(
        request.header("x-api-key"),
        Some(TEST_KEY),
        "the test key was really used"
    );
    // Nothing shown carries it either: the answer, the thinking, the tool output.
    assert_eq!(text(&output.stdout), "Your key is [redacted].\n");
    let stderr = text(&output.stderr);
    assert!(
        !stderr.contains(TEST_KEY) && stderr.contains("The key might be [redacted]."),
        "{stderr}"
    );
    let mut files = 0;
    for entry in std::fs::read_dir(home.join("sessions"))
        .unwrap()
        .filter_map(Result::ok)
    {
        let content = std::fs::read_to_string(entry.path()).unwrap();
        files += 1;
        assert!(
            !content.contains(TEST_KEY),
            "{} holds the key",
            entry.path().display()
        );
        assert!(!content.to_lowercase().contains("x-api-key") && !content.contains("Authorization"));
    }
    assert_eq!(files, 2, "the log and its index entry");
    let log = session_logs(&home).pop().unwrap();
    // The command's output is recorded, redacted; the command has no key variable to print.
    let call = session::load::tool_call(&log, "c1").expect("reads");
    let printed = call.output.expect("the output is recorded").text();
    assert_eq!(printed, "[redacted]\n");
    assert!(
        std::fs::read_to_string(log)
            .unwrap()
            .contains("Your key is [redacted].")
    );
}

#[test]
fn a_session_resumes_with_another_provider_and_says_so() {
    let server = ScriptedServer::start_blocking(vec![
        Reply::Stream(
            Turn::new()
                .thinking("Plan.", "sig")
                .with_text("Anthropic answered."),
        ),
        Reply::text("OpenAI answered."),
    ]);
    let (home, workspace) = (TempDir::new(), TempDir::new());
    let log = recorded_session(&home, &workspace, &server);
    let output = miniagent(&home)
        .arg("--workspace")
        .arg(workspace.path())
        .args([
            "--provider",
            "openai",
            "--base-url",
            &server.openai_base_url(),
            "--model",
            "other-model",
        ])
        .args(["exec", "--resume", &session_id(&log), "and now?"])
        .output()
        .expect("miniagent runs");
    let stderr = text(&output.stderr);
    assert_eq!(output.status.code(), Some(0), "{stderr}");
    assert!(
        stderr.contains("this session was recorded with scripted-model (anthropic); it continues with other-model (openai)"),
        "{stderr}"
    );
    let request = server.last_request().unwrap();
    assert_eq!(request.path_only(), "/v1/chat/completions");
    let messages = request.body["messages"].to_string();
    assert!(
        messages.contains("first task") && messages.contains("Anthropic answered."),
        "{messages}"
    );
}

#[test]
fn a_session_open_in_another_process_is_not_resumed_twice() {
    let server = ScriptedServer::start_blocking(vec![
        Reply::text("First answer."),
        Reply::tool("c1", "bash", r#"{"command": "sleep 6.5"}"#),
        Reply::text("never sent"),
    ]);
    let (home, workspace) = (TempDir::new(), TempDir::new());
    let log = recorded_session(&home, &workspace, &server);
    let id = session_id(&log);
    let mut holder = exec_command(&home, &workspace, &server, &["--resume", &id, "hold it"])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("starts");
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    while !std::fs::read_to_string(&log)
        .unwrap()
        .contains(r#""type":"tool_call_started","id":"c1""#)
    {
        assert!(
            std::time::Instant::now() < deadline,
            "the first resume never got going"
        );
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    let second = exec(&home, &workspace, &server, &["--resume", &id, "me too"]);
    let stderr = text(&second.stderr);
    assert_eq!(second.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("is open in another miniagent"), "{stderr}");
    let _ = holder.kill();
    let _ = holder.wait();
    let _ = std::process::Command::new("pkill")
        .args(["-f", "sleep 6.5"])
        .status();
    assert_eq!(server.requests().len(), 2, "the refused resume sent nothing");
}

#[test]
fn sigterm_stops_exec_cleanly_and_the_log_is_complete() {
    let server =
        ScriptedServer::start_blocking(vec![Reply::tool("c1", "bash", r#"{"command": "sleep 8.75"}"#)]);
    let (home, workspace) = (TempDir::new(), TempDir::new());
    let child = exec_command(&home, &workspace, &server, &["wait"])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("starts");
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    let log = loop {
        if let Some(log) = session_logs(&home).pop()
            && std::fs::read_to_string(&log).is_ok_and(|t| t.contains(r#""type":"tool_call_started""#))
        {
            break log;
        }
        assert!(std::time::Instant::now() < deadline, "the call never started");
        std::thread::sleep(std::time::Duration::from_millis(20));
    };
    let sent = std::time::Instant::now();
    let status = std::process::Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(status.success());
    let output = child.wait_with_output().unwrap();
    assert!(
        sent.elapsed() < std::time::Duration::from_secs(5),
        "{:?}",
        sent.elapsed()
    );
    // 128 + 15, as a shell reports a process SIGTERM ended.
    let stderr = text(&output.stderr);
    assert_eq!(output.status.code(), Some(143), "{stderr}");
    assert!(
        stderr.contains("terminated (SIGTERM); stopping the turn"),
        "{stderr}"
    );
    // What the stopped turn used closes the run, as after Ctrl-C.
    assert!(stderr.lines().any(|line| line.starts_with("turn: ")), "{stderr}");
    let loaded = session::load(&log).unwrap();
    assert!(loaded.warnings.is_empty(), "{:?}", loaded.warnings);
    assert!(
        loaded.closing_events().is_empty(),
        "the call and the turn were closed before exit"
    );
    assert!(
        std::process::Command::new("pgrep")
            .args(["-f", "sleep 8.75"])
            .output()
            .unwrap()
            .stdout
            .is_empty(),
        "the command was stopped"
    );
}

/// A tool whose run panics, standing in for a bug anywhere in a turn.
struct PanickingTool;

impl miniagent_core::tools::Tool for PanickingTool {
    fn name(&self) -> &str {
        "explode"
    }

    fn description(&self) -> &str {
        "panics"
    }

    fn input_schema(&self) -> serde_json::Value {
        serde_json::json!({"type": "object", "properties": {}})
    }

    fn effect(&self) -> miniagent_core::tools::ToolEffect {
        miniagent_core::tools::ToolEffect::ReadOnly
    }

    fn run(
        &self,
        _arguments: serde_json::Value,
        _context: miniagent_core::tools::ToolContext,
    ) -> futures_util::future::BoxFuture<'_, miniagent_core::tools::ToolOutput> {
        Box::pin(async { panic!("a bug in a tool") })
    }
}

#[test]
fn a_panic_in_a_turn_leaves_a_loadable_log_and_the_session_goes_on() {
    use miniagent_protocol::Event;
    let runtime = tokio::runtime::Runtime::new().unwrap();
    runtime.block_on(async {
        let server = ScriptedServer::start(vec![
            Reply::tool("boom", "explode", "{}"),
            Reply::text("Still here."),
        ])
        .await;
        let data = TempDir::new();
        let log = support::harness::session_log_in(&data);
        let config = support::harness::test_config(miniagent_core::config::Provider::Anthropic, &server);
        let mut agent = support::harness::Harness::start_with(
            config,
            log.clone(),
            vec![std::sync::Arc::new(PanickingTool)],
        );
        let events = agent.turn("use the tool").await;
        assert!(
            matches!(events.last(), Some(Event::Error { message }) if message.contains("internal error")),
            "{:?}",
            events.last()
        );
        let events = agent.turn("again").await;
        assert_eq!(
            events.last(),
            Some(&Event::TurnComplete {
                text: "Still here.".into()
            })
        );
        let sent = server.last_request().unwrap().body["messages"].to_string();
        assert!(
            sent.contains("the agent crashed while this call was running"),
            "{sent}"
        );
        // The log holds the repaired history and the error, and loads cleanly.
        agent.send(miniagent_protocol::Op::Shutdown);
        agent.wait_for(|e| matches!(e, Event::ShutdownComplete)).await;
        let loaded = session::load(&log.path().unwrap()).unwrap();
        assert!(loaded.warnings.is_empty(), "{:?}", loaded.warnings);
        assert!(loaded.closing_events().is_empty());
        assert!(
            loaded
                .events()
                .any(|(_, e)| matches!(e, Event::Error { message } if message.contains("a bug in a tool")))
        );
        let restored = loaded.restore(miniagent_core::tokens::TokenCounter::estimate_only());
        let history = serde_json::to_string(restored.context.messages()).unwrap();
        assert!(history.contains("the agent crashed while this call was running"));
    });
}

/// `exec --json --resume` prints the resume's events but not the restored history the
/// agent sends front ends (it is in the log already), and the log does not record it.
#[test]
fn exec_json_resume_leaves_the_restored_history_out_of_stdout_and_the_log() {
    let server = ScriptedServer::start_blocking(vec![Reply::text("Hello."), Reply::text("Again.")]);
    let (home, workspace) = (TempDir::new(), TempDir::new());
    let first = exec(&home, &workspace, &server, &["say hello"]);
    assert_eq!(first.status.code(), Some(0), "{}", text(&first.stderr));
    let logs = session_logs(&home);
    let id = session_id(&logs[0]);
    let second = exec(
        &home,
        &workspace,
        &server,
        &["--json", "--resume", &id, "once more"],
    );
    assert_eq!(second.status.code(), Some(0), "{}", text(&second.stderr));
    let types: Vec<String> = text(&second.stdout)
        .lines()
        .map(|line| {
            let event: serde_json::Value = serde_json::from_str(line).expect("one JSON event a line");
            event["type"].as_str().unwrap_or_default().to_string()
        })
        .collect();
    assert!(types.iter().any(|t| t == "session_resumed"), "{types:?}");
    assert!(!types.iter().any(|t| t == "history_restored"), "{types:?}");
    let log = std::fs::read_to_string(&logs[0]).unwrap();
    assert!(!log.contains("history_restored"));
    // The model got the earlier turn back.
    let sent = server.last_request().expect("a request").body["messages"].to_string();
    assert!(sent.contains("say hello") && sent.contains("once more"), "{sent}");
}
