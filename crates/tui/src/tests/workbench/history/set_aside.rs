//! The inspector's rows for what rewinds set aside, and the text of one.

use pretty_assertions::assert_eq;

use super::*;
use miniagent_protocol::SetAsideBranch;

/// A conversation rewound twice: to before turn 3, then (after a new message) to before
/// turn 2, which set the first branch aside again with its own.
fn rewound_history() -> HistorySnapshot {
    use HistoryEntryKind::{Assistant, ToolResults, User};
    HistorySnapshot {
        entries: entries(&[
            (User, "", 12, "the parser test fails: fix it"),
            (
                Assistant,
                "",
                40,
                "The test expects an empty list for no rows; fixed in src/parse.rs.",
            ),
            (User, "", 9, "now keep the old parser, but rename it"),
        ]),
        prompt_tokens: 3_161,
        by_role: vec![("assistant".into(), 40), ("user".into(), 21)],
        set_aside: vec![
            SetAsideBranch {
                turn: 2,
                from: 3,
                within: None,
                entries: entries(&[
                    (
                        User,
                        "message 3 · now delete the old parser",
                        10,
                        "now delete the old parser",
                    ),
                    (
                        Assistant,
                        "message 4 · Deleting src/old_parse.rs. · calls bash",
                        36,
                        "Deleting src/old_parse.rs.\n→ bash {\"command\":\"rm src/old_parse.rs\"}",
                    ),
                    (
                        ToolResults,
                        "message 5 · 1 tool result",
                        8,
                        "← bash result:\n(no output)",
                    ),
                    (User, "message 6 · and its tests", 6, "and its tests"),
                ]),
            },
            SetAsideBranch {
                turn: 4,
                from: 6,
                within: Some(2),
                entries: entries(&[(
                    User,
                    "message 6 · 删除旧的解析器的测试",
                    14,
                    "删除旧的解析器的测试",
                )]),
            },
        ],
        ..HistorySnapshot::default()
    }
}

#[test]
fn the_inspector_lists_what_rewinds_set_aside_after_the_prompt_and_opens_it() {
    let workspace = TempDir::new();
    let mut app = app_in(&workspace);
    app.on_key(key(KeyCode::F(6)));
    app.on_agent_event(Event::HistorySnapshot {
        snapshot: rewound_history(),
    });
    // Below the prompt's three entries, the two branches.
    app.on_key(key(KeyCode::End));
    app.on_key(key(KeyCode::Up));
    assert_eq!(inspector(&app).map(|i| i.selected), Some(3));
    assert_screen!("history_set_aside_80x24", screen(&mut app, 80, 24));
    assert_screen!("history_set_aside_160x48", screen(&mut app, 160, 48));
    // A branch is not a summary: Tab and Enter leave it as it is.
    assert!(!app.on_key(key(KeyCode::Tab)));
    assert!(!app.on_key(key(KeyCode::Enter)));
    app.on_key(key(KeyCode::End));
    let text = screen(&mut app, 160, 48);
    assert!(
        text.contains("rewound to before turn 4 · 1 message · inside turn 2's"),
        "{text}"
    );
    assert!(text.contains("删除旧的解析器的测试"), "{text}");
    assert!(
        text.contains("rewind, to before turn 2, set them aside again"),
        "{text}"
    );
    // A newer snapshot with fewer rows keeps the selection inside it.
    let mut shorter = rewound_history();
    shorter.set_aside.clear();
    app.on_agent_event(Event::HistorySnapshot { snapshot: shorter });
    assert_eq!(inspector(&app).map(|i| i.selected), Some(2));
}
