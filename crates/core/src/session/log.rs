//! The writer of a session log. Records are serialized as they happen into a buffer that
//! is appended to the file at each step boundary and approval decision, so a process that
//! is killed loses at most the step in flight. Known secrets never reach the file.
//!
//! The file is created when the first turn starts: opening the workbench and quitting
//! leaves no empty session behind.

use std::collections::HashMap;
use std::fs::{File, OpenOptions};
use std::io::Write;
use std::os::unix::fs::{DirBuilderExt, MetadataExt, OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard};

use super::store::{self, SessionInfo};
use super::{Header, Loaded, Record, SessionError, now_ms};
use crate::secrets::Secrets;
use crate::tools::output::{FINISHED_OUTPUT_BYTES, HeadTailBuffer};
use miniagent_protocol::record::Change;
use miniagent_protocol::{Decision, Event};

/// Streamed text arriving within this many milliseconds is recorded as one delta, so a
/// replay still streams but the log holds a line per moment rather than per token.
const DELTA_WINDOW_MS: u64 = 100;

/// A session's log; cheap to clone. A disabled log records nothing.
#[derive(Clone, Default)]
pub struct SessionLog(Option<Arc<Mutex<Writer>>>);

impl crate::tools::OutputRecorder for SessionLog {
    fn record(&self, event: &Event) {
        self.event(event);
    }
}

impl std::fmt::Debug for SessionLog {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.path() {
            Some(path) => write!(f, "SessionLog({})", path.display()),
            None => f.write_str("SessionLog(disabled)"),
        }
    }
}

/// A streamed fragment waiting to be joined with the next ones.
struct PendingDelta {
    ts: u64,
    thinking: bool,
    text: String,
}

struct Writer {
    dir: PathBuf,
    /// The sessions folder the log was created in; `dir` follows a resumed log, this
    /// does not.
    sessions_folder: PathBuf,
    header: Header,
    path: PathBuf,
    file: Option<File>,
    /// Serialized lines not yet in the file.
    buffer: Vec<u8>,
    pending_delta: Option<PendingDelta>,
    /// Values replaced by `[redacted]` in every line (API keys, header values).
    secrets: Secrets,
    /// False until the first turn: nothing is written before there is a conversation.
    started: bool,
    /// The first write error; after it the session is no longer recorded.
    failed: Option<String>,
    /// Told to the caller once.
    failure_reported: bool,
    /// A record could not be serialized, so the file is not the whole session.
    skipped_records: bool,
    /// What running calls printed so far (start and end).
    outputs: HashMap<String, HeadTailBuffer>,
    info: SessionInfo,
}

impl SessionLog {
    /// A log that records nothing (tests, or no data folder on this machine).
    pub fn disabled() -> Self {
        Self(None)
    }

    /// A new session in `dir` (created when the first turn starts).
    pub fn create(dir: &Path, mut header: Header, secrets: Secrets) -> Self {
        header.id = super::new_id(now_ms());
        let path = dir.join(format!("{}.jsonl", header.id));
        let info = SessionInfo::new(&header, &path);
        Self(Some(Arc::new(Mutex::new(Writer {
            dir: dir.to_path_buf(),
            sessions_folder: dir.to_path_buf(),
            header,
            path,
            file: None,
            buffer: Vec::new(),
            pending_delta: None,
            secrets,
            started: false,
            failed: None,
            failure_reported: false,
            skipped_records: false,
            outputs: HashMap::new(),
            info,
        }))))
    }

    fn writer(&self) -> Option<MutexGuard<'_, Writer>> {
        self.0
            .as_ref()
            .map(|writer| writer.lock().unwrap_or_else(|poisoned| poisoned.into_inner()))
    }

    /// The session's id, when it is recorded.
    pub fn id(&self) -> Option<String> {
        self.writer().map(|w| w.header.id.clone())
    }

    /// The folder of this user's session logs the session was started with, when it is
    /// recorded (a resumed log elsewhere does not change it).
    pub fn sessions_folder(&self) -> Option<PathBuf> {
        self.writer().map(|w| w.sessions_folder.clone())
    }

    /// The file, when the session is recorded (it exists once the first turn started).
    pub fn path(&self) -> Option<PathBuf> {
        self.writer().map(|w| w.path.clone())
    }

    /// Whether everything given to the log so far is in its file: it exists, and no
    /// write has failed.
    pub fn is_written(&self) -> bool {
        self.writer().is_some_and(|w| {
            w.file.is_some() && w.failed.is_none() && w.buffer.is_empty() && !w.skipped_records
        })
    }

    /// Tokens of the system prompt and tool schemas, for the header (known once the
    /// tokenizer has loaded, before anything is written).
    pub fn set_fixed_tokens(&self, tokens: u64) {
        if let Some(mut writer) = self.writer()
            && writer.file.is_none()
        {
            writer.header.fixed_tokens = tokens;
        }
    }

    /// Records an event the agent emitted.
    pub fn event(&self, event: &Event) {
        let Some(mut writer) = self.writer() else { return };
        let ts = now_ms();
        match event {
            Event::TextDelta { delta } => return writer.delta(ts, false, delta),
            Event::ThinkingDelta { delta } => return writer.delta(ts, true, delta),
            // Live output is gathered per call (its start and end) and written as one
            // `output` record when the call finishes.
            Event::ToolOutputDelta { id, delta } => {
                writer
                    .outputs
                    .entry(id.clone())
                    .or_insert_with(|| HeadTailBuffer::new(FINISHED_OUTPUT_BYTES))
                    .push(delta.as_bytes());
                return;
            }
            Event::ToolCallFinished { id, .. } => {
                if let Some(output) = writer.outputs.remove(id) {
                    let (head, tail, dropped) = output.parts();
                    writer.push(&Record::Output {
                        ts,
                        id: id.clone(),
                        head,
                        tail,
                        dropped,
                    });
                }
            }
            // Answers to a front end's question about files already on disk.
            Event::Notes { .. } | Event::RecordedCall { .. } => return,
            Event::TurnStarted { .. } => {
                writer.started = true;
                // Calls never outlive their turn; one that never said it finished (a
                // crash in the turn) leaves nothing behind.
                writer.outputs.clear();
            }
            _ => {}
        }
        writer.info.observe(event);
        writer.push(&Record::Event {
            ts,
            event: event.clone(),
        });
        // A call that starts or waits for a person is on disk before anything happens,
        // so a killed process leaves it visible (and resumable as interrupted).
        // A failure is told by the next commit's caller, which can emit a notice.
        if matches!(
            event,
            Event::ToolCallStarted { .. } | Event::ApprovalRequested { .. } | Event::StepStarted { .. }
        ) {
            writer.flush();
        }
    }

    /// Records history changes and writes everything buffered to the file. Returns a
    /// message the first time the log cannot be written.
    pub fn commit(&self, changes: Vec<Change>) -> Option<String> {
        let mut writer = self.writer()?;
        let ts = now_ms();
        for change in changes {
            if let Change::Messages { from, messages } = &change {
                writer.info.messages = from + messages.len();
            }
            if let Change::Rewound { to, .. } = &change {
                writer.info.messages = writer.info.messages.min(*to);
            }
            writer.push(&Record::from_change(ts, change));
        }
        writer.flush();
        writer.take_failure()
    }

    /// Records the person's answer to an approval request, and writes it out.
    pub fn decision(&self, id: &str, decision: &Decision) -> Option<String> {
        let mut writer = self.writer()?;
        writer.push(&Record::Decision {
            ts: now_ms(),
            id: id.to_string(),
            decision: decision.clone(),
        });
        writer.flush();
        writer.take_failure()
    }

    /// Records file changes a call made (checkpoints), and writes them out.
    pub fn file_changes(&self, changes: &[crate::checkpoint::Change]) -> Option<String> {
        let mut writer = self.writer()?;
        let ts = now_ms();
        for change in changes {
            writer.push(&Record::FileChanged {
                ts,
                change: change.clone(),
            });
        }
        writer.flush();
        writer.take_failure()
    }

    /// Records what a rewind wrote back, and writes it out.
    pub fn code_restored(&self, turn: u32, changes: &[crate::checkpoint::Change]) -> Option<String> {
        let mut writer = self.writer()?;
        writer.push(&Record::CodeRestored {
            ts: now_ms(),
            turn,
            changes: changes.to_vec(),
        });
        writer.flush();
        writer.take_failure()
    }

    /// Writes everything buffered and the session's index entry (at the end of a turn
    /// and when the session ends).
    pub fn checkpoint(&self) -> Option<String> {
        let mut writer = self.writer()?;
        writer.flush();
        writer.write_info();
        writer.take_failure()
    }

    /// Continues the recorded session `loaded` (from `path`) in this log: later records
    /// are appended to that file. A damaged end of the file is cut off first; what is
    /// cut, when it is more than a half-written last line, is kept beside the file.
    pub fn resume(
        &self,
        path: &Path,
        loaded: &Loaded,
        model: &str,
        provider: &str,
    ) -> Result<(), SessionError> {
        let Some(mut writer) = self.writer() else {
            return Ok(());
        };
        // Whatever this session had so far stays in its own file.
        writer.flush();
        if let Some(why) = writer.take_failure() {
            return Err(SessionError::Write(why));
        }
        writer.write_info();
        // A log from outside the sessions folder is not changed: the session goes on in
        // a copy there, which resumes by its id like any other.
        let adopted;
        let (path, loaded) = if store::is_own_log(Some(&writer.sessions_folder), path) {
            (path, loaded)
        } else {
            adopted = adopt(path, loaded, &writer.sessions_folder)?;
            (adopted.0.as_path(), &adopted.1)
        };
        let file = reopen(path, loaded)?;
        let dir = path
            .parent()
            .map_or_else(|| writer.dir.clone(), Path::to_path_buf);
        writer.dir = dir;
        writer.header = loaded.header.clone();
        writer.path = path.to_path_buf();
        writer.file = Some(file);
        writer.buffer.clear();
        writer.pending_delta = None;
        writer.started = true;
        writer.failed = None;
        writer.failure_reported = false;
        writer.skipped_records = false;
        writer.info = SessionInfo::from_loaded(loaded, path);
        writer.push(&Record::Resumed {
            ts: now_ms(),
            model: model.to_string(),
            provider: provider.to_string(),
            version: env!("CARGO_PKG_VERSION").to_string(),
        });
        writer.flush();
        match writer.take_failure() {
            Some(why) => Err(SessionError::Write(why)),
            None => Ok(()),
        }
    }
}

/// Copies the good records of a log from outside the sessions folder into it, under the
/// log's id when that is a plain name not taken there, else under a new one; returns the
/// copy and the copy as loaded.
fn adopt(path: &Path, loaded: &Loaded, folder: &Path) -> Result<(PathBuf, Loaded), SessionError> {
    let plain = |id: &str| {
        !id.is_empty()
            && id.len() <= 64
            && id
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
    };
    let mut header = loaded.header.clone();
    if !plain(&header.id) || folder.join(format!("{}.jsonl", header.id)).exists() {
        header.id = super::new_id(now_ms());
    }
    let copy = folder.join(format!("{}.jsonl", header.id));
    let bytes = std::fs::read(path).map_err(|err| SessionError::io("read", path, err))?;
    let valid = bytes
        .get(
            ..usize::try_from(loaded.valid_bytes)
                .unwrap_or(usize::MAX)
                .min(bytes.len()),
        )
        .unwrap_or_default();
    // The records after the header, as they are; the header names the copy's id.
    let body = match valid.iter().position(|b| *b == b'\n') {
        Some(end) => &valid[end + 1..],
        None => &[][..],
    };
    let mut text =
        serde_json::to_vec(&Record::Header(header)).map_err(|err| SessionError::Write(err.to_string()))?;
    text.push(b'\n');
    text.extend_from_slice(body);
    std::fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(folder)
        .map_err(|err| SessionError::io("create", folder, err))?;
    let mut file = OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(&copy)
        .map_err(|err| SessionError::io("create", &copy, err))?;
    file.write_all(&text)
        .map_err(|err| SessionError::io("write", &copy, err))?;
    drop(file);
    let copied = super::load(&copy)?;
    Ok((copy, copied))
}

/// Opens a recorded session's file for appending, cutting a damaged end off first.
fn reopen(path: &Path, loaded: &Loaded) -> Result<File, SessionError> {
    let file = OpenOptions::new()
        .append(true)
        .open(path)
        .map_err(|err| SessionError::io("open", path, err))?;
    lock(&file).map_err(|_| SessionError::InUse {
        id: loaded.header.id.clone(),
    })?;
    let length = file
        .metadata()
        .map_err(|err| SessionError::io("read", path, err))?
        .len();
    if length != loaded.file_bytes {
        return Err(SessionError::Changed {
            path: path.to_path_buf(),
        });
    }
    if length > loaded.valid_bytes {
        if loaded.damaged_mid_file {
            let kept = path.with_extension(format!("jsonl.damaged-{}", now_ms()));
            std::fs::copy(path, &kept)
                .map_err(|err| SessionError::io("keep a copy of the damaged", path, err))?;
        }
        file.set_len(loaded.valid_bytes)
            .map_err(|err| SessionError::io("repair", path, err))?;
    }
    Ok(file)
}

/// Takes the log's lock for as long as `file` is open, so two processes never append to
/// one session. Fails at once when another process holds it.
fn lock(file: &File) -> std::io::Result<()> {
    use std::os::fd::AsRawFd;
    // SAFETY: flock only reads the descriptor, which `file` keeps open for the call.
    let result = unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) };
    if result == 0 {
        Ok(())
    } else {
        Err(std::io::Error::last_os_error())
    }
}

impl Writer {
    fn delta(&mut self, ts: u64, thinking: bool, text: &str) {
        if let Some(pending) = &mut self.pending_delta
            && pending.thinking == thinking
            && ts.saturating_sub(pending.ts) < DELTA_WINDOW_MS
        {
            pending.text.push_str(text);
            return;
        }
        self.flush_delta();
        self.pending_delta = Some(PendingDelta {
            ts,
            thinking,
            text: text.to_string(),
        });
    }

    fn flush_delta(&mut self) {
        if let Some(pending) = self.pending_delta.take() {
            let event = if pending.thinking {
                Event::ThinkingDelta { delta: pending.text }
            } else {
                Event::TextDelta { delta: pending.text }
            };
            // The pending delta is taken, so this push writes it without recursing.
            self.push(&Record::Event {
                ts: pending.ts,
                event,
            });
        }
    }

    fn push(&mut self, record: &Record) {
        self.flush_delta();
        if self.failed.is_none() {
            match self.line(record) {
                Some(line) => self.buffer.extend_from_slice(line.as_bytes()),
                None => self.skipped_records = true,
            }
        }
    }

    /// A record as one line of the log, secrets redacted.
    fn line(&self, record: &Record) -> Option<String> {
        let line = serde_json::to_string(record).ok()?;
        let mut line = self.secrets.redact(&line).into_owned();
        line.push('\n');
        Some(line)
    }

    /// Appends the buffer to the file (creating it, header first, at the first turn).
    /// After a failure nothing more is written; [`Self::take_failure`] tells it once.
    fn flush(&mut self) {
        self.flush_delta();
        if !self.started || self.failed.is_some() {
            return;
        }
        if let Err(err) = self.write_buffer() {
            self.failed = Some(format!(
                "the session log {} cannot be written ({err}); the rest of this session is not recorded",
                self.path.display()
            ));
            self.buffer = Vec::new();
        }
    }

    /// The write failure, the first time it is asked for.
    fn take_failure(&mut self) -> Option<String> {
        if self.failure_reported {
            return None;
        }
        let failure = self.failed.clone()?;
        self.failure_reported = true;
        Some(failure)
    }

    fn write_buffer(&mut self) -> std::io::Result<()> {
        if self.file.is_none() {
            // A log holds the conversation, commands and their output: the owner's alone
            // (the folder too, when it is made here).
            std::fs::DirBuilder::new()
                .recursive(true)
                .mode(0o700)
                .create(&self.dir)?;
            // A folder an older version made readable by others is closed too, when it
            // is this user's.
            if let Ok(meta) = std::fs::metadata(&self.dir)
                && meta.uid() == store::effective_uid()
                && meta.mode() & 0o077 != 0
            {
                let _ = std::fs::set_permissions(&self.dir, std::fs::Permissions::from_mode(0o700));
            }
            let file = OpenOptions::new()
                .append(true)
                .create_new(true)
                .mode(0o600)
                .open(&self.path)?;
            lock(&file)?;
            if let Some(header) = self.line(&Record::Header(self.header.clone())) {
                self.buffer.splice(0..0, header.into_bytes());
            }
            self.file = Some(file);
        }
        if self.buffer.is_empty() {
            return Ok(());
        }
        if let Some(file) = self.file.as_mut() {
            // One write per flush: a kill can only tear the last line.
            file.write_all(&self.buffer)?;
        }
        self.buffer.clear();
        Ok(())
    }

    /// The index entry `sessions list` and the picker read, written beside the log.
    fn write_info(&mut self) {
        let Some(file) = self.file.as_ref() else { return };
        if let Ok(meta) = file.metadata() {
            self.info.bytes = meta.len();
        }
        self.info.updated = crate::tools::files::now_iso8601();
        store::write_info(&self.info, &self.secrets);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use miniagent_protocol::message::Message;
    use pretty_assertions::assert_eq;

    fn scratch(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("miniagent-log-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        dir
    }

    fn header() -> Header {
        crate::session::test_header()
    }

    #[test]
    fn nothing_is_written_before_the_first_turn_then_everything_is() {
        let dir = scratch("lazy");
        // A folder an older version left readable by others.
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::set_permissions(&dir, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
        let log = SessionLog::create(&dir, header(), Secrets::new(vec!["sk-secret-value".into()]));
        let path = log.path().expect("recorded");
        log.event(&Event::Notice {
            message: "hello sk-secret-value".into(),
        });
        assert_eq!(log.commit(Vec::new()), None);
        assert!(!path.exists(), "no file for a session without turns");

        log.event(&Event::TurnStarted { text: "go".into() });
        for piece in ["a", "b", "c"] {
            log.event(&Event::TextDelta { delta: piece.into() });
        }
        log.event(&Event::ThinkingDelta { delta: "hm".into() });
        let changes = vec![Change::Messages {
            from: 0,
            messages: vec![Message::user("go")],
        }];
        assert_eq!(log.commit(changes), None);
        let loaded = crate::session::load(&path).expect("loads");
        assert!(loaded.warnings.is_empty());
        assert_eq!(loaded.header.id, log.id().unwrap_or_default());
        let events: Vec<&Event> = loaded.events().map(|(_, e)| e).collect();
        assert_eq!(
            events,
            vec![
                &Event::Notice {
                    message: "hello [redacted]".into()
                },
                &Event::TurnStarted { text: "go".into() },
                &Event::TextDelta { delta: "abc".into() },
                &Event::ThinkingDelta { delta: "hm".into() },
            ],
            "deltas close together are one record; the secret is gone"
        );
        assert!(matches!(
            loaded.records.last(),
            Some(Record::Messages { from: 0, .. })
        ));
        // The conversation is the owner's alone.
        use std::os::unix::fs::PermissionsExt;
        let mode = |path: &Path| {
            std::fs::metadata(path)
                .map(|m| m.permissions().mode() & 0o777)
                .ok()
        };
        assert_eq!(mode(&path), Some(0o600));
        assert_eq!(mode(&dir), Some(0o700));
        // The index entry beside it, which names the first prompt, too.
        crate::session::store::info(&path).expect("an index entry");
        let infos: Vec<PathBuf> = std::fs::read_dir(&dir)
            .unwrap()
            .filter_map(|entry| entry.ok().map(|e| e.path()))
            .filter(|p| p.to_string_lossy().ends_with(".info.json"))
            .collect();
        assert!(!infos.is_empty(), "the index entry is written");
        for info in &infos {
            assert_eq!(mode(info), Some(0o600), "{}", info.display());
        }
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn a_calls_output_is_kept_as_its_start_and_end_and_read_back_with_its_result() {
        let dir = scratch("output");
        let log = SessionLog::create(&dir, header(), Secrets::new(vec!["sk-secret-value".into()]));
        let path = log.path().expect("recorded");
        assert!(!log.is_written(), "no file yet");
        log.event(&Event::TurnStarted { text: "go".into() });
        let finished = |id: &str, output: &str| Event::ToolCallFinished {
            id: id.into(),
            name: "bash".into(),
            ok: true,
            outcome: miniagent_protocol::ToolOutcome::Ok,
            duration_ms: 1,
            output_preview: output.into(),
            output: output.into(),
            effects: Vec::new(),
        };
        for id in ["c1", "c2"] {
            log.event(&Event::ToolCallStarted {
                id: id.into(),
                name: "bash".into(),
            });
        }
        log.event(&Event::ToolOutputDelta {
            id: "c1".into(),
            delta: format!("first sk-secret-value {}", "a".repeat(20_000)),
        });
        log.event(&Event::ToolOutputDelta {
            id: "c1".into(),
            delta: format!("{} last", "z".repeat(20_000)),
        });
        log.event(&finished("c1", "result one"));
        log.event(&finished("c2", "result two"));
        assert_eq!(log.commit(Vec::new()), None);
        assert!(log.is_written());

        let one = crate::session::load::tool_call(&path, "c1").expect("reads");
        assert_eq!(one.result.as_deref(), Some("result one"));
        let output = one.output.expect("c1 printed");
        let text = output.text();
        assert!(text.starts_with("first [redacted] aaa"), "{}", &text[..40]);
        assert!(text.ends_with("zzz last"));
        assert!(text.len() < FINISHED_OUTPUT_BYTES + 100);
        // The secret's redaction shortens the head by a few bytes.
        assert!(output.total_bytes() > 40_000, "{}", output.total_bytes());
        let two = crate::session::load::tool_call(&path, "c2").expect("reads");
        assert_eq!(two.result.as_deref(), Some("result two"));
        assert!(two.output.is_none(), "c2 printed nothing");
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn a_log_that_cannot_be_written_says_so_once() {
        let dir = scratch("unwritable");
        std::fs::write(&dir, "a file where the folder should be").expect("writes");
        let log = SessionLog::create(&dir, header(), Secrets::default());
        log.event(&Event::TurnStarted { text: "go".into() });
        let first = log.commit(Vec::new());
        assert!(first.is_some_and(|why| why.contains("cannot be written")));
        assert_eq!(log.commit(Vec::new()), None, "reported once");
        assert!(!log.is_written());
        let _ = std::fs::remove_file(&dir);
    }
}
