//! `miniagent exec PROMPT`: one turn without a terminal UI. Progress goes to stderr, the
//! final answer to stdout; with `--json`, every event is one JSON line on stdout.

use std::collections::HashMap;
use std::io::Write;

use tokio::signal::unix::{Signal, SignalKind, signal};

use miniagent_api::{self as api, Env, Handle};
use miniagent_protocol::{
    ApprovalRequest, CompactionOutcome, Decision, Event, McpState, Op, SandboxState, attached_line,
    plan_lines, sane_cost, turn_usage_line,
};
use miniagent_text::{self as terminal_text, Cleaner, clean, preview_line, visible};

/// The longest line of a plan `exec` prints: a step (at most 300 characters) with its mark
/// and priority.
const PLAN_LINE_CHARS: usize = 320;

/// How `exec` ended, as the process exit code.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ExecOutcome {
    Completed,
    Failed,
    StepLimit,
    Interrupted,
    /// SIGTERM or SIGHUP (its number) stopped the run.
    Signalled(i32),
}

impl ExecOutcome {
    pub fn exit_code(self) -> i32 {
        match self {
            ExecOutcome::Completed => 0,
            ExecOutcome::Failed => 1,
            ExecOutcome::StepLimit => 2,
            ExecOutcome::Interrupted => 130,
            // As a shell reports a process a signal ended: 143 for SIGTERM, 129 for SIGHUP.
            ExecOutcome::Signalled(number) => 128 + number,
        }
    }
}

/// How progress is printed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OutputMode {
    /// Human-readable progress on stderr, the answer on stdout; `color` dims thinking.
    Human { color: bool },
    /// Every event as a JSON line on stdout.
    Json,
}

/// Runs one turn to its end. SIGINT interrupts the turn cleanly; a second SIGINT gives up
/// waiting. SIGTERM and SIGHUP stop the turn and end the run at once, the session log
/// written out as the agent shuts down.
/// `env` names the folder sessions are recorded in: the hint that names the session at
/// the end is given only when its log is there.
pub async fn run(
    mut agent: Handle,
    resume: Option<std::path::PathBuf>,
    prompt: String,
    mode: OutputMode,
    env: &Env,
) -> ExecOutcome {
    let mut printer = Printer::new(mode);
    // One listener for the whole run, so a signal between two events is never missed.
    let mut sigint = match signal(SignalKind::interrupt()) {
        Ok(listener) => Some(listener),
        Err(err) => {
            printer.note(&format!("Ctrl-C will not interrupt cleanly: {err}"));
            None
        }
    };
    let mut terminate = [SignalKind::terminate(), SignalKind::hangup()].map(|kind| signal(kind).ok());
    let mut turn = ExecTurn::start(&agent, resume, prompt);
    let mut interrupts = 0u32;
    let outcome = loop {
        let event = tokio::select! {
            event = agent.events.recv() => event,
            kind = terminated(&mut terminate) => {
                printer.note(if kind == SignalKind::hangup() {
                    "hung up (SIGHUP); stopping the turn"
                } else {
                    "terminated (SIGTERM); stopping the turn"
                });
                let _ = agent.ops.send(Op::Interrupt);
                break ExecOutcome::Signalled(kind.as_raw_value());
            }
            () = interrupted(&mut sigint) => {
                interrupts += 1;
                if interrupts > 1 {
                    break ExecOutcome::Interrupted;
                }
                printer.note("interrupting…");
                let _ = agent.ops.send(Op::Interrupt);
                continue;
            }
        };
        let Some(event) = event else {
            printer.note("the agent stopped unexpectedly");
            break ExecOutcome::Failed;
        };
        if let Some(ending) = turn.on_event(&agent, &mut printer, &event) {
            break ending;
        }
    };
    shut_down(&mut agent, &mut printer, mode).await;
    if let Some(line) = turn.continue_line(env) {
        printer.note(&line);
    }
    outcome
}

/// The next SIGINT (never, without a listener).
async fn interrupted(sigint: &mut Option<Signal>) {
    match sigint.as_mut() {
        Some(listener) => {
            listener.recv().await;
        }
        None => std::future::pending().await,
    }
}

/// The next SIGTERM or SIGHUP, whichever has a listener.
async fn terminated(terminate: &mut [Option<Signal>; 2]) -> SignalKind {
    let [term, hup] = terminate;
    match (term.as_mut(), hup.as_mut()) {
        (Some(term), Some(hup)) => tokio::select! {
            _ = term.recv() => SignalKind::terminate(),
            _ = hup.recv() => SignalKind::hangup(),
        },
        (Some(term), None) => {
            term.recv().await;
            SignalKind::terminate()
        }
        (None, Some(hup)) => {
            hup.recv().await;
            SignalKind::hangup()
        }
        (None, None) => std::future::pending().await,
    }
}

/// Lets the agent stop its tools and finish cleanly before the process exits.
async fn shut_down(agent: &mut Handle, printer: &mut Printer, mode: OutputMode) {
    let _ = agent.ops.send(Op::Shutdown);
    while let Some(event) = agent.events.recv().await {
        let done = matches!(event, Event::ShutdownComplete);
        // What the stopped turn used is said as when it ends any other way.
        if mode == OutputMode::Json || matches!(event, Event::TurnUsage { .. }) {
            printer.event(&event);
        }
        if done {
            break;
        }
    }
}

/// Where exec's one turn stands: the prompt not sent yet, whether the turn started, and
/// the recorded session (and its workspace), named at the end so it can be continued.
struct ExecTurn {
    prompt: Option<String>,
    started: bool,
    session: Option<(String, std::path::PathBuf)>,
}

impl ExecTurn {
    /// Sends the prompt, or with a session to resume, asks for the history back first:
    /// the prompt waits until it is, so a resume that fails ends the run before anything
    /// is sent to the model.
    fn start(agent: &Handle, resume: Option<std::path::PathBuf>, prompt: String) -> Self {
        let mut prompt = Some(prompt);
        match resume {
            Some(path) => {
                let _ = agent.ops.send(Op::Resume { path });
            }
            None => {
                if let Some(text) = prompt.take() {
                    let _ = agent.ops.send(prompt_op(text));
                }
            }
        }
        Self {
            prompt,
            started: false,
            session: None,
        }
    }

    /// Prints `event` and answers what it asks; how the run ends, when this event ends it.
    fn on_event(&mut self, agent: &Handle, printer: &mut Printer, event: &Event) -> Option<ExecOutcome> {
        // The history a resume restores is in its log already: it is not printed again.
        if matches!(event, Event::HistoryRestored { .. }) {
            return None;
        }
        refuse_approval(agent, event);
        let ending = ending(event);
        printer.event(event);
        match event {
            Event::SessionConfigured {
                session_id: Some(id),
                workspace,
                ..
            } => self.session = Some((id.clone(), workspace.into())),
            Event::SessionResumed { id, .. } => {
                if let Some((current, _)) = self.session.as_mut() {
                    current.clone_from(id);
                }
                if let Some(text) = self.prompt.take() {
                    let _ = agent.ops.send(prompt_op(text));
                }
            }
            _ => {}
        }
        // A resumed session first closes the turn its log left open: that one is not ours.
        let earlier_turn = !self.started && matches!(event, Event::TurnAborted { .. });
        self.started |= matches!(event, Event::TurnStarted { .. });
        ending.filter(|_| !earlier_turn)
    }

    /// The line that says how to continue the session. A log exists once a turn started,
    /// unless it could not be written (its notice said so): only a session that was
    /// recorded can be continued. Stdout stays the answer.
    fn continue_line(self, env: &Env) -> Option<String> {
        let started = self.started;
        self.session
            .filter(|(id, _)| started && api::is_recorded(id, env))
            .map(|(id, workspace)| api::continue_line(&id, &workspace, true))
    }
}

/// What exec sends for its prompt: `/name arguments` runs the prompt command `name` (a
/// name the session does not know is sent as written, with a notice); anything else,
/// a path such as `/tmp/x` included, is the person's message.
fn prompt_op(text: String) -> Op {
    let command = text.strip_prefix('/').and_then(|rest| {
        let (name, arguments) = rest.split_once(char::is_whitespace).unwrap_or((rest, ""));
        let is_name = !name.is_empty()
            && name
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | ':'));
        is_name.then(|| (name.to_string(), arguments.trim().to_string()))
    });
    match command {
        Some((name, arguments)) => Op::RunCommand { name, arguments },
        None => Op::UserInput { text },
    }
}

/// Nobody is here to approve: a call that asks (the agent's own, or a sub-agent's) is
/// refused as the approval mode refuses a call (no person denied it), and the model is
/// told why (the notes say why a call is asked about whatever the mode: a .git/ write, a
/// repository's git configuration).
fn refuse_approval(agent: &Handle, event: &Event) {
    let asked = match event {
        Event::SubAgent { event, .. } => event.as_ref(),
        event => event,
    };
    let Event::ApprovalRequested { id, name, notes, .. } = asked else {
        return;
    };
    let why: String = notes.iter().map(|note| format!(" {note}")).collect();
    let _ = agent.ops.send(Op::Approval {
        id: id.clone(),
        decision: Decision::Refuse {
            reason: format!(
                "miniagent exec runs without a person to approve tool calls, and `{name}` needs approval here. Either the approval mode asks for it (--approval full-auto, or auto-edit for file edits, lets such calls run), or the call changes miniagent's own settings (.miniagent/ or the config folder), which is asked about in every mode and so never runs under exec.{why}"
            ),
        },
    });
}

/// How the run ends when `event` comes, if it ends it.
fn ending(event: &Event) -> Option<ExecOutcome> {
    match event {
        Event::TurnComplete { .. } => Some(ExecOutcome::Completed),
        Event::TurnAborted { .. } => Some(ExecOutcome::Interrupted),
        Event::StepLimitReached { .. } => Some(ExecOutcome::StepLimit),
        Event::TurnUsage { .. } => None,
        Event::Error { .. } => Some(ExecOutcome::Failed),
        // The agent only ends by our Shutdown, which comes after the turn ends.
        Event::ShutdownComplete => Some(ExecOutcome::Failed),
        Event::SessionConfigured { .. }
        | Event::SessionResumed { .. }
        | Event::TurnStarted { .. }
        | Event::FilesAttached { .. }
        | Event::StepStarted { .. }
        | Event::ThinkingDelta { .. }
        | Event::TextDelta { .. }
        | Event::AssistantMessage { .. }
        | Event::ToolCallRequested { .. }
        | Event::ApprovalRequested { .. }
        | Event::ApprovalRulesChanged { .. }
        | Event::PermissionRulesChanged { .. }
        | Event::ApprovalModeChanged { .. }
        | Event::PlanUpdated { .. }
        | Event::HistoryCleared
        | Event::ToolCallStarted { .. }
        | Event::ToolOutputDelta { .. }
        | Event::ToolCallFinished { .. }
        | Event::TokenUsage { .. }
        | Event::Retrying { .. }
        | Event::CompactionStarted { .. }
        | Event::CompactionEnded { .. }
        | Event::ContextCompacted { .. }
        | Event::HistorySnapshot { .. }
        | Event::Notes { .. }
        | Event::RecordedCall { .. }
        | Event::HistoryRestored { .. }
        | Event::PromptReturned { .. }
        | Event::McpServerStatus { .. }
        | Event::McpToolsDeferred { .. }
        | Event::SkillsLoaded { .. }
        | Event::HooksLoaded { .. }
        | Event::CommandsLoaded { .. }
        | Event::ContextReport { .. }
        | Event::SubAgent { .. }
        | Event::Notice { .. }
        | Event::ModelChoices { .. }
        | Event::ModelChanged { .. }
        | Event::ModelChangeRefused { .. }
        // A replay's; `exec` runs a live agent.
        | Event::PlaybackOpened { .. }
        | Event::PlaybackStatus { .. }
        | Event::Replayed { .. } => None,
    }
}

/// Prints events as `exec` does: progress on stderr and each turn's answer on stdout, or
/// one JSON line per event. `replay --headless` prints a recorded session with it.
///
/// Every human-readable line is cleaned of escape sequences and control characters as it
/// is written ([`terminal_text`]); JSON carries the raw text, escaped. A reader that went
/// away is ignored: the run goes on and ends as it would have.
pub struct Printer {
    mode: OutputMode,
    /// Arguments of requested calls, for the one-line summary when they finish.
    call_arguments: HashMap<String, String>,
    /// Calls that asked for approval, which exec refuses: what to do instead, said once
    /// on the call's own line when it finishes.
    refusals: HashMap<String, Refusal>,
    /// Whether the last thing written to stderr was a streamed fragment without a newline.
    mid_line: bool,
    /// Thinking arrives in pieces; a sequence split between two is removed whole.
    thinking: Cleaner,
}

impl Printer {
    pub fn new(mode: OutputMode) -> Self {
        Self {
            mode,
            call_arguments: HashMap::new(),
            refusals: HashMap::new(),
            mid_line: false,
            thinking: Cleaner::default(),
        }
    }

    /// A line of progress on stderr (nothing in JSON mode).
    pub fn note(&mut self, text: &str) {
        if let OutputMode::Human { .. } = self.mode {
            self.line(text);
        }
    }

    fn end_line(&mut self) {
        if self.mid_line {
            terminal_text::eprintln("");
            self.mid_line = false;
        }
        // Whatever the thinking left open ends with its line.
        self.thinking = Cleaner::default();
    }

    /// A whole line on stderr, cleaned.
    fn line(&mut self, text: &str) {
        self.end_line();
        terminal_text::eprintln(text);
    }

    /// A whole line on stderr, cleaned, then dimmed when `color`.
    fn dim_line(&mut self, text: &str, color: bool) {
        self.end_line();
        write_dim(&clean(text), color);
        terminal_text::eprintln("");
    }

    /// What follows a finished call's summary: nothing when it succeeded, the refusal and
    /// what to do when exec refused it, else the start of its output. Second, why the call
    /// was asked about although a rule covers it, for a line of its own.
    fn failure(&mut self, id: &str, ok: bool, output: &str, chars: usize) -> (String, Option<String>) {
        match self.refusals.remove(id) {
            Some(refused) => (format!(" {}", refusal(refused.fix)), refused.why),
            None if ok => (String::new(), None),
            // As the model got it: an escape left in it (a path in `read_file`'s error) is
            // shown as its call's arguments show it, so the error names the same file.
            None => (format!(" — {}", preview_line(&visible(output), chars)), None),
        }
    }

    /// A refused call's reason, under its line: what made it need a person (the program a
    /// repository's git configuration names), cleaned and cut to a few lines' worth.
    fn why_line(&mut self, why: Option<String>, indent: &str) {
        if let Some(why) = why {
            self.line(&format!(
                "{indent}  why: {}",
                preview_line(&clean(&why), WHY_CHARS)
            ));
        }
    }

    /// The answer on stdout, cleaned.
    fn answer(&mut self, text: &str) {
        self.end_line();
        terminal_text::print(&format!("{}\n", text.trim_end()));
    }

    /// Prints one event.
    pub fn event(&mut self, event: &Event) {
        match self.mode {
            OutputMode::Json => {
                if let Ok(line) = serde_json::to_string(event) {
                    let line = terminal_text::escape_json_controls(line);
                    let mut stdout = std::io::stdout().lock();
                    let _ = writeln!(stdout, "{line}").and_then(|()| stdout.flush());
                }
            }
            OutputMode::Human { color } => self.human(event, color),
        }
    }

    /// Fields followed by more text on their line are cleaned on their own, so a sequence
    /// left unfinished in one cannot hide the rest of the line.
    fn human(&mut self, event: &Event, color: bool) {
        match event {
            Event::SessionConfigured { .. }
            | Event::ModelChangeRefused { .. }
            | Event::ModelChanged { .. }
            | Event::SessionResumed { .. } => self.human_session(event, color),
            Event::ThinkingDelta { .. }
            | Event::AssistantMessage { .. }
            | Event::ToolCallRequested { .. }
            | Event::ToolCallFinished { .. }
            | Event::SubAgent { .. }
            | Event::ApprovalRequested { .. } => self.human_step(event, color),
            Event::Retrying { .. }
            | Event::Notice { .. }
            | Event::FilesAttached { .. }
            | Event::PlanUpdated { .. }
            | Event::McpServerStatus { .. }
            | Event::SkillsLoaded { .. }
            | Event::HooksLoaded { .. }
            | Event::CommandsLoaded { .. } => self.human_status(event),
            Event::CompactionStarted { .. }
            | Event::CompactionEnded { .. }
            | Event::ContextCompacted { .. }
            | Event::TurnUsage { .. }
            | Event::TurnComplete { .. }
            | Event::StepLimitReached { .. }
            | Event::TurnAborted { .. }
            | Event::Error { .. } => self.human_turn(event, color),
            // Its notice said so when the tools were first held back.
            Event::McpToolsDeferred { .. }
            | Event::TurnStarted { .. }
            | Event::HistorySnapshot { .. }
            | Event::ContextReport { .. }
            | Event::Notes { .. }
            | Event::RecordedCall { .. }
            | Event::ModelChoices { .. }
            // The error after it says the message was taken back.
            | Event::PromptReturned { .. }
            | Event::HistoryRestored { .. }
            | Event::ApprovalRulesChanged { .. }
            | Event::PermissionRulesChanged { .. }
            | Event::ApprovalModeChanged { .. }
            | Event::HistoryCleared
            | Event::StepStarted { .. }
            | Event::TextDelta { .. }
            | Event::ToolCallStarted { .. }
            | Event::ToolOutputDelta { .. }
            | Event::TokenUsage { .. }
            | Event::ShutdownComplete
            | Event::PlaybackOpened { .. }
            | Event::PlaybackStatus { .. }
            | Event::Replayed { .. } => {}
        }
    }

    /// The session's start and its model, a line each on stderr.
    fn human_session(&mut self, event: &Event, color: bool) {
        match event {
            Event::SessionConfigured {
                model,
                provider,
                workspace,
                sandbox,
                instruction_files,
                ..
            } => {
                self.dim_line(&session_line(model, provider, workspace, sandbox), color);
                // What steers the agent besides the prompt given, said before it starts.
                let instructions = miniagent_protocol::instruction_files_line(instruction_files);
                if !instructions.is_empty() {
                    self.dim_line(&instructions, color);
                }
            }
            Event::ModelChangeRefused { message, .. } => self.line(&clean(message)),
            // A replay of a session that switched shows where.
            Event::ModelChanged {
                model,
                provider,
                context_window,
                ..
            } => self.dim_line(
                &format!(
                    "model: {} ({}), window {context_window} tokens",
                    clean(model),
                    clean(provider)
                ),
                color,
            ),
            Event::SessionResumed { id, messages, turns } => self.dim_line(
                &format!(
                    "resumed session {}: {turns} turn(s), {messages} messages of history",
                    clean(id)
                ),
                color,
            ),
            _ => {}
        }
    }

    /// A step's reply and its calls (the call's line comes when it finishes).
    fn human_step(&mut self, event: &Event, color: bool) {
        match event {
            Event::ThinkingDelta { delta } => self.thinking_delta(delta, color),
            Event::AssistantMessage { text, tool_calls, .. } => {
                self.assistant_message(text, !tool_calls.is_empty())
            }
            Event::ToolCallRequested { id, summary, .. } => {
                self.call_arguments
                    .insert(id.clone(), preview_line(&visible(summary), 80));
            }
            Event::ToolCallFinished {
                id,
                name,
                ok,
                duration_ms,
                output_preview,
                ..
            } => self.call_finished(id, name, *ok, *duration_ms, output_preview),
            Event::SubAgent { agent, event, .. } => self.sub_agent(agent, event),
            // Said on the call's line when it finishes, with the refusal the model was told.
            Event::ApprovalRequested {
                id, request, notes, ..
            } => {
                self.refusals
                    .insert(id.clone(), refusal_for(request.as_ref(), notes));
            }
            _ => {}
        }
    }

    /// Progress and what was loaded: a line each on stderr.
    fn human_status(&mut self, event: &Event) {
        match event {
            Event::Retrying {
                attempt,
                max_attempts,
                delay_ms,
                reason,
                ..
            } => self.line(&format!(
                "retrying ({attempt}/{max_attempts}) in {:.1} s: {reason}",
                *delay_ms as f64 / 1000.0
            )),
            Event::Notice { message } => self.line(&format!("note: {message}")),
            Event::FilesAttached { files } => {
                for file in files {
                    self.line(&format!("attached: {}", attached_line(file)));
                }
            }
            // A step a line, each kept to one (a recorded plan may have been edited).
            Event::PlanUpdated { entries } => {
                for (index, line) in plan_lines(entries).iter().enumerate() {
                    // The steps keep their indent (the one-line preview trims it).
                    let indent = if index == 0 { "" } else { "  " };
                    self.line(&format!("{indent}{}", preview_line(line, PLAN_LINE_CHARS)));
                }
            }
            Event::McpServerStatus { server, state } => self.mcp_status(server, state),
            Event::SkillsLoaded { warnings, .. } => self.skill_warnings(warnings),
            Event::HooksLoaded { hooks } => self.hooks_loaded(hooks),
            Event::CommandsLoaded { warnings, .. } => {
                self.end_line();
                for warning in warnings {
                    self.line(&format!("commands: {warning}"));
                }
            }
            _ => {}
        }
    }

    /// Compaction and the turn's end: its figures, the answer or why there is none.
    fn human_turn(&mut self, event: &Event, color: bool) {
        match event {
                Event::CompactionStarted { reason } => self.line(&format!("compacting: {reason}")),
                Event::CompactionEnded { outcome, reason } => self.line(&compaction_ended_line(*outcome, reason)),
                Event::ContextCompacted {
                    tokens_before,
                    tokens_after,
                    fallback,
                    ..
                } => self.line(&compacted_line(*tokens_before, *tokens_after, *fallback)),
                Event::TurnUsage {
                    model_calls,
                    input_tokens,
                    output_tokens,
                    cache_read_tokens,
                    cost_usd,
                    ..
                // A turn whose every call failed has nothing to report.
                } if *model_calls > 0 => {
                    let cost = sane_cost(*cost_usd);
                    let line = turn_usage_line(*model_calls, *input_tokens, *output_tokens, *cache_read_tokens, cost);
                    self.dim_line(&format!("turn: {line}"), color);
                }
                Event::TurnComplete { text } => self.answer(text),
                Event::StepLimitReached { steps, report } => {
                    let plural = if *steps == 1 { "" } else { "s" };
                    self.line(&format!("step limit reached after {steps} step{plural}"));
                    self.answer(report);
                }
                Event::TurnAborted { reason } => self.line(&format!("aborted: {reason}")),
                Event::Error { message } => self.line(&format!("error: {message}")),
            _ => {}
        }
    }

    /// The model's text: the final answer goes to stdout at the end; text that
    /// accompanies tool calls is progress.
    fn assistant_message(&mut self, text: &str, calls_tools: bool) {
        self.end_line();
        if calls_tools && !text.trim().is_empty() {
            self.line(text.trim_end());
        }
    }

    /// What was wrong with the skills found, a line each.
    /// One line per hook, so a run says which commands its events start.
    fn hooks_loaded(&mut self, hooks: &[miniagent_protocol::HookInfo]) {
        self.end_line();
        for hook in hooks {
            let command = miniagent_text::clean(&hook.command);
            let mut lines = command.split(['\n', '\r']);
            self.line(&format!(
                "hook: {} {} ({}, {} s): {}",
                hook.event,
                miniagent_text::clean(&hook.matcher),
                hook.source,
                hook.timeout_s,
                preview_line(lines.next().unwrap_or_default(), 200)
            ));
            // A command of several lines is several commands to the shell: each is shown
            // on a line of its own, never joined as one command's arguments.
            for line in lines {
                self.line(&format!("  {}", preview_line(line, 200)));
            }
        }
    }

    fn skill_warnings(&mut self, warnings: &[String]) {
        self.end_line();
        for warning in warnings {
            self.line(&format!("skills: {warning}"));
        }
    }

    /// Thinking, dimmed, as it streams.
    fn thinking_delta(&mut self, delta: &str, color: bool) {
        let mut shown = String::new();
        self.thinking.push(delta, &mut shown);
        if !shown.is_empty() {
            write_dim(&shown, color);
            self.mid_line = !shown.ends_with('\n');
        }
    }

    /// A finished call's line: mark, name, arguments, time, and why it failed.
    fn call_finished(&mut self, id: &str, name: &str, ok: bool, duration_ms: u64, output: &str) {
        let arguments = self.call_arguments.remove(id).unwrap_or_default();
        let mark = if ok { "✓" } else { "✗" };
        let (detail, why) = self.failure(id, ok, output, 100);
        let name = call_name(name);
        self.line(&format!("{mark} {name} {arguments} ({duration_ms} ms){detail}"));
        self.why_line(why, "");
    }

    /// A sub-agent's finished calls, indented under its name; its approval requests are
    /// refused as the agent's own are.
    fn sub_agent(&mut self, agent: &str, event: &Event) {
        match event {
            Event::ToolCallFinished {
                id,
                name,
                ok,
                duration_ms,
                output_preview,
                ..
            } => {
                let mark = if *ok { "✓" } else { "✗" };
                let (agent, name) = (call_name(agent), call_name(name));
                // A sub-agent's line shows its output whether or not the call failed.
                let (detail, why) = match self.refusals.remove(id) {
                    Some(refused) => (format!(" {}", refusal(refused.fix)), refused.why),
                    None => (format!(" {}", preview_line(&visible(output_preview), 80)), None),
                };
                self.line(&format!("  ↳ {agent} {mark} {name} ({duration_ms} ms){detail}"));
                self.why_line(why, "  ");
            }
            Event::ApprovalRequested {
                id, request, notes, ..
            } => {
                self.refusals
                    .insert(id.clone(), refusal_for(request.as_ref(), notes));
            }
            _ => {}
        }
    }

    /// An MCP server that became ready or failed.
    fn mcp_status(&mut self, server: &str, state: &McpState) {
        match (clean(server), state) {
            (server, McpState::Ready { tools }) => {
                self.line(&format!("mcp: {server} ready ({} tools)", tools.len()))
            }
            (server, McpState::Failed { reason }) => self.line(&format!("mcp: {server} failed: {reason}")),
            (_, McpState::Connecting | McpState::Disabled) => self.end_line(),
        }
    }
}

/// The line of a summary call that replaced nothing.
fn compaction_ended_line(outcome: CompactionOutcome, reason: &str) -> String {
    match outcome {
        CompactionOutcome::Failed => format!("compaction failed: {reason}"),
        CompactionOutcome::Cancelled => format!("compaction cancelled: {reason}"),
    }
}

/// The line of a compaction: the prompt's tokens before and after, and whether a digest
/// stands in for the summary.
fn compacted_line(tokens_before: u64, tokens_after: u64, fallback: bool) -> String {
    format!(
        "context compacted: {tokens_before} → {tokens_after} tokens{}",
        if fallback {
            " (no summary could be written: a digest of the steps stands in)"
        } else {
            ""
        }
    )
}

/// The session's first line: provider, model, workspace and the sandbox.
fn session_line(model: &str, provider: &str, workspace: &str, sandbox: &SandboxState) -> String {
    let sandbox = match sandbox {
        SandboxState::Enforced => " · sandbox ✓".to_string(),
        SandboxState::Off => " · no sandbox in full-auto".to_string(),
        SandboxState::Unavailable { reason } => format!(" · no sandbox: {}", clean(reason)),
        SandboxState::Unknown => String::new(),
    };
    format!(
        "miniagent · {provider} · {} · {}{sandbox}",
        clean(model),
        clean(workspace)
    )
}

/// Already-cleaned `text` on stderr, dimmed when `color`.
fn write_dim(text: &str, color: bool) {
    let mut stderr = std::io::stderr().lock();
    let _ = if color {
        write!(stderr, "\x1b[2m{text}\x1b[0m")
    } else {
        stderr.write_all(text.as_bytes())
    };
}

/// A call exec refused for want of a person to approve it.
struct Refusal {
    /// What to do instead.
    fix: &'static str,
    /// Why it was asked about although a rule would let it run, when it was.
    why: Option<String>,
}

/// The longest reason shown under a refused call, in characters.
const WHY_CHARS: usize = 400;

/// What to do instead of a call exec refused for want of a person to approve it. A call
/// with notes is asked about although a rule would let it run (miniagent's own settings,
/// a repository's git configuration): no approval mode is sure to let it run, and the
/// notes say why.
fn refusal_for(request: Option<&ApprovalRequest>, notes: &[String]) -> Refusal {
    if !notes.is_empty() {
        return Refusal {
            fix: "it needs a person even where a rule allows it: run it in the workbench",
            why: Some(notes.join(" ")),
        };
    }
    let fix = match request {
        Some(ApprovalRequest::Edit { .. }) => "use --approval auto-edit or full-auto",
        _ => "use --approval full-auto",
    };
    Refusal { fix, why: None }
}

/// The end of a refused call's line: what happened and what to do, never cut (the long
/// reason the model reads would be cut before the part that says what to do).
fn refusal(fix: &str) -> String {
    format!("— refused: exec cannot ask for approval ({fix})")
}

/// The longest tool or agent name shown, in characters: a name is the model's (or an MCP
/// server's) to choose, and a 100 KB one would otherwise be a 100 KB line.
const NAME_CHARS: usize = 64;

/// A tool's or agent's name on one short line, every escape and control character shown
/// as what it is (`␛`), so that no name can pass for another.
pub fn call_name(name: &str) -> String {
    preview_line(&visible(name).replace('\n', "\u{240a}"), NAME_CHARS)
}
