//! The workbench's bounded copy of a call's streamed output: the first and the last
//! bytes up to a limit, and a count of what was dropped between them, so a command that
//! prints without end never grows the workbench's memory.

use std::collections::VecDeque;

/// Output kept per finished call once its detail view no longer needs the whole stream.
pub const FINISHED_OUTPUT_BYTES: usize = 16 * 1024;

/// At most `limit` bytes of output: half from its start, half from its end.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct OutputBuffer {
    limit: usize,
    head: Vec<u8>,
    tail: VecDeque<u8>,
    dropped: u64,
}

impl OutputBuffer {
    pub fn new(limit: usize) -> Self {
        Self {
            limit: limit.max(2),
            ..Self::default()
        }
    }

    /// A buffer holding a recorded call's kept output; it keeps at least `limit` bytes.
    pub fn recorded(limit: usize, head: &str, tail: &str, dropped: u64) -> Self {
        Self {
            limit: limit.max(2).max(2 * head.len().max(tail.len())),
            head: head.as_bytes().to_vec(),
            tail: tail.bytes().collect(),
            dropped,
        }
    }

    pub fn push(&mut self, mut bytes: &[u8]) {
        let head_limit = self.limit / 2;
        let take = head_limit.saturating_sub(self.head.len()).min(bytes.len());
        self.head.extend_from_slice(&bytes[..take]);
        bytes = &bytes[take..];
        let tail_limit = self.limit - head_limit;
        if bytes.len() >= tail_limit {
            // Only the end of this piece can stay.
            self.dropped += (self.tail.len() + bytes.len() - tail_limit) as u64;
            self.tail.clear();
            self.tail.extend(&bytes[bytes.len() - tail_limit..]);
            return;
        }
        self.tail.extend(bytes);
        let excess = self.tail.len().saturating_sub(tail_limit);
        self.tail.drain(..excess);
        self.dropped += excess as u64;
    }

    /// Keeps at most `limit` bytes from now on (its start's and its end's halves) and
    /// frees the rest.
    pub fn shrink(&mut self, limit: usize) {
        let limit = limit.max(2);
        if limit >= self.limit {
            return;
        }
        let head_keep = (limit / 2).min(self.head.len());
        let tail_keep = (limit - limit / 2).min(self.tail.len());
        self.dropped += (self.head.len() - head_keep + self.tail.len() - tail_keep) as u64;
        self.head.truncate(head_keep);
        self.head.shrink_to_fit();
        self.tail.drain(..self.tail.len() - tail_keep);
        self.tail.shrink_to_fit();
        self.limit = limit;
    }

    pub fn limit(&self) -> usize {
        self.limit
    }

    /// Every byte pushed so far, kept or not.
    pub fn total_bytes(&self) -> u64 {
        (self.head.len() + self.tail.len()) as u64 + self.dropped
    }

    pub fn is_empty(&self) -> bool {
        self.head.is_empty() && self.tail.is_empty()
    }

    /// The kept text (lossy UTF-8), with a marker where bytes were dropped.
    pub fn text(&self) -> String {
        let head = String::from_utf8_lossy(&self.head);
        let tail: Vec<u8> = self.tail.iter().copied().collect();
        let tail = String::from_utf8_lossy(&tail);
        match self.dropped {
            0 => format!("{head}{tail}"),
            dropped => format!("{head}\n[... {dropped} bytes of output cut ...]\n{tail}"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_the_start_and_the_end_and_counts_the_rest() {
        let mut buffer = OutputBuffer::new(8);
        buffer.push(b"abc");
        buffer.push(b"defghijklmnop");
        assert_eq!(buffer.text(), "abcd\n[... 8 bytes of output cut ...]\nmnop");
        buffer.shrink(4);
        assert_eq!(buffer.text(), "ab\n[... 12 bytes of output cut ...]\nop");
        let mut small = OutputBuffer::new(100);
        small.push(b"whole");
        assert_eq!(small.text(), "whole");
        assert!(OutputBuffer::new(0).is_empty());
    }

    #[test]
    fn a_recorded_output_is_shown_whole() {
        let buffer = OutputBuffer::recorded(4, "head-part", "tail-part", 7);
        assert_eq!(
            buffer.text(),
            "head-part\n[... 7 bytes of output cut ...]\ntail-part"
        );
    }
}
