//! The sub-agents behind the `delegate` tool ([`crate::tools::delegate`]): each runs the
//! same [`StepLoop`] as the turn, with its own fresh history, a subset of the tools
//! (read-only ones unless the call names others), its own step limit, and a prompt that
//! asks it to report everything it found and invent nothing. Its answer is the call's
//! result; its tokens are its own and never enter the parent's context figures. Its
//! events reach front ends wrapped in `sub_agent`, naming the call that started it.

use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};

use futures_util::future::BoxFuture;

use super::context::ContextState;
use super::history::Message;
use super::turn::{Ended, StepLoop};
use super::{Session, TurnContext};
use crate::tokens::TokenCounter;
use crate::tools::delegate::NAME;
use crate::tools::{SubAgents, ToolEffect, ToolOutput};
use miniagent_protocol::Event;

const SUB_AGENT_PROMPT: &str = "You are a sub-agent of miniagent, a software engineering agent. You were given one task \
by the main agent and a limited set of tools. Work on that task only. When you are done, answer with a complete report \
of everything you found that bears on the task: exact file paths, names, numbers, commands and their results. \
Report only what you saw; never invent or guess. If you could not finish, say what is missing.";

const EXIT_PROMPT: &str = "You have used all your steps. Do not call any tools. Report now everything you found that \
bears on the task, exactly as you saw it, and what remains unknown. Invent nothing.";

/// The result of a delegate call the person interrupted.
const INTERRUPTED: &str = "interrupted by the user";
/// The result of a delegate call whose turn the person stopped at an approval.
const ABORTED: &str = "the person stopped the turn at one of the sub-agent's approvals";

static NEXT_AGENT: AtomicU32 = AtomicU32::new(1);

/// The sub-agents of the `call_id` call run in `context` (a [`super::StartSubAgents`]).
pub(super) fn start(context: &TurnContext, call_id: &str) -> Arc<dyn SubAgents> {
    Arc::new(Parent {
        context: context.clone(),
        call_id: call_id.to_string(),
    })
}

/// The loop a delegate call runs in, and the call.
struct Parent {
    context: TurnContext,
    call_id: String,
}

impl SubAgents for Parent {
    fn run(&self, task: String, tools: Option<Vec<String>>) -> BoxFuture<'_, ToolOutput> {
        Box::pin(run(&self.context, &self.call_id, task, tools))
    }
}

/// Runs one sub-agent for the `call_id` call to its end.
async fn run(parent: &TurnContext, call_id: &str, task: String, asked: Option<Vec<String>>) -> ToolOutput {
    let options = &parent.options;
    let names = match tools_for(parent, asked) {
        Ok(names) => names,
        Err(why) => return ToolOutput::error(why),
    };
    let agent = format!("sub-{}", NEXT_AGENT.fetch_add(1, Ordering::Relaxed));
    let sub = TurnContext {
        options: Arc::clone(options),
        workspace: Arc::clone(&parent.workspace),
        events: parent.events.nested(call_id, &agent),
        cancel: parent.cancel.child_token(),
        approvals: parent.approvals.clone(),
        policy: parent.policy.clone(),
        inspect_requested: Arc::default(),
        sub_agents: None,
        meter: parent.meter.clone(),
        cost_limit: parent.cost_limit,
        checkpoints: Arc::clone(&parent.checkpoints),
    };
    let system = format!(
        "{SUB_AGENT_PROMPT}\n\nThe workspace is `{}`.",
        options.workspace.display()
    );
    let mut session = Session {
        context: ContextState::new(TokenCounter::new(options.config.agent.tokenizer)),
        last_usage: Default::default(),
        last_usage_estimated: false,
        compaction_log: Vec::new(),
        fixed_tokens: None,
        session_start: None,
        turns: Vec::new(),
    };
    sub.events.emit(Event::TurnStarted { text: task.clone() });
    session.context.push(Message::user(task));
    let max_steps = options.config.agent.delegate_max_steps;
    let steps = StepLoop {
        system: &system,
        only: Some(names),
        max_steps,
        report_prompt: EXIT_PROMPT.to_string(),
    };
    match steps.run(&mut session, &sub).await {
        Ended::Answered { text, cut } => {
            sub.events.emit(Event::TurnComplete { text: text.clone() });
            if text.trim().is_empty() {
                ToolOutput::error("the sub-agent ended without an answer")
            } else if cut {
                ToolOutput::ok(format!(
                    "{text}\n[the sub-agent's answer was cut at the output limit]"
                ))
            } else {
                ToolOutput::ok(text)
            }
        }
        Ended::StepLimit {
            steps,
            report,
            written,
        } => {
            sub.events.emit(Event::StepLimitReached {
                steps,
                report: report.clone(),
            });
            match written {
                true => ToolOutput::ok(format!("(The sub-agent used all {steps} steps.)\n{report}")),
                false => ToolOutput::error(report),
            }
        }
        Ended::Interrupted(_) => ToolOutput::error(INTERRUPTED),
        Ended::Aborted => {
            // "Abort the turn" at a sub-agent's approval stops the turn that delegated.
            parent.cancel.cancel();
            ToolOutput::error(ABORTED)
        }
        Ended::TooLarge(why) => ToolOutput::error(format!(
            "the sub-agent stopped: its next request would not fit ({why})"
        )),
        Ended::OverCost(why) => ToolOutput::error(format!("the sub-agent stopped: {why}")),
        Ended::ModelFailed(error) => ToolOutput::error(format!("the sub-agent's model call failed: {error}")),
        Ended::Repeating(partial_text) => ToolOutput::error(format!(
            "the sub-agent's reply kept repeating itself and was cut:\n{partial_text}"
        )),
    }
}

/// The tools the sub-agent may use: those `asked` for (each must exist, and none may be
/// `delegate`: sub-agents do not nest), or else the read-only ones.
/// Fails with what the model is told.
fn tools_for(parent: &TurnContext, asked: Option<Vec<String>>) -> Result<Vec<String>, String> {
    let registry = &parent.options.tools;
    let Some(asked) = asked else {
        return Ok(registry
            .all()
            .iter()
            .filter(|tool| tool.effect() == ToolEffect::ReadOnly && tool.name() != NAME)
            .map(|tool| tool.name().to_string())
            .collect());
    };
    let unknown: Vec<&str> = asked
        .iter()
        .filter(|name| name.as_str() == NAME || registry.get(name).is_none())
        .map(String::as_str)
        .collect();
    if !unknown.is_empty() {
        let offered: Vec<String> = registry.names().into_iter().filter(|name| name != NAME).collect();
        return Err(format!(
            "a sub-agent cannot use {}; the tools are: {}",
            unknown.join(", "),
            offered.join(", ")
        ));
    }
    Ok(asked)
}
