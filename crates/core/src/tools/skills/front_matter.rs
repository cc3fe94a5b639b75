//! The YAML front matter of a `SKILL.md`, read by a real YAML parser (`yaml-rust2`, the
//! maintained fork of `yaml-rust`): block scalars (`|`, `>`, with chomping and indentation
//! indicators), quoted scalars with their escapes and line folding, flow collections,
//! anchors and comments all read as the YAML specification says. Values are kept as text,
//! lists and maps (numbers and booleans stay as written). What is not valid YAML is an
//! error naming the line, so a skill is skipped with a reason instead of misread.

use std::collections::HashMap;

use yaml_rust2::parser::{Event, Parser};
use yaml_rust2::scanner::{Marker, ScanError, TScalarStyle};

/// A front-matter value: text, a list or a map (keys in file order).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum YamlValue {
    Text(String),
    List(Vec<YamlValue>),
    Map(Vec<(String, YamlValue)>),
}

impl YamlValue {
    /// The value as JSON, text staying text.
    pub(crate) fn to_json(&self) -> serde_json::Value {
        match self {
            YamlValue::Text(text) => serde_json::Value::String(text.clone()),
            YamlValue::List(items) => serde_json::Value::Array(items.iter().map(Self::to_json).collect()),
            YamlValue::Map(entries) => serde_json::Value::Object(
                entries
                    .iter()
                    .map(|(key, value)| (key.clone(), value.to_json()))
                    .collect(),
            ),
        }
    }

    /// How many collections deep the value goes (text is 0).
    fn depth(&self) -> usize {
        match self {
            YamlValue::Text(_) => 0,
            YamlValue::List(items) => 1 + items.iter().map(Self::depth).max().unwrap_or(0),
            YamlValue::Map(entries) => 1 + entries.iter().map(|(_, value)| value.depth()).max().unwrap_or(0),
        }
    }

    /// How many nodes the value holds, itself included.
    fn size(&self) -> usize {
        match self {
            YamlValue::Text(_) => 1,
            YamlValue::List(items) => 1 + items.iter().map(Self::size).sum::<usize>(),
            YamlValue::Map(entries) => 1 + entries.iter().map(|(_, value)| 1 + value.size()).sum::<usize>(),
        }
    }
}

/// A `SKILL.md` split into its front matter (still YAML text) and its Markdown body, both
/// with `\n` line endings.
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct SplitDocument {
    pub yaml: String,
    pub body: String,
}

/// Splits off the front matter: the file must start (after an optional UTF-8 BOM) with a
/// `---` line, and the front matter ends at the next `---` (or `...`) line. CRLF and lone
/// CR line endings are read as `\n`, since skills written on Windows were once skipped.
pub(crate) fn split(text: &str) -> Result<SplitDocument, String> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let text = text.replace("\r\n", "\n").replace('\r', "\n");
    let mut lines = text.split_inclusive('\n');
    match lines.next() {
        Some(first) if first.trim_end() == "---" => {}
        _ => return Err("it does not start with front matter (a `---` line)".to_string()),
    }
    let mut yaml = String::new();
    for line in lines.by_ref() {
        let marker = line.trim_end();
        if marker == "---" || marker == "..." {
            let body: String = lines.collect();
            return Ok(SplitDocument {
                yaml,
                body: body.trim_matches('\n').trim_end().to_string(),
            });
        }
        yaml.push_str(line);
    }
    Err("its front matter has no closing `---` line".to_string())
}

/// How deeply lists and maps may nest. Far more than any skill needs; the values built
/// here are walked recursively, so without a limit a hostile `SKILL.md` could overflow
/// the stack.
const MAX_NESTING: usize = 64;
/// How many nodes the front matter may hold once aliases are expanded: an alias copies
/// what its anchor names, so a few lines of aliases of aliases could otherwise ask for
/// billions ("billion laughs").
const MAX_NODES: usize = 100_000;

/// Parses front matter into its top-level `key: value` entries, in file order.
pub(crate) fn parse(yaml: &str) -> Result<Vec<(String, YamlValue)>, String> {
    let mut parser = Parser::new_from_str(yaml);
    let mut builder = Builder::default();
    loop {
        let (event, mark) = parser.next_token().map_err(|err| scan_error(&err))?;
        if let Some(root) = builder.event(event, mark)? {
            return Ok(root);
        }
    }
}

/// A parser error as one line: where, what, and for the mistake skills make most often
/// (an unquoted value with `: ` in it) how to fix it.
fn scan_error(err: &ScanError) -> String {
    let mark = err.marker();
    // The message alone: where it is is said in front.
    let what = err.info();
    let hint = if what.contains("mapping values are not allowed") {
        " (a value that contains `: ` must be quoted)"
    } else {
        ""
    };
    format!("line {} column {}: {what}{hint}", mark.line(), mark.col() + 1)
}

/// A collection being read.
enum Frame {
    List {
        anchor: usize,
        items: Vec<YamlValue>,
    },
    Map {
        anchor: usize,
        entries: Vec<(String, YamlValue)>,
        /// The key read, waiting for its value.
        key: Option<String>,
    },
}

/// Builds values from the parser's events.
#[derive(Default)]
struct Builder {
    stack: Vec<Frame>,
    /// Anchored values with their depth.
    anchors: HashMap<usize, (YamlValue, usize)>,
    nodes: usize,
    documents: usize,
    /// The first document's value, once complete.
    root: Option<YamlValue>,
}

impl Builder {
    /// Takes one event; the top-level entries once the stream ends.
    fn event(&mut self, event: Event, mark: Marker) -> Result<Option<Vec<(String, YamlValue)>>, String> {
        let line = mark.line();
        match event {
            Event::Nothing | Event::StreamStart | Event::DocumentEnd => {}
            Event::DocumentStart => {
                self.documents += 1;
                if self.documents > 1 {
                    return Err(format!("line {line}: a second YAML document in the front matter"));
                }
            }
            Event::StreamEnd => return self.finish().map(Some),
            Event::Scalar(text, style, anchor, _tag) => {
                let null = style == TScalarStyle::Plain
                    && matches!(text.as_str(), "" | "~" | "null" | "Null" | "NULL");
                let value = YamlValue::Text(if null { String::new() } else { text });
                self.count(1, line)?;
                self.complete(value, anchor, line)?;
            }
            Event::Alias(anchor) => {
                let (value, depth) = self
                    .anchors
                    .get(&anchor)
                    .cloned()
                    .ok_or_else(|| format!("line {line}: an alias to an anchor that is not complete"))?;
                // Aliases of aliases could otherwise nest past the limit.
                if self.stack.len() + depth > MAX_NESTING {
                    return Err(format!("line {line}: nested more than {MAX_NESTING} levels deep"));
                }
                self.count(value.size(), line)?;
                self.complete(value, 0, line)?;
            }
            Event::SequenceStart(anchor, _tag) => self.open(
                Frame::List {
                    anchor,
                    items: Vec::new(),
                },
                line,
            )?,
            Event::MappingStart(anchor, _tag) => self.open(
                Frame::Map {
                    anchor,
                    entries: Vec::new(),
                    key: None,
                },
                line,
            )?,
            Event::SequenceEnd | Event::MappingEnd => {
                let (value, anchor) = match self.stack.pop() {
                    Some(Frame::List { anchor, items }) => (YamlValue::List(items), anchor),
                    Some(Frame::Map { anchor, entries, .. }) => (YamlValue::Map(entries), anchor),
                    None => {
                        return Err(format!(
                            "line {line}: the end of a collection that was never opened"
                        ));
                    }
                };
                self.complete(value, anchor, line)?;
            }
        }
        Ok(None)
    }

    fn count(&mut self, nodes: usize, line: usize) -> Result<(), String> {
        self.nodes = self.nodes.saturating_add(nodes);
        if self.nodes > MAX_NODES {
            return Err(format!(
                "line {line}: more than {MAX_NODES} values (aliases expand too far)"
            ));
        }
        Ok(())
    }

    fn open(&mut self, frame: Frame, line: usize) -> Result<(), String> {
        if self.stack.len() >= MAX_NESTING {
            return Err(format!("line {line}: nested more than {MAX_NESTING} levels deep"));
        }
        self.count(1, line)?;
        self.stack.push(frame);
        Ok(())
    }

    /// A finished value: remembered under its anchor, then added to the collection around
    /// it (or kept as the document's value).
    fn complete(&mut self, value: YamlValue, anchor: usize, line: usize) -> Result<(), String> {
        if anchor != 0 {
            let depth = value.depth();
            self.anchors.insert(anchor, (value.clone(), depth));
        }
        match self.stack.last_mut() {
            None => {
                self.root.get_or_insert(value);
            }
            Some(Frame::List { items, .. }) => items.push(value),
            Some(Frame::Map { entries, key, .. }) => match key.take() {
                None => match value {
                    YamlValue::Text(text) => *key = Some(text),
                    YamlValue::List(_) | YamlValue::Map(_) => {
                        return Err(format!("line {line}: a key that is a list or a map"));
                    }
                },
                Some(name) => {
                    // A repeated key is invalid YAML; the last one wins, as most readers do.
                    entries.retain(|(existing, _)| *existing != name);
                    entries.push((name, value));
                }
            },
        }
        Ok(())
    }

    fn finish(&mut self) -> Result<Vec<(String, YamlValue)>, String> {
        match self.root.take() {
            None => Ok(Vec::new()),
            Some(YamlValue::Map(entries)) => Ok(entries),
            Some(YamlValue::Text(text)) if text.is_empty() => Ok(Vec::new()),
            Some(YamlValue::Text(_)) => Err("line 1: expected `key: value` lines".to_string()),
            Some(YamlValue::List(_)) => {
                Err("line 1: the front matter must be `key: value` lines, not a list".to_string())
            }
        }
    }
}

#[cfg(test)]
#[path = "front_matter_tests.rs"]
mod tests;
