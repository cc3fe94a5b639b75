//! The Landlock sandbox around `bash`, end to end through the agent loop against the
//! scripted model server: writes outside the workspace and the temp dir are refused with a
//! hint the model can act on, writes inside work, full-auto with the sandbox off writes
//! anywhere, and the state reaches `session_configured`, the title bar and exec's first
//! line. Where the kernel has no Landlock, the tests that need it skip ([`skip`]).
#![allow(clippy::unwrap_used, clippy::expect_used)] // A test fails by panicking.

use crate::support;

use std::path::{Path, PathBuf};

use miniagent_core::config::{ApprovalMode, Config, Provider};
use miniagent_core::tools::sandbox::{self, SandboxSetting};
use miniagent_protocol::{Decision, Event, Op, SandboxState};
use pretty_assertions::assert_eq;
use serde_json::{Value, json};
use support::harness::{Harness, is_turn_end, test_config};
use support::skip;
use support::*;

/// The kernel's Landlock ABI, or `None` after the skip is reported ([`skip`]).
fn landlock() -> Option<u32> {
    skip::needs("landlock", sandbox::kernel_abi().as_ref().map(|abi| *abi))
}

/// A path outside both the workspace and the temp dir that the test user may write
/// (the build tree, else the home folder), removed now and when dropped.
struct Probe(PathBuf);

/// A writable folder outside the temp dir, or `None` after the skip is reported (a
/// checkout and home both under /tmp, say).
fn probe_dir() -> Option<PathBuf> {
    let temp = std::env::temp_dir();
    let candidates = [
        Some(PathBuf::from(env!("CARGO_TARGET_TMPDIR"))),
        std::env::var_os("HOME").map(PathBuf::from),
    ];
    let found = candidates.into_iter().flatten().find(|dir| {
        !dir.starts_with(&temp)
            && !dir.starts_with("/dev/shm")
            && std::fs::create_dir_all(dir).is_ok()
            && tempfile_works(dir)
    });
    if found.is_none() {
        skip::missing(
            "outside-folder",
            format!("no writable folder outside {} to probe", temp.display()),
        );
    }
    found
}

fn tempfile_works(dir: &Path) -> bool {
    let path = dir.join(format!(".miniagent-probe-check-{}", std::process::id()));
    let ok = std::fs::write(&path, b"x").is_ok();
    let _ = std::fs::remove_file(&path);
    ok
}

impl Probe {
    fn new(dir: &Path, name: &str) -> Probe {
        let path = dir.join(format!("miniagent-sandbox-probe-{name}-{}", std::process::id()));
        let _ = std::fs::remove_file(&path);
        Probe(path)
    }

    fn shown(&self) -> String {
        self.0.display().to_string()
    }
}

impl Drop for Probe {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
    }
}

/// What the model received for each tool call, in order: (content, is_error).
fn received(server: &ScriptedServer) -> Vec<(String, bool)> {
    server
        .requests()
        .iter()
        .filter(|request| {
            let last = request.body["messages"].as_array().unwrap().last().unwrap();
            last["content"][0]["type"] == "tool_result"
        })
        .map(|request| {
            let last = request.body["messages"]
                .as_array()
                .unwrap()
                .last()
                .unwrap()
                .clone();
            let block = &last["content"][0];
            (
                block["content"].as_str().unwrap().to_string(),
                block["is_error"].as_bool().unwrap(),
            )
        })
        .collect()
}

/// Runs one turn, approving every call that asks; returns the turn's events.
async fn turn_approving(agent: &mut Harness, prompt: &str) -> Vec<Event> {
    let start = agent.events.len();
    agent.send(Op::UserInput {
        text: prompt.to_string(),
    });
    loop {
        let event = agent.next().await;
        if let Event::ApprovalRequested { id, .. } = &event {
            agent.send(Op::Approval {
                id: id.clone(),
                decision: Decision::Approve,
            });
        }
        if is_turn_end(&event) {
            break;
        }
    }
    agent.events[start..].to_vec()
}

fn bash(command: &str) -> Value {
    json!({ "command": command })
}

fn config_for(server: &ScriptedServer, mode: ApprovalMode, setting: SandboxSetting) -> Config {
    let mut config = test_config(Provider::Anthropic, server);
    config.agent.approval = mode;
    config.tools.bash.sandbox = setting;
    config
}

/// A session in `mode` whose model makes `calls` (one step each), then says "done".
async fn start(
    mode: ApprovalMode,
    setting: SandboxSetting,
    calls: Vec<(&str, Value)>,
) -> (Harness, ScriptedServer) {
    let mut replies: Vec<Reply> = calls
        .iter()
        .enumerate()
        .map(|(i, (name, args))| Reply::tool(format!("toolu_{i}"), *name, args.to_string()))
        .collect();
    replies.push(Reply::text("done"));
    let server = ScriptedServer::start(replies).await;
    let agent = Harness::start(config_for(&server, mode, setting));
    (agent, server)
}

#[tokio::test]
async fn writes_outside_the_workspace_and_the_temp_dir_are_refused_with_a_hint() {
    let Some(abi) = landlock() else { return };
    let Some(dir) = probe_dir() else { return };
    println!("Landlock ABI {abi}");
    let outside = Probe::new(&dir, "auto-edit");
    let outside_job = Probe::new(&dir, "auto-edit-job");
    let (mut agent, server) = start(
        ApprovalMode::AutoEdit,
        SandboxSetting::Auto,
        vec![
            ("bash", bash(&format!("echo x > '{}'", outside.shown()))),
            (
                "bash",
                bash("echo inside > inside.txt && mkdir -p d/e && mv inside.txt d/e/ && cat d/e/inside.txt"),
            ),
            (
                "bash",
                bash("f=$(mktemp) && echo tmp > \"$f\" && cat \"$f\" && rm \"$f\""),
            ),
            (
                "bash",
                bash("echo quiet > /dev/null && echo to-stderr > /dev/stderr && echo ok"),
            ),
            (
                "bash",
                json!({"command": format!("echo x > '{}'", outside_job.shown()), "run_in_background": true}),
            ),
            ("bash", bash("sleep 0.5")),
            ("bash_output", json!({"bash_id": "bash_1"})),
        ],
    )
    .await;
    let events = turn_approving(&mut agent, "write files").await;
    assert_eq!(events.last(), Some(&Event::TurnComplete { text: "done".into() }));
    let Some(Event::SessionConfigured { sandbox, .. }) = agent.events.first() else {
        panic!("no session_configured first: {:#?}", agent.events);
    };
    assert_eq!(sandbox, &SandboxState::Enforced);

    let workspace = agent.workspace.path().display().to_string();
    let temp = std::env::temp_dir().display().to_string();
    let received = received(&server);
    assert_eq!(
        received[0],
        (
            format!(
                "[stderr]\nbash: line 1: {0}: Permission denied\n[exit code: 1]\n\
                 [sandbox: writes are allowed only under {workspace} and {temp}; this command tried to write elsewhere ({0})]",
                outside.shown()
            ),
            true
        )
    );
    assert!(
        !outside.0.exists(),
        "the sandbox let {} be written",
        outside.shown()
    );
    assert_eq!(received[1], ("inside\n[exit code: 0]".to_string(), false));
    assert!(agent.workspace.join("d/e/inside.txt").exists());
    assert_eq!(received[2], ("tmp\n[exit code: 0]".to_string(), false));
    assert_eq!(
        received[3],
        ("ok\n[stderr]\nto-stderr\n[exit code: 0]".to_string(), false)
    );
    assert_eq!(
        received[6],
        (
            format!(
                "[job bash_1: exited 1]\nbash: line 1: {}: Permission denied",
                outside_job.shown()
            ),
            false
        )
    );
    assert!(!outside_job.0.exists());
}

#[tokio::test]
async fn full_auto_with_the_sandbox_off_writes_anywhere_until_the_mode_changes() {
    let Some(_) = landlock() else { return };
    let Some(dir) = probe_dir() else { return };
    let first = Probe::new(&dir, "off-full-auto");
    let second = Probe::new(&dir, "off-ask");
    let (mut agent, server) = start(
        ApprovalMode::FullAuto,
        SandboxSetting::Off,
        vec![(
            "bash",
            bash(&format!("echo x > '{}' && cat '{0}'", first.shown())),
        )],
    )
    .await;
    let events = agent.turn("write outside").await;
    assert_eq!(events.last(), Some(&Event::TurnComplete { text: "done".into() }));
    let Some(Event::SessionConfigured { sandbox, .. }) = agent.events.first() else {
        panic!("no session_configured first");
    };
    assert_eq!(sandbox, &SandboxState::Off);
    assert_eq!(received(&server)[0], ("x\n[exit code: 0]".to_string(), false));
    assert!(first.0.exists());

    // The mode is read when each call starts: in ask mode the same setting sandboxes.
    agent.send(Op::SetApprovalMode {
        mode: ApprovalMode::Ask,
    });
    agent
        .wait_for(|e| matches!(e, Event::ApprovalModeChanged { .. }))
        .await;
    server.push(Reply::tool(
        "toolu_9",
        "bash",
        bash(&format!("echo x > '{}'", second.shown())).to_string(),
    ));
    server.push(Reply::text("done again"));
    let events = turn_approving(&mut agent, "write outside again").await;
    assert_eq!(
        events.last(),
        Some(&Event::TurnComplete {
            text: "done again".into()
        })
    );
    let (content, is_error) = received(&server).pop().unwrap();
    assert!(is_error);
    assert!(
        content.contains("[sandbox: writes are allowed only under"),
        "{content}"
    );
    assert!(!second.0.exists());
}

#[test]
fn the_cli_flag_sets_the_sandbox_and_exec_reports_it() {
    let Some(_) = landlock() else { return };
    let Some(dir) = probe_dir() else { return };
    let run = |flag: &[&str], probe: &Probe| {
        let server = ScriptedServer::start_blocking(vec![
            Reply::tool(
                "t1",
                "bash",
                bash(&format!("echo x > '{}'", probe.shown())).to_string(),
            ),
            Reply::text("done"),
        ]);
        let (home, workspace) = (TempDir::new(), TempDir::new());
        let output = support::cli::exec(&home, &workspace, &server, &[flag, &["write"]].concat());
        let stderr = support::cli::text(&output.stderr);
        assert_eq!(output.status.code(), Some(0), "{stderr}");
        stderr.lines().next().unwrap_or_default().to_string()
    };
    let sandboxed = Probe::new(&dir, "exec-on");
    let first_line = run(&["--sandbox", "on"], &sandboxed);
    assert!(first_line.ends_with(" · sandbox ✓"), "{first_line}");
    assert!(!sandboxed.0.exists());
    let free = Probe::new(&dir, "exec-off");
    let first_line = run(&["--sandbox", "off"], &free);
    assert!(first_line.ends_with(" · no sandbox in full-auto"), "{first_line}");
    assert!(free.0.exists());
}

#[test]
fn the_config_key_and_the_flag_layer_like_the_others() {
    let dir = TempDir::new();
    let file = dir.write("c.toml", "[tools.bash]\nsandbox = \"off\"\n");
    let load = |file: Option<PathBuf>, sandbox: Option<SandboxSetting>| {
        miniagent_core::config::load(&miniagent_core::config::LoadOptions {
            config_dir: None,
            config_file: file,
            overrides: miniagent_core::config::Overrides {
                sandbox,
                ..Default::default()
            },
            env: &miniagent_core::config::Env::empty(),
        })
        .map(|config| config.tools.bash.sandbox)
    };
    assert_eq!(load(None, None), Ok(SandboxSetting::Auto));
    assert_eq!(load(Some(file.clone()), None), Ok(SandboxSetting::Off));
    assert_eq!(
        load(Some(file), Some(SandboxSetting::Auto)),
        Ok(SandboxSetting::Auto)
    );
    let bad = dir.write("bad.toml", "[tools.bash]\nsandbox = \"sometimes\"\n");
    let err = load(Some(bad), None).unwrap_err().0;
    assert!(
        err.contains("key `tools.bash.sandbox`: unknown variant `sometimes`"),
        "{err}"
    );
}
