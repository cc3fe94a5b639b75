use super::*;
use crate::tokens::Encoding;
use pretty_assertions::assert_eq;
use serde_json::json;

/// A summary of `start..end` that takes `tokens` in the prompt.
fn summary(start: usize, end: usize, tokens: u64) -> Summary {
    Summary {
        start,
        end,
        text: format!("{start}..{end}"),
        tokens_before: 0,
        tokens,
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

#[test]
fn masking_moves_in_batches_and_keeps_the_newest() {
    let mut context = ContextState::new(TokenCounter::new(Encoding::Cl100kBase));
    context.push(Message::user("go"));
    for n in 1..=10 {
        step(&mut context, n, &format!("output {n}"));
        assert!(!context.advance_masking(5), "moved at {n}");
    }
    step(&mut context, 11, "output 11");
    assert!(context.advance_masking(5));
    assert_eq!(context.masked_results(), 6);
    let prompt = context.prompt();
    let results: Vec<String> = prompt
        .iter()
        .flat_map(|m| m.content.iter())
        .filter_map(|b| match b {
            ContentBlock::ToolResult { content, .. } => Some(content.clone()),
            _ => None,
        })
        .collect();
    assert!(
        results[5]
            .starts_with("[result omitted to save context: bash {\"command\":\"echo 6\"} returned 8 bytes")
    );
    assert_eq!(
        &results[6..],
        &["output 7", "output 8", "output 9", "output 10", "output 11"]
    );
    // Counting the masked prompt counts the stubs, not the originals.
    let tokens = context.prompt_tokens();
    let counter = context.counter();
    assert_eq!(tokens, prompt.iter().map(|m| counter.message(m)).sum::<u64>());
}

#[test]
fn summarized_messages_are_let_go_of_once_logged_and_the_prompt_is_the_same() {
    let mut context = ContextState::new(TokenCounter::new(Encoding::Cl100kBase));
    context.push(Message::user("go"));
    for n in 1..=4 {
        step(&mut context, n, &format!("output {n} ").repeat(50));
    }
    context.apply_summary(summary(1, 5, 5));
    context.set_masked(3);
    let prompt = context.prompt();
    let tokens = context.prompt_tokens();
    // Nothing is let go of before the log took it.
    assert_eq!(context.release_summarized(), 0);
    let logged = context.take_changes();
    assert_eq!(context.release_summarized(), 4);
    assert!((1..5).all(|i| context.is_released(i)));
    assert!(!context.is_released(0) && !context.is_released(5));
    assert_eq!(context.release_summarized(), 0, "once is enough");
    // The texts are gone, the shape stays.
    assert_eq!(context.messages()[2].content.len(), 1);
    assert!(
        !serde_json::to_string(&context.messages()[1..5])
            .unwrap()
            .contains("output")
    );
    assert_eq!(
        context.messages()[1].tool_uses().next().map(|c| c.name),
        Some("bash")
    );
    // The prompt, its count and the log's changes are the same as before.
    assert_eq!(context.prompt(), prompt);
    assert_eq!(context.prompt_tokens(), tokens);
    assert!(context.take_changes().is_empty());
    assert!(
        logged
            .iter()
            .any(|change| matches!(change, Change::Messages { from: 0, messages } if messages.len() == 9))
    );
    // A summary over the end keeps the last message, which may still change; so do
    // messages the log has not taken yet.
    step(&mut context, 5, "output 5");
    context.apply_summary(summary(1, 11, 5));
    // 5..9 are in the log; 9 and 10 are not yet.
    assert_eq!(context.release_summarized(), 4);
    assert!(!context.is_released(9));
    context.take_changes();
    assert_eq!(context.release_summarized(), 1);
    assert!(context.is_released(9) && !context.is_released(10));
}

#[test]
fn only_what_the_prompt_summarizes_is_let_go_of() {
    // A damaged log's summary that straddles another is not used by the prompt, so
    // the messages past the first one stay.
    let mut context = ContextState::new(TokenCounter::estimate_only());
    context.push(Message::user("go"));
    for n in 1..=5 {
        step(&mut context, n, "out");
    }
    context.apply_summary(summary(1, 5, 1));
    context.apply_summary(summary(3, 9, 1));
    context.take_changes();
    let prompt = context.prompt();
    assert_eq!(context.release_summarized(), 4);
    assert!((1..5).all(|i| context.is_released(i)));
    assert!((5..11).all(|i| !context.is_released(i)));
    assert_eq!(context.prompt(), prompt);
}

#[test]
fn garbage_summaries_from_a_damaged_log_do_not_panic() {
    // Found by tests/fuzz: a log's summary ranges and token counts are not to be
    // trusted (backwards, past the end, overlapping, u64::MAX tokens).
    let mut context = ContextState::new(TokenCounter::estimate_only());
    context.push(Message::user("go"));
    for n in 1..=3 {
        step(&mut context, n, "out");
    }
    context.apply_summary(summary(1, 5, 10));
    context.apply_summary(summary(2, 3, 10));
    context.apply_summary(summary(5, 2, u64::MAX));
    context.apply_summary(summary(6, usize::MAX, 1));
    context.set_masked(usize::MAX);
    assert_eq!(
        context.view_items(),
        vec![
            ViewItem::Message(0),
            ViewItem::Summary(0),
            ViewItem::Summary(2),
            ViewItem::Summary(3),
        ]
    );
    assert_eq!(context.prompt().len(), 4);
    assert_eq!(context.prompt_tokens(), u64::MAX);
    assert_eq!(context.range_tokens(0, usize::MAX), u64::MAX);
}

#[test]
fn summaries_replace_ranges_and_absorb_older_ones() {
    let mut context = ContextState::new(TokenCounter::new(Encoding::Cl100kBase));
    context.push(Message::user("go"));
    for n in 1..=4 {
        step(&mut context, n, &"x ".repeat(500));
    }
    let before = context.range_tokens(1, 5);
    let first = Summary {
        start: 1,
        end: 5,
        text: "did 1 and 2".into(),
        tokens_before: before,
        tokens: 10,
        fallback: false,
        nested: vec![],
    };
    context.apply_summary(first.clone());
    assert_eq!(
        context.view_items(),
        vec![
            ViewItem::Message(0),
            ViewItem::Summary(0),
            ViewItem::Message(5),
            ViewItem::Message(6),
            ViewItem::Message(7),
            ViewItem::Message(8)
        ]
    );
    assert_eq!(
        context.range_tokens(1, 7),
        10 + context.message_tokens(5) + context.message_tokens(6)
    );
    context.apply_summary(Summary {
        start: 1,
        end: 7,
        text: "did 1 to 3".into(),
        tokens_before: 0,
        tokens: 12,
        fallback: false,
        nested: vec![],
    });
    assert_eq!(context.summaries().len(), 1);
    assert_eq!(context.summaries()[0].nested, vec![first]);
    assert_eq!(
        context.prompt()[1].text(),
        format!("{SUMMARY_MARK}\n\ndid 1 to 3")
    );
    assert_eq!(context.messages().len(), 9, "nothing is deleted");
}

#[test]
fn results_appended_one_by_one_are_journaled_as_blocks_and_replay_to_the_same_history() {
    let result = |n: usize| ContentBlock::ToolResult {
        tool_use_id: format!("t{n}"),
        content: format!("out {n}"),
        is_error: false,
    };
    let mut context = ContextState::new(TokenCounter::new(Encoding::Cl100kBase));
    let mut replayed = ContextState::new(TokenCounter::new(Encoding::Cl100kBase));
    context.push(Message::user("go"));
    context.push(Message {
        role: Role::Tool,
        content: vec![],
    });
    context.append_to_last(result(0));
    // New messages and a first result: one `messages` change covers them.
    let first = context.take_changes();
    assert!(matches!(first.as_slice(), [Change::Messages { from: 0, messages }] if messages.len() == 2));
    let mut all = first;
    // Each later result alone.
    for n in 1..4 {
        context.append_to_last(result(n));
        let changes = context.take_changes();
        assert!(
            matches!(changes.as_slice(), [Change::Blocks { message: 1, from, blocks }] if *from == n && blocks.len() == 1),
            "{changes:?}"
        );
        all.extend(changes);
    }
    // Two results, then a new message: the blocks, then the message.
    context.append_to_last(result(4));
    context.append_to_last(result(5));
    context.push(Message::assistant_text("done"));
    let changes = context.take_changes();
    assert!(
        matches!(changes.as_slice(), [Change::Blocks { from: 4, blocks, .. }, Change::Messages { from: 2, .. }] if blocks.len() == 2),
        "{changes:?}"
    );
    all.extend(changes);
    for change in all {
        replayed.apply(change);
    }
    assert_eq!(replayed.messages(), context.messages());
}

#[test]
fn a_trimmed_result_shows_its_ends_counts_as_shown_and_rebuilds_from_the_changes() {
    let mut context = ContextState::new(TokenCounter::new(Encoding::Cl100kBase));
    context.push(Message::user("go"));
    let big: String = (1..=2000).map(|n| format!("row {n} of the table\n")).collect();
    step(&mut context, 1, &big);
    step(&mut context, 2, "small");
    let whole = context.prompt_tokens();
    let oversized = context.oversized_results(1000);
    assert_eq!(oversized.len(), 1);
    assert_eq!((oversized[0].0.as_str(), oversized[0].1), ("t1", 2));
    context.trim_result("t1");
    let prompt = context.prompt();
    let ContentBlock::ToolResult { content, .. } = &prompt[2].content[0] else {
        panic!("a tool result")
    };
    assert!(
        content.starts_with("[result trimmed to save context: bash {\"command\":\"echo 1\"} returned"),
        "{content}"
    );
    assert!(content.contains("row 1 of the table") && content.contains("row 2000 of the table"));
    assert!(!content.contains("row 1000 of the table"));
    // Counted as shown; the history keeps the whole result.
    let counter = context.counter();
    let tokens = context.prompt_tokens();
    assert_eq!(tokens, prompt.iter().map(|m| counter.message(m)).sum::<u64>());
    assert!(tokens * 5 < whole, "{tokens} of {whole}");
    assert!(context.oversized_results(1000).is_empty());
    // The session log's changes rebuild the same prompt.
    let mut rebuilt = ContextState::new(counter);
    for change in context.take_changes() {
        rebuilt.apply(change);
    }
    assert_eq!(rebuilt.prompt(), prompt);
    assert_eq!(rebuilt.prompt_tokens(), tokens);
}

/// The trimmed form as first written (every character walked), kept as the reference the
/// ends-only version must match.
fn trimmed_by_walking(name: &str, input: &serde_json::Value, content: &str) -> String {
    let mut arguments = input.to_string();
    if arguments.chars().count() > 120 {
        arguments = arguments.chars().take(119).collect::<String>() + "…";
    }
    let lines = content.lines().count();
    let head: String = content.chars().take(800).collect();
    let head = match head.rfind('\n') {
        Some(end) if end > 400 => head[..end].to_string(),
        _ => head,
    };
    let total = content.chars().count();
    let tail: String = content
        .chars()
        .skip(total.saturating_sub(400).max(head.chars().count()))
        .collect();
    let tail = match tail.find('\n') {
        Some(start) if start < 200 && start + 1 < tail.len() => tail[start + 1..].to_string(),
        _ => tail,
    };
    let cut = content.len().saturating_sub(head.len() + tail.len());
    format!(
        "[result trimmed to save context: {name} {arguments} returned {} bytes in {lines} lines; its first and last lines follow; run it again, or read just the part you need, for the rest]\n{head}\n[… {cut} bytes cut …]\n{tail}",
        content.len()
    )
}

#[test]
fn trimming_reads_only_the_ends_and_says_the_same() {
    let input = serde_json::json!({"command": "seq 1 20000"});
    let mut cases: Vec<String> = vec![
        String::new(),
        "x".into(),
        "\n".into(),
        "a\nb\n".into(),
        (1..20000).map(|n| format!("{n}\n")).collect(),
        (1..20000).map(|n| format!("{n}\n")).collect::<String>() + "no newline at the end",
        "é".repeat(3000),
        "日本語の行\n".repeat(400),
        "😀 emoji line\r\n".repeat(200),
    ];
    for len in [0, 1, 399, 400, 401, 799, 800, 801, 1199, 1200, 1201, 5000] {
        cases.push("ab\nc".chars().cycle().take(len).collect());
        cases.push("ü".repeat(len));
    }
    for content in &cases {
        assert_eq!(
            trimmed("bash", &input, content),
            trimmed_by_walking("bash", &input, content),
            "for {} bytes",
            content.len()
        );
    }
}
