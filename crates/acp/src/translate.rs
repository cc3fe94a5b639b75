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

/// One step as ACP's plan entry: its text, priority and status. ACP's entry has no field
/// for a step's note, so the note stays with the other faces.
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
mod tests;
