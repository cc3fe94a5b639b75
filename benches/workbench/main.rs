//! The workbench's own costs, measured on a pseudo-terminal the way a person's terminal
//! sees them (`cargo bench --bench workbench`):
//!
//! - **start**: process start to the first complete frame at 120×40 (the bottom row's
//!   last text has arrived; rows are written top to bottom), with no MCP server and with
//!   one that takes 2 s to start. Median of 5. Budget: 50 ms.
//! - **streaming**: the scripted server streams 20,000 tokens (thinking then text) at
//!   5,000 tokens/s; the workbench's CPU over the stream (budget: 25 % of one core), and
//!   the time from a key press to the frame that shows it, one key every 200 ms
//!   (budget: 16 ms).
//! - **idle**: the 10 s after the turn finished; CPU used (budget: 10 ms) and bytes
//!   written to the terminal (no frames: nothing animates).
//!
//! - **memory**: the workbench's peak RSS over a turn of 20 calls and one of 200, each
//!   printing 109 KB; it should stay flat.
//! - **paste**: a bracketed paste of 10 MB into the input (refused: many lines, then one
//!   line) and of 1 MB (taken), from the first byte to the frame after it (budget: 5 s
//!   each); see `paste.rs`.
//!
//! `MINIAGENT_BENCH_RUNS` changes the number of start runs; `MINIAGENT_BENCH_PARTS`
//! (`start`, `streaming`, `memory`, `paste`, comma-separated) runs only those parts;
//! `MINIAGENT_BENCH_CALLS` (`20,200`) sets the memory part's turn lengths.
#![allow(clippy::unwrap_used, clippy::expect_used)] // A benchmark fails by panicking.

#[path = "../../tests/support/mod.rs"]
mod support;

mod paste;
mod pty;

use std::process::Command;
use std::time::{Duration, Instant};

use miniagent_core::tokens::{Encoding, TokenCounter};
use pty::Pty;
use support::cli::against;
use support::{Format, Reply, ScriptedServer, TempDir, Turn, TurnExt, counting_turn};

const COLS: u16 = 120;
const ROWS: u16 = 40;
/// The last text of the bottom row (the key hints); when it arrives, the frame is whole.
const FRAME_END: &str = "Ctrl-J new line";
const STREAM_TOKENS: usize = 20_000;
const TOKENS_PER_SECOND: f64 = 5_000.0;
/// Typed while the reply streams; never part of the streamed text.
const KEY: &str = "Ж";

fn workbench(home: &TempDir, workspace: &TempDir, server: &ScriptedServer, extra: &[&str]) -> Command {
    let mut command = against(home, workspace, server);
    command
        .env("TERM", "xterm-256color")
        .args(["--approval", "full-auto"])
        .args(extra);
    command
}

fn median(mut values: Vec<Duration>) -> Duration {
    values.sort();
    values[values.len() / 2]
}

fn ms(d: Duration) -> String {
    format!("{:.1} ms", d.as_secs_f64() * 1000.0)
}

/// Process start to the first complete frame.
fn first_frame(extra: &[&str], home: &TempDir) -> Duration {
    let workspace = TempDir::new();
    let server = ScriptedServer::start_blocking(vec![]);
    let command = workbench(home, &workspace, &server, extra);
    let started = Instant::now();
    let pty = Pty::spawn(command, COLS, ROWS);
    let (shown, _) = pty
        .wait_for(FRAME_END, 0, Duration::from_secs(10))
        .expect("the workbench draws its first frame");
    pty.finish();
    shown - started
}

/// `count` tokens of lowercase prose, in paragraphs; words drawn at random from a fixed
/// seed, so the reply never repeats itself (the agent would cut a repeating reply).
fn prose(counter: &TokenCounter, seed: u64, count: usize) -> String {
    const WORDS: &[&str] = &[
        "the",
        "parser",
        "reads",
        "each",
        "line",
        "and",
        "returns",
        "a",
        "token",
        "stream",
        "while",
        "errors",
        "are",
        "collected",
        "into",
        "one",
        "report",
        "so",
        "nothing",
        "is",
        "lost",
        "when",
        "input",
        "breaks",
        "halfway",
        "through",
        "file",
        "every",
        "module",
        "keeps",
        "its",
        "own",
        "state",
        "until",
        "caller",
        "asks",
        "for",
        "it",
    ];
    let mut rng = fastrand::Rng::with_seed(seed);
    let mut text = String::new();
    // Grow in chunks, then trim to the exact count.
    while counter.count(&text) < count as u64 {
        for _ in 0..200 {
            text.push_str(WORDS[rng.usize(..WORDS.len())]);
            text.push_str(match rng.u8(..100) {
                0 => ".\n\n",
                1..=6 => ", ",
                _ => " ",
            });
        }
    }
    while counter.count(&text) > count as u64 {
        let cut = text.trim_end().rfind(' ').unwrap_or(0);
        text.truncate(cut);
    }
    text
}

/// Whether the (only) session log under `home` has recorded the end of a turn; reads
/// only what was added since the last look (`seen`).
fn turn_complete(home: &TempDir, seen: &mut u64) -> bool {
    use std::io::{Read, Seek, SeekFrom};
    let needle = b"\"turn_complete\"";
    let Some(log) = support::cli::session_logs(home).pop() else {
        return false;
    };
    let Ok(mut file) = std::fs::File::open(log) else {
        return false;
    };
    let from = seen.saturating_sub(needle.len() as u64);
    let mut added = Vec::new();
    if file.seek(SeekFrom::Start(from)).is_err() || file.read_to_end(&mut added).is_err() {
        return false;
    }
    *seen = from + added.len() as u64;
    added.windows(needle.len()).any(|w| w == needle)
}

struct Streaming {
    tokens: usize,
    stream: Duration,
    cpu: Duration,
    keys: Vec<Duration>,
    idle_cpu: Duration,
    idle_cpu_total: Duration,
    idle_bytes: usize,
    idle_reads: usize,
    peak_rss_kb: u64,
}

fn streaming(home: &TempDir) -> Streaming {
    let counter = TokenCounter::new(Encoding::Cl100kBase);
    let thinking = prose(&counter, 1, STREAM_TOKENS / 5);
    let text = prose(&counter, 2, STREAM_TOKENS * 4 / 5);
    let tokens = (counter.count(&thinking) + counter.count(&text)) as usize;
    let turn = Turn::new().thinking(thinking, "sig").text(text);
    let events = support::wire::events(Format::Anthropic, &turn, "scripted-model", 0, false).len();
    let seconds = tokens as f64 / TOKENS_PER_SECOND;
    let server = ScriptedServer::start_blocking(vec![Reply::paced(turn, events as f64 / seconds)]);
    let workspace = TempDir::new();
    let mut pty = Pty::spawn(workbench(home, &workspace, &server, &[]), COLS, ROWS);
    pty.wait_for(FRAME_END, 0, Duration::from_secs(10))
        .expect("first frame");
    // Let the session start (tokenizer, syntax sets) before the prompt.
    std::thread::sleep(Duration::from_millis(500));
    pty.send(b"write it all out\r");
    let deadline = Instant::now() + Duration::from_secs(10);
    while server.request_count() == 0 {
        assert!(Instant::now() < deadline, "the prompt reaches the server");
        std::thread::sleep(Duration::from_millis(1));
    }
    let stream_start = Instant::now();
    let (cpu_start, _) = pty.cpu();
    let mut keys = Vec::new();
    let mut log_seen = 0;
    let mut next_key = stream_start + Duration::from_millis(200);
    // The turn is over when the session log records it (the screen is drawn as diffs,
    // so the last word cannot be looked for there).
    let end = loop {
        if turn_complete(home, &mut log_seen) {
            break Instant::now();
        }
        if Instant::now() >= next_key {
            let from = pty.screen().text.len();
            let sent = Instant::now();
            pty.send(KEY.as_bytes());
            let (shown, _) = pty
                .wait_for(KEY, from, Duration::from_secs(5))
                .expect("the key shows");
            keys.push(shown.saturating_duration_since(sent));
            // Keep the input line short: take the key back out.
            pty.send(b"\x7f");
            next_key = Instant::now() + Duration::from_millis(200);
        }
        assert!(
            Instant::now() < stream_start + Duration::from_secs(60),
            "the turn ends within 60 s"
        );
        std::thread::sleep(Duration::from_millis(10));
    };
    let (cpu_end, _) = pty.cpu();
    // The turn closes and the spinner stops; then nothing should move.
    std::thread::sleep(Duration::from_secs(1));
    let idle_start = Instant::now();
    let (idle_a, idle_total_a) = pty.cpu();
    std::thread::sleep(Duration::from_secs(10));
    let (idle_b, idle_total_b) = pty.cpu();
    let (idle_bytes, idle_reads) = pty.screen().output_since(idle_start);
    let peak_rss_kb = pty.peak_rss_kb();
    pty.finish();
    Streaming {
        tokens,
        stream: end - stream_start,
        cpu: cpu_end.saturating_sub(cpu_start),
        keys,
        idle_cpu: idle_b.saturating_sub(idle_a),
        idle_cpu_total: idle_total_b.saturating_sub(idle_total_a),
        idle_bytes,
        idle_reads,
        peak_rss_kb,
    }
}

/// Peak memory of the workbench over a turn of `steps` `bash` calls that each print
/// 109 KB (`seq 1 20000`), in full-auto.
fn long_turn_peak_rss_kb(home: &TempDir, steps: usize) -> u64 {
    let server = ScriptedServer::start_blocking(counting_turn(steps));
    server.answer_toolless_with(Reply::text("Counted from 1 to 20,000 in every step so far."));
    let workspace = TempDir::new();
    let max_steps = (steps + 1).to_string();
    let mut pty = Pty::spawn(
        workbench(home, &workspace, &server, &["--max-steps", &max_steps]),
        COLS,
        ROWS,
    );
    pty.wait_for(FRAME_END, 0, Duration::from_secs(10))
        .expect("first frame");
    std::thread::sleep(Duration::from_millis(300));
    pty.send(b"count, again and again\r");
    let started = Instant::now();
    let mut seen = 0;
    while !turn_complete(home, &mut seen) {
        assert!(started.elapsed() < Duration::from_secs(300), "the turn ends");
        std::thread::sleep(Duration::from_millis(50));
    }
    let peak = pty.peak_rss_kb();
    pty.finish();
    peak
}

fn main() {
    let benching = std::env::args().any(|a| a == "--bench");
    let runs = std::env::var("MINIAGENT_BENCH_RUNS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(if benching { 5 } else { 1 })
        .max(1);
    let home = TempDir::new();
    let parts = std::env::var("MINIAGENT_BENCH_PARTS").unwrap_or_default();
    let part = |name: &str| parts.is_empty() || parts.split(',').any(|p| p.trim() == name);
    if part("start") {
        start(runs, &home);
    }
    if part("streaming") {
        streaming_and_idle(&home);
    }
    if part("memory") {
        let calls = std::env::var("MINIAGENT_BENCH_CALLS").unwrap_or_else(|_| "20,200".into());
        for steps in calls.split(',').filter_map(|n| n.trim().parse::<usize>().ok()) {
            let home = TempDir::new();
            let peak = long_turn_peak_rss_kb(&home, steps);
            println!(
                "memory: a turn of {steps} calls printing 109 KB each: workbench peak RSS {:.1} MB",
                peak as f64 / 1024.0
            );
        }
    }
    if part("paste") {
        paste::pastes(&TempDir::new());
    }
}

fn start(runs: usize, home: &TempDir) {
    let plain: Vec<Duration> = (0..runs).map(|_| first_frame(&[], home)).collect();
    println!(
        "start: first frame at {COLS}x{ROWS}, no MCP server: median {} of {runs} (all: {}) (budget 50 ms)",
        ms(median(plain.clone())),
        plain.iter().map(|d| ms(*d)).collect::<Vec<_>>().join(", ")
    );

    let slow_mcp = home.write(
        "slow-mcp.json",
        serde_json::json!({"mcpServers": {"slow": {
            "command": "sh",
            "args": ["-c", "sleep 2; exec npx -y @modelcontextprotocol/server-everything@2026.8.31 stdio"]
        }}})
        .to_string(),
    );
    let slow_mcp = slow_mcp.to_string_lossy().into_owned();
    let with_mcp: Vec<Duration> = (0..runs)
        .map(|_| first_frame(&["--mcp-config", &slow_mcp], home))
        .collect();
    println!(
        "start: first frame at {COLS}x{ROWS}, an MCP server taking 2 s: median {} of {runs} (all: {}) (budget 50 ms)",
        ms(median(with_mcp.clone())),
        with_mcp.iter().map(|d| ms(*d)).collect::<Vec<_>>().join(", ")
    );
}

fn streaming_and_idle(home: &TempDir) {
    let s = streaming(home);
    let mut keys = s.keys.clone();
    keys.sort();
    println!(
        "streaming: {} tokens in {:.2} s ({:.0} tokens/s): workbench CPU {} = {:.1} % of one core (budget 25 %), peak RSS {:.1} MB",
        s.tokens,
        s.stream.as_secs_f64(),
        s.tokens as f64 / s.stream.as_secs_f64(),
        ms(s.cpu),
        100.0 * s.cpu.as_secs_f64() / s.stream.as_secs_f64(),
        s.peak_rss_kb as f64 / 1024.0
    );
    println!(
        "streaming: key to frame over {} keys: median {}, p90 {}, max {} (budget 16 ms)",
        keys.len(),
        ms(keys[keys.len() / 2]),
        ms(keys[(keys.len() * 9 / 10).min(keys.len() - 1)]),
        ms(keys[keys.len() - 1])
    );
    println!(
        "idle: 10 s after the turn: CPU {} (kernel's 10 ms-tick total: {}) (budget 10 ms), {} bytes in {} writes to the terminal",
        ms(s.idle_cpu),
        ms(s.idle_cpu_total),
        s.idle_bytes,
        s.idle_reads
    );
}
