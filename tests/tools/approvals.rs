//! Approvals end to end: the previews of edits and commands, what "for the session"
//! remembers, aborting, and refusing covered calls for the rest of the session.

use pretty_assertions::assert_eq;

use super::*;

#[tokio::test]
async fn approvals_preview_diffs_remember_commands_and_can_abort() {
    let server = ScriptedServer::start(vec![
        Reply::tool(
            "w1",
            "write_file",
            json!({"path": "a.txt", "content": "new\n"}).to_string(),
        ),
        Reply::tool(
            "e1",
            "edit_file",
            json!({"path": "a.txt", "old_str": "nothing-like-this", "new_str": "x"}).to_string(),
        ),
        Reply::tool("b1", "bash", json!({"command": "ls -a"}).to_string()),
        Reply::tool("b2", "bash", json!({"command": "ls -l"}).to_string()),
        Reply::tool("b3", "bash", json!({"command": "ls; touch chained"}).to_string()),
        Reply::text("first turn done"),
    ])
    .await;
    let mut config = test_config(Provider::Anthropic, &server);
    config.agent.approval = ApprovalMode::Ask;
    let mut agent = Harness::start(config);
    agent.workspace.write("a.txt", "old\n");
    agent.send(Op::UserInput { text: "go".into() });

    let Event::ApprovalRequested { preview, .. } = agent
        .wait_for(|e| matches!(e, Event::ApprovalRequested { .. }))
        .await
    else {
        unreachable!()
    };
    assert_eq!(
        preview,
        "replace a.txt (4 bytes)\n--- a/a.txt\n+++ b/a.txt\n@@ -1 +1 @@\n-old\n+new\n"
    );
    agent.send(Op::Approval {
        id: "w1".into(),
        decision: Decision::Approve,
    });
    // The edit cannot match: answered without asking. Then bash asks; remember `ls`.
    let Event::ApprovalRequested { id, preview, .. } = agent
        .wait_for(|e| matches!(e, Event::ApprovalRequested { .. }))
        .await
    else {
        unreachable!()
    };
    assert_eq!(id, "b1");
    assert!(
        preview.starts_with("$ ls -a\n(in ") && preview.ends_with(", timeout 120 s)"),
        "{preview}"
    );
    agent.send(Op::Approval {
        id: "b1".into(),
        decision: Decision::ApproveForSession,
    });
    let rules = agent
        .wait_for(|e| matches!(e, Event::ApprovalRulesChanged { .. }))
        .await;
    assert_eq!(
        rules,
        Event::ApprovalRulesChanged {
            rules: vec![ApprovalRule::Command { program: "ls".into() }],
            refused: Vec::new(),
        }
    );
    // `ls -l` runs without asking; `ls; touch chained` is not a simple `ls` and asks.
    let Event::ApprovalRequested { id, .. } = agent
        .wait_for(|e| matches!(e, Event::ApprovalRequested { .. }))
        .await
    else {
        unreachable!()
    };
    assert_eq!(id, "b3");
    agent.send(Op::Approval {
        id: "b3".into(),
        decision: Decision::Deny { reason: None },
    });
    agent.wait_for(|e| matches!(e, Event::TurnComplete { .. })).await;

    assert_eq!(
        std::fs::read_to_string(agent.workspace.join("a.txt")).unwrap(),
        "new\n"
    );
    assert!(!agent.workspace.join("chained").exists());
    let asked: Vec<String> = agent
        .events
        .iter()
        .filter_map(|e| match e {
            Event::ApprovalRequested { id, .. } => Some(id.clone()),
            _ => None,
        })
        .collect();
    assert_eq!(asked, vec!["w1", "b1", "b3"]);
    let edit_result = server.requests()[2].body["messages"]
        .as_array()
        .unwrap()
        .last()
        .unwrap()["content"][0]
        .clone();
    assert!(
        edit_result["content"]
            .as_str()
            .unwrap()
            .starts_with("`old_str` was not found in a.txt")
    );

    // Revoking the rule makes `ls` ask again; aborting at that approval ends the turn.
    agent.send(Op::RevokeApproval {
        rule: ApprovalRule::Command { program: "ls".into() },
    });
    assert_eq!(
        agent
            .wait_for(|e| matches!(e, Event::ApprovalRulesChanged { .. }))
            .await,
        Event::ApprovalRulesChanged {
            rules: vec![],
            refused: Vec::new(),
        }
    );
    server.push(Reply::tool("b4", "bash", json!({"command": "ls"}).to_string()));
    agent.send(Op::UserInput { text: "again".into() });
    agent
        .wait_for(|e| matches!(e, Event::ApprovalRequested { id, .. } if id == "b4"))
        .await;
    agent.send(Op::Approval {
        id: "b4".into(),
        decision: Decision::Abort,
    });
    let aborted = agent.wait_for(|e| matches!(e, Event::TurnAborted { .. })).await;
    assert_eq!(
        aborted,
        Event::TurnAborted {
            reason: "you stopped the turn at an approval".into()
        }
    );
    server.push(Reply::text("ok"));
    agent.turn("fine").await;
    let last = server.requests().last().unwrap().body.clone();
    assert_valid_anthropic(&last);
    assert!(
        last["messages"]
            .to_string()
            .contains("the person stopped the turn before this call ran")
    );
}

/// Waits for call `id`'s question; the rule it offers to remember.
async fn asked(agent: &mut Harness, id: &'static str) -> Option<ApprovalRule> {
    let Event::ApprovalRequested { session_rule, .. } = agent
        .wait_for(move |e| matches!(e, Event::ApprovalRequested { id: asked, .. } if asked == id))
        .await
    else {
        unreachable!()
    };
    session_rule
}

#[tokio::test]
async fn refusing_for_the_session_refuses_covered_calls_without_asking_until_revoked() {
    let bash = |id: &str, command: &str| Reply::tool(id, "bash", json!({ "command": command }).to_string());
    let server = ScriptedServer::start(vec![
        bash("b1", "ls -a"),
        bash("b2", "ls -l"),
        bash("b3", "pwd"),
        Reply::text("first turn done"),
        bash("b4", "ls"),
        Reply::text("second turn done"),
    ])
    .await;
    let mut config = test_config(Provider::Anthropic, &server);
    config.agent.approval = ApprovalMode::Ask;
    let mut agent = Harness::start(config);
    agent.send(Op::UserInput { text: "go".into() });
    assert_eq!(
        asked(&mut agent, "b1").await,
        Some(ApprovalRule::Command { program: "ls".into() })
    );
    agent.send(Op::Approval {
        id: "b1".into(),
        decision: Decision::DenyForSession {
            reason: Some("not here".into()),
        },
    });
    assert_eq!(
        agent
            .wait_for(|e| matches!(e, Event::ApprovalRulesChanged { .. }))
            .await,
        Event::ApprovalRulesChanged {
            rules: vec![],
            refused: vec![ApprovalRule::Command { program: "ls".into() }],
        }
    );
    // `ls -l` is covered: refused without a question. `pwd` is not: it asks.
    asked(&mut agent, "b3").await;
    agent.send(Op::Approval {
        id: "b3".into(),
        decision: Decision::Deny { reason: None },
    });
    agent.wait_for(|e| matches!(e, Event::TurnComplete { .. })).await;
    let outcomes: Vec<(String, ToolOutcome)> = agent
        .events
        .iter()
        .filter_map(|e| match e {
            Event::ToolCallFinished { id, outcome, .. } => Some((id.clone(), *outcome)),
            _ => None,
        })
        .collect();
    assert_eq!(
        outcomes,
        vec![
            ("b1".to_string(), ToolOutcome::Denied),
            ("b2".to_string(), ToolOutcome::Refused),
            ("b3".to_string(), ToolOutcome::Denied),
        ]
    );
    let requests = server.requests();
    assert_eq!(
        results_sent(&requests[3].body),
        vec![
            (
                "b1".to_string(),
                "the person refused this call: not here. Do not retry it; adjust the plan or ask them.".to_string()
            ),
            (
                "b2".to_string(),
                "refused: the person refused command `ls …` for the rest of this session, so this call was not run and they were not asked; do not try it again, ask them if it is needed".to_string()
            ),
            (
                "b3".to_string(),
                "the person refused this call. Do not retry it; adjust the plan or ask them.".to_string()
            ),
        ]
    );

    // Revoking the refusal makes `ls` ask again.
    agent.send(Op::RevokeApproval {
        rule: ApprovalRule::Command { program: "ls".into() },
    });
    assert_eq!(
        agent
            .wait_for(|e| matches!(e, Event::ApprovalRulesChanged { .. }))
            .await,
        Event::ApprovalRulesChanged {
            rules: vec![],
            refused: vec![],
        }
    );
    agent.send(Op::UserInput { text: "again".into() });
    asked(&mut agent, "b4").await;
    agent.send(Op::Approval {
        id: "b4".into(),
        decision: Decision::Approve,
    });
    agent.wait_for(|e| matches!(e, Event::TurnComplete { .. })).await;
    assert_eq!(server.requests().len(), 6);
}
