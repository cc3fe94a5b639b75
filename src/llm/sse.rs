//! Server-sent events to [`ModelEvent`]s: the driver both providers share.
//!
//! Each provider supplies an [`SseDecoder`], a pure state machine fed one SSE event at a
//! time; [`decode_stream`] runs it over a byte stream. Keeping the decoders free of I/O
//! lets tests and benchmarks feed them bytes directly.

use std::collections::VecDeque;

use eventsource_stream::{EventStreamError, Eventsource};
use futures_util::{Stream, StreamExt};

use super::{LlmError, ModelEvent, ModelStream};

/// A provider's stream format as a state machine.
pub trait SseDecoder: Send + 'static {
    /// Handles one SSE event (`event` is empty when the stream names none), pushing what
    /// it produces onto `out`.
    fn on_event(&mut self, event: &str, data: &str, out: &mut Vec<ModelEvent>) -> Result<(), LlmError>;

    /// True once the provider signalled the end and [`ModelEvent::Completed`] was pushed.
    fn is_complete(&self) -> bool;

    /// The byte stream ended before [`Self::is_complete`]: either the reply is whole
    /// enough to complete (push `Completed`) or the stream broke.
    fn on_eof(&mut self, out: &mut Vec<ModelEvent>) -> Result<(), LlmError>;
}

struct DecodeState<S, D, M> {
    events: eventsource_stream::EventStream<S>,
    decoder: D,
    map_transport: M,
    pending: VecDeque<ModelEvent>,
    finished: bool,
}

/// Runs `decoder` over `bytes`. Transport errors become what `map_transport` says;
/// undecodable bytes are [`LlmError::Malformed`]. The stream ends after `Completed` or
/// after the first error.
pub fn decode_stream<S, B, E, D, M>(bytes: S, decoder: D, map_transport: M) -> ModelStream
where
    S: Stream<Item = Result<B, E>> + Send + Unpin + 'static,
    B: AsRef<[u8]> + Send + 'static,
    E: Send + 'static,
    D: SseDecoder,
    M: Fn(E) -> LlmError + Send + 'static,
{
    let state = DecodeState {
        events: bytes.eventsource(),
        decoder,
        map_transport,
        pending: VecDeque::new(),
        finished: false,
    };
    let stream = futures_util::stream::unfold(state, |mut state| async move {
        loop {
            if let Some(event) = state.pending.pop_front() {
                return Some((Ok(event), state));
            }
            if state.finished {
                return None;
            }
            let mut out = Vec::new();
            let step = match state.events.next().await {
                Some(Ok(event)) => {
                    state
                        .decoder
                        .on_event(&event.event, event.data.trim_end_matches('\n'), &mut out)
                }
                Some(Err(EventStreamError::Transport(err))) => Err((state.map_transport)(err)),
                Some(Err(EventStreamError::Utf8(err))) => {
                    Err(LlmError::Malformed(format!("the stream is not UTF-8: {err}")))
                }
                Some(Err(EventStreamError::Parser(err))) => {
                    Err(LlmError::Malformed(format!("not server-sent events: {err}")))
                }
                None => {
                    state.finished = true;
                    state.decoder.on_eof(&mut out)
                }
            };
            state.pending.extend(out);
            match step {
                Ok(()) => {
                    if state.decoder.is_complete() {
                        state.finished = true;
                    }
                }
                Err(err) => {
                    state.finished = true;
                    state.pending.clear();
                    return Some((Err(err), state));
                }
            }
        }
    });
    Box::pin(stream)
}

/// Parses one event's JSON payload, naming the event when it is not JSON.
pub(crate) fn parse_json(event: &str, data: &str) -> Result<serde_json::Value, LlmError> {
    serde_json::from_str(data).map_err(|err| {
        let shown: String = data.chars().take(120).collect();
        let name = if event.is_empty() { "data" } else { event };
        LlmError::Malformed(format!("{name} payload is not JSON ({err}): {shown}"))
    })
}
