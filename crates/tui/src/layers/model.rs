//! `/model`: with a name, switches the session to that provider profile or model between
//! turns; without one, a list to pick from (the config's profiles, then the known models
//! of the current provider), the one in use marked.

use crossterm::event::KeyEvent;
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};

use super::Layer;
use crate::app::App;
use crate::command::Command;
use crate::keys::OverlayContext;
use crate::keys::{KeyHint, OverlayAction};
use crate::popup::{centered, popup};
use miniagent_protocol::{ModelChoice, Op};

/// The command that opens it (registered in `commands::COMMANDS`).
pub const COMMAND: Command = Command {
    name: "/model",
    aliases: &["/models"],
    args: "NAME",
    help: "switch model or provider profile (between turns)",
    run: |app, argument| match argument {
        Some(name) => app.send(Op::SetModel {
            name: name.to_string(),
        }),
        None => {
            let choices = app.session.model_choices().to_vec();
            let selected = choices.iter().position(|choice| choice.current).unwrap_or(0);
            app.open_layer(Box::new(ModelLayer { choices, selected }));
        }
    },
};

/// The `/model` choice.
pub struct ModelLayer {
    choices: Vec<ModelChoice>,
    selected: usize,
}

impl Layer for ModelLayer {
    type State = crate::app::App;

    fn title(&self) -> String {
        "Model".to_string()
    }

    fn key_hints(&self) -> Vec<KeyHint> {
        vec![
            KeyHint::new("↑/↓", "select"),
            KeyHint::new("Enter", "switch"),
            KeyHint::new("Esc", "close"),
        ]
    }

    fn on_key(&mut self, key: KeyEvent, _context: OverlayContext<'_>) -> OverlayAction {
        let len = self.choices.len();
        super::choice_key(&mut self.selected, len, key, |index| {
            OverlayAction::SetModel(self.choices[index].name.clone())
        })
    }

    fn render(&self, app: &App, size: Rect, buf: &mut Buffer) {
        let theme = app.look.theme();
        let mut lines: Vec<Line<'static>> = Vec::new();
        if self.choices.is_empty() {
            lines.push(Line::styled("  this session cannot change its model", theme.dim));
        }
        // The profiles' names in a column (a model's row has nothing after its name).
        let width = self
            .choices
            .iter()
            .filter(|choice| choice.profile)
            .map(|choice| choice.name.chars().count())
            .max()
            .unwrap_or(0);
        let mut heading = None;
        // How many lines down to the selected one, it included.
        let mut through_selected = 0;
        for (index, choice) in self.choices.iter().enumerate() {
            let section = if choice.profile {
                "profiles".to_string()
            } else {
                format!("models of {}", miniagent_text::visible(&choice.provider))
            };
            if heading.as_ref() != Some(&section) {
                lines.push(Line::styled(format!(" {section}"), theme.dim));
                heading = Some(section);
            }
            // Names come from the config; what they stand for is cleaned like any text.
            let name = miniagent_text::visible(&choice.name);
            let detail = if choice.profile {
                format!(
                    "{} ({}), {}k window",
                    miniagent_text::visible(&choice.model),
                    miniagent_text::visible(&choice.provider),
                    choice.context_window / 1000
                )
            } else {
                String::new()
            };
            let in_use = if choice.current { "  (in use)" } else { "" };
            let line = Line::from(vec![
                Span::styled(format!("  {name:<width$}  "), theme.text),
                Span::styled(detail, theme.dim),
                Span::styled(in_use, theme.dim),
            ]);
            lines.push(if index == self.selected {
                through_selected = lines.len() + 1;
                theme.selected(line)
            } else {
                line
            });
        }
        let area = centered(
            crate::popup::between_bars(size),
            72.min(size.width),
            u16::try_from(lines.len()).unwrap_or(u16::MAX).saturating_add(2),
        );
        // Keeps the selected line in view on a short screen.
        let inner = area.height.saturating_sub(2);
        let scroll = u16::try_from(through_selected)
            .unwrap_or(u16::MAX)
            .saturating_sub(inner);
        popup(buf, area, &self.title(), lines, scroll, app, false);
    }
}
