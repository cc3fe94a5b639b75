//! The scrolled text layer: a text (the help, `/skills`, `/version`, `/stats`, `/notes`,
//! a tool call) in a frame over the panes, scrolled with the arrows, pages, ends and the wheel,
//! closed with Esc or `q`. What differs between them is only what they show and where,
//! which each says as a [`Text`]; the scrolling and the keys are this one type's.

use std::cell::Cell;

use crossterm::event::KeyEvent;
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::text::Line;

use super::{Layer, SCROLL_HINTS, scroll_key};
use crate::app::App;
use crate::keys::{KeyHint, OverlayAction, OverlayContext};
use crate::popup::scrolled_popup;
use crate::scroll::Scroll;

/// What a scrolled text layer shows.
pub trait Text: 'static {
    /// The frame's title.
    fn title(&self) -> String;

    /// Where it is drawn on a screen of `size`, and its lines (those wider than the
    /// frame are wrapped when [`Text::WRAPS`]).
    fn layout(&self, app: &App, size: Rect) -> (Rect, Vec<Line<'static>>);

    /// Whether the frame wraps the lines; the texts that wrap their own (to keep a
    /// layout of columns) say no.
    const WRAPS: bool;

    /// Whether it shows the session itself, so it closes when another is resumed.
    fn about_session(&self) -> bool {
        false
    }

    /// Whether it shows the history snapshot (see [`Layer::shows_history`]).
    fn shows_history(&self) -> bool {
        false
    }

    /// An agent's event it may be waiting for (see [`Layer::on_event`]).
    fn on_event(&mut self, _event: &miniagent_protocol::Event) -> bool {
        false
    }
}

/// A [`Text`] in a scrolled frame: one layer type for every text overlay.
#[derive(Debug, Default)]
pub struct TextLayer<T> {
    text: T,
    /// Learns the text's height when drawn (drawing borrows the app immutably).
    scroll: Cell<Scroll>,
}

impl<T: Text> TextLayer<T> {
    /// `text`, scrolled to its top.
    pub fn new(text: T) -> Self {
        Self {
            text,
            scroll: Cell::new(Scroll::default()),
        }
    }
}

/// The layer is read as the text it shows (a tool call's id, for one).
impl<T> std::ops::Deref for TextLayer<T> {
    type Target = T;

    fn deref(&self) -> &T {
        &self.text
    }
}

impl<T: Text> Layer for TextLayer<T> {
    type State = App;

    fn title(&self) -> String {
        self.text.title()
    }

    fn key_hints(&self) -> Vec<KeyHint> {
        SCROLL_HINTS.to_vec()
    }

    fn on_key(&mut self, key: KeyEvent, _context: OverlayContext<'_>) -> OverlayAction {
        scroll_key(self.scroll.get_mut(), key)
    }

    fn scroll(&mut self, lines: i32) -> bool {
        self.scroll.get_mut().by(i64::from(lines))
    }

    fn render(&self, app: &App, size: Rect, buf: &mut Buffer) {
        let (area, lines) = self.text.layout(app, size);
        let mut scroll = self.scroll.get();
        scrolled_popup(buf, area, &self.title(), lines, &mut scroll, app, T::WRAPS);
        self.scroll.set(scroll);
    }

    fn about_session(&self) -> bool {
        self.text.about_session()
    }

    fn shows_history(&self) -> bool {
        self.text.shows_history()
    }

    fn on_event(&mut self, event: &miniagent_protocol::Event) -> bool {
        self.text.on_event(event)
    }
}
