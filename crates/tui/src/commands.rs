//! Every slash command, in one table that the input's completion, the help overlay and
//! dispatch all read. A command is a row here; one that opens an overlay lives in that
//! overlay's file under `layers/` and is registered here with one line.

use super::app::App;
use super::conversation::NoticeKind;
use super::keys::CommandHint;
use miniagent_protocol::{ApprovalMode, Op};

pub use super::command::Command;

/// `/init`: a prompt command the agent holds (it sends the model its built-in prompt),
/// listed here so that completion, help and the docs name it before the agent says so.
const INIT: &str = "/init";

/// Every slash command, in the order completion and help list them.
pub const COMMANDS: &[Command] = &[
    Command {
        name: "/help",
        aliases: &[],
        args: "",
        help: "every key and command",
        run: |app, _| app.open_help(),
    },
    Command {
        name: "/clear",
        aliases: &[],
        args: "",
        help: "start the conversation over",
        run: |app, _| app.send(Op::ClearHistory),
    },
    Command {
        name: "/compact",
        aliases: &[],
        args: "",
        help: "compact the history now",
        run: |app, _| app.send(Op::CompactNow),
    },
    Command {
        name: INIT,
        aliases: &[],
        args: "[FOCUS]",
        help: "have the model write a starting AGENTS.md",
        // Never called: [`run`] sends `/init` to the agent with the rest of its line, as
        // it does any prompt command.
        run: |_, _| {},
    },
    super::layers::context::COMMAND,
    super::layers::diff::COMMAND,
    Command {
        name: "/history",
        aliases: &[],
        args: "",
        help: "the prompt as the model sees it, and what summaries replaced",
        run: |app, _| app.open_history(),
    },
    super::layers::rewind::COMMAND,
    super::layers::rewind::UNDO,
    Command {
        name: "/resume",
        aliases: &[],
        args: "",
        help: "continue a recorded session (this workspace's; Tab: all)",
        run: resume,
    },
    Command {
        name: "/approval",
        aliases: &[],
        args: "MODE",
        help: "read-only, ask, auto-edit or full-auto",
        run: approval_mode,
    },
    super::layers::approvals::COMMAND,
    super::layers::notes::COMMAND,
    Command {
        name: "/stats",
        aliases: &[],
        args: "",
        help: "tokens, steps and tool calls so far",
        run: |app, _| app.open_stats(),
    },
    super::layers::themes::COMMAND,
    super::layers::model::COMMAND,
    super::layers::mcp::COMMAND,
    super::layers::skills::COMMAND,
    super::layers::hooks::COMMAND,
    super::layers::version::COMMAND,
    Command {
        name: "/copy",
        aliases: &[],
        args: "",
        help: "copy the last answer (markdown) to the clipboard (OSC 52)",
        run: |app, _| app.copy_last_answer(),
    },
    Command {
        name: "/mouse",
        aliases: &[],
        args: "",
        help: "mouse capture off (select text with the mouse) or back on",
        run: |app, _| app.toggle_mouse(),
    },
    Command {
        name: "/quit",
        aliases: &["/exit"],
        args: "",
        help: "leave miniagent",
        run: |app, _| app.request(crate::app::Action::Quit),
    },
];

/// Every command as completion and the help list it.
pub fn hints() -> Vec<CommandHint> {
    COMMANDS
        .iter()
        .map(|command| CommandHint {
            name: command.name.into(),
            args: command.args.into(),
            help: command.help.into(),
        })
        .collect()
}

/// The command typed as `name` (with its slash), by name or alias.
pub fn find(name: &str) -> Option<&'static Command> {
    COMMANDS
        .iter()
        .find(|command| command.name == name || command.aliases.contains(&name))
}

/// Runs the command line `text` (`/name arg…`); an unknown name says so. A built-in
/// wins over a prompt command of its name; a prompt command (`/init`, a `commands/`
/// file) goes to the agent with the whole rest of the line as its arguments.
pub fn run(app: &mut App, text: &str) {
    let text = text.trim_start();
    let mut words = text.split_whitespace();
    let name = words.next().unwrap_or("/");
    let argument = words.next();
    let rest = text.get(name.len()..).unwrap_or_default().trim();
    let bare = name.strip_prefix('/').unwrap_or(name);
    match find(name) {
        Some(command) if command.name != INIT => (command.run)(app, argument),
        found if found.is_some() || app.session.has_prompt_command(bare) => app.send(Op::RunCommand {
            name: bare.to_string(),
            arguments: rest.to_string(),
        }),
        _ => {
            let message = match nearest(name) {
                Some(known) => format!("unknown command {name}; did you mean {known}? /help lists them"),
                None => format!("unknown command {name}; /help lists them"),
            };
            app.notice(NoticeKind::Error, message);
        }
    }
}

/// The command whose name (or alias) is closest to a mistyped `name`: at most two
/// characters added, removed or changed, so that a guess is offered only when it is
/// likely what was meant.
fn nearest(name: &str) -> Option<&'static str> {
    const MOST_EDITS: usize = 2;
    // Longer than any command name by more than the edits allowed: nothing is near.
    if name.chars().count() > 24 {
        return None;
    }
    COMMANDS
        .iter()
        .flat_map(|command| {
            std::iter::once(command.name)
                .chain(command.aliases.iter().copied())
                .map(move |spelled| (edits(name, spelled), command.name))
        })
        .filter(|(distance, _)| *distance <= MOST_EDITS)
        .min_by_key(|(distance, _)| *distance)
        .map(|(_, known)| known)
}

/// How many characters must be added, removed or changed to turn `a` into `b`
/// (Levenshtein distance, one row at a time).
fn edits(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut diagonal = row[0];
        row[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let above = row[j + 1];
            row[j + 1] = (diagonal + usize::from(ca != *cb)).min(above + 1).min(row[j] + 1);
            diagonal = above;
        }
    }
    row[b.len()]
}

fn resume(app: &mut App, _: Option<&str>) {
    if !app.refused_in_replay("`miniagent --resume ID` continues a session") {
        app.open_session_picker();
    }
}

fn approval_mode(app: &mut App, argument: Option<&str>) {
    let mode = match argument {
        Some("read-only") => Some(ApprovalMode::ReadOnly),
        Some("ask") => Some(ApprovalMode::Ask),
        Some("auto-edit") => Some(ApprovalMode::AutoEdit),
        Some("full-auto") => Some(ApprovalMode::FullAuto),
        _ => None,
    };
    match mode {
        Some(mode) => {
            if app.welcome.is_none() {
                app.session.ask_mode(mode);
            }
            app.send(Op::SetApprovalMode { mode });
        }
        None => {
            let now = app.session.approval_mode();
            app.notice(
                NoticeKind::Error,
                format!("/approval needs a mode: read-only, ask, auto-edit or full-auto (now: {now})"),
            );
        }
    }
}
