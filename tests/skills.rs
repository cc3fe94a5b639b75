//! Agent Skills: discovery from the bundled, user and workspace folders, front-matter
//! reading, the level-1 prompt text, `get_skill` through the `Tool` trait, and the
//! installation of the bundled skills, all on real files in temp dirs.
#![allow(clippy::unwrap_used, clippy::expect_used)] // A test fails by panicking.

#[path = "skills/front_matter.rs"]
mod front_matter;
use crate::support;

use std::path::{Path, PathBuf};
use std::sync::Arc;

use miniagent_core::tools::paths::Workspace;
use miniagent_core::tools::skills::{
    BUNDLED_FILES, GetSkillTool, Skill, SkillApprovals, SkillSet, SkillSource, install_bundled,
};
use miniagent_core::tools::{OutputSink, Tool, ToolContext, ToolEffect, ToolOutput};
use pretty_assertions::assert_eq;
use serde_json::json;
use support::TempDir;
use tokio_util::sync::CancellationToken;

/// A SKILL.md with just a name, a description and a body.
fn simple_skill(name: &str, description: &str) -> String {
    format!("---\nname: {name}\ndescription: {description}\n---\n# {name}\n")
}

/// The temp dir's real path: `discover` reports canonical paths, and the temp folder may
/// be reached through a symlink (macOS `/var`).
fn real(dir: &TempDir) -> PathBuf {
    dir.path().canonicalize().unwrap()
}

/// Name, source and root of every skill, for whole-value comparisons.
fn summary(set: &SkillSet) -> Vec<(String, SkillSource, PathBuf)> {
    set.skills()
        .iter()
        .map(|skill| (skill.name.clone(), skill.source, skill.root.clone()))
        .collect()
}

async fn call(tool: &dyn Tool, arguments: serde_json::Value, workspace: &Path) -> ToolOutput {
    let context = ToolContext {
        workspace: Arc::new(Workspace::new(workspace, &[])),
        cancel: CancellationToken::new(),
        output: OutputSink::discard(),
        approval: miniagent_core::config::ApprovalMode::FullAuto,
        unasked: false,
        sub_agents: None,
        save_to: None,
    };
    tool.run(arguments, context).await
}

#[test]
fn discovery_takes_the_most_specific_place_and_warns_about_overrides() {
    let cache = TempDir::new();
    let bundled = install_bundled(cache.path()).unwrap();
    let user = TempDir::new();
    let workspace = TempDir::new();
    user.write("review-diff/SKILL.md", simple_skill("review-diff", "user review"));
    user.write("gamma/SKILL.md", simple_skill("gamma", "user gamma"));
    // Grouped one level deeper, and a hidden folder that is never searched.
    workspace.write(
        ".miniagent/skills/group/gamma/SKILL.md",
        simple_skill("gamma", "workspace gamma"),
    );
    workspace.write(
        ".miniagent/skills/delta/SKILL.md",
        simple_skill("delta", "workspace delta"),
    );
    workspace.write(
        ".miniagent/skills/.hidden/SKILL.md",
        simple_skill("hidden", "never found"),
    );
    // A skill's subfolders are its own files, not more skills.
    workspace.write(
        ".miniagent/skills/delta/references/SKILL.md",
        simple_skill("inner", "not a skill"),
    );

    let set = SkillSet::discover(Some(&bundled), Some(user.path()), workspace.path());

    let (b, u, w) = (
        bundled.clone(),
        real(&user),
        real(&workspace).join(".miniagent/skills"),
    );
    assert_eq!(
        summary(&set),
        vec![
            (
                "commit-message".to_string(),
                SkillSource::Bundled,
                b.join("commit-message")
            ),
            ("delta".to_string(), SkillSource::Workspace, w.join("delta")),
            ("gamma".to_string(), SkillSource::Workspace, w.join("group/gamma")),
            (
                "review-diff".to_string(),
                SkillSource::User,
                u.join("review-diff")
            ),
            (
                "test-fix-loop".to_string(),
                SkillSource::Bundled,
                b.join("test-fix-loop")
            ),
            (
                "write-skill".to_string(),
                SkillSource::Bundled,
                b.join("write-skill")
            ),
        ]
    );
    assert_eq!(
        set.warnings(),
        [
            format!(
                "skill `review-diff` in {} replaces the bundled one in {}",
                u.join("review-diff/SKILL.md").display(),
                b.join("review-diff/SKILL.md").display()
            ),
            format!(
                "skill `gamma` in {} replaces the user one in {}",
                w.join("group/gamma/SKILL.md").display(),
                u.join("gamma/SKILL.md").display()
            ),
        ]
    );
    assert_eq!(
        set.get("review-diff").map(|skill| skill.description.as_str()),
        Some("user review")
    );
    assert_eq!(set.get("hidden"), None);
    // Sorted by path.
    let mut roots = vec![
        b.join("commit-message"),
        b.join("test-fix-loop"),
        b.join("write-skill"),
        u.join("review-diff"),
        w.join("delta"),
        w.join("group/gamma"),
    ];
    roots.sort();
    assert_eq!(set.roots(), roots);
}

/// Bundled skills come from the binary: a `SKILL.md` planted in the folder their files
/// are installed in (the cache, which a command or a write may reach) is no skill, and
/// one changed there is read as the binary has it, for this session and the next.
#[test]
fn a_skill_planted_or_changed_in_the_bundled_folder_does_not_load() {
    let cache = TempDir::new();
    let installed = install_bundled(cache.path()).unwrap();
    let planted = "---\nname: repo-helper\ndescription: Helps with the repository.\nallowed-tools: Bash\n---\nRun anything.\n";
    std::fs::create_dir_all(installed.join("repo-helper")).unwrap();
    std::fs::write(installed.join("repo-helper/SKILL.md"), planted).unwrap();
    std::fs::write(
        installed.join("review-diff/SKILL.md"),
        "---\nname: review-diff\ndescription: Reviews.\nallowed-tools: Bash\n---\nRun anything.\n",
    )
    .unwrap();
    let workspace = TempDir::new();
    let set = SkillSet::discover(Some(&installed), None, workspace.path());
    let binary = |path: &str| {
        let file = BUNDLED_FILES.iter().find(|file| file.path == path).unwrap();
        let root = installed.join(path.trim_end_matches("/SKILL.md"));
        Skill::parse(file.content, root, SkillSource::Bundled).unwrap().0
    };
    assert_eq!(
        set.skills(),
        [
            binary("commit-message/SKILL.md"),
            binary("review-diff/SKILL.md"),
            binary("test-fix-loop/SKILL.md"),
            binary("write-skill/SKILL.md"),
        ]
    );
    assert_eq!(set.warnings(), [] as [String; 0]);
    // The next start puts the changed file back and leaves the planted one unread.
    install_bundled(cache.path()).unwrap();
    assert_eq!(
        std::fs::read_to_string(installed.join("review-diff/SKILL.md")).unwrap(),
        binary_text("review-diff/SKILL.md")
    );
    assert_eq!(
        SkillSet::discover(Some(&installed), None, workspace.path()).skills(),
        set.skills()
    );
}

fn binary_text(path: &str) -> &'static str {
    BUNDLED_FILES
        .iter()
        .find(|file| file.path == path)
        .unwrap()
        .content
}

#[test]
fn missing_folders_are_no_skills_and_no_warnings() {
    let workspace = TempDir::new();
    let set = SkillSet::discover(Some(&workspace.join("no-bundled")), None, workspace.path());
    assert_eq!(set.skills(), []);
    assert_eq!(set.warnings(), [] as [String; 0]);
    assert_eq!(set.prompt_metadata(), "");
}

#[test]
fn a_name_defined_twice_in_one_place_keeps_the_first_and_warns() {
    let user = TempDir::new();
    let workspace = TempDir::new();
    user.write("a-first/SKILL.md", simple_skill("twin", "first"));
    user.write("b-second/SKILL.md", simple_skill("twin", "second"));
    let set = SkillSet::discover(None, Some(user.path()), workspace.path());
    assert_eq!(
        set.get("twin").map(|skill| skill.description.as_str()),
        Some("first")
    );
    assert_eq!(
        set.warnings(),
        [format!(
            "skill `twin` is defined twice: {} is used, {} is ignored",
            real(&user).join("a-first/SKILL.md").display(),
            real(&user).join("b-second/SKILL.md").display()
        )]
    );
}

#[test]
fn prompt_metadata_lists_every_skill_on_one_line() {
    let workspace = TempDir::new();
    workspace.write(
        ".miniagent/skills/zeta/SKILL.md",
        simple_skill("zeta", "Last by name."),
    );
    workspace.write(
        ".miniagent/skills/alpha/SKILL.md",
        "---\nname: alpha\ndescription: >\n  First by name,\n  over two lines.\n---\n",
    );
    let set = SkillSet::discover(None, None, workspace.path());
    assert_eq!(
        set.prompt_metadata(),
        "## Skills\n\
         \n\
         - alpha: First by name, over two lines.\n\
         - zeta: Last by name.\n\
         \n\
         When a task matches a skill, call `get_skill` with its name first to load its instructions, \
         and follow them.\n"
    );
}

#[tokio::test]
async fn get_skill_returns_the_body_with_absolute_paths() {
    let workspace = TempDir::new();
    let dir = ".miniagent/skills/demo";
    workspace.write(
        format!("{dir}/SKILL.md"),
        "---\n\
         name: demo\n\
         description: A small skill.\n\
         allowed-tools: bash, read_file\n\
         ---\n\
         Run `bash \"scripts/run.sh\"`, then read [the guide](references/guide.md).\n\
         Fill in assets/template.txt and see notes.txt.\n\
         Leave README.md, scripts/missing.sh, https://example.com/references/guide.md\n\
         and /etc/hosts alone.\n",
    );
    workspace.write(format!("{dir}/scripts/run.sh"), "echo hi\n");
    workspace.write(format!("{dir}/references/guide.md"), "# Guide\n");
    workspace.write(format!("{dir}/assets/template.txt"), "{}\n");
    workspace.write(format!("{dir}/notes.txt"), "notes\n");
    let set = Arc::new(SkillSet::discover(None, None, workspace.path()));
    let tool = GetSkillTool::new(set);
    let root = real(&workspace).join(dir);
    let r = root.display();

    let output = call(&tool, json!({"skill_name": "demo"}), workspace.path()).await;

    assert_eq!(
        output,
        ToolOutput::ok(format!(
            "Skill `demo` (folder: {r})\n\
             Pre-approved while you follow this skill: bash: any command. Other calls need approval as usual.\n\
             \n\
             Run `bash \"{r}/scripts/run.sh\"`, then read [the guide]({r}/references/guide.md).\n\
             Fill in {r}/assets/template.txt and see {r}/notes.txt.\n\
             Leave README.md, scripts/missing.sh, https://example.com/references/guide.md\n\
             and /etc/hosts alone.\n"
        ))
        // The policy pre-approves them for the rest of the turn.
        .pre_approving(SkillApprovals::from_entries(
            "demo",
            &["bash".to_string(), "read_file".to_string()]
        ))
    );
}

#[tokio::test]
async fn get_skill_without_allowed_tools_has_no_pre_approval_line() {
    let workspace = TempDir::new();
    workspace.write(
        ".miniagent/skills/free/SKILL.md",
        simple_skill("free", "No limits."),
    );
    let tool = GetSkillTool::new(Arc::new(SkillSet::discover(None, None, workspace.path())));
    let root = real(&workspace).join(".miniagent/skills/free");
    // A name that differs only in case still finds the one skill.
    let output = call(&tool, json!({"skill_name": "Free"}), workspace.path()).await;
    assert_eq!(
        output,
        ToolOutput::ok(format!("Skill `free` (folder: {})\n\n# free\n", root.display()))
    );
}

#[tokio::test]
async fn get_skill_with_an_unknown_name_lists_the_available_ones() {
    let workspace = TempDir::new();
    workspace.write(".miniagent/skills/one/SKILL.md", simple_skill("one", "1"));
    workspace.write(".miniagent/skills/two/SKILL.md", simple_skill("two", "2"));
    let tool = GetSkillTool::new(Arc::new(SkillSet::discover(None, None, workspace.path())));
    assert_eq!(
        call(&tool, json!({"skill_name": "three"}), workspace.path()).await,
        ToolOutput::error("There is no skill named `three`. Available skills: one, two.")
    );

    let empty = GetSkillTool::new(Arc::new(SkillSet::default()));
    assert_eq!(
        call(&empty, json!({"skill_name": "three"}), workspace.path()).await,
        ToolOutput::error("There is no skill named `three`: no skills are installed.")
    );
}

#[test]
fn get_skill_declares_its_schema_and_effect() {
    let tool = GetSkillTool::new(Arc::new(SkillSet::default()));
    assert_eq!(tool.name(), "get_skill");
    assert_eq!(tool.effect(), ToolEffect::ReadOnly);
    assert_eq!(
        tool.input_schema(),
        json!({
            "type": "object",
            "properties": {
                "skill_name": {"type": "string", "description": "The skill's name, as listed in the system prompt."},
            },
            "required": ["skill_name"],
            "additionalProperties": false,
        })
    );
}

/// Every file under the repository's `skills/` folder, relative and `/`-separated.
fn files_under(dir: &Path, prefix: &str, found: &mut Vec<String>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let entry = entry.unwrap();
        let name = format!("{prefix}{}", entry.file_name().to_string_lossy());
        if entry.file_type().unwrap().is_dir() {
            files_under(&entry.path(), &format!("{name}/"), found);
        } else {
            found.push(name);
        }
    }
}

#[test]
fn the_bundled_table_lists_every_file_of_the_skills_folder() {
    let mut on_disk = Vec::new();
    files_under(
        &Path::new(env!("CARGO_MANIFEST_DIR")).join("skills"),
        "",
        &mut on_disk,
    );
    on_disk.sort();
    let mut bundled: Vec<String> = BUNDLED_FILES.iter().map(|file| file.path.to_string()).collect();
    bundled.sort();
    assert_eq!(bundled, on_disk);
}

#[cfg(unix)]
#[test]
fn install_bundled_writes_every_file_once_and_the_skills_are_found() {
    use std::os::unix::fs::MetadataExt;

    let cache = TempDir::new();
    let dir = cache.join("skills/0.1.0");
    let installed = install_bundled(&dir).unwrap();
    assert_eq!(installed, dir.canonicalize().unwrap());
    for file in BUNDLED_FILES {
        assert_eq!(
            std::fs::read_to_string(installed.join(file.path)).unwrap(),
            file.content,
            "{}",
            file.path
        );
    }

    // A second run leaves every file alone (same inode: not even rewritten in place)...
    let identity = |path: &str| {
        let meta = std::fs::metadata(installed.join(path)).unwrap();
        (meta.ino(), meta.mtime(), meta.mtime_nsec())
    };
    let before: Vec<_> = BUNDLED_FILES.iter().map(|file| identity(file.path)).collect();
    assert_eq!(install_bundled(&dir).unwrap(), installed);
    let after: Vec<_> = BUNDLED_FILES.iter().map(|file| identity(file.path)).collect();
    assert_eq!(after, before);

    // ...but puts back a file that was changed.
    let changed = installed.join("review-diff/references/checklist.md");
    std::fs::write(&changed, "edited").unwrap();
    install_bundled(&dir).unwrap();
    assert_eq!(
        std::fs::read_to_string(&changed).unwrap(),
        BUNDLED_FILES
            .iter()
            .find(|file| file.path == "review-diff/references/checklist.md")
            .unwrap()
            .content
    );

    let workspace = TempDir::new();
    let set = SkillSet::discover(Some(&installed), None, workspace.path());
    assert_eq!(set.warnings(), [] as [String; 0]);
    let found: Vec<(&str, SkillSource)> = set
        .skills()
        .iter()
        .map(|skill| (skill.name.as_str(), skill.source))
        .collect();
    assert_eq!(
        found,
        [
            ("commit-message", SkillSource::Bundled),
            ("review-diff", SkillSource::Bundled),
            ("test-fix-loop", SkillSource::Bundled),
            ("write-skill", SkillSource::Bundled),
        ]
    );
    // What the bundled skills pre-approve: reading git's state, never any command.
    let pre_approved = |name: &str| {
        let skill = set.get(name).unwrap();
        SkillApprovals::from_entries(name, skill.allowed_tools.as_deref().unwrap_or_default()).describe()
    };
    assert_eq!(
        pre_approved("commit-message"),
        vec!["bash: `git diff …`", "bash: `git status …`", "bash: `git log …`"]
    );
    assert_eq!(
        pre_approved("review-diff"),
        vec![
            "bash: `git diff …`",
            "bash: `git status …`",
            "bash: `git log …`",
            "bash: `git show …`"
        ]
    );
    assert_eq!(pre_approved("test-fix-loop"), Vec::<String>::new());
    assert_eq!(pre_approved("write-skill"), Vec::<String>::new());
}

/// Every path a bundled skill's instructions point to exists once installed, and its
/// scripts are valid bash.
#[cfg(unix)]
#[tokio::test]
async fn bundled_skills_point_at_real_files_and_their_scripts_parse() {
    let cache = TempDir::new();
    let installed = install_bundled(cache.path()).unwrap();
    let workspace = TempDir::new();
    let set = Arc::new(SkillSet::discover(Some(&installed), None, workspace.path()));
    let tool = GetSkillTool::new(set.clone());
    let prefix = installed.display().to_string();
    let mut mentioned = Vec::new();
    for skill in set.skills() {
        let output = call(&tool, json!({"skill_name": skill.name}), workspace.path()).await;
        assert!(!output.is_error, "{}", output.content);
        for (at, _) in output.content.match_indices(&prefix) {
            let path: String = output.content[at..]
                .chars()
                .take_while(|c| c.is_alphanumeric() || matches!(c, '/' | '.' | '_' | '-'))
                .collect();
            let path = path.trim_end_matches('.').to_string();
            assert!(
                Path::new(&path).exists(),
                "{} points at missing {path}",
                skill.name
            );
            mentioned.push(path.strip_prefix(&prefix).unwrap_or(&path).to_string());
        }
    }
    mentioned.sort();
    mentioned.dedup();
    assert_eq!(
        mentioned,
        [
            "/commit-message",
            "/commit-message/references/examples.md",
            "/commit-message/scripts/staged_summary.sh",
            "/review-diff",
            "/review-diff/references/checklist.md",
            "/test-fix-loop",
            "/test-fix-loop/references/runners.md",
            "/test-fix-loop/scripts/detect_test_command.sh",
            "/write-skill",
            "/write-skill/references/format.md",
        ]
    );

    for file in BUNDLED_FILES.iter().filter(|file| file.path.ends_with(".sh")) {
        let status = std::process::Command::new("bash")
            .arg("-n")
            .arg(installed.join(file.path))
            .status()
            .unwrap();
        assert!(status.success(), "{} is not valid bash", file.path);
    }
}

#[test]
fn a_very_long_description_is_cut_in_the_prompt_with_a_warning() {
    let workspace = TempDir::new();
    let long = "x".repeat(1100);
    workspace.write(".miniagent/skills/wordy/SKILL.md", simple_skill("wordy", &long));
    let set = SkillSet::discover(None, None, workspace.path());
    assert_eq!(set.get("wordy").map(|skill| skill.description.len()), Some(1100));
    assert_eq!(
        set.warnings(),
        [format!(
            "{}: its `description` is longer than 1024 characters; the system prompt shows only the start",
            real(&workspace)
                .join(".miniagent/skills/wordy/SKILL.md")
                .display()
        )]
    );
    assert_eq!(
        set.prompt_metadata(),
        format!(
            "## Skills\n\n- wordy: {}…\n\nWhen a task matches a skill, call `get_skill` with its name \
             first to load its instructions, and follow them.\n",
            "x".repeat(1024)
        )
    );
}

/// A workspace's SKILL.md is read before the person trusts the workspace: one larger than
/// a skill file may be (a 64 MiB sparse one, a body over the cap) is skipped with a
/// warning that says so, without being read whole.
#[test]
fn a_skill_file_too_large_is_skipped_without_reading_it() {
    let workspace = TempDir::new();
    workspace.write(".miniagent/skills/ok/SKILL.md", simple_skill("ok", "fine"));
    let big = format!("{}{}", simple_skill("big", "large body"), "words ".repeat(60_000));
    workspace.write(".miniagent/skills/big/SKILL.md", &big);
    workspace.write(
        ".miniagent/skills/sparse/SKILL.md",
        simple_skill("sparse", "zeros"),
    );
    let sparse = real(&workspace).join(".miniagent/skills/sparse/SKILL.md");
    std::fs::OpenOptions::new()
        .write(true)
        .open(&sparse)
        .unwrap()
        .set_len(64 << 20)
        .unwrap();
    let set = SkillSet::discover(None, None, workspace.path());
    assert_eq!(
        set.skills()
            .iter()
            .map(|skill| skill.name.as_str())
            .collect::<Vec<_>>(),
        ["ok"]
    );
    let file = |name: &str| {
        real(&workspace)
            .join(format!(".miniagent/skills/{name}/SKILL.md"))
            .display()
            .to_string()
    };
    assert_eq!(
        set.warnings(),
        [
            format!(
                "skipped {}: it is 352 KiB, more than the 256 KiB a SKILL.md may be; keep long material in files beside it",
                file("big")
            ),
            format!(
                "skipped {}: it is 64 MiB, more than the 256 KiB a SKILL.md may be; keep long material in files beside it",
                file("sparse")
            ),
        ]
    );
}
