//! Drawing the overlays that show one thing in detail: a tool call's arguments, output
//! and result, and the workspace-trust question.

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};

use super::app::App;
use super::render::{centered, popup};
use super::text::{ansi::ansi_lines, wrap};
use super::timeline::format_duration;

pub(super) fn tool_detail_lines(app: &App, call_id: &str, width: u16) -> Vec<Line<'static>> {
    let theme = &app.theme;
    let Some(call) = app.timeline.get(call_id) else {
        return vec![Line::from("this call is no longer in the timeline")];
    };
    // The run time, and apart from it the wait for the person's approval.
    let ran = call.duration.filter(|_| call.started.is_some());
    let duration = match (ran, call.waited) {
        (Some(ran), Some(waited)) => format!(
            "ran {} · waited {} for your approval  ",
            format_duration(ran),
            format_duration(waited)
        ),
        (Some(ran), None) => format!("ran {}  ", format_duration(ran)),
        (None, _) => String::new(),
    };
    let mut lines = vec![
        Line::from(vec![
            Span::styled(call.name.clone(), theme.tool.patch(theme.strong)),
            Span::styled(
                format!("  {}  {duration}({})", call.status.label(), call.id),
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
        let total = call.streamed.total_bytes();
        if total > call.streamed.limit() as u64 {
            lines.extend(wrap::wrap_lines(
                &[Line::from(Span::styled(
                    format!("{total} bytes in all; the start and the end are kept"),
                    theme.dim,
                ))],
                width,
            ));
        }
        lines.extend(wrap::wrap_lines(&ansi_lines(&streamed, theme), width));
        lines.push(Line::default());
    }
    if let Some(result) = &call.result {
        // Exactly what the model got: escape sequences it received are shown, not acted on.
        let removed = has_escapes(&streamed) && !has_escapes(result);
        lines.push(Line::from(vec![
            Span::styled("Result sent to the model", theme.heading),
            Span::styled(
                if removed {
                    " (escape sequences removed)"
                } else {
                    ""
                },
                theme.dim,
            ),
        ]));
        let result = crate::terminal_text::visible(result);
        lines.extend(wrap::wrap_lines(&ansi_lines(&result, theme), width));
    } else if call.in_log {
        // Asked of the agent when the view opened; it fills in when the answer comes.
        lines.push(Line::from(Span::styled(
            "reading the result back from the session log…",
            theme.dim,
        )));
    }
    lines
}

/// Whether `text` holds an escape sequence (ESC, or a C1 introducer).
fn has_escapes(text: &str) -> bool {
    text.chars()
        .any(|c| c == '\u{1b}' || ('\u{90}'..='\u{9f}').contains(&c))
}

/// The trust question: what it would start, scrollable, and the answer keys pinned below
/// it. `y` is offered only once the whole list has been on screen.
pub(super) fn trust_prompt(
    buf: &mut Buffer,
    size: Rect,
    title: &str,
    prompt: &super::overlay::TrustPrompt,
    app: &App,
) {
    let theme = &app.theme;
    let intro = if prompt.changed {
        "This workspace's MCP servers or skills (.miniagent/) changed since you trusted it. Servers run programs from this repository; skills steer the agent:"
    } else {
        "This workspace has its own MCP servers or skills (.miniagent/). Servers run programs from this repository; skills steer the agent:"
    };
    let mut lines = vec![Line::from(Span::styled(intro, theme.warning)), Line::default()];
    lines.extend(
        prompt
            .servers
            .iter()
            .map(|s| Line::from(Span::styled(format!("  {s}"), theme.code))),
    );
    let width = 90.min(size.width);
    let inner_width = width.saturating_sub(2).max(1);
    let body = wrap::wrap_lines(&lines, inner_width);
    let body_rows = u16::try_from(body.len()).unwrap_or(u16::MAX);
    let armed = app.consent_armed() || app.replay.is_some();
    let footer = |below: u16| {
        let mut spans = Vec::new();
        if !armed {
            spans.push(Span::styled("◌ arming: keys answer in a moment", theme.dim));
            return Line::from(spans);
        }
        if below > 0 {
            spans.push(Span::styled(
                format!("↓ {below} more lines: read them all to trust   "),
                theme.warning,
            ));
        } else {
            spans.push(Span::styled("y", theme.key));
            spans.push(Span::styled(
                " trust this workspace and use them (remembered)   ",
                theme.text,
            ));
        }
        spans.push(Span::styled("n", theme.key));
        spans.push(Span::styled(" continue without them", theme.text));
        Line::from(spans)
    };
    // Borders, a blank row and the keys (as many rows as they wrap to) around the body.
    let keys_rows = [footer(0), footer(u16::MAX)]
        .iter()
        .map(|line| wrap::wrap_lines(std::slice::from_ref(line), inner_width).len())
        .max()
        .and_then(|rows| u16::try_from(rows).ok())
        .unwrap_or(2);
    let chrome = 2 + 1 + keys_rows;
    let height = body_rows.saturating_add(chrome).min(size.height);
    let area = centered(size, width, height);
    let page = area.height.saturating_sub(chrome);
    let max_scroll = body_rows.saturating_sub(page);
    prompt.view.set(super::overlay::TrustView { max_scroll, page });
    let scroll = prompt.scroll.min(max_scroll);
    let below = max_scroll - scroll;
    let shown: Vec<Line<'static>> = body
        .into_iter()
        .skip(usize::from(scroll))
        .take(usize::from(page))
        .collect();
    let mut all = shown;
    all.resize(usize::from(page), Line::default());
    all.push(Line::default());
    all.push(footer(below));
    popup(buf, area, title, all, 0, app, true);
}
