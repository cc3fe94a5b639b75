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
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;
    use serde_json::Value;

    /// The verdict on `tool` called with `arguments`, read as the agent reads them.
    trait CheckJson {
        fn check_json(&self, tool: &dyn Tool, arguments: &Value, workspace: &Workspace) -> Verdict;
    }

    impl CheckJson for ApprovalPolicy {
        fn check_json(&self, tool: &dyn Tool, arguments: &Value, workspace: &Workspace) -> Verdict {
            let call = tool.read(arguments.clone()).unwrap();
            self.check(tool, call.as_ref(), workspace)
        }
    }

    /// A tool of each effect for the tests of the modes, which look at nothing else: it
    /// changes no path and makes no rule. Calls that change files or run commands are
    /// checked with the real tools ([`real`]), so what they change cannot drift.
    struct FakeTool {
        name: &'static str,
        effect: ToolEffect,
    }

    fn fake(effect: ToolEffect) -> FakeTool {
        FakeTool { name: "fake", effect }
    }

    /// A built-in tool, as the agent registers it.
    fn real(name: &str) -> std::sync::Arc<dyn Tool> {
        let config = crate::config::built_in();
        crate::tools::ToolRegistry::builtin(&config).get(name).unwrap()
    }

    impl Tool for FakeTool {
        fn name(&self) -> &str {
            self.name
        }
        fn description(&self) -> &str {
            "a tool for policy tests"
        }
        fn input_schema(&self) -> Value {
            serde_json::json!({"type": "object"})
        }
        fn effect(&self) -> ToolEffect {
            self.effect
        }
        fn run(
            &self,
            _: Value,
            _: crate::tools::ToolContext,
        ) -> futures_util::future::BoxFuture<'_, crate::tools::ToolOutput> {
            Box::pin(async { crate::tools::ToolOutput::ok("") })
        }
    }

    #[test]
    fn miniagents_own_settings_are_asked_about_each_time_in_every_mode() {
        let scratch = std::env::temp_dir().join(format!("miniagent-protected-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&scratch);
        std::fs::create_dir_all(scratch.join("ws/home/.config")).unwrap();
        let root = scratch.join("ws").canonicalize().unwrap();
        std::os::unix::fs::symlink(".miniagent", root.join("settings")).unwrap();
        let workspace = Workspace::new(&root, &[]);
        let config = root.join("home/.config/miniagent");
        let writer = real("write_file");
        let args = |path: &str| serde_json::json!({"path": path, "content": "x"});
        for mode in [ApprovalMode::Ask, ApprovalMode::AutoEdit, ApprovalMode::FullAuto] {
            let mut policy = ApprovalPolicy::new(mode).protecting(std::slice::from_ref(&config));
            // Approving the tool for the session does not cover them either.
            policy.remember(ApprovalRule::Tool {
                name: "write_file".into(),
            });
            for path in [
                ".miniagent/mcp.json",
                "./src/../.miniagent/skills/x/SKILL.md",
                "settings/mcp.json",
                "home/.config/miniagent/trusted-workspaces.json",
            ] {
                assert!(
                    matches!(
                        policy.check_json(&*writer, &args(path), &workspace),
                        Verdict::AskEachTime(_)
                    ),
                    "{mode} {path}"
                );
            }
            // Elsewhere the mode (or in ask mode, the remembered rule) lets it run.
            assert_eq!(
                policy.check_json(&*writer, &args("src/main.rs"), &workspace),
                Verdict::Run
            );
            assert_eq!(
                policy.check_json(&*writer, &args(".miniagentx/a"), &workspace),
                Verdict::Run
            );
        }
        let Verdict::AskEachTime(note) = ApprovalPolicy::new(ApprovalMode::FullAuto).check_json(
            &*writer,
            &args(".miniagent/mcp.json"),
            &workspace,
        ) else {
            panic!("full-auto must ask");
        };
        assert_eq!(
            note,
            format!(
                "`write_file` would change {}, which holds miniagent's own settings (servers that run outside the sandbox, skills, trust, sessions); it needs your approval each time, whatever the approval mode.",
                root.join(".miniagent/mcp.json").display()
            )
        );
        // Read-only refuses it as it refuses every change.
        assert!(matches!(
            ApprovalPolicy::new(ApprovalMode::ReadOnly).check_json(
                &*writer,
                &args(".miniagent/mcp.json"),
                &workspace
            ),
            Verdict::Refuse(_)
        ));
        std::fs::remove_dir_all(scratch).unwrap();
    }

    #[test]
    fn modes_decide_by_effect() {
        let cases = [
            (ApprovalMode::ReadOnly, ToolEffect::ReadOnly, Verdict::Run),
            (ApprovalMode::Ask, ToolEffect::ReadOnly, Verdict::Run),
            (ApprovalMode::Ask, ToolEffect::WritesFiles, Verdict::Ask),
            (ApprovalMode::Ask, ToolEffect::RunsCommands, Verdict::Ask),
            (ApprovalMode::AutoEdit, ToolEffect::WritesFiles, Verdict::Run),
            (ApprovalMode::AutoEdit, ToolEffect::RunsCommands, Verdict::Ask),
            (ApprovalMode::AutoEdit, ToolEffect::External, Verdict::Ask),
            (ApprovalMode::FullAuto, ToolEffect::External, Verdict::Run),
        ];
        let args = serde_json::json!({});
        let workspace = Workspace::new(Path::new("/nonexistent-ws"), &[]);
        for (mode, effect, expected) in cases {
            assert_eq!(
                ApprovalPolicy::new(mode).check_json(&fake(effect), &args, &workspace),
                expected,
                "{mode} {effect}"
            );
        }
        assert_eq!(
            ApprovalPolicy::new(ApprovalMode::ReadOnly).check_json(
                &fake(ToolEffect::WritesFiles),
                &args,
                &workspace
            ),
            Verdict::Refuse(
                "the approval mode is read-only, which allows only tools that change nothing; `fake` writes files".into()
            )
        );
    }

    #[test]
    fn remembered_rules_apply_until_revoked() {
        let tool = fake(ToolEffect::RunsCommands);
        let args = serde_json::json!({});
        let rule = ApprovalRule::Tool { name: "fake".into() };
        let workspace = Workspace::new(Path::new("/nonexistent-ws"), &[]);
        let mut policy = ApprovalPolicy::new(ApprovalMode::Ask);
        assert!(policy.remember(rule.clone()));
        assert!(!policy.remember(rule.clone()));
        assert_eq!(policy.check_json(&tool, &args, &workspace), Verdict::Run);
        assert!(policy.revoke(&rule));
        assert_eq!(policy.check_json(&tool, &args, &workspace), Verdict::Ask);
        assert!(!policy.revoke(&rule));
    }

    /// A refusal for the session refuses what its rule covers in every mode, full-auto
    /// too, and never a read; a rule is approved or refused, never both; revoking forgets
    /// either.
    #[test]
    fn refused_rules_refuse_in_every_mode_until_revoked() {
        let tool = fake(ToolEffect::RunsCommands);
        let args = serde_json::json!({});
        let rule = ApprovalRule::Tool { name: "fake".into() };
        let workspace = Workspace::new(Path::new("/nonexistent-ws"), &[]);
        let refusal = Verdict::Refuse(
            "the person refused tool `fake` for the rest of this session, so this call was not run and they were not asked; do not try it again, ask them if it is needed".into(),
        );
        let mut policy = ApprovalPolicy::new(ApprovalMode::Ask);
        assert!(policy.remember(rule.clone()));
        assert!(policy.refuse(rule.clone()));
        assert!(!policy.refuse(rule.clone()));
        assert_eq!((policy.rules(), policy.refused()), (&[][..], &[rule.clone()][..]));
        for mode in [ApprovalMode::Ask, ApprovalMode::AutoEdit, ApprovalMode::FullAuto] {
            policy.set_mode(mode);
            assert_eq!(policy.check_json(&tool, &args, &workspace), refusal, "{mode:?}");
        }
        let read = fake(ToolEffect::ReadOnly);
        assert_eq!(policy.check_json(&read, &args, &workspace), Verdict::Run);
        assert_eq!(
            policy.rules_event(),
            miniagent_protocol::Event::ApprovalRulesChanged {
                rules: vec![],
                refused: vec![rule.clone()]
            }
        );
        // Approving it again takes it off the refused list.
        policy.set_mode(ApprovalMode::Ask);
        assert!(policy.remember(rule.clone()));
        assert_eq!((policy.rules(), policy.refused()), (&[rule.clone()][..], &[][..]));
        assert_eq!(policy.check_json(&tool, &args, &workspace), Verdict::Run);
        assert!(policy.refuse(rule.clone()));
        assert!(policy.revoke(&rule));
        assert_eq!((policy.rules(), policy.refused()), (&[][..], &[][..]));
        assert_eq!(policy.check_json(&tool, &args, &workspace), Verdict::Ask);
        assert!(!policy.revoke(&rule));
    }

    fn skill(entries: &[&str]) -> SkillApprovals {
        SkillApprovals::from_entries(
            "demo",
            &entries.iter().map(|entry| entry.to_string()).collect::<Vec<_>>(),
        )
    }

    #[test]
    fn a_skill_pre_approves_within_the_modes_hard_limits() {
        let scratch = std::env::temp_dir().join(format!("miniagent-skill-policy-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&scratch);
        std::fs::create_dir_all(&scratch).unwrap();
        let root = scratch.canonicalize().unwrap();
        let workspace = Workspace::new(&root, &[]);
        let (bash, writer) = (real("bash"), real("write_file"));
        let write = |path: &str| serde_json::json!({"path": path, "content": "x"});
        let command = |command: &str| serde_json::json!({"command": command});
        for mode in [ApprovalMode::Ask, ApprovalMode::AutoEdit] {
            let mut policy = ApprovalPolicy::new(mode).confining_commands(true);
            assert_eq!(
                policy.check_json(&*bash, &command("git status"), &workspace),
                Verdict::Ask
            );
            policy.pre_approve(skill(&["Write", "Bash(git status:*)"]));
            assert_eq!(
                policy.check_json(&*writer, &write("notes.md"), &workspace),
                Verdict::Run
            );
            assert_eq!(
                policy.check_json(&*bash, &command("git status"), &workspace),
                Verdict::Run
            );
            // Only what the skill names.
            assert_eq!(
                policy.check_json(&*bash, &command("git push"), &workspace),
                Verdict::Ask
            );
            assert_eq!(
                policy.check_json(&*bash, &command("git status; rm -rf ~"), &workspace),
                Verdict::Ask
            );
            // miniagent's own settings are asked about whatever a skill says.
            assert!(matches!(
                policy.check_json(&*writer, &write(".miniagent/mcp.json"), &workspace),
                Verdict::AskEachTime(_)
            ));
            assert_eq!(
                policy.check_json(&*bash, &command("git status .miniagent/"), &workspace),
                Verdict::Ask
            );
            // Never what acts outside the sandbox.
            policy.pre_approve(skill(&["Bash"]));
            assert_eq!(
                policy.check_json(&fake(ToolEffect::External), &serde_json::json!({}), &workspace),
                Verdict::Ask
            );
            // Until the turn ends.
            policy.end_skills();
            assert_eq!(
                policy.check_json(&*bash, &command("git status"), &workspace),
                Verdict::Ask
            );
        }
        // Commands that would run unconfined (no Landlock) are not pre-approved.
        let mut unconfined = ApprovalPolicy::new(ApprovalMode::Ask);
        unconfined.pre_approve(skill(&["Bash", "Write"]));
        assert_eq!(
            unconfined.check_json(&*bash, &command("ls"), &workspace),
            Verdict::Ask
        );
        assert_eq!(
            unconfined.check_json(&*writer, &write("a.txt"), &workspace),
            Verdict::Run
        );
        // Read-only stays read-only.
        let mut read_only = ApprovalPolicy::new(ApprovalMode::ReadOnly).confining_commands(true);
        read_only.pre_approve(skill(&["Bash", "Write"]));
        assert!(matches!(
            read_only.check_json(&*bash, &command("ls"), &workspace),
            Verdict::Refuse(_)
        ));
        assert!(matches!(
            read_only.check_json(&*writer, &write("a.txt"), &workspace),
            Verdict::Refuse(_)
        ));
        std::fs::remove_dir_all(scratch).unwrap();
    }

    /// A write into any repository's `.git/` in the workspace (through a symlink too)
    /// asks in `ask` and `auto-edit`, whatever a rule or a skill says; and so does a
    /// covered command naming it.
    #[test]
    fn writes_into_a_git_folder_ask_each_time_where_approvals_are_asked() {
        let scratch = std::env::temp_dir().join(format!("miniagent-git-folder-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&scratch);
        std::fs::create_dir_all(scratch.join("sub/.git/hooks")).unwrap();
        std::fs::create_dir_all(scratch.join(".git")).unwrap();
        let root = scratch.canonicalize().unwrap();
        std::os::unix::fs::symlink(".git", root.join("repo-data")).unwrap();
        let workspace = Workspace::new(&root, &[]);
        let (bash, writer) = (real("bash"), real("write_file"));
        let args = |path: &str| serde_json::json!({"path": path, "content": "x"});
        for mode in [ApprovalMode::Ask, ApprovalMode::AutoEdit] {
            let mut policy = ApprovalPolicy::new(mode).confining_commands(true);
            policy.remember(ApprovalRule::Tool {
                name: "write_file".into(),
            });
            policy.pre_approve(skill(&["Write", "Bash"]));
            for (path, real) in [
                (".git/config", ".git/config"),
                ("sub/.git/hooks/pre-commit", "sub/.git/hooks/pre-commit"),
                ("repo-data/info/attributes", ".git/info/attributes"),
            ] {
                assert_eq!(
                    policy.check_json(&*writer, &args(path), &workspace),
                    Verdict::AskOnce(format!(
                        "`write_file` would change {}, in a git repository's own folder: git runs the programs named there (hooks, core.fsmonitor, diff and filter drivers, aliases) at later git commands; it needs your approval each time.",
                        root.join(real).display()
                    )),
                    "{mode} {path}"
                );
            }
            for path in [".gitignore", ".gitattributes", "src/git/x.rs"] {
                assert_eq!(
                    policy.check_json(&*writer, &args(path), &workspace),
                    Verdict::Run,
                    "{mode} {path}"
                );
            }
            assert!(matches!(
                policy.check_json(
                    &*bash,
                    &serde_json::json!({"command": "cp x .git/config"}),
                    &workspace
                ),
                Verdict::AskOnce(_)
            ));
        }
        // full-auto runs everything it is given; read-only refuses it.
        assert_eq!(
            ApprovalPolicy::new(ApprovalMode::FullAuto).check_json(
                &*writer,
                &args(".git/config"),
                &workspace
            ),
            Verdict::Run
        );
        assert!(matches!(
            ApprovalPolicy::new(ApprovalMode::ReadOnly).check_json(
                &*writer,
                &args(".git/config"),
                &workspace
            ),
            Verdict::Refuse(_)
        ));
        std::fs::remove_dir_all(scratch).unwrap();
    }

    fn permissions(allow: &[&str], ask: &[&str], deny: &[&str]) -> PermissionRules {
        let mut config = crate::config::built_in();
        let list = |patterns: &[&str]| patterns.iter().map(|p| p.to_string()).collect();
        config.permissions = crate::config::PermissionSettings {
            allow: list(allow),
            ask: list(ask),
            deny: list(deny),
        };
        PermissionRules::from_config(&config)
    }

    /// Deny refuses in every mode (over session rules and skills), ask asks in every mode
    /// but read-only (over session rules), allow runs in the modes that ask but never
    /// past read-only, miniagent's own folders or a git folder.
    #[test]
    fn permission_rules_deny_ask_and_allow_within_the_modes_hard_limits() {
        let scratch = std::env::temp_dir().join(format!("miniagent-permissions-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&scratch);
        std::fs::create_dir_all(scratch.join(".git")).unwrap();
        let root = scratch.canonicalize().unwrap();
        let workspace = Workspace::new(&root, &[]);
        let (bash, writer, reader) = (real("bash"), real("write_file"), real("read_file"));
        let command = |command: &str| serde_json::json!({"command": command});
        let write = |path: &str| serde_json::json!({"path": path, "content": "x"});
        let rules = permissions(
            &["bash(git status*)", "write_file(**)", "bash(rm*)"],
            &["bash(git push*)", "read_file(notes/**)"],
            &["bash(rm -rf*)", "read_file(secrets/**)"],
        );
        let denied = |pattern: &str| {
            Verdict::Refuse(format!(
                "the deny rule `{pattern}` in your config refuses this call, in every approval mode; do not try it again or another way round, ask the person if it is needed"
            ))
        };
        let asked = |pattern: &str| {
            Verdict::AskOnce(format!(
                "the ask rule `{pattern}` in your config asks about this call each time, whatever the approval mode."
            ))
        };
        for mode in [
            ApprovalMode::ReadOnly,
            ApprovalMode::Ask,
            ApprovalMode::AutoEdit,
            ApprovalMode::FullAuto,
        ] {
            let mut policy = ApprovalPolicy::new(mode)
                .confining_commands(true)
                .with_permissions(rules.clone());
            // Neither a session rule nor a skill takes a deny or an ask away.
            policy.remember(ApprovalRule::Command { program: "rm".into() });
            policy.remember(ApprovalRule::Command {
                program: "git".into(),
            });
            policy.pre_approve(skill(&["Bash"]));
            assert_eq!(
                policy.check_json(&*bash, &command("rm -rf build"), &workspace),
                denied("bash(rm -rf*)"),
                "{mode}"
            );
            assert_eq!(
                policy.check_json(&*bash, &command("ls; rm -rf /"), &workspace),
                denied("bash(rm -rf*)"),
                "{mode}"
            );
            assert_eq!(
                policy.check_json(&*reader, &serde_json::json!({"path": "secrets/key"}), &workspace),
                denied("read_file(secrets/**)"),
                "{mode}"
            );
            assert_eq!(
                policy.check_json(&*reader, &serde_json::json!({"path": "notes/a.md"}), &workspace),
                asked("read_file(notes/**)"),
                "{mode}"
            );
            let push = policy.check_json(&*bash, &command("git push"), &workspace);
            let status = policy.check_json(&*bash, &command("git status"), &workspace);
            let source = policy.check_json(&*writer, &write("src/a.rs"), &workspace);
            if mode == ApprovalMode::ReadOnly {
                // Read-only stays read-only: an allow rule does not widen it.
                for verdict in [push, status, source] {
                    assert!(
                        matches!(verdict, Verdict::Refuse(ref why) if why.starts_with("the approval mode is read-only")),
                        "{verdict:?}"
                    );
                }
                continue;
            }
            assert_eq!(push, asked("bash(git push*)"), "{mode}");
            assert_eq!((status, source), (Verdict::Run, Verdict::Run), "{mode}");
            // An allow rule never answers the questions about miniagent's own folders.
            assert!(matches!(
                policy.check_json(&*writer, &write(".miniagent/mcp.json"), &workspace),
                Verdict::AskEachTime(_)
            ));
        }
        // Nor about a git folder, in the modes that ask.
        let policy = ApprovalPolicy::new(ApprovalMode::Ask).with_permissions(rules.clone());
        assert!(matches!(
            policy.check_json(&*writer, &write(".git/config"), &workspace),
            Verdict::AskOnce(ref why) if why.contains("git repository's own folder")
        ));
        assert!(matches!(
            policy.check_json(&*bash, &command("rm .git/index"), &workspace),
            Verdict::AskOnce(ref why) if why.contains("names a git repository's own folder")
        ));
        // Without rules the same calls ask.
        let plain = ApprovalPolicy::new(ApprovalMode::Ask);
        assert_eq!(
            plain.check_json(&*bash, &command("git status"), &workspace),
            Verdict::Ask
        );
        assert_eq!(
            plain.check_json(&*reader, &serde_json::json!({"path": "secrets/key"}), &workspace),
            Verdict::Run
        );
        std::fs::remove_dir_all(scratch).unwrap();
    }

    #[tokio::test]
    async fn pending_approvals_deliver_once() {
        let pending = PendingApprovals::default();
        let receiver = pending.register("c1");
        assert!(pending.resolve("c1", Decision::Approve));
        assert!(!pending.resolve("c1", Decision::Approve));
        assert_eq!(receiver.await.unwrap(), Decision::Approve);
    }
}
