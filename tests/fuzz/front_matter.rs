//! Target 4: skill front matter. Parsing is repeatable; CRLF and a byte-order mark read
//! the same as without; a parsed skill's name, description and tools are trimmed and
//! non-empty.

use std::path::PathBuf;

use miniagent_core::tools::skills::{Skill, SkillSource};
use pretty_assertions::assert_eq;

use super::fuzz;
use super::mutate::Mutator;

const SKILL_SEEDS: &[&str] = &[
    "---\nname: commit-message\ndescription: Write a commit message from the staged diff.\nlicense: MIT\nallowed-tools: Bash(git diff:*), Bash(git log:*) read_file\nmetadata:\n  author: someone\n  version: \"1.0\"\n  tags: [git, commits]\n  nested:\n    deep: value # a comment\n---\n# Commit messages\n\nRun `scripts/check.sh` first.\n",
    "\u{feff}---\r\nname: 'quoted ''name'''\r\ndescription: >-\r\n  Folded text\r\n  over lines\r\n\r\n  and a paragraph.\r\nallowed-tools:\r\n  - bash\r\n  - read_file\r\n---\r\nBody\r\n",
    "---\nname: \"escapes \\u00e9 \\x41 \\t\"\ndescription: |\n  Literal block\n    indented more\n  back\n\nmetadata: {a: 1, b: [x, \"y, z\"], c: {d: e}}\n---\n",
    "---\nname: 中文技能\ndescription: \"a quoted value that runs\n  over two lines\"\nlist:\n- at the key's column\n- - nested list\n  - second\n- key: value\n  other: 2\n...\nBody after dots\n",
    "---\n# only a comment\nname: x\ndescription: y\nempty:\nnull_value: ~\nkeep: |+\n  kept\n\n\nstrip: >2-\n   indented by indicator\n---\n",
];

const FRONT_MATTER_TOKENS: &[&[u8]] = &[
    b"---\n",
    b"...\n",
    b": ",
    b":",
    b"- ",
    b"-",
    b"|",
    b"|-",
    b">+",
    b">9",
    b"|0",
    b"'",
    b"''",
    b"\"",
    b"\\",
    b"\\u",
    b"\\U0010FFFF",
    b"\\x",
    b"# ",
    b" #",
    b"[",
    b"]",
    b"{",
    b"}",
    b", ",
    b"  ",
    b"\t",
    b"name: ",
    b"description: ",
    b"metadata:\n  ",
    b"allowed-tools: ",
    b"~",
];

#[test]
fn skill_front_matter_parses_deterministically() {
    let mut seeds: Vec<Vec<u8>> = SKILL_SEEDS.iter().map(|seed| seed.as_bytes().to_vec()).collect();
    // The bundled skills are real-world seeds.
    let skills = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("skills");
    if let Ok(entries) = std::fs::read_dir(&skills) {
        for entry in entries.flatten() {
            if let Ok(text) = std::fs::read(entry.path().join("SKILL.md")) {
                seeds.push(text);
            }
        }
    }
    let mutator = Mutator {
        seeds: &seeds,
        dictionary: FRONT_MATTER_TOKENS,
        json_eighths: 0,
    };
    let root = PathBuf::from("/skills/fuzz");
    let parse = |text: &str| Skill::parse(text, root.clone(), SkillSource::Workspace);
    fuzz(
        "skill_front_matter_parses_deterministically",
        5000,
        |rng, input| {
            *input = mutator.mutated(rng);
            let text = String::from_utf8_lossy(input);
            let first = parse(&text);
            assert_eq!(parse(&text), first, "parsing is repeatable");
            match &first {
                Ok((skill, _)) => {
                    assert!(!skill.name.is_empty() && skill.name.trim() == skill.name);
                    assert!(!skill.name.chars().any(char::is_control), "{:?}", skill.name);
                    assert!(!skill.description.is_empty() && skill.description.trim() == skill.description);
                    assert!(skill.metadata.is_object(), "{}", skill.metadata);
                    for tool in skill.allowed_tools.iter().flatten() {
                        assert!(!tool.is_empty() && tool.trim() == tool, "{tool:?}");
                    }
                    assert!(!skill.body.contains('\r'), "the body has \\n line endings");
                }
                Err(reason) => assert!(!reason.to_string().is_empty()),
            }
            // Windows line endings and a byte-order mark read the same.
            if !text.contains('\r') {
                assert_eq!(parse(&text.replace('\n', "\r\n")), first, "CRLF reads as LF");
            }
            if !text.starts_with('\u{feff}') {
                assert_eq!(parse(&format!("\u{feff}{text}")), first, "a BOM is skipped");
            }
        },
    );
}
