//! Shift-Tab's approval modes and the title bar that shows them, the pane keys that
//! replaced Shift-Tab's old meaning, Ctrl-G's request and what comes back from the
//! editor, and the notifications sent while the terminal is not focused.

use pretty_assertions::assert_eq;
use ratatui::style::Modifier;

use super::*;
use crate::notify::Notifier;

fn alt(code: KeyCode) -> KeyEvent {
    KeyEvent::new(code, KeyModifiers::ALT)
}

fn back_tab() -> KeyEvent {
    KeyEvent::new(KeyCode::BackTab, KeyModifiers::SHIFT)
}

/// Shift-Tab steps ask → auto-edit → read-only → ask, never into full-auto (from which it
/// steps back to ask); a burst of presses steps on from the last one asked for, before
/// the agent has answered any; the title bar shows what the agent says it is in.
#[test]
fn shift_tab_cycles_the_approval_mode_without_full_auto() {
    let workspace = TempDir::new();
    let mut app = app_in(&workspace);
    for _ in 0..4 {
        app.on_key(back_tab());
    }
    let mode = |mode| Op::SetApprovalMode { mode };
    assert_eq!(
        app.sent,
        vec![
            mode(ApprovalMode::AutoEdit),
            mode(ApprovalMode::ReadOnly),
            mode(ApprovalMode::Ask),
            mode(ApprovalMode::AutoEdit),
        ]
    );
    // The focus stayed in the input: Shift-Tab no longer moves it.
    assert_eq!(app.layout.focus(), Pane::Input);
    for confirmed in [ApprovalMode::AutoEdit, ApprovalMode::ReadOnly, ApprovalMode::Ask] {
        app.on_agent_event(Event::ApprovalModeChanged { mode: confirmed });
    }
    // The last one asked for is still on its way: the next press steps on from it.
    app.sent.clear();
    app.on_key(back_tab());
    assert_eq!(app.sent, vec![mode(ApprovalMode::ReadOnly)]);
    app.on_agent_event(Event::ApprovalModeChanged {
        mode: ApprovalMode::AutoEdit,
    });
    app.on_agent_event(Event::ApprovalModeChanged {
        mode: ApprovalMode::ReadOnly,
    });
    assert_eq!(app.session.approval_mode(), ApprovalMode::ReadOnly);
    // Set on purpose (/approval full-auto), full-auto is left for ask.
    app.on_agent_event(Event::ApprovalModeChanged {
        mode: ApprovalMode::FullAuto,
    });
    app.sent.clear();
    app.on_key(back_tab());
    assert_eq!(app.sent, vec![mode(ApprovalMode::Ask)]);
}

/// The mode is the title bar's first word after the name, bold (and, in full-auto, in
/// the danger colour), at 80 and 160 columns.
#[test]
fn the_title_bar_shows_the_mode_set_apart() {
    let workspace = TempDir::new();
    let mut app = app_in(&workspace);
    app.on_agent_event(Event::ApprovalModeChanged {
        mode: ApprovalMode::AutoEdit,
    });
    assert_screen!("title_auto_edit_80x24", screen(&mut app, 80, 24));
    assert_screen!("title_auto_edit_160x48", screen(&mut app, 160, 48));
    let theme = Theme::dark();
    let styles = |app: &Bench, mode: &str| {
        let mut terminal = Terminal::new(TestBackend::new(80, 24)).unwrap();
        terminal.draw(|frame| render::draw(frame, app)).unwrap();
        let buffer = terminal.backend().buffer().clone();
        let at = " miniagent · ".chars().count() as u16;
        let cells: Vec<_> = (at..at + mode.len() as u16)
            .map(|x| buffer[(x, 0)].clone())
            .collect();
        let before = buffer[(at - 2, 0)].clone();
        (cells, before)
    };
    let (cells, before) = styles(&app, "auto-edit");
    assert_eq!(cells.iter().map(|c| c.symbol()).collect::<String>(), "auto-edit");
    assert!(cells.iter().all(|c| c.modifier.contains(Modifier::BOLD)));
    assert!(
        !before.modifier.contains(Modifier::BOLD),
        "only the mode is set apart"
    );
    assert_eq!(cells[0].fg, theme.title_bar.fg.unwrap());
    app.on_agent_event(Event::ApprovalModeChanged {
        mode: ApprovalMode::FullAuto,
    });
    let (cells, _) = styles(&app, "full-auto");
    assert_eq!(cells.iter().map(|c| c.symbol()).collect::<String>(), "full-auto");
    assert_eq!(cells[0].fg, theme.gauge_danger.fg.unwrap());
}

/// Alt-→ and Alt-← go round the panes on screen, forwards and back, at 160 columns and
/// at 80 (where the side pane open over the conversation has its place); Tab goes
/// forwards unless it completes a command.
#[test]
fn alt_arrows_and_tab_move_the_focus_at_every_width() {
    let workspace = TempDir::new();
    let mut app = app_in(&workspace);
    app.resized(160);
    screen(&mut app, 160, 48);
    let wide = app.visible_panes();
    assert!(wide.len() > 2, "{wide:?}");
    let mut seen = Vec::new();
    for _ in 0..wide.len() {
        app.on_key(alt(KeyCode::Right));
        seen.push(app.layout.focus());
    }
    let mut back = Vec::new();
    for _ in 0..wide.len() {
        app.on_key(alt(KeyCode::Left));
        back.push(app.layout.focus());
    }
    let at = wide.iter().position(|p| *p == Pane::Input).unwrap();
    let n = wide.len();
    let expected: Vec<Pane> = (1..=n).map(|i| wide[(at + i) % n]).collect();
    assert_eq!(seen, expected);
    let expected_back: Vec<Pane> = (1..=n).map(|i| wide[(at + n - i) % n]).collect();
    assert_eq!(back, expected_back);
    assert_eq!(app.layout.focus(), Pane::Input);
    // Narrow: the tools pane opened over the conversation is in the round too.
    app.resized(80);
    app.on_key(KeyEvent::new(KeyCode::F(4), KeyModifiers::NONE));
    screen(&mut app, 80, 24);
    assert_eq!(app.layout.focus(), Pane::Timeline);
    let narrow = app.visible_panes();
    app.on_key(alt(KeyCode::Left));
    let at = narrow.iter().position(|p| *p == Pane::Timeline).unwrap();
    assert_eq!(app.layout.focus(), narrow[(at + narrow.len() - 1) % narrow.len()]);
    app.on_key(alt(KeyCode::Right));
    assert_eq!(app.layout.focus(), Pane::Timeline);
    // Tab completes a command in the input instead of moving.
    app.on_key(KeyEvent::new(KeyCode::Char('q'), KeyModifiers::NONE));
    type_text(&mut app, "/he");
    assert_eq!(app.layout.focus(), Pane::Input);
    app.on_key(key(KeyCode::Tab));
    assert_eq!(
        (app.layout.focus(), app.input.text()),
        (Pane::Input, "/help".to_string())
    );
}

/// Ctrl-G asks the loop for the editor on what is typed; what it saved replaces the
/// input as one edit (Ctrl-Z brings the draft back) and is not sent; a failed editor
/// leaves the input as it was, and says why.
#[test]
fn ctrl_g_asks_for_the_editor_and_takes_its_text_back() {
    let workspace = TempDir::new();
    let mut app = app_in(&workspace);
    app.places.editor = "code --wait".into();
    type_text(&mut app, "draft foo");
    app.on_key(ctrl('g'));
    assert_eq!(
        app.actions,
        vec![Action::EditInput {
            command: "code --wait".into(),
            text: "draft foo".into(),
        }]
    );
    let outcome = app.app.edited(Ok("line one\nline two bar".into()));
    assert!(outcome.changed && outcome.actions.is_empty());
    assert_eq!(app.input.text(), "line one\nline two bar");
    assert!(app.sent.is_empty(), "nothing is sent");
    app.on_key(ctrl('z'));
    app.on_key(ctrl('z'));
    assert_eq!(app.input.text(), "draft foo");
    app.app
        .edited(Err("the editor `vim` exited with status 1".into()));
    assert_eq!(app.input.text(), "draft foo");
    assert_eq!(
        app.turn.last_notice().map(|(_, text)| text.as_str()),
        Some("the editor `vim` exited with status 1; the input is as it was")
    );
    // No editor named: vi.
    app.places.editor = String::new();
    app.actions.clear();
    app.on_key(ctrl('g'));
    assert_eq!(
        app.actions,
        vec![Action::EditInput {
            command: "vi".into(),
            text: "draft foo".into(),
        }]
    );
}

/// While the terminal is not focused, an approval that waits and the turn's end each
/// ask for the notification's bytes; focused again, nothing is sent; a hostile tool name
/// reaches the terminal as plain text inside the one sequence.
#[test]
fn a_notification_is_written_only_while_the_terminal_is_away() {
    let workspace = TempDir::new();
    let mut app = app_in(&workspace);
    app.attention = crate::app::Attention::new(Notifier::Osc777, false);
    let notified = |app: &mut Bench| -> Vec<Vec<u8>> {
        let found = app
            .actions
            .iter()
            .filter_map(|action| match action {
                Action::Notify(bytes) => Some(bytes.clone()),
                _ => None,
            })
            .collect();
        app.actions.clear();
        found
    };
    app.on_agent_event(Event::TurnStarted { text: "go".into() });
    app.on_agent_event(Event::ApprovalRequested {
        id: "a1".into(),
        name: "bash".into(),
        preview: "$ ls".into(),
        session_rule: None,
        request: None,
        notes: Vec::new(),
    });
    assert_eq!(notified(&mut app), Vec::<Vec<u8>>::new(), "focused: nothing");
    app.on_focus_lost();
    app.on_agent_event(Event::ApprovalRequested {
        id: "a2".into(),
        name: "evil\x1b]0;pwned\x07\u{9c}\nname".into(),
        preview: "$ ls".into(),
        session_rule: None,
        request: None,
        notes: Vec::new(),
    });
    app.on_agent_event(Event::TextDelta { delta: "done".into() });
    app.on_agent_event(Event::TurnComplete { text: "done".into() });
    assert_eq!(
        notified(&mut app),
        vec![
            b"\x1b]777;notify;miniagent;approval waiting: evil name\x07".to_vec(),
            b"\x1b]777;notify;miniagent;turn finished\x07".to_vec(),
        ]
    );
    // A replayed event is not news.
    app.on_agent_event(Event::Replayed {
        at_ms: 0,
        event: Box::new(Event::TurnComplete { text: "old".into() }),
    });
    assert_eq!(notified(&mut app), Vec::<Vec<u8>>::new());
    app.app.on_focus_gained();
    app.on_agent_event(Event::TurnStarted { text: "again".into() });
    app.on_agent_event(Event::TurnComplete { text: "done".into() });
    assert_eq!(notified(&mut app), Vec::<Vec<u8>>::new(), "back in focus");
}

/// While an approval waits, Shift-↑/↓ and Shift-PgUp/PgDn scroll the conversation
/// behind the dialog, armed or not, and answer nothing; the wheel outside the dialog
/// scrolls the pane under it, inside it scrolls what is asked.
#[test]
fn the_conversation_scrolls_behind_a_waiting_approval() {
    let workspace = TempDir::new();
    let mut app = app_in(&workspace);
    let answer: String = (1..=80).map(|n| format!("- answer line {n:03}\n")).collect();
    app.on_agent_event(Event::TurnStarted { text: "long".into() });
    app.on_agent_event(Event::TextDelta {
        delta: answer.clone(),
    });
    app.on_agent_event(Event::TurnComplete { text: answer });
    app.on_agent_event(Event::TurnStarted { text: "run".into() });
    let long_command: String = (1..=12).map(|n| format!("echo {n}\n")).collect();
    app.on_agent_event(Event::ApprovalRequested {
        id: "b1".into(),
        name: "bash".into(),
        preview: format!("$ {long_command}"),
        session_rule: None,
        request: None,
        notes: Vec::new(),
    });
    let lines = |screen: &str| -> Vec<u32> {
        screen
            .split("answer line ")
            .skip(1)
            .filter_map(|rest| rest.get(..3)?.parse().ok())
            .collect()
    };
    let first = screen(&mut app, 80, 24);
    assert!(first.contains("Allow bash?"), "{first}");
    let newest = lines(&first);
    assert!(newest.iter().all(|n| *n > 60), "{first}");
    // Before the dialog arms: the key scrolls, and the dialog neither answers nor
    // waits longer for it.
    let shift = |code| KeyEvent::new(code, KeyModifiers::SHIFT);
    for _ in 0..10 {
        assert!(app.on_key(shift(KeyCode::Up)));
    }
    app.on_key(shift(KeyCode::PageUp));
    let scrolled = screen(&mut app, 80, 24);
    assert!(scrolled.contains("Allow bash?"), "{scrolled}");
    let older = lines(&scrolled);
    assert!(older.iter().min() < newest.iter().min(), "{scrolled}");
    assert!(app.sent.is_empty());
    app.on_key(shift(KeyCode::PageDown));
    app.on_key(shift(KeyCode::Down));
    let back = screen(&mut app, 80, 24);
    assert!(lines(&back).iter().min() > older.iter().min(), "{back}");
    // The wheel over the conversation, outside the dialog, scrolls it; inside the dialog
    // it scrolls the command.
    let drawn = app.approval().unwrap().drawn();
    let wheel = |column, row| crossterm::event::MouseEvent {
        kind: crossterm::event::MouseEventKind::ScrollUp,
        column,
        row,
        modifiers: KeyModifiers::NONE,
    };
    let before = screen(&mut app, 80, 24);
    app.on_mouse(wheel(2, 2));
    let wheeled = screen(&mut app, 80, 24);
    assert!(
        lines(&wheeled).iter().min() < lines(&before).iter().min(),
        "{wheeled}"
    );
    assert_eq!(app.approval().unwrap().scroll(), 0);
    app.on_mouse(wheel(drawn.x + drawn.width / 2, drawn.y + drawn.height / 2));
    let inside = screen(&mut app, 80, 24);
    assert_eq!(
        lines(&inside).iter().min(),
        lines(&wheeled).iter().min(),
        "{inside}"
    );
    assert!(app.sent.is_empty(), "nothing answered");
}
