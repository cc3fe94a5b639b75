//! One model call as the loop sees it: streamed, forwarded to the front end, retried on
//! transient failures, and abandoned at once on interrupt.

use std::collections::HashSet;
use std::time::Duration;

use futures_util::StreamExt;

use super::history::{ContentBlock, Message, repair_call_ids};
use super::repetition::{RepetitionGuard, cut_repetition};
use super::{TurnContext, meter};
use crate::llm::{InvalidArguments, LlmError, ModelEvent, ModelRequest, ModelResponse, PromptCache, Usage};
use crate::secrets::StreamRedactor;
use crate::tokens::TokenCounter;
use miniagent_protocol::Event;

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

/// What a call the provider reported nothing for is reckoned from: the conversation's
/// previous call (how much of the prompt its cache is reckoned to hold), and the prompt's
/// size when the caller knows it already (counted otherwise).
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Reckoning {
    pub last: Usage,
    pub prompt_tokens: Option<u64>,
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
    text_guard: RepetitionGuard,
    thinking_guard: RepetitionGuard,
    /// What the provider reported of the call's counts before it completed.
    reported: Option<Usage>,
}

impl Streamed {
    /// Whether the reply so far has fallen into a loop (checked every so often).
    fn repeating(&mut self) -> bool {
        // Both are checked, so each guard keeps its own pace.
        let text = self.text_guard.check(&self.text);
        let thinking = self.thinking_guard.check(&self.thinking);
        text || thinking
    }
}

/// Streams one model call, retrying per the configured policy. A retry after output was
/// streamed starts the reply over; the `retrying` event tells front ends to drop the
/// partial output so nothing is shown twice. Every attempt the provider bills is metered,
/// also one that never completes or that the provider reports nothing for (see
/// [`Reckoning`]).
pub(crate) async fn call_model(
    context: &TurnContext,
    request: &ModelRequest<'_>,
    deltas: Deltas,
    reckoning: Reckoning,
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
        if !matches!(outcome, Some(Ok(_))) {
            let counter = TokenCounter::new(context.options.config.agent.tokenizer);
            let output = counter.count(&streamed.text) + counter.count(&streamed.thinking);
            reckon(context, request, &streamed, output, reckoning);
        }
        let Some(result) = outcome else {
            return Err(CallFailure::Cancelled {
                partial_text: streamed.text,
            });
        };
        let error = match result {
            Ok(mut response) => {
                if response.usage.input_tokens > 0 {
                    context.meter.add(response.usage, context.options.config.price());
                } else {
                    // The provider did not say (or said something impossible): the call
                    // is billed all the same, so it is reckoned from the request and the
                    // reply (its tool calls' arguments included), and the reply carries
                    // the reckoning, marked as one.
                    streamed.reported = Some(response.usage);
                    streamed.any_output = true;
                    let counter = TokenCounter::new(context.options.config.agent.tokenizer);
                    let output = response.content.iter().map(|block| counter.block(block)).sum();
                    if let Some(usage) = reckon(context, request, &streamed, output, reckoning) {
                        response.usage = usage;
                        response.usage_estimated = true;
                    }
                }
                mend_reply_ids(context, request.messages, &mut response);
                return Ok(response);
            }
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

/// Gives the reply's tool calls ids the provider takes back before the reply enters the
/// history: a stream may carry empty or repeated ids (within the reply, or of calls
/// already in the prompt), and a history holding them is refused on every later request.
/// Arguments that did not parse are matched to their calls by position, so they follow.
fn mend_reply_ids(context: &TurnContext, prompt: &[Message], response: &mut ModelResponse) {
    let mut taken: HashSet<String> = prompt
        .iter()
        .flat_map(|message| message.tool_uses().map(|call| call.id.to_string()))
        .collect();
    // Which call each unparsable-arguments note belongs to: the first call, in order,
    // with its id and the empty input such a call gets.
    let mut invalid: Vec<Option<InvalidArguments>> = std::mem::take(&mut response.invalid_arguments)
        .into_iter()
        .map(Some)
        .collect();
    let owners: Vec<Option<InvalidArguments>> = response
        .content
        .iter()
        .filter_map(|block| match block {
            ContentBlock::ToolUse { id, input, .. } => Some((id, input)),
            _ => None,
        })
        .map(|(id, input)| {
            let empty = input.as_object().is_some_and(serde_json::Map::is_empty);
            invalid
                .iter_mut()
                .find(|note| empty && note.as_ref().is_some_and(|note| &note.call_id == id))
                .and_then(Option::take)
        })
        .collect();
    let renamed = repair_call_ids(&mut response.content, &mut taken);
    let ids: Vec<String> = response
        .content
        .iter()
        .filter_map(|block| match block {
            ContentBlock::ToolUse { id, .. } => Some(id.clone()),
            _ => None,
        })
        .collect();
    response.invalid_arguments = owners
        .into_iter()
        .zip(ids)
        .filter_map(|(note, id)| {
            note.map(|note| InvalidArguments {
                call_id: id,
                error: note.error,
            })
        })
        .collect();
    if !renamed.is_empty() {
        context.events.emit(Event::Notice {
            message: format!(
                "the model's reply had {} tool call(s) with an empty, malformed or repeated id; they were given new ids",
                renamed.len()
            ),
        });
    }
}

/// Adds an attempt that ended before its reply completed, or whose prompt the provider
/// did not count, to the meter, as far as the provider is reckoned to bill it (see
/// [`meter::unfinished_usage`]), with `output` tokens of reply; returns what it added.
fn reckon(
    context: &TurnContext,
    request: &ModelRequest<'_>,
    streamed: &Streamed,
    output: u64,
    reckoning: Reckoning,
) -> Option<Usage> {
    let options = &context.options;
    let price = options.config.price();
    let counter = TokenCounter::new(options.config.agent.tokenizer);
    let prompt_tokens = || {
        reckoning.prompt_tokens.unwrap_or_else(|| {
            counter.count(request.system)
                + counter.tools(request.tools)
                + request
                    .messages
                    .iter()
                    .map(|message| counter.message(message))
                    .sum::<u64>()
        })
    };
    let usage = meter::unfinished_usage(
        streamed.reported,
        streamed.any_output,
        prompt_tokens,
        output,
        reckoning.last,
        request.cache != PromptCache::Off,
        price.is_some_and(|price| price.cache_write.is_some()),
    )?
    .sane();
    context.meter.add(usage, price);
    Some(usage)
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
            ModelEvent::Usage(usage) => streamed.reported = Some(usage),
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
