//! Lines of JSON-RPC over the process's standard input and the claimed standard output.

use std::fs::File;
use std::io;

use futures::{Sink, Stream};
use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncWriteExt, BufReader};

/// The longest message a client may send (a prompt with embedded files): a longer line
/// ends the connection instead of growing memory without bound.
pub const MAX_LINE: usize = 32 * 1024 * 1024;

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

/// `input`'s lines without their ends; a line longer than `limit` is an error.
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
            return Err(io::Error::new(
                io::ErrorKind::InvalidData,
                format!("a message longer than {limit} bytes"),
            ));
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

    #[tokio::test]
    async fn lines_are_split_and_an_overlong_one_ends_the_stream() {
        let input: &[u8] = b"{\"a\":1}\r\n{\"b\":2}\nlast";
        let read: Vec<String> = lines(input, 64).map(Result::unwrap).collect().await;
        assert_eq!(read, ["{\"a\":1}", "{\"b\":2}", "last"]);
        let long = format!("{}\nafter\n", "x".repeat(100));
        let read: Vec<io::Result<String>> =
            lines(std::io::Cursor::new(long.into_bytes()), 64).collect().await;
        assert_eq!(read.len(), 1);
        assert_eq!(
            read[0].as_ref().err().map(ToString::to_string),
            Some("a message longer than 64 bytes".to_string())
        );
    }
}
