//! A `delegate` call in a scripted session: the sub-agent's requests carry only its
//! tools and its own history; the parent receives its answer as the tool result.
#![allow(clippy::unwrap_used, clippy::expect_used)] // A test fails by panicking.

use crate::support;

use miniagent_core::config::Provider;
use miniagent_protocol::Event;
use pretty_assertions::assert_eq;
use serde_json::json;
use support::harness::{Harness, test_config};
use support::validate::{assert_valid_anthropic, system_text, unmarked};
use support::*;

#[tokio::test]
async fn a_sub_agent_works_in_its_own_context_with_its_own_tools() {
    let task = "Find the package version in Cargo.toml and report it exactly.";
    let server = ScriptedServer::start(vec![
        // The parent delegates.
        Reply::tool(
            "d1",
            "delegate",
            json!({"task": task, "tools": ["read_file"]}).to_string(),
        ),
        // The sub-agent reads, tries a tool it was not given, then answers.
        Reply::tool("s1", "read_file", r#"{"path": "Cargo.toml"}"#),
        Reply::tool("s2", "bash", r#"{"command": "touch escaped"}"#),
        Reply::text("The version is 1.2.3 (Cargo.toml line 3)."),
        // The parent finishes with the report.
        Reply::text("The sub-agent found version 1.2.3."),
    ])
    .await;
    let mut agent = Harness::start(test_config(Provider::Anthropic, &server));
    agent
        .workspace
        .write("Cargo.toml", "[package]\nname = \"demo\"\nversion = \"1.2.3\"\n");
    let events = agent.turn("What version is this package?").await;
    assert_eq!(
        events.last(),
        Some(&Event::TurnComplete {
            text: "The sub-agent found version 1.2.3.".into()
        })
    );

    let requests = server.requests();
    assert_eq!(requests.len(), 5);
    let tool_names = |n: usize| -> Vec<String> {
        requests[n].body["tools"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t["name"].as_str().unwrap().to_string())
            .collect()
    };
    assert!(tool_names(0).contains(&"delegate".to_string()));
    // The sub-agent sees only its tool, its own system prompt, and only its task.
    assert_eq!(tool_names(1), vec!["read_file"]);
    assert!(system_text(&requests[1].body).starts_with("You are a sub-agent of miniagent"));
    assert_eq!(
        unmarked(&requests[1].body["messages"]),
        json!([{"role": "user", "content": [{"type": "text", "text": task}]}])
    );
    assert_valid_anthropic(&requests[2].body);
    let sub_history = requests[3].body["messages"].to_string();
    assert!(sub_history.contains("version = \\\"1.2.3\\\""), "{sub_history}");
    assert!(sub_history.contains("only these tools may be used now: read_file; `bash` is not one of them"));
    assert!(!agent.workspace.join("escaped").exists());
    // The parent's history carries the answer as the delegate call's result, and none of
    // the sub-agent's own steps.
    let parent = &requests[4].body;
    assert_valid_anthropic(parent);
    let last = parent["messages"].as_array().unwrap().last().unwrap().clone();
    assert_eq!(
        unmarked(&last["content"][0]),
        json!({"type": "tool_result", "tool_use_id": "d1", "content": "The version is 1.2.3 (Cargo.toml line 3).", "is_error": false})
    );
    assert!(!parent["messages"].to_string().contains("\"s1\""));
    // Front ends see the sub-agent's calls, tagged with the delegate call.
    let nested: Vec<(String, String)> = events
        .iter()
        .filter_map(|e| match e {
            Event::SubAgent { parent, event, .. } => match event.as_ref() {
                Event::ToolCallFinished { name, .. } => Some((parent.clone(), name.clone())),
                _ => None,
            },
            _ => None,
        })
        .collect();
    assert_eq!(
        nested,
        vec![
            ("d1".to_string(), "read_file".to_string()),
            ("d1".to_string(), "bash".to_string())
        ]
    );
    // The sub-agent sends no token figures of its own: its calls count in the session's
    // totals (what is billed), which only the parent's events carry.
    let usage: Vec<u64> = events
        .iter()
        // From the turn on (the agent reports the idle prompt's size when it starts).
        .skip_while(|e| !matches!(e, Event::TurnStarted { .. }))
        .filter_map(|e| match e {
            Event::TokenUsage {
                total_input_tokens, ..
            } => Some(*total_input_tokens),
            _ => None,
        })
        .collect();
    assert_eq!(
        usage.len(),
        2,
        "only the parent's two model calls count: {usage:?}"
    );
}

#[tokio::test]
async fn an_interrupt_stops_the_sub_agent_and_the_history_stays_valid() {
    use miniagent_protocol::Op;
    let server = ScriptedServer::start(vec![
        Reply::tool(
            "d1",
            "delegate",
            json!({"task": "Read everything slowly."}).to_string(),
        ),
        Reply::slow(Turn::text("word ".repeat(300)), 50),
    ])
    .await;
    let mut agent = Harness::start(test_config(Provider::Anthropic, &server));
    agent.send(Op::UserInput {
        text: "delegate it".into(),
    });
    agent
        .wait_for(|e| matches!(e, Event::SubAgent { event, .. } if matches!(event.as_ref(), Event::TextDelta { .. })))
        .await;
    let sent = std::time::Instant::now();
    agent.send(Op::Interrupt);
    agent.wait_for(|e| matches!(e, Event::TurnAborted { .. })).await;
    assert!(
        sent.elapsed() < std::time::Duration::from_millis(500),
        "{:?}",
        sent.elapsed()
    );
    server.push(Reply::text("stopped"));
    agent.turn("never mind").await;
    let last = server.requests().last().unwrap().body.clone();
    assert_valid_anthropic(&last);
    assert!(last["messages"].to_string().contains("interrupted by the user"));
}

/// A sub-agent that reads a large file twenty times stays within the model's window: its
/// loop checks the budget before every call and compacts as the main loop does.
#[tokio::test]
async fn a_sub_agent_compacts_and_stays_within_the_window() {
    use miniagent_core::tokens::{Encoding, TokenCounter};
    const WINDOW: u64 = 40_000;
    const STEPS: usize = 20;
    let mut script = vec![Reply::tool(
        "d1",
        "delegate",
        json!({"task": "Read big.txt twenty times.", "tools": ["read_file"]}).to_string(),
    )];
    // Two spellings of the path in turn, so the same-call guard lets every read run.
    script.extend((0..STEPS).map(|n| {
        let path = if n % 2 == 0 { "big.txt" } else { "./big.txt" };
        Reply::tool(format!("s{n}"), "read_file", json!({ "path": path }).to_string())
    }));
    script.push(Reply::text("big.txt has 500 lines."));
    script.push(Reply::text("The sub-agent says 500 lines."));
    let server = ScriptedServer::start(script).await;
    server.answer_toolless_with(Reply::text("Read big.txt several times; it has 500 lines."));
    let mut config = test_config(Provider::Anthropic, &server);
    config.model.context_window = WINDOW;
    config.model.max_output_tokens = 4096;
    config.agent.delegate_max_steps = STEPS as u32 + 5;
    let mut agent = Harness::start(config);
    let counter = TokenCounter::new(Encoding::Cl100kBase);
    let text: String = (1..=500)
        .map(|n| format!("line {n}: the quick brown fox jumps over the lazy dog\n"))
        .collect();
    let file_tokens = counter.count(&text);
    assert!(file_tokens > 5_000, "{file_tokens}");
    agent.workspace.write("big.txt", &text);

    let events = agent.turn("How many lines has big.txt?").await;
    assert_eq!(
        events.last(),
        Some(&Event::TurnComplete {
            text: "The sub-agent says 500 lines.".into()
        })
    );
    let requests = server.requests();
    let sub_agent: Vec<&RecordedRequest> = requests
        .iter()
        .filter(|r| system_text(&r.body).starts_with("You are a sub-agent"))
        .collect();
    assert_eq!(sub_agent.len(), STEPS + 1);
    let mut largest = 0;
    for request in sub_agent {
        assert_valid_anthropic(&request.body);
        // The whole body as JSON counts more than the prompt does: a safe upper bound.
        let tokens = counter.count(&request.body.to_string());
        assert!(
            tokens < WINDOW,
            "a sub-agent request of about {tokens} tokens was sent"
        );
        largest = largest.max(tokens);
    }
    eprintln!("largest sub-agent request: about {largest} tokens of a {WINDOW}-token window");
    // Compaction trims oversized results first, without a model call, so a summary call
    // is not needed here; what must hold is that it compacted and every request fit.
    let compacted = events.iter().any(|e| {
        matches!(e, Event::SubAgent { event, .. } if match event.as_ref() {
            Event::ContextCompacted { .. } => true,
            Event::Notice { message } => message.contains("trimmed") || message.contains("stubs"),
            _ => false,
        })
    });
    assert!(compacted, "front ends are told the sub-agent compacted");
}

/// The session log records the main history only: a sub-agent's own messages (and its
/// compactions) never enter it, so the log reads back as the history the parent has.
#[tokio::test]
async fn a_sub_agents_history_stays_out_of_the_session_log() {
    let server = ScriptedServer::start(vec![
        Reply::tool(
            "d1",
            "delegate",
            json!({"task": "Read Cargo.toml.", "tools": ["read_file"]}).to_string(),
        ),
        Reply::tool("s1", "read_file", r#"{"path": "Cargo.toml"}"#),
        Reply::text("It says demo."),
        Reply::text("The package is demo."),
    ])
    .await;
    let data = TempDir::new();
    let log = support::harness::session_log_in(&data);
    let mut agent = Harness::start_recorded(test_config(Provider::Anthropic, &server), log.clone());
    agent
        .workspace
        .write("Cargo.toml", "[package]\nname = \"demo\"\n");
    agent.turn("Which package is this?").await;
    agent.send(miniagent_protocol::Op::Shutdown);
    agent.wait_for(|e| matches!(e, Event::ShutdownComplete)).await;
    let recorded = miniagent_core::session::load::messages(&log.path().unwrap()).unwrap();
    let texts: Vec<String> = recorded
        .iter()
        .map(|m| format!("{:?}: {}", m.role, m.text()))
        .collect();
    assert_eq!(
        texts,
        vec![
            "User: Which package is this?".to_string(),
            "Assistant: ".to_string(),
            "Tool: ".to_string(),
            "Assistant: The package is demo.".to_string(),
        ]
    );
}

/// The sub-agent runs the turn's own step loop, so a reply cut at the output limit is
/// continued once, as the turn's is, and the joined text is the call's result.
#[tokio::test]
async fn a_sub_agent_continues_a_reply_cut_at_the_output_limit() {
    let server = ScriptedServer::start(vec![
        Reply::tool(
            "d1",
            "delegate",
            json!({"task": "Describe Cargo.toml.", "tools": ["read_file"]}).to_string(),
        ),
        Reply::Stream(Turn::text("The first half").stop(Stop::MaxTokens)),
        Reply::text(" and the rest."),
        Reply::text("Done."),
    ])
    .await;
    let mut agent = Harness::start(test_config(Provider::Anthropic, &server));
    let events = agent.turn("Describe it.").await;
    assert_eq!(events.last(), Some(&Event::TurnComplete { text: "Done.".into() }));
    let requests = server.requests();
    assert_eq!(requests.len(), 4);
    // The sub-agent's second request asks it to go on, after its cut reply.
    let continued = &requests[2].body;
    assert!(system_text(continued).starts_with("You are a sub-agent"));
    let messages = continued["messages"].as_array().unwrap();
    assert_eq!(messages.len(), 3, "{messages:?}");
    assert_eq!(messages[1]["content"][0]["text"], "The first half");
    assert!(
        messages[2]["content"][0]["text"]
            .as_str()
            .unwrap()
            .starts_with("Your previous reply was cut off by the output token limit")
    );
    let parent = &requests[3].body;
    let last = parent["messages"].as_array().unwrap().last().unwrap().clone();
    assert_eq!(
        unmarked(&last["content"][0]),
        json!({"type": "tool_result", "tool_use_id": "d1", "content": "The first half and the rest.", "is_error": false})
    );
}

/// `delegate` is a registered tool like the others: front ends list it with the session's
/// tools, and its call goes through the common path (requested, started, finished).
#[tokio::test]
async fn delegate_is_listed_with_the_tools_and_runs_through_the_common_call_path() {
    let server = ScriptedServer::start(vec![
        Reply::tool("d1", "delegate", json!({"task": "Say hi."}).to_string()),
        Reply::text("hi"),
        Reply::text("It said hi."),
    ])
    .await;
    let mut agent = Harness::start(test_config(Provider::Anthropic, &server));
    let configured = agent
        .wait_for(|e| matches!(e, Event::SessionConfigured { .. }))
        .await;
    let Event::SessionConfigured { tools, .. } = configured else {
        unreachable!()
    };
    assert!(tools.iter().any(|tool| tool.name == "delegate"), "{tools:?}");
    let events = agent.turn("Delegate a greeting.").await;
    let own: Vec<String> = events
        .iter()
        .filter_map(|e| match e {
            Event::ToolCallRequested { name, .. } => Some(format!("requested {name}")),
            Event::ToolCallStarted { name, .. } => Some(format!("started {name}")),
            Event::ToolCallFinished { name, outcome, .. } => Some(format!("finished {name} {outcome:?}")),
            _ => None,
        })
        .collect();
    assert_eq!(
        own,
        vec!["requested delegate", "started delegate", "finished delegate Ok"]
    );
    // Sub-agents do not nest: the default tools leave `delegate` out.
    let requests = server.requests();
    let sub_tools: Vec<&str> = requests[1].body["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert!(!sub_tools.contains(&"delegate"), "{sub_tools:?}");
    assert!(sub_tools.contains(&"read_file"), "{sub_tools:?}");
}

/// The same-call guard holds inside a sub-agent as in the turn: a read that returned the
/// same thing three times in a row is refused the fourth time, and the sub-agent is told.
#[tokio::test]
async fn a_sub_agent_gets_the_same_call_guard() {
    let read = r#"{"path": "Cargo.toml"}"#;
    let mut script = vec![Reply::tool(
        "d1",
        "delegate",
        json!({"task": "Read Cargo.toml.", "tools": ["read_file"]}).to_string(),
    )];
    script.extend((1..=4).map(|n| Reply::tool(format!("s{n}"), "read_file", read)));
    script.push(Reply::text("It says demo."));
    script.push(Reply::text("The package is demo."));
    let server = ScriptedServer::start(script).await;
    let mut agent = Harness::start(test_config(Provider::Anthropic, &server));
    agent
        .workspace
        .write("Cargo.toml", "[package]\nname = \"demo\"\n");
    let events = agent.turn("Which package is this?").await;
    assert_eq!(
        events.last(),
        Some(&Event::TurnComplete {
            text: "The package is demo.".into()
        })
    );
    let requests = server.requests();
    assert_eq!(requests.len(), 7);
    // What the sub-agent was sent after its fourth identical read.
    let after_fourth = requests[5].body["messages"].as_array().unwrap();
    let last = after_fourth.last().unwrap();
    assert_eq!(last["content"][0]["tool_use_id"], "s4");
    assert_eq!(last["content"][0]["is_error"], true);
    assert!(
        last["content"][0]["content"]
            .as_str()
            .unwrap()
            .starts_with("refused: the same call a fourth time in a row"),
        "{last}"
    );
    let refused = events.iter().any(|e| {
        matches!(e, Event::SubAgent { event, .. } if matches!(event.as_ref(),
            Event::ToolCallFinished { id, outcome: miniagent_protocol::ToolOutcome::Refused, .. } if id == "s4"))
    });
    assert!(refused, "front ends see the refusal");
}

/// Out of steps, a sub-agent writes one report, as the turn does: one more request with
/// the closing prompt, the step-limit event (wrapped) once, and the report as the result.
#[tokio::test]
async fn a_sub_agent_out_of_steps_writes_one_report() {
    let server = ScriptedServer::start(vec![
        Reply::tool(
            "d1",
            "delegate",
            json!({"task": "Read a and b.", "tools": ["read_file"]}).to_string(),
        ),
        Reply::tool("s1", "read_file", r#"{"path": "a.txt"}"#),
        Reply::tool("s2", "read_file", r#"{"path": "b.txt"}"#),
        Reply::text("a says A; b was not read to the end."),
        Reply::text("Reported."),
    ])
    .await;
    let mut config = test_config(Provider::Anthropic, &server);
    config.agent.delegate_max_steps = 2;
    let mut agent = Harness::start(config);
    agent.workspace.write("a.txt", "A\n");
    agent.workspace.write("b.txt", "B\n");
    let events = agent.turn("Read both.").await;
    assert_eq!(
        events.last(),
        Some(&Event::TurnComplete {
            text: "Reported.".into()
        })
    );
    let requests = server.requests();
    assert_eq!(requests.len(), 5);
    let closing: Vec<usize> = requests
        .iter()
        .enumerate()
        .filter(|(_, r)| {
            r.body["messages"]
                .to_string()
                .contains("You have used all your steps")
        })
        .map(|(n, _)| n)
        .collect();
    assert_eq!(closing, vec![3], "the report is asked for once");
    assert_valid_anthropic(&requests[3].body);
    let reports: Vec<(u32, String)> = events
        .iter()
        .filter_map(|e| match e {
            Event::SubAgent { event, .. } => match event.as_ref() {
                Event::StepLimitReached { steps, report } => Some((*steps, report.clone())),
                _ => None,
            },
            _ => None,
        })
        .collect();
    assert_eq!(
        reports,
        vec![(2, "a says A; b was not read to the end.".to_string())]
    );
    let parent = requests[4].body["messages"]
        .as_array()
        .unwrap()
        .last()
        .unwrap()
        .clone();
    assert_eq!(
        parent["content"][0]["content"],
        "(The sub-agent used all 2 steps.)\na says A; b was not read to the end."
    );
}
