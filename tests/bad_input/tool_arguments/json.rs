//! Tool arguments that are wrong as JSON or as values: text that is not JSON or not an
//! object, wrong types, missing and unknown fields, unknown tools, 10 MB strings and NUL
//! bytes.

use std::time::Instant;

use pretty_assertions::assert_eq;
use serde_json::json;

use super::{Outside, args, assert_refused, run_bad_calls, run_bulk_calls};

#[tokio::test]
async fn invalid_json_arguments() {
    let (received, agent) = run_bad_calls(
        |_| {},
        &[
            ("write_file", r#"{"path": "a.txt", "content": "x""#.to_string()),
            ("read_file", "{path: a.txt}".to_string()),
            ("write_file", r#"["a.txt", "x"]"#.to_string()),
            ("write_file", r#""a.txt""#.to_string()),
            ("read_file", r#"{"path": "a.txt"} trailing"#.to_string()),
        ],
    )
    .await;
    assert_refused(
        &received[0],
        "arguments were not valid JSON: EOF while parsing an object",
    );
    assert_refused(
        &received[1],
        "arguments were not valid JSON: key must be a string",
    );
    assert_eq!(
        received[2],
        ("arguments must be a JSON object, got an array".into(), true)
    );
    assert_eq!(
        received[3],
        ("arguments must be a JSON object, got a string".into(), true)
    );
    assert_refused(&received[4], "arguments were not valid JSON: trailing characters");
    assert!(
        !agent.workspace.join("a.txt").exists(),
        "no call with bad JSON ran"
    );
}

#[tokio::test]
async fn wrong_types() {
    let (received, _agent) = run_bad_calls(
        |ws| {
            ws.write("a.txt", "one\ntwo\n");
        },
        &[
            ("read_file", args(json!({"path": 42}))),
            ("read_file", args(json!({"path": "a.txt", "offset": "2"}))),
            ("read_file", args(json!({"path": "a.txt", "limit": 1.5}))),
            ("read_file", args(json!({"path": "a.txt", "offset": 0}))),
            ("read_file", args(json!({"path": ["a.txt"]}))),
            (
                "edit_file",
                args(json!({"path": "a.txt", "old_str": "one", "new_str": "1", "replace_all": "yes"})),
            ),
            ("write_file", args(json!({"path": "a.txt", "content": null}))),
            ("bash", args(json!({"command": {"program": "ls"}}))),
        ],
    )
    .await;
    let expected = [
        "invalid arguments for `read_file`: `path` must be a string, got integer",
        "invalid arguments for `read_file`: `offset` must be an integer, got string",
        "invalid arguments for `read_file`: `limit` must be an integer, got number",
        "invalid arguments for `read_file`: `offset` must be at least 1, got 0",
        "invalid arguments for `read_file`: `path` must be a string, got array",
        "invalid arguments for `edit_file`: `replace_all` must be a boolean, got string",
        "invalid arguments for `write_file`: `content` must be a string, got null",
        "invalid arguments for `bash`: `command` must be a string, got object",
    ];
    for (got, want) in received.iter().zip(expected) {
        assert_eq!(got, &(want.to_string(), true));
    }
}

/// JSON Schema counts `2.0` as an integer, and so does the schema check: such a count is
/// read as that number (it was once dropped for the default), and one too large for a
/// count as the largest.
#[tokio::test]
async fn whole_numbers_written_as_floats() {
    let (received, _agent) = run_bad_calls(
        |ws| {
            ws.write("a.txt", "one\ntwo\nthree\n");
        },
        &[
            (
                "read_file",
                args(json!({"path": "a.txt", "offset": 2.0, "limit": 1.0})),
            ),
            (
                "read_file",
                args(json!({"path": "a.txt", "offset": 3, "limit": 1e20})),
            ),
        ],
    )
    .await;
    assert_eq!(
        received,
        vec![
            ("     2|two".to_string(), false),
            ("     3|three".to_string(), false),
        ]
    );
}

#[tokio::test]
async fn missing_fields() {
    let (received, agent) = run_bad_calls(
        |ws| {
            ws.write("a.txt", "one\n");
        },
        &[
            ("write_file", args(json!({"path": "b.txt"}))),
            ("edit_file", args(json!({"path": "a.txt", "old_str": "one"}))),
            ("read_file", args(json!({}))),
            ("bash", args(json!({}))),
            ("read_file", String::new()),
            ("read_file", args(json!({"path": "a.txt", "mode": "fast"}))),
        ],
    )
    .await;
    let expected = [
        "invalid arguments for `write_file`: missing required field `content`",
        "invalid arguments for `edit_file`: missing required field `new_str`",
        "invalid arguments for `read_file`: missing required field `path`",
        "invalid arguments for `bash`: missing required field `command`",
        // No arguments at all are an empty object, which lacks the path.
        "invalid arguments for `read_file`: missing required field `path`",
        "invalid arguments for `read_file`: unknown field `mode` (expected: column, limit, offset, path)",
    ];
    for (got, want) in received.iter().zip(expected) {
        assert_eq!(got, &(want.to_string(), true));
    }
    assert!(!agent.workspace.join("b.txt").exists());
    assert_eq!(
        std::fs::read_to_string(agent.workspace.join("a.txt")).unwrap_or_default(),
        "one\n"
    );
}

#[tokio::test]
async fn unknown_tools() {
    let long_name = "x".repeat(1000);
    let (received, _agent) = run_bad_calls(
        |_| {},
        &[
            ("rm_rf", args(json!({"path": "/"}))),
            ("READ_FILE", args(json!({"path": "a.txt"}))),
            ("", args(json!({}))),
            (long_name.as_str(), args(json!({}))),
        ],
    )
    .await;
    assert_refused(
        &received[0],
        "unknown tool `rm_rf`; the tools are: read_file, write_file, edit_file, bash",
    );
    assert_refused(&received[1], "unknown tool `READ_FILE`; the tools are: read_file");
    assert_refused(&received[2], "unknown tool ``; the tools are: read_file");
    assert_refused(
        &received[3],
        &format!("unknown tool `{long_name}`; the tools are: read_file"),
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn three_megabyte_strings() {
    // As large as a reply may be: one over the 4 MiB reply cap is cut before its calls
    // run (tests/hostile_provider.rs).
    const HUGE: usize = 3 * 1024 * 1024;
    // Words, not one letter repeated: the tokenizer takes seconds over a long run of a
    // single letter, which is a tokenizer matter, not what this test is about.
    let words = "lorem ipsum dolor sit amet, consectetur adipiscing elit, sed do eiusmod\n";
    let mut huge = words.repeat(HUGE / words.len() + 1);
    huge.truncate(HUGE);
    let outside = Outside::new();
    let started = Instant::now();
    let (received, agent) = run_bulk_calls(
        |ws| {
            ws.write("small.txt", "small\n");
        },
        &[
            ("read_file", args(json!({"path": huge}))),
            (
                "edit_file",
                args(json!({"path": "small.txt", "old_str": huge, "new_str": "b"})),
            ),
            ("write_file", args(json!({"path": "big.txt", "content": huge}))),
        ],
    )
    .await;
    eprintln!("three 3 MB calls took {:.1} s", started.elapsed().as_secs_f64());
    assert_eq!(
        received[0],
        (
            format!("the path is {HUGE} bytes long; a path has at most 4096 bytes"),
            true
        )
    );
    assert_refused(
        &received[1],
        "`old_str` was not found in small.txt; nothing was changed.",
    );
    // Megabytes of content are not wrong in themselves: they are written whole.
    assert_eq!(
        received[2],
        (format!("wrote {HUGE} bytes to big.txt (new file)"), false)
    );
    assert_eq!(
        std::fs::read(agent.workspace.join("big.txt")).unwrap_or_default(),
        huge.as_bytes()
    );
    assert_eq!(
        std::fs::read_to_string(agent.workspace.join("small.txt")).unwrap_or_default(),
        "small\n"
    );
    outside.assert_untouched();
}

#[tokio::test]
async fn nul_bytes() {
    let (received, agent) = run_bad_calls(
        |ws| {
            ws.write("a.txt", "one\n");
        },
        &[
            ("read_file", args(json!({"path": "a.txt\u{0}.png"}))),
            ("write_file", args(json!({"path": "b\u{0}.txt", "content": "x"}))),
            (
                "edit_file",
                args(json!({"path": "a.txt\u{0}", "old_str": "one", "new_str": "1"})),
            ),
            (
                "edit_file",
                args(json!({"path": "a.txt", "old_str": "o\u{0}ne", "new_str": "1"})),
            ),
            // NUL in content is data, written as given.
            (
                "write_file",
                args(json!({"path": "nul.bin", "content": "a\u{0}b"})),
            ),
        ],
    )
    .await;
    assert_eq!(received[0], ("the path contains a NUL byte".into(), true));
    assert_eq!(received[1], ("the path contains a NUL byte".into(), true));
    assert_eq!(received[2], ("the path contains a NUL byte".into(), true));
    assert_refused(
        &received[3],
        "`old_str` was not found in a.txt; nothing was changed.",
    );
    assert_eq!(received[4], ("wrote 3 bytes to nul.bin (new file)".into(), false));
    assert_eq!(
        std::fs::read(agent.workspace.join("nul.bin")).unwrap_or_default(),
        b"a\0b"
    );
    assert_eq!(
        std::fs::read_to_string(agent.workspace.join("a.txt")).unwrap_or_default(),
        "one\n"
    );
}
