//! One summary call: the request (the steps as the summarizer reads them, no tools, not
//! cached), and what replaces the range, the model's summary or, when it cannot write
//! one, a digest never longer than what it replaces.

use super::digest::{digest, fallback_digest};
use super::{
    BudgetFailure, Compacted, budget, budget_share, fixed_tokens, prompt_size, summary_output_tokens,
};
use crate::agent::context::{SUMMARY_MARK, Summary, is_persons};
use crate::agent::history::{ContentBlock, Message};
use crate::agent::model_call::{CallFailure, Deltas, Reckoning, call_model};
use crate::agent::{Session, TurnContext};
use crate::llm::{ModelRequest, PromptCache};
use miniagent_protocol::{CompactionOutcome, Event, messages_named};

fn summarizer_prompt(words: u64) -> String {
    format!(
        "You condense part of a coding agent's working history so the agent can continue within its context budget. \
Write a concise account, at most {words} words, in English: what was attempted, which tools were called with which key arguments, \
what the results showed (keep exact file paths, names, numbers and error messages that matter), decisions taken, and what was left open. \
Where the history holds the person's own messages, keep what they asked for and every constraint they set, in their words where short. \
Invent nothing. Do not address the user; write for the agent that will read this in place of the original messages."
    )
}

/// Replaces `start..end` with a summary (or, when the model cannot write one, a digest
/// that is never longer than what it replaces). Every call announced with
/// `CompactionStarted` ends with `ContextCompacted` or `CompactionEnded`.
pub(super) async fn summarize(
    session: &mut Session,
    context: &TurnContext,
    start: usize,
    end: usize,
    target: u64,
    done: &mut Compacted,
) -> Result<(), BudgetFailure> {
    pre_compact(context, done).await?;
    let counter = session.context.counter();
    // What the range takes in the prompt now, and what it stands for.
    let shown_before = session.context.range_tokens(start, end);
    let tokens_before = session.context.original_tokens(start, end);
    let range = messages_named(start as u64, end as u64);
    context.events.emit(Event::CompactionStarted {
        reason: format!("summarizing {range} (about {shown_before} tokens in the prompt)"),
    });
    let budget = budget(context);
    let output_tokens = summary_output_tokens(budget);
    let digest = digest(session, start, end, budget / 2);
    let written = written_summary(context, &digest, &range, output_tokens).await?;
    let summary_tokens = |text: &str| counter.message(&Message::user(format!("{SUMMARY_MARK}\n\n{text}")));
    let (text, fallback) = match written {
        Some(text) if summary_tokens(&text) < shown_before => (text, false),
        _ => (
            fallback_digest(session, start, end, (shown_before / 2).min(target.max(200))),
            true,
        ),
    };
    // The person's words in the range stay as they were written, the latest first, as far
    // as the cap allows, the summary stays shorter than the range, and the prompt can fit
    // the budget with them: they give way to the person's latest message, which must be
    // sent.
    let written_tokens = summary_tokens(&text);
    let cap = budget_share(output_tokens)
        .min(room_beside_latest(session, context).saturating_sub(written_tokens))
        .min(shown_before.saturating_sub(written_tokens + 1));
    let text = text + &verbatim_block(session, start, end, cap).unwrap_or_default();
    let tokens = summary_tokens(&text);
    if tokens >= shown_before {
        // Nothing smaller could be written: leave the range as it is.
        context.events.emit(Event::CompactionEnded {
            outcome: CompactionOutcome::Failed,
            reason: format!(
                "nothing shorter than {range} (about {shown_before} tokens) could be written; {}",
                if end - start > 1 {
                    "they stay as they are"
                } else {
                    "it stays as it is"
                }
            ),
        });
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
    done.summaries += 1;
    let prompt_before = done.prompt_from;
    let prompt_after = prompt_size(session, context);
    done.prompt_from = prompt_after;
    session.compaction_log.push(miniagent_protocol::CompactionRecord {
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

/// Runs the `PreCompact` hooks, once per compaction (`done.hooked`).
async fn pre_compact(context: &TurnContext, done: &mut Compacted) -> Result<(), BudgetFailure> {
    if !done.hooked {
        done.hooked = true;
        let trigger = if done.manual { "manual" } else { "auto" };
        let fields = serde_json::json!({"trigger": trigger, "custom_instructions": ""});
        let fired = crate::agent::hooks::fire(
            context,
            crate::hooks::HookEvent::PreCompact,
            Some(trigger),
            fields,
        )
        .await;
        if fired.cancelled {
            return Err(BudgetFailure::Cancelled);
        }
    }
    Ok(())
}

/// The summary the model writes of `digest` (the steps `range` names), at most
/// `output_tokens` long; `None` when the call failed or kept repeating itself (a notice
/// says so), an error when the person interrupted it.
async fn written_summary(
    context: &TurnContext,
    digest: &str,
    range: &str,
    output_tokens: u64,
) -> Result<Option<String>, BudgetFailure> {
    let request_messages = vec![Message::user(format!(
        "Summarize these steps of the agent's work ({range} of the history):\n\n{digest}"
    ))];
    let system = summarizer_prompt(output_tokens * 3 / 5);
    // No tools: a summary request must not call any, and its history has no tool blocks.
    let request = ModelRequest {
        system: &system,
        messages: &request_messages,
        tools: &[],
        max_output_tokens: u32::try_from(output_tokens).unwrap_or(u32::MAX),
        // A summary's prompt is used once: writing it to the cache would cost more.
        cache: PromptCache::Off,
    };
    match call_model(context, &request, Deltas::Quiet, Reckoning::default()).await {
        Ok(response) => Ok(written_text(&response.content)),
        Err(CallFailure::Cancelled { .. }) => {
            context.events.emit(Event::CompactionEnded {
                outcome: CompactionOutcome::Cancelled,
                reason: format!("interrupted while summarizing {range}"),
            });
            Err(BudgetFailure::Cancelled)
        }
        Err(CallFailure::Failed(error)) => {
            context.events.emit(Event::Notice {
                message: format!("the summary call failed ({error}); a digest of the steps stands in for it"),
            });
            Ok(None)
        }
        Err(CallFailure::Repeating { .. }) => {
            context.events.emit(Event::Notice {
                message: "the summary kept repeating itself; a digest of the steps stands in for it"
                    .to_string(),
            });
            Ok(None)
        }
    }
}

/// The room the budget leaves beside what no compaction can take away: the system prompt
/// and tools, and the person's latest message (the steps after it can be summarized too).
fn room_beside_latest(session: &mut Session, context: &TurnContext) -> u64 {
    let latest = session
        .context
        .messages()
        .iter()
        .rposition(is_persons)
        .map_or(0, |index| session.context.message_tokens(index));
    budget(context)
        .saturating_sub(fixed_tokens(session, context))
        .saturating_sub(latest)
}

/// The person's messages in `start..end`, word for word, as a summary ends with them:
/// the latest that fit in `cap` tokens, in order, each a JSON string under its history
/// number (so nothing pasted into one reads as another); `None` when none fits.
fn verbatim_block(session: &Session, start: usize, end: usize, cap: u64) -> Option<String> {
    let counter = session.context.counter();
    let messages = session.context.messages();
    let theirs: Vec<(usize, String)> = messages
        .get(start..end.min(messages.len()))?
        .iter()
        .enumerate()
        .filter(|(_, message)| is_persons(message))
        .map(|(offset, message)| (start + offset, message.text()))
        .collect();
    let heading = "The person's messages in this part, word for word (JSON strings), oldest first:";
    let mut used = counter.count(heading);
    let mut kept = Vec::new();
    for (index, text) in theirs.iter().rev() {
        let line = format!(
            "\nmessage {}: {}",
            index + 1,
            serde_json::to_string(text).unwrap_or_default()
        );
        used = used.saturating_add(counter.count(&line));
        if used > cap {
            break;
        }
        kept.push(line);
    }
    if kept.is_empty() {
        return None;
    }
    let left_out = theirs.len() - kept.len();
    let mut block = format!("\n\n{heading}");
    if left_out > 0 {
        block.push_str(&format!(
            "\n({left_out} earlier message{} of theirs, summarized above)",
            if left_out == 1 { "" } else { "s" }
        ));
    }
    kept.reverse();
    block.extend(kept);
    Some(block)
}

/// Tokens the person's messages in `start..end` add to a summary of the range (0 when
/// they are too long to keep verbatim, and are summarized).
pub(super) fn verbatim_tokens(session: &Session, start: usize, end: usize, cap: u64) -> u64 {
    verbatim_block(session, start, end, cap).map_or(0, |block| session.context.counter().count(&block))
}

/// The text a summary call's reply wrote, if any.
fn written_text(content: &[ContentBlock]) -> Option<String> {
    let text: String = content
        .iter()
        .filter_map(|block| match block {
            ContentBlock::Text { text } => Some(text.as_str()),
            _ => None,
        })
        .collect();
    Some(text.trim().to_string()).filter(|text| !text.is_empty())
}
