//! The end-to-end loop (`loop-30`): `miniagent exec --approval full-auto` against the
//! scripted server over loopback, 30 steps that each run a distinct command printing
//! `seq 1 20000` (about 109 KB of output) through `bash`, then a final answer
//! (`MINIAGENT_E2E_STEPS=0`: the one-answer `exec`). Five runs; prints the median wall
//! time, CPU time (user + system, the process and its children) and peak resident memory
//! of the miniagent process. Budget on the 2-core machine: wall at most 0.45 s, peak RSS
//! under 30 MB.
//!
//! `cargo bench --bench e2e` (`MINIAGENT_E2E_RUNS` changes the number of runs).
//! `MINIAGENT_E2E_BINS=OLD,NEW` runs other builds instead, one run of each in turn, so a
//! before and an after are measured under the same load; `MINIAGENT_E2E_WRAP` runs them
//! under a profiler (`"perf record -o FILE --"`).
#![allow(clippy::unwrap_used, clippy::expect_used)] // A test fails by panicking.

#[path = "../tests/support/mod.rs"]
mod support;

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use support::cli::exec_command;
use support::{Reply, ScriptedServer, TempDir, counting_turn};

/// Steps per run unless `MINIAGENT_E2E_STEPS` says otherwise.
const STEPS: usize = 30;

struct Run {
    wall: Duration,
    cpu: Duration,
    peak_rss_kb: u64,
}

fn timeval(tv: libc::timeval) -> Duration {
    Duration::from_secs(tv.tv_sec as u64) + Duration::from_micros(tv.tv_usec as u64)
}

/// `command` with its program replaced by `program`, run under `wrap` (a profiler's
/// command line, split at spaces) if one is given: the same arguments and environment.
fn retarget(command: &Command, program: &str, wrap: &[String]) -> Command {
    let mut words: Vec<std::ffi::OsString> = wrap.iter().map(Into::into).collect();
    words.push(program.into());
    words.extend(command.get_args().map(ToOwned::to_owned));
    let mut new = Command::new(&words[0]);
    new.args(&words[1..]);
    for (name, value) in command.get_envs() {
        match value {
            Some(value) => new.env(name, value),
            None => new.env_remove(name),
        };
    }
    new
}

fn run_once(steps: usize, program: Option<&str>, wrap: &[String]) -> Run {
    let home = TempDir::new();
    let workspace = TempDir::new();
    let server = ScriptedServer::start_blocking(counting_turn(steps));
    // 30 results of 30 KB fill the context more than once: summary requests (they carry
    // no tools) get a summary.
    server.answer_toolless_with(Reply::text("Counted from 1 to 20,000 in each step so far."));
    let max_steps = (steps + 1).to_string();
    let mut command = exec_command(
        &home,
        &workspace,
        &server,
        &["--max-steps", &max_steps, "count to 20000, thirty times"],
    );
    if let Some(program) = program {
        command = retarget(&command, program, wrap);
    }
    let progress = home.join("progress.txt");
    let stderr = std::fs::File::create(&progress).expect("a file for the progress lines");
    command.stdout(Stdio::null()).stderr(stderr);
    let started = Instant::now();
    // Reaped by `wait4` below, which also reports what the process used.
    #[allow(clippy::zombie_processes)]
    let child = command.spawn().expect("miniagent starts");
    let pid = child.id() as libc::pid_t;
    let mut status = 0;
    // SAFETY: an all-zero rusage is a valid value of this plain C struct.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: `pid` is our own child, not yet waited for; both pointers are valid.
    let waited = unsafe { libc::wait4(pid, &mut status, 0, &mut usage) };
    let wall = started.elapsed();
    assert_eq!(waited, pid, "wait4: {}", std::io::Error::last_os_error());
    assert!(
        libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0,
        "miniagent exec failed with status {status}:\n{}",
        std::fs::read_to_string(&progress).unwrap_or_default()
    );
    let printed = std::fs::read_to_string(&progress).unwrap_or_default();
    let ran = printed.matches("seq 1 20000").count();
    assert!(ran >= steps, "every step ran its command:\n{printed}");
    let requests: Vec<_> = server
        .requests()
        .into_iter()
        .filter(|r| r.body["tools"].as_array().is_some_and(|t| !t.is_empty()))
        .collect();
    assert_eq!(requests.len(), steps + 1, "every step reached the server");
    // The final request carries the last command's output (earlier ones may have been
    // summarized).
    let last = requests[steps].body["messages"].to_string();
    assert!(
        steps == 0 || (last.contains(&format!("call_{}", steps - 1)) && last.contains("19999")),
        "the last request carries the last result: {}",
        &last[last.len().saturating_sub(1500)..]
    );
    // wait4's usage covers the process and the children it waited for (bash, seq); its
    // peak RSS is the largest of them, which is miniagent's.
    Run {
        wall,
        cpu: timeval(usage.ru_utime) + timeval(usage.ru_stime),
        peak_rss_kb: usage.ru_maxrss as u64,
    }
}

fn median<T: Ord + Copy>(mut values: Vec<T>) -> T {
    values.sort();
    values[values.len() / 2]
}

fn main() {
    // `cargo bench` passes `--bench`; run any other way, one run checks that it works.
    let benching = std::env::args().any(|a| a == "--bench");
    let number = |name: &str, default: usize| {
        std::env::var(name)
            .ok()
            .and_then(|v| v.parse().ok())
            .unwrap_or(default)
    };
    let runs = number("MINIAGENT_E2E_RUNS", if benching { 5 } else { 1 }).max(1);
    let steps = number("MINIAGENT_E2E_STEPS", STEPS);
    // Other builds to measure side by side, one run of each in turn (a before and an
    // after under the same load), and a profiler to run them under.
    let programs: Vec<Option<String>> = match std::env::var("MINIAGENT_E2E_BINS") {
        Ok(list) => list.split(',').map(|p| Some(p.to_owned())).collect(),
        Err(_) => vec![None],
    };
    let wrap: Vec<String> = std::env::var("MINIAGENT_E2E_WRAP")
        .map(|w| w.split_whitespace().map(str::to_owned).collect())
        .unwrap_or_default();
    let mut results: Vec<Vec<Run>> = programs.iter().map(|_| Vec::new()).collect();
    for n in 0..runs {
        for (program, results) in programs.iter().zip(&mut results) {
            let run = run_once(steps, program.as_deref(), &wrap);
            println!(
                "run {} {}: wall {:.3} s, cpu {:.3} s, peak RSS {:.1} MB",
                n + 1,
                program.as_deref().unwrap_or("this build"),
                run.wall.as_secs_f64(),
                run.cpu.as_secs_f64(),
                run.peak_rss_kb as f64 / 1024.0
            );
            results.push(run);
        }
    }
    for (program, results) in programs.iter().zip(&results) {
        let wall = median(results.iter().map(|r| r.wall).collect());
        let cpu = median(results.iter().map(|r| r.cpu).collect());
        let rss = median(results.iter().map(|r| r.peak_rss_kb).collect());
        println!(
            "e2e {}: {steps} steps of `seq 1 20000`, median of {runs}: wall {:.3} s (budget 0.45 s), \
             cpu {:.3} s (with bash and seq), peak RSS {:.1} MB (budget 30 MB)",
            program.as_deref().unwrap_or("this build"),
            wall.as_secs_f64(),
            cpu.as_secs_f64(),
            rss as f64 / 1024.0
        );
    }
}
