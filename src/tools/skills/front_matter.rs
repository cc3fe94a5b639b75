//! The YAML front matter of a `SKILL.md`, read by a small parser of the YAML subset skills
//! use: `key: value` maps, `- item` and `[a, b]` lists, nested maps, plain, quoted and
//! block (`|`, `>`) scalars, and comments. Numbers and booleans stay text. Anything else is
//! an error naming the line, so a skill is skipped with a reason instead of misread.

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

/// How deeply lists and maps may nest. Far more than any skill needs; the parser recurses
/// once per level, so without a limit a hostile `SKILL.md` could overflow the stack.
const MAX_NESTING: usize = 64;

/// Parses front matter into its top-level `key: value` entries, in file order.
pub(crate) fn parse(yaml: &str) -> Result<Vec<(String, YamlValue)>, String> {
    let mut parser = Parser {
        lines: yaml
            .lines()
            .enumerate()
            .map(|(i, raw)| Line::new(i + 1, raw))
            .collect(),
        pos: 0,
        depth: 0,
    };
    parser.skip_blank();
    let Some(first) = parser.lines.get(parser.pos) else {
        return Ok(Vec::new());
    };
    let indent = first.indent;
    if is_list_item(&first.text) {
        return Err(format!(
            "line {}: the front matter must be `key: value` lines, not a list",
            first.number
        ));
    }
    match parser.mapping(indent)? {
        YamlValue::Map(entries) => Ok(entries),
        // `mapping` only ever builds maps.
        YamlValue::Text(_) | YamlValue::List(_) => Ok(Vec::new()),
    }
}

/// One line of front matter: where it is, how far it is indented, and its text without the
/// indentation or trailing blanks (`raw` keeps it all, for block scalars).
#[derive(Clone, Debug)]
struct Line {
    number: usize,
    indent: usize,
    text: String,
    raw: String,
}

impl Line {
    fn new(number: usize, raw: &str) -> Self {
        // Tabs are not YAML indentation, but editors insert them; reading them as one column
        // each keeps a hand-edited skill loading rather than failing on invisible characters.
        let indent = raw.len() - raw.trim_start_matches([' ', '\t']).len();
        Self {
            number,
            indent,
            text: raw[indent..].trim_end().to_string(),
            raw: raw.to_string(),
        }
    }

    /// Blank lines and whole-line comments carry no structure.
    fn is_blank(&self) -> bool {
        self.text.is_empty() || self.text.starts_with('#')
    }
}

fn is_list_item(text: &str) -> bool {
    text == "-" || text.starts_with("- ") || text.starts_with("-\t")
}

struct Parser {
    lines: Vec<Line>,
    pos: usize,
    /// Nodes being read inside each other now.
    depth: usize,
}

impl Parser {
    fn skip_blank(&mut self) {
        while self.lines.get(self.pos).is_some_and(Line::is_blank) {
            self.pos += 1;
        }
    }

    /// The next line with structure, without consuming it.
    fn peek(&mut self) -> Option<&Line> {
        self.skip_blank();
        self.lines.get(self.pos)
    }

    /// One level deeper, or an error naming the line when that is too deep. Every
    /// recursion passes through [`Self::block`] or [`Self::value`], which call this.
    fn enter(&mut self, number: usize) -> Result<(), String> {
        self.depth += 1;
        if self.depth > MAX_NESTING {
            return Err(format!(
                "line {number}: nested more than {MAX_NESTING} levels deep"
            ));
        }
        Ok(())
    }

    /// A block node whose first line (the current one) is indented `indent`.
    fn block(&mut self, indent: usize) -> Result<YamlValue, String> {
        let number = self.lines.get(self.pos).map_or(0, |line| line.number);
        self.enter(number)?;
        let node = match self.peek() {
            Some(line) if is_list_item(&line.text) => self.list(indent),
            Some(_) => self.mapping(indent),
            None => Ok(YamlValue::Text(String::new())),
        };
        self.depth -= 1;
        node
    }

    fn mapping(&mut self, indent: usize) -> Result<YamlValue, String> {
        let mut entries: Vec<(String, YamlValue)> = Vec::new();
        while let Some(line) = self.peek() {
            if line.indent < indent {
                break;
            }
            let number = line.number;
            if line.indent > indent {
                return Err(format!("line {number}: unexpected indentation"));
            }
            if is_list_item(&line.text) {
                return Err(format!("line {number}: a list item where a `key:` was expected"));
            }
            let text = line.text.clone();
            let (key, rest) =
                split_key(&text).ok_or_else(|| format!("line {number}: expected `key: value`"))?;
            self.pos += 1;
            let value = self.value(rest, indent, number)?;
            // A repeated key is invalid YAML; the last one wins, as most readers do.
            entries.retain(|(existing, _)| *existing != key);
            entries.push((key, value));
        }
        Ok(YamlValue::Map(entries))
    }

    fn list(&mut self, indent: usize) -> Result<YamlValue, String> {
        let mut items = Vec::new();
        while let Some(line) = self.peek() {
            if line.indent < indent || (line.indent == indent && !is_list_item(&line.text)) {
                break;
            }
            let number = line.number;
            if line.indent > indent {
                return Err(format!("line {number}: unexpected indentation"));
            }
            let after = &line.text[1..];
            let item = after.trim_start();
            let item_indent = indent + 1 + (after.len() - item.len());
            let item = item.to_string();
            let value = if item.is_empty() {
                self.pos += 1;
                self.value("", indent, number)?
            } else if is_list_item(&item) || (split_key(&item).is_some() && !starts_flow_or_quote(&item)) {
                // `- key: value` (or `- - x`) opens a nested block at the item's column; reading
                // the rest of this line as that block's first line keeps one code path for both.
                let current = &mut self.lines[self.pos];
                current.indent = item_indent;
                current.text = item;
                self.block(item_indent)?
            } else {
                self.pos += 1;
                self.value(&item, indent, number)?
            };
            items.push(value);
        }
        Ok(YamlValue::List(items))
    }

    /// The value after `key:` (or `- `) on line `number`, whose key sits at `parent_indent`.
    fn value(&mut self, rest: &str, parent_indent: usize, number: usize) -> Result<YamlValue, String> {
        self.enter(number)?;
        let node = self.node(rest, parent_indent, number);
        self.depth -= 1;
        node
    }

    /// [`Self::value`], one level in.
    fn node(&mut self, rest: &str, parent_indent: usize, number: usize) -> Result<YamlValue, String> {
        let rest = rest.trim();
        if rest.is_empty() || rest.starts_with('#') {
            return match self.peek() {
                Some(next) if next.indent > parent_indent => {
                    let indent = next.indent;
                    self.block(indent)
                }
                // YAML lets a map's list value sit at the key's own column.
                Some(next) if next.indent == parent_indent && is_list_item(&next.text) => {
                    self.list(parent_indent)
                }
                _ => Ok(YamlValue::Text(String::new())),
            };
        }
        match rest.chars().next() {
            Some('|' | '>') => self.block_scalar(rest, parent_indent, number),
            Some('"' | '\'') => self.quoted(rest, number),
            Some('[' | '{') => self.flow(rest, number),
            _ => Ok(self.plain(rest, parent_indent)),
        }
    }

    /// A plain scalar, continued on following lines indented past its key.
    fn plain(&mut self, first: &str, parent_indent: usize) -> YamlValue {
        let mut text = strip_comment(first).to_string();
        let mut pending_breaks = 0;
        let mut lookahead = self.pos;
        while let Some(line) = self.lines.get(lookahead) {
            if line.text.is_empty() {
                pending_breaks += 1;
                lookahead += 1;
                continue;
            }
            // A more-indented `key: value` is a misplaced map entry, not more text: leave it
            // for the caller to report.
            if line.indent <= parent_indent || line.text.starts_with('#') || split_key(&line.text).is_some() {
                break;
            }
            if pending_breaks == 0 {
                text.push(' ');
            } else {
                text.push_str(&"\n".repeat(pending_breaks));
            }
            text.push_str(strip_comment(&line.text));
            pending_breaks = 0;
            lookahead += 1;
            self.pos = lookahead;
        }
        match text.as_str() {
            "~" | "null" | "Null" | "NULL" => YamlValue::Text(String::new()),
            _ => YamlValue::Text(text),
        }
    }

    /// A quoted scalar, which may run over several lines until its closing quote.
    fn quoted(&mut self, first: &str, number: usize) -> Result<YamlValue, String> {
        let quote = first.chars().next().unwrap_or('"');
        let mut physical = vec![first[1..].to_string()];
        loop {
            let joined = fold_quoted_lines(&physical);
            if let Some(end) = closing_quote(&joined, quote) {
                let after = joined[end + 1..].trim();
                if !after.is_empty() && !after.starts_with('#') {
                    return Err(format!("line {number}: text after the closing quote"));
                }
                return Ok(YamlValue::Text(unquote(&joined[..end], quote)));
            }
            match self.lines.get(self.pos) {
                Some(line) => {
                    physical.push(line.text.clone());
                    self.pos += 1;
                }
                None => return Err(format!("line {number}: the quoted value is never closed")),
            }
        }
    }

    /// A flow list or map (`[a, b]`, `{k: v}`), which may run over several lines.
    fn flow(&mut self, first: &str, number: usize) -> Result<YamlValue, String> {
        let mut text = first.to_string();
        loop {
            if flow_is_closed(&text) {
                let mut reader = FlowReader {
                    chars: text.chars().collect(),
                    at: 0,
                    depth: 0,
                };
                let value = reader.value().map_err(|err| format!("line {number}: {err}"))?;
                let after: String = reader.chars[reader.at..].iter().collect();
                let after = after.trim();
                if !after.is_empty() && !after.starts_with('#') {
                    return Err(format!("line {number}: text after the closing bracket"));
                }
                return Ok(value);
            }
            match self.lines.get(self.pos) {
                Some(line) => {
                    text.push(' ');
                    text.push_str(&line.text);
                    self.pos += 1;
                }
                None => return Err(format!("line {number}: the bracketed value is never closed")),
            }
        }
    }

    /// A `|` (literal) or `>` (folded) block scalar with its optional chomping (`-`, `+`) and
    /// indentation indicators.
    fn block_scalar(
        &mut self,
        header: &str,
        parent_indent: usize,
        number: usize,
    ) -> Result<YamlValue, String> {
        let header = strip_comment(header);
        let folded = header.starts_with('>');
        let mut chomp = Chomp::Clip;
        let mut explicit_indent = None;
        for c in header.chars().skip(1) {
            match c {
                '-' => chomp = Chomp::Strip,
                '+' => chomp = Chomp::Keep,
                '1'..='9' => explicit_indent = c.to_digit(10).map(|d| parent_indent + d as usize),
                _ => return Err(format!("line {number}: `{header}` is not a block scalar header")),
            }
        }
        let content_indent = explicit_indent.or_else(|| {
            self.lines[self.pos..]
                .iter()
                .find(|line| !line.text.is_empty())
                .map(|line| line.indent)
                .filter(|&indent| indent > parent_indent)
        });
        let mut content: Vec<String> = Vec::new();
        if let Some(indent) = content_indent {
            while let Some(line) = self.lines.get(self.pos) {
                if line.text.is_empty() {
                    content.push(String::new());
                } else if line.indent >= indent {
                    content.push(line.raw.get(indent..).unwrap_or("").trim_end().to_string());
                } else {
                    break;
                }
                self.pos += 1;
            }
        }
        let trailing_empty = content.iter().rev().take_while(|line| line.is_empty()).count();
        content.truncate(content.len() - trailing_empty);
        let mut text = if folded {
            fold_block(&content)
        } else {
            content.join("\n")
        };
        if !content.is_empty() {
            match chomp {
                Chomp::Strip => {}
                Chomp::Clip => text.push('\n'),
                Chomp::Keep => text.push_str(&"\n".repeat(1 + trailing_empty)),
            }
        }
        Ok(YamlValue::Text(text))
    }
}

/// What happens to a block scalar's final line breaks.
#[derive(Clone, Copy)]
enum Chomp {
    Strip,
    Clip,
    Keep,
}

/// Folds the lines of a `>` scalar: breaks between text lines become spaces, empty lines
/// become breaks, and more-indented lines keep their breaks.
fn fold_block(lines: &[String]) -> String {
    let mut text = String::new();
    let mut pending_breaks = 0;
    let mut previous_indented = false;
    let mut first = true;
    for line in lines {
        if line.is_empty() {
            pending_breaks += 1;
            continue;
        }
        let indented = line.starts_with([' ', '\t']);
        if first {
            text.push_str(&"\n".repeat(pending_breaks));
        } else if indented || previous_indented {
            text.push_str(&"\n".repeat(pending_breaks + 1));
        } else if pending_breaks == 0 {
            text.push(' ');
        } else {
            text.push_str(&"\n".repeat(pending_breaks));
        }
        text.push_str(line);
        first = false;
        previous_indented = indented;
        pending_breaks = 0;
    }
    text
}

/// Joins the physical lines of a quoted scalar as YAML folds them: one break is a space,
/// each further empty line a `\n`.
fn fold_quoted_lines(lines: &[String]) -> String {
    let mut text = String::new();
    let mut pending_breaks = 0;
    for (i, line) in lines.iter().enumerate() {
        let line = if i == 0 { line.trim_end() } else { line.trim() };
        if i > 0 && line.is_empty() {
            pending_breaks += 1;
            continue;
        }
        if i > 0 {
            if pending_breaks == 0 {
                text.push(' ');
            } else {
                text.push_str(&"\n".repeat(pending_breaks));
            }
        }
        text.push_str(line);
        pending_breaks = 0;
    }
    text
}

/// The byte index of the quote that closes `text` (which starts after the opening quote).
fn closing_quote(text: &str, quote: char) -> Option<usize> {
    let mut chars = text.char_indices().peekable();
    while let Some((i, c)) = chars.next() {
        match (quote, c) {
            ('"', '\\') => {
                chars.next();
            }
            ('\'', '\'') if chars.peek().is_some_and(|&(_, next)| next == '\'') => {
                chars.next();
            }
            (q, c) if q == c => return Some(i),
            _ => {}
        }
    }
    None
}

/// The text of a quoted scalar: `''` in single quotes, backslash escapes in double quotes.
fn unquote(inner: &str, quote: char) -> String {
    if quote == '\'' {
        return inner.replace("''", "'");
    }
    let mut text = String::with_capacity(inner.len());
    let mut chars = inner.chars();
    while let Some(c) = chars.next() {
        if c != '\\' {
            text.push(c);
            continue;
        }
        match chars.next() {
            Some('n') => text.push('\n'),
            Some('t') => text.push('\t'),
            Some('r') => text.push('\r'),
            Some('0') => text.push('\0'),
            Some(code @ ('x' | 'u' | 'U')) => {
                let width = match code {
                    'x' => 2,
                    'u' => 4,
                    _ => 8,
                };
                let hex: String = chars.by_ref().take(width).collect();
                match u32::from_str_radix(&hex, 16).ok().and_then(char::from_u32) {
                    Some(decoded) => text.push(decoded),
                    None => {
                        text.push('\\');
                        text.push(code);
                        text.push_str(&hex);
                    }
                }
            }
            Some(other @ ('"' | '\\' | '/' | ' ')) => text.push(other),
            // An unknown escape is kept as written rather than guessed at.
            Some(other) => {
                text.push('\\');
                text.push(other);
            }
            None => text.push('\\'),
        }
    }
    text
}

/// `key: rest` → (key, rest); the key may be quoted. `None` when the line is not a pair.
fn split_key(text: &str) -> Option<(String, &str)> {
    if let Some(quote @ ('"' | '\'')) = text.chars().next() {
        let end = closing_quote(&text[1..], quote)? + 1;
        let after = text[end + 1..].trim_start();
        let rest = after.strip_prefix(':')?;
        if !(rest.is_empty() || rest.starts_with([' ', '\t'])) {
            return None;
        }
        return Some((unquote(&text[1..end], quote), rest));
    }
    let mut search = 0;
    while let Some(found) = text[search..].find(':') {
        let colon = search + found;
        let rest = &text[colon + 1..];
        if rest.is_empty() || rest.starts_with([' ', '\t']) {
            let key = text[..colon].trim();
            return (!key.is_empty() && !key.starts_with('#')).then(|| (key.to_string(), rest));
        }
        search = colon + 1;
    }
    None
}

fn starts_flow_or_quote(text: &str) -> bool {
    text.starts_with(['[', '{', '"', '\''])
}

/// Drops a ` # comment` from a plain scalar.
fn strip_comment(text: &str) -> &str {
    let mut previous_blank = false;
    for (i, c) in text.char_indices() {
        if c == '#' && previous_blank {
            return text[..i].trim_end();
        }
        previous_blank = c == ' ' || c == '\t';
    }
    text.trim_end()
}

/// Whether every bracket opened in `text` (outside quotes) is closed.
fn flow_is_closed(text: &str) -> bool {
    let mut depth = 0i32;
    let mut quote = None;
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        match (quote, c) {
            (Some('"'), '\\') => {
                chars.next();
            }
            (Some(q), c) if q == c => quote = None,
            (Some(_), _) => {}
            (None, '"' | '\'') => quote = Some(c),
            (None, '[' | '{') => depth += 1,
            (None, ']' | '}') => {
                depth -= 1;
                if depth == 0 {
                    return true;
                }
            }
            (None, _) => {}
        }
    }
    false
}

/// Reads a flow collection (`[a, "b"]`, `{k: v}`) character by character.
struct FlowReader {
    chars: Vec<char>,
    at: usize,
    /// Brackets open around the current position.
    depth: usize,
}

impl FlowReader {
    fn skip_blanks(&mut self) {
        while self.chars.get(self.at).is_some_and(|c| c.is_whitespace()) {
            self.at += 1;
        }
    }

    fn value(&mut self) -> Result<YamlValue, String> {
        self.skip_blanks();
        if matches!(self.chars.get(self.at), Some('[' | '{')) {
            self.depth += 1;
            if self.depth > MAX_NESTING {
                return Err(format!("brackets nested more than {MAX_NESTING} levels deep"));
            }
            let collection = self.collection();
            self.depth -= 1;
            return collection;
        }
        self.scalar(&[',', ']', '}'])
    }

    /// A `[…]` list or `{…}` map starting at the current position.
    fn collection(&mut self) -> Result<YamlValue, String> {
        match self.chars.get(self.at) {
            Some('[') => {
                self.at += 1;
                let mut items = Vec::new();
                loop {
                    self.skip_blanks();
                    if self.chars.get(self.at) == Some(&']') {
                        self.at += 1;
                        return Ok(YamlValue::List(items));
                    }
                    items.push(self.value()?);
                    if !self.separator(']')? {
                        return Ok(YamlValue::List(items));
                    }
                }
            }
            Some('{') => {
                self.at += 1;
                let mut entries = Vec::new();
                loop {
                    self.skip_blanks();
                    if self.chars.get(self.at) == Some(&'}') {
                        self.at += 1;
                        return Ok(YamlValue::Map(entries));
                    }
                    let key = match self.scalar(&[':', ',', '}'])? {
                        YamlValue::Text(key) => key,
                        YamlValue::List(_) | YamlValue::Map(_) => String::new(),
                    };
                    self.skip_blanks();
                    let value = if self.chars.get(self.at) == Some(&':') {
                        self.at += 1;
                        self.value()?
                    } else {
                        YamlValue::Text(String::new())
                    };
                    entries.push((key, value));
                    if !self.separator('}')? {
                        return Ok(YamlValue::Map(entries));
                    }
                }
            }
            _ => self.scalar(&[',', ']', '}']),
        }
    }

    /// After an item: `,` → more items (true), the closing bracket → done (false).
    fn separator(&mut self, close: char) -> Result<bool, String> {
        self.skip_blanks();
        match self.chars.get(self.at) {
            Some(',') => {
                self.at += 1;
                Ok(true)
            }
            Some(&c) if c == close => {
                self.at += 1;
                Ok(false)
            }
            _ => Err(format!("expected `,` or `{close}` in a bracketed value")),
        }
    }

    fn scalar(&mut self, stops: &[char]) -> Result<YamlValue, String> {
        self.skip_blanks();
        if let Some(&quote @ ('"' | '\'')) = self.chars.get(self.at) {
            let rest: String = self.chars[self.at + 1..].iter().collect();
            let end = closing_quote(&rest, quote).ok_or("a quoted value is never closed")?;
            self.at += 1 + rest[..end].chars().count() + 1;
            return Ok(YamlValue::Text(unquote(&rest[..end], quote)));
        }
        let start = self.at;
        while let Some(c) = self.chars.get(self.at) {
            if stops.contains(c) {
                break;
            }
            self.at += 1;
        }
        let text: String = self.chars[start..self.at].iter().collect();
        Ok(YamlValue::Text(text.trim().to_string()))
    }
}

#[cfg(test)]
#[path = "front_matter_tests.rs"]
mod tests;
