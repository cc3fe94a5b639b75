//! Markdown (CommonMark with GFM tables, task lists, strikethrough and footnotes) as
//! styled terminal lines wrapped to a width.
//!
//! The assistant's text is rendered on every streamed chunk, so partial input must look
//! right: an unclosed code fence already shows as code. Code blocks are never
//! word-wrapped; their long lines are hard-wrapped between characters so no code is
//! hidden (a transcript cannot scroll sideways). Each block is indented two columns,
//! which sets it apart even without colour, and painted in `theme.code_block` up to the
//! right edge.

use pulldown_cmark::{Alignment, CodeBlockKind, Event, HeadingLevel, Options, Parser, Tag, TagEnd};
use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};

use super::highlight;
use super::wrap::{display_width, hard_wrap_line, truncate_spans, wrap_line};
use crate::theme::Theme;

/// Columns that code is indented inside its block.
const CODE_INDENT: &str = "  ";
/// Space between table columns, around the `│`.
const COLUMN_GAP: usize = 3;

/// `source` rendered as lines no wider than `width` (0 counts as 1).
///
/// Headings show their level as `#` marks; links show their URL after the text when it
/// differs; lists indent continuation lines under the item text; quotes carry a `│ `
/// bar on every line; tables shrink their columns to fit and wrap cells inside them
/// (a list when the columns cannot get a few characters each).
pub fn render_markdown(source: &str, width: u16, theme: &Theme) -> Vec<Line<'static>> {
    render_markdown_blocks(source, width, theme).0
}

/// A code block as [`render_markdown_blocks`] drew it: which of the lines show it, and
/// its code (without the fences), for copying.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CodeBlock {
    pub lines: std::ops::Range<usize>,
    pub code: String,
}

/// [`render_markdown`], and where its code blocks were drawn.
pub fn render_markdown_blocks(
    source: &str,
    width: u16,
    theme: &Theme,
) -> (Vec<Line<'static>>, Vec<CodeBlock>) {
    let options = Options::ENABLE_TABLES
        | Options::ENABLE_STRIKETHROUGH
        | Options::ENABLE_TASKLISTS
        | Options::ENABLE_FOOTNOTES;
    let mut renderer = Renderer::new(usize::from(width.max(1)), theme);
    // Escape sequences in a reply go whole, as everywhere else a person reads text: only
    // dropping their ESC would leave `]0;title[2J` on the screen.
    let source = miniagent_text::clean(source);
    for event in Parser::new_ext(&source, options) {
        renderer.event(event);
    }
    renderer.finish()
}

/// A block that prefixes the lines inside it: a quote's bar, a list item's marker (on
/// its first line) and hanging indent (on the rest), a footnote's label.
struct Container {
    first: Vec<Span<'static>>,
    rest: Vec<Span<'static>>,
    width: usize,
}

/// A list being rendered: the next number of an ordered list.
struct List {
    next_number: Option<u64>,
}

/// A GFM table being collected; it is laid out when it ends, when all widths are known.
#[derive(Default)]
struct Table {
    alignments: Vec<Alignment>,
    rows: Vec<Vec<Vec<Span<'static>>>>,
    header_rows: usize,
    in_head: bool,
    row: Vec<Vec<Span<'static>>>,
}

/// A link whose text is being collected, so its URL can follow the text.
struct OpenLink {
    url: String,
    text: String,
}

/// Turns parser events into lines, keeping the open blocks and inline styles.
struct Renderer<'t> {
    width: usize,
    theme: &'t Theme,
    lines: Vec<Line<'static>>,
    containers: Vec<Container>,
    /// Containers from this index on have not had a line yet, so the next line shows
    /// their first-line prefix (a list marker). Always a suffix of the stack, because a
    /// line marks every open container as started.
    unstarted_from: usize,
    lists: Vec<List>,
    /// Inline content waiting to be wrapped: one entry per hard line break.
    inline: Vec<Vec<Span<'static>>>,
    /// Patches for nested inline styles (emphasis, strong, link, heading, quote).
    styles: Vec<Style>,
    links: Vec<OpenLink>,
    code: Option<(String, String)>,
    table: Option<Table>,
    /// A finished block asks for a blank line before whatever block comes next.
    blank_pending: bool,
    /// The blank line the next block starts with, waiting for that block's first line
    /// (a block may turn out empty, like an HTML comment). Holds how many containers
    /// enclose the blank line: the new block's own ones (a quote's bar) do not.
    blank_before_next: Option<usize>,
    /// Inside a multi-line HTML comment, which is not shown.
    in_html_comment: bool,
    /// The code blocks drawn so far.
    blocks: Vec<CodeBlock>,
}

impl<'t> Renderer<'t> {
    fn new(width: usize, theme: &'t Theme) -> Self {
        Renderer {
            width,
            theme,
            lines: Vec::new(),
            containers: Vec::new(),
            unstarted_from: 0,
            lists: Vec::new(),
            inline: Vec::new(),
            styles: Vec::new(),
            links: Vec::new(),
            code: None,
            table: None,
            blank_pending: false,
            blank_before_next: None,
            in_html_comment: false,
            blocks: Vec::new(),
        }
    }

    fn finish(mut self) -> (Vec<Line<'static>>, Vec<CodeBlock>) {
        self.flush_inline();
        if let Some((code, language)) = self.code.take() {
            self.emit_code(&code, &language);
        }
        if let Some(table) = self.table.take() {
            self.emit_table(table);
        }
        (self.lines, self.blocks)
    }

    fn event(&mut self, event: Event<'_>) {
        match event {
            Event::Start(tag) => self.start(tag),
            Event::End(tag) => self.end(tag),
            Event::Text(text) => {
                if let Some((code, _)) = self.code.as_mut() {
                    code.push_str(&text);
                } else {
                    self.text(&text, self.style());
                }
            }
            Event::Code(text) => {
                let style = self.style().patch(self.theme.code);
                self.text(&text, style);
            }
            Event::InlineMath(text) | Event::DisplayMath(text) => self.text(&text, self.theme.code),
            Event::Html(html) => self.html_block(&html),
            Event::InlineHtml(html) => self.text(&html, self.theme.dim),
            Event::FootnoteReference(label) => self.text(&format!("[^{label}]"), self.theme.dim),
            Event::SoftBreak => self.text(" ", self.style()),
            Event::HardBreak => self.inline.push(Vec::new()),
            Event::Rule => {
                self.begin_block();
                let width = self.width.saturating_sub(self.prefix_width()).max(1);
                self.emit(Line::from(Span::styled("─".repeat(width), self.theme.dim)));
                self.blank_pending = true;
            }
            Event::TaskListMarker(done) => self.task_marker(done),
        }
    }

    fn start(&mut self, tag: Tag<'_>) {
        match tag {
            Tag::Paragraph => self.begin_block(),
            Tag::Heading { level, .. } => {
                self.begin_block();
                self.styles.push(self.theme.heading);
                let marks = "#".repeat(heading_depth(level));
                self.text(&format!("{marks} "), self.style());
            }
            Tag::BlockQuote(_) => {
                self.begin_block();
                let bar = vec![Span::styled("│ ", self.theme.quote)];
                self.push_container(bar.clone(), bar);
                self.styles.push(self.theme.quote);
            }
            Tag::CodeBlock(kind) => {
                self.begin_block();
                let language = match kind {
                    CodeBlockKind::Fenced(info) => {
                        info.split_whitespace().next().unwrap_or_default().to_string()
                    }
                    CodeBlockKind::Indented => String::new(),
                };
                self.code = Some((String::new(), language));
            }
            Tag::HtmlBlock => self.begin_block(),
            Tag::List(start) => {
                // A nested list follows its item's text without a blank line.
                if self.lists.is_empty() {
                    self.begin_block();
                } else {
                    self.flush_inline();
                }
                self.lists.push(List { next_number: start });
            }
            Tag::Item => {
                self.flush_inline();
                self.blank_if_pending();
                let depth = self.lists.len().saturating_sub(1);
                let marker = match self.lists.last_mut().and_then(|list| list.next_number.as_mut()) {
                    Some(number) => {
                        let marker = format!("{number}. ");
                        *number = number.saturating_add(1);
                        marker
                    }
                    None => format!("{} ", ["•", "◦", "▪"][depth % 3]),
                };
                let indent = " ".repeat(display_width(&marker));
                self.push_container(
                    vec![Span::styled(marker, self.theme.accent)],
                    vec![Span::raw(indent)],
                );
            }
            Tag::FootnoteDefinition(label) => {
                self.begin_block();
                let marker = format!("[^{label}]: ");
                let indent = " ".repeat(display_width(&marker));
                self.push_container(
                    vec![Span::styled(marker, self.theme.dim)],
                    vec![Span::raw(indent)],
                );
            }
            Tag::DefinitionList | Tag::DefinitionListTitle | Tag::DefinitionListDefinition => {
                self.begin_block()
            }
            Tag::Table(alignments) => {
                self.begin_block();
                self.table = Some(Table {
                    alignments,
                    ..Table::default()
                });
            }
            Tag::TableHead => {
                if let Some(table) = self.table.as_mut() {
                    table.in_head = true;
                }
            }
            Tag::TableRow | Tag::TableCell => {}
            Tag::Emphasis => self.styles.push(self.theme.emphasis),
            Tag::Strong => self.styles.push(self.theme.strong),
            Tag::Strikethrough => self.styles.push(Style::new().add_modifier(Modifier::CROSSED_OUT)),
            Tag::Superscript | Tag::Subscript => self.styles.push(Style::new()),
            Tag::Link { dest_url, .. } => {
                self.styles.push(self.theme.link);
                self.links.push(OpenLink {
                    url: dest_url.to_string(),
                    text: String::new(),
                });
            }
            Tag::Image { dest_url, .. } => {
                self.styles.push(self.theme.link);
                self.text("[image: ", self.style());
                self.links.push(OpenLink {
                    url: dest_url.to_string(),
                    text: String::new(),
                });
            }
            Tag::MetadataBlock(_) => self.begin_block(),
        }
    }

    fn end(&mut self, tag: TagEnd) {
        match tag {
            TagEnd::Paragraph | TagEnd::HtmlBlock | TagEnd::MetadataBlock(_) => self.end_block(),
            TagEnd::Heading(_) => {
                self.styles.pop();
                self.end_block();
            }
            TagEnd::BlockQuote(_) => {
                self.flush_inline();
                self.styles.pop();
                self.pop_container();
                self.blank_pending = true;
            }
            TagEnd::CodeBlock => {
                if let Some((code, language)) = self.code.take() {
                    self.emit_code(&code, &language);
                }
                self.blank_pending = true;
            }
            TagEnd::List(_) => {
                self.flush_inline();
                self.lists.pop();
                if self.lists.is_empty() {
                    self.blank_pending = true;
                }
            }
            TagEnd::Item | TagEnd::FootnoteDefinition => {
                self.flush_inline();
                if self.unstarted_from < self.containers.len() {
                    // An empty item still shows its marker.
                    self.emit(Line::default());
                }
                self.pop_container();
                if tag == TagEnd::FootnoteDefinition {
                    self.blank_pending = true;
                }
            }
            TagEnd::DefinitionList | TagEnd::DefinitionListTitle | TagEnd::DefinitionListDefinition => {
                self.end_block();
            }
            TagEnd::Table => {
                if let Some(table) = self.table.take() {
                    self.emit_table(table);
                }
                self.blank_pending = true;
            }
            TagEnd::TableHead => {
                self.end_table_row();
                if let Some(table) = self.table.as_mut() {
                    table.in_head = false;
                }
            }
            TagEnd::TableRow => self.end_table_row(),
            TagEnd::TableCell => {
                let cell: Vec<Span<'static>> =
                    std::mem::take(&mut self.inline).into_iter().flatten().collect();
                if let Some(table) = self.table.as_mut() {
                    table.row.push(cell);
                }
            }
            TagEnd::Emphasis
            | TagEnd::Strong
            | TagEnd::Strikethrough
            | TagEnd::Superscript
            | TagEnd::Subscript => {
                self.styles.pop();
            }
            TagEnd::Link => self.end_link(),
            TagEnd::Image => {
                self.text("]", self.style());
                self.end_link();
            }
        }
    }

    /// The style for inline text here: the theme's text style with every open inline
    /// style laid over it in order.
    fn style(&self) -> Style {
        self.styles
            .iter()
            .fold(self.theme.text, |style, patch| style.patch(*patch))
    }

    fn text(&mut self, text: &str, style: Style) {
        for link in &mut self.links {
            link.text.push_str(text);
        }
        // Tabs would vanish when drawn.
        let text = text.replace('\t', "    ");
        if self.inline.is_empty() {
            self.inline.push(Vec::new());
        }
        let Some(line) = self.inline.last_mut() else {
            return;
        };
        match line.last_mut() {
            Some(last) if last.style == style => last.content.to_mut().push_str(&text),
            _ => line.push(Span::styled(text, style)),
        }
    }

    /// A line of block HTML, shown as is (comments are left out).
    fn html_block(&mut self, html: &str) {
        if html.trim_start().starts_with("<!--") {
            self.in_html_comment = true;
        }
        if self.in_html_comment {
            self.in_html_comment = !html.contains("-->");
            return;
        }
        for piece in html.split_inclusive('\n') {
            let text = piece.trim_end_matches(['\n', '\r']);
            if !text.is_empty() {
                self.text(text, self.theme.dim);
            }
            if piece.ends_with('\n') {
                self.inline.push(Vec::new());
            }
        }
    }

    fn end_link(&mut self) {
        self.styles.pop();
        let Some(link) = self.links.pop() else { return };
        let url = link.url;
        let same = url == link.text || url.strip_prefix("mailto:") == Some(link.text.as_str());
        if !url.is_empty() && !same {
            self.text(&format!(" ({url})"), self.theme.dim);
        }
    }

    /// A task item's checkbox joins the item's marker, so wrapped lines of the item's
    /// text line up after the checkbox.
    fn task_marker(&mut self, done: bool) {
        let mark = if done { "[x] " } else { "[ ] " };
        let starts_item =
            self.inline.iter().all(Vec::is_empty) && self.unstarted_from < self.containers.len();
        match self.containers.last_mut() {
            Some(item) if starts_item => {
                let style = if done { self.theme.dim } else { self.theme.accent };
                item.first.push(Span::styled(mark, style));
                item.rest.push(Span::raw("    "));
                item.width += display_width(mark);
            }
            _ => self.text(mark, self.theme.accent),
        }
    }

    fn end_table_row(&mut self) {
        if let Some(table) = self.table.as_mut() {
            let row = std::mem::take(&mut table.row);
            table.rows.push(row);
            if table.in_head {
                table.header_rows = table.rows.len();
            }
        }
    }

    fn push_container(&mut self, first: Vec<Span<'static>>, rest: Vec<Span<'static>>) {
        let width = first.iter().map(|span| display_width(&span.content)).sum();
        self.containers.push(Container { first, rest, width });
    }

    fn pop_container(&mut self) {
        self.containers.pop();
        self.unstarted_from = self.unstarted_from.min(self.containers.len());
    }

    /// Starts a block: ends any inline text before it and puts a blank line between it
    /// and the block before.
    fn begin_block(&mut self) {
        self.flush_inline();
        self.blank_if_pending();
    }

    fn end_block(&mut self) {
        self.flush_inline();
        self.blank_pending = true;
    }

    fn blank_if_pending(&mut self) {
        if self.blank_pending && !self.lines.is_empty() {
            let depth = self.containers.len();
            self.blank_before_next = Some(self.blank_before_next.map_or(depth, |waiting| waiting.min(depth)));
        }
        self.blank_pending = false;
    }

    /// How many of the innermost of the first `depth` containers show their prefix. Deep
    /// nesting keeps only the innermost prefixes that fit in half the width, so text
    /// always has room; the innermost one always shows.
    fn shown_containers(&self, depth: usize) -> (usize, usize) {
        let budget = self.width / 2;
        let mut shown = 0;
        let mut total = 0;
        for container in self.containers[..depth].iter().rev() {
            if shown > 0 && total + container.width > budget {
                break;
            }
            total += container.width;
            shown += 1;
        }
        (shown, total)
    }

    /// The indentation that the open containers take from the width.
    fn prefix_width(&self) -> usize {
        self.shown_containers(self.containers.len()).1
    }

    fn prefix(&self, depth: usize, which: Prefix) -> Vec<Span<'static>> {
        // A waiting blank line may have been asked for inside containers that have
        // since closed.
        let depth = depth.min(self.containers.len());
        let (shown, _) = self.shown_containers(depth);
        let mut spans = Vec::new();
        for (index, container) in self.containers.iter().enumerate().take(depth).skip(depth - shown) {
            let first = which == Prefix::FirstLine && index >= self.unstarted_from;
            spans.extend(
                if first { &container.first } else { &container.rest }
                    .iter()
                    .cloned(),
            );
        }
        spans
    }

    /// Adds a line that already fits the room left by the prefix, behind the prefix.
    fn emit(&mut self, content: Line<'static>) {
        if let Some(depth) = self.blank_before_next.take() {
            let mut spans = self.prefix(depth, Prefix::Continuation);
            // A blank line inside a quote keeps its bar but not the bar's trailing space,
            // and a list's indentation leaves nothing at all.
            while spans
                .last()
                .is_some_and(|span| span.content.trim_end().is_empty())
            {
                spans.pop();
            }
            if let Some(last) = spans.last_mut() {
                let trimmed = last.content.trim_end().to_string();
                last.content = trimmed.into();
            }
            if spans_width(&spans) > self.width {
                spans = truncate_spans(&spans, self.width);
            }
            self.lines.push(Line::from(spans));
        }
        let mut spans = self.prefix(self.containers.len(), Prefix::FirstLine);
        self.unstarted_from = self.containers.len();
        spans.extend(content.spans);
        // Only reachable when the width is narrower than a single prefix.
        if spans_width(&spans) > self.width {
            spans = truncate_spans(&spans, self.width);
        }
        self.lines.push(Line {
            spans,
            style: content.style,
            alignment: content.alignment,
        });
    }

    fn room(&self) -> usize {
        self.width.saturating_sub(self.prefix_width()).max(1)
    }

    fn flush_inline(&mut self) {
        // A block's content ends without a line break; a trailing empty entry only
        // comes from the newline after the last line of block HTML.
        while self.inline.last().is_some_and(Vec::is_empty) {
            self.inline.pop();
        }
        if self.inline.is_empty() {
            return;
        }
        let room = u16::try_from(self.room()).unwrap_or(u16::MAX);
        for spans in std::mem::take(&mut self.inline) {
            for line in wrap_line(&Line::from(spans), room) {
                self.emit(line);
            }
        }
    }

    fn emit_code(&mut self, code: &str, language: &str) {
        let room = self.room();
        let code_width = room.saturating_sub(CODE_INDENT.len()).max(1);
        let block = self.theme.code_block;
        // The blank line a block may start with comes before its first line of code.
        let mut first = None;
        for source_line in highlight::highlight(code, language, self.theme) {
            for piece in hard_wrap_line(&source_line, u16::try_from(code_width).unwrap_or(u16::MAX)) {
                let used = CODE_INDENT.len() + spans_width(&piece.spans);
                let mut spans = vec![Span::styled(CODE_INDENT, block)];
                spans.extend(
                    piece
                        .spans
                        .into_iter()
                        .map(|span| Span::styled(span.content, block.patch(span.style))),
                );
                if used < room {
                    spans.push(Span::styled(" ".repeat(room - used), block));
                }
                self.emit(Line::from(spans));
                first.get_or_insert(self.lines.len() - 1);
            }
        }
        if let Some(first) = first {
            self.blocks.push(CodeBlock {
                lines: first..self.lines.len(),
                code: code.to_string(),
            });
        }
    }
}

#[derive(Clone, Copy, PartialEq)]
enum Prefix {
    /// The next content line: unstarted containers show their first-line prefix.
    FirstLine,
    /// A blank separator line, which must not use up a list marker.
    Continuation,
}

fn spans_width(spans: &[Span<'_>]) -> usize {
    spans.iter().map(|span| display_width(&span.content)).sum()
}

fn heading_depth(level: HeadingLevel) -> usize {
    match level {
        HeadingLevel::H1 => 1,
        HeadingLevel::H2 => 2,
        HeadingLevel::H3 => 3,
        HeadingLevel::H4 => 4,
        HeadingLevel::H5 => 5,
        HeadingLevel::H6 => 6,
    }
}

mod table;

#[cfg(test)]
mod tests;
