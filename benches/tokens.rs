//! Token accounting: with a 1 MB history, adding one 1 KB message and reading the
//! prompt's total (cached per message) against recounting the whole history.
//! Budget: the incremental update at most 1 ms. Also counting 30 KB of command output
//! and of prose, against tiktoken's own regex-driven count.
#![allow(clippy::unwrap_used, clippy::expect_used)] // A test fails by panicking.

use std::time::Duration;

use criterion::{BatchSize, Criterion, criterion_group, criterion_main};
use miniagent_core::agent::context::ContextState;
use miniagent_core::agent::history::{ContentBlock, Message, Role};
use miniagent_core::tokens::{Encoding, TokenCounter};

/// About 1 KB of varied prose and code.
fn kilobyte(n: usize) -> String {
    let mut text = String::new();
    while text.len() < 1024 {
        text.push_str(&format!(
            "Step {n}: the parser reads `src/lib.rs` line {} and returns Ok(()) after {} tokens. ",
            text.len(),
            n * 7
        ));
    }
    text
}

fn history(counter: TokenCounter) -> ContextState {
    let mut context = ContextState::new(counter);
    let mut bytes = 0;
    let mut n = 0;
    while bytes < 1 << 20 {
        let text = kilobyte(n);
        bytes += text.len();
        let message = match n % 3 {
            0 => Message::user(text),
            1 => Message::assistant_text(text),
            _ => Message {
                role: Role::Tool,
                content: vec![ContentBlock::ToolResult {
                    tool_use_id: format!("t{n}"),
                    content: text,
                    is_error: false,
                }],
            },
        };
        context.push(message);
        n += 1;
    }
    context
}

fn bench_tokens(c: &mut Criterion) {
    let counter = TokenCounter::new(Encoding::Cl100kBase);
    let mut warm = history(counter);
    // Every message counted once, as in a running session.
    let _ = warm.prompt_tokens();
    let extra = Message::assistant_text(kilobyte(999_999));

    c.bench_function("add_1kb_message_and_total_1mb_history", |b| {
        b.iter_batched(
            || warm.clone(),
            |mut context| {
                context.push(extra.clone());
                context.prompt_tokens()
            },
            BatchSize::LargeInput,
        )
    });

    let messages: Vec<Message> = warm.messages().to_vec();
    c.bench_function("full_recount_1mb_history", |b| {
        b.iter(|| messages.iter().map(|m| counter.message(m)).sum::<u64>())
    });

    // What the e2e loop's results hold: the first and last 15 KB of `seq 1 20000`.
    let seq: String = (1..=20_000).map(|n| format!("{n}\n")).collect();
    let seq = format!("{}{}", &seq[..15_000], &seq[seq.len() - 15_000..]);
    assert_eq!(counter.count(&seq), counter.count_by_regex(&seq));
    c.bench_function("count_30kb_of_seq_output", |b| b.iter(|| counter.count(&seq)));
    c.bench_function("count_30kb_of_seq_output_by_regex", |b| {
        b.iter(|| counter.count_by_regex(&seq))
    });
    let prose = kilobyte(7).repeat(30);
    assert_eq!(counter.count(&prose), counter.count_by_regex(&prose));
    c.bench_function("count_30kb_of_prose", |b| b.iter(|| counter.count(&prose)));
    c.bench_function("count_30kb_of_prose_by_regex", |b| {
        b.iter(|| counter.count_by_regex(&prose))
    });
}

criterion_group! {
    name = benches;
    config = Criterion::default().sample_size(20).measurement_time(Duration::from_secs(5));
    targets = bench_tokens
}
criterion_main!(benches);
