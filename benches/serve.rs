//! `miniagent serve` under many sessions at once: one server, 50 sessions created over
//! HTTP, then rounds in which every session runs a turn at the same time (50 prompts
//! streamed as SSE at once) against the scripted model server. The server's resident
//! memory (VmRSS, and its peak VmHWM, from /proc) is read when it starts, after the
//! sessions open, and after each round. Budget: the 50 open sessions add at most 64 MB,
//! and memory stays flat once they ran (each round after the second adds at most 2 MB:
//! events are kept in a bounded ring per session).
//!
//! `cargo bench --bench serve` (`MINIAGENT_SERVE_SESSIONS`, `MINIAGENT_SERVE_ROUNDS`
//! change the figures). Run any other way, 5 sessions and 2 rounds check that it works.
#![allow(clippy::unwrap_used, clippy::expect_used)] // A bench fails by panicking.

#[path = "../tests/support/mod.rs"]
mod support;

use std::io::{BufRead, BufReader};
use std::process::{Child, Stdio};
use std::time::{Duration, Instant};

use eventsource_stream::Eventsource;
use futures_util::StreamExt;
use serde_json::{Value, json};

use support::cli::against;
use support::{Reply, ScriptedServer, TempDir, Turn};

/// Events each session keeps for reconnecting clients (`serve.events_kept`).
const EVENTS_KEPT: usize = 256;
/// What the 50 open sessions may add to the server's memory.
const SESSIONS_BUDGET_MB: f64 = 64.0;
/// What one more round of turns may add once every session ran two.
const ROUND_BUDGET_MB: f64 = 2.0;

/// The server's resident memory now and at its peak, in MB.
fn memory(pid: u32) -> (f64, f64) {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).expect("the server's status");
    let field = |name: &str| {
        status
            .lines()
            .find_map(|line| line.strip_prefix(name))
            .and_then(|rest| rest.split_whitespace().next())
            .and_then(|kb| kb.parse::<f64>().ok())
            .map_or(0.0, |kb| kb / 1024.0)
    };
    (field("VmRSS:"), field("VmHWM:"))
}

struct Server {
    child: Child,
    base: String,
    token: String,
    client: reqwest::Client,
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn start(home: &TempDir, root: &TempDir, model: &ScriptedServer) -> Server {
    let mut command = against(home, root, model);
    command
        .arg("serve")
        .args(["--bind", "127.0.0.1:0"])
        .stdout(Stdio::piped())
        .stderr(Stdio::null());
    let mut child = command.spawn().expect("miniagent serve starts");
    let mut lines = BufReader::new(child.stdout.take().expect("stdout"));
    let (mut first, mut second) = (String::new(), String::new());
    lines.read_line(&mut first).expect("the address line");
    lines.read_line(&mut second).expect("the token line");
    let base = first
        .trim()
        .strip_prefix("miniagent serve: listening on ")
        .expect("the address")
        .to_string();
    let token = second
        .trim()
        .strip_prefix("token: ")
        .expect("the token")
        .to_string();
    Server {
        child,
        base,
        token,
        client: reqwest::Client::new(),
    }
}

/// Runs one turn in session `id` and reads its stream to the end; the events received.
async fn turn(server: &Server, id: &str) -> usize {
    let response = server
        .client
        .post(format!("{}/api/v1/prompt", server.base))
        .bearer_auth(&server.token)
        .json(&json!({"session_id": id, "message": "tell me about this folder"}))
        .send()
        .await
        .expect("the prompt is sent");
    assert_eq!(response.status(), 200);
    let mut events = response.bytes_stream().eventsource();
    let mut count = 0;
    let mut last = String::new();
    while let Some(event) = events.next().await {
        let event = event.expect("a well-formed event");
        count += 1;
        last = event.event;
    }
    assert_eq!(last, "turn_complete", "the turn ended");
    count
}

fn main() {
    let benching = std::env::args().any(|a| a == "--bench");
    let number = |name: &str, default: usize| {
        std::env::var(name)
            .ok()
            .and_then(|v| v.parse().ok())
            .unwrap_or(default)
    };
    let sessions = number("MINIAGENT_SERVE_SESSIONS", if benching { 50 } else { 5 }).max(1);
    let rounds = number("MINIAGENT_SERVE_ROUNDS", if benching { 6 } else { 2 }).max(2);
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("a tokio runtime");
    runtime.block_on(async {
        // A reply of some substance: 40 text deltas and usage, for each turn.
        let reply = Turn::text("This folder holds a small project. ".repeat(40)).usage(1200, 300);
        let model = ScriptedServer::start((0..sessions * rounds).map(|_| Reply::Stream(reply.clone())).collect()).await;
        let (home, root) = (TempDir::new(), TempDir::new());
        // Each turn is 180 events: with 256 kept, every ring is full after two rounds,
        // so what a later round adds is what is not bounded.
        std::fs::write(home.join("config.toml"), format!("[serve]\nevents_kept = {EVENTS_KEPT}\n")).unwrap();
        let server = start(&home, &root, &model);
        let pid = server.child.id();
        let (idle, _) = memory(pid);
        let started = Instant::now();
        let mut ids = Vec::new();
        for n in 0..sessions {
            let folder = root.join(format!("project-{n}"));
            std::fs::create_dir_all(&folder).unwrap();
            let created: Value = server
                .client
                .post(format!("{}/api/v1/sessions", server.base))
                .bearer_auth(&server.token)
                .json(&json!({"workspace": folder}))
                .send()
                .await
                .unwrap()
                .json()
                .await
                .unwrap();
            ids.push(created["session_id"].as_str().expect("a session id").to_string());
        }
        tokio::time::sleep(Duration::from_millis(500)).await;
        let (open, _) = memory(pid);
        println!(
            "serve: started {:.1} MB; {sessions} sessions open {:.1} MB (+{:.1} MB, budget {SESSIONS_BUDGET_MB} MB) in {:.2} s",
            idle,
            open,
            open - idle,
            started.elapsed().as_secs_f64()
        );
        let mut after = Vec::new();
        for round in 1..=rounds {
            let began = Instant::now();
            let counts = futures_util::future::join_all(ids.iter().map(|id| turn(&server, id))).await;
            let (rss, peak) = memory(pid);
            println!(
                "serve: round {round}: {sessions} turns at once in {:.2} s ({} events), RSS {rss:.1} MB, peak {peak:.1} MB",
                began.elapsed().as_secs_f64(),
                counts.iter().sum::<usize>(),
            );
            after.push(rss);
        }
        assert_eq!(model.requests().len(), sessions * rounds, "every turn reached the model");
        let per_round = (after[after.len() - 1] - after[1]) / (after.len() - 2).max(1) as f64;
        let (_, peak) = memory(pid);
        let verdict = |ok: bool| if ok { "ok" } else { "OVER" };
        println!(
            "serve: {sessions} sessions × {rounds} rounds: peak RSS {peak:.1} MB; open sessions +{:.1} MB ({}); after round 2, {per_round:+.2} MB per round (budget {ROUND_BUDGET_MB} MB: {})",
            open - idle,
            verdict(open - idle <= SESSIONS_BUDGET_MB),
            verdict(per_round <= ROUND_BUDGET_MB),
        );
    });
}
