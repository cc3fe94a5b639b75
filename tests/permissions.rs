//! The `[permissions]` rules end to end: what a deny, ask or allow rule does to a call,
//! in `exec` (the binary, with the user's and a workspace's config files) and in the
//! library (ask mode, `A` at an approval saving a rule, `/approvals` removing one); each
//! checked on what the model was sent.

use pretty_assertions::assert_eq;

use crate::support::cli::{against, exec, text};
use crate::support::harness::{Harness, test_config};
use crate::support::{Reply, ScriptedServer, TempDir};
use miniagent_core::config::{ApprovalMode, PermissionSettings, Provider};
use miniagent_protocol::{Decision, Event, Op, PermanentRule, RuleList, RuleSource};

/// The result the model got for the call answered in request `n` (its content, whether
/// it is an error).
fn result_in(server: &ScriptedServer, n: usize) -> (String, bool) {
    let block = server.last_block(n);
    (
        block["content"].as_str().unwrap_or_default().to_string(),
        block["is_error"] == true,
    )
}

#[test]
fn a_deny_rule_in_the_users_config_refuses_in_full_auto_and_names_itself() {
    let server = ScriptedServer::start_blocking(vec![
        Reply::tool("t1", "bash", r#"{"command": "touch keep && rm -rf keep"}"#),
        Reply::tool("t2", "bash", r#"{"command": "touch other"}"#),
        Reply::text("done"),
    ]);
    let (home, workspace) = (TempDir::new(), TempDir::new());
    home.write("config.toml", "[permissions]\ndeny = [\"bash(rm -rf*)\"]\n");
    let output = exec(&home, &workspace, &server, &["clean up"]);
    assert_eq!(output.status.code(), Some(0), "{}", text(&output.stderr));
    assert_eq!(
        result_in(&server, 1),
        (
            "refused: the deny rule `bash(rm -rf*)` in your config refuses this call, in every approval mode; do not try it again or another way round, ask the person if it is needed".to_string(),
            true
        )
    );
    // Nothing of the refused line ran; a call no rule covers runs as full-auto says.
    assert!(!workspace.join("keep").exists());
    assert!(workspace.join("other").exists());
    assert_eq!(
        result_in(&server, 2),
        ("(no output)\n[exit code: 0]".to_string(), false)
    );
}

#[test]
fn a_bad_rule_stops_the_start_naming_the_file_and_the_pattern() {
    let server = ScriptedServer::start_blocking(vec![Reply::text("never")]);
    let (home, workspace) = (TempDir::new(), TempDir::new());
    home.write("config.toml", "[permissions]\nallow = [\"bash(git status\"]\n");
    let output = exec(&home, &workspace, &server, &["hi"]);
    assert_eq!(output.status.code(), Some(1), "{}", text(&output.stderr));
    assert!(
        text(&output.stderr).contains(&format!(
            "{}: key `permissions.allow`: `bash(git status` is not a rule: a `(` must be closed by a `)` at the end",
            home.join("config.toml").display()
        )),
        "{}",
        text(&output.stderr)
    );
    assert_eq!(server.request_count(), 0);
}

/// A workspace's rules count once it is trusted, its allow rules too (trusting it already
/// lets its MCP servers run programs outside the sandbox).
#[test]
fn a_workspaces_rules_apply_only_once_it_is_trusted() {
    let script = || {
        vec![
            Reply::tool("t1", "bash", r#"{"command": "touch made"}"#),
            Reply::tool("t2", "bash", r#"{"command": "rm -f made"}"#),
            Reply::text("done"),
        ]
    };
    let rules = "[permissions]\nallow = [\"bash(touch made)\"]\ndeny = [\"bash(rm *)\"]\n";
    // Untrusted: exec cannot ask, so in ask mode neither command runs; the deny rule is
    // not what refuses the second.
    let server = ScriptedServer::start_blocking(script());
    let (home, workspace) = (TempDir::new(), TempDir::new());
    workspace.write(".miniagent/config.toml", rules);
    let asking = |server: &ScriptedServer, trust: &[&str]| {
        against(&home, &workspace, server)
            .args(["exec", "--approval", "ask"])
            .args(trust)
            .arg("go")
            .output()
            .unwrap()
    };
    let output = asking(&server, &[]);
    assert_eq!(output.status.code(), Some(0), "{}", text(&output.stderr));
    let (first, _) = result_in(&server, 1);
    let (second, _) = result_in(&server, 2);
    assert!(
        first.starts_with("refused: miniagent exec runs without a person"),
        "{first}"
    );
    assert!(
        second.starts_with("refused: miniagent exec runs without a person"),
        "{second}"
    );
    assert!(!workspace.join("made").exists());
    // Trusted: the allow rule runs `touch made` unasked, the deny rule refuses `rm`.
    let server = ScriptedServer::start_blocking(script());
    let output = asking(&server, &["--trust-workspace"]);
    assert_eq!(output.status.code(), Some(0), "{}", text(&output.stderr));
    assert_eq!(
        result_in(&server, 1),
        ("(no output)\n[exit code: 0]".to_string(), false)
    );
    assert_eq!(
        result_in(&server, 2),
        (
            "refused: the deny rule `bash(rm *)` in the workspace's .miniagent/config.toml refuses this call, in every approval mode; do not try it again or another way round, ask the person if it is needed".to_string(),
            true
        )
    );
    assert!(workspace.join("made").exists());
}

#[tokio::test]
async fn an_allow_rule_runs_in_ask_mode_and_an_ask_rule_asks_in_full_auto() {
    let server = ScriptedServer::start(vec![
        Reply::tool("t1", "bash", r#"{"command": "echo allowed"}"#),
        Reply::tool("t2", "bash", r#"{"command": "echo allowed; echo more"}"#),
        Reply::text("done"),
    ])
    .await;
    let mut config = test_config(Provider::Anthropic, &server);
    config.agent.approval = ApprovalMode::Ask;
    config.permissions = PermissionSettings {
        allow: vec!["bash(echo allowed)".into()],
        ..PermissionSettings::default()
    };
    let mut agent = Harness::start(config);
    agent.send(Op::UserInput { text: "go".into() });
    // The first runs unasked; the compound one has a part no rule allows, and asks.
    let Event::ApprovalRequested { id, .. } = agent
        .wait_for(|e| matches!(e, Event::ApprovalRequested { .. }))
        .await
    else {
        unreachable!()
    };
    assert_eq!(id, "t2");
    assert_eq!(
        result_in(&server, 1),
        ("allowed\n[exit code: 0]".to_string(), false)
    );
    agent.send(Op::Approval {
        id,
        decision: Decision::Deny { reason: None },
    });
    agent.wait_for(|e| matches!(e, Event::TurnComplete { .. })).await;
    assert!(
        agent
            .events
            .iter()
            .filter(|e| matches!(e, Event::ApprovalRequested { .. }))
            .count()
            == 1
    );

    // An ask rule asks in full-auto, and offers nothing to remember.
    let server = ScriptedServer::start(vec![
        Reply::tool("p1", "bash", r#"{"command": "git push origin main"}"#),
        Reply::text("done"),
    ])
    .await;
    let mut config = test_config(Provider::Anthropic, &server);
    config.agent.approval = ApprovalMode::FullAuto;
    config.permissions = PermissionSettings {
        ask: vec!["bash(git push*)".into()],
        ..PermissionSettings::default()
    };
    let mut agent = Harness::start(config);
    agent.send(Op::UserInput { text: "push".into() });
    let Event::ApprovalRequested {
        id,
        notes,
        session_rule,
        ..
    } = agent
        .wait_for(|e| matches!(e, Event::ApprovalRequested { .. }))
        .await
    else {
        unreachable!()
    };
    assert_eq!(
        (notes, session_rule),
        (
            vec!["the ask rule `bash(git push*)` in your config asks about this call each time, whatever the approval mode.".to_string()],
            None
        )
    );
    agent.send(Op::Approval {
        id,
        decision: Decision::Deny { reason: None },
    });
    agent.wait_for(|e| matches!(e, Event::TurnComplete { .. })).await;
    assert_eq!(
        result_in(&server, 1),
        (
            "the person refused this call. Do not retry it; adjust the plan or ask them.".to_string(),
            true
        )
    );
}

/// `A`: the rule is saved to the user's config and the next call it covers runs
/// unasked; removing it takes it out of the file and asks again.
#[tokio::test]
async fn always_saves_the_rule_to_the_config_and_removing_it_asks_again() {
    let server = ScriptedServer::start(vec![
        Reply::tool("t1", "bash", r#"{"command": "echo one"}"#),
        Reply::tool("t2", "bash", r#"{"command": "echo two"}"#),
        Reply::text("first done"),
        Reply::tool("t3", "bash", r#"{"command": "echo three"}"#),
        Reply::text("second done"),
    ])
    .await;
    let home = TempDir::new();
    home.write("config.toml", "# my settings\n[ui]\ntheme = \"light\"\n");
    let mut config = test_config(Provider::Anthropic, &server);
    config.agent.approval = ApprovalMode::Ask;
    config.permission_sources.user_file = Some(home.join("config.toml"));
    let mut agent = Harness::start(config);
    agent.send(Op::UserInput { text: "go".into() });
    let Event::ApprovalRequested { id, .. } = agent
        .wait_for(|e| matches!(e, Event::ApprovalRequested { .. }))
        .await
    else {
        unreachable!()
    };
    // A rule that does not cover the call is not saved; the call runs once.
    agent.send(Op::Approval {
        id: id.clone(),
        decision: Decision::ApproveAlways {
            rule: "bash(ls *)".into(),
        },
    });
    let notice = agent.wait_for(|e| matches!(e, Event::Notice { .. })).await;
    assert_eq!(
        notice,
        Event::Notice {
            message: "approved once: `bash(ls *)` does not cover this call, so it was not saved".into()
        }
    );
    let Event::ApprovalRequested { id, .. } = agent
        .wait_for(|e| matches!(e, Event::ApprovalRequested { .. }))
        .await
    else {
        unreachable!()
    };
    assert_eq!(id, "t2");
    agent.send(Op::Approval {
        id,
        decision: Decision::ApproveAlways {
            rule: "bash(echo *)".into(),
        },
    });
    let saved = PermanentRule {
        list: RuleList::Allow,
        pattern: "bash(echo *)".into(),
        source: RuleSource::User,
    };
    assert_eq!(
        agent
            .wait_for(|e| matches!(e, Event::PermissionRulesChanged { .. }))
            .await,
        Event::PermissionRulesChanged {
            rules: vec![saved.clone()]
        }
    );
    agent.wait_for(|e| matches!(e, Event::TurnComplete { .. })).await;
    assert_eq!(
        std::fs::read_to_string(home.join("config.toml")).unwrap(),
        "# my settings\n[ui]\ntheme = \"light\"\n\n[permissions]\nallow = [\n    \"bash(echo *)\",\n]\n"
    );
    assert_eq!(result_in(&server, 1), ("one\n[exit code: 0]".to_string(), false));
    assert_eq!(result_in(&server, 2), ("two\n[exit code: 0]".to_string(), false));
    // The next turn's `echo three` runs unasked.
    let events = agent.turn("again").await;
    assert!(
        !events
            .iter()
            .any(|e| matches!(e, Event::ApprovalRequested { .. })),
        "{events:#?}"
    );
    assert_eq!(
        result_in(&server, 4),
        ("three\n[exit code: 0]".to_string(), false)
    );

    agent.send(Op::RemovePermissionRule { rule: saved });
    assert_eq!(
        agent
            .wait_for(|e| matches!(e, Event::PermissionRulesChanged { .. }))
            .await,
        Event::PermissionRulesChanged { rules: Vec::new() }
    );
    assert_eq!(
        std::fs::read_to_string(home.join("config.toml")).unwrap(),
        "# my settings\n[ui]\ntheme = \"light\"\n\n[permissions]\nallow = []\n"
    );
    assert_eq!(server.request_count(), 5);
}
