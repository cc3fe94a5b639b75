//! The `miniagent exec` binary: exit codes, stdout/stderr split, `--json`, config errors
//! and SIGINT, against the scripted server.
#![allow(clippy::unwrap_used, clippy::expect_used)] // A test fails by panicking.

use crate::support;

use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use miniagent_protocol::Event;
use pretty_assertions::assert_eq;
use support::harness::TEST_KEY;
use support::*;

#[path = "exec_cli/provider.rs"]
mod provider;

/// A `miniagent` command isolated from the machine's own configuration and keys.
pub(crate) fn miniagent(workspace: Option<&TempDir>, config_dir: &TempDir) -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_miniagent"));
    for (name, _) in std::env::vars() {
        if name.starts_with("MINIAGENT_") || name.ends_with("_API_KEY") || name == "NO_COLOR" {
            command.env_remove(name);
        }
    }
    command
        .env("MINIAGENT_CONFIG_DIR", config_dir.path())
        .env("MINIAGENT_DATA_DIR", config_dir.path())
        .env("MINIAGENT_LOG_DIR", config_dir.path())
        .env("MINIAGENT_API_KEY", TEST_KEY)
        .stdin(Stdio::null());
    if let Some(workspace) = workspace {
        command.arg("--workspace").arg(workspace.path());
    }
    command
}

pub(crate) fn exec_against(server: &ScriptedServer, extra: &[&str], prompt: &str) -> (Output, TempDir) {
    let workspace = TempDir::new();
    let config_dir = TempDir::new();
    let output = miniagent(Some(&workspace), &config_dir)
        .args([
            "--base-url",
            &server.anthropic_base_url(),
            "--model",
            "scripted-model",
        ])
        .arg("exec")
        .args(extra)
        .arg(prompt)
        .output()
        .expect("miniagent runs");
    (output, workspace)
}

pub(crate) fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

#[test]
fn exit_0_prints_the_answer_on_stdout_and_progress_on_stderr() {
    let server = ScriptedServer::start_blocking(vec![
        Reply::Stream(Turn::new().thinking("I will count.", "sig").tool(
            "t1",
            "bash",
            r#"{"command": "ls | wc -l"}"#,
        )),
        Reply::text("There are 0 files."),
    ]);
    let (output, _workspace) = exec_against(&server, &["--approval", "full-auto"], "count files");
    let stderr = text(&output.stderr);
    assert_eq!(output.status.code(), Some(0), "stderr: {stderr}");
    assert_eq!(text(&output.stdout), "There are 0 files.\n");
    assert!(stderr.contains("I will count."), "{stderr}");
    assert!(stderr.contains("✓ bash ls | wc -l ("), "{stderr}");
    assert!(
        !stderr.contains('\x1b'),
        "no colour without a terminal: {stderr:?}"
    );
    assert!(!stderr.contains(TEST_KEY) && !text(&output.stdout).contains(TEST_KEY));
}

#[test]
fn exec_refuses_calls_that_need_approval_and_tells_the_model() {
    let server = ScriptedServer::start_blocking(vec![
        Reply::tool("t1", "bash", r#"{"command": "touch created"}"#),
        Reply::tool("w1", "write_file", r#"{"path": "x.txt", "content": "hi"}"#),
        Reply::text("I was not allowed to run it."),
    ]);
    let (output, workspace) = exec_against(&server, &[], "make a file");
    assert_eq!(output.status.code(), Some(0), "{}", text(&output.stderr));
    assert!(!workspace.join("created").exists());
    let result = server.requests()[1].body["messages"][2]["content"][0].clone();
    assert_eq!(result["is_error"], true);
    // Refused as the approval mode refuses a call: nobody was there to deny it.
    let why = "miniagent exec runs without a person to approve tool calls, and `bash` needs approval here. Either the approval mode asks for it (--approval full-auto, or auto-edit for file edits, lets such calls run), or the call changes miniagent's own settings (.miniagent/ or the config folder), which is asked about in every mode and so never runs under exec.";
    assert_eq!(result["content"], format!("refused: {why}"));
    // One line per refused call, ending with what to do.
    let stderr = text(&output.stderr);
    let refused: Vec<&str> = stderr.lines().filter(|l| l.contains("refused")).collect();
    assert_eq!(
        refused,
        [
            "✗ bash touch created (0 ms) — refused: exec cannot ask for approval (use --approval full-auto)",
            "✗ write_file x.txt (0 ms) — refused: exec cannot ask for approval (use --approval auto-edit or full-auto)",
        ],
        "{stderr}"
    );
    assert!(!stderr.contains("denied by you"), "{stderr}");
    assert!(!workspace.join("x.txt").exists());
}

#[test]
fn exit_1_on_provider_errors_and_malformed_streams() {
    let server = ScriptedServer::start_blocking(vec![Reply::status(400, "bad request body")]);
    let (output, _w) = exec_against(&server, &[], "hi");
    assert_eq!(output.status.code(), Some(1));
    // The error, then the line naming the session.
    let stderr = text(&output.stderr);
    let lines: Vec<&str> = stderr.lines().collect();
    assert_eq!(
        lines[lines.len() - 2],
        "error: the model call failed: HTTP 400 from the provider: bad request body",
        "{stderr}"
    );
    assert!(lines[lines.len() - 1].starts_with("session "), "{stderr}");
    assert_eq!(text(&output.stdout), "");

    let server = ScriptedServer::start_blocking(vec![Reply::malformed("{not json")]);
    let (output, _w) = exec_against(&server, &[], "hi");
    assert_eq!(output.status.code(), Some(1));
    let stderr = text(&output.stderr);
    assert!(
        stderr.contains("error: the model call failed: malformed stream data:"),
        "{stderr}"
    );
    assert!(!stderr.contains("panicked"), "{stderr}");
}

#[test]
fn exit_2_at_the_step_limit_with_the_report_on_stdout() {
    let server = ScriptedServer::start_blocking(vec![
        Reply::tool("t1", "bash", r#"{"command": "true"}"#),
        Reply::tool("t2", "bash", r#"{"command": "true"}"#),
        Reply::text("Report: ran true twice; nothing else done."),
    ]);
    let (output, _w) = exec_against(&server, &["--approval", "full-auto", "--max-steps", "2"], "loop");
    assert_eq!(output.status.code(), Some(2), "{}", text(&output.stderr));
    assert_eq!(
        text(&output.stdout),
        "Report: ran true twice; nothing else done.\n"
    );
    assert!(text(&output.stderr).contains("step limit reached after 2 steps"));
}

#[test]
fn exit_130_when_interrupted_with_sigint() {
    let server = ScriptedServer::start_blocking(vec![Reply::slow(Turn::text("slow ".repeat(100)), 100)]);
    let workspace = TempDir::new();
    let config_dir = TempDir::new();
    let child = miniagent(Some(&workspace), &config_dir)
        .args([
            "--base-url",
            &server.anthropic_base_url(),
            "exec",
            "--json",
            "story",
        ])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(10);
    while server.request_count() == 0 {
        assert!(Instant::now() < deadline, "no request arrived");
        std::thread::sleep(Duration::from_millis(10));
    }
    std::thread::sleep(Duration::from_millis(300));
    let sent = Instant::now();
    let status = Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(status.success());
    let output = child.wait_with_output().unwrap();
    assert!(
        sent.elapsed() < Duration::from_secs(3),
        "took {:?}",
        sent.elapsed()
    );
    assert_eq!(output.status.code(), Some(130), "{}", text(&output.stderr));
    let events: Vec<Event> = text(&output.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert!(
        events.iter().any(|e| matches!(e, Event::TurnAborted { .. })),
        "{events:#?}"
    );
    assert_eq!(events.last(), Some(&Event::ShutdownComplete));
}

#[test]
fn json_mode_prints_only_events() {
    let server = ScriptedServer::start_blocking(vec![
        Reply::tool("t1", "bash", r#"{"command": "echo hi"}"#),
        Reply::Stream(Turn::thinking_text("ok", "sig", "All done.")),
    ]);
    let (output, _w) = exec_against(&server, &["--json", "--approval", "full-auto"], "go");
    assert_eq!(output.status.code(), Some(0), "{}", text(&output.stderr));
    let events: Vec<Event> = text(&output.stdout)
        .lines()
        .map(|line| serde_json::from_str(line).unwrap_or_else(|err| panic!("not an Event: {line}: {err}")))
        .collect();
    assert!(
        matches!(events.first(), Some(Event::SessionConfigured { provider, .. }) if provider == "anthropic")
    );
    let kinds: Vec<String> = text(&output.stdout)
        .lines()
        .map(|line| {
            serde_json::from_str::<serde_json::Value>(line).unwrap()["type"]
                .as_str()
                .unwrap()
                .to_string()
        })
        .collect();
    for expected in [
        "turn_started",
        "tool_call_requested",
        "tool_call_started",
        "tool_output_delta",
        "tool_call_finished",
        "token_usage",
        "thinking_delta",
        "text_delta",
        "assistant_message",
        "turn_complete",
        "shutdown_complete",
    ] {
        assert!(kinds.iter().any(|k| k == expected), "no {expected} in {kinds:?}");
    }
    assert!(events.contains(&Event::TurnComplete {
        text: "All done.".into()
    }));
}

/// exec prints the plan the agent sets as a few lines on stderr (its progress, a step a
/// line with its note), and `--json` carries it as its event, before the call finishes.
#[test]
fn exec_prints_the_plan_and_json_carries_it() {
    let plan = r#"{"entries": [{"content": "read the code", "status": "completed"}, {"content": "fix \u001b]0;x\u0007it", "status": "in_progress", "priority": "high", "note": "in lex() \u001b[2J"}]}"#;
    let script = || {
        ScriptedServer::start_blocking(vec![
            Reply::tool("p1", "update_plan", plan),
            Reply::text("Planned."),
        ])
    };
    // The mode that asks most: the plan needs no approval.
    let (output, _w) = exec_against(&script(), &["--approval", "ask"], "plan it");
    let stderr = text(&output.stderr);
    assert_eq!(output.status.code(), Some(0), "{stderr}");
    assert!(
        stderr.contains("plan: 1 of 2 done\n  ✓ read the code\n  ▸ fix it (high) — in lex() \n"),
        "{stderr}"
    );
    let (output, _w) = exec_against(&script(), &["--json", "--approval", "ask"], "plan it");
    let kinds: Vec<String> = text(&output.stdout)
        .lines()
        .map(|line| serde_json::from_str::<serde_json::Value>(line).unwrap())
        .filter(|event| event["type"] == "plan_updated" || event["type"] == "tool_call_finished")
        .map(|event| event.to_string())
        .collect();
    assert_eq!(
        kinds.first().map(String::as_str),
        Some(
            serde_json::json!({"type": "plan_updated", "entries": [
                {"content": "read the code", "status": "completed"},
                {"content": "fix \u{1b}]0;x\u{7}it", "status": "in_progress", "priority": "high", "note": "in lex() \u{1b}[2J"},
            ]})
            .to_string()
            .as_str()
        ),
        "{kinds:?}"
    );
    assert_eq!(kinds.len(), 2, "{kinds:?}");
}

#[test]
fn a_malformed_config_file_is_one_line_naming_file_and_key() {
    let server = ScriptedServer::start_blocking(vec![]);
    let config_dir = TempDir::new();
    let user_config = config_dir.write("config.toml", "[agent]\nmax_steps = \"lots\"\n");
    let workspace = TempDir::new();
    let output = miniagent(Some(&workspace), &config_dir)
        .args(["--base-url", &server.anthropic_base_url(), "exec", "hi"])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(1));
    assert_eq!(
        text(&output.stderr),
        format!(
            "miniagent: {}: key `agent.max_steps`: expected a whole number, got the string \"lots\"\n",
            user_config.display()
        )
    );
    assert_eq!(server.request_count(), 0);

    let extra = workspace.write("extra.toml", "[model]\nprovidr = \"openai\"\n");
    let output = miniagent(Some(&workspace), &TempDir::new())
        .args(["--config", extra.to_str().unwrap(), "exec", "hi"])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(1));
    let stderr = text(&output.stderr);
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(
        stderr.starts_with(&format!(
            "miniagent: {}: unknown key `model.providr`",
            extra.display()
        )),
        "{stderr}"
    );
}

/// In text mode the session is named on stderr (stdout stays the answer), with the
/// command that continues it.
#[test]
fn exec_names_its_session_and_how_to_continue_it() {
    let server = ScriptedServer::start_blocking(vec![Reply::text("The answer.")]);
    let workspace = TempDir::new();
    let config_dir = TempDir::new();
    let output = miniagent(Some(&workspace), &config_dir)
        .args(["--base-url", &server.anthropic_base_url(), "exec", "hi"])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(0));
    assert_eq!(text(&output.stdout), "The answer.\n");
    let logs: Vec<_> = std::fs::read_dir(config_dir.join("sessions"))
        .unwrap()
        .filter_map(Result::ok)
        .map(|entry| entry.path())
        .filter(|path| path.extension().is_some_and(|ext| ext == "jsonl"))
        .collect();
    assert_eq!(logs.len(), 1);
    let id = logs[0].file_stem().unwrap().to_str().unwrap();
    let stderr = text(&output.stderr);
    // The test runs elsewhere than the workspace, so the command names it.
    assert_eq!(
        stderr.lines().last(),
        Some(
            format!(
                "session {id} · continue it with: miniagent -w {} exec --resume {id} \"…\"",
                workspace.path().display()
            )
            .as_str()
        ),
        "{stderr}"
    );
}

#[test]
fn usage_errors_and_missing_keys_exit_1() {
    let workspace = TempDir::new();
    let config_dir = TempDir::new();
    let output = miniagent(Some(&workspace), &config_dir)
        .args(["exec", "--approval", "sometimes", "hi"])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(1));
    assert!(text(&output.stderr).contains("invalid value 'sometimes'"));

    let output = miniagent(Some(&workspace), &config_dir)
        .env_remove("MINIAGENT_API_KEY")
        .args(["--base-url", "https://api.anthropic.com", "exec", "hi"])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(1));
    assert_eq!(
        text(&output.stderr),
        "miniagent: no API key: set MINIAGENT_API_KEY or ANTHROPIC_API_KEY, or name another variable with --api-key-env\n"
    );

    let output = miniagent(None, &config_dir)
        .args(["--workspace", "/nonexistent/dir", "exec", "hi"])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(1));
    assert!(text(&output.stderr).starts_with("miniagent: workspace /nonexistent/dir: cannot open it"));
}

#[test]
fn read_only_exec_refuses_writes_and_tells_the_model_why() {
    let server = ScriptedServer::start_blocking(vec![
        Reply::tool("w1", "write_file", r#"{"path": "out.txt", "content": "data"}"#),
        Reply::text("I could not write it."),
    ]);
    let (output, workspace) = exec_against(&server, &["--approval", "read-only"], "write a file");
    assert_eq!(output.status.code(), Some(0), "{}", text(&output.stderr));
    assert!(!workspace.join("out.txt").exists());
    let result = server.requests()[1].body["messages"][2]["content"][0].clone();
    assert_eq!(result["is_error"], true);
    assert_eq!(
        result["content"],
        "refused: the approval mode is read-only, which allows only tools that change nothing; `write_file` writes files"
    );
}

#[test]
fn auto_edit_exec_writes_inside_the_workspace_but_refuses_commands() {
    let server = ScriptedServer::start_blocking(vec![
        Reply::tool(
            "w1",
            "write_file",
            r#"{"path": "src/lib.rs", "content": "pub fn f() {}\n"}"#,
        ),
        Reply::tool(
            "w2",
            "write_file",
            r#"{"path": "../outside.txt", "content": "x"}"#,
        ),
        Reply::tool("b1", "bash", r#"{"command": "touch ran"}"#),
        Reply::text("Wrote the file; bash was refused."),
    ]);
    let (output, workspace) = exec_against(&server, &["--approval", "auto-edit"], "edit and run");
    assert_eq!(output.status.code(), Some(0), "{}", text(&output.stderr));
    assert_eq!(
        std::fs::read_to_string(workspace.join("src/lib.rs")).unwrap(),
        "pub fn f() {}\n"
    );
    assert!(!workspace.join("ran").exists());
    let result = |n: usize| {
        server.requests()[n].body["messages"]
            .as_array()
            .unwrap()
            .last()
            .unwrap()["content"][0]
            .clone()
    };
    assert_eq!(result(1)["content"], "wrote 14 bytes to src/lib.rs (new file)");
    let escaped = result(2)["content"].as_str().unwrap().to_string();
    assert!(escaped.starts_with("`../outside.txt` resolves to "), "{escaped}");
    assert!(!workspace.path().parent().unwrap().join("outside.txt").exists());
    let refused = result(3)["content"].as_str().unwrap().to_string();
    assert!(
        refused.starts_with("refused: miniagent exec runs without a person"),
        "{refused}"
    );
}

#[test]
fn a_workspace_mcp_file_is_used_only_once_the_workspace_is_trusted() {
    let workspace = TempDir::new();
    workspace.write(
        ".miniagent/mcp.json",
        r#"{"mcpServers": {"repo-tool": {"command": "no-such-program-from-the-repo", "connect_timeout": 5}}}"#,
    );
    let config_dir = TempDir::new();
    let run = |trust: bool| {
        let server = ScriptedServer::start_blocking(vec![Reply::text("ok")]);
        let mut command = miniagent(Some(&workspace), &config_dir);
        command.args(["--base-url", &server.anthropic_base_url()]);
        if trust {
            command.arg("--trust-workspace");
        }
        let output = command.args(["exec", "hi"]).output().unwrap();
        assert_eq!(output.status.code(), Some(0), "{}", text(&output.stderr));
        text(&output.stderr)
    };
    // Untrusted: not started, and the person is told why.
    let stderr = run(false);
    assert!(
        stderr.contains("note: this workspace has its own settings in .miniagent/ (repo-tool: runs no-such-program-from-the-repo): MCP servers and hooks run programs, skills, commands and permission rules steer the agent, so they are used only if you trust the workspace (--trust-workspace)"),
        "{stderr}"
    );
    assert!(!stderr.contains("mcp: repo-tool"), "{stderr}");
    // Trusted with the flag: started (and it fails, as its program does not exist).
    let stderr = run(true);
    assert!(stderr.contains("mcp: repo-tool failed"), "{stderr}");
    // Remembered: the next run uses it without the flag.
    let stderr = run(false);
    assert!(stderr.contains("mcp: repo-tool failed"), "{stderr}");
    assert!(!stderr.contains("it starts programs"), "{stderr}");
}

/// Polling repeats a command: in `full-auto` the fourth identical `bash` call runs like
/// the others (it used to ask, which `exec` had to refuse). A read-only call that keeps
/// returning the same result is still refused on its fourth time, by the guard, and the
/// output and the session log say "refused", not "denied".
#[test]
fn full_auto_runs_a_repeated_command_and_the_guard_refuses_only_same_result_reads() {
    let poll = |n: usize| Reply::tool(format!("b{n}"), "bash", r#"{"command": "echo polling"}"#);
    let read = |n: usize| Reply::tool(format!("r{n}"), "read_file", r#"{"path": "a.txt"}"#);
    let mut script: Vec<Reply> = (1..=4).map(poll).collect();
    script.extend((1..=4).map(read));
    script.push(Reply::text("done"));
    let server = ScriptedServer::start_blocking(script);
    let home = TempDir::new();
    let workspace = TempDir::new();
    workspace.write("a.txt", "alpha\n");
    let output = support::cli::exec(&home, &workspace, &server, &["poll the service"]);
    let stderr = text(&output.stderr);
    assert_eq!(output.status.code(), Some(0), "{stderr}");
    let results: Vec<(String, String)> = server
        .requests()
        .iter()
        .filter_map(|request| {
            let last = request.body["messages"].as_array()?.last()?.clone();
            let block = last["content"].as_array()?.first()?.clone();
            Some((
                block["tool_use_id"].as_str()?.to_string(),
                block["content"].as_str()?.to_string(),
            ))
        })
        .collect();
    let result = |id: &str| {
        results
            .iter()
            .find(|(call, _)| call == id)
            .map(|(_, r)| r.clone())
            .unwrap()
    };
    assert_eq!(result("b4"), "polling\n[exit code: 0]");
    assert_eq!(result("r3"), "     1|alpha");
    let refused = result("r4");
    assert!(
        refused.starts_with("refused: the same call a fourth time in a row"),
        "{refused}"
    );
    assert!(!stderr.contains("approv"), "{stderr}");
    assert!(
        stderr.contains("refused: the same call a fourth time in a row"),
        "{stderr}"
    );
    let logs = support::cli::session_logs(&home);
    let log = std::fs::read_to_string(&logs[0]).unwrap();
    let finished: Vec<serde_json::Value> = log
        .lines()
        .filter_map(|line| serde_json::from_str::<serde_json::Value>(line).ok())
        .filter(|record| record["event"]["type"] == "tool_call_finished")
        .map(|record| record["event"].clone())
        .collect();
    let outcome = |id: &str| {
        finished
            .iter()
            .find(|event| event["id"] == id)
            .map(|event| event["outcome"].as_str().unwrap_or("").to_string())
            .unwrap()
    };
    assert_eq!(outcome("b4"), "ok");
    assert_eq!(outcome("r4"), "refused");
    assert!(!log.contains("\"denied\""), "{log}");
}

/// A data folder where results cannot be saved (here `results` is a file) is said at the
/// start, not found out later when a large output quietly loses its middle.
#[test]
fn a_results_folder_that_cannot_be_made_is_said_at_the_start() {
    let server = ScriptedServer::start_blocking(vec![Reply::text("hello")]);
    let workspace = TempDir::new();
    let config_dir = TempDir::new();
    config_dir.write("results", "not a folder");
    let output = miniagent(Some(&workspace), &config_dir)
        .args(["--base-url", &server.anthropic_base_url(), "exec", "hi"])
        .output()
        .unwrap();
    let stderr = text(&output.stderr);
    assert_eq!(output.status.code(), Some(0), "{stderr}");
    let results = config_dir.join("results");
    assert!(
        stderr.contains(&format!(
            "note: large results cannot be saved in {} (",
            results.display()
        )),
        "{stderr}"
    );
    assert!(
        stderr.contains("the model gets only their first and last part"),
        "{stderr}"
    );
}
