//! `miniagent sessions list|show|export` and `miniagent replay --headless`, on sessions
//! the real binary recorded with `exec` against the scripted server.
#![allow(clippy::unwrap_used, clippy::expect_used)] // A test fails by panicking.

use crate::support;

use std::path::PathBuf;
use std::process::Output;

use miniagent_core::agent::history::{ContentBlock, Message, Role};
use pretty_assertions::assert_eq;
use support::cli::{miniagent, session_id, session_logs, text};
use support::*;

fn exec(home: &TempDir, workspace: &TempDir, server: &ScriptedServer, prompt: &str) -> Output {
    let output = support::cli::exec(home, workspace, server, &[prompt]);
    assert_eq!(output.status.code(), Some(0), "{}", text(&output.stderr));
    output
}

fn run(home: &TempDir, args: &[&str]) -> Output {
    miniagent(home).args(args).output().expect("miniagent runs")
}

/// The first step thinks and runs `echo hi`; the second answers.
fn tool_turn() -> Vec<Reply> {
    vec![
        Reply::Stream(
            Turn::new()
                .thinking("Look first.", "sig")
                .tool("t1", "bash", r#"{"command": "echo hi"}"#)
                .usage(100, 20),
        ),
        Reply::Stream(Turn::text("It printed hi.").usage(150, 5)),
    ]
}

/// Two sessions: the tool turn, then (in a later second, so it sorts as newer) a short
/// answer. Returns their logs, oldest first, and the first run's output.
fn two_sessions(home: &TempDir, workspace: &TempDir) -> (Vec<PathBuf>, Output) {
    let mut script = tool_turn();
    script.push(Reply::text("Hello again."));
    let server = ScriptedServer::start_blocking(script);
    let first = exec(home, workspace, &server, "say hi");
    // Session ids and creation times count whole seconds.
    std::thread::sleep(std::time::Duration::from_millis(1100));
    exec(home, workspace, &server, "greet me");
    let logs = session_logs(home);
    assert_eq!(logs.len(), 2, "{logs:?}");
    (logs, first)
}

#[test]
fn sessions_are_listed_shown_and_exported() {
    let (home, workspace) = (TempDir::new(), TempDir::new());
    let (logs, _) = two_sessions(&home, &workspace);
    let (older, newer) = (session_id(&logs[0]), session_id(&logs[1]));

    let list = run(&home, &["sessions", "list"]);
    assert_eq!(list.status.code(), Some(0), "{}", text(&list.stderr));
    let listed = text(&list.stdout);
    // `sessions` alone lists them too.
    let bare = run(&home, &["sessions"]);
    assert_eq!(bare.status.code(), Some(0), "{}", text(&bare.stderr));
    assert_eq!(text(&bare.stdout), listed);
    // A header names the columns; then one line per session, the id first.
    let header = listed.lines().next().unwrap_or("");
    for column in [
        "SESSION",
        "CREATED",
        "STEPS",
        "TOKENS",
        "WORKSPACE",
        "FIRST PROMPT",
    ] {
        assert!(header.contains(column), "{listed}");
    }
    let first_fields: Vec<&str> = listed
        .lines()
        .skip(1)
        .map(|l| l.split_whitespace().next().unwrap_or(""))
        .collect();
    assert_eq!(first_fields, vec![newer.as_str(), older.as_str()], "{listed}");
    let lines: Vec<&str> = listed.lines().skip(1).collect();
    assert!(lines[0].ends_with("  greet me"), "{listed}");
    assert!(lines[1].ends_with("  say hi"), "{listed}");
    assert!(lines[1].contains(" 2 steps "), "{listed}");
    assert!(
        lines[0].contains(" 1 step "),
        "one step is not \"1 steps\": {listed}"
    );

    let show = run(&home, &["sessions", "show", &older]);
    assert_eq!(show.status.code(), Some(0), "{}", text(&show.stderr));
    let shown = text(&show.stdout);
    for expected in [
        format!("session    {older}\n"),
        "model      scripted-model (anthropic)\n".to_string(),
        "turns      1\nsteps      2\n".to_string(),
        "messages   4\n".to_string(),
        format!("file       {}\n", logs[0].display()),
        "\n› say hi\n".to_string(),
        "  thinking: Look first.\n".to_string(),
        "  ✓ bash echo hi (ok, ".to_string(),
        "\nIt printed hi.\n".to_string(),
    ] {
        assert!(shown.contains(&expected), "missing {expected:?} in:\n{shown}");
    }

    let md = run(&home, &["sessions", "export", &older, "--format", "md"]);
    assert_eq!(md.status.code(), Some(0), "{}", text(&md.stderr));
    let md = text(&md.stdout);
    for expected in [
        format!("# miniagent session {older}\n"),
        "\n## 👤 User\n\nsay hi\n".to_string(),
        "<details><summary>Thinking</summary>\n\nLook first.\n\n</details>".to_string(),
        "<details><summary>🔧 bash — echo hi</summary>".to_string(),
        "```json\n{\n  \"command\": \"echo hi\"\n}\n```".to_string(),
        "\n```\nhi\n".to_string(),
        "\nIt printed hi.\n".to_string(),
    ] {
        assert!(md.contains(&expected), "missing {expected:?} in:\n{md}");
    }
    assert!(
        md.find("🔧 bash").unwrap() < md.find("It printed hi.").unwrap(),
        "{md}"
    );

    let json = run(&home, &["sessions", "export", &older, "--format", "json"]);
    assert_eq!(json.status.code(), Some(0), "{}", text(&json.stderr));
    let value: serde_json::Value = serde_json::from_slice(&json.stdout).expect("the export is JSON");
    assert_eq!(value["session"]["id"], older.as_str());
    assert_eq!(value["session"]["model"], "scripted-model");
    assert_eq!(value["summaries"], serde_json::json!([]));
    let messages: Vec<Message> =
        serde_json::from_value(value["messages"].clone()).expect("messages round-trip");
    let roles: Vec<Role> = messages.iter().map(|m| m.role).collect();
    assert_eq!(
        roles,
        vec![Role::User, Role::Assistant, Role::Tool, Role::Assistant]
    );
    assert_eq!(messages[0], Message::user("say hi"));
    assert_eq!(messages[3].text(), "It printed hi.");
    let calls: Vec<(&str, &serde_json::Value)> = messages[1].tool_uses().map(|c| (c.name, c.input)).collect();
    assert_eq!(calls, vec![("bash", &serde_json::json!({"command": "echo hi"}))]);
    match messages[2].content.as_slice() {
        [
            ContentBlock::ToolResult {
                tool_use_id,
                content,
                is_error: false,
            },
        ] => {
            assert_eq!(tool_use_id, "t1");
            assert!(content.contains("hi"), "{content}");
        }
        other => panic!("expected one tool result, got {other:?}"),
    }
}

#[test]
fn sessions_are_found_by_a_unique_prefix_of_their_id() {
    let (home, workspace) = (TempDir::new(), TempDir::new());
    let (logs, _) = two_sessions(&home, &workspace);
    let (older, newer) = (session_id(&logs[0]), session_id(&logs[1]));

    // `20261122-040438-` names one second, so one session.
    let prefix = &older[..16];
    let show = run(&home, &["sessions", "show", prefix]);
    assert_eq!(show.status.code(), Some(0), "{}", text(&show.stderr));
    assert!(
        text(&show.stdout).starts_with(&format!("session    {older}\n")),
        "{}",
        text(&show.stdout)
    );

    let common = older
        .chars()
        .zip(newer.chars())
        .take_while(|(a, b)| a == b)
        .count();
    let shared = &older[..common];
    let ambiguous = run(&home, &["sessions", "export", shared]);
    assert_eq!(ambiguous.status.code(), Some(1));
    assert_eq!(ambiguous.stdout, b"");
    assert_eq!(
        text(&ambiguous.stderr),
        format!("miniagent: `{shared}` could be any of {newer}, {older}; give more of the id\n")
    );
}

#[test]
fn unknown_sessions_fail_with_one_line() {
    let home = TempDir::new();
    let list = run(&home, &["sessions", "list"]);
    assert_eq!(list.status.code(), Some(0));
    assert_eq!(list.stdout, b"");
    assert!(
        text(&list.stderr).starts_with("no sessions recorded yet"),
        "{}",
        text(&list.stderr)
    );

    let sessions = home.join("sessions");
    for args in [
        vec!["sessions", "show", "20990101"],
        vec!["sessions", "export", "20990101", "--format", "json"],
        vec!["replay", "--headless", "20990101"],
    ] {
        let output = run(&home, &args);
        assert_eq!(output.status.code(), Some(1), "{args:?}");
        assert_eq!(output.stdout, b"", "{args:?}");
        assert_eq!(
            text(&output.stderr),
            format!(
                "miniagent: no session `20990101` in {}; `miniagent sessions list` shows them\n",
                sessions.display()
            ),
            "{args:?}"
        );
    }

    let missing = home.join("gone.jsonl");
    let missing = missing.to_str().expect("utf-8 path");
    let output = run(&home, &["replay", "--headless", missing]);
    assert_eq!(output.status.code(), Some(1));
    assert_eq!(
        text(&output.stderr),
        format!("miniagent: no session log at {missing}\n")
    );

    let not_a_log = home.write("notes.jsonl", "{\"a\": 1}\n");
    let output = run(
        &home,
        &["replay", "--headless", not_a_log.to_str().expect("utf-8 path")],
    );
    assert_eq!(output.status.code(), Some(1));
    let stderr = text(&output.stderr);
    assert!(
        stderr.starts_with("miniagent: ") && stderr.contains("is not a miniagent session log"),
        "{stderr}"
    );
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
}

#[test]
fn a_headless_replay_prints_what_exec_printed() {
    let (home, workspace) = (TempDir::new(), TempDir::new());
    let server = ScriptedServer::start_blocking(tool_turn());
    let live = exec(&home, &workspace, &server, "say hi");
    let logs = session_logs(&home);
    let log = logs[0].to_str().expect("utf-8 path");

    let replay = run(&home, &["replay", "--headless", log]);
    assert_eq!(replay.status.code(), Some(0), "{}", text(&replay.stderr));
    assert_eq!(text(&replay.stdout), "It printed hi.\n");
    assert_eq!(text(&replay.stdout), text(&live.stdout));
    let stderr = text(&replay.stderr);
    assert!(stderr.contains("\n✓ bash echo hi ("), "{stderr}");
    // The replay adds the prompt of each turn; the rest is exec's progress, line for line
    // (without the line exec ends with, naming the session to continue).
    let live_stderr = text(&live.stderr);
    let (progress, last) = live_stderr.trim_end().rsplit_once('\n').unwrap();
    assert!(last.starts_with("session "), "{live_stderr}");
    assert_eq!(stderr.replace("› say hi\n", ""), format!("{progress}\n"));

    // The same by id, with the server gone: no model is needed.
    drop(server);
    let by_id = run(&home, &["replay", "--headless", &session_id(&logs[0])]);
    assert_eq!(by_id.status.code(), Some(0), "{}", text(&by_id.stderr));
    assert_eq!(by_id.stdout, replay.stdout);
}

/// `sessions` takes only the options that apply to it: none of the agent's.
#[test]
fn sessions_help_lists_only_options_that_apply() {
    let home = TempDir::new();
    for args in [
        vec!["sessions", "--help"],
        vec!["sessions", "list", "--help"],
        vec!["sessions", "show", "--help"],
        vec!["sessions", "export", "--help"],
        vec!["sessions", "rm", "--help"],
        vec!["sessions", "prune", "--help"],
    ] {
        let output = run(&home, &args);
        assert_eq!(
            output.status.code(),
            Some(0),
            "{args:?}: {}",
            text(&output.stderr)
        );
        let help = text(&output.stdout);
        for foreign in [
            "--approval",
            "--sandbox",
            "--theme",
            "--max-steps",
            "--model",
            "--base-url",
        ] {
            assert!(!help.contains(foreign), "{args:?} lists {foreign}:\n{help}");
        }
    }
    // The agent's own commands still take them, before or after the command's name.
    let exec_help = text(&run(&home, &["exec", "--help"]).stdout);
    assert!(
        exec_help.contains("--approval") && exec_help.contains("--max-steps"),
        "{exec_help}"
    );
    let top_help = text(&run(&home, &["--help"]).stdout);
    assert!(
        top_help.contains("--theme") && top_help.contains("--approval"),
        "{top_help}"
    );
}

/// A session whose only turn failed before any reply is left out of the list (with a
/// note saying so); `--all` shows it, marked.
#[test]
fn sessions_list_hides_failed_empty_sessions() {
    let (home, workspace) = (TempDir::new(), TempDir::new());
    let server = ScriptedServer::start_blocking(vec![Reply::text("Hello.")]);
    exec(&home, &workspace, &server, "a good one");
    std::thread::sleep(std::time::Duration::from_millis(1100));
    home.write("config.toml", "[retry]\nmax_retries = 0\n");
    let port = support::closed_port();
    let failed = miniagent(&home)
        .arg("--workspace")
        .arg(workspace.path())
        .args([
            "--base-url",
            &format!("http://127.0.0.1:{port}"),
            "exec",
            "a failed one",
        ])
        .output()
        .unwrap();
    assert_eq!(failed.status.code(), Some(1));
    assert_eq!(session_logs(&home).len(), 2);

    let listed = run(&home, &["sessions", "list"]);
    let stdout = text(&listed.stdout);
    assert_eq!(stdout.lines().count(), 2, "{stdout}");
    assert!(
        stdout.contains("a good one") && !stdout.contains("a failed one"),
        "{stdout}"
    );
    assert!(
        text(&listed.stderr)
            .contains("1 session with no reply is not listed; `sessions list --all` shows it"),
        "{}",
        text(&listed.stderr)
    );
    let all = text(&run(&home, &["sessions", "list", "--all"]).stdout);
    assert_eq!(all.lines().count(), 3, "{all}");
    let failed_line = all.lines().find(|l| l.contains("a failed one")).unwrap();
    assert!(failed_line.contains("(no reply)"), "{all}");
}

/// `sessions rm ID` removes a session's files and says what it removed; a session a
/// running miniagent holds is never removed.
#[test]
fn sessions_rm_removes_one_session_but_never_one_in_use() {
    let (home, workspace) = (TempDir::new(), TempDir::new());
    let (logs, _) = two_sessions(&home, &workspace);
    let (older, newer) = (session_id(&logs[0]), session_id(&logs[1]));

    // A running miniagent holds its session's lock.
    let held = std::fs::File::open(&logs[1]).unwrap();
    use std::os::fd::AsRawFd;
    assert_eq!(
        unsafe { libc::flock(held.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) },
        0
    );
    let refused = run(&home, &["sessions", "rm", &newer]);
    assert_eq!(refused.status.code(), Some(1));
    assert_eq!(
        text(&refused.stderr),
        format!("miniagent: session {newer} is in use by a running miniagent; it was not removed\n")
    );
    assert!(logs[1].exists());
    drop(held);

    let removed = run(&home, &["sessions", "rm", &older]);
    assert_eq!(removed.status.code(), Some(0), "{}", text(&removed.stderr));
    let said = text(&removed.stdout);
    assert!(said.starts_with(&format!("removed session {older} (")), "{said}");
    assert!(said.contains("say hi"), "{said}");
    assert!(!logs[0].exists());
    assert!(!logs[0].with_extension("info.json").exists());
    assert_eq!(session_logs(&home), vec![logs[1].clone()]);
    let again = run(&home, &["sessions", "rm", &older]);
    assert_eq!(again.status.code(), Some(1));
}

/// `sessions prune --older-than` lists what it removes; without a terminal it asks for
/// `--yes` first, and `--dry-run` only lists.
#[test]
fn sessions_prune_removes_sessions_older_than_a_duration() {
    let (home, workspace) = (TempDir::new(), TempDir::new());
    let (logs, _) = two_sessions(&home, &workspace);
    let (older, newer) = (session_id(&logs[0]), session_id(&logs[1]));
    let forty_days_ago = std::time::SystemTime::now() - std::time::Duration::from_secs(40 * 86_400);
    std::fs::File::options()
        .write(true)
        .open(&logs[0])
        .unwrap()
        .set_modified(forty_days_ago)
        .unwrap();

    let bad = run(&home, &["sessions", "prune", "--older-than", "soon"]);
    assert_eq!(bad.status.code(), Some(1));
    assert!(
        text(&bad.stderr).contains("`soon` is not a duration"),
        "{}",
        text(&bad.stderr)
    );

    let dry = run(&home, &["sessions", "prune", "--older-than", "30d", "--dry-run"]);
    assert_eq!(dry.status.code(), Some(0), "{}", text(&dry.stderr));
    let listed = text(&dry.stdout);
    assert!(listed.contains(&older) && !listed.contains(&newer), "{listed}");
    assert!(listed.contains("would be removed"), "{listed}");
    assert!(logs[0].exists());

    let unasked = run(&home, &["sessions", "prune", "--older-than", "30d"]);
    assert_eq!(unasked.status.code(), Some(1));
    assert!(
        text(&unasked.stderr).contains("add --yes to remove them without being asked"),
        "{}",
        text(&unasked.stderr)
    );
    assert!(logs[0].exists());

    let pruned = run(&home, &["sessions", "prune", "--older-than", "30d", "--yes"]);
    assert_eq!(pruned.status.code(), Some(0), "{}", text(&pruned.stderr));
    let said = text(&pruned.stdout);
    assert!(said.contains(&format!("removed session {older} (")), "{said}");
    assert!(said.ends_with("removed 1 session; 1 kept\n"), "{said}");
    assert_eq!(session_logs(&home), vec![logs[1].clone()]);
}

/// The text of each message of a request to the Anthropic endpoint, with its role.
fn conversation(request: &RecordedRequest) -> Vec<(String, String)> {
    request.body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|message| {
            let content = &message["content"];
            let text = match content.as_str() {
                Some(text) => text.to_string(),
                None => content
                    .as_array()
                    .unwrap()
                    .iter()
                    .filter_map(|block| block["text"].as_str())
                    .collect::<Vec<_>>()
                    .join(""),
            };
            (message["role"].as_str().unwrap().to_string(), text)
        })
        .collect()
}

/// `exec --continue PROMPT` and `exec PROMPT --resume` continue this workspace's newest
/// session; `exec --resume "turn 2"` (the prompt taken as the id) and a missing prompt say
/// what to type, and send nothing.
#[test]
fn exec_continues_the_newest_session_and_says_what_to_type_when_the_prompt_is_taken_as_an_id() {
    let server = ScriptedServer::start_blocking(vec![
        Reply::text("First answer."),
        Reply::text("Second answer."),
        Reply::text("Third answer."),
    ]);
    let (home, workspace) = (TempDir::new(), TempDir::new());
    exec(&home, &workspace, &server, "first task");
    let second = exec_args(&home, &workspace, &server, &["--continue", "turn 2"]);
    assert_eq!(text(&second.stdout), "Second answer.\n");
    let third = exec_args(&home, &workspace, &server, &["turn 3", "--resume"]);
    assert_eq!(text(&third.stdout), "Third answer.\n");
    let said = |role: &str, text: &str| (role.to_string(), text.to_string());
    assert_eq!(
        conversation(&server.requests()[2]),
        vec![
            said("user", "first task"),
            said("assistant", "First answer."),
            said("user", "turn 2"),
            said("assistant", "Second answer."),
            said("user", "turn 3"),
        ]
    );
    let logs = session_logs(&home);
    assert_eq!(logs.len(), 1, "{logs:?}");
    let id = session_id(&logs[0]);

    let taken_as_id = support::cli::exec(&home, &workspace, &server, &["--resume", "turn 2"]);
    assert_eq!(taken_as_id.status.code(), Some(1));
    assert_eq!(
        text(&taken_as_id.stderr),
        "miniagent: `turn 2` is not a recorded session, and exec has no prompt: --resume takes a session id before the prompt (`miniagent sessions list` shows them), as in miniagent exec --resume ID \"PROMPT\"; to continue this workspace's newest session: miniagent exec --continue \"turn 2\"\n"
    );
    let no_prompt = support::cli::exec(&home, &workspace, &server, &["--resume", &id]);
    assert_eq!(no_prompt.status.code(), Some(1));
    assert_eq!(
        text(&no_prompt.stderr),
        format!("miniagent: exec has no prompt: miniagent exec --resume {id} \"PROMPT\"\n")
    );
    let elsewhere = TempDir::new();
    let nothing_here = support::cli::exec(&home, &elsewhere, &server, &["--continue", "hi"]);
    assert_eq!(nothing_here.status.code(), Some(1));
    assert_eq!(
        text(&nothing_here.stderr),
        format!(
            "miniagent: no session was recorded in {}; `miniagent sessions list` shows them all\n",
            elsewhere.path().canonicalize().unwrap().display()
        )
    );
    assert_eq!(server.requests().len(), 3, "nothing more was sent");
}

fn exec_args(home: &TempDir, workspace: &TempDir, server: &ScriptedServer, args: &[&str]) -> Output {
    let output = support::cli::exec(home, workspace, server, args);
    assert_eq!(output.status.code(), Some(0), "{}", text(&output.stderr));
    output
}

/// A session recorded with one model, continued with a second and then a third, says it
/// was recorded with the first (and last ran with the second), not that the second
/// recorded it; the third is the one the request names.
#[test]
fn a_resumed_session_names_the_model_it_was_recorded_with() {
    let server = ScriptedServer::start_blocking(vec![
        Reply::text("One."),
        Reply::text("Two."),
        Reply::text("Three."),
    ]);
    let (home, workspace) = (TempDir::new(), TempDir::new());
    exec_args(&home, &workspace, &server, &["--model", "model-one", "first"]);
    let notes = |output: &Output| -> Vec<String> {
        text(&output.stderr)
            .lines()
            .filter(|l| l.starts_with("note: this session"))
            .map(str::to_string)
            .collect()
    };
    let second = exec_args(
        &home,
        &workspace,
        &server,
        &["--model", "model-two", "--continue", "second"],
    );
    assert_eq!(
        notes(&second),
        [
            "note: this session was recorded with model-one (anthropic); it continues with model-two (anthropic)"
        ]
    );
    let third = exec_args(
        &home,
        &workspace,
        &server,
        &["--model", "model-three", "--continue", "third"],
    );
    assert_eq!(
        notes(&third),
        [
            "note: this session was recorded with model-one (anthropic) and last ran with model-two (anthropic); it continues with model-three (anthropic)"
        ]
    );
    let models: Vec<String> = server
        .requests()
        .iter()
        .map(|request| request.body["model"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(models, ["model-one", "model-two", "model-three"]);
}
