//! Rewinding the conversation (`Op::Rewind`, `Op::ListRewindPoints`) through a real agent
//! and the scripted server: what the next request carries, what a resumed session sends,
//! what the inspector, `sessions show` and `replay --headless` show of the branch set
//! aside, and the rewinds that are refused.
#![allow(clippy::unwrap_used, clippy::expect_used)] // A test fails by panicking.

use crate::support;

use miniagent_core::config::Provider;
use miniagent_protocol::{Event, HistoryEntryKind, HistorySnapshot, Op, RewindPoint, RewindScope};
use pretty_assertions::assert_eq;
use serde_json::{Value, json};
use support::cli::{miniagent, session_id, session_logs, text};
use support::harness::{Harness, session_log_in, test_config};
use support::{Reply, ScriptedServer, TempDir, Turn};

/// The conversation request `n` carried.
fn messages(server: &ScriptedServer, n: usize) -> Value {
    server.requests()[n].body["messages"].clone()
}

/// A user's or the model's text as the Anthropic wire carries it.
fn said(role: &str, text: &str) -> Value {
    json!({"role": role, "content": [{"type": "text", "text": text}]})
}

/// The same message marked as a cache breakpoint.
fn marked(role: &str, text: &str) -> Value {
    json!({"role": role, "content": [{"type": "text", "text": text, "cache_control": {"type": "ephemeral"}}]})
}

/// The answer to a rewind op: `Rewound` or `RewindRefused`.
async fn rewind(agent: &mut Harness, turn: u32, scope: RewindScope) -> Event {
    agent.send(Op::Rewind { turn, scope });
    agent
        .wait_for(|e| matches!(e, Event::Rewound { .. } | Event::RewindRefused { .. }))
        .await
}

async fn points(agent: &mut Harness) -> Vec<RewindPoint> {
    agent.send(Op::ListRewindPoints);
    match agent
        .wait_for(|e| matches!(e, Event::RewindPoints { .. } | Event::RewindRefused { .. }))
        .await
    {
        Event::RewindPoints { points } => points,
        other => panic!("no points: {other:?}"),
    }
}

fn point(turn: u32, text: &str, conversation: bool) -> RewindPoint {
    RewindPoint {
        turn,
        text: text.to_string(),
        files: 0,
        conversation,
    }
}

/// What the inspector shows of the set-aside branches: per branch its turn, first
/// message, the branch it is inside, and each message's kind, title and text.
type Branches = Vec<(u32, u64, Option<u32>, Vec<(HistoryEntryKind, String, String)>)>;

fn branches(snapshot: &HistorySnapshot) -> Branches {
    snapshot
        .set_aside
        .iter()
        .map(|branch| {
            let entries = branch
                .entries
                .iter()
                .map(|e| (e.kind, e.title.clone(), e.body.clone()))
                .collect();
            (branch.turn, branch.from, branch.within, entries)
        })
        .collect()
}

#[tokio::test]
async fn a_conversation_rewind_sends_the_earlier_history_and_a_resumed_session_does_too() {
    let server = ScriptedServer::start(vec![
        Reply::text("first answer"),
        Reply::text("second answer"),
        Reply::text("answer to the new second"),
        Reply::text("third answer"),
    ])
    .await;
    let data = TempDir::new();
    let mut agent = Harness::start_recorded(test_config(Provider::Anthropic, &server), session_log_in(&data));
    agent.turn("first question").await;
    agent.turn("second question").await;
    assert_eq!(
        points(&mut agent).await,
        vec![
            point(1, "first question", true),
            point(2, "second question", true)
        ]
    );

    let answer = rewind(&mut agent, 2, RewindScope::Conversation).await;
    assert_eq!(
        answer,
        Event::Rewound {
            turn: 2,
            scope: RewindScope::Conversation,
            files: vec![],
            messages: 2,
            text: "second question".into(),
        }
    );
    // The gauge shows the shorter context at once: what the inspector counts.
    let gauge = match agent.next().await {
        Event::TokenUsage {
            context_tokens,
            estimated,
            ..
        } => (context_tokens, estimated),
        other => panic!("no gauge after the rewind: {other:?}"),
    };
    let snapshot = agent.inspect().await;
    assert_eq!(gauge, (snapshot.prompt_tokens, true));
    let set_aside: Branches = vec![(
        2,
        3,
        None,
        vec![
            (
                HistoryEntryKind::User,
                "message 3 · second question".into(),
                "second question\n".into(),
            ),
            (
                HistoryEntryKind::Assistant,
                "message 4 · second answer".into(),
                "second answer\n".into(),
            ),
        ],
    )];
    assert_eq!(branches(&snapshot), set_aside);
    assert_eq!(snapshot.entries.len(), 2);
    // Turn 2's message left the conversation: it is no longer a point.
    assert_eq!(points(&mut agent).await, vec![point(1, "first question", true)]);

    agent.turn("the second, asked differently").await;
    assert_eq!(
        messages(&server, 2),
        json!([
            marked("user", "first question"),
            said("assistant", "first answer"),
            marked("user", "the second, asked differently"),
        ])
    );
    agent.send(Op::Shutdown);
    agent.wait_for(|event| *event == Event::ShutdownComplete).await;

    // A new agent resuming the log sends the rewound history.
    let log = session_logs(&data).pop().expect("the session was recorded");
    let mut resumed =
        Harness::start_recorded(test_config(Provider::Anthropic, &server), session_log_in(&data));
    resumed.send(Op::Resume { path: log.clone() });
    let announced = resumed
        .wait_for(|event| matches!(event, Event::SessionResumed { .. } | Event::Error { .. }))
        .await;
    assert_eq!(
        announced,
        Event::SessionResumed {
            id: session_id(&log),
            messages: 4,
            turns: 3,
        }
    );
    assert_eq!(branches(&resumed.inspect().await), set_aside);
    assert_eq!(
        points(&mut resumed).await,
        vec![
            point(1, "first question", true),
            point(3, "the second, asked differently", true)
        ]
    );
    resumed.turn("third question").await;
    assert_eq!(server.requests().len(), 4);
    assert_eq!(
        messages(&server, 3),
        json!([
            said("user", "first question"),
            said("assistant", "first answer"),
            marked("user", "the second, asked differently"),
            said("assistant", "answer to the new second"),
            marked("user", "third question"),
        ])
    );
    resumed.send(Op::Shutdown);
    resumed.wait_for(|event| *event == Event::ShutdownComplete).await;

    // `sessions show` prints the branch where the conversation went on without it.
    let id = session_id(&log);
    let shown = miniagent(&data).args(["sessions", "show", &id]).output().unwrap();
    let shown = text(&shown.stdout);
    let conversation = shown.split_once(".jsonl\n").expect("the details").1;
    assert_eq!(
        conversation,
        "\n› first question\n\
         \nfirst answer\n\
         \n╭ rewound to before turn 2: 2 messages set aside:\n\
         ┆ › second question\n\
         ┆\n\
         ┆ second answer\n\
         ╰ end of what was set aside; the conversation went on without it\n\
         \n› the second, asked differently\n\
         \nanswer to the new second\n\
         \n› third question\n\
         \nthird answer\n"
    );
    // `replay --headless` says what the rewind did, in its place.
    let replay = miniagent(&data)
        .args(["replay", "--headless", &id])
        .output()
        .unwrap();
    let replay = text(&replay.stderr) + &text(&replay.stdout);
    assert!(
        replay.contains("rewound the conversation to before turn 2: 2 messages set aside\n"),
        "{replay}"
    );
}

#[tokio::test]
async fn a_rewind_while_a_turn_runs_is_refused_and_the_turn_goes_on() {
    let server = ScriptedServer::start(vec![
        Reply::text("first answer"),
        Reply::slow(Turn::text("a slow second answer"), 400),
    ])
    .await;
    let mut agent = Harness::start(test_config(Provider::Anthropic, &server));
    agent.turn("first question").await;
    agent.send(Op::UserInput {
        text: "second question".into(),
    });
    agent.wait_for(|e| matches!(e, Event::StepStarted { .. })).await;
    assert_eq!(
        rewind(&mut agent, 1, RewindScope::Conversation).await,
        Event::RewindRefused {
            message: "a turn is running: /rewind and /undo work between turns (interrupt it first)".into(),
            files: vec![],
        }
    );
    agent.wait_for(support::harness::is_turn_end).await;
    assert_eq!(branches(&agent.inspect().await), vec![]);
    assert_eq!(
        messages(&server, 1),
        json!([
            marked("user", "first question"),
            said("assistant", "first answer"),
            marked("user", "second question"),
        ])
    );
}

/// A session log of three turns whose messages 2–4 (the first answer, the second
/// question and its answer) a summary replaced, in `data`'s sessions folder.
fn summarized_log(data: &TempDir) -> std::path::PathBuf {
    use miniagent_core::session::{FORMAT, Header, Record};
    use miniagent_protocol::message::Message;
    use miniagent_protocol::record::Summary;
    let header = Header {
        id: "20261122-000000-abcd".into(),
        created: "2026-11-22T00:00:00Z".into(),
        workspace: "w".into(),
        model: "scripted-model".into(),
        provider: "anthropic".into(),
        version: "test".into(),
        format: FORMAT,
        fixed_tokens: 0,
    };
    let started = |text: &str| Record::Event {
        ts: 1,
        event: Event::TurnStarted { text: text.into() },
    };
    let said = |from, question: &str, answer: &str| Record::Messages {
        ts: 1,
        from,
        messages: vec![Message::user(question), Message::assistant_text(answer)],
    };
    let records = [
        Record::Header(header),
        started("first question"),
        said(0, "first question", "first answer"),
        started("second question"),
        said(2, "second question", "second answer"),
        started("third question"),
        said(4, "third question", "third answer"),
        Record::Summary {
            ts: 1,
            summary: Summary {
                start: 1,
                end: 4,
                text: "Two questions were answered.".into(),
                tokens_before: 30,
                tokens: 12,
                fallback: false,
                nested: vec![],
            },
        },
    ];
    let folder = data.join("sessions");
    std::fs::create_dir_all(&folder).unwrap();
    let path = folder.join("20261122-000000-abcd.jsonl");
    let lines: Vec<String> = records
        .iter()
        .map(|r| serde_json::to_string(r).unwrap())
        .collect();
    std::fs::write(&path, lines.join("\n") + "\n").unwrap();
    path
}

#[tokio::test]
async fn an_unknown_turn_and_a_message_a_summary_replaced_are_refused_and_nothing_changes() {
    let server = ScriptedServer::start(vec![Reply::text("fourth answer")]).await;
    let data = TempDir::new();
    let log = summarized_log(&data);
    let mut agent = Harness::start_recorded(test_config(Provider::Anthropic, &server), session_log_in(&data));
    agent.send(Op::Resume { path: log });
    agent
        .wait_for(|event| matches!(event, Event::SessionResumed { .. }))
        .await;
    assert_eq!(
        rewind(&mut agent, 9, RewindScope::Both).await,
        Event::RewindRefused {
            message: "there is no turn 9 in this session".into(),
            files: vec![],
        }
    );
    assert_eq!(
        points(&mut agent).await,
        vec![
            point(1, "first question", true),
            point(2, "second question", false),
            point(3, "third question", true),
        ]
    );
    let before = agent.inspect().await;
    for scope in [RewindScope::Conversation, RewindScope::Both] {
        assert_eq!(
            rewind(&mut agent, 2, scope).await,
            Event::RewindRefused {
                message: "the conversation cannot go back to turn 2: messages 2–4 were summarized when the context was compacted, and their text was let go of: the conversation cannot go back to a message among them (go back to a later one, or rewind the code only)".into(),
                files: vec![],
            }
        );
    }
    assert_eq!(agent.inspect().await, before);
    agent.turn("fourth question").await;
    assert_eq!(
        messages(&server, 0),
        json!([
            // Consecutive user messages go as one, a text block each.
            {"role": "user", "content": [
                {"type": "text", "text": "first question"},
                {"type": "text", "text": format!("{}\n\nTwo questions were answered.", miniagent_protocol::record::SUMMARY_MARK)},
                {"type": "text", "text": "third question", "cache_control": {"type": "ephemeral"}},
            ]},
            said("assistant", "third answer"),
            marked("user", "fourth question"),
        ])
    );
}

/// `value` without its cache breakpoints (they move from request to request).
fn plain(mut value: Value) -> Value {
    fn strip(value: &mut Value) {
        match value {
            Value::Object(map) => {
                map.remove("cache_control");
                map.values_mut().for_each(strip);
            }
            Value::Array(items) => items.iter_mut().for_each(strip),
            _ => {}
        }
    }
    strip(&mut value);
    value
}

#[tokio::test]
async fn both_refused_by_the_code_leaves_the_conversation_as_it_was() {
    let server = ScriptedServer::start(vec![
        Reply::text("first answer"),
        Reply::tool(
            "w1",
            "write_file",
            r#"{"path": "notes.txt", "content": "from the agent\n"}"#,
        ),
        Reply::text("wrote it"),
        Reply::text("third answer"),
    ])
    .await;
    let mut agent = Harness::start(test_config(Provider::Anthropic, &server));
    agent.turn("first question").await;
    agent.turn("write the notes").await;
    // The person edits the file by hand: the code cannot go back without losing it.
    std::fs::write(agent.workspace.join("notes.txt"), "the person's own words\n").unwrap();
    let before = agent.inspect().await;
    let answer = rewind(&mut agent, 2, RewindScope::Both).await;
    assert_eq!(
        answer,
        Event::RewindRefused {
            message:
                "nothing was put back; changed outside miniagent since the session changed it: notes.txt"
                    .into(),
            files: vec!["notes.txt".into()],
        }
    );
    assert_eq!(agent.inspect().await, before);
    assert_eq!(
        std::fs::read_to_string(agent.workspace.join("notes.txt")).unwrap(),
        "the person's own words\n"
    );
    agent.turn("third question").await;
    // Turn 2 is still in the conversation: its call and result, as sent before.
    let sent = plain(messages(&server, 2));
    let mut expected = sent.as_array().unwrap().clone();
    expected.push(said("assistant", "wrote it"));
    expected.push(said("user", "third question"));
    assert_eq!(plain(messages(&server, 3)), Value::Array(expected));
    assert_eq!(
        sent[3]["content"][0]["name"],
        json!("write_file"),
        "the call is in the history: {sent}"
    );
}

/// A plan call as the model sends it.
fn plan_call(id: &str, steps: &[(&str, &str)]) -> Reply {
    let entries: Vec<Value> = steps
        .iter()
        .map(|(content, status)| json!({"content": content, "status": status}))
        .collect();
    Reply::tool(id, "update_plan", json!({ "entries": entries }).to_string())
}

fn entries(steps: &[(&str, miniagent_protocol::PlanStatus)]) -> Vec<miniagent_protocol::PlanEntry> {
    steps
        .iter()
        .map(|(content, status)| miniagent_protocol::PlanEntry {
            content: content.to_string(),
            status: *status,
            priority: None,
            note: None,
        })
        .collect()
}

#[tokio::test]
async fn a_conversation_rewind_gives_back_the_plan_the_kept_history_set() {
    use miniagent_protocol::PlanStatus::{InProgress, Pending};
    let server = ScriptedServer::start(vec![
        plan_call("p1", &[("read", "in_progress"), ("fix", "pending")]),
        Reply::text("planned"),
        plan_call("p2", &[("read", "completed"), ("fix", "in_progress")]),
        Reply::text("going on"),
        Reply::text("plain answer"),
    ])
    .await;
    let mut agent = Harness::start(test_config(Provider::Anthropic, &server));
    agent.turn("plan it").await;
    agent.turn("go on").await;
    agent.turn("no plan here").await;

    // Turn 3 set no plan: going back before it leaves the plan alone (no event).
    assert!(matches!(
        rewind(&mut agent, 3, RewindScope::Conversation).await,
        Event::Rewound { .. }
    ));
    assert!(matches!(agent.next().await, Event::TokenUsage { .. }));
    // Turn 2 moved the plan on: going back before it gives back turn 1's plan.
    assert!(matches!(
        rewind(&mut agent, 2, RewindScope::Conversation).await,
        Event::Rewound { .. }
    ));
    assert_eq!(
        agent.next().await,
        Event::PlanUpdated {
            entries: entries(&[("read", InProgress), ("fix", Pending)])
        }
    );
    // Before turn 1 there was no plan: the plan is cleared.
    assert!(matches!(agent.next().await, Event::TokenUsage { .. }));
    assert!(matches!(
        rewind(&mut agent, 1, RewindScope::Conversation).await,
        Event::Rewound { .. }
    ));
    assert_eq!(agent.next().await, Event::PlanUpdated { entries: vec![] });
}
