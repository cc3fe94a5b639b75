//! Server-sent events to [`ModelEvent`]s: the driver both providers share.
//!
//! Each provider supplies an [`SseDecoder`], a pure state machine fed one SSE event at a
//! time; [`decode_stream`] runs it over a byte stream. Keeping the decoders free of I/O
//! lets tests and benchmarks feed them bytes directly.

use std::collections::VecDeque;
use std::pin::Pin;
use std::task::{Context, Poll};

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
    events: eventsource_stream::EventStream<WholeLines<S>>,
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
        events: WholeLines::new(bytes).eventsource(),
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

/// A byte-order mark, which a stream may start with.
const BOM: &[u8] = b"\xef\xbb\xbf";

/// The byte stream regrouped so the SSE parser (`eventsource-stream`) gets whole lines,
/// without a leading byte-order mark. That parser starts over from the beginning of an
/// unfinished line on every chunk, so a long event arriving in many chunks cost
/// quadratic time (seconds for megabytes); and it strips a leading BOM by slicing at
/// byte 1, inside the BOM's three bytes, which panics.
struct WholeLines<S> {
    bytes: S,
    /// Bytes after the last line end seen.
    pending: Vec<u8>,
    /// Whether the start of the stream (and any BOM there) is behind.
    started: bool,
    ended: bool,
}

impl<S> WholeLines<S> {
    fn new(bytes: S) -> Self {
        Self {
            bytes,
            pending: Vec::new(),
            started: false,
            ended: false,
        }
    }
}

impl<S, B, E> Stream for WholeLines<S>
where
    S: Stream<Item = Result<B, E>> + Unpin,
    B: AsRef<[u8]>,
{
    type Item = Result<Vec<u8>, E>;

    fn poll_next(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        let this = self.get_mut();
        loop {
            if this.ended {
                return Poll::Ready(None);
            }
            let chunk = match this.bytes.poll_next_unpin(cx) {
                Poll::Ready(Some(Ok(chunk))) => chunk,
                Poll::Ready(Some(Err(err))) => return Poll::Ready(Some(Err(err))),
                Poll::Ready(None) => {
                    this.ended = true;
                    let rest = std::mem::take(&mut this.pending);
                    return Poll::Ready((!rest.is_empty()).then_some(Ok(rest)));
                }
                Poll::Pending => return Poll::Pending,
            };
            // Only the new bytes are searched, so a long line costs linear time.
            let mut from = this.pending.len();
            this.pending.extend_from_slice(chunk.as_ref());
            if !this.started {
                // Every leading BOM goes: the parser would choke on a second one as well.
                while this.pending.starts_with(BOM) {
                    this.pending.drain(..BOM.len());
                }
                if this.pending.is_empty() || BOM.starts_with(&this.pending) {
                    continue;
                }
                this.started = true;
                from = 0;
            }
            if let Some(end) = this.pending[from..]
                .iter()
                .rposition(|byte| matches!(byte, b'\n' | b'\r'))
            {
                let rest = this.pending.split_off(from + end + 1);
                return Poll::Ready(Some(Ok(std::mem::replace(&mut this.pending, rest))));
            }
        }
    }
}

/// Parses one event's JSON payload, naming the event when it is not JSON.
pub(crate) fn parse_json(event: &str, data: &str) -> Result<serde_json::Value, LlmError> {
    serde_json::from_str(data).map_err(|err| {
        let shown: String = data.chars().take(120).collect();
        let name = if event.is_empty() { "data" } else { event };
        LlmError::Malformed(format!("{name} payload is not JSON ({err}): {shown}"))
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::llm::anthropic::AnthropicDecoder;
    use pretty_assertions::assert_eq;

    const STOP: &[u8] = b"event: message_delta\ndata: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"end_turn\"}}\n\n";

    async fn decode(chunks: Vec<Vec<u8>>) -> Vec<Result<ModelEvent, LlmError>> {
        let bytes = futures_util::stream::iter(chunks.into_iter().map(Ok::<_, std::convert::Infallible>));
        decode_stream(bytes, AnthropicDecoder::default(), |never| match never {})
            .collect()
            .await
    }

    #[tokio::test]
    async fn a_leading_byte_order_mark_is_skipped_however_it_is_cut() {
        // Found by tests/fuzz: eventsource-stream sliced the BOM at byte 1 and panicked.
        let plain = decode(vec![STOP.to_vec()]).await;
        assert!(
            matches!(plain.last(), Some(Ok(ModelEvent::Completed(_)))),
            "{plain:?}"
        );
        let with_bom = [BOM, STOP].concat();
        assert_eq!(decode(vec![with_bom.clone()]).await, plain);
        assert_eq!(
            decode(with_bom.chunks(1).map(<[u8]>::to_vec).collect()).await,
            plain
        );
        assert_eq!(decode(vec![[BOM, BOM, STOP].concat()]).await, plain);
    }

    #[tokio::test]
    async fn the_parser_gets_whole_lines_only() {
        // A long line in many chunks made the parser rescan it on every chunk: seconds for
        // a 10 MB event. Now it sees each line once, whole.
        let text = [BOM, b"data: one\r\ndata: ".as_slice(), &[b'x'; 5000], b"\n\ntail"].concat();
        let lines: Vec<Vec<u8>> = WholeLines::new(futures_util::stream::iter(
            text.chunks(3)
                .map(|c| Ok::<_, std::convert::Infallible>(c.to_vec())),
        ))
        .map(|chunk| chunk.unwrap_or_else(|never| match never {}))
        .collect()
        .await;
        assert_eq!(lines.concat(), text[BOM.len()..]);
        let (last, whole) = lines.split_last().unwrap();
        assert_eq!(last, b"tail");
        assert!(
            whole
                .iter()
                .all(|chunk| matches!(chunk.last(), Some(b'\n' | b'\r'))),
            "{lines:?}"
        );
        assert!(lines.len() < 10, "{} pieces", lines.len());
    }
}
