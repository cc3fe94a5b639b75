//! The turns a restored session knows, and where each one's message is in its history.

use pretty_assertions::assert_eq;

use super::*;
use crate::agent::TurnMark;
use crate::session::test_header;

fn restored(records: Vec<Record>) -> Restored {
    let lines: Vec<String> = std::iter::once(Record::Header(test_header()))
        .chain(records)
        .map(|record| serde_json::to_string(&record).expect("serializes"))
        .collect();
    crate::session::load::parse((lines.join("\n") + "\n").as_bytes(), "s.jsonl")
        .expect("loads")
        .restore(TokenCounter::estimate_only())
}

fn started(text: &str) -> Record {
    Record::Event {
        ts: 1,
        event: Event::TurnStarted { text: text.into() },
    }
}

fn said(from: usize, question: &str) -> Record {
    Record::Messages {
        ts: 1,
        from,
        messages: vec![Message::user(question), Message::assistant_text("ok")],
    }
}

fn mark(turn: u32, text: &str, sent: bool, message: Option<usize>) -> TurnMark {
    TurnMark {
        turn,
        text: text.into(),
        sent,
        message,
    }
}

#[test]
fn each_turn_knows_where_its_message_is_until_a_rewind_or_a_clear_sets_it_aside() {
    let records = vec![
        started("one"),
        said(0, "one"),
        // The process died before this one's message was added.
        started("lost"),
        started("two"),
        said(2, "two"),
        started("refused"),
        Record::Event {
            ts: 1,
            event: Event::PromptReturned {
                text: "refused".into(),
            },
        },
        started("three"),
        said(4, "three"),
        Record::from_change(
            1,
            Change::Rewound {
                to: 4,
                turn: 5,
                results: 0,
                trimmed: vec![],
            },
        ),
        started("dangling"),
    ];
    assert_eq!(
        restored(records.clone()).turns,
        vec![
            mark(1, "one", true, Some(0)),
            mark(2, "lost", false, None),
            mark(3, "two", true, Some(2)),
            mark(4, "refused", false, None),
            mark(5, "three", true, None),
            mark(6, "dangling", false, None),
        ]
    );
    let mut cleared = records;
    cleared.push(Record::Event {
        ts: 1,
        event: Event::HistoryCleared,
    });
    cleared.push(Record::Cleared { ts: 1 });
    assert_eq!(
        restored(cleared)
            .turns
            .iter()
            .map(|mark| mark.message)
            .collect::<Vec<_>>(),
        vec![None; 6]
    );
}
