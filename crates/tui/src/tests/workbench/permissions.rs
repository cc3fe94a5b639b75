//! `A` (always) at an approval, and `/approvals` with the permanent `[permissions]` rules.

use pretty_assertions::assert_eq;

use super::*;
use miniagent_protocol::{ApprovalRequest, PermanentRule, RuleList, RuleSource};

fn cargo_test_request(app: &mut Bench) {
    app.on_agent_event(Event::TurnStarted {
        text: "run the tests".into(),
    });
    app.on_agent_event(cargo_approval("b1", &["test", "-q"]));
}

#[test]
fn always_shows_the_rule_it_would_save_which_can_be_edited_before_it_is_sent() {
    let workspace = TempDir::new();
    let mut app = app_in(&workspace);
    cargo_test_request(&mut app);
    arm(&mut app);
    assert_screen!("approval_always_offered_80x24", screen(&mut app, 80, 24));
    assert_screen!("approval_always_offered_160x48", screen(&mut app, 160, 48));
    app.on_key(key(KeyCode::Char('A')));
    app.settle();
    assert_eq!(
        app.approval().and_then(|dialog| dialog.always()),
        Some("bash(cargo test *)")
    );
    assert_screen!("approval_always_confirm_80x24", screen(&mut app, 80, 24));
    assert_screen!("approval_always_confirm_160x48", screen(&mut app, 160, 48));
    // Esc goes back to the keys; nothing was sent.
    app.on_key(key(KeyCode::Esc));
    assert_eq!(app.approval().and_then(|dialog| dialog.always()), None);
    assert!(app.sent.is_empty(), "{:?}", app.sent);
    // Again, edited: the letters go into the rule, not to the input or the answers.
    app.on_key(key(KeyCode::Char('A')));
    app.settle();
    for _ in 0..3 {
        app.on_key(key(KeyCode::Backspace));
    }
    type_text(&mut app, " -q*)");
    app.on_key(key(KeyCode::Enter));
    app.settle();
    assert_eq!(
        app.sent,
        vec![Op::Approval {
            id: "b1".into(),
            decision: Decision::ApproveAlways {
                rule: "bash(cargo test -q*)".into()
            }
        }]
    );
    assert_eq!(app.input.text(), "");
    assert!(app.approval().is_none());
}

#[test]
fn always_is_not_offered_where_no_rule_can_be_saved() {
    let workspace = TempDir::new();
    let mut app = app_in(&workspace);
    app.on_agent_event(Event::TurnStarted { text: "go".into() });
    app.on_agent_event(Event::ApprovalRequested {
        id: "b1".into(),
        name: "bash".into(),
        preview: "$ ls; rm x".into(),
        session_rule: Some(ApprovalRule::CommandLine {
            command: "ls; rm x".into(),
        }),
        request: Some(ApprovalRequest::Command {
            command: "ls; rm x".into(),
            program: None,
            argv: Vec::new(),
            cwd: "/home/dev/project".into(),
            timeout_s: Some(120),
            compound: true,
        }),
        notes: Vec::new(),
    });
    arm(&mut app);
    app.on_key(key(KeyCode::Char('A')));
    app.settle();
    assert_eq!(app.approval().and_then(|dialog| dialog.always()), None);
    assert!(app.sent.is_empty(), "{:?}", app.sent);
    assert!(!screen(&mut app, 160, 48).contains("always"));
}

#[test]
fn approvals_lists_permanent_rules_with_their_source_and_removes_one_after_asking() {
    let workspace = TempDir::new();
    let mut app = app_in(&workspace);
    let rule = |list, pattern: &str, source| PermanentRule {
        list,
        pattern: pattern.into(),
        source,
    };
    let allow = rule(RuleList::Allow, "bash(cargo test *)", RuleSource::User);
    app.on_agent_event(Event::ApprovalRulesChanged {
        rules: vec![ApprovalRule::Command { program: "ls".into() }],
        refused: Vec::new(),
    });
    app.on_agent_event(Event::PermissionRulesChanged {
        rules: vec![
            rule(RuleList::Deny, "bash(rm -rf*)", RuleSource::User),
            rule(RuleList::Ask, "bash(git push*)", RuleSource::Workspace),
            allow.clone(),
            rule(
                RuleList::Allow,
                "write_file(src/**)\u{1b}[2J",
                RuleSource::Workspace,
            ),
        ],
    });
    app.submit("/approvals".into());
    assert_screen!("approvals_permanent_80x24", screen(&mut app, 80, 24));
    assert_screen!("approvals_permanent_160x48", screen(&mut app, 160, 48));
    for _ in 0..3 {
        app.on_key(key(KeyCode::Down));
    }
    app.on_key(key(KeyCode::Char('d')));
    // Asked first: nothing is sent yet.
    assert!(app.sent.is_empty(), "{:?}", app.sent);
    assert_screen!("approvals_remove_confirm_80x24", screen(&mut app, 80, 24));
    assert_screen!("approvals_remove_confirm_160x48", screen(&mut app, 160, 48));
    app.on_key(key(KeyCode::Char('n')));
    assert!(app.sent.is_empty(), "{:?}", app.sent);
    app.on_key(key(KeyCode::Char('d')));
    app.on_key(key(KeyCode::Char('y')));
    assert_eq!(app.sent, vec![Op::RemovePermissionRule { rule: allow }]);
}
