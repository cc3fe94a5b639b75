//! What a task costs on the wire: the real binary (`miniagent exec --approval full-auto`)
//! against the scripted server, once per provider protocol, counting from the recorded
//! requests the model requests, the summary calls among them, the input tokens sent and
//! the input tokens billed under the providers' published caching rules
//! (`tests/support/billing.rs`), every request counted with the same tokenizer
//! (cl100k_base).
//!
//! - `30 steps`: the end-to-end benchmark's task: 30 `bash` calls that each print
//!   `seq 1 20000` (about 109 KB), then an answer.
//! - `long session`: [`TURNS`] turns of one session (`exec --resume`), each a new user
//!   message and [`STEPS_PER_TURN`] commands printing about 12 KB each; the default
//!   budget must be kept by compacting. Every user message must reach the last request
//!   verbatim.
//!
//! `cargo bench --bench wire`.
#![allow(clippy::unwrap_used, clippy::expect_used)] // A bench fails by panicking.

#[path = "../tests/support/mod.rs"]
mod support;

use std::process::{Command, Output};

use miniagent_core::tokens::{Encoding, TokenCounter};
use support::billing::{self, Bill};
use support::cli::{miniagent, session_id, session_logs, text};
use support::{RecordedRequest, Reply, ScriptedServer, TempDir, counting_turn};

/// Turns of the long session.
const TURNS: usize = 8;
/// Commands in each turn of the long session.
const STEPS_PER_TURN: usize = 6;

#[derive(Clone, Copy)]
enum Protocol {
    Anthropic,
    OpenAi,
}

impl Protocol {
    fn name(self) -> &'static str {
        match self {
            Protocol::Anthropic => "anthropic",
            Protocol::OpenAi => "openai",
        }
    }

    fn bill(self, requests: &[RecordedRequest], count: &dyn Fn(&str) -> u64) -> Bill {
        match self {
            Protocol::Anthropic => billing::anthropic(requests, count),
            Protocol::OpenAi => billing::openai(requests, count),
        }
    }
}

/// `miniagent exec` in `workspace` against `server` speaking `protocol`.
fn exec(
    protocol: Protocol,
    home: &TempDir,
    workspace: &TempDir,
    server: &ScriptedServer,
    args: &[&str],
) -> Output {
    let base_url = match protocol {
        Protocol::Anthropic => server.anthropic_base_url(),
        Protocol::OpenAi => server.openai_base_url(),
    };
    let mut command: Command = miniagent(home);
    command
        .arg("--workspace")
        .arg(workspace.path())
        .args(["--provider", protocol.name(), "--base-url", &base_url])
        .args(["--model", "scripted-model", "exec", "--approval", "full-auto"])
        .args(args);
    let output = command.output().expect("miniagent runs");
    assert!(
        output.status.success(),
        "miniagent exec failed: {}\n{}",
        output.status,
        text(&output.stderr)
    );
    output
}

fn thirty_steps(protocol: Protocol) -> Vec<RecordedRequest> {
    let (home, workspace) = (TempDir::new(), TempDir::new());
    let server = ScriptedServer::start_blocking(counting_turn(30));
    server.answer_toolless_with(Reply::text("Counted from 1 to 20,000 in each step so far."));
    exec(
        protocol,
        &home,
        &workspace,
        &server,
        &["--max-steps", "31", "count to 20000, thirty times"],
    );
    server.requests()
}

fn long_session(protocol: Protocol) -> Vec<RecordedRequest> {
    let (home, workspace) = (TempDir::new(), TempDir::new());
    let mut script = Vec::new();
    for turn in 0..TURNS {
        for step in 0..STEPS_PER_TURN {
            script.push(Reply::tool(
                format!("call_{turn}_{step}"),
                "bash",
                format!(
                    r#"{{"command": ": turn {turn} step {step}; seq {} {}"}}"#,
                    turn * 10_000,
                    turn * 10_000 + 2400
                ),
            ));
        }
        script.push(Reply::text(format!(
            "Turn {turn} is done: the numbers are listed."
        )));
    }
    let server = ScriptedServer::start_blocking(script);
    server.answer_toolless_with(Reply::text(
        "Listed numbers with seq in several steps; every listing completed.",
    ));
    let prompts: Vec<String> = (0..TURNS)
        .map(|turn| {
            format!(
                "Turn {turn}: list the numbers from {} on, in {STEPS_PER_TURN} steps.",
                turn * 10_000
            )
        })
        .collect();
    for (turn, prompt) in prompts.iter().enumerate() {
        let mut args = vec!["--max-steps", "20"];
        let id;
        if turn > 0 {
            let logs = session_logs(&home);
            id = session_id(logs.last().expect("the first turn was recorded"));
            args.extend(["--resume", id.as_str()]);
        }
        args.push(prompt);
        exec(protocol, &home, &workspace, &server, &args);
    }
    let requests = server.requests();
    let last = requests
        .iter()
        .rev()
        .find(|r| !billing::is_summary_call(&r.body))
        .expect("a step request");
    let sent = last.body["messages"].to_string();
    for prompt in &prompts {
        assert!(
            sent.contains(prompt.as_str()),
            "the last request keeps {prompt:?} verbatim"
        );
    }
    requests
}

fn report(scenario: &str, protocol: Protocol, bill: &Bill) {
    println!(
        "{scenario:<12} {:<9} {:>8} {:>8} {:>12} {:>12} {:>10} {:>10} {:>10}",
        protocol.name(),
        bill.requests,
        bill.summary_calls,
        bill.sent,
        bill.billed().round() as u64,
        bill.read,
        bill.written,
        bill.uncached,
    );
}

fn main() {
    let counter = TokenCounter::new(Encoding::Cl100kBase);
    let count = |text: &str| counter.count(text);
    println!(
        "{:<12} {:<9} {:>8} {:>8} {:>12} {:>12} {:>10} {:>10} {:>10}",
        "scenario",
        "protocol",
        "requests",
        "summary",
        "input sent",
        "input billed",
        "read",
        "written",
        "uncached"
    );
    for protocol in [Protocol::Anthropic, Protocol::OpenAi] {
        let bill = protocol.bill(&thirty_steps(protocol), &count);
        report("30 steps", protocol, &bill);
    }
    for protocol in [Protocol::Anthropic, Protocol::OpenAi] {
        let bill = protocol.bill(&long_session(protocol), &count);
        report("long session", protocol, &bill);
    }
}
