//! Target 2: session logs: load, restore, build the prompt. A valid log round-trips to
//! the same context and prompt; a damaged one loads what it can, writes back and loads
//! the same, and restoring, building the prompt, counting it, letting go of summarized
//! messages (the prompt stays the same) and closing open calls never panic.

use fastrand::Rng;
use miniagent_core::agent::context::{ContextState, Summary, ViewItem};
use miniagent_core::agent::history::{ContentBlock, Message, Role};
use miniagent_core::session::load::parse as parse_log;
use miniagent_core::session::{FORMAT, Header, Record};
use miniagent_core::tokens::TokenCounter;
use miniagent_protocol::Event;
use pretty_assertions::assert_eq;
use serde_json::json;

use super::fuzz;
use super::mutate::{Mutator, random_text};

fn header() -> Header {
    Header {
        id: "20261122-040438-abcd".into(),
        created: "2026-11-22T04:04:38Z".into(),
        workspace: "/tmp/w".into(),
        model: "m".into(),
        provider: "anthropic".into(),
        version: "0.1.0".into(),
        format: FORMAT,
        fixed_tokens: 100,
    }
}

/// A log's bytes: the header line, then one line per record.
fn log_bytes(header: &Header, records: &[Record]) -> Vec<u8> {
    let mut text = String::new();
    for record in std::iter::once(&Record::Header(header.clone())).chain(records) {
        text.push_str(&serde_json::to_string(record).unwrap_or_else(|err| panic!("{err}")));
        text.push('\n');
    }
    text.into_bytes()
}

fn random_message(rng: &mut Rng) -> Message {
    match rng.u8(..3) {
        0 => Message::user(random_text(rng)),
        1 => Message::assistant_text(random_text(rng)),
        _ => Message {
            role: Role::Assistant,
            content: vec![
                ContentBlock::Thinking {
                    thinking: random_text(rng),
                    signature: rng.bool().then(|| "sig".to_string()),
                    reasoning_details: None,
                },
                ContentBlock::Text {
                    text: random_text(rng),
                },
            ],
        },
    }
}

/// A session built by random operations on a context, and the records its log holds
/// (changes taken from time to time, as the agent's log takes them after each step).
fn random_session(rng: &mut Rng) -> (ContextState, Vec<Record>) {
    let mut context = ContextState::new(TokenCounter::estimate_only());
    let mut records = Vec::new();
    let mut ts = 1_795_320_278_000;
    let mut calls = 0;
    for _ in 0..rng.usize(1..40) {
        match rng.u8(..12) {
            0..=2 => context.push(random_message(rng)),
            3 | 4 => {
                calls += 1;
                let id = format!("toolu_{calls}");
                context.push(Message {
                    role: Role::Assistant,
                    content: vec![ContentBlock::ToolUse {
                        id: id.clone(),
                        name: "bash".into(),
                        input: json!({"command": random_text(rng)}),
                    }],
                });
                if rng.u8(..4) != 0 {
                    context.push(Message {
                        role: Role::Tool,
                        content: vec![ContentBlock::ToolResult {
                            tool_use_id: id,
                            content: random_text(rng),
                            is_error: rng.bool(),
                        }],
                    });
                }
            }
            5 => {
                let len = context.messages().len();
                if len >= 2 {
                    let start = rng.usize(..len - 1);
                    let end = rng.usize(start + 1..=len);
                    let tokens_before = context.range_tokens(start, end);
                    context.apply_summary(Summary {
                        start,
                        end,
                        text: random_text(rng),
                        tokens_before,
                        tokens: rng.u64(..500),
                        fallback: rng.bool(),
                        nested: Vec::new(),
                    });
                }
            }
            6 => {
                context.advance_masking(rng.usize(..4));
            }
            7 => {
                context.mask_all_but(rng.usize(..4));
            }
            8 if rng.u8(..4) == 0 => context.clear(),
            9 => context.close_open_tool_calls("interrupted by the user"),
            10 => {
                records.push(Record::Event {
                    ts,
                    event: Event::TurnStarted {
                        text: random_text(rng),
                    },
                });
                ts += 1;
            }
            _ => {
                for change in context.take_changes() {
                    records.push(Record::from_change(ts, change));
                    ts += 1;
                }
            }
        }
    }
    for change in context.take_changes() {
        records.push(Record::from_change(ts, change));
        ts += 1;
    }
    (context, records)
}

#[test]
fn session_logs_round_trip() {
    fuzz("session_logs_round_trip", 1000, |rng, input| {
        let (mut original, records) = random_session(rng);
        *input = log_bytes(&header(), &records);
        let loaded = parse_log(input, "fuzz.jsonl").unwrap_or_else(|err| panic!("{err}"));
        assert_eq!(loaded.warnings, Vec::<String>::new());
        assert_eq!(loaded.records, records);
        assert_eq!(loaded.valid_bytes, loaded.file_bytes);
        let mut restored = loaded.restore(TokenCounter::estimate_only());
        let context = &mut restored.context;
        assert_eq!(context.messages(), original.messages());
        assert_eq!(context.summaries(), original.summaries());
        assert_eq!(context.masked_results(), original.masked_results());
        assert_eq!(context.prompt(), original.prompt());
        assert_eq!(context.prompt_tokens(), original.prompt_tokens());
        assert_eq!(
            context.take_changes(),
            Vec::new(),
            "restoring leaves nothing to log"
        );
    });
}

/// Everything a front end or the agent does with a restored context; none of it may
/// panic, whatever indices the log held.
fn exercise(context: &mut ContextState) {
    let items = context.view_items();
    let prompt = context.prompt();
    assert_eq!(prompt.len(), items.len());
    let mut last_message = None;
    for item in &items {
        match *item {
            ViewItem::Message(index) => {
                assert!(index < context.messages().len(), "{item:?}");
                assert!(last_message < Some(index), "messages out of order: {items:?}");
                last_message = Some(index);
            }
            ViewItem::Summary(index) => assert!(index < context.summaries().len(), "{item:?}"),
        }
    }
    // Letting go of what summaries stand in for changes neither the prompt nor its count,
    // whatever the summaries' ranges.
    let tokens = context.prompt_tokens();
    context.take_changes();
    context.release_summarized();
    assert_eq!(context.prompt(), prompt, "releasing changed the prompt");
    assert_eq!(context.prompt_tokens(), tokens, "releasing changed the count");
    context.range_tokens(0, usize::MAX);
    context.range_tokens(usize::MAX, 0);
    context.result_count();
    context.advance_masking(2);
    context.prompt_tokens();
    context.close_open_tool_calls("ended");
    context.prompt();
}

const SESSION_TOKENS: &[&[u8]] = &[
    b"{\"kind\":\"summary\",\"ts\":1,\"summary\":{\"start\":5,\"end\":2,\"text\":\"s\",\"tokens_before\":1,\"tokens\":18446744073709551615,\"fallback\":false}}\n",
    b"{\"kind\":\"summary\",\"ts\":1,\"summary\":{\"start\":0,\"end\":18446744073709551615,\"text\":\"s\",\"tokens_before\":1,\"tokens\":3,\"fallback\":true}}\n",
    b"{\"kind\":\"messages\",\"ts\":1,\"from\":18446744073709551615,\"messages\":[]}\n",
    b"{\"kind\":\"messages\",\"ts\":1,\"from\":0,\"messages\":[{\"role\":\"tool\",\"content\":[]}]}\n",
    b"{\"kind\":\"masked\",\"ts\":1,\"results\":18446744073709551615}\n",
    b"{\"kind\":\"cleared\",\"ts\":1}\n",
    b"{\"kind\":\"event\",\"ts\":1,\"event\":{\"type\":\"history_cleared\"}}\n",
    b"{\"kind\":\"event\",\"ts\":1,\"event\":{\"type\":\"turn_started\",\"text\":\"x\"}}\n",
    b"{\"kind\":\"header\",\"id\":\"x\",\"created\":\"\",\"workspace\":\"\",\"model\":\"\",\"provider\":\"\",\"version\":\"\",\"format\":1}\n",
];

#[test]
fn session_logs_load_restore_and_prompt_without_panicking() {
    let mut seeds = vec![include_bytes!("../../assets/demo.jsonl").to_vec()];
    let mut rng = Rng::with_seed(1);
    while seeds.len() < 8 {
        let (_, records) = random_session(&mut rng);
        if records.len() > 3 {
            seeds.push(log_bytes(&header(), &records));
        }
    }
    let mutator = Mutator {
        seeds: &seeds,
        dictionary: SESSION_TOKENS,
        json_eighths: 6,
    };
    fuzz(
        "session_logs_load_restore_and_prompt_without_panicking",
        1500,
        |rng, input| {
            *input = mutator.mutated(rng);
            let loaded = match parse_log(input, "fuzz.jsonl") {
                Ok(loaded) => loaded,
                Err(message) => {
                    assert!(
                        message.to_string().contains("fuzz.jsonl"),
                        "the error names the file: {message}"
                    );
                    return;
                }
            };
            assert!(loaded.valid_bytes <= loaded.file_bytes);
            assert_eq!(loaded.file_bytes, input.len() as u64);
            // What loaded writes back the same, and loads the same.
            let again = parse_log(&log_bytes(&loaded.header, &loaded.records), "again.jsonl")
                .unwrap_or_else(|err| panic!("{err}"));
            assert_eq!(again.records, loaded.records);
            assert_eq!(again.warnings, Vec::<String>::new());
            loaded.closing_events();
            let mut restored = loaded.restore(TokenCounter::estimate_only());
            exercise(&mut restored.context);
            // Not the header's `fixed_tokens`: added to a saturated prompt count, it
            // overflows in `agent::inspect::snapshot_of`, which this suite does not own.
            restored.snapshot(0);
            restored.close_open_calls();
            restored.context.prompt();
            // Resuming mends the history or says why it cannot; either way, no panic,
            // and what it accepts passes its own check.
            let mut resumed = loaded.restore(TokenCounter::estimate_only());
            if resumed.make_sendable(&loaded.closing_events()).is_ok() {
                let prompt = resumed.context.prompt();
                assert_eq!(miniagent_core::agent::history::check_prompt(&prompt), Ok(()));
            }
        },
    );
}
