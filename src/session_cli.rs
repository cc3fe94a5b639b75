//! `miniagent sessions list|show|export|rm|prune` and `miniagent replay --headless`: finding a
//! session's log, reading it, and writing what `export` renders. Every error is
//! one line on stderr and exit code 1. What a log holds came from the model and its tools:
//! text and markdown are cleaned for the terminal as they are written, JSON is escaped.

use std::collections::HashMap;
use std::io::{IsTerminal, Write};

use clap::ValueEnum;

use crate::exec::{OutputMode, Printer};
use miniagent_api::{
    Env, LogEntry, RemoveError, SessionLog, SessionStore, remove_session, session_info, session_lines,
    session_summary,
};
use miniagent_protocol::{Decision, Event};
use miniagent_text::{self as terminal_text, preview_line};

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
    let store = SessionStore::new(env);
    let Some(dir) = store.folder() else {
        return fail("no data folder on this machine holds sessions; set MINIAGENT_DATA_DIR");
    };
    let sessions = store.list();
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
        let lines = session_lines(&shown);
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
    let store = SessionStore::new(env);
    let path = match store.locate(id) {
        Ok(path) => path,
        Err(why) => return fail(&why),
    };
    // Only sessions of the sessions folder: `rm` is not a way to delete any file.
    if !store.is_own(&path) {
        return fail(format!(
            "{} is not one of your recorded sessions; only those are removed",
            path.display()
        ));
    }
    let info = match session_info(&path) {
        Ok(info) => info,
        Err(why) => return fail(&why),
    };
    match remove_session(&path) {
        Ok(()) => {
            write_stdout(&format!(
                "removed session {} ({})\n",
                info.id,
                session_summary(&info)
            ));
            0
        }
        Err(RemoveError::InUse) => fail(format!(
            "session {} is in use by a running miniagent; it was not removed",
            info.id
        )),
        Err(RemoveError::Failed(why)) => fail(&why),
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
    let store = SessionStore::new(env);
    if store.folder().is_none() {
        return fail("no data folder on this machine holds sessions; set MINIAGENT_DATA_DIR");
    }
    let sessions = store.list();
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
        .map(|session| format!("  {} ({})\n", session.id, session_summary(session)))
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
        match remove_session(&session.path) {
            Ok(()) => {
                removed += 1;
                write_stdout(&format!(
                    "removed session {} ({})\n",
                    session.id,
                    session_summary(session)
                ));
            }
            Err(RemoveError::InUse) => terminal_text::eprintln(&format!(
                "session {} is in use by a running miniagent; it was kept",
                session.id
            )),
            Err(RemoveError::Failed(why)) => {
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
    match SessionStore::new(env).open(id) {
        Ok(log) => {
            write_stdout(&log.show());
            0
        }
        Err(why) => fail(&why),
    }
}

/// `sessions export ID --format md|json`, on stdout.
pub fn export(id: &str, format: ExportFormat, env: &Env) -> i32 {
    let log = match SessionStore::new(env).open(id) {
        Ok(log) => log,
        Err(why) => return fail(&why),
    };
    warn(&log);
    let text = match format {
        ExportFormat::Md => log.markdown(),
        ExportFormat::Json => {
            match log.history_json() {
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
    let log = match SessionStore::new(env).open(file) {
        Ok(log) => log,
        Err(why) => return fail(&why),
    };
    warn(&log);
    let no_color = env.var("NO_COLOR").is_some_and(|v| !v.is_empty());
    let mut printer = Printer::new(OutputMode::Human {
        color: std::io::stderr().is_terminal() && !no_color,
    });
    let mut replay = HeadlessReplay::default();
    for entry in log.entries() {
        replay.entry(&mut printer, entry);
    }
    for event in log.closing_events() {
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
    fn entry(&mut self, printer: &mut Printer, entry: LogEntry<'_>) {
        match entry {
            LogEntry::Event(event) => self.event(printer, event),
            LogEntry::Decision { id, decision } => {
                let name = self.asked.remove(id).unwrap_or_else(|| id.to_string());
                printer.note(&decision_line(&name, decision));
            }
            LogEntry::Cleared => printer.note("── the conversation was started over ──"),
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
        Decision::ApproveAlways { rule } => format!(
            "approved `{name}` and saved the allow rule `{}`",
            preview_line(&terminal_text::clean(rule), 100)
        ),
        Decision::Deny { reason: Some(reason) } => format!(
            "refused `{name}`: {}",
            preview_line(&terminal_text::clean(reason), 100)
        ),
        Decision::Deny { reason: None } => format!("refused `{name}`"),
        Decision::DenyForSession { reason: Some(reason) } => format!(
            "refused `{name}` for the rest of the session: {}",
            preview_line(&terminal_text::clean(reason), 100)
        ),
        Decision::DenyForSession { reason: None } => {
            format!("refused `{name}` for the rest of the session")
        }
        Decision::Abort => format!("refused `{name}` and ended the turn"),
        Decision::Refuse { reason } => format!(
            "refused `{name}`: {}",
            preview_line(&terminal_text::clean(reason), 100)
        ),
    }
}

fn warn(log: &SessionLog) {
    for warning in log.warnings() {
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
