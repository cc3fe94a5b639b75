//! `/context`: what fills the prompt now (`Op::InspectContext`, answered by
//! `Event::ContextReport`): the system prompt and its parts (each instruction file, the
//! skills list), the tool schemas, the history by kind, the reply's reserve, and the room
//! left against `agent.token_limit` and the model's window. It opens at once and fills
//! when the answer comes.

use ratatui::layout::Rect;
use ratatui::text::{Line, Span};

use super::text::{Text, TextLayer};
use crate::app::App;
use crate::command::Command;
use crate::popup::{between_bars, centered, tokens};
use miniagent_protocol::{ContextReport, Event, Op};

/// The command that opens it (registered in `commands::COMMANDS`).
pub const COMMAND: Command = Command {
    name: "/context",
    aliases: &[],
    args: "",
    help: "what fills the prompt, and the room left",
    run: |app, _| {
        if app.refused_in_replay("/context counts a live session's prompt (F6 shows the recorded history)") {
            return;
        }
        app.open_layer(Box::new(TextLayer::new(ContextView::default())));
        app.send(Op::InspectContext);
    },
};

/// The `/context` overlay's text: the agent's report once it came.
#[derive(Debug, Default)]
pub struct ContextView {
    report: Option<ContextReport>,
}

/// Columns of a row's label; the figure follows, right-aligned in [`FIGURE_COLUMNS`].
const LABEL_COLUMNS: usize = 34;
const FIGURE_COLUMNS: usize = 9;

impl Text for ContextView {
    fn title(&self) -> String {
        "Context".to_string()
    }

    fn layout(&self, app: &App, size: Rect) -> (Rect, Vec<Line<'static>>) {
        let lines = match &self.report {
            None => vec![Line::from(Span::styled(
                "counting what the prompt holds…".to_string(),
                app.look.theme().text,
            ))],
            Some(report) => report_lines(app, report),
        };
        let width = lines.iter().map(Line::width).max().unwrap_or(0).saturating_add(4);
        let width = u16::try_from(width).unwrap_or(u16::MAX).clamp(40, 100);
        let height = u16::try_from(lines.len()).unwrap_or(u16::MAX).saturating_add(2);
        (centered(between_bars(size), width, height), lines)
    }

    const WRAPS: bool = false;

    fn about_session(&self) -> bool {
        true
    }

    fn on_event(&mut self, event: &Event) -> bool {
        match event {
            Event::ContextReport { report } => {
                self.report = Some(report.clone());
                true
            }
            _ => false,
        }
    }
}

/// One row: a label (indented under its part), its tokens, and a note after.
fn row(app: &App, indent: usize, label: &str, figure: Option<u64>, note: &str) -> Line<'static> {
    let theme = app.look.theme();
    let label = crate::text::wrap::truncate(
        &miniagent_text::clean(label),
        LABEL_COLUMNS.saturating_sub(indent),
    );
    let pad = LABEL_COLUMNS.saturating_sub(indent + crate::text::wrap::display_width(&label));
    let figure = figure.map(tokens).unwrap_or_default();
    let style = if indent == 0 { theme.heading } else { theme.text };
    let mut spans = vec![
        Span::styled(format!("{}{label}{}", " ".repeat(indent), " ".repeat(pad)), style),
        Span::styled(format!("{figure:>FIGURE_COLUMNS$}"), theme.text),
    ];
    if !note.is_empty() {
        spans.push(Span::styled(format!("  {note}"), theme.dim));
    }
    Line::from(spans)
}

fn report_lines(app: &App, report: &ContextReport) -> Vec<Line<'static>> {
    let instructions: u64 = report.instruction_files.iter().map(|(_, tokens)| tokens).sum();
    let base = report
        .system_prompt_tokens
        .saturating_sub(instructions)
        .saturating_sub(report.skills_tokens);
    let mut lines = vec![
        row(app, 0, "System prompt", Some(report.system_prompt_tokens), ""),
        row(app, 2, "base prompt", Some(base), ""),
    ];
    for (path, count) in &report.instruction_files {
        let name = std::path::Path::new(path)
            .file_name()
            .map(|name| name.to_string_lossy().into_owned())
            .unwrap_or_default();
        lines.push(row(app, 2, &name, Some(*count), &miniagent_text::clean(path)));
    }
    if report.instruction_files.is_empty() {
        lines.push(row(app, 2, "instruction files", None, "none (AGENTS.md)"));
    }
    lines.push(row(
        app,
        2,
        &format!("skills list ({})", report.skills),
        Some(report.skills_tokens),
        "",
    ));
    lines.push(row(
        app,
        0,
        &format!("Tool schemas ({} tools)", report.tools),
        Some(report.tool_tokens),
        "",
    ));
    let history: u64 = report.history.iter().map(|(_, tokens)| tokens).sum();
    let plural = |n: u64, one: &str, many: &str| format!("{n} {}", if n == 1 { one } else { many });
    lines.push(row(
        app,
        0,
        "History",
        Some(history),
        &format!(
            "{}, {}",
            plural(report.messages, "message", "messages"),
            plural(report.summaries, "summary", "summaries")
        ),
    ));
    for (kind, count) in &report.history {
        let note = match kind.as_str() {
            "tool results" if report.masked_results + report.trimmed_results > 0 => {
                format!(
                    "{} masked, {} trimmed",
                    report.masked_results, report.trimmed_results
                )
            }
            _ => String::new(),
        };
        lines.push(row(app, 2, kind, Some(*count), &note));
    }
    let prompt = report.prompt_tokens();
    let budget = report.budget();
    lines.push(Line::default());
    lines.push(row(app, 0, "Prompt now", Some(prompt), ""));
    lines.push(row(
        app,
        0,
        "Reserved for the reply",
        Some(report.output_reserve),
        &format!("+{} margin", tokens(report.margin)),
    ));
    lines.push(row(
        app,
        0,
        "Free before compaction",
        Some(budget.saturating_sub(prompt)),
        &format!("of {}", tokens(budget)),
    ));
    lines.push(row(app, 2, "agent.token_limit", Some(report.token_limit), ""));
    lines.push(row(app, 2, "model's window", Some(report.context_window), ""));
    lines
}
