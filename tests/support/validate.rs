//! Checks that a recorded request carries a history the provider would accept: roles in
//! order, every tool call answered by exactly one result, no result without its call,
//! tool call ids non-empty, of `[A-Za-z0-9_-]` and unique in the request.

use serde_json::Value;

/// Panics with the reason (and the messages) when an Anthropic request is not valid.
pub fn assert_valid_anthropic(body: &Value) {
    if let Err(problem) = check_anthropic(body) {
        panic!("invalid Anthropic request: {problem}\n{:#}", body["messages"]);
    }
}

/// Panics with the reason (and the messages) when an OpenAI request is not valid.
pub fn assert_valid_openai(body: &Value) {
    if let Err(problem) = check_openai(body) {
        panic!("invalid OpenAI request: {problem}\n{:#}", body["messages"]);
    }
}

/// Tool call ids: each non-empty, of the characters Anthropic allows, and unique.
fn check_ids<'a>(ids: impl Iterator<Item = &'a Value>) -> Result<(), String> {
    let mut seen = std::collections::HashSet::new();
    for id in ids {
        let id = id.as_str().unwrap_or("");
        if id.is_empty()
            || !id
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
        {
            return Err(format!("tool call id {id:?} is empty or malformed"));
        }
        if !seen.insert(id) {
            return Err(format!("tool call id {id:?} is used twice"));
        }
    }
    Ok(())
}

fn check_anthropic(body: &Value) -> Result<(), String> {
    let messages = body["messages"].as_array().ok_or("no messages array")?;
    check_ids(
        messages
            .iter()
            .filter_map(|m| m["content"].as_array())
            .flatten()
            .filter(|b| b["type"] == "tool_use")
            .map(|b| &b["id"]),
    )?;
    if messages.is_empty() {
        return Err("no messages".into());
    }
    let mut open_calls: Vec<String> = Vec::new();
    let mut expected_role = "user";
    for (index, message) in messages.iter().enumerate() {
        let role = message["role"]
            .as_str()
            .ok_or(format!("message {index} has no role"))?;
        if role != expected_role {
            return Err(format!(
                "message {index} is `{role}`, expected `{expected_role}` (roles must alternate, starting with user)"
            ));
        }
        let content = message["content"]
            .as_array()
            .ok_or(format!("message {index} content is not an array"))?;
        if content.is_empty() {
            return Err(format!("message {index} has empty content"));
        }
        let mut answered = Vec::new();
        for block in content {
            match block["type"].as_str() {
                Some("text") if block["text"].as_str().is_none_or(str::is_empty) => {
                    return Err(format!("message {index} has an empty text block"));
                }
                Some("tool_result") => {
                    if role != "user" {
                        return Err(format!("tool_result in {role} message {index}"));
                    }
                    answered.push(block["tool_use_id"].as_str().unwrap_or("").to_string());
                }
                Some("thinking") if block["signature"].as_str().is_none_or(str::is_empty) => {
                    return Err(format!("unsigned thinking block in message {index}"));
                }
                _ => {}
            }
        }
        if role == "user" {
            let mut expected = std::mem::take(&mut open_calls);
            expected.sort();
            answered.sort();
            if expected != answered {
                return Err(format!(
                    "message {index} answers tool calls {answered:?}, expected {expected:?}"
                ));
            }
            expected_role = "assistant";
        } else {
            open_calls = content
                .iter()
                .filter(|b| b["type"] == "tool_use")
                .map(|b| b["id"].as_str().unwrap_or("").to_string())
                .collect();
            expected_role = "user";
        }
    }
    if !open_calls.is_empty() {
        return Err(format!(
            "the request ends with unanswered tool calls {open_calls:?}"
        ));
    }
    if messages.last().map(|m| m["role"] != "user").unwrap_or(true) {
        return Err("the last message is not from the user".into());
    }
    Ok(())
}

fn check_openai(body: &Value) -> Result<(), String> {
    let messages = body["messages"].as_array().ok_or("no messages array")?;
    check_ids(
        messages
            .iter()
            .filter_map(|m| m["tool_calls"].as_array())
            .flatten()
            .map(|call| &call["id"]),
    )?;
    let mut open_calls: Vec<String> = Vec::new();
    for (index, message) in messages.iter().enumerate() {
        let role = message["role"]
            .as_str()
            .ok_or(format!("message {index} has no role"))?;
        match role {
            "system" if index != 0 => return Err(format!("system message at {index}")),
            "tool" => {
                let id = message["tool_call_id"].as_str().unwrap_or("");
                let Some(position) = open_calls.iter().position(|open| open == id) else {
                    return Err(format!("tool message {index} answers `{id}`, which is not open"));
                };
                open_calls.remove(position);
            }
            _ if !open_calls.is_empty() => {
                return Err(format!(
                    "message {index} ({role}) comes before tool calls {open_calls:?} were answered"
                ));
            }
            "assistant" => {
                if let Some(calls) = message["tool_calls"].as_array() {
                    for call in calls {
                        let arguments = call["function"]["arguments"]
                            .as_str()
                            .ok_or("tool call arguments are not a string")?;
                        serde_json::from_str::<Value>(arguments)
                            .map_err(|err| format!("tool call arguments are not JSON: {err}"))?;
                        open_calls.push(call["id"].as_str().unwrap_or("").to_string());
                    }
                }
            }
            _ => {}
        }
    }
    if !open_calls.is_empty() {
        return Err(format!(
            "the request ends with unanswered tool calls {open_calls:?}"
        ));
    }
    Ok(())
}

/// Why the Anthropic API would refuse this request's `cache_control` marks, if it would:
/// more than four breakpoints, a mark on a block that cannot carry one (thinking, empty
/// text) or on a message rather than a block, or a mark that is not
/// `{"type": "ephemeral"}` (with an optional `ttl` of `5m` or `1h`).
pub fn anthropic_cache_problem(body: &Value) -> Option<String> {
    let mut marks = 0;
    check_cache_marks(body, &mut marks).err()
}

fn check_mark(mark: &Value) -> Result<(), String> {
    let fields_ok = mark
        .as_object()
        .is_some_and(|object| object.keys().all(|key| key == "type" || key == "ttl"));
    let ttl_ok = matches!(mark.get("ttl").map(Value::as_str), None | Some(Some("5m" | "1h")));
    if mark["type"] == "ephemeral" && fields_ok && ttl_ok {
        Ok(())
    } else {
        Err(format!("cache_control {mark} is not a valid breakpoint"))
    }
}

fn check_marked_block(block: &Value, place: &str, marks: &mut usize) -> Result<(), String> {
    let Some(mark) = block.get("cache_control") else {
        return Ok(());
    };
    check_mark(mark)?;
    *marks += 1;
    match block["type"].as_str() {
        Some("thinking" | "redacted_thinking") => Err(format!(
            "{place}: thinking blocks cannot be marked with cache_control"
        )),
        Some("text") if block["text"].as_str().is_none_or(str::is_empty) => Err(format!(
            "{place}: an empty text block cannot be marked with cache_control"
        )),
        _ => Ok(()),
    }
}

fn check_cache_marks(body: &Value, marks: &mut usize) -> Result<(), String> {
    if let Some(mark) = body.get("cache_control") {
        // The automatic (top-level) form takes a breakpoint too.
        check_mark(mark)?;
        *marks += 1;
    }
    for tool in body["tools"].as_array().into_iter().flatten() {
        check_marked_block(tool, "tools", marks)?;
    }
    match &body["system"] {
        Value::Array(blocks) => {
            for block in blocks {
                check_marked_block(block, "system", marks)?;
            }
        }
        Value::String(_) | Value::Null => {}
        other => return Err(format!("system is neither text nor blocks: {other}")),
    }
    for (index, message) in body["messages"].as_array().into_iter().flatten().enumerate() {
        if message.get("cache_control").is_some() {
            return Err(format!(
                "messages.{index}: cache_control belongs on a content block, not on a message"
            ));
        }
        let place = format!("messages.{index}");
        for block in message["content"].as_array().into_iter().flatten() {
            check_marked_block(block, &place, marks)?;
            for inner in block["content"].as_array().into_iter().flatten() {
                check_marked_block(inner, &place, marks)?;
            }
        }
    }
    if *marks > 4 {
        return Err(format!(
            "A maximum of 4 blocks with cache_control may be provided. Found {marks}."
        ));
    }
    Ok(())
}

/// A request's system prompt as text, whether sent as a string or as blocks.
pub fn system_text(body: &Value) -> String {
    match &body["system"] {
        Value::String(text) => text.clone(),
        Value::Array(blocks) => blocks.iter().filter_map(|b| b["text"].as_str()).collect(),
        _ => String::new(),
    }
}

/// `value` with every `cache_control` mark removed: what was sent, wherever the
/// breakpoints were.
pub fn unmarked(value: &Value) -> Value {
    match value {
        Value::Object(object) => Value::Object(
            object
                .iter()
                .filter(|(key, _)| *key != "cache_control")
                .map(|(key, value)| (key.clone(), unmarked(value)))
                .collect(),
        ),
        Value::Array(items) => Value::Array(items.iter().map(unmarked).collect()),
        other => other.clone(),
    }
}
