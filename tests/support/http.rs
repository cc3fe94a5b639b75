//! A minimal hand-written HTTP/1.1 server side: one request per connection,
//! every response sent with `Connection: close`.

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

/// Largest request head accepted.
const MAX_HEAD: usize = 1024 * 1024;
/// Largest request body accepted.
const MAX_BODY: usize = 64 * 1024 * 1024;

/// A request as read from the socket.
#[derive(Debug, Default)]
pub struct RawRequest {
    pub method: String,
    pub target: String,
    /// Names lower-cased, values trimmed.
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
}

#[derive(Debug)]
pub enum ReadError {
    /// The peer closed (or failed) before sending a single byte.
    Closed,
    /// The request could not be read as HTTP/1.1: answer `status`. `partial`
    /// holds whatever was parsed, for the record.
    Bad {
        status: u16,
        reason: String,
        partial: Option<RawRequest>,
    },
}

fn bad(status: u16, reason: impl Into<String>, partial: Option<RawRequest>) -> ReadError {
    ReadError::Bad {
        status,
        reason: reason.into(),
        partial,
    }
}

/// Buffered reader over the connection.
struct Conn<'a> {
    stream: &'a mut TcpStream,
    buf: Vec<u8>,
    pos: usize,
}

impl Conn<'_> {
    /// Reads more bytes; `Ok(false)` at end of stream.
    async fn fill(&mut self) -> std::io::Result<bool> {
        let mut chunk = [0u8; 16 * 1024];
        let n = self.stream.read(&mut chunk).await?;
        self.buf.extend_from_slice(&chunk[..n]);
        Ok(n > 0)
    }

    fn available(&self) -> &[u8] {
        &self.buf[self.pos..]
    }

    /// Reads one CRLF-terminated line (without the CRLF).
    async fn line(&mut self, max: usize) -> Result<Vec<u8>, String> {
        loop {
            if let Some(i) = find(self.available(), b"\r\n") {
                let line = self.available()[..i].to_vec();
                self.pos += i + 2;
                return Ok(line);
            }
            if self.available().len() > max {
                return Err("line too long".into());
            }
            match self.fill().await {
                Ok(true) => {}
                Ok(false) => return Err("connection closed mid-request".into()),
                Err(e) => return Err(format!("read error: {e}")),
            }
        }
    }

    async fn exact(&mut self, n: usize) -> Result<Vec<u8>, String> {
        while self.available().len() < n {
            match self.fill().await {
                Ok(true) => {}
                Ok(false) => return Err("connection closed mid-body".into()),
                Err(e) => return Err(format!("read error: {e}")),
            }
        }
        let out = self.available()[..n].to_vec();
        self.pos += n;
        Ok(out)
    }
}

fn find(hay: &[u8], needle: &[u8]) -> Option<usize> {
    hay.windows(needle.len()).position(|w| w == needle)
}

/// Reads one request: head up to `\r\n\r\n`, then the body by
/// `Content-Length` (or chunked transfer coding).
pub async fn read_request(stream: &mut TcpStream) -> Result<RawRequest, ReadError> {
    let mut conn = Conn {
        stream,
        buf: Vec::new(),
        pos: 0,
    };

    // Head.
    let head_end = loop {
        if let Some(i) = find(&conn.buf, b"\r\n\r\n") {
            break i;
        }
        if conn.buf.len() > MAX_HEAD {
            return Err(bad(431, "request head too large", None));
        }
        match conn.fill().await {
            Ok(true) => {}
            Ok(false) | Err(_) if conn.buf.is_empty() => return Err(ReadError::Closed),
            Ok(false) => return Err(bad(400, "connection closed inside the request head", None)),
            Err(e) => return Err(bad(400, format!("read error: {e}"), None)),
        }
    };
    let head = String::from_utf8_lossy(&conn.buf[..head_end]).into_owned();
    conn.pos = head_end + 4;

    let mut lines = head.split("\r\n");
    let request_line = lines.next().unwrap_or_default();
    let mut parts = request_line.split(' ').filter(|p| !p.is_empty());
    let mut req = RawRequest {
        method: parts.next().unwrap_or_default().to_string(),
        target: parts.next().unwrap_or_default().to_string(),
        ..RawRequest::default()
    };
    let version = parts.next().unwrap_or_default().to_string();
    let extra = parts.next().is_some();

    let mut header_error = None;
    for line in lines {
        match line.split_once(':') {
            Some((name, value)) if !name.is_empty() && !name.contains(char::is_whitespace) => {
                req.headers
                    .push((name.to_ascii_lowercase(), value.trim().to_string()));
            }
            _ => header_error = Some(format!("malformed header line {line:?}")),
        }
    }

    if req.method.is_empty() || req.target.is_empty() || extra || !version.starts_with("HTTP/1.") {
        return Err(bad(
            400,
            format!("malformed request line {request_line:?}"),
            Some(req),
        ));
    }
    if let Some(reason) = header_error {
        return Err(bad(400, reason, Some(req)));
    }

    let header = |name: &str| {
        req.headers
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.clone())
    };

    if header("expect").is_some_and(|v| v.eq_ignore_ascii_case("100-continue")) {
        let _ = conn.stream.write_all(b"HTTP/1.1 100 Continue\r\n\r\n").await;
    }

    let chunked = header("transfer-encoding").is_some_and(|v| v.to_ascii_lowercase().contains("chunked"));
    if chunked {
        let mut body = Vec::new();
        loop {
            let line = match conn.line(4096).await {
                Ok(l) => l,
                Err(e) => return Err(bad(400, e, Some(req))),
            };
            let line = String::from_utf8_lossy(&line).into_owned();
            let size_text = line.split(';').next().unwrap_or_default().trim();
            let Ok(size) = usize::from_str_radix(size_text, 16) else {
                return Err(bad(400, format!("bad chunk size {line:?}"), Some(req)));
            };
            if size == 0 {
                // Trailers until an empty line.
                loop {
                    match conn.line(MAX_HEAD).await {
                        Ok(l) if l.is_empty() => break,
                        Ok(_) => {}
                        Err(e) => return Err(bad(400, e, Some(req))),
                    }
                }
                break;
            }
            if body.len() + size > MAX_BODY {
                return Err(bad(413, "request body too large", Some(req)));
            }
            match conn.exact(size).await {
                Ok(data) => body.extend_from_slice(&data),
                Err(e) => return Err(bad(400, e, Some(req))),
            }
            match conn.exact(2).await {
                Ok(crlf) if crlf == b"\r\n" => {}
                Ok(_) => return Err(bad(400, "chunk not followed by CRLF", Some(req))),
                Err(e) => return Err(bad(400, e, Some(req))),
            }
        }
        req.body = body;
    } else if let Some(len) = header("content-length") {
        let Ok(len) = len.parse::<usize>() else {
            return Err(bad(400, format!("bad Content-Length {len:?}"), Some(req)));
        };
        if len > MAX_BODY {
            return Err(bad(413, "request body too large", Some(req)));
        }
        match conn.exact(len).await {
            Ok(body) => req.body = body,
            Err(e) => {
                req.body = conn.available().to_vec();
                return Err(bad(400, e, Some(req)));
            }
        }
    }
    Ok(req)
}

pub fn reason_phrase(status: u16) -> &'static str {
    match status {
        100 => "Continue",
        200 => "OK",
        400 => "Bad Request",
        401 => "Unauthorized",
        402 => "Payment Required",
        403 => "Forbidden",
        404 => "Not Found",
        405 => "Method Not Allowed",
        408 => "Request Timeout",
        409 => "Conflict",
        413 => "Payload Too Large",
        422 => "Unprocessable Entity",
        429 => "Too Many Requests",
        431 => "Request Header Fields Too Large",
        500 => "Internal Server Error",
        502 => "Bad Gateway",
        503 => "Service Unavailable",
        504 => "Gateway Timeout",
        529 => "Overloaded",
        _ => "Status",
    }
}

/// Writes a status line and headers (the caller's headers plus
/// `Connection: close`).
pub async fn write_head(
    stream: &mut TcpStream,
    status: u16,
    headers: &[(&str, String)],
) -> std::io::Result<()> {
    let mut head = format!("HTTP/1.1 {status} {}\r\n", reason_phrase(status));
    for (name, value) in headers {
        head.push_str(name);
        head.push_str(": ");
        head.push_str(value);
        head.push_str("\r\n");
    }
    head.push_str("Connection: close\r\n\r\n");
    stream.write_all(head.as_bytes()).await?;
    stream.flush().await
}

/// Writes a complete response with a `Content-Length` body, then shuts the
/// write side down.
pub async fn write_full(
    stream: &mut TcpStream,
    status: u16,
    headers: &[(&str, String)],
    content_type: &str,
    body: &str,
) -> std::io::Result<()> {
    let mut all: Vec<(&str, String)> = vec![
        ("Content-Type", content_type.to_string()),
        ("Content-Length", body.len().to_string()),
    ];
    all.extend(headers.iter().cloned());
    write_head(stream, status, &all).await?;
    stream.write_all(body.as_bytes()).await?;
    stream.flush().await?;
    stream.shutdown().await
}

/// Writes `data` as one chunk of a chunked body and flushes.
pub async fn write_chunk(stream: &mut TcpStream, data: &[u8]) -> std::io::Result<()> {
    if data.is_empty() {
        // An empty chunk would end the body.
        return Ok(());
    }
    let mut out = format!("{:x}\r\n", data.len()).into_bytes();
    out.extend_from_slice(data);
    out.extend_from_slice(b"\r\n");
    stream.write_all(&out).await?;
    stream.flush().await
}

/// Ends a chunked body and shuts the write side down.
pub async fn finish_chunks(stream: &mut TcpStream) -> std::io::Result<()> {
    stream.write_all(b"0\r\n\r\n").await?;
    stream.flush().await?;
    stream.shutdown().await
}
