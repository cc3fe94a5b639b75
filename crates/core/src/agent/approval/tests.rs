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
        ApprovalPolicy::new(ApprovalMode::FullAuto).check_json(&*writer, &args(".git/config"), &workspace),
        Verdict::Run
    );
    assert!(matches!(
        ApprovalPolicy::new(ApprovalMode::ReadOnly).check_json(&*writer, &args(".git/config"), &workspace),
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
