//! One turn: from a user message to a final answer, an interruption, an error, or the
//! step limit.

use std::sync::Arc;
use std::time::Instant;

use serde_json::Value;

use super::approval::{ApprovalPolicy, Verdict};
use super::compaction::{self, BudgetFailure};
use super::history::{ContentBlock, Message, Role};
use super::model_call::{CallFailure, Deltas, call_model};
use super::{Session, TurnContext};
use crate::llm::{InvalidArguments, ModelRequest, ModelResponse};
use crate::protocol::{ApprovalRule, Decision, Event, StopReason, ToolCallSummary, ToolOutcome};
use crate::tools::output::{cap_text, failure_line, preview_line};
use crate::tools::{ToolContext, ToolOutput, schema};

/// The longest one-line preview of a call's result, in characters.
const PREVIEW_CHARS: usize = 200;

/// The result text every unanswered call gets when the person interrupts.
const INTERRUPTED: &str = "interrupted by the user";
/// Marks assistant text cut short by an interruption.
const INTERRUPTED_MARK: &str = "[interrupted by the user]";
/// Marks assistant text cut because it kept repeating itself.
const REPEATING_MARK: &str = "[cut: this reply kept repeating itself]";
/// The same call (tool and arguments) with the same result this many times in a row is
/// enough: the next one is not run as asked (MiroThinker's guard against loops).
const SAME_CALL_LIMIT: u32 = 3;
/// Floor of the hard cap on one tool result in the history, whatever the tool did.
const RESULT_LIMIT_BYTES: usize = 100_000;

/// The hard cap on one tool result: above every built-in tool's own cap (read_file's is
/// in tokens, about four bytes each), so it only ever cuts tools that do not cap themselves.
fn result_limit(context: &TurnContext) -> usize {
    let tools = &context.options.config.tools;
    let read_file_bytes = usize::try_from(tools.read_file.max_tokens.saturating_mul(5)).unwrap_or(usize::MAX);
    RESULT_LIMIT_BYTES
        .max(read_file_bytes)
        .max(tools.bash.output_limit_bytes.saturating_mul(2))
}
/// How much of a refused (too large) message is echoed and recorded.
const REFUSED_ECHO_BYTES: usize = 2_000;

/// Whether `message` could ever be sent: with the system prompt and the tools, alone in
/// the history, it must fit the prompt budget. A message that does not would make every
/// request of the session fail (it cannot be compacted: it is the person's own latest
/// words), and keep failing after a resume, so it is refused before it enters the history.
fn fits_alone(
    session: &Session,
    context: &TurnContext,
    specs: &[crate::llm::ToolSpec],
    message: &Message,
) -> Result<(), String> {
    let budget = compaction::budget(context);
    let text = &message.content;
    // A token is at least one byte, so a message under half the budget is left to the
    // usual checks (this skips counting every ordinary message).
    let bytes: usize = text
        .iter()
        .map(|block| match block {
            ContentBlock::Text { text } => text.len(),
            _ => 0,
        })
        .sum();
    if (bytes as u64) < budget / 2 {
        return Ok(());
    }
    let counter = session.context.counter();
    let fixed = counter.count(&context.options.system_prompt) + counter.tools(specs);
    let tokens = counter.message(message);
    if fixed.saturating_add(tokens) <= budget {
        return Ok(());
    }
    let config = &context.options.config;
    Err(format!(
        "it is about {tokens} tokens ({bytes} bytes), and with the system prompt and tools (about {fixed} tokens) it can never fit the prompt budget of {budget} tokens (agent.token_limit {}, window {}, output reserve {}). Send less, or save the text to a file in the workspace and ask for it to be read in parts.",
        config.agent.token_limit, config.model.context_window, config.model.max_output_tokens
    ))
}

/// Sent when a reply stopped at the output limit, once per turn.
const CONTINUE_PROMPT: &str =
    "Your previous reply was cut off by the output token limit. Continue exactly where it stopped.";

/// The result text every unanswered call gets when the person aborts at an approval.
const ABORTED: &str = "the person stopped the turn before this call ran";

/// How the tool phase of a step ended.
pub(super) enum ToolPhase {
    Done,
    Interrupted,
    Aborted,
}

/// How one tool call ended.
enum CallOutcome {
    Finished(ToolOutput),
    /// A rule or a guard refused the call before it ran; the output says which.
    Refused(ToolOutput),
    /// The person refused the call at its approval, with their reason if they gave one.
    DeniedByPerson {
        reason: Option<String>,
    },
    /// The person interrupted the turn.
    Interrupted,
    /// The person chose "abort the turn" at this call's approval.
    Aborted,
}

pub(crate) async fn run_turn(session: &mut Session, text: String, context: &TurnContext) {
    let options = &context.options;
    let max_steps = options.config.agent.max_steps;
    let message = Message::user(text);
    if let Err(why) = fits_alone(session, context, &turn_specs(context), &message) {
        // Shown and recorded cut: the whole text would only weigh down the log.
        let text = message.text();
        context.events.emit(Event::TurnStarted {
            text: cap_text(&text, REFUSED_ECHO_BYTES),
        });
        context.events.emit(Event::Error {
            message: format!("the message was not sent: {why}"),
        });
        return;
    }
    context.events.emit(Event::TurnStarted { text: message.text() });
    session.context.push(message);
    context.events.commit(session);
    if !mcp_settled(context).await {
        context.events.emit(Event::TurnAborted {
            reason: "you interrupted the turn while MCP servers were connecting".to_string(),
        });
        return;
    }

    let mut asked_to_continue = false;
    // What a skill pre-approved lasts for the turn that loaded it.
    context.policy.with(ApprovalPolicy::end_skills);
    // The streak of identical calls.
    let mut guards = CallGuards::default();
    // Text of a reply cut at the output limit, to be joined with its continuation.
    let mut carried_text = String::new();
    for step in 1..=max_steps {
        context.events.emit(Event::StepStarted { step, max_steps });
        if !preflight(session, context).await {
            return;
        }
        // Listed afresh each step: an MCP server that became ready since is offered.
        let specs = turn_specs(context);
        let response = match call_step(session, context, &specs).await {
            Ok(response) => response,
            Err(failure) => return end_without_response(session, context, failure),
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
            if response.stop_reason == StopReason::MaxTokens && !asked_to_continue {
                asked_to_continue = true;
                carried_text.push_str(&reply);
                context.events.emit(Event::Notice {
                    message: "the reply hit the output token limit; asking the model to continue".to_string(),
                });
                session.context.push(Message::user(CONTINUE_PROMPT));
                continue;
            }
            if response.stop_reason == StopReason::MaxTokens {
                context.events.emit(Event::Notice {
                    message: "the reply hit the output token limit again; it is incomplete".to_string(),
                });
            }
            carried_text.push_str(&reply);
            context.events.emit(Event::TurnComplete { text: carried_text });
            return;
        }
        match run_tools(session, context, &response, &mut guards).await {
            ToolPhase::Done => {}
            ToolPhase::Interrupted => {
                session.context.close_open_tool_calls(INTERRUPTED);
                context.events.emit(Event::TurnAborted {
                    reason: "you interrupted the turn while tools were running".to_string(),
                });
                return;
            }
            ToolPhase::Aborted => {
                session.context.close_open_tool_calls(ABORTED);
                context.events.emit(Event::TurnAborted {
                    reason: "you stopped the turn at an approval".to_string(),
                });
                return;
            }
        }
    }
    step_limit_report(session, context, max_steps).await;
}

/// The tools a step offers: the registry's as they are now, and `delegate`.
fn turn_specs(context: &TurnContext) -> Vec<crate::llm::ToolSpec> {
    let mut specs = context.options.tools.specs();
    specs.push(super::delegate::spec());
    specs
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

/// One step's model call. When the provider says the prompt is too long for the model
/// (our count was off), the history is compacted and the call made once more; a second
/// refusal ends the turn.
async fn call_step(
    session: &mut Session,
    context: &TurnContext,
    specs: &[crate::llm::ToolSpec],
) -> Result<ModelResponse, CallFailure> {
    let options = &context.options;
    let mut compacted = false;
    loop {
        let prompt = session.context.prompt();
        let request = ModelRequest {
            system: &options.system_prompt,
            messages: &prompt,
            tools: specs,
            max_output_tokens: options.config.model.max_output_tokens,
        };
        let error = match call_model(context, &request, Deltas::Forward).await {
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

/// Tells front ends about a model reply: its thinking, text and tool calls. Returns the
/// reply as a message.
pub(super) fn announce(context: &TurnContext, response: &ModelResponse) -> Message {
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
    message
}

/// Makes the next prompt fit its budget. False when the turn had to end (interrupted,
/// or the prompt cannot be made small enough); the events say which.
async fn preflight(session: &mut Session, context: &TurnContext) -> bool {
    if context
        .inspect_requested
        .swap(false, std::sync::atomic::Ordering::SeqCst)
    {
        let snapshot = super::inspect::snapshot(session, &context.options);
        context.events.emit(Event::HistorySnapshot { snapshot });
    }
    let result = compaction::ensure_budget(session, context, false).await;
    context.events.commit(session);
    match result {
        Ok(_) => true,
        Err(BudgetFailure::Cancelled) => {
            context.events.emit(Event::TurnAborted {
                reason: "you interrupted the turn while the context was compacted".to_string(),
            });
            false
        }
        Err(BudgetFailure::TooLarge(why)) => {
            context.events.emit(Event::Error {
                message: format!("the request was not sent: {why}"),
            });
            false
        }
    }
}

/// `/compact`: compacts whatever can be, now, and reports the result: how far the prompt
/// came down, or why it could not come down further.
pub(crate) async fn compact_now(session: &mut Session, context: &TurnContext) {
    let before = compaction::prompt_size(session, context);
    let done = match compaction::ensure_budget(session, context, true).await {
        Err(BudgetFailure::Cancelled) => {
            context.events.emit(Event::Notice {
                message: "compaction interrupted".to_string(),
            });
            return;
        }
        Ok(done) => Some(done),
        Err(BudgetFailure::TooLarge(_)) => None,
    };
    let after = compaction::prompt_size(session, context);
    let how = done
        .map(|done| {
            let mut parts = Vec::new();
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
    let compacted = format!("compacted: the prompt went from about {before} to {after} tokens{how}");
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
            .filter(|m| m.role == Role::User && !m.text().starts_with(super::context::SUMMARY_MARK))
            .map(|m| counter.message(m))
            .sum();
        format!(
            "{}cannot compact further: the prompt is about {after} tokens; the system prompt and tools take about {fixed} and your messages about {yours}, which are never compacted, and the last {} steps stay verbatim",
            if after < before {
                format!("{compacted}, and it ")
            } else {
                String::new()
            },
            context.options.config.agent.keep_recent_steps
        )
    };
    context.events.emit(Event::Notice { message });
}

/// Appends the reply to the history and tells the front end about it and the context size.
fn record_response(session: &mut Session, context: &TurnContext, response: &ModelResponse) {
    if !response.content.is_empty() {
        session.context.push(Message {
            role: Role::Assistant,
            content: response.content.clone(),
        });
    }
    announce(context, response);
    let usage = response.usage;
    session.usage.last = usage;
    session.usage.input += usage.input_tokens;
    session.usage.output += usage.output_tokens;
    let event = compaction::usage_event(session, &context.options);
    context.events.emit(event);
}

/// The model call failed or was interrupted: keep the history valid and end the turn.
fn end_without_response(session: &mut Session, context: &TurnContext, failure: CallFailure) {
    match failure {
        CallFailure::Cancelled { partial_text } => {
            if !partial_text.trim().is_empty() {
                session.context.push(Message::assistant_text(format!(
                    "{partial_text}\n\n{INTERRUPTED_MARK}"
                )));
            }
            context.events.emit(Event::TurnAborted {
                reason: "you interrupted the turn while the model was replying".to_string(),
            });
        }
        CallFailure::Failed(error) => {
            context.events.emit(Event::Error {
                message: format!("the model call failed: {error}"),
            });
        }
        CallFailure::Repeating { partial_text } => {
            if !partial_text.trim().is_empty() {
                session.context.push(Message::assistant_text(format!(
                    "{partial_text}\n\n{REPEATING_MARK}"
                )));
            }
            context.events.emit(Event::Error {
                message: "the model's reply kept repeating itself, also when asked again; it was cut and the turn stopped".to_string(),
            });
        }
    }
}

/// Runs every tool call of the reply in order, appending one tool message with all
/// results. A skill loaded by one of them pre-approves its `allowed-tools` for the rest
/// of the turn.
pub(super) async fn run_tools(
    session: &mut Session,
    context: &TurnContext,
    response: &ModelResponse,
    guards: &mut CallGuards,
) -> ToolPhase {
    let calls: Vec<(String, String, Value)> = response
        .content
        .iter()
        .filter_map(|block| match block {
            ContentBlock::ToolUse { id, name, input } => Some((id.clone(), name.clone(), input.clone())),
            _ => None,
        })
        .collect();
    session.context.push(Message {
        role: Role::Tool,
        content: Vec::with_capacity(calls.len()),
    });
    for (id, name, arguments) in calls {
        context.events.emit(Event::ToolCallRequested {
            id: id.clone(),
            name: name.clone(),
            arguments: arguments.clone(),
        });
        // Set when the call starts to run: its duration leaves out the wait for approval.
        let mut ran_from = None;
        let invalid = response.invalid_arguments.iter().find(|bad| bad.call_id == id);
        let repeats = guards.repeats(&name, &arguments);
        let full_auto = context.policy.with(|policy| policy.mode()) == crate::config::ApprovalMode::FullAuto;
        let outcome = match guards.allowed_tools.as_ref() {
            Some(allowed) if !allowed.iter().any(|tool| tool.eq_ignore_ascii_case(&name)) => {
                CallOutcome::Refused(ToolOutput::error(format!(
                    "only these tools may be used now: {}; `{name}` is not one of them",
                    allowed.join(", ")
                )))
            }
            // A read that returned the same thing three times will again.
            _ if repeats >= SAME_CALL_LIMIT && changes_nothing(context, &name) => {
                let asked = repeats + guards.refused_again() + 1;
                CallOutcome::Refused(ToolOutput::error(format!(
                    "refused: the same call {}, with the same result each time. `{name}` only reads, so it would tell you nothing new: use the result you have, or change the arguments or the approach (to wait for something to change, wait before you look again).",
                    time_in_a_row(asked)
                )))
            }
            // Polling repeats commands; in full-auto they run as asked. Elsewhere the
            // person, who is there to answer, is asked whatever the mode says.
            _ if repeats >= SAME_CALL_LIMIT && !full_auto => {
                let note = format!(
                    "The model asked for this same call {}, and it returned the same result each time.",
                    time_in_a_row(repeats + 1)
                );
                run_one(
                    context,
                    &id,
                    &name,
                    arguments.clone(),
                    invalid,
                    Some(note),
                    &mut ran_from,
                )
                .await
            }
            _ => {
                run_one(
                    context,
                    &id,
                    &name,
                    arguments.clone(),
                    invalid,
                    None,
                    &mut ran_from,
                )
                .await
            }
        };
        match &outcome {
            CallOutcome::Finished(output) => guards.ran(&name, &arguments, output),
            CallOutcome::DeniedByPerson { reason } => {
                guards.ran(&name, &arguments, &refused_by_person(reason.as_deref()));
            }
            CallOutcome::Refused(_) | CallOutcome::Interrupted | CallOutcome::Aborted => {}
        }
        if let CallOutcome::Finished(output) = &outcome
            && !output.is_error
            && let Some(approvals) = &output.pre_approves
        {
            context.events.emit(Event::Notice {
                message: format!(
                    "skill `{}` pre-approves for the rest of this turn: {}",
                    approvals.skill,
                    approvals.describe().join(", ")
                ),
            });
            context
                .policy
                .with(|policy| policy.pre_approve(approvals.clone()));
        }
        // The one line a list shows: how a failure ended, or the person's reason.
        let mut line = None;
        let (phase, output, outcome) = match outcome {
            CallOutcome::Finished(output) => {
                let outcome = if output.is_error {
                    line = Some(failure_line(&output.content, PREVIEW_CHARS));
                    ToolOutcome::Error
                } else {
                    ToolOutcome::Ok
                };
                (None, output, outcome)
            }
            CallOutcome::DeniedByPerson { reason } => {
                let because = reason.as_deref().map(|r| format!(": {r}")).unwrap_or_default();
                line = Some(preview_line(&format!("denied by you{because}"), PREVIEW_CHARS));
                (None, refused_by_person(reason.as_deref()), ToolOutcome::Denied)
            }
            CallOutcome::Refused(output) => (None, output, ToolOutcome::Refused),
            CallOutcome::Interrupted => (
                Some(ToolPhase::Interrupted),
                ToolOutput::error(INTERRUPTED),
                ToolOutcome::Cancelled,
            ),
            CallOutcome::Aborted => (
                Some(ToolPhase::Aborted),
                ToolOutput::error(ABORTED),
                ToolOutcome::Cancelled,
            ),
        };
        // As a terminal would show it, and without keys (a command may have printed one it
        // found elsewhere; escapes are gone first, so none can split a key).
        let content = cap_text(
            &context
                .options
                .secrets
                .redact(&for_model(context, &name, &output.content)),
            result_limit(context),
        );
        context.events.emit(Event::ToolCallFinished {
            id: id.clone(),
            name,
            ok: outcome == ToolOutcome::Ok,
            outcome,
            duration_ms: ran_from.map_or(0, elapsed_ms),
            output_preview: line.unwrap_or_else(|| preview_line(&content, PREVIEW_CHARS)),
            output: content.clone(),
        });
        if let Some(phase) = phase {
            // The history repair after the loop gives this call its result.
            return phase;
        }
        session.context.append_to_last(ContentBlock::ToolResult {
            tool_use_id: id,
            content,
            is_error: output.is_error,
        });
        context.events.commit(session);
        if context.cancel.is_cancelled() {
            return ToolPhase::Interrupted;
        }
    }
    ToolPhase::Done
}

/// What the model gets of a result: a file's text as it is, anything else as a terminal
/// would show it, without escape sequences.
fn for_model<'a>(context: &TurnContext, name: &str, text: &'a str) -> std::borrow::Cow<'a, str> {
    let result_text = context.options.tools.get(name).map(|tool| tool.result_text());
    match result_text {
        Some(crate::tools::ResultText::FileContent) => std::borrow::Cow::Borrowed(text),
        Some(crate::tools::ResultText::TerminalOutput) | None => crate::terminal_text::for_model(text),
    }
}

fn elapsed_ms(started: Instant) -> u64 {
    u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX)
}

/// Whether `name` is a tool that only reads.
fn changes_nothing(context: &TurnContext, name: &str) -> bool {
    context
        .options
        .tools
        .get(name)
        .is_some_and(|tool| tool.effect() == crate::tools::ToolEffect::ReadOnly)
}

/// What a turn remembers about its calls, across its steps.
#[derive(Debug, Default)]
pub(super) struct CallGuards {
    /// Set for a sub-agent: only these tools run.
    pub allowed_tools: Option<Vec<String>>,
    /// The last call that ran (tool, arguments, result) and how many times in a row it
    /// ran with that same result.
    last_call: Option<(String, Value, ToolOutput)>,
    streak: u32,
    /// How many times the guard has refused that same call since.
    refused: u32,
}

impl CallGuards {
    /// Guards for a turn that may use only `tools`.
    pub(super) fn allowing(tools: Vec<String>) -> Self {
        Self {
            allowed_tools: Some(tools),
            ..Self::default()
        }
    }

    /// How many times in a row this same call just ran with the same result (0 when
    /// the last call was another).
    fn repeats(&self, name: &str, arguments: &Value) -> u32 {
        match &self.last_call {
            Some((last_name, last_arguments, _)) if last_name == name && last_arguments == arguments => {
                self.streak
            }
            Some(_) | None => 0,
        }
    }

    /// Counts one more refusal of the last call by the guard; returns how many there were
    /// before it.
    fn refused_again(&mut self) -> u32 {
        self.refused += 1;
        self.refused - 1
    }

    /// Counts a call that ran (or that the person refused) with its result. Calls a
    /// guard refused are not counted: asking again does not reset the streak.
    fn ran(&mut self, name: &str, arguments: &Value, output: &ToolOutput) {
        self.refused = 0;
        match &self.last_call {
            Some((last_name, last_arguments, last_output))
                if last_name == name && last_arguments == arguments && last_output == output =>
            {
                self.streak += 1;
            }
            Some(_) | None => {
                self.last_call = Some((name.to_string(), arguments.clone(), output.clone()));
                self.streak = 1;
            }
        }
    }
}

/// What the model is told of a call the person refused at its approval.
fn refused_by_person(reason: Option<&str>) -> ToolOutput {
    let because = reason.map(|r| format!(": {r}")).unwrap_or_default();
    ToolOutput::error(format!(
        "the person refused this call{because}. Do not retry it; adjust the plan or ask them."
    ))
}

/// "a fourth time in a row", "an eighth time in a row", "21 times in a row".
fn time_in_a_row(n: u32) -> String {
    const WORDS: [&str; 10] = [
        "a first",
        "a second",
        "a third",
        "a fourth",
        "a fifth",
        "a sixth",
        "a seventh",
        "an eighth",
        "a ninth",
        "a tenth",
    ];
    match usize::try_from(n)
        .ok()
        .and_then(|n| n.checked_sub(1))
        .and_then(|i| WORDS.get(i))
    {
        Some(word) => format!("{word} time in a row"),
        None => format!("{n} times in a row"),
    }
}

/// One call: validation, approval, execution. Boxed as a `Send` future: a `delegate`
/// call runs a sub-agent whose own calls come back here, and the box ends that cycle.
/// With `insist`, the person is asked whatever the approval mode says, and told why.
/// `ran_from` is set to the moment the call starts to run, if it does.
fn run_one<'a>(
    context: &'a TurnContext,
    id: &'a str,
    name: &'a str,
    arguments: Value,
    invalid: Option<&'a InvalidArguments>,
    insist: Option<String>,
    ran_from: &'a mut Option<Instant>,
) -> futures_util::future::BoxFuture<'a, CallOutcome> {
    Box::pin(run_one_inner(
        context, id, name, arguments, invalid, insist, ran_from,
    ))
}

async fn run_one_inner(
    context: &TurnContext,
    id: &str,
    name: &str,
    arguments: Value,
    invalid: Option<&InvalidArguments>,
    insist: Option<String>,
    ran_from: &mut Option<Instant>,
) -> CallOutcome {
    use CallOutcome::Finished;
    if let Some(invalid) = invalid {
        return Finished(ToolOutput::error(invalid.error.clone()));
    }
    let options = &context.options;
    if name == super::delegate::NAME {
        return delegate_call(context, id, arguments, ran_from).await;
    }
    let Some(tool) = options.tools.get(name) else {
        return Finished(ToolOutput::error(format!(
            "unknown tool `{name}`; the tools are: {}, {}",
            options.tools.names().join(", "),
            super::delegate::NAME
        )));
    };
    if let Err(problem) = schema::validate(&tool.input_schema(), &arguments) {
        return Finished(ToolOutput::error(format!(
            "invalid arguments for `{name}`: {problem}"
        )));
    }
    let verdict = match context
        .policy
        .with(|policy| policy.check(tool.as_ref(), &arguments, &context.workspace))
    {
        Verdict::Run if insist.is_some() => Verdict::Ask,
        verdict => verdict,
    };
    let mut protected_approved = false;
    match verdict {
        Verdict::Run => {}
        Verdict::Refuse(reason) => {
            return CallOutcome::Refused(ToolOutput::error(format!("refused: {reason}")));
        }
        Verdict::Ask | Verdict::AskEachTime(_) => {
            let each_time = match &verdict {
                Verdict::AskEachTime(note) => Some(note.clone()),
                Verdict::Run | Verdict::Ask | Verdict::Refuse(_) => None,
            };
            // A call that cannot succeed is answered at once; nobody is asked about it.
            let preview = match tool.preview(&arguments, &context.workspace) {
                Ok(preview) => [each_time.as_deref(), insist.as_deref()]
                    .into_iter()
                    .flatten()
                    .chain(std::iter::once(preview.as_str()))
                    .collect::<Vec<_>>()
                    .join("\n\n"),
                Err(message) => return Finished(ToolOutput::error(message)),
            };
            let decision = context.approvals.register(id);
            context.events.emit(Event::ApprovalRequested {
                id: id.to_string(),
                name: name.to_string(),
                preview,
                session_rule: match each_time {
                    Some(_) => None,
                    None => tool.session_rule(&arguments),
                },
            });
            let decision = tokio::select! {
                _ = context.cancel.cancelled() => {
                    context.approvals.remove(id);
                    return CallOutcome::Interrupted;
                }
                decision = decision => decision,
            };
            // Approved as changing miniagent's own folders: this call's writes may enter them.
            protected_approved = each_time.is_some();
            match decision {
                Ok(Decision::Approve) => {}
                Ok(Decision::ApproveForSession) if each_time.is_some() => {
                    context.events.emit(Event::Notice {
                        message:
                            "approved once: changes to miniagent's own settings are asked about each time"
                                .to_string(),
                    });
                }
                Ok(Decision::ApproveForSession) => remember(context, tool.session_rule(&arguments)),
                Ok(Decision::Deny { reason }) => return CallOutcome::DeniedByPerson { reason },
                Ok(Decision::Abort) => return CallOutcome::Aborted,
                Err(_) => return CallOutcome::Interrupted,
            }
        }
    }
    context.events.emit(Event::ToolCallStarted {
        id: id.to_string(),
        name: name.to_string(),
    });
    *ran_from = Some(Instant::now());
    let tool_context = ToolContext {
        workspace: match protected_approved {
            true => Arc::new(context.workspace.approving_protected_writes()),
            false => Arc::clone(&context.workspace),
        },
        cancel: context.cancel.child_token(),
        output: context.events.output_sink(id),
        approval: context.policy.with(|policy| policy.mode()),
    };
    tokio::select! {
        // Dropping the tool's future is how it is stopped: tools clean up on drop
        // (bash kills its process group).
        _ = context.cancel.cancelled() => CallOutcome::Interrupted,
        output = tool.run(arguments, tool_context) => Finished(output),
    }
}

/// A `delegate` call: the sub-agent runs inside this call.
async fn delegate_call(
    context: &TurnContext,
    id: &str,
    arguments: Value,
    ran_from: &mut Option<Instant>,
) -> CallOutcome {
    if let Err(problem) = schema::validate(&super::delegate::spec().input_schema, &arguments) {
        return CallOutcome::Finished(ToolOutput::error(format!(
            "invalid arguments for `delegate`: {problem}"
        )));
    }
    context.events.emit(Event::ToolCallStarted {
        id: id.to_string(),
        name: super::delegate::NAME.to_string(),
    });
    *ran_from = Some(Instant::now());
    match super::delegate::run(context, id, &arguments).await {
        Ok(output) => CallOutcome::Finished(output),
        Err(super::delegate::Stopped::Cancelled) => CallOutcome::Interrupted,
    }
}

/// "Approve for this session": remember the call's rule, or say why it cannot be.
fn remember(context: &TurnContext, rule: Option<ApprovalRule>) {
    let Some(rule) = rule else {
        context.events.emit(Event::Notice {
            message: "approved once: this call cannot be remembered for the session".to_string(),
        });
        return;
    };
    let changed = context
        .policy
        .with(|policy| policy.remember(rule).then(|| policy.rules().to_vec()));
    if let Some(rules) = changed {
        context.events.emit(Event::ApprovalRulesChanged { rules });
    }
}

/// The step limit was hit: ask the model for a progress report (no more tool use) so the
/// work can be picked up, and end the turn with it.
async fn step_limit_report(session: &mut Session, context: &TurnContext, max_steps: u32) {
    let options = &context.options;
    if !preflight(session, context).await {
        return;
    }
    let mut messages = session.context.prompt();
    messages.push(Message::user(format!(
        "You have used all {max_steps} steps allowed for this task, so stop here and do not call any tools. \
         Write a short progress report for the person: what was done, what remains, and what the next step would be."
    )));
    // Tools stay declared: providers refuse a history with tool calls but no tools.
    let specs = options.tools.specs();
    let request = ModelRequest {
        system: &options.system_prompt,
        messages: &messages,
        tools: &specs,
        max_output_tokens: options.config.model.max_output_tokens,
    };
    let report = match call_model(context, &request, Deltas::Forward).await {
        Ok(response) => {
            let text = assistant_text(&response);
            if text.trim().is_empty() {
                format!("Stopped after {max_steps} steps; the model wrote no report.")
            } else {
                text
            }
        }
        Err(CallFailure::Cancelled { .. }) => {
            context.events.emit(Event::TurnAborted {
                reason: "you interrupted the turn while the progress report was written".to_string(),
            });
            return;
        }
        Err(CallFailure::Failed(error)) => {
            format!("Stopped after {max_steps} steps; the progress report could not be written: {error}")
        }
        Err(CallFailure::Repeating { partial_text }) => {
            format!(
                "Stopped after {max_steps} steps; the progress report kept repeating itself:\n{partial_text}"
            )
        }
    };
    session.context.push(Message::assistant_text(report.clone()));
    context.events.emit(Event::StepLimitReached {
        steps: max_steps,
        report,
    });
}
