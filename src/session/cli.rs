//! `miniagent sessions list|show|export` and `miniagent replay --headless`: finding a
//! session's log, reading it, and writing what [`super::export`] renders. Every error is
//! one line on stderr and exit code 1. What a log holds came from the model and its tools:
//! text and markdown are cleaned for the terminal as they are written, JSON is escaped.

use std::collections::HashMap;
use std::io::{IsTerminal, Write};
use std::path::{Path, PathBuf};

use clap::ValueEnum;

use super::{Loaded, Record, export, store};
use crate::agent::tokens::{Encoding, TokenCounter};
use crate::exec::{OutputMode, Printer};
use crate::protocol::{Decision, Event};
use crate::terminal_text;
use crate::tools::output::preview_line;

/// What `sessions export` writes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum ExportFormat {
    /// The conversation as markdown, tool calls and results folded in `<details>`.
    Md,
    /// The history the model saw, as JSON.
    Json,
}

/// `sessions list`: every session, newest first, one line each with the id first.
pub fn list() -> i32 {
    let Some(dir) = store::sessions_dir(&env) else {
        return fail("no data folder on this machine holds sessions; set MINIAGENT_DATA_DIR");
    };
    let sessions = store::list(&dir);
    if sessions.is_empty() {
        terminal_text::eprintln(&format!(
            "no sessions recorded yet (they are kept in {})",
            dir.display()
        ));
        return 0;
    }
    let lines = export::list_lines(&sessions);
    write_stdout(&(lines.join("\n") + "\n"));
    0
}

/// `sessions show ID`: the session's details and its conversation.
pub fn show(id: &str) -> i32 {
    match open(id) {
        Ok((path, loaded)) => {
            write_stdout(&export::show(&loaded, &path));
            0
        }
        Err(why) => fail(&why),
    }
}

/// `sessions export ID --format md|json`, on stdout.
pub fn export(id: &str, format: ExportFormat) -> i32 {
    let loaded = match open(id) {
        Ok((_, loaded)) => loaded,
        Err(why) => return fail(&why),
    };
    warn(&loaded);
    let text = match format {
        ExportFormat::Md => export::markdown(&loaded),
        ExportFormat::Json => {
            // Masked results' stubs quote a token count: count as the agent did (the
            // default tokenizer; the log does not say which one ran).
            let mut restored = loaded.restore(TokenCounter::new(Encoding::Cl100kBase));
            // The history stays valid to send: a call the log left open gets a result.
            restored.close_open_calls();
            match export::json(&loaded, &restored) {
                Ok(json) => {
                    // The raw text, every control in it escaped.
                    let mut stdout = std::io::stdout().lock();
                    let json = terminal_text::escape_json_controls(json);
                    let _ = writeln!(stdout, "{json}").and_then(|()| stdout.flush());
                    return 0;
                }
                Err(why) => return fail(&why),
            }
        }
    };
    write_stdout(&text);
    0
}

/// `replay --headless FILE`: the recorded session printed as `exec` printed it, at once.
pub fn replay_headless(file: &str) -> i32 {
    let loaded = match open(file) {
        Ok((_, loaded)) => loaded,
        Err(why) => return fail(&why),
    };
    warn(&loaded);
    let no_color = std::env::var_os("NO_COLOR").is_some_and(|v| !v.is_empty());
    let mut printer = Printer::new(OutputMode::Human {
        color: std::io::stderr().is_terminal() && !no_color,
    });
    let mut replay = HeadlessReplay::default();
    for record in &loaded.records {
        replay.record(&mut printer, record);
    }
    for event in loaded.closing_events() {
        printer.event(&event);
    }
    0
}

/// What a headless replay adds to exec's printing: the prompt of each turn, and the
/// approval decisions the log holds (exec itself can only refuse).
#[derive(Default)]
struct HeadlessReplay {
    /// Tool names of calls that asked for approval, by call id.
    asked: HashMap<String, String>,
}

impl HeadlessReplay {
    fn record(&mut self, printer: &mut Printer, record: &Record) {
        match record {
            Record::Event { event, .. } => self.event(printer, event),
            Record::Decision { id, decision, .. } => {
                let name = self.asked.remove(id).unwrap_or_else(|| id.clone());
                printer.note(&decision_line(&name, decision));
            }
            Record::Cleared { .. } => printer.note("── the conversation was started over ──"),
            Record::Header(_)
            | Record::Messages { .. }
            | Record::Blocks { .. }
            | Record::Summary { .. }
            | Record::Masked { .. }
            | Record::Output { .. }
            | Record::Resumed { .. } => {}
        }
    }

    fn event(&mut self, printer: &mut Printer, event: &Event) {
        let asked = match event {
            Event::ApprovalRequested { id, name, .. } => Some((id, name)),
            Event::SubAgent { event, .. } => match event.as_ref() {
                Event::ApprovalRequested { id, name, .. } => Some((id, name)),
                _ => None,
            },
            _ => None,
        };
        if let Some((id, name)) = asked {
            // The decision record that follows says what came of it.
            self.asked.insert(id.clone(), name.clone());
            return;
        }
        if let Event::TurnStarted { text } = event {
            printer.note(&format!("› {}", text.trim_end().replace('\n', "\n  ")));
        }
        printer.event(event);
    }
}

/// `approved `bash``, `refused `bash`: reason`.
fn decision_line(name: &str, decision: &Decision) -> String {
    // Cleaned on its own so that nothing in it can hide the rest of the line.
    let name = terminal_text::clean(name);
    match decision {
        Decision::Approve => format!("approved `{name}`"),
        Decision::ApproveForSession => format!("approved `{name}` for the rest of the session"),
        Decision::Deny { reason: Some(reason) } => format!(
            "refused `{name}`: {}",
            preview_line(&terminal_text::clean(reason), 100)
        ),
        Decision::Deny { reason: None } => format!("refused `{name}`"),
        Decision::Abort => format!("refused `{name}` and ended the turn"),
    }
}

fn env(name: &str) -> Option<String> {
    std::env::var(name).ok()
}

/// The log `id` names (an id, a unique prefix, or a file), read.
fn open(id: &str) -> Result<(PathBuf, Loaded), String> {
    let path = locate(id)?;
    let loaded = super::load(&path)?;
    Ok((path, loaded))
}

fn locate(id: &str) -> Result<PathBuf, String> {
    let as_path = Path::new(id);
    if as_path.is_file() {
        return Ok(as_path.to_path_buf());
    }
    if id.ends_with(".jsonl") || id.contains(std::path::MAIN_SEPARATOR) {
        return Err(format!("no session log at {id}"));
    }
    let dir = store::sessions_dir(&env);
    store::resolve(dir.as_deref(), id)
}

fn warn(loaded: &Loaded) {
    for warning in &loaded.warnings {
        terminal_text::eprintln(&format!("miniagent: warning: {warning}"));
    }
}

fn fail(why: &str) -> i32 {
    terminal_text::eprintln(&format!("miniagent: {why}"));
    1
}

/// Writes human-readable text to stdout, cleaned; a reader that went away (`| head`) is
/// not an error.
fn write_stdout(text: &str) {
    terminal_text::print(text);
}
