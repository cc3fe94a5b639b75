//! The soak test, run by hand (it takes minutes):
//! `cargo test --release --test all soak:: -- --ignored --nocapture`.
//!
//! 1,000 scripted steps (turns of ten tool calls and an answer) with provider faults
//! injected at random from a fixed seed (`MINIAGENT_SOAK_SEED`): 500s, 429s, streams
//! dropped mid-reply, malformed events that end a turn. It checks that nothing panics,
//! that every request carries a valid history, that compaction keeps the prompt in
//! budget, that the session log rebuilds the same history the agent ended with, and it
//! prints the process's resident memory at step 100 and step 1,000. The scripted server
//! forgets each request once it is checked, so the figures are the agent's.
#![allow(clippy::unwrap_used, clippy::expect_used)] // A test fails by panicking.

use crate::support;

use miniagent_core::config::Provider;
use miniagent_core::session;
use miniagent_protocol::{Event, Op};
use support::harness::{Harness, is_turn_end, test_config};
use support::validate::assert_valid_anthropic;
use support::*;

const STEPS: usize = 1_000;
const STEPS_PER_TURN: usize = 10;

/// Resident and peak resident memory of this process, in kB.
fn memory_kb() -> (u64, u64) {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    let field = |name: &str| {
        status
            .lines()
            .find(|l| l.starts_with(name))
            .and_then(|l| l.split_whitespace().nth(1))
            .and_then(|v| v.parse().ok())
            .unwrap_or(0)
    };
    (field("VmRSS:"), field("VmHWM:"))
}

/// One step's reply, sometimes preceded by a fault. Returns the replies and whether the
/// fault ends the turn (a malformed stream is not retried).
fn step_replies(rng: &mut fastrand::Rng, turn: usize, step: usize) -> (Vec<Reply>, bool) {
    let id = format!("t{turn}s{step}");
    let call = match step % 3 {
        0 => Reply::tool(
            &id,
            "bash",
            format!(r#"{{"command": "echo step {turn}.{step}; seq 1 200"}}"#),
        ),
        1 => Reply::tool(
            &id,
            "read_file",
            format!(r#"{{"path": "notes-{}.txt"}}"#, turn % 7),
        ),
        _ => Reply::tool(
            &id,
            "write_file",
            format!(
                r#"{{"path": "notes-{}.txt", "content": "turn {turn} step {step}\n"}}"#,
                turn % 7
            ),
        ),
    };
    let mut replies = Vec::new();
    let roll = rng.u32(0..100);
    let ends = match roll {
        0..=4 => {
            replies.push(Reply::status(500, "soak: internal error"));
            false
        }
        5..=7 => {
            replies.push(Reply::status_retry_after(429, 0, "soak: slow down"));
            false
        }
        8..=10 => {
            replies.push(Reply::drop_after(
                Turn::text("a reply that will be cut off midway"),
                3,
            ));
            false
        }
        11 => {
            replies.push(Reply::malformed(r#"{"type": "content_blo"#));
            true
        }
        _ => false,
    };
    if !ends {
        replies.push(call);
    }
    (replies, ends)
}

#[test]
#[ignore = "minutes long; run by hand (see the module docs)"]
fn a_thousand_faulty_steps() {
    let seed: u64 = std::env::var("MINIAGENT_SOAK_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(7);
    let mut rng = fastrand::Rng::with_seed(seed);
    let runtime = tokio::runtime::Runtime::new().unwrap();
    runtime.block_on(async {
        let server = ScriptedServer::start(Vec::new()).await;
        server.answer_toolless_with(Reply::text("SUMMARY: earlier turns wrote and read notes files."));
        let mut config = test_config(Provider::Anthropic, &server);
        config.agent.token_limit = 30_000;
        config.model.max_output_tokens = 2_000;
        config.retry.max_retries = 3;
        let data = TempDir::new();
        let log = support::harness::session_log_in(&data);
        let mut agent = Harness::start_recorded(config, log.clone());
        let started = std::time::Instant::now();
        let (mut steps, mut errors, mut requests, mut turn) = (0usize, 0usize, 0usize, 0usize);
        let mut reported_at_100 = false;
        while steps < STEPS {
            let mut ended_early = false;
            for step in 0..STEPS_PER_TURN {
                let (replies, ends) = step_replies(&mut rng, turn, step);
                for reply in replies {
                    server.push(reply);
                }
                steps += 1;
                if ends {
                    ended_early = true;
                    break;
                }
            }
            if !ended_early {
                server.push(Reply::text(format!("turn {turn} done")));
            }
            agent.send(Op::UserInput {
                text: format!("turn {turn}: write and read the notes"),
            });
            let end = agent.wait_for(is_turn_end).await;
            match end {
                Event::TurnComplete { .. } => {}
                Event::Error { .. } => errors += 1,
                other => panic!("turn {turn} ended with {other:?}"),
            }
            agent.events.clear();
            for request in server.take_requests() {
                requests += 1;
                if request.body.get("tools").is_some() {
                    assert_valid_anthropic(&request.body);
                }
            }
            if steps >= 100 && !reported_at_100 {
                reported_at_100 = true;
                let (rss, peak) = memory_kb();
                println!("step {steps}: RSS {rss} kB, peak {peak} kB");
            }
            turn += 1;
        }
        let (rss, peak) = memory_kb();
        println!("step {steps}: RSS {rss} kB, peak {peak} kB");
        println!(
            "{steps} steps, {turn} turns ({errors} ended by a malformed stream), {requests} requests, {:.1} s",
            started.elapsed().as_secs_f64()
        );

        // The log rebuilds the history the agent ended with.
        let snapshot = agent.inspect().await;
        agent.send(Op::Shutdown);
        agent.wait_for(|e| matches!(e, Event::ShutdownComplete)).await;
        let loaded = session::load(&log.path().unwrap()).unwrap();
        assert!(loaded.warnings.is_empty(), "{:?}", loaded.warnings);
        let mut restored = loaded.restore(miniagent_core::tokens::TokenCounter::new(
            miniagent_core::tokens::Encoding::Cl100kBase,
        ));
        let fixed = snapshot.prompt_tokens - restored.context.prompt_tokens();
        let replayed = restored.snapshot(fixed);
        assert_eq!(replayed.entries, snapshot.entries, "the log rebuilds the prompt");
        assert_eq!(replayed.compactions, snapshot.compactions);
        println!(
            "log: {} records, {} bytes; prompt {} entries, {} compactions",
            loaded.records.len(),
            loaded.valid_bytes,
            snapshot.entries.len(),
            snapshot.compactions.len()
        );
    });
}
