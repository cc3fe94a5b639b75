//! Project context end to end, on the real binary against the scripted server: the
//! instruction files (AGENTS.md and its fallbacks) in the system prompt that was sent, and
//! prompt commands expanded into the message that was sent, the workspace's only after
//! trust.
#![allow(clippy::unwrap_used, clippy::expect_used)] // A test fails by panicking.

use crate::support;

use pretty_assertions::assert_eq;
use serde_json::Value;
use support::cli::{self, text};
use support::*;

/// A block's or a string's text, blocks joined.
fn text_of(value: &Value) -> String {
    match value {
        Value::String(text) => text.clone(),
        Value::Array(blocks) => blocks
            .iter()
            .filter_map(|block| block["text"].as_str())
            .collect::<Vec<_>>()
            .join(""),
        _ => String::new(),
    }
}

/// The system prompt and the first message of the one request the run made.
fn sent(server: &ScriptedServer) -> (String, String) {
    let requests = server.requests();
    assert_eq!(requests.len(), 1, "one model call");
    let body = &requests[0].body;
    (text_of(&body["system"]), text_of(&body["messages"][0]["content"]))
}

/// The person's file (config folder), the repository root's `AGENTS.md`, a sub-folder's
/// `CLAUDE.md` (the fallback: it has no `AGENTS.md`; its `GEMINI.md` comes after in the
/// list and is not read) go into the system prompt in that order, each under its path;
/// a file above the repository root does not. Exec names them on stderr.
#[test]
fn instruction_files_reach_the_system_prompt_top_down() {
    let server = ScriptedServer::start_blocking(vec![Reply::text("done")]);
    let home = TempDir::new();
    let outer = TempDir::new();
    home.write("AGENTS.md", "Answer in English.\n");
    outer.write("AGENTS.md", "Above the repository: never read.\n");
    std::fs::create_dir_all(outer.join("repo/.git")).unwrap();
    outer.write("repo/AGENTS.md", "Run cargo test before you say done.\n");
    outer.write(
        "repo/crates/CLAUDE.md",
        "Crates use thiserror at their edges.\x1b[2J\n",
    );
    outer.write("repo/crates/GEMINI.md", "Not read: CLAUDE.md comes first.\n");
    let workspace = std::fs::canonicalize(outer.join("repo/crates")).unwrap();
    let root = workspace.parent().unwrap().to_path_buf();
    let output = cli::miniagent(&home)
        .arg("--workspace")
        .arg(&workspace)
        .args([
            "--base-url",
            &server.anthropic_base_url(),
            "--model",
            "scripted-model",
        ])
        .args(["exec", "hello"])
        .output()
        .unwrap();
    assert!(output.status.success(), "{}", text(&output.stderr));
    let (system, message) = sent(&server);
    assert_eq!(message, "hello");
    let user_file = home.join("AGENTS.md");
    let section = system
        .split_once("\n\n## Project Instructions\n\n")
        .map(|(_, section)| section)
        .expect("the instructions section");
    assert_eq!(
        section,
        format!(
            "The person and the project wrote these instruction files for you. Each governs the folder it is in and the folders under it; where they differ, a deeper folder's file is more specific and weighs more, and the person's own requests in the conversation weigh most.\n\
             \n### {} (the person's own, for every project)\n\nAnswer in English.\n\
             \n### {}\n\nRun cargo test before you say done.\n\
             \n### {}\n\nCrates use thiserror at their edges.\n",
            user_file.display(),
            root.join("AGENTS.md").display(),
            workspace.join("CLAUDE.md").display(),
        )
    );
    let stderr = text(&output.stderr);
    let named = format!(
        "instructions: {}, {}, {}",
        user_file.display(),
        root.join("AGENTS.md").display(),
        workspace.join("CLAUDE.md").display()
    );
    assert!(stderr.lines().any(|line| line == named), "{stderr}");
    // The session log records them with the session.
    let log = std::fs::read_to_string(&cli::session_logs(&home)[0]).unwrap();
    let configured = log
        .lines()
        .filter_map(|line| serde_json::from_str::<Value>(line).ok())
        .find_map(|record| find_configured(&record))
        .expect("a session_configured record");
    let file = |path: std::path::PathBuf, bytes: usize, user: bool| {
        let mut file = serde_json::json!({"path": path.display().to_string(), "bytes": bytes});
        if user {
            file["user"] = Value::Bool(true);
        }
        file
    };
    assert_eq!(
        configured["instruction_files"],
        serde_json::json!([
            file(user_file.clone(), "Answer in English.\n".len(), true),
            file(
                root.join("AGENTS.md"),
                "Run cargo test before you say done.\n".len(),
                false
            ),
            file(
                workspace.join("CLAUDE.md"),
                "Crates use thiserror at their edges.\n".len(),
                false
            ),
        ])
    );
}

/// The `session_configured` event somewhere in a log record.
fn find_configured(value: &Value) -> Option<Value> {
    match value {
        Value::Object(map) if map.get("type").and_then(Value::as_str) == Some("session_configured") => {
            Some(value.clone())
        }
        Value::Object(map) => map.values().find_map(find_configured),
        _ => None,
    }
}

/// `/git:commit` (the person's `commands/git/commit.md`) sends its text with `$1` and
/// `$ARGUMENTS` put in, quotes honoured; the output says nothing of a missing command.
#[test]
fn a_prompt_command_sends_its_expanded_text() {
    let server = ScriptedServer::start_blocking(vec![Reply::text("committed")]);
    let home = TempDir::new();
    let workspace = TempDir::new();
    home.write(
        "commands/git/commit.md",
        "---\ndescription: Commit the staged work\nargument-hint: MESSAGE\n---\nCommit with the message \"$1\". All I said: $ARGUMENTS\n",
    );
    let output = cli::exec(&home, &workspace, &server, &["/git:commit 'fix the parser' now"]);
    assert!(output.status.success(), "{}", text(&output.stderr));
    assert_eq!(text(&output.stdout), "committed\n");
    let (_, message) = sent(&server);
    assert_eq!(
        message,
        "Commit with the message \"fix the parser\". All I said: 'fix the parser' now"
    );
}

/// A workspace's `.miniagent/commands/` is not used before the workspace is trusted:
/// the message goes as written and a note says so; trusted, its text is sent.
#[test]
fn a_workspace_command_waits_for_trust() {
    let home = TempDir::new();
    let workspace = TempDir::new();
    workspace.write(
        ".miniagent/commands/deploy.md",
        "Deploy the $1 build and report.\n",
    );

    let server = ScriptedServer::start_blocking(vec![Reply::text("ok")]);
    let output = cli::exec(&home, &workspace, &server, &["/deploy staging"]);
    assert!(output.status.success(), "{}", text(&output.stderr));
    assert_eq!(sent(&server).1, "/deploy staging");
    let stderr = text(&output.stderr);
    assert!(
        stderr.contains("note: there is no command /deploy: sent as written"),
        "{stderr}"
    );

    let server = ScriptedServer::start_blocking(vec![Reply::text("ok")]);
    let output = cli::exec(
        &home,
        &workspace,
        &server,
        &["--trust-workspace", "/deploy staging"],
    );
    assert!(output.status.success(), "{}", text(&output.stderr));
    assert_eq!(sent(&server).1, "Deploy the staging build and report.");
}

/// `/init` sends the built-in prompt (arguments after it), so the model writes the file
/// through the tools and their approvals like any turn.
#[test]
fn init_asks_the_model_for_an_agents_md() {
    let server = ScriptedServer::start_blocking(vec![Reply::text("written")]);
    let home = TempDir::new();
    let workspace = TempDir::new();
    let output = cli::exec(&home, &workspace, &server, &["/init stress the test commands"]);
    assert!(output.status.success(), "{}", text(&output.stderr));
    let (_, message) = sent(&server);
    assert!(
        message.starts_with("Write a starting `AGENTS.md` at the root of this workspace"),
        "{message}"
    );
    assert!(
        message.ends_with(
            "propose your additions as an edit to it instead.\n\nARGUMENTS: stress the test commands"
        ),
        "{message}"
    );
}

/// `/context`'s answer after a turn: each instruction file with its tokens, the history
/// by kind, the reserve and limits as configured; its prompt total is the gauge's figure,
/// and the instruction file is in the system prompt that was sent.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_context_report_counts_each_part() {
    use miniagent_core::config::Provider;
    use miniagent_protocol::{ContextReport, Event, Op};
    use support::harness::{Harness, test_config};

    let server = ScriptedServer::start(vec![Reply::text("hi")]).await;
    let workspace = TempDir::new();
    workspace.write("AGENTS.md", "Indent with tabs.\n");
    let agents = std::fs::canonicalize(workspace.join("AGENTS.md")).unwrap();
    let folders = TempDir::new();
    let mut config = test_config(Provider::Anthropic, &server);
    config.session.record = false;
    let (limit, window, reserve) = (
        config.agent.token_limit,
        config.model.context_window,
        u64::from(config.model.max_output_tokens),
    );
    let counter = miniagent_core::tokens::TokenCounter::new(config.agent.tokenizer);
    let mut agent = Harness::start_up(config, workspace, folders.path(), None);
    agent.send(Op::UserInput { text: "hello".into() });
    agent
        .wait_for(|event| matches!(event, Event::TurnComplete { .. }))
        .await;
    agent.send(Op::InspectContext);
    let Event::ContextReport { report } = agent
        .wait_for(|event| matches!(event, Event::ContextReport { .. }))
        .await
    else {
        unreachable!()
    };
    let gauge = agent
        .events
        .iter()
        .rev()
        .find_map(|event| match event {
            Event::TokenUsage { context_tokens, .. } => Some(*context_tokens),
            _ => None,
        })
        .unwrap();
    assert_eq!(report.prompt_tokens(), gauge);
    assert!(report.system_prompt_tokens > report.skills_tokens + 5);
    assert!(report.tools > 5 && report.tool_tokens > 0);
    let user = counter.count("hello");
    assert_eq!(
        report,
        ContextReport {
            instruction_files: vec![(agents.display().to_string(), counter.count("Indent with tabs.\n"))],
            history: report.history.clone(),
            messages: 2,
            summaries: 0,
            masked_results: 0,
            trimmed_results: 0,
            output_reserve: reserve,
            margin: miniagent_core::config::MARGIN_TOKENS,
            token_limit: limit,
            context_window: window,
            ..report.clone()
        }
    );
    let kinds: Vec<&str> = report.history.iter().map(|(kind, _)| kind.as_str()).collect();
    assert_eq!(kinds, vec!["assistant", "user"]);
    assert!(
        report
            .history
            .iter()
            .any(|(kind, tokens)| kind == "user" && *tokens >= user)
    );
    let sent = server.requests();
    assert!(
        text_of(&sent[0].body["system"])
            .contains(&format!("### {}\n\nIndent with tabs.\n", agents.display())),
        "{}",
        text_of(&sent[0].body["system"])
    );
}
