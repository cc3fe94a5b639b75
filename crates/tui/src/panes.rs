//! The panes and where the last frame put them: plain data that the app keeps (for the
//! mouse) and the layout computes, so neither has to import the other's module.

use ratatui::layout::{Position, Rect};

/// Columns from which the side panes fit beside the conversation.
pub const WIDE_COLUMNS: u16 = 120;

/// The panes that can hold focus.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Pane {
    Tree,
    Conversation,
    Input,
    Thinking,
    Timeline,
}

impl Pane {
    pub fn title(self) -> &'static str {
        match self {
            Pane::Tree => "Files",
            Pane::Conversation => "Conversation",
            Pane::Input => "Input",
            Pane::Thinking => "Thinking",
            Pane::Timeline => "Tools",
        }
    }
}

/// The rectangles of the last frame.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Areas {
    pub narrow: bool,
    pub title: Rect,
    pub status: Rect,
    /// Outer rectangles (borders included), in drawing order: later ones are on top.
    pub panes: Vec<(Pane, Rect)>,
    /// The plan's section, when it shows (above the tools, or over the conversation
    /// when narrow); drawn after the panes, it holds no focus.
    pub plan: Option<Rect>,
}

impl Areas {
    /// The topmost pane at a screen position.
    pub fn pane_at(&self, position: Position) -> Option<(Pane, Rect)> {
        self.panes
            .iter()
            .rev()
            .find(|(_, area)| area.contains(position))
            .copied()
    }

    pub fn get(&self, pane: Pane) -> Option<Rect> {
        self.panes
            .iter()
            .rev()
            .find(|(p, _)| *p == pane)
            .map(|(_, area)| *area)
    }
}
