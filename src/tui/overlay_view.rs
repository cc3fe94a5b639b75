//! Drawing the overlays: the approval request, the slash-command popup, and the
//! overlay stack's top (help, tool detail, file preview, approvals, notes, stats,
//! first run).

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, BorderType, Borders, Widget};

use super::app::{APPROVAL_HINTS, App, GLOBAL_HINTS};
use super::input::SLASH_COMMANDS;
use super::keys::KeyHint;
use super::overlay::Overlay;
use super::render::{centered, clear_for_popup, popup, tokens};
use super::text::{ansi::ansi_lines, diff::diff_lines, wrap};
use super::timeline::format_duration;

/// Tools whose approval preview is a unified diff.
const DIFF_TOOLS: [&str; 2] = ["write_file", "edit_file"];

fn hint_line(hints: &[KeyHint], app: &App) -> Line<'static> {
    let mut spans = Vec::new();
    for hint in hints {
        spans.push(Span::styled(hint.keys.to_string(), app.theme.key));
        spans.push(Span::styled(format!(" {}   ", hint.action), app.theme.text));
    }
    Line::from(spans)
}

/// The approval request at the front of the queue.
pub fn draw_approval(app: &App, size: Rect, buf: &mut Buffer) {
    let Some(pending) = app.approvals.front() else {
        return;
    };
    let theme = &app.theme;
    let body: Vec<Line<'static>> = if DIFF_TOOLS.contains(&pending.name.as_str()) {
        diff_lines(&pending.preview, theme)
    } else {
        pending
            .preview
            .lines()
            .map(|line| Line::from(Span::styled(line.to_string(), theme.text)))
            .collect()
    };
    let width = size.width.saturating_sub(4).min(110);
    let body_rows = u16::try_from(body.len()).unwrap_or(u16::MAX);
    // Borders and the two footer rows around the preview.
    let height = (body_rows + 4)
        .min(size.height.saturating_sub(2))
        .max(6.min(size.height));
    let area = centered(size, width, height);
    let queue = if app.approvals.len() > 1 {
        format!(" (1 of {})", app.approvals.len())
    } else {
        String::new()
    };
    clear_for_popup(area, buf);
    let block = Block::default()
        .borders(Borders::ALL)
        .border_type(BorderType::Double)
        .border_style(theme.warning)
        .title(Span::styled(
            format!(" Allow {}?{queue} ", pending.name),
            theme.warning.patch(theme.strong),
        ));
    let inner = block.inner(area);
    block.render(area, buf);
    if inner.height < 2 {
        return;
    }
    let footer_rows = 2u16;
    let body_area = Rect {
        height: inner.height.saturating_sub(footer_rows),
        ..inner
    };
    let wrapped = wrap::wrap_lines(&body, body_area.width);
    let max_scroll = wrapped.len().saturating_sub(usize::from(body_area.height));
    let scroll = usize::from(app.approval_scroll).min(max_scroll);
    for (row, line) in wrapped
        .iter()
        .skip(scroll)
        .take(usize::from(body_area.height))
        .enumerate()
    {
        let y = body_area.y + u16::try_from(row).unwrap_or(0);
        buf.set_line(body_area.x, y, line, body_area.width);
    }
    let footer_y = inner.y + inner.height - 1;
    let footer = match &app.deny_reason {
        Some(reason) => Line::from(vec![
            Span::styled("Reason for the model (Enter sends, Esc back): ", theme.warning),
            Span::styled(format!("{reason}▏"), theme.text),
        ]),
        None => hint_line(&APPROVAL_HINTS[..4], app),
    };
    buf.set_line(inner.x, footer_y, &footer, inner.width);
    if wrapped.len() > usize::from(body_area.height) {
        let more = format!(
            "↑/↓ scroll · {}/{} lines",
            scroll + usize::from(body_area.height).min(wrapped.len()),
            wrapped.len()
        );
        buf.set_stringn(inner.x, footer_y - 1, &more, usize::from(inner.width), theme.dim);
    }
}

/// The slash-command completions, just above the input.
pub fn draw_completions(app: &App, input: Rect, size: Rect, buf: &mut Buffer) {
    let completions = app.input.completions();
    if completions.is_empty() {
        return;
    }
    let rows = u16::try_from(completions.len()).unwrap_or(u16::MAX) + 2;
    let width = 60.min(size.width);
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
                Span::styled(format!("{name:<18}"), app.theme.key),
                Span::styled(command.help.to_string(), app.theme.text),
            ]);
            if index == app.input.selected_completion() {
                line = line.style(app.theme.selection);
            }
            line
        })
        .collect();
    popup(buf, area, "Commands · Tab completes", lines, 0, app, false);
}

/// The top overlay of the stack.
pub fn draw_overlay(app: &mut App, size: Rect, buf: &mut Buffer) {
    let root = app.tree.root().to_path_buf();
    let Some(top) = app.overlays.last() else {
        return;
    };
    let title = top.title(&root);
    let area = centered(
        size,
        size.width.saturating_sub(6).min(120),
        size.height.saturating_sub(2),
    );
    match top {
        Overlay::Help { scroll } => {
            let lines = help_lines(app);
            popup(buf, area, &title, lines, *scroll, app, false);
        }
        Overlay::ToolDetail { call_id, scroll } => {
            let lines = tool_detail_lines(app, call_id, area.width.saturating_sub(2));
            popup(buf, area, &title, lines, *scroll, app, false);
        }
        Overlay::FilePreview(_) => {
            let inner = popup(buf, area, &title, Vec::new(), 0, app, false);
            if let Some(Overlay::FilePreview(preview)) = app.overlays.last() {
                preview.render(inner, buf, &app.theme);
            }
        }
        Overlay::Approvals { selected } => {
            let lines = approval_rule_lines(app, *selected);
            let small = centered(
                size,
                70.min(size.width),
                (lines.len() as u16 + 4).min(size.height),
            );
            popup(buf, small, &title, lines, 0, app, true);
        }
        Overlay::Notes { lines, scroll } => {
            let lines = lines
                .iter()
                .map(|l| Line::from(Span::styled(l.clone(), app.theme.text)))
                .collect();
            popup(buf, area, &title, lines, *scroll, app, true);
        }
        Overlay::Stats => {
            let lines = stats_lines(app);
            let small = centered(
                size,
                64.min(size.width),
                (lines.len() as u16 + 2).min(size.height),
            );
            popup(buf, small, &title, lines, 0, app, false);
        }
        Overlay::FirstRun(first_run) => {
            let lines = super::first_run::lines(first_run, &app.theme);
            let small = centered(
                size,
                90.min(size.width),
                (lines.len() as u16 + 4).min(size.height),
            );
            popup(buf, small, &title, lines, 0, app, true);
        }
    }
}

fn section(title: &str, hints: &[KeyHint], app: &App) -> Vec<Line<'static>> {
    let mut lines = vec![Line::from(Span::styled(title.to_string(), app.theme.heading))];
    for hint in hints {
        lines.push(Line::from(vec![
            Span::styled(format!("  {:<18}", hint.keys), app.theme.key),
            Span::styled(hint.action.to_string(), app.theme.text),
        ]));
    }
    lines.push(Line::default());
    lines
}

/// Help, generated from every component's own bindings.
fn help_lines(app: &App) -> Vec<Line<'static>> {
    let mut lines = Vec::new();
    lines.extend(section("Workbench", &GLOBAL_HINTS, app));
    lines.extend(section("Input", &app.input.key_hints(), app));
    lines.extend(section("Conversation", &app.conversation.key_hints(), app));
    lines.extend(section("Thinking", &app.thinking.key_hints(), app));
    lines.extend(section("Tools", &app.timeline.key_hints(), app));
    lines.extend(section("Files", &app.tree.key_hints(), app));
    lines.extend(section("Approval", &APPROVAL_HINTS, app));
    lines.push(Line::from(Span::styled(
        "Commands".to_string(),
        app.theme.heading,
    )));
    for command in SLASH_COMMANDS {
        let name = format!("{} {}", command.name, command.args);
        lines.push(Line::from(vec![
            Span::styled(format!("  {:<18}", name.trim_end()), app.theme.key),
            Span::styled(command.help.to_string(), app.theme.text),
        ]));
    }
    lines
}

fn tool_detail_lines(app: &App, call_id: &str, width: u16) -> Vec<Line<'static>> {
    let theme = &app.theme;
    let Some(call) = app.timeline.get(call_id) else {
        return vec![Line::from("this call is no longer in the timeline")];
    };
    let duration = call.duration.map(format_duration).unwrap_or_default();
    let mut lines = vec![
        Line::from(vec![
            Span::styled(call.name.clone(), theme.tool.patch(theme.strong)),
            Span::styled(
                format!("  {}  {duration}  ({})", call.status.label(), call.id),
                theme.dim,
            ),
        ]),
        Line::default(),
        Line::from(Span::styled("Arguments", theme.heading)),
    ];
    let arguments =
        serde_json::to_string_pretty(&call.arguments).unwrap_or_else(|_| call.arguments.to_string());
    let argument_lines: Vec<Line> = arguments
        .lines()
        .map(|l| Line::from(Span::styled(l.to_string(), theme.code)))
        .collect();
    lines.extend(wrap::wrap_lines(&argument_lines, width));
    lines.push(Line::default());
    let streamed = call.streamed.text();
    if !call.streamed.is_empty() {
        lines.push(Line::from(Span::styled("Output", theme.heading)));
        lines.extend(wrap::wrap_lines(&ansi_lines(&streamed, theme), width));
        lines.push(Line::default());
    }
    if let Some(result) = &call.result {
        lines.push(Line::from(Span::styled(
            "Result sent to the model",
            theme.heading,
        )));
        lines.extend(wrap::wrap_lines(&ansi_lines(result, theme), width));
    }
    lines
}

fn approval_rule_lines(app: &App, selected: usize) -> Vec<Line<'static>> {
    if app.rules.is_empty() {
        return vec![Line::from(Span::styled(
            "Nothing is remembered. Answer `a` at an approval to allow a tool (or a command) for the session.",
            app.theme.dim,
        ))];
    }
    app.rules
        .iter()
        .enumerate()
        .map(|(index, rule)| {
            let line = Line::from(Span::styled(format!("  {rule}"), app.theme.text));
            if index == selected {
                line.style(app.theme.selection)
            } else {
                line
            }
        })
        .collect()
}

fn stats_lines(app: &App) -> Vec<Line<'static>> {
    let theme = &app.theme;
    let row = |label: &str, value: String| {
        Line::from(vec![
            Span::styled(format!("{label:<22}"), theme.dim),
            Span::styled(value, theme.text),
        ])
    };
    let figures = app.tokens;
    let mut lines = vec![
        row("turns", app.stats.turns.to_string()),
        row("model calls (steps)", app.stats.steps.to_string()),
        row("retries", app.stats.retries.to_string()),
        row(
            "context now",
            format!(
                "{} of {} tokens",
                tokens(figures.context_tokens),
                tokens(figures.token_limit)
            ),
        ),
        row(
            "input / output total",
            format!(
                "{} / {}",
                tokens(figures.total_input),
                tokens(figures.total_output)
            ),
        ),
        row("compactions", figures.compactions.to_string()),
        row("approval mode", app.approval_mode.to_string()),
        row("remembered approvals", app.rules.len().to_string()),
    ];
    lines.push(Line::from(Span::styled("tool calls", theme.heading)));
    if app.stats.tool_calls.is_empty() {
        lines.push(Line::from(Span::styled("  none yet", theme.dim)));
    }
    for (name, count) in &app.stats.tool_calls {
        lines.push(row(&format!("  {name}"), count.to_string()));
    }
    lines
}
