//! The steps a summary call is for, as text: what the summarizer reads (`digest`), and the
//! digest written without the model when it cannot summarize (`fallback_digest`).

use super::DIGEST_ITEM_CHARS;
use crate::agent::Session;
use crate::agent::context::ViewItem;
use crate::agent::history::{ContentBlock, Message, Role};

pub(super) fn clip(text: &str, chars: usize) -> String {
    if text.chars().count() <= chars {
        return text.to_string();
    }
    let head: String = text.chars().take(chars * 2 / 3).collect();
    let tail: String = text
        .chars()
        .rev()
        .take(chars / 3)
        .collect::<Vec<_>>()
        .into_iter()
        .rev()
        .collect();
    format!("{head}\n[… cut …]\n{tail}")
}

/// The steps of `start..end` as text for the summarizer, within `max_tokens`.
pub(super) fn digest(session: &Session, start: usize, end: usize, max_tokens: u64) -> String {
    let counter = session.context.counter();
    let mut item_chars = DIGEST_ITEM_CHARS;
    loop {
        let text = render_range(session, start, end, item_chars);
        if counter.count(&text) <= max_tokens || item_chars <= 200 {
            return text;
        }
        item_chars /= 2;
    }
}

fn render_range(session: &Session, start: usize, end: usize, item_chars: usize) -> String {
    let context = &session.context;
    let messages = context.messages();
    let mut out = String::new();
    for item in context.view_items() {
        match item {
            ViewItem::Summary(index) => {
                let summary = &context.summaries()[index];
                if summary.start >= start && summary.end <= end {
                    out.push_str(&format!(
                        "Summary of earlier steps:\n{}\n\n",
                        clip(&summary.text, item_chars * 2)
                    ));
                }
            }
            ViewItem::Message(index) if index >= start && index < end => {
                out.push_str(&render_message(&messages[index], item_chars));
            }
            ViewItem::Message(_) => {}
        }
    }
    out
}

fn render_message(message: &Message, item_chars: usize) -> String {
    let mut out = String::new();
    for block in &message.content {
        match block {
            ContentBlock::Text { text } if message.role == Role::Assistant => {
                out.push_str(&format!("Assistant: {}\n", clip(text, item_chars)));
            }
            ContentBlock::Text { text } => out.push_str(&format!("Note: {}\n", clip(text, item_chars))),
            ContentBlock::ToolUse { name, input, .. } => {
                out.push_str(&format!("Called {name} {}\n", clip(&input.to_string(), 400)));
            }
            ContentBlock::ToolResult {
                content, is_error, ..
            } => {
                let kind = if *is_error { "error" } else { "result" };
                out.push_str(&format!("Tool {kind}:\n{}\n", clip(content, item_chars)));
            }
            ContentBlock::Thinking { .. } | ContentBlock::RedactedThinking { .. } => {}
        }
    }
    out.push('\n');
    out
}

/// A digest written without the model: the calls made and the first line of each result,
/// cut to `max_tokens`.
pub(super) fn fallback_digest(session: &Session, start: usize, end: usize, max_tokens: u64) -> String {
    let counter = session.context.counter();
    let mut lines = vec!["(The model could not summarize these steps; this digest lists them.)".to_string()];
    let mut calls = 0;
    for item in session.context.view_items() {
        match item {
            ViewItem::Summary(index) => {
                let summary = &session.context.summaries()[index];
                if summary.start >= start && summary.end <= end {
                    lines.push(format!(
                        "Earlier: {}",
                        clip(summary.text.lines().next().unwrap_or(""), 200)
                    ));
                }
            }
            ViewItem::Message(index) if index >= start && index < end => {
                for block in &session.context.messages()[index].content {
                    match block {
                        ContentBlock::ToolUse { name, input, .. } => {
                            calls += 1;
                            lines.push(format!("- {name} {}", clip(&input.to_string(), 100)));
                        }
                        ContentBlock::ToolResult {
                            content, is_error, ..
                        } => {
                            let first = content.lines().find(|l| !l.trim().is_empty()).unwrap_or("");
                            let kind = if *is_error { "error" } else { "ok" };
                            lines.push(format!("  {kind}: {}", clip(first, 120)));
                        }
                        ContentBlock::Text { text } => {
                            lines.push(format!(
                                "- said: {}",
                                clip(text.lines().next().unwrap_or(""), 120)
                            ));
                        }
                        ContentBlock::Thinking { .. } | ContentBlock::RedactedThinking { .. } => {}
                    }
                }
            }
            ViewItem::Message(_) => {}
        }
    }
    lines.push(format!("({calls} tool calls in all.)"));
    let mut text = lines.join("\n");
    while counter.count(&text) > max_tokens && text.len() > 40 {
        let keep = text.len() * 3 / 4;
        let mut cut = keep;
        while !text.is_char_boundary(cut) {
            cut -= 1;
        }
        text.truncate(cut);
        text.push_str(" …");
    }
    text
}
