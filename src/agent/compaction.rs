//! Keeping the prompt within budget. Before every model call the prompt's size (plus the
//! output reserve and a margin) is checked against `agent.token_limit` and the model's
//! window; when over, old tool results are masked and/or runs of assistant and tool
//! messages are replaced by summaries, until it fits. User messages are never touched.

use serde::{Deserialize, Serialize};

use super::context::{SUMMARY_MARK, Summary, ViewItem};
use super::history::{ContentBlock, Message, Role};
use super::model_call::{CallFailure, Deltas, call_model};
use super::{Session, TurnContext};
use crate::llm::ModelRequest;
use crate::protocol::Event;

/// `agent.compaction`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Strategy {
    Summarize,
    MaskToolResults,
    Both,
    Off,
}

impl Strategy {
    fn summarizes(self) -> bool {
        matches!(self, Strategy::Summarize | Strategy::Both)
    }

    fn masks(self) -> bool {
        matches!(self, Strategy::MaskToolResults | Strategy::Both)
    }
}

/// Tokens kept free beyond the output reserve, for estimate error.
const MARGIN_TOKENS: u64 = 1000;
/// After compacting, aim this far below the budget so the next steps do not compact again.
const TARGET_PERCENT: u64 = 60;
/// Output budget of a summary call.
const SUMMARY_OUTPUT_TOKENS: u32 = 2048;
/// Characters of one tool result or message kept in a summary request, at most.
const DIGEST_ITEM_CHARS: usize = 4000;

const SUMMARIZER_PROMPT: &str = "You condense part of a coding agent's working history so the agent can continue within its context budget. \
Write a concise account, at most 800 words, in English: what was attempted, which tools were called with which key arguments, \
what the results showed (keep exact file paths, names, numbers and error messages that matter), decisions taken, and what was left open. \
Invent nothing. Do not address the user; write for the agent that will read this in place of the original messages.";

/// Why the prompt could not be made to fit.
#[derive(Debug)]
pub(crate) enum BudgetFailure {
    Cancelled,
    TooLarge(String),
}

/// The budget the prompt must fit: the smaller of the token limit and the window,
/// less the output reserve and a margin.
pub(crate) fn budget(context: &TurnContext) -> u64 {
    let config = &context.options.config;
    let limit = config.agent.token_limit.min(config.model.context_window);
    limit.saturating_sub(u64::from(config.model.max_output_tokens) + MARGIN_TOKENS)
}

/// Everything a request carries besides the messages (counted again only when the
/// tools change).
fn fixed_tokens(session: &mut Session, context: &TurnContext) -> u64 {
    let specs = context.options.tools.specs();
    let names: Vec<String> = specs.iter().map(|spec| spec.name.clone()).collect();
    if let Some((counted_for, tokens)) = &session.fixed_tokens
        && *counted_for == names
    {
        return *tokens;
    }
    let counter = session.context.counter();
    let tokens = counter.count(&context.options.system_prompt) + counter.tools(&specs);
    session.fixed_tokens = Some((names, tokens));
    tokens
}

/// The whole prompt's estimated size.
pub(crate) fn prompt_size(session: &mut Session, context: &TurnContext) -> u64 {
    fixed_tokens(session, context).saturating_add(session.context.prompt_tokens())
}

/// Makes the next prompt fit the budget (pre-flight). `force` compacts everything that
/// can be compacted even when it already fits (`/compact`).
pub(crate) async fn ensure_budget(
    session: &mut Session,
    context: &TurnContext,
    force: bool,
) -> Result<(), BudgetFailure> {
    let options = &context.options;
    let strategy = options.config.agent.compaction;
    let keep_results = options.config.agent.keep_tool_results;
    if strategy.masks() && session.context.advance_masking(keep_results) {
        report_masking(session, context);
    }
    let budget = budget(context);
    let mut size = prompt_size(session, context);
    if size <= budget && !force {
        return Ok(());
    }
    let target = budget * TARGET_PERCENT / 100;
    if strategy.summarizes() {
        // Keep the configured number of recent steps verbatim; give them up only when
        // nothing else is left to compact.
        let keep = options.config.agent.keep_recent_steps;
        for keep_recent in (0..=keep).rev() {
            for (start, end) in plan(session, keep_recent) {
                summarize(session, context, start, end).await?;
                size = prompt_size(session, context);
                if size <= target && !force {
                    return Ok(());
                }
            }
            if size <= budget {
                return Ok(());
            }
        }
    }
    if strategy.masks() || strategy.summarizes() {
        for keep in [keep_results, 1, 0] {
            if size <= budget {
                break;
            }
            if session.context.mask_all_but(keep) {
                report_masking(session, context);
                size = prompt_size(session, context);
            }
        }
    }
    if size <= budget {
        return Ok(());
    }
    Err(BudgetFailure::TooLarge(format!(
        "the prompt needs about {size} tokens but the budget is {budget} (agent.token_limit {}, window {}, output reserve {}){}",
        options.config.agent.token_limit,
        options.config.model.context_window,
        options.config.model.max_output_tokens,
        if strategy == Strategy::Off {
            "; compaction is off (agent.compaction)"
        } else {
            "; what is left cannot be compacted further"
        }
    )))
}

fn report_masking(session: &Session, context: &TurnContext) {
    context.events.emit(Event::Notice {
        message: format!(
            "{} older tool results are shown to the model as one-line stubs (the last {} stay whole)",
            session.context.masked_results(),
            session.context.result_count() - session.context.masked_results()
        ),
    });
}

/// Ranges worth summarizing, oldest first: each run of assistant and tool messages
/// between two user messages; in the last run, all but its last `keep_recent` steps.
pub(crate) fn plan(session: &Session, keep_recent: usize) -> Vec<(usize, usize)> {
    let messages = session.context.messages();
    let users: Vec<usize> = messages
        .iter()
        .enumerate()
        .filter(|(_, m)| m.role == Role::User)
        .map(|(i, _)| i)
        .collect();
    let mut ranges = Vec::new();
    for (n, user) in users.iter().enumerate() {
        let start = user + 1;
        let last = n + 1 == users.len();
        let mut end = users.get(n + 1).copied().unwrap_or(messages.len());
        if last && keep_recent > 0 {
            let assistants: Vec<usize> = (start..end)
                .filter(|i| messages[*i].role == Role::Assistant)
                .collect();
            if assistants.len() <= keep_recent {
                continue;
            }
            end = assistants[assistants.len() - keep_recent];
        }
        if start >= end {
            continue;
        }
        let summaries = session.context.summaries();
        let already = summaries.iter().any(|s| s.start == start && s.end == end);
        let straddles = summaries
            .iter()
            .any(|s| s.start < end && s.end > start && !(s.start >= start && s.end <= end));
        if !already && !straddles {
            ranges.push((start, end));
        }
    }
    ranges
}

/// Replaces `start..end` with a summary (or, when the model cannot write one, a digest
/// that is never longer than what it replaces).
async fn summarize(
    session: &mut Session,
    context: &TurnContext,
    start: usize,
    end: usize,
) -> Result<(), BudgetFailure> {
    let counter = session.context.counter();
    let prompt_before = prompt_size(session, context);
    let tokens_before = session.context.range_tokens(start, end);
    context.events.emit(Event::CompactionStarted {
        reason: format!(
            "summarizing messages {start}–{} (about {tokens_before} tokens)",
            end - 1
        ),
    });
    let digest = digest(session, start, end, budget(context) / 2);
    let request_messages = vec![Message::user(format!(
        "Summarize these steps of the agent's work (messages {start} to {} of the history):\n\n{digest}",
        end - 1
    ))];
    // No tools: a summary request must not call any, and its history has no tool blocks.
    let request = ModelRequest {
        system: SUMMARIZER_PROMPT,
        messages: &request_messages,
        tools: &[],
        max_output_tokens: SUMMARY_OUTPUT_TOKENS,
    };
    let written = match call_model(context, &request, Deltas::Quiet).await {
        Ok(response) => {
            let text: String = response
                .content
                .iter()
                .filter_map(|b| match b {
                    ContentBlock::Text { text } => Some(text.as_str()),
                    _ => None,
                })
                .collect();
            Some(text.trim().to_string()).filter(|t| !t.is_empty())
        }
        Err(CallFailure::Cancelled { .. }) => return Err(BudgetFailure::Cancelled),
        Err(CallFailure::Failed(error)) => {
            context.events.emit(Event::Notice {
                message: format!("the summary call failed ({error}); a digest of the steps stands in for it"),
            });
            None
        }
        Err(CallFailure::Repeating { .. }) => {
            context.events.emit(Event::Notice {
                message: "the summary kept repeating itself; a digest of the steps stands in for it"
                    .to_string(),
            });
            None
        }
    };
    let summary_tokens = |text: &str| counter.message(&Message::user(format!("{SUMMARY_MARK}\n\n{text}")));
    let (text, fallback) = match written {
        Some(text) if summary_tokens(&text) < tokens_before => (text, false),
        _ => (fallback_digest(session, start, end, tokens_before / 2), true),
    };
    let tokens = summary_tokens(&text);
    if tokens >= tokens_before {
        // Nothing smaller could be written: leave the range as it is.
        return Ok(());
    }
    session.context.apply_summary(Summary {
        start,
        end,
        text: text.clone(),
        tokens_before,
        tokens,
        fallback,
        nested: Vec::new(),
    });
    let prompt_after = prompt_size(session, context);
    session.compaction_log.push(crate::protocol::CompactionRecord {
        tokens_before: prompt_before,
        tokens_after: prompt_after,
        start: start as u64,
        end: end as u64,
        fallback,
    });
    context.events.emit(Event::ContextCompacted {
        tokens_before: prompt_before,
        tokens_after: prompt_after,
        summary: text,
        start: start as u64,
        end: end as u64,
        fallback,
    });
    Ok(())
}

fn clip(text: &str, chars: usize) -> String {
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
fn digest(session: &Session, start: usize, end: usize, max_tokens: u64) -> String {
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
fn fallback_digest(session: &Session, start: usize, end: usize, max_tokens: u64) -> String {
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
