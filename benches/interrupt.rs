//! How quickly an interrupt ends a turn: the agent (in process, as the tests drive it)
//! against the scripted server over loopback, the time from `Op::Interrupt` to the
//! `turn_aborted` event, for both providers, at the three moments a turn can be in:
//!
//! - **stream**: a reply streaming one event every 50 ms, interrupted after its first
//!   text delta;
//! - **tool**: `bash` running a shell that waits on a background `sleep 30` (the shell
//!   and the sleep are both killed, TERM then KILL at worst; also printed: the time until
//!   both are gone);
//! - **approval**: a call waiting for the person's answer.
//!
//! Budget: 500 ms at every moment (the tests in tests/interrupt.rs check what an
//! interrupt does; how quickly is measured here, where a loaded machine cannot fail a
//! test). Prints the median and the slowest of the runs for each, against the budget.
//!
//! `cargo bench --bench interrupt` (`MINIAGENT_INTERRUPT_RUNS` changes the number of
//! runs, 10 by default; run any other way, one run checks that it works).
#![allow(clippy::unwrap_used, clippy::expect_used)] // A benchmark fails by panicking.

#[path = "../tests/support/mod.rs"]
mod support;

use std::time::{Duration, Instant};

use miniagent_core::config::{ApprovalMode, Provider};
use miniagent_protocol::{Event, Op};
use support::harness::{Harness, test_config};
use support::{Reply, ScriptedServer, Turn};

const BUDGET: Duration = Duration::from_millis(500);

#[derive(Clone, Copy)]
enum Moment {
    Stream,
    Tool,
    Approval,
}

impl Moment {
    fn name(self) -> &'static str {
        match self {
            Moment::Stream => "during the stream",
            Moment::Tool => "while a tool runs",
            Moment::Approval => "while an approval is pending",
        }
    }

    fn script(self) -> Vec<Reply> {
        match self {
            Moment::Stream => vec![Reply::slow(Turn::text("word ".repeat(200)), 50)],
            Moment::Tool => vec![Reply::tool(
                "call_1",
                "bash",
                r#"{"command": "echo $$ > pid; sleep 30 & echo $! > child; wait"}"#,
            )],
            Moment::Approval => vec![Reply::tool("call_9", "bash", r#"{"command": "touch made-it"}"#)],
        }
    }
}

/// Whether process `pid` has ended (gone, or a zombie waiting to be reaped).
fn ended(pid: &str) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat")).map_or(true, |stat| {
        stat.rsplit(')')
            .next()
            .is_some_and(|rest| rest.trim_start().starts_with('Z'))
    })
}

/// One turn brought to `moment` and interrupted: the time from the interrupt to the
/// `turn_aborted`, and for a tool's moment to the end of its processes.
async fn interrupt_at(provider: Provider, moment: Moment) -> (Duration, Option<Duration>) {
    let server = ScriptedServer::start(moment.script()).await;
    let mut config = test_config(provider, &server);
    if let Moment::Approval = moment {
        config.agent.approval = ApprovalMode::Ask;
    }
    let mut agent = Harness::start(config);
    agent.send(Op::UserInput { text: "go on".into() });
    match moment {
        Moment::Stream => {
            agent.wait_for(|e| matches!(e, Event::TextDelta { .. })).await;
        }
        Moment::Tool => {
            agent
                .wait_for(|e| matches!(e, Event::ToolCallStarted { .. }))
                .await;
            // The shell has started its child: the interrupt has a process group to end.
            let child = agent.workspace.join("child");
            let deadline = Instant::now() + Duration::from_secs(10);
            while !std::fs::read_to_string(&child).is_ok_and(|s| s.ends_with('\n')) {
                assert!(Instant::now() < deadline, "the command never started");
                tokio::time::sleep(Duration::from_millis(5)).await;
            }
        }
        Moment::Approval => {
            agent
                .wait_for(|e| matches!(e, Event::ApprovalRequested { .. }))
                .await;
        }
    }
    let sent = Instant::now();
    agent.send(Op::Interrupt);
    agent.wait_for(|e| matches!(e, Event::TurnAborted { .. })).await;
    let took = sent.elapsed();
    // What was measured is an interrupt that worked: the turn ended before it would have
    // by itself, and nothing it held is left behind.
    assert!(
        !agent
            .events
            .iter()
            .any(|e| matches!(e, Event::TurnComplete { .. })),
        "{provider} {}: the turn completed instead",
        moment.name()
    );
    let mut gone = None;
    match moment {
        Moment::Stream => {}
        Moment::Tool => {
            let pids: Vec<String> = ["pid", "child"]
                .iter()
                .map(|file| std::fs::read_to_string(agent.workspace.join(file)).unwrap())
                .map(|pid| pid.trim().to_string())
                .collect();
            let deadline = Instant::now() + Duration::from_secs(10);
            while !pids.iter().all(|pid| ended(pid)) {
                assert!(Instant::now() < deadline, "{pids:?} survived the interrupt");
                tokio::time::sleep(Duration::from_millis(1)).await;
            }
            gone = Some(sent.elapsed());
        }
        Moment::Approval => {
            assert!(!agent.workspace.join("made-it").exists(), "the call did not run");
        }
    }
    (took, gone)
}

fn ms(d: Duration) -> String {
    format!("{:.1} ms", d.as_secs_f64() * 1000.0)
}

fn main() {
    // `cargo bench` passes `--bench`; run any other way, one run checks that it works.
    let benching = std::env::args().any(|a| a == "--bench");
    let runs = std::env::var("MINIAGENT_INTERRUPT_RUNS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(if benching { 10 } else { 1 })
        .max(1);
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("a tokio runtime");
    let mut over = 0;
    for moment in [Moment::Stream, Moment::Tool, Moment::Approval] {
        for provider in [Provider::Anthropic, Provider::Openai] {
            let (mut took, mut gone): (Vec<Duration>, Vec<Option<Duration>>) = (0..runs)
                .map(|_| runtime.block_on(interrupt_at(provider, moment)))
                .unzip();
            took.sort();
            gone.sort();
            let (median, slowest) = (took[took.len() / 2], took[took.len() - 1]);
            let verdict = if slowest <= BUDGET {
                "ok"
            } else {
                over += 1;
                "OVER"
            };
            println!(
                "interrupt {} ({provider}): median {}, slowest {} of {runs} (budget {}: {verdict})",
                moment.name(),
                ms(median),
                ms(slowest),
                ms(BUDGET)
            );
            if let (Some(median), Some(slowest)) = (gone[gone.len() / 2], gone[gone.len() - 1]) {
                println!(
                    "    its processes gone after: median {}, slowest {}",
                    ms(median),
                    ms(slowest)
                );
            }
        }
    }
    println!("interrupt: {over} case(s) over the budget");
}
