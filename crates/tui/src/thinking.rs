//! The thinking pane: the current model call's reasoning, live; earlier steps' reasoning
//! folded to one line each, expandable.

use std::cell::{Cell, RefCell};

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Paragraph, Widget};

use super::keys::KeyHint;
use super::text::wrap;
use super::theme::Theme;

/// The thinking of one model call.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ThinkingBlock {
    pub turn: u32,
    pub step: u32,
    pub text: String,
    pub folded: bool,
}

/// A block's body wrapped for one width: the whole lines so far (through the last
/// newline) are wrapped once; only the line still growing is wrapped on each frame.
#[derive(Default)]
struct Wrapped {
    width: u16,
    /// Bytes of the text whose lines are in `lines`: up to and including the last `\n`.
    bytes: usize,
    lines: Vec<Line<'static>>,
}

/// What a block's rendering keeps between frames.
#[derive(Default)]
struct BlockCache {
    wrapped: Wrapped,
    words: WordCount,
}

/// A running count of a growing text's words (what `split_whitespace().count()` says).
#[derive(Clone, Copy, Default)]
struct WordCount {
    bytes: usize,
    words: usize,
    in_word: bool,
}

impl WordCount {
    fn update(&mut self, text: &str) -> usize {
        for c in text[self.bytes.min(text.len())..].chars() {
            if c.is_whitespace() {
                self.in_word = false;
            } else if !self.in_word {
                self.in_word = true;
                self.words += 1;
            }
        }
        self.bytes = text.len();
        self.words
    }
}

/// All steps' thinking, newest last.
#[derive(Default)]
pub struct ThinkingPane {
    blocks: Vec<ThinkingBlock>,
    /// Per block, parallel to `blocks`: what rendering it keeps between frames (drawing
    /// borrows the app immutably, so it is in a cell, as is what the frame adjusts).
    caches: RefCell<Vec<BlockCache>>,
    /// The model call under way: (turn, step). A block opens at its first thinking.
    current: (u32, u32),
    selected: Option<usize>,
    /// Lines scrolled up from the bottom; 0 follows the live text.
    scroll_back: Cell<usize>,
    height: Cell<usize>,
}

impl ThinkingPane {
    /// What the tests look at; drawing reads the blocks itself.
    #[cfg(test)]
    pub fn blocks(&self) -> &[ThinkingBlock] {
        &self.blocks
    }

    /// A model call begins; its thinking (if any) opens a block, folding older ones.
    pub fn start_step(&mut self, turn: u32, step: u32) {
        self.current = (turn, step);
    }

    pub fn push_delta(&mut self, delta: &str) {
        let (turn, step) = self.current;
        let open = self
            .blocks
            .last()
            .is_some_and(|b| (b.turn, b.step) == (turn, step));
        if !open {
            for block in &mut self.blocks {
                block.folded = true;
            }
            self.blocks.push(ThinkingBlock {
                turn,
                step,
                text: String::new(),
                folded: false,
            });
            self.caches.get_mut().push(BlockCache::default());
            self.scroll_back.set(0);
        }
        if let Some(block) = self.blocks.last_mut() {
            block.text.push_str(delta);
        }
    }

    /// A retry streams the reply again: drop what this step thought so far.
    pub fn discard_current(&mut self) {
        if self
            .blocks
            .last()
            .is_some_and(|b| (b.turn, b.step) == self.current)
        {
            self.blocks.pop();
            self.caches.get_mut().pop();
        }
    }

    /// Forgets the wrapped bodies (the theme changed).
    pub fn invalidate_all(&mut self) {
        for cache in self.caches.get_mut() {
            cache.wrapped = Wrapped::default();
        }
    }

    pub fn clear(&mut self) {
        *self = ThinkingPane::default();
    }

    pub fn select_next(&mut self) {
        if !self.blocks.is_empty() {
            self.selected = Some(
                self.selected
                    .map_or(self.blocks.len() - 1, |i| (i + 1).min(self.blocks.len() - 1)),
            );
        }
    }

    pub fn select_previous(&mut self) {
        if !self.blocks.is_empty() {
            self.selected = Some(
                self.selected
                    .map_or(self.blocks.len() - 1, |i| i.saturating_sub(1)),
            );
        }
    }

    /// Folds or unfolds the selected step (the newest when none is selected).
    pub fn toggle_selected(&mut self) {
        let index = self.selected.unwrap_or(self.blocks.len().saturating_sub(1));
        if let Some(block) = self.blocks.get_mut(index) {
            block.folded = !block.folded;
        }
    }

    pub fn scroll_up(&mut self, lines: usize) {
        self.scroll_back.set(self.scroll_back.get().saturating_add(lines));
    }

    pub fn scroll_down(&mut self, lines: usize) {
        self.scroll_back.set(self.scroll_back.get().saturating_sub(lines));
    }

    pub fn page(&self) -> usize {
        super::scroll::page_of(self.height.get())
    }

    pub fn key_hints(&self) -> Vec<KeyHint> {
        vec![
            KeyHint::new("↑/↓", "select a step"),
            KeyHint::new("Enter", "fold / unfold"),
            KeyHint::new("PgUp/PgDn", "scroll"),
        ]
    }

    pub fn render(&self, area: Rect, buf: &mut Buffer, theme: &Theme, focused: bool) {
        let height = usize::from(area.height);
        self.height.set(height);
        let mut caches = self.caches.borrow_mut();
        let width = area.width.max(1);
        // Per block: its header and the wrapped line still growing; whole lines are
        // wrapped once into the block's cache.
        let mut parts: Vec<(Line<'static>, Vec<Line<'static>>)> = Vec::with_capacity(self.blocks.len());
        for (index, block) in self.blocks.iter().enumerate() {
            let selected = focused && self.selected == Some(index);
            let cache = &mut caches[index];
            let words = cache.words.update(&block.text);
            let marker = if block.folded { "▸" } else { "▾" };
            let mut header = Line::from(vec![
                Span::styled(
                    format!("{marker} turn {} · step {}", block.turn, block.step),
                    theme.accent,
                ),
                Span::styled(format!(" · {words} words"), theme.dim),
            ]);
            if selected {
                header = theme.selected(header);
            }
            let mut growing = Vec::new();
            if !block.folded {
                // A hostile or damaged stream's megabytes are not laid out (see
                // `conversation::MAX_DRAWN_BYTES`).
                let (text, left) = super::conversation::drawn_part(&block.text);
                let wrapped = &mut cache.wrapped;
                if wrapped.width != width || wrapped.bytes > text.len() {
                    *wrapped = Wrapped {
                        width,
                        ..Wrapped::default()
                    };
                }
                let whole = text.rfind('\n').map_or(0, |at| at + 1);
                if whole > wrapped.bytes {
                    let body = body_lines(&text[wrapped.bytes..whole], theme);
                    wrapped.lines.extend(wrap::wrap_lines(&body, width));
                    wrapped.bytes = whole;
                }
                growing = wrap::wrap_lines(&body_lines(&text[whole..], theme), width);
                if left > 0 {
                    growing.push(super::conversation::not_drawn(left, theme));
                }
            }
            parts.push((header, growing));
        }
        let mut all: Vec<&Line<'static>> = Vec::new();
        for ((header, growing), (block, cache)) in parts.iter().zip(self.blocks.iter().zip(caches.iter())) {
            all.push(header);
            if !block.folded {
                all.extend(cache.wrapped.lines.iter());
                all.extend(growing.iter());
            }
        }
        let placeholder = Line::from(Span::styled("the model's thinking appears here", theme.dim));
        if all.is_empty() {
            all.push(&placeholder);
        }
        let max_back = all.len().saturating_sub(height);
        let scroll_back = self.scroll_back.get().min(max_back);
        self.scroll_back.set(scroll_back);
        let start = all.len().saturating_sub(height + scroll_back);
        let visible: Vec<Line<'static>> = all.into_iter().skip(start).take(height).cloned().collect();
        Paragraph::new(visible).render(area, buf);
    }
}

/// The body's source lines, styled as thinking.
fn body_lines(text: &str, theme: &Theme) -> Vec<Line<'static>> {
    text.lines()
        // Escape sequences go whole (a newline ends any of them, so line by line is whole).
        .map(|line| {
            Line::from(Span::styled(
                miniagent_text::clean(line).into_owned(),
                theme.thinking,
            ))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    /// The pane drawn at 30×12.
    fn drawn(pane: &mut ThinkingPane) -> Buffer {
        let area = Rect::new(0, 0, 30, 12);
        let mut buf = Buffer::empty(area);
        pane.render(area, &mut buf, &Theme::dark(), false);
        buf
    }

    #[test]
    fn streamed_thinking_wraps_like_the_whole_text() {
        let text = "First line of thought that is long enough to wrap.\nshort\n\nA last line, still growing as it streams in 先看看.";
        let mut whole = ThinkingPane::default();
        whole.start_step(1, 1);
        whole.push_delta(text);
        let mut streamed = ThinkingPane::default();
        streamed.start_step(1, 1);
        let chars: Vec<char> = text.chars().collect();
        for piece in chars.chunks(3) {
            streamed.push_delta(&piece.iter().collect::<String>());
            drawn(&mut streamed);
        }
        assert_eq!(drawn(&mut streamed), drawn(&mut whole));
        let words = text.split_whitespace().count();
        let header = format!("▾ turn 1 · step 1 · {words} words");
        let buf = drawn(&mut streamed);
        let top: String = (0..30).map(|x| buf[(x, 0)].symbol().to_string()).collect();
        assert!(top.starts_with(&header), "{top}");
    }

    #[test]
    fn steps_fold_as_new_ones_start() {
        let mut pane = ThinkingPane::default();
        pane.start_step(1, 1);
        pane.push_delta("first idea");
        pane.start_step(1, 2);
        // A step without thinking leaves no block.
        pane.start_step(2, 1);
        pane.push_delta("second");
        pane.discard_current();
        pane.push_delta("again");
        assert_eq!(
            pane.blocks(),
            &[
                ThinkingBlock {
                    turn: 1,
                    step: 1,
                    text: "first idea".into(),
                    folded: true
                },
                ThinkingBlock {
                    turn: 2,
                    step: 1,
                    text: "again".into(),
                    folded: false
                },
            ]
        );
        pane.select_previous();
        pane.select_previous();
        pane.toggle_selected();
        assert!(!pane.blocks()[0].folded);
    }
}
