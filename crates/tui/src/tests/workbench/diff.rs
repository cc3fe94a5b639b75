//! `/diff` and the tree's preview of a changed file: what is asked of the agent, what
//! its `DiffReport` shows (file list and diff, wide and narrow, NO_COLOR), one turn's
//! changes, the empty and waiting states, the keys, and text that must not reach the
//! terminal raw.

use super::*;
use crate::layers::diff::DiffOverlay;
use miniagent_protocol::{FileDiff, FileStatus, TextChange, TurnChanges};
use pretty_assertions::assert_eq;

const PARSER_OLD: &str = "pub fn parse(input: &str) -> Vec<Token> {\n\tlet mut tokens = Vec::new();\n\tfor word in input.split(' ') {\n\t\ttokens.push(Token::word(word));\n\t}\n\ttokens\n}\n\npub fn count(input: &str) -> usize {\n\tparse(input).len()\n}\n";
const PARSER_NEW: &str = "/// Splits on any whitespace. 按空白拆分。\npub fn parse(input: &str) -> Vec<Token> {\n\tlet mut tokens = Vec::new();\n\tfor word in input.split_whitespace() {\n\t\ttokens.push(Token::word(word));\n\t}\n\ttokens\n}\n\npub fn count(input: &str) -> usize {\n\tparse(input).len()\n}\n";

fn change(old: Option<&str>, new: &str) -> Option<TextChange> {
    Some(TextChange {
        old_text: old.map(str::to_string),
        new_text: new.to_string(),
    })
}

/// Three files (modified, added, deleted) and a binary one, over two turns.
fn files() -> Vec<FileDiff> {
    vec![
        FileDiff {
            path: "src/parser.rs".into(),
            status: FileStatus::Modified,
            change: change(Some(PARSER_OLD), PARSER_NEW),
            note: None,
            changed_outside: true,
        },
        FileDiff {
            path: "docs/NOTES.md".into(),
            status: FileStatus::Added,
            change: change(None, "# Notes\n\nThe parser splits on whitespace.\n"),
            note: None,
            changed_outside: false,
        },
        FileDiff {
            path: "old/legacy.txt".into(),
            status: FileStatus::Deleted,
            change: change(Some("kept for the old build\nremove after 2.0\n"), ""),
            note: None,
            changed_outside: false,
        },
        FileDiff {
            path: "assets/logo.png".into(),
            status: FileStatus::Modified,
            change: None,
            note: Some("binary, 12.0 KB".into()),
            changed_outside: false,
        },
    ]
}

fn turns() -> Vec<TurnChanges> {
    vec![
        TurnChanges {
            turn: 1,
            text: "add notes and fix the parser".into(),
            files: 3,
        },
        TurnChanges {
            turn: 2,
            text: "remove the legacy file 删除旧文件".into(),
            files: 1,
        },
    ]
}

fn report(turn: Option<u32>) -> Event {
    Event::DiffReport {
        turn,
        files: files(),
        turns: turns(),
    }
}

fn overlay(app: &Bench) -> &DiffOverlay {
    app.top::<DiffOverlay>().expect("the /diff overlay is on top")
}

/// `/diff` asks the agent for the whole session's changes, says it is waiting, then shows
/// the files beside (wide) or above (narrow) the first one's diff.
#[test]
fn diff_asks_for_the_session_and_shows_each_file() {
    let workspace = TempDir::new();
    let mut app = app_in(&workspace);
    app.sent.clear();
    app.submit("/diff".into());
    assert_eq!(app.sent, vec![Op::Diff { turn: None }]);
    assert_screen!("diff_waiting_80x24", screen(&mut app, 80, 24));
    assert_screen!("diff_waiting_160x48", screen(&mut app, 160, 48));
    app.on_agent_event(report(None));
    assert_screen!("diff_80x24", screen(&mut app, 80, 24));
    assert_screen!("diff_160x48", screen(&mut app, 160, 48));
    // The deleted file, then the binary one with its note.
    app.on_key(key(KeyCode::Char(']')));
    app.on_key(key(KeyCode::Char(']')));
    assert_eq!(overlay(&app).selected_path(), Some("old/legacy.txt"));
    assert_screen!("diff_deleted_160x48", screen(&mut app, 160, 48));
    app.on_key(key(KeyCode::Tab));
    assert_screen!("diff_binary_80x24", screen(&mut app, 80, 24));
    assert_eq!(app.sent, vec![Op::Diff { turn: None }], "nothing more is asked");
    app.on_key(key(KeyCode::Esc));
    assert!(app.layers.is_empty());
}

/// Under NO_COLOR the diff reads by its signs and letters alone: no cell has a colour.
#[test]
fn diff_under_no_color() {
    use ratatui::style::Color;
    let workspace = TempDir::new();
    let mut app = app_in(&workspace);
    // As the workbench starts under NO_COLOR: the monochrome theme, no colour at all.
    app.look.set_no_color(true);
    app.look.set_color_depth(crate::palette::ColorDepth::None);
    app.set_theme(Theme::monochrome());
    app.submit("/diff".into());
    app.on_agent_event(report(None));
    assert_screen!("diff_no_color_80x24", screen(&mut app, 80, 24));
    // The selected file stands out by its reversed row, the rest do not.
    let mut terminal = Terminal::new(TestBackend::new(80, 24)).unwrap();
    terminal.draw(|frame| render::draw(frame, &app)).unwrap();
    let reversed = |y: u16| {
        terminal.backend().buffer()[(10, y)]
            .modifier
            .contains(ratatui::style::Modifier::REVERSED)
    };
    assert_eq!((reversed(3), reversed(4)), (true, false));
    let mut terminal = Terminal::new(TestBackend::new(160, 48)).unwrap();
    terminal.draw(|frame| render::draw(frame, &app)).unwrap();
    let coloured = terminal
        .backend()
        .buffer()
        .content()
        .iter()
        .filter(|cell| [cell.fg, cell.bg].iter().any(|colour| *colour != Color::Reset))
        .count();
    assert_eq!(coloured, 0);
}

/// `t` opens the turn picker; a turn's entry asks for that turn's changes, and an
/// answer about something else (the whole session) does not replace what is awaited.
#[test]
fn diff_turn_picker_asks_for_one_turn() {
    let workspace = TempDir::new();
    let mut app = app_in(&workspace);
    app.submit("/diff".into());
    app.on_agent_event(report(None));
    app.sent.clear();
    app.on_key(key(KeyCode::Char('t')));
    assert_eq!(overlay(&app).picker(), Some(0));
    assert_screen!("diff_picker_80x24", screen(&mut app, 80, 24));
    app.on_key(key(KeyCode::Down));
    app.on_key(key(KeyCode::Down));
    assert_screen!("diff_picker_160x48", screen(&mut app, 160, 48));
    app.on_key(key(KeyCode::Enter));
    assert_eq!(app.sent, vec![Op::Diff { turn: Some(2) }]);
    assert_eq!(overlay(&app).asked(), Some(2));
    let waiting = screen(&mut app, 80, 24);
    assert!(
        waiting.contains("asking the agent what turn 2 changed…"),
        "{waiting}"
    );
    app.on_agent_event(report(None));
    assert_eq!(overlay(&app).selected_path(), None, "still waiting for turn 2");
    app.on_agent_event(Event::DiffReport {
        turn: Some(2),
        files: vec![files().remove(2)],
        turns: turns(),
    });
    assert_eq!(overlay(&app).selected_path(), Some("old/legacy.txt"));
    assert_screen!("diff_turn_80x24", screen(&mut app, 80, 24));
    // Back to the whole session: asked again, Esc in the picker only leaves it.
    app.on_key(key(KeyCode::Char('t')));
    assert_eq!(overlay(&app).picker(), Some(2));
    app.on_key(key(KeyCode::Esc));
    assert_eq!(overlay(&app).picker(), None);
    assert!(app.top::<DiffOverlay>().is_some());
    app.on_key(key(KeyCode::Char('t')));
    app.on_key(key(KeyCode::Home));
    app.on_key(key(KeyCode::Enter));
    assert_eq!(
        app.sent,
        vec![Op::Diff { turn: Some(2) }, Op::Diff { turn: None }]
    );
}

/// `/diff N` asks for turn N; anything but a turn's number asks nothing and says why.
#[test]
fn diff_with_a_turn_number() {
    let workspace = TempDir::new();
    let mut app = app_in(&workspace);
    app.sent.clear();
    app.submit("/diff 3".into());
    assert_eq!(app.sent, vec![Op::Diff { turn: Some(3) }]);
    // Before the answer the picker does not know the turns, and does not claim any.
    app.on_key(key(KeyCode::Char('t')));
    let picker = screen(&mut app, 80, 24);
    assert!(
        picker.contains("(the turns come with the agent's answer)"),
        "{picker}"
    );
    assert!(!picker.contains("no turn has changed a file yet"), "{picker}");
    app.on_key(key(KeyCode::Esc));
    app.on_agent_event(Event::DiffReport {
        turn: Some(3),
        files: Vec::new(),
        turns: turns(),
    });
    let shown = screen(&mut app, 80, 24);
    assert!(shown.contains("turn 3 did not change any file"), "{shown}");
    app.on_key(key(KeyCode::Esc));
    for typed in ["/diff x", "/diff 0", "/diff -1", "/diff \u{1b}[2J"] {
        app.submit(typed.into());
        assert!(app.layers.is_empty(), "{typed}");
    }
    assert_eq!(app.sent, vec![Op::Diff { turn: Some(3) }]);
    let shown = screen(&mut app, 120, 30);
    assert!(
        shown.contains("/diff takes a turn's number (as /diff 3), not `x`"),
        "{shown}"
    );
    assert!(shown.contains("not `␛[2J`"), "{shown}");
}

/// A session that changed nothing says so plainly.
#[test]
fn diff_of_an_unchanged_session() {
    let workspace = TempDir::new();
    let mut app = app_in(&workspace);
    app.submit("/diff".into());
    app.on_agent_event(Event::DiffReport {
        turn: None,
        files: Vec::new(),
        turns: Vec::new(),
    });
    assert_screen!("diff_empty_80x24", screen(&mut app, 80, 24));
    assert_screen!("diff_empty_160x48", screen(&mut app, 160, 48));
    // The picker has only the whole session, and says no turn changed a file.
    app.on_key(key(KeyCode::Char('t')));
    let picker = screen(&mut app, 80, 24);
    assert!(picker.contains("no turn has changed a file yet"), "{picker}");
}

/// A replay has no agent to ask: `/diff` says so and opens nothing.
#[test]
fn diff_in_a_replay_says_why_not() {
    let workspace = TempDir::new();
    let mut app = app_in(&workspace);
    paused_replay(&mut app);
    app.sent.clear();
    app.submit("/diff".into());
    assert_eq!(app.sent, Vec::<Op>::new());
    assert!(app.layers.is_empty());
    let shown = screen(&mut app, 120, 30);
    assert!(
        shown.contains("this is a replay: /diff shows what a live session"),
        "{shown}"
    );
}

/// The overlay's keys: next and previous file (`]`/`[`, `n`/`p`, Tab/BackTab, stopping
/// at either end), scrolling the selected file (↑/↓, j/k, pages, Home/End), sideways,
/// each file keeping its own position.
#[test]
fn diff_navigation_keys() {
    let workspace = TempDir::new();
    let mut app = app_in(&workspace);
    app.submit("/diff".into());
    let long_old: String = (1..=300).map(|n| format!("line {n}\n")).collect();
    let long_new = long_old
        .replace("line 2\n", "line two\n")
        .replace("line 100\n", "line one hundred\n")
        .replace("line 200\n", "line two hundred\n")
        .replace("line 299\n", &format!("line {}\n", "x".repeat(200)));
    let mut files = files();
    files[0].change = change(Some(&long_old), &long_new);
    app.on_agent_event(Event::DiffReport {
        turn: None,
        files,
        turns: turns(),
    });
    let selected = |app: &Bench| overlay(app).selected_path().map(str::to_string);
    let position = |app: &Bench| overlay(app).position();
    screen(&mut app, 80, 24);
    let moves: [(KeyCode, &str); 8] = [
        (KeyCode::Char(']'), "docs/NOTES.md"),
        (KeyCode::Char('n'), "old/legacy.txt"),
        (KeyCode::Tab, "assets/logo.png"),
        (KeyCode::Tab, "assets/logo.png"),
        (KeyCode::Char('['), "old/legacy.txt"),
        (KeyCode::Char('p'), "docs/NOTES.md"),
        (KeyCode::BackTab, "src/parser.rs"),
        (KeyCode::BackTab, "src/parser.rs"),
    ];
    for (code, path) in moves {
        app.on_key(key(code));
        assert_eq!(selected(&app).as_deref(), Some(path), "{code:?}");
    }
    // The first file's diff: four hunks, 32 rows; the frame leaves it 12 at 80×24, so
    // it scrolls 20 rows at most, a page is 10.
    screen(&mut app, 80, 24);
    let mut seen = Vec::new();
    for code in [
        KeyCode::Down,
        KeyCode::Char('j'),
        KeyCode::Up,
        KeyCode::PageDown,
        KeyCode::Home,
        KeyCode::End,
        KeyCode::Char('k'),
        KeyCode::Char('g'),
        KeyCode::Char('G'),
        KeyCode::Right,
        KeyCode::Char('l'),
        KeyCode::Left,
        KeyCode::Char('h'),
    ] {
        app.on_key(key(code));
        screen(&mut app, 80, 24);
        seen.push(position(&app));
    }
    assert_eq!(
        seen,
        vec![
            (1, 0),
            (2, 0),
            (1, 0),
            (11, 0),
            (0, 0),
            (20, 0),
            (19, 0),
            (0, 0),
            (20, 0),
            (20, 8),
            (20, 16),
            (20, 8),
            (20, 0),
        ]
    );
    // Each file keeps its place.
    app.on_key(key(KeyCode::Char(']')));
    assert_eq!(position(&app), (0, 0));
    app.on_key(key(KeyCode::Char('[')));
    assert_eq!(position(&app), (20, 0));
    app.on_key(key(KeyCode::Char('q')));
    assert!(app.layers.is_empty());
}

/// Text from the report is untrusted: escape sequences and controls in a path, a note,
/// a turn's message or a file's lines are drawn as visible pictures, never sent raw; a
/// huge change keeps a capped number of lines and says how many it left out.
#[test]
fn diff_text_is_inert_and_large_diffs_are_capped() {
    let workspace = TempDir::new();
    let mut app = app_in(&workspace);
    app.submit("/diff".into());
    let huge: String = (0..60_000).map(|n| format!("row {n}\n")).collect();
    let files = vec![
        FileDiff {
            path: "evil\u{1b}]52;c;aGk=\u{7}\n.rs".into(),
            status: FileStatus::Modified,
            change: change(Some("a\n"), "b\u{1b}[2J\u{9b}31m\r\n"),
            note: None,
            changed_outside: false,
        },
        FileDiff {
            path: "big.txt".into(),
            status: FileStatus::Added,
            change: change(None, &huge),
            note: None,
            changed_outside: false,
        },
        FileDiff {
            path: "blob".into(),
            status: FileStatus::Added,
            change: None,
            note: Some("too large \u{1b}[31mred".into()),
            changed_outside: true,
        },
    ];
    app.on_agent_event(Event::DiffReport {
        turn: None,
        files,
        turns: vec![TurnChanges {
            turn: 1,
            text: "\u{1b}[H\u{1b}[2Jwipe".into(),
            files: 3,
        }],
    });
    let mut shown = String::new();
    for code in [
        KeyCode::Null,
        KeyCode::Tab,
        KeyCode::End,
        KeyCode::Tab,
        KeyCode::Char('t'),
    ] {
        app.on_key(key(code));
        let mut terminal = Terminal::new(TestBackend::new(160, 48)).unwrap();
        terminal.draw(|frame| render::draw(frame, &app)).unwrap();
        for cell in terminal.backend().buffer().content() {
            assert!(
                !cell.symbol().chars().any(|c| c.is_control()),
                "{:?}",
                cell.symbol()
            );
        }
        shown.push_str(&terminal.backend().to_string());
    }
    for expected in [
        "evil␛]52;c;aGk=␇⏎.rs",
        "+b␛[2J<U+009B>31m␍",
        "+60000 -0",
        // 60,000 added lines and the hunk's header, 5,000 of them kept.
        "… 55001 more lines of this diff not shown",
        "no diff shown: too large ␛[31mred",
        "turn 1  “␛[H␛[2Jwipe”",
    ] {
        assert!(shown.contains(expected), "{expected}\n{shown}");
    }
}

/// The tree's preview of a file the session changed asks for the session's changes and
/// shows the file's diff; `d` turns to the file as it is. A file the answer does not
/// name, or one the session did not change, shows as it is.
#[test]
fn tree_preview_of_a_changed_file_shows_its_diff() {
    let workspace = TempDir::new();
    let mut app = app_in(&workspace);
    workspace.write("src/parser.rs", PARSER_NEW);
    app.tree.mark_touched(&workspace.path().join("src/parser.rs"));
    app.tree.refresh();
    app.layout.focus_on(Pane::Tree);
    screen(&mut app, 160, 48);
    app.sent.clear();
    // src/ is the first row: open it, then parser.rs (main.rs, parser.rs).
    app.on_key(key(KeyCode::Enter));
    app.on_key(key(KeyCode::Down));
    app.on_key(key(KeyCode::Down));
    app.on_key(key(KeyCode::Enter));
    assert_eq!(app.sent, vec![Op::Diff { turn: None }]);
    assert!(!app.top::<FilePreviewLayer>().unwrap().shows_diff());
    app.on_agent_event(report(None));
    assert!(app.top::<FilePreviewLayer>().unwrap().shows_diff());
    assert_screen!("file_preview_diff_80x24", screen(&mut app, 80, 24));
    assert_screen!("file_preview_diff_160x48", screen(&mut app, 160, 48));
    app.on_key(key(KeyCode::Char('d')));
    assert!(!app.top::<FilePreviewLayer>().unwrap().shows_diff());
    let plain = screen(&mut app, 80, 24);
    assert!(plain.contains("1 │ /// Splits on any whitespace."), "{plain}");
    app.on_key(key(KeyCode::Esc));
    assert!(app.layers.is_empty());
    // main.rs was not changed: no question, its text.
    app.sent.clear();
    app.on_key(key(KeyCode::Up));
    app.on_key(key(KeyCode::Enter));
    assert_eq!(app.sent, Vec::<Op>::new());
    app.on_agent_event(report(None));
    assert!(!app.top::<FilePreviewLayer>().unwrap().shows_diff());
}
