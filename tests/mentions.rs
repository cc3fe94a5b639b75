//! `@path` mentions in the person's message, end to end against the scripted server: the
//! file's text is in the request the model gets (capped, or a reference for a large
//! file), a path out of the workspace or into miniagent's own folders is refused with a
//! note, the attachments are recorded and go on in a resumed session, and `exec` takes
//! them in its prompt.
#![allow(clippy::unwrap_used, clippy::expect_used)] // A test fails by panicking.

use crate::support;

use miniagent_core::config::Provider;
use miniagent_protocol::{Attached, AttachedFile, Event, Op};
use pretty_assertions::assert_eq;
use serde_json::{Value, json};
use support::cli::{exec_command, session_logs, text};
use support::harness::{Harness, session_log_in, test_config};
use support::{Reply, ScriptedServer, TempDir};

fn block(text: &str) -> Value {
    json!({"type": "text", "text": text})
}

fn last_block(text: &str) -> Value {
    json!({"type": "text", "text": text, "cache_control": {"type": "ephemeral"}})
}

fn file(path: &str, bytes: u64, lines: Option<u64>, attached: Attached) -> AttachedFile {
    AttachedFile {
        path: path.into(),
        bytes,
        lines,
        attached,
    }
}

#[tokio::test]
async fn mentioned_files_go_with_the_message_capped_by_reference_or_refused_and_survive_resume() {
    let server = ScriptedServer::start(vec![Reply::text("read them"), Reply::text("still here")]).await;
    let data = TempDir::new();
    let mut agent = Harness::start_recorded(test_config(Provider::Anthropic, &server), session_log_in(&data));
    let ws = agent.workspace.path().to_path_buf();
    std::fs::create_dir_all(ws.join("src")).unwrap();
    std::fs::write(ws.join("src/main.rs"), "fn main() {\n    println!(\"hi\");\n}\n").unwrap();
    let long: String = (1..=500).map(|n| format!("row {n}\n")).collect();
    std::fs::write(ws.join("long file.txt"), &long).unwrap();
    std::fs::write(ws.join("huge.log"), "z".repeat(400 * 1024)).unwrap();
    std::fs::create_dir_all(ws.join(".miniagent")).unwrap();
    std::fs::write(ws.join(".miniagent/config.toml"), "[model]\n").unwrap();
    let outside = TempDir::new();
    std::fs::write(outside.join("secret.txt"), "do not send").unwrap();
    let secret = outside.path().canonicalize().unwrap().join("secret.txt");
    let prompt = format!(
        "look at @src/main.rs, @\"long file.txt\" and @huge.log; also @{} @.miniagent/config.toml @missing.rs me@example.com",
        secret.display()
    );

    let events = agent.turn(&prompt).await;

    let real_ws = ws.canonicalize().unwrap();
    let outside_reason = format!(
        "`{}` resolves to {}, which is outside the workspace {}; file tools only work inside it",
        secret.display(),
        secret.display(),
        real_ws.display()
    );
    let own_reason = "it is in miniagent's own folders (settings, sessions, logs), which are not attached";
    let first: String = (1..=400).map(|n| format!("row {n}\n")).collect();
    let expected_blocks = json!([
        block(&prompt),
        block("\n\n<file path=\"src/main.rs\" lines=\"3\">\nfn main() {\n    println!(\"hi\");\n}\n</file>"),
        block(&format!(
            "\n\n<file path=\"long file.txt\" lines=\"1-400\" of=\"500\">\n{}\n</file>\n[Only lines 1-400 of \"long file.txt\" (500 lines) were attached; read the rest with read_file (offset 401).]",
            first.trim_end()
        )),
        block(
            "\n\n[Attached by reference: \"huge.log\" (409600 bytes) is too large to include here; read the parts you need with read_file.]"
        ),
        block(&format!(
            "\n\n[@{} was not attached: {outside_reason}.]",
            secret.display()
        )),
        last_block(&format!(
            "\n\n[@.miniagent/config.toml was not attached: {own_reason}.]"
        )),
    ]);
    // What the model received: the person's words, then each file.
    assert_eq!(
        server.requests()[0].body["messages"],
        json!([{"role": "user", "content": expected_blocks}])
    );
    // What front ends were told, right after the turn started.
    let expected_files = vec![
        file("src/main.rs", 34, Some(3), Attached::Whole),
        file(
            "long file.txt",
            long.len() as u64,
            Some(500),
            Attached::Part { lines: 400 },
        ),
        file("huge.log", 400 * 1024, None, Attached::Reference),
        file(
            &secret.display().to_string(),
            0,
            None,
            Attached::Refused {
                reason: outside_reason.clone(),
            },
        ),
        file(
            ".miniagent/config.toml",
            0,
            None,
            Attached::Refused {
                reason: own_reason.into(),
            },
        ),
    ];
    let started = events
        .iter()
        .position(|event| matches!(event, Event::TurnStarted { .. }))
        .expect("the turn started");
    assert_eq!(
        events[started..started + 2],
        [
            Event::TurnStarted { text: prompt.clone() },
            Event::FilesAttached {
                files: expected_files.clone()
            },
        ]
    );
    agent.send(Op::Shutdown);
    agent.wait_for(|event| *event == Event::ShutdownComplete).await;

    // Resumed, the next request still carries the attachments; the workbench gets the
    // recorded event back for its chips.
    let log = session_logs(&data).pop().expect("the session was recorded");
    let mut resumed =
        Harness::start_recorded(test_config(Provider::Anthropic, &server), session_log_in(&data));
    resumed.send(Op::Resume { path: log });
    let restored = resumed
        .wait_for(|event| matches!(event, Event::HistoryRestored { .. }))
        .await;
    let Event::HistoryRestored { events } = restored else {
        unreachable!("waited for the restored history")
    };
    assert!(
        events.contains(&Event::FilesAttached {
            files: expected_files
        }),
        "{events:#?}"
    );
    resumed.turn("and now?").await;
    // (The first message keeps its cache mark: the previous request ended there.)
    assert_eq!(
        server.requests()[1].body["messages"],
        json!([
            {"role": "user", "content": expected_blocks},
            {"role": "assistant", "content": [block("read them")]},
            {"role": "user", "content": [last_block("and now?")]},
        ])
    );
}

#[test]
fn exec_attaches_mentions_in_its_prompt_and_says_so() {
    let server = ScriptedServer::start_blocking(vec![Reply::text("seen")]);
    let home = TempDir::new();
    let workspace = TempDir::new();
    std::fs::write(workspace.join("notes.md"), "# Notes\nremember the milk\n").unwrap();
    let output = exec_command(&home, &workspace, &server, &["summarize @notes.md"])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(0), "{}", text(&output.stderr));
    assert_eq!(
        server.requests()[0].body["messages"][0]["content"],
        json!([
            block("summarize @notes.md"),
            last_block("\n\n<file path=\"notes.md\" lines=\"2\">\n# Notes\nremember the milk\n</file>"),
        ])
    );
    assert!(
        text(&output.stderr).contains("attached: notes.md (2 lines)\n"),
        "{}",
        text(&output.stderr)
    );
}

/// A file a `[permissions]` rule keeps from `read_file` is not sent by a mention either:
/// a deny rule refuses it, an ask rule too (a mention is never asked about), each with
/// the rule named; a file no rule covers goes as before. (Full-auto: deny and ask rules
/// hold in every mode.)
#[test]
fn a_file_a_read_rule_denies_or_asks_about_is_not_attached() {
    let server = ScriptedServer::start_blocking(vec![Reply::text("seen")]);
    let home = TempDir::new();
    home.write(
        "config.toml",
        "[permissions]\ndeny = [\"read_file(**/.env)\"]\nask = [\"read_file(AGENTS.md)\"]\n",
    );
    let workspace = TempDir::new();
    workspace.write(".env", "API_KEY=supersecret\n");
    workspace.write("AGENTS.md", "be brief\n");
    workspace.write("notes.md", "milk\n");
    let output = exec_command(
        &home,
        &workspace,
        &server,
        &["look at @.env @AGENTS.md @notes.md"],
    )
    .output()
    .unwrap();
    assert_eq!(output.status.code(), Some(0), "{}", text(&output.stderr));
    let sent = &server.requests()[0].body["messages"][0]["content"];
    assert_eq!(
        sent,
        &json!([
            block("look at @.env @AGENTS.md @notes.md"),
            block(
                "\n\n[@.env was not attached: the deny rule `read_file(**/.env)` in your config refuses reading it.]"
            ),
            block(
                "\n\n[@AGENTS.md was not attached: the ask rule `read_file(AGENTS.md)` in your config asks before it is read: ask for it to be read instead.]"
            ),
            last_block("\n\n<file path=\"notes.md\" lines=\"1\">\nmilk\n</file>"),
        ])
    );
    assert!(!sent.to_string().contains("supersecret"));
}
