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

/// The `update_plan` tool.
pub struct UpdatePlanTool;

/// `update_plan`'s arguments.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct PlanArgs {
    /// The whole plan, in order; it replaces the previous one.
    #[schemars(length(max = 50))]
    pub entries: Vec<EntryArgs>,
}

/// One step of the plan.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct EntryArgs {
    /// What the step does, in one short line.
    #[schemars(length(min = 1, max = 300))]
    pub content: String,
    /// Where the step stands.
    pub status: StatusArg,
    /// How much the step matters (default: none said).
    pub priority: Option<PriorityArg>,
}

/// `pending`, `in_progress` or `completed`.
#[derive(Clone, Copy, Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum StatusArg {
    Pending,
    InProgress,
    Completed,
}

/// `high`, `medium` or `low`.
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
        "Keep a plan of a task with several steps where the person sees it. Send the whole plan \
         each time (it replaces the last), one short line per step, with its status; keep one step \
         in_progress while you work on it and mark steps completed as you finish them. Not needed \
         for short tasks."
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
/// enforce lengths): a step is one line, trimmed.
fn plan_of(args: PlanArgs) -> Result<Vec<PlanEntry>, String> {
    if args.entries.len() > MAX_ENTRIES {
        return Err(format!(
            "the plan has {} steps; it may have at most {MAX_ENTRIES}: group them",
            args.entries.len()
        ));
    }
    args.entries
        .into_iter()
        .enumerate()
        .map(|(index, entry)| {
            let content = entry.content.split_whitespace().collect::<Vec<_>>().join(" ");
            let chars = content.chars().count();
            if content.is_empty() {
                return Err(format!("step {} is empty", index + 1));
            }
            if chars > MAX_CONTENT_CHARS {
                return Err(format!(
                    "step {} is {chars} characters long; a step has at most {MAX_CONTENT_CHARS}: say it shorter",
                    index + 1
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
            })
        })
        .collect()
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
            {"content": "read the  parser\n", "status": "completed", "priority": "high"},
            {"content": "fix the bug", "status": "in_progress"},
            {"content": "add a test", "status": "pending", "priority": "low"},
        ]}))
        .await;
        let plan = vec![
            PlanEntry {
                content: "read the parser".into(),
                status: PlanStatus::Completed,
                priority: Some(PlanPriority::High),
            },
            PlanEntry {
                content: "fix the bug".into(),
                status: PlanStatus::InProgress,
                priority: None,
            },
            PlanEntry {
                content: "add a test".into(),
                status: PlanStatus::Pending,
                priority: Some(PlanPriority::Low),
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
                        "description": "The whole plan, in order; it replaces the previous one.",
                        "items": {
                            "type": "object",
                            "description": "One step of the plan.",
                            "properties": {
                                "content": {"type": "string", "minLength": 1, "maxLength": 300, "description": "What the step does, in one short line."},
                                "status": {"type": "string", "enum": ["pending", "in_progress", "completed"], "description": "Where the step stands."},
                                "priority": {"type": "string", "enum": ["high", "medium", "low"], "description": "How much the step matters (default: none said)."},
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
}
