//! One overlay on the workbench's stack, as a trait the stack can hold without knowing
//! any overlay: the layers themselves are in `layers/`, one file each. A layer answers a
//! key with an [`OverlayAction`] and draws from the state it is given.

use crossterm::event::KeyEvent;
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;

use super::keys::{KeyHint, OverlayAction, OverlayContext};

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

    /// What it draws from: the workbench's state (`App`), named here only as this type
    /// so that the module holding the stack need not import the layers.
    type State: ?Sized;

    /// Draws it over the panes, on a screen of `size`.
    fn render(&self, state: &Self::State, size: Rect, buf: &mut Buffer);

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
    fn on_event(&mut self, _event: &miniagent_protocol::Event) -> bool {
        false
    }
}
