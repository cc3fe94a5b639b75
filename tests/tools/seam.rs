//! What front ends learn through the protocol alone: typed approval requests, the
//! argument summary of a requested call, the files a finished call changed, and the
//! notes and recorded results the agent answers ops with.

use super::{Harness, run_calls, test_config};
use crate::support::harness::is_turn_end;
use crate::support::harness::session_log_in;
use crate::support::{Reply, ScriptedServer, TempDir};
use miniagent_core::config::{ApprovalMode, Provider};
use miniagent_protocol::{ApprovalRequest, CallEffect, NoteInfo, RecordedOutput, TextChange};
use miniagent_protocol::{Decision, Event, Op};
use pretty_assertions::assert_eq;
use serde_json::json;

/// The requests the agent asked about, in order, with their plain-text previews.
fn asked(events: &[Event]) -> Vec<(String, Option<ApprovalRequest>, String)> {
    events
        .iter()
        .filter_map(|event| match event {
            Event::ApprovalRequested {
                id, request, preview, ..
            } => Some((id.clone(), request.clone(), preview.clone())),
            _ => None,
        })
        .collect()
}

#[tokio::test]
async fn approval_requests_say_what_is_asked_about_in_typed_fields() {
    let server = ScriptedServer::start(vec![
        Reply::tool(
            "w1",
            "write_file",
            json!({"path": "new.txt", "content": "hello\n"}).to_string(),
        ),
        Reply::tool("b1", "bash", json!({"command": "ls -la 'my dir'"}).to_string()),
        Reply::tool(
            "b2",
            "bash",
            json!({"command": "ls | wc -l > count.txt", "timeout": 7}).to_string(),
        ),
        Reply::tool(
            "b3",
            "bash",
            json!({"command": "sleep 1", "run_in_background": true}).to_string(),
        ),
        Reply::text("done"),
    ])
    .await;
    let mut config = test_config(Provider::Anthropic, &server);
    config.agent.approval = ApprovalMode::Ask;
    let mut agent = Harness::start(config);
    let root = agent.workspace.path().display().to_string();
    agent.send(Op::UserInput { text: "go".into() });
    for id in ["w1", "b1", "b2", "b3"] {
        agent
            .wait_for(|e| matches!(e, Event::ApprovalRequested { id: asked, .. } if asked == id))
            .await;
        let decision = match id {
            "w1" => Decision::Approve,
            _ => Decision::Deny {
                reason: Some("not now".into()),
            },
        };
        agent.send(Op::Approval {
            id: id.into(),
            decision,
        });
    }
    agent.wait_for(is_turn_end).await;
    let asked = asked(&agent.events);
    let command =
        |command: &str, argv: &[&str], timeout_s: Option<u64>, compound: bool| ApprovalRequest::Command {
            command: command.into(),
            program: argv.first().map(|word| word.to_string()),
            argv: argv.iter().map(|word| word.to_string()).collect(),
            cwd: root.clone(),
            timeout_s,
            compound,
        };
    assert_eq!(
        asked
            .iter()
            .map(|(id, request, _)| (id.as_str(), request.clone()))
            .collect::<Vec<_>>(),
        vec![
            (
                "w1",
                Some(ApprovalRequest::Edit {
                    path: "new.txt".into(),
                    summary: "create new.txt (6 bytes)".into(),
                    diff: "--- a/new.txt\n+++ b/new.txt\n@@ -0,0 +1 @@\n+hello\n".into(),
                    abs_path: format!("{root}/new.txt"),
                    change: Some(TextChange {
                        old_text: None,
                        new_text: "hello\n".into()
                    }),
                })
            ),
            (
                "b1",
                Some(command(
                    "ls -la 'my dir'",
                    &["ls", "-la", "my dir"],
                    Some(120),
                    false
                ))
            ),
            ("b2", Some(command("ls | wc -l > count.txt", &[], Some(7), true))),
            ("b3", Some(command("sleep 1", &["sleep", "1"], None, false))),
        ]
    );
    // Front ends that print get the same request as text.
    assert_eq!(
        asked[0].2,
        "create new.txt (6 bytes)\n--- a/new.txt\n+++ b/new.txt\n@@ -0,0 +1 @@\n+hello\n"
    );
    assert_eq!(asked[3].2, format!("$ sleep 1\n(in {root}, in the background)"));
    // What the model was sent: the approved write ran, the denied commands did not.
    let requests = server.requests();
    let result = |index: usize| {
        requests[index].body["messages"]
            .as_array()
            .unwrap()
            .last()
            .unwrap()["content"][0]["content"]
            .clone()
    };
    assert_eq!(result(1), json!("wrote 6 bytes to new.txt (new file)"));
    assert!(result(2).as_str().unwrap().contains("not now"), "{}", result(2));
    assert_eq!(
        std::fs::read_to_string(agent.workspace.join("new.txt")).unwrap(),
        "hello\n"
    );
    assert!(!agent.workspace.join("count.txt").exists());
}

#[tokio::test]
async fn a_change_to_miniagents_own_settings_says_why_it_asks_apart_from_the_request() {
    let server = ScriptedServer::start(vec![
        Reply::tool(
            "w1",
            "write_file",
            json!({"path": ".miniagent/config.toml", "content": "x = 1\n"}).to_string(),
        ),
        Reply::text("done"),
    ])
    .await;
    let mut config = test_config(Provider::Anthropic, &server);
    config.agent.approval = ApprovalMode::FullAuto;
    let mut agent = Harness::start(config);
    agent.send(Op::UserInput { text: "go".into() });
    let Event::ApprovalRequested {
        request,
        notes,
        preview,
        ..
    } = agent
        .wait_for(|e| matches!(e, Event::ApprovalRequested { .. }))
        .await
    else {
        unreachable!()
    };
    agent.send(Op::Approval {
        id: "w1".into(),
        decision: Decision::Deny { reason: None },
    });
    agent.wait_for(is_turn_end).await;
    assert_eq!(notes.len(), 1, "{notes:?}");
    assert!(notes[0].contains("miniagent"), "{notes:?}");
    let Some(ApprovalRequest::Edit { path, summary, .. }) = request else {
        panic!("not an edit: {request:?}")
    };
    assert_eq!(
        (path.as_str(), summary.as_str()),
        (
            ".miniagent/config.toml",
            "create .miniagent/config.toml (6 bytes)"
        )
    );
    assert!(
        preview.starts_with(&format!("{}\n\ncreate .miniagent", notes[0])),
        "{preview}"
    );
}

#[tokio::test]
async fn finished_calls_name_the_files_they_changed_and_requests_carry_a_summary() {
    let calls = [
        ("write_file", json!({"path": "a.txt", "content": "one\n"})),
        (
            "edit_file",
            json!({"path": "a.txt", "old_str": "one", "new_str": "two"}),
        ),
        (
            "edit_file",
            json!({"path": "a.txt", "old_str": "absent", "new_str": "x"}),
        ),
        ("read_file", json!({"path": "a.txt"})),
        ("bash", json!({"command": "echo hi > b.txt\necho more"})),
    ];
    let (received, agent) = run_calls(|_| {}, &calls).await;
    let root = agent.workspace.path().to_path_buf();
    let effects: Vec<Vec<CallEffect>> = agent
        .events
        .iter()
        .filter_map(|event| match event {
            Event::ToolCallFinished { effects, .. } => Some(effects.clone()),
            _ => None,
        })
        .collect();
    let changed = |old: Option<&str>, new: &str| {
        vec![CallEffect::FileChanged {
            path: root.join("a.txt").display().to_string(),
            change: Some(TextChange {
                old_text: old.map(str::to_string),
                new_text: new.into(),
            }),
        }]
    };
    // A failed edit changed nothing; what `bash` changed is found by looking at the
    // workspace before and after it (checkpoints).
    assert_eq!(
        effects,
        vec![
            changed(None, "one\n"),
            changed(Some("one\n"), "two\n"),
            vec![],
            vec![],
            vec![CallEffect::FileChanged {
                path: root.join("b.txt").display().to_string(),
                change: Some(TextChange {
                    old_text: None,
                    new_text: "hi\n".into(),
                }),
            }]
        ]
    );
    assert!(
        received[2].1,
        "the edit that matched nothing failed: {:?}",
        received[2]
    );
    assert_eq!(
        received[1],
        (
            "edited a.txt: 1 replacement\n--- a/a.txt\n+++ b/a.txt\n@@ -1 +1 @@\n-one\n+two\n".into(),
            false
        )
    );
    let summaries: Vec<&str> = agent
        .events
        .iter()
        .filter_map(|event| match event {
            Event::ToolCallRequested { summary, .. } => Some(summary.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(summaries, ["a.txt", "a.txt", "a.txt", "a.txt", "echo hi > b.txt"]);
}

#[tokio::test]
async fn notes_and_recorded_results_are_answered_by_ops() {
    let server = ScriptedServer::start(vec![
        Reply::tool(
            "n1",
            "record_note",
            json!({"content": "the build needs make", "category": "build"}).to_string(),
        ),
        Reply::tool("b1", "bash", json!({"command": "seq 1 3"}).to_string()),
        Reply::text("done"),
    ])
    .await;
    let data = TempDir::new();
    let log = session_log_in(&data);
    let log_path = log.path().expect("recorded");
    let mut agent = Harness::start_recorded(test_config(Provider::Anthropic, &server), log);
    agent.turn("remember and count").await;

    agent.send(Op::ReadNotes);
    let Event::Notes { notes, error } = agent.wait_for(|e| matches!(e, Event::Notes { .. })).await else {
        unreachable!()
    };
    assert_eq!(error, None);
    assert_eq!(notes.len(), 1, "{notes:?}");
    let NoteInfo {
        category,
        content,
        timestamp,
    } = &notes[0];
    assert_eq!(
        (category.as_str(), content.as_str()),
        ("build", "the build needs make")
    );
    assert!(!timestamp.is_empty());

    agent.send(Op::RecordedCall { id: "b1".into() });
    let answer = agent.wait_for(|e| matches!(e, Event::RecordedCall { .. })).await;
    let sent = server.requests()[2].body["messages"]
        .as_array()
        .unwrap()
        .last()
        .unwrap()["content"][0]["content"]
        .as_str()
        .unwrap()
        .to_string();
    assert_eq!(
        answer,
        Event::RecordedCall {
            id: "b1".into(),
            result: Some(sent),
            output: Some(RecordedOutput {
                head: "1\n2\n3\n".into(),
                tail: String::new(),
                dropped: 0,
            }),
            error: None,
        }
    );
    // A call the log does not hold is said to be missing, not an error.
    agent.send(Op::RecordedCall { id: "nope".into() });
    let answer = agent.wait_for(|e| matches!(e, Event::RecordedCall { .. })).await;
    assert_eq!(
        answer,
        Event::RecordedCall {
            id: "nope".into(),
            result: None,
            output: None,
            error: None,
        }
    );
    // The answers are about the log, not part of it.
    agent.send(Op::Shutdown);
    agent.wait_for(|e| matches!(e, Event::ShutdownComplete)).await;
    let written = std::fs::read_to_string(&log_path).unwrap();
    assert!(!written.contains("\"type\":\"notes\"") && !written.contains("\"type\":\"recorded_call\""));
}

#[tokio::test]
async fn an_unrecorded_session_says_it_has_no_log_to_read_back_from() {
    let server = ScriptedServer::start(vec![]).await;
    let mut agent = Harness::start(test_config(Provider::Anthropic, &server));
    agent.send(Op::RecordedCall { id: "b1".into() });
    let Event::RecordedCall { result, error, .. } =
        agent.wait_for(|e| matches!(e, Event::RecordedCall { .. })).await
    else {
        unreachable!()
    };
    assert_eq!(
        (result, error.as_deref()),
        (None, Some("this session is not recorded"))
    );
    // No notes file yet: an empty list, no error.
    agent.send(Op::ReadNotes);
    let notes = agent.wait_for(|e| matches!(e, Event::Notes { .. })).await;
    assert_eq!(
        notes,
        Event::Notes {
            notes: vec![],
            error: None
        }
    );
    // A replay's control, sent to a live agent, is answered with a notice, not ignored.
    agent.send(Op::Playback {
        control: miniagent_protocol::PlaybackControl::Toggle,
    });
    let said = agent.wait_for(|e| matches!(e, Event::Notice { .. })).await;
    assert!(
        matches!(&said, Event::Notice { message } if message.contains("not a replay")),
        "{said:?}"
    );
}
