//! One model call as the loop sees it: streamed, forwarded to the front end, retried on
//! transient failures, and abandoned at once on interrupt.

use std::time::Duration;

use futures_util::StreamExt;

use super::TurnContext;
use crate::llm::{LlmError, ModelEvent, ModelRequest, ModelResponse};
use crate::protocol::Event;

/// Why a model call produced no response.
#[derive(Debug)]
pub(crate) enum CallFailure {
    /// The person interrupted; `partial_text` is what streamed of the reply so far.
    Cancelled { partial_text: String },
    /// Every attempt failed (or the failure was not worth retrying).
    Failed(LlmError),
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
    any_output: bool,
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
            Err(error) => error,
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
) -> Result<ModelResponse, LlmError> {
    let mut stream = context.options.client.stream(request).await?;
    while let Some(item) = stream.next().await {
        match item? {
            ModelEvent::ThinkingDelta(delta) => {
                streamed.any_output = true;
                if deltas == Deltas::Forward {
                    context.events.emit(Event::ThinkingDelta { delta });
                }
            }
            ModelEvent::TextDelta(delta) => {
                streamed.any_output = true;
                streamed.text.push_str(&delta);
                if deltas == Deltas::Forward {
                    context.events.emit(Event::TextDelta { delta });
                }
            }
            ModelEvent::Completed(response) => return Ok(response),
        }
    }
    Err(LlmError::StreamBroken(
        "the stream ended without a reply".to_string(),
    ))
}
