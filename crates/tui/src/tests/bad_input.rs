//! Bad terminal input, through the workbench's `App` drawn on ratatui's `TestBackend`:
//! resizing to one cell, a 10 MB paste, mouse events outside any pane and every key
//! during every overlay.

use crate::tests::support::{Bench, key, screen};
use std::time::Instant;

use crate::app::{APPROVAL_GRACE, Pane};
use crate::layers::first_run::FirstRun;
use crate::layers::trust::TrustPrompt;
use crossterm::event::{KeyCode, KeyEvent, KeyModifiers, MouseButton, MouseEvent, MouseEventKind};
use miniagent_protocol::{ApprovalRule, Event, Op, StopReason, ToolCallSummary, ToolOutcome};
use pretty_assertions::assert_eq;
use serde_json::json;

use crate::tests::support::TempDir;

/// A workspace with a few files, and an app on it with a fixed clock and a busy session
/// (a finished tool call, a running one, markdown, thinking).
fn busy_app(workspace: &TempDir, home: &TempDir) -> Bench {
    workspace.write("src/main.rs", "fn main() {}\n");
    workspace.write("README.md", "# demo\n");
    let mut app = crate::tests::support::bare_app(workspace);
    app.places.sessions_dir = Some(home.join("sessions"));
    let configured: Event = serde_json::from_value(json!({
        "type": "session_configured",
        "model": "claude-test",
        "provider": "anthropic",
        "workspace": workspace.path(),
        "tools": [{"name": "bash", "description": "run"}],
    }))
    .expect("a session_configured event");
    let events = vec![
        configured,
        Event::TurnStarted {
            text: "总结一下这个项目，然后运行测试。".into(),
        },
        Event::StepStarted { step: 1, max_steps: 50 },
        Event::ThinkingDelta {
            delta: "The user wants a summary and a test run.".into(),
        },
        Event::AssistantMessage {
            thinking: "The user wants a summary and a test run.".into(),
            text: "这个项目是一个**终端代理**。\n\n| a | b |\n|---|---|\n| 1 | 2 |\n\n```rust\nfn main() {}\n```".into(),
            tool_calls: vec![ToolCallSummary {
                id: "t1".into(),
                name: "bash".into(),
            }],
            stop_reason: StopReason::ToolUse,
        },
        Event::ToolCallRequested {
            id: "t1".into(),
            name: "bash".into(),
            arguments: json!({"command": "cargo test -q"}),
            summary: "cargo test -q".into(),
            kind: Default::default(),
            locations: Vec::new(),
        },
        Event::ToolCallStarted {
            id: "t1".into(),
            name: "bash".into(),
        },
        Event::ToolCallFinished {
            id: "t1".into(),
            name: "bash".into(),
            ok: true,
            outcome: ToolOutcome::Ok,
            duration_ms: 1234,
            output_preview: "running 12 tests".into(),
            output: "running 12 tests\ntest result: ok\n[exit code: 0]".into(),
            effects: Vec::new(),
        },
        Event::ApprovalRulesChanged {
            rules: vec![ApprovalRule::Tool {
                name: "write_file".into(),
            }],
            refused: Vec::new(),
        },
        Event::StepStarted { step: 2, max_steps: 50 },
        Event::ToolCallRequested {
            id: "t2".into(),
            name: "read_file".into(),
            arguments: json!({"path": "README.md"}),
            summary: "README.md".into(),
            kind: Default::default(),
            locations: Vec::new(),
        },
        Event::ToolCallStarted {
            id: "t2".into(),
            name: "read_file".into(),
        },
    ];
    for event in events {
        app.on_agent_event(event);
    }
    app
}

#[test]
fn resize_to_one_by_one_and_back() {
    let workspace = TempDir::new();
    let home = TempDir::new();
    let mut app = busy_app(&workspace, &home);
    let before = screen(&app, 80, 24);
    for (width, height) in [(1, 1), (2, 2), (1, 24), (80, 1), (3, 1), (1, 1)] {
        screen(&app, width, height);
        // Keys and the mouse at the tiny size are harmless too.
        app.on_key(key(KeyCode::Tab));
        app.on_key(key(KeyCode::BackTab));
        app.on_mouse(MouseEvent {
            kind: MouseEventKind::Down(MouseButton::Left),
            column: 0,
            row: 0,
            modifiers: KeyModifiers::NONE,
        });
    }
    assert_eq!(screen(&app, 80, 24), before, "the screen is whole again");
    screen(&app, 160, 48);
    assert_eq!(screen(&app, 80, 24), before);
}

#[test]
fn a_ten_megabyte_bracketed_paste() {
    let workspace = TempDir::new();
    let home = TempDir::new();
    let mut app = busy_app(&workspace, &home);
    screen(&app, 80, 24);
    for c in "draft".chars() {
        app.on_key(key(KeyCode::Char(c)));
    }
    let line = "pasted text with 中文 and tabs\tand more words to fill the line\r\n";
    let many_lines = line.repeat(10 * 1024 * 1024 / line.len() + 1);
    let one_line = "x".repeat(10 * 1024 * 1024);
    for paste in [&many_lines, &one_line] {
        let started = Instant::now();
        assert!(app.on_paste(paste), "the paste is answered");
        screen(&app, 80, 24);
        let took = started.elapsed();
        eprintln!(
            "refusing a {} byte paste took {:.2} s",
            paste.len(),
            took.as_secs_f64()
        );
        let notice = app
            .turn
            .last_notice()
            .cloned()
            .map(|(_, text)| text)
            .unwrap_or_default();
        assert!(
            notice.starts_with("the paste was not inserted: it is 10.0 MB and the input takes at most 1 MB"),
            "{notice}"
        );
        assert_eq!(app.input.text(), "draft", "the input is as it was");
    }
    // The largest paste taken arrives whole, and the input still works after (how fast
    // either paste is answered: `cargo bench --bench workbench`, part `paste`).
    let largest = line.repeat(1024 * 1024 / line.len());
    let started = Instant::now();
    assert!(app.on_paste(&largest));
    screen(&app, 80, 24);
    let took = started.elapsed();
    eprintln!(
        "a {} byte paste took {:.2} s to take and draw",
        largest.len(),
        took.as_secs_f64()
    );
    assert!(app.input.text() == format!("draft{}", largest.replace("\r\n", "\n")));
    // Once the turn is over, Ctrl-C clears the input instead of interrupting.
    app.on_agent_event(Event::TurnComplete { text: "done".into() });
    app.on_key(KeyEvent::new(KeyCode::Char('c'), KeyModifiers::CONTROL));
    assert!(app.input.is_empty());
    for c in "ok".chars() {
        app.on_key(key(KeyCode::Char(c)));
    }
    assert_eq!(app.input.text(), "ok");
    // A deny reason refuses it too.
    app.on_agent_event(Event::ApprovalRequested {
        id: "t2".into(),
        name: "read_file".into(),
        preview: "read README.md".into(),
        session_rule: None,
        request: None,
        notes: Vec::new(),
    });
    app.frame_drawn();
    app.now += APPROVAL_GRACE;
    app.on_key(key(KeyCode::Char('n')));
    app.settle();
    assert!(app.on_paste(&one_line));
    assert_eq!(app.deny_reason(), Some(""));
    screen(&app, 80, 24);
}

#[test]
fn mouse_events_outside_any_pane() {
    let workspace = TempDir::new();
    let home = TempDir::new();
    let mut app = busy_app(&workspace, &home);
    let kinds = [
        MouseEventKind::Down(MouseButton::Left),
        MouseEventKind::Down(MouseButton::Right),
        MouseEventKind::Up(MouseButton::Left),
        MouseEventKind::Drag(MouseButton::Left),
        MouseEventKind::Moved,
        MouseEventKind::ScrollUp,
        MouseEventKind::ScrollDown,
        MouseEventKind::ScrollLeft,
        MouseEventKind::ScrollRight,
    ];
    for (width, height) in [(80, 24), (160, 48), (1, 1)] {
        screen(&app, width, height);
        let mut points = vec![
            (u16::MAX, u16::MAX),
            (u16::MAX, 0),
            (0, u16::MAX),
            (width, height),
            (width, 0),
            (0, height),
            (width - 1, height - 1),
        ];
        // The title bar, the status bar and every pane's border.
        points.extend((0..width).map(|x| (x, 0)));
        points.extend((0..width).map(|x| (x, height - 1)));
        for (_, area) in app.areas().panes {
            for x in area.x..area.right() {
                points.push((x, area.y));
                points.push((x, area.bottom().saturating_sub(1)));
            }
            for y in area.y..area.bottom() {
                points.push((area.x, y));
                points.push((area.right().saturating_sub(1), y));
            }
        }
        for (column, row) in points {
            for kind in kinds {
                app.on_mouse(MouseEvent {
                    kind,
                    column,
                    row,
                    modifiers: KeyModifiers::NONE,
                });
            }
        }
        // A click may have opened a file preview; the app still draws and closes it.
        screen(&app, width, height);
        while !app.layers.is_empty() {
            app.on_key(key(KeyCode::Esc));
        }
    }
    assert!(app.on_paste("ok"));
    assert!(app.input.text().ends_with("ok"));
    screen(&app, 80, 24);
}

/// Every overlay the workbench has, opened the way a person opens it.
fn open_overlay(app: &mut Bench, which: &str) {
    app.layout.focus_on(Pane::Input);
    match which {
        "help" => app.submit("/help".into()),
        "tool detail" => {
            app.layout.focus_on(Pane::Timeline);
            app.on_key(key(KeyCode::Up));
            app.on_key(key(KeyCode::Enter));
        }
        "file preview" => {
            app.layout.focus_on(Pane::Tree);
            app.on_key(key(KeyCode::Down));
            app.on_key(key(KeyCode::Down));
            app.on_key(key(KeyCode::Enter));
        }
        "approvals" => app.submit("/approvals".into()),
        "notes" => app.submit("/notes".into()),
        "stats" => app.submit("/stats".into()),
        "history" => app.submit("/history".into()),
        "mcp" => app.submit("/mcp".into()),
        "skills" => app.submit("/skills".into()),
        "sessions" => app.submit("/resume".into()),
        "trust" => app.open_layer(Box::new(TrustPrompt::new(
            vec!["files: npx -y @modelcontextprotocol/server-filesystem .".into()],
            false,
        ))),
        "first run" => app.open_layer(Box::new(FirstRun {
            problem: "no API key: set MINIAGENT_API_KEY".into(),
            config_path: "/home/dev/.config/miniagent/config.toml".into(),
            local_server: Some(("http://127.0.0.1:11434/v1".into(), "llama3.2".into())),
        })),
        "approval" => {
            app.on_agent_event(Event::ApprovalRequested {
                id: "t2".into(),
                name: "read_file".into(),
                preview: "read README.md\n".repeat(40),
                session_rule: None,
                request: None,
                notes: Vec::new(),
            });
            // On screen long enough for keys to answer it.
            app.frame_drawn();
            app.now += APPROVAL_GRACE;
        }
        other => panic!("no overlay called {other}"),
    }
}

const OVERLAYS: [&str; 14] = [
    "help",
    "tool detail",
    "file preview",
    "approvals",
    "notes",
    "stats",
    "history",
    "mcp",
    "skills",
    "sessions",
    "trust",
    "first run",
    "approval",
    // The approval overlay again, with a deny reason being typed.
    "deny reason",
];

fn keys_to_send() -> Vec<KeyEvent> {
    let mut keys: Vec<KeyEvent> = "aqyndjkgG /?x1".chars().map(|c| key(KeyCode::Char(c))).collect();
    keys.extend(
        [
            KeyCode::Up,
            KeyCode::Down,
            KeyCode::Left,
            KeyCode::Right,
            KeyCode::PageUp,
            KeyCode::PageDown,
            KeyCode::Home,
            KeyCode::End,
            KeyCode::Tab,
            KeyCode::BackTab,
            KeyCode::Backspace,
            KeyCode::Delete,
            KeyCode::Insert,
            KeyCode::Enter,
        ]
        .map(key),
    );
    keys.extend((1..=12).map(|n| key(KeyCode::F(n))));
    keys.push(KeyEvent::new(KeyCode::Char('c'), KeyModifiers::CONTROL));
    keys.push(KeyEvent::new(KeyCode::Char('d'), KeyModifiers::CONTROL));
    keys.push(KeyEvent::new(KeyCode::Enter, KeyModifiers::ALT));
    keys.push(key(KeyCode::Esc));
    keys
}

#[test]
fn keys_during_every_overlay() {
    let keys = keys_to_send();
    for which in OVERLAYS {
        let workspace = TempDir::new();
        let home = TempDir::new();
        std::fs::create_dir_all(home.join("sessions")).expect("sessions folder");
        std::fs::copy(
            concat!(env!("CARGO_MANIFEST_DIR"), "/../../assets/demo.jsonl"),
            home.join("sessions/20261122-043847-5892.jsonl"),
        )
        .expect("a recorded session to pick");
        let mut app = busy_app(&workspace, &home);
        screen(&app, 160, 48);
        // Each key is sent with the overlay freshly open, then the whole barrage at once.
        for (round, key) in keys.iter().chain(keys.iter()).enumerate() {
            let fresh = round < keys.len();
            if fresh || app.layers.is_empty() {
                app.layers.close_where(|_| true);
                app.quit = false;
                if which == "deny reason" {
                    open_overlay(&mut app, "approval");
                    app.on_key(self::key(KeyCode::Char('n')));
                    app.settle();
                } else {
                    open_overlay(&mut app, which);
                }
                let opened = !app.layers.is_empty();
                assert!(opened, "{which} opened");
            }
            app.on_key(*key);
            let size = if round % 2 == 0 { (80, 24) } else { (160, 48) };
            screen(&app, size.0, size.1);
        }
        // Whatever is left closes, and the input works.
        for _ in 0..10 {
            app.on_key(key(KeyCode::Esc));
        }
        app.close_approvals();
        assert!(
            app.layers
                .iter()
                .all(|overlay| overlay.as_any().is::<TrustPrompt>() || overlay.as_any().is::<FirstRun>()),
            "{which}: Esc closes every overlay but those the event loop answers"
        );
        app.layers.close_where(|_| true);
        assert!(app.on_paste("ok"), "{which}: the input takes a paste");
        assert!(
            app.input.text().ends_with("ok"),
            "{which}: {:?}",
            app.input.text()
        );
        assert!(
            app.sent
                .iter()
                .all(|op| !matches!(op, Op::UserInput { text } if text.is_empty())),
            "{which}: no empty message was sent"
        );
        screen(&app, 80, 24);
        screen(&app, 1, 1);
    }
}

/// Found by a fresh-eyes run: a reply's escape sequences lost only their ESC in the
/// conversation and the thinking pane, leaving `]0;HACKED[2J` on the screen. They go
/// whole, as in every other place a person reads the model's text.
#[test]
fn escape_sequences_in_a_reply_go_whole() {
    let (workspace, home) = (TempDir::new(), TempDir::new());
    let mut app = crate::tests::support::bare_app(&workspace);
    app.places.sessions_dir = Some(home.join("sessions"));
    let hostile = "\u{1b}]0;HACKED-TITLE\u{7}\u{1b}[2J\u{1b}[H\u{1b}[?1049l EVIL \u{1b}]8;;http://evil/link\u{1b}\\link\u{1b}]8;;\u{1b}\\ done";
    for event in [
        Event::TurnStarted { text: "go".into() },
        Event::StepStarted {
            step: 1,
            max_steps: 50,
        },
        Event::ThinkingDelta {
            delta: format!("thinking {hostile}\nmore"),
        },
        Event::TextDelta {
            delta: hostile.into(),
        },
        Event::TurnComplete { text: hostile.into() },
    ] {
        app.on_agent_event(event);
    }
    let shown = screen(&app, 160, 48);
    assert!(shown.contains("EVIL"), "{shown}");
    assert!(shown.contains("link done"), "{shown}");
    for leftover in ["]0;", "HACKED", "[2J", "[?1049l", "]8;;", "http://evil"] {
        assert!(!shown.contains(leftover), "{leftover} is on screen:\n{shown}");
    }
}

/// Output of random bytes and of characters whose width is hard to tell (combining
/// marks, zero-width joiners, variation selectors, wide and ambiguous ones, tabs) stays
/// inside the tool detail's frame: every row of the popup ends with its border.
#[test]
fn binary_output_stays_inside_the_tool_detail() {
    let workspace = TempDir::new();
    let home = TempDir::new();
    let mut app = busy_app(&workspace, &home);
    // A fixed pseudo-random stream of bytes, read as the agent reads a pipe (lossily).
    let mut state = 0x2545_f491_u32;
    let bytes: Vec<u8> = (0..6000)
        .map(|_| {
            state ^= state << 13;
            state ^= state >> 17;
            state ^= state << 5;
            (state >> 24) as u8
        })
        .collect();
    let junk = String::from_utf8_lossy(&bytes).into_owned()
        + "\ne\u{301}\u{301}\u{301} 👩\u{200d}👩\u{200d}👧 ☺\u{fe0f} ✂\u{fe0e} 表\t表\u{3000}x ⚠️ \u{1f1ef}\u{1f1f5} \u{ad}\u{2028}|\n";
    for event in [
        Event::ToolCallRequested {
            id: "junk".into(),
            name: "bash".into(),
            arguments: json!({"command": "cat /dev/urandom"}),
            summary: "cat /dev/urandom".into(),
            kind: Default::default(),
            locations: Vec::new(),
        },
        Event::ToolCallStarted {
            id: "junk".into(),
            name: "bash".into(),
        },
        Event::ToolOutputDelta {
            id: "junk".into(),
            delta: junk.clone(),
        },
        Event::ToolCallFinished {
            id: "junk".into(),
            name: "bash".into(),
            ok: true,
            outcome: ToolOutcome::Ok,
            duration_ms: 5,
            output_preview: "junk".into(),
            output: junk,
            effects: Vec::new(),
        },
    ] {
        app.on_agent_event(event);
    }
    app.open_layer(Box::new(crate::layers::tool_detail::ToolDetail::for_call(
        "junk".into(),
    )));
    for (width, height) in [(80, 24), (160, 48)] {
        for _ in 0..40 {
            let shown = screen(&app, width, height);
            let rows: Vec<&str> = shown.lines().collect();
            // The popup's rows: those its left border starts.
            let framed: Vec<&&str> = rows.iter().filter(|row| row.contains('┃')).collect();
            assert!(!framed.is_empty(), "{shown}");
            for row in framed {
                let (first, last) = (row.find('┃').unwrap(), row.rfind('┃').unwrap());
                assert!(first < last, "a row lost its right border:\n{shown}");
                let inside = &row[first..last];
                let cells = unicode_width::UnicodeWidthStr::width(inside);
                let expected = unicode_width::UnicodeWidthStr::width(
                    &rows.iter().find(|r| r.contains('┏')).unwrap()[..],
                );
                assert!(cells <= expected, "{cells} > {expected}:\n{shown}");
            }
            app.on_key(key(KeyCode::PageDown));
        }
    }
}

/// A refusal's reason of thousands of characters (CJK, emoji, flags, an escape typed
/// somehow) at every size down to one cell: nothing panics, nothing raw reaches the
/// screen, and where the dialog has room its end shows.
#[test]
fn a_huge_deny_reason_at_every_size() {
    let workspace = TempDir::new();
    let home = TempDir::new();
    let mut app = busy_app(&workspace, &home);
    app.on_agent_event(Event::ApprovalRequested {
        id: "t2".into(),
        name: "read_file".into(),
        preview: "read README.md".into(),
        session_rule: None,
        request: None,
        notes: Vec::new(),
    });
    screen(&app, 80, 24);
    app.frame_drawn();
    app.now += APPROVAL_GRACE;
    app.on_key(key(KeyCode::Char('n')));
    app.settle();
    let piece = "不行，这个文件是生成的 🇯🇵👩‍💻 \u{1b}]0;pwned\u{7} no ";
    for c in piece.repeat(60).chars().chain("THE END".chars()) {
        app.on_key(key(KeyCode::Char(c)));
    }
    for (width, height) in [(1, 1), (2, 2), (10, 6), (20, 8), (30, 10), (80, 24), (160, 48)] {
        let shown = screen(&app, width, height);
        assert!(!shown.contains('\u{1b}') && !shown.contains('\u{7}'), "{shown}");
        if width >= 80 {
            assert!(shown.contains("THE END▏"), "{width}x{height}:\n{shown}");
        }
    }
    for _ in 0..piece.chars().count() * 61 {
        app.on_key(key(KeyCode::Backspace));
    }
    assert_eq!(app.deny_reason(), Some(""));
    assert!(screen(&app, 80, 24).contains("Why not?"));
}
