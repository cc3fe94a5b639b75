//! Commands that misbehave, end to end through the agent loop against the scripted model
//! server: one that ignores SIGTERM, one that forks daemons out of its process group, one
//! that prints 100 MB, one that reads stdin, one that never ends. Each call ends within
//! its timeout, nothing it started survives, and the agent goes on: the next call runs
//! and the turn completes. Each command carries a unique marker (`sleep 97.xx`) so the
//! test can look for survivors in /proc.
#![allow(clippy::unwrap_used, clippy::expect_used)] // A test fails by panicking.

use crate::support;

use std::time::{Duration, Instant};

use miniagent_core::config::Provider;
use miniagent_protocol::Event;
use pretty_assertions::assert_eq;
use serde_json::{Value, json};
use support::harness::{Harness, test_config};
use support::*;

/// What the model received for one call: (content, is_error).
type Received = (String, bool);

/// Runs `calls` (one model step each, then a harmless `echo after`) in a full-auto
/// session; returns what the model received for each, the turn's duration and the agent.
async fn run_calls(calls: &[Value]) -> (Vec<Received>, Duration, Harness, ScriptedServer) {
    let mut script: Vec<Reply> = calls
        .iter()
        .chain(std::iter::once(&json!({"command": "echo after"})))
        .enumerate()
        .map(|(i, args)| Reply::tool(format!("toolu_{i}"), "bash", args.to_string()))
        .collect();
    script.push(Reply::text("done"));
    let server = ScriptedServer::start(script).await;
    let mut agent = Harness::start(test_config(Provider::Anthropic, &server));
    let started = Instant::now();
    let events = agent.turn("misbehave").await;
    let elapsed = started.elapsed();
    assert_eq!(
        events.last(),
        Some(&Event::TurnComplete { text: "done".into() }),
        "the turn did not complete"
    );
    let mut received = tool_results(&server);
    assert_eq!(
        received.pop(),
        Some(("after\n[exit code: 0]".to_string(), false)),
        "the agent did not go on"
    );
    (received, elapsed, agent, server)
}

/// Every tool result the model received, in order.
fn tool_results(server: &ScriptedServer) -> Vec<Received> {
    server
        .requests()
        .iter()
        .filter_map(|request| {
            let last = request.body["messages"].as_array()?.last()?.clone();
            let block = &last["content"][0];
            (block["type"] == "tool_result").then(|| {
                (
                    block["content"].as_str().unwrap_or_default().to_string(),
                    block["is_error"].as_bool().unwrap_or_default(),
                )
            })
        })
        .collect()
}

/// Live (non-zombie) processes whose command line contains `marker`.
fn processes_with(marker: &str) -> Vec<String> {
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    entries
        .flatten()
        .filter(|entry| {
            entry
                .file_name()
                .to_string_lossy()
                .chars()
                .all(|c| c.is_ascii_digit())
        })
        .filter_map(|entry| {
            // A zombie's command line reads as empty.
            let cmdline = std::fs::read(entry.path().join("cmdline")).ok()?;
            let cmdline = String::from_utf8_lossy(&cmdline).replace('\0', " ");
            cmdline
                .contains(marker)
                .then(|| format!("{}: {cmdline}", entry.file_name().to_string_lossy()))
        })
        .collect()
}

/// Waits up to `within` for every process with one of `markers` to be gone.
async fn assert_gone(markers: &[&str], within: Duration) {
    let deadline = Instant::now() + within;
    loop {
        let left: Vec<String> = markers.iter().flat_map(|m| processes_with(m)).collect();
        if left.is_empty() {
            return;
        }
        assert!(Instant::now() < deadline, "still running: {left:?}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

#[tokio::test]
async fn a_command_ignoring_sigterm_is_killed_after_the_grace_period() {
    let (received, elapsed, _agent, _server) = run_calls(&[json!({
        "command": "trap '' TERM; echo started; sleep 97.31; echo never",
        "timeout": 1,
    })])
    .await;
    let (content, is_error) = &received[0];
    assert!(is_error);
    assert!(
        content.starts_with("started\n[timed out after 1 s ("),
        "{content}"
    );
    assert!(
        content.ends_with("s elapsed); the command and its children were killed]"),
        "{content}"
    );
    // TERM was ignored: the KILL came after the 2 s grace, and not much later.
    assert!(
        elapsed >= Duration::from_millis(2900) && elapsed < Duration::from_secs(6),
        "took {elapsed:?}"
    );
    assert_gone(&["sleep 97.31"], Duration::from_secs(1)).await;
}

#[tokio::test]
async fn daemons_that_leave_the_process_group_are_killed_with_the_command() {
    // Three ways out of the group: setsid with its output closed, a subshell running
    // setsid that keeps the output pipe open, and nohup + disown. The first one writes its
    // pid and says whether it really left the group.
    let command = "setsid bash -c 'echo $$ > daemon.pid; exec sleep 97.32' > /dev/null 2>&1 &
        (setsid bash -c 'sleep 97.33' &)
        nohup sleep 97.34 > /dev/null 2>&1 & disown
        while [ ! -s daemon.pid ]; do sleep 0.02; done
        daemon=$(cat daemon.pid)
        [ \"$(cut -d' ' -f5 /proc/$daemon/stat)\" != \"$(cut -d' ' -f5 /proc/$$/stat)\" ] && echo escaped
        echo spawned";
    let (received, elapsed, agent, _server) = run_calls(&[json!({"command": command, "timeout": 30})]).await;
    assert_eq!(
        received[0],
        ("escaped\nspawned\n[exit code: 0]".to_string(), false)
    );
    assert!(elapsed < Duration::from_secs(8), "took {elapsed:?}");
    assert_gone(
        &["sleep 97.32", "sleep 97.33", "sleep 97.34"],
        Duration::from_secs(2),
    )
    .await;
    let pid = std::fs::read_to_string(agent.workspace.join("daemon.pid")).unwrap();
    let state = std::fs::read_to_string(format!("/proc/{}/status", pid.trim())).unwrap_or_default();
    assert!(
        state.is_empty() || state.contains("State:\tZ"),
        "the daemon {pid} lives on: {state}"
    );
}

#[tokio::test]
async fn cleaning_up_after_a_command_spares_background_jobs() {
    let server = ScriptedServer::start(vec![
        Reply::tool(
            "toolu_0",
            "bash",
            json!({"command": "exec sleep 97.35", "run_in_background": true}).to_string(),
        ),
        Reply::tool(
            "toolu_1",
            "bash",
            json!({"command": "setsid sleep 97.36 > /dev/null 2>&1 & echo left"}).to_string(),
        ),
        Reply::text("done"),
        Reply::tool("toolu_2", "bash_kill", json!({"bash_id": "bash_1"}).to_string()),
        Reply::text("killed"),
    ])
    .await;
    let mut agent = Harness::start(test_config(Provider::Anthropic, &server));
    let events = agent.turn("start a job, then leave a daemon").await;
    assert_eq!(events.last(), Some(&Event::TurnComplete { text: "done".into() }));
    assert_eq!(
        tool_results(&server)[1],
        ("left\n[exit code: 0]".to_string(), false)
    );
    assert_gone(&["sleep 97.36"], Duration::from_secs(2)).await;
    assert_eq!(
        processes_with("sleep 97.35").len(),
        1,
        "the background job died with another command's leftovers"
    );
    let events = agent.turn("stop the job").await;
    assert_eq!(
        events.last(),
        Some(&Event::TurnComplete {
            text: "killed".into()
        })
    );
    assert_eq!(
        tool_results(&server)[2],
        (
            "[job bash_1: killed (signal 15)]\n(no new output)".to_string(),
            false
        )
    );
    assert_gone(&["sleep 97.35"], Duration::from_secs(2)).await;
}

#[tokio::test]
async fn a_hundred_megabytes_of_output_reach_the_model_capped() {
    let (received, elapsed, agent, _server) = run_calls(&[json!({
        "command": "head -c 100000000 /dev/zero | tr '\\0' 'a'; echo; echo the-end",
        "timeout": 60,
    })])
    .await;
    let (content, is_error) = &received[0];
    assert!(!is_error, "{}", &content[content.len().saturating_sub(200)..]);
    // The model gets the ends of what was saved: its first 64 MB, then its last 64 KB.
    assert!(content.len() < 3_000, "{} bytes reached the model", content.len());
    assert!(
        content.starts_with("[the result was 1000001")
            && content.contains("the middle was not kept) are saved in "),
        "the preview says what was not kept: {}",
        &content[..300]
    );
    assert!(content.contains("\naaaa"));
    assert!(content.ends_with("aaaa\nthe-end\n[exit code: 0]"));
    let saved = agent.data.join("results/unrecorded/toolu_0.txt");
    let size = std::fs::metadata(&saved).unwrap().len();
    assert!(
        (64 << 20) + (64 << 10) < size && size < (64 << 20) + (64 << 10) + 1000,
        "{size} bytes saved"
    );
    assert!(elapsed < Duration::from_secs(60), "took {elapsed:?}");
    let streamed: usize = agent
        .events
        .iter()
        .filter_map(|e| match e {
            Event::ToolOutputDelta { id, delta } if id == "toolu_0" => Some(delta.len()),
            _ => None,
        })
        .sum();
    assert_eq!(streamed, 100_000_000 + 1 + "the-end\n".len());
}

#[tokio::test]
async fn a_command_reading_stdin_gets_end_of_file_at_once() {
    let (received, elapsed, _agent, _server) = run_calls(&[json!({
        "command": "cat; read -r line || echo \"eof after ${#line} bytes\"; head -c 10 | wc -c",
        "timeout": 30,
    })])
    .await;
    assert_eq!(
        received[0],
        ("eof after 0 bytes\n0\n[exit code: 0]".to_string(), false)
    );
    assert!(elapsed < Duration::from_secs(5), "took {elapsed:?}");
}

#[tokio::test]
async fn a_command_that_never_ends_is_stopped_at_its_timeout() {
    let (received, elapsed, _agent, _server) = run_calls(&[json!({
        "command": "echo begun; sleep 97.37 & while :; do :; done",
        "timeout": 1,
    })])
    .await;
    let (content, is_error) = &received[0];
    assert!(is_error);
    assert!(content.starts_with("begun\n[timed out after 1 s ("), "{content}");
    assert!(elapsed < Duration::from_secs(4), "took {elapsed:?}");
    assert_gone(&["sleep 97.37", "while :; do :; done"], Duration::from_secs(1)).await;
}
