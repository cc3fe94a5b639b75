//! How big the context is. Until exact counting lands, a size estimate of about four
//! bytes of text per token, plus a few tokens of framing per message.

use super::history::{ContentBlock, Message};
use crate::llm::ToolSpec;

/// Framing tokens each message costs on the wire.
const PER_MESSAGE_TOKENS: u64 = 4;

/// Estimated tokens of a text.
pub fn estimate_text(text: &str) -> u64 {
    (text.len() as u64).div_ceil(4)
}

/// Estimated tokens of one message.
pub fn estimate_message(message: &Message) -> u64 {
    let blocks: u64 = message
        .content
        .iter()
        .map(|block| match block {
            ContentBlock::Text { text } => estimate_text(text),
            ContentBlock::Thinking { thinking, .. } => estimate_text(thinking),
            ContentBlock::RedactedThinking { data } => estimate_text(data),
            ContentBlock::ToolUse { name, input, .. } => {
                estimate_text(name) + estimate_text(&input.to_string())
            }
            ContentBlock::ToolResult { content, .. } => estimate_text(content),
        })
        .sum();
    blocks + PER_MESSAGE_TOKENS
}

/// Estimated tokens of a whole request.
pub fn estimate_request(system: &str, messages: &[Message], tools: &[ToolSpec]) -> u64 {
    let tools: u64 = tools
        .iter()
        .map(|tool| {
            estimate_text(&tool.name)
                + estimate_text(&tool.description)
                + estimate_text(&tool.input_schema.to_string())
        })
        .sum();
    estimate_text(system) + tools + messages.iter().map(estimate_message).sum::<u64>()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn estimates_grow_with_content() {
        let small = estimate_request("sys", &[Message::user("hi")], &[]);
        let large = estimate_request("sys", &[Message::user("hi".repeat(400))], &[]);
        assert_eq!(small, 1 + 1 + PER_MESSAGE_TOKENS);
        assert_eq!(large, 1 + 200 + PER_MESSAGE_TOKENS);
    }
}
