//! What git reads beyond the repository miniagent checked, for a command that runs
//! without a question: a submodule's configuration (`--submodule=diff` and the like),
//! another folder's (`-C`), a folder a write makes a bare repository, and the manual
//! viewer `--help` runs. Real git, the scripted server.
#![allow(clippy::unwrap_used, clippy::expect_used)] // A test fails by panicking.

use crate::git_config::*;
use crate::support;

use std::collections::HashMap;
use std::path::Path;
use std::process::Command;

use miniagent_core::config::ApprovalMode;
use miniagent_protocol::Decision;
use pretty_assertions::assert_eq;
use support::{Reply, ScriptedServer, TempDir};

/// A repository at `root` whose last commit adds the submodule `s` (from `upstream`,
/// whose `.gitattributes` sends `*.txt` through the filter `z`), and a file in the
/// submodule changed in place at its old size and time, so that git looking into the
/// submodule must run its clean filter to tell.
fn repository_with_a_submodule(root: &Path, upstream: &Path) {
    repository(root);
    add_a_submodule_with_a_filter(root, upstream);
    git(root, &["commit", "-qm", "submodule"]);
    for file in ["s/a.txt", "s/.gitattributes"] {
        backdate(&root.join(file));
    }
    git(&root.join("s"), &["update-index", "--refresh", "-q"]);
    write_in(&root.join("s"), "a.txt", "owt\n");
    backdate(&root.join("s/a.txt"));
}

/// The submodule's own configuration names `evil` as its external diff and its filter.
fn hostile_submodule(root: &Path, evil: &str) {
    let sub = root.join("s");
    git(
        &sub,
        &["config", "diff.external", &format!("{evil} submodule-external")],
    );
    git(
        &sub,
        &["config", "filter.z.clean", &format!("{evil} submodule-clean")],
    );
}

/// Options with which a covered git command reads configuration miniagent did not
/// check (a submodule's own, through `--submodule=diff`, `--ignore-submodules=none` or
/// `--recurse-submodules`; another repository's, through `-C`), or undoes what it turned
/// off (`-c`): git approved by name, and a line approved for the session, are asked
/// about, saying why; `--submodule=log` compares the recorded commits only and runs.
#[tokio::test]
async fn covered_git_reading_a_submodules_or_another_repositorys_config_asks() {
    let outside = TempDir::new();
    let evil = evil_program(&outside);
    let log = outside.join("ran.log");
    let bash = |id: &'static str, command: &str| {
        Reply::tool(id, "bash", serde_json::json!({ "command": command }).to_string())
    };
    let server = ScriptedServer::start(vec![
        bash("status", "git status --short"),
        bash("line", "git -C s diff --stat"),
        bash("pager", "git -c core.pager=cat log -1 --format=%s"),
        Reply::text("approved"),
        bash("sm-diff", "git log -p --submodule=diff -1"),
        bash("sm-show", "git show '--submodule=diff'"),
        bash("ignore", "git diff --ignore-submodules=none"),
        bash("untracked", "git status --short --ignore-sub=untracked"),
        bash("recurse", "git ls-files --recurse-submodules"),
        bash("sm-log", "git log -p --submodule=log -1"),
        bash("sm-short", "git diff --submodule --ignore-submodules -- s"),
        bash("line-again", "git -C s diff --stat"),
        bash("pager-again", "git -c core.pager=cat log -1 --format=%s"),
        Reply::text("done"),
    ])
    .await;
    let (mut harness, root) = start_in(ApprovalMode::Ask, &server);
    let upstream = TempDir::new();
    repository_with_a_submodule(&root, upstream.path());
    let approve = HashMap::from([
        ("status", Decision::ApproveForSession),
        ("line", Decision::ApproveForSession),
        ("pager", Decision::ApproveForSession),
    ]);
    let asked = run_turn(&mut harness, &approve).await;
    let ids: Vec<&str> = asked.iter().map(|(id, _)| id.as_str()).collect();
    assert_eq!(ids, ["status", "line", "pager"]);

    // The submodule came with programs in its configuration.
    hostile_submodule(&root, &evil);
    let asked = run_turn(&mut harness, &HashMap::new()).await;
    let note = |why: &str| {
        vec![format!(
            "This command runs git {why}; miniagent cannot check what programs git would run there. A rule or a skill covers the command, but not that, so it needs your approval this time."
        )]
    };
    let submodules = |option: &str| {
        note(&format!(
            "with `{option}`, which makes git look into each submodule, reading that submodule's own configuration"
        ))
    };
    let expected = vec![
        ("sm-diff".to_string(), submodules("--submodule=diff")),
        ("sm-show".to_string(), submodules("--submodule=diff")),
        ("ignore".to_string(), submodules("--ignore-submodules=none")),
        ("untracked".to_string(), submodules("--ignore-sub=untracked")),
        ("recurse".to_string(), submodules("--recurse-submodules")),
        (
            "line-again".to_string(),
            vec![format!(
                "This command runs git, and the repository's git configuration names programs git would run for it: diff.external = {evil} submodule-external; filter.z.clean = {evil} submodule-clean. A rule or a skill covers the command, but not what the repository chose; it needs your approval this time."
            )],
        ),
        (
            "pager-again".to_string(),
            note(
                "with `-c`, which sets configuration on its command line and can turn back on what miniagent turns off",
            ),
        ),
    ];
    assert_eq!(asked, expected);
    assert_eq!(ran(&log), "");
    // `--submodule=log` and `--submodule` name the submodule's commits, in git's own process.
    let sm_log = result_of(&server, "sm-log");
    assert!(
        sm_log.contains("Submodule s 0000000...") && sm_log.ends_with("[exit code: 0]"),
        "{sm_log}"
    );
    assert_eq!(result_of(&server, "sm-short"), "(no output)\n[exit code: 0]");
    // Run as the person would run it, the same command does run the submodule's program.
    let direct = Command::new("git")
        .args(["log", "-p", "--submodule=diff", "-1"])
        .current_dir(&root)
        .env("GIT_PAGER", "cat")
        .output()
        .unwrap();
    assert!(direct.status.success(), "{direct:?}");
    // One for each file of the new submodule.
    assert_eq!(ran(&log), "submodule-external\nsubmodule-external\n");
}

/// The fresh-eyes report's attack on the bundled skills: `commit-message` and
/// `review-diff` pre-approve `git log`, `git diff` and `git show`, and the model adds
/// `--submodule=diff` in a repository whose submodule names an external diff. Under
/// `exec --approval ask` each is refused (nobody to ask), saying why; nothing runs.
/// (The note of a command no skill covers says the same, without the last sentence.)
#[test]
fn a_pre_approved_git_command_looking_into_submodules_is_asked_about() {
    let Some(scene) = pre_approval_scene() else {
        return;
    };
    let upstream = TempDir::new();
    repository_with_a_submodule(&scene.root, upstream.path());
    hostile_submodule(&scene.root, &scene.evil);
    for skill in ["commit-message", "review-diff"] {
        let server = ScriptedServer::start_blocking(vec![
            Reply::tool(
                "s",
                "get_skill",
                serde_json::json!({ "skill_name": skill }).to_string(),
            ),
            Reply::tool("lg", "bash", r#"{"command": "git log -p --submodule=diff -1"}"#),
            Reply::tool("df", "bash", r#"{"command": "git diff --submodule=diff HEAD~1"}"#),
            Reply::tool("sh", "bash", r#"{"command": "git show --submodule=diff -- s"}"#),
            Reply::tool("ok", "bash", r#"{"command": "git log --format=%s -1"}"#),
            Reply::text("done"),
        ]);
        let (_, got) = scene.exec(&server, "ask");
        // `commit-message` does not pre-approve `git show`: asked anyway, and refused.
        for refused in &got[1..4] {
            assert_refused_saying(
                refused,
                "This command runs git with `--submodule=diff`, which makes git look into each submodule, reading that submodule's own configuration; miniagent cannot check what programs git would run there.",
                &(skill, &got),
            );
        }
        assert_eq!(got[4], "submodule\n[exit code: 0]", "{skill}");
        assert_eq!(scene.ran(), "", "{skill}");
    }
}

/// git finds a folder holding `HEAD`, `objects/` and `refs/` by itself, as a bare
/// repository, and runs what its `config` names: in auto-edit, the write that makes a
/// folder one is asked about (so `br/` never becomes a repository), and so is every
/// write into a folder that already is one; `HEAD` or `refs/` alone are ordinary files.
#[tokio::test]
async fn auto_edit_asks_before_a_write_makes_or_changes_a_bare_repository() {
    let outside = TempDir::new();
    let evil = evil_program(&outside);
    let hostile =
        format!("[core]\n\trepositoryformatversion = 0\n\tbare = true\n[diff]\n\texternal = {evil}\n");
    let write = |id: &'static str, path: &str, content: &str| {
        Reply::tool(
            id,
            "write_file",
            serde_json::json!({ "path": path, "content": content }).to_string(),
        )
    };
    let server = ScriptedServer::start(vec![
        write("head", "br/HEAD", "ref: refs/heads/main\n"),
        write("config", "br/config", &hostile),
        write("objects", "br/objects/.keep", ""),
        write("refs", "br/refs/heads/.keep", ""),
        write("a", "br/a.txt", "x\n"),
        write("shipped-config", "shipped.git/config", &hostile),
        write("shipped-ref", "./shipped.git/refs/tags/v1", "0\n"),
        write("lone-head", "notes/HEAD", "x\n"),
        write("lone-refs", "notes/refs/a", "x\n"),
        Reply::text("done"),
    ])
    .await;
    let (mut harness, root) = start_in(ApprovalMode::AutoEdit, &server);
    git(&root, &["init", "-q", "--bare", "shipped.git"]);
    let asked = run_turn(&mut harness, &HashMap::new()).await;
    let note = |path: &str| {
        vec![format!(
            "`write_file` would change {}, in a git repository's own folder: git runs the programs named there (hooks, core.fsmonitor, diff and filter drivers, aliases) at later git commands; it needs your approval each time.",
            root.join(path).display()
        )]
    };
    assert_eq!(
        asked,
        [
            ("refs".to_string(), note("br/refs/heads/.keep")),
            ("shipped-config".to_string(), note("shipped.git/config")),
            ("shipped-ref".to_string(), note("shipped.git/refs/tags/v1")),
        ]
    );
    assert!(!root.join("br/refs").exists());
    assert!(root.join("br/a.txt").exists() && root.join("notes/refs/a").exists());
    // git run in `br/` finds no repository there.
    let found = Command::new("git")
        .args(["rev-parse", "--git-dir"])
        .current_dir(root.join("br"))
        .env("GIT_CEILING_DIRECTORIES", &root)
        .output()
        .unwrap();
    assert!(!found.status.success(), "{found:?}");
}

/// A pre-approved git command asking for its manual (`git diff --help`, `git help log`)
/// makes git run the manual viewer or browser the repository's configuration names
/// (`man.viewer` with `man.<tool>.cmd`, `help.format = web` with `web.browser`): asked
/// about, and under exec refused, so nothing the repository named runs (final
/// fresh-eyes finding).
#[test]
fn a_pre_approved_git_asking_for_its_manual_is_asked_about() {
    let Some(scene) = pre_approval_scene() else {
        return;
    };
    let root = &scene.root;
    repository(root);
    git(root, &["config", "man.viewer", "evil"]);
    git(root, &["config", "man.evil.cmd", &scene.evil]);
    git(root, &["config", "browser.evil.cmd", &scene.evil]);
    let server = ScriptedServer::start_blocking(vec![
        Reply::tool("s", "get_skill", r#"{"skill_name": "review-diff"}"#),
        Reply::tool("h1", "bash", r#"{"command": "git diff --help"}"#),
        Reply::tool("h2", "bash", r#"{"command": "git log --help"}"#),
        Reply::tool(
            "h3",
            "bash",
            r#"{"command": "git -c help.format=web log --help"}"#,
        ),
        Reply::text("done"),
    ]);
    let (_, got) = scene.exec(&server, "ask");
    for refused in &got[1..4] {
        assert!(refused.starts_with(REFUSED_UNDER_EXEC), "{got:?}");
    }
    assert!(
        got[1].contains("This command runs git with `--help`, which makes git run a manual viewer or web browser its configuration may name"),
        "{got:?}"
    );
    assert_eq!(scene.ran(), "");
}
