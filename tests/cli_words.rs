//! What the command line itself prints: completion scripts, a mistyped command, a call's
//! arguments and names as exec shows them, and the resume hint only for a recorded
//! session.
#![allow(clippy::unwrap_used, clippy::expect_used)] // A test fails by panicking.

use crate::exec_cli::{exec_against, miniagent, text};
use crate::support;

use std::process::Command;

use pretty_assertions::assert_eq;
use support::*;

/// `miniagent completions SHELL` prints clap's script for the shell: bash reads it
/// without error and it completes the commands and the options, `--continue` among them.
#[test]
fn completions_are_printed_for_each_shell() {
    let config_dir = TempDir::new();
    let output = miniagent(None, &config_dir)
        .args(["completions", "bash"])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(0), "{}", text(&output.stderr));
    let script = text(&output.stdout);
    assert!(script.contains("complete -F _miniagent"), "{script}");
    for word in [
        "exec",
        "sessions",
        "replay",
        "completions",
        "--continue",
        "--resume",
    ] {
        assert!(script.contains(word), "{word} in {script}");
    }
    let file = config_dir.join("miniagent.bash");
    std::fs::write(&file, &script).unwrap();
    let checked = Command::new("bash")
        .arg("-c")
        .arg(format!("source {} && complete -p miniagent", file.display()))
        .output()
        .unwrap();
    assert_eq!(
        text(&checked.stdout),
        "complete -o bashdefault -o default -o nosort -F _miniagent miniagent\n",
        "{}",
        text(&checked.stderr)
    );
    for shell in ["zsh", "fish", "elvish", "powershell"] {
        let output = miniagent(None, &config_dir)
            .args(["completions", shell])
            .output()
            .unwrap();
        assert_eq!(output.status.code(), Some(0), "{shell}");
        // Fish names long options without their dashes (`-l continue`).
        assert!(text(&output.stdout).contains("continue"), "{shell}");
    }
}

/// A path with an escape sequence is printed with the escape shown (`a␛[31m.txt`), not
/// stripped to a name that is another file's; a 100 KB tool name is cut on its line.
#[test]
fn exec_shows_escapes_in_arguments_and_cuts_long_tool_names() {
    let long_name = "x".repeat(100_000);
    let server = ScriptedServer::start_blocking(vec![
        Reply::tool(
            "w1",
            "write_file",
            r#"{"path": "a\u001b[31m.txt", "content": "x"}"#,
        ),
        Reply::tool("n1", &long_name, "{}"),
        Reply::text("Done."),
    ]);
    let (output, workspace) = exec_against(&server, &["--approval", "full-auto"], "write it");
    let stderr = text(&output.stderr);
    assert_eq!(output.status.code(), Some(0), "{stderr}");
    assert_eq!(
        std::fs::read_to_string(workspace.join("a\x1b[31m.txt")).unwrap(),
        "x"
    );
    assert_eq!(server.requests().len(), 3);
    let lines: Vec<String> = stderr
        .lines()
        .filter(|l| l.starts_with(['✓', '✗']))
        .map(|l| {
            // The duration varies.
            let at = l.find(" ms)").unwrap();
            let open = l[..at].rfind('(').unwrap();
            format!("{}(N{}", &l[..open], &l[at..])
        })
        .collect();
    assert_eq!(
        lines,
        [
            "✓ write_file a␛[31m.txt (N ms)".to_string(),
            format!(
                "✗ {}…  (N ms) — unknown tool `{}…",
                "x".repeat(63),
                "x".repeat(85)
            ),
        ],
        "{stderr}"
    );
}

/// Issue 26, a fresh-eyes finding: a failed call's error is printed with the escape
/// shown as its arguments show it (`a0␛[31m.txt`), the text the model got: not stripped
/// to the name of another file, never raw.
#[test]
fn exec_shows_escapes_in_a_failed_calls_error_as_in_its_arguments() {
    let server = ScriptedServer::start_blocking(vec![
        Reply::tool("r1", "read_file", r#"{"path": "a0\u001b[31m.txt"}"#),
        Reply::text("Done."),
    ]);
    let (output, _workspace) = exec_against(&server, &["--approval", "full-auto"], "read it");
    let stderr = text(&output.stderr);
    assert_eq!(output.status.code(), Some(0), "{stderr}");
    assert_eq!(server.requests().len(), 2);
    assert_eq!(
        server.last_block(1),
        serde_json::json!({
            "type": "tool_result",
            "tool_use_id": "r1",
            "content": "file not found: a0\u{1b}[31m.txt",
            "is_error": true,
            "cache_control": {"type": "ephemeral"},
        })
    );
    let calls: Vec<String> = stderr
        .lines()
        .filter(|l| l.starts_with(['✓', '✗']))
        .map(|l| {
            // The duration varies.
            let at = l.find(" ms)").unwrap();
            let open = l[..at].rfind('(').unwrap();
            format!("{}(N{}", &l[..open], &l[at..])
        })
        .collect();
    assert_eq!(
        (calls, text(&output.stdout)),
        (
            vec!["✗ read_file a0␛[31m.txt (N ms) — file not found: a0␛[31m.txt".to_string()],
            "Done.\n".to_string()
        ),
        "{stderr}"
    );
}

/// A session whose log cannot be written (its folder is a file) is not named as one to
/// continue: the notice says it is not recorded, and no resume hint follows.
#[test]
fn no_resume_hint_for_a_session_that_could_not_be_recorded() {
    let server = ScriptedServer::start_blocking(vec![Reply::text("The answer.")]);
    let workspace = TempDir::new();
    let config_dir = TempDir::new();
    std::fs::write(config_dir.join("sessions"), "not a folder").unwrap();
    let output = miniagent(Some(&workspace), &config_dir)
        .args(["--base-url", &server.anthropic_base_url(), "exec", "hi"])
        .output()
        .unwrap();
    let stderr = text(&output.stderr);
    assert_eq!(output.status.code(), Some(0), "{stderr}");
    assert_eq!(text(&output.stdout), "The answer.\n");
    assert_eq!(server.requests().len(), 1);
    // The log's name holds the session's id, made up at the start.
    let prefix = format!("note: the session log {}/sessions/", config_dir.path().display());
    let notices: Vec<String> = stderr
        .lines()
        .filter(|l| l.contains("session ") || l.starts_with("note: the session log"))
        .map(
            |l| match l.strip_prefix(&prefix).and_then(|rest| rest.split_once(".jsonl")) {
                Some((_, rest)) => format!("{prefix}ID.jsonl{rest}"),
                None => l.to_string(),
            },
        )
        .collect();
    assert_eq!(
        notices,
        [format!(
            "{prefix}ID.jsonl cannot be written (File exists (os error 17)); the rest of this session is not recorded"
        )],
        "{stderr}"
    );
}

/// A one-word slip of a command's name is not sent to the model as a prompt (it would open
/// the workbench and cost a call): it is refused at once, naming the command meant.
#[test]
fn a_mistyped_command_is_named_not_sent() {
    let config_dir = TempDir::new();
    for (typed, meant) in [
        ("sesions", "sessions"),
        ("exce", "exec"),
        ("Replay", "replay"),
        ("completion", "completions"),
    ] {
        let output = miniagent(None, &config_dir).arg(typed).output().unwrap();
        assert_eq!(output.status.code(), Some(1), "{typed}");
        assert_eq!(
            text(&output.stderr),
            format!(
                "miniagent: `{typed}` is not a command; did you mean `miniagent {meant}`? (`miniagent --help` lists them; a prompt of more than one word opens the workbench with it)\n"
            )
        );
        assert_eq!(text(&output.stdout), "");
    }
    // A word far from every command is a prompt: without a terminal the workbench says so.
    let output = miniagent(None, &config_dir).arg("refactor").output().unwrap();
    assert_eq!(output.status.code(), Some(1));
    assert!(
        text(&output.stderr).contains("miniagent exec \"PROMPT\""),
        "{}",
        text(&output.stderr)
    );
}
