//! Peak memory on hostile input: the release `miniagent exec --approval full-auto`
//! against the scripted server, one case at a time, each against a stated bound on the
//! peak resident memory of the miniagent process (`wait4`'s `ru_maxrss`):
//!
//! - **endless line**: a 200 event stream whose first line never ends (the server stops
//!   at 512 MiB); bound 64 MB.
//! - **huge delta**: one `text_delta` of 100 MB; bound 64 MB.
//! - **long reply**: a 20 MB reply in 64 KiB deltas; bound 96 MB.
//! - **read_file sparse**: `read_file {"limit": 5}` on a 1 GB sparse file; bound 64 MB.
//! - **read_file one line**: `read_file {"limit": 5}` on a 300 MB file of one line;
//!   bound 64 MB.
//! - **edit_file sparse**: `edit_file` on a 1 GB sparse file; bound 64 MB.
//! - **edit_file one line**: `edit_file` on the 300 MB file of one line; bound 64 MB.
//!
//! Also printed: wall time, the session log's size and the last line `exec` printed.
//! A case over its bound is marked `OVER`; the run still goes on to the next case.
//!
//! `cargo bench --bench hostile` (`MINIAGENT_HOSTILE_CASES=endless,delta` runs only
//! the cases whose names contain one of those words; `MINIAGENT_HOSTILE_BIN=PATH` runs
//! another `miniagent` binary, e.g. an older build, for a before-and-after figure).
#![allow(clippy::unwrap_used, clippy::expect_used)] // A test fails by panicking.

#[path = "../tests/support/mod.rs"]
mod support;

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use support::cli::exec_command;
use support::{Reply, ScriptedServer, TempDir};

const MB: u64 = 1_000_000;

struct Case {
    name: &'static str,
    bound_mb: u64,
    /// Prepares the workspace and returns the script.
    setup: fn(&TempDir) -> Vec<Reply>,
}

fn read_five_lines(path: &str) -> Vec<Reply> {
    vec![
        Reply::tool(
            "call_1",
            "read_file",
            format!(r#"{{"path": "{path}", "limit": 5}}"#),
        ),
        Reply::text("Read it."),
    ]
}

fn edit(path: &str) -> Vec<Reply> {
    vec![
        Reply::tool(
            "call_1",
            "edit_file",
            format!(r#"{{"path": "{path}", "old_str": "aaaa", "new_str": "b"}}"#),
        ),
        Reply::text("Edited it."),
    ]
}

/// A 300 MB file of one line at `name` in `workspace`.
fn one_line(workspace: &TempDir, name: &str) {
    use std::io::Write;
    let file = std::fs::File::create(workspace.join(name)).expect("create the file");
    let mut out = std::io::BufWriter::new(file);
    let block = vec![b'a'; 1 << 20];
    for _ in 0..300 {
        out.write_all(&block).expect("write the file");
    }
    out.write_all(b"\n").expect("write the file");
}

const CASES: [Case; 7] = [
    Case {
        name: "endless line",
        bound_mb: 64,
        setup: |_| vec![Reply::EndlessLine { limit: 512 << 20 }],
    },
    Case {
        name: "huge delta (100 MB)",
        bound_mb: 64,
        setup: |_| {
            vec![Reply::HugeDelta {
                bytes: 100 * MB as usize,
            }]
        },
    },
    Case {
        name: "long reply (20 MB)",
        bound_mb: 96,
        setup: |_| {
            vec![Reply::LongText {
                bytes: 20 * MB as usize,
                piece: 64 << 10,
            }]
        },
    },
    Case {
        name: "read_file sparse (1 GB)",
        bound_mb: 64,
        setup: |workspace| {
            let file = std::fs::File::create(workspace.join("sparse.bin")).expect("create sparse.bin");
            file.set_len(1_000 * MB).expect("a 1 GB sparse file");
            read_five_lines("sparse.bin")
        },
    },
    Case {
        name: "read_file one line (300 MB)",
        bound_mb: 64,
        setup: |workspace| {
            one_line(workspace, "line.txt");
            read_five_lines("line.txt")
        },
    },
    Case {
        name: "edit_file sparse (1 GB)",
        bound_mb: 64,
        setup: |workspace| {
            let file = std::fs::File::create(workspace.join("sparse.txt")).expect("create sparse.txt");
            file.set_len(1_000 * MB).expect("a 1 GB sparse file");
            edit("sparse.txt")
        },
    },
    Case {
        name: "edit_file one line (300 MB)",
        bound_mb: 64,
        setup: |workspace| {
            one_line(workspace, "line.txt");
            edit("line.txt")
        },
    },
];

struct Run {
    wall: Duration,
    peak_rss_kb: u64,
    exit: i32,
    last_line: String,
    log_bytes: u64,
    requests: usize,
}

fn folder_bytes(dir: &std::path::Path) -> u64 {
    std::fs::read_dir(dir)
        .map(|entries| {
            entries
                .filter_map(Result::ok)
                .filter_map(|entry| entry.metadata().ok())
                .map(|meta| meta.len())
                .sum()
        })
        .unwrap_or(0)
}

/// `command` with another program: the same arguments and environment.
fn with_program(command: &Command, program: &str) -> Command {
    let mut other = Command::new(program);
    other.args(command.get_args()).stdin(Stdio::null());
    for (name, value) in command.get_envs() {
        match value {
            Some(value) => other.env(name, value),
            None => other.env_remove(name),
        };
    }
    other
}

fn run(case: &Case) -> Run {
    let home = TempDir::new();
    let workspace = TempDir::new();
    let script = (case.setup)(&workspace);
    let server = ScriptedServer::start_blocking(script);
    let mut command = exec_command(&home, &workspace, &server, &["say something"]);
    if let Ok(bin) = std::env::var("MINIAGENT_HOSTILE_BIN") {
        command = with_program(&command, &bin);
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
    let printed = std::fs::read_to_string(&progress).unwrap_or_default();
    let last_line: String = printed
        .lines()
        .rev()
        .find(|line| !line.trim().is_empty())
        .unwrap_or("")
        .chars()
        .take(160)
        .collect();
    Run {
        wall,
        peak_rss_kb: usage.ru_maxrss as u64,
        exit: if libc::WIFEXITED(status) {
            libc::WEXITSTATUS(status)
        } else {
            -1
        },
        last_line,
        log_bytes: folder_bytes(&home.join("sessions")),
        requests: server.request_count(),
    }
}

fn main() {
    let only: Vec<String> = std::env::var("MINIAGENT_HOSTILE_CASES")
        .map(|v| v.split(',').map(|s| s.trim().to_string()).collect())
        .unwrap_or_default();
    let mut over = 0;
    for case in &CASES {
        if !only.is_empty() && !only.iter().any(|word| case.name.contains(word.as_str())) {
            continue;
        }
        let run = run(case);
        let peak_mb = run.peak_rss_kb as f64 / 1024.0;
        let verdict = if peak_mb <= case.bound_mb as f64 {
            "ok"
        } else {
            over += 1;
            "OVER"
        };
        println!(
            "{}: peak RSS {peak_mb:.1} MB (bound {} MB: {verdict}), wall {:.2} s, exit {}, \
             {} request(s), session log {:.1} MB\n    last line: {}",
            case.name,
            case.bound_mb,
            run.wall.as_secs_f64(),
            run.exit,
            run.requests,
            run.log_bytes as f64 / MB as f64,
            run.last_line
        );
    }
    println!("hostile: {over} case(s) over their bound");
}
