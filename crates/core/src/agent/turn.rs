//! The step loop and the turn built on it. [`StepLoop`] is the one loop every agent runs,
//! the session's turn and each sub-agent alike: the pre-flight budget check and
//! compaction, the model call (compacting once more when the provider says the prompt is
//! too long), the reply's tool calls with their guards, the continuation of a reply cut
//! at the output limit, and at the step limit one model-written report. [`run_turn`] runs
//! it for a user message and turns how it ended into the turn's last event.

use super::approval::ApprovalPolicy;
use super::compaction::{self, BudgetFailure};
use super::history::{ContentBlock, Message, Role};
use super::hooks::{self, MAX_STOP_CONTINUATIONS};
use super::model_call::{CallFailure, Deltas, Reckoning, call_model};
use super::{Session, TurnContext};
use crate::hooks::HookEvent;
use crate::llm::{ModelRequest, ModelResponse, PromptCache, ToolSpec};
use crate::tools::output::cap_text;
use miniagent_protocol::{Event, StopReason, ToolCallSummary, usd};

mod calls;
mod intake;

use calls::{
    ABORTED, CallGuards, INTERRUPTED, ToolPhase, run_tools, stub_earlier_large_arguments,
    stub_large_arguments,
};
use intake::{REFUSED_ECHO_BYTES, fits_alone, give_back, hooked_message, too_large, with_attachments};

/// Marks assistant text cut short by an interruption.
const INTERRUPTED_MARK: &str = "[interrupted by the user]";
/// Marks assistant text cut because it kept repeating itself.
const REPEATING_MARK: &str = "[cut: this reply kept repeating itself]";
/// Sent when a reply stopped at the output limit, once per turn.
const CONTINUE_PROMPT: &str =
    "Your previous reply was cut off by the output token limit. Continue exactly where it stopped.";

pub(crate) async fn run_turn(session: &mut Session, text: String, context: &TurnContext) {
    let options = &context.options;
    let attached = with_attachments(context, text.clone()).await;
    let message = attached.message.clone();
    if let Err(why) = fits_alone(session, context, &options.tools.specs(), &message) {
        // Shown and recorded cut: the whole text would only weigh down the log.
        session.start_turn(&cap_text(&text, REFUSED_ECHO_BYTES));
        context.events.emit(Event::TurnStarted {
            text: cap_text(&text, REFUSED_ECHO_BYTES),
        });
        give_back(context, text);
        context.events.emit_closing(Event::Error {
            message: format!("the message was not sent: {why}"),
        });
        return;
    }
    session.start_turn(&text);
    context.events.emit(Event::TurnStarted { text });
    if let Some(event) = attached.event() {
        context.events.emit(event);
    }
    let Some(message) = hooked_message(session, context, message).await else {
        return;
    };
    stub_earlier_large_arguments(session, context);
    session.context.push(message);
    let pushed = session.context.messages().len();
    super::turn_message(&mut session.turns, pushed.checked_sub(1));
    context.events.commit(session);
    if !mcp_settled(context).await {
        context.events.emit_closing(Event::TurnAborted {
            reason: "you interrupted the turn while MCP servers were connecting".to_string(),
        });
        return;
    }
    // What a skill pre-approved lasts for the turn that loaded it.
    context.policy.with(ApprovalPolicy::end_skills);
    let max_steps = options.config.agent.max_steps;
    let metered_from = context.meter.get();
    let turn = StepLoop {
        system: &options.system_prompt,
        only: None,
        max_steps,
        report_prompt: format!(
            "You have used all {max_steps} steps allowed for this task, so stop here and do not call any tools. \
             Write a short progress report for the person: what was done, what remains, and what the next step would be."
        ),
    };
    let ended = turn.run(session, context).await;
    let ended = until_stop_hooks_agree(session, context, &turn, ended).await;
    // Taken back first, so the gauge below no longer counts it.
    let refused = match &ended {
        Ended::TooLarge(why) => Some(too_large(session, context, pushed, why)),
        _ => None,
    };
    if !matches!(ended, Ended::Answered { .. }) {
        // A call whose reply was not recorded (the step-limit or cost-limit report, one
        // that never completed: providers bill it) is metered too: the gauge and the
        // log's totals take it in now, as no recorded reply's figures will.
        let usage = compaction::usage_event(session, options, context.meter.get());
        context.events.emit(usage);
    }
    let event = match ended {
        Ended::Answered { text, .. } => Event::TurnComplete { text },
        Ended::StepLimit { steps, report, .. } => Event::StepLimitReached { steps, report },
        Ended::Interrupted(during) => Event::TurnAborted {
            reason: format!("you interrupted the turn {during}"),
        },
        Ended::Aborted => Event::TurnAborted {
            reason: "you stopped the turn at an approval".to_string(),
        },
        Ended::TooLarge(why) => refused.unwrap_or(Event::Error { message: why }),
        Ended::OverCost(why) => Event::Error { message: why },
        Ended::ModelFailed(error) => Event::Error {
            message: format!("the model call failed: {error}"),
        },
        Ended::Repeating(_) => Event::Error {
            message: "the model's reply kept repeating itself, also when asked again; it was cut and the turn stopped".to_string(),
        },
    };
    context.events.emit(context.meter.get().since(&metered_from));
    context.events.emit_closing(event);
}

/// The turn's `Stop` hooks, asked when the model answered: one that blocks has the agent
/// go on, its reason the next instruction, [`MAX_STOP_CONTINUATIONS`] times a turn at most.
async fn until_stop_hooks_agree(
    session: &mut Session,
    context: &TurnContext,
    turn: &StepLoop<'_>,
    mut ended: Ended,
) -> Ended {
    let mut continued = 0;
    while let Ended::Answered { text, .. } = &ended {
        let fields = serde_json::json!({
            "stop_hook_active": continued > 0,
            "last_assistant_message": text,
        });
        let fired = hooks::fire(context, HookEvent::Stop, None, fields).await;
        if fired.cancelled {
            return Ended::Interrupted("while its Stop hooks ran");
        }
        let Some(blocked) = fired.blocked else {
            break;
        };
        if continued == MAX_STOP_CONTINUATIONS {
            context.events.emit(Event::Notice {
                message: format!(
                    "a Stop hook asked the agent to go on a {}th time; the turn ends here (at most {MAX_STOP_CONTINUATIONS} times a turn)",
                    MAX_STOP_CONTINUATIONS + 1
                ),
            });
            break;
        }
        continued += 1;
        context.events.emit(Event::Notice {
            message: format!(
                "a Stop hook asks the agent to go on: {}",
                miniagent_text::clean(&blocked.reason)
            ),
        });
        session.context.push(Message::user(format!(
            "A hook the person set up did not let the turn end yet. It says:\n\n{}",
            blocked.reason
        )));
        context.events.commit(session);
        ended = turn.run(session, context).await;
    }
    ended
}

/// How a [`StepLoop`] ended. The history is valid whichever it is (a cut reply is kept
/// with its mark; unanswered calls have their results).
pub(super) enum Ended {
    /// The model answered without calling tools; `cut` when the answer stopped at the
    /// output limit even after it was asked to continue once.
    Answered { text: String, cut: bool },
    /// Every step was used; `report` is the model's progress report, or (not `written`)
    /// why there is none.
    StepLimit {
        steps: u32,
        report: String,
        written: bool,
    },
    /// The person interrupted; says during what ("while the model was replying").
    Interrupted(&'static str),
    /// The person chose "abort the turn" at an approval.
    Aborted,
    /// The next request could not be made to fit the prompt budget: why.
    TooLarge(String),
    /// The first request (and its report) would already cost more than the turn may: why.
    OverCost(String),
    /// The model call failed: the error.
    ModelFailed(String),
    /// The reply kept repeating itself, also when asked again: what came before the cut.
    Repeating(String),
}

/// One agent's run of steps over its own history.
pub(super) struct StepLoop<'a> {
    pub system: &'a str,
    /// The only tools it may use; `None`: all of the session's, as they are at each step
    /// (an MCP server that became ready since is offered).
    pub only: Option<Vec<String>>,
    pub max_steps: u32,
    /// Asked (unrecorded) when the steps are used up, for the closing report.
    pub report_prompt: String,
}

impl StepLoop<'_> {
    /// Runs steps until the model answers without tools, the steps run out (then one
    /// more call writes the report), or something ends it. Events go to `context`'s sink.
    pub(super) async fn run(&self, session: &mut Session, context: &TurnContext) -> Ended {
        let mut asked_to_continue = false;
        // The streak of identical calls (and, for a sub-agent, the tools it may use).
        let mut guards = match &self.only {
            Some(names) => CallGuards::allowing(names.clone()),
            None => CallGuards::default(),
        };
        // Text of a reply cut at the output limit, to be joined with its continuation.
        let mut carried_text = String::new();
        let max_steps = self.max_steps;
        for step in 1..=max_steps {
            if let Some(over) = over_cost(session, context) {
                if step == 1 {
                    return Ended::OverCost(format!(
                        "the turn stopped before its first request: it would cost about {} with a progress report, and agent.max_cost is {}",
                        usd(2.0 * over.estimate),
                        usd(over.limit)
                    ));
                }
                context.events.emit(Event::Notice {
                    message: format!(
                        "this turn has cost {}; another step and a progress report (about {} more) would take it past agent.max_cost ({}), so it stops here",
                        usd(over.spent),
                        usd(2.0 * over.estimate),
                        usd(over.limit)
                    ),
                });
                return self.report(session, context, step - 1, COST_LIMIT_PROMPT).await;
            }
            context.events.emit(Event::StepStarted { step, max_steps });
            if let Err(ended) = preflight(session, context).await {
                return ended;
            }
            let specs = self.specs(context);
            let response = match call_step(session, context, self.system, &specs, None).await {
                Ok(response) => response,
                Err(failure) => return end_without_response(session, failure),
            };
            record_response(session, context, &response);
            // The reply is recorded before any of its tools run.
            context.events.commit(session);
            if !response
                .content
                .iter()
                .any(|b| matches!(b, ContentBlock::ToolUse { .. }))
            {
                let reply = assistant_text(&response);
                let cut = response.stop_reason == StopReason::MaxTokens;
                if cut && !asked_to_continue {
                    asked_to_continue = true;
                    carried_text.push_str(&reply);
                    context.events.emit(Event::Notice {
                        message: "the reply hit the output token limit; asking the model to continue"
                            .to_string(),
                    });
                    session.context.push(Message::user(CONTINUE_PROMPT));
                    continue;
                }
                if cut {
                    context.events.emit(Event::Notice {
                        message: "the reply hit the output token limit again; it is incomplete".to_string(),
                    });
                }
                carried_text.push_str(&reply);
                return Ended::Answered {
                    text: carried_text,
                    cut,
                };
            }
            let phase = run_tools(session, context, &response, &mut guards).await;
            match phase {
                ToolPhase::Done => {}
                ToolPhase::Interrupted => session.context.close_open_tool_calls(INTERRUPTED),
                ToolPhase::Aborted => session.context.close_open_tool_calls(ABORTED),
            }
            // Every call of the step has its result now: its large arguments leave the prompt.
            stub_large_arguments(session, context);
            match phase {
                ToolPhase::Done => {}
                ToolPhase::Interrupted => return Ended::Interrupted("while tools were running"),
                ToolPhase::Aborted => return Ended::Aborted,
            }
        }
        self.report(session, context, max_steps, &self.report_prompt)
            .await
    }

    /// The tools a step offers.
    fn specs(&self, context: &TurnContext) -> Vec<ToolSpec> {
        let specs = context.options.tools.specs();
        match &self.only {
            None => specs,
            Some(names) => specs
                .into_iter()
                .filter(|spec| names.contains(&spec.name))
                .collect(),
        }
    }

    /// The step (or cost) limit was hit after `steps` steps: ask the model for a progress
    /// report (no more tool use, `prompt` says why) so the work can be picked up, and end
    /// with it.
    async fn report(&self, session: &mut Session, context: &TurnContext, steps: u32, prompt: &str) -> Ended {
        if let Err(ended) = preflight(session, context).await {
            return ended;
        }
        // Tools stay declared: providers refuse a history with tool calls but no tools.
        let specs = self.specs(context);
        let closing = Some(prompt);
        let s = if steps == 1 { "" } else { "s" };
        let (report, written) = match call_step(session, context, self.system, &specs, closing).await {
            Ok(response) => {
                let text = assistant_text(&response);
                if text.trim().is_empty() {
                    (
                        format!("Stopped after {steps} step{s}; the model wrote no report."),
                        false,
                    )
                } else {
                    (text, true)
                }
            }
            Err(CallFailure::Cancelled { .. }) => {
                return Ended::Interrupted("while the progress report was written");
            }
            Err(CallFailure::Failed(error)) => (
                format!("Stopped after {steps} step{s}; the progress report could not be written: {error}"),
                false,
            ),
            Err(CallFailure::Repeating { partial_text }) => (
                format!(
                    "Stopped after {steps} step{s}; the progress report kept repeating itself:\n{partial_text}"
                ),
                false,
            ),
        };
        session.context.push(Message::assistant_text(report.clone()));
        Ended::StepLimit {
            steps,
            report,
            written,
        }
    }
}

/// Extra time past the longest connect timeout before the wait gives up anyway.
const MCP_WAIT_GRACE: std::time::Duration = std::time::Duration::from_secs(2);

/// Waits, before the turn's first request, for the MCP servers still connecting to be
/// ready or failed (each gives up at its own connect timeout), so their tools are there
/// from the start. False when the person interrupted the wait.
async fn mcp_settled(context: &TurnContext) -> bool {
    let Some(mcp) = &context.options.mcp else {
        return true;
    };
    let connecting = mcp.connecting();
    let Some(longest) = connecting.iter().map(|(_, timeout)| *timeout).max() else {
        return true;
    };
    let names: Vec<&str> = connecting.iter().map(|(name, _)| name.as_str()).collect();
    context.events.emit(Event::Notice {
        message: format!(
            "waiting for MCP servers to connect: {} (up to {} s)",
            names.join(", "),
            longest.as_secs_f64().ceil()
        ),
    });
    tokio::select! {
        _ = context.cancel.cancelled() => false,
        () = mcp.settled(longest + MCP_WAIT_GRACE) => true,
    }
}

/// One step's model call, with `closing` appended to the prompt unrecorded. When the
/// provider says the prompt is too long for the model (our count was off), the history
/// is compacted and the call made once more; a second refusal ends the loop.
async fn call_step(
    session: &mut Session,
    context: &TurnContext,
    system: &str,
    specs: &[ToolSpec],
    closing: Option<&str>,
) -> Result<ModelResponse, CallFailure> {
    let options = &context.options;
    let mut compacted = false;
    let session_id = options.session_log.id();
    let cache = if options.config.model.prompt_caching {
        PromptCache::On {
            key: session_id.as_deref(),
        }
    } else {
        PromptCache::Off
    };
    loop {
        let mut prompt = session.context.prompt();
        prompt.extend(closing.map(Message::user));
        let request = ModelRequest {
            system,
            messages: &prompt,
            tools: specs,
            max_output_tokens: options.config.model.max_output_tokens,
            cache,
        };
        // The prompt's size as the budget counts it (kept, not counted again), for a
        // call the provider says nothing of.
        let reckoning = Reckoning {
            last: session.last_usage,
            prompt_tokens: Some(
                compaction::prompt_size(session, context)
                    + closing.map_or(0, |text| session.context.counter().message(&Message::user(text))),
            ),
        };
        let error = match call_model(context, &request, Deltas::Forward, reckoning).await {
            Err(CallFailure::Failed(error)) if error.is_context_overflow() && !compacted => error,
            result => return result,
        };
        compacted = true;
        context.events.emit(Event::Notice {
            message: format!("the provider says the prompt is too long ({error}); compacting the history and trying once more"),
        });
        let before = compaction::prompt_size(session, context);
        let result = compaction::ensure_budget(session, context, true).await;
        context.events.commit(session);
        if let Err(BudgetFailure::Cancelled) = result {
            return Err(CallFailure::Cancelled {
                partial_text: String::new(),
            });
        }
        if compaction::prompt_size(session, context) >= before {
            context.events.emit(Event::Notice {
                message: "nothing in the history could be compacted".to_string(),
            });
            return Err(CallFailure::Failed(error));
        }
    }
}

fn assistant_text(response: &ModelResponse) -> String {
    response
        .content
        .iter()
        .filter_map(|block| match block {
            ContentBlock::Text { text } => Some(text.as_str()),
            _ => None,
        })
        .collect()
}

/// Tells front ends about a model reply: its thinking, text and tool calls.
fn announce(context: &TurnContext, response: &ModelResponse) {
    let message = Message {
        role: Role::Assistant,
        content: response.content.clone(),
    };
    context.events.emit(Event::AssistantMessage {
        thinking: message.thinking(),
        text: message.text(),
        tool_calls: message
            .tool_uses()
            .map(|call| ToolCallSummary {
                id: call.id.to_string(),
                name: call.name.to_string(),
            })
            .collect(),
        stop_reason: response.stop_reason,
    });
}

/// Makes the next prompt fit its budget; `Err` says how the loop ends when it cannot.
/// Asked (unrecorded) when the turn's cost limit stops it, for the closing report.
const COST_LIMIT_PROMPT: &str = "This task has reached the cost limit set for it, so stop here and do not call any tools. \
Write a short progress report for the person: what was done, what remains, and what the next step would be.";

/// A turn that must stop for its cost: what it has cost, what the next call is reckoned
/// to cost, and the limit.
struct OverCost {
    spent: f64,
    estimate: f64,
    limit: f64,
}

/// Whether another step and the progress report after it would take the turn past
/// `agent.max_cost`.
fn over_cost(session: &mut Session, context: &TurnContext) -> Option<OverCost> {
    let limit = context.cost_limit?;
    let spent = limit.spent(&context.meter);
    // The provider's count of the last prompt, when larger than ours (its tokenizer may
    // count more): the next prompt holds all of it.
    let prompt = compaction::prompt_size(session, context).max(session.last_usage.input_tokens);
    let caching = context.options.config.model.prompt_caching;
    let estimate = super::meter::next_call_estimate(limit.price, prompt, session.last_usage, caching);
    (spent + 2.0 * estimate > limit.limit).then_some(OverCost {
        spent,
        estimate,
        limit: limit.limit,
    })
}

async fn preflight(session: &mut Session, context: &TurnContext) -> Result<(), Ended> {
    let asked = context
        .inspect_requested
        .swap(0, std::sync::atomic::Ordering::SeqCst);
    for answer in super::inspect::answers(asked, session, &context.options) {
        context.events.emit(answer);
    }
    let result = compaction::ensure_budget(session, context, false).await;
    context.events.commit(session);
    match result {
        Ok(_) => Ok(()),
        Err(BudgetFailure::Cancelled) => Err(Ended::Interrupted("while the context was compacted")),
        Err(BudgetFailure::TooLarge(why)) => Err(Ended::TooLarge(why)),
    }
}

/// `/compact`: compacts whatever can be, now, and reports the result: how far the prompt
/// came down, or why it could not come down further.
pub(crate) async fn compact_now(session: &mut Session, context: &TurnContext) {
    let before = compaction::prompt_size(session, context);
    // Stubs the prompt shows: one a summary then took in is not told as a stub.
    let masked_before = session.context.shown_masked_results();
    // Its masking and trimming are told in the one report below, not in notices too.
    let result = compaction::compact(session, context, true, false).await;
    // Its summary call is billed like any other: the session's totals (and the gauge,
    // with the prompt it left) take it in now, as no turn's reply will.
    let usage = compaction::usage_event(session, &context.options, context.meter.get());
    context.events.emit(usage);
    let done = match result {
        Err(BudgetFailure::Cancelled) => {
            context.events.emit_closing(Event::Notice {
                message: "compaction interrupted".to_string(),
            });
            return;
        }
        Ok(done) => Some(done),
        Err(BudgetFailure::TooLarge(_)) => None,
    };
    let after = compaction::prompt_size(session, context);
    let masked = session
        .context
        .shown_masked_results()
        .saturating_sub(masked_before);
    let summarized = done.as_ref().is_some_and(|done| done.summaries > 0);
    let how = done
        .map(|done| {
            let mut parts = Vec::new();
            if masked > 0 {
                parts.push(format!(
                    "{masked} older result{} shown as {}",
                    if masked == 1 { "" } else { "s" },
                    if masked == 1 { "a stub" } else { "stubs" }
                ));
            }
            if done.summaries > 0 {
                parts.push(format!(
                    "{} summar{}",
                    done.summaries,
                    if done.summaries == 1 { "y" } else { "ies" }
                ));
            }
            if done.trimmed > 0 {
                parts.push(format!(
                    "{} large result{} trimmed",
                    done.trimmed,
                    if done.trimmed == 1 { "" } else { "s" }
                ));
            }
            if parts.is_empty() {
                String::new()
            } else {
                format!(" ({})", parts.join(", "))
            }
        })
        .unwrap_or_default();
    // Without a summary nothing is counted as a compaction (the status bar, /stats and the
    // inspector list summaries): the notice does not call it one either.
    let compacted = if summarized || after >= before {
        format!("compacted: the prompt went from about {before} to {after} tokens{how}")
    } else {
        format!(
            "made room without a summary (no model call): the prompt went from about {before} to {after} tokens{how}"
        )
    };
    // Real progress is a tenth of the prompt or more; short of it, say what takes the room.
    let message = if after.saturating_mul(10) <= before.saturating_mul(9) {
        compacted
    } else {
        let fixed = compaction::fixed_tokens_of(&context.options, &session.context.counter());
        let counter = session.context.counter();
        let yours: u64 = session
            .context
            .prompt()
            .iter()
            .filter(|m| super::context::is_persons(m))
            .map(|m| counter.message(m))
            .sum();
        format!(
            "{}cannot compact further: the prompt is about {after} tokens; the system prompt and tools take about {fixed} and your messages about {yours}, which are summarized only when the prompt would not fit otherwise{}",
            if after < before {
                format!("{compacted}, and it ")
            } else {
                String::new()
            },
            match context.options.config.agent.keep_recent_steps {
                0 => String::new(),
                1 => ", and the last step stays verbatim".to_string(),
                steps => format!(", and the last {steps} steps stay verbatim"),
            }
        )
    };
    context.events.emit_closing(Event::Notice { message });
}

/// Appends the reply to the history and tells the front end about it and the context
/// size. A sub-agent's tokens are its own: they never reach the session's gauge.
fn record_response(session: &mut Session, context: &TurnContext, response: &ModelResponse) {
    if !response.content.is_empty() {
        session.context.push(Message {
            role: Role::Assistant,
            content: response.content.clone(),
        });
    }
    announce(context, response);
    session.last_usage = response.usage;
    session.last_usage_estimated = response.usage_estimated;
    if !context.events.is_nested() {
        let mut event = compaction::usage_event(session, &context.options, context.meter.get());
        // The reply's large arguments go back to the model as stubs whatever becomes of
        // its calls: the gauge shows that prompt while a call waits for approval, not
        // one many times the budget that is never sent.
        let saved = session
            .context
            .pending_argument_savings(calls::argument_limit(context));
        if let Event::TokenUsage { context_tokens, .. } = &mut event {
            *context_tokens = context_tokens.saturating_sub(saved);
        }
        context.events.emit(event);
    }
}

/// The model call failed or was interrupted: keep the history valid and say how the
/// loop ends.
fn end_without_response(session: &mut Session, failure: CallFailure) -> Ended {
    match failure {
        CallFailure::Cancelled { partial_text } => {
            if !partial_text.trim().is_empty() {
                session.context.push(Message::assistant_text(format!(
                    "{partial_text}\n\n{INTERRUPTED_MARK}"
                )));
            }
            Ended::Interrupted("while the model was replying")
        }
        CallFailure::Failed(error) => Ended::ModelFailed(error.to_string()),
        CallFailure::Repeating { partial_text } => {
            if !partial_text.trim().is_empty() {
                session.context.push(Message::assistant_text(format!(
                    "{partial_text}\n\n{REPEATING_MARK}"
                )));
            }
            Ended::Repeating(partial_text)
        }
    }
}
