//! Drawing what shows over the panes outside the layer stack: the slash-command
//! completions above the input (the layers, the approval dialog among them, draw
//! themselves: `layers/`).

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};

use super::app::App;
use super::popup::popup;
use super::text::wrap;

/// The `@` file picker, just above the input.
pub fn draw_mentions(app: &App, input: Rect, size: Rect, buf: &mut Buffer) {
    if let Some(picker) = app.input.picker() {
        picker.render(input, size, app.look.theme(), buf);
    }
}

/// The slash-command completions, just above the input.
pub fn draw_completions(app: &App, input: Rect, size: Rect, buf: &mut Buffer) {
    let completions = app.input.completions();
    if completions.is_empty() {
        return;
    }
    let rows = u16::try_from(completions.len()).unwrap_or(u16::MAX) + 2;
    // Wide enough for the longest help text, where the screen allows.
    let widest = completions
        .iter()
        .map(|command| wrap::display_width(command.help))
        .max()
        .unwrap_or(0);
    let width = u16::try_from(widest + 20)
        .unwrap_or(u16::MAX)
        .max(60)
        .min(size.width);
    let y = input.y.saturating_sub(rows);
    let area = Rect {
        x: input.x,
        y,
        width,
        height: rows.min(input.y.saturating_sub(size.y)),
    };
    let lines: Vec<Line<'static>> = completions
        .iter()
        .enumerate()
        .map(|(index, command)| {
            let name = if command.args.is_empty() {
                command.name.to_string()
            } else {
                format!("{} {}", command.name, command.args)
            };
            let mut line = Line::from(vec![
                Span::styled(format!("{name:<18}"), app.look.theme().key),
                Span::styled(command.help.to_string(), app.look.theme().text),
            ]);
            if index == app.input.selected_completion() {
                line = app.look.theme().selected(line);
            }
            line
        })
        .collect();
    popup(buf, area, "Commands · Tab completes", lines, 0, app, false);
}
