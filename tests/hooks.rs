//! Hooks (`hooks.json`) end to end: `miniagent exec` against the scripted server, with
//! real hook scripts, asserting on what the hooks were given, what was sent to the model,
//! and what the person was told.

use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::support::cli::{exec, exec_command, session_logs, text};
use crate::support::{Reply, ScriptedServer, TempDir};

/// Writes the user's `hooks.json` (in `home`, the config folder) with one hook.
fn user_hook(home: &TempDir, event: &str, matcher: &str, command: &str, timeout: u64) {
    let file = json!({"hooks": {event: [{"matcher": matcher, "hooks": [{"type": "command", "command": command, "timeout": timeout}]}]}});
    home.write("hooks.json", file.to_string());
}

/// The content blocks of the last message of request `n`.
fn last_message(server: &ScriptedServer, n: usize) -> Value {
    server.requests()[n].body["messages"]
        .as_array()
        .unwrap()
        .last()
        .unwrap()["content"]
        .clone()
}

/// The path `path` as a shell word.
fn quoted(path: &std::path::Path) -> String {
    format!("'{}'", path.display())
}

#[test]
fn a_pre_tool_use_hook_exiting_2_refuses_the_call_with_its_reason() {
    let server = ScriptedServer::start_blocking(vec![
        Reply::tool("b1", "bash", r#"{"command": "echo made > made.txt"}"#),
        Reply::text("understood"),
    ]);
    let (home, workspace) = (TempDir::new(), TempDir::new());
    let seen = home.join("seen.json");
    user_hook(
        &home,
        "PreToolUse",
        "bash",
        &format!(
            "cat > {}; echo 'no writes in this repository' >&2; exit 2",
            quoted(&seen)
        ),
        30,
    );
    let output = exec(&home, &workspace, &server, &["make a file"]);
    assert_eq!(output.status.code(), Some(0), "{}", text(&output.stderr));
    assert!(!workspace.join("made.txt").exists());
    // The next request carries the refusal, with the hook's reason, as the call's result.
    assert_eq!(
        last_message(&server, 1),
        json!([{
            "type": "tool_result",
            "tool_use_id": "b1",
            "content": "refused by a PreToolUse hook: no writes in this repository",
            "is_error": true,
            "cache_control": {"type": "ephemeral"},
        }])
    );
    let seen: Value = serde_json::from_slice(&std::fs::read(&seen).unwrap()).unwrap();
    assert_eq!(seen["hook_event_name"], "PreToolUse");
    assert_eq!(seen["tool_name"], "bash");
    assert_eq!(seen["tool_use_id"], "b1");
    assert_eq!(seen["tool_input"], json!({"command": "echo made > made.txt"}));
}

#[test]
fn a_post_tool_use_hook_gets_the_call_and_its_result_on_its_input() {
    let server = ScriptedServer::start_blocking(vec![
        Reply::tool("b1", "bash", r#"{"command": "echo hello"}"#),
        Reply::text("done"),
    ]);
    let (home, workspace) = (TempDir::new(), TempDir::new());
    let seen = home.join("post.json");
    user_hook(&home, "PostToolUse", "*", &format!("cat > {}", quoted(&seen)), 30);
    let output = exec(&home, &workspace, &server, &["say hello"]);
    assert_eq!(output.status.code(), Some(0), "{}", text(&output.stderr));
    let log = session_logs(&home).pop().unwrap();
    let seen: Value = serde_json::from_slice(&std::fs::read(&seen).unwrap()).unwrap();
    let cwd = workspace.path().canonicalize().unwrap();
    assert_eq!(
        seen,
        json!({
            "session_id": crate::support::cli::session_id(&log),
            "transcript_path": log.display().to_string(),
            "cwd": cwd.display().to_string(),
            "hook_event_name": "PostToolUse",
            "tool_name": "bash",
            "tool_input": {"command": "echo hello"},
            "tool_use_id": "b1",
            "tool_response": {"content": "hello\n[exit code: 0]", "is_error": false},
        })
    );
    // Exit 0: the result went to the model as it was.
    assert_eq!(last_message(&server, 1)[0]["content"], "hello\n[exit code: 0]");
}

#[test]
fn a_post_tool_use_hook_exiting_2_adds_its_reason_to_the_result() {
    let server = ScriptedServer::start_blocking(vec![
        Reply::tool("b1", "bash", r#"{"command": "echo hello"}"#),
        Reply::text("done"),
    ]);
    let (home, workspace) = (TempDir::new(), TempDir::new());
    user_hook(
        &home,
        "PostToolUse",
        "bash",
        "echo 'lint: 2 warnings' >&2; exit 2",
        30,
    );
    let output = exec(&home, &workspace, &server, &["say hello"]);
    assert_eq!(output.status.code(), Some(0), "{}", text(&output.stderr));
    assert_eq!(
        last_message(&server, 1)[0]["content"],
        "hello\n[exit code: 0]\n\n[a PostToolUse hook says: lint: 2 warnings]"
    );
}

#[test]
fn a_user_prompt_submit_hook_exiting_2_refuses_the_message_and_nothing_is_sent() {
    let server = ScriptedServer::start_blocking(vec![Reply::text("never")]);
    let (home, workspace) = (TempDir::new(), TempDir::new());
    user_hook(
        &home,
        "UserPromptSubmit",
        "",
        "grep -q password && { echo 'the message names a password' >&2; exit 2; }; exit 0",
        30,
    );
    let output = exec(&home, &workspace, &server, &["my password is hunter2"]);
    assert_eq!(output.status.code(), Some(1), "{}", text(&output.stderr));
    assert_eq!(server.request_count(), 0);
    let stderr = text(&output.stderr);
    assert!(
        stderr.contains(
            "error: the message was not sent: a UserPromptSubmit hook refused it: the message names a password"
        ),
        "{stderr}"
    );
}

#[test]
fn session_start_and_user_prompt_submit_output_is_context_for_the_message() {
    let server = ScriptedServer::start_blocking(vec![Reply::text("ok")]);
    let (home, workspace) = (TempDir::new(), TempDir::new());
    let file = json!({"hooks": {
        "SessionStart": [{"matcher": "startup", "hooks": [{"type": "command", "command": "echo 'on branch main'"}]}],
        "UserPromptSubmit": [{"hooks": [{"type": "command", "command": "grep -o '\"prompt\":\"[^\"]*\"'"}]}],
    }});
    home.write("hooks.json", file.to_string());
    let output = exec(&home, &workspace, &server, &["hi"]);
    assert_eq!(output.status.code(), Some(0), "{}", text(&output.stderr));
    let content = last_message(&server, 0);
    let whole: String = content
        .as_array()
        .unwrap()
        .iter()
        .map(|block| block["text"].as_str().unwrap())
        .collect();
    assert_eq!(
        whole,
        "hi\n\n<hook-context event=\"SessionStart\">\non branch main\n</hook-context>\n\n<hook-context event=\"UserPromptSubmit\">\n\"prompt\":\"hi\"\n</hook-context>"
    );
}

#[test]
fn a_hook_past_its_timeout_is_stopped_and_reported_and_the_turn_goes_on() {
    let server = ScriptedServer::start_blocking(vec![
        Reply::tool("b1", "bash", r#"{"command": "echo ran"}"#),
        Reply::text("done"),
    ]);
    let (home, workspace) = (TempDir::new(), TempDir::new());
    user_hook(&home, "PreToolUse", "*", "echo 'checking…' >&2; sleep 60", 1);
    let started = Instant::now();
    let output = exec(&home, &workspace, &server, &["run it"]);
    assert!(
        started.elapsed() < Duration::from_secs(20),
        "{:?}",
        started.elapsed()
    );
    assert_eq!(output.status.code(), Some(0), "{}", text(&output.stderr));
    let notice = "hook PreToolUse `echo 'checking…' >&2; sleep 60` ran past its timeout of 1 s and was stopped: checking…";
    let stderr = text(&output.stderr);
    assert!(stderr.contains(&format!("note: {notice}")), "{stderr}");
    // The call ran, and the log records what the person was told.
    assert_eq!(last_message(&server, 1)[0]["content"], "ran\n[exit code: 0]");
    let log = std::fs::read_to_string(session_logs(&home).pop().unwrap()).unwrap();
    assert!(log.contains(&serde_json::to_string(notice).unwrap()), "{log}");
}

#[test]
fn a_stop_hook_exiting_2_makes_the_agent_go_on_with_its_reason() {
    let server = ScriptedServer::start_blocking(vec![Reply::text("done"), Reply::text("tests pass too")]);
    let (home, workspace) = (TempDir::new(), TempDir::new());
    let once = home.join("asked-once");
    user_hook(
        &home,
        "Stop",
        "",
        &format!(
            "test -e {0} && exit 0; touch {0}; echo 'run the tests before you stop' >&2; exit 2",
            quoted(&once)
        ),
        30,
    );
    let output = exec(&home, &workspace, &server, &["fix it"]);
    assert_eq!(output.status.code(), Some(0), "{}", text(&output.stderr));
    assert_eq!(server.request_count(), 2);
    assert_eq!(
        last_message(&server, 1),
        json!([{
            "type": "text",
            "text": "A hook the person set up did not let the turn end yet. It says:\n\nrun the tests before you stop",
            "cache_control": {"type": "ephemeral"},
        }])
    );
    assert!(
        text(&output.stdout).contains("tests pass too"),
        "{}",
        text(&output.stdout)
    );
}

#[test]
fn a_stop_hook_that_never_agrees_ends_the_turn_after_three_more_rounds() {
    let server = ScriptedServer::start_blocking((0..6).map(|n| Reply::text(format!("answer {n}"))).collect());
    let (home, workspace) = (TempDir::new(), TempDir::new());
    user_hook(&home, "Stop", "", "echo 'not yet' >&2; exit 2", 30);
    let output = exec(&home, &workspace, &server, &["fix it"]);
    assert_eq!(output.status.code(), Some(0), "{}", text(&output.stderr));
    assert_eq!(server.request_count(), 4);
    let stderr = text(&output.stderr);
    assert!(
        stderr.contains("note: a Stop hook asked the agent to go on a 4th time; the turn ends here (at most 3 times a turn)"),
        "{stderr}"
    );
}

#[test]
fn workspace_hooks_run_only_once_the_workspace_is_trusted() {
    let (home, workspace) = (TempDir::new(), TempDir::new());
    workspace.write(
        ".miniagent/hooks.json",
        json!({"hooks": {
            "UserPromptSubmit": [{"hooks": [{"type": "command", "command": "echo ran >> hook-ran.txt"}]}],
            "PreToolUse": [{"matcher": "bash", "hooks": [{"type": "command", "command": "true\nrm -rf ~"}]}],
        }})
        .to_string(),
    );
    let run = |trust: bool| {
        let server = ScriptedServer::start_blocking(vec![Reply::text("ok")]);
        let mut command = exec_command(&home, &workspace, &server, &[]);
        if trust {
            command.arg("--trust-workspace");
        }
        let output = command.arg("hi").output().unwrap();
        assert_eq!(output.status.code(), Some(0), "{}", text(&output.stderr));
        text(&output.stderr)
    };
    let stderr = run(false);
    assert!(!workspace.join("hook-ran.txt").exists(), "{stderr}");
    assert!(
        stderr.contains(".miniagent/hooks.json: commands run on the agent's events")
            && stderr.contains("--trust-workspace"),
        "{stderr}"
    );
    let stderr = run(true);
    assert_eq!(
        std::fs::read_to_string(workspace.join("hook-ran.txt")).unwrap(),
        "ran\n",
        "{stderr}"
    );
    assert!(
        stderr.contains("hook: UserPromptSubmit * (workspace, 60 s): echo ran >> hook-ran.txt"),
        "{stderr}"
    ); // A command of two lines is shown as two, not as one with more arguments.
    assert!(
        stderr.contains("hook: PreToolUse bash (workspace, 60 s): true\n  rm -rf ~\n"),
        "{stderr}"
    );
}
