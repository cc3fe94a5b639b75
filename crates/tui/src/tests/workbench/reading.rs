//! Reading the conversation: the search line (Ctrl-F, `/`, `n`/`N`, Esc), selecting a
//! code block or a tool call (`[`/`]`) and copying it (`y`, `/copy`) through OSC 52, and
//! `/mouse`.

use base64::Engine as _;
use pretty_assertions::assert_eq;
use ratatui::style::Modifier;

use super::*;
use crate::conversation::{Entry, NoticeKind};

/// The screen as text, each row that has marked cells followed by a row of marks: `#`
/// the current match (underlined), `^` another match (reversed), `=` the selection (its
/// background).
fn marked_screen(app: &mut Bench, width: u16, height: u16) -> String {
    let mut terminal = Terminal::new(TestBackend::new(width, height)).unwrap();
    terminal.draw(|frame| render::draw(frame, app)).unwrap();
    app.frame_drawn();
    let buffer = terminal.backend().buffer().clone();
    let selection = app.look.theme().selection.bg;
    let mut out = String::new();
    for y in 0..height {
        let mut row = String::new();
        let mut marks = String::new();
        let mut skip = 0;
        for x in 0..width {
            let cell = &buffer[(x, y)];
            if skip > 0 {
                skip -= 1;
                continue;
            }
            let symbol = cell.symbol();
            let cells = crate::text::wrap::display_width(symbol).max(1);
            skip = cells - 1;
            row.push_str(symbol);
            let modifier = cell.style().add_modifier;
            let mark = if modifier.contains(Modifier::UNDERLINED) {
                '#'
            } else if modifier.contains(Modifier::REVERSED) {
                '^'
            } else if selection.is_some() && cell.style().bg == selection {
                '='
            } else {
                ' '
            };
            marks.extend(std::iter::repeat_n(mark, cells));
        }
        out.push_str(row.trim_end());
        out.push('\n');
        if marks.trim() != "" && y + 1 < height {
            out.push_str(marks.trim_end());
            out.push('\n');
        }
    }
    out
}

fn ctrl_f() -> KeyEvent {
    KeyEvent::new(KeyCode::Char('f'), KeyModifiers::CONTROL)
}

/// A transcript with the word "test" in a message, a reply, a code block and a call.
fn transcript(app: &mut Bench) {
    busy_session(app);
    app.on_agent_event(Event::ToolCallFinished {
        id: "t2".into(),
        name: "read_file".into(),
        ok: true,
        outcome: ToolOutcome::Ok,
        duration_ms: 3,
        output_preview: "# demo".into(),
        output: "# demo\n".into(),
        effects: Vec::new(),
    });
    app.on_agent_event(Event::AssistantMessage {
        thinking: String::new(),
        text: "All 12 tests pass. Run them again with:\n\n```sh\ncargo test -q --workspace\n```\n\nThe Test names are in `tests/`; 测试 passed too."
            .into(),
        tool_calls: Vec::new(),
        stop_reason: StopReason::EndTurn,
    });
    app.on_agent_event(Event::TurnComplete { text: String::new() });
}

/// The OSC 52 payload an action carries, decoded.
fn copied(action: &Action) -> Option<String> {
    let Action::Clipboard(sequence) = action else {
        return None;
    };
    let payload = sequence.strip_prefix("\x1b]52;c;")?.strip_suffix('\x07')?;
    let bytes = base64::engine::general_purpose::STANDARD.decode(payload).ok()?;
    String::from_utf8(bytes).ok()
}

#[test]
fn ctrl_f_marks_every_match_smart_case_and_n_moves_the_current_one() {
    let workspace = TempDir::new();
    let mut app = app_in(&workspace);
    transcript(&mut app);
    screen(&mut app, 80, 24);
    app.on_key(ctrl_f());
    assert_eq!(app.layout.focus(), Pane::Conversation);
    assert!(app.conversation.search_editing());
    type_text(&mut app, "test");
    let typed = marked_screen(&mut app, 80, 24);
    assert!(typed.contains(" / test▏"), "{typed}");
    assert_screen!("search_typed_80x24", typed);
    assert_screen!("search_typed_160x48", marked_screen(&mut app, 160, 48));
    // Enter keeps it: n and N move the current match, round the ends.
    app.on_key(key(KeyCode::Enter));
    assert!(!app.conversation.search_editing() && app.conversation.search_active());
    let count = |screen: &str| {
        screen
            .lines()
            .find(|line| line.contains(" / test"))
            .and_then(|line| {
                line.trim_end_matches('┃')
                    .split_whitespace()
                    .last()
                    .map(str::to_string)
            })
    };
    let first = marked_screen(&mut app, 80, 24);
    let Some(figure) = count(&first) else {
        panic!("no count: {first}")
    };
    let (at, total) = figure.split_once('/').unwrap();
    let (at, total): (usize, usize) = (at.parse().unwrap(), total.parse().unwrap());
    // The call's line and the two lines of its result that hold the word (shown under
    // it while the search runs), the reply's prose (twice, one of them "Test"), its code
    // block and its inline code.
    assert_eq!(total, 7, "{first}");
    assert!(first.contains("│ test result: ok"), "{first}");
    app.on_key(key(KeyCode::Char('n')));
    assert_eq!(
        count(&marked_screen(&mut app, 80, 24)),
        Some(format!("{}/{total}", at % total + 1))
    );
    app.on_key(key(KeyCode::Char('N')));
    app.on_key(key(KeyCode::Char('N')));
    assert_eq!(
        count(&marked_screen(&mut app, 80, 24)),
        Some(format!("{}/{total}", (at + total - 2) % total + 1))
    );
    // A capital makes it exact: only "Test".
    app.on_key(key(KeyCode::Char('/')));
    for _ in 0..4 {
        app.on_key(key(KeyCode::Backspace));
    }
    type_text(&mut app, "Test");
    app.on_key(key(KeyCode::Enter));
    let exact = marked_screen(&mut app, 80, 24);
    assert_eq!(
        count(&exact.replace(" / Test", " / test")),
        Some("1/1".into()),
        "{exact}"
    );
    // Esc ends it; the keys are the pane's again, and n goes to the input.
    app.on_key(key(KeyCode::Esc));
    assert!(!app.conversation.search_active());
    let ended = marked_screen(&mut app, 80, 24);
    assert!(!ended.contains(" / Test"), "{ended}");
    app.on_key(key(KeyCode::Char('n')));
    assert_eq!(app.input.text(), "n");
}

#[test]
fn a_match_far_up_is_scrolled_into_view_and_wide_characters_are_marked_where_drawn() {
    let workspace = TempDir::new();
    let mut app = app_in(&workspace);
    app.conversation
        .push(Entry::User("打开文件 needle.rs 然后 读一读".into()));
    for n in 0..200 {
        app.conversation.push(Entry::Assistant {
            text: format!("reply {n:03}"),
            streaming: false,
        });
    }
    screen(&mut app, 80, 24);
    app.on_key(ctrl_f());
    type_text(&mut app, "文件");
    let found = marked_screen(&mut app, 80, 24);
    assert!(!app.conversation.is_following(), "it scrolled up");
    // The match's two wide characters are four columns, marked where they are drawn.
    let row = found.lines().position(|line| line.contains("打开文件")).unwrap();
    let marks = found.lines().nth(row + 1).unwrap();
    assert_eq!(marks.trim(), "####", "{found}");
    let text_row = found.lines().nth(row).unwrap();
    let column = crate::text::wrap::display_width(&text_row[..text_row.find("文件").unwrap()]);
    assert_eq!(marks.find('#').unwrap(), column, "{found}");
    assert_screen!("search_cjk_80x24", found);
    app.on_key(key(KeyCode::Enter));
    app.on_key(key(KeyCode::Esc));
    // A query nothing matches says so.
    app.on_key(key(KeyCode::Char('/')));
    type_text(&mut app, "zzz");
    let none = marked_screen(&mut app, 80, 24);
    assert!(
        none.lines()
            .any(|line| line.contains(" / zzz▏")
                && line.trim_end_matches('┃').trim_end().ends_with("no match")),
        "{none}"
    );
}

#[test]
fn the_search_line_takes_no_control_characters_and_a_bounded_query() {
    let workspace = TempDir::new();
    let mut app = app_in(&workspace);
    transcript(&mut app);
    app.on_key(ctrl_f());
    // A paste goes to the query while it is typed: its first line, controls dropped.
    app.on_paste("te\x1b[2J\x07st\nsecond line");
    app.on_key(key(KeyCode::Char('\u{7}')));
    let typed = marked_screen(&mut app, 80, 24);
    assert!(typed.contains(" / test▏"), "{typed}");
    assert_eq!(app.input.text(), "");
    // Thousands of characters: the query stops at 200, the line cuts it to fit.
    app.on_paste(&"x".repeat(5000));
    type_text(&mut app, "yyy");
    let long = marked_screen(&mut app, 80, 24);
    let line = long.lines().find(|line| line.contains(" / test")).unwrap();
    assert!(line.ends_with("no match ┃"), "{line}");
    assert_eq!(crate::text::wrap::display_width(line), 80);
    assert_screen!("search_long_query_80x24", long);
}

#[test]
fn y_copies_the_selected_code_block_or_call_through_osc_52() {
    let workspace = TempDir::new();
    let mut app = app_in(&workspace);
    transcript(&mut app);
    screen(&mut app, 80, 24);
    app.on_key(key(KeyCode::Tab));
    while app.layout.focus() != Pane::Conversation {
        app.on_key(key(KeyCode::Tab));
    }
    // `[` from the bottom: the last code block.
    app.on_key(key(KeyCode::Char('[')));
    assert_screen!("selected_code_80x24", marked_screen(&mut app, 80, 24));
    assert_screen!("selected_code_160x48", marked_screen(&mut app, 160, 48));
    app.actions.clear();
    app.on_key(key(KeyCode::Char('y')));
    let sent: Vec<String> = app.actions.iter().filter_map(copied).collect();
    assert_eq!(sent, vec!["cargo test -q --workspace\n".to_string()]);
    assert!(matches!(
        app.conversation.entries().last(),
        Some(Entry::Notice { kind: NoticeKind::Info, text }) if text == "copied the code block (26 bytes): sent to the terminal's clipboard (OSC 52); if nothing was copied, your terminal does not allow it"
    ));
    // Back through the calls: read_file's arguments and output, then the command's.
    app.on_key(key(KeyCode::Char('[')));
    app.actions.clear();
    app.on_key(key(KeyCode::Char('y')));
    let sent: Vec<String> = app.actions.iter().filter_map(copied).collect();
    assert_eq!(
        sent,
        vec!["read_file {\n  \"path\": \"README.md\"\n}\n# demo\n".to_string()]
    );
    app.on_key(key(KeyCode::Char('[')));
    assert_screen!("selected_call_80x24", marked_screen(&mut app, 80, 24));
    app.actions.clear();
    app.on_key(key(KeyCode::Char('y')));
    let sent: Vec<String> = app.actions.iter().filter_map(copied).collect();
    assert_eq!(
        sent,
        vec!["$ cargo test -q\nrunning 12 tests\ntest result: ok\n[exit code: 0]".to_string()]
    );
    // The first block, then nothing before it: the selection stays.
    app.on_key(key(KeyCode::Char('[')));
    assert!(!app.on_key(key(KeyCode::Char('['))));
    // Esc unselects; y then types into the input.
    app.on_key(key(KeyCode::Esc));
    assert!(!app.conversation.has_selection());
    app.on_key(key(KeyCode::Char('y')));
    assert_eq!(app.input.text(), "y");
}

#[test]
fn slash_copy_sends_the_last_answer_s_markdown_or_says_why_not() {
    let workspace = TempDir::new();
    let mut app = app_in(&workspace);
    app.submit("/copy".into());
    assert!(app.actions.iter().all(|action| copied(action).is_none()));
    assert_eq!(
        app.conversation.entries().last(),
        Some(&Entry::Notice {
            kind: NoticeKind::Warning,
            text: "/copy: there is no answer to copy yet".into()
        })
    );
    transcript(&mut app);
    app.actions.clear();
    app.submit("/copy".into());
    let sent: Vec<String> = app.actions.iter().filter_map(copied).collect();
    assert_eq!(
        sent,
        vec!["All 12 tests pass. Run them again with:\n\n```sh\ncargo test -q --workspace\n```\n\nThe Test names are in `tests/`; 测试 passed too.".to_string()]
    );
    // Escape sequences in a reply never reach the clipboard; a reply too large for
    // OSC 52 is refused with the reason.
    app.conversation.push(Entry::Assistant {
        text: "rm -rf \x1b]52;c;ZXZpbA==\x07 ok".into(),
        streaming: false,
    });
    app.actions.clear();
    app.submit("/copy".into());
    let sent: Vec<String> = app.actions.iter().filter_map(copied).collect();
    assert_eq!(sent, vec!["rm -rf  ok".to_string()]);
    app.conversation.push(Entry::Assistant {
        text: "x".repeat(200 * 1024),
        streaming: false,
    });
    app.actions.clear();
    app.submit("/copy".into());
    assert_eq!(app.actions, Vec::<Action>::new());
    assert_eq!(
        app.conversation.entries().last(),
        Some(&Entry::Notice {
            kind: NoticeKind::Warning,
            text: "copy: 200 KB is too much for the terminal's clipboard (OSC 52 takes up to 74 KB); nothing was copied".into()
        })
    );
}

#[test]
fn slash_mouse_turns_capture_off_and_back_and_the_status_bar_says_so() {
    let workspace = TempDir::new();
    let mut app = app_in(&workspace);
    app.submit("/mouse".into());
    assert!(app.actions.contains(&Action::MouseCapture(false)));
    let off = screen(&mut app, 80, 24);
    assert!(
        off.lines()
            .nth(23)
            .unwrap()
            .contains("mouse off: select text; /mouse"),
        "{off}"
    );
    assert_screen!("mouse_off_80x24", off);
    assert_screen!("mouse_off_160x48", screen(&mut app, 160, 48));
    app.actions.clear();
    app.submit("/mouse".into());
    assert_eq!(app.actions, vec![Action::MouseCapture(true)]);
    assert!(!screen(&mut app, 80, 24).contains("mouse off"));
}

/// How long one keystroke of a search takes on a transcript of 10,000 messages: run by
/// hand (`cargo test -p miniagent-tui --release search_cost -- --ignored --nocapture`).
#[test]
#[ignore = "a measurement, run by hand"]
fn search_cost_on_ten_thousand_messages() {
    let workspace = TempDir::new();
    let mut app = app_in(&workspace);
    for n in 0..10_000 {
        let text = format!(
            "Message {n}: the quick brown fox jumps over the lazy dog; a line of prose long enough to wrap at eighty columns, with `code` and **bold**.\n\n```rust\nfn item_{n}() -> u32 {{ {n} }}\n```"
        );
        app.conversation.push(Entry::Assistant {
            text,
            streaming: false,
        });
    }
    screen(&mut app, 160, 48);
    let start = std::time::Instant::now();
    app.on_key(key(KeyCode::Up));
    screen(&mut app, 160, 48);
    println!("a frame without a search: {:?}", start.elapsed());
    app.on_key(ctrl_f());
    for query in ["l", "la", "laz", "lazy", "lazy ", "lazy d", "item_99"] {
        let letter = query.chars().last().unwrap();
        if query == "item_99" {
            app.on_key(KeyEvent::new(KeyCode::Char('u'), KeyModifiers::CONTROL));
            type_text(&mut app, "item_9");
            screen(&mut app, 160, 48);
        }
        let start = std::time::Instant::now();
        app.on_key(key(KeyCode::Char(letter)));
        screen(&mut app, 160, 48);
        println!("{query:?}: {:?} for the key and its frame", start.elapsed());
    }
    let start = std::time::Instant::now();
    app.on_key(key(KeyCode::Enter));
    app.on_key(key(KeyCode::Char('n')));
    screen(&mut app, 160, 48);
    println!("n: {:?}", start.elapsed());
}

/// A click that gives another pane the keys while a query is typed keeps the query and
/// leaves the keys there: what is typed next goes to the input, not the search line.
#[test]
fn a_click_elsewhere_keeps_the_query_and_takes_the_keys() {
    let workspace = TempDir::new();
    let mut app = app_in(&workspace);
    transcript(&mut app);
    screen(&mut app, 80, 24);
    app.on_key(ctrl_f());
    type_text(&mut app, "te");
    screen(&mut app, 80, 24);
    app.on_mouse(crossterm::event::MouseEvent {
        kind: crossterm::event::MouseEventKind::Down(crossterm::event::MouseButton::Left),
        column: 10,
        row: 21,
        modifiers: KeyModifiers::NONE,
    });
    assert_eq!(app.layout.focus(), Pane::Input);
    type_text(&mut app, "st");
    assert_eq!(app.input.text(), "st");
    assert!(app.conversation.search_active() && !app.conversation.search_editing());
    let kept = marked_screen(&mut app, 80, 24);
    assert!(kept.contains(" / te "), "{kept}");
}

/// A call's result is searched too: its matching lines show under the call while the
/// search runs (made inert, at most 20 of them, then how many more), and go when it ends.
#[test]
fn a_search_finds_the_lines_of_a_calls_result_and_shows_them_under_it() {
    let workspace = TempDir::new();
    let mut app = app_in(&workspace);
    transcript(&mut app);
    let rows: String = (1..=30)
        .map(|n| {
            if n % 10 == 0 {
                format!("row {n} NEEDLE \u{1b}]0;pwned\u{7}\n")
            } else {
                format!("row {n}\n")
            }
        })
        .collect();
    let many: String = (1..=25).map(|n| format!("hay {n} needle\n")).collect();
    for (id, output) in [("t9", rows), ("t10", many)] {
        app.on_agent_event(Event::ToolCallRequested {
            id: id.into(),
            name: "bash".into(),
            arguments: json!({"command": "seq"}),
            summary: "seq".into(),
            kind: Default::default(),
            locations: Vec::new(),
        });
        app.on_agent_event(Event::ToolCallFinished {
            id: id.into(),
            name: "bash".into(),
            ok: true,
            outcome: ToolOutcome::Ok,
            duration_ms: 5,
            output_preview: "row 1".into(),
            output,
            effects: Vec::new(),
        });
    }
    let before = screen(&mut app, 160, 48);
    assert!(!before.contains("row 10 NEEDLE"), "{before}");
    app.on_key(ctrl_f());
    type_text(&mut app, "NEEDLE");
    let found = marked_screen(&mut app, 160, 48);
    assert!(found.contains("│ row 10 NEEDLE ␛]0;pwned␇"), "{found}");
    assert!(found.contains("│ row 30 NEEDLE"), "{found}");
    assert!(!found.contains("hay 1 needle"), "exact case: {found}");
    assert!(found.contains(" 1/3") || found.contains(" 3/3"), "{found}");
    app.on_key(key(KeyCode::Esc));
    app.on_key(ctrl_f());
    type_text(&mut app, "needle");
    let any_case = marked_screen(&mut app, 160, 48);
    assert!(
        any_case.contains("│ … 5 more matching lines in its result"),
        "{any_case}"
    );
    app.on_key(key(KeyCode::Esc));
    let after = screen(&mut app, 160, 48);
    assert!(!after.contains("│ hay 1 needle"), "{after}");
}
