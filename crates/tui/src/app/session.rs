//! What the session talks to: the model, provider and workspace the agent named, the
//! approval mode and rules, the step limit, MCP servers, skills, and the latest history
//! snapshot. Agent events set it; the title bar, `/stats`, `/mcp`, `/skills` and the
//! history inspector read it.

use std::collections::BTreeMap;

use super::App;
use crate::conversation::NoticeKind;
use miniagent_protocol::{
    ApprovalMode, ApprovalRule, CommandInfo, DeferredServer, Event, HistorySnapshot, HookInfo,
    InstructionFileInfo, McpState, ModelChoice, Op, SandboxState, SkillInfo, ToolInfo,
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
    /// The instruction files in the system prompt.
    pub instruction_files: Vec<InstructionFileInfo>,
}

/// The session as the workbench knows it.
#[derive(Clone, Debug)]
pub struct Session {
    view: SessionView,
    approval_mode: ApprovalMode,
    /// The mode last asked for (Shift-Tab, `/approval`) and how many asks the agent has
    /// not answered yet: a burst of presses steps on from the last one asked for, not
    /// from the mode the agent has not left yet.
    asked_mode: Option<ApprovalMode>,
    unanswered: u32,
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
    /// The hooks the session runs on its events (`/hooks`).
    hooks: Vec<HookInfo>,
    /// The prompt commands the agent offers (`/init`, the `commands/` files).
    prompt_commands: Vec<CommandInfo>,
    /// The latest history snapshot from the agent (for the inspector and `/stats`).
    history: Option<HistorySnapshot>,
    /// The person declined to trust this workspace: its own servers and skills are off.
    workspace_declined: bool,
    /// What `/model` offers, as the agent last listed it.
    model_choices: Vec<ModelChoice>,
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
            asked_mode: None,
            unanswered: 0,
            max_steps,
            rules: Vec::new(),
            refused: Vec::new(),
            permanent: Vec::new(),
            mcp: BTreeMap::new(),
            mcp_deferred: Vec::new(),
            skills: Vec::new(),
            skill_warnings: Vec::new(),
            hooks: Vec::new(),
            prompt_commands: Vec::new(),
            history: None,
            workspace_declined: false,
            model_choices: Vec::new(),
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

    pub fn hooks(&self) -> &[HookInfo] {
        &self.hooks
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
            instruction_files,
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
                instruction_files,
            };
        }
    }

    pub fn prompt_commands(&self) -> &[CommandInfo] {
        &self.prompt_commands
    }

    /// Whether the agent offers the prompt command `name` (without its slash).
    pub fn has_prompt_command(&self, name: &str) -> bool {
        self.prompt_commands.iter().any(|command| command.name == name)
    }

    pub(crate) fn set_prompt_commands(&mut self, commands: Vec<CommandInfo>) {
        self.prompt_commands = commands;
    }

    /// `/model` switched the session: the title bar and `/stats` name the new one.
    pub(crate) fn model_changed(&mut self, model: String, provider: String, endpoint: String) {
        self.view.model = model;
        self.view.provider = provider;
        self.view.endpoint = endpoint;
    }

    pub(crate) fn set_model_choices(&mut self, choices: Vec<ModelChoice>) {
        self.model_choices = choices;
    }

    /// What `/model` offers.
    pub(crate) fn model_choices(&self) -> &[ModelChoice] {
        &self.model_choices
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
        self.unanswered = self.unanswered.saturating_sub(1);
        if self.unanswered == 0 {
            self.asked_mode = None;
        }
    }

    /// `mode` was asked of the agent; its answer is on the way.
    pub(crate) fn ask_mode(&mut self, mode: ApprovalMode) {
        self.asked_mode = Some(mode);
        self.unanswered = self.unanswered.saturating_add(1);
    }

    /// Shift-Tab: the mode after the one in force (or last asked for), which it asks for.
    pub(crate) fn ask_next_mode(&mut self) -> ApprovalMode {
        let next = next_approval_mode(self.asked_mode.unwrap_or(self.approval_mode));
        self.ask_mode(next);
        next
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

    pub(crate) fn hooks_loaded(&mut self, hooks: Vec<HookInfo>) {
        self.hooks = hooks;
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
        self.hooks.clear();
        self.approval_mode = ApprovalMode::Ask;
        self.max_steps = max_steps;
        self.view = view;
    }
}

/// The mode Shift-Tab steps to from `mode`: ask → auto-edit → read-only → ask, the way
/// Claude Code cycles default → accept edits → plan. Full-auto is never in the cycle (it
/// steps back to ask): with `tools.bash.sandbox = "off"` it runs every command unasked and
/// unconfined, and one key pressed a time too many must not get there; `/approval
/// full-auto` or `--approval full-auto` say it on purpose.
pub(crate) fn next_approval_mode(mode: ApprovalMode) -> ApprovalMode {
    match mode {
        ApprovalMode::Ask => ApprovalMode::AutoEdit,
        ApprovalMode::AutoEdit => ApprovalMode::ReadOnly,
        ApprovalMode::ReadOnly | ApprovalMode::FullAuto => ApprovalMode::Ask,
    }
}

/// The agent's events about the session that show in the conversation too.
impl App {
    /// Shift-Tab: asks the agent for the next approval mode; the title bar shows it once
    /// the agent has taken it (`ApprovalModeChanged`). Always a frame.
    pub(crate) fn cycle_approval_mode(&mut self) -> bool {
        if self.welcome.is_some() {
            // No agent to ask: `send` says why.
            self.send(Op::SetApprovalMode {
                mode: next_approval_mode(self.session.approval_mode()),
            });
            return true;
        }
        let mode = self.session.ask_next_mode();
        self.send(Op::SetApprovalMode { mode });
        true
    }

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

    /// The agent said what it talks to; the instruction files that steer it are said in
    /// the conversation's first lines, so the person sees them before anything runs.
    pub(crate) fn on_session_configured(&mut self, event: Event) {
        if let Event::SessionConfigured {
            instruction_files, ..
        } = &event
        {
            let line = miniagent_protocol::instruction_files_line(instruction_files);
            if !line.is_empty() {
                self.notice(NoticeKind::Info, line);
            }
        }
        self.session.configured(event);
    }

    /// The prompt commands the agent offers: completed and listed in the help; a file
    /// left out says why.
    pub(crate) fn on_commands_loaded(&mut self, commands: Vec<CommandInfo>, warnings: Vec<String>) {
        for warning in warnings {
            self.notice(NoticeKind::Warning, format!("commands: {warning}"));
        }
        self.input.set_prompt_commands(
            commands
                .iter()
                .map(|command| crate::keys::CommandHint {
                    name: format!("/{}", miniagent_text::clean(&command.name)).into(),
                    args: miniagent_text::clean(command.argument_hint.as_deref().unwrap_or_default())
                        .into_owned()
                        .into(),
                    help: miniagent_text::clean(&command.description).into_owned().into(),
                })
                .collect(),
        );
        self.session.set_prompt_commands(commands);
    }

    /// `/model` switched the model: the title, the window the gauge measures against,
    /// and a line saying so.
    pub(crate) fn on_model_changed(
        &mut self,
        model: String,
        provider: String,
        endpoint: String,
        window: u64,
    ) {
        let line = format!("model: {model} ({provider}), a window of {window} tokens");
        self.session.model_changed(model, provider, endpoint);
        let token_limit = self.figures.tokens().token_limit;
        self.figures.set_budget(token_limit, window);
        self.on_notice(line);
    }

    /// `/model` was refused: the session stays on its model.
    pub(crate) fn on_model_change_refused(&mut self, message: String) {
        self.turn.agent_noticed();
        self.notice(NoticeKind::Warning, message);
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
