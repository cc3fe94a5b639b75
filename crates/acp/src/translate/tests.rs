#![allow(clippy::unwrap_used)] // A test fails by panicking.
use super::*;
use miniagent_protocol::TextChange;
use pretty_assertions::assert_eq;
use serde_json::json;

fn wire(updates: Vec<acp::SessionUpdate>) -> serde_json::Value {
    serde_json::to_value(updates).unwrap()
}

/// The agent's prompt commands follow this face's own; one named like those is not
/// offered twice, and an argument hint becomes the command's input.
#[test]
fn prompt_commands_are_offered_after_the_faces_own() {
    let info = |name: &str, hint: Option<&str>| miniagent_protocol::CommandInfo {
        name: name.into(),
        description: format!("{name} it"),
        argument_hint: hint.map(str::to_string),
        source: "user".into(),
    };
    let update = commands(&[
        info("compact", None),
        info("git:commit", Some("MESSAGE")),
        info("init", None),
    ]);
    assert_eq!(
        wire(vec![update]),
        json!([{
            "sessionUpdate": "available_commands_update",
            "availableCommands": [
                {"name": "compact", "description": "Summarize the older history now to make room in the context"},
                {"name": "clear", "description": "Start the conversation over (the session and its log stay)"},
                {"name": "git:commit", "description": "git:commit it", "input": {"hint": "MESSAGE"}},
                {"name": "init", "description": "init it"},
            ]
        }])
    );
}

#[test]
fn deltas_stream_as_message_and_thought_chunks() {
    let mut live = Live::default();
    let now = Instant::now();
    let mut updates = live.updates(&Event::ThinkingDelta { delta: "hmm".into() }, now);
    updates.extend(live.updates(&Event::TextDelta { delta: "Hi".into() }, now));
    assert_eq!(
        wire(updates),
        json!([
            {"sessionUpdate": "agent_thought_chunk", "content": {"type": "text", "text": "hmm"}},
            {"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": "Hi"}},
        ])
    );
    // The whole reply is not sent again at its end (it was streamed).
    let whole = Event::AssistantMessage {
        thinking: "hmm".into(),
        text: "Hi".into(),
        tool_calls: Vec::new(),
        stop_reason: miniagent_protocol::StopReason::EndTurn,
    };
    assert_eq!(live.updates(&whole, now), Vec::new());
}

#[test]
fn a_call_is_announced_with_its_kind_locations_and_input() {
    let event = Event::ToolCallRequested {
        id: "c1".into(),
        name: "read_file".into(),
        arguments: json!({"path": "src/main.rs", "offset": 10}),
        summary: "src/main.rs".into(),
        kind: ToolKind::Read,
        locations: vec![Location {
            path: "/ws/src/main.rs".into(),
            line: Some(10),
        }],
    };
    assert_eq!(
        wire(Live::default().updates(&event, Instant::now())),
        json!([{
            "sessionUpdate": "tool_call",
            "toolCallId": "c1",
            "title": "read_file: src/main.rs",
            "kind": "read",
            // `pending` is the default status, which the SDK leaves out of the wire.
            "locations": [{"path": "/ws/src/main.rs", "line": 10}],
            "rawInput": {"path": "src/main.rs", "offset": 10},
        }])
    );
}

#[test]
fn output_is_sent_at_most_every_tenth_of_a_second_and_only_its_end() {
    let mut live = Live::default();
    let start = Instant::now();
    let started = Event::ToolCallStarted {
        id: "c1".into(),
        name: "bash".into(),
    };
    assert_eq!(
        wire(live.updates(&started, start)),
        json!([{"sessionUpdate": "tool_call_update", "toolCallId": "c1", "status": "in_progress"}])
    );
    let delta = |text: &str| Event::ToolOutputDelta {
        id: "c1".into(),
        delta: text.into(),
    };
    let content = |text: &str| {
        json!([{"sessionUpdate": "tool_call_update", "toolCallId": "c1",
                 "content": [{"type": "content", "content": {"type": "text", "text": text}}]}])
    };
    assert_eq!(wire(live.updates(&delta("a\n"), start)), content("a\n"));
    assert_eq!(
        live.updates(&delta("b\n"), start + Duration::from_millis(50)),
        Vec::new()
    );
    assert_eq!(
        wire(live.updates(&delta("c\n"), start + Duration::from_millis(100))),
        content("a\nb\nc\n")
    );
    let long = "x".repeat(3 * OUTPUT_SHOWN);
    let sent = live.updates(&delta(&long), start + Duration::from_millis(300));
    assert_eq!(wire(sent), content(&"x".repeat(OUTPUT_SHOWN)));
    // Output of a call that is not running (or never was) is dropped.
    assert_eq!(
        live.updates(
            &Event::ToolOutputDelta {
                id: "other".into(),
                delta: "y".into()
            },
            start
        ),
        Vec::new()
    );
}

fn finished_event(outcome: ToolOutcome, effects: Vec<CallEffect>) -> Event {
    Event::ToolCallFinished {
        id: "c2".into(),
        name: "edit_file".into(),
        ok: outcome == ToolOutcome::Ok,
        outcome,
        duration_ms: 3,
        output_preview: String::new(),
        output: "edited notes.txt".into(),
        effects,
    }
}

#[test]
fn a_finished_edit_carries_its_diff_and_a_failure_its_text() {
    let edit = finished_event(
        ToolOutcome::Ok,
        vec![
            CallEffect::FileChanged {
                path: "/ws/notes.txt".into(),
                change: Some(TextChange {
                    old_text: Some("one\n".into()),
                    new_text: "two\n".into(),
                }),
            },
            CallEffect::FileChanged {
                path: "/ws/new.txt".into(),
                change: Some(TextChange {
                    old_text: None,
                    new_text: "fresh\n".into(),
                }),
            },
        ],
    );
    assert_eq!(
        wire(Live::default().updates(&edit, Instant::now())),
        json!([{
            "sessionUpdate": "tool_call_update",
            "toolCallId": "c2",
            "status": "completed",
            "content": [
                {"type": "diff", "path": "/ws/notes.txt", "oldText": "one\n", "newText": "two\n"},
                {"type": "diff", "path": "/ws/new.txt", "newText": "fresh\n"},
            ],
        }])
    );
    // Too large to carry whole: the result's text stands in.
    let large = finished_event(
        ToolOutcome::Ok,
        vec![CallEffect::FileChanged {
            path: "/ws/big.txt".into(),
            change: None,
        }],
    );
    let denied = finished_event(ToolOutcome::Denied, Vec::new());
    let text = |status: &str| {
        json!([{"sessionUpdate": "tool_call_update", "toolCallId": "c2", "status": status,
                 "content": [{"type": "content", "content": {"type": "text", "text": "edited notes.txt"}}]}])
    };
    assert_eq!(wire(replay(&large)), text("completed"));
    assert_eq!(wire(replay(&denied)), text("failed"));
}

#[test]
fn usage_plan_and_mode_changes_have_their_updates() {
    let mut live = Live::default();
    let now = Instant::now();
    let usage = Event::TokenUsage {
        context_tokens: 1200,
        estimated: false,
        token_limit: 150_000,
        context_window: 200_000,
        input_tokens: 1000,
        output_tokens: 200,
        total_input_tokens: 1000,
        total_output_tokens: 200,
        cache_read_tokens: 0,
        cache_write_tokens: 0,
        total_cache_read_tokens: 0,
        total_cache_write_tokens: 0,
        cost_usd: Some(0.25),
    };
    let plan = Event::PlanUpdated {
        entries: vec![
            PlanEntry {
                content: "read".into(),
                status: PlanStatus::Completed,
                priority: Some(PlanPriority::High),
                note: None,
            },
            // ACP's plan entry has no place for a note: it is left out, not folded into
            // the step's text.
            PlanEntry {
                content: "write".into(),
                status: PlanStatus::InProgress,
                priority: None,
                note: Some("after the read".into()),
            },
        ],
    };
    let mode = Event::ApprovalModeChanged {
        mode: ApprovalMode::AutoEdit,
    };
    let mut updates = live.updates(&usage, now);
    updates.extend(live.updates(&plan, now));
    updates.extend(live.updates(&mode, now));
    assert_eq!(
        wire(updates),
        json!([
            {"sessionUpdate": "usage_update", "used": 1200, "size": 200_000,
             "cost": {"amount": 0.25, "currency": "USD"}},
            {"sessionUpdate": "plan", "entries": [
                {"content": "read", "priority": "high", "status": "completed"},
                {"content": "write", "priority": "medium", "status": "in_progress"},
            ]},
            {"sessionUpdate": "current_mode_update", "currentModeId": "auto-edit"},
        ])
    );
}

#[test]
fn a_recorded_session_replays_its_messages_and_calls_only() {
    let events = [
        Event::TurnStarted {
            text: "fix it".into(),
        },
        Event::StepStarted {
            step: 1,
            max_steps: 50,
        },
        Event::TextDelta {
            delta: "partial".into(),
        },
        Event::AssistantMessage {
            thinking: "look first".into(),
            text: "Done.".into(),
            tool_calls: Vec::new(),
            stop_reason: miniagent_protocol::StopReason::EndTurn,
        },
        Event::TurnComplete { text: "Done.".into() },
    ];
    let updates: Vec<acp::SessionUpdate> = events.iter().flat_map(replay).collect();
    assert_eq!(
        wire(updates),
        json!([
            {"sessionUpdate": "user_message_chunk", "content": {"type": "text", "text": "fix it"}},
            {"sessionUpdate": "agent_thought_chunk", "content": {"type": "text", "text": "look first"}},
            {"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": "Done."}},
        ])
    );
}

#[test]
fn a_retry_that_repeats_streamed_text_says_so() {
    let retry = Event::Retrying {
        attempt: 1,
        max_attempts: 3,
        delay_ms: 500,
        reason: "overloaded".into(),
        discard_partial: true,
    };
    assert_eq!(
        wire(Live::default().updates(&retry, Instant::now())),
        json!([{"sessionUpdate": "agent_message_chunk", "content": {"type": "text",
            "text": "\n\n[the model call failed (overloaded); what follows is attempt 2 of 3, from its start]\n\n"}}])
    );
}

#[test]
fn modes_and_config_options_name_the_approval_modes_and_the_one_model() {
    assert_eq!(mode_from_id("auto-edit"), Some(ApprovalMode::AutoEdit));
    assert_eq!(mode_from_id("yolo"), None);
    let state = serde_json::to_value(modes(ApprovalMode::Ask)).unwrap();
    assert_eq!(state["currentModeId"], "ask");
    assert_eq!(
        state["availableModes"]
            .as_array()
            .unwrap()
            .iter()
            .map(|mode| mode["id"].as_str().unwrap())
            .collect::<Vec<_>>(),
        ["read-only", "ask", "auto-edit", "full-auto"]
    );
    let alone = Models {
        model: "scripted-model".into(),
        choices: Vec::new(),
    };
    let options = serde_json::to_value(config_options(ApprovalMode::Ask, &alone)).unwrap();
    let description = "The model or provider profile (from miniagent's config); it changes between turns.";
    assert_eq!(
        options[1],
        json!({"id": "model", "name": "Model", "description": description,
               "category": "model", "type": "select", "currentValue": "scripted-model",
               "options": [{"value": "scripted-model", "name": "scripted-model"}]})
    );
    // With profiles: each is a value, the one in use current.
    let choice = |name: &str, profile: bool, current: bool| miniagent_protocol::ModelChoice {
        name: name.into(),
        profile,
        model: "scripted-model".into(),
        provider: "anthropic".into(),
        context_window: 200_000,
        current,
    };
    let profiled = Models {
        model: "scripted-model".into(),
        choices: vec![
            choice("default", true, false),
            choice("fast", true, true),
            choice("claude-x", false, false),
        ],
    };
    let options = serde_json::to_value(config_options(ApprovalMode::Ask, &profiled)).unwrap();
    assert_eq!(
        options[1],
        json!({"id": "model", "name": "Model", "description": description,
               "category": "model", "type": "select", "currentValue": "fast",
               "options": [
                   {"value": "default", "name": "default", "description": "profile: scripted-model (anthropic), a window of 200000 tokens"},
                   {"value": "fast", "name": "fast", "description": "profile: scripted-model (anthropic), a window of 200000 tokens"},
                   {"value": "claude-x", "name": "claude-x", "description": "anthropic model"}]})
    );
}

#[test]
fn a_sub_agent_shows_as_its_delegate_calls_output() {
    let mut live = Live::default();
    let start = Instant::now();
    live.updates(
        &Event::ToolCallStarted {
            id: "d1".into(),
            name: "delegate".into(),
        },
        start,
    );
    let inner = |event: Event| Event::SubAgent {
        parent: "d1".into(),
        agent: "explorer".into(),
        event: Box::new(event),
    };
    let call = inner(Event::ToolCallRequested {
        id: "s1".into(),
        name: "read_file".into(),
        arguments: json!({"path": "a.rs"}),
        summary: "a.rs".into(),
        kind: ToolKind::Read,
        locations: Vec::new(),
    });
    assert_eq!(
        wire(live.updates(&call, start)),
        json!([{"sessionUpdate": "tool_call_update", "toolCallId": "d1",
                 "content": [{"type": "content", "content": {"type": "text", "text": "\n→ read_file: a.rs\n"}}]}])
    );
    let text = inner(Event::TextDelta {
        delta: "Found it.".into(),
    });
    let later = start + OUTPUT_EVERY;
    assert_eq!(
        wire(live.updates(&text, later)),
        json!([{"sessionUpdate": "tool_call_update", "toolCallId": "d1",
                 "content": [{"type": "content", "content": {"type": "text", "text": "\n→ read_file: a.rs\nFound it."}}]}])
    );
    // Its other events (its thinking, its own results) stay inside.
    assert_eq!(
        live.updates(&inner(Event::ThinkingDelta { delta: "hm".into() }), later),
        Vec::new()
    );
}

#[test]
fn tail_cuts_at_a_character_boundary() {
    assert_eq!(tail("héllo", 4), "llo");
    assert_eq!(tail("abc", 10), "abc");
}
