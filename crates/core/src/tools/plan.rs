//! `update_plan {entries}`: the model keeps its plan for a longer task where the person
//! sees it (the workbench, `exec`, an editor's plan view). Each call replaces the whole
//! plan; the call reports it to the loop ([`ToolOutput::plan`]), which sends
//! [`miniagent_protocol::Event::PlanUpdated`]. It changes nothing and needs no approval.

use futures_util::future::BoxFuture;
use schemars::JsonSchema;
use serde::Deserialize;

use super::{ToolContext, ToolEffect, ToolOutput};
use miniagent_protocol::{PlanEntry, PlanPriority, PlanStatus, ToolKind};

/// The tool's name.
pub const NAME: &str = "update_plan";
/// The most steps a plan holds: a plan is read at a glance, and every one is sent to the
/// front ends and kept in the log with each call.
pub const MAX_ENTRIES: usize = 50;
/// The longest step, in characters.
pub const MAX_CONTENT_CHARS: usize = 300;
/// The longest note on a step, in characters.
pub const MAX_NOTE_CHARS: usize = 300;

/// The `update_plan` tool.
pub struct UpdatePlanTool;

/// `update_plan`'s arguments.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct PlanArgs {
    /// The whole plan in order; it replaces the last.
    #[schemars(length(max = 50))]
    pub entries: Vec<EntryArgs>,
}

/// One step of the plan.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct EntryArgs {
    /// One short line.
    #[schemars(length(min = 1, max = 300))]
    pub content: String,
    pub status: StatusArg,
    /// Optional: what was found, or why it waits.
    #[schemars(length(max = 300))]
    pub note: Option<String>,
    // Kept for models that send one; undescribed, so it costs few tokens.
    pub priority: Option<PriorityArg>,
}

// `pending`, `in_progress` or `completed`. Plain comments: a doc comment would become
// the schema's description, sent with every request.
#[derive(Clone, Copy, Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum StatusArg {
    Pending,
    InProgress,
    Completed,
}

// `high`, `medium` or `low`.
#[derive(Clone, Copy, Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum PriorityArg {
    High,
    Medium,
    Low,
}

impl super::TypedTool for UpdatePlanTool {
    type Args = PlanArgs;

    fn name(&self) -> &str {
        NAME
    }

    fn description(&self) -> &str {
        "Your plan, shown to the person. For work of 3 or more steps, make one first; mark a step \
         in_progress before starting it (one at a time) and completed as soon as it is done. Send \
         the whole plan each time: it replaces the last. Skip it for short tasks."
    }

    fn effect(&self) -> ToolEffect {
        ToolEffect::ReadOnly
    }

    fn kind(&self) -> ToolKind {
        ToolKind::Think
    }

    fn run(&self, args: PlanArgs, _context: ToolContext) -> BoxFuture<'_, ToolOutput> {
        Box::pin(async move {
            match plan_of(args) {
                Ok(entries) => {
                    let output = ToolOutput::ok(summary(&entries));
                    ToolOutput {
                        plan: Some(entries),
                        ..output
                    }
                }
                Err(problem) => ToolOutput::error(problem),
            }
        })
    }
}

/// The plan the arguments give, within the limits (the schema states them, but does not
/// enforce lengths): a step and its note are one line each, trimmed; at most one step is
/// in progress, so the person sees which one is being worked on.
fn plan_of(args: PlanArgs) -> Result<Vec<PlanEntry>, String> {
    if args.entries.len() > MAX_ENTRIES {
        return Err(format!(
            "the plan has {} steps; it may have at most {MAX_ENTRIES}: group them",
            args.entries.len()
        ));
    }
    let entries = args
        .entries
        .into_iter()
        .enumerate()
        .map(|(index, entry)| entry_of(index + 1, entry))
        .collect::<Result<Vec<_>, _>>()?;
    let in_progress: Vec<String> = entries
        .iter()
        .enumerate()
        .filter(|(_, entry)| entry.status == PlanStatus::InProgress)
        .map(|(index, _)| (index + 1).to_string())
        .collect();
    if in_progress.len() > 1 {
        return Err(format!(
            "steps {} are all in_progress; mark only the one you work on now",
            in_progress.join(", ")
        ));
    }
    Ok(entries)
}

/// Step `number` (from 1) as the plan keeps it, or why it cannot be.
fn entry_of(number: usize, entry: EntryArgs) -> Result<PlanEntry, String> {
    let content = one_line(&entry.content);
    if content.is_empty() {
        return Err(format!("step {number} is empty"));
    }
    let chars = content.chars().count();
    if chars > MAX_CONTENT_CHARS {
        return Err(format!(
            "step {number} is {chars} characters long; a step has at most {MAX_CONTENT_CHARS}: say it shorter"
        ));
    }
    // An empty note is no note.
    let note = entry
        .note
        .map(|note| one_line(&note))
        .filter(|note| !note.is_empty());
    if let Some(chars) = note.as_ref().map(|note| note.chars().count())
        && chars > MAX_NOTE_CHARS
    {
        return Err(format!(
            "the note of step {number} is {chars} characters long; a note has at most {MAX_NOTE_CHARS}: say it shorter"
        ));
    }
    Ok(PlanEntry {
        content,
        status: match entry.status {
            StatusArg::Pending => PlanStatus::Pending,
            StatusArg::InProgress => PlanStatus::InProgress,
            StatusArg::Completed => PlanStatus::Completed,
        },
        priority: entry.priority.map(|priority| match priority {
            PriorityArg::High => PlanPriority::High,
            PriorityArg::Medium => PlanPriority::Medium,
            PriorityArg::Low => PlanPriority::Low,
        }),
        note,
    })
}

/// The plan the last of `messages`' `update_plan` calls with a valid plan set (what the
/// model last saw of its plan there), if any call set one.
pub fn plan_in(messages: &[miniagent_protocol::message::Message]) -> Option<Vec<PlanEntry>> {
    messages
        .iter()
        .rev()
        .flat_map(|message| message.tool_uses().collect::<Vec<_>>().into_iter().rev())
        .filter(|call| call.name == NAME)
        .find_map(|call| {
            let args = serde_json::from_value::<PlanArgs>(call.input.clone()).ok()?;
            plan_of(args).ok()
        })
}

/// Whether any of `messages` calls `update_plan`.
pub fn calls_plan(messages: &[miniagent_protocol::message::Message]) -> bool {
    messages
        .iter()
        .any(|message| message.tool_uses().any(|call| call.name == NAME))
}

/// `text` on one line: every run of white space (line breaks included) one space.
fn one_line(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// What the model is told: the plan is taken, in a few words.
fn summary(entries: &[PlanEntry]) -> String {
    let count = |status| entries.iter().filter(|entry| entry.status == status).count();
    let steps = match entries.len() {
        1 => "1 entry".to_string(),
        n => format!("{n} entries"),
    };
    format!(
        "plan updated: {steps}, {} in progress, {} completed",
        count(PlanStatus::InProgress),
        count(PlanStatus::Completed)
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tools::paths::Workspace;
    use crate::tools::{OutputSink, Tool};
    use pretty_assertions::assert_eq;
    use serde_json::{Value, json};
    use std::sync::Arc;
    use tokio_util::sync::CancellationToken;

    fn context() -> ToolContext {
        ToolContext {
            workspace: Arc::new(Workspace::new(&std::env::temp_dir(), &[])),
            cancel: CancellationToken::new(),
            output: OutputSink::discard(),
            approval: crate::config::ApprovalMode::Ask,
            unasked: false,
            sub_agents: None,
            save_to: None,
        }
    }

    async fn run(arguments: Value) -> ToolOutput {
        UpdatePlanTool.run(arguments, context()).await
    }

    #[tokio::test]
    async fn a_plan_comes_back_whole_with_a_short_result() {
        let output = run(json!({"entries": [
            {"content": "read the  parser\n", "status": "completed", "priority": "high", "note": "the bug is\nin lex()"},
            {"content": "fix the bug", "status": "in_progress", "note": " \n"},
            {"content": "add a test", "status": "pending", "priority": "low"},
        ]}))
        .await;
        let plan = vec![
            PlanEntry {
                content: "read the parser".into(),
                status: PlanStatus::Completed,
                priority: Some(PlanPriority::High),
                note: Some("the bug is in lex()".into()),
            },
            PlanEntry {
                content: "fix the bug".into(),
                status: PlanStatus::InProgress,
                priority: None,
                note: None,
            },
            PlanEntry {
                content: "add a test".into(),
                status: PlanStatus::Pending,
                priority: Some(PlanPriority::Low),
                note: None,
            },
        ];
        assert_eq!(
            output,
            ToolOutput {
                plan: Some(plan),
                ..ToolOutput::ok("plan updated: 3 entries, 1 in progress, 1 completed")
            }
        );
    }

    #[tokio::test]
    async fn hostile_plans_are_refused_whole() {
        let many: Vec<Value> = (0..=MAX_ENTRIES)
            .map(|i| json!({"content": format!("step {i}"), "status": "pending"}))
            .collect();
        assert_eq!(
            run(json!({ "entries": many })).await,
            ToolOutput::error("the plan has 51 steps; it may have at most 50: group them")
        );
        let long = "é".repeat(MAX_CONTENT_CHARS + 1);
        assert_eq!(
            run(json!({"entries": [{"content": "ok", "status": "pending"}, {"content": long, "status": "pending"}]}))
                .await,
            ToolOutput::error("step 2 is 301 characters long; a step has at most 300: say it shorter")
        );
        assert_eq!(
            run(json!({"entries": [{"content": " \n\t", "status": "pending"}]})).await,
            ToolOutput::error("step 1 is empty")
        );
        let long_note = "x".repeat(MAX_NOTE_CHARS + 1);
        assert_eq!(
            run(json!({"entries": [{"content": "ok", "status": "pending", "note": long_note}]})).await,
            ToolOutput::error(
                "the note of step 1 is 301 characters long; a note has at most 300: say it shorter"
            )
        );
        // One step at a time is in progress: the person sees which.
        assert_eq!(
            run(json!({"entries": [
                {"content": "a", "status": "in_progress"},
                {"content": "b", "status": "completed"},
                {"content": "c", "status": "in_progress"},
                {"content": "d", "status": "in_progress"},
            ]}))
            .await,
            ToolOutput::error("steps 1, 3, 4 are all in_progress; mark only the one you work on now")
        );
        // An empty plan clears it.
        assert_eq!(
            run(json!({"entries": []})).await,
            ToolOutput {
                plan: Some(vec![]),
                ..ToolOutput::ok("plan updated: 0 entries, 0 in progress, 0 completed")
            }
        );
    }

    /// The schema the model sees: the statuses and priorities as enums, the bounds stated.
    #[test]
    fn the_schema_names_the_statuses_and_the_bounds() {
        assert_eq!(
            UpdatePlanTool.input_schema(),
            json!({
                "type": "object",
                "properties": {
                    "entries": {
                        "type": "array",
                        "maxItems": 50,
                        "description": "The whole plan in order; it replaces the last.",
                        "items": {
                            "type": "object",
                            "description": "One step of the plan.",
                            "properties": {
                                "content": {"type": "string", "minLength": 1, "maxLength": 300, "description": "One short line."},
                                "status": {"type": "string", "enum": ["pending", "in_progress", "completed"]},
                                "note": {"type": "string", "maxLength": 300, "description": "Optional: what was found, or why it waits."},
                                "priority": {"type": "string", "enum": ["high", "medium", "low"]},
                            },
                            "required": ["content", "status"],
                            "additionalProperties": false,
                        },
                    },
                },
                "required": ["entries"],
                "additionalProperties": false,
            })
        );
        assert_eq!(
            (UpdatePlanTool.effect(), Tool::kind(&UpdatePlanTool)),
            (ToolEffect::ReadOnly, ToolKind::Think)
        );
    }

    /// The tool is declared in every request: its name, description and schema stay
    /// small: 206 cl100k and 216 o200k tokens with notes (212 and 220 before them).
    #[test]
    fn the_tool_costs_few_tokens_in_every_request() {
        let spec = crate::llm::ToolSpec {
            name: UpdatePlanTool.name().to_string(),
            description: UpdatePlanTool.description().to_string(),
            input_schema: UpdatePlanTool.input_schema(),
        };
        let counted: Vec<u64> = [
            miniagent_protocol::Encoding::Cl100kBase,
            miniagent_protocol::Encoding::O200kBase,
        ]
        .into_iter()
        .map(|encoding| crate::tokens::TokenCounter::new(encoding).tools(std::slice::from_ref(&spec)))
        .collect();
        eprintln!("update_plan declared: {counted:?} tokens (cl100k, o200k)");
        assert!(counted.iter().all(|&tokens| tokens <= 220), "{counted:?}");
    }
}
