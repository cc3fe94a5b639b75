//! `/notes`: the workspace's session notes, read when the overlay opens.

use std::cell::Cell;

use crossterm::event::KeyEvent;
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};

use super::{Layer, SCROLL_HINTS, scroll_key};
use crate::tools::notes::load_notes;
use crate::tui::app::App;
use crate::tui::commands::Command;
use crate::tui::keys::{KeyHint, OverlayAction};
use crate::tui::overlay::{Overlay, OverlayContext};
use crate::tui::render::scrolled_popup;
use crate::tui::scroll::Scroll;

/// The command that opens it (registered in `commands::COMMANDS`).
pub const COMMAND: Command = Command {
    name: "/notes",
    aliases: &[],
    args: "",
    help: "the session notes",
    run: |app, _| {
        let workspace = std::path::PathBuf::from(&app.session.workspace);
        app.overlays
            .push(Overlay::Layer(Box::new(NotesLayer::read(&workspace))));
    },
};

/// The `/notes` overlay.
pub struct NotesLayer {
    lines: Vec<String>,
    scroll: Cell<Scroll>,
}

impl NotesLayer {
    /// The notes of `workspace`, read now; a problem reading them is shown instead.
    pub fn read(workspace: &std::path::Path) -> Self {
        let lines = match load_notes(workspace) {
            Ok(notes) if notes.is_empty() => {
                vec!["No notes yet. The agent records them with record_note.".to_string()]
            }
            Ok(notes) => notes
                .iter()
                .map(|note| format!("[{}] {}  ({})", note.category, note.content, note.timestamp))
                .collect(),
            Err(message) => vec![message],
        };
        Self {
            lines,
            scroll: Cell::new(Scroll::default()),
        }
    }
}

impl Layer for NotesLayer {
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
