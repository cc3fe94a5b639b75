//! The thinking pane: the current model call's reasoning, live; earlier steps' reasoning
//! folded to one line each, expandable.

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

/// All steps' thinking, newest last.
#[derive(Default)]
pub struct ThinkingPane {
    blocks: Vec<ThinkingBlock>,
    /// The model call under way: (turn, step). A block opens at its first thinking.
    current: (u32, u32),
    selected: Option<usize>,
    /// Lines scrolled up from the bottom; 0 follows the live text.
    scroll_back: usize,
    height: usize,
}

impl ThinkingPane {
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
            self.scroll_back = 0;
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
        self.scroll_back += lines;
    }

    pub fn scroll_down(&mut self, lines: usize) {
        self.scroll_back = self.scroll_back.saturating_sub(lines);
    }

    pub fn page(&self) -> usize {
        self.height.saturating_sub(1).max(1)
    }

    pub fn key_hints(&self) -> Vec<KeyHint> {
        vec![
            KeyHint::new("↑/↓", "select a step"),
            KeyHint::new("Enter", "fold / unfold"),
            KeyHint::new("PgUp/PgDn", "scroll"),
        ]
    }

    pub fn render(&mut self, area: Rect, buf: &mut Buffer, theme: &Theme, focused: bool) {
        self.height = usize::from(area.height);
        let width = area.width.max(1);
        let mut lines: Vec<Line<'static>> = Vec::new();
        for (index, block) in self.blocks.iter().enumerate() {
            let selected = focused && self.selected == Some(index);
            let words = block.text.split_whitespace().count();
            let marker = if block.folded { "▸" } else { "▾" };
            let mut header = Line::from(vec![
                Span::styled(
                    format!("{marker} turn {} · step {}", block.turn, block.step),
                    theme.accent,
                ),
                Span::styled(format!(" · {words} words"), theme.dim),
            ]);
            if selected {
                header = header.style(theme.selection);
            }
            lines.push(header);
            if !block.folded {
                let body: Vec<Line> = block
                    .text
                    .lines()
                    .map(|line| Line::from(Span::styled(line.to_string(), theme.thinking)))
                    .collect();
                lines.extend(wrap::wrap_lines(&body, width));
            }
        }
        if lines.is_empty() {
            lines.push(Line::from(Span::styled(
                "the model's thinking appears here",
                theme.dim,
            )));
        }
        let max_back = lines.len().saturating_sub(self.height);
        self.scroll_back = self.scroll_back.min(max_back);
        let start = lines.len().saturating_sub(self.height + self.scroll_back);
        let visible: Vec<Line<'static>> = lines.into_iter().skip(start).take(self.height).collect();
        Paragraph::new(visible).render(area, buf);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

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
