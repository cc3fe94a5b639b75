//! `delegate {task, tools?}`: a sub-agent with its own fresh history, a subset of the
//! tools (read-only ones unless the call names others), its own step limit, and a prompt
//! that asks it to report everything it found and invent nothing. Its answer is the
//! call's result; its tokens are its own and never enter the parent's context figures.
//! Its events reach front ends wrapped in `sub_agent`, naming the call that started it.
//! Its history gets the main loop's pre-flight: before every model call it is compacted
//! to fit the same budget.

use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};

use serde_json::{Value, json};

use super::compaction::{self, BudgetFailure};
use super::context::ContextState;
use super::history::{ContentBlock, Message, Role};
use super::model_call::{CallFailure, Deltas, call_model};
use super::turn::{CallGuards, ToolPhase, announce, run_tools};
use super::{Session, TurnContext, UsageTotals};
use crate::llm::{ModelRequest, ModelResponse, ToolSpec};
use crate::protocol::{Event, StopReason};
use crate::tools::{ToolEffect, ToolOutput};

/// The tool's name.
pub(crate) const NAME: &str = "delegate";

const SUB_AGENT_PROMPT: &str = "You are a sub-agent of miniagent, a software engineering agent. You were given one task \
by the main agent and a limited set of tools. Work on that task only. When you are done, answer with a complete report \
of everything you found that bears on the task: exact file paths, names, numbers, commands and their results. \
Report only what you saw; never invent or guess. If you could not finish, say what is missing.";

const EXIT_PROMPT: &str = "You have used all your steps. Do not call any tools. Report now everything you found that \
bears on the task, exactly as you saw it, and what remains unknown. Invent nothing.";

static NEXT_AGENT: AtomicU32 = AtomicU32::new(1);

/// The tool as the model sees it.
pub(crate) fn spec() -> ToolSpec {
    ToolSpec {
        name: NAME.to_string(),
        description: "Hand a self-contained task to a sub-agent with its own fresh context, for example to search \
            or read widely without filling your own context. It gets only the tools you name (default: the \
            read-only ones), works alone, and its final report comes back as this call's result. Describe the \
            task completely: it sees nothing of this conversation."
            .to_string(),
        input_schema: json!({
            "type": "object",
            "properties": {
                "task": {"type": "string", "description": "The whole task, with everything the sub-agent needs to know."},
                "tools": {"type": "array", "items": {"type": "string"}, "description": "Tool names it may use (default: the read-only tools)."},
            },
            "required": ["task"],
            "additionalProperties": false,
        }),
    }
}

/// Why a delegate call ended without an answer.
pub(crate) enum Stopped {
    /// The person interrupted or aborted the turn.
    Cancelled,
}

/// Runs the sub-agent for the `call_id` call.
pub(crate) async fn run(
    context: &TurnContext,
    call_id: &str,
    arguments: &Value,
) -> Result<ToolOutput, Stopped> {
    let options = &context.options;
    let task = arguments
        .get("task")
        .and_then(Value::as_str)
        .unwrap_or("")
        .trim()
        .to_string();
    if task.is_empty() {
        return Ok(ToolOutput::error("`task` is empty"));
    }
    let registry = &options.tools;
    let names: Vec<String> = match arguments.get("tools").and_then(Value::as_array) {
        Some(asked) => {
            let asked: Vec<String> = asked
                .iter()
                .filter_map(Value::as_str)
                .map(str::to_string)
                .collect();
            let unknown: Vec<&String> = asked
                .iter()
                .filter(|n| n.as_str() == NAME || registry.get(n).is_none())
                .collect();
            if !unknown.is_empty() {
                let unknown: Vec<&str> = unknown.iter().map(|n| n.as_str()).collect();
                return Ok(ToolOutput::error(format!(
                    "a sub-agent cannot use {}; the tools are: {}",
                    unknown.join(", "),
                    registry.names().join(", ")
                )));
            }
            asked
        }
        None => registry
            .all()
            .iter()
            .filter(|tool| tool.effect() == ToolEffect::ReadOnly)
            .map(|tool| tool.name().to_string())
            .collect(),
    };
    let specs: Vec<ToolSpec> = registry
        .specs()
        .into_iter()
        .filter(|spec| names.contains(&spec.name))
        .collect();
    let agent = format!("sub-{}", NEXT_AGENT.fetch_add(1, Ordering::Relaxed));
    let sub = TurnContext {
        options: Arc::clone(options),
        workspace: Arc::clone(&context.workspace),
        events: context.events.nested(call_id, &agent),
        cancel: context.cancel.child_token(),
        approvals: context.approvals.clone(),
        policy: context.policy.clone(),
        inspect_requested: Arc::default(),
    };
    let system = format!(
        "{SUB_AGENT_PROMPT}\n\nThe workspace is `{}`.",
        options.workspace.display()
    );
    let mut session = Session {
        context: ContextState::new(context_counter(context)),
        usage: UsageTotals::default(),
        compaction_log: Vec::new(),
        fixed_tokens: None,
    };
    sub.events.emit(Event::TurnStarted { text: task.clone() });
    session.context.push(Message::user(task));
    let max_steps = options.config.agent.delegate_max_steps;
    let mut guards = CallGuards::allowing(names.clone());
    for step in 1..=max_steps {
        sub.events.emit(Event::StepStarted { step, max_steps });
        if let Err(ended) = preflight(&mut session, &sub).await {
            return ended;
        }
        let response = match call_fitting(&mut session, &sub, &system, &specs, None).await {
            Ok(response) => response,
            Err(CallFailure::Cancelled { .. }) => return Err(Stopped::Cancelled),
            Err(CallFailure::Failed(error)) => {
                return Ok(ToolOutput::error(format!(
                    "the sub-agent's model call failed: {error}"
                )));
            }
            Err(CallFailure::Repeating { partial_text }) => {
                return Ok(ToolOutput::error(format!(
                    "the sub-agent's reply kept repeating itself and was cut:\n{partial_text}"
                )));
            }
        };
        let message = announce(&sub, &response);
        let calls_tools = response
            .content
            .iter()
            .any(|b| matches!(b, ContentBlock::ToolUse { .. }));
        if !response.content.is_empty() {
            session.context.push(message.clone());
        }
        if !calls_tools {
            let text = message.text();
            sub.events.emit(Event::TurnComplete { text: text.clone() });
            return Ok(answer(text, response.stop_reason));
        }
        match run_tools(&mut session, &sub, &response, &mut guards).await {
            ToolPhase::Done => {}
            ToolPhase::Interrupted | ToolPhase::Aborted => return Err(Stopped::Cancelled),
        }
    }
    // Out of steps: one more call, without tools, for the report.
    if let Err(ended) = preflight(&mut session, &sub).await {
        return ended;
    }
    match call_fitting(&mut session, &sub, &system, &specs, Some(EXIT_PROMPT)).await {
        Ok(response) => {
            let text = Message {
                role: Role::Assistant,
                content: response.content,
            }
            .text();
            sub.events.emit(Event::TurnComplete { text: text.clone() });
            Ok(answer(
                format!("(The sub-agent used all {max_steps} steps.)\n{text}"),
                StopReason::EndTurn,
            ))
        }
        Err(CallFailure::Cancelled { .. }) => Err(Stopped::Cancelled),
        Err(CallFailure::Failed(error)) => Ok(ToolOutput::error(format!(
            "the sub-agent used all {max_steps} steps and its report failed: {error}"
        ))),
        Err(CallFailure::Repeating { partial_text }) => Ok(ToolOutput::error(format!(
            "the sub-agent used all {max_steps} steps and its report kept repeating itself:\n{partial_text}"
        ))),
    }
}

/// The main loop's pre-flight for the sub-agent's own history: compacts it to fit the
/// budget before a model call. `Err` is how the delegate call ends when it cannot.
async fn preflight(session: &mut Session, sub: &TurnContext) -> Result<(), Result<ToolOutput, Stopped>> {
    match compaction::ensure_budget(session, sub, false).await {
        Ok(_) => Ok(()),
        Err(BudgetFailure::Cancelled) => Err(Err(Stopped::Cancelled)),
        Err(BudgetFailure::TooLarge(why)) => Err(Ok(ToolOutput::error(format!(
            "the sub-agent stopped: its next request would not fit ({why})"
        )))),
    }
}

/// One model call on the sub-agent's history (with `closing` appended, unrecorded). When
/// the provider says the prompt is too long (our count was off), the history is
/// compacted and the call made once more, as the main loop does.
async fn call_fitting(
    session: &mut Session,
    sub: &TurnContext,
    system: &str,
    specs: &[ToolSpec],
    closing: Option<&str>,
) -> Result<ModelResponse, CallFailure> {
    let mut compacted = false;
    loop {
        let mut messages = session.context.prompt();
        messages.extend(closing.map(Message::user));
        let request = ModelRequest {
            system,
            messages: &messages,
            tools: specs,
            max_output_tokens: sub.options.config.model.max_output_tokens,
        };
        let error = match call_model(sub, &request, Deltas::Forward).await {
            Err(CallFailure::Failed(error)) if error.is_context_overflow() && !compacted => error,
            result => return result,
        };
        compacted = true;
        let before = compaction::prompt_size(session, sub);
        if let Err(BudgetFailure::Cancelled) = compaction::ensure_budget(session, sub, true).await {
            return Err(CallFailure::Cancelled {
                partial_text: String::new(),
            });
        }
        if compaction::prompt_size(session, sub) >= before {
            return Err(CallFailure::Failed(error));
        }
    }
}

fn context_counter(context: &TurnContext) -> crate::tokens::TokenCounter {
    crate::tokens::TokenCounter::new(context.options.config.agent.tokenizer)
}

fn answer(text: String, stop: StopReason) -> ToolOutput {
    if text.trim().is_empty() {
        return ToolOutput::error("the sub-agent ended without an answer");
    }
    if stop == StopReason::MaxTokens {
        return ToolOutput::ok(format!(
            "{text}\n[the sub-agent's answer was cut at the output limit]"
        ));
    }
    ToolOutput::ok(text)
}
