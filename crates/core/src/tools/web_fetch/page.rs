//! What `web_fetch` makes of a body: HTML turned into Markdown (with `htmd`), other text
//! kept as text, anything else refused as binary.

use std::rc::Rc;

/// What a body is, as its `Content-Type` says (or, when it says nothing, as it looks).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    Html,
    Text,
    Binary,
}

/// The kind a declared `Content-Type` names; `None` when there is none to go by.
pub fn declared_kind(content_type: Option<&str>) -> Option<Kind> {
    let essence = essence(content_type?);
    if essence.is_empty() {
        return None;
    }
    Some(match essence.as_str() {
        "text/html" | "application/xhtml+xml" => Kind::Html,
        _ if essence.starts_with("text/") => Kind::Text,
        _ if essence.ends_with("+json") || essence.ends_with("+xml") => Kind::Text,
        "application/json"
        | "application/xml"
        | "application/javascript"
        | "application/ecmascript"
        | "application/x-javascript"
        | "application/yaml"
        | "application/x-yaml"
        | "application/toml"
        | "application/x-sh"
        | "application/sql"
        | "application/graphql"
        | "application/x-ndjson" => Kind::Text,
        _ => Kind::Binary,
    })
}

/// The type without its parameters, lower-cased: `text/html; charset=utf-8` → `text/html`.
pub fn essence(content_type: &str) -> String {
    content_type
        .split(';')
        .next()
        .unwrap_or_default()
        .trim()
        .to_ascii_lowercase()
}

/// The kind of a body whose type was not said: markup that opens like a page is HTML,
/// text is text.
pub fn sniffed_kind(body: &[u8]) -> Kind {
    if looks_binary(body, None) {
        return Kind::Binary;
    }
    let start = String::from_utf8_lossy(&body[..body.len().min(512)]).to_ascii_lowercase();
    let start = start.trim_start_matches('\u{feff}').trim_start();
    if start.starts_with("<!doctype html") || start.starts_with("<html") || start.starts_with("<head") {
        Kind::Html
    } else {
        Kind::Text
    }
}

/// Whether a body that claims to be text (as `content_type` says) is not: a NUL byte in
/// its first 8 KiB, or, unless its charset is a single-byte one [`decode`] reads, more than
/// one byte in ten there that is not part of a UTF-8 character.
pub fn looks_binary(body: &[u8], content_type: Option<&str>) -> bool {
    let start = &body[..body.len().min(8192)];
    if start.contains(&0) {
        return true;
    }
    if content_type
        .and_then(charset)
        .is_some_and(|charset| LATIN1.contains(&charset.as_str()))
    {
        return false;
    }
    let decoded = String::from_utf8_lossy(start);
    let invalid = decoded
        .chars()
        .filter(|c| *c == char::REPLACEMENT_CHARACTER)
        .count();
    invalid * 10 > start.len()
}

/// The body as text: in its declared charset when that is one of the single-byte ones
/// every byte of which is a character (ISO-8859-1 and its aliases, and US-ASCII), else as
/// UTF-8 with what is not UTF-8 replaced. The second value says a charset was not
/// understood (or the bytes were not UTF-8), so the model knows characters may be wrong.
pub fn decode(body: &[u8], content_type: Option<&str>) -> (String, Option<String>) {
    let charset = content_type.and_then(charset).unwrap_or_default();
    match charset.as_str() {
        single if LATIN1.contains(&single) => (body.iter().map(|&byte| char::from(byte)).collect(), None),
        "" | "utf-8" | "utf8" | "us-ascii" | "ascii" => match std::str::from_utf8(body) {
            Ok(text) => (text.to_string(), None),
            Err(_) => (
                String::from_utf8_lossy(body).into_owned(),
                Some("not valid UTF-8: bytes that are not were replaced by \u{fffd}".to_string()),
            ),
        },
        other => match std::str::from_utf8(body) {
            Ok(text) => (text.to_string(), None),
            Err(_) => (
                String::from_utf8_lossy(body).into_owned(),
                Some(format!(
                    "charset {other} is read as UTF-8: bytes that are not UTF-8 were replaced by \u{fffd}"
                )),
            ),
        },
    }
}

/// The names of ISO-8859-1, every byte of which is the character of the same number.
const LATIN1: &[&str] = &["iso-8859-1", "latin1", "l1", "iso_8859-1", "cp819"];

/// The `charset` parameter of a content type, lower-cased and unquoted.
fn charset(content_type: &str) -> Option<String> {
    content_type.split(';').skip(1).find_map(|parameter| {
        let (name, value) = parameter.split_once('=')?;
        name.trim()
            .eq_ignore_ascii_case("charset")
            .then(|| value.trim().trim_matches('"').to_ascii_lowercase())
    })
}

/// Elements whose content is nothing a reader sees.
const SKIPPED: &[&str] = &[
    "script", "style", "noscript", "template", "svg", "canvas", "iframe", "object", "embed", "head",
];

/// How deep a page's elements may nest for the Markdown converter, which walks them
/// recursively; a deeper page (hostile, or broken) is read as plain text instead.
const MAX_DEPTH: usize = 256;

/// How deep a page's tags may nest, counted roughly on its text before parsing: the
/// HTML parser looks through every open element for some tags, so a page of a million
/// nested `<div>`s would take it hours. Past this, the page is read as plain text
/// without the parser.
const MAX_TAG_DEPTH: usize = 2000;

/// `html` as Markdown: the page's title as a heading, then its body. A page nested deeper
/// than the converter can walk keeps its text only, in document order.
pub fn html_to_markdown(html: &str) -> String {
    if tag_depth(html) > MAX_TAG_DEPTH {
        return strip_tags(html);
    }
    let converter = htmd::HtmlToMarkdown::builder()
        .skip_tags(SKIPPED.to_vec())
        .build();
    let Ok(tree) = converter.html_to_tree(html) else {
        return strip_tags(html);
    };
    let title = title_of(&tree);
    let body = if depth_of(&tree) > MAX_DEPTH {
        plain_text(&tree)
    } else {
        converter.tree_to_markdown(&tree)
    };
    match title {
        Some(title) if !body.trim_start().starts_with(&format!("# {title}")) => {
            format!("# {title}\n\n{body}")
        }
        _ => body,
    }
}

/// Elements that never hold others.
const VOID: &[&str] = &[
    "area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source", "track", "wbr",
];
/// Elements whose content is text, not tags, up to their end tag.
const RAW: &[&str] = &[
    "script",
    "style",
    "textarea",
    "title",
    "xmp",
    "iframe",
    "noembed",
    "noframes",
    "plaintext",
];

/// One pass over the page's tags: a start or end tag, a comment, or raw text skipped.
enum Tag<'a> {
    Open(&'a str),
    Close(&'a str),
}

/// The page's tags in order, skipping comments and the content of raw-text elements, in
/// one linear pass; `visit` gets each tag and the text before it. `lower` is `html` in
/// ASCII lower case, where tag names are read.
fn scan_tags<'a>(html: &'a str, lower: &'a str, mut visit: impl FnMut(&'a str, Option<Tag<'a>>)) {
    let bytes = html.as_bytes();
    let mut text_from = 0;
    let mut at = 0;
    while let Some(found) = memchr::memchr(b'<', &bytes[at..]) {
        let open = at + found;
        let rest = &lower[open..];
        let name_of = |from: usize| {
            let end = bytes[from..]
                .iter()
                .position(|b| !(b.is_ascii_alphanumeric() || *b == b'-'))
                .map_or(bytes.len(), |n| from + n);
            (&lower[from..end], end)
        };
        let end_of_tag =
            |from: usize| memchr::memchr(b'>', &bytes[from..]).map_or(bytes.len(), |n| from + n + 1);
        if rest.starts_with("<!--") {
            visit(&html[text_from..open], None);
            at = lower[open..].find("-->").map_or(bytes.len(), |n| open + n + 3);
            text_from = at;
        } else if rest.starts_with("</") && bytes.get(open + 2).is_some_and(u8::is_ascii_alphabetic) {
            let (name, _) = name_of(open + 2);
            visit(&html[text_from..open], Some(Tag::Close(name)));
            at = end_of_tag(open + 2);
            text_from = at;
        } else if bytes.get(open + 1).is_some_and(u8::is_ascii_alphabetic) {
            let (name, end) = name_of(open + 1);
            visit(&html[text_from..open], Some(Tag::Open(name)));
            at = end_of_tag(end);
            if RAW.contains(&name) {
                let close = format!("</{name}");
                at = lower[at..].find(&close).map_or(bytes.len(), |n| at + n);
            }
            text_from = at;
        } else {
            at = open + 1;
        }
    }
    visit(&html[text_from..], None);
}

/// How deeply the page's tags nest, as the parser would keep them open (an end tag with
/// no open element of its name is ignored, as the parser ignores it), in linear time.
fn tag_depth(html: &str) -> usize {
    let mut open: Vec<&str> = Vec::new();
    let mut counts: std::collections::HashMap<&str, usize> = std::collections::HashMap::new();
    let mut deepest = 0;
    let lower = html.to_ascii_lowercase();
    scan_tags(html, &lower, |_, tag| match tag {
        Some(Tag::Open(name)) if !VOID.contains(&name) && !RAW.contains(&name) => {
            open.push(name);
            *counts.entry(name).or_default() += 1;
            deepest = deepest.max(open.len());
        }
        Some(Tag::Close(name)) if counts.get(name).is_some_and(|n| *n > 0) => {
            while let Some(top) = open.pop() {
                if let Some(count) = counts.get_mut(top) {
                    *count -= 1;
                }
                if top == name {
                    break;
                }
            }
        }
        _ => {}
    });
    deepest
}

/// A page's text without the parser: tags, comments, scripts and styles left out, the
/// common entities read, a line per block of text.
fn strip_tags(html: &str) -> String {
    let mut text = String::new();
    let lower = html.to_ascii_lowercase();
    scan_tags(html, &lower, |before, tag| {
        text.push_str(before);
        if matches!(
            tag,
            Some(Tag::Open("br" | "p" | "div" | "li" | "tr" | "h1" | "h2" | "h3"))
        ) {
            text.push('\n');
        }
    });
    let text = text
        .replace("&nbsp;", " ")
        .replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&quot;", "\"")
        .replace("&#39;", "'")
        .replace("&amp;", "&");
    text.lines()
        .map(collapse)
        .filter(|line| !line.is_empty())
        .collect::<Vec<_>>()
        .join("\n")
}

/// The deepest nesting of elements under `root`, counted without recursion.
fn depth_of(root: &Rc<htmd::Node>) -> usize {
    let mut deepest = 0;
    let mut stack = vec![(Rc::clone(root), 0usize)];
    while let Some((node, depth)) = stack.pop() {
        deepest = deepest.max(depth);
        if deepest > MAX_DEPTH {
            break;
        }
        for child in node.children.borrow().iter() {
            stack.push((Rc::clone(child), depth + 1));
        }
    }
    deepest
}

/// The first `<title>`'s text, its whitespace collapsed.
fn title_of(root: &Rc<htmd::Node>) -> Option<String> {
    let mut stack = vec![Rc::clone(root)];
    while let Some(node) = stack.pop() {
        if let markup5ever_rcdom::NodeData::Element { name, .. } = &node.data
            && &*name.local == "title"
        {
            let text = collapse(&text_under(&node));
            return (!text.is_empty()).then_some(text);
        }
        stack.extend(node.children.borrow().iter().rev().cloned());
    }
    None
}

/// The text of every text node under `node`, in order, skipping [`SKIPPED`] elements.
fn text_under(node: &Rc<htmd::Node>) -> String {
    let mut text = String::new();
    let mut stack = vec![Rc::clone(node)];
    while let Some(node) = stack.pop() {
        match &node.data {
            markup5ever_rcdom::NodeData::Text { contents } => text.push_str(&contents.borrow()),
            markup5ever_rcdom::NodeData::Element { name, .. } if SKIPPED.contains(&&*name.local) => continue,
            _ => {}
        }
        stack.extend(node.children.borrow().iter().rev().cloned());
    }
    text
}

/// A page too deep to convert, as its text: runs of whitespace collapsed, a line per
/// block of text.
fn plain_text(root: &Rc<htmd::Node>) -> String {
    text_under(root)
        .lines()
        .map(collapse)
        .filter(|line| !line.is_empty())
        .collect::<Vec<_>>()
        .join("\n")
}

fn collapse(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn content_types_name_their_kind() {
        let kinds: Vec<Option<Kind>> = [
            Some("text/html; charset=utf-8"),
            Some("Application/XHTML+xml"),
            Some("text/plain"),
            Some("text/markdown"),
            Some("application/json"),
            Some("application/ld+json"),
            Some("image/svg+xml"),
            Some("image/png"),
            Some("application/pdf"),
            Some("application/octet-stream"),
            Some(""),
            None,
        ]
        .iter()
        .map(|declared| declared_kind(*declared))
        .collect();
        use Kind::*;
        assert_eq!(
            kinds,
            vec![
                Some(Html),
                Some(Html),
                Some(Text),
                Some(Text),
                Some(Text),
                Some(Text),
                Some(Text),
                Some(Binary),
                Some(Binary),
                Some(Binary),
                None,
                None
            ]
        );
        assert_eq!(sniffed_kind(b"  <!DOCTYPE html><p>x"), Html);
        assert_eq!(sniffed_kind(b"plain words"), Text);
        assert_eq!(sniffed_kind(b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR"), Binary);
    }

    /// Bodies in the charset they say, or as UTF-8 with a note when they are not.
    #[test]
    fn bodies_are_decoded_by_their_charset() {
        assert_eq!(
            decode(b"caf\xe9", Some("text/plain; charset=\"ISO-8859-1\"")),
            ("café".to_string(), None)
        );
        assert_eq!(
            decode("café".as_bytes(), Some("text/plain")),
            ("café".to_string(), None)
        );
        assert_eq!(
            decode(b"caf\xe9", Some("text/plain")),
            (
                "caf\u{fffd}".to_string(),
                Some("not valid UTF-8: bytes that are not were replaced by \u{fffd}".to_string())
            )
        );
        assert_eq!(
            decode(b"caf\xe9", Some("text/plain; charset=shift_jis")).1,
            Some(
                "charset shift_jis is read as UTF-8: bytes that are not UTF-8 were replaced by \u{fffd}"
                    .to_string()
            )
        );
        assert!(looks_binary(b"text\0more", None));
        assert!(looks_binary(&[0xff; 100], Some("text/plain")));
        assert!(!looks_binary(&[0xe9; 100], Some("text/plain; charset=latin1")));
        assert!(looks_binary(b"\xe9\0", Some("text/plain; charset=latin1")));
        assert!(!looks_binary("ünïcödé".as_bytes(), None));
    }

    /// Headings, links, lists and code survive; scripts, styles and the head do not; the
    /// title leads.
    #[test]
    fn html_becomes_markdown() {
        let html = "<!doctype html><html><head><title>The  Guide</title><style>p{}</style>\
            <script>alert('x')</script></head><body><h2>Install</h2><p>Run <code>cargo add x</code> \
            and read <a href=\"https://docs.rs/x\">the docs</a>.</p><ul><li>one</li><li>two</li></ul>\
            <script>document.write('no')</script></body></html>";
        assert_eq!(
            html_to_markdown(html),
            "# The Guide\n\n## Install\n\nRun `cargo add x` and read [the docs](https://docs.rs/x).\n\n*   one\n*   two"
        );
    }

    /// A page nested far deeper than any real one is read as text, without recursion
    /// and in linear time: plainly, through end tags the parser would ignore, and just
    /// past the converter's depth.
    #[test]
    fn a_deeply_nested_page_is_read_as_text() {
        let depth = 200_000;
        let nested = format!(
            "{}deep &amp; words{}",
            "<div>".repeat(depth),
            "</div>".repeat(depth)
        );
        let ignored_ends = format!("{}deep &amp; words", "<div></span>".repeat(depth));
        let just_past = format!(
            "<p>{}deep &amp; words{}</p>",
            "<div>".repeat(300),
            "</div>".repeat(300)
        );
        for html in [nested, ignored_ends, just_past] {
            let started = std::time::Instant::now();
            let text = std::thread::Builder::new()
                .stack_size(256 << 10)
                .spawn(move || html_to_markdown(&html))
                .unwrap()
                .join()
                .unwrap();
            assert_eq!(text, "deep & words");
            assert!(
                started.elapsed() < std::time::Duration::from_secs(5),
                "{:?}",
                started.elapsed()
            );
        }
        assert_eq!(
            tag_depth("<div><p>a<br><img src=x></p><script>if (a<b) x()</script></div><!-- <div> -->"),
            2
        );
        assert_eq!(
            strip_tags("<h1>T</h1><p>one<br>two</p><script>var x = '<p>';</script><!-- c --><li>&lt;3"),
            "T\none\ntwo\n<3"
        );
    }
}
