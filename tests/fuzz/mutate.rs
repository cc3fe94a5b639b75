//! The mutation engine every target shares: it edits valid seeds the way fuzzers do
//! (bit flips, truncation, splicing, duplication), inserts tokens that matter to parsers
//! and edits any JSON a line holds as JSON; and [`random_text`], text with the
//! characters layouts trip on.

use fastrand::Rng;
use serde_json::{Value, json};

/// Inputs never grow past this, so a run of duplications cannot eat the machine.
const MAX_INPUT: usize = 256 * 1024;

/// Tokens every parser here cares about.
const COMMON_TOKENS: &[&[u8]] = &[
    b"\r",
    b"\n",
    b"\r\n",
    b"\n\n",
    b"\r\r",
    b"\t",
    b" ",
    b"\0",
    b"data:",
    b"data: ",
    b"event: ",
    b":",
    b"{",
    b"}",
    b"[",
    b"]",
    b"\"",
    b"'",
    b"\\",
    b"\\u0000",
    b"\\ud800",
    b"\\uDFFF\\uD800",
    b",",
    b"#",
    b"-",
    b"|",
    b">",
    b"`",
    b"*",
    "é".as_bytes(),
    "e\u{301}".as_bytes(),
    "中文字".as_bytes(),
    "。".as_bytes(),
    "😀".as_bytes(),
    "👩\u{200d}👩\u{200d}👧".as_bytes(),
    "🇯🇵".as_bytes(),
    "\u{feff}".as_bytes(),
    "\u{200b}".as_bytes(),
    "\u{2028}".as_bytes(),
    "\u{1b}[31m".as_bytes(),
    "\u{1b}[0m".as_bytes(),
    "\u{1b}]8;;https://example.com\u{7}link\u{1b}]8;;\u{7}".as_bytes(),
    b"\xff",
    b"\xc3",
    b"\xe4\xb8",
    b"\xed\xa0\x80",
    b"\xf4\x90\x80\x80",
    b"\xc0\xaf",
    b"0",
    b"-1",
    b"4096",
    b"18446744073709551615",
    b"18446744073709551616",
    b"-9223372036854775809",
    b"1e309",
    b"-0.0",
    b"99999999999999999999999999999999999999999999999999999999999999999999999999999",
    b"null",
    b"true",
];

/// Openers (and their closers) the nesting edit repeats.
const NESTINGS: &[(&str, &str)] = &[
    ("[", "]"),
    ("{\"a\":", "}"),
    ("{a: ", "}"),
    ("> ", ""),
    ("- ", ""),
    ("  ", ""),
    ("1. ", ""),
    ("*", "*"),
    ("`", "`"),
    ("[", "](u)"),
];

/// Edits seeds into fuzz inputs: generic byte edits, tokens from a dictionary, and JSON
/// edits of any JSON object or array a line holds.
pub(crate) struct Mutator<'a> {
    pub(crate) seeds: &'a [Vec<u8>],
    pub(crate) dictionary: &'a [&'a [u8]],
    /// Eighths of the edits that are JSON edits, for inputs made of JSON lines: byte edits
    /// mostly break a line, and loaders stop reading at the first broken one.
    pub(crate) json_eighths: u8,
}

impl Mutator<'_> {
    /// A seed with one to eight edits.
    pub(crate) fn mutated(&self, rng: &mut Rng) -> Vec<u8> {
        let mut input = self.seeds[rng.usize(..self.seeds.len())].clone();
        let most = if rng.bool() { 2 } else { 8 };
        let edits = 1 + rng.usize(..most);
        for _ in 0..edits {
            if rng.u8(..8) >= self.json_eighths || !edit_json_line(rng, &mut input) {
                self.edit(rng, &mut input);
            }
            input.truncate(MAX_INPUT);
        }
        input
    }

    fn edit(&self, rng: &mut Rng, input: &mut Vec<u8>) {
        let len = input.len();
        match rng.u8(..12) {
            0 if len > 0 => {
                let at = rng.usize(..len);
                input[at] ^= 1 << rng.u8(..8);
            }
            1 if len > 0 => {
                let at = rng.usize(..len);
                input[at] = rng.u8(..);
            }
            2 => input.truncate(rng.usize(..=len)),
            3 => {
                let (start, end) = span(rng, len);
                input.drain(start..end);
            }
            4 => {
                // Duplicate a piece (a line, an event, a record) once or many times.
                let (start, end) = span(rng, len);
                let times = if rng.u8(..8) == 0 { rng.usize(1..200) } else { 1 };
                let piece = input[start..end].repeat(times);
                let at = position(rng, len);
                input.splice(at..at, piece);
            }
            5 => {
                // Splice in a piece of another seed, or replace the tail with one.
                let other = &self.seeds[rng.usize(..self.seeds.len())];
                let (start, end) = span(rng, other.len());
                let at = position(rng, len);
                if rng.bool() {
                    input.truncate(at);
                    input.extend_from_slice(&other[start..]);
                } else {
                    input.splice(at..at, other[start..end].iter().copied());
                }
            }
            6 | 7 => {
                let token = if rng.bool() && !self.dictionary.is_empty() {
                    self.dictionary[rng.usize(..self.dictionary.len())]
                } else {
                    COMMON_TOKENS[rng.usize(..COMMON_TOKENS.len())]
                };
                let at = position(rng, len);
                input.splice(at..at, token.iter().copied());
            }
            8 => replace_number(rng, input),
            9 => {
                let (open, close) = NESTINGS[rng.usize(..NESTINGS.len())];
                let depth = if rng.u8(..8) == 0 {
                    rng.usize(1..20_000)
                } else {
                    rng.usize(1..100)
                };
                let at = position(rng, len);
                let mut nested = open.repeat(depth).into_bytes();
                if rng.bool() {
                    nested.extend_from_slice(b"x");
                    nested.extend_from_slice(close.repeat(depth).as_bytes());
                }
                input.splice(at..at, nested);
            }
            _ => {
                if !edit_json_line(rng, input) {
                    let token = COMMON_TOKENS[rng.usize(..COMMON_TOKENS.len())];
                    let at = position(rng, len);
                    input.splice(at..at, token.iter().copied());
                }
            }
        }
    }
}

/// A random range of `0..len`, usually short.
fn span(rng: &mut Rng, len: usize) -> (usize, usize) {
    let start = rng.usize(..=len);
    let room = len - start;
    let longest = if rng.u8(..4) == 0 { room } else { room.min(64) };
    (start, start + rng.usize(..=longest))
}

/// A random place in an input of `len` bytes, at either end one time in four.
fn position(rng: &mut Rng, len: usize) -> usize {
    match rng.u8(..8) {
        0 => 0,
        1 => len,
        _ => rng.usize(..=len),
    }
}

/// Replaces a run of digits with an interesting number.
fn replace_number(rng: &mut Rng, input: &mut Vec<u8>) {
    let digits: Vec<usize> = (0..input.len()).filter(|&i| input[i].is_ascii_digit()).collect();
    if digits.is_empty() {
        return;
    }
    let mut start = digits[rng.usize(..digits.len())];
    while start > 0 && input[start - 1].is_ascii_digit() {
        start -= 1;
    }
    let mut end = start;
    while end < input.len() && input[end].is_ascii_digit() {
        end += 1;
    }
    let number = interesting_number(rng).to_string();
    input.splice(start..end, number.into_bytes());
}

fn interesting_number(rng: &mut Rng) -> Value {
    match rng.u8(..14) {
        0 => json!(0),
        1 => json!(1),
        2 => json!(-1),
        3 => json!(4095),
        4 => json!(4096),
        5 => json!(u32::MAX),
        6 => json!(u64::MAX),
        7 => json!(i64::MIN),
        8 => json!(1e300),
        9 => json!(0.5),
        10 => json!(18_446_744_073_709_551_616.0_f64),
        11 => json!(u64::MAX - 1),
        _ => json!(rng.u64(..24)),
    }
}

/// Edits one JSON object or array found on a line (from its first `{` or `[` to the end
/// of the line) as JSON, then writes it back. False when no line held JSON.
fn edit_json_line(rng: &mut Rng, input: &mut Vec<u8>) -> bool {
    let mut lines: Vec<(usize, usize)> = Vec::new();
    let mut start = 0;
    for (i, byte) in input.iter().enumerate() {
        if *byte == b'\n' {
            lines.push((start, i));
            start = i + 1;
        }
    }
    lines.push((start, input.len()));
    for _ in 0..4 {
        let (line_start, line_end) = lines[rng.usize(..lines.len())];
        let Some(offset) = input[line_start..line_end]
            .iter()
            .position(|b| *b == b'{' || *b == b'[')
        else {
            continue;
        };
        let json_start = line_start + offset;
        let Ok(mut value) = serde_json::from_slice::<Value>(&input[json_start..line_end]) else {
            continue;
        };
        for _ in 0..1 + rng.usize(..3) {
            edit_json(rng, &mut value);
        }
        input.splice(json_start..line_end, value.to_string().into_bytes());
        return true;
    }
    false
}

fn count_nodes(value: &Value) -> usize {
    1 + match value {
        Value::Array(items) => items.iter().map(count_nodes).sum(),
        Value::Object(map) => map.values().map(count_nodes).sum(),
        _ => 0,
    }
}

/// The `n`th node of `value` in depth-first order.
fn nth_node<'v>(value: &'v mut Value, n: &mut usize) -> Option<&'v mut Value> {
    if *n == 0 {
        return Some(value);
    }
    *n -= 1;
    match value {
        Value::Array(items) => items.iter_mut().find_map(|item| nth_node(item, n)),
        Value::Object(map) => map.values_mut().find_map(|item| nth_node(item, n)),
        _ => None,
    }
}

/// One JSON-aware edit of a random node: a wrong type, an interesting number, a deleted
/// or duplicated member, a huge string, deep nesting.
fn edit_json(rng: &mut Rng, value: &mut Value) {
    let mut n = rng.usize(..count_nodes(value));
    let Some(node) = nth_node(value, &mut n) else {
        return;
    };
    match rng.u8(..9) {
        0 | 1 => *node = interesting_number(rng),
        2 => {
            *node = match rng.u8(..6) {
                0 => Value::Null,
                1 => json!(true),
                2 => json!(""),
                3 => json!([]),
                4 => json!({}),
                _ => json!("text"),
            }
        }
        3 => match node {
            Value::Object(map) if !map.is_empty() => {
                let key = map
                    .keys()
                    .nth(rng.usize(..map.len()))
                    .cloned()
                    .unwrap_or_default();
                map.remove(&key);
            }
            Value::Array(items) if !items.is_empty() => {
                items.remove(rng.usize(..items.len()));
            }
            _ => *node = Value::Null,
        },
        4 => match node {
            Value::Array(items) if !items.is_empty() => {
                let copy = items[rng.usize(..items.len())].clone();
                items.insert(rng.usize(..=items.len()), copy);
            }
            Value::Object(map) => {
                map.insert("unexpected".into(), interesting_number(rng));
            }
            _ => {
                let copy = node.take();
                *node = json!([copy.clone(), copy]);
            }
        },
        5 => {
            for _ in 0..rng.usize(1..200) {
                *node = json!([node.take()]);
            }
        }
        6 => {
            let longest = if rng.u8(..8) == 0 { 5000 } else { 200 };
            *node = json!("é中😀\n\"\\\u{0}".repeat(rng.usize(..longest)));
        }
        7 => {
            if let Value::String(text) = node {
                let at = text
                    .char_indices()
                    .map(|(i, _)| i)
                    .nth(rng.usize(..=text.chars().count()));
                let piece = [
                    "\n", "\r", "\n\n", "data: ", "\u{0}", "中", "😀", "\"", "\\", "```",
                ][rng.usize(..10)];
                text.insert_str(at.unwrap_or(text.len()), piece);
            } else {
                *node = json!("a string");
            }
        }
        _ => {
            if let Some(number) = node.as_i64() {
                *node = json!(number.saturating_add(rng.i64(-2..=2)));
            } else {
                *node = interesting_number(rng);
            }
        }
    }
}

/// Text with the characters layouts trip on.
pub(crate) fn random_text(rng: &mut Rng) -> String {
    const WORDS: &[&str] = &[
        "hello",
        "world",
        "中文",
        "字",
        "😀",
        "e\u{301}",
        "\t",
        "\n",
        "```",
        "| a |",
        "\u{1b}[31m",
        "…",
        "  ",
        "**bold**",
        "[^1]",
        "- item",
        "> quote",
        "\u{feff}",
        "\r\n",
        "{\"a\":1}",
    ];
    (0..rng.usize(..12))
        .map(|_| WORDS[rng.usize(..WORDS.len())])
        .collect::<Vec<_>>()
        .join(if rng.bool() { " " } else { "" })
}
