//! Target 1b: tool-call arguments assembled from partial JSON deltas. Split anywhere,
//! both providers assemble what parsing the whole text gives (an object, `{}` for
//! nothing, or a reported error).

use fastrand::Rng;
use miniagent_core::agent::history::ContentBlock;
use miniagent_core::llm::anthropic::AnthropicDecoder;
use miniagent_core::llm::openai::OpenAiDecoder;
use miniagent_core::llm::sse::SseDecoder;
use miniagent_core::llm::{ModelEvent, ModelResponse};
use pretty_assertions::assert_eq;
use serde_json::{Value, json};

use super::fuzz;
use super::mutate::Mutator;
use super::sse::{Provider, block_delta, block_start};

/// What the arguments must come out as: empty text is no arguments, a JSON object is
/// itself, anything else is refused.
fn expected_arguments(raw: &str) -> Option<Value> {
    if raw.trim().is_empty() {
        return Some(json!({}));
    }
    serde_json::from_str::<Value>(raw).ok().filter(Value::is_object)
}

/// `text` cut at random character boundaries into one to twelve pieces (or one per char).
fn split_text(rng: &mut Rng, text: &str) -> Vec<String> {
    let boundaries: Vec<usize> = text.char_indices().map(|(i, _)| i).skip(1).collect();
    let mut cuts: Vec<usize> = if rng.u8(..5) == 0 && boundaries.len() <= 2048 {
        boundaries
    } else {
        let count = rng.usize(..12).min(boundaries.len());
        (0..count)
            .map(|_| boundaries[rng.usize(..boundaries.len())])
            .collect()
    };
    cuts.sort_unstable();
    cuts.dedup();
    let mut pieces = Vec::new();
    let mut from = 0;
    for cut in cuts.into_iter().chain([text.len()]) {
        pieces.push(text[from..cut].to_string());
        from = cut;
    }
    pieces
}

fn single_response(out: &[ModelEvent]) -> &ModelResponse {
    match out {
        [ModelEvent::Completed(response)] => response,
        other => panic!("expected one completion, got {other:?}"),
    }
}

fn anthropic_tool_call(pieces: &[String]) -> ModelResponse {
    let mut decoder = AnthropicDecoder::default();
    let mut out = Vec::new();
    let mut events = vec![block_start(
        0,
        json!({"type": "tool_use", "id": "toolu_1", "name": "bash", "input": {}}),
    )];
    events.extend(
        pieces
            .iter()
            .map(|piece| block_delta(0, json!({"type": "input_json_delta", "partial_json": piece}))),
    );
    events.push(json!({"type": "message_delta", "delta": {"stop_reason": "tool_use"}}));
    events.push(json!({"type": "message_stop"}));
    for event in events {
        let name = event["type"].as_str().unwrap_or_default().to_string();
        decoder
            .on_event(&name, &event.to_string(), &mut out)
            .unwrap_or_else(|err| panic!("{name} refused: {err}"));
    }
    single_response(&out).clone()
}

fn openai_tool_call(pieces: &[String]) -> ModelResponse {
    let mut decoder = OpenAiDecoder::default();
    let mut out = Vec::new();
    for (i, piece) in pieces.iter().enumerate() {
        let call = if i == 0 {
            json!({"index": 0, "id": "toolu_1", "type": "function", "function": {"name": "bash", "arguments": piece}})
        } else {
            json!({"index": 0, "function": {"arguments": piece}})
        };
        let chunk = json!({"choices": [{"index": 0, "delta": {"tool_calls": [call]}}]});
        decoder
            .on_event("", &chunk.to_string(), &mut out)
            .unwrap_or_else(|err| panic!("chunk refused: {err}"));
    }
    let finish = json!({"choices": [{"index": 0, "delta": {}, "finish_reason": "tool_calls"}]});
    for data in [finish.to_string(), "[DONE]".to_string()] {
        decoder
            .on_event("", &data, &mut out)
            .unwrap_or_else(|err| panic!("{data} refused: {err}"));
    }
    single_response(&out).clone()
}

#[test]
fn tool_call_arguments_assemble_the_same_from_any_split() {
    let seeds: Vec<Vec<u8>> = [
        r#"{"command":"ls -la","timeout_s":30}"#,
        r#"{"path":"src/主.rs","old_str":"a\"b\\c\n","new_str":"😀\u0000é\ud83d\ude00"}"#,
        r#"{"nested":{"list":[1,2.5,-3e10,true,null,{"k":[]}]},"empty":""}"#,
        r#"  {"spaced" :  [ 1 , 2 ] }  "#,
        "",
        "   \n",
        "{}",
        "[1,2]",
        "\"just text\"",
        "{\"cut\": 1",
        "{\"a\":1}{\"b\":2}",
        "{\"n\":18446744073709551616,\"m\":-9223372036854775809}",
    ]
    .iter()
    .map(|seed| seed.as_bytes().to_vec())
    .collect();
    let mutator = Mutator {
        seeds: &seeds,
        dictionary: &[],
        json_eighths: 0,
    };
    fuzz(
        "tool_call_arguments_assemble_the_same_from_any_split",
        3000,
        |rng, input| {
            *input = mutator.mutated(rng);
            // Arguments reach the decoder as JSON strings, so they are text.
            let raw = String::from_utf8_lossy(input).into_owned();
            let pieces = split_text(rng, &raw);
            let expected = expected_arguments(&raw);
            for (provider, response) in [
                (Provider::Anthropic, anthropic_tool_call(&pieces)),
                (Provider::OpenAi, openai_tool_call(&pieces)),
            ] {
                let input_seen = match response.content.as_slice() {
                    [ContentBlock::ToolUse { id, name, input }] => {
                        assert_eq!((id.as_str(), name.as_str()), ("toolu_1", "bash"), "{provider:?}");
                        input.clone()
                    }
                    other => panic!("{provider:?}: expected one tool call, got {other:?}"),
                };
                match &expected {
                    Some(value) => {
                        assert_eq!(&input_seen, value, "{provider:?}");
                        assert_eq!(response.invalid_arguments, vec![], "{provider:?}");
                    }
                    None => {
                        assert_eq!(input_seen, json!({}), "{provider:?}");
                        assert_eq!(response.invalid_arguments.len(), 1, "{provider:?}");
                        assert_eq!(response.invalid_arguments[0].call_id, "toolu_1");
                        assert!(
                            response.invalid_arguments[0].error.starts_with("arguments "),
                            "{provider:?}: {:?}",
                            response.invalid_arguments
                        );
                    }
                }
            }
        },
    );
}
