//! The `@` file picker in the input and the chips of attached files in the transcript.

use miniagent_protocol::{Attached, AttachedFile};
use pretty_assertions::assert_eq;

use super::*;

/// A workspace with files to pick from: ignored ones, a name with spaces, CJK names.
fn picker_app(workspace: &TempDir) -> Bench {
    workspace.write("src/main.rs", "fn main() {}\n");
    workspace.write("src/cmd/mail.rs", "\n");
    workspace.write("src/lib.rs", "\n");
    workspace.write("docs/设计/说明.md", "\n");
    workspace.write("docs/日本語のメモ.txt", "\n");
    workspace.write("notes/meeting notes.md", "\n");
    workspace.write("target/debug/main", "\n");
    workspace.write(".gitignore", "target/\n");
    workspace.write(".github/workflows/ci.yml", "\n");
    // Names a terminal would act on: one is never listed, the other is shown inert.
    workspace.write("evil\u{1b}[2J.txt", "\n");
    workspace.write("zz\u{202e}txt.exe", "\n");
    // `ignore` honours .gitignore only inside a git repository (or with .ignore).
    std::fs::create_dir_all(workspace.join(".git")).unwrap();
    workspace.write(".git/HEAD", "ref: refs/heads/main\n");
    let mut app = support::bare_app(workspace);
    app.on_agent_event(support::configured("/home/dev/project", None));
    app
}

/// Types `text`, then lets the listing finish and ranks again (the workbench shows
/// more on its ticks; a test waits).
fn type_and_list(app: &mut Bench, text: &str) {
    type_text(app, text);
    app.input.picker_listed();
}

fn results(app: &Bench) -> Vec<String> {
    app.input
        .picker()
        .map(|picker| picker.results().into_iter().map(str::to_string).collect())
        .unwrap_or_default()
}

#[test]
fn at_lists_the_workspace_files_without_ignored_ones_and_tab_takes_the_first() {
    // With nothing typed after the `@`, the shortest paths come first.
    let workspace = TempDir::new();
    let mut app = picker_app(&workspace);
    type_and_list(&mut app, "look at @");
    assert_eq!(
        results(&app),
        vec![
            ".gitignore",
            "src/lib.rs",
            "src/main.rs",
            "zz\u{202e}txt.exe",
            "src/cmd/mail.rs",
            "docs/设计/说明.md",
            "notes/meeting notes.md",
            ".github/workflows/ci.yml",
        ]
    );
    type_text(&mut app, "src/ma");
    assert_eq!(results(&app), vec!["src/main.rs", "src/cmd/mail.rs"]);
    app.on_key(key(KeyCode::Tab));
    assert_eq!(app.input.text(), "look at @src/main.rs ");
    assert!(app.input.picker().is_none());
    type_text(&mut app, "please");
    app.on_key(key(KeyCode::Enter));
    assert_eq!(
        app.sent,
        vec![Op::UserInput {
            text: "look at @src/main.rs please".into()
        }]
    );
}

#[test]
fn arrows_move_enter_takes_and_a_path_with_spaces_is_quoted() {
    let workspace = TempDir::new();
    let mut app = picker_app(&workspace);
    type_and_list(&mut app, "@mn");
    assert_eq!(results(&app), vec!["src/main.rs", "notes/meeting notes.md"]);
    app.on_key(key(KeyCode::Down));
    app.on_key(key(KeyCode::Enter));
    assert_eq!(app.input.text(), "@\"notes/meeting notes.md\" ");
    // Enter took the file: nothing was sent.
    assert_eq!(app.sent, Vec::<Op>::new());
    // Up from the first goes round to the last.
    app.input.clear();
    type_and_list(&mut app, "@设计");
    app.on_key(key(KeyCode::Up));
    app.on_key(key(KeyCode::Tab));
    assert_eq!(app.input.text(), "@docs/设计/说明.md ");
}

#[test]
fn esc_closes_the_picker_leaving_the_text_and_the_next_esc_is_the_workbenchs() {
    let workspace = TempDir::new();
    let mut app = picker_app(&workspace);
    type_and_list(&mut app, "see @src");
    assert!(app.input.picker().is_some());
    app.on_key(key(KeyCode::Esc));
    assert!(app.input.picker().is_none());
    assert_eq!(app.input.text(), "see @src");
    // Typing on in the same mention keeps it closed; a new mention opens it again.
    type_text(&mut app, "/m");
    assert!(app.input.picker().is_none());
    type_and_list(&mut app, " @read");
    assert_eq!(results(&app), Vec::<String>::new());
    assert!(app.input.picker().is_some());
    // With nothing to take, Enter sends the message as typed.
    app.on_key(key(KeyCode::Enter));
    assert_eq!(
        app.sent,
        vec![Op::UserInput {
            text: "see @src/m @read".into()
        }]
    );
}

#[test]
fn an_at_inside_a_word_or_after_a_space_typed_later_opens_nothing() {
    let workspace = TempDir::new();
    let mut app = picker_app(&workspace);
    type_and_list(&mut app, "mail me@src");
    assert!(app.input.picker().is_none());
    app.input.clear();
    type_and_list(&mut app, "@src and");
    assert!(app.input.picker().is_none());
    // Tab is the workbench's again: focus moves on.
    app.on_key(key(KeyCode::Tab));
    assert_ne!(app.layout.focus(), Pane::Input);
}

#[test]
fn the_picker_is_drawn_over_the_conversation_with_matches_marked() {
    let workspace = TempDir::new();
    let mut app = picker_app(&workspace);
    type_and_list(&mut app, "explain @");
    assert_screen!("mention_picker_all_80x24", screen(&mut app, 80, 24));
    assert_screen!("mention_picker_all_160x48", screen(&mut app, 160, 48));
    type_and_list(&mut app, "docs");
    assert_screen!("mention_picker_cjk_80x24", screen(&mut app, 80, 24));
    assert_screen!("mention_picker_cjk_160x48", screen(&mut app, 160, 48));
}

#[test]
fn attached_files_show_as_chips_under_the_message() {
    let workspace = TempDir::new();
    let mut app = picker_app(&workspace);
    let files = vec![
        AttachedFile {
            path: "src/main.rs".into(),
            bytes: 2_400,
            lines: Some(120),
            attached: Attached::Whole,
        },
        AttachedFile {
            path: "docs/日本語のメモ.txt".into(),
            bytes: 90_000,
            lines: Some(2_000),
            attached: Attached::Part { lines: 400 },
        },
        AttachedFile {
            path: "big.log".into(),
            bytes: 3_300_000,
            lines: None,
            attached: Attached::Reference,
        },
        AttachedFile {
            path: "../secret\u{1b}[31m.txt".into(),
            bytes: 0,
            lines: None,
            attached: Attached::Refused {
                reason: "it leads outside the workspace".into(),
            },
        },
    ];
    app.on_agent_event(Event::TurnStarted {
        text: "explain @src/main.rs @docs/日本語のメモ.txt @big.log @../secret.txt".into(),
    });
    app.on_agent_event(Event::FilesAttached { files: files.clone() });
    assert_screen!("mention_chips_80x24", screen(&mut app, 80, 24));
    assert_screen!("mention_chips_160x48", screen(&mut app, 160, 48));
    // In words under NO_COLOR.
    let workspace = TempDir::new();
    let mut plain = picker_app(&workspace);
    plain.look.set_color_depth(crate::palette::ColorDepth::None);
    plain.on_agent_event(Event::TurnStarted {
        text: "explain".into(),
    });
    plain.on_agent_event(Event::FilesAttached { files });
    assert_screen!("mention_chips_plain_80x24", screen(&mut plain, 80, 24));
}
