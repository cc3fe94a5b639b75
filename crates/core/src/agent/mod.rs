//! The agent: one tokio task per session, fed [`Op`]s, producing [`Event`]s.
//!
//! [`spawn`] starts the task. It routes ops: a user message starts a turn (or waits for
//! the running one), an approval goes to the call awaiting it, an interrupt cancels the
//! turn's token. The turn itself runs as its own task holding the session state.

pub mod answers;
pub mod approval;
mod attach;
mod checkpoints;
pub mod compaction;
pub mod context;
mod delegate;
pub mod history;
mod hooks;
pub(crate) mod inspect;
mod meter;
mod model_call;
pub mod repetition;
mod restore;
mod resume;
mod rewind;
mod router;
mod switch;
mod turn;

pub use restore::Restored;
pub use switch::ModelSource;

use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use tokio::sync::{Mutex, mpsc};
use tokio_util::sync::CancellationToken;

use crate::config::Config;
use crate::llm::{ModelClient, Usage};
use crate::secrets::Secrets;
use crate::session::SessionLog;
use crate::tokens::TokenCounter;
use crate::tools::ToolRegistry;
use crate::tools::paths::Workspace;
use approval::{ApprovalPolicy, PendingApprovals, SharedPolicy};
use context::ContextState;
use miniagent_protocol::{Event, Op};

/// Everything a session needs that does not change while it runs.
pub struct AgentOptions {
    pub config: Config,
    pub workspace: PathBuf,
    /// Folders file tools may read besides the workspace (skill folders), with `tools.allow_paths`.
    pub read_roots: Vec<PathBuf>,
    /// Things to tell the person when the session starts (e.g. an ignored workspace config).
    pub startup_notices: Vec<String>,
    /// The MCP servers, when any are configured.
    pub mcp: Option<Arc<dyn crate::tools::McpControl>>,
    /// Events produced outside the loop (MCP servers connecting, skills found), forwarded
    /// to front ends in order. Taken by the agent task when it starts.
    pub side_events: std::sync::Mutex<Option<mpsc::UnboundedReceiver<Event>>>,
    pub system_prompt: String,
    /// The skills list the system prompt holds (already in it), for `/context`.
    pub skills_prompt: String,
    /// The prompt commands (`/init`, the `commands/` folders) `Op::RunCommand` runs.
    pub commands: Arc<crate::commands::PromptCommands>,
    /// The instruction files the system prompt holds (already in it), for the session's
    /// announcement and `/context`.
    pub instructions: crate::instructions::Instructions,
    pub client: Arc<dyn ModelClient>,
    pub tools: ToolRegistry,
    /// Where the session is recorded ([`SessionLog::disabled`] records nothing).
    pub session_log: SessionLog,
    /// Values no event may carry (the API key, configured credentials).
    pub secrets: Secrets,
    /// miniagent's own folders (config, data) that file tools change only when the person
    /// approves each time; the workspace's `.miniagent/` always is one.
    pub protected: Vec<PathBuf>,
    /// The folder results too large for the prompt are saved in, a folder per session
    /// (`tools.large_result_bytes`); `None` without a data folder or with the limit at 0:
    /// they are cut instead.
    pub results: Option<PathBuf>,
    /// The editor file tools read and write through, when a face's client offers one
    /// (ACP's `fs/*`); `None`: the disk.
    pub client_files: Option<Arc<dyn crate::tools::client_files::ClientFiles>>,
    /// The hooks run on the session's events (`hooks.json`; the workspace's only when
    /// trusted).
    pub hooks: Arc<crate::hooks::Hooks>,
    /// Builds a client for another model mid-session (`/model`); `None`: the session
    /// keeps the model it started with.
    pub models: Option<Arc<dyn ModelSource>>,
    /// The data folder's `checkpoints`, where each session keeps what it needs to put the
    /// workspace back (`checkpoints/<session id>`); `None`: nothing is kept.
    pub checkpoints: Option<PathBuf>,
}

impl AgentOptions {
    /// The same session's options with another model (`/model`): everything else is
    /// shared with these.
    fn with_model(&self, config: Config, client: Arc<dyn ModelClient>) -> AgentOptions {
        AgentOptions {
            config,
            client,
            workspace: self.workspace.clone(),
            read_roots: self.read_roots.clone(),
            // Said once, at the start.
            startup_notices: Vec::new(),
            mcp: self.mcp.clone(),
            // The agent task took them when it started.
            side_events: std::sync::Mutex::new(None),
            system_prompt: self.system_prompt.clone(),
            tools: self.tools.clone(),
            session_log: self.session_log.clone(),
            secrets: self.secrets.clone(),
            protected: self.protected.clone(),
            results: self.results.clone(),
            client_files: self.client_files.clone(),
            models: self.models.clone(),
            skills_prompt: self.skills_prompt.clone(),
            commands: self.commands.clone(),
            instructions: self.instructions.clone(),
            hooks: self.hooks.clone(),
            checkpoints: self.checkpoints.clone(),
        }
    }
}

/// The front end's side of a running agent.
pub struct AgentHandle {
    pub ops: mpsc::UnboundedSender<Op>,
    pub events: mpsc::UnboundedReceiver<Event>,
}

/// Sends events to the front end; a front end that went away is not an error.
#[derive(Clone, Debug)]
pub(crate) struct EventSink {
    sender: mpsc::UnboundedSender<Event>,
    /// Set for a sub-agent: its events go out wrapped, naming the delegate call and agent.
    nest: Option<(String, String)>,
    /// Every event is recorded here as it goes out.
    log: SessionLog,
    /// Replaced by `[redacted]` in every event.
    secrets: Secrets,
    /// Jobs (turns, `/compact`) whose last event went out: the router, told of an op a
    /// front end sent after seeing it, knows the job is over even before its task has
    /// returned.
    closed: Arc<AtomicU64>,
}

impl EventSink {
    fn new(sender: mpsc::UnboundedSender<Event>, log: SessionLog, secrets: Secrets) -> Self {
        Self {
            sender,
            nest: None,
            log,
            secrets,
            closed: Arc::default(),
        }
    }

    /// Sends a job's last event (what ends a turn, `/compact`'s report): from now on the
    /// job counts as over.
    pub(crate) fn emit_closing(&self, event: Event) {
        self.closed.fetch_add(1, Ordering::SeqCst);
        self.emit(event);
    }

    /// How many jobs have sent their last event.
    pub(crate) fn jobs_closed(&self) -> u64 {
        self.closed.load(Ordering::SeqCst)
    }

    /// Records the history's changes and writes the session log out (a step boundary).
    /// A sub-agent's history is its own and is not the session's: its changes are
    /// dropped (its events are recorded, wrapped).
    pub(crate) fn commit(&self, session: &mut Session) {
        let changes = session.context.take_changes();
        if self.nest.is_some() {
            return;
        }
        if let Some(problem) = self.log.commit(changes) {
            self.emit(Event::Notice { message: problem });
        }
        // What summaries stand in for is on disk now: memory need not hold it too.
        if self.log.is_written() {
            session.context.release_summarized();
        }
    }

    /// [`Self::commit`], and the session's entry in lists (the end of a turn).
    pub(crate) fn checkpoint(&self, session: &mut Session) {
        self.commit(session);
        if let Some(problem) = self.log.checkpoint() {
            self.emit(Event::Notice { message: problem });
        }
    }

    pub(crate) fn emit(&self, event: Event) {
        // Streamed text was redacted as it streamed (a key can span two fragments); the
        // per-delta path stays free of a serialization round trip.
        let streamed = matches!(event, Event::TextDelta { .. } | Event::ThinkingDelta { .. });
        let event = match &self.nest {
            Some((parent, agent)) => Event::SubAgent {
                parent: parent.clone(),
                agent: agent.clone(),
                event: Box::new(event),
            },
            None => event,
        };
        let event = if streamed {
            event
        } else {
            self.secrets.redact_event(event)
        };
        self.log.event(&event);
        let _ = self.sender.send(event);
    }

    /// Gives the person's own text back to the front end as they wrote it (`live`, not
    /// redacted: it goes back where they typed it), and records `recorded` in its place, a
    /// shorter form of the same event, redacted like every recorded one.
    pub(crate) fn give_back(&self, live: Event, recorded: &Event) {
        self.log.event(&self.secrets.redact_event(recorded.clone()));
        let _ = self.sender.send(live);
    }

    /// Sends `event` to the front end without recording it: what it carries is in a
    /// log already ([`Event::HistoryRestored`]).
    pub(crate) fn show(&self, event: Event) {
        let _ = self.sender.send(self.secrets.redact_event(event));
    }

    /// Whether this is a sub-agent's stream.
    pub(crate) fn is_nested(&self) -> bool {
        self.nest.is_some()
    }

    /// The same stream, for a sub-agent started by the `parent` call.
    pub(crate) fn nested(&self, parent: &str, agent: &str) -> Self {
        Self {
            sender: self.sender.clone(),
            nest: Some((parent.to_string(), agent.to_string())),
            log: self.log.clone(),
            secrets: self.secrets.clone(),
            // A sub-agent's end is not a job's.
            closed: Arc::default(),
        }
    }

    /// Where a tool's live output goes; a sub-agent's tools stream nowhere (their results
    /// still reach the front end with `tool_call_finished`).
    pub(crate) fn output_sink(&self, call_id: &str) -> crate::tools::OutputSink {
        match self.nest {
            Some(_) => crate::tools::OutputSink::discard(),
            None => crate::tools::OutputSink::new(call_id.to_string(), self.sender.clone())
                .redacting(self.secrets.clone())
                .recording(std::sync::Arc::new(self.log.clone())),
        }
    }
}

/// The state a turn changes.
pub(crate) struct Session {
    pub context: ContextState,
    /// What the provider reported for the conversation's last call (the session's
    /// totals are in the [`meter::SharedMeter`]).
    pub last_usage: Usage,
    /// `last_usage` was reckoned here: the provider reported none.
    pub last_usage_estimated: bool,
    pub compaction_log: Vec<miniagent_protocol::CompactionRecord>,
    /// Tokens of the system prompt and tool schemas, with the tool names they were
    /// counted for (MCP servers add tools as they connect).
    pub fixed_tokens: Option<(Vec<String>, u64)>,
    /// The `SessionStart` hooks, until the first turn takes what they add.
    session_start: Option<hooks::SessionStart>,
    /// Every turn the session started, in order (rewinds and the diff name turns by
    /// their number).
    pub turns: Vec<TurnMark>,
}

/// A turn the session started: its number (from 1, never reused) and the person's
/// message as they wrote it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TurnMark {
    pub turn: u32,
    pub text: String,
    /// Its message went into the conversation (not refused, nor taken back).
    pub sent: bool,
    /// Where its message is in the history now; `None` once a rewind or `/clear` set it
    /// aside (or when it was never sent).
    pub message: Option<usize>,
}

impl TurnMark {
    pub(crate) fn new(turn: u32, text: &str) -> Self {
        Self {
            turn,
            text: text.to_string(),
            sent: false,
            message: None,
        }
    }
}

impl Session {
    /// Numbers the turn that starts now with `text` (the person's words).
    pub(crate) fn start_turn(&mut self, text: &str) -> u32 {
        start_turn(&mut self.turns, text)
    }
}

/// Numbers a new turn with `text` after the last of `turns` (from 1, never reused).
pub(crate) fn start_turn(turns: &mut Vec<TurnMark>, text: &str) -> u32 {
    let turn = turns.last().map_or(1, |last| last.turn.saturating_add(1));
    turns.push(TurnMark::new(turn, text));
    turn
}

/// The turns' messages from history index `from` on left the conversation (a rewind set
/// them aside, `/clear` started over from 0).
pub(crate) fn turns_set_aside(turns: &mut [TurnMark], from: usize) {
    for mark in turns {
        if mark.message.is_some_and(|index| index >= from) {
            mark.message = None;
        }
    }
}

/// The latest turn's message is in the history at `index` (`None`: it was taken back).
pub(crate) fn turn_message(turns: &mut [TurnMark], index: Option<usize>) {
    if let Some(mark) = turns.last_mut() {
        mark.sent = index.is_some();
        mark.message = index;
    }
}

/// Starts the sub-agents of one call (the `id` call run in this context).
pub(crate) type StartSubAgents = fn(&TurnContext, &str) -> Arc<dyn crate::tools::SubAgents>;

/// What every turn of the session shares.
#[derive(Clone)]
pub(crate) struct TurnContext {
    pub options: Arc<AgentOptions>,
    /// Where file tools may work (the workspace plus read-only extra roots).
    pub workspace: Arc<Workspace>,
    pub events: EventSink,
    pub cancel: CancellationToken,
    pub approvals: PendingApprovals,
    pub policy: SharedPolicy,
    /// What front ends asked while this turn held the session ([`inspect::HISTORY`],
    /// [`inspect::CONTEXT`]), answered at its next step.
    pub inspect_requested: Arc<std::sync::atomic::AtomicU8>,
    /// How its calls start sub-agents; `None` in a sub-agent (sub-agents do not nest).
    pub sub_agents: Option<StartSubAgents>,
    /// Every model call's tokens and cost, the sub-agents' included.
    pub meter: meter::SharedMeter,
    /// `agent.max_cost` for the turn this context runs (its sub-agents share it).
    pub cost_limit: Option<meter::CostLimit>,
    /// What calls change in the workspace, kept (the sub-agents' calls too).
    pub checkpoints: Arc<crate::checkpoint::Checkpoints>,
}

/// What every turn of a session shares, and the router too.
#[derive(Clone)]
struct Shared {
    options: Arc<AgentOptions>,
    workspace: Arc<Workspace>,
    session: Arc<Mutex<Session>>,
    events: EventSink,
    approvals: PendingApprovals,
    policy: SharedPolicy,
    inspect_requested: Arc<std::sync::atomic::AtomicU8>,
    meter: meter::SharedMeter,
    checkpoints: Arc<crate::checkpoint::Checkpoints>,
}

fn read_roots(options: &AgentOptions) -> Vec<PathBuf> {
    let mut roots = options.config.tools.allow_paths.clone();
    roots.extend(options.read_roots.iter().cloned());
    roots
}

/// Starts the agent task. It ends after [`Op::Shutdown`] or when the op sender is dropped.
pub fn spawn(options: AgentOptions) -> AgentHandle {
    let (ops_tx, ops_rx) = mpsc::unbounded_channel();
    let (events_tx, events_rx) = mpsc::unbounded_channel();
    let sink = EventSink::new(events_tx, options.session_log.clone(), options.secrets.clone());
    tokio::spawn(run(Arc::new(options), ops_rx, sink));
    AgentHandle {
        ops: ops_tx,
        events: events_rx,
    }
}

/// The session's task: says what it runs with, then routes ops until a shutdown.
async fn run(options: Arc<AgentOptions>, mut ops: mpsc::UnboundedReceiver<Op>, events: EventSink) {
    let counter = announce(&options, &events).await;
    let shared = Shared::new(options, events, counter);
    shared.session.lock().await.session_start = hooks::SessionStart::start(&shared.options, &shared.events);
    let mut side_events = shared
        .options
        .side_events
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
        .take();
    let mut router = router::Router::new(shared);
    loop {
        tokio::select! {
            op = ops.recv() => match op {
                Some(op) => {
                    if router.on_op(op).await.is_break() {
                        break;
                    }
                }
                None => {
                    router.stop_turn().await;
                    break;
                }
            },
            side = async { match side_events.as_mut() {
                Some(receiver) => receiver.recv().await,
                None => std::future::pending().await,
            } } => match side {
                Some(event) => router.on_side_event(event),
                None => side_events = None,
            },
            joined = router.turn_ended() => router.after_turn(joined).await,
        }
    }
    router.shutdown().await;
}

/// The session's opening events: what it runs with, the prompt's fixed size, and the
/// start-up notices. Returns the token counter, loaded off the async workers.
async fn announce(options: &AgentOptions, events: &EventSink) -> TokenCounter {
    events.emit(Event::SessionConfigured {
        model: options.client.model().to_string(),
        provider: options.client.provider().to_string(),
        workspace: options.workspace.display().to_string(),
        tools: options.tools.infos(),
        session_id: options.session_log.id(),
        sandbox: crate::tools::sandbox::session_state(options.config.tools.bash.sandbox),
        endpoint: crate::llm::endpoint::shown_endpoint(
            options.config.model.provider,
            &options.config.model.base_url,
        ),
        instruction_files: options
            .instructions
            .files
            .iter()
            .map(|file| miniagent_protocol::InstructionFileInfo {
                path: file.path.display().to_string(),
                bytes: u64::try_from(file.text.len()).unwrap_or(u64::MAX),
                truncated: file.truncated,
                user: file.user,
            })
            .collect(),
    });
    // Always next, so a face opening a session knows what it may switch to (none: it
    // cannot).
    events.emit(match options.models {
        Some(_) => switch::choices_event(options),
        None => Event::ModelChoices { choices: Vec::new() },
    });
    // The tokenizer's first load takes a moment; it must not block an async worker.
    let encoding = options.config.agent.tokenizer;
    let counter = tokio::task::spawn_blocking(move || TokenCounter::new(encoding))
        .await
        .unwrap_or_else(|_| TokenCounter::estimate_only());
    options
        .session_log
        .set_fixed_tokens(compaction::fixed_tokens_of(options, &counter));
    // The prompt's size is known before the first request: the system prompt and tools.
    events.emit(Event::TokenUsage {
        context_tokens: compaction::fixed_tokens_of(options, &counter),
        estimated: true,
        token_limit: options.config.agent.token_limit,
        context_window: options.config.model.context_window,
        input_tokens: 0,
        output_tokens: 0,
        total_input_tokens: 0,
        total_output_tokens: 0,
        cache_read_tokens: 0,
        cache_write_tokens: 0,
        total_cache_read_tokens: 0,
        total_cache_write_tokens: 0,
        cost_usd: None,
    });
    if !options.hooks.is_empty() {
        events.emit(Event::HooksLoaded {
            hooks: options.hooks.infos(),
        });
    }
    for message in &options.startup_notices {
        events.emit(Event::Notice {
            message: message.clone(),
        });
    }
    let rules = crate::tools::permission_rule::PermissionRules::from_config(&options.config).listed();
    if !rules.is_empty() {
        events.emit(Event::PermissionRulesChanged { rules });
    }
    counter
}

impl Shared {
    fn new(options: Arc<AgentOptions>, events: EventSink, counter: TokenCounter) -> Self {
        Self {
            // miniagent's own folders inside the workspace are changed only when the
            // person approves each time, in file tools and in the approval policy alike.
            workspace: Arc::new({
                let workspace =
                    Workspace::new(&options.workspace, &read_roots(&options)).protecting(&options.protected);
                match &options.client_files {
                    Some(files) => workspace.with_client_files(Arc::clone(files)),
                    None => workspace,
                }
            }),
            session: Arc::new(Mutex::new(Session {
                context: ContextState::new(counter),
                last_usage: Usage::default(),
                last_usage_estimated: false,
                compaction_log: Vec::new(),
                fixed_tokens: None,
                session_start: None,
                turns: Vec::new(),
            })),
            policy: SharedPolicy::new(
                ApprovalPolicy::new(options.config.agent.approval)
                    .with_permissions(crate::tools::permission_rule::PermissionRules::from_config(
                        &options.config,
                    ))
                    .protecting(&options.protected)
                    .confining_commands(crate::tools::sandbox::kernel_abi().is_ok()),
            ),
            approvals: PendingApprovals::default(),
            inspect_requested: Arc::default(),
            meter: meter::SharedMeter::default(),
            checkpoints: checkpoints::for_session(&options),
            events,
            options,
        }
    }
}
