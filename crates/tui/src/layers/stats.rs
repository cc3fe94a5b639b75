//! `/stats`: the session's figures (turns, steps, tokens, calls, time) and, once the
//! agent answered, the history's (prompt size, masked results, compactions), side by side
//! when the screen has room.

use ratatui::layout::Rect;
use ratatui::text::{Line, Span};

use super::text::{Text, TextLayer};
use crate::app::App;
use crate::layers::history::message_range;
use crate::popup::{between_bars, centered, tokens};
use crate::text::wrap;
use miniagent_protocol::Op;

/// The `/stats` overlay's text.
#[derive(Debug, Default)]
pub struct SessionStats;

/// The `/stats` overlay.
pub type Stats = TextLayer<SessionStats>;

/// Opens `/stats`, asking for a fresh snapshot for its history figures.
pub fn open(app: &mut App) {
    app.send(Op::InspectHistory);
    app.open_layer(Box::new(Stats::default()));
}

impl Text for SessionStats {
    fn title(&self) -> String {
        "Session statistics".to_string()
    }

    fn layout(&self, app: &App, size: Rect) -> (Rect, Vec<Line<'static>>) {
        let (lines, width) = stats_lines(app, size.width);
        let height = u16::try_from(lines.len()).unwrap_or(u16::MAX).saturating_add(2);
        let small = centered(between_bars(size), width, height);
        (small, lines)
    }

    /// Its columns are laid out to the frame already.
    const WRAPS: bool = false;

    fn about_session(&self) -> bool {
        true
    }

    fn shows_history(&self) -> bool {
        true
    }
}

/// Columns the history figures need at most when they stand beside the session's.
const STATS_RIGHT_COLUMNS: usize = 35;
/// Columns of a row's label, its value after (a longer label keeps two spaces).
const LABEL_COLUMNS: usize = 22;

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
    let right_needs = widest_right.min(STATS_RIGHT_COLUMNS);
    if inner < 36 + 2 + right_needs {
        let mut lines = left;
        lines.push(Line::default());
        lines.extend(right);
        return (lines, 64.min(screen_width));
    }
    // The session figures as wide as they are, leaving the history figures the room they
    // take (up to their share): a value is cut only when both cannot be whole.
    let left_width = widest_left.min(inner - 2 - right_needs);
    let right_width = inner - left_width - 2;
    let rows = left.len().max(right.len());
    let lines = (0..rows)
        .map(|row| {
            let mut spans = Vec::new();
            // Beside an empty row a long value runs on into the room it leaves.
            let beside = right.get(row).is_some_and(|line| line.width() > 0);
            if let Some(line) = left.get(row) {
                let room = if beside { left_width } else { inner };
                spans.extend(wrap::truncate_spans(&line.spans, room));
            }
            let used: usize = spans.iter().map(|span| wrap::display_width(&span.content)).sum();
            spans.push(Span::raw(" ".repeat((left_width + 2).saturating_sub(used))));
            if let Some(line) = right.get(row) {
                spans.extend(wrap::truncate_spans(&line.spans, right_width));
            }
            Line::from(spans)
        })
        .collect();
    (lines, width)
}

/// A label and its value, the value at `columns` or, after a longer label, two spaces
/// after it: they never touch.
fn stats_row(app: &App, columns: usize, label: &str, value: String) -> Line<'static> {
    let pad = columns.max(wrap::display_width(label) + 2) - wrap::display_width(label);
    Line::from(vec![
        Span::styled(format!("{label}{}", " ".repeat(pad)), app.look.theme().dim),
        Span::styled(value, app.look.theme().text),
    ])
}

/// "5" or, with summary calls, "6 (1 summary)": the model calls made, the summaries'
/// among them.
fn model_calls(calls: u64, summaries: u32) -> String {
    if summaries == 0 {
        return calls.to_string();
    }
    format!(
        "{calls} ({summaries} summar{})",
        if summaries == 1 { "y" } else { "ies" }
    )
}

fn session_stats(app: &App) -> Vec<Line<'static>> {
    let theme = app.look.theme();
    let row = |label: &str, value: String| stats_row(app, LABEL_COLUMNS, label, value);
    let figures = app.figures.tokens();
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
        row("turns", app.figures.stats().turns.to_string()),
        row(
            "model calls",
            model_calls(app.figures.stats().calls(), app.figures.stats().summary_calls),
        ),
        row("retries", app.figures.stats().retries.to_string()),
        row(
            "context now (tokens)",
            format!(
                "{} of {}",
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
        row("cache read / written", {
            let percent = match figures.total_input {
                0 => 0,
                input => figures.total_cache_read.saturating_mul(100) / input,
            };
            format!(
                "{} / {} ({percent}%)",
                tokens(figures.total_cache_read),
                tokens(figures.total_cache_write)
            )
        }),
        row(
            "cost",
            match figures.cost {
                Some(cost) => miniagent_protocol::usd(cost),
                None => "unknown (no [prices] entry)".to_string(),
            },
        ),
        row(
            "last turn",
            match figures.last_turn {
                Some(turn) => format!(
                    "{} call{}, {}",
                    turn.model_calls,
                    if turn.model_calls == 1 { "" } else { "s" },
                    match turn.cost {
                        Some(cost) => miniagent_protocol::usd(cost),
                        None => format!("in {}", tokens(turn.input)),
                    }
                ),
                None => "none yet".to_string(),
            },
        ),
        row("compactions", compactions),
        row("approval mode", app.session.approval_mode().to_string()),
        row("remembered approvals", app.session.rules().len().to_string()),
    ];
    lines.push(Line::from(Span::styled("tool calls", theme.heading)));
    if app.figures.stats().tool_calls.is_empty() {
        lines.push(Line::from(Span::styled("  none yet", theme.dim)));
    }
    for (name, count) in &app.figures.stats().tool_calls {
        lines.push(row(&format!("  {name}"), count.to_string()));
    }
    lines
}

/// Where the prompt's tokens go and every compaction, from the latest snapshot.
fn history_stats(app: &App) -> Option<Vec<Line<'static>>> {
    let history = app.session.history()?;
    let theme = app.look.theme();
    // Its labels are short: their values come as close as they allow, leaving the
    // session's column the room.
    let labels = ["  whole prompt", "  masked results", "  trimmed results"]
        .iter()
        .map(|label| wrap::display_width(label))
        .chain(
            history
                .by_role
                .iter()
                .map(|(role, _)| 2 + wrap::display_width(role)),
        )
        .chain(
            history
                .by_tool
                .iter()
                .map(|(tool, _)| 2 + wrap::display_width(tool)),
        )
        .max()
        .unwrap_or(0);
    let columns = (labels + 2).min(LABEL_COLUMNS);
    let row = |label: &str, value: String| stats_row(app, columns, label, value);
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
    lines.push(row("  masked results", history.masked_results.to_string()));
    if history.trimmed_results > 0 {
        lines.push(row("  trimmed results", history.trimmed_results.to_string()));
    }
    lines.push(Line::default());
    lines.push(heading("tool results in the prompt"));
    if history.by_tool.is_empty() {
        // Results a summary took in are not in the prompt: the calls still happened.
        lines.push(Line::from(Span::styled("  none in the prompt", theme.dim)));
    }
    lines.extend(
        history
            .by_tool
            .iter()
            .map(|(tool, count)| row(&format!("  {tool}"), tokens(*count))),
    );
    lines.push(Line::default());
    lines.push(heading("compactions (prompt tokens)"));
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
