//! The plan section: the agent's latest plan at a glance (above the tools when wide,
//! over the conversation on Ctrl-T when narrow), its progress in the title bar, Ctrl-T
//! toggling it, and what it shows after a resume, a `/clear` and a sub-agent's plan.

use super::*;
use miniagent_protocol::{PlanEntry, PlanPriority, PlanStatus};

fn step(content: &str, status: PlanStatus, note: Option<&str>) -> PlanEntry {
    PlanEntry {
        content: content.into(),
        status,
        priority: None,
        note: note.map(str::to_string),
    }
}

/// Seven steps: three done (one with a note), one in progress with a note, three to do.
fn seven_steps() -> Vec<PlanEntry> {
    vec![
        step(
            "read the parser",
            PlanStatus::Completed,
            Some("the bug is in lex()"),
        ),
        step("write a failing test", PlanStatus::Completed, None),
        PlanEntry {
            priority: Some(PlanPriority::High),
            ..step("find where the header is cut", PlanStatus::Completed, None)
        },
        step(
            "fix lex() for headers longer than the buffer",
            PlanStatus::InProgress,
            Some("the buffer is 4 KiB; headers may be 8"),
        ),
        step("run the whole test suite", PlanStatus::Pending, None),
        step("update the changelog", PlanStatus::Pending, Some("under Fixed")),
        step("ask for a review", PlanStatus::Pending, None),
    ]
}

fn planned(workspace: &TempDir, entries: Vec<PlanEntry>) -> Bench {
    let mut app = app_in(workspace);
    app.on_agent_event(Event::TurnStarted {
        text: "fix the parser".into(),
    });
    app.on_agent_event(Event::PlanUpdated { entries });
    app
}

/// The title bar's row.
fn title_row(text: &str) -> &str {
    text.lines().next().unwrap_or_default()
}

/// Wide, a plan shows above the tools, whole; narrow, only its progress shows (in the
/// title bar) until Ctrl-T opens it over the conversation, and Ctrl-T closes it again.
#[test]
fn the_plan_section_shows_progress_the_step_in_progress_and_notes() {
    let workspace = TempDir::new();
    let mut app = planned(&workspace, seven_steps());
    let wide = screen(&mut app, 160, 48);
    assert!(
        wide.contains("Plan 3/7 · Ctrl-T") && title_row(&wide).contains("plan 3/7 · "),
        "{wide}"
    );
    assert_screen!("plan_section_160x48", wide);
    let narrow = screen(&mut app, 80, 24);
    assert!(
        title_row(&narrow).contains("plan 3/7") && !narrow.contains("Plan 3/7"),
        "{narrow}"
    );
    assert_screen!("plan_hidden_80x24", narrow.clone());
    assert!(app.on_key(ctrl('t')));
    let open = screen(&mut app, 80, 24);
    assert!(open.contains("Plan 3/7 · Ctrl-T hides"), "{open}");
    assert_screen!("plan_section_80x24", open);
    // The input keeps the keys: what is typed goes on going there.
    type_text(&mut app, "ok");
    assert_eq!(app.input.text(), "ok");
    app.on_key(ctrl('t'));
    app.input.clear();
    assert_eq!(screen(&mut app, 80, 24), narrow);
    // Wide, it still shows (each width keeps its own choice); Ctrl-T hides it there,
    // and the tools take the column back.
    assert!(screen(&mut app, 160, 48).contains("Plan 3/7"));
    app.on_key(ctrl('t'));
    let hidden = screen(&mut app, 160, 48);
    assert!(
        !hidden.contains("Plan 3/7") && title_row(&hidden).contains("plan 3/7"),
        "{hidden}"
    );
}

/// With no plan the section takes no room; Ctrl-T shows that there is none yet.
#[test]
fn with_no_plan_the_section_is_hidden_and_ctrl_t_says_there_is_none() {
    let workspace = TempDir::new();
    let mut app = app_in(&workspace);
    let before = screen(&mut app, 160, 48);
    assert!(
        !before.contains("Plan") && !title_row(&before).contains("plan"),
        "{before}"
    );
    app.on_key(ctrl('t'));
    let empty = screen(&mut app, 160, 48);
    assert!(empty.contains("no plan yet"), "{empty}");
    assert_screen!("plan_empty_160x48", empty);
    let mut app = app_in(&workspace);
    screen(&mut app, 80, 24);
    app.on_key(ctrl('t'));
    assert_screen!("plan_empty_80x24", screen(&mut app, 80, 24));
}

/// A step in CJK wraps by display width under its mark, its note set in below it.
#[test]
fn a_long_cjk_step_wraps_by_display_width() {
    let workspace = TempDir::new();
    let mut app = planned(
        &workspace,
        vec![
            step("读取解析器", PlanStatus::Completed, None),
            step(
                "修复解析器在处理超过缓冲区长度的标头时截断数据的问题，并为每一种畸形标头添加测试",
                PlanStatus::InProgress,
                Some("缓冲区只有四千字节，标头可能有八千字节"),
            ),
            step("更新变更日志", PlanStatus::Pending, None),
        ],
    );
    let wide = screen(&mut app, 160, 48);
    assert!(wide.contains("Plan 1/3"), "{wide}");
    assert_screen!("plan_cjk_160x48", wide);
    screen(&mut app, 80, 24);
    app.on_key(ctrl('t'));
    assert_screen!("plan_cjk_80x24", screen(&mut app, 80, 24));
}

/// Without colour the marks say what each step is; the step in progress is bold.
#[test]
fn without_colour_the_marks_carry_the_plan() {
    let workspace = TempDir::new();
    let mut app = planned(&workspace, seven_steps());
    app.set_theme(Theme::monochrome());
    let mut terminal = Terminal::new(TestBackend::new(160, 48)).unwrap();
    terminal.draw(|frame| render::draw(frame, &app)).unwrap();
    let buffer = terminal.backend().buffer().clone();
    let text = terminal.backend().to_string();
    assert!(
        buffer
            .content()
            .iter()
            .all(|cell| cell.fg == ratatui::style::Color::Reset),
        "{text}"
    );
    // The row of the step in progress: its mark and text bold, the others not.
    // The plan's column, right of the conversation (which has the one-line note).
    let row_of = |needle: &str| {
        (0..buffer.area.height)
            .find(|&y| {
                (112..buffer.area.width)
                    .map(|x| buffer[(x, y)].symbol())
                    .collect::<String>()
                    .contains(needle)
            })
            .unwrap()
    };
    let bold = |needle: &str| {
        let y = row_of(needle);
        let x = (0..buffer.area.width)
            .find(|&x| matches!(buffer[(x, y)].symbol(), "▸" | "✓" | "○") && x >= 112)
            .unwrap();
        (
            buffer[(x, y)].symbol().to_string(),
            buffer[(x + 2, y)]
                .modifier
                .contains(ratatui::style::Modifier::BOLD),
        )
    };
    assert_eq!(
        [bold("fix lex()"), bold("read the parser"), bold("run the whole")],
        [
            ("▸".to_string(), true),
            ("✓".to_string(), false),
            ("○".to_string(), false)
        ]
    );
    assert_screen!("plan_no_color_160x48", text);
    screen(&mut app, 80, 24);
    app.on_key(ctrl('t'));
    assert_screen!("plan_no_color_80x24", screen(&mut app, 80, 24));
}

/// The conversation gets one line per plan (how far it got, the step in progress), not
/// the whole plan each time; what the model wrote reaches no terminal raw, and a plan too
/// long for its section keeps the step in progress in sight.
#[test]
fn a_hostile_or_long_plan_stays_inert_and_in_bounds() {
    let workspace = TempDir::new();
    let mut entries: Vec<PlanEntry> = (1..=200)
        .map(|i| step(&format!("step {i}"), PlanStatus::Completed, None))
        .collect();
    entries[149] = step(
        "fix the \u{1b}]0;owned\u{7}bug\u{1b}[2J\nnow",
        PlanStatus::InProgress,
        Some("note \u{9b}31mred\u{202e}"),
    );
    for entry in &mut entries[150..] {
        entry.status = PlanStatus::Pending;
    }
    let mut app = planned(&workspace, entries);
    let wide = screen(&mut app, 160, 48);
    assert!(!wide.contains('\u{1b}') && !wide.contains('\u{9b}') && !wide.contains('\u{202e}'));
    // The view keeps 100 steps (the tool allows 50): the step in progress, the 150th, is past them.
    assert!(title_row(&wide).contains("plan 100/100"), "{wide}");
    let mut app = planned(
        &workspace,
        (1..=40)
            .map(|i| {
                let status = match i {
                    ..10 => PlanStatus::Completed,
                    10 => PlanStatus::InProgress,
                    _ => PlanStatus::Pending,
                };
                step(&format!("step {i}"), status, None)
            })
            .collect(),
    );
    // 21 rows: one above the step in progress, the steps after it, and how many steps
    // are out of sight either way (9 + 19 shown + 12 = 40).
    let wide = screen(&mut app, 160, 48);
    // Each screen line is quoted: the section's inner column starts at its 115th character.
    let column: Vec<String> = wide
        .lines()
        .skip(2)
        .take(22)
        .map(|line| {
            line.chars()
                .skip(114)
                .take(46)
                .collect::<String>()
                .trim_end()
                .to_string()
        })
        .collect();
    let mut expected = vec!["  ↑ 9 more steps".to_string()];
    expected.extend((10..=28).map(|i| format!("{} step {i}", if i == 10 { '▸' } else { '○' })));
    expected.extend(["  ↓ 12 more steps".to_string(), "─".repeat(46)]);
    assert_eq!(column, expected, "{wide}");
    let notes: Vec<String> = app
        .conversation
        .entries()
        .iter()
        .filter_map(|entry| match entry {
            crate::conversation::Entry::Notice { text, .. } => Some(text.clone()),
            _ => None,
        })
        .collect();
    assert_eq!(notes, vec!["plan 9/40 · now: step 10".to_string()]);
}

/// A resumed session shows its latest plan (the recorded events fill the view); a
/// sub-agent's plan stays its own, and `/clear` ends the plan with the conversation.
#[test]
fn a_resumed_session_shows_its_latest_plan_and_clear_ends_it() {
    let workspace = TempDir::new();
    let mut app = app_in(&workspace);
    app.on_agent_event(Event::HistoryRestored {
        events: vec![
            Event::TurnStarted {
                text: "fix it".into(),
            },
            Event::PlanUpdated {
                entries: vec![step("read", PlanStatus::InProgress, None)],
            },
            Event::PlanUpdated {
                entries: vec![
                    step("read", PlanStatus::Completed, None),
                    step("fix", PlanStatus::InProgress, Some("in lex()")),
                ],
            },
            Event::TurnComplete { text: "half".into() },
        ],
    });
    app.on_agent_event(Event::SubAgent {
        parent: "d1".into(),
        agent: "helper".into(),
        event: Box::new(Event::PlanUpdated {
            entries: vec![step("its own", PlanStatus::Pending, None)],
        }),
    });
    let wide = screen(&mut app, 160, 48);
    assert!(
        wide.contains("Plan 1/2") && wide.contains("in lex()") && !wide.contains("its own"),
        "{wide}"
    );
    assert_eq!(app.plan.progress(), Some("plan 1/2".to_string()));
    app.on_agent_event(Event::HistoryCleared);
    assert_eq!(app.plan.progress(), None);
    assert!(!screen(&mut app, 160, 48).contains("Plan"));
}
