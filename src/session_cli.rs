//! `miniagent sessions list|show|export|rm|prune` and `miniagent replay --headless`: finding a
//! session's log, reading it, and writing what `export` renders. Every error is
//! one line on stderr and exit code 1. What a log holds came from the model and its tools:
//! text and markdown are cleaned for the terminal as they are written, JSON is escaped.

use crate::config::Env;
use std::collections::HashMap;
use std::io::{IsTerminal, Write};
use std::path::{Path, PathBuf};

use clap::ValueEnum;

use crate::exec::{OutputMode, Printer};
use crate::export;
use crate::protocol::{Decision, Event};
use crate::session::{Loaded, Record, store};
use crate::terminal_text;
use crate::terminal_text::preview_line;
use crate::tokens::{Encoding, TokenCounter};

/// What `sessions export` writes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum ExportFormat {
    /// The conversation as markdown, tool calls and results folded in `<details>`.
    Md,
    /// The history the model saw, as JSON.
    Json,
}

/// `sessions list`: every session, newest first, one line each with the id first, under
/// a header. Sessions that never got a reply are left out (and counted on stderr) unless
/// `all`, which shows them marked.
pub fn list(all: bool, env: &Env) -> i32 {
    let Some(dir) = sessions_dir(env) else {
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
    let (shown, hidden): (Vec<_>, Vec<_>) = sessions
        .into_iter()
        .partition(|session| all || !session.no_reply());
    if !shown.is_empty() {
        let lines = export::list_lines(&shown);
        write_stdout(&(lines.join("\n") + "\n"));
    }
    match hidden.len() {
        0 => {}
        1 => terminal_text::eprintln("1 session with no reply is not listed; `sessions list --all` shows it"),
        n => terminal_text::eprintln(&format!(
            "{n} sessions with no reply are not listed; `sessions list --all` shows them"
        )),
    }
    0
}

/// `sessions rm ID`: removes one recorded session and says what it was; one that a
/// running miniagent has open is refused.
pub fn remove(id: &str, env: &Env) -> i32 {
    let dir = sessions_dir(env);
    let path = match store::resolve(dir.as_deref(), id) {
        Ok(path) => path,
        Err(why) => return fail(&why),
    };
    // Only sessions of the sessions folder: `rm` is not a way to delete any file.
    if !store::is_own_log(dir.as_deref(), &path) {
        return fail(format!(
            "{} is not one of your recorded sessions; only those are removed",
            path.display()
        ));
    }
    let info = match store::info(&path) {
        Ok(info) => info,
        Err(why) => return fail(&why),
    };
    match store::remove(&path) {
        Ok(_) => {
            write_stdout(&format!(
                "removed session {} ({})\n",
                info.id,
                export::session_summary(&info)
            ));
            0
        }
        Err(store::RemoveError::InUse) => fail(format!(
            "session {} is in use by a running miniagent; it was not removed",
            info.id
        )),
        Err(store::RemoveError::Failed(why)) => fail(&why),
    }
}

/// `sessions prune --older-than DURATION`: removes the sessions last used longer ago than
/// that. It lists them first, and removes them only once the person says yes (`--yes`,
/// or `y` at the question on a terminal); `--dry-run` only lists. Sessions in use stay.
pub fn prune(older_than: &str, yes: bool, dry_run: bool, env: &Env) -> i32 {
    let age = match parse_duration(older_than) {
        Ok(age) => age,
        Err(why) => return fail(&why),
    };
    let Some(dir) = sessions_dir(env) else {
        return fail("no data folder on this machine holds sessions; set MINIAGENT_DATA_DIR");
    };
    let sessions = store::list(&dir);
    let now = std::time::SystemTime::now();
    let (old, recent): (Vec<_>, Vec<_>) = sessions.into_iter().partition(|session| {
        std::fs::metadata(&session.path)
            .and_then(|meta| meta.modified())
            .ok()
            .and_then(|used| now.duration_since(used).ok())
            .is_some_and(|since| since > age)
    });
    if old.is_empty() {
        write_stdout(&format!("no session was last used more than {older_than} ago\n"));
        return 0;
    }
    let listing: String = old
        .iter()
        .map(|session| format!("  {} ({})\n", session.id, export::session_summary(session)))
        .collect();
    let count = sessions_count(old.len());
    if dry_run {
        write_stdout(&format!("{listing}{count} would be removed\n"));
        return 0;
    }
    if !yes {
        if !std::io::stdin().is_terminal() {
            write_stdout(&listing);
            return fail(format!(
                "{count} last used more than {older_than} ago; add --yes to remove them without being asked"
            ));
        }
        write_stdout(&listing);
        terminal_text::eprint(&format!("Remove these {count}? [y/N] "));
        let mut answer = String::new();
        let _ = std::io::stdin().read_line(&mut answer);
        if !matches!(answer.trim().to_ascii_lowercase().as_str(), "y" | "yes") {
            write_stdout("nothing was removed\n");
            return 0;
        }
    }
    let mut removed = 0;
    let mut failed = false;
    for session in &old {
        match store::remove(&session.path) {
            Ok(_) => {
                removed += 1;
                write_stdout(&format!(
                    "removed session {} ({})\n",
                    session.id,
                    export::session_summary(session)
                ));
            }
            Err(store::RemoveError::InUse) => terminal_text::eprintln(&format!(
                "session {} is in use by a running miniagent; it was kept",
                session.id
            )),
            Err(store::RemoveError::Failed(why)) => {
                failed = true;
                terminal_text::eprintln(&format!("miniagent: {why}"));
            }
        }
    }
    let kept = recent.len() + old.len() - removed;
    write_stdout(&format!("removed {}; {kept} kept\n", sessions_count(removed)));
    i32::from(failed)
}

/// `1 session`, `3 sessions`.
fn sessions_count(n: usize) -> String {
    if n == 1 {
        "1 session".to_string()
    } else {
        format!("{n} sessions")
    }
}

/// `30d`, `12h`, `90m`, `45s`, `2w` as a duration.
fn parse_duration(text: &str) -> Result<std::time::Duration, String> {
    let invalid = || format!("`{text}` is not a duration: use a number and a unit, such as 30d, 12h or 90m");
    let text = text.trim();
    let split = text.find(|c: char| !c.is_ascii_digit()).ok_or_else(invalid)?;
    let (number, unit) = text.split_at(split);
    let number: u64 = number.parse().map_err(|_| invalid())?;
    let seconds = match unit {
        "s" => 1,
        "m" | "min" => 60,
        "h" => 3_600,
        "d" => 86_400,
        "w" => 7 * 86_400,
        _ => return Err(invalid()),
    };
    Ok(std::time::Duration::from_secs(number.saturating_mul(seconds)))
}

/// `sessions show ID`: the session's details and its conversation.
pub fn show(id: &str, env: &Env) -> i32 {
    match open(id, env) {
        Ok((path, loaded)) => {
            write_stdout(&export::show(&loaded, &path));
            0
        }
        Err(why) => fail(&why),
    }
}

/// `sessions export ID --format md|json`, on stdout.
pub fn export(id: &str, format: ExportFormat, env: &Env) -> i32 {
    let loaded = match open(id, env) {
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
pub fn replay_headless(file: &str, env: &Env) -> i32 {
    let loaded = match open(file, env) {
        Ok((_, loaded)) => loaded,
        Err(why) => return fail(&why),
    };
    warn(&loaded);
    let no_color = env.var("NO_COLOR").is_some_and(|v| !v.is_empty());
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
    // Shown on its own, short, so that nothing in it can hide the rest of the line.
    let name = crate::exec::call_name(name);
    match decision {
        Decision::Approve => format!("approved `{name}`"),
        Decision::ApproveForSession => format!("approved `{name}` for the rest of the session"),
        Decision::Deny { reason: Some(reason) } => format!(
            "refused `{name}`: {}",
            preview_line(&terminal_text::clean(reason), 100)
        ),
        Decision::Deny { reason: None } => format!("refused `{name}`"),
        Decision::Abort => format!("refused `{name}` and ended the turn"),
        Decision::Refuse { reason } => format!(
            "refused `{name}`: {}",
            preview_line(&terminal_text::clean(reason), 100)
        ),
    }
}

/// The sessions folder the environment names.
fn sessions_dir(env: &Env) -> Option<PathBuf> {
    store::sessions_dir(env)
}

/// The log `id` names (an id, a unique prefix, or a file), read.
fn open(id: &str, env: &Env) -> anyhow::Result<(PathBuf, Loaded)> {
    let path = locate(id, env)?;
    let loaded = crate::session::load(&path)?;
    Ok((path, loaded))
}

fn locate(id: &str, env: &Env) -> anyhow::Result<PathBuf> {
    let as_path = Path::new(id);
    if as_path.is_file() {
        return Ok(as_path.to_path_buf());
    }
    if id.ends_with(".jsonl") || id.contains(std::path::MAIN_SEPARATOR) {
        anyhow::bail!("no session log at {id}");
    }
    let dir = sessions_dir(env);
    Ok(store::resolve(dir.as_deref(), id)?)
}

fn warn(loaded: &Loaded) {
    for warning in &loaded.warnings {
        terminal_text::eprintln(&format!("miniagent: warning: {warning}"));
    }
}

fn fail(why: impl std::fmt::Display) -> i32 {
    terminal_text::eprintln(&format!("miniagent: {why}"));
    1
}

/// Writes human-readable text to stdout, cleaned; a reader that went away (`| head`) is
/// not an error.
fn write_stdout(text: &str) {
    terminal_text::print(text);
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn durations_read_with_their_unit() {
        assert_eq!(parse_duration("30d"), Ok(Duration::from_secs(30 * 86_400)));
        assert_eq!(parse_duration("12h"), Ok(Duration::from_secs(12 * 3_600)));
        assert_eq!(parse_duration("90m"), Ok(Duration::from_secs(90 * 60)));
        assert_eq!(parse_duration("2w"), Ok(Duration::from_secs(14 * 86_400)));
        for bad in ["", "30", "d", "soon", "3.5d", "-1d", "10y"] {
            assert!(parse_duration(bad).is_err(), "{bad}");
        }
    }
}
