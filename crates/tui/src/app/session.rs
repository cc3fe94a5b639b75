//! What the session talks to: the model, provider and workspace the agent named, the
//! approval mode and rules, the step limit, MCP servers, skills, and the latest history
//! snapshot. Agent events set it; the title bar, `/stats`, `/mcp`, `/skills` and the
//! history inspector read it.

use std::collections::BTreeMap;

use super::App;
use crate::conversation::NoticeKind;
use miniagent_protocol::{
    ApprovalMode, ApprovalRule, DeferredServer, Event, HistorySnapshot, McpState, SandboxState, SkillInfo,
    ToolInfo,
};

/// What the agent said it talks to, from `session_configured`.
#[derive(Clone, Debug, Default)]
pub struct SessionView {
    pub model: String,
    pub provider: String,
    pub workspace: String,
    pub tools: Vec<ToolInfo>,
    /// The id the session is recorded under.
    pub session_id: Option<String>,
    /// Whether `bash` commands are sandboxed.
    pub sandbox: SandboxState,
    /// Where model requests go (empty when a recording does not say).
    pub endpoint: String,
}

/// The session as the workbench knows it.
#[derive(Clone, Debug)]
pub struct Session {
    view: SessionView,
    approval_mode: ApprovalMode,
    max_steps: u32,
    rules: Vec<ApprovalRule>,
    /// What was refused for the rest of the session, in the order given.
    refused: Vec<ApprovalRule>,
    /// The `[permissions]` rules in force, deny first.
    permanent: Vec<miniagent_protocol::PermanentRule>,
    /// MCP servers and their states, by name.
    mcp: BTreeMap<String, McpState>,
    /// The ready servers whose tools are held back from the model, and what it found.
    mcp_deferred: Vec<DeferredServer>,
    /// The skills the agent can load, and problems finding them.
    skills: Vec<SkillInfo>,
    skill_warnings: Vec<String>,
    /// The latest history snapshot from the agent (for the inspector and `/stats`).
    history: Option<HistorySnapshot>,
    /// The person declined to trust this workspace: its own servers and skills are off.
    workspace_declined: bool,
}

impl Session {
    /// A session on `workspace` before the agent says more.
    pub(crate) fn new(workspace: String, approval_mode: ApprovalMode, max_steps: u32) -> Self {
        Self {
            view: SessionView {
                workspace,
                ..SessionView::default()
            },
            approval_mode,
            max_steps,
            rules: Vec::new(),
            refused: Vec::new(),
            permanent: Vec::new(),
            mcp: BTreeMap::new(),
            mcp_deferred: Vec::new(),
            skills: Vec::new(),
            skill_warnings: Vec::new(),
            history: None,
            workspace_declined: false,
        }
    }

    pub fn view(&self) -> &SessionView {
        &self.view
    }

    pub fn approval_mode(&self) -> ApprovalMode {
        self.approval_mode
    }

    pub fn max_steps(&self) -> u32 {
        self.max_steps
    }

    /// The approvals remembered for this session.
    pub fn rules(&self) -> &[ApprovalRule] {
        &self.rules
    }

    /// What the person refused for the rest of the session.
    pub fn refused(&self) -> &[ApprovalRule] {
        &self.refused
    }

    pub fn mcp(&self) -> &BTreeMap<String, McpState> {
        &self.mcp
    }

    pub fn mcp_deferred(&self) -> &[DeferredServer] {
        &self.mcp_deferred
    }

    pub fn skills(&self) -> &[SkillInfo] {
        &self.skills
    }

    pub fn skill_warnings(&self) -> &[String] {
        &self.skill_warnings
    }

    pub fn history(&self) -> Option<&HistorySnapshot> {
        self.history.as_ref()
    }

    pub fn workspace_declined(&self) -> bool {
        self.workspace_declined
    }

    /// The agent said what it talks to (`Event::SessionConfigured`).
    pub(crate) fn configured(&mut self, event: Event) {
        if let Event::SessionConfigured {
            model,
            provider,
            workspace,
            tools,
            session_id,
            sandbox,
            endpoint,
        } = event
        {
            self.view = SessionView {
                model,
                provider,
                workspace,
                tools,
                session_id,
                sandbox,
                endpoint,
            };
        }
    }

    /// The model (and provider) to show until the agent says which it talks to.
    pub(crate) fn name_model(&mut self, model: String) {
        self.view.model = model;
    }

    pub(crate) fn name_provider(&mut self, provider: String) {
        self.view.provider = provider;
    }

    /// The session goes on under the log `id`.
    pub(crate) fn resumed(&mut self, id: String) {
        self.view.session_id = Some(id);
    }

    pub(crate) fn set_approval_mode(&mut self, mode: ApprovalMode) {
        self.approval_mode = mode;
    }

    pub(crate) fn set_max_steps(&mut self, max_steps: u32) {
        self.max_steps = max_steps;
    }

    pub(crate) fn set_permanent_rules(&mut self, rules: Vec<miniagent_protocol::PermanentRule>) {
        self.permanent = rules;
    }

    /// The `[permissions]` rules in force (the user's config, the trusted workspace's).
    pub fn permanent_rules(&self) -> &[miniagent_protocol::PermanentRule] {
        &self.permanent
    }

    pub(crate) fn set_rules(&mut self, rules: Vec<ApprovalRule>, refused: Vec<ApprovalRule>) {
        self.rules = rules;
        self.refused = refused;
    }

    pub(crate) fn mcp_status(&mut self, server: String, state: McpState) {
        self.mcp.insert(server, state);
    }

    pub(crate) fn mcp_tools_deferred(&mut self, servers: Vec<DeferredServer>) {
        self.mcp_deferred = servers;
    }

    pub(crate) fn skills_loaded(&mut self, skills: Vec<SkillInfo>, warnings: Vec<String>) {
        self.skills = skills;
        self.skill_warnings = warnings;
    }

    pub(crate) fn history_snapshot(&mut self, snapshot: HistorySnapshot) {
        self.history = Some(snapshot);
    }

    /// The agent forgot the history and its compactions; so does the inspector.
    pub(crate) fn history_cleared(&mut self) {
        self.history = None;
    }

    /// The person declined to trust the workspace.
    pub(crate) fn decline_workspace(&mut self) {
        self.workspace_declined = true;
    }

    /// A fresh session view: what was remembered and inspected of the last one goes.
    pub(crate) fn start_over(&mut self) {
        self.rules.clear();
        self.refused.clear();
        self.history = None;
    }

    /// A replay opens: the recording's session, as it started, with none of this
    /// process's servers or skills.
    pub(crate) fn recorded(&mut self, view: SessionView, max_steps: u32) {
        self.mcp.clear();
        self.skills.clear();
        self.skill_warnings.clear();
        self.approval_mode = ApprovalMode::Ask;
        self.max_steps = max_steps;
        self.view = view;
    }
}

/// The agent's events about the session that show in the conversation too.
impl App {
    pub(crate) fn on_session_resumed(&mut self, id: String, messages: u64, turns: u32) {
        // What the log left open was closed just before: the resumed session waits,
        // idle, for the person.
        self.settle();
        self.session.resumed(id.clone());
        self.notice(
            NoticeKind::Info,
            format!("resumed session {id}: {turns} turn(s), {messages} messages of history"),
        );
    }

    pub(crate) fn on_approval_mode_changed(&mut self, mode: ApprovalMode) {
        self.session.set_approval_mode(mode);
        self.notice(NoticeKind::Info, format!("approval mode: {mode}"));
    }

    pub(crate) fn on_mcp_server_status(&mut self, server: String, state: McpState) {
        match &state {
            McpState::Failed { reason } => {
                self.notice(
                    NoticeKind::Warning,
                    format!("MCP server `{server}` failed: {reason}"),
                );
            }
            McpState::Ready { tools } => {
                self.notice(
                    NoticeKind::Info,
                    format!("MCP server `{server}` ready with {} tools", tools.len()),
                );
            }
            McpState::Connecting | McpState::Disabled => {}
        }
        self.session.mcp_status(server, state);
    }

    /// A history snapshot: for the inspector open now, and kept for the next one and
    /// `/stats`.
    pub(crate) fn on_history_snapshot(&mut self, snapshot: HistorySnapshot) {
        let event = Event::HistorySnapshot { snapshot };
        self.layers_take(&event);
        if let Event::HistorySnapshot { snapshot } = event {
            self.session.history_snapshot(snapshot);
        }
    }
}
