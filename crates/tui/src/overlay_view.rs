//! Drawing the overlays: the approval request, the slash-command popup, and the
//! overlay stack's top (tool detail, file preview, stats, the history inspector, the
//! session picker, the questions, first run, themes; a layer draws itself).

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, BorderType, Borders, Widget};

use super::app::App;
use super::bindings::{self, APPROVAL};
use super::inspector::message_range;
use super::keys::KeyHint;
use super::overlay::Overlay;
use super::overlay_detail::{tool_detail_lines, trust_prompt};
use super::render::{centered, clear_for_popup, popup, scrolled_popup, tokens};
use super::scroll::Scroll;
use super::text::{diff::diff_lines, wrap};
use crate::protocol::{ApprovalRequest, ApprovalRule};
use crate::tui::theme::Theme;

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
    let body = approval_body(pending, theme);
    let width = size.width.saturating_sub(4).min(110);
    let body_rows = u16::try_from(body.len()).unwrap_or(u16::MAX);
    // Borders and the three footer rows (scroll position, what `a` covers, keys).
    let height = (body_rows + 5)
        .min(size.height.saturating_sub(2))
        .max(6.min(size.height));
    let area = centered(size, width, height);
    // More requests waiting behind this one; else its place among the reply's calls.
    let queue = match (app.approvals.len(), pending.in_step) {
        (waiting, _) if waiting > 1 => format!(" (1 of {waiting} waiting)"),
        (_, Some((call, of))) => format!(" (call {call} of {of})"),
        (_, None) => String::new(),
    };
    clear_for_popup(area, buf);
    let mut block = Block::default()
        .borders(Borders::ALL)
        .border_type(BorderType::Double)
        .border_style(theme.warning)
        .title(Span::styled(
            format!(" Allow {}?{queue} ", pending.name),
            theme.warning.patch(theme.strong),
        ));
    // A replayed approval is shown, never answered: it neither arms nor is armed.
    let armed = app.approval_armed();
    if app.replay.is_none() {
        let state = if armed {
            Span::styled(" ● armed ", theme.ok)
        } else {
            Span::styled(" ◌ arming… ", theme.dim)
        };
        block = block.title_top(Line::from(state).right_aligned());
    }
    let inner = block.inner(area);
    block.render(area, buf);
    if inner.height < 2 {
        return;
    }
    let footer_rows = 3u16;
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
            Span::styled(
                "Why not? Sent to the model (Enter sends · Esc back): ",
                theme.warning,
            ),
            Span::styled(format!("{reason}▏"), theme.text),
        ]),
        None if armed || app.replay.is_some() => hint_line(&approval_hints(app), app),
        None => Line::from(Span::styled(
            "◌ arming: keys answer in a moment; typing goes to the input",
            theme.dim,
        )),
    };
    buf.set_line(inner.x, footer_y, &footer, inner.width);
    buf.set_line(
        inner.x,
        footer_y - 1,
        &session_scope(pending.session_rule.as_ref(), theme),
        inner.width,
    );
    if wrapped.len() > usize::from(body_area.height) {
        let more = format!(
            "↑/↓ scroll · {}/{} lines",
            scroll + usize::from(body_area.height).min(wrapped.len()),
            wrapped.len()
        );
        buf.set_stringn(inner.x, footer_y - 2, &more, usize::from(inner.width), theme.dim);
    }
}

/// What an approval dialog shows: why it asks, then the request as its kind reads best
/// (an edit as a coloured diff, a command as its line and where it runs).
fn approval_body(pending: &super::app::PendingApproval, theme: &Theme) -> Vec<Line<'static>> {
    let plain = |text: &str| -> Vec<Line<'static>> {
        text.lines()
            .map(|line| Line::from(Span::styled(line.to_string(), theme.text)))
            .collect()
    };
    let Some(request) = &pending.request else {
        // An older log: its plain text is all there is.
        return plain(&pending.preview);
    };
    let mut body = Vec::new();
    for note in &pending.notes {
        body.extend(plain(note));
        body.push(Line::default());
    }
    match request {
        ApprovalRequest::Edit { summary, diff, .. } => {
            body.extend(diff_lines(&format!("{summary}\n{diff}"), theme));
        }
        ApprovalRequest::Command {
            command,
            cwd,
            timeout_s,
            compound,
            ..
        } => {
            body.extend(plain(&format!("$ {command}")));
            let how = match timeout_s {
                Some(seconds) => format!("timeout {seconds} s"),
                None => "in the background".to_string(),
            };
            body.push(Line::from(Span::styled(format!("(in {cwd}, {how})"), theme.text)));
            if *compound {
                body.push(Line::from(Span::styled(
                    "several commands, redirections or substitutions: check all of it",
                    theme.dim,
                )));
            }
        }
        ApprovalRequest::McpCall {
            server,
            tool,
            arguments,
        } => {
            // Both names come from the server's side: shown as inert text.
            body.push(Line::from(Span::styled(
                crate::terminal_text::clean(&format!("tool `{tool}` of MCP server `{server}`")).into_owned(),
                theme.dim,
            )));
            let json = serde_json::to_string_pretty(arguments).unwrap_or_else(|_| arguments.to_string());
            body.extend(plain(&json));
        }
        ApprovalRequest::Other { preview, .. } => body.extend(plain(preview)),
    }
    body
}

/// The approval keys that apply to the front request, as its dialog and the status bar
/// show them: `a` only where the dialog says what it would cover.
pub fn approval_hints(app: &App) -> Vec<KeyHint> {
    bindings::bar_hints(APPROVAL, app)
}

/// What approving for the session will cover, said before the key is pressed.
fn session_scope(rule: Option<&ApprovalRule>, theme: &super::theme::Theme) -> Line<'static> {
    let covers = match rule {
        Some(ApprovalRule::Tool { name }) => {
            format!(" approves every `{name}` call for the rest of the session")
        }
        Some(ApprovalRule::Command { program }) => {
            format!(" approves `{program} …` commands for the session, unless they run other code")
        }
        Some(ApprovalRule::CommandLine { .. }) => {
            " approves exactly this command line for the session, and nothing else".to_string()
        }
        None => {
            return Line::from(Span::styled(
                "a (for the session) is not offered: this call can only be approved once",
                theme.dim,
            ));
        }
    };
    Line::from(vec![
        Span::styled("a", theme.key),
        Span::styled(covers, theme.dim),
    ])
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
    if let Some(Overlay::History(inspector)) = app.overlays.last_mut() {
        // The inspector wants the room: the list and the text side by side when wide.
        let area = centered(
            size,
            size.width.saturating_sub(4).min(200),
            size.height.saturating_sub(2),
        );
        inspector.draw(app.history.as_ref(), &app.theme, area, buf);
        return;
    }
    if let Some(Overlay::Layer(layer)) = app.overlays.last() {
        layer.render(app, size, buf);
        return;
    }
    if let Some(Overlay::Sessions(picker)) = app.overlays.last_mut() {
        let area = centered(
            size,
            size.width.saturating_sub(6).min(120),
            picker.wanted_height().min(size.height.saturating_sub(2)),
        );
        picker.draw(&app.theme, area, buf);
        return;
    }
    let root = app.tree.root().to_path_buf();
    // A copy, drawn with while the app is borrowed, then put back: the frame tells it
    // how tall the text and the view are.
    let mut scroll = app
        .overlays
        .last_mut()
        .and_then(|top| top.scroll_state().copied())
        .unwrap_or_default();
    draw_top(app, &root, &mut scroll, size, buf);
    if let Some(state) = app.overlays.last_mut().and_then(Overlay::scroll_state) {
        *state = scroll;
    }
}

/// The top overlay of those drawn here, scrolled by `scroll` where it scrolls.
fn draw_top(app: &App, root: &std::path::Path, scroll: &mut Scroll, size: Rect, buf: &mut Buffer) {
    let Some(top) = app.overlays.last() else {
        return;
    };
    let title = top.title(root);
    let area = centered(
        size,
        size.width.saturating_sub(6).min(120),
        size.height.saturating_sub(2),
    );
    match top {
        Overlay::ToolDetail { call_id, .. } => {
            let lines = tool_detail_lines(app, call_id, area.width.saturating_sub(2));
            scrolled_popup(buf, area, &title, lines, scroll, app, false);
        }
        Overlay::FilePreview(_) => {
            let inner = popup(buf, area, &title, Vec::new(), 0, app, false);
            if let Some(Overlay::FilePreview(preview)) = app.overlays.last() {
                preview.render(inner, buf, &app.theme);
            }
        }
        Overlay::Stats { .. } => {
            let (lines, width) = stats_lines(app, size.width);
            let small = centered(size, width, (lines.len() as u16 + 2).min(size.height));
            scrolled_popup(buf, small, &title, lines, scroll, app, false);
        }
        Overlay::ResumeQuestion(question) => {
            let theme = &app.theme;
            let mut lines = Vec::new();
            if question.elsewhere {
                lines.push(Line::from(Span::styled(
                    format!(
                        "Session {} was recorded in {}, not in this workspace ({}). Continued here, its conversation goes on with this workspace's files.",
                        question.id, question.recorded, question.here
                    ),
                    theme.warning,
                )));
            }
            if !question.own {
                lines.push(Line::from(Span::styled(
                    format!(
                        "{} is not one of your recorded sessions: it could say anything, and its remembered approvals are not restored.",
                        question.path.display()
                    ),
                    theme.warning,
                )));
            }
            lines.push(Line::default());
            if question.elsewhere {
                lines.push(Line::from(Span::styled(
                    format!(
                        "To continue it in its own workspace instead: miniagent -w {} --resume {}",
                        question.recorded, question.id
                    ),
                    theme.dim,
                )));
                lines.push(Line::default());
            }
            lines.push(if app.consent_armed() {
                Line::from(vec![
                    Span::styled("y", theme.key),
                    Span::styled(" continue it here   ", theme.text),
                    Span::styled("n", theme.key),
                    Span::styled(" do not resume", theme.text),
                ])
            } else {
                Line::from(Span::styled("◌ arming: keys answer in a moment", theme.dim))
            });
            let width = 90.min(size.width);
            let rows = wrap::wrap_lines(&lines, width.saturating_sub(2)).len();
            let small = centered(
                size,
                width,
                (u16::try_from(rows).unwrap_or(u16::MAX).saturating_add(2)).min(size.height),
            );
            popup(buf, small, &title, lines, 0, app, true);
        }
        Overlay::Trust(prompt) => trust_prompt(buf, size, &title, prompt, app),
        // Drawn above, before the other overlays borrow the app.
        Overlay::History(_) | Overlay::Sessions(_) | Overlay::Layer(_) => {}
        Overlay::FirstRun(first_run) => {
            let lines = super::first_run::lines(first_run, &app.theme);
            let width = 90.min(size.width);
            let rows = wrap::wrap_lines(&lines, width.saturating_sub(2)).len();
            let small = centered(
                size,
                width,
                u16::try_from(rows + 2).unwrap_or(u16::MAX).min(size.height),
            );
            popup(buf, small, &title, lines, 0, app, true);
        }
    }
}

/// Columns the history figures need when they stand beside the session's.
const STATS_RIGHT_COLUMNS: usize = 35;

/// The `/stats` lines and the popup's width. With a history snapshot, its figures stand
/// beside the session's when the screen has room, under them otherwise (and it scrolls).
fn stats_lines(app: &App, screen_width: u16) -> (Vec<Line<'static>>, u16) {
    let left = session_stats(app);
    let Some(right) = history_stats(app) else {
        return (left, 64.min(screen_width));
    };
    // As wide as both columns want, within the screen.
    let widest_left = left.iter().map(Line::width).max().unwrap_or(0);
    let widest_right = right.iter().map(Line::width).max().unwrap_or(0);
    let wanted = u16::try_from(widest_left + 2 + widest_right + 2).unwrap_or(u16::MAX);
    let width = screen_width.saturating_sub(2).min(wanted).min(100);
    let inner = usize::from(width.saturating_sub(2));
    if inner < 36 + 2 + STATS_RIGHT_COLUMNS {
        let mut lines = left;
        lines.push(Line::default());
        lines.extend(right);
        return (lines, 64.min(screen_width));
    }
    // The session figures as wide as they are, leaving the history figures their room.
    let left_width = widest_left.min(inner - 2 - STATS_RIGHT_COLUMNS);
    let right_width = inner - left_width - 2;
    let rows = left.len().max(right.len());
    let lines = (0..rows)
        .map(|row| {
            let mut spans = Vec::new();
            if let Some(line) = left.get(row) {
                spans.extend(wrap::truncate_spans(&line.spans, left_width));
            }
            let used: usize = spans.iter().map(|span| wrap::display_width(&span.content)).sum();
            spans.push(Span::raw(" ".repeat(left_width + 2 - used)));
            if let Some(line) = right.get(row) {
                spans.extend(wrap::truncate_spans(&line.spans, right_width));
            }
            Line::from(spans)
        })
        .collect();
    (lines, width)
}

fn stats_row(app: &App, label: &str, value: String) -> Line<'static> {
    Line::from(vec![
        Span::styled(format!("{label:<22}"), app.theme.dim),
        Span::styled(value, app.theme.text),
    ])
}

fn session_stats(app: &App) -> Vec<Line<'static>> {
    let theme = &app.theme;
    let row = |label: &str, value: String| stats_row(app, label, value);
    let figures = app.tokens;
    let compactions = match figures.last_compaction {
        Some(last) if figures.compactions > 0 => format!(
            "{}, last {} → {}",
            figures.compactions,
            tokens(last.tokens_before),
            tokens(last.tokens_after)
        ),
        _ => figures.compactions.to_string(),
    };
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
        row("compactions", compactions),
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

/// Where the prompt's tokens go and every compaction, from the latest snapshot.
fn history_stats(app: &App) -> Option<Vec<Line<'static>>> {
    let history = app.history.as_ref()?;
    let theme = &app.theme;
    let row = |label: &str, value: String| stats_row(app, label, value);
    let heading = |text: &str| Line::from(Span::styled(text.to_string(), theme.heading));
    let none = || Line::from(Span::styled("  none yet", theme.dim));
    let mut lines = vec![
        heading("prompt by role"),
        row(
            "  whole prompt",
            format!("{} tokens", tokens(history.prompt_tokens)),
        ),
    ];
    lines.extend(
        history
            .by_role
            .iter()
            .map(|(role, count)| row(&format!("  {role}"), tokens(*count))),
    );
    lines.push(row("  masked tool results", history.masked_results.to_string()));
    lines.push(Line::default());
    lines.push(heading("tool results by tool"));
    if history.by_tool.is_empty() {
        lines.push(none());
    }
    lines.extend(
        history
            .by_tool
            .iter()
            .map(|(tool, count)| row(&format!("  {tool}"), tokens(*count))),
    );
    lines.push(Line::default());
    lines.push(heading("compactions (prompt before → after)"));
    if history.compactions.is_empty() {
        lines.push(none());
    }
    for record in &history.compactions {
        let mut spans = vec![
            Span::styled(
                format!(
                    "  {} → {}",
                    tokens(record.tokens_before),
                    tokens(record.tokens_after)
                ),
                theme.text,
            ),
            Span::styled(
                format!("  messages {}", message_range(record.start, record.end)),
                theme.dim,
            ),
        ];
        if record.fallback {
            spans.push(Span::styled(", digest", theme.warning));
        }
        lines.push(Line::from(spans));
    }
    Some(lines)
}
