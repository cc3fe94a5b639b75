//! The built-in tools end to end through the agent loop, on real files in temp dirs:
//! each assertion is on the result the model received in the next recorded request.
#![allow(clippy::unwrap_used, clippy::expect_used)] // A test fails by panicking.

use crate::support;

use std::time::{Duration, Instant};

use miniagent_core::config::{ApprovalMode, Provider};
use miniagent_protocol::{
    ApprovalRule, Decision, Event, Op, PlanEntry, PlanPriority, PlanStatus, ToolOutcome,
};
use pretty_assertions::assert_eq;
use serde_json::{Value, json};
use support::harness::{Harness, test_config};
use support::validate::assert_valid_anthropic;
use support::*;

#[path = "tools/approvals.rs"]
mod approvals;

/// What the model received for one call: (content, is_error).
type Received = (String, bool);

/// Runs the given calls (one model step each) in a full-auto session whose workspace was
/// prepared by `setup`, and returns what the model received for each.
async fn run_calls(setup: impl FnOnce(&TempDir), calls: &[(&str, Value)]) -> (Vec<Received>, Harness) {
    let mut script: Vec<Reply> = calls
        .iter()
        .enumerate()
        .map(|(i, (name, args))| Reply::tool(format!("toolu_{i}"), *name, args.to_string()))
        .collect();
    script.push(Reply::text("done"));
    let server = ScriptedServer::start(script).await;
    let mut agent = Harness::start(test_config(Provider::Anthropic, &server));
    setup(&agent.workspace);
    let events = agent.turn("do it").await;
    assert_eq!(
        events.last(),
        Some(&Event::TurnComplete { text: "done".into() }),
        "{events:#?}"
    );
    let received = server.requests()[1..]
        .iter()
        .map(|request| {
            assert_valid_anthropic(&request.body);
            let last = request.body["messages"]
                .as_array()
                .unwrap()
                .last()
                .unwrap()
                .clone();
            let block = &last["content"][0];
            (
                block["content"].as_str().unwrap().to_string(),
                block["is_error"].as_bool().unwrap(),
            )
        })
        .collect();
    (received, agent)
}

async fn one_call(setup: impl FnOnce(&TempDir), name: &str, args: Value) -> (Received, Harness) {
    let (mut received, agent) = run_calls(setup, &[(name, args)]).await;
    (received.remove(0), agent)
}

#[tokio::test]
async fn read_file_numbers_lines_and_explains_failures() {
    let (received, _agent) = run_calls(
        |ws| {
            ws.write("src/main.rs", "fn main() {\n    println!(\"hi\");\n}\n");
            ws.write("blob.bin", b"\x00\x01\x02binary");
            ws.write("latin1.txt", b"na\xefve\n");
        },
        &[
            ("read_file", json!({"path": "src/main.rs"})),
            (
                "read_file",
                json!({"path": "src/main.rs", "offset": 2, "limit": 1}),
            ),
            ("read_file", json!({"path": "src"})),
            ("read_file", json!({"path": "blob.bin"})),
            ("read_file", json!({"path": "latin1.txt"})),
            ("read_file", json!({"path": "missing.txt"})),
            ("read_file", json!({"path": "/etc/hostname"})),
            ("read_file", json!({"path": "src/main.rs", "limit": "all"})),
        ],
    )
    .await;
    assert_eq!(
        received[0],
        (
            "     1|fn main() {\n     2|    println!(\"hi\");\n     3|}".into(),
            false
        )
    );
    assert_eq!(received[1], ("     2|    println!(\"hi\");".into(), false));
    assert_eq!(
        received[2],
        (
            "src is a folder with 1 entries:\nmain.rs (34 bytes)".into(),
            false
        )
    );
    assert_eq!(
        received[3],
        (
            "blob.bin is a binary file (9 bytes); read_file shows text only".into(),
            true
        )
    );
    assert_eq!(
        received[4],
        (
            "     1|na\u{FFFD}ve\n[note: the file is not valid UTF-8; invalid bytes are shown as \u{FFFD}]"
                .into(),
            false
        )
    );
    assert_eq!(received[5], ("file not found: missing.txt".into(), true));
    assert!(received[6].1);
    assert!(
        received[6]
            .0
            .starts_with("`/etc/hostname` resolves to /etc/hostname, which is outside the workspace")
    );
    assert_eq!(
        received[7],
        (
            "invalid arguments for `read_file`: `limit` must be an integer, got string".into(),
            true
        )
    );
}

#[tokio::test]
async fn read_file_caps_huge_files_at_the_token_limit() {
    let ((content, is_error), _agent) = one_call(
        |ws| {
            let text: String = (1..=100_000)
                .map(|n| format!("this is line number {n}\n"))
                .collect();
            ws.write("big.txt", text);
        },
        "read_file",
        json!({"path": "big.txt"}),
    )
    .await;
    assert!(!is_error);
    assert!(content.starts_with("     1|this is line number 1\n"));
    assert!(content.ends_with("100000|this is line number 100000"));
    assert!(content.contains("cut to stay within 32000 tokens; read them with offset and limit"));
    assert!(content.len() < 32_000 * 4 + 1000, "{} bytes", content.len());
}

#[tokio::test]
async fn write_file_creates_folders_and_stays_inside_the_workspace() {
    let outside = TempDir::new();
    let outside_target = outside.join("target.txt");
    let absolute_escape = outside.join("absolute.txt");
    let (received, agent) = run_calls(
        |ws| std::os::unix::fs::symlink(outside.path(), ws.join("link-out")).unwrap(),
        &[
            (
                "write_file",
                json!({"path": "deep/new/file.txt", "content": "hello\n"}),
            ),
            ("write_file", json!({"path": "../escape.txt", "content": "x"})),
            (
                "write_file",
                json!({"path": absolute_escape.to_str().unwrap(), "content": "x"}),
            ),
            (
                "write_file",
                json!({"path": "link-out/target.txt", "content": "x"}),
            ),
            ("write_file", json!({"path": "deep", "content": "x"})),
        ],
    )
    .await;
    let ws = agent.workspace.path().canonicalize().unwrap();
    assert_eq!(
        received[0],
        ("wrote 6 bytes to deep/new/file.txt (new file)".into(), false)
    );
    assert_eq!(
        std::fs::read_to_string(ws.join("deep/new/file.txt")).unwrap(),
        "hello\n"
    );
    let escape = ws.parent().unwrap().join("escape.txt");
    assert_eq!(
        received[1],
        (
            format!(
                "`../escape.txt` resolves to {}, which is outside the workspace {}; file tools only work inside it",
                escape.display(),
                ws.display()
            ),
            true
        )
    );
    assert!(!escape.exists());
    assert!(
        received[2].1
            && received[2]
                .0
                .contains(&format!("resolves to {}", absolute_escape.display()))
    );
    assert!(!absolute_escape.exists());
    let real_target = outside.path().canonicalize().unwrap().join("target.txt");
    assert!(
        received[3].1
            && received[3]
                .0
                .contains(&format!("resolves to {}", real_target.display())),
        "{:?}",
        received[3]
    );
    assert!(!outside_target.exists());
    assert_eq!(received[4], ("deep is a folder, not a file".into(), true));
    // No temporary files were left behind by the atomic writes.
    let names: Vec<String> = std::fs::read_dir(ws.join("deep/new"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(names, vec!["file.txt"]);
}

#[tokio::test]
async fn edit_file_with_two_matches_changes_nothing_and_names_both_lines() {
    let original = "alpha\nbeta\nalpha\ngamma\n";
    let (received, agent) = run_calls(
        |ws| {
            ws.write("notes.txt", original);
        },
        &[
            (
                "edit_file",
                json!({"path": "notes.txt", "old_str": "alpha", "new_str": "omega"}),
            ),
            (
                "edit_file",
                json!({"path": "notes.txt", "old_str": "gamma", "new_str": "delta"}),
            ),
            (
                "edit_file",
                json!({"path": "notes.txt", "old_str": "zeta", "new_str": "eta"}),
            ),
            (
                "edit_file",
                json!({"path": "notes.txt", "old_str": "alpha", "new_str": "omega", "replace_all": true}),
            ),
        ],
    )
    .await;
    assert_eq!(
        received[0],
        (
            "`old_str` matches 2 times in notes.txt (lines 1, 3); nothing was changed. Include more surrounding text to make it unique, or set replace_all to true.".into(),
            true
        )
    );
    assert_eq!(
        received[1],
        (
            "edited notes.txt: 1 replacement\n--- a/notes.txt\n+++ b/notes.txt\n@@ -1,4 +1,4 @@\n alpha\n beta\n alpha\n-gamma\n+delta\n".into(),
            false
        )
    );
    assert!(
        received[2].1
            && received[2]
                .0
                .starts_with("`old_str` was not found in notes.txt; nothing was changed.")
    );
    assert!(received[3].0.starts_with("edited notes.txt: 2 replacements\n"));
    assert_eq!(
        std::fs::read_to_string(agent.workspace.join("notes.txt")).unwrap(),
        "omega\nbeta\nomega\ndelta\n"
    );
}

/// Processes whose working directory is inside `dir` (the commands a test started there).
fn processes_in(dir: &std::path::Path) -> Vec<String> {
    let dir = dir.canonicalize().unwrap();
    std::fs::read_dir("/proc")
        .unwrap()
        .filter_map(Result::ok)
        .filter(|entry| {
            entry
                .file_name()
                .to_string_lossy()
                .chars()
                .all(|c| c.is_ascii_digit())
        })
        .filter(|entry| std::fs::read_link(entry.path().join("cwd")).is_ok_and(|cwd| cwd.starts_with(&dir)))
        .filter_map(|entry| std::fs::read_to_string(entry.path().join("cmdline")).ok())
        .map(|cmdline| cmdline.replace('\0', " "))
        .collect()
}

#[tokio::test]
async fn bash_timeout_kills_the_whole_group() {
    let started = Instant::now();
    let ((content, is_error), agent) = one_call(
        |_| {},
        "bash",
        json!({"command": "sleep 100 & sleep 100; echo never", "timeout": 1}),
    )
    .await;
    assert!(
        started.elapsed() < Duration::from_secs(3),
        "took {:?}",
        started.elapsed()
    );
    assert!(is_error);
    assert!(content.starts_with("[timed out after 1 s"), "{content}");
    assert!(!content.contains("never"));
    // TERM reaches every sleep of the group at once; allow the KILL grace in case.
    let deadline = Instant::now() + Duration::from_secs(3);
    loop {
        let left = processes_in(agent.workspace.path());
        if left.is_empty() {
            break;
        }
        assert!(Instant::now() < deadline, "still running: {left:?}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

#[tokio::test]
async fn five_megabytes_of_output_reach_the_model_as_a_preview_of_the_saved_whole_and_the_front_end_streamed()
{
    let ((content, is_error), agent) = one_call(
        |_| {},
        "bash",
        json!({"command": "head -c 5000000 /dev/zero | tr '\\0' 'a'; echo; echo the-end"}),
    )
    .await;
    assert!(!is_error);
    // The model gets the ends and the file that holds all of it.
    assert!(content.len() < 3_000, "{} bytes reached the model", content.len());
    let saved = agent.data.join("results/unrecorded/toolu_0.txt");
    assert!(
        content.starts_with(&format!(
            "[the whole result is 5000023 bytes, 3 lines, too long for the context: it is saved in {}.",
            saved.display()
        )),
        "{}",
        &content[..300]
    );
    assert!(content.contains("\naaaa"));
    assert!(
        content.ends_with("the-end\n[exit code: 0]"),
        "{}",
        &content[content.len() - 60..]
    );
    let whole = std::fs::read_to_string(&saved).unwrap();
    assert_eq!(
        whole,
        format!("{}\nthe-end\n[exit code: 0]", "a".repeat(5_000_000))
    );
    use std::os::unix::fs::PermissionsExt;
    assert_eq!(
        std::fs::metadata(&saved).unwrap().permissions().mode() & 0o777,
        0o600
    );
    let streamed: usize = agent
        .events
        .iter()
        .filter_map(|e| match e {
            Event::ToolOutputDelta { delta, .. } => Some(delta.len()),
            _ => None,
        })
        .sum();
    assert_eq!(streamed, 5_000_000 + 1 + "the-end\n".len());
}

#[tokio::test]
async fn background_jobs_report_new_output_and_can_be_killed() {
    let (received, agent) = run_calls(
        |_| {},
        &[
            (
                "bash",
                json!({"command": "echo one; sleep 0.2; echo two; echo three", "run_in_background": true}),
            ),
            ("bash", json!({"command": "sleep 0.6"})),
            ("bash_output", json!({"bash_id": "bash_1"})),
            ("bash_output", json!({"bash_id": "bash_1"})),
            (
                "bash",
                json!({"command": "echo tick; exec sleep 60", "run_in_background": true}),
            ),
            ("bash", json!({"command": "sleep 0.3"})),
            ("bash_kill", json!({"bash_id": "bash_2"})),
            ("bash_output", json!({"bash_id": "bash_9"})),
        ],
    )
    .await;
    assert_eq!(
        received[0],
        (
            "started background job bash_1: echo one; sleep 0.2; echo two; echo three\nRead its output with bash_output {\"bash_id\": \"bash_1\"}; stop it with bash_kill.".into(),
            false
        )
    );
    assert_eq!(
        received[2],
        ("[job bash_1: exited 0]\none\ntwo\nthree".into(), false)
    );
    assert_eq!(
        received[3],
        ("[job bash_1: exited 0]\n(no new output)".into(), false)
    );
    assert_eq!(
        received[6],
        ("[job bash_2: killed (signal 15)]\ntick".into(), false)
    );
    assert_eq!(
        received[7],
        (
            "no background job `bash_9` in this run: its jobs are bash_1, bash_2 (jobs end when miniagent exits)"
                .into(),
            true
        )
    );
    assert!(processes_in(agent.workspace.path()).is_empty());
}

#[tokio::test]
async fn notes_are_recorded_and_recalled() {
    let (received, agent) = run_calls(
        |_| {},
        &[
            (
                "record_note",
                json!({"content": "the build uses cargo", "category": "project"}),
            ),
            ("record_note", json!({"content": "step 1 done"})),
            ("recall_notes", json!({"category": "project"})),
            ("recall_notes", json!({})),
        ],
    )
    .await;
    assert_eq!(
        received[0],
        ("noted under \"project\" (1 notes in all)".into(), false)
    );
    assert!(
        received[2].0.starts_with("1. [project] the build uses cargo ("),
        "{:?}",
        received[2]
    );
    assert_eq!(received[3].0.lines().count(), 2);
    let file: Value =
        serde_json::from_str(&std::fs::read_to_string(agent.workspace.join(".agent_memory.json")).unwrap())
            .unwrap();
    assert_eq!(file[1]["category"], "general");
    assert_eq!(file[1]["content"], "step 1 done");
    assert!(file[1]["timestamp"].as_str().unwrap().ends_with('Z'));
}

/// The `ToolCallFinished` of call `id` among the events seen so far: (duration, preview).
fn finished_call(agent: &Harness, id: &str) -> (u64, String) {
    agent
        .events
        .iter()
        .find_map(|event| match event {
            Event::ToolCallFinished {
                id: finished,
                duration_ms,
                output_preview,
                ..
            } if finished == id => Some((*duration_ms, output_preview.clone())),
            _ => None,
        })
        .unwrap_or_else(|| panic!("no finished event for {id}: {:#?}", agent.events))
}

#[tokio::test]
async fn a_duration_is_the_run_time_and_a_failure_says_how_it_failed() {
    let failing = "echo starting; printf 'Traceback (most recent call last):\\n  File \"<string>\", line 1\\nNameError: name x is not defined\\n' >&2; exit 3";
    let server = ScriptedServer::start(vec![
        Reply::tool("b1", "bash", json!({"command": "true"}).to_string()),
        Reply::tool("b2", "bash", json!({"command": failing}).to_string()),
        Reply::tool(
            "w1",
            "write_file",
            json!({"path": "x.txt", "content": "x"}).to_string(),
        ),
        Reply::tool(
            "w2",
            "write_file",
            json!({"path": "y.txt", "content": "y"}).to_string(),
        ),
        Reply::text("done"),
    ])
    .await;
    let mut config = test_config(Provider::Anthropic, &server);
    config.agent.approval = ApprovalMode::Ask;
    let mut agent = Harness::start(config);
    agent.send(Op::UserInput { text: "go".into() });

    // The person takes a while to answer; the command itself takes no time.
    agent
        .wait_for(|e| matches!(e, Event::ApprovalRequested { id, .. } if id == "b1"))
        .await;
    tokio::time::sleep(Duration::from_millis(1500)).await;
    let approved = Instant::now();
    agent.send(Op::Approval {
        id: "b1".into(),
        decision: Decision::Approve,
    });
    agent
        .wait_for(|e| matches!(e, Event::ToolCallFinished { id, .. } if id == "b1"))
        .await;
    let since_approval = u64::try_from(approved.elapsed().as_millis()).unwrap();
    let (duration_ms, _) = finished_call(&agent, "b1");
    assert!(
        duration_ms <= since_approval,
        "the duration ({duration_ms} ms) counts the wait for approval (approved {since_approval} ms before it finished)"
    );

    // A failure's one line says how it ended and what went wrong.
    agent
        .wait_for(|e| matches!(e, Event::ApprovalRequested { id, .. } if id == "b2"))
        .await;
    agent.send(Op::Approval {
        id: "b2".into(),
        decision: Decision::Approve,
    });
    // A refusal's one line carries the person's reason, or says who refused.
    agent
        .wait_for(|e| matches!(e, Event::ApprovalRequested { id, .. } if id == "w1"))
        .await;
    agent.send(Op::Approval {
        id: "w1".into(),
        decision: Decision::Deny {
            reason: Some("not in this repo".into()),
        },
    });
    agent
        .wait_for(|e| matches!(e, Event::ApprovalRequested { id, .. } if id == "w2"))
        .await;
    agent.send(Op::Approval {
        id: "w2".into(),
        decision: Decision::Deny { reason: None },
    });
    agent.wait_for(|e| matches!(e, Event::TurnComplete { .. })).await;
    assert_eq!(
        finished_call(&agent, "b2").1,
        "exit code 3 · NameError: name x is not defined"
    );
    assert_eq!(
        (finished_call(&agent, "w1"), finished_call(&agent, "w2")),
        (
            (0, "denied by you: not in this repo".to_string()),
            (0, "denied by you".to_string())
        )
    );
    // The model still gets the whole result, and the reason.
    let requests = server.requests();
    let failed = requests[2].body["messages"].to_string();
    assert!(
        failed.contains("starting") && failed.contains("[exit code: 3]"),
        "{failed}"
    );
    let denied = requests[3].body["messages"].to_string();
    assert!(
        denied.contains("the person refused this call: not in this repo"),
        "{denied}"
    );
}

/// Command output reaches the model without escape sequences (colours, titles, cursor
/// moves cost tokens and mean nothing to it) and with a progress bar's carriage returns
/// resolved to what a terminal would show; the live output keeps them for the workbench
/// to colour. A file's own bytes are kept: an edit must be able to quote them.
#[tokio::test]
async fn escape_sequences_are_stripped_from_command_output_the_model_receives() {
    let (received, agent) = run_calls(
        |workspace| {
            workspace.write("coloured.txt", "\x1b[1mbold\x1b[0m\n");
        },
        &[
            (
                "bash",
                json!({"command": "printf '\\033]0;title\\007\\033[31mred\\033[0m plain\\n10%%\\r50%%\\r\\033[Kdone\\r\\n\\033[2Jlast\\n' ; printf '\\033[33mwarn\\033[0m\\n' >&2"}),
            ),
            ("read_file", json!({"path": "coloured.txt"})),
        ],
    )
    .await;
    assert_eq!(
        received[0],
        (
            "red plain\ndone\nlast\n[stderr]\nwarn\n[exit code: 0]".to_string(),
            false
        )
    );
    assert_eq!(received[1], ("     1|\x1b[1mbold\x1b[0m".to_string(), false));
    let finished: Vec<&str> = agent
        .events
        .iter()
        .filter_map(|e| match e {
            Event::ToolCallFinished { name, output, .. } if name == "bash" => Some(output.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(finished, vec![received[0].0.as_str()]);
    let streamed: String = agent
        .events
        .iter()
        .filter_map(|e| match e {
            Event::ToolOutputDelta { delta, .. } => Some(delta.as_str()),
            _ => None,
        })
        .collect();
    assert!(streamed.contains("\x1b[31mred\x1b[0m"), "{streamed:?}");
}

#[path = "tools/seam.rs"]
mod seam;

/// What the model received for each tool result in the request after the calls: (id,
/// content), in order.
fn results_sent(body: &Value) -> Vec<(String, String)> {
    body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|message| message["content"].as_array().cloned().unwrap_or_default())
        .filter(|block| block["type"] == "tool_result")
        .map(|block| {
            (
                block["tool_use_id"].as_str().unwrap().to_string(),
                block["content"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

/// A turn that plans, works, then updates its plan: each `update_plan` call's plan
/// reaches the front end before the call's end, and the model gets a one-line result
/// for each in the request after it.
#[tokio::test]
async fn update_plan_is_declared_reported_as_a_plan_and_answered_in_a_line() {
    let first = json!([
        {"content": "read the parser", "status": "in_progress", "priority": "high"},
        {"content": "fix the bug", "status": "pending"},
        {"content": "add a test", "status": "pending"},
    ]);
    let second = json!([
        {"content": "read the parser", "status": "completed", "priority": "high", "note": "the bug is in lex()"},
        {"content": "fix the bug", "status": "in_progress"},
        {"content": "add a test", "status": "pending"},
    ]);
    let server = ScriptedServer::start(vec![
        Reply::tool("p1", "update_plan", json!({ "entries": first }).to_string()),
        Reply::tool("p2", "update_plan", json!({ "entries": second }).to_string()),
        Reply::text("planned"),
    ])
    .await;
    // Read-only: it runs without a question in the mode that asks most.
    let mut config = test_config(Provider::Anthropic, &server);
    config.agent.approval = ApprovalMode::Ask;
    let mut agent = Harness::start(config);
    let events = agent.turn("plan it").await;
    let requests = server.requests();
    let declared = requests[0].body["tools"]
        .as_array()
        .unwrap()
        .iter()
        .find(|tool| tool["name"] == "update_plan")
        .cloned()
        .unwrap();
    let step = declared["input_schema"]["properties"]["entries"]["items"]["properties"].clone();
    assert_eq!(
        (step["status"]["enum"].clone(), step["note"]["type"].clone()),
        (json!(["pending", "in_progress", "completed"]), json!("string"))
    );
    let entry = |content: &str, status, priority, note: Option<&str>| PlanEntry {
        content: content.into(),
        status,
        priority,
        note: note.map(str::to_string),
    };
    let plans = [
        vec![
            entry(
                "read the parser",
                PlanStatus::InProgress,
                Some(PlanPriority::High),
                None,
            ),
            entry("fix the bug", PlanStatus::Pending, None, None),
            entry("add a test", PlanStatus::Pending, None, None),
        ],
        vec![
            entry(
                "read the parser",
                PlanStatus::Completed,
                Some(PlanPriority::High),
                Some("the bug is in lex()"),
            ),
            entry("fix the bug", PlanStatus::InProgress, None, None),
            entry("add a test", PlanStatus::Pending, None, None),
        ],
    ];
    // Each plan, then its call's end; no question on the way.
    let around: Vec<String> = events
        .iter()
        .filter_map(|e| match e {
            Event::ToolCallRequested { id, kind, .. } => Some(format!("requested {id} {kind:?}")),
            Event::ApprovalRequested { id, .. } => Some(format!("asked {id}")),
            Event::PlanUpdated { entries } => Some(format!(
                "plan {}",
                plans
                    .iter()
                    .position(|plan| plan == entries)
                    .map_or("?".into(), |i| i.to_string())
            )),
            Event::ToolCallFinished { id, ok, .. } => Some(format!("finished {id} {ok}")),
            _ => None,
        })
        .collect();
    assert_eq!(
        around,
        vec![
            "requested p1 Think",
            "plan 0",
            "finished p1 true",
            "requested p2 Think",
            "plan 1",
            "finished p2 true",
        ]
    );
    // What the model got back for each, in the request after it (the second carries both).
    assert_eq!(
        (results_sent(&requests[1].body), results_sent(&requests[2].body)),
        (
            vec![(
                "p1".to_string(),
                "plan updated: 3 entries, 1 in progress, 0 completed".to_string()
            )],
            vec![
                (
                    "p1".to_string(),
                    "plan updated: 3 entries, 1 in progress, 0 completed".to_string()
                ),
                (
                    "p2".to_string(),
                    "plan updated: 3 entries, 1 in progress, 1 completed".to_string()
                ),
            ]
        )
    );
    // The second call's arguments went back to the model as sent, the note with them.
    let sent_back: Vec<Value> = requests[2].body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|message| message["content"].as_array().cloned().unwrap_or_default())
        .filter(|block| block["type"] == "tool_use")
        .map(|block| block["input"].clone())
        .collect();
    assert_eq!(
        sent_back,
        vec![json!({ "entries": first }), json!({ "entries": second })]
    );
    assert_valid_anthropic(&requests[2].body);
}
