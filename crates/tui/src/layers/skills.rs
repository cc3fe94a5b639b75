//! `/skills`: the skills the agent can load and the problems finding them, as the agent
//! last reported them (drawn from the app, so skills found later show too).

use ratatui::layout::Rect;
use ratatui::text::Line;

use super::text::{Text, TextLayer};
use crate::app::App;
use crate::command::Command;
use crate::extensions::skills_lines;

/// The command that opens it (registered in `commands::COMMANDS`).
pub const COMMAND: Command = Command {
    name: "/skills",
    aliases: &[],
    args: "",
    help: "the skills the agent can load",
    run: |app, _| app.open_layer(Box::new(TextLayer::new(Skills))),
};

/// The `/skills` overlay's text.
pub struct Skills;

impl Text for Skills {
    fn title(&self) -> String {
        "Skills".to_string()
    }

    fn layout(&self, app: &App, size: Rect) -> (Rect, Vec<Line<'static>>) {
        let lines = skills_lines(
            app.session.skills(),
            app.session.skill_warnings(),
            app.look.theme(),
        );
        (super::text_area(size), lines)
    }

    const WRAPS: bool = true;
}
