//! Keeping tool output within bounds: the head and the tail survive, the middle is
//! replaced by a marker saying how much was cut.

/// What is kept of a finished call's live output, in the timeline and in the session
/// log (head and tail); the result the model got is kept whole besides.
pub const FINISHED_OUTPUT_BYTES: usize = 16 * 1024;

/// Collects a byte stream of any length in bounded memory: the first and last
/// `limit / 2` bytes are kept, the count of dropped bytes in between is remembered.
#[derive(Debug)]
pub struct HeadTailBuffer {
    limit: usize,
    head: Vec<u8>,
    tail: std::collections::VecDeque<u8>,
    dropped: u64,
}

impl HeadTailBuffer {
    pub fn new(limit: usize) -> Self {
        Self {
            limit: limit.max(2),
            head: Vec::new(),
            tail: std::collections::VecDeque::new(),
            dropped: 0,
        }
    }

    pub fn push(&mut self, mut bytes: &[u8]) {
        let head_room = self.limit / 2 - self.head.len().min(self.limit / 2);
        if head_room > 0 {
            let take = head_room.min(bytes.len());
            self.head.extend_from_slice(&bytes[..take]);
            bytes = &bytes[take..];
        }
        let tail_limit = self.limit - self.limit / 2;
        if bytes.len() >= tail_limit {
            self.dropped += (self.tail.len() + bytes.len() - tail_limit) as u64;
            self.tail.clear();
            self.tail.extend(&bytes[bytes.len() - tail_limit..]);
            return;
        }
        self.tail.extend(bytes);
        let excess = self.tail.len().saturating_sub(tail_limit);
        if excess > 0 {
            self.tail.drain(..excess);
            self.dropped += excess as u64;
        }
    }

    /// Bytes pushed but not kept (between the head and the tail).
    pub fn dropped(&self) -> u64 {
        self.dropped
    }

    pub fn limit(&self) -> usize {
        self.limit
    }

    /// Every byte pushed so far, kept or not.
    pub fn total_bytes(&self) -> u64 {
        (self.head.len() + self.tail.len()) as u64 + self.dropped
    }

    /// Keeps at most `limit` bytes from now on: the head's first half and the tail's
    /// last half of that; what goes is counted as dropped. Frees the memory.
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

    pub fn is_empty(&self) -> bool {
        self.head.is_empty() && self.tail.is_empty()
    }

    /// The kept head and tail as text (lossy UTF-8) and the bytes dropped between them:
    /// what the session log records of a call's output.
    pub fn parts(&self) -> (String, String, u64) {
        let tail: Vec<u8> = self.tail.iter().copied().collect();
        (
            String::from_utf8_lossy(&self.head).into_owned(),
            String::from_utf8_lossy(&tail).into_owned(),
            self.dropped,
        )
    }

    /// A buffer holding what [`Self::parts`] gave (read back from the session log); it
    /// keeps at least `limit` bytes.
    pub fn from_parts(limit: usize, head: &str, tail: &str, dropped: u64) -> Self {
        let limit = limit.max(2).max(2 * head.len().max(tail.len()));
        Self {
            limit,
            head: head.as_bytes().to_vec(),
            tail: tail.bytes().collect(),
            dropped,
        }
    }

    /// The kept text (lossy UTF-8), with a marker where bytes were dropped.
    pub fn text(&self) -> String {
        let head = String::from_utf8_lossy(&self.head);
        let tail: Vec<u8> = self.tail.iter().copied().collect();
        let tail = String::from_utf8_lossy(&tail);
        if self.dropped == 0 {
            return format!("{head}{tail}");
        }
        format!("{head}\n[... {} bytes of output cut ...]\n{tail}", self.dropped)
    }
}

/// Caps `text` at about `limit` bytes, keeping head and tail on character boundaries.
pub fn cap_text(text: &str, limit: usize) -> String {
    if text.len() <= limit {
        return text.to_string();
    }
    let half = limit / 2;
    let mut head_end = half;
    while !text.is_char_boundary(head_end) {
        head_end -= 1;
    }
    let mut tail_start = text.len() - half;
    while !text.is_char_boundary(tail_start) {
        tail_start += 1;
    }
    let cut = tail_start - head_end;
    format!(
        "{}\n[... {cut} bytes cut ...]\n{}",
        &text[..head_end],
        &text[tail_start..]
    )
}

/// Plain text, so every front end shows a line the same way.
pub use miniagent_text::preview_line;

/// Words that mark the line of a failed command's output that says what went wrong.
const ERROR_WORDS: [&str; 9] = [
    "error",
    "fatal",
    "failed",
    "cannot",
    "can't",
    "not found",
    "no such",
    "denied",
    "panicked",
];

/// One line for a failed call: how it ended (our closing marker: `exit code 3`,
/// `killed by signal 9`, `timed out after 120 s`) and the line of its output, stderr
/// first, that says what went wrong, shortened to `max_chars` characters.
pub fn failure_line(text: &str, max_chars: usize) -> String {
    let is_marker = |line: &str| line.starts_with('[') && line.ends_with(']');
    let lines: Vec<&str> = text.lines().map(str::trim).filter(|l| !l.is_empty()).collect();
    let status = lines
        .iter()
        .rev()
        .find(|line| is_marker(line) && **line != "[stderr]")
        .map(|marker| {
            let inner = &marker[1..marker.len() - 1];
            let inner = inner.split(';').next().unwrap_or(inner).trim();
            match inner.strip_prefix("exit code: ") {
                Some(code) => format!("exit code {code}"),
                None => inner.to_string(),
            }
        });
    // Past the `[stderr]` marker when there is one: that is where a failure explains itself.
    let from = lines
        .iter()
        .position(|line| *line == "[stderr]")
        .map_or(0, |at| at + 1);
    let candidates: Vec<&str> = lines[from..].iter().copied().filter(|l| !is_marker(l)).collect();
    let says_why = candidates
        .iter()
        .find(|line| {
            let lower = line.to_lowercase();
            ERROR_WORDS.iter().any(|word| lower.contains(word))
        })
        .or(candidates.first());
    let line = match (status, says_why) {
        (Some(status), Some(why)) => format!("{status} · {why}"),
        (Some(status), None) => status,
        (None, Some(why)) => why.to_string(),
        (None, None) => String::new(),
    };
    preview_line(&line, max_chars)
}

/// Characters of an argument summary: wider than any terminal line it is drawn on, and
/// small beside the arguments every request event already carries.
const SUMMARY_CHARS: usize = 500;

/// A call's arguments in a few words: the command, the path, or compact JSON (cut at
/// [`SUMMARY_CHARS`]).
pub fn summarize_arguments(arguments: &serde_json::Value) -> String {
    let whole = ["command", "path", "bash_id", "task", "skill_name", "content"]
        .into_iter()
        .find_map(|key| arguments.get(key).and_then(serde_json::Value::as_str))
        .map(|text| text.lines().next().unwrap_or("").to_string())
        .unwrap_or_else(|| match arguments.as_object() {
            Some(object) if object.is_empty() => String::new(),
            _ => arguments.to_string(),
        });
    match whole.char_indices().nth(SUMMARY_CHARS) {
        Some((cut, _)) => format!("{}…", &whole[..cut]),
        None => whole,
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn argument_summaries_are_one_line() {
        use super::summarize_arguments;
        use serde_json::json;
        assert_eq!(
            summarize_arguments(&json!({"command": "ls -la\nsecond"})),
            "ls -la"
        );
        assert_eq!(
            summarize_arguments(&json!({"path": "src/main.rs", "offset": 3})),
            "src/main.rs"
        );
        assert_eq!(summarize_arguments(&json!({})), "");
        // A huge one-line command is cut: every request event and log line carries it.
        let long = summarize_arguments(&json!({"command": "é".repeat(100_000)}));
        assert_eq!(long, format!("{}…", "é".repeat(500)));
    }

    #[test]
    fn a_failure_line_says_how_it_ended_and_what_went_wrong() {
        let cases = [
            (
                "building\n[stderr]\nTraceback (most recent call last):\n  File \"x\", line 1\nNameError: name 'x' is not defined\n[exit code: 1]",
                "exit code 1 · NameError: name 'x' is not defined",
            ),
            (
                "[stderr]\nls: cannot access 'nope': No such file or directory\n[exit code: 2]",
                "exit code 2 · ls: cannot access 'nope': No such file or directory",
            ),
            ("sleeping\n[killed by signal 9]", "killed by signal 9 · sleeping"),
            (
                "[timed out after 120 s (120.0 s elapsed); the command and its children were killed]",
                "timed out after 120 s (120.0 s elapsed)",
            ),
            ("only stdout\n[exit code: 4]", "exit code 4 · only stdout"),
            ("file not found: a.txt", "file not found: a.txt"),
            ("", ""),
        ];
        for (text, line) in cases {
            assert_eq!(failure_line(text, 200), line, "{text}");
        }
        assert_eq!(
            failure_line("[exit code: 1]\n[stderr]\nerror: é", 12),
            "exit code 1…"
        );
    }

    #[test]
    fn shrinking_keeps_head_and_tail_and_counts_the_rest() {
        let mut buffer = HeadTailBuffer::new(1000);
        let text: String = (0..300).map(|n| format!("{n:03}")).collect();
        buffer.push(text.as_bytes());
        assert_eq!(buffer.total_bytes(), 900);
        buffer.shrink(10);
        assert_eq!(buffer.total_bytes(), 900);
        assert_eq!(buffer.text(), "00000\n[... 890 bytes of output cut ...]\n98299");
        buffer.push(b"ab");
        assert_eq!(buffer.total_bytes(), 902);
        assert!(buffer.text().ends_with("299ab"));
    }

    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn buffer_keeps_head_and_tail_in_bounded_memory() {
        let mut buffer = HeadTailBuffer::new(10);
        for chunk in ["abc", "defgh", "ijklmnop", "qrstuvwxyz"] {
            buffer.push(chunk.as_bytes());
        }
        assert_eq!(buffer.text(), "abcde\n[... 16 bytes of output cut ...]\nvwxyz");
        let mut small = HeadTailBuffer::new(100);
        small.push(b"hello ");
        small.push(b"world");
        assert_eq!(small.text(), "hello world");
    }

    #[test]
    fn cap_text_respects_char_boundaries() {
        let text = "日本語のテキスト".repeat(10);
        let capped = cap_text(&text, 20);
        assert!(capped.starts_with("日本語"), "{capped}");
        assert!(capped.contains("bytes cut"));
        assert_eq!(cap_text("short", 20), "short");
    }
}
