//! The history stays one the provider takes (issue 15, items 11, 6 and 13): tool call
//! ids from a hostile stream (empty, repeated) are replaced before they enter the
//! history; a hand-edited session log is mended or refused on resume; a user message
//! too large for any prompt is refused without harming the session; and a call the log
//! left open is reported as what the files show.
#![allow(clippy::unwrap_used, clippy::expect_used)] // A test fails by panicking.

use crate::support;

use std::path::{Path, PathBuf};

use miniagent_core::agent::context::Change;
use miniagent_core::agent::history::{ContentBlock, Message, Role};
use miniagent_core::config::Provider;
use miniagent_core::session::{self, Record};
use miniagent_protocol::{Event, Op};
use serde_json::{Value, json};
use support::harness::{Harness, session_log_in, test_config};
use support::validate::{assert_valid_anthropic, assert_valid_openai, unmarked};
use support::*;

fn assert_valid(provider: Provider, body: &Value) {
    match provider {
        Provider::Anthropic => assert_valid_anthropic(body),
        _ => assert_valid_openai(body),
    }
}

fn bash(id: &str, command: &str) -> Block {
    Block::ToolCall {
        id: id.into(),
        name: "bash".into(),
        arguments: json!({ "command": command }).to_string(),
    }
}

fn calls(blocks: Vec<Block>) -> Reply {
    Reply::Stream(Turn {
        blocks,
        ..Turn::default()
    })
}

/// A reply with two calls sharing one id, then one with an empty id and one reusing an
/// id of the first step: every later request must still be valid, and each call's
/// result must follow it.
async fn hostile_ids_are_replaced(provider: Provider) {
    let server = ScriptedServer::start(vec![
        calls(vec![bash("dup", "echo first"), bash("dup", "echo second")]),
        calls(vec![bash("", "echo third"), bash("dup", "echo fourth")]),
        Reply::text("done"),
    ])
    .await;
    let mut agent = Harness::start(test_config(provider, &server));
    let events = agent.turn("run them").await;
    assert_eq!(
        events.last(),
        Some(&Event::TurnComplete { text: "done".into() }),
        "{events:#?}"
    );
    let requests = server.requests();
    assert_eq!(requests.len(), 3);
    for request in &requests {
        assert_valid(provider, &request.body);
    }
    // Each result still answers the call that produced it.
    let sent = requests[2].body["messages"].to_string();
    for word in ["first", "second", "third", "fourth"] {
        assert!(sent.contains(word), "{word} missing from {sent}");
    }
    assert!(
        events
            .iter()
            .any(|e| matches!(e, Event::Notice { message } if message.contains("were given new ids"))),
        "the person is told"
    );
}

#[tokio::test]
async fn duplicate_and_empty_tool_ids_from_an_anthropic_stream_are_replaced() {
    hostile_ids_are_replaced(Provider::Anthropic).await;
}

#[tokio::test]
async fn duplicate_and_empty_tool_ids_from_an_openai_stream_are_replaced() {
    hostile_ids_are_replaced(Provider::Openai).await;
}

/// Writes a session log by hand: the header, then `records`.
fn write_log(dir: &Path, workspace: &Path, records: &[Record]) -> PathBuf {
    let header = session::Header {
        id: "edited".into(),
        created: "2026-11-22T00:00:00Z".into(),
        workspace: workspace.display().to_string(),
        model: "scripted-model".into(),
        provider: "anthropic".into(),
        version: "test".into(),
        format: session::FORMAT,
        fixed_tokens: 0,
    };
    let mut text = serde_json::to_string(&Record::Header(header)).unwrap() + "\n";
    for record in records {
        text += &(serde_json::to_string(record).unwrap() + "\n");
    }
    let path = dir.join("edited.jsonl");
    std::fs::write(&path, text).unwrap();
    path
}

fn messages(messages: Vec<Message>) -> Record {
    Record::from_change(1, Change::Messages { from: 0, messages })
}

fn tool_use(id: &str, name: &str, input: Value) -> ContentBlock {
    ContentBlock::ToolUse {
        id: id.into(),
        name: name.into(),
        input,
    }
}

fn result(id: &str, content: &str) -> ContentBlock {
    ContentBlock::ToolResult {
        tool_use_id: id.into(),
        content: content.into(),
        is_error: false,
    }
}

fn message(role: Role, content: Vec<ContentBlock>) -> Message {
    Message { role, content }
}

/// Resumes `path` in `agent` and returns the events up to the resume's end.
async fn resume(agent: &mut Harness, path: PathBuf) -> Vec<Event> {
    let start = agent.events.len();
    agent.send(Op::Resume { path });
    agent
        .wait_for(|e| matches!(e, Event::SessionResumed { .. } | Event::Error { .. }))
        .await;
    agent.events[start..].to_vec()
}

#[tokio::test]
async fn an_incoherent_hand_edited_log_is_mended_on_resume() {
    for provider in [Provider::Anthropic, Provider::Openai] {
        let server = ScriptedServer::start(vec![Reply::text("carrying on")]).await;
        let data = TempDir::new();
        let mut agent = Harness::start_recorded(test_config(provider, &server), session_log_in(&data));
        let edited = TempDir::new();
        let history = vec![
            Message::user("go"),
            // Two calls with one id, and an empty one; results for all, one twice.
            message(
                Role::Assistant,
                vec![
                    tool_use("a", "bash", json!({"command": "echo 1"})),
                    tool_use("a", "bash", json!({"command": "echo 2"})),
                    tool_use("", "bash", json!({"command": "echo 3"})),
                ],
            ),
            message(
                Role::Tool,
                vec![
                    result("a", "one"),
                    result("a", "two"),
                    result("", "three"),
                    result("a", "again"),
                ],
            ),
            Message::assistant_text("noted"),
            // Results answering nothing.
            message(Role::Tool, vec![result("zzz", "orphan")]),
            Message::user("more"),
            // A call that no result follows, then a user message.
            message(
                Role::Assistant,
                vec![tool_use("b", "bash", json!({"command": "ls"}))],
            ),
            Message::user("and then?"),
            // A result in a user message, and a call with a malformed id left open.
            message(
                Role::User,
                vec![ContentBlock::Text { text: "look".into() }, result("q", "x")],
            ),
            message(
                Role::Assistant,
                vec![tool_use("bad id!", "bash", json!({"command": "pwd"}))],
            ),
        ];
        let path = write_log(edited.path(), agent.workspace.path(), &[messages(history)]);
        let events = resume(&mut agent, path).await;
        assert!(
            matches!(events.last(), Some(Event::SessionResumed { .. })),
            "{events:#?}"
        );
        let mended: Vec<&String> = events
            .iter()
            .filter_map(|e| match e {
                Event::Notice { message } if message.contains("mended") => Some(message),
                _ => None,
            })
            .collect();
        assert!(mended.len() >= 4, "{mended:#?}");
        let events = agent.turn("continue").await;
        assert_eq!(
            events.last(),
            Some(&Event::TurnComplete {
                text: "carrying on".into()
            })
        );
        let request = server.last_request().unwrap();
        assert_valid(provider, &request.body);
        let sent = request.body["messages"].to_string();
        for kept in ["one", "two", "three"] {
            assert!(sent.contains(kept), "{kept} missing from {sent}");
        }
        assert!(!sent.contains("orphan"), "{sent}");
    }
}

#[tokio::test]
async fn a_log_that_cannot_be_mended_is_refused_with_the_reason() {
    let server = ScriptedServer::start(vec![Reply::text("fresh start")]).await;
    let data = TempDir::new();
    let mut agent = Harness::start_recorded(test_config(Provider::Anthropic, &server), session_log_in(&data));
    let edited = TempDir::new();
    let path = write_log(
        edited.path(),
        agent.workspace.path(),
        &[messages(vec![
            Message::assistant_text("I speak first"),
            Message::user("hi"),
        ])],
    );
    let events = resume(&mut agent, path).await;
    assert!(
        matches!(events.last(), Some(Event::Error { message })
            if message.contains("cannot resume") && message.contains("its first message is not the person's")),
        "{events:#?}"
    );
    // The session goes on as it was, and sends nothing invalid.
    let events = agent.turn("hello").await;
    assert_eq!(
        events.last(),
        Some(&Event::TurnComplete {
            text: "fresh start".into()
        })
    );
    assert_valid_anthropic(&server.last_request().unwrap().body);
}

#[tokio::test]
async fn a_user_message_too_large_for_any_prompt_is_refused_and_the_session_stays_usable() {
    let server = ScriptedServer::start(vec![Reply::text("small is fine")]).await;
    let data = TempDir::new();
    let log = session_log_in(&data);
    let mut agent = Harness::start_recorded(test_config(Provider::Anthropic, &server), log.clone());
    let huge = "lorem ipsum dolor sit amet ".repeat(8 << 20 >> 5);
    let events = agent.turn(&huge).await;
    assert!(
        matches!(events.last(), Some(Event::Error { message })
            if message.starts_with("the message was not sent") && message.contains("can never fit")),
        "{:?}",
        events.last()
    );
    assert_eq!(server.request_count(), 0, "nothing was sent");
    let events = agent.turn("a small question").await;
    assert_eq!(
        events.last(),
        Some(&Event::TurnComplete {
            text: "small is fine".into()
        })
    );
    let request = server.last_request().unwrap();
    assert_valid_anthropic(&request.body);
    assert!(request.body.to_string().len() < 100_000);
    agent.send(Op::Shutdown);
    agent.wait_for(|e| matches!(e, Event::ShutdownComplete)).await;

    // The log stays small and resumes into a session that works.
    let path = log.path().expect("a log was written");
    drop((log, agent));
    assert!(std::fs::metadata(&path).unwrap().len() < 1_000_000);
    let server = ScriptedServer::start(vec![Reply::text("resumed fine")]).await;
    let mut agent = Harness::start_recorded(test_config(Provider::Anthropic, &server), session_log_in(&data));
    let events = resume(&mut agent, path).await;
    assert!(
        matches!(events.last(), Some(Event::SessionResumed { .. })),
        "{events:#?}"
    );
    let events = agent.turn("still there?").await;
    assert_eq!(
        events.last(),
        Some(&Event::TurnComplete {
            text: "resumed fine".into()
        })
    );
}

#[tokio::test]
async fn a_write_the_log_left_open_is_reported_as_what_the_file_shows() {
    let server = ScriptedServer::start(vec![Reply::text("ok")]).await;
    let data = TempDir::new();
    let mut agent = Harness::start_recorded(test_config(Provider::Anthropic, &server), session_log_in(&data));
    let workspace = agent.workspace.path().to_path_buf();
    // The first write landed before the kill; the second did not; the third is a command.
    std::fs::write(workspace.join("landed.txt"), "all of it\n").unwrap();
    let landed = json!({"path": "landed.txt", "content": "all of it\n"});
    let missing = json!({"path": "missing.txt", "content": "never written\n"});
    let command = json!({"command": "make"});
    let edited = TempDir::new();
    let requested = |id: &str, name: &str, arguments: &Value| Record::Event {
        ts: 2,
        event: Event::ToolCallRequested {
            id: id.into(),
            name: name.into(),
            arguments: arguments.clone(),
            summary: String::new(),
            kind: Default::default(),
            locations: Vec::new(),
        },
    };
    let path = write_log(
        edited.path(),
        &workspace,
        &[
            Record::Event {
                ts: 1,
                event: Event::TurnStarted { text: "write".into() },
            },
            messages(vec![
                Message::user("write"),
                message(
                    Role::Assistant,
                    vec![
                        tool_use("w1", "write_file", landed.clone()),
                        tool_use("w2", "write_file", missing.clone()),
                        tool_use("c1", "bash", command.clone()),
                    ],
                ),
                message(Role::Tool, Vec::new()),
            ]),
            requested("w1", "write_file", &landed),
            requested("w2", "write_file", &missing),
            requested("c1", "bash", &command),
        ],
    );
    let events = resume(&mut agent, path).await;
    let finished = |id: &str| {
        events
            .iter()
            .find_map(|e| match e {
                Event::ToolCallFinished { id: of, output, .. } if of == id => Some(output.clone()),
                _ => None,
            })
            .unwrap_or_else(|| panic!("no end for {id}: {events:#?}"))
    };
    assert!(
        finished("w1").contains("the change completed before the interruption"),
        "{}",
        finished("w1")
    );
    assert!(
        finished("w2").contains("may not have completed"),
        "{}",
        finished("w2")
    );
    assert!(
        finished("c1").contains("outcome is unknown"),
        "{}",
        finished("c1")
    );
    // The model is told the same.
    agent.turn("go on").await;
    let request = server.last_request().unwrap();
    assert_valid_anthropic(&request.body);
    let sent = request.body["messages"].to_string();
    assert!(
        sent.contains("the change completed before the interruption"),
        "{sent}"
    );
    assert!(sent.contains("may not have completed"), "{sent}");
    assert!(sent.contains("outcome is unknown"), "{sent}");
}

#[tokio::test]
async fn a_recorded_message_too_large_for_any_prompt_is_cut_on_resume() {
    let server = ScriptedServer::start(vec![Reply::text("back again")]).await;
    let data = TempDir::new();
    let mut agent = Harness::start_recorded(test_config(Provider::Anthropic, &server), session_log_in(&data));
    let edited = TempDir::new();
    // What an older miniagent recorded: the whole huge message, and the error after it.
    let huge = "lorem ipsum dolor sit amet ".repeat(8 << 20 >> 5);
    let path = write_log(
        edited.path(),
        agent.workspace.path(),
        &[messages(vec![
            Message::user("hello"),
            Message::assistant_text("hi"),
            Message::user(huge),
        ])],
    );
    let events = resume(&mut agent, path).await;
    assert!(
        matches!(events.last(), Some(Event::SessionResumed { .. })),
        "{events:#?}"
    );
    assert!(
        events
            .iter()
            .any(|e| matches!(e, Event::Notice { message } if message.contains("can never fit a prompt"))),
        "{events:#?}"
    );
    let events = agent.turn("shorter now").await;
    assert_eq!(
        events.last(),
        Some(&Event::TurnComplete {
            text: "back again".into()
        }),
        "{:?}",
        events.last()
    );
    let request = server.last_request().unwrap();
    assert_valid_anthropic(&request.body);
    let sent = request.body["messages"].to_string();
    assert!(
        sent.len() < 100_000 && sent.contains("too large for any prompt"),
        "{} bytes",
        sent.len()
    );
}

#[tokio::test]
async fn many_calls_in_one_reply_are_logged_once_each_and_resume_whole() {
    // The step's results message grows by one result per call; the log used to write the
    // whole message again after each call: 100 reads in one reply made a 37 MB log, 250
    // made 1.35 GB. Each result is now written once.
    const CALLS: usize = 150;
    let body = "0123456789abcdef".repeat(256); // 4 KB per result
    let blocks = (0..CALLS)
        .map(|n| Block::ToolCall {
            id: format!("r{n}"),
            name: "read_file".into(),
            arguments: json!({ "path": "big.txt" }).to_string(),
        })
        .collect();
    let server = ScriptedServer::start(vec![calls(blocks), Reply::text("read them all")]).await;
    let data = TempDir::new();
    let log = session_log_in(&data);
    let mut agent = Harness::start_recorded(test_config(Provider::Anthropic, &server), log.clone());
    agent.workspace.write("big.txt", &body);
    let events = agent.turn("read it many times").await;
    assert_eq!(
        events.last(),
        Some(&Event::TurnComplete {
            text: "read them all".into()
        })
    );
    agent.send(Op::Shutdown);
    agent.wait_for(|e| matches!(e, Event::ShutdownComplete)).await;
    let sent = server.requests()[1].body["messages"].clone();
    let path = log.path().expect("a log was written");
    drop((log, agent));

    // Linear: each result once in the log (as written and in the event that reported
    // it), plus a little; quadratic would be ~75 times the results' size.
    let results_bytes = (CALLS * body.len()) as u64;
    let log_bytes = std::fs::metadata(&path).unwrap().len();
    assert!(
        log_bytes < 4 * results_bytes,
        "log {log_bytes} bytes for {results_bytes} bytes of results"
    );
    let loaded = session::load(&path).unwrap();
    assert!(
        loaded
            .records
            .iter()
            .any(|r| matches!(r, Record::Blocks { blocks, .. } if blocks.len() == 1)),
        "results are appended one by one"
    );

    // The history read back is the one the model was sent, result for result.
    let history = session::load::messages(&path).unwrap();
    let results = history
        .iter()
        .flat_map(|m| &m.content)
        .filter(|b| matches!(b, ContentBlock::ToolResult { .. }))
        .count();
    assert_eq!(results, CALLS);
    assert_eq!(sent.as_array().unwrap().len(), 3);
    let server = ScriptedServer::start(vec![Reply::text("resumed fine")]).await;
    let mut agent = Harness::start_recorded(test_config(Provider::Anthropic, &server), session_log_in(&data));
    let events = resume(&mut agent, path).await;
    assert!(
        matches!(events.last(), Some(Event::SessionResumed { .. })),
        "{events:#?}"
    );
    agent.turn("and now?").await;
    let resent = server.last_request().unwrap().body["messages"].clone();
    assert_eq!(
        unmarked(&resent).as_array().unwrap()[..3],
        unmarked(&sent).as_array().unwrap()[..]
    );
}

/// Resuming sends the recorded session back to the front end once, in one event the log
/// does not record, before the log's warnings (issue 17: no log reading and no echo
/// filtering in the workbench, which fills its panes from these events alone).
#[tokio::test]
async fn a_resume_sends_the_recorded_session_back_once_before_its_warnings() {
    let server = ScriptedServer::start(vec![]).await;
    let data = TempDir::new();
    let mut agent = Harness::start_recorded(test_config(Provider::Anthropic, &server), session_log_in(&data));
    let recorded = vec![
        Event::TurnStarted {
            text: "list the files".into(),
        },
        Event::ToolCallRequested {
            id: "a".into(),
            name: "bash".into(),
            arguments: json!({ "command": "ls" }),
            summary: "ls".into(),
            kind: Default::default(),
            locations: Vec::new(),
        },
    ];
    let mut records: Vec<Record> = recorded
        .iter()
        .map(|event| Record::Event {
            ts: 1,
            event: event.clone(),
        })
        .collect();
    records.push(messages(vec![
        Message::user("list the files"),
        message(
            Role::Assistant,
            vec![tool_use("a", "bash", json!({ "command": "ls" }))],
        ),
    ]));
    let edited = TempDir::new();
    let path = write_log(edited.path(), agent.workspace.path(), &records);
    // The process that recorded it was killed mid-line.
    let mut text = std::fs::read_to_string(&path).unwrap();
    text.push_str(r#"{"kind":"event","ts":2,"ev"#);
    std::fs::write(&path, text).unwrap();
    let warning = session::load(&path).unwrap().warnings.remove(0);

    let events = resume(&mut agent, path.clone()).await;
    assert!(
        matches!(events.last(), Some(Event::SessionResumed { .. })),
        "{events:#?}"
    );
    let restored: Vec<(usize, &Vec<Event>)> = events
        .iter()
        .enumerate()
        .filter_map(|(at, event)| match event {
            Event::HistoryRestored { events } => Some((at, events)),
            _ => None,
        })
        .collect();
    assert_eq!(restored.len(), 1, "{events:#?}");
    assert_eq!(restored[0].1, &recorded);
    let warnings: Vec<usize> = events
        .iter()
        .enumerate()
        .filter(|(_, event)| matches!(event, Event::Notice { message } if *message == warning))
        .map(|(at, _)| at)
        .collect();
    assert_eq!(warnings.len(), 1, "the log's warning, once: {events:#?}");
    assert!(restored[0].0 < warnings[0], "the history comes first");
    // The log keeps what happened, not a copy of itself.
    let written = std::fs::read_to_string(&path).unwrap();
    assert!(!written.contains("history_restored"), "{written}");
    // What the workbench makes of these events: `a_resumed_session_is_shown_from_the_agents_events_alone_each_warning_once`
    // in the workbench's own tests (crates/tui/src/tests/sessions.rs).
}
