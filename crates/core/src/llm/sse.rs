//! Server-sent events to [`ModelEvent`]s: the driver both providers share.
//!
//! Each provider supplies an [`SseDecoder`], a pure state machine fed one SSE event at a
//! time; [`decode_stream`] runs it over a byte stream. Keeping the decoders free of I/O
//! lets tests and benchmarks feed them bytes directly. The driver bounds what a stream
//! may make it hold: a line or an event over [`MAX_EVENT_BYTES`] ends the stream (and the
//! decoders bound the reply, [`super::MAX_REPLY_BYTES`]); [`decode_stream_within`] also
//! ends it at a deadline, or when it sends nothing but keep-alives for too long.
//!
//! The SSE syntax itself is parsed by `eventsource-stream`; what is written here is the
//! regrouping of its input (`WholeLines`), which works around its quadratic cost on
//! long lines and big chunks and its panic on a leading byte-order mark (measured and
//! described there), and the limits above, which no SSE crate enforces.

use std::collections::VecDeque;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;

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

    /// Bytes of reply (text, thinking, tool calls) taken in so far: when it grows, the
    /// stream made progress, which keep-alives do not.
    fn reply_bytes(&self) -> usize;
}

/// The longest SSE line, and the largest event (its lines together), a stream may send:
/// 8 MiB. Real events are deltas of a few bytes to a few KB; even a server that sends a
/// whole reply in one event stays under it, as a reply is at most
/// [`super::MAX_REPLY_BYTES`] (4 MiB), with room for JSON escaping.
pub const MAX_EVENT_BYTES: usize = 8 << 20;

/// When a stream is given up although bytes keep coming.
#[derive(Clone, Copy, Debug)]
pub struct TimeLimits {
    /// Longest time without progress (keep-alives are none): [`LlmError::Stalled`].
    pub idle: Duration,
    /// When the whole attempt must be over: [`LlmError::Deadline`].
    pub deadline: tokio::time::Instant,
    /// The configured deadline in seconds, for the message.
    pub deadline_s: u64,
}

/// How much later than the transport's own read timeout (the same `idle`) a stream
/// without progress is called stalled: a stream gone silent is then always reported as
/// silent ("no data"), never as keep-alives only, whichever timer the runtime wakes first.
const STALL_MARGIN: Duration = Duration::from_secs(1);

struct DecodeState<S, D, M> {
    events: eventsource_stream::EventStream<WholeLines<S>>,
    decoder: D,
    map_transport: M,
    pending: VecDeque<ModelEvent>,
    finished: bool,
    limits: Option<TimeLimits>,
    /// When the stream stalls unless it makes progress first.
    idle_due: tokio::time::Instant,
}

/// Runs `decoder` over `bytes`. Transport errors become what `map_transport` says;
/// undecodable bytes are [`LlmError::Malformed`], a line or event over
/// [`MAX_EVENT_BYTES`] is [`LlmError::TooLarge`]. The stream ends after `Completed` or
/// after the first error. Needs no runtime: it has no timers.
pub fn decode_stream<S, B, E, D, M>(bytes: S, decoder: D, map_transport: M) -> ModelStream
where
    S: Stream<Item = Result<B, E>> + Send + Unpin + 'static,
    B: AsRef<[u8]> + Send + 'static,
    E: Send + 'static,
    D: SseDecoder,
    M: Fn(E) -> LlmError + Send + 'static,
{
    decode(bytes, decoder, map_transport, None)
}

/// [`decode_stream`] that also ends the stream at `limits` (on a tokio runtime).
pub fn decode_stream_within<S, B, E, D, M>(
    bytes: S,
    decoder: D,
    map_transport: M,
    limits: TimeLimits,
) -> ModelStream
where
    S: Stream<Item = Result<B, E>> + Send + Unpin + 'static,
    B: AsRef<[u8]> + Send + 'static,
    E: Send + 'static,
    D: SseDecoder,
    M: Fn(E) -> LlmError + Send + 'static,
{
    decode(bytes, decoder, map_transport, Some(limits))
}

fn decode<S, B, E, D, M>(bytes: S, decoder: D, map_transport: M, limits: Option<TimeLimits>) -> ModelStream
where
    S: Stream<Item = Result<B, E>> + Send + Unpin + 'static,
    B: AsRef<[u8]> + Send + 'static,
    E: Send + 'static,
    D: SseDecoder,
    M: Fn(E) -> LlmError + Send + 'static,
{
    let idle = limits.map_or(Duration::ZERO, |limits| limits.idle);
    let state = DecodeState {
        events: WholeLines::new(bytes).eventsource(),
        decoder,
        map_transport,
        pending: VecDeque::new(),
        finished: false,
        limits,
        idle_due: tokio::time::Instant::now() + idle + STALL_MARGIN,
    };
    let stream = futures_util::stream::unfold(state, |mut state| async move {
        loop {
            if let Some(event) = state.pending.pop_front() {
                return Some((Ok(event), state));
            }
            if state.finished {
                return None;
            }
            let next = match state.limits {
                None => state.events.next().await,
                Some(limits) => {
                    let due = state.idle_due.min(limits.deadline);
                    match tokio::time::timeout_at(due, state.events.next()).await {
                        Ok(next) => next,
                        Err(_) => {
                            state.finished = true;
                            let error = if tokio::time::Instant::now() >= limits.deadline {
                                LlmError::Deadline(limits.deadline_s)
                            } else {
                                LlmError::Stalled(limits.idle.as_secs())
                            };
                            return Some((Err(error), state));
                        }
                    }
                }
            };
            let mut out = Vec::new();
            let before = state.decoder.reply_bytes();
            let step = match next {
                Some(Ok(event)) => {
                    state
                        .decoder
                        .on_event(&event.event, event.data.trim_end_matches('\n'), &mut out)
                }
                Some(Err(EventStreamError::Transport(LinesError::Transport(err)))) => {
                    Err((state.map_transport)(err))
                }
                Some(Err(EventStreamError::Transport(LinesError::TooLarge(message)))) => {
                    Err(LlmError::TooLarge(message))
                }
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
            if let Some(limits) = state.limits
                && (!out.is_empty() || state.decoder.reply_bytes() > before)
            {
                state.idle_due = tokio::time::Instant::now() + limits.idle + STALL_MARGIN;
            }
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

/// The most bytes [`WholeLines`] hands the parser at once, unless a single line is
/// longer. Measured with benches/sse.rs: 512 B to 2 KiB all do well; 1 KiB did best.
const ITEM_BYTES: usize = 1024;

/// How much room [`WholeLines`] keeps for the next chunk; what a huge line took beyond
/// that is given back once it is handed on.
const KEPT_CAPACITY: usize = 256 << 10;

fn is_line_end(byte: &u8) -> bool {
    matches!(byte, b'\n' | b'\r')
}

/// Where the last whole event in `lines` ends: just after its blank line, which follows
/// another line end (`\n\n`, `\r\r`, `\n\r`) and may itself be `\r\n`.
fn last_event_end(lines: &[u8]) -> Option<usize> {
    let at = lines
        .windows(2)
        .rposition(|pair| matches!(pair, b"\n\n" | b"\r\r" | b"\n\r"))?;
    let crlf = lines[at + 1] == b'\r' && lines.get(at + 2) == Some(&b'\n');
    Some(at + if crlf { 3 } else { 2 })
}

/// The byte stream regrouped so the SSE parser (`eventsource-stream`) gets whole lines in
/// small pieces, without a leading byte-order mark. That parser:
///
/// - starts over from the beginning of an unfinished line on every chunk, so a long event
///   arriving in many chunks cost quadratic time (seconds for megabytes);
/// - after each line it parses, moves all the rest of its buffer to the front, so a big
///   chunk of many short lines cost quadratic time too (a 64 KiB chunk decoded at under
///   half the speed of 4 KiB ones). Items are therefore at most [`ITEM_BYTES`] unless a
///   line is longer: whole events when they fit, else whole lines;
/// - strips a leading BOM by slicing at byte 1, inside the BOM's three bytes, which
///   panics.
///
/// A last line with no line end is handed on as it is when the stream ends. Items are cut
/// only after `\n` or `\r` (ASCII, never inside a UTF-8 sequence), so invalid or cut UTF-8
/// reaches the parser as it came. (After invalid UTF-8 the parser's decoder holds, and
/// copies on every item, all that follows until the stream ends, when it reports it; so
/// from then on each chunk's whole lines go in one item again, as they used to.)
/// Transport errors pass through as they arrive; the next chunk is only asked for once
/// every whole line before it has been handed on, so what is held is at most one chunk
/// and an unfinished line, as when each chunk went in one piece.
struct WholeLines<S> {
    bytes: S,
    /// Bytes received and not yet handed on: those from `taken` on.
    pending: Vec<u8>,
    /// How many bytes at the front of `pending` have been handed on already.
    taken: usize,
    /// The end of the last line end in `pending`: `pending[taken..lines_end]` is whole
    /// lines waiting to be handed on, and what follows is an unfinished line.
    lines_end: usize,
    /// Whether the start of the stream (and any BOM there) is behind.
    started: bool,
    /// Whether an item handed on held invalid UTF-8.
    invalid_utf8: bool,
    ended: bool,
    /// Bytes of the line being received (line ends not counted), of the event being
    /// received (its finished lines), and whether the last line ended with `\r` (so a
    /// `\n` right after it belongs to it).
    line_len: usize,
    event_len: usize,
    after_cr: bool,
}

/// Why [`WholeLines`] stopped: the byte stream's error, or a line or event too large.
enum LinesError<E> {
    Transport(E),
    TooLarge(String),
}

impl<S> WholeLines<S> {
    fn new(bytes: S) -> Self {
        Self {
            bytes,
            pending: Vec::new(),
            taken: 0,
            lines_end: 0,
            started: false,
            invalid_utf8: false,
            ended: false,
            line_len: 0,
            event_len: 0,
            after_cr: false,
        }
    }

    /// Measures the lines and events in `pending[from..]` (new bytes) against
    /// [`MAX_EVENT_BYTES`]; the message says which limit was passed.
    fn measure(&mut self, from: usize) -> Result<(), String> {
        let new = &self.pending[from..];
        let mut start = 0;
        for end in memchr::memchr2_iter(b'\n', b'\r', new) {
            let len = end - start;
            let byte = new[end];
            start = end + 1;
            if byte == b'\n' && self.after_cr && len == 0 && self.line_len == 0 {
                // The second half of a `\r\n`.
                self.after_cr = false;
                continue;
            }
            self.after_cr = byte == b'\r';
            let line = self.line_len.saturating_add(len);
            self.line_len = 0;
            if line == 0 {
                // A blank line: the event ends.
                self.event_len = 0;
                continue;
            }
            if line > MAX_EVENT_BYTES {
                return Err(line_too_long());
            }
            self.event_len = self.event_len.saturating_add(line);
            if self.event_len > MAX_EVENT_BYTES {
                return Err(event_too_large());
            }
        }
        let tail = new.len() - start;
        if tail > 0 {
            self.after_cr = false;
            self.line_len = self.line_len.saturating_add(tail);
        }
        if self.line_len > MAX_EVENT_BYTES {
            return Err(line_too_long());
        }
        if self.event_len.saturating_add(self.line_len) > MAX_EVENT_BYTES {
            return Err(event_too_large());
        }
        Ok(())
    }

    /// How many bytes of the waiting whole lines (there must be some) the next item takes:
    /// the whole events that fit in [`ITEM_BYTES`], else the whole lines that do, else the
    /// first line alone, however long; or all of them after invalid UTF-8. Only the first
    /// [`ITEM_BYTES`] (and a long line) are searched, and an item ending early in them is
    /// followed by one reaching past them, so this takes linear time overall.
    fn next_len(&self) -> usize {
        let lines = &self.pending[self.taken..self.lines_end];
        if self.invalid_utf8 {
            return lines.len();
        }
        let window = &lines[..lines.len().min(ITEM_BYTES)];
        last_event_end(window)
            .or_else(|| window.iter().rposition(is_line_end).map(|at| at + 1))
            .or_else(|| {
                let after = &lines[window.len()..];
                after.iter().position(is_line_end).map(|at| window.len() + at + 1)
            })
            // Unreachable: `lines` ends with a line end.
            .unwrap_or(lines.len())
    }

    /// The next item (there must be whole lines waiting), noting any invalid UTF-8 in it.
    fn next_item(&mut self) -> Vec<u8> {
        let len = self.next_len();
        let item = if self.taken == 0 && 2 * len >= self.pending.len() {
            // Most of what there is (a small chunk of one event, a huge line): hand on the
            // buffer itself and copy the smaller rest instead.
            let rest = self.pending.split_off(len);
            self.lines_end -= len;
            std::mem::replace(&mut self.pending, rest)
        } else {
            self.taken += len;
            self.pending[self.taken - len..self.taken].to_vec()
        };
        if !self.invalid_utf8 && std::str::from_utf8(&item).is_err() {
            self.invalid_utf8 = true;
        }
        item
    }
}

fn line_too_long() -> String {
    format!(
        "the provider's stream has a line longer than {} MiB; stopped reading",
        MAX_EVENT_BYTES >> 20
    )
}

fn event_too_large() -> String {
    format!(
        "the provider's stream has an event larger than {} MiB; stopped reading",
        MAX_EVENT_BYTES >> 20
    )
}

impl<S, B, E> Stream for WholeLines<S>
where
    S: Stream<Item = Result<B, E>> + Unpin,
    B: AsRef<[u8]>,
{
    type Item = Result<Vec<u8>, LinesError<E>>;

    fn poll_next(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        let this = self.get_mut();
        loop {
            if this.taken < this.lines_end {
                return Poll::Ready(Some(Ok(this.next_item())));
            }
            if this.ended {
                return Poll::Ready(None);
            }
            // Every whole line is handed on: the unfinished line (if any) moves to the
            // front, once per chunk rather than once per item. (Not shrinking while a long
            // line is still growing, which would undo the doubling and take quadratic time.)
            if this.taken > 0 {
                this.pending.drain(..this.taken);
                this.pending.shrink_to(KEPT_CAPACITY);
            }
            this.taken = 0;
            this.lines_end = 0;
            let chunk = match this.bytes.poll_next_unpin(cx) {
                Poll::Ready(Some(Ok(chunk))) => chunk,
                Poll::Ready(Some(Err(err))) => return Poll::Ready(Some(Err(LinesError::Transport(err)))),
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
            if let Err(message) = this.measure(from) {
                // Nothing more is read or handed on; what was held goes now.
                this.ended = true;
                this.pending = Vec::new();
                this.taken = 0;
                this.lines_end = 0;
                return Poll::Ready(Some(Err(LinesError::TooLarge(message))));
            }
            if let Some(end) = this.pending[from..].iter().rposition(is_line_end) {
                this.lines_end = from + end + 1;
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
        .map(item_bytes)
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

    fn item_bytes(item: Result<Vec<u8>, LinesError<std::convert::Infallible>>) -> Vec<u8> {
        match item {
            Ok(bytes) => bytes,
            Err(LinesError::Transport(never)) => match never {},
            Err(LinesError::TooLarge(message)) => panic!("{message}"),
        }
    }

    /// `text` through [`WholeLines`] in chunks of `chunk` bytes: the items it hands on.
    async fn whole_lines(text: &[u8], chunk: usize) -> Vec<Vec<u8>> {
        WholeLines::new(futures_util::stream::iter(
            text.chunks(chunk)
                .map(|c| Ok::<_, std::convert::Infallible>(c.to_vec())),
        ))
        .map(item_bytes)
        .collect()
        .await
    }

    /// An Anthropic reply of `deltas` text deltas, about 130 bytes of SSE each.
    fn many_events(deltas: usize) -> Vec<u8> {
        let mut text = String::from(
            "event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"text\",\"text\":\"\"}}\n\n",
        );
        for delta in 0..deltas {
            text.push_str(&format!(
                "event: content_block_delta\ndata: {{\"type\":\"content_block_delta\",\"index\":0,\"delta\":{{\"type\":\"text_delta\",\"text\":\"piece {delta} \"}}}}\n\n"
            ));
        }
        [text.as_bytes(), STOP].concat()
    }

    #[tokio::test]
    async fn a_big_chunk_reaches_the_parser_in_small_pieces() {
        // The parser moves the rest of its buffer after every line, so a 64 KiB chunk of
        // short lines handed over whole cost quadratic time.
        let text = many_events(600);
        assert!(text.len() > 64 << 10);
        // Items are whole events, bar one at each cut between chunks; none is bigger than
        // ITEM_BYTES (no line is), and all are whole lines.
        let check = |text: &[u8], items: &[Vec<u8>], event_end: &[u8]| {
            assert_eq!(items.concat(), text);
            let cut_events = items.iter().filter(|item| !item.ends_with(event_end)).count();
            assert!(cut_events <= text.len().div_ceil(64 << 10), "{cut_events}");
            for item in items {
                assert!(item.ends_with(b"\n") || item.ends_with(b"\r"), "{item:?}");
                assert!(item.len() <= ITEM_BYTES, "{} bytes", item.len());
            }
            // Not one event or line at a time either: each handing-on has a cost.
            assert!(items.len() < 2 * text.len() / ITEM_BYTES, "{} items", items.len());
        };
        let items = whole_lines(&text, 64 << 10).await;
        check(&text, &items, b"\n\n");
        // The same with CRLF and CR line ends.
        let text_with = |end: &str| String::from_utf8_lossy(&text).replace('\n', end).into_bytes();
        for end in ["\r\n", "\r"] {
            let text = text_with(end);
            let items = whole_lines(&text, 64 << 10).await;
            check(&text, &items, end.repeat(2).as_bytes());
        }
        // Without blank lines, whole lines up to ITEM_BYTES.
        let lines = String::from_utf8_lossy(&text).replace("\n\n", "\n").into_bytes();
        let items = whole_lines(&lines, 64 << 10).await;
        check(&lines, &items, b"\n");

        let whole = decode(vec![text.clone()]).await;
        assert!(
            matches!(whole.last(), Some(Ok(ModelEvent::Completed(_)))),
            "{whole:?}"
        );
        assert_eq!(whole.len(), 601);
        for chunk in [1, 7, 4 << 10, 64 << 10] {
            let chunks = text.chunks(chunk).map(<[u8]>::to_vec).collect();
            assert_eq!(decode(chunks).await, whole, "in chunks of {chunk}");
        }
    }

    #[tokio::test]
    async fn a_line_longer_than_an_item_goes_whole() {
        let long = [b"data: ".as_slice(), &[b'x'; 3 * ITEM_BYTES]].concat();
        let text = [b"data: a\n".as_slice(), &long, b"\ndata: b\n\n"].concat();
        let items = whole_lines(&text, 64 << 10).await;
        let expected = [
            b"data: a\n".to_vec(),
            [long.as_slice(), b"\n"].concat(),
            b"data: b\n\n".to_vec(),
        ];
        assert_eq!(items, expected);
    }

    #[tokio::test]
    async fn after_invalid_utf8_each_chunk_goes_in_one_item() {
        // From there eventsource-stream's decoder holds all that follows and copies it on
        // every item until the stream ends: small items would cost quadratic time.
        let text = [
            b": ping\n\n".repeat(300).as_slice(),
            b"data: \xff\n\n",
            &many_events(600),
        ]
        .concat();
        let items = whole_lines(&text, 64 << 10).await;
        assert_eq!(items.concat(), text);
        let bad = items
            .iter()
            .position(|item| std::str::from_utf8(item).is_err())
            .unwrap();
        assert!(bad > 1, "small items before it");
        // The bad one, the rest of its chunk, and the one chunk after.
        assert_eq!(items.len() - bad, 3, "{} items", items.len());
        let decoded = decode(vec![text]).await;
        assert!(
            matches!(decoded.as_slice(), [Err(LlmError::Malformed(_))]),
            "{decoded:?}"
        );
    }

    /// What [`WholeLines`] makes of `text` in chunks of `chunk` bytes: the bytes handed
    /// on, and the size error that ended it, if one did.
    async fn measured(text: &[u8], chunk: usize) -> (usize, Option<String>) {
        let mut items = WholeLines::new(futures_util::stream::iter(
            text.chunks(chunk)
                .map(|c| Ok::<_, std::convert::Infallible>(c.to_vec())),
        ));
        let mut handed = 0;
        while let Some(item) = items.next().await {
            match item {
                Ok(bytes) => handed += bytes.len(),
                Err(LinesError::Transport(never)) => match never {},
                Err(LinesError::TooLarge(message)) => return (handed, Some(message)),
            }
        }
        (handed, None)
    }

    #[tokio::test]
    async fn a_line_or_event_over_the_limit_ends_the_stream() {
        let half = vec![b'x'; MAX_EVENT_BYTES / 2 - 16];
        // Lines of half the limit, in events of two, however they are cut and ended.
        for end in ["\n", "\r", "\r\n"] {
            let line = [b"data: ".as_slice(), &half, end.as_bytes()].concat();
            let event = [line.as_slice(), &line, end.as_bytes()].concat();
            let text = event.repeat(3);
            for chunk in [64 << 10, 3 << 20, text.len()] {
                assert_eq!(
                    measured(&text, chunk).await,
                    (text.len(), None),
                    "{end:?} {chunk}"
                );
            }
            // Three such lines in one event are too many.
            let text = [line.as_slice(), &line, &line, end.as_bytes()].concat();
            let (_, error) = measured(&text, 64 << 10).await;
            assert!(
                error.is_some_and(|e| e.contains("an event larger than 8 MiB")),
                "{end:?}"
            );
        }
        // One line a byte over the limit, whole or unfinished.
        let long = vec![b'x'; MAX_EVENT_BYTES + 1];
        for text in [[long.as_slice(), b"\n\n"].concat(), long.clone()] {
            let (handed, error) = measured(&text, 64 << 10).await;
            assert_eq!(handed, 0);
            assert!(error.is_some_and(|e| e.contains("a line longer than 8 MiB")));
        }
    }
}
