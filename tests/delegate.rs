//! A `delegate` call in a scripted session: the sub-agent's requests carry only its
//! tools and its own history; the parent receives its answer as the tool result.

mod support;

use miniagent::config::Provider;
use miniagent::protocol::Event;
use pretty_assertions::assert_eq;
use serde_json::json;
use support::harness::{Harness, test_config};
use support::validate::assert_valid_anthropic;
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
    assert!(
        requests[1].body["system"]
            .as_str()
            .unwrap()
            .starts_with("You are a sub-agent of miniagent")
    );
    assert_eq!(
        requests[1].body["messages"],
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
        last["content"][0],
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
    // The sub-agent's tokens stay out of the parent's figures.
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
    use miniagent::protocol::Op;
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
