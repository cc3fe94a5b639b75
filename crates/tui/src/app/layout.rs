//! The layout's state: which pane has the keys, which is maximised, which side panes
//! show, and where the last frame put each pane. The rules for the narrow screen (below
//! [`WIDE_COLUMNS`]: one side pane at a time, open over the conversation) live here;
//! `crate::layout` turns this state into rectangles.

use std::cell::RefCell;

use crate::panes::{Areas, Pane, WIDE_COLUMNS};

/// Which side panes show at full width.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SidePanes {
    pub tree: bool,
    pub thinking: bool,
    pub timeline: bool,
}

/// The panes' arrangement.
#[derive(Debug)]
pub struct PaneLayout {
    focus: Pane,
    maximized: Option<Pane>,
    side: SidePanes,
    /// Below 120 columns: the side pane open over the conversation, if any. It stays
    /// pane state, not a layer: it is a pane like the others (it has the focus, takes
    /// its place in the Tab order, scrolls with the wheel, `q`/Esc put it away, and it
    /// joins the layout when the window widens), not a modal that holds the keys, so the
    /// layout draws it and the focus routes its keys as any pane's.
    side_popup: Option<Pane>,
    /// Where each pane was drawn last, for the mouse (set by drawing, which borrows the
    /// app immutably).
    areas: RefCell<Areas>,
}

impl Default for PaneLayout {
    fn default() -> Self {
        Self {
            focus: Pane::Input,
            maximized: None,
            side: SidePanes {
                tree: true,
                thinking: true,
                timeline: true,
            },
            side_popup: None,
            areas: RefCell::new(Areas::default()),
        }
    }
}

/// Whether `pane` is one of the side panes (files, thinking, tools).
pub(crate) fn is_side(pane: Pane) -> bool {
    matches!(pane, Pane::Tree | Pane::Thinking | Pane::Timeline)
}

impl PaneLayout {
    /// The pane with the keys.
    pub fn focus(&self) -> Pane {
        self.focus
    }

    pub fn maximized(&self) -> Option<Pane> {
        self.maximized
    }

    pub fn side(&self) -> SidePanes {
        self.side
    }

    /// The side pane open over the conversation (below 120 columns).
    pub fn side_popup(&self) -> Option<Pane> {
        self.side_popup
    }

    /// Where each pane was drawn last.
    pub fn areas(&self) -> Areas {
        self.areas.borrow().clone()
    }

    /// Whether the last frame (or the last resize) was narrow.
    pub fn narrow(&self) -> bool {
        self.areas.borrow().narrow
    }

    /// A frame was laid out as `areas`.
    pub(crate) fn drawn_at(&self, areas: Areas) {
        *self.areas.borrow_mut() = areas;
    }

    /// The topmost pane drawn at a screen position.
    pub(crate) fn pane_at(
        &self,
        position: ratatui::layout::Position,
    ) -> Option<(Pane, ratatui::layout::Rect)> {
        self.areas.borrow().pane_at(position)
    }

    pub(crate) fn focus_on(&mut self, pane: Pane) {
        self.focus = pane;
    }

    /// F5: the focused pane fills the screen, or everything comes back.
    pub(crate) fn toggle_maximized(&mut self) {
        self.maximized = match self.maximized {
            Some(_) => None,
            None => Some(self.focus),
        };
    }

    /// Whether the side pane `pane` is part of the full-width layout.
    pub(crate) fn set_shown(&mut self, pane: Pane, shown: bool) {
        match pane {
            Pane::Tree => self.side.tree = shown,
            Pane::Thinking => self.side.thinking = shown,
            Pane::Timeline => self.side.timeline = shown,
            Pane::Conversation | Pane::Input => {}
        }
    }

    /// The terminal was resized to `width` columns: whether the layout is narrow is known
    /// now, before the next frame, so a key that comes first (F4 right after a resize)
    /// acts on the layout it will be drawn in. Going narrow, a focused side pane opens
    /// over the conversation; going wide, one open over it joins the layout.
    pub(crate) fn resized(&mut self, width: u16) {
        let narrow = width < WIDE_COLUMNS;
        self.areas.borrow_mut().narrow = narrow;
        if narrow {
            // The side pane with the keys stays on screen with them, over the conversation:
            // a pane that holds the keys unseen would take ↑ and Enter from the input.
            if is_side(self.focus) && self.maximized.is_none() {
                self.side_popup = Some(self.focus);
            }
        } else if let Some(pane) = self.side_popup.take() {
            // A pane open over the conversation joins the wide layout, keeping the keys.
            self.set_shown(pane, true);
        }
    }

    /// Esc's first use: a side pane open over the conversation is put away, and the
    /// input gets the keys back. Whether there was one.
    pub(crate) fn close_side_popup(&mut self) -> bool {
        if self.side_popup.take().is_none() {
            return false;
        }
        self.focus = Pane::Input;
        true
    }

    /// Esc's last use: a maximised pane is restored. Whether there was one.
    pub(crate) fn restore(&mut self) -> bool {
        self.maximized.take().is_some()
    }

    /// The side pane `pane` is shown (folded into the layout at full width, over the
    /// conversation when narrow) and gets the keys. Whether it is a side pane.
    pub(crate) fn show_side(&mut self, pane: Pane) -> bool {
        if !is_side(pane) {
            return false;
        }
        if self.narrow() {
            self.side_popup = Some(pane);
        } else {
            // The popup is the narrow layout's: none is left to come back at 80 columns.
            self.side_popup = None;
            self.set_shown(pane, true);
        }
        // A maximised other pane would hide it.
        if self.maximized.is_some_and(|maximized| maximized != pane) {
            self.maximized = None;
        }
        self.focus = pane;
        true
    }

    /// The focused side pane is put away (the popup closed when narrow, the column
    /// folded at full width) and the input gets the keys back. Whether it was a side
    /// pane on screen.
    pub(crate) fn put_side_away(&mut self) -> bool {
        let pane = self.focus;
        if !is_side(pane) || !self.visible_panes().contains(&pane) {
            return false;
        }
        if self.side_popup == Some(pane) {
            self.side_popup = None;
        } else {
            self.set_shown(pane, false);
        }
        if self.maximized == Some(pane) {
            self.maximized = None;
        }
        self.focus = Pane::Input;
        true
    }

    /// The panes on screen now, in Tab order.
    pub fn visible_panes(&self) -> Vec<Pane> {
        if let Some(pane) = self.maximized {
            return if pane == Pane::Input {
                vec![Pane::Input]
            } else {
                vec![pane, Pane::Input]
            };
        }
        let mut panes = Vec::new();
        let wide = !self.narrow();
        if (wide && self.side.tree) || self.side_popup == Some(Pane::Tree) {
            panes.push(Pane::Tree);
        }
        panes.push(Pane::Conversation);
        panes.push(Pane::Input);
        for pane in [Pane::Thinking, Pane::Timeline] {
            let shown = match pane {
                Pane::Thinking => self.side.thinking,
                _ => self.side.timeline,
            };
            if (wide && shown) || self.side_popup == Some(pane) {
                panes.push(pane);
            }
        }
        panes
    }

    /// Tab and Shift-Tab: the keys go to the next (or previous) pane on screen.
    pub(crate) fn cycle_focus(&mut self, forward: bool) {
        let panes = self.visible_panes();
        let at = panes.iter().position(|p| *p == self.focus).unwrap_or(0);
        let next = if forward {
            (at + 1) % panes.len()
        } else {
            (at + panes.len() - 1) % panes.len()
        };
        self.focus = panes[next];
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_side_pane_opens_over_the_conversation_when_narrow_and_joins_the_layout_when_wide() {
        let mut layout = PaneLayout::default();
        layout.set_shown(Pane::Timeline, false);
        layout.resized(80);
        assert!(layout.show_side(Pane::Timeline));
        assert_eq!(
            (layout.focus(), layout.side_popup(), layout.visible_panes()),
            (
                Pane::Timeline,
                Some(Pane::Timeline),
                vec![Pane::Conversation, Pane::Input, Pane::Timeline]
            )
        );
        layout.resized(160);
        assert_eq!(
            (layout.focus(), layout.side_popup(), layout.side().timeline),
            (Pane::Timeline, None, true)
        );
        assert!(layout.put_side_away());
        assert_eq!(
            (layout.focus(), layout.side().timeline, layout.put_side_away()),
            (Pane::Input, false, false)
        );
    }

    #[test]
    fn tab_goes_round_the_panes_on_screen_and_a_maximised_pane_keeps_only_the_input() {
        let mut layout = PaneLayout::default();
        layout.resized(160);
        let mut order = Vec::new();
        for _ in 0..5 {
            layout.cycle_focus(true);
            order.push(layout.focus());
        }
        assert_eq!(
            order,
            [
                Pane::Thinking,
                Pane::Timeline,
                Pane::Tree,
                Pane::Conversation,
                Pane::Input
            ]
        );
        layout.focus_on(Pane::Thinking);
        layout.toggle_maximized();
        assert_eq!(layout.visible_panes(), [Pane::Thinking, Pane::Input]);
        assert!(layout.restore());
        assert!(!layout.restore());
    }
}
