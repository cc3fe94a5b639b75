//! A tool call in detail (Enter on a call in the timeline): its arguments, output and
//! result, scrolled.

use ratatui::layout::Rect;
use ratatui::text::{Line, Span};

use super::text::{Text, TextLayer};
use super::text_area;
use crate::app::App;
use crate::text::{ansi::ansi_lines, wrap};
use crate::timeline::format_duration;

/// The call `call_id` of the timeline, shown whole.
#[derive(Debug, Default)]
pub struct ToolCall {
    pub call_id: String,
}

/// The tool call overlay.
pub type ToolDetail = TextLayer<ToolCall>;

impl ToolDetail {
    /// The call `call_id`, from its top.
    pub fn for_call(call_id: String) -> Self {
        TextLayer::new(ToolCall { call_id })
    }
}

impl Text for ToolCall {
    fn title(&self) -> String {
        "Tool call".to_string()
    }

    fn layout(&self, app: &App, size: Rect) -> (Rect, Vec<Line<'static>>) {
        let area = text_area(size);
        (
            area,
            tool_detail_lines(app, &self.call_id, area.width.saturating_sub(2)),
        )
    }

    /// Its lines are wrapped to the frame already.
    const WRAPS: bool = false;

    fn about_session(&self) -> bool {
        true
    }
}

fn tool_detail_lines(app: &App, call_id: &str, width: u16) -> Vec<Line<'static>> {
    let theme = app.look.theme();
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
        let result = miniagent_text::visible(result);
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
