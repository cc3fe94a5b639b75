//! Overlays as layers: each one a type in its own file implementing [`Layer`], kept on
//! the app's one layer stack (`layer::LayerStack`), where the top one gets keys first and
//! is drawn last. The questions are layers too: the approval dialog (`approval.rs`, which
//! keeps the top while calls wait), trust (`trust.rs`) and resume (`resume_question.rs`)
//! say how they arm (`Layer::question`) and hold the keys until answered. A text that
//! only scrolls is a [`text::Text`] in the one [`text::TextLayer`].
//!
//! A layer answers a key with an [`OverlayAction`] (used, not its key, close me, or an
//! action for the app to carry out) and never reaches into the app: it reads what it
//! needs from the `&App` it is drawn with and the [`OverlayContext`] it handles keys
//! with. Opening one is a slash command or a binding calling `App::open_layer`.

pub mod approval;
pub mod approvals;
pub mod context;
pub mod diff;
pub mod file_preview;
pub mod first_run;
pub mod history;
pub mod hooks;
pub mod mcp;
pub mod model;
pub mod notes;
pub mod resume_question;
pub mod rewind;
pub mod sessions;
pub mod skills;
pub mod stats;
pub mod text;
pub mod themes;
pub mod tool_detail;
pub mod trust;
pub mod version;

use crossterm::event::KeyEvent;
use ratatui::layout::Rect;

use super::keys::KeyHint;
use super::keys::OverlayAction;

pub use super::layer::Layer;

/// The keys every list to choose from shares (`/theme`, `/model`): ↑/↓ (k/j) move the
/// highlight within `len` entries, Esc or q closes, Enter takes entry `selected` through
/// `take`.
pub fn choice_key(
    selected: &mut usize,
    len: usize,
    key: KeyEvent,
    take: impl FnOnce(usize) -> OverlayAction,
) -> OverlayAction {
    use crossterm::event::KeyCode;
    match key.code {
        KeyCode::Esc | KeyCode::Char('q') => OverlayAction::Close,
        KeyCode::Up | KeyCode::Char('k') => {
            *selected = selected.saturating_sub(1);
            OverlayAction::Changed
        }
        KeyCode::Down | KeyCode::Char('j') => {
            *selected = (*selected + 1).min(len.saturating_sub(1));
            OverlayAction::Changed
        }
        KeyCode::Enter if *selected < len => take(*selected),
        KeyCode::Enter => OverlayAction::Close,
        _ => OverlayAction::Ignored,
    }
}

/// Where the keys that move through a list of `len` entries (↑/↓, k/j, PgUp/PgDn by
/// `page`, Home/End, g/G) take the highlight from `selected`; `None` for any other key.
pub fn list_move(selected: usize, len: usize, page: usize, key: KeyEvent) -> Option<usize> {
    use crossterm::event::KeyCode;
    let last = len.saturating_sub(1);
    let page = page.max(1);
    Some(match key.code {
        KeyCode::Up | KeyCode::Char('k') => selected.saturating_sub(1),
        KeyCode::Down | KeyCode::Char('j') => (selected + 1).min(last),
        KeyCode::PageUp => selected.saturating_sub(page),
        KeyCode::PageDown => (selected + page).min(last),
        KeyCode::Home | KeyCode::Char('g') => 0,
        KeyCode::End | KeyCode::Char('G') => last,
        _ => return None,
    })
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
    use crate::layer::AsAny;

    /// A boxed layer on the stack is found as what it is, whichever way it is asked.
    #[test]
    fn a_boxed_layer_downcasts_to_its_own_type() {
        let boxed: Box<dyn Layer<State = crate::app::App>> = Box::new(stats::Stats::default());
        assert!(boxed.as_any().is::<stats::Stats>());
        assert!(AsAny::as_any(&*boxed).is::<stats::Stats>());
        assert!(!boxed.as_any().is::<Box<dyn Layer<State = crate::app::App>>>());
        let mut stack: Vec<Box<dyn Layer<State = crate::app::App>>> = vec![boxed];
        assert!(
            stack
                .last_mut()
                .and_then(|layer| layer.as_any_mut().downcast_mut::<stats::Stats>())
                .is_some()
        );
    }
}
