//! One model call as the loop sees it: streamed, forwarded to the front end, retried on
//! transient failures, and abandoned at once on interrupt.

use std::time::Duration;

use futures_util::StreamExt;

use super::TurnContext;
use crate::llm::{LlmError, ModelEvent, ModelRequest, ModelResponse};
use crate::protocol::Event;
use crate::secrets::StreamRedactor;

/// Why a model call produced no response.
#[derive(Debug)]
pub(crate) enum CallFailure {
    /// The person interrupted; `partial_text` is what streamed of the reply so far.
    Cancelled { partial_text: String },
    /// Every attempt failed (or the failure was not worth retrying).
    Failed(LlmError),
    /// The reply kept repeating itself, also when asked again; `partial_text` is the
    /// second attempt's text up to where the repetition took over.
    Repeating { partial_text: String },
}

/// The repetition guard (from MiroThinker): a reply whose last this-many characters
/// already occurred more than [`REPEAT_LIMIT`] times is stuck in a loop.
const REPEAT_TAIL_CHARS: usize = 50;
const REPEAT_LIMIT: usize = 5;
/// How much new text arrives between two checks (each check scans the reply once).
const REPEAT_CHECK_EVERY: usize = 200;

/// Whether the last [`REPEAT_TAIL_CHARS`] characters of `text` occur more than
/// [`REPEAT_LIMIT`] times in it.
pub(crate) fn keeps_repeating(text: &str) -> bool {
    let Some((start, _)) = text.char_indices().rev().nth(REPEAT_TAIL_CHARS - 1) else {
        return false;
    };
    let tail = &text[start..];
    if tail.trim().is_empty() || text.len() < tail.len() * (REPEAT_LIMIT + 1) {
        return false;
    }
    text.matches(tail).count() > REPEAT_LIMIT
}

/// `text` cut where its repeating tail first appeared, so what is kept is said once.
fn cut_repetition(text: &str) -> String {
    let Some((start, _)) = text.char_indices().rev().nth(REPEAT_TAIL_CHARS - 1) else {
        return text.to_string();
    };
    let tail = &text[start..];
    let first = text.find(tail).unwrap_or(start);
    // Keep one occurrence of the repeated part.
    let end = (first + tail.len()).min(text.len());
    text[..end].to_string()
}

/// How one attempt failed.
enum AttemptError {
    Llm(LlmError),
    /// The text or thinking started repeating itself; the stream was dropped.
    Repeating,
}

impl From<LlmError> for AttemptError {
    fn from(error: LlmError) -> Self {
        AttemptError::Llm(error)
    }
}

/// Whether a call's text and thinking stream to the front end.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Deltas {
    /// The conversation's own replies.
    Forward,
    /// Housekeeping calls (summaries): nothing shows in the conversation.
    Quiet,
}

/// What one attempt streamed before it ended.
#[derive(Debug, Default)]
struct Streamed {
    text: String,
    thinking: String,
    any_output: bool,
    /// Lengths of text and thinking at their last repetition check.
    text_checked: usize,
    thinking_checked: usize,
}

impl Streamed {
    /// Whether the reply so far has fallen into a loop (checked every so often).
    fn repeating(&mut self) -> bool {
        let mut stuck = false;
        if self.text.len() >= self.text_checked + REPEAT_CHECK_EVERY {
            self.text_checked = self.text.len();
            stuck |= keeps_repeating(&self.text);
        }
        if self.thinking.len() >= self.thinking_checked + REPEAT_CHECK_EVERY {
            self.thinking_checked = self.thinking.len();
            stuck |= keeps_repeating(&self.thinking);
        }
        stuck
    }
}

/// Streams one model call, retrying per the configured policy. A retry after output was
/// streamed starts the reply over; the `retrying` event tells front ends to drop the
/// partial output so nothing is shown twice.
pub(crate) async fn call_model(
    context: &TurnContext,
    request: &ModelRequest<'_>,
    deltas: Deltas,
) -> Result<ModelResponse, CallFailure> {
    let policy = &context.options.config.retry;
    let mut retries = 0u32;
    let mut repeated_once = false;
    loop {
        let mut streamed = Streamed::default();
        let outcome = {
            let attempt = attempt(context, request, &mut streamed, deltas);
            tokio::select! {
                biased;
                _ = context.cancel.cancelled() => None,
                result = attempt => Some(result),
            }
        };
        let Some(result) = outcome else {
            return Err(CallFailure::Cancelled {
                partial_text: streamed.text,
            });
        };
        let error = match result {
            Ok(response) => return Ok(response),
            Err(AttemptError::Llm(error)) => error,
            Err(AttemptError::Repeating) if repeated_once => {
                return Err(CallFailure::Repeating {
                    partial_text: cut_repetition(&streamed.text),
                });
            }
            Err(AttemptError::Repeating) => {
                // Asked once more, from the start; a second loop is reported.
                repeated_once = true;
                context.events.emit(Event::Retrying {
                    attempt: 1,
                    max_attempts: 1,
                    delay_ms: 0,
                    reason: "the reply kept repeating itself; asking again".to_string(),
                    discard_partial: true,
                });
                continue;
            }
        };
        if !error.is_retryable() || retries >= policy.max_retries {
            return Err(CallFailure::Failed(error));
        }
        retries += 1;
        let delay = policy.delay(retries, error.retry_after());
        context.events.emit(Event::Retrying {
            attempt: retries,
            max_attempts: policy.max_retries,
            delay_ms: u64::try_from(delay.as_millis()).unwrap_or(u64::MAX),
            reason: error.to_string(),
            discard_partial: streamed.any_output,
        });
        if sleep_unless_cancelled(context, delay).await.is_err() {
            return Err(CallFailure::Cancelled {
                partial_text: String::new(),
            });
        }
    }
}

async fn sleep_unless_cancelled(context: &TurnContext, delay: Duration) -> Result<(), ()> {
    tokio::select! {
        _ = context.cancel.cancelled() => Err(()),
        _ = tokio::time::sleep(delay) => Ok(()),
    }
}

async fn attempt(
    context: &TurnContext,
    request: &ModelRequest<'_>,
    streamed: &mut Streamed,
    deltas: Deltas,
) -> Result<ModelResponse, AttemptError> {
    let mut stream = context.options.client.stream(request).await?;
    // A secret may arrive split over fragments; these hold back what could start one.
    let mut thinking_out = StreamRedactor::new(context.options.secrets.clone());
    let mut text_out = StreamRedactor::new(context.options.secrets.clone());
    while let Some(item) = stream.next().await {
        match item? {
            ModelEvent::ThinkingDelta(delta) => {
                streamed.any_output = true;
                streamed.thinking.push_str(&delta);
                if deltas == Deltas::Forward {
                    // What was held back of the other kind goes first, in order.
                    if let Some(delta) = text_out.finish() {
                        context.events.emit(Event::TextDelta { delta });
                    }
                    if let Some(delta) = thinking_out.push(&delta) {
                        context.events.emit(Event::ThinkingDelta { delta });
                    }
                }
            }
            ModelEvent::TextDelta(delta) => {
                streamed.any_output = true;
                streamed.text.push_str(&delta);
                if deltas == Deltas::Forward {
                    if let Some(delta) = thinking_out.finish() {
                        context.events.emit(Event::ThinkingDelta { delta });
                    }
                    if let Some(delta) = text_out.push(&delta) {
                        context.events.emit(Event::TextDelta { delta });
                    }
                }
            }
            ModelEvent::Completed(response) => {
                if deltas == Deltas::Forward {
                    if let Some(delta) = thinking_out.finish() {
                        context.events.emit(Event::ThinkingDelta { delta });
                    }
                    if let Some(delta) = text_out.finish() {
                        context.events.emit(Event::TextDelta { delta });
                    }
                }
                return Ok(response);
            }
        }
        if streamed.repeating() {
            return Err(AttemptError::Repeating);
        }
    }
    Err(AttemptError::Llm(LlmError::StreamBroken(
        "the stream ended without a reply".to_string(),
    )))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_looping_tail_is_caught_and_normal_text_is_not() {
        let looping = format!("Intro. {}", "I will check the file again. ".repeat(12));
        assert!(keeps_repeating(&looping));
        assert_eq!(
            cut_repetition(&looping).matches("check the file again").count(),
            2
        );
        let prose: String = (1..200)
            .map(|n| format!("Line {n} says something new. "))
            .collect();
        assert!(!keeps_repeating(&prose));
        assert!(!keeps_repeating(&" ".repeat(1000)), "whitespace is not a loop");
        assert!(!keeps_repeating("short"));
        assert!(keeps_repeating(&"ab".repeat(200)));
        assert!(keeps_repeating(&"重复".repeat(200)));
    }
}
