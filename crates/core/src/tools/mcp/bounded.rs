//! A stdio server's stdout with a bound on one message: a line (one JSON-RPC message)
//! longer than [`MAX_MESSAGE_BYTES`] is not passed on. rmcp would drop such a line
//! silently (past its own 16 MB limit) and the call it answered would hang until its
//! timeout; here, when the line was the answer to a request, a short answer takes its
//! place at once: the beginning of the result's text and a line saying it was cut. The
//! bytes are scanned as they stream by, so memory stays bounded whatever the server sends.

use std::pin::Pin;
use std::process::Stdio;
use std::task::{Context, Poll};

use rmcp::service::{RoleClient, RxJsonRpcMessage, TxJsonRpcMessage};
use rmcp::transport::Transport;
use rmcp::transport::async_rw::AsyncRwTransport;
use serde_json::{Value, json};
use tokio::io::{AsyncRead, ReadBuf};
use tokio::process::{Child, ChildStderr, ChildStdin, ChildStdout, Command};

/// The longest message a server may send; far above any result the model is shown
/// (results are cut to 100 KB), and a quarter of rmcp's own limit.
pub(super) const MAX_MESSAGE_BYTES: usize = 4 << 20;
/// How much of a cut message is kept, for the beginning of its text.
const HEAD_BYTES: usize = 32 << 10;
/// The longest request id kept from a cut message (ids are short numbers or strings).
const MAX_ID_BYTES: usize = 256;
const READ_CHUNK: usize = 64 << 10;

/// A started stdio server: its process and the transport over its stdin and stdout.
pub(super) struct BoundedChild {
    /// Held so the process lives as long as the connection (it is killed on drop).
    _child: Child,
    transport: AsyncRwTransport<RoleClient, BoundedLines<ChildStdout>, ChildStdin>,
}

/// Starts `command` with piped stdin, stdout and stderr; returns the transport, the
/// process id and the stderr to drain.
pub(super) fn spawn(mut command: Command) -> std::io::Result<(BoundedChild, u32, Option<ChildStderr>)> {
    command
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = command.spawn()?;
    let missing = |what: &str| std::io::Error::other(format!("the server's {what} is not a pipe"));
    let stdout = child.stdout.take().ok_or_else(|| missing("stdout"))?;
    let stdin = child.stdin.take().ok_or_else(|| missing("stdin"))?;
    let stderr = child.stderr.take();
    let pid = child
        .id()
        .ok_or_else(|| std::io::Error::other("the server exited as soon as it started"))?;
    let transport = AsyncRwTransport::new_client(BoundedLines::new(stdout), stdin);
    Ok((
        BoundedChild {
            _child: child,
            transport,
        },
        pid,
        stderr,
    ))
}

impl Transport<RoleClient> for BoundedChild {
    type Error = std::io::Error;

    fn send(
        &mut self,
        item: TxJsonRpcMessage<RoleClient>,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
        self.transport.send(item)
    }

    fn receive(&mut self) -> impl Future<Output = Option<RxJsonRpcMessage<RoleClient>>> + Send {
        self.transport.receive()
    }

    /// Closes stdin (the server's cue to exit); the manager ends the process group.
    fn close(&mut self) -> impl Future<Output = Result<(), Self::Error>> + Send {
        self.transport.close()
    }
}

/// Lines from `inner`, each at most [`MAX_MESSAGE_BYTES`]; see the module header.
pub(super) struct BoundedLines<R> {
    inner: R,
    chunk: Vec<u8>,
    /// Bytes ready to hand out, from `ready_from` on.
    ready: Vec<u8>,
    ready_from: usize,
    /// Bytes of the current line so far.
    line_bytes: usize,
    /// The current line went over the limit: the rest of it is dropped.
    cutting: bool,
    head: Vec<u8>,
    scan: Scan,
}

impl<R> BoundedLines<R> {
    pub(super) fn new(inner: R) -> Self {
        Self {
            inner,
            chunk: vec![0; READ_CHUNK],
            ready: Vec::new(),
            ready_from: 0,
            line_bytes: 0,
            cutting: false,
            head: Vec::new(),
            scan: Scan::default(),
        }
    }

    /// Takes in bytes read from the server.
    fn take_in(&mut self, mut bytes: &[u8]) {
        while !bytes.is_empty() {
            let end = memchr::memchr(b'\n', bytes);
            let (part, rest) = match end {
                Some(at) => bytes.split_at(at),
                None => (bytes, &[][..]),
            };
            self.line_part(part);
            if end.is_some() {
                self.line_end();
                bytes = &rest[1..];
            } else {
                bytes = rest;
            }
        }
    }

    fn line_part(&mut self, part: &[u8]) {
        self.scan.feed(part);
        let room = HEAD_BYTES.saturating_sub(self.head.len());
        self.head.extend_from_slice(&part[..part.len().min(room)]);
        let before = self.line_bytes;
        self.line_bytes += part.len();
        if self.cutting {
            return;
        }
        if self.line_bytes <= MAX_MESSAGE_BYTES {
            self.ready.extend_from_slice(part);
            return;
        }
        // Over the limit: what was passed on is ended here as a broken line, which the
        // reader skips as unparsable; the rest is dropped.
        self.ready
            .extend_from_slice(&part[..MAX_MESSAGE_BYTES.saturating_sub(before)]);
        self.ready.push(b'\n');
        self.cutting = true;
    }

    fn line_end(&mut self) {
        if self.cutting
            && let Some(answer) = self.stand_in()
        {
            self.ready.extend_from_slice(answer.as_bytes());
        }
        self.ready.push(b'\n');
        self.line_bytes = 0;
        self.cutting = false;
        self.head.clear();
        self.scan = Scan::default();
    }

    /// The answer standing in for a cut line that answered a request; `None` for a line
    /// that did not (a request or notification from the server, or not JSON-RPC).
    fn stand_in(&self) -> Option<String> {
        let id: Value = serde_json::from_slice(self.scan.id.as_deref()?).ok()?;
        if !(id.is_number() || id.is_string()) || !self.scan.answer {
            return None;
        }
        let note = format!(
            "[cut: the MCP server's answer was {} bytes, over the {} byte limit on one message; only the beginning of its text is shown]",
            self.line_bytes, MAX_MESSAGE_BYTES
        );
        let text = match first_text(&self.head) {
            Some(start) if !start.is_empty() => format!("{start}\n{note}"),
            _ => note,
        };
        let answer = json!({
            "jsonrpc": "2.0",
            "id": id,
            "result": {"content": [{"type": "text", "text": text}], "isError": self.scan.error},
        });
        Some(answer.to_string())
    }
}

impl<R: AsyncRead + Unpin> AsyncRead for BoundedLines<R> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        out: &mut ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        let this = &mut *self;
        loop {
            if this.ready_from < this.ready.len() {
                let give = (this.ready.len() - this.ready_from).min(out.remaining());
                out.put_slice(&this.ready[this.ready_from..this.ready_from + give]);
                this.ready_from += give;
                if this.ready_from == this.ready.len() {
                    this.ready.clear();
                    this.ready_from = 0;
                }
                return Poll::Ready(Ok(()));
            }
            let mut chunk = std::mem::take(&mut this.chunk);
            let mut buf = ReadBuf::new(&mut chunk);
            let polled = Pin::new(&mut this.inner).poll_read(cx, &mut buf);
            let filled = buf.filled().len();
            let result = match polled {
                Poll::Ready(Ok(())) if filled == 0 => Some(Poll::Ready(Ok(()))),
                Poll::Ready(Ok(())) => {
                    this.take_in(&chunk[..filled]);
                    None
                }
                other => Some(other),
            };
            this.chunk = chunk;
            if let Some(result) = result {
                // End of stream or an error (or nothing yet): whatever the line held is
                // not a message anyway.
                return result;
            }
            // All of it may have been dropped; then read on rather than report an end.
        }
    }
}

/// What a streaming scan of one JSON-RPC line finds at its top level: the `id` (raw
/// JSON) and whether it is an answer (`result` or `error`).
#[derive(Debug, Default)]
struct Scan {
    depth: u32,
    in_string: bool,
    escaped: bool,
    /// At the top level, the next string is a key.
    expect_key: bool,
    reading_key: bool,
    key: Vec<u8>,
    /// The value being read belongs to the top-level `id`.
    reading_id: bool,
    id: Option<Vec<u8>>,
    answer: bool,
    error: bool,
}

impl Scan {
    fn feed(&mut self, bytes: &[u8]) {
        for &byte in bytes {
            self.byte(byte);
        }
    }

    fn byte(&mut self, byte: u8) {
        if self.reading_id
            && let Some(id) = &mut self.id
            && id.len() < MAX_ID_BYTES
        {
            id.push(byte);
        }
        if self.in_string {
            if self.escaped {
                self.escaped = false;
            } else if byte == b'\\' {
                self.escaped = true;
            } else if byte == b'"' {
                self.in_string = false;
                self.reading_key = false;
                return;
            }
            if self.reading_key && self.key.len() < 8 {
                self.key.push(byte);
            }
            return;
        }
        match byte {
            b'"' => {
                self.in_string = true;
                if self.depth == 1 && self.expect_key {
                    self.reading_key = true;
                    self.key.clear();
                }
            }
            b'{' | b'[' => {
                self.depth += 1;
                if self.depth == 1 {
                    self.expect_key = byte == b'{';
                }
            }
            b'}' | b']' => {
                if self.depth == 1 {
                    self.end_value();
                }
                self.depth = self.depth.saturating_sub(1);
            }
            b':' if self.depth == 1 && self.expect_key => {
                self.expect_key = false;
                match self.key.as_slice() {
                    b"id" => {
                        self.reading_id = true;
                        self.id = Some(Vec::new());
                    }
                    b"result" => self.answer = true,
                    b"error" => {
                        self.answer = true;
                        self.error = true;
                    }
                    _ => {}
                }
            }
            b',' if self.depth == 1 => {
                self.end_value();
                self.expect_key = true;
            }
            _ => {}
        }
    }

    /// A top-level value ended: the id, if that is what was read, is complete.
    fn end_value(&mut self) {
        if self.reading_id {
            self.reading_id = false;
            if let Some(id) = &mut self.id {
                // The byte that ended it was recorded too.
                id.pop();
            }
        }
    }
}

/// The beginning of the first `"text"` string in `head` (a cut message's first bytes),
/// decoded; `None` when there is none or it cannot be read.
fn first_text(head: &[u8]) -> Option<String> {
    let marker = b"\"text\":\"";
    let start = memchr::memmem::find(head, marker)? + marker.len();
    let mut raw = Vec::new();
    let mut escaped = false;
    for &byte in &head[start..] {
        if escaped {
            escaped = false;
        } else if byte == b'\\' {
            escaped = true;
        } else if byte == b'"' {
            break;
        }
        raw.push(byte);
    }
    // The head may end inside an escape or a character: cut back to where it is whole.
    if escaped {
        raw.pop();
    }
    if let Some(at) = raw.iter().rposition(|b| *b == b'\\')
        && raw.len() - at < 6
        && raw.get(at + 1) == Some(&b'u')
    {
        raw.truncate(at);
    }
    let valid = match std::str::from_utf8(&raw) {
        Ok(text) => text.len(),
        Err(err) => err.valid_up_to(),
    };
    raw.truncate(valid);
    let mut quoted = Vec::with_capacity(raw.len() + 2);
    quoted.push(b'"');
    quoted.extend_from_slice(&raw);
    quoted.push(b'"');
    serde_json::from_slice(&quoted).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn through(input: &[u8], piece: usize) -> Vec<u8> {
        let mut lines = BoundedLines::new(tokio::io::empty());
        for part in input.chunks(piece) {
            lines.take_in(part);
        }
        lines.ready
    }

    #[test]
    fn small_lines_pass_unchanged_in_any_pieces() {
        let input = b"{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}\n{\"a\":[1,{\"b\":\"c\\\"\"}]}\n";
        for piece in [1, 3, 7, 1000] {
            assert_eq!(through(input, piece), input.to_vec());
        }
    }

    #[test]
    fn an_oversized_answer_becomes_a_short_one_with_its_beginning() {
        let text = "é".repeat(MAX_MESSAGE_BYTES);
        let line =
            json!({"jsonrpc": "2.0", "result": {"content": [{"type": "text", "text": text}]}, "id": 7});
        let input = format!("{line}\n{{\"jsonrpc\":\"2.0\",\"method\":\"x\"}}\n");
        let out = through(input.as_bytes(), 65536);
        assert!(out.len() < MAX_MESSAGE_BYTES + 100_000, "{}", out.len());
        let lines: Vec<&[u8]> = out.split(|b| *b == b'\n').collect();
        // The passed-on part, ended early, is not JSON; then the stand-in, then the rest.
        assert!(serde_json::from_slice::<Value>(lines[0]).is_err());
        let answer: Value = serde_json::from_slice(lines[1]).expect("the stand-in is JSON");
        assert_eq!(answer["id"], 7);
        let shown = answer["result"]["content"][0]["text"].as_str().expect("text");
        assert!(shown.starts_with("éé"), "{}", &shown[..20]);
        assert!(
            shown.ends_with("only the beginning of its text is shown]"),
            "{shown}"
        );
        assert!(shown.len() < HEAD_BYTES + 300);
        assert_eq!(lines[2], b"{\"jsonrpc\":\"2.0\",\"method\":\"x\"}");
    }

    #[test]
    fn an_oversized_line_that_answers_nothing_is_dropped() {
        let line = format!(
            "{{\"jsonrpc\":\"2.0\",\"method\":\"note\",\"params\":{{\"x\":\"{}\"}}}}\n",
            "a".repeat(MAX_MESSAGE_BYTES)
        );
        let out = through(line.as_bytes(), 4096);
        assert_eq!(
            out.iter().filter(|b| **b == b'\n').count(),
            2,
            "a broken line and an empty one"
        );
        assert!(out.len() <= MAX_MESSAGE_BYTES + 2);
    }

    #[test]
    fn the_id_is_found_at_the_top_level_only() {
        let mut scan = Scan::default();
        scan.feed(br#"{"result":{"id":99,"s":"\"id\":5"},"id":"abc","jsonrpc":"2.0"}"#);
        assert_eq!(scan.id.as_deref(), Some(&b"\"abc\""[..]));
        assert!(scan.answer);
    }
}
