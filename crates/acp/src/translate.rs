//! The agent's events as ACP `session/update`s: pure functions (and one small state, the
//! running calls' output) with no connection in sight, so each row of the mapping is
//! tested on its own.

use std::collections::HashMap;
use std::time::{Duration, Instant};

use agent_client_protocol::v1::schema as acp;
use miniagent_protocol::{
    ApprovalMode, CallEffect, Event, Location, PlanEntry, PlanPriority, PlanStatus, ToolKind, ToolOutcome,
};

/// The most of a call's output one update carries: its end, as a terminal shows it
/// (ACP replaces a call's content with each update, so this is also what stays shown).
pub const OUTPUT_SHOWN: usize = 64 * 1024;

/// How often a running call's output is sent again while it grows.
pub const OUTPUT_EVERY: Duration = Duration::from_millis(100);

/// Text as a content block.
pub fn text_block(text: impl Into<String>) -> acp::ContentBlock {
    acp::ContentBlock::Text(acp::TextContent::new(text))
}

/// A piece of the agent's reply.
pub fn message_chunk(text: impl Into<String>) -> acp::SessionUpdate {
    acp::SessionUpdate::AgentMessageChunk(acp::ContentChunk::new(text_block(text)))
}

fn thought_chunk(text: impl Into<String>) -> acp::SessionUpdate {
    acp::SessionUpdate::AgentThoughtChunk(acp::ContentChunk::new(text_block(text)))
}

fn user_chunk(text: impl Into<String>) -> acp::SessionUpdate {
    acp::SessionUpdate::UserMessageChunk(acp::ContentChunk::new(text_block(text)))
}

/// The approval modes as ACP session modes, in the order a picker lists them.
pub const MODES: [ApprovalMode; 4] = [
    ApprovalMode::ReadOnly,
    ApprovalMode::Ask,
    ApprovalMode::AutoEdit,
    ApprovalMode::FullAuto,
];

/// The session mode id of an approval mode (its config name: `auto-edit`).
pub fn mode_id(mode: ApprovalMode) -> acp::SessionModeId {
    acp::SessionModeId::new(mode.to_string())
}

/// The approval mode a session mode id names.
pub fn mode_from_id(id: &str) -> Option<ApprovalMode> {
    MODES.into_iter().find(|mode| mode.to_string() == id)
}

fn mode_description(mode: ApprovalMode) -> &'static str {
    match mode {
        ApprovalMode::ReadOnly => "Only tools that change nothing run; everything else is refused.",
        ApprovalMode::Ask => "Tools that change nothing run; every other call asks.",
        ApprovalMode::AutoEdit => {
            "Reading and editing files in the workspace run; commands and external tools ask."
        }
        ApprovalMode::FullAuto => "Everything runs without asking.",
    }
}

fn mode_name(mode: ApprovalMode) -> &'static str {
    match mode {
        ApprovalMode::ReadOnly => "Read only",
        ApprovalMode::Ask => "Ask",
        ApprovalMode::AutoEdit => "Auto edit",
        ApprovalMode::FullAuto => "Full auto",
    }
}

/// The session's modes, `current` selected.
pub fn modes(current: ApprovalMode) -> acp::SessionModeState {
    acp::SessionModeState::new(
        mode_id(current),
        MODES
            .into_iter()
            .map(|mode| {
                acp::SessionMode::new(mode_id(mode), mode_name(mode)).description(mode_description(mode))
            })
            .collect(),
    )
}

/// What the `model` config option offers: the session's model, and the profiles and
/// models it can switch to (`Event::ModelChoices`).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Models {
    pub model: String,
    pub choices: Vec<miniagent_protocol::ModelChoice>,
}

impl Models {
    /// The session's model as one of the option's values.
    pub fn current(&self) -> String {
        self.choices
            .iter()
            .find(|choice| choice.current)
            .map_or_else(|| self.model.clone(), |choice| choice.name.clone())
    }

    /// The option's values: each choice (a profile named with its model), or the
    /// session's model alone when it has none.
    fn values(&self) -> Vec<acp::SessionConfigSelectOption> {
        if self.choices.is_empty() {
            return vec![acp::SessionConfigSelectOption::new(
                self.model.clone(),
                self.model.clone(),
            )];
        }
        self.choices
            .iter()
            .map(|choice| {
                let option = acp::SessionConfigSelectOption::new(choice.name.clone(), choice.name.clone());
                if choice.profile {
                    option.description(format!(
                        "profile: {} ({}), a window of {} tokens",
                        choice.model, choice.provider, choice.context_window
                    ))
                } else {
                    option.description(format!("{} model", choice.provider))
                }
            })
            .collect()
    }
}

/// The config options: the approval mode (as the modes above) and the model: the
/// config's provider profiles and the current provider's models, switched between turns.
pub fn config_options(current: ApprovalMode, models: &Models) -> Vec<acp::SessionConfigOption> {
    let mode_values: Vec<acp::SessionConfigSelectOption> = MODES
        .into_iter()
        .map(|mode| {
            acp::SessionConfigSelectOption::new(mode.to_string(), mode_name(mode))
                .description(mode_description(mode))
        })
        .collect();
    vec![
        acp::SessionConfigOption::select("mode", "Approval mode", current.to_string(), mode_values)
            .description("What may run without asking.")
            .category(acp::SessionConfigOptionCategory::Mode),
        acp::SessionConfigOption::select("model", "Model", models.current(), models.values())
            .description("The model or provider profile (from miniagent's config); it changes between turns.")
            .category(acp::SessionConfigOptionCategory::Model),
    ]
}

/// The slash commands this face runs itself, then the agent's prompt commands (`/init`,
/// the `commands/` files; one named like this face's own is left out: those win), as
/// `available_commands_update` lists them.
pub fn commands(prompt: &[miniagent_protocol::CommandInfo]) -> acp::SessionUpdate {
    let mut list = vec![
        acp::AvailableCommand::new(
            "compact",
            "Summarize the older history now to make room in the context",
        ),
        acp::AvailableCommand::new(
            "clear",
            "Start the conversation over (the session and its log stay)",
        ),
    ];
    for command in prompt
        .iter()
        .filter(|command| !OWN_COMMANDS.contains(&command.name.as_str()))
    {
        let mut offered = acp::AvailableCommand::new(command.name.clone(), command.description.clone());
        if let Some(hint) = &command.argument_hint {
            offered = offered.input(acp::AvailableCommandInput::Unstructured(
                acp::UnstructuredCommandInput::new(hint.clone()),
            ));
        }
        list.push(offered);
    }
    acp::SessionUpdate::AvailableCommandsUpdate(acp::AvailableCommandsUpdate::new(list))
}

/// The commands this face runs itself.
pub const OWN_COMMANDS: &[&str] = &["compact", "clear"];

fn kind(kind: ToolKind) -> acp::ToolKind {
    match kind {
        ToolKind::Read => acp::ToolKind::Read,
        ToolKind::Edit => acp::ToolKind::Edit,
        ToolKind::Delete => acp::ToolKind::Delete,
        ToolKind::Move => acp::ToolKind::Move,
        ToolKind::Search => acp::ToolKind::Search,
        ToolKind::Execute => acp::ToolKind::Execute,
        ToolKind::Think => acp::ToolKind::Think,
        ToolKind::Fetch => acp::ToolKind::Fetch,
        ToolKind::Other => acp::ToolKind::Other,
    }
}

fn location(location: &Location) -> acp::ToolCallLocation {
    acp::ToolCallLocation::new(location.path.clone()).line(location.line)
}

/// A call's title: its tool and the one-line summary of its arguments.
pub fn title(name: &str, summary: &str) -> String {
    if summary.is_empty() {
        name.to_string()
    } else {
        format!("{name}: {summary}")
    }
}

fn plan_entry(entry: &PlanEntry) -> acp::PlanEntry {
    let priority = match entry.priority {
        Some(PlanPriority::High) => acp::PlanEntryPriority::High,
        // ACP requires a priority; a step without one is as important as most.
        Some(PlanPriority::Medium) | None => acp::PlanEntryPriority::Medium,
        Some(PlanPriority::Low) => acp::PlanEntryPriority::Low,
    };
    let status = match entry.status {
        PlanStatus::Pending => acp::PlanEntryStatus::Pending,
        PlanStatus::InProgress => acp::PlanEntryStatus::InProgress,
        PlanStatus::Completed => acp::PlanEntryStatus::Completed,
    };
    acp::PlanEntry::new(entry.content.clone(), priority, status)
}

/// The last `limit` bytes of `text`, cut at a character boundary.
pub fn tail(text: &str, limit: usize) -> &str {
    if text.len() <= limit {
        return text;
    }
    let mut start = text.len() - limit;
    while !text.is_char_boundary(start) {
        start += 1;
    }
    &text[start..]
}

fn update(id: &str, fields: acp::ToolCallUpdateFields) -> acp::SessionUpdate {
    acp::SessionUpdate::ToolCallUpdate(acp::ToolCallUpdate::new(id.to_string(), fields))
}

fn text_content(text: &str) -> acp::ToolCallContent {
    acp::ToolCallContent::Content(acp::Content::new(text_block(tail(text, OUTPUT_SHOWN))))
}

/// A tool call as first announced.
fn requested(
    id: &str,
    name: &str,
    summary: &str,
    tool_kind: ToolKind,
    locations: &[Location],
    arguments: &serde_json::Value,
) -> acp::SessionUpdate {
    acp::SessionUpdate::ToolCall(
        acp::ToolCall::new(id.to_string(), title(name, summary))
            .kind(kind(tool_kind))
            .status(acp::ToolCallStatus::Pending)
            .locations(locations.iter().map(location).collect())
            .raw_input(arguments.clone()),
    )
}

/// A finished call: completed or failed, with a diff for each file it changed whose
/// texts are known, else its result as text.
fn finished(id: &str, outcome: ToolOutcome, output: &str, effects: &[CallEffect]) -> acp::SessionUpdate {
    let status = match outcome {
        ToolOutcome::Ok => acp::ToolCallStatus::Completed,
        _ => acp::ToolCallStatus::Failed,
    };
    let diffs: Vec<acp::ToolCallContent> = effects
        .iter()
        .filter_map(|effect| match effect {
            CallEffect::FileChanged {
                path,
                change: Some(change),
            } => Some(acp::ToolCallContent::Diff(
                acp::Diff::new(path.clone(), change.new_text.clone()).old_text(change.old_text.clone()),
            )),
            CallEffect::FileChanged { change: None, .. } => None,
        })
        .collect();
    let content = if diffs.is_empty() {
        vec![text_content(output)]
    } else {
        diffs
    };
    update(
        id,
        acp::ToolCallUpdateFields::new().status(status).content(content),
    )
}

/// An event of a recorded session, as `session/load` replays it: the person's messages,
/// the replies (thinking and text, whole), the calls and how they ended, the plan.
pub fn replay(event: &Event) -> Vec<acp::SessionUpdate> {
    match event {
        Event::TurnStarted { text } => vec![user_chunk(text.clone())],
        Event::AssistantMessage { thinking, text, .. } => {
            let mut updates = Vec::new();
            if !thinking.is_empty() {
                updates.push(thought_chunk(thinking.clone()));
            }
            if !text.is_empty() {
                updates.push(message_chunk(text.clone()));
            }
            updates
        }
        Event::ToolCallRequested {
            id,
            name,
            arguments,
            summary,
            kind,
            locations,
        } => vec![requested(id, name, summary, *kind, locations, arguments)],
        Event::ToolCallFinished {
            id,
            outcome,
            output,
            effects,
            ..
        } => vec![finished(id, *outcome, output, effects)],
        Event::PlanUpdated { entries } => vec![plan(entries)],
        Event::StepLimitReached { report, .. } => vec![message_chunk(report.clone())],
        _ => Vec::new(),
    }
}

fn plan(entries: &[PlanEntry]) -> acp::SessionUpdate {
    acp::SessionUpdate::Plan(acp::Plan::new(entries.iter().map(plan_entry).collect()))
}

/// A running call's output so far, and when it was last sent.
#[derive(Debug)]
struct Running {
    output: String,
    sent: Option<Instant>,
}

/// Translates a live session's events; keeps each running call's output so that it is
/// sent at most every [`OUTPUT_EVERY`], its end only.
#[derive(Debug, Default)]
pub struct Live {
    running: HashMap<String, Running>,
}

impl Live {
    /// The updates `event` makes, `now` deciding whether grown output is sent yet.
    pub fn updates(&mut self, event: &Event, now: Instant) -> Vec<acp::SessionUpdate> {
        match event {
            Event::TextDelta { delta } => vec![message_chunk(delta.clone())],
            Event::ThinkingDelta { delta } => vec![thought_chunk(delta.clone())],
            Event::ToolCallRequested { .. } | Event::PlanUpdated { .. } => replay(event),
            Event::ToolCallStarted { id, .. } => {
                self.running.insert(
                    id.clone(),
                    Running {
                        output: String::new(),
                        sent: None,
                    },
                );
                vec![update(
                    id,
                    acp::ToolCallUpdateFields::new().status(acp::ToolCallStatus::InProgress),
                )]
            }
            Event::ToolOutputDelta { id, delta } => self.output(id, delta, now),
            Event::ToolCallFinished { id, .. } => {
                self.running.remove(id);
                replay(event)
            }
            Event::TokenUsage {
                context_tokens,
                context_window,
                cost_usd,
                ..
            } => {
                let usage = acp::UsageUpdate::new(*context_tokens, *context_window)
                    .cost(cost_usd.map(|amount| acp::Cost::new(amount, "USD")));
                vec![acp::SessionUpdate::UsageUpdate(usage)]
            }
            Event::ApprovalModeChanged { mode } => vec![acp::SessionUpdate::CurrentModeUpdate(
                acp::CurrentModeUpdate::new(mode_id(*mode)),
            )],
            // ACP cannot take back what was streamed: the retry streams the whole reply
            // again, so the person is told why it repeats.
            Event::Retrying {
                discard_partial: true,
                attempt,
                max_attempts,
                reason,
                ..
            } => vec![message_chunk(format!(
                "\n\n[the model call failed ({reason}); what follows is attempt {} of {max_attempts}, from its start]\n\n",
                attempt + 1
            ))],
            Event::StepLimitReached { report, .. } => vec![message_chunk(report.clone())],
            // A sub-agent works inside its `delegate` call: its reply and the calls it
            // makes show as that call's running output.
            Event::SubAgent { parent, event, .. } => match event.as_ref() {
                Event::TextDelta { delta } => self.output(parent, delta, now),
                Event::ToolCallRequested { name, summary, .. } => {
                    self.output(parent, &format!("\n→ {}\n", title(name, summary)), now)
                }
                _ => Vec::new(),
            },
            _ => Vec::new(),
        }
    }

    fn output(&mut self, id: &str, delta: &str, now: Instant) -> Vec<acp::SessionUpdate> {
        let Some(running) = self.running.get_mut(id) else {
            return Vec::new();
        };
        running.output.push_str(delta);
        // Only the end is ever shown: the rest need not be kept.
        if running.output.len() > 2 * OUTPUT_SHOWN {
            running.output = tail(&running.output, OUTPUT_SHOWN).to_string();
        }
        if running
            .sent
            .is_some_and(|sent| now.duration_since(sent) < OUTPUT_EVERY)
        {
            return Vec::new();
        }
        running.sent = Some(now);
        vec![update(
            id,
            acp::ToolCallUpdateFields::new().content(vec![text_content(&running.output)]),
        )]
    }
}

#[cfg(test)]
mod tests {
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
                },
                PlanEntry {
                    content: "write".into(),
                    status: PlanStatus::InProgress,
                    priority: None,
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
        let description =
            "The model or provider profile (from miniagent's config); it changes between turns.";
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
}
