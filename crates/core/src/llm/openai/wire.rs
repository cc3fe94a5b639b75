//! The history as Chat Completions messages, with the model's earlier reasoning in the
//! one field the server takes.

use serde_json::{Value, json};

use crate::llm::ReasoningField;
use miniagent_protocol::message::{ContentBlock, Message, Role};

/// Converts the history to Chat Completions messages (without the system message), with
/// earlier reasoning in the field `reasoning` names.
pub fn messages_to_wire(messages: &[Message], reasoning: ReasoningField) -> Vec<Value> {
    let mut wire = Vec::with_capacity(messages.len());
    for message in messages {
        match message.role {
            Role::User => wire.push(json!({"role": "user", "content": message.text()})),
            Role::Assistant => wire.push(assistant_to_wire(message, reasoning)),
            Role::Tool => {
                for block in &message.content {
                    if let ContentBlock::ToolResult {
                        tool_use_id,
                        content,
                        is_error,
                    } = block
                    {
                        // Chat Completions has no error flag; say it in the text.
                        let content = if *is_error && !content.starts_with("Error") {
                            format!("Error: {content}")
                        } else {
                            content.clone()
                        };
                        wire.push(json!({"role": "tool", "tool_call_id": tool_use_id, "content": content}));
                    }
                }
            }
        }
    }
    wire
}

pub(super) fn assistant_to_wire(message: &Message, reasoning: ReasoningField) -> Value {
    // Anthropic's thinking (signed, or redacted) from before a switch of model is not
    // this protocol's reasoning: no OpenAI-compatible server takes it back, and it would
    // hand one company's model another's reasoning. This protocol never signs its own.
    // Copied only when it holds some, which only a session that switched has.
    let signed = |block: &ContentBlock| {
        matches!(
            block,
            ContentBlock::Thinking {
                signature: Some(_),
                ..
            }
        )
    };
    let own;
    let message = if message.content.iter().any(signed) {
        own = Message {
            role: message.role,
            content: message
                .content
                .iter()
                .filter(|block| !signed(block))
                .cloned()
                .collect(),
        };
        &own
    } else {
        message
    };
    let text = message.text();
    let tool_calls: Vec<Value> = message
        .tool_uses()
        .map(|call| {
            json!({
                "id": call.id,
                "type": "function",
                "function": {"name": call.name, "arguments": call.input.to_string()},
            })
        })
        .collect();
    let mut out = json!({"role": "assistant"});
    out["content"] = if text.is_empty() && !tool_calls.is_empty() {
        Value::Null
    } else {
        Value::String(text)
    };
    let called_tools = !tool_calls.is_empty();
    if called_tools {
        out["tool_calls"] = Value::Array(tool_calls);
    }
    match reasoning {
        ReasoningField::Details => add_reasoning_details(message, &mut out),
        ReasoningField::Content => {
            let thinking = message.thinking();
            if called_tools || !thinking.is_empty() {
                out["reasoning_content"] = Value::String(thinking);
            }
        }
        ReasoningField::Auto | ReasoningField::Off => {}
    }
    out
}

/// `reasoning_details` as received, or made of the reasoning's text where it came as
/// `reasoning_content`.
fn add_reasoning_details(message: &Message, out: &mut Value) {
    let mut details = Vec::new();
    for block in &message.content {
        if let ContentBlock::Thinking {
            thinking,
            reasoning_details,
            ..
        } = block
        {
            match reasoning_details {
                Some(Value::Array(items)) => details.extend(items.iter().cloned()),
                _ if !thinking.is_empty() => {
                    details.push(json!({"type": "reasoning.text", "text": thinking}));
                }
                _ => {}
            }
        }
    }
    if !details.is_empty() {
        out["reasoning_details"] = Value::Array(details);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    /// After `/model` from Anthropic, its signed thinking is history this protocol
    /// cannot give back: neither reasoning field carries it, in any mode.
    #[test]
    fn anthropic_thinking_from_before_a_switch_is_not_sent() {
        let history = [Message {
            role: Role::Assistant,
            content: vec![
                ContentBlock::Thinking {
                    thinking: "signed thought".into(),
                    signature: Some("sig".into()),
                    reasoning_details: None,
                },
                ContentBlock::Text { text: "hello".into() },
            ],
        }];
        for field in [
            ReasoningField::Content,
            ReasoningField::Details,
            ReasoningField::Off,
        ] {
            assert_eq!(
                messages_to_wire(&history, field),
                vec![json!({"role": "assistant", "content": "hello"})],
                "{field:?}"
            );
        }
    }

    /// Reasoning goes back in the one field the server is known to take: MiniMax and
    /// OpenRouter `reasoning_details`, DeepSeek `reasoning_content` (on every reply that
    /// called tools, empty where there was none), any other server nothing.
    #[test]
    fn reasoning_goes_back_only_in_the_form_the_server_takes() {
        let thought = Message {
            role: Role::Assistant,
            content: vec![
                ContentBlock::Thinking {
                    thinking: "check first".into(),
                    signature: None,
                    reasoning_details: Some(
                        json!([{"type": "reasoning.text", "id": "r1", "text": "check first"}]),
                    ),
                },
                ContentBlock::ToolUse {
                    id: "c1".into(),
                    name: "bash".into(),
                    input: json!({}),
                },
            ],
        };
        let unthought = Message {
            role: Role::Assistant,
            content: vec![ContentBlock::ToolUse {
                id: "c2".into(),
                name: "bash".into(),
                input: json!({}),
            }],
        };
        let answer = Message {
            role: Role::Assistant,
            content: vec![ContentBlock::Text { text: "done".into() }],
        };
        let calls = |id: &str| json!([{"id": id, "type": "function", "function": {"name": "bash", "arguments": "{}"}}]);
        let history = [thought, unthought, answer];
        assert_eq!(
            messages_to_wire(&history, ReasoningField::Content),
            vec![
                json!({"role": "assistant", "content": null, "tool_calls": calls("c1"), "reasoning_content": "check first"}),
                json!({"role": "assistant", "content": null, "tool_calls": calls("c2"), "reasoning_content": ""}),
                json!({"role": "assistant", "content": "done"}),
            ]
        );
        assert_eq!(
            messages_to_wire(&history, ReasoningField::Details),
            vec![
                json!({"role": "assistant", "content": null, "tool_calls": calls("c1"), "reasoning_details": [{"type": "reasoning.text", "id": "r1", "text": "check first"}]}),
                json!({"role": "assistant", "content": null, "tool_calls": calls("c2")}),
                json!({"role": "assistant", "content": "done"}),
            ]
        );
        let bare = vec![
            json!({"role": "assistant", "content": null, "tool_calls": calls("c1")}),
            json!({"role": "assistant", "content": null, "tool_calls": calls("c2")}),
            json!({"role": "assistant", "content": "done"}),
        ];
        assert_eq!(messages_to_wire(&history, ReasoningField::Off), bare);
        // "auto" by host.
        let resolved = |url: &str| crate::llm::endpoint::reasoning_field_for(url);
        assert_eq!(resolved("https://api.minimax.io/v1"), ReasoningField::Details);
        assert_eq!(resolved("https://api.minimaxi.com/v1"), ReasoningField::Details);
        assert_eq!(resolved("https://openrouter.ai/api/v1"), ReasoningField::Details);
        assert_eq!(resolved("https://api.deepseek.com"), ReasoningField::Content);
        for generic in [
            "https://api.openai.com/v1",
            "https://api.groq.com/openai/v1",
            "http://127.0.0.1:11434/v1",
            "https://openrouter.ai.evil.example/v1",
        ] {
            assert_eq!(resolved(generic), ReasoningField::Off, "{generic}");
        }
    }

    #[test]
    fn tool_results_become_tool_messages() {
        let history = vec![Message {
            role: Role::Tool,
            content: vec![
                ContentBlock::ToolResult {
                    tool_use_id: "a".into(),
                    content: "ok".into(),
                    is_error: false,
                },
                ContentBlock::ToolResult {
                    tool_use_id: "b".into(),
                    content: "bad".into(),
                    is_error: true,
                },
            ],
        }];
        assert_eq!(
            messages_to_wire(&history, ReasoningField::Off),
            vec![
                json!({"role": "tool", "tool_call_id": "a", "content": "ok"}),
                json!({"role": "tool", "tool_call_id": "b", "content": "Error: bad"}),
            ]
        );
    }
}
