//! Reading a session log back: the records that parse, warnings for those that do not,
//! and the session state they rebuild.

use std::collections::BTreeMap;
use std::path::Path;

use super::{FORMAT, Header, Record, SessionError};
use crate::tools::output::{FINISHED_OUTPUT_BYTES, HeadTailBuffer};
use crate::tools::paths::{Access, Workspace};
use miniagent_protocol::message::{ContentBlock, Message, Role};
use miniagent_protocol::{Event, ToolOutcome};

/// The result text a call gets when the session ended while it ran.
pub const ENDED_WHILE_RUNNING: &str = "interrupted: miniagent stopped while this call was running";
/// Said of an open call whose effect cannot be seen from here.
const OUTCOME_UNKNOWN: &str =
    "interrupted: miniagent stopped while this call was running; its outcome is unknown";
/// Said of an open write or edit whose text the file now holds.
const WRITE_LANDED: &str = "interrupted: miniagent stopped while this call was running, but the file now holds what it was to write: the change completed before the interruption";
/// Said of an open write or edit whose text the file does not hold.
const WRITE_MISSING: &str = "interrupted: miniagent stopped while this call was running, and the file does not hold what it was to write: the change may not have completed";
/// Files larger than this are not read to judge an interrupted write (it was cut anyway).
const JUDGE_FILE_BYTES: u64 = 64 << 20;

/// A session log as read from disk.
#[derive(Clone, Debug)]
pub struct Loaded {
    pub header: Header,
    /// Every record after the header that parsed, in order.
    pub records: Vec<Record>,
    /// What was wrong with the file (a cut last line, a damaged line); empty when sound.
    pub warnings: Vec<String>,
    /// Bytes of the file that hold good records; anything after is damaged.
    pub valid_bytes: u64,
    /// True when a damaged line had more lines after it (not just a half-written end).
    pub damaged_mid_file: bool,
    /// The file's size when it was read.
    pub file_bytes: u64,
}

/// Reads a session log. Damage after the header is a warning: the records before the
/// first bad line load. A file that is not a session log at all is an error.
pub fn load(path: &Path) -> Result<Loaded, SessionError> {
    let bytes = read(path)?;
    parse(&bytes, &path.display().to_string())
}

fn read(path: &Path) -> Result<Vec<u8>, SessionError> {
    std::fs::read(path).map_err(|err| SessionError::io("read", path, err))
}

/// The history's messages as the log at `path` last recorded them: only its `messages`,
/// `blocks`, `cleared` and `rewound` records are parsed (the inspector reads back what the agent let go of;
/// the events, most of a log's bytes, are skipped unread). Stops at a damaged line.
pub fn messages(path: &Path) -> Result<Vec<Message>, SessionError> {
    let bytes = read(path)?;
    // Records are written with their kind first.
    let wanted = [
        &b"{\"kind\":\"messages\""[..],
        b"{\"kind\":\"blocks\"",
        b"{\"kind\":\"cleared\"",
        b"{\"kind\":\"rewound\"",
    ];
    let mut history: Vec<Message> = Vec::new();
    for line in bytes.split(|&b| b == b'\n') {
        if !wanted.iter().any(|prefix| line.starts_with(prefix)) {
            continue;
        }
        let Ok(record) = serde_json::from_slice::<Record>(line) else {
            break;
        };
        match record {
            Record::Messages { from, messages, .. } => {
                history.truncate(from);
                history.extend(messages);
            }
            Record::Blocks {
                message,
                from,
                blocks,
                ..
            } => {
                if let Some(target) = history.get_mut(message) {
                    target.content.truncate(from);
                    target.content.extend(blocks);
                }
            }
            Record::Cleared { .. } => history.clear(),
            // What a rewind set aside is no longer the history's.
            Record::Rewound { to, .. } => history.truncate(to),
            _ => {}
        }
    }
    Ok(history)
}

/// What the log holds of one call: the result the model got, and what the call printed
/// (its start and end).
#[derive(Debug, Default)]
pub struct RecordedCall {
    pub result: Option<String>,
    pub output: Option<HeadTailBuffer>,
}

/// The result and the output of call `id`, read from the log at `path` (the last call
/// with that id).
pub fn tool_call(path: &Path, id: &str) -> Result<RecordedCall, SessionError> {
    fn finished(event: &Event, id: &str) -> Option<String> {
        match event {
            Event::ToolCallFinished { id: call, output, .. } if call == id => Some(output.clone()),
            Event::SubAgent { event, .. } => finished(event, id),
            _ => None,
        }
    }
    let bytes = read(path)?;
    // Only lines naming the call are parsed, newest first: a long session's log is
    // megabytes, and this runs when a person opens a call.
    let needle = format!("\"id\":{}", serde_json::to_string(id).unwrap_or_default());
    let finder = memchr::memmem::Finder::new(needle.as_bytes());
    let records = bytes
        .rsplit(|&b| b == b'\n')
        .filter(|line| finder.find(line).is_some())
        .filter_map(|line| serde_json::from_slice::<Record>(line).ok());
    let mut call = RecordedCall::default();
    for record in records {
        match &record {
            Record::Event { event, .. } if call.result.is_none() => call.result = finished(event, id),
            // Written just before its call's end; an older one belongs to an older call.
            Record::Output {
                id: of,
                head,
                tail,
                dropped,
                ..
            } if of == id && call.result.is_some() => {
                call.output = Some(HeadTailBuffer::from_parts(
                    FINISHED_OUTPUT_BYTES,
                    head,
                    tail,
                    *dropped,
                ));
                break;
            }
            Record::Event {
                event: Event::ToolCallStarted { id: started, .. },
                ..
            } if started == id && call.result.is_some() => break,
            _ => {}
        }
    }
    Ok(call)
}

/// A record with the argument summary a call request of an older log lacks, so every
/// front end finds one in the events it is given.
fn with_summaries(record: Record) -> Record {
    fn fill(event: &mut Event) {
        match event {
            Event::ToolCallRequested {
                arguments, summary, ..
            } if summary.is_empty() => {
                *summary = crate::tools::output::summarize_arguments(arguments);
            }
            Event::SubAgent { event, .. } => fill(event),
            _ => {}
        }
    }
    match record {
        Record::Event { ts, mut event } => {
            fill(&mut event);
            Record::Event { ts, event }
        }
        other => other,
    }
}

/// [`load`] for bytes already read; `name` names the file in messages.
pub fn parse(bytes: &[u8], name: &str) -> Result<Loaded, SessionError> {
    let mut offset = 0usize;
    let mut header: Option<Header> = None;
    let mut records = Vec::new();
    let mut warnings = Vec::new();
    let mut damaged_mid_file = false;
    let mut line_number = 0usize;
    while offset < bytes.len() {
        line_number += 1;
        let (line, next, complete) = match bytes[offset..].iter().position(|&b| b == b'\n') {
            Some(end) => (&bytes[offset..offset + end], offset + end + 1, true),
            None => (&bytes[offset..], bytes.len(), false),
        };
        if line.iter().all(u8::is_ascii_whitespace) {
            offset = next;
            continue;
        }
        let parsed = std::str::from_utf8(line)
            .map_err(|err| err.to_string())
            .and_then(|text| serde_json::from_str::<Record>(text).map_err(|err| err.to_string()));
        match (parsed, &header) {
            (Ok(Record::Header(found)), None) => {
                if found.format > FORMAT {
                    return Err(SessionError::Newer {
                        name: name.to_string(),
                        found: found.format,
                        reads: FORMAT,
                    });
                }
                header = Some(found);
            }
            (Ok(_) | Err(_), None) => {
                return Err(SessionError::NotALog {
                    name: name.to_string(),
                });
            }
            (Ok(Record::Header(_)), Some(_)) => {
                warnings.push(format!(
                    "line {line_number} of {name} is a second session header; it and everything after it were ignored"
                ));
                damaged_mid_file = true;
                break;
            }
            (Ok(record), Some(_)) => records.push(with_summaries(record)),
            (Err(why), Some(_)) => {
                if complete || next < bytes.len() {
                    damaged_mid_file = next < bytes.len();
                    warnings.push(format!(
                        "line {line_number} of {name} is not a session record ({why}); it and everything after it were ignored"
                    ));
                } else {
                    warnings.push(format!(
                        "the last line of {name} was cut short (miniagent stopped while writing it); it was ignored"
                    ));
                }
                break;
            }
        }
        offset = next;
    }
    let Some(header) = header else {
        return Err(SessionError::Empty {
            name: name.to_string(),
        });
    };
    Ok(Loaded {
        header,
        records,
        warnings,
        valid_bytes: offset as u64,
        damaged_mid_file,
        file_bytes: bytes.len() as u64,
    })
}

impl Loaded {
    /// The top-level events, in order (with their time stamps).
    pub fn events(&self) -> impl Iterator<Item = (u64, &Event)> {
        self.records.iter().filter_map(|record| match record {
            Record::Event { ts, event } => Some((*ts, event)),
            _ => None,
        })
    }

    /// Events that close what the log left open: calls that never finished and a turn
    /// that never ended (the process was killed). Front ends apply them after the log's
    /// own events; the agent emits them when it resumes, so they are recorded.
    pub fn closing_events(&self) -> Vec<Event> {
        let mut open: BTreeMap<String, (String, &serde_json::Value)> = BTreeMap::new();
        let mut order: Vec<String> = Vec::new();
        let mut turn_open = false;
        for (_, event) in self.events() {
            match event {
                Event::TurnStarted { .. } => turn_open = true,
                Event::TurnComplete { .. }
                | Event::TurnAborted { .. }
                | Event::StepLimitReached { .. }
                | Event::Error { .. }
                | Event::HistoryCleared => {
                    turn_open = false;
                    open.clear();
                    order.clear();
                }
                Event::ToolCallRequested {
                    id, name, arguments, ..
                } => {
                    open.insert(id.clone(), (name.clone(), arguments));
                    order.push(id.clone());
                }
                Event::ToolCallFinished { id, .. } => {
                    open.remove(id);
                }
                _ => {}
            }
        }
        let workspace = Workspace::new(Path::new(&self.header.workspace), &[]);
        let mut events: Vec<Event> = order
            .into_iter()
            .filter_map(|id| {
                let (name, arguments) = open.remove(&id)?;
                let verdict = open_call_verdict(&name, arguments, &workspace);
                Some(Event::ToolCallFinished {
                    id,
                    name,
                    ok: false,
                    outcome: ToolOutcome::Cancelled,
                    duration_ms: 0,
                    output_preview: verdict.to_string(),
                    output: verdict.to_string(),
                    effects: Vec::new(),
                })
            })
            .collect();
        if turn_open {
            events.push(Event::TurnAborted {
                reason: "miniagent stopped before this turn finished".to_string(),
            });
        }
        events
    }
}

/// What can truthfully be said of a call the log left open (miniagent was killed while it
/// ran, so its result was never recorded): for `write_file` and `edit_file`, whether the
/// file now holds what the call wrote (the write may have completed just before the
/// kill); for anything else, that its outcome is unknown.
pub fn open_call_verdict(name: &str, arguments: &serde_json::Value, workspace: &Workspace) -> &'static str {
    let text = |key: &str| arguments.get(key).and_then(serde_json::Value::as_str);
    let holds = match name {
        "write_file" => text("path").zip(text("content")).and_then(|(path, content)| {
            Some(file_now(workspace, path)?.is_some_and(|now| now == content.as_bytes()))
        }),
        "edit_file" => {
            text("path")
                .zip(text("old_str").zip(text("new_str")))
                .and_then(|(path, (old, new))| {
                    let Some(now) = file_now(workspace, path)? else {
                        return Some(false);
                    };
                    let contains = |needle: &str| memchr::memmem::find(&now, needle.as_bytes()).is_some();
                    // The new text is there, and the old one gone (unless the new one holds it).
                    Some(contains(new) && (new.contains(old) || !contains(old)))
                })
        }
        _ => return OUTCOME_UNKNOWN,
    };
    match holds {
        Some(true) => WRITE_LANDED,
        Some(false) => WRITE_MISSING,
        None => OUTCOME_UNKNOWN,
    }
}

/// The bytes of the file `path` names in the workspace, `Some(None)` when there is no
/// such file, `None` when that cannot be told (outside the workspace, not a regular
/// file, too large to compare, unreadable).
fn file_now(workspace: &Workspace, path: &str) -> Option<Option<Vec<u8>>> {
    let real = workspace.resolve(path, Access::Read).ok()?;
    // Not a FIFO or a device: reading one could block or never end.
    let metadata = match std::fs::metadata(&real) {
        Ok(metadata) => metadata,
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => return Some(None),
        Err(_) => return None,
    };
    if !metadata.is_file() || metadata.len() > JUDGE_FILE_BYTES {
        return None;
    }
    std::fs::read(&real).ok().map(Some)
}

/// The first user message's text, for lists.
pub fn first_prompt(messages: &[Message]) -> Option<String> {
    messages.iter().find(|m| m.role == Role::User).map(|m| {
        m.content
            .iter()
            .filter_map(|b| match b {
                ContentBlock::Text { text } => Some(text.as_str()),
                _ => None,
            })
            .collect()
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::agent::Restored;
    use crate::tokens::Encoding;
    use crate::tokens::TokenCounter;
    use miniagent_protocol::record::Change;
    use pretty_assertions::assert_eq;

    fn header_line() -> String {
        serde_json::to_string(&Record::Header(super::super::test_header())).expect("serializes")
    }

    fn line(record: &Record) -> String {
        serde_json::to_string(record).expect("serializes")
    }

    #[test]
    fn a_torn_last_line_is_ignored_with_one_warning() {
        let good = line(&Record::Event {
            ts: 1,
            event: Event::TurnStarted { text: "hi".into() },
        });
        let text = format!("{}\n{good}\n{}", header_line(), &good[..good.len() / 2]);
        let loaded = parse(text.as_bytes(), "s.jsonl").expect("loads");
        assert_eq!(loaded.records.len(), 1);
        assert_eq!(
            loaded.warnings,
            vec![
                "the last line of s.jsonl was cut short (miniagent stopped while writing it); it was ignored"
            ]
        );
        assert!(!loaded.damaged_mid_file);
        assert_eq!(loaded.valid_bytes as usize, text.len() - good.len() / 2);
    }

    #[test]
    fn garbage_in_the_middle_names_the_line_and_keeps_what_came_before() {
        let good = line(&Record::Cleared { ts: 1 });
        let text = format!("{}\n{good}\n{good}\nnot json\n{good}\n", header_line());
        let loaded = parse(text.as_bytes(), "s.jsonl").expect("loads");
        assert_eq!(loaded.records.len(), 2);
        assert_eq!(loaded.warnings.len(), 1);
        assert!(
            loaded.warnings[0].starts_with("line 4 of s.jsonl is not a session record"),
            "{:?}",
            loaded.warnings
        );
        assert!(loaded.damaged_mid_file);
    }

    #[test]
    fn a_call_request_of_an_older_log_gets_its_argument_summary() {
        // As logs before the summary field wrote them: the workbench shows the summary.
        let own = r#"{"kind":"event","ts":1,"event":{"type":"tool_call_requested","id":"c1","name":"bash","arguments":{"command":"make test\nmore"}}}"#;
        let nested = r#"{"kind":"event","ts":2,"event":{"type":"sub_agent","parent":"d1","agent":"a","event":{"type":"tool_call_requested","id":"c2","name":"read_file","arguments":{"path":"src/lib.rs"}}}}"#;
        let text = format!("{}\n{own}\n{nested}\n", header_line());
        let loaded = parse(text.as_bytes(), "s.jsonl").expect("loads");
        let summaries: Vec<&str> = loaded
            .events()
            .filter_map(|(_, event)| match event {
                Event::ToolCallRequested { summary, .. } => Some(summary.as_str()),
                Event::SubAgent { event, .. } => match event.as_ref() {
                    Event::ToolCallRequested { summary, .. } => Some(summary.as_str()),
                    _ => None,
                },
                _ => None,
            })
            .collect();
        assert_eq!(summaries, ["make test", "src/lib.rs"]);
    }

    #[test]
    fn other_files_are_refused() {
        assert!(parse(b"", "x").is_err());
        let err = parse(b"{\"a\":1}\n", "x").expect_err("refused");
        assert!(err.to_string().contains("not a miniagent session log"), "{err}");
    }

    #[test]
    fn restoring_applies_history_changes_in_order() {
        let user = Message::user("go");
        let reply = Message::assistant_text("done");
        let records = vec![
            Record::from_change(
                1,
                Change::Messages {
                    from: 0,
                    messages: vec![user.clone()],
                },
            ),
            Record::from_change(
                2,
                Change::Messages {
                    from: 1,
                    messages: vec![Message::assistant_text("do")],
                },
            ),
            Record::from_change(
                3,
                Change::Messages {
                    from: 1,
                    messages: vec![reply.clone()],
                },
            ),
            Record::from_change(
                4,
                Change::Masked {
                    results: 0,
                    trimmed: Vec::new(),
                },
            ),
        ];
        let mut restored = Restored::new(TokenCounter::new(Encoding::Cl100kBase));
        for record in &records {
            restored.apply(record);
        }
        assert_eq!(restored.context.messages(), &[user, reply]);
    }

    /// The log's latest approvals and refusals are what a resumed session starts with;
    /// a log from before refusals existed restores none.
    #[test]
    fn the_latest_approvals_and_refusals_are_restored() {
        use miniagent_protocol::{ApprovalRule, Event};
        let rm = ApprovalRule::Command { program: "rm".into() };
        let ls = ApprovalRule::Command { program: "ls".into() };
        let changed = |ts, line: &str| Record::Event {
            ts,
            event: serde_json::from_str::<Event>(line).unwrap(),
        };
        let records = [
            changed(
                1,
                r#"{"type":"approval_rules_changed","rules":[{"kind":"command","program":"rm"}]}"#,
            ),
            changed(
                2,
                r#"{"type":"approval_rules_changed","rules":[{"kind":"command","program":"ls"}],"refused":[{"kind":"command","program":"rm"}]}"#,
            ),
        ];
        let mut restored = Restored::new(TokenCounter::new(Encoding::Cl100kBase));
        restored.apply(&records[0]);
        assert_eq!(
            (restored.rules.clone(), restored.refused.clone()),
            (vec![rm.clone()], vec![])
        );
        restored.apply(&records[1]);
        assert_eq!((restored.rules, restored.refused), (vec![ls], vec![rm]));
    }
}
