//! Overlays as layers: each one a type in its own file implementing [`Layer`], kept on
//! the app's overlay stack, where the top one gets keys first and is drawn last.
//!
//! A layer answers a key with an [`OverlayAction`] (used, not its key, close me, or an
//! action for the app to carry out) and never reaches into the app: it reads what it
//! needs from the `&App` it is drawn with and the [`OverlayContext`] it handles keys
//! with. Opening one is a slash command or a binding calling `App::open_layer`.

pub mod approvals;
pub mod file_preview;
pub mod first_run;
pub mod help;
pub mod history;
pub mod mcp;
pub mod notes;
pub mod resume_question;
pub mod sessions;
pub mod skills;
pub mod stats;
pub mod themes;
pub mod tool_detail;
pub mod trust;
pub mod version;

use crossterm::event::KeyEvent;
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;

use super::app::App;
use super::keys::KeyHint;
use super::keys::{OverlayAction, OverlayContext};

/// Lets the app and tests find a layer of a given type on the stack.
pub trait AsAny {
    fn as_any(&self) -> &dyn std::any::Any;
    fn as_any_mut(&mut self) -> &mut dyn std::any::Any;
}

// Only for layers: were it for every `Any`, a `Box<dyn Layer>` would be one too, and
// `boxed.as_any()` (with this trait in scope) would give the box instead of the layer.
impl<T: Layer + 'static> AsAny for T {
    fn as_any(&self) -> &dyn std::any::Any {
        self
    }

    fn as_any_mut(&mut self) -> &mut dyn std::any::Any {
        self
    }
}

/// One overlay on the stack.
pub trait Layer: AsAny {
    /// The frame's title.
    fn title(&self) -> String;

    /// The keys it takes, for the bottom bar.
    fn key_hints(&self) -> Vec<KeyHint>;

    /// Applies a key. Keys it ignores do not reach the panes under it (except Ctrl-C).
    fn on_key(&mut self, key: KeyEvent, context: OverlayContext<'_>) -> OverlayAction;

    /// Scrolls by `lines` (negative: up), as the mouse wheel does; whether it moved.
    fn scroll(&mut self, _lines: i32) -> bool {
        false
    }

    /// Draws it over the panes, on a screen of `size`.
    fn render(&self, app: &App, size: Rect, buf: &mut Buffer);

    /// Whether it shows the session itself, so it closes when another is resumed.
    fn about_session(&self) -> bool {
        false
    }

    /// Whether it shows the history snapshot, so a new one is asked for when the
    /// history changes while it is open.
    fn shows_history(&self) -> bool {
        false
    }

    /// Whether it is a question the person must read before answering: it arms like an
    /// approval (keys typed just before it appeared answer nothing).
    fn is_question(&self) -> bool {
        false
    }

    /// An agent's event reached the workbench; a layer waiting for an answer (the notes,
    /// a history snapshot) takes it. Whether the layer changed.
    fn on_event(&mut self, _event: &crate::protocol::Event) -> bool {
        false
    }
}

/// The keys every scrolled text layer shares: arrows, pages, ends; Esc or q closes.
pub fn scroll_key(scroll: &mut super::scroll::Scroll, key: KeyEvent) -> OverlayAction {
    use crossterm::event::KeyCode;
    let moved = match key.code {
        KeyCode::Esc | KeyCode::Char('q') => return OverlayAction::Close,
        KeyCode::Up | KeyCode::Char('k') => scroll.by(-1),
        KeyCode::Down | KeyCode::Char('j') => scroll.by(1),
        KeyCode::PageUp => scroll.page_up(),
        KeyCode::PageDown | KeyCode::Char(' ') => scroll.page_down(),
        KeyCode::Home | KeyCode::Char('g') => scroll.home(),
        KeyCode::End | KeyCode::Char('G') => scroll.end(),
        _ => return OverlayAction::Ignored,
    };
    if moved {
        OverlayAction::Changed
    } else {
        OverlayAction::Ignored
    }
}

/// The hints of a scrolled text layer.
pub const SCROLL_HINTS: [KeyHint; 2] = [
    KeyHint::new("↑/↓/PgUp/PgDn", "scroll"),
    KeyHint::new("Esc/q", "close"),
];

/// Where a full text layer is drawn: as the other text overlays, most of the screen.
pub fn text_area(size: Rect) -> Rect {
    super::popup::centered(
        size,
        size.width.saturating_sub(6).min(120),
        size.height.saturating_sub(2),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A boxed layer on the stack is found as what it is, whichever way it is asked.
    #[test]
    fn a_boxed_layer_downcasts_to_its_own_type() {
        let boxed: Box<dyn Layer> = Box::new(stats::Stats::default());
        assert!(boxed.as_any().is::<stats::Stats>());
        assert!(AsAny::as_any(&*boxed).is::<stats::Stats>());
        assert!(!boxed.as_any().is::<Box<dyn Layer>>());
        let mut stack: Vec<Box<dyn Layer>> = vec![boxed];
        assert!(
            stack
                .last_mut()
                .and_then(|layer| layer.as_any_mut().downcast_mut::<stats::Stats>())
                .is_some()
        );
    }
}
