//! The scripted model server itself.

use std::collections::VecDeque;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use serde_json::Value;
use tokio::io::AsyncReadExt;
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::oneshot;

use super::http::{self, RawRequest, ReadError};
use super::script::{Reply, Turn};
use super::wire::{self, Format};

/// How long a `Hang` / `StallAfter` connection is held open at most.
const HOLD_OPEN: Duration = Duration::from_secs(600);
/// How long a client may take to send its request.
const READ_TIMEOUT: Duration = Duration::from_secs(30);

/// One request as the server received it.
#[derive(Clone, Debug)]
pub struct RecordedRequest {
    pub method: String,
    /// The request target as sent (including any query string).
    pub path: String,
    /// Names lower-cased, values trimmed, in the order sent.
    pub headers: Vec<(String, String)>,
    /// `Value::Null` if the body was not JSON.
    pub body: Value,
    pub raw_body: String,
}

impl RecordedRequest {
    /// The first header named `name` (case-insensitive).
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    /// The path without any query string.
    pub fn path_only(&self) -> &str {
        self.path.split('?').next().unwrap_or_default()
    }

    fn from_raw(raw: &RawRequest) -> RecordedRequest {
        let raw_body = String::from_utf8_lossy(&raw.body).into_owned();
        RecordedRequest {
            method: raw.method.clone(),
            path: raw.target.clone(),
            headers: raw.headers.clone(),
            body: serde_json::from_slice(&raw.body).unwrap_or(Value::Null),
            raw_body,
        }
    }
}

#[derive(Default)]
struct Shared {
    script: VecDeque<Reply>,
    /// Answers every request that declares no tools (a summary call), when set.
    toolless: Option<Reply>,
    requests: Vec<RecordedRequest>,
    /// Model requests answered so far (for response ids).
    seq: u64,
}

/// A real HTTP/1.1 server on 127.0.0.1 that answers model requests from a
/// script. It runs on its own thread with its own tokio runtime (so it keeps
/// serving even if the test blocks its own thread), until dropped; dropping
/// it closes every connection.
pub struct ScriptedServer {
    addr: SocketAddr,
    shared: Arc<Mutex<Shared>>,
    _shutdown: oneshot::Sender<()>,
}

impl std::fmt::Debug for ScriptedServer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ScriptedServer")
            .field("addr", &self.addr)
            .field("remaining", &self.remaining())
            .finish()
    }
}

fn lock(shared: &Mutex<Shared>) -> MutexGuard<'_, Shared> {
    shared.lock().unwrap_or_else(|e| e.into_inner())
}

impl ScriptedServer {
    /// Binds 127.0.0.1:0 and serves in the background until dropped.
    pub async fn start(script: Vec<Reply>) -> ScriptedServer {
        ScriptedServer::start_blocking(script)
    }

    /// Same as [`start`](Self::start), for tests without an async runtime.
    pub fn start_blocking(script: Vec<Reply>) -> ScriptedServer {
        let listener =
            std::net::TcpListener::bind(("127.0.0.1", 0)).expect("scripted server: bind 127.0.0.1:0");
        listener
            .set_nonblocking(true)
            .expect("scripted server: set_nonblocking");
        let addr = listener.local_addr().expect("scripted server: local_addr");
        let shared = Arc::new(Mutex::new(Shared {
            script: script.into(),
            ..Shared::default()
        }));
        let (shutdown_tx, shutdown_rx) = oneshot::channel::<()>();
        let thread_shared = shared.clone();
        std::thread::Builder::new()
            .name(format!("scripted-server-{}", addr.port()))
            .spawn(move || {
                let rt = match tokio::runtime::Builder::new_current_thread().enable_all().build() {
                    Ok(rt) => rt,
                    Err(e) => {
                        eprintln!("scripted server: cannot build runtime: {e}");
                        return;
                    }
                };
                rt.block_on(async move {
                    let listener = match TcpListener::from_std(listener) {
                        Ok(l) => l,
                        Err(e) => {
                            eprintln!("scripted server: cannot register listener: {e}");
                            return;
                        }
                    };
                    tokio::select! {
                        _ = shutdown_rx => {}
                        _ = accept_loop(listener, thread_shared) => {}
                    }
                });
                // Dropping the runtime cancels every connection task, which
                // closes their sockets.
                drop(rt);
            })
            .expect("scripted server: spawn thread");
        ScriptedServer {
            addr,
            shared,
            _shutdown: shutdown_tx,
        }
    }

    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// `http://127.0.0.1:PORT` (clients post to `/v1/messages`).
    pub fn anthropic_base_url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// `http://127.0.0.1:PORT/v1` (clients post to `/chat/completions`).
    pub fn openai_base_url(&self) -> String {
        format!("http://{}/v1", self.addr)
    }

    /// Every request received so far, in arrival order.
    pub fn requests(&self) -> Vec<RecordedRequest> {
        lock(&self.shared).requests.clone()
    }

    /// The first block of the last message request `n` carried: after a tool call, the
    /// result the model got.
    pub fn last_block(&self, n: usize) -> serde_json::Value {
        let shared = lock(&self.shared);
        let messages = shared.requests[n].body["messages"].as_array();
        messages
            .and_then(|messages| messages.last())
            .map_or(serde_json::Value::Null, |message| message["content"][0].clone())
    }

    /// Every request received since the last call, removed from the record (long runs
    /// keep their memory flat this way). `request_count` counts only what is kept.
    pub fn take_requests(&self) -> Vec<RecordedRequest> {
        std::mem::take(&mut lock(&self.shared).requests)
    }

    /// The number of requests received so far.
    pub fn request_count(&self) -> usize {
        lock(&self.shared).requests.len()
    }

    /// The most recent request, if any.
    pub fn last_request(&self) -> Option<RecordedRequest> {
        lock(&self.shared).requests.last().cloned()
    }

    /// Waits (polling) until at least `n` requests were received, then
    /// returns all of them. Panics after `timeout`.
    pub async fn wait_for_requests(&self, n: usize, timeout: Duration) -> Vec<RecordedRequest> {
        let deadline = tokio::time::Instant::now() + timeout;
        loop {
            let requests = self.requests();
            if requests.len() >= n {
                return requests;
            }
            if tokio::time::Instant::now() >= deadline {
                panic!(
                    "scripted server: waited {timeout:?} for {n} requests, got {}: {requests:#?}",
                    requests.len()
                );
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    }

    /// Answers every request that declares no tools (summary calls) with `reply`,
    /// without consuming the script.
    pub fn answer_toolless_with(&self, reply: Reply) {
        lock(&self.shared).toolless = Some(reply);
    }

    /// Appends a reply to the script while running.
    pub fn push(&self, reply: Reply) {
        lock(&self.shared).script.push_back(reply);
    }

    /// How many replies are still unconsumed.
    pub fn remaining(&self) -> usize {
        lock(&self.shared).script.len()
    }
}

async fn accept_loop(listener: TcpListener, shared: Arc<Mutex<Shared>>) {
    loop {
        match listener.accept().await {
            Ok((stream, _)) => {
                tokio::spawn(handle_connection(stream, shared.clone()));
            }
            Err(_) => {
                // E.g. too many open files: back off briefly, keep serving.
                tokio::time::sleep(Duration::from_millis(5)).await;
            }
        }
    }
}

fn json_error_for_path(path: &str, status: u16, message: &str) -> String {
    let format = if path.contains("chat/completions") {
        Format::OpenAi
    } else {
        Format::Anthropic
    };
    wire::error_body(format, status, message)
}

/// What to do with one request, decided under the lock.
enum Action {
    Error { status: u16, body: String },
    Reply { format: Format, reply: Reply, seq: u64 },
}

async fn handle_connection(mut stream: TcpStream, shared: Arc<Mutex<Shared>>) {
    let _ = stream.set_nodelay(true);
    let raw = match tokio::time::timeout(READ_TIMEOUT, http::read_request(&mut stream)).await {
        Err(_) => {
            let body = wire::error_body(Format::Anthropic, 408, "scripted server: request timeout");
            let _ = http::write_full(&mut stream, 408, &[], "application/json", &body).await;
            return;
        }
        Ok(Err(ReadError::Closed)) => return,
        Ok(Err(ReadError::Bad {
            status,
            reason,
            partial,
        })) => {
            let path = partial.as_ref().map(|r| r.target.clone()).unwrap_or_default();
            if let Some(partial) = partial {
                lock(&shared).requests.push(RecordedRequest::from_raw(&partial));
            }
            let body = json_error_for_path(
                &path,
                status,
                &format!("scripted server: malformed request: {reason}"),
            );
            let _ = http::write_full(&mut stream, status, &[], "application/json", &body).await;
            return;
        }
        Ok(Ok(raw)) => raw,
    };

    let recorded = RecordedRequest::from_raw(&raw);
    let route = match (recorded.method.as_str(), recorded.path_only()) {
        ("POST", "/v1/messages") => Some(Format::Anthropic),
        ("POST", "/v1/chat/completions") => Some(Format::OpenAi),
        _ => None,
    };
    let model = recorded
        .body
        .get("model")
        .and_then(Value::as_str)
        .unwrap_or("scripted-model")
        .to_string();
    let include_usage = recorded
        .body
        .pointer("/stream_options/include_usage")
        .and_then(Value::as_bool)
        .unwrap_or(false);
    let body_is_json = !recorded.body.is_null();
    // Refused as the provider refuses it: a request the real API would not take must
    // fail every test that makes one.
    let caching_problem = match route {
        Some(Format::Anthropic) => super::validate::anthropic_cache_problem(&recorded.body),
        _ => None,
    };
    let declares_tools = recorded
        .body
        .get("tools")
        .and_then(|t| t.as_array())
        .is_some_and(|t| !t.is_empty());
    let method = recorded.method.clone();
    let path = recorded.path.clone();

    let action = {
        let mut shared = lock(&shared);
        let index = shared.requests.len();
        shared.requests.push(recorded);
        match route {
            None => Action::Error {
                status: 404,
                body: json_error_for_path(
                    &path,
                    404,
                    &format!("scripted server: no route for {method} {path}"),
                ),
            },
            Some(format) if !body_is_json => Action::Error {
                status: 400,
                body: wire::error_body(
                    format,
                    400,
                    "scripted server: malformed request: body is not JSON",
                ),
            },
            Some(format) if caching_problem.is_some() => Action::Error {
                status: 400,
                body: wire::error_body(format, 400, caching_problem.as_deref().unwrap_or_default()),
            },
            Some(format) if !declares_tools && shared.toolless.is_some() => {
                shared.seq += 1;
                Action::Reply {
                    format,
                    reply: shared.toolless.clone().unwrap_or_else(|| Reply::text("")),
                    seq: shared.seq,
                }
            }
            Some(format) => match shared.script.pop_front() {
                None => Action::Error {
                    status: 500,
                    body: wire::error_body(
                        format,
                        500,
                        &format!(
                            "scripted server: script exhausted (request #{} to {path})",
                            index + 1
                        ),
                    ),
                },
                Some(reply) => {
                    shared.seq += 1;
                    Action::Reply {
                        format,
                        reply,
                        seq: shared.seq,
                    }
                }
            },
        }
    };

    match action {
        Action::Error { status, body } => {
            let _ = http::write_full(&mut stream, status, &[], "application/json", &body).await;
        }
        Action::Reply { format, reply, seq } => {
            play(&mut stream, format, reply, seq, &model, include_usage).await;
        }
    }
}

fn request_id_header(format: Format, seq: u64) -> (&'static str, String) {
    match format {
        Format::Anthropic => ("request-id", format!("req_scripted_{seq:06}")),
        Format::OpenAi => ("x-request-id", format!("req_scripted_{seq:06}")),
    }
}

async fn write_sse_head(stream: &mut TcpStream, format: Format, seq: u64) -> std::io::Result<()> {
    http::write_head(
        stream,
        200,
        &[
            ("Content-Type", wire::SSE_CONTENT_TYPE.to_string()),
            ("Cache-Control", "no-cache".to_string()),
            ("Transfer-Encoding", "chunked".to_string()),
            request_id_header(format, seq),
        ],
    )
    .await
}

/// Writes the head and `events` (one chunk each), sleeping `delay` between
/// events. Does not end the body.
async fn stream_events(
    stream: &mut TcpStream,
    format: Format,
    seq: u64,
    events: &[String],
    delay: Duration,
) -> std::io::Result<()> {
    write_sse_head(stream, format, seq).await?;
    for (i, event) in events.iter().enumerate() {
        if i > 0 && !delay.is_zero() {
            tokio::time::sleep(delay).await;
        }
        http::write_chunk(stream, event.as_bytes()).await?;
    }
    Ok(())
}

/// Writes `events` on a fixed schedule: event `i` at `i / per_second` after the first.
async fn stream_paced(
    stream: &mut TcpStream,
    format: Format,
    seq: u64,
    events: &[String],
    per_second: f64,
) -> std::io::Result<()> {
    write_sse_head(stream, format, seq).await?;
    let start = tokio::time::Instant::now();
    let per_second = per_second.max(f64::MIN_POSITIVE);
    for (i, event) in events.iter().enumerate() {
        let due = start + Duration::from_secs_f64(i as f64 / per_second);
        tokio::time::sleep_until(due).await;
        http::write_chunk(stream, event.as_bytes()).await?;
    }
    Ok(())
}

/// Holds the connection open until the client closes it (or `HOLD_OPEN`).
async fn wait_until_client_gone(stream: &mut TcpStream) {
    let _ = tokio::time::timeout(HOLD_OPEN, async {
        let mut buf = [0u8; 4096];
        loop {
            match stream.read(&mut buf).await {
                Ok(0) | Err(_) => break,
                Ok(_) => {}
            }
        }
    })
    .await;
}

fn events_of(format: Format, turn: &Turn, seq: u64, model: &str, include_usage: bool) -> Vec<String> {
    wire::events(format, turn, model, seq, include_usage)
}

async fn play(
    stream: &mut TcpStream,
    format: Format,
    reply: Reply,
    seq: u64,
    model: &str,
    include_usage: bool,
) {
    match reply {
        Reply::Stream(turn) => {
            let events = events_of(format, &turn, seq, model, include_usage);
            if stream_events(stream, format, seq, &events, Duration::ZERO)
                .await
                .is_ok()
            {
                let _ = http::finish_chunks(stream).await;
            }
        }
        Reply::Slow { turn, delay_ms } => {
            let events = events_of(format, &turn, seq, model, include_usage);
            if stream_events(stream, format, seq, &events, Duration::from_millis(delay_ms))
                .await
                .is_ok()
            {
                let _ = http::finish_chunks(stream).await;
            }
        }
        Reply::Paced {
            turn,
            events_per_second,
        } => {
            let events = events_of(format, &turn, seq, model, include_usage);
            if stream_paced(stream, format, seq, &events, events_per_second)
                .await
                .is_ok()
            {
                let _ = http::finish_chunks(stream).await;
            }
        }
        Reply::Status {
            status,
            retry_after,
            message,
        } => {
            let body = wire::error_body(format, status, &message);
            let mut headers = vec![request_id_header(format, seq)];
            if let Some(secs) = retry_after {
                headers.push(("Retry-After", secs.to_string()));
            }
            let _ = http::write_full(stream, status, &headers, "application/json", &body).await;
        }
        Reply::DropAfter { turn, events } => {
            let all = events_of(format, &turn, seq, model, include_usage);
            let n = events.min(all.len());
            let _ = stream_events(stream, format, seq, &all[..n], Duration::ZERO).await;
            // Returning drops the socket without the terminating chunk: the
            // client sees an incomplete chunked body.
        }
        Reply::StallAfter { turn, events } => {
            let all = events_of(format, &turn, seq, model, include_usage);
            let n = events.min(all.len());
            if stream_events(stream, format, seq, &all[..n], Duration::ZERO)
                .await
                .is_ok()
            {
                wait_until_client_gone(stream).await;
            }
        }
        Reply::Malformed { raw_data } => {
            let event = wire::malformed_event(format, &raw_data);
            if stream_events(stream, format, seq, &[event], Duration::ZERO)
                .await
                .is_ok()
            {
                let _ = http::finish_chunks(stream).await;
            }
        }
        Reply::Hang => wait_until_client_gone(stream).await,
        Reply::EndlessLine { limit } => {
            let _ = endless_line(stream, format, seq, limit).await;
        }
        Reply::HugeDelta { bytes } => {
            let frame = wire::text_frame(format, model, seq, include_usage);
            let _ = stream_text(stream, format, seq, &frame, bytes, bytes, |want, out| {
                out.resize(want, b'x')
            })
            .await;
        }
        Reply::LongText { bytes, piece } => {
            let frame = wire::text_frame(format, model, seq, include_usage);
            let mut word = 0u64;
            let _ = stream_text(stream, format, seq, &frame, bytes, piece.max(1), |want, out| {
                while out.len() < want {
                    word += 1;
                    out.extend_from_slice(format!("w{word} ").as_bytes());
                }
            })
            .await;
        }
        Reply::PingForever { every_ms } => {
            let _ = ping_forever(stream, format, seq, Duration::from_millis(every_ms)).await;
        }
        Reply::Raw {
            status,
            content_type,
            body,
        } => {
            let _ = http::write_full(stream, status, &[], &content_type, &body).await;
        }
        Reply::Redirect { status, location } => {
            let _ = http::write_full(stream, status, &[("Location", location)], "text/plain", "moved").await;
        }
        Reply::Events(events) => {
            if stream_events(stream, format, seq, &events, Duration::ZERO)
                .await
                .is_ok()
            {
                let _ = http::finish_chunks(stream).await;
            }
        }
    }
}

/// How many bytes the hostile replies write at a time.
const FILL: usize = 64 << 10;

/// [`Reply::EndlessLine`]: `data: xxx…` until the client leaves or `limit` bytes.
async fn endless_line(stream: &mut TcpStream, format: Format, seq: u64, limit: u64) -> std::io::Result<()> {
    write_sse_head(stream, format, seq).await?;
    http::write_chunk(stream, b"data: ").await?;
    let fill = vec![b'x'; FILL];
    let mut sent = 0u64;
    while sent < limit {
        http::write_chunk(stream, &fill).await?;
        sent += FILL as u64;
    }
    // Dropped without the last chunk: the body is cut.
    Ok(())
}

/// A text reply of `bytes` bytes in deltas of `piece` bytes, each delta's text made by
/// `fill(wanted, buffer)` (it appends at least `wanted` bytes, needing no JSON escaping)
/// and written in pieces of at most [`FILL`] bytes.
async fn stream_text(
    stream: &mut TcpStream,
    format: Format,
    seq: u64,
    frame: &wire::TextFrame,
    bytes: usize,
    piece: usize,
    mut fill: impl FnMut(usize, &mut Vec<u8>),
) -> std::io::Result<()> {
    stream_events(stream, format, seq, &frame.before, Duration::ZERO).await?;
    let mut sent = 0;
    let mut buffer = Vec::with_capacity(FILL + 64);
    while sent < bytes {
        http::write_chunk(stream, frame.delta_open.as_bytes()).await?;
        let mut in_delta = 0;
        while in_delta < piece && sent < bytes {
            buffer.clear();
            let want = FILL.min(piece - in_delta).min(bytes - sent);
            fill(want, &mut buffer);
            http::write_chunk(stream, &buffer).await?;
            in_delta += buffer.len();
            sent += buffer.len();
        }
        http::write_chunk(stream, frame.delta_close.as_bytes()).await?;
    }
    for event in &frame.after {
        http::write_chunk(stream, event.as_bytes()).await?;
    }
    http::finish_chunks(stream).await
}

/// [`Reply::PingForever`]: keep-alives of every kind, never a reply.
async fn ping_forever(
    stream: &mut TcpStream,
    format: Format,
    seq: u64,
    every: Duration,
) -> std::io::Result<()> {
    write_sse_head(stream, format, seq).await?;
    let pings: [&[u8]; 3] = [
        b": ping\n\n",
        b"\n",
        b"event: ping\ndata: {\"type\": \"ping\"}\n\n",
    ];
    let started = tokio::time::Instant::now();
    for ping in pings.iter().cycle() {
        if started.elapsed() > HOLD_OPEN {
            break;
        }
        http::write_chunk(stream, ping).await?;
        tokio::time::sleep(every).await;
    }
    Ok(())
}
