//! `/rewind` (and Esc Esc on an empty input): the person's messages to go back to, then
//! what to put back as it was just before the one picked: the code, the conversation,
//! or both. It asks the agent for the messages (`Op::ListRewindPoints`, answered by
//! `Event::RewindPoints`), sends `Op::Rewind`, and stays open until the agent answers:
//! a rewind closes it (the app shows the result), a refusal is shown in it. `/undo` is
//! here too: the last turn's file changes taken back, in one command.
//!
//! The list and the choice are questions ([`Arming`]): keys typed before a step was on
//! screen, a moment, answer nothing, so a burst (Esc Esc Enter b) cannot rewind by
//! accident; a letter that chooses waits to be sure it was pressed alone.

use std::cell::Cell;

use crossterm::event::{KeyCode, KeyEvent};
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::Style;
use ratatui::text::{Line, Span};

use super::Layer;
use crate::app::App;
use crate::command::Command;
use crate::keys::{KeyHint, OverlayAction, OverlayContext};
use crate::popup::{between_bars, centered, popup};
use crate::question::Arming;
use crate::text::wrap::{display_width, truncate, wrap_lines};
use miniagent_protocol::{Event, Op, RewindPoint, RewindScope};

/// The command that opens it (registered in `commands::COMMANDS`).
pub const COMMAND: Command = Command {
    name: "/rewind",
    aliases: &[],
    args: "",
    help: "go back before a message: code, conversation or both",
    run: |app, _| open(app),
};

/// `/undo` (registered in `commands::COMMANDS`): the agent answers as it does a rewind.
pub const UNDO: Command = Command {
    name: "/undo",
    aliases: &[],
    args: "",
    help: "take back the file changes of the last turn that made any",
    run: |app, _| {
        app.undo_asked = true;
        app.send(Op::Undo);
    },
};

/// Opens the picker and asks the agent for the messages to list.
pub fn open(app: &mut App) {
    if app.refused_in_replay(
        "a rewind goes back in a live session (`miniagent --resume ID` continues this one)",
    ) {
        return;
    }
    if app.welcome.is_some() {
        // Says that nothing can be asked without a model.
        app.send(Op::ListRewindPoints);
        return;
    }
    app.open_layer(Box::new(RewindPicker::default()));
    app.send(Op::ListRewindPoints);
}

/// Where the picker stands.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Step {
    /// The messages were asked for.
    Waiting,
    /// The messages, one selected.
    List,
    /// What to put back as it was before the selected message; `scope` highlighted.
    Choice { scope: RewindScope },
    /// Asked for; the agent's answer is awaited.
    Sent { scope: RewindScope },
}

/// The rewind picker.
#[derive(Debug)]
pub struct RewindPicker {
    step: Step,
    points: Vec<RewindPoint>,
    selected: usize,
    /// The agent's refusal, shown until another step.
    refused: Option<(String, Vec<String>)>,
    /// A rewind was done: the stack closes the picker.
    done: bool,
    arming: Arming,
    /// Rows of messages the last frame showed (PgUp/PgDn move by that many).
    page: Cell<usize>,
}

impl Default for RewindPicker {
    fn default() -> Self {
        Self {
            step: Step::Waiting,
            points: Vec::new(),
            selected: 0,
            refused: None,
            done: false,
            arming: Arming::consent(),
            page: Cell::new(1),
        }
    }
}

/// The three choices, in the order shown, with their letters.
const SCOPES: [(RewindScope, char, &str); 3] = [
    (RewindScope::Code, 'c', "code"),
    (RewindScope::Conversation, 'v', "conversation"),
    (RewindScope::Both, 'b', "both"),
];

impl RewindPicker {
    /// The message the choice is about.
    fn point(&self) -> Option<&RewindPoint> {
        self.points.get(self.selected)
    }

    /// Moves to `step`: what is now on screen is new, and takes keys only once seen.
    fn to(&mut self, step: Step) {
        self.step = step;
        self.arming = Arming::consent();
    }

    fn list_key(&mut self, key: KeyEvent) -> OverlayAction {
        if let Some(selected) = super::list_move(self.selected, self.points.len(), self.page.get(), key) {
            self.selected = selected;
            return OverlayAction::Changed;
        }
        match key.code {
            KeyCode::Esc | KeyCode::Char('q') => OverlayAction::Close,
            KeyCode::Enter => {
                let Some(point) = self.point() else {
                    return OverlayAction::Close;
                };
                // The widest choice that applies is offered first.
                let scope = [RewindScope::Both, RewindScope::Conversation, RewindScope::Code]
                    .into_iter()
                    .find(|scope| unavailable(point, *scope).is_none())
                    .unwrap_or(RewindScope::Code);
                self.refused = None;
                self.to(Step::Choice { scope });
                OverlayAction::Changed
            }
            _ => OverlayAction::Ignored,
        }
    }

    fn choice_key(&mut self, key: KeyEvent, scope: RewindScope) -> OverlayAction {
        let at = SCOPES.iter().position(|(each, ..)| *each == scope).unwrap_or(0);
        let chosen = match key.code {
            KeyCode::Esc => {
                self.to(Step::List);
                return OverlayAction::Changed;
            }
            KeyCode::Up | KeyCode::Char('k') => {
                self.step = Step::Choice {
                    scope: SCOPES[at.saturating_sub(1)].0,
                };
                return OverlayAction::Changed;
            }
            KeyCode::Down | KeyCode::Char('j') => {
                self.step = Step::Choice {
                    scope: SCOPES[(at + 1).min(SCOPES.len() - 1)].0,
                };
                return OverlayAction::Changed;
            }
            KeyCode::Enter => scope,
            KeyCode::Char(letter) => match SCOPES.iter().find(|(_, each, _)| *each == letter) {
                Some((scope, ..)) => *scope,
                None => return OverlayAction::Ignored,
            },
            _ => return OverlayAction::Ignored,
        };
        let Some(point) = self.point() else {
            return OverlayAction::Close;
        };
        if unavailable(point, chosen).is_some() {
            // Shown disabled, with why: nothing to send.
            self.step = Step::Choice { scope: chosen };
            return OverlayAction::Changed;
        }
        let turn = point.turn;
        self.step = Step::Sent { scope: chosen };
        OverlayAction::Send(Op::Rewind { turn, scope: chosen })
    }
}

/// Why `scope` cannot apply to going back before `point`; `None`: it can.
fn unavailable(point: &RewindPoint, scope: RewindScope) -> Option<&'static str> {
    let code = (point.files == 0).then_some("no file was changed from this message on");
    let conversation = (!point.conversation).then_some(
        "the conversation cannot go back there (a summary replaced it, or /clear or a rewind set it aside)",
    );
    match scope {
        RewindScope::Code => code,
        RewindScope::Conversation => conversation,
        RewindScope::Both => conversation.or(code),
    }
}

/// What choosing `scope` will do, for the message `point`.
fn consequence(point: &RewindPoint, scope: RewindScope) -> String {
    let files = match point.files {
        1 => "puts back the 1 file changed since, as it was".to_string(),
        count => format!("puts back the {count} files changed since, as they were"),
    };
    let conversation =
        "the next request carries the history before this message; what followed is kept in the session log";
    match scope {
        RewindScope::Code => files,
        RewindScope::Conversation => conversation.to_string(),
        RewindScope::Both => format!("{files}; {conversation}"),
    }
}

fn files_label(files: u32) -> String {
    match files {
        0 => "no files".to_string(),
        1 => "1 file".to_string(),
        count => format!("{count} files"),
    }
}

/// The most characters of a message a row looks at: far more than any row shows, so a
/// huge message costs a row no more than a long one.
const ROW_CHARS: usize = 1000;

/// The most columns of a refusal the picker shows (a few lines).
const REFUSAL_COLUMNS: usize = 320;

/// The start of `text` a row or a refusal looks at.
fn head(text: &str) -> String {
    text.chars().take(ROW_CHARS).collect()
}

/// `text` as one line of at most `width` columns, padded to it.
fn cell(text: &str, width: usize) -> String {
    let text = truncate(crate::app::one_line(&head(text)).trim(), width);
    let pad = width.saturating_sub(display_width(&text));
    format!("{text}{}", " ".repeat(pad))
}

/// Columns of a row besides the message: the turn, the files, the conversation.
const TURN_COLUMNS: usize = 6;
const FILES_COLUMNS: usize = 10;
const CONVERSATION_COLUMNS: usize = 14;

impl RewindPicker {
    fn refusal_lines(&self, app: &App, width: u16) -> Vec<Line<'static>> {
        let Some((message, files)) = &self.refused else {
            return Vec::new();
        };
        let theme = app.look.theme();
        // The list stays in view under it: the whole message is in the transcript.
        let shown = truncate(&crate::app::one_line(&head(message)), REFUSAL_COLUMNS);
        let text = format!("refused: {shown}{}", crate::app::files_not_named(&shown, files));
        // Set in by a column on every row, clear of the frame on both sides.
        let mut lines: Vec<Line<'static>> = wrap_lines(
            &[Line::styled(text, theme.error)],
            width.saturating_sub(2).max(10),
        )
        .into_iter()
        .map(|line| {
            let mut spans = vec![Span::raw(" ")];
            spans.extend(line.spans);
            Line::from(spans)
        })
        .collect();
        lines.push(Line::default());
        lines
    }

    /// The list's lines: a heading, a refusal, then the rows in view (only those are
    /// built, however many messages there are).
    fn list_lines(&self, app: &App, inner: Rect) -> Vec<Line<'static>> {
        let theme = app.look.theme();
        let mut lines = vec![Line::styled(
            " Go back to just before one of your messages:",
            theme.dim,
        )];
        lines.extend(self.refusal_lines(app, inner.width));
        if self.points.is_empty() {
            lines.push(Line::styled(
                "  This session has no messages to go back to yet.",
                theme.text,
            ));
            return lines;
        }
        let rows = usize::from(inner.height).saturating_sub(lines.len()).max(1);
        self.page.set(rows);
        let top = (self.selected + 1).saturating_sub(rows);
        let text_columns = usize::from(inner.width)
            .saturating_sub(TURN_COLUMNS + FILES_COLUMNS + CONVERSATION_COLUMNS + 2)
            .max(8);
        for (index, point) in self.points.iter().enumerate().skip(top).take(rows) {
            let conversation = if point.conversation {
                Span::styled(format!("{:<CONVERSATION_COLUMNS$}", "conversation"), theme.text)
            } else {
                Span::styled(format!("{:<CONVERSATION_COLUMNS$}", "code only"), theme.dim)
            };
            let files_style = if point.files == 0 { theme.dim } else { theme.text };
            let line = Line::from(vec![
                Span::styled(format!(" {:>4} ", point.turn), theme.dim),
                Span::styled(format!(" {}", cell(&point.text, text_columns)), theme.text),
                Span::styled(
                    format!(
                        " {:>width$} ",
                        files_label(point.files),
                        width = FILES_COLUMNS - 2
                    ),
                    files_style,
                ),
                conversation,
            ]);
            lines.push(if index == self.selected {
                theme.selected(line)
            } else {
                line
            });
        }
        lines
    }

    fn choice_lines(&self, app: &App, inner: Rect, highlighted: RewindScope) -> Vec<Line<'static>> {
        let theme = app.look.theme();
        let Some(point) = self.point() else {
            return Vec::new();
        };
        let width = usize::from(inner.width);
        let mut lines = vec![
            Line::styled(
                format!(
                    " Before turn {}: {}",
                    point.turn,
                    cell(&point.text, width.saturating_sub(16)).trim_end()
                ),
                theme.heading,
            ),
            Line::default(),
        ];
        lines.extend(self.refusal_lines(app, inner.width));
        for (scope, letter, name) in SCOPES {
            let why_not = unavailable(point, scope);
            let (label_style, detail_style): (Style, Style) = match why_not {
                None => (theme.text, theme.dim),
                Some(_) => (theme.dim, theme.dim),
            };
            let label = Line::from(vec![
                Span::styled(format!("  {letter}  "), theme.key),
                Span::styled(format!("{name:<14}"), label_style),
                Span::styled(if why_not.is_some() { "(not available)" } else { "" }, theme.dim),
            ]);
            lines.push(if scope == highlighted {
                theme.selected(label)
            } else {
                label
            });
            let detail = match why_not {
                None => consequence(point, scope),
                Some(why) => why.to_string(),
            };
            let wrapped = wrap_lines(
                &[Line::styled(detail, detail_style)],
                inner.width.saturating_sub(7).max(10),
            );
            lines.extend(wrapped.into_iter().map(|line| {
                let mut spans = vec![Span::raw("       ")];
                spans.extend(line.spans);
                Line::from(spans)
            }));
        }
        lines
    }

    fn sent_lines(&self, app: &App, scope: RewindScope) -> Vec<Line<'static>> {
        let what = match scope {
            RewindScope::Code => "the code",
            RewindScope::Conversation => "the conversation",
            RewindScope::Both => "the code and the conversation",
        };
        let turn = self.point().map_or(0, |point| point.turn);
        vec![Line::styled(
            format!(" putting back {what} as before turn {turn}…"),
            app.look.theme().text,
        )]
    }
}

impl Layer for RewindPicker {
    type State = App;

    fn title(&self) -> String {
        "Rewind".to_string()
    }

    fn key_hints(&self) -> Vec<KeyHint> {
        match self.step {
            Step::Waiting | Step::Sent { .. } => vec![KeyHint::new("Esc", "close")],
            Step::List => vec![
                KeyHint::new("↑/↓/PgUp/PgDn", "select"),
                KeyHint::new("Enter", "pick"),
                KeyHint::new("Esc", "close"),
            ],
            Step::Choice { .. } => vec![
                KeyHint::new("c/v/b", "code, conversation, both"),
                KeyHint::new("↑/↓ Enter", "choose"),
                KeyHint::new("Esc", "back"),
            ],
        }
    }

    fn on_key(&mut self, key: KeyEvent, _context: OverlayContext<'_>) -> OverlayAction {
        match self.step.clone() {
            Step::Waiting | Step::Sent { .. } => match key.code {
                KeyCode::Esc | KeyCode::Char('q') => OverlayAction::Close,
                _ => OverlayAction::Ignored,
            },
            Step::List => self.list_key(key),
            Step::Choice { scope } => self.choice_key(key, scope),
        }
    }

    fn render(&self, app: &App, size: Rect, buf: &mut Buffer) {
        let room = between_bars(size);
        let width = room.width.saturating_sub(4).min(110);
        // The height the lines want is known once they are built for the most room.
        let most = centered(room, width, room.height);
        let inner = crate::popup::inner(most);
        let lines = match self.step {
            Step::Waiting if self.refused.is_some() => self.refusal_lines(app, inner.width),
            Step::Waiting => vec![Line::styled(
                " asking the agent for your messages…",
                app.look.theme().text,
            )],
            Step::List => self.list_lines(app, inner),
            Step::Choice { scope } => self.choice_lines(app, inner, scope),
            Step::Sent { scope } => self.sent_lines(app, scope),
        };
        let height = u16::try_from(lines.len()).unwrap_or(u16::MAX).saturating_add(2);
        let area = centered(room, width, height);
        popup(buf, area, &self.title(), lines, 0, app, false);
    }

    fn about_session(&self) -> bool {
        true
    }

    fn question(&self) -> Option<&Arming> {
        matches!(self.step, Step::List | Step::Choice { .. }).then_some(&self.arming)
    }

    fn question_mut(&mut self) -> Option<&mut Arming> {
        matches!(self.step, Step::List | Step::Choice { .. }).then_some(&mut self.arming)
    }

    fn takes_answer_letters(&self) -> bool {
        matches!(self.step, Step::Choice { .. })
    }

    fn leaves_while_arming(&self, key: KeyEvent) -> bool {
        key.code == KeyCode::Esc
    }

    fn finished(&self) -> bool {
        self.done
    }

    fn on_event(&mut self, event: &Event) -> bool {
        match event {
            Event::RewindPoints { points } if self.step == Step::Waiting => {
                self.points = points.clone();
                // The newest message is the likeliest to go back before.
                self.selected = points.len().saturating_sub(1);
                self.to(Step::List);
                true
            }
            Event::Rewound { .. } => {
                self.done = true;
                true
            }
            Event::RewindRefused { message, files } => {
                self.refused = Some((message.clone(), files.clone()));
                if matches!(self.step, Step::Sent { .. }) {
                    self.to(Step::List);
                }
                true
            }
            _ => false,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    fn point(files: u32, conversation: bool) -> RewindPoint {
        RewindPoint {
            turn: 2,
            text: "fix it".into(),
            files,
            conversation,
        }
    }

    #[test]
    fn a_choice_that_cannot_apply_says_why() {
        assert_eq!(unavailable(&point(2, true), RewindScope::Both), None);
        assert_eq!(
            unavailable(&point(0, true), RewindScope::Code),
            Some("no file was changed from this message on")
        );
        assert_eq!(unavailable(&point(0, true), RewindScope::Conversation), None);
        assert_eq!(
            unavailable(&point(0, true), RewindScope::Both),
            Some("no file was changed from this message on")
        );
        assert_eq!(
            unavailable(&point(3, false), RewindScope::Both),
            unavailable(&point(3, false), RewindScope::Conversation)
        );
    }

    #[test]
    fn a_cell_is_one_line_cut_by_display_width() {
        assert_eq!(cell("a\nb\tc", 8), "a b c   ");
        assert_eq!(cell("总结一下这个项目", 9), "总结一下…");
        assert_eq!(display_width(&cell("总结一下这个项目", 9)), 9);
    }
}
