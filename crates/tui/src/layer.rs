//! The workbench's overlays: one [`Layer`] trait every overlay implements (the layers
//! themselves are in `layers/`, one file each) and the one [`LayerStack`] they are all
//! opened on, closed from and found in. A layer answers a key with an [`OverlayAction`]
//! and draws from the state it is given; a question (an approval, trust, resume) is a
//! layer too, that holds the keys until answered and arms ([`Arming`]).

use crossterm::event::KeyEvent;
use ratatui::buffer::Buffer;
use ratatui::layout::{Position, Rect};

use super::keys::{KeyHint, OverlayAction, OverlayContext};
use super::question::Arming;

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

    /// When it is a question the person must read before answering: how it arms (keys
    /// typed before it could be read answer nothing). `None`: not a question.
    fn question(&self) -> Option<&Arming> {
        None
    }

    /// The same, to change.
    fn question_mut(&mut self) -> Option<&mut Arming> {
        None
    }

    /// Whether `key` closes it even while it arms (Esc leaves a picker: that answers
    /// nothing). Other keys pressed then answer nothing and push its arming back.
    fn leaves_while_arming(&self, _key: KeyEvent) -> bool {
        false
    }

    /// Whether a plain letter now answers it (an approval's does not while the reason for
    /// a refusal is typed).
    fn takes_answer_letters(&self) -> bool {
        true
    }

    /// Whether it stays above every layer opened after it, and is drawn over the one it
    /// came over (the approval dialog: a call waits on it, whatever else the person opens).
    fn keeps_top(&self) -> bool {
        false
    }

    /// Whether it has nothing left to show, so the stack closes it (an approval dialog
    /// whose calls were all decided).
    fn finished(&self) -> bool {
        false
    }

    /// A text was pasted while it is on top; whether it took it.
    fn paste(&mut self, _text: &str) -> bool {
        false
    }

    /// Called for each frame before anything is drawn over the panes, with the screen's
    /// `size`: a layer whose state the status bar reads (how much of an approval was
    /// seen) measures itself here.
    fn prepare(&self, _state: &Self::State, _size: Rect) {}

    /// Where the terminal's cursor stands, as the last frame drew it (where a reason is
    /// typed); `None`: it hides the cursor.
    fn cursor(&self) -> Option<Position> {
        None
    }

    /// An agent's event reached the workbench; a layer waiting for an answer (the notes,
    /// a history snapshot) takes it. Whether the layer changed.
    fn on_event(&mut self, _event: &miniagent_protocol::Event) -> bool {
        false
    }
}

/// The overlays, the top one last: the one door through which every overlay is opened,
/// closed and found. The top layer gets the keys first and is drawn last.
pub struct LayerStack<S: ?Sized + 'static> {
    layers: Vec<Box<dyn Layer<State = S>>>,
}

impl<S: ?Sized + 'static> Default for LayerStack<S> {
    fn default() -> Self {
        Self { layers: Vec::new() }
    }
}

impl<S: ?Sized + 'static> LayerStack<S> {
    /// Opens `layer`: on top, below any layer that keeps the top (an approval waits on
    /// the person whatever else opens).
    pub fn open(&mut self, layer: Box<dyn Layer<State = S>>) {
        let at = if layer.keeps_top() {
            self.layers.len()
        } else {
            self.layers
                .iter()
                .rposition(|open| !open.keeps_top())
                .map_or(0, |below| below + 1)
        };
        self.layers.insert(at, layer);
    }

    /// Closes the top layer, handing it back.
    pub fn close(&mut self) -> Option<Box<dyn Layer<State = S>>> {
        self.layers.pop()
    }

    /// Closes every layer `close` names.
    pub fn close_where(&mut self, mut close: impl FnMut(&dyn Layer<State = S>) -> bool) {
        self.layers.retain(|layer| !close(layer.as_ref()));
    }

    /// Closes the layers with nothing left to show.
    pub fn close_finished(&mut self) {
        self.close_where(|layer| layer.finished());
    }

    /// The top layer.
    pub fn top(&self) -> Option<&dyn Layer<State = S>> {
        self.layers.last().map(|layer| layer.as_ref())
    }

    /// The top layer, to change.
    pub fn top_mut(&mut self) -> Option<&mut (dyn Layer<State = S> + 'static)> {
        self.layers.last_mut().map(|layer| layer.as_mut())
    }

    /// The top layer, when it is a `T`.
    pub fn top_as<T: 'static>(&self) -> Option<&T> {
        self.top()?.as_any().downcast_ref::<T>()
    }

    /// The top layer, when it is a `T`, to change.
    pub fn top_as_mut<T: 'static>(&mut self) -> Option<&mut T> {
        self.top_mut()?.as_any_mut().downcast_mut::<T>()
    }

    /// The topmost layer that is a `T`.
    pub fn find<T: 'static>(&self) -> Option<&T> {
        self.layers
            .iter()
            .rev()
            .find_map(|layer| layer.as_any().downcast_ref::<T>())
    }

    /// The topmost layer that is a `T`, to change.
    pub fn find_mut<T: 'static>(&mut self) -> Option<&mut T> {
        self.layers
            .iter_mut()
            .rev()
            .find_map(|layer| layer.as_any_mut().downcast_mut::<T>())
    }

    pub fn is_empty(&self) -> bool {
        self.layers.is_empty()
    }

    pub fn len(&self) -> usize {
        self.layers.len()
    }

    /// The layers from the bottom up.
    pub fn iter(&self) -> impl DoubleEndedIterator<Item = &dyn Layer<State = S>> {
        self.layers.iter().map(|layer| layer.as_ref())
    }

    /// The layers from the bottom up, to change (an event reached the workbench).
    pub fn iter_mut(&mut self) -> impl Iterator<Item = &mut (dyn Layer<State = S> + 'static)> {
        self.layers.iter_mut().map(|layer| layer.as_mut())
    }

    /// The question on top, if the top layer is one.
    pub fn question(&self) -> Option<&Arming> {
        self.top()?.question()
    }

    /// The question on top, to change.
    pub fn question_mut(&mut self) -> Option<&mut Arming> {
        self.top_mut()?.question_mut()
    }

    /// A frame was drawn at `now`: the question on top starts arming, and one covered by
    /// another layer arms afresh once it shows again.
    pub fn frame_drawn(&mut self, now: std::time::Instant) {
        let top = self.layers.len().saturating_sub(1);
        for (index, layer) in self.layers.iter_mut().enumerate() {
            if let Some(arming) = layer.question_mut() {
                if index == top {
                    arming.drawn(now);
                } else {
                    arming.covered();
                }
            }
        }
    }

    /// The layers a frame shows, bottom up: the top one, and beneath the layers that
    /// keep the top the one they came over (a dialog over its window). The others are
    /// hidden under them.
    pub fn shown(&self) -> impl Iterator<Item = &dyn Layer<State = S>> {
        let from = self
            .layers
            .iter()
            .rposition(|layer| !layer.keeps_top())
            .unwrap_or(0);
        self.layers[from..].iter().map(|layer| layer.as_ref())
    }

    /// Readies the layers a frame shows ([`Layer::prepare`]).
    pub fn prepare(&self, state: &S, size: Rect) {
        for layer in self.shown() {
            layer.prepare(state, size);
        }
    }

    /// Draws the layers a frame shows over the panes; where the terminal's cursor goes
    /// when the top one places it.
    pub fn render(&self, state: &S, size: Rect, buf: &mut Buffer) -> Option<Position> {
        for layer in self.shown() {
            layer.render(state, size, buf);
        }
        self.top()?.cursor()
    }
}
