//! `/skills`: the skills the agent can load and the problems finding them, as the agent
//! last reported them (drawn from the app, so skills found later show too).

use std::cell::Cell;

use crossterm::event::KeyEvent;
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;

use super::{Layer, SCROLL_HINTS, scroll_key};
use crate::app::App;
use crate::command::Command;
use crate::extensions::skills_lines;
use crate::keys::OverlayContext;
use crate::keys::{KeyHint, OverlayAction};
use crate::popup::scrolled_popup;
use crate::scroll::Scroll;

/// The command that opens it (registered in `commands::COMMANDS`).
pub const COMMAND: Command = Command {
    name: "/skills",
    aliases: &[],
    args: "",
    help: "the skills the agent can load",
    run: |app, _| {
        let layer = SkillsLayer {
            scroll: Cell::new(Scroll::default()),
        };
        app.overlays.push(Box::new(layer));
    },
};

/// The `/skills` overlay.
pub struct SkillsLayer {
    scroll: Cell<Scroll>,
}

impl Layer for SkillsLayer {
    type State = crate::app::App;

    fn title(&self) -> String {
        "Skills".to_string()
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
        let lines = skills_lines(&app.skills, &app.skill_warnings, &app.theme);
        let mut scroll = self.scroll.get();
        scrolled_popup(
            buf,
            super::text_area(size),
            &self.title(),
            lines,
            &mut scroll,
            app,
            true,
        );
        self.scroll.set(scroll);
    }
}
