//! Lines of JSON-RPC over the process's standard input and the claimed standard output.

use std::fs::File;
use std::io;

use futures::{Sink, Stream};
use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncWriteExt, BufReader};

/// The longest message a client may send (a prompt with embedded files): a longer line
/// is dropped as it is read (memory never grows past this) and stands as a line that is
/// not JSON, which the connection answers with a parse error and goes on.
pub const MAX_LINE: usize = 32 * 1024 * 1024;

/// What stands in for a dropped overlong line: not JSON, so it is answered as a parse
/// error and the sessions go on.
const DROPPED: &str = "(a message longer than the limit was dropped)";

/// The outgoing lines (each written whole, then flushed) and the incoming ones, read
/// from a copy of standard input.
pub fn stdio(
    out: File,
) -> io::Result<(
    impl Sink<String, Error = io::Error> + Send + 'static,
    impl Stream<Item = io::Result<String>> + Send + 'static,
)> {
    use std::os::fd::AsFd;
    let input = File::from(std::io::stdin().as_fd().try_clone_to_owned()?);
    Ok((
        writer(tokio::fs::File::from_std(out)),
        lines(tokio::fs::File::from_std(input), MAX_LINE),
    ))
}

fn writer(out: tokio::fs::File) -> impl Sink<String, Error = io::Error> + Send + 'static {
    futures::sink::unfold(out, |mut out, line: String| async move {
        let mut bytes = line.into_bytes();
        bytes.push(b'\n');
        out.write_all(&bytes).await?;
        out.flush().await?;
        Ok(out)
    })
}

/// `input`'s lines without their ends; a line longer than `limit` is read past and
/// stands as [`DROPPED`].
pub fn lines<R: AsyncRead + Send + Unpin + 'static>(
    input: R,
    limit: usize,
) -> impl Stream<Item = io::Result<String>> + Send + 'static {
    futures::stream::unfold(Some(BufReader::new(input)), move |reader| async move {
        let mut reader = reader?;
        match next_line(&mut reader, limit).await {
            Ok(Some(line)) => Some((Ok(line), Some(reader))),
            Ok(None) => None,
            Err(err) => Some((Err(err), None)),
        }
    })
}

async fn next_line<R: AsyncRead + Unpin>(
    reader: &mut BufReader<R>,
    limit: usize,
) -> io::Result<Option<String>> {
    let mut line = Vec::new();
    loop {
        let available = reader.fill_buf().await?;
        if available.is_empty() {
            // The end of input; a last line without its newline still counts.
            return if line.is_empty() {
                Ok(None)
            } else {
                text(line).map(Some)
            };
        }
        let (taken, done) = match memchr_newline(available) {
            Some(at) => (at + 1, true),
            None => (available.len(), false),
        };
        line.extend_from_slice(&available[..taken]);
        reader.consume(taken);
        if line.len() > limit + 1 {
            tracing::warn!("a message longer than {limit} bytes was dropped");
            if !done {
                skip_line(reader).await?;
            }
            return Ok(Some(DROPPED.to_string()));
        }
        if done {
            line.pop();
            if line.last() == Some(&b'\r') {
                line.pop();
            }
            return text(line).map(Some);
        }
    }
}

/// Reads past the rest of a line without keeping it.
async fn skip_line<R: AsyncRead + Unpin>(reader: &mut BufReader<R>) -> io::Result<()> {
    loop {
        let available = reader.fill_buf().await?;
        if available.is_empty() {
            return Ok(());
        }
        match memchr_newline(available) {
            Some(at) => {
                reader.consume(at + 1);
                return Ok(());
            }
            None => {
                let all = available.len();
                reader.consume(all);
            }
        }
    }
}

fn memchr_newline(bytes: &[u8]) -> Option<usize> {
    bytes.iter().position(|&byte| byte == b'\n')
}

fn text(line: Vec<u8>) -> io::Result<String> {
    String::from_utf8(line).map_err(|err| io::Error::new(io::ErrorKind::InvalidData, err))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)] // A test fails by panicking.
    use super::*;
    use futures::StreamExt;

    /// A line over the limit is read past and stands as a line that is not JSON: the
    /// connection answers it with a parse error and goes on (a fresh-eyes tester saw a
    /// 33 MB line end every session).
    #[tokio::test]
    async fn lines_are_split_and_an_overlong_one_is_dropped_and_reading_goes_on() {
        let input: &[u8] = b"{\"a\":1}\r\n{\"b\":2}\nlast";
        let read: Vec<String> = lines(input, 64).map(Result::unwrap).collect().await;
        assert_eq!(read, ["{\"a\":1}", "{\"b\":2}", "last"]);
        let long = format!("{}\nafter\n{}", "x".repeat(100_000), "y".repeat(200));
        let read: Vec<String> = lines(std::io::Cursor::new(long.into_bytes()), 64)
            .map(Result::unwrap)
            .collect()
            .await;
        assert_eq!(read, [DROPPED, "after", DROPPED]);
    }
}
