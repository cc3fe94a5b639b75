use super::*;
use pretty_assertions::assert_eq;

#[test]
fn ops_are_tagged_snake_case() {
    let op = Op::Approval {
        id: "toolu_1".into(),
        decision: Decision::Deny {
            reason: Some("no".into()),
        },
    };
    let json = serde_json::to_value(&op).unwrap();
    assert_eq!(
        json,
        serde_json::json!({"type": "approval", "id": "toolu_1", "decision": {"decision": "deny", "reason": "no"}})
    );
    assert_eq!(serde_json::from_value::<Op>(json).unwrap(), op);
    assert_eq!(
        serde_json::to_value(Op::CompactNow).unwrap(),
        serde_json::json!({"type": "compact_now"})
    );
}

#[test]
fn events_round_trip() {
    let events = vec![
        Event::TurnStarted { text: "hi".into() },
        Event::ToolCallFinished {
            id: "c".into(),
            name: "bash".into(),
            ok: false,
            outcome: ToolOutcome::Error,
            duration_ms: 12,
            output_preview: "exit 1".into(),
            output: "[exit code: 1]".into(),
            effects: Vec::new(),
        },
        Event::StepLimitReached {
            steps: 3,
            report: "done".into(),
        },
    ];
    for event in events {
        let line = serde_json::to_string(&event).unwrap();
        assert_eq!(serde_json::from_str::<Event>(&line).unwrap(), event);
    }
    let line = serde_json::to_string(&Event::TextDelta { delta: "x".into() }).unwrap();
    assert_eq!(line, r#"{"type":"text_delta","delta":"x"}"#);
}

#[test]
fn the_typed_fields_round_trip_and_older_lines_still_read() {
    let asked = Event::ApprovalRequested {
        id: "b1".into(),
        name: "bash".into(),
        preview: "$ ls\n(in /w, timeout 120 s)".into(),
        request: Some(ApprovalRequest::Command {
            command: "ls".into(),
            program: Some("ls".into()),
            argv: vec!["ls".into()],
            cwd: "/w".into(),
            timeout_s: Some(120),
            compound: false,
        }),
        notes: vec!["why".into()],
        session_rule: None,
    };
    let line = serde_json::to_string(&asked).unwrap();
    assert!(
        line.contains(r#""request":{"kind":"command","command":"ls""#),
        "{line}"
    );
    assert_eq!(serde_json::from_str::<Event>(&line).unwrap(), asked);
    // Lines written before the typed fields existed.
    let old: Event =
        serde_json::from_str(r#"{"type":"approval_requested","id":"b1","name":"bash","preview":"$ ls"}"#)
            .unwrap();
    assert!(matches!(old, Event::ApprovalRequested { request: None, ref notes, .. } if notes.is_empty()));
    let old: Event = serde_json::from_str(
        r#"{"type":"tool_call_finished","id":"c","name":"bash","ok":true,"outcome":"ok","duration_ms":1,"output_preview":"","output":""}"#,
    )
    .unwrap();
    assert!(matches!(old, Event::ToolCallFinished { ref effects, .. } if effects.is_empty()));
    let old: Event =
        serde_json::from_str(r#"{"type":"tool_call_requested","id":"c","name":"bash","arguments":{}}"#)
            .unwrap();
    assert!(matches!(old, Event::ToolCallRequested { ref summary, .. } if summary.is_empty()));
    // A call that changed nothing writes no `effects` key.
    let finished = Event::ToolCallFinished {
        id: "c".into(),
        name: "bash".into(),
        ok: true,
        outcome: ToolOutcome::Ok,
        duration_ms: 1,
        output_preview: String::new(),
        output: String::new(),
        effects: vec![],
    };
    assert!(!serde_json::to_string(&finished).unwrap().contains("effects"));
}
/// Each new typed field and variant survives a round trip, and lines written before
/// it existed still read, as what it defaults to.
#[test]
fn kinds_locations_changes_refusals_and_plans_round_trip() {
    let change = TextChange {
        old_text: None,
        new_text: "fn main() {}\n".into(),
    };
    let values = vec![
        Event::ToolCallRequested {
            id: "c".into(),
            name: "read_file".into(),
            arguments: serde_json::json!({"path": "a.rs", "offset": 3}),
            summary: "a.rs".into(),
            kind: ToolKind::Read,
            locations: vec![Location {
                path: "/w/a.rs".into(),
                line: Some(3),
            }],
        },
        Event::ApprovalRequested {
            id: "c".into(),
            name: "write_file".into(),
            preview: "create a.rs".into(),
            request: Some(ApprovalRequest::Edit {
                path: "a.rs".into(),
                summary: "create a.rs (13 bytes)".into(),
                diff: "+fn main() {}\n".into(),
                abs_path: "/w/a.rs".into(),
                change: Some(change.clone()),
            }),
            notes: vec![],
            session_rule: None,
        },
        Event::ToolCallFinished {
            id: "c".into(),
            name: "write_file".into(),
            ok: true,
            outcome: ToolOutcome::Ok,
            duration_ms: 1,
            output_preview: String::new(),
            output: "wrote".into(),
            effects: vec![CallEffect::FileChanged {
                path: "/w/a.rs".into(),
                change: Some(TextChange {
                    old_text: Some("old\n".into()),
                    new_text: "new\n".into(),
                }),
            }],
        },
        Event::ApprovalRulesChanged {
            rules: vec![ApprovalRule::Tool { name: "bash".into() }],
            refused: vec![ApprovalRule::Command { program: "rm".into() }],
        },
        Event::PlanUpdated {
            entries: vec![
                PlanEntry {
                    content: "read the code".into(),
                    status: PlanStatus::Completed,
                    priority: Some(PlanPriority::High),
                    note: None,
                },
                PlanEntry {
                    content: "fix it".into(),
                    status: PlanStatus::InProgress,
                    priority: None,
                    note: Some("the lexer too".into()),
                },
            ],
        },
    ];
    for event in values {
        let line = serde_json::to_string(&event).unwrap();
        assert_eq!(serde_json::from_str::<Event>(&line).unwrap(), event, "{line}");
    }
    let plan = Event::PlanUpdated {
        entries: vec![PlanEntry {
            content: "x".into(),
            status: PlanStatus::InProgress,
            priority: Some(PlanPriority::Low),
            note: None,
        }],
    };
    assert_eq!(
        serde_json::to_value(&plan).unwrap(),
        serde_json::json!({"type": "plan_updated", "entries": [{"content": "x", "status": "in_progress", "priority": "low"}]})
    );
    // A plan recorded before notes existed loads; a note is written when there is one.
    let noted = Event::PlanUpdated {
        entries: vec![PlanEntry {
            content: "x".into(),
            status: PlanStatus::Pending,
            priority: None,
            note: Some("waits on y".into()),
        }],
    };
    assert_eq!(
        (
            serde_json::from_value::<Event>(serde_json::json!({"type": "plan_updated", "entries": [{"content": "x", "status": "in_progress", "priority": "low"}]})).unwrap(),
            serde_json::to_value(&noted).unwrap(),
        ),
        (
            plan,
            serde_json::json!({"type": "plan_updated", "entries": [{"content": "x", "status": "pending", "note": "waits on y"}]})
        )
    );
    let op = Op::Approval {
        id: "c".into(),
        decision: Decision::DenyForSession { reason: None },
    };
    let json = serde_json::to_value(&op).unwrap();
    assert_eq!(
        json,
        serde_json::json!({"type": "approval", "id": "c", "decision": {"decision": "deny_for_session", "reason": null}})
    );
    assert_eq!(serde_json::from_value::<Op>(json).unwrap(), op);
}

#[test]
fn lines_from_before_kinds_changes_and_refusals_still_read() {
    let old: Event = serde_json::from_str(
        r#"{"type":"tool_call_requested","id":"c","name":"bash","arguments":{},"summary":"ls"}"#,
    )
    .unwrap();
    assert_eq!(
        old,
        Event::ToolCallRequested {
            id: "c".into(),
            name: "bash".into(),
            arguments: serde_json::json!({}),
            summary: "ls".into(),
            kind: ToolKind::Other,
            locations: vec![],
        }
    );
    // A kind a newer miniagent knows reads as `other`.
    let newer: Event = serde_json::from_str(
        r#"{"type":"tool_call_requested","id":"c","name":"x","arguments":{},"kind":"switch_mode"}"#,
    )
    .unwrap();
    assert!(matches!(
        newer,
        Event::ToolCallRequested {
            kind: ToolKind::Other,
            ..
        }
    ));
    let old: Event =
        serde_json::from_str(r#"{"type":"approval_rules_changed","rules":[{"kind":"tool","name":"bash"}]}"#)
            .unwrap();
    assert_eq!(
        old,
        Event::ApprovalRulesChanged {
            rules: vec![ApprovalRule::Tool { name: "bash".into() }],
            refused: vec![],
        }
    );
    let old: ApprovalRequest =
        serde_json::from_str(r#"{"kind":"edit","path":"a","summary":"s","diff":"d"}"#).unwrap();
    assert_eq!(
        old,
        ApprovalRequest::Edit {
            path: "a".into(),
            summary: "s".into(),
            diff: "d".into(),
            abs_path: String::new(),
            change: None,
        }
    );
    let old: CallEffect = serde_json::from_str(r#"{"kind":"file_changed","path":"/w/a"}"#).unwrap();
    assert_eq!(
        old,
        CallEffect::FileChanged {
            path: "/w/a".into(),
            change: None
        }
    );
    // Empty new fields are not written: the lines stay as they were.
    let quiet = Event::ApprovalRulesChanged {
        rules: vec![],
        refused: vec![],
    };
    assert_eq!(
        serde_json::to_string(&quiet).unwrap(),
        r#"{"type":"approval_rules_changed","rules":[]}"#
    );
    let effect = CallEffect::FileChanged {
        path: "/w/a".into(),
        change: None,
    };
    assert_eq!(
        serde_json::to_string(&effect).unwrap(),
        r#"{"kind":"file_changed","path":"/w/a"}"#
    );
}

#[test]
fn always_offers_a_rule_only_where_one_is_safe() {
    use crate::approval::{ApprovalRequest, ApprovalRule, proposed_rule};
    let command = |command: &str, argv: &[&str], compound: bool| ApprovalRequest::Command {
        command: command.into(),
        program: argv.first().map(|p| p.to_string()),
        argv: argv.iter().map(|w| w.to_string()).collect(),
        cwd: "/w".into(),
        timeout_s: Some(10),
        compound,
    };
    let by_name = |program: &str| {
        Some(ApprovalRule::Command {
            program: program.into(),
        })
    };
    let exactly = |line: &str| Some(ApprovalRule::CommandLine { command: line.into() });
    let edit = |path: &str| ApprovalRequest::Edit {
        path: path.into(),
        summary: String::new(),
        diff: String::new(),
        abs_path: String::new(),
        change: None,
    };
    let other = |preview: &str| ApprovalRequest::Other {
        name: "x".into(),
        preview: preview.into(),
    };
    let cases: Vec<(&str, ApprovalRequest, Option<ApprovalRule>, Option<&str>)> = vec![
        (
            "bash",
            command("cargo test -q", &["cargo", "test", "-q"], false),
            by_name("cargo"),
            Some("bash(cargo test *)"),
        ),
        (
            "bash",
            command("ls -la", &["ls", "-la"], false),
            by_name("ls"),
            Some("bash(ls *)"),
        ),
        (
            "bash",
            command("cat a.txt", &["cat", "a.txt"], false),
            by_name("cat"),
            Some("bash(cat *)"),
        ),
        (
            "bash",
            command("python3 'x y.py'", &["python3", "x y.py"], false),
            exactly("python3 'x y.py'"),
            Some("bash(python3 x y.py)"),
        ),
        (
            "bash",
            command("ls *.rs", &["ls", "*.rs"], false),
            exactly("ls *.rs"),
            None,
        ),
        ("bash", command("ls; rm x", &[], true), exactly("ls; rm x"), None),
        (
            "write_file",
            edit("src/deep/main.rs"),
            None,
            Some("write_file(src/deep/**)"),
        ),
        ("edit_file", edit("README.md"), None, Some("edit_file(README.md)")),
        ("edit_file", edit("/etc/passwd"), None, None),
        ("edit_file", edit("a/../b"), None, None),
        ("edit_file", edit("src/*.rs"), None, None),
        (
            "mcp__github__create_issue",
            ApprovalRequest::McpCall {
                server: "github".into(),
                tool: "create_issue".into(),
                arguments: serde_json::json!({}),
            },
            None,
            Some("mcp__github__create_issue"),
        ),
        (
            "web_fetch",
            other("GET https://docs.rs/x?y"),
            Some(ApprovalRule::Domain {
                host: "docs.rs".into(),
            }),
            Some("web_fetch(domain:docs.rs)"),
        ),
        // No host the tool read, or one a pattern cannot name plainly: nothing offered.
        ("web_fetch", other("GET file:///etc/passwd"), None, None),
        (
            "web_fetch",
            other("GET http://[::1]/"),
            Some(ApprovalRule::Domain { host: "[::1]".into() }),
            None,
        ),
        (
            "web_fetch",
            other("GET https://x/"),
            Some(ApprovalRule::Domain {
                host: "docs.rs(*)".into(),
            }),
            None,
        ),
        ("record_note", other("{}"), None, Some("record_note")),
    ];
    for (tool, request, session_rule, expected) in cases {
        assert_eq!(
            proposed_rule(tool, &request, session_rule.as_ref()).as_deref(),
            expected,
            "{tool} {request:?}"
        );
    }
}
