//! Where session logs live and how they are found: one `<id>.jsonl` per session in the
//! data folder, with a small `<id>.info.json` beside it that lists read instead of the
//! whole log. An entry that is missing or older than its log is rebuilt from the log.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::{Header, Loaded, Record, SessionError};
use miniagent_protocol::Event;

/// The folder of session logs: `$MINIAGENT_DATA_DIR/sessions`, else the platform's data
/// folder (`~/.local/share/miniagent/sessions` on Linux).
pub fn sessions_dir(env: &crate::config::Env) -> Option<PathBuf> {
    if let Some(dir) = crate::config::named_data_dir(env) {
        return Some(dir.join("sessions"));
    }
    directories::ProjectDirs::from("", "", "miniagent").map(|dirs| dirs.data_dir().join("sessions"))
}

/// Whether `path` is one of this user's recorded sessions: a regular file (not a link)
/// directly in `dir`, the sessions folder, owned by this user. Only such a log's
/// remembered approvals are restored, and only it continues without being asked about:
/// a log from anywhere else (a repository, a download) may say anything.
pub fn is_own_log(dir: Option<&Path>, path: &Path) -> bool {
    use std::os::unix::fs::MetadataExt;
    let Some(dir) = dir.and_then(|dir| dir.canonicalize().ok()) else {
        return false;
    };
    let Ok(meta) = std::fs::symlink_metadata(path) else {
        return false;
    };
    let uid = effective_uid();
    let in_folder = path
        .parent()
        .and_then(|parent| parent.canonicalize().ok())
        .is_some_and(|parent| parent == dir);
    meta.file_type().is_file()
        && meta.uid() == uid
        && in_folder
        && path.extension().is_some_and(|ext| ext == "jsonl")
}

pub(crate) use crate::config::effective_uid;

/// What lists show of a session.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SessionInfo {
    pub id: String,
    #[serde(skip)]
    pub path: PathBuf,
    pub created: String,
    pub updated: String,
    pub workspace: String,
    pub model: String,
    pub provider: String,
    pub first_prompt: Option<String>,
    pub turns: u32,
    /// Model calls of the session's own turns (a sub-agent's are not counted).
    pub steps: u32,
    /// Tokens the provider reported, in and out, over the session.
    pub tokens: u64,
    /// What the session cost in US dollars, when its model's price was known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cost_usd: Option<f64>,
    /// Messages in the history.
    pub messages: usize,
    /// The log's size when this was written; a different size means it is out of date.
    pub bytes: u64,
}

impl SessionInfo {
    pub fn new(header: &Header, path: &Path) -> Self {
        Self {
            id: header.id.clone(),
            path: path.to_path_buf(),
            created: header.created.clone(),
            updated: header.created.clone(),
            workspace: header.workspace.clone(),
            model: header.model.clone(),
            provider: header.provider.clone(),
            first_prompt: None,
            turns: 0,
            steps: 0,
            tokens: 0,
            cost_usd: None,
            messages: 0,
            bytes: 0,
        }
    }

    /// The entry of a whole log.
    pub fn from_loaded(loaded: &Loaded, path: &Path) -> Self {
        let mut info = Self::new(&loaded.header, path);
        for record in &loaded.records {
            match record {
                Record::Event { event, .. } => info.observe(event),
                Record::Messages { from, messages, .. } => info.messages = from + messages.len(),
                Record::Cleared { .. } => info.messages = 0,
                Record::Rewound { to, .. } => info.messages = info.messages.min(*to),
                Record::Resumed { model, provider, .. } => {
                    info.model = model.clone();
                    info.provider = provider.clone();
                }
                Record::Header(_)
                | Record::Blocks { .. }
                | Record::Summary { .. }
                | Record::Masked { .. }
                | Record::Decision { .. }
                | Record::Output { .. }
                | Record::FileChanged { .. }
                | Record::CodeRestored { .. } => {}
            }
            if let Some(ts) = record.ts() {
                info.updated = crate::tools::files::iso8601(ts / 1000);
            }
        }
        info.bytes = loaded.valid_bytes;
        info
    }

    /// Counts what an event adds to the entry.
    pub fn observe(&mut self, event: &Event) {
        match event {
            Event::TurnStarted { text } => {
                self.turns += 1;
                if self.first_prompt.is_none() {
                    self.first_prompt = Some(text.clone());
                }
            }
            // A message taken back out of the session was not a turn.
            Event::PromptReturned { .. } => {
                self.turns = self.turns.saturating_sub(1);
                if self.turns == 0 {
                    self.first_prompt = None;
                }
            }
            Event::StepStarted { .. } => self.steps += 1,
            Event::TokenUsage {
                total_input_tokens,
                total_output_tokens,
                cost_usd,
                ..
            } => {
                // A hostile log's figures cannot overflow, nor show a cost that makes no sense.
                self.tokens = total_input_tokens.saturating_add(*total_output_tokens);
                self.cost_usd = miniagent_protocol::sane_cost(*cost_usd);
            }
            _ => {}
        }
    }

    /// Whether the session was recorded in `workspace` (a resolved path, as the header
    /// names it).
    pub fn recorded_in(&self, workspace: &Path) -> bool {
        self.workspace == workspace.display().to_string()
    }

    /// Whether the session has turns but nothing came back from the model: its history
    /// holds only what the person sent (a provider that could not be reached, say).
    pub fn no_reply(&self) -> bool {
        self.turns > 0 && self.messages <= self.turns as usize
    }

    /// The first prompt on one line, at most `width` characters.
    pub fn title(&self, width: usize) -> String {
        let text = miniagent_text::clean(self.first_prompt.as_deref().unwrap_or("(no prompt)"));
        let line: String = text.split_whitespace().collect::<Vec<_>>().join(" ");
        if line.chars().count() <= width {
            return line;
        }
        let mut cut: String = line.chars().take(width.saturating_sub(1)).collect();
        cut.push('…');
        cut
    }
}

fn info_path(log: &Path) -> PathBuf {
    log.with_extension("info.json")
}

/// Writes a session's entry beside its log (best effort: lists rebuild a missing one),
/// with `secrets` redacted.
pub fn write_info(info: &SessionInfo, secrets: &crate::secrets::Secrets) {
    if let Ok(text) = serde_json::to_string_pretty(info) {
        let path = info_path(&info.path);
        if crate::tools::files::write_atomic(&path, secrets.redact(&text).as_bytes()).is_ok() {
            // It names the first prompt and the workspace: the owner's alone, as the log.
            use std::os::unix::fs::PermissionsExt;
            let _ = std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600));
        }
    }
}

/// The entry of one log: its index entry when that is current, else read from the log.
pub fn info(log: &Path) -> Result<SessionInfo, SessionError> {
    let bytes = std::fs::metadata(log)
        .map_err(|err| SessionError::io("read", log, err))?
        .len();
    if let Ok(text) = std::fs::read(info_path(log))
        && let Ok(mut info) = serde_json::from_slice::<SessionInfo>(&text)
        && info.bytes == bytes
    {
        info.path = log.to_path_buf();
        return Ok(info);
    }
    let loaded = super::load(log)?;
    let info = SessionInfo::from_loaded(&loaded, log);
    // Only a sound log's entry is kept; a damaged one is read again next time.
    if loaded.warnings.is_empty() {
        write_info(&info, &crate::secrets::Secrets::default());
    }
    Ok(info)
}

/// Every session in `dir`, the most recently used first. Files that are not session logs are skipped.
pub fn list(dir: &Path) -> Vec<SessionInfo> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut sessions: Vec<SessionInfo> = entries
        .filter_map(Result::ok)
        .map(|entry| entry.path())
        .filter(|path| path.extension().is_some_and(|ext| ext == "jsonl"))
        .filter_map(|path| info(&path).ok())
        .collect();
    // Most recently used first: a resumed session is as new as its last turn.
    sessions.sort_by(|a, b| b.updated.cmp(&a.updated).then_with(|| b.id.cmp(&a.id)));
    sessions
}

/// The newest session recorded in `workspace`.
pub fn newest_for(dir: &Path, workspace: &Path) -> Option<SessionInfo> {
    list(dir).into_iter().find(|info| info.recorded_in(workspace))
}

/// A recorded session a store found by its id: what a face holds instead of a file
/// path. Only the store that made it knows where the session is kept.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RecordedSession {
    id: String,
    /// Where the local store keeps the log. A store kept elsewhere would give a local
    /// copy here, since the agent continues a session from a file ([`super::SessionLog`]).
    log: PathBuf,
}

impl RecordedSession {
    /// The session's id, as lists show it.
    pub fn id(&self) -> &str {
        &self.id
    }

    /// The log the agent continues.
    pub(crate) fn log(&self) -> &Path {
        &self.log
    }
}

/// Where recorded sessions are kept, as every face reaches them: listed, found by id,
/// read and removed. The sessions folder of this machine ([`LocalSessions`]) is the one
/// kept today; a store several servers share would be another.
pub trait SessionBackend: Send + Sync + std::fmt::Debug {
    /// The folder its logs are in on this machine, if it keeps them in one.
    fn folder(&self) -> Option<&Path>;
    /// Every session, newest first.
    fn list(&self) -> Vec<SessionInfo>;
    /// The session with exactly this id. Never a file named by the caller: a remote
    /// client's id must not reach a path.
    fn find(&self, id: &str) -> Result<RecordedSession, SessionError>;
    /// What lists show of it.
    fn info(&self, session: &RecordedSession) -> Result<SessionInfo, SessionError>;
    /// The whole log, read now.
    fn load(&self, session: &RecordedSession) -> Result<Loaded, SessionError>;
    /// Removes it; never one a running miniagent has open.
    fn remove(&self, session: &RecordedSession) -> Result<(), RemoveError>;
}

/// The sessions folder of this machine ([`sessions_dir`]).
#[derive(Clone, Debug)]
pub struct LocalSessions {
    dir: Option<PathBuf>,
}

impl LocalSessions {
    pub fn new(dir: Option<PathBuf>) -> Self {
        Self { dir }
    }
}

impl SessionBackend for LocalSessions {
    fn folder(&self) -> Option<&Path> {
        self.dir.as_deref()
    }

    fn list(&self) -> Vec<SessionInfo> {
        self.dir.as_deref().map(list).unwrap_or_default()
    }

    fn find(&self, id: &str) -> Result<RecordedSession, SessionError> {
        let dir = self.dir.as_deref().ok_or(SessionError::NoDataFolder)?;
        // Ids are what `new_id` makes: no separators, no leading dot, nothing to escape.
        let well_formed = !id.is_empty()
            && id.len() <= 64
            && !id.starts_with('.')
            && id
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_');
        if !well_formed {
            return Err(SessionError::BadId(
                miniagent_text::clean(id).chars().take(64).collect(),
            ));
        }
        let log = dir.join(format!("{id}.jsonl"));
        // Only this user's own logs: a link put in the folder leads nowhere.
        if !is_own_log(Some(dir), &log) {
            return Err(SessionError::NotFound {
                id: id.to_string(),
                dir: dir.to_path_buf(),
            });
        }
        Ok(RecordedSession {
            id: id.to_string(),
            log,
        })
    }

    fn info(&self, session: &RecordedSession) -> Result<SessionInfo, SessionError> {
        info(&session.log)
    }

    fn load(&self, session: &RecordedSession) -> Result<Loaded, SessionError> {
        super::load(&session.log)
    }

    fn remove(&self, session: &RecordedSession) -> Result<(), RemoveError> {
        remove(&session.log).map(|_| ())
    }
}

/// The log of session `id`: an exact id, a unique prefix of one, or a path to a file.
pub fn resolve(dir: Option<&Path>, id: &str) -> Result<PathBuf, SessionError> {
    let as_path = Path::new(id);
    if id.ends_with(".jsonl") && as_path.is_file() {
        return Ok(as_path.to_path_buf());
    }
    let Some(dir) = dir else {
        return Err(SessionError::NoDataFolder);
    };
    if id.is_empty() || id.contains(['/', '\\']) || id.starts_with('.') {
        return Err(SessionError::BadId(id.to_string()));
    }
    let exact = dir.join(format!("{id}.jsonl"));
    if exact.is_file() {
        return Ok(exact);
    }
    let matches: Vec<SessionInfo> = list(dir)
        .into_iter()
        .filter(|info| info.id.starts_with(id))
        .collect();
    match matches.as_slice() {
        [one] => Ok(one.path.clone()),
        [] => Err(SessionError::NotFound {
            id: id.to_string(),
            dir: dir.to_path_buf(),
        }),
        several => Err(SessionError::Ambiguous {
            id: id.to_string(),
            candidates: several.iter().map(|s| s.id.clone()).collect(),
        }),
    }
}

/// Why a session was not removed.
#[derive(Debug, PartialEq, Eq)]
pub enum RemoveError {
    /// A running miniagent holds the session's lock.
    InUse,
    Failed(String),
}

/// Removes a session: its log, its list entry and any damaged copies kept beside it.
/// Returns the files removed. The log's lock is taken first and held until the files are
/// gone, so a session a running miniagent has open is never removed, and none can open it
/// meanwhile.
pub fn remove(log: &Path) -> Result<Vec<PathBuf>, RemoveError> {
    use std::os::fd::AsRawFd;
    let file = std::fs::File::open(log)
        .map_err(|err| RemoveError::Failed(format!("cannot open {}: {err}", log.display())))?;
    // SAFETY: flock only reads the descriptor, which `file` keeps open for the call.
    if unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) } != 0 {
        let err = std::io::Error::last_os_error();
        return Err(if err.kind() == std::io::ErrorKind::WouldBlock {
            RemoveError::InUse
        } else {
            RemoveError::Failed(format!("cannot lock {}: {err}", log.display()))
        });
    }
    let mut removed = Vec::new();
    std::fs::remove_file(log)
        .map_err(|err| RemoveError::Failed(format!("cannot remove {}: {err}", log.display())))?;
    removed.push(log.to_path_buf());
    let entry = info_path(log);
    if std::fs::remove_file(&entry).is_ok() {
        removed.push(entry);
    }
    // `ID.jsonl.damaged-…`: what a repair cut off, kept beside the log.
    if let (Some(dir), Some(name)) = (log.parent(), log.file_name().and_then(|n| n.to_str())) {
        let prefix = format!("{name}.damaged-");
        if let Ok(entries) = std::fs::read_dir(dir) {
            for path in entries.filter_map(Result::ok).map(|entry| entry.path()) {
                let damaged = path
                    .file_name()
                    .and_then(|n| n.to_str())
                    .is_some_and(|n| n.starts_with(&prefix));
                if damaged && std::fs::remove_file(&path).is_ok() {
                    removed.push(path);
                }
            }
        }
    }
    // Its saved large results: `results/ID` beside the sessions folder.
    if let (Some(dir), Some(id)) = (log.parent(), log.file_stem()) {
        let results = dir.with_file_name("results").join(id);
        if results.is_dir() && std::fs::remove_dir_all(&results).is_ok() {
            removed.push(results);
        }
    }
    // What its checkpoints kept: `checkpoints/ID` beside the sessions folder.
    if let (Some(dir), Some(id)) = (log.parent(), log.file_stem()) {
        let kept = dir.with_file_name("checkpoints").join(id);
        if kept.is_dir() && std::fs::remove_dir_all(&kept).is_ok() {
            removed.push(kept);
        }
    }
    drop(file);
    Ok(removed)
}
