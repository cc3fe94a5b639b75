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
        .map(|command| wrap::display_width(&command.help))
        .max()
        .unwrap_or(0);
    let width = u16::try_from(widest + 20)
        .unwrap_or(u16::MAX)
        .max(60)
        .min(size.width);
    // The names' column as wide as the longest (a prompt command's may be long), so the
    // help never runs into it.
    let column = completions
        .iter()
        .map(|command| wrap::display_width(&command.name) + 1 + wrap::display_width(&command.args))
        .max()
        .unwrap_or(0)
        .min(40)
        .saturating_add(2)
        .max(18);
    let width = width.max(
        u16::try_from(column + widest)
            .unwrap_or(u16::MAX)
            .saturating_add(2)
            .min(size.width),
    );
    // Never over the title bar (the mode and the model stay in sight): a longer list
    // scrolls instead.
    let rows = rows.min(input.y.saturating_sub(size.y.saturating_add(1)));
    let area = Rect {
        x: input.x,
        y: input.y.saturating_sub(rows),
        width,
        height: rows,
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
                Span::styled(
                    format!("{:<column$}", wrap::truncate(&name, column - 1)),
                    app.look.theme().key,
                ),
                Span::styled(command.help.to_string(), app.look.theme().text),
            ]);
            if index == app.input.selected_completion() {
                line = app.look.theme().selected(line);
            }
            line
        })
        .collect();
    // With the workspace's and the person's own commands the list can be longer than the
    // room above the input: the highlighted one stays in sight.
    let shown = usize::from(area.height.saturating_sub(2)).max(1);
    let scroll = app.input.selected_completion().saturating_sub(shown - 1);
    let scroll = u16::try_from(scroll).unwrap_or(u16::MAX);
    popup(buf, area, "Commands · Tab completes", lines, scroll, app, false);
}
