//! The conversation as the agent keeps it: provider-neutral messages made of content
//! blocks. Each model client converts this to its wire format at the edge.

use serde::{Deserialize, Serialize};

/// Who a message is from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Role {
    User,
    Assistant,
    /// Results of the tool calls of the preceding assistant message.
    Tool,
}

/// One part of a message.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum ContentBlock {
    Text {
        text: String,
    },
    /// The model's reasoning. Anthropic signs it; OpenAI-compatible providers may send
    /// structured `reasoning_details`, kept verbatim so they can be replayed as received.
    Thinking {
        thinking: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        signature: Option<String>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        reasoning_details: Option<serde_json::Value>,
    },
    /// Anthropic's encrypted thinking, replayed untouched.
    RedactedThinking {
        data: String,
    },
    ToolUse {
        id: String,
        name: String,
        input: serde_json::Value,
    },
    ToolResult {
        tool_use_id: String,
        content: String,
        is_error: bool,
    },
}

/// One message of the history.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Message {
    pub role: Role,
    pub content: Vec<ContentBlock>,
}

impl Message {
    pub fn user(text: impl Into<String>) -> Self {
        Self {
            role: Role::User,
            content: vec![ContentBlock::Text { text: text.into() }],
        }
    }

    pub fn assistant_text(text: impl Into<String>) -> Self {
        Self {
            role: Role::Assistant,
            content: vec![ContentBlock::Text { text: text.into() }],
        }
    }

    /// The visible text of the message, blocks joined.
    pub fn text(&self) -> String {
        let mut out = String::new();
        for block in &self.content {
            if let ContentBlock::Text { text } = block {
                out.push_str(text);
            }
        }
        out
    }

    /// The thinking of the message, blocks joined with a blank line.
    pub fn thinking(&self) -> String {
        let parts: Vec<&str> = self
            .content
            .iter()
            .filter_map(|block| match block {
                ContentBlock::Thinking { thinking, .. } => Some(thinking.as_str()),
                _ => None,
            })
            .collect();
        parts.join("\n\n")
    }

    /// The tool calls the message asks for, in order.
    pub fn tool_uses(&self) -> impl Iterator<Item = ToolUse<'_>> {
        self.content.iter().filter_map(|block| match block {
            ContentBlock::ToolUse { id, name, input } => Some(ToolUse { id, name, input }),
            _ => None,
        })
    }
}

/// A borrowed view of one tool call in an assistant message.
#[derive(Clone, Copy, Debug)]
pub struct ToolUse<'a> {
    pub id: &'a str,
    pub name: &'a str,
    pub input: &'a serde_json::Value,
}

/// Makes the history valid for every provider after an interruption: each tool call of
/// the last assistant message gets a result. Calls that already have one keep it.
pub fn close_open_tool_calls(history: &mut Vec<Message>, reason: &str) {
    let Some(last_assistant) = history.iter().rposition(|m| m.role == Role::Assistant) else {
        return;
    };
    let answered: Vec<String> = history[last_assistant + 1..]
        .iter()
        .flat_map(|m| m.content.iter())
        .filter_map(|block| match block {
            ContentBlock::ToolResult { tool_use_id, .. } => Some(tool_use_id.clone()),
            _ => None,
        })
        .collect();
    let missing: Vec<ContentBlock> = history[last_assistant]
        .tool_uses()
        .filter(|call| !answered.iter().any(|id| id == call.id))
        .map(|call| ContentBlock::ToolResult {
            tool_use_id: call.id.to_string(),
            content: reason.to_string(),
            is_error: true,
        })
        .collect();
    if missing.is_empty() {
        return;
    }
    match history.last_mut() {
        Some(last) if last.role == Role::Tool => last.content.extend(missing),
        _ => history.push(Message {
            role: Role::Tool,
            content: missing,
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;
    use serde_json::json;

    fn call(id: &str) -> ContentBlock {
        ContentBlock::ToolUse {
            id: id.into(),
            name: "bash".into(),
            input: json!({}),
        }
    }

    fn result(id: &str, content: &str, is_error: bool) -> ContentBlock {
        ContentBlock::ToolResult {
            tool_use_id: id.into(),
            content: content.into(),
            is_error,
        }
    }

    #[test]
    fn open_calls_get_a_result_and_answered_ones_keep_theirs() {
        let mut history = vec![
            Message::user("go"),
            Message {
                role: Role::Assistant,
                content: vec![call("a"), call("b")],
            },
            Message {
                role: Role::Tool,
                content: vec![result("a", "done", false)],
            },
        ];
        close_open_tool_calls(&mut history, "interrupted by the user");
        assert_eq!(
            history[2].content,
            vec![
                result("a", "done", false),
                result("b", "interrupted by the user", true)
            ]
        );
        assert_eq!(history.len(), 3);
    }

    #[test]
    fn nothing_to_close_leaves_history_alone() {
        let mut history = vec![Message::user("hi"), Message::assistant_text("hello")];
        let before = history.clone();
        close_open_tool_calls(&mut history, "x");
        assert_eq!(history, before);
    }
}
