//! Running a reply's tool calls: approval, the repeated-call guards, the calls themselves
//! and the tool message that carries their results.

use std::sync::Arc;
use std::time::Instant;

use serde_json::Value;

use crate::agent::approval::Verdict;
use crate::agent::history::{ContentBlock, Message, Role};
use crate::agent::{Session, TurnContext};
use crate::agent::{checkpoints, hooks};
use crate::config::ApprovalMode;
use crate::hooks::HookEvent;
use crate::llm::{InvalidArguments, ModelResponse};
use crate::tools::output::{cap_text, failure_line, preview_line, summarize_arguments};
use crate::tools::{Tool, ToolCall, ToolContext, ToolOutput, schema};
use miniagent_protocol::{CallEffect, Event, TextChange, ToolKind, ToolOutcome};

mod arguments;
mod asking;
pub(in crate::agent) use arguments::{argument_limit, stub_earlier_large_arguments, stub_large_arguments};
use asking::{Asked, ask};

/// The longest one-line preview of a call's result, in characters.
const PREVIEW_CHARS: usize = 200;

/// The result text every unanswered call gets when the person interrupts.
pub(super) const INTERRUPTED: &str = "interrupted by the user";
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
/// The result text every unanswered call gets when the person aborts at an approval.
pub(super) const ABORTED: &str = "the person stopped the turn before this call ran";

/// How the tool phase of a step ended.
pub(in crate::agent) enum ToolPhase {
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

/// What running a call leaves besides its outcome.
#[derive(Default)]
struct Ran {
    /// When the call started to run: its duration leaves out the wait for approval.
    from: Option<Instant>,
    /// The paths its tool said it would change, as the model named them.
    changed: Vec<String>,
    /// The files a command changed, found by looking at the workspace before and after.
    detected: Vec<CallEffect>,
}

/// Runs every tool call of the reply in order, appending one tool message with all
/// results. A skill loaded by one of them pre-approves its `allowed-tools` for the rest
/// of the turn.
pub(in crate::agent) async fn run_tools(
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
    // A sub-agent's session numbers no turns: its calls count as its parent's turn's.
    if let Some(mark) = session.turns.last() {
        context.checkpoints.set_turn(mark.turn, &mark.text);
    }
    for (id, name, arguments) in calls {
        let (kind, locations) = match context.options.tools.get(&name) {
            Some(tool) => (tool.kind(), tool.locations(&arguments, &context.workspace)),
            None => (ToolKind::Other, Vec::new()),
        };
        context.events.emit(Event::ToolCallRequested {
            id: id.clone(),
            name: name.clone(),
            arguments: arguments.clone(),
            summary: summarize_arguments(&arguments),
            kind,
            locations,
        });
        let mut ran = Ran::default();
        let invalid = response.invalid_arguments.iter().find(|bad| bad.call_id == id);
        let outcome = guarded(context, guards, &id, &name, &arguments, invalid, &mut ran).await;
        match &outcome {
            CallOutcome::Finished(output) => guards.ran(&name, &arguments, output),
            CallOutcome::DeniedByPerson { reason } => {
                guards.ran(&name, &arguments, &refused_by_person(reason.as_deref()));
            }
            CallOutcome::Refused(_) | CallOutcome::Interrupted | CallOutcome::Aborted => {}
        }
        pre_approve(context, &outcome);
        let (phase, mut settled) = settle(outcome);
        let mut content = for_history(context, &id, &name, &settled.output).await;
        if ran.from.is_some() && phase.is_none() {
            after_call(context, (&id, &name, &arguments), &settled, &mut content).await;
        }
        let mut effects = match settled.outcome {
            ToolOutcome::Ok => effects_of(context, ran.changed, settled.output.change.take()),
            _ => Vec::new(),
        };
        // What a command changed, whether it succeeded or not.
        effects.append(&mut ran.detected);
        // The plan the call set, before the call is reported finished.
        if let (ToolOutcome::Ok, Some(entries)) = (settled.outcome, settled.output.plan.take()) {
            context.events.emit(Event::PlanUpdated { entries });
        }
        context.events.emit(Event::ToolCallFinished {
            id: id.clone(),
            name,
            ok: settled.outcome == ToolOutcome::Ok,
            outcome: settled.outcome,
            duration_ms: ran.from.map_or(0, elapsed_ms),
            output_preview: settled
                .line
                .unwrap_or_else(|| preview_line(&content, PREVIEW_CHARS)),
            output: content.clone(),
            effects,
        });
        if let Some(phase) = phase {
            // The history repair after the loop gives this call its result.
            return phase;
        }
        session.context.append_to_last(ContentBlock::ToolResult {
            tool_use_id: id,
            content,
            is_error: settled.output.is_error,
        });
        context.events.commit(session);
        if context.cancel.is_cancelled() {
            return ToolPhase::Interrupted;
        }
    }
    ToolPhase::Done
}

/// The `PostToolUse` hooks of a call that ran, given its result as the model gets it
/// (`content`); one that blocks has its reason added to that result.
async fn after_call(
    context: &TurnContext,
    (id, name, arguments): (&str, &str, &Value),
    settled: &Settled,
    content: &mut String,
) {
    let fields = serde_json::json!({
        "tool_name": name,
        "tool_input": arguments,
        "tool_use_id": id,
        "tool_response": {
            "content": content.as_str(),
            "is_error": settled.output.is_error,
        },
    });
    let fired = hooks::fire(context, HookEvent::PostToolUse, Some(name), fields).await;
    if let Some(blocked) = fired.blocked {
        content.push_str(&format!("\n\n[a PostToolUse hook says: {}]", blocked.reason));
    }
}

/// One call past the turn's guards: a sub-agent's tools only, and no read repeated
/// with the same result again and again.
async fn guarded(
    context: &TurnContext,
    guards: &mut CallGuards,
    id: &str,
    name: &str,
    arguments: &Value,
    invalid: Option<&InvalidArguments>,
    ran: &mut Ran,
) -> CallOutcome {
    let repeats = guards.repeats(name, arguments);
    let full_auto = context.policy.with(|policy| policy.mode()) == ApprovalMode::FullAuto;
    match guards.allowed_tools.as_ref() {
        Some(allowed) if !allowed.iter().any(|tool| tool.eq_ignore_ascii_case(name)) => {
            CallOutcome::Refused(ToolOutput::error(format!(
                "only these tools may be used now: {}; `{name}` is not one of them",
                allowed.join(", ")
            )))
        }
        // A read that returned the same thing three times will again.
        _ if repeats >= SAME_CALL_LIMIT && changes_nothing(context, name) => {
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
            run_one(context, id, name, arguments.clone(), invalid, Some(note), ran).await
        }
        _ => run_one(context, id, name, arguments.clone(), invalid, None, ran).await,
    }
}

/// A skill the call loaded pre-approves what it lists for the rest of the turn.
fn pre_approve(context: &TurnContext, outcome: &CallOutcome) {
    if let CallOutcome::Finished(output) = outcome
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
}

/// How a call ended, as the history and the front ends get it.
struct Settled {
    output: ToolOutput,
    outcome: ToolOutcome,
    /// The one line a list shows: how a failure ended, or the person's reason.
    line: Option<String>,
}

/// What the model is told of a call's outcome, and the phase it ends the tools in (an
/// interrupt or an abort ends them).
fn settle(outcome: CallOutcome) -> (Option<ToolPhase>, Settled) {
    let settled = |output, outcome, line| Settled {
        output,
        outcome,
        line,
    };
    match outcome {
        CallOutcome::Finished(output) if output.is_error => {
            let line = Some(failure_line(&output.content, PREVIEW_CHARS));
            (None, settled(output, ToolOutcome::Error, line))
        }
        CallOutcome::Finished(output) => (None, settled(output, ToolOutcome::Ok, None)),
        CallOutcome::DeniedByPerson { reason } => {
            let because = reason.as_deref().map(|r| format!(": {r}")).unwrap_or_default();
            let line = Some(preview_line(&format!("denied by you{because}"), PREVIEW_CHARS));
            let output = refused_by_person(reason.as_deref());
            (None, settled(output, ToolOutcome::Denied, line))
        }
        CallOutcome::Refused(output) => (None, settled(output, ToolOutcome::Refused, None)),
        CallOutcome::Interrupted => (
            Some(ToolPhase::Interrupted),
            settled(ToolOutput::error(INTERRUPTED), ToolOutcome::Cancelled, None),
        ),
        CallOutcome::Aborted => (
            Some(ToolPhase::Aborted),
            settled(ToolOutput::error(ABORTED), ToolOutcome::Cancelled, None),
        ),
    }
}

/// A call's result as the history keeps it: as a terminal would show it, and without
/// keys (a command may have printed one it found elsewhere; escapes are gone first, so
/// none can split a key); a large one saved whole, the model getting its ends.
async fn for_history(context: &TurnContext, id: &str, name: &str, output: &ToolOutput) -> String {
    let cleaned = context
        .options
        .secrets
        .redact(&for_model(context, name, &output.content))
        .into_owned();
    match keep_out_of_prompt(context, id, name, &cleaned, output.saved.clone()).await {
        Some(preview) => preview,
        None => cap_text(&cleaned, result_limit(context)),
    }
}

/// What a call that succeeded changed (`changed`, the paths its tool named, and the text
/// `change` of the one file it changed, when it says): front ends refresh what shows
/// those files without knowing which tools write, and may draw the change.
fn effects_of(context: &TurnContext, changed: Vec<String>, change: Option<TextChange>) -> Vec<CallEffect> {
    let change = change.filter(|_| changed.len() == 1);
    changed
        .into_iter()
        .zip(std::iter::once(change).chain(std::iter::repeat(None)))
        .map(|(path, change)| CallEffect::FileChanged {
            path: context.workspace.root().join(path).display().to_string(),
            change,
        })
        .collect()
}

/// What the model gets in place of a result too large for the prompt: its first and last
/// lines, its size and the file that holds all of it (`tools.large_result_bytes`). A
/// command's output its tool saved as it ran is made what the model reads (as a terminal
/// would show it, without keys) in that file; any other large result is saved there.
/// `None`: the result goes into the prompt as it is.
async fn keep_out_of_prompt(
    context: &TurnContext,
    id: &str,
    name: &str,
    cleaned: &str,
    saved: Option<crate::tools::spill::SavedOutput>,
) -> Option<String> {
    use crate::tools::spill;
    let store = results_store(context)?;
    let limit = context.options.config.tools.large_result_bytes;
    if let Some(saved) = saved {
        let secrets = context.options.secrets.clone();
        let terminal = !reads_file_content(context, name);
        // In runs of whole lines, in bounded memory: as a terminal would show it (a newline
        // ends every escape sequence and carriage return), without keys (none spans a line).
        let made = tokio::task::spawn_blocking(move || -> std::io::Result<String> {
            let rewritten = spill::rewrite(&saved, |lines| {
                let shown = if terminal {
                    miniagent_text::for_model(lines)
                } else {
                    std::borrow::Cow::Borrowed(lines)
                };
                secrets.redact(&shown).into_owned()
            })?;
            // What the model reads of it may be small after all (a progress bar's many
            // redraws, colours): then it goes into the prompt whole, and no file stays.
            if rewritten.bytes <= limit as u64 && saved.not_kept == 0 {
                let text = std::fs::read_to_string(&saved.path)?;
                let _ = std::fs::remove_file(&saved.path);
                return Ok(text);
            }
            Ok(rewritten.preview)
        })
        .await;
        if let Ok(Ok(text)) = made {
            return Some(text);
        }
    }
    // read_file reads in pages already: saving its result would only be read back whole.
    if limit == 0 || cleaned.len() <= limit || reads_file_content(context, name) {
        return None;
    }
    let path = store.save(id, "", cleaned).ok()?;
    Some(spill::preview(cleaned, &path))
}

/// Where this session's large results go: its own folder, named by its id (a resumed
/// session's are beside its earlier ones, and go when it is removed).
fn results_store(context: &TurnContext) -> Option<crate::tools::spill::ResultStore> {
    let root = context.options.results.as_ref()?;
    let id = context
        .options
        .session_log
        .id()
        .unwrap_or_else(|| "unrecorded".to_string());
    Some(crate::tools::spill::ResultStore::new(root.join(id)))
}

/// Whether `name`'s results are a file's text, given as it is (`read_file`).
fn reads_file_content(context: &TurnContext, name: &str) -> bool {
    context
        .options
        .tools
        .get(name)
        .is_some_and(|tool| matches!(tool.result_text(), crate::tools::ResultText::FileContent))
}

/// What the model gets of a result: a file's text as it is, anything else as a terminal
/// would show it, without escape sequences.
fn for_model<'a>(context: &TurnContext, name: &str, text: &'a str) -> std::borrow::Cow<'a, str> {
    if reads_file_content(context, name) {
        std::borrow::Cow::Borrowed(text)
    } else {
        miniagent_text::for_model(text)
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
pub(in crate::agent) struct CallGuards {
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
    pub(in crate::agent) fn allowing(tools: Vec<String>) -> Self {
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

/// What the policy says about a call, whether it runs without a question because a
/// remembered rule or a skill covers it, and a note for the question. A covered call the
/// tool finds a hazard in (the repository's git configuration) is asked about once; an
/// asked one gets the hazard as a note. `None` when interrupted.
async fn decide(
    context: &TurnContext,
    tool: &dyn Tool,
    call: &dyn ToolCall<'_>,
    insist: bool,
) -> Option<(Verdict, bool, Option<String>)> {
    let (verdict, mode) = context
        .policy
        .with(|policy| (policy.check(tool, call, &context.workspace), policy.mode()));
    let verdict = match verdict {
        Verdict::Run if insist => Verdict::Ask,
        verdict => verdict,
    };
    let asking_mode = matches!(mode, ApprovalMode::Ask | ApprovalMode::AutoEdit);
    // Run in a mode that asks: a remembered rule or a skill covers the call.
    let covered = verdict == Verdict::Run && asking_mode;
    if !covered && verdict != Verdict::Ask {
        return Some((verdict, false, None));
    }
    let hazard = tokio::select! {
        _ = context.cancel.cancelled() => return None,
        hazard = call.repository_hazard(&context.workspace, covered) => hazard,
    };
    Some(match (hazard, covered) {
        (Some(note), true) => (Verdict::AskOnce(note), false, None),
        (None, true) => (Verdict::Run, true, None),
        (note, false) => (verdict, false, note),
    })
}

/// One call: validation, approval, execution. With `insist`, the person is asked
/// whatever the approval mode says, and told why. `ran` gets the moment the call starts
/// to run, if it does, and the paths it would change.
async fn run_one(
    context: &TurnContext,
    id: &str,
    name: &str,
    arguments: Value,
    invalid: Option<&InvalidArguments>,
    insist: Option<String>,
    ran: &mut Ran,
) -> CallOutcome {
    use CallOutcome::Finished;
    if let Some(invalid) = invalid {
        return Finished(ToolOutput::error(invalid.error.clone()));
    }
    let options = &context.options;
    let Some(tool) = options.tools.get(name) else {
        return Finished(ToolOutput::error(format!(
            "unknown tool `{name}`; the tools are: {}",
            options.tools.names().join(", ")
        )));
    };
    // What the PreToolUse hooks get; kept only when there are any.
    let hook_input = options
        .hooks
        .has(HookEvent::PreToolUse)
        .then(|| arguments.clone());
    // Checked against the schema the model saw, then read once: the policy, the question
    // and the run all see this one call.
    let call = match schema::validate(&tool.input_schema(), &arguments).and_then(|()| tool.read(arguments)) {
        Ok(call) => call,
        Err(problem) => {
            return Finished(ToolOutput::error(format!(
                "invalid arguments for `{name}`: {problem}"
            )));
        }
    };
    if let Some(input) = hook_input {
        let fields = serde_json::json!({"tool_name": name, "tool_input": input, "tool_use_id": id});
        let fired = hooks::fire(context, HookEvent::PreToolUse, Some(name), fields).await;
        if fired.cancelled {
            return CallOutcome::Interrupted;
        }
        if let Some(blocked) = fired.blocked {
            return CallOutcome::Refused(ToolOutput::error(format!(
                "refused by a PreToolUse hook: {}",
                blocked.reason
            )));
        }
    }
    let Some((verdict, unasked, hazard)) =
        decide(context, tool.as_ref(), call.as_ref(), insist.is_some()).await
    else {
        return CallOutcome::Interrupted;
    };
    let protected_approved = match verdict {
        Verdict::Run => false,
        Verdict::Refuse(reason) => {
            return CallOutcome::Refused(ToolOutput::error(format!("refused: {reason}")));
        }
        Verdict::Ask | Verdict::AskEachTime(_) | Verdict::AskOnce(_) => {
            let asked = Asked {
                id,
                name,
                verdict,
                insist,
                hazard,
            };
            match ask(context, call.as_ref(), asked).await {
                Ok(protected_approved) => protected_approved,
                Err(outcome) => return outcome,
            }
        }
    };
    ran.changed = call.changed_paths();
    // What the call may change is kept before it runs (checkpoints).
    let watch = checkpoints::watch(context, tool.kind(), &ran.changed).await;
    context.events.emit(Event::ToolCallStarted {
        id: id.to_string(),
        name: name.to_string(),
    });
    ran.from = Some(Instant::now());
    let tool_context = tool_context(context, id, unasked, protected_approved);
    let outcome = tokio::select! {
        // An interrupt wins over a result that came in at the same moment (a sub-agent
        // stops with one when its parent's turn is interrupted).
        biased;
        // Dropping the tool's future is how it is stopped: tools clean up on drop
        // (bash kills its process group).
        _ = context.cancel.cancelled() => CallOutcome::Interrupted,
        output = call.run(tool_context) => Finished(output),
    };
    ran.detected = checkpoints::finish(context, id, watch).await;
    outcome
}

/// What the tool gets besides its arguments for call `id`. File tools may read this
/// session's saved results, and no other session's; `protected_approved`: the person
/// approved this call's writes into miniagent's own folders.
fn tool_context(context: &TurnContext, id: &str, unasked: bool, protected_approved: bool) -> ToolContext {
    let results = results_store(context);
    let workspace = match (&results, protected_approved) {
        (Some(store), true) => Arc::new(
            context
                .workspace
                .approving_protected_writes()
                .reading_also(store.dir()),
        ),
        (Some(store), false) => Arc::new(context.workspace.reading_also(store.dir())),
        (None, true) => Arc::new(context.workspace.approving_protected_writes()),
        (None, false) => Arc::clone(&context.workspace),
    };
    ToolContext {
        workspace,
        cancel: context.cancel.child_token(),
        output: context.events.output_sink(id),
        approval: context.policy.with(|policy| policy.mode()),
        unasked,
        sub_agents: context.sub_agents.map(|start| start(context, id)),
        save_to: results.map(|store| crate::tools::spill::SaveTarget {
            store,
            call_id: id.to_string(),
        }),
    }
}
