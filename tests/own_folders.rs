//! miniagent's own folders (config, data, logs) inside the workspace, and what start-up
//! does in the workspace: a file tool's write into them is asked about each time (so
//! `exec`, with nobody to ask, refuses it), a write that reaches them through a folder
//! swapped after the question is refused at the write, and temporary files a killed
//! writer left are swept when a session starts. Real binary or real start-up, the
//! scripted server.
#![allow(clippy::unwrap_used, clippy::expect_used)] // A test fails by panicking.

use crate::support;

use std::time::Duration;

use miniagent_core::config::{ApprovalMode, Provider};
use miniagent_protocol::{Decision, Event, Op};
use pretty_assertions::assert_eq;
use support::cli::{exec_command, text};
use support::harness::{Harness, is_turn_end, own_folders, test_config};
use support::{Reply, ScriptedServer, TempDir};

#[test]
fn a_write_into_the_config_folder_inside_the_workspace_is_asked_about_so_exec_refuses_it() {
    let server = ScriptedServer::start_blocking(vec![
        Reply::tool(
            "w1",
            "write_file",
            r#"{"path": "own/config/mcp.json", "content": "{\"mcpServers\": {}}"}"#,
        ),
        Reply::text("It was not allowed."),
    ]);
    let home = TempDir::new();
    let workspace = TempDir::new();
    let own = workspace.join("own");
    std::fs::create_dir_all(own.join("config")).unwrap();
    let mut command = exec_command(&home, &workspace, &server, &["add an MCP server"]);
    command.envs(own_folders(&own));
    let output = command.output().unwrap();
    assert_eq!(output.status.code(), Some(0), "{}", text(&output.stderr));
    assert!(!own.join("config/mcp.json").exists());
    // Full-auto runs every other write; this one is a question whatever the mode, and
    // exec refuses a question with the policy's reason.
    let target = workspace
        .path()
        .canonicalize()
        .unwrap()
        .join("own/config/mcp.json");
    let expected = format!(
        "refused: miniagent exec runs without a person to approve tool calls, and `write_file` needs approval here. Either the approval mode asks for it (--approval full-auto, or auto-edit for file edits, lets such calls run), or the call changes miniagent's own settings (.miniagent/ or the config folder), which is asked about in every mode and so never runs under exec. `write_file` would change {}, which holds miniagent's own settings (servers that run outside the sandbox, skills, trust, sessions); it needs your approval each time, whatever the approval mode.",
        target.display()
    );
    assert_eq!(
        server.last_block(1),
        serde_json::json!({
            "type": "tool_result",
            "tool_use_id": "w1",
            "content": expected,
            "is_error": true,
            "cache_control": {"type": "ephemeral"},
        })
    );
}

/// A session in `workspace`, with miniagent's folders under `workspace/own`, not
/// recorded (start-up would record it there).
fn start_in(workspace: TempDir, server: &ScriptedServer, approval: ApprovalMode) -> Harness {
    let mut config = test_config(Provider::Anthropic, server);
    config.agent.approval = approval;
    config.session.record = false;
    let own = workspace.join("own");
    Harness::start_up(config, workspace, &own, None)
}

/// The question was about a new folder; before the answer, that name became a link
/// into the config folder. The write the person approved must not land there.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_folder_swapped_into_the_config_folder_after_the_question_is_refused_at_the_write() {
    let server = ScriptedServer::start(vec![
        Reply::tool(
            "w1",
            "write_file",
            r#"{"path": "later/mcp.json", "content": "{\"mcpServers\": {}}"}"#,
        ),
        Reply::text("done"),
    ])
    .await;
    let workspace = TempDir::new();
    let config = workspace.join("own/config");
    std::fs::create_dir_all(&config).unwrap();
    let mut agent = start_in(workspace, &server, ApprovalMode::Ask);
    agent.send(Op::UserInput {
        text: "write it".into(),
    });
    let asked = agent
        .wait_for(|event| matches!(event, Event::ApprovalRequested { .. }))
        .await;
    let Event::ApprovalRequested { id, notes, .. } = asked else {
        unreachable!("waited for a question")
    };
    // An ordinary question (no note about miniagent's folders: the path was a new folder).
    assert_eq!((id.as_str(), notes), ("w1", Vec::new()));
    std::os::unix::fs::symlink(&config, agent.workspace.join("later")).unwrap();
    agent.send(Op::Approval {
        id,
        decision: Decision::Approve,
    });
    assert_eq!(
        agent.wait_for(is_turn_end).await,
        Event::TurnComplete { text: "done".into() }
    );
    assert!(!config.join("mcp.json").exists());
    let real = config.canonicalize().unwrap();
    assert_eq!(
        server.last_block(1),
        serde_json::json!({
            "type": "tool_result",
            "tool_use_id": "w1",
            "content": format!(
                "cannot write own/config/mcp.json: {}/mcp.json is in {}, which holds miniagent's own settings, and this call was not approved as changing them (a folder on the way changed after the check); nothing was written",
                real.display(),
                real.display()
            ),
            "is_error": true,
            "cache_control": {"type": "ephemeral"},
        })
    );
}

/// A killed miniagent's half-written file is removed when the next session starts in
/// the workspace (in the background: start-up does not wait for the sweep).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn starting_a_session_sweeps_temporary_files_a_killed_writer_left() {
    let server = ScriptedServer::start(vec![]).await;
    let workspace = TempDir::new();
    std::fs::create_dir_all(workspace.join("src")).unwrap();
    // PIDs above the kernel's maximum (4194304) can never be live.
    let stale = workspace.join("src/.main.rs.miniagent-99999999-0123abcd.tmp");
    std::fs::write(&stale, "half a fi").unwrap();
    std::fs::write(workspace.join("src/main.rs"), "fn main() {}\n").unwrap();
    let src = workspace.join("src");
    let _agent = start_in(workspace, &server, ApprovalMode::Ask);
    let deadline = tokio::time::Instant::now() + Duration::from_secs(60);
    while stale.exists() {
        assert!(
            tokio::time::Instant::now() < deadline,
            "{} was not removed",
            stale.display()
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let mut left: Vec<String> = std::fs::read_dir(&src)
        .unwrap()
        .map(|entry| entry.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    left.sort();
    assert_eq!(left, ["main.rs"]);
    assert_eq!(
        std::fs::read_to_string(src.join("main.rs")).unwrap(),
        "fn main() {}\n"
    );
}
