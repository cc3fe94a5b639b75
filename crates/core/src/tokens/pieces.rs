//! Counting ASCII text without the tokenizer's regex engine.
//!
//! tiktoken splits text into pieces with a regex (letters with one leading character,
//! runs of at most three digits, punctuation, whitespace), then byte-pair-encodes each
//! piece. The regex has a look-ahead, so it runs in a backtracking engine, and that is
//! most of the cost: about 5 ms for 30 KB of `seq` output. For ASCII the same split is a
//! few comparisons per byte, written out here for both encodings, rule by rule.
//!
//! A piece's token count is then the tokenizer's count of that piece alone: each piece
//! is exactly what the regex matches at its start, so counting it alone matches it whole
//! again. Counts of short pieces are cached per thread; text is mostly the same few
//! thousand pieces (words, digit groups, indentation), so most pieces cost one lookup.
//!
//! Text that is not all ASCII is cut where a piece always ends (after a line feed that
//! neither a space nor `/` follows): ASCII parts go this way, the rest through the regex.

use std::cell::RefCell;

use rustc_hash::FxHashMap;

use super::Encoding;

/// One ASCII byte's class, as the pieces' rules see it.
fn is_letter(byte: u8) -> bool {
    byte.is_ascii_alphabetic()
}

fn is_digit(byte: u8) -> bool {
    byte.is_ascii_digit()
}

/// `\s` of the regex: Unicode White_Space, which in ASCII includes the vertical tab
/// (`u8::is_ascii_whitespace` does not).
fn is_space(byte: u8) -> bool {
    matches!(byte, b' ' | b'\t' | b'\n' | 0x0b | 0x0c | b'\r')
}

fn is_newline(byte: u8) -> bool {
    matches!(byte, b'\r' | b'\n')
}

/// `[^\s\p{L}\p{N}]`: neither space nor letter nor digit.
fn is_punctuation(byte: u8) -> bool {
    !is_space(byte) && !is_letter(byte) && !is_digit(byte)
}

/// `[^\r\n\p{L}\p{N}]`: the one character a run of letters may start with.
fn may_lead_letters(byte: u8) -> bool {
    !is_newline(byte) && !is_letter(byte) && !is_digit(byte)
}

/// The end of the run of bytes from `from` that `class` accepts.
fn run_end(text: &[u8], from: usize, class: impl Fn(u8) -> bool) -> usize {
    text[from..]
        .iter()
        .position(|&byte| !class(byte))
        .map_or(text.len(), |offset| from + offset)
}

/// The length of the contraction (`'s`, `'t`, `'re`, `'ve`, `'m`, `'ll`, `'d`, any
/// case) at `at`, if there is one.
fn contraction(text: &[u8], at: usize) -> Option<usize> {
    if text.get(at) != Some(&b'\'') {
        return None;
    }
    let first = text.get(at + 1)?.to_ascii_lowercase();
    if matches!(first, b's' | b't' | b'm' | b'd') {
        return Some(2);
    }
    let second = text.get(at + 2)?.to_ascii_lowercase();
    matches!((first, second), (b'r', b'e') | (b'v', b'e') | (b'l', b'l')).then_some(3)
}

/// Where the letters of a letter piece start, if one starts at `at`: at `at`, or after
/// the one character that may lead them.
fn letters_start(text: &[u8], at: usize) -> Option<usize> {
    let byte = text[at];
    if is_letter(byte) {
        Some(at)
    } else if may_lead_letters(byte) && text.get(at + 1).copied().is_some_and(is_letter) {
        Some(at + 1)
    } else {
        None
    }
}

/// ` ?[^\s\p{L}\p{N}]+` then line breaks, and for o200k (`slashes`) slashes among them:
/// `!\n//` is one o200k piece.
fn punctuation_end(text: &[u8], at: usize, slashes: bool) -> Option<usize> {
    let from = if text[at] == b' ' { at + 1 } else { at };
    if !text.get(from).copied().is_some_and(is_punctuation) {
        return None;
    }
    let end = run_end(text, from + 1, is_punctuation);
    Some(run_end(text, end, |byte| {
        is_newline(byte) || (slashes && byte == b'/')
    }))
}

/// The last line break in `text[from..to]`, if any.
fn last_newline(text: &[u8], from: usize, to: usize) -> Option<usize> {
    text[from..to]
        .iter()
        .rposition(|&byte| is_newline(byte))
        .map(|offset| from + offset)
}

/// The end of the cl100k piece that starts at `at`. Its pattern, rule by rule:
/// `'(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?+\p{L}++|\p{N}{1,3}+|
/// ?[^\s\p{L}\p{N}]++[\r\n]*+|\s++$|\s*[\r\n]|\s+(?!\S)|\s`
fn cl100k_piece_end(text: &[u8], at: usize) -> usize {
    if let Some(length) = contraction(text, at) {
        return at + length;
    }
    if let Some(start) = letters_start(text, at) {
        return run_end(text, start, is_letter);
    }
    if is_digit(text[at]) {
        return run_end(text, at, is_digit).min(at + 3);
    }
    if let Some(end) = punctuation_end(text, at, false) {
        return end;
    }
    // Only whitespace is left.
    let spaces_end = run_end(text, at, is_space);
    if spaces_end == text.len() {
        return spaces_end;
    }
    if let Some(newline) = last_newline(text, at, spaces_end) {
        return newline + 1;
    }
    if spaces_end - at >= 2 {
        // All but the last space, which goes with what follows it.
        return spaces_end - 1;
    }
    at + 1
}

/// The end of the o200k piece that starts at `at`. Its pattern, rule by rule:
/// `[^\r\n\p{L}\p{N}]?[\p{Lu}…]*[\p{Ll}…]+(contraction)?|[^\r\n\p{L}\p{N}]?[\p{Lu}…]+[\p{Ll}…]*(contraction)?|
/// \p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+`
fn o200k_piece_end(text: &[u8], at: usize) -> usize {
    if let Some(start) = letters_start(text, at) {
        // Capitals then small letters (the first form), else capitals alone (the second).
        let capitals_end = run_end(text, start, |byte| byte.is_ascii_uppercase());
        let end = run_end(text, capitals_end, |byte| byte.is_ascii_lowercase());
        return end + contraction(text, end).unwrap_or(0);
    }
    if is_digit(text[at]) {
        return run_end(text, at, is_digit).min(at + 3);
    }
    if let Some(end) = punctuation_end(text, at, true) {
        return end;
    }
    let spaces_end = run_end(text, at, is_space);
    if let Some(newline) = last_newline(text, at, spaces_end) {
        return newline + 1;
    }
    if spaces_end == text.len() || spaces_end - at < 2 {
        return spaces_end;
    }
    spaces_end - 1
}

/// The pieces of ASCII `text` under `encoding`, in order.
pub(super) fn ascii_pieces(text: &[u8], encoding: Encoding) -> impl Iterator<Item = &[u8]> {
    let piece_end = match encoding {
        Encoding::Cl100kBase => cl100k_piece_end,
        Encoding::O200kBase => o200k_piece_end,
    };
    let mut at = 0;
    std::iter::from_fn(move || {
        if at >= text.len() {
            return None;
        }
        let start = at;
        at = piece_end(text, start);
        Some(&text[start..at])
    })
}

/// Pieces longer than this are counted each time, not cached.
const CACHED_PIECE_BYTES: usize = 32;
/// A thread's cache is emptied when it holds this many pieces (about a megabyte).
const CACHED_PIECES: usize = 1 << 14;

thread_local! {
    /// Token counts of pieces, per encoding.
    static PIECE_COUNTS: RefCell<[FxHashMap<Box<[u8]>, u32>; 2]> = RefCell::default();
}

/// Tokens of ASCII `text`: split as the regex would, each piece counted by `count_piece`
/// (the tokenizer on that piece alone) or taken from the cache.
pub(super) fn count_ascii(text: &str, encoding: Encoding, count_piece: impl Fn(&str) -> u64) -> u64 {
    debug_assert!(text.is_ascii());
    PIECE_COUNTS.with(|cell| {
        let Ok(mut caches) = cell.try_borrow_mut() else {
            return ascii_pieces(text.as_bytes(), encoding)
                .map(|piece| count_piece(as_str(piece)))
                .sum();
        };
        let cache = &mut caches[encoding as usize];
        let mut total = 0;
        for piece in ascii_pieces(text.as_bytes(), encoding) {
            if piece.len() > CACHED_PIECE_BYTES {
                total += count_piece(as_str(piece));
                continue;
            }
            if let Some(&count) = cache.get(piece) {
                total += u64::from(count);
                continue;
            }
            let count = count_piece(as_str(piece));
            if cache.len() >= CACHED_PIECES {
                cache.clear();
            }
            cache.insert(piece.into(), u32::try_from(count).unwrap_or(u32::MAX));
            total += count;
        }
        total
    })
}

/// A piece of ASCII text as text (pieces of ASCII are ASCII, so always valid).
fn as_str(piece: &[u8]) -> &str {
    std::str::from_utf8(piece).unwrap_or_default()
}

/// Cuts `text` where every piece ends: after a line feed followed by something other
/// than whitespace or `/`. No rule of either pattern matches across such a point
/// (letters and digits exclude line feeds, punctuation takes only line breaks and, in
/// o200k, slashes after itself, and whitespace ends before the non-space), and none
/// looks behind, so counting the parts separately counts the whole.
pub(super) fn split_at_lines(text: &str) -> impl Iterator<Item = &str> {
    let bytes = text.as_bytes();
    let mut start = 0;
    std::iter::from_fn(move || {
        if start >= bytes.len() {
            return None;
        }
        let mut at = start;
        loop {
            match memchr::memchr(b'\n', &bytes[at..]) {
                Some(offset) => {
                    let next = at + offset + 1;
                    // `\s` is Unicode's White_Space, as `char::is_whitespace` is.
                    let follows = text[next..].chars().next();
                    if follows.is_some_and(|c| !c.is_whitespace() && c != '/') {
                        let part = &text[start..next];
                        start = next;
                        return Some(part);
                    }
                    at = next;
                }
                None => {
                    let part = &text[start..];
                    start = bytes.len();
                    return Some(part);
                }
            }
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pieces(text: &str, encoding: Encoding) -> Vec<&str> {
        ascii_pieces(text.as_bytes(), encoding).map(as_str).collect()
    }

    #[test]
    fn splits_the_way_cl100k_does() {
        assert_eq!(
            pieces(
                "Hello, world! It's 12345 o'clock\n\n  x  \n",
                Encoding::Cl100kBase
            ),
            [
                "Hello", ",", " world", "!", " It", "'s", " ", "123", "45", " o", "'clock", "\n\n", " ",
                " x", "  \n"
            ]
        );
        assert_eq!(pieces("a  b\t", Encoding::Cl100kBase), ["a", " ", " b", "\t"]);
    }

    #[test]
    fn splits_the_way_o200k_does() {
        assert_eq!(
            pieces("HelloWORLD it'S fooBar\n  \n  ", Encoding::O200kBase),
            ["Hello", "WORLD", " it'S", " foo", "Bar", "\n  \n", "  "]
        );
        assert_eq!(pieces(" //x\n", Encoding::O200kBase), [" //", "x", "\n"]);
        assert_eq!(pieces("}\n\n/// x", Encoding::O200kBase), ["}\n\n///", " x"]);
        assert_eq!(pieces("}\n\n/// x", Encoding::Cl100kBase), ["}\n\n", "///", " x"]);
    }

    #[test]
    fn cuts_only_where_pieces_end() {
        let text = "one\ntwo\n  three\n\nfour é\n\u{3000}five.\n// six\n";
        let parts: Vec<&str> = split_at_lines(text).collect();
        assert_eq!(
            parts,
            ["one\n", "two\n  three\n\n", "four é\n\u{3000}five.\n// six\n"]
        );
        assert_eq!(parts.concat(), text);
    }
}
