//! The docs' key tables and slash-command lists are generated from the tables the
//! workbench dispatches from, the same sections its help (F1) draws, so a key or command
//! changed in code and not in the docs fails here. Each generated part of a page sits
//! between two HTML comments; `UPDATE_DOCS=1 cargo test -p miniagent-tui docs_tables`
//! rewrites what lies between them.

use pretty_assertions::assert_eq;

use crate::help::{HelpSection, help_sections};
use crate::tests::support::{TempDir, bare_app};

/// The repository's root, where the README and `docs/` are.
const ROOT: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../..");

/// What regenerates the docs, said in every failure.
const REGENERATE: &str = "UPDATE_DOCS=1 cargo test -p miniagent-tui docs_tables";

/// Every section of the help, the replay's keys included.
fn sections() -> Vec<HelpSection> {
    let workspace = TempDir::new();
    let app = bare_app(&workspace);
    help_sections(&app, true)
}

/// A table cell's text: a `|` would end the cell.
fn cell(text: &str) -> String {
    text.replace('|', "\\|")
}

/// `keys` as inline code (none of the tables' keys holds a backtick; one that did is
/// written plain rather than break the span).
fn code(keys: &str) -> String {
    if keys.contains('`') {
        cell(keys)
    } else {
        format!("`{}`", cell(keys))
    }
}

/// The sections named in `wanted`, in the help's order, as one table whose first column
/// names where the keys act.
fn key_table(sections: &[HelpSection], wanted: &[&str]) -> String {
    let mut table = String::from("| where | keys | what they do |\n|---|---|---|\n");
    for (title, rows) in sections.iter().filter(|(title, _)| wanted.contains(title)) {
        for (index, (keys, action)) in rows.iter().enumerate() {
            let place = if index == 0 { cell(title) } else { String::new() };
            table.push_str(&format!("| {place} | {} | {} |\n", code(keys), cell(action)));
        }
    }
    table
}

/// The commands as a table, in the order completion lists them.
fn command_table(sections: &[HelpSection]) -> String {
    let mut table = String::from("| command | what it does |\n|---|---|\n");
    for (_, rows) in sections.iter().filter(|(title, _)| *title == "Commands") {
        for (command, help) in rows {
            table.push_str(&format!("| {} | {} |\n", code(command), cell(help)));
        }
    }
    table
}

/// Every section, each under its own heading: the workbench page's full reference.
fn full_reference(sections: &[HelpSection]) -> String {
    let mut text = String::new();
    for (title, rows) in sections {
        let header = if *title == "Commands" {
            "| command | what it does |"
        } else {
            "| keys | what they do |"
        };
        text.push_str(&format!("### {title}\n\n{header}\n|---|---|\n"));
        for (keys, action) in rows {
            text.push_str(&format!("| {} | {} |\n", code(keys), cell(action)));
        }
        text.push('\n');
    }
    // The end marker follows the last table directly.
    text.pop();
    text
}

fn begin_marker(part: &str) -> String {
    format!("<!-- generated: {part} (crates/tui/src/tests/docs_tables.rs; {REGENERATE} rewrites it) -->")
}

fn end_marker(part: &str) -> String {
    format!("<!-- end of generated: {part} -->")
}

/// Checks that `page`'s part between the markers named `part` is `expected`; under
/// `UPDATE_DOCS=1` writes it there instead.
fn check_part(page: &str, part: &str, expected: &str) {
    let path = format!("{ROOT}/{page}");
    let text = std::fs::read_to_string(&path).unwrap_or_else(|error| panic!("{page}: {error}"));
    let (begin, end) = (begin_marker(part), end_marker(part));
    let Some(start) = text.find(&begin).map(|at| at + begin.len() + 1) else {
        panic!(
            "{page} has no line `{begin}`: put it, and `{end}`, where the `{part}` table goes, then run {REGENERATE}"
        );
    };
    let Some(stop) = text[start..].find(&end).map(|at| start + at) else {
        panic!("{page} has `{begin}` but no `{end}` after it");
    };
    if std::env::var_os("UPDATE_DOCS").is_some() {
        let updated = format!("{}{expected}{}", &text[..start], &text[stop..]);
        std::fs::write(&path, updated).unwrap_or_else(|error| panic!("{page}: {error}"));
        return;
    }
    assert_eq!(
        &text[start..stop],
        expected,
        "{page}'s `{part}` differs from the workbench's tables (bindings.rs, commands.rs, the panes' key_hints): run {REGENERATE}"
    );
}

#[test]
fn readme_key_table_and_commands_are_the_tables() {
    let sections = sections();
    check_part(
        "README.md",
        "keys",
        &key_table(&sections, &["Workbench", "Input", "Approval"]),
    );
    check_part("README.md", "commands", &command_table(&sections));
}

#[test]
fn workbench_page_lists_every_key_and_command() {
    let sections = sections();
    check_part("docs/workbench.md", "every key", &full_reference(&sections));
}

/// The generated tables themselves: a key holding `|` stays in its cell, each section's
/// title stands once, on its first row, and the commands keep their arguments.
#[test]
fn tables_escape_and_group_their_rows() {
    let sections: Vec<HelpSection> = vec![
        (
            "Workbench",
            vec![
                ("F1".to_string(), "help".into()),
                ("a|b".to_string(), "x | y".into()),
            ],
        ),
        ("Input", vec![("Enter".to_string(), "send".into())]),
        (
            "Commands",
            vec![("/approval MODE".to_string(), "read-only, ask".into())],
        ),
    ];
    assert_eq!(
        key_table(&sections, &["Workbench", "Input"]),
        "| where | keys | what they do |\n|---|---|---|\n\
         | Workbench | `F1` | help |\n\
         |  | `a\\|b` | x \\| y |\n\
         | Input | `Enter` | send |\n"
    );
    assert_eq!(
        command_table(&sections),
        "| command | what it does |\n|---|---|\n| `/approval MODE` | read-only, ask |\n"
    );
    assert_eq!(
        full_reference(&sections[1..]),
        "### Input\n\n| keys | what they do |\n|---|---|\n| `Enter` | send |\n\n\
         ### Commands\n\n| command | what it does |\n|---|---|\n| `/approval MODE` | read-only, ask |\n"
    );
}

/// The tools page's table has a row for every built-in tool (the core's table, which its
/// own test holds to the registry), saying what it can change as the approval policy
/// reads it.
#[test]
fn the_tools_page_has_a_row_for_every_built_in_tool() {
    use miniagent_core::tools::{BUILTIN_TOOLS, ToolEffect};
    let path = format!("{ROOT}/docs/tools-and-approvals.md");
    let page = std::fs::read_to_string(&path).unwrap_or_else(|error| panic!("{path}: {error}"));
    for (name, effect) in BUILTIN_TOOLS {
        let row = page
            .lines()
            .find(|line| line.starts_with("| ") && line.contains(&format!("`{name} {{")))
            .unwrap_or_else(|| panic!("docs/tools-and-approvals.md has no row for `{name}`"));
        let said = match effect {
            ToolEffect::ReadOnly => "read-only",
            ToolEffect::WritesFiles => "writes files",
            ToolEffect::RunsCommands => "runs commands",
            ToolEffect::External => "external",
        };
        assert!(row.contains(said), "`{name}` is {said}: {row}");
    }
}
