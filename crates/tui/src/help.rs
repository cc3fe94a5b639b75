//! The help (F1, `/help`, `?` outside the input): every key and command, generated from
//! the tables that dispatch them (`bindings`, `commands`) and from each pane's own
//! `key_hints()`, so it cannot fall behind what the keys do. It is a layer, kept beside
//! the tables it reads rather than in `layers/` (which the tables register from); the
//! keys and the command that open it call `App::open_help`.

use ratatui::layout::Rect;
use ratatui::text::{Line, Span};

use crate::app::App;
use crate::bindings::{self, APPROVAL, BEHIND_APPROVAL, WORKBENCH};
use crate::commands::COMMANDS;
use crate::keys::KeyHint;
use crate::layers::diff::DIFF_HINTS;
use crate::layers::history::INSPECTOR_HINTS;
use crate::layers::sessions::PICKER_HINTS;
use crate::layers::text::{Text, TextLayer};
use crate::text::wrap;

/// Opens the help over whatever shows.
pub fn open(app: &mut App) {
    app.open_layer(Box::new(TextLayer::new(Help)));
}

/// The help overlay's text.
pub struct Help;

impl Text for Help {
    fn title(&self) -> String {
        "Help".to_string()
    }

    fn layout(&self, app: &App, size: Rect) -> (Rect, Vec<Line<'static>>) {
        let area = crate::layers::text_area(size);
        (area, help_lines(app, area.width.saturating_sub(2)))
    }

    /// Its rows are wrapped under their key column already.
    const WRAPS: bool = false;
}

/// The help's indentation before the keys, and the gap after the widest of them.
const HELP_INDENT: usize = 2;
const HELP_GAP: usize = 2;
/// The text column keeps at least this many columns; wider keys go on a line of their own.
const HELP_MIN_TEXT: usize = 24;

/// One help row: the keys, then what they do in a column `key_columns` in, wrapped under
/// itself. Keys too wide for the column stand on their own line, the text under them.
fn help_row(keys: &str, action: &str, app: &App, width: u16, key_columns: usize) -> Vec<Line<'static>> {
    let action_width = usize::from(width).saturating_sub(key_columns).max(16);
    let action_line = Line::from(Span::styled(action.to_string(), app.look.theme().text));
    let wrapped = wrap::wrap_line(&action_line, u16::try_from(action_width).unwrap_or(u16::MAX));
    let indent = " ".repeat(HELP_INDENT);
    let keys_fit = HELP_INDENT + wrap::display_width(keys) + HELP_GAP <= key_columns;
    let mut lines = Vec::new();
    if !keys_fit {
        lines.push(Line::from(Span::styled(
            format!("{indent}{keys}"),
            app.look.theme().key,
        )));
    }
    for (index, line) in wrapped.into_iter().enumerate() {
        let lead = if index == 0 && keys_fit {
            let pad = key_columns - HELP_INDENT - wrap::display_width(keys);
            format!("{indent}{keys}{}", " ".repeat(pad))
        } else {
            " ".repeat(key_columns)
        };
        let mut spans = vec![Span::styled(lead, app.look.theme().key)];
        spans.extend(line.spans);
        lines.push(Line::from(spans));
    }
    lines
}

/// One titled part of the help: each row's keys (or a command as typed) and what it does.
/// A prompt command's text is its file's, so a row's text may be owned.
pub(crate) type HelpSection = (&'static str, Vec<(String, std::borrow::Cow<'static, str>)>);

/// Every part of the help, from the tables that dispatch the keys and commands and from
/// the panes' own hints; the replay's keys lead when `replay`. The help overlay draws
/// these, and the docs' key tables are generated from them (`tests::docs_tables`).
pub(crate) fn help_sections(app: &App, replay: bool) -> Vec<HelpSection> {
    let mut sections: Vec<HelpSection> = Vec::new();
    let hints = |list: Vec<KeyHint>| -> Vec<(String, std::borrow::Cow<'static, str>)> {
        list.into_iter()
            .map(|hint| (hint.keys.to_string(), hint.action.into()))
            .collect()
    };
    if replay {
        sections.push(("Replay", hints(crate::replay::help_hints())));
    }
    sections.extend([
        ("Workbench", hints(bindings::help_hints(WORKBENCH))),
        ("Input", hints(app.input.all_key_hints())),
        ("Conversation", hints(app.conversation.key_hints())),
        ("Thinking", hints(app.thinking.key_hints())),
        ("Tools", hints(app.timeline.key_hints())),
        ("Files", hints(app.tree.key_hints())),
        (
            "Approval",
            hints(
                [
                    bindings::help_hints(APPROVAL),
                    bindings::help_hints(BEHIND_APPROVAL),
                ]
                .concat(),
            ),
        ),
        (
            "History inspector (F6, /history)",
            hints(INSPECTOR_HINTS.to_vec()),
        ),
        ("Session picker (/resume)", hints(PICKER_HINTS.to_vec())),
        ("Changes (/diff)", hints(DIFF_HINTS.to_vec())),
    ]);
    sections.push((
        "Commands",
        COMMANDS
            .iter()
            .map(|command| {
                let name = format!("{} {}", command.name, command.args);
                (name.trim_end().to_string(), command.help.into())
            })
            .collect(),
    ));
    // The prompt commands the agent offers that no built-in shadows (`/init` is one).
    let prompt: Vec<_> = app
        .session
        .prompt_commands()
        .iter()
        .filter(|command| crate::commands::find(&format!("/{}", command.name)).is_none())
        .map(|command| {
            let name = format!(
                "/{} {}",
                command.name,
                command.argument_hint.as_deref().unwrap_or_default()
            );
            let help = format!("{} ({})", command.description, command.source);
            (name.trim_end().to_string(), help.into())
        })
        .collect();
    if !prompt.is_empty() {
        sections.push(("Prompt commands (commands/ files)", prompt));
    }
    sections
}

/// Help, generated from every component's own bindings, for `width` columns.
fn help_lines(app: &App, width: u16) -> Vec<Line<'static>> {
    let sections = help_sections(app, app.replay.is_some());
    // The key column is as wide as the widest keys, while the text keeps its room.
    let widest = sections
        .iter()
        .flat_map(|(_, rows)| rows.iter().map(|(keys, _)| wrap::display_width(keys)))
        .max()
        .unwrap_or(0);
    let key_columns = (HELP_INDENT + widest + HELP_GAP)
        .min(usize::from(width).saturating_sub(HELP_MIN_TEXT))
        .max(HELP_INDENT + HELP_GAP);
    let mut lines = Vec::new();
    for (index, (title, rows)) in sections.iter().enumerate() {
        if index > 0 {
            lines.push(Line::default());
        }
        lines.push(Line::from(Span::styled(
            title.to_string(),
            app.look.theme().heading,
        )));
        for (keys, action) in rows {
            lines.extend(help_row(keys, action, app, width, key_columns));
        }
    }
    lines
}
