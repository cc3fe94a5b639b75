use super::super::{ContentBlock, Message, Role};
use super::*;
use crate::tokens::{Encoding, TokenCounter};
use pretty_assertions::assert_eq;
use serde_json::json;

fn summary(start: usize, end: usize) -> Summary {
    Summary {
        start,
        end,
        text: format!("{start}..{end}"),
        tokens_before: 0,
        tokens: 7,
        fallback: false,
        nested: vec![],
    }
}

fn step(context: &mut ContextState, n: usize, output: &str) {
    context.push(Message {
        role: Role::Assistant,
        content: vec![ContentBlock::ToolUse {
            id: format!("t{n}"),
            name: "bash".into(),
            input: json!({"command": format!("echo {n}")}),
        }],
    });
    context.push(Message {
        role: Role::Tool,
        content: vec![ContentBlock::ToolResult {
            tool_use_id: format!("t{n}"),
            content: output.to_string(),
            is_error: false,
        }],
    });
}

fn context() -> ContextState {
    ContextState::new(TokenCounter::new(Encoding::Cl100kBase))
}

/// Applies `changes` to an empty context: what resume rebuilds.
fn rebuilt(changes: &[Change]) -> ContextState {
    let mut context = context();
    for change in changes {
        context.apply(change.clone());
    }
    context
}

#[test]
fn a_rewind_sets_the_rest_aside_and_the_next_prompt_is_the_one_before_that_message() {
    let mut context = context();
    let mut log = Vec::new();
    context.push(Message::user("one"));
    for n in 1..=12 {
        step(&mut context, n, &format!("output {n}"));
        context.advance_masking(5);
    }
    context.trim_result("t12");
    context.push(Message::assistant_text("done one"));
    log.extend(context.take_changes());
    let before_prompt = context.prompt();
    let before_tokens = context.prompt_tokens();
    let before_masking = (context.masked_results(), context.trimmed_results());
    let to = context.messages().len();

    context.push(Message::user("two"));
    for n in 13..=24 {
        step(&mut context, n, &format!("output {n}"));
        context.advance_masking(3);
    }
    context.trim_result("t20");
    context.apply_summary(summary(to + 1, to + 9));
    log.extend(context.take_changes());
    assert_ne!(context.masked_results(), before_masking.0);
    let branch: Vec<Message> = context.messages()[to..].to_vec();

    assert_eq!(context.rewind_to(to, 2), Ok(branch.len()));
    assert_eq!(context.prompt(), before_prompt);
    assert_eq!(context.prompt_tokens(), before_tokens);
    assert_eq!(
        (context.masked_results(), context.trimmed_results()),
        before_masking
    );
    assert_eq!(context.summaries(), &[] as &[Summary]);
    assert_eq!(
        context.set_aside(),
        &[SetAside {
            turn: 2,
            at: to,
            messages: branch,
            summaries: vec![summary(to + 1, to + 9)],
            nested: vec![],
        }]
    );
    let changes = context.take_changes();
    assert_eq!(
        changes,
        vec![Change::Rewound {
            to,
            turn: 2,
            results: before_masking.0,
            trimmed: vec!["t12".to_string()],
        }]
    );
    log.extend(changes);

    // Resume applies the log's changes: the same history, prompt and branch.
    let mut resumed = rebuilt(&log);
    assert_eq!(resumed.messages(), context.messages());
    assert_eq!(resumed.prompt(), before_prompt);
    assert_eq!(resumed.prompt_tokens(), before_tokens);
    assert_eq!(resumed.set_aside(), context.set_aside());

    // What follows is journaled against the shorter history.
    context.push(Message::user("three"));
    assert_eq!(
        context.take_changes(),
        vec![Change::Messages {
            from: to,
            messages: vec![Message::user("three")],
        }]
    );
}

#[test]
fn changes_not_yet_logged_go_to_the_log_ahead_of_the_rewind() {
    let mut context = context();
    context.push(Message::user("one"));
    context.push(Message::assistant_text("a"));
    context.take_changes();
    context.push(Message::user("two"));
    context.push(Message::assistant_text("b"));
    assert_eq!(context.rewind_to(2, 2), Ok(2));
    let changes = context.take_changes();
    assert_eq!(
        changes,
        vec![
            Change::Messages {
                from: 2,
                messages: vec![Message::user("two"), Message::assistant_text("b")],
            },
            Change::Rewound {
                to: 2,
                turn: 2,
                results: 0,
                trimmed: vec![],
            },
        ]
    );
    let mut log = vec![Change::Messages {
        from: 0,
        messages: vec![Message::user("one"), Message::assistant_text("a")],
    }];
    log.extend(changes);
    assert_eq!(rebuilt(&log).set_aside(), context.set_aside());
}

#[test]
fn a_message_a_summary_replaced_cannot_be_gone_back_to_and_nothing_changes() {
    let mut context = context();
    context.push(Message::user("one"));
    context.push(Message::assistant_text("a"));
    context.push(Message::user("two"));
    context.push(Message::assistant_text("b"));
    context.push(Message::user("three"));
    context.apply_summary(summary(1, 4));
    context.take_changes();
    let messages = context.messages().to_vec();
    let prompt = context.prompt();
    assert_eq!(
        context.rewind_to(2, 2),
        Err(RewindError::Summarized { start: 2, end: 4 })
    );
    assert_eq!(
        context.rewind_to(2, 2).map_err(|e| e.to_string()),
        Err("messages 2–4 were summarized when the context was compacted, and their text was let go of: the conversation cannot go back to a message among them (go back to a later one, or rewind the code only)".to_string())
    );
    assert_eq!(context.rewind_to(5, 4), Err(RewindError::NoMessage(5)));
    assert_eq!(context.messages(), messages);
    assert_eq!(context.prompt(), prompt);
    assert!(context.take_changes().is_empty());
    // Just after the summarized range is fine: the summary stays.
    assert_eq!(context.rewind_to(4, 3), Ok(1));
    assert_eq!(context.summaries(), &[summary(1, 4)]);
}

#[test]
fn a_branch_set_aside_again_by_an_earlier_rewind_nests_in_its_branch() {
    let mut context = context();
    for word in ["one", "two", "three"] {
        context.push(Message::user(word));
        context.push(Message::assistant_text(word));
    }
    assert_eq!(context.rewind_to(4, 3), Ok(2));
    context.push(Message::user("three again"));
    assert_eq!(context.rewind_to(2, 2), Ok(3));
    assert_eq!(
        context.messages(),
        &[Message::user("one"), Message::assistant_text("one")]
    );
    assert_eq!(
        context.set_aside(),
        &[SetAside {
            turn: 2,
            at: 2,
            messages: vec![
                Message::user("two"),
                Message::assistant_text("two"),
                Message::user("three again"),
            ],
            summaries: vec![],
            nested: vec![SetAside {
                turn: 3,
                at: 4,
                messages: vec![Message::user("three"), Message::assistant_text("three")],
                summaries: vec![],
                nested: vec![],
            }],
        }]
    );
    // A new conversation has no branches of the old one; the log keeps the rewinds.
    context.clear();
    assert_eq!(context.set_aside(), &[] as &[SetAside]);
    let changes = context.take_changes();
    assert_eq!(changes.last(), Some(&Change::Cleared));
    assert_eq!(
        changes
            .iter()
            .filter(|change| matches!(change, Change::Rewound { .. }))
            .count(),
        2
    );
}
