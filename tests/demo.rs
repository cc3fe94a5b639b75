//! The demo session in `assets/demo.jsonl`: how it is recorded (by hand, with
//! `cargo test --test all -- --ignored record_the_demo`), and that it still loads and
//! replays.
//!
//! The recording is real: `miniagent exec` runs against the scripted model server in a
//! temporary workspace holding a small Python project with a failing test. The model's
//! words are scripted; every tool call runs for real (python3 runs the tests), and the
//! second turn is a `--resume` whose context is compacted on the way.
#![allow(clippy::unwrap_used, clippy::expect_used)] // A test fails by panicking.

use crate::support;

use std::path::PathBuf;

use serde_json::json;
use support::cli::{miniagent, text};
use support::*;

fn demo_path() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("assets/demo.jsonl")
}

const STATS_PY: &str = r#""""Small statistics helpers."""


def mean(values):
    """The arithmetic mean of a non-empty sequence."""
    return sum(values) / len(values)


def median(values):
    """The middle value of a non-empty sequence."""
    ordered = sorted(values)
    middle = len(ordered) // 2
    return ordered[middle]
"#;

const TEST_STATS_PY: &str = r#"import unittest

from stats import mean, median


class StatsTest(unittest.TestCase):
    def test_mean(self):
        self.assertEqual(mean([1, 2, 3, 4]), 2.5)

    def test_median_odd(self):
        self.assertEqual(median([3, 1, 2]), 2)

    def test_median_even(self):
        self.assertEqual(median([4, 1, 3, 2]), 2.5)


if __name__ == "__main__":
    unittest.main()
"#;

/// The arguments of a tool call, as the model would send them.
fn args(value: serde_json::Value) -> String {
    value.to_string()
}

/// A reply streamed at a readable pace, so the replay streams too.
fn paced(turn: Turn) -> Reply {
    Reply::slow(turn, 12)
}

fn first_turn() -> Vec<Reply> {
    vec![
        paced(
            Turn::new()
                .thinking(
                    "The user says the median test fails. Before reading code I want the actual failure: run the suite and look at the assertion.",
                    "sig-1",
                )
                .with_text("Let me run the tests first.")
                .with_tool("run-1", "bash", args(json!({"command": "python3 -m unittest -v 2>&1 | tail -n 15"}))),
        ),
        paced(
            Turn::new()
                .thinking(
                    "test_median_even fails with 3 != 2.5. For [4, 1, 3, 2] the sorted list is [1, 2, 3, 4]; len // 2 = 2 picks 3, the upper middle. An even-length list needs the mean of the two middle values. Let me read stats.py to confirm.",
                    "sig-2",
                )
                .with_tool("read-1", "read_file", args(json!({"path": "stats.py"}))),
        ),
        paced(
            Turn::new()
                .thinking(
                    "Confirmed: median always returns ordered[len // 2]. Fix: when the length is even, average ordered[middle - 1] and ordered[middle].",
                    "sig-3",
                )
                .with_text("`median` returns the upper middle element for even-length input. Fixing it:")
                .with_tool(
                    "edit-1",
                    "edit_file",
                    args(json!({
                        "path": "stats.py",
                        "old_str": "    middle = len(ordered) // 2\n    return ordered[middle]\n",
                        "new_str": "    middle = len(ordered) // 2\n    if len(ordered) % 2 == 0:\n        return (ordered[middle - 1] + ordered[middle]) / 2\n    return ordered[middle]\n"
                    })),
                ),
        ),
        paced(
            Turn::new()
                .thinking("Run the suite again to be sure nothing else broke.", "sig-4")
                .with_tool("run-2", "bash", args(json!({"command": "python3 -m unittest -v 2>&1 | tail -n 8"}))),
        ),
        paced(Turn::new().thinking("All three pass.", "sig-5").with_text(
            "Fixed. `median` picked the upper of the two middle values for even-length lists:\n\n\
             ```python\n\
             middle = len(ordered) // 2\n\
             if len(ordered) % 2 == 0:\n    \
             return (ordered[middle - 1] + ordered[middle]) / 2\n\
             return ordered[middle]\n\
             ```\n\n\
             - `test_median_even` now passes (`median([4, 1, 3, 2]) == 2.5`)\n\
             - the other two tests still pass\n",
        )),
    ]
}

fn second_turn() -> Vec<Reply> {
    vec![
        paced(
            Turn::new()
                .thinking(
                    "An empty list currently raises IndexError from ordered[0], which says nothing useful. Raise ValueError with a message, and test it.",
                    "sig-6",
                )
                .with_tool(
                    "edit-2",
                    "edit_file",
                    args(json!({
                        "path": "stats.py",
                        "old_str": "    ordered = sorted(values)\n",
                        "new_str": "    ordered = sorted(values)\n    if not ordered:\n        raise ValueError(\"median() of an empty sequence\")\n"
                    })),
                ),
        ),
        paced(
            Turn::new().with_tool(
                "edit-3",
                "edit_file",
                args(json!({
                    "path": "test_stats.py",
                    "old_str": "        self.assertEqual(median([4, 1, 3, 2]), 2.5)\n",
                    "new_str": "        self.assertEqual(median([4, 1, 3, 2]), 2.5)\n\n    def test_median_empty(self):\n        with self.assertRaisesRegex(ValueError, \"empty\"):\n            median([])\n"
                })),
            ),
        ),
        paced(
            Turn::new()
                .thinking("Now four tests; run them.", "sig-7")
                .with_tool("run-3", "bash", args(json!({"command": "python3 -m unittest -v 2>&1 | tail -n 9"}))),
        ),
        paced(
            Turn::new().with_tool(
                "note-1",
                "record_note",
                args(json!({"content": "stats.median: even lengths average the two middle values; empty input raises ValueError.", "category": "decisions"})),
            ),
        ),
        paced(Turn::new().with_text(
            "Done. `median([])` now raises `ValueError: median() of an empty sequence` instead of an `IndexError`, \
             and `test_median_empty` checks it. All four tests pass.",
        )),
    ]
}

/// Records the demo again and writes it to `assets/demo.jsonl`. Run by hand:
/// `cargo test --test all -- --ignored record_the_demo`.
#[test]
#[ignore = "rewrites assets/demo.jsonl; run by hand"]
fn record_the_demo() {
    let mut script = first_turn();
    script.extend(second_turn());
    let server = ScriptedServer::start_blocking(script);
    server.answer_toolless_with(paced(Turn::new().with_text(
        "The user asked to fix a failing median test. Running the suite showed test_median_even failing (3 != 2.5); \
         stats.median returned the upper middle value for even-length lists. It was fixed to average the two middle \
         values, and all three tests passed.",
    )));
    let home = TempDir::new();
    // miniagent's own folders outside /tmp: inside it, the session opens with a note naming
    // them (the sandbox lets commands write anywhere in /tmp), a test folder a newcomer
    // watching the demo would puzzle over.
    let own = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("miniagent-demo-home");
    let _ = std::fs::remove_dir_all(&own);
    std::fs::create_dir_all(&own).unwrap();
    let root = TempDir::new();
    // A stable path for the header (it is shown in the replay); removed afterwards.
    let workspace = std::env::temp_dir().join("miniagent-demo/median-stats");
    let _ = std::fs::remove_dir_all(&workspace);
    std::fs::create_dir_all(&workspace).unwrap();
    std::fs::write(workspace.join("stats.py"), STATS_PY).unwrap();
    std::fs::write(workspace.join("test_stats.py"), TEST_STATS_PY).unwrap();
    std::fs::write(
        workspace.join("README.md"),
        "# median-stats\n\nSmall statistics helpers, tested with unittest.\n",
    )
    .unwrap();
    // A tight budget, so the second turn compacts the first one's work.
    let config = root.join("demo.toml");
    std::fs::write(
        &config,
        "[agent]\ntoken_limit = 4700\n[model]\nmax_output_tokens = 1000\n",
    )
    .unwrap();

    let run = |extra: &[&str]| {
        let output = miniagent(&home)
            .env("MINIAGENT_CONFIG_DIR", &own)
            .env("MINIAGENT_DATA_DIR", &own)
            .env("MINIAGENT_LOG_DIR", &own)
            .env("XDG_CACHE_HOME", own.join("cache"))
            .arg("--workspace")
            .arg(&workspace)
            .arg("--config")
            .arg(&config)
            .args([
                "--base-url",
                &server.anthropic_base_url(),
                "--model",
                "scripted-model",
            ])
            .args(["exec", "--approval", "full-auto"])
            .args(extra)
            .output()
            .expect("miniagent runs");
        assert_eq!(output.status.code(), Some(0), "{}", text(&output.stderr));
        eprintln!("{}", text(&output.stderr));
    };
    run(&["The median test fails. Find out why and fix it."]);
    let log = std::fs::read_dir(own.join("sessions"))
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .find(|path| path.extension().is_some_and(|ext| ext == "jsonl"))
        .expect("a session log");
    let id = support::cli::session_id(&log);
    run(&[
        "--resume",
        &id,
        "Also make median raise a clear error on an empty list, and test that.",
    ]);
    let recorded = miniagent_core::session::load(&log).expect("the demo loads");
    assert!(recorded.warnings.is_empty(), "{:?}", recorded.warnings);
    let sizes: Vec<u64> = recorded
        .events()
        .filter_map(|(_, e)| match e {
            miniagent_protocol::Event::TokenUsage { context_tokens, .. } => Some(*context_tokens),
            _ => None,
        })
        .collect();
    eprintln!(
        "fixed tokens {}, context per step {sizes:?}",
        recorded.header.fixed_tokens
    );
    assert!(
        recorded
            .records
            .iter()
            .any(|r| matches!(r, miniagent_core::session::Record::Summary { .. })),
        "the demo shows a compaction"
    );
    std::fs::create_dir_all(demo_path().parent().unwrap()).unwrap();
    std::fs::copy(&log, demo_path()).unwrap();
    std::fs::remove_dir_all(workspace.parent().unwrap()).unwrap();
    std::fs::remove_dir_all(&own).unwrap();
}

#[test]
fn the_demo_loads_cleanly() {
    let loaded = miniagent_core::session::load(&demo_path()).expect("assets/demo.jsonl loads");
    assert!(loaded.warnings.is_empty(), "{:?}", loaded.warnings);
    assert!(loaded.closing_events().is_empty(), "nothing is left open");
    // Nothing of the machine that recorded it but the demo's own workspace.
    let text = std::fs::read_to_string(demo_path()).unwrap();
    assert!(!text.contains("miniagent-test-"), "the demo names a test folder");
    let turns = loaded
        .events()
        .filter(|(_, e)| matches!(e, miniagent_protocol::Event::TurnComplete { .. }))
        .count();
    assert_eq!(turns, 2);
}

#[test]
fn a_headless_replay_of_the_demo_prints_the_session_and_exits_0() {
    let home = TempDir::new();
    let output = miniagent(&home)
        .args(["replay", "--headless"])
        .arg(demo_path())
        .output()
        .expect("miniagent runs");
    let (stdout, stderr) = (text(&output.stdout), text(&output.stderr));
    assert_eq!(output.status.code(), Some(0), "{stderr}");
    assert!(stdout.starts_with("Fixed. `median` picked the upper"), "{stdout}");
    assert!(stdout.contains("All four tests pass."), "{stdout}");
    assert!(
        stderr.contains("› The median test fails. Find out why and fix it."),
        "{stderr}"
    );
    assert!(stderr.contains("✓ bash python3 -m unittest -v"), "{stderr}");
    assert!(stderr.contains("context compacted:"), "{stderr}");
}

/// The demo's compaction says which messages it summarizes as the inspector names the
/// summary it made (a fresh-eyes tester saw "summarizing messages 1–9" in the replay and
/// "summary of messages 2–10" in F6: the demo was recorded before the numbering was one).
#[test]
fn the_demos_compaction_names_the_messages_its_summary_covers() {
    let loaded = miniagent_core::session::load(&demo_path()).expect("assets/demo.jsonl loads");
    let mut started = None;
    let mut pairs = Vec::new();
    for (_, event) in loaded.events() {
        match event {
            miniagent_protocol::Event::CompactionStarted { reason } => started = Some(reason.clone()),
            miniagent_protocol::Event::ContextCompacted { start, end, .. } => {
                let named = miniagent_protocol::messages_named(*start, *end);
                pairs.push((started.take().expect("a compaction announced first"), named));
            }
            _ => {}
        }
    }
    assert!(!pairs.is_empty(), "the demo shows a compaction");
    for (reason, named) in pairs {
        assert!(
            reason.starts_with(&format!("summarizing {named} (")),
            "{reason} / {named}"
        );
    }
}
