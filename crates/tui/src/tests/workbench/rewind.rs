//! `/rewind`, Esc Esc and `/undo`: when the picker opens (and when a single Esc keeps
//! its old meanings), what it lists and sends, and what the workbench shows when the
//! agent rewinds or refuses, live and in a resumed session.

use pretty_assertions::assert_eq;

use super::*;
use crate::control::ESCAPE_AGAIN;
use crate::conversation::{Entry, NoticeKind};
use crate::layer::Layer;
use crate::layers::rewind::RewindPicker;
use miniagent_protocol::{RewindPoint, RewindScope};

/// One finished turn: the person's message and the model's answer.
fn turn(text: &str, answer: &str) -> Vec<Event> {
    vec![
        Event::TurnStarted { text: text.into() },
        Event::AssistantMessage {
            thinking: String::new(),
            text: answer.into(),
            tool_calls: Vec::new(),
            stop_reason: StopReason::EndTurn,
        },
        Event::TurnComplete { text: answer.into() },
    ]
}

/// Three turns: the second and third are what a rewind to turn 2 sets aside.
fn three_turns() -> Vec<Event> {
    [
        turn("read the README and say what this is", "A demo project."),
        turn("add a --verbose flag to main.rs", "Added the flag."),
        turn("now write a test for it", "Wrote tests/flag.rs."),
    ]
    .concat()
}

fn app_after(events: Vec<Event>) -> (TempDir, Bench) {
    let workspace = TempDir::new();
    let mut app = app_in(&workspace);
    for event in events {
        app.on_agent_event(event);
    }
    app.sent.clear();
    (workspace, app)
}

fn points() -> Event {
    let point = |turn: u32, text: &str, files: u32, conversation: bool| RewindPoint {
        turn,
        text: text.into(),
        files,
        conversation,
    };
    Event::RewindPoints {
        points: vec![
            point(1, "read the README and say what this is", 3, false),
            point(
                2,
                "总结一下这个项目的结构，然后把所有的测试都运行一遍，并且把失败的测试修好，最后写一份报告",
                3,
                true,
            ),
            point(
                3,
                "line one\nline two\twith a tab \u{1b}[31mred\u{1b}[0m",
                1,
                true,
            ),
            point(4, "now write a test for it", 0, true),
        ],
    }
}

fn picker(app: &Bench) -> Option<&RewindPicker> {
    app.top::<RewindPicker>()
}

/// The picker's step on screen, a moment after it was drawn: keys answer it.
fn arm_picker(app: &mut Bench) {
    screen(app, 80, 24);
    app.now += APPROVAL_GRACE;
}

#[test]
fn esc_esc_on_an_empty_input_opens_the_picker_which_asks_for_the_messages() {
    let (_workspace, mut app) = app_after(three_turns());
    app.on_key(key(KeyCode::Esc));
    assert!(app.layers.is_empty(), "one Esc opens nothing");
    assert_eq!(app.sent, vec![]);
    app.now += ESCAPE_AGAIN / 2;
    app.on_key(key(KeyCode::Esc));
    assert!(picker(&app).is_some(), "the second Esc opens the picker");
    assert_eq!(app.sent, vec![Op::ListRewindPoints]);
    let waiting = screen(&mut app, 80, 24);
    assert!(
        waiting.contains("asking the agent for your messages…"),
        "{waiting}"
    );
    assert_screen!("rewind_waiting_80x24", waiting);
    assert_screen!("rewind_waiting_160x48", screen(&mut app, 160, 48));
    // Esc closes it, before or after the messages came.
    app.on_key(key(KeyCode::Esc));
    assert!(app.layers.is_empty());
    // `/rewind` opens it too.
    app.submit("/rewind".into());
    assert!(picker(&app).is_some());
    assert_eq!(app.sent, vec![Op::ListRewindPoints, Op::ListRewindPoints]);
}

#[test]
fn a_single_esc_keeps_its_meanings_and_only_esc_esc_on_an_idle_empty_input_rewinds() {
    // While a turn runs, Esc interrupts, however often pressed.
    let (_workspace, mut app) = app_after(Vec::new());
    app.on_agent_event(Event::TurnStarted {
        text: "long task".into(),
    });
    app.on_key(key(KeyCode::Esc));
    app.on_key(key(KeyCode::Esc));
    assert!(app.layers.is_empty());
    assert_eq!(app.sent, vec![Op::Interrupt, Op::Interrupt]);
    app.on_agent_event(Event::TurnAborted {
        reason: "interrupted".into(),
    });
    app.sent.clear();

    // With text in the input, Esc Esc does nothing new: the draft stays.
    type_text(&mut app, "draft");
    app.on_key(key(KeyCode::Esc));
    app.on_key(key(KeyCode::Esc));
    assert!(app.layers.is_empty());
    assert_eq!(app.input.text(), "draft");
    assert_eq!(app.sent, vec![]);
    app.input.clear();

    // Too slow: the second Esc is a first one again, and a third soon after opens it.
    app.on_key(key(KeyCode::Esc));
    app.now += ESCAPE_AGAIN;
    app.on_key(key(KeyCode::Esc));
    assert!(app.layers.is_empty(), "two Escs {ESCAPE_AGAIN:?} apart");
    app.on_key(key(KeyCode::Esc));
    assert!(picker(&app).is_some());
    app.on_key(key(KeyCode::Esc));
    app.sent.clear();

    // A key between the two starts it over.
    app.on_key(key(KeyCode::Esc));
    app.on_key(key(KeyCode::Right));
    app.on_key(key(KeyCode::Esc));
    assert!(app.layers.is_empty(), "Esc → Esc");

    // The Esc that ends a search is the search's: it does not count as the first.
    app.on_key(ctrl('f'));
    app.on_key(key(KeyCode::Esc));
    app.on_key(key(KeyCode::Esc));
    assert!(app.layers.is_empty(), "Ctrl-F Esc Esc");
    assert_eq!(app.sent, vec![]);

    // A message sent and not started yet: a rewind waits for the turn.
    app.layout.focus_on(Pane::Input);
    app.submit("go".into());
    app.sent.clear();
    app.on_key(key(KeyCode::Esc));
    app.on_key(key(KeyCode::Esc));
    assert!(app.layers.is_empty(), "a turn is about to start");
    assert_eq!(app.sent, vec![]);
}

#[test]
fn the_picker_lists_the_messages_newest_selected_and_a_choice_sends_the_rewind() {
    let (_workspace, mut app) = app_after(three_turns());
    app.submit("/rewind".into());
    app.sent.clear();
    app.on_agent_event(points());
    let list = screen(&mut app, 80, 24);
    for row in [
        "1  read the README and say what this is",
        "2  总结一下这个项目的结构",
        "3  line one line two with a tab ␛[31mred␛[0m",
        "4  now write a test for it",
    ] {
        assert!(list.contains(row), "{row:?} in\n{list}");
    }
    assert_screen!("rewind_picker_80x24", list);
    assert_screen!("rewind_picker_160x48", screen(&mut app, 160, 48));

    // Keys before the list was seen a moment pick nothing.
    app.now += APPROVAL_GRACE / 2;
    app.on_key(key(KeyCode::Enter));
    assert!(matches!(picker(&app), Some(p) if p.title() == "Rewind"));
    assert_eq!(app.sent, vec![]);
    let still = screen(&mut app, 80, 24);
    assert!(still.contains("Go back to just before"), "{still}");

    // Home, End, PgUp and ↑ move; Enter picks turn 2 (code, conversation and both apply).
    app.now += APPROVAL_GRACE * 4;
    app.on_key(key(KeyCode::Home));
    app.on_key(key(KeyCode::End));
    app.on_key(key(KeyCode::PageUp));
    app.on_key(key(KeyCode::Down));
    app.on_key(key(KeyCode::Enter));
    let choice = screen(&mut app, 80, 24);
    assert!(choice.contains("Before turn 2:"), "{choice}");
    assert!(choice.contains("puts back the 3 files changed since"), "{choice}");
    assert!(
        choice.contains("the next request carries the history before this message"),
        "{choice}"
    );
    assert_screen!("rewind_choice_80x24", choice);
    assert_screen!("rewind_choice_160x48", screen(&mut app, 160, 48));

    // A letter typed at once, in a burst with more, chooses nothing.
    app.now += APPROVAL_GRACE;
    app.on_key(key(KeyCode::Char('b')));
    app.on_key(key(KeyCode::Char('x')));
    assert_eq!(app.sent, vec![]);
    assert!(picker(&app).is_some());
    // `b` pressed alone, once it settles (and the choice is armed again), rewinds both.
    app.now += crate::app::TYPING_QUIET;
    app.input.clear();
    app.on_key(key(KeyCode::Char('b')));
    app.settle();
    assert_eq!(
        app.sent,
        vec![Op::Rewind {
            turn: 2,
            scope: RewindScope::Both
        }]
    );
    let sent = screen(&mut app, 80, 24);
    assert!(
        sent.contains("putting back the code and the conversation as before turn 2…"),
        "{sent}"
    );
}

#[test]
fn options_that_cannot_apply_are_disabled_with_why() {
    let (_workspace, mut app) = app_after(three_turns());
    app.submit("/rewind".into());
    app.sent.clear();
    app.on_agent_event(points());
    arm_picker(&mut app);
    app.on_key(key(KeyCode::Home));
    app.on_key(key(KeyCode::Enter));
    let choice = screen(&mut app, 80, 24);
    assert!(choice.contains("Before turn 1:"), "{choice}");
    assert!(choice.contains("(not available)"), "{choice}");
    assert!(
        choice.contains("the conversation cannot go back there"),
        "{choice}"
    );
    assert_screen!("rewind_choice_compacted_80x24", choice);
    // Neither `v` nor `b` sends; `c` (3 files) does.
    app.now += APPROVAL_GRACE;
    for letter in ['v', 'b'] {
        app.on_key(key(KeyCode::Char(letter)));
        app.settle();
        screen(&mut app, 80, 24);
        app.now += APPROVAL_GRACE;
    }
    assert_eq!(app.sent, vec![]);
    app.on_key(key(KeyCode::Char('c')));
    app.settle();
    assert_eq!(
        app.sent,
        vec![Op::Rewind {
            turn: 1,
            scope: RewindScope::Code
        }]
    );

    // The newest message changed no file: Enter offers the conversation.
    app.on_key(key(KeyCode::Esc));
    app.submit("/rewind".into());
    app.on_agent_event(points());
    arm_picker(&mut app);
    app.on_key(key(KeyCode::Enter));
    arm_picker(&mut app);
    app.sent.clear();
    app.on_key(key(KeyCode::Enter));
    assert_eq!(
        app.sent,
        vec![Op::Rewind {
            turn: 4,
            scope: RewindScope::Conversation
        }]
    );
}

#[test]
fn a_session_with_no_messages_says_so() {
    let (_workspace, mut app) = app_after(Vec::new());
    app.on_key(key(KeyCode::Esc));
    app.on_key(key(KeyCode::Esc));
    app.on_agent_event(Event::RewindPoints { points: Vec::new() });
    arm_picker(&mut app);
    let shown = screen(&mut app, 80, 24);
    assert!(
        shown.contains("This session has no messages to go back to yet."),
        "{shown}"
    );
    app.on_key(key(KeyCode::Enter));
    assert!(app.layers.is_empty());
    assert_eq!(app.sent, vec![Op::ListRewindPoints]);
}

#[test]
fn a_conversation_rewind_sets_the_turns_aside_and_gives_the_message_back() {
    let (_workspace, mut app) = app_after(three_turns());
    app.submit("/rewind".into());
    app.on_agent_event(points());
    app.input.set_text("a draft");
    app.on_agent_event(Event::Rewound {
        turn: 2,
        scope: RewindScope::Conversation,
        files: Vec::new(),
        messages: 4,
        text: "add a --verbose flag to main.rs".into(),
    });
    assert!(app.layers.is_empty(), "the picker closes");
    let users: Vec<&str> = app
        .conversation
        .entries()
        .iter()
        .filter_map(|entry| match entry {
            Entry::User(text) => Some(text.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(users, vec!["read the README and say what this is"]);
    let marker =
        "rewound to before turn 2: 4 messages set aside (they stay in the session log; /history shows them)";
    assert!(matches!(
        app.conversation.entries().last(),
        Some(Entry::Notice { kind: NoticeKind::Info, text }) if text == marker
    ));
    assert_eq!(app.input.text(), "add a --verbose flag to main.rs");
    assert_screen!("rewind_conversation_80x24", screen(&mut app, 80, 24));
    assert_screen!("rewind_conversation_160x48", screen(&mut app, 160, 48));
    // The draft it replaced comes back with Ctrl-Z (the insert, then the clearing, as
    // after Ctrl-G's editor).
    app.on_key(ctrl('z'));
    app.on_key(ctrl('z'));
    assert_eq!(app.input.text(), "a draft");

    // The next turn is number 4 (numbers are never reused): a rewind to it finds it.
    app.input.clear();
    for event in turn("add a --quiet flag instead", "Added it.") {
        app.on_agent_event(event);
    }
    app.on_agent_event(Event::Rewound {
        turn: 4,
        scope: RewindScope::Both,
        files: vec!["src/main.rs".into()],
        messages: 2,
        text: "add a --quiet flag instead".into(),
    });
    let texts: Vec<String> = app
        .conversation
        .entries()
        .iter()
        .map(|entry| match entry {
            Entry::User(text) => format!("user: {text}"),
            Entry::Notice { text, .. } => format!("notice: {text}"),
            Entry::Assistant { text, .. } => format!("assistant: {text}"),
            Entry::Tool { .. } | Entry::Files { .. } => "other".into(),
        })
        .collect();
    assert_eq!(
        texts[texts.len() - 3..],
        [
            format!("notice: {marker}"),
            "notice: rewound to before turn 4: 2 messages set aside (they stay in the session log; /history shows them)".to_string(),
            "notice: put back 1 file as it was before turn 4: src/main.rs".to_string(),
        ]
    );
}

#[test]
fn a_code_rewind_and_undo_name_the_files_put_back() {
    let (workspace, mut app) = app_after(three_turns());
    workspace.write("src/new.rs", "// made by turn 3\n");
    app.tree.mark_touched(std::path::Path::new("src/main.rs"));
    app.submit("/undo".into());
    assert_eq!(app.sent, vec![Op::Undo]);
    let files: Vec<String> = (1..=12).map(|n| format!("src/f{n}.rs")).collect();
    app.on_agent_event(Event::Rewound {
        turn: 3,
        scope: RewindScope::Code,
        files,
        messages: 0,
        text: String::new(),
    });
    assert_eq!(
        app.turn.last_notice().map(|(_, text)| text.as_str()),
        Some(
            "put back 12 files as they were before turn 3: src/f1.rs, src/f2.rs, src/f3.rs, src/f4.rs, src/f5.rs, src/f6.rs, src/f7.rs, src/f8.rs, src/f9.rs, src/f10.rs, and 2 more"
        )
    );
    assert_eq!(app.input.text(), "", "a code rewind gives no message back");
    // The transcript keeps every turn.
    let users = app
        .conversation
        .entries()
        .iter()
        .filter(|entry| matches!(entry, Entry::User(_)))
        .count();
    assert_eq!(users, 3);
}

#[test]
fn a_refusal_names_the_files_in_the_transcript_and_in_the_open_picker() {
    let (_workspace, mut app) = app_after(three_turns());
    app.submit("/rewind".into());
    app.on_agent_event(points());
    arm_picker(&mut app);
    app.on_key(key(KeyCode::Up));
    app.on_key(key(KeyCode::Enter));
    arm_picker(&mut app);
    app.on_key(key(KeyCode::Enter));
    app.on_agent_event(Event::RewindRefused {
        message: "files were changed outside miniagent since: nothing was put back".into(),
        files: vec!["src/main.rs".into(), "docs/evil\u{1b}]0;x\u{7}.md".into()],
    });
    let said = "rewind refused: files were changed outside miniagent since: nothing was put back (changed outside miniagent since: src/main.rs, docs/evil␛]0;x␇.md)";
    assert!(matches!(
        app.conversation.entries().last(),
        Some(Entry::Notice { kind: NoticeKind::Error, text }) if text == said
    ));
    let shown = screen(&mut app, 80, 24);
    assert!(shown.contains("refused: files were changed outside"), "{shown}");
    assert!(!shown.contains('\u{1b}'), "{shown}");
    assert_screen!("rewind_refused_80x24", shown);
    assert_screen!("rewind_refused_160x48", screen(&mut app, 160, 48));
    assert!(picker(&app).is_some(), "the picker stays, back at the list");
}

#[test]
fn a_refusal_that_names_its_files_does_not_name_them_twice() {
    let (_workspace, mut app) = app_after(three_turns());
    app.on_agent_event(Event::RewindRefused {
        message: "nothing was put back; changed outside miniagent since the session changed it: c.txt".into(),
        files: vec!["c.txt".into()],
    });
    let said =
        "rewind refused: nothing was put back; changed outside miniagent since the session changed it: c.txt";
    assert!(
        matches!(
            app.conversation.entries().last(),
            Some(Entry::Notice { kind: NoticeKind::Error, text }) if text == said
        ),
        "{:?}",
        app.conversation.entries().last()
    );
}

#[test]
fn an_undo_s_refusal_is_named_as_an_undo_s() {
    let (_workspace, mut app) = app_after(three_turns());
    app.submit("/undo".into());
    let refusal = Event::RewindRefused {
        message: "there are no file changes of this session to take back".into(),
        files: vec![],
    };
    app.on_agent_event(refusal.clone());
    let last = |app: &App| match app.conversation.entries().last() {
        Some(Entry::Notice { text, .. }) => text.clone(),
        other => panic!("{other:?}"),
    };
    assert_eq!(
        last(&app),
        "undo refused: there are no file changes of this session to take back"
    );
    // The next refusal answers a rewind.
    app.on_agent_event(refusal);
    assert_eq!(
        last(&app),
        "rewind refused: there are no file changes of this session to take back"
    );
}

#[test]
fn a_resumed_session_shows_the_rewind_as_the_live_one_did() {
    let mut events = three_turns();
    events.push(Event::Rewound {
        turn: 2,
        scope: RewindScope::Both,
        files: vec!["src/main.rs".into()],
        messages: 4,
        text: "add a --verbose flag to main.rs".into(),
    });
    events.extend(turn("add a --quiet flag instead", "Added it."));
    events.push(Event::RewindRefused {
        message: "a turn is running: /rewind and /undo work between turns (interrupt it first)".into(),
        files: Vec::new(),
    });
    let (_workspace, mut live) = app_after(events.clone());
    live.input.clear();
    let (_other, mut resumed) = app_after(Vec::new());
    resumed.show_restored(events);
    let entries = |app: &Bench| {
        app.conversation
            .entries()
            .iter()
            .map(|entry| format!("{entry:?}"))
            .collect::<Vec<_>>()
    };
    assert_eq!(entries(&resumed), entries(&live));
    assert_eq!(resumed.input.text(), "", "the input is this workbench's own");
}

#[test]
fn hostile_answers_keep_the_picker_small_and_inert() {
    let (_workspace, mut app) = app_after(three_turns());
    app.submit("/rewind".into());
    let points = (1..=20_000)
        .map(|turn| RewindPoint {
            turn,
            text: format!("\u{1b}]52;c;cHduZWQ=\u{7}{}", "长".repeat(100_000 / 20_000 * 10)),
            files: u32::MAX,
            conversation: turn % 2 == 0,
        })
        .collect();
    app.on_agent_event(Event::RewindPoints { points });
    app.on_agent_event(Event::RewindRefused {
        message: "x".repeat(1_000_000),
        files: (0..5000).map(|n| format!("f{n}\n.rs")).collect(),
    });
    let shown = screen(&mut app, 80, 24);
    assert!(!shown.contains('\u{1b}') && !shown.contains('\u{7}'), "{shown}");
    assert!(
        shown.contains("20000"),
        "the newest message is selected and shown: {shown}"
    );
    assert!(shown.contains("4294967295 files"), "{shown}");
    let refusal_rows = shown.lines().filter(|line| line.contains("xxxxxxxx")).count();
    assert!(refusal_rows <= 6, "{shown}");
    arm_picker(&mut app);
    app.on_key(key(KeyCode::PageUp));
    app.on_key(key(KeyCode::Home));
    let top = screen(&mut app, 160, 48);
    assert!(top.contains("   1  ␛]52;c;cHduZWQ=␇长"), "{top}");
}
