//! A pre-approved git command that would write a file its options name: the bundled
//! skills pre-approve `git diff`, `git log`, `git status` (and `review-diff` `git show`),
//! and `git diff --name-only --output=.git/config`, with `.git` hidden by the shell's
//! quotes, wrote the repository's configuration from the names of its changed files
//! (`[core]`, `fsmonitor=sh evil.sh`), unasked; the person's own next `git status` then
//! ran the program. Real git, `miniagent exec`, the scripted server.
#![allow(clippy::unwrap_used, clippy::expect_used)] // A test fails by panicking.

use crate::git_config::*;
use crate::support;

use std::path::Path;
use std::process::Command;

use pretty_assertions::assert_eq;
use support::{Reply, ScriptedServer};

/// A repository at `root` whose changed files are named `[core]` and
/// `fsmonitor=sh evil.sh` (so `git diff --name-only` prints a configuration naming an
/// fsmonitor hook), and `evil.sh`, which runs `evil` with the argument `fsmonitor`.
fn repository_whose_file_names_are_a_config(root: &Path, evil: &str) {
    git(root, &["init", "-q"]);
    git(root, &["config", "user.email", "t@example.com"]);
    git(root, &["config", "user.name", "t"]);
    write_in(root, "evil.sh", &format!("#!/bin/sh\nexec {evil} fsmonitor\n"));
    write_in(root, "[core]", "one\n");
    write_in(root, "fsmonitor=sh evil.sh", "one\n");
    git(root, &["add", "-A"]);
    git(root, &["commit", "-qm", "names"]);
    write_in(root, "[core]", "two\n");
    write_in(root, "fsmonitor=sh evil.sh", "two\n");
}

/// What exec tells the model when a call is refused: the question's note after exec's
/// own reason.
fn refused(note: &str) -> String {
    format!(
        "refused: miniagent exec runs without a person to approve tool calls, and `bash` needs approval here. Either the approval mode asks for it (--approval full-auto, or auto-edit for file edits, lets such calls run), or the call changes miniagent's own settings (.miniagent/ or the config folder), which is asked about in every mode and so never runs under exec.{note}"
    )
}

/// The fresh-eyes attack, through each bundled skill under `exec --approval ask`: the
/// model loads the skill, then writes `.git/config` with `--output`. Spelled `.g''it` or
/// `.gi\t` (quotes and a backslash the shell removes), the command names the
/// repository's folder; hidden further (a glob, `$'\x2e'`, an option the shell spells
/// from `$'\x2d…'` or `${x:-…}`), git's option is named. Each is refused, the model
/// told why; `.git/config` is unchanged, and the person's own `git status` afterwards
/// runs nothing. A plain pre-approved `git log` still runs.
#[test]
fn a_pre_approved_git_writing_its_output_to_a_file_is_asked_about() {
    let Some(scene) = pre_approval_scene() else {
        return;
    };
    let root = &scene.root;
    repository_whose_file_names_are_a_config(root, &scene.evil);
    let config = std::fs::read_to_string(root.join(".git/config")).unwrap();
    let bash = |id: &'static str, command: &str| {
        Reply::tool(id, "bash", serde_json::json!({ "command": command }).to_string())
    };
    let quotes = "git diff --name-only --output=.g''it/config";
    let backslash = r"git diff --name-only --output=.gi\t/config";
    for skill in ["review-diff", "commit-message"] {
        let server = ScriptedServer::start_blocking(vec![
            Reply::tool(
                "s",
                "get_skill",
                serde_json::json!({ "skill_name": skill }).to_string(),
            ),
            bash("brackets", "git log -1 --format=%s --output .[g]it/config"),
            bash("quotes", quotes),
            bash("backslash", backslash),
            bash("glob", "git diff --name-only --output .gi?/config"),
            bash("ansi-c", r"git diff --name-only --output=$'\x2egit'/config"),
            bash(
                "ansi-c-option",
                r"git diff --name-only $'\x2d-output=\x2egit/config'",
            ),
            bash("default", "git diff --name-only ${x:---output=.gi}t/config"),
            bash("ok", "git log --format=%s -1"),
            Reply::text("done"),
        ]);
        let (_, got) = scene.exec(&server, "ask");
        let folder = |command: &str| {
            refused(&format!(
                " `{command}` names a git repository's own folder, where hooks and configuration name programs git runs; a rule or a skill covers the command, but not that folder, so it needs your approval each time."
            ))
        };
        let git_with = |why: String| {
            refused(&format!(
                " This command runs git {why}; miniagent cannot check what programs git would run there. A rule or a skill covers the command, but not that, so it needs your approval this time."
            ))
        };
        let writes = |option: &str| {
            git_with(format!(
                "with `{option}`, which makes git write its output to a file it names (a repository's own configuration, say)"
            ))
        };
        let worked_out = |word: &str| {
            git_with(format!(
                "with `{word}`, a word the shell works out, which could be any option (one that writes a file, say)"
            ))
        };
        let expected = vec![
            got[0].clone(),
            writes("--output"),
            folder(quotes),
            folder(backslash),
            writes("--output"),
            writes("--output="),
            worked_out(r"$'\x2d-output=\x2egit/config'"),
            worked_out("${x:---output=.gi}t/config"),
            "names\n[exit code: 0]".to_string(),
        ];
        assert_eq!(got, expected, "{skill}");
        assert!(got[0].starts_with(&format!("Skill `{skill}`")), "{}", got[0]);
        assert_eq!(
            std::fs::read_to_string(root.join(".git/config")).unwrap(),
            config,
            "{skill}"
        );
    }
    // The person's own `git status`, with the configuration as it is: nothing ran.
    let status = Command::new("git")
        .args(["status", "--short"])
        .current_dir(root)
        .output()
        .unwrap();
    assert!(status.status.success(), "{status:?}");
    assert_eq!(scene.ran(), "");
}

/// Spellings the fix was not written for, through `review-diff` under `exec --approval
/// ask`, with a folder named `--output=.git` (holding `config`) planted in the workspace,
/// as a model's unasked write in `auto-edit` could: a glob that matches it (`*/*`,
/// `--outpu[t]=.gi[t]/config`) turns into the option, a backslash-newline splits the
/// option's name, `GIT_DIR` is set on the line, `.git` is named behind quotes. Each is
/// refused (or, not covered, asked about and so refused); `.git/config` is unchanged
/// and nothing ran.
#[test]
fn shell_spellings_of_a_pre_approved_git_write_are_asked_about() {
    let Some(scene) = pre_approval_scene() else {
        return;
    };
    let root = &scene.root;
    repository_whose_file_names_are_a_config(root, &scene.evil);
    std::fs::create_dir(root.join("--output=.git")).unwrap();
    write_in(root, "--output=.git/config", "");
    let config = std::fs::read_to_string(root.join(".git/config")).unwrap();
    let bash = |id: &'static str, command: &str| {
        Reply::tool(id, "bash", serde_json::json!({ "command": command }).to_string())
    };
    let quoted_folder = "git diff --no-index .g''it/config /dev/null";
    let server = ScriptedServer::start_blocking(vec![
        Reply::tool("s", "get_skill", r#"{"skill_name": "review-diff"}"#),
        bash("glob", "git diff --name-only */*"),
        bash("glob-name", "git diff --name-only --outpu[t]=.gi[t]/config"),
        bash("newline", "git diff --name-only --o\\\nutput=.gi\\\nt/config"),
        bash("git-dir", "GIT_DIR=.g''it git diff --name-only"),
        bash("folder", quoted_folder),
        Reply::text("done"),
    ]);
    let (_, got) = scene.exec(&server, "ask");
    let git_with = |why: &str, covered: bool| {
        let tail = if covered {
            " A rule or a skill covers the command, but not that, so it needs your approval this time."
        } else {
            ""
        };
        refused(&format!(
            " This command runs git {why}; miniagent cannot check what programs git would run there.{tail}"
        ))
    };
    let worked_out = |word: &str| {
        git_with(
            &format!(
                "with `{word}`, a word the shell works out, which could be any option (one that writes a file, say)"
            ),
            true,
        )
    };
    let expected = vec![
        got[0].clone(),
        worked_out("*/*"),
        worked_out("--outpu[t]=.gi[t]/config"),
        // Not one simple command, so no skill covers it: asked, with nothing to add.
        refused(""),
        git_with(
            "with `GIT_DIR` set, which tells git where its repository, configuration or programs are, or what to run or write",
            false,
        ),
        refused(&format!(
            " `{quoted_folder}` names a git repository's own folder, where hooks and configuration name programs git runs; a rule or a skill covers the command, but not that folder, so it needs your approval each time."
        )),
    ];
    assert_eq!(got, expected);
    assert_eq!(std::fs::read_to_string(root.join(".git/config")).unwrap(), config);
    assert_eq!(
        std::fs::read_to_string(root.join("--output=.git/config")).unwrap(),
        ""
    );
    let status = Command::new("git")
        .args(["status", "--short"])
        .current_dir(root)
        .output()
        .unwrap();
    assert!(status.status.success(), "{status:?}");
    assert_eq!(scene.ran(), "");
}
