//! `/notes`: the workspace's session notes, as the agent reads them (`Op::ReadNotes`,
//! answered by `Event::Notes`): the overlay opens at once and fills when the answer comes.

use std::cell::Cell;

use crossterm::event::KeyEvent;
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};

use super::{Layer, SCROLL_HINTS, scroll_key};
use crate::app::App;
use crate::command::Command;
use crate::keys::OverlayContext;
use crate::keys::{KeyHint, OverlayAction};
use crate::popup::scrolled_popup;
use crate::scroll::Scroll;
use miniagent_protocol::{Event, NoteInfo, Op};

/// The command that opens it (registered in `commands::COMMANDS`).
pub const COMMAND: Command = Command {
    name: "/notes",
    aliases: &[],
    args: "",
    help: "the session notes",
    run: |app, _| {
        app.open_layer(Box::new(NotesLayer::pending()));
        app.send(Op::ReadNotes);
    },
};

/// The `/notes` overlay.
pub struct NotesLayer {
    lines: Vec<String>,
    scroll: Cell<Scroll>,
}

impl NotesLayer {
    /// The overlay while the agent reads the notes.
    pub fn pending() -> Self {
        Self {
            lines: vec!["reading the notes…".to_string()],
            scroll: Cell::new(Scroll::default()),
        }
    }

    /// The lines for the agent's answer: the notes, or why they could not be read.
    fn lines_for(notes: &[NoteInfo], error: Option<&String>) -> Vec<String> {
        match error {
            Some(message) => vec![message.clone()],
            None if notes.is_empty() => {
                vec!["No notes yet. The agent records them with record_note.".to_string()]
            }
            None => notes
                .iter()
                .map(|note| format!("[{}] {}  ({})", note.category, note.content, note.timestamp))
                .collect(),
        }
    }
}

impl Layer for NotesLayer {
    type State = crate::app::App;

    fn title(&self) -> String {
        "Notes".to_string()
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

    fn on_event(&mut self, event: &Event) -> bool {
        match event {
            Event::Notes { notes, error } => {
                self.lines = Self::lines_for(notes, error.as_ref());
                true
            }
            _ => false,
        }
    }

    fn render(&self, app: &App, size: Rect, buf: &mut Buffer) {
        let lines = self
            .lines
            .iter()
            .map(|line| Line::from(Span::styled(line.clone(), app.theme.text)))
            .collect();
        let area = super::text_area(size);
        let mut scroll = self.scroll.get();
        scrolled_popup(buf, area, &self.title(), lines, &mut scroll, app, true);
        self.scroll.set(scroll);
    }
}
