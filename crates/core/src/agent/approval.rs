//! Which tool calls run, which ask a person, and which are refused; and the pending
//! approvals awaiting an answer. A skill in use pre-approves its `allowed-tools` for the
//! rest of the turn, within the mode's hard limits: never in read-only, never for
//! miniagent's own settings, and only for what stays confined (file tools, which never
//! leave the workspace, and `bash` where the sandbox holds it; never MCP tools).

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use tokio::sync::oneshot;

use crate::config::ApprovalMode;
use crate::tools::git_guard;
use crate::tools::paths::{Access, Workspace};
use crate::tools::permission_rule::PermissionRules;
use crate::tools::skills::SkillApprovals;
use crate::tools::{Tool, ToolCall, ToolEffect};
use miniagent_protocol::{ApprovalRule, CallId, Decision, Event, PermanentRule, RuleList};

/// `path` with its longest existing part resolved (the rest appended as named), so a
/// folder that does not exist yet still compares with resolved paths.
fn real_path(path: &Path) -> PathBuf {
    let mut missing = Vec::new();
    let mut existing = path;
    loop {
        if let Ok(real) = existing.canonicalize() {
            return missing
                .iter()
                .rev()
                .fold(real, |acc: PathBuf, part| acc.join(part));
        }
        match (existing.parent(), existing.file_name()) {
            (Some(parent), Some(name)) => {
                missing.push(name.to_os_string());
                existing = parent;
            }
            _ => return path.to_path_buf(),
        }
    }
}

/// What the policy says about one call.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Verdict {
    Run,
    Ask,
    /// Ask whatever the mode and the remembered rules say, and approve this call only:
    /// the note tells the person why.
    AskEachTime(String),
    /// Ask whatever the remembered rules and skills say, approve this call only, and tell
    /// the person why (a write into a repository's `.git/`, a command whose repository
    /// configuration names programs); unlike [`Verdict::AskEachTime`] it lets the call
    /// into none of miniagent's own folders.
    AskOnce(String),
    Refuse(String),
}

/// The workspace folder holding what trusting a workspace unlocks (its MCP servers and
/// skills): file tools never change it unasked, in any mode.
pub const WORKSPACE_SETTINGS_DIR: &str = ".miniagent";

/// The approval mode plus what a person allowed for the rest of the session.
#[derive(Clone, Debug)]
pub struct ApprovalPolicy {
    mode: ApprovalMode,
    /// In the order they were given, for listing.
    rules: Vec<ApprovalRule>,
    /// What the person refused for the rest of the session ([`Decision::DenyForSession`]),
    /// in the order given: calls they cover are refused without asking, in every mode.
    /// A rule is in one of the two lists at most.
    refused: Vec<ApprovalRule>,
    /// Folders (real paths) whose files are changed only with the person's approval each
    /// time: miniagent's own configuration and data. The workspace's `.miniagent/` is
    /// always one of them.
    protected: Vec<PathBuf>,
    /// What the skills loaded in the current turn pre-approve.
    skills: Vec<SkillApprovals>,
    /// Whether commands run confined (the Landlock sandbox holds them in every mode but
    /// full-auto); only then may a skill pre-approve them.
    commands_confined: bool,
    /// The `[permissions]` rules: deny refuses in every mode, ask asks in every mode but
    /// read-only, allow runs in the modes that ask (within the protected folders' and git
    /// folders' questions).
    permissions: PermissionRules,
}

impl ApprovalPolicy {
    pub fn new(mode: ApprovalMode) -> Self {
        Self {
            mode,
            rules: Vec::new(),
            refused: Vec::new(),
            protected: Vec::new(),
            skills: Vec::new(),
            commands_confined: false,
            permissions: PermissionRules::default(),
        }
    }

    /// The same policy, with these `[permissions]` rules.
    pub fn with_permissions(mut self, permissions: PermissionRules) -> Self {
        self.permissions = permissions;
        self
    }

    pub fn permissions(&self) -> &PermissionRules {
        &self.permissions
    }

    pub fn permissions_mut(&mut self) -> &mut PermissionRules {
        &mut self.permissions
    }

    /// The `[permissions]` rules as front ends get them.
    pub fn permissions_event(&self) -> Event {
        Event::PermissionRulesChanged {
            rules: self.permissions.listed(),
        }
    }

    /// The same policy, saying whether commands run in the sandbox outside full-auto.
    pub fn confining_commands(mut self, confined: bool) -> Self {
        self.commands_confined = confined;
        self
    }

    /// A skill was loaded: what it pre-approves runs without asking until
    /// [`Self::end_skills`].
    pub fn pre_approve(&mut self, approvals: SkillApprovals) {
        self.skills.retain(|loaded| loaded.skill != approvals.skill);
        self.skills.push(approvals);
    }

    /// The turn ended: skills pre-approve nothing any more.
    pub fn end_skills(&mut self) {
        self.skills.clear();
    }

    /// The same policy, also asking each time before a file tool changes anything under
    /// `folders` (miniagent's config and data folders).
    pub fn protecting(mut self, folders: &[PathBuf]) -> Self {
        self.protected = folders.iter().map(|folder| real_path(folder)).collect();
        self
    }

    pub fn mode(&self) -> ApprovalMode {
        self.mode
    }

    pub fn set_mode(&mut self, mode: ApprovalMode) {
        self.mode = mode;
    }

    /// Whether `call` (of `tool`) runs, asks, or is refused; `workspace` resolves the
    /// paths it would change.
    pub fn check(&self, tool: &dyn Tool, call: &dyn ToolCall<'_>, workspace: &Workspace) -> Verdict {
        let effect = tool.effect();
        let rule = self.permissions.decide(tool.name(), call, workspace);
        if let Some(rule) = rule.filter(|rule| rule.list == RuleList::Deny) {
            return Verdict::Refuse(format!(
                "{rule} refuses this call, in every approval mode; do not try it again or another way round, ask the person if it is needed"
            ));
        }
        let asks_by_rule = rule.filter(|rule| rule.list == RuleList::Ask).map(ask_note);
        if effect == ToolEffect::ReadOnly {
            return asks_by_rule.map_or(Verdict::Run, Verdict::AskOnce);
        }
        if let Some(rule) = call.session_rule().filter(|rule| self.refused.contains(rule)) {
            return Verdict::Refuse(format!(
                "the person refused {rule} for the rest of this session, so this call was not run and they were not asked; do not try it again, ask them if it is needed"
            ));
        }
        if self.mode != ApprovalMode::ReadOnly
            && let Some(path) = self.protected_path(call, workspace)
        {
            return Verdict::AskEachTime(format!(
                "`{}` would change {}, which holds miniagent's own settings (servers that run outside the sandbox, skills, trust, sessions); it needs your approval each time, whatever the approval mode.",
                tool.name(),
                path.display()
            ));
        }
        let asks = matches!(self.mode, ApprovalMode::Ask | ApprovalMode::AutoEdit);
        if asks && let Some(path) = self.git_folder_path(call, workspace) {
            return Verdict::AskOnce(format!(
                "`{}` would change {}, in a git repository's own folder: git runs the programs named there (hooks, core.fsmonitor, diff and filter drivers, aliases) at later git commands; it needs your approval each time.",
                tool.name(),
                path.display()
            ));
        }
        if self.mode != ApprovalMode::ReadOnly
            && let Some(note) = asks_by_rule
        {
            return Verdict::AskOnce(note);
        }
        match self.mode {
            ApprovalMode::ReadOnly => Verdict::Refuse(format!(
                "the approval mode is read-only, which allows only tools that change nothing; `{}` {}",
                tool.name(),
                match effect {
                    ToolEffect::WritesFiles => "writes files",
                    ToolEffect::RunsCommands => "runs commands",
                    ToolEffect::External | ToolEffect::ReadOnly => "acts outside miniagent",
                }
            )),
            ApprovalMode::FullAuto => Verdict::Run,
            ApprovalMode::Ask | ApprovalMode::AutoEdit if tool.auto_approved() => Verdict::Run,
            ApprovalMode::AutoEdit if effect == ToolEffect::WritesFiles => Verdict::Run,
            ApprovalMode::Ask | ApprovalMode::AutoEdit => {
                let remembered = call.session_rule().is_some_and(|rule| self.rules.contains(&rule));
                let allowed = rule.is_some_and(|rule| rule.list == RuleList::Allow);
                let covered = remembered || allowed || self.skill_approves(tool, call, workspace);
                let command = call.command().unwrap_or("");
                if covered && git_guard::names_git_folder(command) {
                    Verdict::AskOnce(format!(
                        "`{command}` names a git repository's own folder, where hooks and configuration name programs git runs; a rule or a skill covers the command, but not that folder, so it needs your approval each time."
                    ))
                } else if covered {
                    Verdict::Run
                } else {
                    Verdict::Ask
                }
            }
        }
    }

    /// Whether a skill in use pre-approves this call, and the call stays confined.
    fn skill_approves(&self, tool: &dyn Tool, call: &dyn ToolCall<'_>, workspace: &Workspace) -> bool {
        let confined = match tool.effect() {
            // File tools never leave the workspace.
            ToolEffect::WritesFiles => true,
            ToolEffect::RunsCommands => self.commands_confined,
            ToolEffect::External | ToolEffect::ReadOnly => false,
        };
        if !confined || self.skills.is_empty() {
            return false;
        }
        // The sandbox lets commands write anywhere in the workspace, its `.miniagent/`
        // included; a command that names it is asked about. (One that hides the name
        // still changes the trusted files' fingerprint, and trust is asked for again.)
        let command = call.command();
        if command.is_some_and(|command| command.contains(WORKSPACE_SETTINGS_DIR)) {
            return false;
        }
        let paths = call.changed_paths();
        self.skills
            .iter()
            .any(|skill| skill.covers(tool.name(), command, &paths, workspace))
    }

    /// The first path `call` would change that lies in a protected folder.
    fn protected_path(&self, call: &dyn ToolCall<'_>, workspace: &Workspace) -> Option<PathBuf> {
        let settings = workspace.root().join(WORKSPACE_SETTINGS_DIR);
        call.changed_paths().into_iter().find_map(|path| {
            let real = workspace.resolve(&path, Access::Write).ok()?;
            let protected =
                real.starts_with(&settings) || self.protected.iter().any(|folder| real.starts_with(folder));
            protected.then_some(real)
        })
    }

    /// The first path `call` would change that lies in a repository's own folder: a
    /// `.git`, or a folder that is (or with this write becomes) a bare repository.
    fn git_folder_path(&self, call: &dyn ToolCall<'_>, workspace: &Workspace) -> Option<PathBuf> {
        call.changed_paths().into_iter().find_map(|path| {
            let real = workspace.resolve(&path, Access::Write).ok()?;
            let root = workspace.root();
            (git_guard::in_git_folder(&real, root) || git_guard::in_git_directory(&real, root))
                .then_some(real)
        })
    }

    /// Remembers a rule (no longer refused, if it was); false when it was already there.
    pub fn remember(&mut self, rule: ApprovalRule) -> bool {
        if self.rules.contains(&rule) {
            return false;
        }
        self.refused.retain(|kept| *kept != rule);
        self.rules.push(rule);
        true
    }

    /// Refuses what a rule covers for the rest of the session (no longer approved, if it
    /// was); false when it was already refused.
    pub fn refuse(&mut self, rule: ApprovalRule) -> bool {
        if self.refused.contains(&rule) {
            return false;
        }
        self.rules.retain(|kept| *kept != rule);
        self.refused.push(rule);
        true
    }

    /// Forgets a rule, approved or refused; false when there was no such rule.
    pub fn revoke(&mut self, rule: &ApprovalRule) -> bool {
        let before = self.rules.len() + self.refused.len();
        self.rules.retain(|kept| kept != rule);
        self.refused.retain(|kept| kept != rule);
        self.rules.len() + self.refused.len() != before
    }

    pub fn rules(&self) -> &[ApprovalRule] {
        &self.rules
    }

    pub fn refused(&self) -> &[ApprovalRule] {
        &self.refused
    }

    /// Both lists as front ends get them.
    pub fn rules_event(&self) -> Event {
        Event::ApprovalRulesChanged {
            rules: self.rules.clone(),
            refused: self.refused.clone(),
        }
    }
}

/// Why a call an ask rule covers is asked about.
fn ask_note(rule: &PermanentRule) -> String {
    format!("{rule} asks about this call each time, whatever the approval mode.")
}

/// The policy, shared by the running turn (which consults it) and the op router (which
/// revokes rules while a turn runs).
#[derive(Clone, Debug)]
pub struct SharedPolicy(Arc<Mutex<ApprovalPolicy>>);

impl SharedPolicy {
    pub fn new(policy: ApprovalPolicy) -> Self {
        Self(Arc::new(Mutex::new(policy)))
    }

    /// Runs `f` with the policy locked (never across an await).
    pub fn with<T>(&self, f: impl FnOnce(&mut ApprovalPolicy) -> T) -> T {
        // Every change is one push or retain: a panic cannot leave it half-done.
        let mut policy = self.0.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        f(&mut policy)
    }
}

/// Approvals awaiting a decision, keyed by call id. Shared between the turn (which waits)
/// and the op router (which answers).
#[derive(Clone, Debug, Default)]
pub struct PendingApprovals {
    waiting: Arc<Mutex<HashMap<CallId, oneshot::Sender<Decision>>>>,
}

impl PendingApprovals {
    /// Registers a call and returns where its decision will arrive.
    pub fn register(&self, id: &str) -> oneshot::Receiver<Decision> {
        let (sender, receiver) = oneshot::channel();
        self.lock().insert(id.to_string(), sender);
        receiver
    }

    /// Delivers a decision; false when no call with that id is waiting.
    pub fn resolve(&self, id: &str, decision: Decision) -> bool {
        match self.lock().remove(id) {
            Some(sender) => sender.send(decision).is_ok(),
            None => false,
        }
    }

    /// Forgets a call (answered, or its turn ended).
    pub fn remove(&self, id: &str) {
        self.lock().remove(id);
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<CallId, oneshot::Sender<Decision>>> {
        // A panic while holding this lock cannot leave the map half-updated (every
        // operation is a single insert or remove), so a poisoned lock is still usable.
        self.waiting
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }
}

#[cfg(test)]
mod tests;
