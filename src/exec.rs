//! `miniagent exec PROMPT`: one turn without a terminal UI. Progress goes to stderr, the
//! final answer to stdout; with `--json`, every event is one JSON line on stdout.

use std::collections::HashMap;
use std::io::Write;

use tokio::signal::unix::{Signal, SignalKind, signal};

use miniagent_api::{self as api, Env, Handle};
use miniagent_protocol::{ApprovalRequest, Decision, Event, Op};
use miniagent_text::{self as terminal_text, Cleaner, clean, preview_line, visible};

mod human;

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
        | Event::DiffReport { .. }
        | Event::RewindPoints { .. }
        | Event::Rewound { .. }
        | Event::RewindRefused { .. }
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
