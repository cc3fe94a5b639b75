//! The recorded sessions as a front end sees them (`miniagent sessions …`, `replay
//! --headless`): a folder of sessions to list, find and remove, and a log opened to show,
//! export or print again. Where the files are and how a log is read stay in the core.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use miniagent_protocol::{Decision, Event};

use crate::config::Env;
use crate::export;
use crate::session::store::{LocalSessions, SessionBackend};
use crate::session::{self, Loaded, Record, SessionError, store};
use crate::tokens::{Encoding, TokenCounter};

pub use crate::export::ExportError;
pub use crate::session::store::{RecordedSession, RemoveError};

/// The recorded sessions, wherever they are kept: every face lists, finds, reads and
/// removes them here (the sessions folder of this machine today).
#[derive(Clone, Debug)]
pub struct SessionStore {
    backend: Arc<dyn SessionBackend>,
}

/// Where a recorded session comes from, as its list entry says (the model and provider
/// it last ran with).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SessionOrigin {
    pub id: String,
    pub workspace: PathBuf,
    pub model: String,
    pub provider: String,
}

impl SessionStore {
    /// The folder `env` names (none when no data folder can be found on this machine).
    pub fn new(env: &Env) -> Self {
        Self {
            backend: Arc::new(LocalSessions::new(store::sessions_dir(env))),
        }
    }

    /// The folder, when there is one.
    pub fn folder(&self) -> Option<&Path> {
        self.backend.folder()
    }

    /// Every session in the folder, newest first.
    pub fn list(&self) -> Vec<SessionInfo> {
        self.backend.list()
    }

    /// The sessions recorded in `workspace` (its links resolved, as headers name it),
    /// newest first.
    pub fn list_in(&self, workspace: &Path) -> Vec<SessionInfo> {
        let workspace = workspace
            .canonicalize()
            .unwrap_or_else(|_| workspace.to_path_buf());
        let mut sessions = self.list();
        sessions.retain(|info| info.recorded_in(&workspace));
        sessions
    }

    /// The session with exactly this id, as a handle for the calls below: never a file
    /// the caller names, nor a prefix, so what a remote client sends reaches only the
    /// store's own sessions.
    pub fn find(&self, id: &str) -> Result<RecordedSession, SessionError> {
        self.backend.find(id)
    }

    /// The log `id` names for the `sessions` commands: an id, a unique prefix of one,
    /// or a `.jsonl` file.
    pub fn locate(&self, id: &str) -> Result<PathBuf, SessionError> {
        store::resolve(self.folder(), id)
    }

    /// What lists show of `session`.
    pub fn info(&self, session: &RecordedSession) -> Result<SessionInfo, SessionError> {
        self.backend.info(session)
    }

    /// Where `session` was recorded, and the model it last ran with.
    pub fn origin(&self, session: &RecordedSession) -> Result<SessionOrigin, SessionError> {
        let info = self.info(session)?;
        Ok(SessionOrigin {
            id: info.id,
            workspace: PathBuf::from(info.workspace),
            model: info.model,
            provider: info.provider,
        })
    }

    /// Removes `session` (its log, its list entry, what was kept beside it); never one a
    /// running miniagent has open.
    pub fn remove(&self, session: &RecordedSession) -> Result<(), RemoveError> {
        self.backend.remove(session)
    }

    /// The events `session` recorded, in order, as the agent told its front ends (for a
    /// client that replays the session or missed part of it). Calls the log left open
    /// stay open here: the session may still be running.
    pub fn events(&self, session: &RecordedSession) -> Result<Vec<Event>, SessionError> {
        let loaded = self.backend.load(session)?;
        Ok(loaded.events().map(|(_, event)| event.clone()).collect())
    }

    /// Whether `path` is one of this folder's logs (not a file from elsewhere).
    pub fn is_own(&self, path: &Path) -> bool {
        store::is_own_log(self.folder(), path)
    }

    /// Opens the log `id` names (a file, an id, or a unique prefix of one) and reads it.
    pub fn open(&self, id: &str) -> anyhow::Result<SessionLog> {
        let as_path = Path::new(id);
        let path = if as_path.is_file() {
            as_path.to_path_buf()
        } else if id.ends_with(".jsonl") || id.contains(std::path::MAIN_SEPARATOR) {
            anyhow::bail!("no session log at {id}");
        } else {
            self.locate(id)?
        };
        let loaded = session::load(&path)?;
        Ok(SessionLog { path, loaded })
    }
}

pub use crate::session::store::SessionInfo;

/// What the session list says of the session at `path`, read from its small info file.
pub fn session_info(path: &Path) -> Result<SessionInfo, SessionError> {
    store::info(path)
}

/// Removes a session (its log, its list entry, damaged copies beside it); never one a
/// running miniagent has open.
pub fn remove_session(path: &Path) -> Result<(), RemoveError> {
    store::remove(path).map(|_| ())
}

/// `sessions list`'s lines: a header, then one line per session, its id first.
pub fn session_lines(sessions: &[SessionInfo]) -> Vec<String> {
    export::list_lines(sessions)
}

/// A session in a few words (when, how long, the first prompt), for lines that name it.
pub fn session_summary(session: &SessionInfo) -> String {
    export::session_summary(session)
}

/// A recorded session, read whole.
pub struct SessionLog {
    path: PathBuf,
    loaded: Loaded,
}

/// One thing a log says happened, in order, for printing a session again.
#[derive(Debug, PartialEq)]
pub enum LogEntry<'a> {
    /// An event the agent told its front ends.
    Event(&'a Event),
    /// The person's answer to approval request `id`.
    Decision { id: &'a str, decision: &'a Decision },
    /// The conversation started over.
    Cleared,
}

impl SessionLog {
    /// What was wrong with parts of the log (read past, not fatal).
    pub fn warnings(&self) -> &[String] {
        &self.loaded.warnings
    }

    /// `sessions show`: the session's details and its conversation.
    pub fn show(&self) -> String {
        export::show(&self.loaded, &self.path)
    }

    /// The conversation as markdown, tool calls and results folded.
    pub fn markdown(&self) -> String {
        export::markdown(&self.loaded)
    }

    /// The history the model saw, as pretty JSON, still valid to send: a call the log
    /// left open gets a result.
    pub fn history_json(&self) -> Result<String, ExportError> {
        // Masked results' stubs quote a token count: count as the agent did (the default
        // tokenizer; the log does not say which one ran).
        let mut restored = self.loaded.restore(TokenCounter::new(Encoding::Cl100kBase));
        restored.close_open_calls();
        export::json(&self.loaded, &restored)
    }

    /// The events, decisions and new starts the log holds, in order.
    pub fn entries(&self) -> impl Iterator<Item = LogEntry<'_>> {
        self.loaded.records.iter().filter_map(|record| match record {
            Record::Event { event, .. } => Some(LogEntry::Event(event)),
            Record::Decision { id, decision, .. } => Some(LogEntry::Decision { id, decision }),
            Record::Cleared { .. } => Some(LogEntry::Cleared),
            Record::Header(_)
            | Record::Messages { .. }
            | Record::Blocks { .. }
            | Record::Summary { .. }
            | Record::Masked { .. }
            | Record::Output { .. }
            | Record::Resumed { .. }
            | Record::FileChanged { .. }
            | Record::CodeRestored { .. }
            // Its `rewound` event says it.
            | Record::Rewound { .. } => None,
        })
    }

    /// The events that close what the log left open (a session killed mid-turn).
    pub fn closing_events(&self) -> Vec<Event> {
        self.loaded.closing_events()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A log read for printing again gives its events, decisions and new starts in
    /// order, and nothing of the history records between them.
    #[test]
    fn a_log_gives_its_entries_in_order() {
        let dir = std::env::temp_dir().join(format!("miniagent-api-sessions-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("session.jsonl");
        std::fs::write(
            &path,
            r#"{"kind":"header","id":"20261122-040438-abcd","created":"2026-11-22T04:04:38Z","workspace":"/nowhere","model":"m","provider":"anthropic","version":"0.1.0","format":2,"fixed_tokens":100}
{"kind":"event","ts":1000,"event":{"type":"turn_started","text":"hello"}}
{"kind":"messages","ts":1000,"from":0,"messages":[{"role":"user","content":[{"type":"text","text":"hello"}]}]}
{"kind":"decision","ts":1100,"id":"c1","decision":{"decision":"approve"}}
{"kind":"cleared","ts":1200}
{"kind":"event","ts":1300,"event":{"type":"turn_complete","text":"hi"}}
"#,
        )
        .unwrap();
        let store = SessionStore {
            backend: Arc::new(LocalSessions::new(None)),
        };
        let log = store.open(path.to_str().unwrap()).unwrap();
        let started = Event::TurnStarted { text: "hello".into() };
        let complete = Event::TurnComplete { text: "hi".into() };
        assert_eq!(
            log.entries().collect::<Vec<_>>(),
            vec![
                LogEntry::Event(&started),
                LogEntry::Decision {
                    id: "c1",
                    decision: &Decision::Approve
                },
                LogEntry::Cleared,
                LogEntry::Event(&complete),
            ]
        );
        assert_eq!(log.warnings(), &[] as &[String]);
        // A file that is not there is said as a missing log, not looked up as an id.
        let missing = dir.join("gone.jsonl");
        assert_eq!(
            store
                .open(missing.to_str().unwrap())
                .err()
                .map(|err| err.to_string()),
            Some(format!("no session log at {}", missing.display()))
        );
        let _ = std::fs::remove_dir_all(&dir);
    }
}
