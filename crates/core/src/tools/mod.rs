//! What the agent can do: the [`Tool`] trait, the registry the loop looks tools up in,
//! argument validation and output capping.

pub(crate) mod at;
pub mod bash;
pub mod client_files;
pub mod command_rule;
pub mod delegate;
pub mod edit;
pub mod files;
pub mod git_guard;
pub mod jobs;
pub mod mcp;
pub mod notes;
pub mod output;
pub mod paths;
pub mod permission_rule;
pub mod plan;
pub(crate) mod process;
pub mod read;
pub mod sandbox;
pub mod schema;
pub mod skills;
pub mod spill;
pub mod supervisor;
pub mod typed;
pub mod web_fetch;

use std::sync::Arc;

use futures_util::future::BoxFuture;
use serde_json::Value;
use tokio::sync::mpsc::UnboundedSender;
use tokio_util::sync::CancellationToken;

use crate::config::Config;
use crate::llm::ToolSpec;
use miniagent_protocol::{
    ApprovalRequest, ApprovalRule, CallId, Event, Location, PlanEntry, TextChange, ToolInfo, ToolKind,
};
use paths::Workspace;
pub use typed::{ToolCall, TypedTool};

/// Why a call cannot succeed (arguments the schema refuses, a path outside the workspace,
/// an edit that matches nothing, an empty command). It is the call's result, said to the
/// model; nobody is asked to approve such a call.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct InvalidCall(pub String);

impl From<String> for InvalidCall {
    fn from(message: String) -> Self {
        Self(message)
    }
}

/// The built-in tools by name, in the order the model sees them, and what each can change:
/// what a skill's `allowed-tools` may name, what the docs' tool table lists. A unit test
/// holds it to [`ToolRegistry::builtin`], so a new tool cannot be left out. (`get_skill`
/// joins when skills exist; MCP tools come from their servers.)
pub const BUILTIN_TOOLS: &[(&str, ToolEffect)] = &[
    ("read_file", ToolEffect::ReadOnly),
    ("write_file", ToolEffect::WritesFiles),
    ("edit_file", ToolEffect::WritesFiles),
    ("bash", ToolEffect::RunsCommands),
    ("bash_output", ToolEffect::ReadOnly),
    ("bash_kill", ToolEffect::RunsCommands),
    ("record_note", ToolEffect::WritesFiles),
    ("recall_notes", ToolEffect::ReadOnly),
    ("delegate", ToolEffect::ReadOnly),
    ("update_plan", ToolEffect::ReadOnly),
    ("web_fetch", ToolEffect::External),
];

/// What running a tool can change; the approval policy decides by it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ToolEffect {
    /// Reads only; never changes anything.
    ReadOnly,
    /// Changes files in the workspace.
    WritesFiles,
    /// Runs programs.
    RunsCommands,
    /// Acts through something outside miniagent (MCP servers, the network).
    External,
}

impl ToolEffect {
    /// The kind a call of a tool with this effect is shown as, unless the tool says
    /// better ([`Tool::kind`]).
    pub fn kind(self) -> ToolKind {
        match self {
            ToolEffect::ReadOnly => ToolKind::Read,
            ToolEffect::WritesFiles => ToolKind::Edit,
            ToolEffect::RunsCommands => ToolKind::Execute,
            ToolEffect::External => ToolKind::Other,
        }
    }
}

impl std::fmt::Display for ToolEffect {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            ToolEffect::ReadOnly => "read-only",
            ToolEffect::WritesFiles => "writes-files",
            ToolEffect::RunsCommands => "runs-commands",
            ToolEffect::External => "external",
        })
    }
}

/// What a tool's result text is, which decides what the model gets of it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ResultText {
    /// Output meant for a terminal (commands, servers, messages): the model gets what a
    /// terminal would show, without escape sequences ([`miniagent_text::for_model`]).
    TerminalOutput,
    /// A file's own text: kept as it is, so an edit can quote it back exactly.
    FileContent,
}

/// What a tool returns; an error is a result the model reads, never a crash.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ToolOutput {
    pub content: String,
    pub is_error: bool,
    /// Set by `get_skill`: what the loaded skill pre-approves for the rest of the turn
    /// (its `allowed-tools`).
    pub pre_approves: Option<skills::SkillApprovals>,
    /// Set by a tool whose whole output outgrew what it keeps in memory: the file that
    /// holds all of it, as it was written (`content` holds its first and last part).
    pub saved: Option<spill::SavedOutput>,
    /// Set by a file tool that changed one file: its text before and after, when both
    /// are small enough to carry ([`files::text_change`]).
    pub change: Option<TextChange>,
    /// Set by `update_plan`: the plan as it stands now.
    pub plan: Option<Vec<PlanEntry>>,
}

impl ToolOutput {
    pub fn ok(content: impl Into<String>) -> Self {
        Self {
            content: content.into(),
            is_error: false,
            pre_approves: None,
            saved: None,
            change: None,
            plan: None,
        }
    }

    pub fn error(content: impl Into<String>) -> Self {
        Self {
            content: content.into(),
            is_error: true,
            pre_approves: None,
            saved: None,
            change: None,
            plan: None,
        }
    }

    /// The same output, reporting `change` (the one file the call changed).
    pub fn changing(mut self, change: Option<TextChange>) -> Self {
        self.change = change;
        self
    }

    /// Pre-approves what `approvals` covers for the rest of the turn.
    pub fn pre_approving(mut self, approvals: skills::SkillApprovals) -> Self {
        self.pre_approves = Some(approvals);
        self
    }
}

/// Where a tool's live output is kept besides the screen (the session log is one).
pub trait OutputRecorder: Send + Sync + std::fmt::Debug {
    fn record(&self, event: &Event);
}

/// Where a running tool sends its live output.
#[derive(Clone, Debug)]
pub struct OutputSink {
    call_id: CallId,
    events: Option<UnboundedSender<Event>>,
    /// Replaced by `[redacted]` before output is shown.
    secrets: crate::secrets::Secrets,
    /// Keeps the start and end of the output for the call's `output` record.
    log: Option<Arc<dyn OutputRecorder>>,
}

impl OutputSink {
    pub fn new(call_id: CallId, events: UnboundedSender<Event>) -> Self {
        Self {
            call_id,
            events: Some(events),
            secrets: crate::secrets::Secrets::default(),
            log: None,
        }
    }

    /// The same sink, recording the output in `log` (the session's) too.
    pub fn recording(mut self, log: Arc<dyn OutputRecorder>) -> Self {
        self.log = Some(log);
        self
    }

    /// The same sink, keeping `secrets` off the screen.
    pub fn redacting(mut self, secrets: crate::secrets::Secrets) -> Self {
        self.secrets = secrets;
        self
    }

    /// A sink that drops everything (tests, sub-tasks nobody watches).
    pub fn discard() -> Self {
        Self {
            call_id: String::new(),
            events: None,
            secrets: crate::secrets::Secrets::default(),
            log: None,
        }
    }

    pub fn send(&self, delta: String) {
        if let Some(events) = &self.events {
            let delta = match self.secrets.redact(&delta) {
                std::borrow::Cow::Owned(clean) => clean,
                std::borrow::Cow::Borrowed(_) => delta,
            };
            let event = Event::ToolOutputDelta {
                id: self.call_id.clone(),
                delta,
            };
            if let Some(log) = &self.log {
                log.record(&event);
            }
            // A closed channel means no front end is listening; output still reaches the model.
            let _ = events.send(event);
        }
    }
}

/// What a tool gets besides its arguments.
#[derive(Clone)]
pub struct ToolContext {
    /// Where file tools may work; relative paths resolve against its root.
    pub workspace: Arc<Workspace>,
    /// Cancelled when the person interrupts the turn: stop at once.
    pub cancel: CancellationToken,
    pub output: OutputSink,
    /// The approval mode when the call started: `bash` sandboxes by it.
    pub approval: crate::config::ApprovalMode,
    /// The call runs without a question because a remembered rule or a skill covers it
    /// (not because the mode runs everything): `bash` then turns off the programs git's
    /// configuration names ([`git_guard`]).
    pub unasked: bool,
    /// Starts sub-agents of the loop running this call (`delegate` does); `None` where
    /// no agent loop runs the call, and inside a sub-agent (sub-agents do not nest).
    pub sub_agents: Option<Arc<dyn SubAgents>>,
    /// Where this call may keep an output too long for memory (`bash` does), when the
    /// session has a results folder.
    pub save_to: Option<spill::SaveTarget>,
}

impl std::fmt::Debug for ToolContext {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ToolContext")
            .field("workspace", &self.workspace)
            .field("cancel", &self.cancel)
            .field("output", &self.output)
            .field("approval", &self.approval)
            .field("unasked", &self.unasked)
            .field("sub_agents", &self.sub_agents.is_some())
            .finish()
    }
}

/// Runs sub-agents for one call. The agent loop hands one to each call it runs, so a tool
/// can run that loop again (with its own history, tools and step limit) while the tools
/// never name the agent.
pub trait SubAgents: Send + Sync {
    /// Runs `task` in a sub-agent that may use the `tools` named (`None`: the read-only
    /// ones); its final report, or why there is none, is the result.
    fn run(&self, task: String, tools: Option<Vec<String>>) -> BoxFuture<'_, ToolOutput>;
}

/// A capability the model can call. The built-in tools are [`TypedTool`]s, which are
/// `Tool`s; an MCP tool implements this with JSON arguments its server reads.
///
/// The agent reads each call once, after its arguments passed [`Self::input_schema`]
/// ([`Self::read`]), and asks the approval policy, the person and the tool with that call.
/// The methods that take JSON arguments are that for a tool whose arguments stay JSON, and
/// for callers that hold arguments so.
pub trait Tool: Send + Sync {
    fn name(&self) -> &str;
    fn description(&self) -> &str;
    /// JSON schema of the arguments object.
    fn input_schema(&self) -> Value;
    fn effect(&self) -> ToolEffect;
    /// What kind of call front ends show it as; by default what its effect says.
    fn kind(&self) -> ToolKind {
        self.effect().kind()
    }
    /// The files (absolute, inside the workspace) and lines a call works on, for front
    /// ends that follow the agent; empty when the tool does not say.
    fn locations(&self, arguments: &Value, workspace: &Workspace) -> Vec<Location> {
        let _ = (arguments, workspace);
        Vec::new()
    }
    /// What the person is asked to approve. An error means the call cannot succeed (a
    /// path outside the workspace, an edit that matches nothing): the model gets it as
    /// the result and nobody is asked.
    /// A future, because the edit tools read the file for the diff, maybe through the
    /// editor ([`Workspace::client_files`]).
    fn approval_request<'a>(
        &'a self,
        arguments: &'a Value,
        workspace: &'a Workspace,
    ) -> BoxFuture<'a, Result<ApprovalRequest, InvalidCall>> {
        let _ = workspace;
        let request = ApprovalRequest::Other {
            name: self.name().to_string(),
            preview: pretty_json(arguments),
        };
        Box::pin(async move { Ok(request) })
    }
    /// [`Self::approval_request`] as plain text, for front ends that print it.
    fn preview<'a>(
        &'a self,
        arguments: &'a Value,
        workspace: &'a Workspace,
    ) -> BoxFuture<'a, Result<String, InvalidCall>> {
        Box::pin(async move {
            self.approval_request(arguments, workspace)
                .await
                .map(|request| request_text(&request))
        })
    }
    /// What "approve for this session" remembers for this call; `None` when it cannot be
    /// remembered safely (then the call is approved once).
    fn session_rule(&self, arguments: &Value) -> Option<ApprovalRule> {
        let _ = arguments;
        Some(ApprovalRule::Tool {
            name: self.name().to_string(),
        })
    }
    /// The paths (as the model named them) a call would create, change or delete, for
    /// tools that know them; the approval policy asks each time one is miniagent's own.
    fn changed_paths(&self, arguments: &Value) -> Vec<String> {
        let _ = arguments;
        Vec::new()
    }
    /// What the workspace chose that this call would run (`bash`: programs the
    /// repository's git configuration names), for the question; `None` when nothing.
    /// With `covered` (a remembered rule or a skill covers the call), only what cannot be
    /// turned off, and the call is then asked about; otherwise it is a note in the
    /// question the call gets anyway.
    fn repository_hazard<'a>(
        &'a self,
        arguments: &'a Value,
        workspace: &'a Workspace,
        covered: bool,
    ) -> BoxFuture<'a, Option<String>> {
        let _ = (arguments, workspace, covered);
        Box::pin(async { None })
    }
    /// Whether configuration lets this tool run without asking (MCP servers or tools set
    /// to `approval = "auto"`); the read-only approval mode still refuses it.
    fn auto_approved(&self) -> bool {
        false
    }
    /// What the result text is; most tools print terminal output.
    fn result_text(&self) -> ResultText {
        ResultText::TerminalOutput
    }
    /// Runs the call. Arguments were already validated against [`Self::input_schema`].
    fn run(&self, arguments: Value, context: ToolContext) -> BoxFuture<'_, ToolOutput>;
    /// Reads arguments that passed [`Self::input_schema`] into the call that the approval
    /// policy, the question and the run share. A [`TypedTool`] reads them into its type
    /// (an error says which argument is wrong); by default they stay JSON.
    fn read<'a>(&'a self, arguments: Value) -> Result<Box<dyn ToolCall<'a> + 'a>, InvalidCall> {
        Ok(Box::new(typed::JsonCall {
            tool: self,
            arguments,
        }))
    }
}

/// Arguments as the person reads them: indented JSON.
pub fn pretty_json(arguments: &Value) -> String {
    serde_json::to_string_pretty(arguments).unwrap_or_else(|_| arguments.to_string())
}

/// An approval request as plain text: what `exec`, the log and old front ends show.
pub fn request_text(request: &ApprovalRequest) -> String {
    match request {
        ApprovalRequest::Edit { summary, diff, .. } => format!("{summary}\n{diff}"),
        ApprovalRequest::Command {
            command,
            cwd,
            timeout_s,
            ..
        } => {
            let how = match timeout_s {
                Some(seconds) => format!("timeout {seconds} s"),
                None => "in the background".to_string(),
            };
            format!("$ {command}\n(in {cwd}, {how})")
        }
        ApprovalRequest::McpCall { arguments, .. } => pretty_json(arguments),
        ApprovalRequest::Other { preview, .. } => preview.clone(),
    }
}

/// Control of the MCP servers behind a [`ToolSource`]: what `/mcp` can ask for.
pub trait McpControl: Send + Sync {
    /// The servers still connecting, each with its connect timeout.
    fn connecting(&self) -> Vec<(String, std::time::Duration)>;
    /// Resolves once no server is connecting any more (each is ready, failed or
    /// disabled), or after `limit`.
    fn settled(&self, limit: std::time::Duration) -> BoxFuture<'static, ()>;
    /// Drops a server's connection and connects again.
    fn reconnect(&self, server: String) -> BoxFuture<'static, Result<(), mcp::ReconnectError>>;
    /// Stops every server; no child process is left running.
    fn shutdown(&self) -> BoxFuture<'static, ()>;
}

/// Tools that come and go while the session runs (MCP servers connecting later).
pub trait ToolSource: Send + Sync {
    /// The tools offered now.
    fn tools(&self) -> Vec<Arc<dyn Tool>>;
    /// A tool by its name: one offered now, or one the source keeps out of the requests
    /// but can still run (an MCP server's deferred tools).
    fn find(&self, name: &str) -> Option<Arc<dyn Tool>> {
        self.tools().into_iter().find(|tool| tool.name() == name)
    }
}

/// The tools of a session, in the order the model sees them: the built-in ones, then
/// those of each source as they are now.
#[derive(Clone, Default)]
pub struct ToolRegistry {
    tools: Vec<Arc<dyn Tool>>,
    sources: Vec<Arc<dyn ToolSource>>,
}

impl ToolRegistry {
    /// The built-in tools, configured. Background jobs live as long as the registry.
    /// The built-in tools (`BUILTIN_TOOLS` says them, in this order), with `config`'s
    /// settings.
    pub fn builtin(config: &Config) -> Self {
        let jobs = jobs::BackgroundJobs::default();
        let limit = config.tools.bash.output_limit_bytes;
        let notes = notes::NotesLock::default();
        let mut registry = Self::default();
        registry.register(Arc::new(read::ReadFileTool::new(
            config.tools.read_file.max_tokens,
            config.agent.tokenizer,
        )));
        registry.register(Arc::new(edit::WriteFileTool));
        registry.register(Arc::new(edit::EditFileTool));
        // Every key variable the config names, a profile's too: a switch mid-session
        // reads it, and a command must not.
        let bash = config.profiles.values().fold(
            bash::BashTool::new(config.tools.bash.clone(), jobs.clone()).hiding(&config.model.api_key_env),
            |bash, profile| bash.hiding(&profile.model.api_key_env),
        );
        registry.register(Arc::new(bash));
        let large = config.tools.large_result_bytes;
        registry.register(Arc::new(jobs::BashOutputTool::new(jobs.clone(), limit, large)));
        registry.register(Arc::new(jobs::BashKillTool::new(jobs, limit, large)));
        registry.register(Arc::new(notes::RecordNoteTool::new(notes)));
        registry.register(Arc::new(notes::RecallNotesTool));
        registry.register(Arc::new(delegate::DelegateTool));
        registry.register(Arc::new(plan::UpdatePlanTool));
        registry.register(Arc::new(web_fetch::WebFetchTool::new(
            config.tools.web_fetch.clone(),
        )));
        registry
    }

    /// Adds a tool; a tool of the same name is replaced.
    pub fn register(&mut self, tool: Arc<dyn Tool>) {
        self.tools.retain(|existing| existing.name() != tool.name());
        self.tools.push(tool);
    }

    /// Adds a source whose tools join the registry whenever they are there.
    pub fn add_source(&mut self, source: Arc<dyn ToolSource>) {
        self.sources.push(source);
    }

    /// Every tool available now: built-in first, then the sources'.
    pub fn all(&self) -> Vec<Arc<dyn Tool>> {
        let mut all = self.tools.clone();
        for source in &self.sources {
            for tool in source.tools() {
                if !all.iter().any(|existing| existing.name() == tool.name()) {
                    all.push(tool);
                }
            }
        }
        all
    }

    pub fn get(&self, name: &str) -> Option<Arc<dyn Tool>> {
        if let Some(tool) = self.tools.iter().find(|tool| tool.name() == name) {
            return Some(tool.clone());
        }
        self.sources.iter().find_map(|source| source.find(name))
    }

    pub fn names(&self) -> Vec<String> {
        self.all().iter().map(|tool| tool.name().to_string()).collect()
    }

    pub fn specs(&self) -> Vec<ToolSpec> {
        self.all()
            .iter()
            .map(|tool| ToolSpec {
                name: tool.name().to_string(),
                description: tool.description().to_string(),
                input_schema: tool.input_schema(),
            })
            .collect()
    }

    pub fn infos(&self) -> Vec<ToolInfo> {
        self.all()
            .iter()
            .map(|tool| ToolInfo {
                name: tool.name().to_string(),
                description: tool.description().to_string(),
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `BUILTIN_TOOLS` is the registry's list, name for name, effect for effect, in order:
    /// a tool registered without its row (or a row without its tool) fails here.
    #[test]
    fn the_table_of_built_in_tools_is_the_registry() {
        let config = crate::config::built_in();
        let registered: Vec<(String, ToolEffect)> = ToolRegistry::builtin(&config)
            .all()
            .iter()
            .map(|tool| (tool.name().to_string(), tool.effect()))
            .collect();
        let table: Vec<(String, ToolEffect)> = BUILTIN_TOOLS
            .iter()
            .map(|(name, effect)| ((*name).to_string(), *effect))
            .collect();
        assert_eq!(registered, table);
    }

    /// Each built-in tool says what kind of call it is, and the file tools where they
    /// work: absolute paths inside the workspace, the line read from when one is given;
    /// nothing for a path outside it.
    #[test]
    fn built_in_tools_say_their_kind_and_where_they_work() {
        use miniagent_protocol::{Location, ToolKind};
        use serde_json::json;
        let config = crate::config::built_in();
        let registry = ToolRegistry::builtin(&config);
        let kinds: Vec<(String, ToolKind)> = registry
            .all()
            .iter()
            .map(|tool| (tool.name().to_string(), tool.kind()))
            .collect();
        let expected = [
            ("read_file", ToolKind::Read),
            ("write_file", ToolKind::Edit),
            ("edit_file", ToolKind::Edit),
            ("bash", ToolKind::Execute),
            ("bash_output", ToolKind::Read),
            ("bash_kill", ToolKind::Execute),
            ("record_note", ToolKind::Other),
            ("recall_notes", ToolKind::Read),
            ("delegate", ToolKind::Think),
            ("update_plan", ToolKind::Think),
            ("web_fetch", ToolKind::Fetch),
        ];
        let expected: Vec<(String, ToolKind)> = expected
            .iter()
            .map(|(name, kind)| ((*name).to_string(), *kind))
            .collect();
        assert_eq!(kinds, expected);

        let dir = std::env::temp_dir().join(format!("miniagent-locations-{}", std::process::id()));
        std::fs::create_dir_all(dir.join("src")).unwrap();
        let dir = dir.canonicalize().unwrap();
        std::fs::write(dir.join("src/a.rs"), "fn main() {}\n").unwrap();
        let workspace = Workspace::new(&dir, &[]);
        let at = |name: &str, arguments: serde_json::Value| {
            registry.get(name).unwrap().locations(&arguments, &workspace)
        };
        let a = dir.join("src/a.rs").display().to_string();
        let place = |path: &str, line| Location {
            path: path.to_string(),
            line,
        };
        assert_eq!(
            at("read_file", json!({"path": "src/a.rs", "offset": 3, "limit": 2})),
            vec![place(&a, Some(3))]
        );
        assert_eq!(at("read_file", json!({"path": &a})), vec![place(&a, None)]);
        assert_eq!(
            at(
                "edit_file",
                json!({"path": "src/a.rs", "old_str": "main", "new_str": "run"})
            ),
            vec![place(&a, None)]
        );
        let new = dir.join("src/new/b.rs").display().to_string();
        assert_eq!(
            at("write_file", json!({"path": "src/new/b.rs", "content": ""})),
            vec![place(&new, None)]
        );
        for (name, arguments) in [
            ("read_file", json!({"path": "/etc/passwd"})),
            ("read_file", json!({"path": "../outside.txt"})),
            ("read_file", json!({"path": "src/a.rs", "offset": 1e12})),
            ("write_file", json!({"path": "", "content": ""})),
            ("read_file", json!({"nonsense": true})),
            ("bash", json!({"command": "cat src/a.rs"})),
        ] {
            let found = at(name, arguments.clone());
            let expected = match arguments.get("offset") {
                // A line past what a location holds is left out, the path kept.
                Some(_) => vec![place(&a, None)],
                None => vec![],
            };
            assert_eq!(found, expected, "{name} {arguments}");
        }
        std::fs::remove_dir_all(dir).unwrap();
    }
}
