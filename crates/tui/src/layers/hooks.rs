//! `/hooks`: the commands the session runs on its events (`hooks.json`), as the agent
//! reported them at the start, by event.

use ratatui::layout::Rect;
use ratatui::text::{Line, Span};

use super::text::{Text, TextLayer};
use crate::app::App;
use crate::command::Command;
use crate::theme::Theme;
use miniagent_protocol::HookInfo;

/// The command that opens it (registered in `commands::COMMANDS`).
pub const COMMAND: Command = Command {
    name: "/hooks",
    aliases: &[],
    args: "",
    help: "the commands run on the agent's events (hooks.json)",
    run: |app, _| app.open_layer(Box::new(TextLayer::new(Hooks))),
};

/// The `/hooks` overlay's text.
pub struct Hooks;

impl Text for Hooks {
    fn title(&self) -> String {
        "Hooks".to_string()
    }

    fn layout(&self, app: &App, size: Rect) -> (Rect, Vec<Line<'static>>) {
        (
            super::text_area(size),
            hooks_lines(app.session.hooks(), app.look.theme()),
        )
    }

    const WRAPS: bool = true;
}

/// The events in the order a turn meets them.
const EVENTS: [&str; 6] = [
    "SessionStart",
    "UserPromptSubmit",
    "PreToolUse",
    "PostToolUse",
    "PreCompact",
    "Stop",
];

/// The overlay's lines: each event with its hooks, what they match, how long they may
/// run and whose they are.
fn hooks_lines(hooks: &[HookInfo], theme: &Theme) -> Vec<Line<'static>> {
    let mut lines = Vec::new();
    if hooks.is_empty() {
        lines.push(Line::from(Span::styled(
            "No hooks. They are read from hooks.json in the config folder and from a trusted workspace's .miniagent/hooks.json.",
            theme.dim,
        )));
        return lines;
    }
    let known = |hook: &&HookInfo| EVENTS.contains(&hook.event.as_str());
    let others = hooks.iter().filter(|hook| !known(hook));
    for event in EVENTS {
        let of_event: Vec<&HookInfo> = hooks.iter().filter(|hook| hook.event == event).collect();
        if of_event.is_empty() {
            continue;
        }
        if !lines.is_empty() {
            lines.push(Line::default());
        }
        lines.push(Line::from(Span::styled(event.to_string(), theme.heading)));
        for hook in of_event {
            lines.extend(hook_lines(hook, theme));
        }
    }
    for hook in others {
        lines.extend(hook_lines(hook, theme));
    }
    lines.push(Line::default());
    lines.push(Line::from(Span::styled(
        "Exit 2 blocks (its stderr is the reason); other failures are reported. Workspace hooks run in the command sandbox.",
        theme.dim,
    )));
    lines
}

/// A hook's lines: what it matches and its command, a command of several lines (each a
/// command of its own to the shell) shown as several, so none reads as another's arguments.
fn hook_lines(hook: &HookInfo, theme: &Theme) -> Vec<Line<'static>> {
    let matcher = format!("  {}  ", miniagent_text::clean(&hook.matcher));
    let indent = " ".repeat(unicode_width::UnicodeWidthStr::width(matcher.as_str()));
    let command = miniagent_text::clean(&hook.command).replace('\t', " ");
    let mut lines: Vec<Line<'static>> = command
        .split(['\n', '\r'])
        .enumerate()
        .map(|(index, line)| {
            let lead = if index == 0 {
                Span::styled(matcher.clone(), theme.strong)
            } else {
                Span::raw(indent.clone())
            };
            Line::from(vec![lead, Span::styled(line.to_string(), theme.tool)])
        })
        .collect();
    if let Some(last) = lines.last_mut() {
        last.spans.push(Span::styled(
            format!(
                "  ({}, {} s)",
                miniagent_text::clean(&hook.source),
                hook.timeout_s
            ),
            theme.dim,
        ));
    }
    lines
}
