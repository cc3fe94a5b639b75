//! Scrolling a text taller than its view: a position that stays within the text (so ↑
//! after End moves at once) and pages the size of the view, learnt at each frame.

/// A page: the view's height less two lines, so a line or two of context stays on screen.
pub fn page_of(visible_rows: usize) -> usize {
    visible_rows.saturating_sub(2).max(1)
}

/// Where a scrolled view stands, and what the last frame knew of its text.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Scroll {
    top: usize,
    /// The largest useful `top`; unknown (any) before the first frame.
    max: usize,
    page: usize,
}

impl Default for Scroll {
    fn default() -> Self {
        Scroll {
            top: 0,
            max: usize::MAX,
            page: 10,
        }
    }
}

impl Scroll {
    /// The first line shown.
    pub fn top(&self) -> usize {
        self.top
    }

    /// Called when the view is drawn: `total` lines in a view of `visible` rows. Returns
    /// the first line to show.
    pub fn fit(&mut self, total: usize, visible: usize) -> usize {
        self.max = total.saturating_sub(visible);
        self.page = page_of(visible);
        self.top = self.top.min(self.max);
        self.top
    }

    /// Moves by `lines` (negative: up). Returns whether the position changed.
    pub fn by(&mut self, lines: i64) -> bool {
        let step = usize::try_from(lines.unsigned_abs()).unwrap_or(usize::MAX);
        let next = if lines < 0 {
            self.top.saturating_sub(step)
        } else {
            self.top.saturating_add(step).min(self.max)
        };
        let moved = next != self.top;
        self.top = next;
        moved
    }

    pub fn page_up(&mut self) -> bool {
        self.by(-i64::try_from(self.page).unwrap_or(i64::MAX))
    }

    pub fn page_down(&mut self) -> bool {
        self.by(i64::try_from(self.page).unwrap_or(i64::MAX))
    }

    pub fn home(&mut self) -> bool {
        self.by(i64::MIN)
    }

    /// To the end; before the first frame, the frame clamps it.
    pub fn end(&mut self) -> bool {
        self.by(i64::MAX)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn end_then_up_moves_at_once_and_pages_leave_context() {
        let mut scroll = Scroll::default();
        assert_eq!(scroll.fit(100, 20), 0);
        assert!(scroll.end());
        assert_eq!(scroll.top(), 80);
        assert!(scroll.by(-1));
        assert_eq!(scroll.top(), 79);
        assert!(scroll.page_up());
        assert_eq!(scroll.top(), 61);
        assert!(scroll.home());
        assert!(!scroll.page_up());
        // Before any frame, End goes as far as the first frame allows.
        let mut fresh = Scroll::default();
        fresh.end();
        assert_eq!(fresh.fit(30, 10), 20);
        assert_eq!(page_of(1), 1);
    }
}
