//! Checkpoints end to end, through a real agent and the scripted server: a turn's file
//! changes (the file tools' and a command's) listed by `Op::Diff`, put back byte for byte
//! by a code rewind and `/undo`, refused (changing nothing) when a file was edited by
//! hand since, and still taken back after a resume. The workspace's own git repository
//! sees only the changes themselves.
#![allow(clippy::unwrap_used, clippy::expect_used)] // A test fails by panicking.

use crate::support;

use std::path::Path;
use std::process::Command;

use miniagent_core::config::Provider;
use miniagent_core::tools::ToolRegistry;
use miniagent_protocol::{CallEffect, Event, FileDiff, FileStatus, Op, RewindScope, TextChange, TurnChanges};
use pretty_assertions::assert_eq;
use serde_json::{Value, json};
use support::cli::session_logs;
use support::harness::{Harness, session_log_in, test_config};
use support::{Reply, ScriptedServer, TempDir};

const BINARY: &[u8] = &[0, 159, 146, 150, 255, 10];

fn git(root: &Path, args: &[&str]) -> String {
    let out = Command::new("git")
        .args(args)
        .current_dir(root)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        // `git status` must not refresh the index: the test compares `.git` byte for byte.
        .env("GIT_OPTIONAL_LOCKS", "0")
        .env("HOME", root)
        .output()
        .expect("git runs");
    assert!(
        out.status.success(),
        "git {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

/// Every file under `.git` with a hash of its bytes: what a look at the repository's own
/// state compares (refs, objects, index, config).
fn git_folder(root: &Path) -> Vec<(String, u64)> {
    fn walk(dir: &Path, root: &Path, out: &mut Vec<(String, u64)>) {
        use std::hash::{Hash, Hasher};
        let mut entries: Vec<_> = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().path())
            .collect();
        entries.sort();
        for path in entries {
            if path.is_dir() {
                walk(&path, root, out);
            } else {
                let name = path.strip_prefix(root).unwrap().display().to_string();
                let mut hasher = std::collections::hash_map::DefaultHasher::new();
                std::fs::read(&path).unwrap().hash(&mut hasher);
                out.push((name, hasher.finish()));
            }
        }
    }
    let mut out = Vec::new();
    walk(&root.join(".git"), root, &mut out);
    out
}

fn call(id: &str, name: &str, arguments: Value) -> Reply {
    Reply::tool(id, name, arguments.to_string())
}

/// The turn that changes four files: a new one (write_file), an existing one
/// (edit_file), one a command rewrites and a binary one it removes.
fn four_changes() -> Vec<Reply> {
    vec![
        call(
            "w",
            "write_file",
            json!({"path": "new.txt", "content": "brand new\n"}),
        ),
        call(
            "e",
            "edit_file",
            json!({"path": "edit.txt", "old_str": "two", "new_str": "TWO"}),
        ),
        call(
            "b",
            "bash",
            json!({"command": "printf 'c after\\n' > c.txt && rm gone.bin"}),
        ),
        Reply::text("done"),
    ]
}

/// A workspace in a git repository with its files committed.
fn repository(root: &Path) {
    std::fs::write(root.join("edit.txt"), "one\ntwo\n").unwrap();
    std::fs::write(root.join("c.txt"), "c before\n").unwrap();
    std::fs::write(root.join("gone.bin"), BINARY).unwrap();
    std::fs::write(root.join(".gitignore"), "ignored/\n").unwrap();
    git(root, &["init", "-q"]);
    git(
        root,
        &["-c", "user.email=t@example.com", "-c", "user.name=t", "add", "-A"],
    );
    git(
        root,
        &[
            "-c",
            "user.email=t@example.com",
            "-c",
            "user.name=t",
            "commit",
            "-qm",
            "start",
        ],
    );
}

async fn ask(agent: &mut Harness, op: Op, answer: fn(&Event) -> bool) -> Event {
    agent.send(op);
    agent.wait_for(answer).await
}

fn is_diff(event: &Event) -> bool {
    matches!(event, Event::DiffReport { .. })
}

fn is_rewind_answer(event: &Event) -> bool {
    matches!(event, Event::Rewound { .. } | Event::RewindRefused { .. })
}

fn text(old: Option<&str>, new: &str) -> Option<TextChange> {
    Some(TextChange {
        old_text: old.map(str::to_string),
        new_text: new.to_string(),
    })
}

#[tokio::test]
async fn a_turn_s_changes_are_listed_and_put_back_byte_for_byte_without_touching_git() {
    let server = ScriptedServer::start(four_changes()).await;
    let config = test_config(Provider::Anthropic, &server);
    let mut agent = Harness::start(config);
    let root = agent.workspace.path().to_path_buf();
    repository(&root);
    let git_before = git_folder(&root);

    let events = agent.turn("change four files").await;
    // What was sent: every call's result went back to the model, none an error.
    let requests = server.requests();
    assert_eq!(requests.len(), 4);
    let results: Vec<(Value, Value)> = requests[1..]
        .iter()
        .map(|request| {
            let last = request.body["messages"]
                .as_array()
                .unwrap()
                .last()
                .unwrap()
                .clone();
            let block = last["content"][0].clone();
            (block["tool_use_id"].clone(), block["is_error"].clone())
        })
        .collect();
    assert_eq!(
        results,
        vec![
            (json!("w"), json!(false)),
            (json!("e"), json!(false)),
            (json!("b"), json!(false))
        ]
    );
    // The command's changes reach the front end as the call's effects.
    let bash_effects = events.iter().find_map(|event| match event {
        Event::ToolCallFinished { id, effects, .. } if id == "b" => Some(effects.clone()),
        _ => None,
    });
    assert_eq!(
        bash_effects,
        Some(vec![
            CallEffect::FileChanged {
                path: root.join("c.txt").display().to_string(),
                change: text(Some("c before\n"), "c after\n"),
            },
            CallEffect::FileChanged {
                path: root.join("gone.bin").display().to_string(),
                change: None,
            },
        ])
    );

    let report = ask(&mut agent, Op::Diff { turn: None }, is_diff).await;
    let files = vec![
        FileDiff {
            path: "c.txt".into(),
            status: FileStatus::Modified,
            change: text(Some("c before\n"), "c after\n"),
            note: None,
            changed_outside: false,
        },
        FileDiff {
            path: "edit.txt".into(),
            status: FileStatus::Modified,
            change: text(Some("one\ntwo\n"), "one\nTWO\n"),
            note: None,
            changed_outside: false,
        },
        FileDiff {
            path: "gone.bin".into(),
            status: FileStatus::Deleted,
            change: None,
            note: Some("binary".into()),
            changed_outside: false,
        },
        FileDiff {
            path: "new.txt".into(),
            status: FileStatus::Added,
            change: text(None, "brand new\n"),
            note: None,
            changed_outside: false,
        },
    ];
    let turns = vec![TurnChanges {
        turn: 1,
        text: "change four files".into(),
        files: 4,
    }];
    assert_eq!(
        report,
        Event::DiffReport {
            turn: None,
            files: files.clone(),
            turns: turns.clone(),
        }
    );
    // The turn's own diff is the same here.
    let report = ask(&mut agent, Op::Diff { turn: Some(1) }, is_diff).await;
    assert_eq!(
        report,
        Event::DiffReport {
            turn: Some(1),
            files,
            turns
        }
    );
    // Only the changes themselves show in git.
    assert_eq!(
        git(&root, &["status", "--porcelain"]),
        " M c.txt\n M edit.txt\n D gone.bin\n?? new.txt\n"
    );

    let answer = ask(
        &mut agent,
        Op::Rewind {
            turn: 1,
            scope: RewindScope::Code,
        },
        is_rewind_answer,
    )
    .await;
    assert_eq!(
        answer,
        Event::Rewound {
            turn: 1,
            scope: RewindScope::Code,
            files: vec![
                "c.txt".into(),
                "edit.txt".into(),
                "gone.bin".into(),
                "new.txt".into()
            ],
            messages: 0,
            text: String::new(),
        }
    );
    assert_eq!(std::fs::read(root.join("edit.txt")).unwrap(), b"one\ntwo\n");
    assert_eq!(std::fs::read(root.join("c.txt")).unwrap(), b"c before\n");
    assert_eq!(std::fs::read(root.join("gone.bin")).unwrap(), BINARY);
    assert!(!root.join("new.txt").exists());
    // The workspace is as committed, and the repository's own files are as they were.
    assert_eq!(git(&root, &["status", "--porcelain"]), "");
    assert_eq!(git_folder(&root), git_before);
    // Nothing is left for the whole session's diff.
    let report = ask(&mut agent, Op::Diff { turn: None }, is_diff).await;
    assert_eq!(
        report,
        Event::DiffReport {
            turn: None,
            files: Vec::new(),
            turns: vec![TurnChanges {
                turn: 1,
                text: "change four files".into(),
                files: 4,
            }],
        }
    );
}

#[tokio::test]
async fn a_file_edited_by_hand_blocks_the_rewind_by_name_and_nothing_changes() {
    let server = ScriptedServer::start(four_changes()).await;
    let mut agent = Harness::start(test_config(Provider::Anthropic, &server));
    let root = agent.workspace.path().to_path_buf();
    repository(&root);
    agent.turn("change four files").await;
    std::fs::write(root.join("edit.txt"), "my own edit\n").unwrap();

    let report = ask(&mut agent, Op::Diff { turn: None }, is_diff).await;
    let Event::DiffReport { files, .. } = report else {
        unreachable!()
    };
    let outside: Vec<(&str, bool)> = files
        .iter()
        .map(|file| (file.path.as_str(), file.changed_outside))
        .collect();
    assert_eq!(
        outside,
        vec![
            ("c.txt", false),
            ("edit.txt", true),
            ("gone.bin", false),
            ("new.txt", false)
        ]
    );
    let answer = ask(&mut agent, Op::Undo, is_rewind_answer).await;
    assert_eq!(
        answer,
        Event::RewindRefused {
            message: "nothing was put back; changed outside miniagent since the session changed it: edit.txt"
                .into(),
            files: vec!["edit.txt".into()],
        }
    );
    // Every file is as the turn and the person left it.
    assert_eq!(std::fs::read(root.join("edit.txt")).unwrap(), b"my own edit\n");
    assert_eq!(std::fs::read(root.join("c.txt")).unwrap(), b"c after\n");
    assert!(!root.join("gone.bin").exists());
    assert_eq!(std::fs::read(root.join("new.txt")).unwrap(), b"brand new\n");
}

/// Two turns each rewrite `a.txt`; `/undo` takes back the second, then the first; after
/// a resume (a new agent on the same log, workspace and data folder) it still does.
#[tokio::test]
async fn undo_takes_back_one_turn_at_a_time_also_after_a_resume() {
    let script = |content: &str| {
        vec![
            call("w", "write_file", json!({"path": "a.txt", "content": content})),
            Reply::text("written"),
        ]
    };
    let mut replies = script("first\n");
    replies.extend(script("second\n"));
    replies.extend(script("third\n"));
    let server = ScriptedServer::start(replies).await;
    let data = TempDir::new();
    let config = test_config(Provider::Anthropic, &server);
    let registry = ToolRegistry::builtin(&config);
    let mut agent = Harness::start_in(config, session_log_in(&data), TempDir::new(), data, registry);
    let root = agent.workspace.path().to_path_buf();
    agent.turn("write first").await;
    agent.turn("write second").await;
    let undone = |turn: u32| Event::Rewound {
        turn,
        scope: RewindScope::Code,
        files: vec!["a.txt".into()],
        messages: 0,
        text: String::new(),
    };
    assert_eq!(ask(&mut agent, Op::Undo, is_rewind_answer).await, undone(2));
    assert_eq!(std::fs::read_to_string(root.join("a.txt")).unwrap(), "first\n");
    agent.turn("write third").await;
    let turn = |turn: u32, text: &str| TurnChanges {
        turn,
        text: text.into(),
        files: 1,
    };
    assert_eq!(
        ask(&mut agent, Op::Diff { turn: None }, is_diff).await,
        Event::DiffReport {
            turn: None,
            files: vec![FileDiff {
                path: "a.txt".into(),
                status: FileStatus::Added,
                change: text(None, "third\n"),
                note: None,
                changed_outside: false,
            }],
            turns: vec![
                turn(1, "write first"),
                turn(2, "write second"),
                turn(3, "write third"),
            ],
        }
    );
    agent.send(Op::Shutdown);
    agent.wait_for(|event| *event == Event::ShutdownComplete).await;

    let Harness { workspace, data, .. } = agent;
    let log = session_logs(&data).pop().expect("the session was recorded");
    // The diff was an answer about files, not recorded (each change is, once).
    let recorded = std::fs::read_to_string(&log).unwrap();
    assert!(!recorded.contains("diff_report"));
    let changes = recorded
        .lines()
        .filter(|line| line.starts_with(r#"{"kind":"file_changed""#))
        .count();
    assert_eq!(changes, 3);
    let config = test_config(Provider::Anthropic, &server);
    let registry = ToolRegistry::builtin(&config);
    let mut resumed = Harness::start_in(config, session_log_in(&data), workspace, data, registry);
    resumed.send(Op::Resume { path: log.clone() });
    resumed
        .wait_for(|event| matches!(event, Event::SessionResumed { .. }))
        .await;
    // Turn 3 is the latest in place, then turn 1 (turn 2 was taken back already).
    assert_eq!(ask(&mut resumed, Op::Undo, is_rewind_answer).await, undone(3));
    assert_eq!(std::fs::read_to_string(root.join("a.txt")).unwrap(), "first\n");
    assert_eq!(ask(&mut resumed, Op::Undo, is_rewind_answer).await, undone(1));
    assert!(!root.join("a.txt").exists());
    assert_eq!(
        ask(&mut resumed, Op::Undo, is_rewind_answer).await,
        Event::RewindRefused {
            message: "there are no file changes of this session to take back".into(),
            files: Vec::new(),
        }
    );
    // What was sent: three turns, each one write.
    assert_eq!(server.requests().len(), 6);
    // Removing the session removes what it kept.
    let kept = resumed.data.join("checkpoints").join(log.file_stem().unwrap());
    assert!(kept.is_dir());
    resumed.send(Op::Shutdown);
    resumed.wait_for(|event| *event == Event::ShutdownComplete).await;
    drop(resumed.handle);
    let removed = miniagent_core::session::store::remove(&log).expect("removed");
    assert!(removed.contains(&kept), "{removed:?}");
    assert!(!kept.exists());
}

/// The real binary: `exec` runs a command that changes a file; what it replaced is kept in
/// the data folder's `checkpoints/<id>/` (private), never in the workspace, recorded in
/// the log; `sessions rm` removes it with the session.
#[test]
fn the_binary_keeps_checkpoints_in_the_data_folder_and_sessions_rm_removes_them() {
    use std::os::unix::fs::PermissionsExt;
    let server = ScriptedServer::start_blocking(vec![
        call("b", "bash", json!({"command": "printf 'new\\n' > a.txt"})),
        Reply::text("done"),
    ]);
    let (home, workspace) = (TempDir::new(), TempDir::new());
    std::fs::write(workspace.join("a.txt"), "old\n").unwrap();
    let out = support::cli::exec(&home, &workspace, &server, &["change a.txt"]);
    assert_eq!(out.status.code(), Some(0), "{}", support::cli::text(&out.stderr));
    // What was sent: the command's result went back to the model.
    let last = server.requests().last().unwrap().body["messages"].clone();
    let results = last.as_array().unwrap().last().unwrap()["content"][0]["tool_use_id"].clone();
    assert_eq!(results, json!("b"));

    let log = session_logs(&home).pop().expect("recorded");
    let id = support::cli::session_id(&log);
    let kept = home.join("checkpoints").join(&id);
    let mode = |path: &Path| std::fs::metadata(path).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode(&kept), 0o700);
    let mut stored: Vec<(u32, Vec<u8>)> = std::fs::read_dir(&kept)
        .unwrap()
        .map(|entry| {
            let path = entry.unwrap().path();
            (mode(&path), std::fs::read(&path).unwrap())
        })
        .collect();
    stored.sort();
    assert_eq!(
        stored,
        vec![(0o600, b"new\n".to_vec()), (0o600, b"old\n".to_vec())]
    );
    // The workspace holds only the change itself.
    let names: Vec<String> = std::fs::read_dir(workspace.path())
        .unwrap()
        .map(|entry| entry.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(names, vec!["a.txt".to_string()]);
    let recorded: Vec<Value> = std::fs::read_to_string(&log)
        .unwrap()
        .lines()
        .map(|line| serde_json::from_str::<Value>(line).unwrap())
        .filter(|record| record["kind"] == "file_changed")
        .map(|record| {
            let change = &record["change"];
            json!([
                change["turn"],
                change["call"],
                change["path"],
                change["before"]["state"],
                change["after"]["state"]
            ])
        })
        .collect();
    assert_eq!(recorded, vec![json!([1, "b", "a.txt", "kept", "kept"])]);

    let removed = support::cli::miniagent(&home)
        .args(["sessions", "rm", &id])
        .output()
        .unwrap();
    assert_eq!(
        removed.status.code(),
        Some(0),
        "{}",
        support::cli::text(&removed.stderr)
    );
    assert!(!kept.exists());
}

/// A sub-agent's calls run through the same path: what its command changes is kept as
/// the parent's turn's, listed by `/diff` and taken back by `/undo`.
#[tokio::test]
async fn a_sub_agent_s_changes_count_as_its_parent_s_turn() {
    let server = ScriptedServer::start(vec![
        call(
            "d",
            "delegate",
            json!({"task": "rewrite notes.txt", "tools": ["bash"]}),
        ),
        call(
            "s",
            "bash",
            json!({"command": "printf 'by the sub-agent\\n' > notes.txt"}),
        ),
        Reply::text("rewritten"),
        Reply::text("the sub-agent rewrote it"),
    ])
    .await;
    let mut agent = Harness::start(test_config(Provider::Anthropic, &server));
    let root = agent.workspace.path().to_path_buf();
    std::fs::write(root.join("notes.txt"), "mine\n").unwrap();
    agent.turn("have notes.txt rewritten").await;
    // What was sent: the sub-agent's request carried its task, and its command ran.
    let requests = server.requests();
    assert_eq!(requests.len(), 4);
    let sub_result = requests[2].body["messages"].as_array().unwrap().last().unwrap()["content"][0].clone();
    assert_eq!(sub_result["tool_use_id"], json!("s"));
    assert_eq!(sub_result["is_error"], json!(false));

    assert_eq!(
        ask(&mut agent, Op::Diff { turn: None }, is_diff).await,
        Event::DiffReport {
            turn: None,
            files: vec![FileDiff {
                path: "notes.txt".into(),
                status: FileStatus::Modified,
                change: text(Some("mine\n"), "by the sub-agent\n"),
                note: None,
                changed_outside: false,
            }],
            turns: vec![TurnChanges {
                turn: 1,
                text: "have notes.txt rewritten".into(),
                files: 1,
            }],
        }
    );
    assert_eq!(
        ask(&mut agent, Op::Undo, is_rewind_answer).await,
        Event::Rewound {
            turn: 1,
            scope: RewindScope::Code,
            files: vec!["notes.txt".into()],
            messages: 0,
            text: String::new(),
        }
    );
    assert_eq!(std::fs::read_to_string(root.join("notes.txt")).unwrap(), "mine\n");
}

/// A log from outside the person's sessions folder (one a repository ships) brings no
/// changes to take back: it could claim it made any file, which `/undo` would remove.
#[tokio::test]
async fn a_foreign_log_s_changes_are_not_taken_back() {
    let server = ScriptedServer::start(vec![
        call("w", "write_file", json!({"path": "a.txt", "content": "made\n"})),
        Reply::text("written"),
    ])
    .await;
    let data = TempDir::new();
    let config = test_config(Provider::Anthropic, &server);
    let registry = ToolRegistry::builtin(&config);
    let mut agent = Harness::start_in(config, session_log_in(&data), TempDir::new(), data, registry);
    agent.turn("write a").await;
    agent.send(Op::Shutdown);
    agent.wait_for(|event| *event == Event::ShutdownComplete).await;
    let Harness { workspace, data, .. } = agent;
    let root = workspace.path().to_path_buf();
    // The log, shipped in the workspace, is resumed by someone else.
    let shipped = root.join("shipped.jsonl");
    std::fs::copy(session_logs(&data).pop().expect("recorded"), &shipped).unwrap();
    let (other, config) = (TempDir::new(), test_config(Provider::Anthropic, &server));
    let registry = ToolRegistry::builtin(&config);
    let mut resumed = Harness::start_in(config, session_log_in(&other), workspace, other, registry);
    resumed.send(Op::Resume {
        path: shipped.clone(),
    });
    let said = resumed
        .wait_for(|event| matches!(event, Event::Notice { message } if message.contains("file changes")))
        .await;
    assert_eq!(
        said,
        Event::Notice {
            message: format!(
                "{} is not one of your recorded sessions, so the file changes it records cannot be taken back here (/undo and /rewind start from this point)",
                shipped.display()
            )
        }
    );
    assert_eq!(
        ask(&mut resumed, Op::Undo, is_rewind_answer).await,
        Event::RewindRefused {
            message: "there are no file changes of this session to take back".into(),
            files: Vec::new(),
        }
    );
    assert_eq!(std::fs::read_to_string(root.join("a.txt")).unwrap(), "made\n");
}

/// An undo is in the session log as soon as it is answered (not at the next turn or at
/// the end): a process killed right after still says what was put back.
#[tokio::test]
async fn an_undo_is_written_to_the_log_at_once() {
    let server = ScriptedServer::start(vec![
        call("w", "write_file", json!({"path": "a.txt", "content": "made\n"})),
        Reply::text("written"),
    ])
    .await;
    let data = TempDir::new();
    let config = test_config(Provider::Anthropic, &server);
    let registry = ToolRegistry::builtin(&config);
    let mut agent = Harness::start_in(config, session_log_in(&data), TempDir::new(), data, registry);
    agent.turn("write a").await;
    assert!(matches!(
        ask(&mut agent, Op::Undo, is_rewind_answer).await,
        Event::Rewound { .. }
    ));
    let log = session_logs(&agent.data).pop().expect("recorded");
    let written = std::fs::read_to_string(&log).unwrap();
    assert!(written.contains(r#""type":"rewound""#), "{written}");
    assert!(written.contains(r#"{"kind":"code_restored""#), "{written}");
}
