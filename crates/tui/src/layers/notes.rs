//! `/notes`: the workspace's session notes, as the agent reads them (`Op::ReadNotes`,
//! answered by `Event::Notes`): the overlay opens at once and fills when the answer comes.

use ratatui::layout::Rect;
use ratatui::text::{Line, Span};

use super::text::{Text, TextLayer};
use crate::app::App;
use crate::command::Command;
use miniagent_protocol::{Event, NoteInfo, Op};

/// The command that opens it (registered in `commands::COMMANDS`).
pub const COMMAND: Command = Command {
    name: "/notes",
    aliases: &[],
    args: "",
    help: "the session notes",
    run: |app, _| {
        app.open_layer(Box::new(TextLayer::new(Notes::pending())));
        app.send(Op::ReadNotes);
    },
};

/// The `/notes` overlay's text.
pub struct Notes {
    lines: Vec<String>,
}

impl Notes {
    /// The text while the agent reads the notes.
    pub fn pending() -> Self {
        Self {
            lines: vec!["reading the notes…".to_string()],
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

impl Text for Notes {
    fn title(&self) -> String {
        "Notes".to_string()
    }

    fn layout(&self, app: &App, size: Rect) -> (Rect, Vec<Line<'static>>) {
        let lines = self
            .lines
            .iter()
            .map(|line| Line::from(Span::styled(line.clone(), app.look.theme().text)))
            .collect();
        (super::text_area(size), lines)
    }

    const WRAPS: bool = true;

    fn on_event(&mut self, event: &Event) -> bool {
        match event {
            Event::Notes { notes, error } => {
                self.lines = Self::lines_for(notes, error.as_ref());
                true
            }
            _ => false,
        }
    }
}
