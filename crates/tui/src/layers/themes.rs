//! `/theme`: with a name, switches to that theme (and saves it); without one, a list of
//! the themes to pick from, the one in use marked.

use crossterm::event::KeyEvent;
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};

use super::Layer;
use crate::app::App;
use crate::command::Command;
use crate::keys::OverlayContext;
use crate::keys::{KeyHint, OverlayAction};
use crate::popup::centered;
use crate::popup::popup;
use crate::theme::Theme;

/// The command that opens it (registered in `commands::COMMANDS`).
pub const COMMAND: Command = Command {
    name: "/theme",
    // The list it opens is of themes: the plural is the first guess of many.
    aliases: &["/themes"],
    args: "NAME",
    help: "dark, light, high-contrast or your own",
    run: |app, argument| match argument {
        Some(name) => app.choose_theme(name),
        None => {
            let names = Theme::available(app.places.config_dir.as_deref());
            let selected = names
                .iter()
                .position(|name| *name == app.look.name())
                .unwrap_or(0);
            app.open_layer(Box::new(ThemesLayer { names, selected }));
        }
    },
};

/// The `/theme` choice.
pub struct ThemesLayer {
    names: Vec<String>,
    selected: usize,
}

impl Layer for ThemesLayer {
    type State = crate::app::App;

    fn title(&self) -> String {
        "Theme".to_string()
    }

    fn key_hints(&self) -> Vec<KeyHint> {
        vec![
            KeyHint::new("↑/↓", "select"),
            KeyHint::new("Enter", "use and save"),
            KeyHint::new("Esc", "close"),
        ]
    }

    fn on_key(&mut self, key: KeyEvent, _context: OverlayContext<'_>) -> OverlayAction {
        let len = self.names.len();
        super::choice_key(&mut self.selected, len, key, |index| {
            OverlayAction::Theme(self.names[index].clone())
        })
    }

    fn render(&self, app: &App, size: Rect, buf: &mut Buffer) {
        let lines: Vec<Line<'static>> = self
            .names
            .iter()
            .enumerate()
            .map(|(index, name)| {
                let in_use = if *name == app.look.name() {
                    "  (in use)"
                } else {
                    ""
                };
                let line = Line::from(vec![
                    Span::styled(format!("  {name}"), app.look.theme().text),
                    Span::styled(in_use, app.look.theme().dim),
                ]);
                if index == self.selected {
                    app.look.theme().selected(line)
                } else {
                    line
                }
            })
            .collect();
        let area = centered(
            crate::popup::between_bars(size),
            50.min(size.width),
            u16::try_from(lines.len()).unwrap_or(u16::MAX).saturating_add(2),
        );
        popup(buf, area, &self.title(), lines, 0, app, false);
    }
}
