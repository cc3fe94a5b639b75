//! The contract between the agent and every front end (workbench, `exec`, replay).
//!
//! Front ends send [`Op`]s and receive [`Event`]s. Both are plain serde types tagged as
//! `{"type": "<snake_case>", ...}` so they can be logged as JSONL and replayed. Nothing
//! here holds logic.

use serde::{Deserialize, Serialize};

mod approval;
mod checkpoint;
mod context;
mod history;
pub mod message;
pub mod playback;
pub mod record;
pub mod settings;
pub mod shown;

pub use approval::{
    ApprovalRequest, ApprovalRule, Decision, PermanentRule, RuleList, RuleSource, proposed_rule,
};
pub use checkpoint::{FileDiff, FileStatus, RewindPoint, RewindScope, TurnChanges};
pub use context::{CommandInfo, ContextReport, instruction_files_line};
pub use history::{
    CompactionOutcome, CompactionRecord, HistoryEntry, HistoryEntryKind, HistorySnapshot, SetAsideBranch,
    SummaryDetail,
};
pub use playback::{PlayState, PlaybackControl, PlaybackStatus, RecordingInfo};
pub use settings::{ApprovalMode, CompactionStrategy, Encoding, NotifySetting, SandboxSetting};
pub use shown::{
    MAX_SESSION_COST_USD, attached_line, message_range, messages_named, plan_lines, plan_progress, sane_cost,
    short_count, turn_usage_line, usd,
};

/// Identifies one tool call; the model provider chooses it (`toolu_…`, `call_…`).
pub type CallId = String;

/// A request from a front end to the agent.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Op {
    /// A user message. If a turn is running it is queued and starts when that turn ends.
    /// Each `@path` (`@"a b.txt"` with spaces) naming a file in the workspace attaches it
    /// ([`Event::FilesAttached`]).
    UserInput { text: String },
    /// The answer to an [`Event::ApprovalRequested`].
    Approval { id: CallId, decision: Decision },
    /// Cancel the running turn now: stop the stream, kill running tools, refuse pending approvals.
    Interrupt,
    /// Forget a remembered approval or refusal; the next such call asks again.
    RevokeApproval { rule: ApprovalRule },
    /// Change the approval mode for the rest of the session.
    SetApprovalMode { mode: ApprovalMode },
    /// Start the conversation over (the system prompt stays); refused while a turn runs.
    ClearHistory,
    /// Compact the history now instead of waiting for the budget to demand it.
    CompactNow,
    /// Ask for a [`Event::HistorySnapshot`]: the prompt as the model will see it next.
    InspectHistory,
    /// Drop an MCP server's connection and connect again.
    ReconnectMcp { server: String },
    /// Continue the session recorded in this log: its history, summaries, remembered
    /// approvals and token figures replace the current ones; refused while a turn runs.
    Resume { path: std::path::PathBuf },
    /// Cancel whatever runs and end the agent task.
    Shutdown,
    // Questions front ends ask instead of reading the agent's files themselves.
    /// Ask for the workspace's notes: answered with [`Event::Notes`].
    ReadNotes,
    /// Ask for a finished call's result and output as the session log recorded them
    /// (front ends keep only the newest in memory): answered with [`Event::RecordedCall`].
    RecordedCall { id: CallId },
    /// A replay's control (`miniagent replay`); an agent says it is not a replay.
    Playback { control: PlaybackControl },
    /// Ask what fills the prompt now: answered with [`Event::ContextReport`].
    InspectContext,
    /// Run a prompt command ([`Event::CommandsLoaded`]): its text, with `arguments`
    /// substituted, is sent as the person's message. A name the session does not know is
    /// sent as written (`/name arguments`), with a notice.
    RunCommand {
        name: String,
        #[serde(default)]
        arguments: String,
    },
    /// Switch the session's model for the rest of the session (`/model NAME`): `name` is a
    /// provider profile from the config (`[profiles.NAME]`, or `default` for the
    /// `[model]` table itself) or a model of the current provider. Refused while a turn
    /// runs; answered with [`Event::ModelChanged`], or a notice saying why the old model
    /// stays.
    SetModel { name: String },
    /// Remove a permanent rule from the user's config (and from this session): answered
    /// with [`Event::PermissionRulesChanged`], or a notice saying why it cannot be.
    RemovePermissionRule { rule: PermanentRule },
    /// Ask what the session changed in the workspace: every turn's changes together, or
    /// one turn's. Answered with [`Event::DiffReport`].
    Diff {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        turn: Option<u32>,
    },
    /// Ask which of the person's messages a rewind can go back to: answered with
    /// [`Event::RewindPoints`].
    ListRewindPoints,
    /// Put the code, the conversation or both back as they were just before turn
    /// `turn`'s message. Refused while a turn runs, and (naming them) when files the
    /// session changed were changed by someone else since. Answered with
    /// [`Event::Rewound`] or [`Event::RewindRefused`].
    Rewind { turn: u32, scope: RewindScope },
    /// Take back the file changes of the latest turn whose changes are still in place
    /// (`/undo`): answered as [`Op::Rewind`] with [`RewindScope::Code`] is.
    Undo,
}

/// One tool the agent can call, as announced to front ends.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ToolInfo {
    pub name: String,
    pub description: String,
}

/// An instruction file the system prompt holds ([`Event::SessionConfigured`]).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct InstructionFileInfo {
    /// Where it was found.
    pub path: String,
    /// Bytes of it in the prompt.
    pub bytes: u64,
    /// It was cut to fit `instructions.max_bytes`.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub truncated: bool,
    /// From the user's config folder (for every project), not the repository.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub user: bool,
}

/// Whether `bash` commands run in the Landlock sandbox (writes only under the workspace
/// and the temp dir), as configured when the session started.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SandboxState {
    /// Not reported (a session recorded before miniagent had a sandbox).
    #[default]
    Unknown,
    /// Every command is sandboxed.
    Enforced,
    /// `tools.bash.sandbox = "off"`: full-auto runs commands unsandboxed; the other
    /// approval modes still sandbox them.
    Off,
    /// The kernel cannot sandbox; commands run unsandboxed.
    Unavailable { reason: String },
}

impl SandboxState {
    /// Whether commands started now in `mode` are sandboxed, as far as the state tells
    /// (`None`: not reported). Only full-auto honours `sandbox = "off"`.
    pub fn active(&self, mode: ApprovalMode) -> Option<bool> {
        match self {
            SandboxState::Unknown => None,
            SandboxState::Enforced => Some(true),
            SandboxState::Off => Some(mode != ApprovalMode::FullAuto),
            SandboxState::Unavailable { .. } => Some(false),
        }
    }
}

/// What kind of thing a tool call does, for front ends that draw calls by kind (an
/// editor's icon, its "follow the agent"); the agent decides nothing by it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ToolKind {
    /// Reads files or data.
    Read,
    /// Changes files.
    Edit,
    Delete,
    Move,
    /// Searches files, tools or data.
    Search,
    /// Runs commands.
    Execute,
    /// Thinks or plans without acting outside (a sub-agent, the plan).
    Think,
    /// Fetches from the network.
    Fetch,
    /// Anything else, and any kind a newer miniagent wrote that this one does not know.
    #[default]
    #[serde(other)]
    Other,
}

/// A place in a file a tool call works on: the path is absolute (inside the workspace),
/// the line 1-based.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Location {
    pub path: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub line: Option<u32>,
}

/// A file's whole text before and after a change, for front ends that draw their own
/// diff (an editor's review). Only for files small enough to carry whole.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct TextChange {
    /// `None`: the file is new.
    #[serde(default)]
    pub old_text: Option<String>,
    pub new_text: String,
}

/// One step of the agent's plan ([`Event::PlanUpdated`]).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct PlanEntry {
    pub content: String,
    pub status: PlanStatus,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub priority: Option<PlanPriority>,
    /// A short line on the step (what was found, why it waits); absent in logs written
    /// before notes existed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

/// Where a step of the plan stands.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PlanStatus {
    Pending,
    InProgress,
    Completed,
}

/// How much a step of the plan matters.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PlanPriority {
    High,
    Medium,
    Low,
}

/// Why a turn stopped streaming text early, as the provider reported it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum StopReason {
    /// The model finished its reply.
    EndTurn,
    /// The model wants tools to run.
    ToolUse,
    /// The reply hit the output token limit.
    MaxTokens,
    /// The provider gave a reason we do not model (the text is in the log).
    Other,
}

/// Something that happened in the agent, in the order it happened.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Event {
    /// The session is ready: what it talks to and with which tools.
    SessionConfigured {
        model: String,
        provider: String,
        workspace: String,
        tools: Vec<ToolInfo>,
        /// The id the session is recorded under, when it is recorded.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        session_id: Option<String>,
        /// Whether `bash` commands are sandboxed.
        #[serde(default)]
        sandbox: SandboxState,
        /// Where model requests go: the provider's base URL, without credentials or a
        /// query (empty in logs from before it was recorded).
        #[serde(default, skip_serializing_if = "String::is_empty")]
        endpoint: String,
        /// The instruction files (`AGENTS.md` and its fallbacks) in the system prompt,
        /// in the order they go in.
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        instruction_files: Vec<InstructionFileInfo>,
    },
    /// The agent continues a recorded session ([`Op::Resume`]).
    SessionResumed {
        id: String,
        /// Messages of the history it continues from.
        messages: u64,
        /// Turns recorded so far.
        turns: u32,
    },
    /// A user message was taken and a turn began.
    TurnStarted { text: String },
    /// A model call (one step of the turn) begins.
    StepStarted { step: u32, max_steps: u32 },
    /// A piece of the model's thinking.
    ThinkingDelta { delta: String },
    /// A piece of the model's visible reply.
    TextDelta { delta: String },
    /// The complete reply of one model call.
    AssistantMessage {
        thinking: String,
        text: String,
        tool_calls: Vec<ToolCallSummary>,
        stop_reason: StopReason,
    },
    /// The model asked for a tool call.
    ToolCallRequested {
        id: CallId,
        name: String,
        arguments: serde_json::Value,
        /// The arguments in one short line for lists (`ls -la`, `src/main.rs`); empty in
        /// logs from before it existed.
        #[serde(default)]
        summary: String,
        /// What kind of call it is; `other` in logs from before it existed.
        #[serde(default)]
        kind: ToolKind,
        /// The files (and lines) it works on, when its tool knows them.
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        locations: Vec<Location>,
    },
    /// The approval policy wants a person to decide; answer with [`Op::Approval`].
    ApprovalRequested {
        id: CallId,
        name: String,
        /// The whole request as plain text (`notes` first), for front ends that print it.
        preview: String,
        /// What is asked about, typed for front ends that draw it; `None` in logs from
        /// before it existed (then `preview` is all there is).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        request: Option<ApprovalRequest>,
        /// Why the person is asked although a rule would have let it run (a change to
        /// miniagent's own settings, a repeated call), one paragraph each.
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        notes: Vec<String>,
        /// What [`Decision::ApproveForSession`] would remember; `None`: it approves this
        /// call only. Logs from before it existed read as `None`.
        #[serde(default)]
        session_rule: Option<ApprovalRule>,
    },
    /// The approvals remembered for this session changed (one was added or revoked), or
    /// the refusals ([`Decision::DenyForSession`]) did.
    ApprovalRulesChanged {
        rules: Vec<ApprovalRule>,
        /// What is refused without asking for the rest of the session.
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        refused: Vec<ApprovalRule>,
    },
    /// The approval mode changed.
    ApprovalModeChanged { mode: ApprovalMode },
    /// The conversation was started over.
    HistoryCleared,
    /// A tool call began to run.
    ToolCallStarted { id: CallId, name: String },
    /// Output a running tool produced (not capped; the capped result is what the model sees).
    ToolOutputDelta { id: CallId, delta: String },
    /// A tool call ended (ok, failed, refused or interrupted).
    ToolCallFinished {
        id: CallId,
        name: String,
        ok: bool,
        outcome: ToolOutcome,
        /// How long it ran, from `ToolCallStarted`; 0 if it never started. The wait for
        /// approval is not part of it.
        duration_ms: u64,
        /// One line for lists: for a failure, how it ended and its error line (`exit
        /// code 1 · NameError: …`); for a refusal by the person, their reason.
        output_preview: String,
        /// The whole result, as the model received it.
        output: String,
        /// What the call changed outside the conversation (files written), when it
        /// succeeded and the tool knows.
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        effects: Vec<CallEffect>,
    },
    /// The agent's plan, whole, as it stands now (its `update_plan` call, sent before
    /// that call's [`Event::ToolCallFinished`]).
    PlanUpdated { entries: Vec<PlanEntry> },
    /// Where the context stands after a model call.
    TokenUsage {
        /// Tokens the next request would carry, as miniagent counts them: the figure the
        /// budget is checked against, and the one `/history` shows (also before the first
        /// request: the system prompt and tool schemas).
        context_tokens: u64,
        /// True when the provider reported no usage for the last call (or there was none).
        estimated: bool,
        /// The configured budget that triggers compaction.
        token_limit: u64,
        /// The model's context window.
        context_window: u64,
        /// Provider-reported input tokens of the last call.
        input_tokens: u64,
        /// Provider-reported output tokens of the last call.
        output_tokens: u64,
        /// Provider-reported totals over the session: every model call it made, summary
        /// calls and sub-agents' calls included (what is billed).
        total_input_tokens: u64,
        total_output_tokens: u64,
        /// Of the last call's input tokens, those the provider read from its prompt cache.
        #[serde(default)]
        cache_read_tokens: u64,
        /// Of the last call's input tokens, those the provider wrote to its prompt cache.
        #[serde(default)]
        cache_write_tokens: u64,
        /// The same over the session.
        #[serde(default)]
        total_cache_read_tokens: u64,
        #[serde(default)]
        total_cache_write_tokens: u64,
        /// What the session's model calls have cost so far, in US dollars, at the prices
        /// configured for the model; `None` when no price is known for it.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        cost_usd: Option<f64>,
    },
    /// A model call failed in a way worth another try; the next attempt starts after `delay_ms`.
    Retrying {
        attempt: u32,
        max_attempts: u32,
        delay_ms: u64,
        reason: String,
        /// True when text or thinking of the failed attempt was already streamed: front ends
        /// drop it, because the retry streams the whole reply again.
        discard_partial: bool,
    },
    /// A summary call began (the workbench shows "compacting"). Each one ends with
    /// [`Event::ContextCompacted`] or [`Event::CompactionEnded`].
    CompactionStarted { reason: String },
    /// A summary call ended without replacing anything: it failed, was cancelled, or
    /// wrote nothing shorter than the messages it was for.
    CompactionEnded {
        outcome: CompactionOutcome,
        reason: String,
    },
    /// A range of the history was replaced by a summary in the prompt (the originals are kept).
    ContextCompacted {
        /// The whole prompt's estimated tokens before and after.
        tokens_before: u64,
        tokens_after: u64,
        summary: String,
        /// The replaced messages: `start..end` of the history.
        start: u64,
        end: u64,
        /// True when the model could not summarize and a digest stands in.
        fallback: bool,
    },
    /// An MCP server's state changed (they connect in the background).
    McpServerStatus { server: String, state: McpState },
    /// Which ready servers' tools are held back from the model now (too large to send
    /// with every request: it finds them with `search_mcp_tools`), and which of those it
    /// found; sent whenever that changes, whole. Empty: every MCP tool is declared.
    McpToolsDeferred { servers: Vec<DeferredServer> },
    /// The skills found at start-up, and problems met while finding them.
    SkillsLoaded {
        skills: Vec<SkillInfo>,
        warnings: Vec<String>,
    },
    /// Something a sub-agent did; `parent` is the `delegate` call that started it.
    SubAgent {
        parent: CallId,
        agent: String,
        event: Box<Event>,
    },
    /// The answer to [`Op::InspectHistory`].
    HistorySnapshot { snapshot: HistorySnapshot },
    /// [`Op::Resume`] took up a recorded session: its events as recorded, for a front
    /// end to show in place of the session left behind. Sent before the resume's
    /// notices, closing events and [`Event::SessionResumed`]; never recorded itself.
    HistoryRestored { events: Vec<Event> },
    /// Something worth telling the person that is not an error (e.g. a reply cut at the token limit).
    Notice { message: String },
    /// The turn finished with the model's final answer.
    TurnComplete { text: String },
    /// The turn was interrupted; the history was repaired and the next message continues it.
    TurnAborted { reason: String },
    /// The step limit was hit; `report` is the model's account of what was done and what remains.
    StepLimitReached { steps: u32, report: String },
    /// What the turn used, sent just before the event that ends it: its model calls
    /// (summaries and sub-agents' included), their provider-reported tokens and, when the
    /// model's price is known, their cost in US dollars.
    TurnUsage {
        model_calls: u64,
        input_tokens: u64,
        output_tokens: u64,
        cache_read_tokens: u64,
        cache_write_tokens: u64,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        cost_usd: Option<f64>,
    },
    /// The turn failed and ended; the message says why. (Problems that do not end the
    /// turn are [`Event::Notice`]s.)
    Error { message: String },
    /// The person's message was taken back out of the session before it was sent (it
    /// could not be made to fit the prompt budget): a front end gives `text` back to the
    /// person to shorten or send again. Sent just before the [`Event::Error`] that ends the
    /// turn. The log records it with its text cut (as the turn's start may be); a replay
    /// or resume only counts the turn as not taken.
    PromptReturned { text: String },
    /// The agent task ended (after [`Op::Shutdown`] or when every sender is gone).
    ShutdownComplete,
    // Answers to the questions front ends ask instead of reading the agent's files.
    /// The answer to [`Op::ReadNotes`]: the notes, oldest first, or why they cannot be read.
    Notes {
        notes: Vec<NoteInfo>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        error: Option<String>,
    },
    /// The answer to [`Op::RecordedCall`]: what the log holds of call `id` (`result`
    /// `None`: not recorded), or why it cannot be read.
    RecordedCall {
        id: CallId,
        result: Option<String>,
        output: Option<RecordedOutput>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        error: Option<String>,
    },
    // A replay's events (`miniagent replay`); an agent never sends them.
    /// The replay opens (or starts over) on this recording: the front end's view starts
    /// from it, at `status`.
    PlaybackOpened {
        recording: RecordingInfo,
        status: PlaybackStatus,
    },
    /// The replay's state changed, or its clock moved (a few times a second while it
    /// plays).
    PlaybackStatus { status: PlaybackStatus },
    /// A recorded event coming due, `at_ms` into the replay (recorded time).
    Replayed { at_ms: u64, event: Box<Event> },
    /// The hooks the session runs on its events (`hooks.json`), sent once at the start
    /// when there are any.
    HooksLoaded { hooks: Vec<HookInfo> },
    /// The answer to [`Op::InspectContext`].
    ContextReport { report: ContextReport },
    /// The prompt commands the session offers ([`Op::RunCommand`]), and why files under
    /// `commands/` were left out (or lost to a command of the same name).
    CommandsLoaded {
        commands: Vec<CommandInfo>,
        warnings: Vec<String>,
    },
    /// The models the session can switch to ([`Op::SetModel`]): the config's provider
    /// profiles, then the priced models of the current provider. Sent right after
    /// [`Event::SessionConfigured`] (empty: the session cannot switch) and after each
    /// switch.
    ModelChoices { choices: Vec<ModelChoice> },
    /// The session's model changed ([`Op::SetModel`]): the next model call goes to it,
    /// with the history so far; the gauge's window and the prices follow it.
    ModelChanged {
        /// The profile switched to, when the switch named one.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        profile: Option<String>,
        model: String,
        provider: String,
        /// Where model requests go now (as [`Event::SessionConfigured`] says it).
        #[serde(default, skip_serializing_if = "String::is_empty")]
        endpoint: String,
        context_window: u64,
    },
    /// An [`Op::SetModel`] was refused (a turn runs, no such profile or model, no key for
    /// it): the session stays on its model. `message` says so, whole.
    ModelChangeRefused { name: String, message: String },
    /// The files the person's message named with `@path`, as they were attached to it
    /// (sent right after its [`Event::TurnStarted`]; only when it named any).
    FilesAttached { files: Vec<AttachedFile> },
    /// The `[permissions]` rules in force: sent when the session starts (when there are
    /// any) and after one is added (`A` at an approval) or removed.
    PermissionRulesChanged { rules: Vec<PermanentRule> },
    /// The answer to [`Op::Diff`]: each file changed (`turn` `None`: over the whole
    /// session, from before its first change to the session's last), and the turns that
    /// changed files, for picking one.
    DiffReport {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        turn: Option<u32>,
        files: Vec<FileDiff>,
        turns: Vec<TurnChanges>,
    },
    /// The answer to [`Op::ListRewindPoints`]: the person's messages of the conversation
    /// as it stands, oldest first.
    RewindPoints { points: Vec<RewindPoint> },
    /// A rewind ([`Op::Rewind`], [`Op::Undo`]) was done: `files` (relative to the
    /// workspace) were put back; for a conversation rewind, `messages` messages were set
    /// aside and `text` is the person's message of `turn`, to edit and send again.
    Rewound {
        turn: u32,
        scope: RewindScope,
        files: Vec<String>,
        #[serde(default)]
        messages: usize,
        #[serde(default)]
        text: String,
    },
    /// A rewind was refused and nothing changed: `message` says why, whole; `files` are
    /// the files changed outside miniagent that stopped it.
    RewindRefused {
        message: String,
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        files: Vec<String>,
    },
}

/// One entry of [`Event::ModelChoices`].
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ModelChoice {
    /// What [`Op::SetModel`] takes: the profile's name, or the model's.
    pub name: String,
    /// A provider profile from the config (else a model of the current provider).
    pub profile: bool,
    pub model: String,
    pub provider: String,
    pub context_window: u64,
    /// The one in use now.
    pub current: bool,
}

/// A file an `@path` in the person's message named ([`Event::FilesAttached`]).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct AttachedFile {
    /// As the message named it (`src/main.rs`).
    pub path: String,
    /// Its size on disk; 0 when it was not read.
    pub bytes: u64,
    /// Its lines, when they were counted (not for a file attached by reference).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lines: Option<u64>,
    pub attached: Attached,
}

/// How much of a named file went with the message.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "as", rename_all = "snake_case")]
pub enum Attached {
    /// Its whole text.
    Whole,
    /// Its first `lines` lines; the model was told to read the rest with `read_file`.
    Part { lines: u64 },
    /// Too large to carry: the model was told to read it with `read_file`.
    Reference,
    /// Not attached, and why (outside the workspace, in miniagent's own folders, binary).
    Refused { reason: String },
}

/// Something a finished call changed outside the conversation.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum CallEffect {
    /// A file was created or changed; `path` is absolute.
    FileChanged {
        path: String,
        /// The whole text before and after, when the tool knows them and both are small
        /// enough to carry.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        change: Option<TextChange>,
    },
}

/// One note of the workspace's notes file.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct NoteInfo {
    pub category: String,
    pub content: String,
    pub timestamp: String,
}

/// A call's output as the session log keeps it: its beginning and end, and how many
/// bytes between them were dropped.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct RecordedOutput {
    pub head: String,
    pub tail: String,
    pub dropped: u64,
}

/// A server whose tools are held back from the model ([`Event::McpToolsDeferred`]).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct DeferredServer {
    pub server: String,
    /// Its tools the model found with the search and is offered now, as it calls them.
    pub found: Vec<String>,
}

/// Where an MCP server stands.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "state", rename_all = "snake_case")]
pub enum McpState {
    Disabled,
    Connecting,
    /// `tools`: its tools' names as the model calls them (`mcp__<server>__<tool>`).
    Ready {
        tools: Vec<String>,
    },
    Failed {
        reason: String,
    },
}

/// A skill as front ends list it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct SkillInfo {
    pub name: String,
    pub description: String,
    /// `bundled`, `user` or `workspace`.
    pub source: String,
    pub root: String,
    /// What the skill pre-approves while it is in use (its `allowed-tools`), one phrase
    /// each (`edit_file`, ``bash: `git status …` ``).
    #[serde(default)]
    pub pre_approves: Vec<String>,
    /// Its `allowed-tools` entries that pre-approve nothing, each with why.
    #[serde(default)]
    pub not_pre_approved: Vec<String>,
}

/// How a tool call ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ToolOutcome {
    /// It ran and succeeded.
    Ok,
    /// It ran (or could not) and failed; the model got the error.
    Error,
    /// The person refused it (or `exec`, which has nobody to ask, in their place).
    Denied,
    /// A rule refused it before it ran, and nobody was asked: the approval mode, or a
    /// guard (the same read a fourth time in a row); the output says which.
    Refused,
    /// The person interrupted or aborted the turn before it finished.
    Cancelled,
}

/// A tool call as shown in an [`Event::AssistantMessage`].
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ToolCallSummary {
    pub id: CallId,
    pub name: String,
}

// What the start API (`crate::api`) hands a front end besides the event stream.

/// What a front end shows of a session before the agent says anything: the settings it
/// was started with.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FrontEndSettings {
    pub workspace: std::path::PathBuf,
    pub model: String,
    pub provider: String,
    pub approval: ApprovalMode,
    pub max_steps: u32,
    pub token_limit: u64,
    pub context_window: u64,
    /// `ui.theme`.
    pub theme: String,
    /// `ui.show_thinking`.
    pub show_thinking: bool,
    /// Where themes are found and settings saved; `None` on a machine with none.
    pub config_dir: Option<std::path::PathBuf>,
    /// Where sessions are recorded; `None` on a machine with no data folder.
    pub sessions_dir: Option<std::path::PathBuf>,
    /// `ui.notify`.
    pub notify: NotifySetting,
}

/// The question a workspace with its own MCP servers or skills asks before the session
/// starts: they run programs or steer the agent, so only with the person's trust.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TrustQuestion {
    /// What the workspace brings, one line each.
    pub items: Vec<String>,
    /// It was trusted before and has changed since.
    pub changed: bool,
}

/// Where a recorded session comes from, which decides whether continuing it here is
/// asked about first.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LogOrigin {
    pub id: String,
    /// The workspace the log says it was recorded in.
    pub workspace: String,
    /// One of this user's recorded sessions (in their sessions folder).
    pub own: bool,
}

#[cfg(test)]
mod tests;

/// A hook as front ends list it (`/hooks`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct HookInfo {
    /// The event it runs on: `PreToolUse`, `PostToolUse`, `UserPromptSubmit`, `Stop`,
    /// `SessionStart` or `PreCompact`.
    pub event: String,
    /// What it matches (a tool name pattern, or `*` for everything).
    pub matcher: String,
    /// The command line, as written in `hooks.json`.
    pub command: String,
    /// How long it may run, in seconds.
    pub timeout_s: u64,
    /// `user` (the config folder's `hooks.json`) or `workspace` (the trusted workspace's).
    pub source: String,
}
