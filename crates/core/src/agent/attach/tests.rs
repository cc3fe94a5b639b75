//! Tests of `@path` mentions: which words are mentions, and what each attaches.

use super::*;
use pretty_assertions::assert_eq;
use std::path::PathBuf;

struct Scratch(PathBuf);

impl Scratch {
    fn new(name: &str) -> Self {
        let dir = std::env::temp_dir().join(format!("miniagent-attach-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(dir.join("ws/src")).unwrap();
        std::fs::create_dir_all(dir.join("outside")).unwrap();
        Self(dir.canonicalize().unwrap())
    }

    fn ws(&self) -> PathBuf {
        self.0.join("ws")
    }

    fn workspace(&self) -> Workspace {
        Workspace::new(&self.ws(), &[]).protecting(&[self.ws().join("own")])
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn attached(workspace: &Workspace, text: &str) -> (Vec<String>, Vec<AttachedFile>) {
    attached_under(workspace, text, Box::new(|_| None))
}

fn attached_under(workspace: &Workspace, text: &str, rules: RuleCheck) -> (Vec<String>, Vec<AttachedFile>) {
    let with = attach(
        workspace,
        &Secrets::new(vec!["sk-secret-value".into()]),
        text.into(),
        &rules,
    );
    let blocks = with
        .message
        .content
        .iter()
        .map(|block| match block {
            ContentBlock::Text { text } => text.clone(),
            other => panic!("not text: {other:?}"),
        })
        .collect();
    (blocks, with.files)
}

#[test]
fn mentions_are_words_after_an_at_sign_at_the_start_or_after_whitespace() {
    let cases: &[(&str, Vec<Vec<&str>>)] = &[
        ("@a.rs", vec![vec!["a.rs"]]),
        ("look at @src/main.rs.", vec![vec!["src/main.rs.", "src/main.rs"]]),
        ("mail me@example.com", vec![]),
        ("@ alone", vec![]),
        ("two @a\n@b", vec![vec!["a"], vec!["b"]]),
        ("quoted @\"a b.txt\" here", vec![vec!["a b.txt"]]),
        ("unclosed @\"a b.txt here", vec![]),
        ("across lines @\"a\nb\"", vec![]),
        ("empty @\"\"", vec![]),
        ("twice @a @a", vec![vec!["a"]]),
        ("(@a) and @b,", vec![vec!["b,", "b"]]),
        ("日本 @日本語.md", vec![vec!["日本語.md"]]),
        ("@@x", vec![vec!["@x"]]),
    ];
    for (text, expected) in cases {
        let expected: Vec<Vec<String>> = expected
            .iter()
            .map(|c| c.iter().map(|s| s.to_string()).collect())
            .collect();
        assert_eq!(mentions(text), expected, "{text:?}");
    }
    let many: String = (0..50).map(|i| format!("@f{i} ")).collect();
    assert_eq!(mentions(&many).len(), MAX_MENTIONS);
}

#[test]
fn a_small_file_is_attached_whole_and_a_word_that_names_nothing_stays_plain() {
    let scratch = Scratch::new("whole");
    std::fs::write(
        scratch.ws().join("src/main.rs"),
        "fn main() {}\n// key sk-secret-value\n",
    )
    .unwrap();
    let (blocks, files) = attached(&scratch.workspace(), "explain @src/main.rs. and @nothing or @src");
    assert_eq!(
        blocks,
        vec![
            "explain @src/main.rs. and @nothing or @src".to_string(),
            "\n\n<file path=\"src/main.rs\" lines=\"2\">\nfn main() {}\n// key [redacted]\n</file>"
                .to_string(),
        ]
    );
    assert_eq!(
        files,
        vec![AttachedFile {
            path: "src/main.rs".into(),
            bytes: 36,
            lines: Some(2),
            attached: Attached::Whole,
        }]
    );
}

#[test]
fn a_long_file_sends_its_first_lines_and_a_large_one_a_reference() {
    let scratch = Scratch::new("cut");
    let long: String = (1..=1000).map(|n| format!("line {n}\n")).collect();
    std::fs::write(scratch.ws().join("long.txt"), &long).unwrap();
    std::fs::write(scratch.ws().join("big.log"), "x".repeat(300 * 1024)).unwrap();
    let (blocks, files) = attached(&scratch.workspace(), "@long.txt @big.log");
    let first: String = (1..=400).map(|n| format!("line {n}\n")).collect();
    assert_eq!(
        blocks[1],
        format!(
            "\n\n<file path=\"long.txt\" lines=\"1-400\" of=\"1000\">\n{}\n</file>\n[Only lines 1-400 of \"long.txt\" (1000 lines) were attached; read the rest with read_file (offset 401).]",
            first.trim_end()
        )
    );
    assert_eq!(
        blocks[2],
        "\n\n[Attached by reference: \"big.log\" (307200 bytes) is too large to include here; read the parts you need with read_file.]"
    );
    assert_eq!(
        files,
        vec![
            AttachedFile {
                path: "long.txt".into(),
                bytes: long.len() as u64,
                lines: Some(1000),
                attached: Attached::Part { lines: 400 },
            },
            AttachedFile {
                path: "big.log".into(),
                bytes: 300 * 1024,
                lines: None,
                attached: Attached::Reference,
            },
        ]
    );
}

#[test]
fn escapes_own_folders_and_binaries_are_refused_with_a_note() {
    let scratch = Scratch::new("refused");
    std::fs::write(scratch.0.join("outside/secret.txt"), "secret").unwrap();
    std::os::unix::fs::symlink(
        scratch.0.join("outside/secret.txt"),
        scratch.ws().join("link.txt"),
    )
    .unwrap();
    std::fs::create_dir_all(scratch.ws().join(".miniagent")).unwrap();
    std::fs::write(scratch.ws().join(".miniagent/config.toml"), "x = 1").unwrap();
    std::fs::write(scratch.ws().join("blob.bin"), b"ab\0cd").unwrap();
    let (blocks, files) = attached(
        &scratch.workspace(),
        "@../outside/secret.txt @link.txt @.miniagent/config.toml @blob.bin @../outside/none.txt",
    );
    let reasons: Vec<(String, Attached)> = files.into_iter().map(|f| (f.path, f.attached)).collect();
    let outside = scratch.0.join("outside/secret.txt");
    let own =
        "it is in miniagent's own folders (settings, sessions, logs), which are not attached".to_string();
    let ws = scratch.ws();
    assert_eq!(
        reasons,
        vec![
            (
                "../outside/secret.txt".into(),
                Attached::Refused {
                    reason: format!(
                        "`../outside/secret.txt` resolves to {}, which is outside the workspace {}; file tools only work inside it",
                        outside.display(),
                        ws.display()
                    )
                }
            ),
            (
                "link.txt".into(),
                Attached::Refused {
                    reason: format!(
                        "`link.txt` resolves to {}, which is outside the workspace {}; file tools only work inside it",
                        outside.display(),
                        ws.display()
                    )
                }
            ),
            (
                ".miniagent/config.toml".into(),
                Attached::Refused { reason: own.clone() }
            ),
            (
                "blob.bin".into(),
                Attached::Refused {
                    reason: "it is a binary file".into()
                }
            ),
        ]
    );
    assert_eq!(
        blocks[3],
        format!("\n\n[@.miniagent/config.toml was not attached: {own}.]")
    );
    assert!(!blocks.concat().contains("secret\n"), "{blocks:?}");
}

#[test]
fn the_message_budget_sends_later_files_by_reference_and_a_file_goes_once() {
    let scratch = Scratch::new("budget");
    for name in ["a", "b", "c", "d"] {
        // 300 lines of 101 bytes: three fit the message's budget, a fourth only in part.
        std::fs::write(
            scratch.ws().join(name),
            format!("{}\n", "y".repeat(100)).repeat(300),
        )
        .unwrap();
    }
    let (_, files) = attached(&scratch.workspace(), "@a @./a @b @c @d");
    let how: Vec<(String, Attached)> = files.into_iter().map(|f| (f.path, f.attached)).collect();
    assert_eq!(
        how,
        vec![
            ("a".into(), Attached::Whole),
            ("b".into(), Attached::Whole),
            ("c".into(), Attached::Whole),
            ("d".into(), Attached::Part { lines: 73 }),
        ]
    );
}
