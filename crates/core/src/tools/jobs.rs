//! Background commands: `bash {run_in_background: true}` starts one, `bash_output` reads
//! what it printed since the last read, `bash_kill` stops it. A job is reported as ended
//! only after its output pipes closed, so its last lines are never lost. A job runs in
//! the same sandbox a foreground command would, and has its own process tag: when its
//! shell ends, everything it started ends too (daemons included), and nothing else.
//!
//! What a read returns is bounded (its head and tail); a job's whole output is also
//! saved as it comes, in the session's results folder, as the model reads output (line
//! by line, without escape sequences), so a read that could not show everything names
//! the file that has it.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use futures_util::future::BoxFuture;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::Value;
use tokio::io::{AsyncRead, AsyncReadExt};
use tokio::sync::watch;

use super::output::{HeadTailBuffer, cap_text};
use super::process::{ProcessGroup, force, kill_all, signal_group, spawn_in_group};
use super::sandbox::Confinement;
use super::spill::{PREVIEW_HEAD_BYTES, PREVIEW_TAIL_BYTES, SaveTarget, SpillWriter};
use super::{ToolContext, ToolEffect, ToolOutput};

/// How long `bash_kill` waits after TERM before it sends KILL.
const KILL_GRACE: Duration = Duration::from_secs(5);
/// How long to keep reading a job's pipes after its shell exited.
const DRAIN_AFTER_EXIT: Duration = Duration::from_millis(250);
/// How long to keep reading once everything of the job was killed.
const DRAIN_AFTER_KILL: Duration = Duration::from_secs(3);

/// Where a job stands.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum JobStatus {
    Running,
    Exited(i32),
    Killed(i32),
    Failed(String),
}

impl std::fmt::Display for JobStatus {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            JobStatus::Running => f.write_str("running"),
            JobStatus::Exited(code) => write!(f, "exited {code}"),
            JobStatus::Killed(signal) => write!(f, "killed (signal {signal})"),
            JobStatus::Failed(why) => write!(f, "failed: {why}"),
        }
    }
}

struct Job {
    group: ProcessGroup,
    /// Output not yet read by `bash_output`, bounded (head and tail kept).
    unread: Arc<Mutex<HeadTailBuffer>>,
    /// All of its output, on disk (when the session saves results).
    log: Arc<Mutex<Option<JobLog>>>,
    status: watch::Receiver<JobStatus>,
}

/// A job's whole output as the model reads it, saved as it comes: whole lines made what
/// a terminal would show ([`miniagent_text::for_model`]), up to the saved output's
/// limits ([`super::spill::MAX_SAVED_BYTES`] and its tail).
struct JobLog {
    /// `None` once the job ended and the file was closed.
    spill: Option<SpillWriter>,
    /// The line not finished yet.
    partial: Vec<u8>,
    /// The file, once made (and while it could be written).
    path: Option<std::path::PathBuf>,
}

/// The longest unfinished line kept back before it is written as it is.
const MAX_PARTIAL_LINE: usize = 64 << 10;

impl JobLog {
    fn new(target: SaveTarget) -> Self {
        // From the first byte: a read may drop any part of it.
        Self {
            spill: Some(SpillWriter::new(target, 0)),
            partial: Vec::new(),
            path: None,
        }
    }

    fn push(&mut self, bytes: &[u8]) {
        self.partial.extend_from_slice(bytes);
        let upto = match self.partial.iter().rposition(|byte| *byte == b'\n') {
            Some(newline) => newline + 1,
            None if self.partial.len() > MAX_PARTIAL_LINE => {
                // A line that never ends: written up to its last escape sequence's start
                // (a sequence cut in two would be cleaned as two halves), else at a
                // character's edge.
                match self.partial.iter().rposition(|byte| *byte == 0x1b) {
                    Some(escape) if escape > 0 => escape,
                    _ => match std::str::from_utf8(&self.partial) {
                        Ok(_) => self.partial.len(),
                        Err(err) => err.valid_up_to().max(1),
                    },
                }
            }
            None => return,
        };
        let run: Vec<u8> = self.partial.drain(..upto).collect();
        self.write(&run);
    }

    fn write(&mut self, run: &[u8]) {
        let Some(spill) = self.spill.as_mut() else { return };
        let text = String::from_utf8_lossy(run);
        spill.push(miniagent_text::for_model(&text).as_bytes());
        match spill.path() {
            None => self.path = None,
            Some(path) if self.path.is_none() => self.path = Some(path.to_path_buf()),
            Some(_) => {}
        }
    }

    fn path(&self) -> Option<std::path::PathBuf> {
        self.path.clone()
    }

    /// Writes what is left and closes the file.
    fn finish(&mut self) {
        let rest = std::mem::take(&mut self.partial);
        if !rest.is_empty() {
            self.write(&rest);
        }
        if let Some(spill) = self.spill.take()
            && spill.finish("").is_none()
        {
            self.path = None;
        }
    }
}

/// The background jobs of one session. Dropping it kills every job still running.
#[derive(Clone, Default)]
pub struct BackgroundJobs {
    state: Arc<Mutex<JobTable>>,
}

#[derive(Default)]
struct JobTable {
    next_id: u32,
    jobs: HashMap<String, Job>,
}

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    // Every critical section here is a push, a take or an insert: a panic cannot leave
    // the data half-changed, so a poisoned lock is still safe to use.
    mutex.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

impl BackgroundJobs {
    /// Starts `command` in the background, confined as `confinement` says; returns its id.
    pub fn start(
        &self,
        command: &str,
        workspace: &std::path::Path,
        output_limit: usize,
        confinement: &Confinement,
        env: &[(std::ffi::OsString, std::ffi::OsString)],
        save_to: Option<SaveTarget>,
    ) -> Result<String, String> {
        let (mut child, group) = spawn_in_group(command, workspace, confinement, env)?;
        let unread = Arc::new(Mutex::new(HeadTailBuffer::new(output_limit)));
        let log = Arc::new(Mutex::new(save_to.map(JobLog::new)));
        let (status_tx, status_rx) = watch::channel(JobStatus::Running);
        let stdout = tokio::spawn(pump(child.stdout.take(), Arc::clone(&unread), Arc::clone(&log)));
        let stderr = tokio::spawn(pump(child.stderr.take(), Arc::clone(&unread), Arc::clone(&log)));
        let finished_log = Arc::clone(&log);
        let (stdout_abort, stderr_abort) = (stdout.abort_handle(), stderr.abort_handle());
        let pgid = group.pgid();
        let tag = group.tag().to_string();
        let supervised = group.supervised();
        tokio::spawn(async move {
            let status = match child.wait().await {
                Ok(status) => {
                    use std::os::unix::process::ExitStatusExt;
                    match (status.code(), status.signal()) {
                        (Some(code), _) => JobStatus::Exited(code),
                        (None, Some(signal)) => JobStatus::Killed(signal),
                        (None, None) => JobStatus::Failed("ended without an exit code".to_string()),
                    }
                }
                Err(err) => JobStatus::Failed(err.to_string()),
            };
            // Everything the shell wrote is in the pipes; read it to the end before saying
            // the job ended. What the shell left running is killed: after the drain, or
            // at once when it holds the pipes.
            let drain = async {
                let _ = stdout.await;
                let _ = stderr.await;
            };
            tokio::pin!(drain);
            let drained = tokio::time::timeout(DRAIN_AFTER_EXIT, &mut drain).await.is_ok();
            // A supervisor ended everything of the job before it exited.
            if !supervised {
                let _ = tokio::task::spawn_blocking(move || kill_all(pgid, &tag)).await;
            }
            if !drained && tokio::time::timeout(DRAIN_AFTER_KILL, &mut drain).await.is_err() {
                // Only a process that cleared its environment can still hold them.
                stdout_abort.abort();
                stderr_abort.abort();
            }
            let _ = tokio::task::spawn_blocking(move || {
                if let Some(log) = lock(&finished_log).as_mut() {
                    log.finish();
                }
            })
            .await;
            let _ = status_tx.send(status);
        });
        let mut table = lock(&self.state);
        table.next_id += 1;
        let id = format!("bash_{}", table.next_id);
        table.jobs.insert(
            id.clone(),
            Job {
                group,
                unread,
                log,
                status: status_rx,
            },
        );
        Ok(id)
    }

    /// New output and the status of a job, and where its whole output is saved.
    fn read(&self, id: &str) -> Result<JobRead, String> {
        let table = lock(&self.state);
        let job = table.jobs.get(id).ok_or_else(|| unknown_job(id, &table))?;
        // Status first: if it says ended, all output is already in the buffer.
        let status = job.status.borrow().clone();
        let limit = lock(&job.unread).limit();
        let taken = std::mem::replace(&mut *lock(&job.unread), HeadTailBuffer::new(limit));
        let saved_in = lock(&job.log).as_ref().and_then(JobLog::path);
        Ok(JobRead {
            output: taken.text(),
            not_shown: taken.dropped(),
            status,
            saved_in,
        })
    }

    /// TERM, then KILL after the grace period; returns once the job ended.
    async fn kill(&self, id: &str, grace: Duration) -> Result<(), String> {
        let (mut status, pgid, supervised) = {
            let table = lock(&self.state);
            let job = table.jobs.get(id).ok_or_else(|| unknown_job(id, &table))?;
            (job.status.clone(), job.group.pgid(), job.group.supervised())
        };
        if *status.borrow() != JobStatus::Running {
            return Ok(());
        }
        signal_group(pgid, libc::SIGTERM);
        let ended = |s: &JobStatus| *s != JobStatus::Running;
        if tokio::time::timeout(grace, status.wait_for(ended)).await.is_err() {
            // Still running, so the group's leader is not reaped: its id is still its own.
            force(pgid, supervised);
            let _ = tokio::time::timeout(Duration::from_secs(2), status.wait_for(ended)).await;
        }
        if let Some(job) = lock(&self.state).jobs.get_mut(id) {
            job.group.disarm();
        }
        Ok(())
    }
}

impl Drop for JobTable {
    fn drop(&mut self) {
        // Jobs still running die with the session; ended ones must not be signalled, as
        // their group id may already belong to someone else.
        for job in self.jobs.values_mut() {
            if *job.status.borrow() != JobStatus::Running {
                job.group.disarm();
            }
        }
    }
}

fn unknown_job(id: &str, table: &JobTable) -> String {
    let mut ids: Vec<&str> = table.jobs.keys().map(String::as_str).collect();
    ids.sort_unstable();
    // A job of an earlier run of a resumed session ended with that run.
    if ids.is_empty() {
        format!("no background job `{id}`: none were started in this run (jobs end when miniagent exits)")
    } else {
        format!(
            "no background job `{id}` in this run: its jobs are {} (jobs end when miniagent exits)",
            ids.join(", ")
        )
    }
}

async fn pump<R: AsyncRead + Unpin>(
    pipe: Option<R>,
    unread: Arc<Mutex<HeadTailBuffer>>,
    log: Arc<Mutex<Option<JobLog>>>,
) {
    let Some(mut pipe) = pipe else { return };
    let mut chunk = vec![0u8; 16 * 1024];
    while let Ok(n) = pipe.read(&mut chunk).await {
        if n == 0 {
            break;
        }
        lock(&unread).push(&chunk[..n]);
        if let Some(log) = lock(&log).as_mut() {
            log.push(&chunk[..n]);
        }
    }
}

/// One read of a job: what it printed since the last read (bounded), how many bytes of
/// that were not kept, its status, and the file with all it printed.
struct JobRead {
    output: String,
    not_shown: u64,
    status: JobStatus,
    saved_in: Option<std::path::PathBuf>,
}

/// What `bash_output` and `bash_kill` return. A read that fits (`limit` bytes, and
/// `large` when results are saved) is returned whole. One that does not, of a job whose
/// output is saved, is a preview like every large result's: where everything is, then
/// the read's first and last kilobyte. Without a saved output it is cut to `limit`.
fn format_report(
    id: &str,
    read: &JobRead,
    filter: Option<&regex::Regex>,
    limit: usize,
    large: usize,
) -> String {
    let text = match filter {
        Some(filter) => read
            .output
            .lines()
            .filter(|line| filter.is_match(line))
            .collect::<Vec<_>>()
            .join("\n"),
        None => read.output.trim_end_matches('\n').to_string(),
    };
    let body = if text.is_empty() {
        "(no new output)".to_string()
    } else {
        text
    };
    let status = &read.status;
    let report = format!("[job {id}: {status}]\n{body}");
    let fits = match (&read.saved_in, large) {
        (Some(_), large) if large > 0 => report.len() <= limit.min(large),
        _ => report.len() <= limit,
    };
    if read.not_shown == 0 && fits {
        return report;
    }
    match &read.saved_in {
        Some(path) => {
            let shown = path.display().to_string();
            let note = format!(
                "[not all of this read is shown; everything the job printed is saved in {shown}: read it with read_file {{\"path\": {}, \"offset\": LINE, \"limit\": LINES}} or search it with bash: grep -n PATTERN {}]",
                Value::String(shown.clone()),
                super::command_rule::shell_word(&shown)
            );
            let preview = cap_text(&body, PREVIEW_HEAD_BYTES + PREVIEW_TAIL_BYTES);
            format!("[job {id}: {status}]\n{note}\n{preview}")
        }
        None => cap_text(
            &format!(
                "[job {id}: {status}]\n[not all of this read is shown: its middle was not kept]\n{body}"
            ),
            limit,
        ),
    }
}

/// The `bash_output` tool.
pub struct BashOutputTool {
    jobs: BackgroundJobs,
    limit: usize,
    /// `tools.large_result_bytes`: past it, a read of a saved job is a preview.
    large: usize,
}

impl BashOutputTool {
    pub fn new(jobs: BackgroundJobs, limit: usize, large: usize) -> Self {
        Self { jobs, limit, large }
    }
}

/// `bash_output`'s arguments.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct OutputArgs {
    /// The job id bash returned, e.g. bash_1.
    pub bash_id: String,
    /// Regular expression; only matching lines are returned.
    pub filter_str: Option<String>,
}

impl super::TypedTool for BashOutputTool {
    type Args = OutputArgs;

    fn name(&self) -> &str {
        "bash_output"
    }

    fn description(&self) -> &str {
        "Read what a background job (started by bash with run_in_background) printed since the \
         last read, and its status: running, exited N, or killed. filter_str keeps only lines \
         matching that regular expression."
    }

    fn effect(&self) -> ToolEffect {
        ToolEffect::ReadOnly
    }

    fn run(&self, args: OutputArgs, _context: ToolContext) -> BoxFuture<'_, ToolOutput> {
        Box::pin(async move {
            let id = args.bash_id.as_str();
            let filter = match args.filter_str.as_deref() {
                Some(pattern) => match regex::Regex::new(pattern) {
                    Ok(filter) => Some(filter),
                    Err(err) => {
                        return ToolOutput::error(format!(
                            "`filter_str` is not a valid regular expression: {err}"
                        ));
                    }
                },
                None => None,
            };
            match self.jobs.read(id) {
                Ok(read) => ToolOutput::ok(format_report(id, &read, filter.as_ref(), self.limit, self.large)),
                Err(message) => ToolOutput::error(message),
            }
        })
    }
}

/// The `bash_kill` tool.
pub struct BashKillTool {
    jobs: BackgroundJobs,
    limit: usize,
    large: usize,
}

impl BashKillTool {
    pub fn new(jobs: BackgroundJobs, limit: usize, large: usize) -> Self {
        Self { jobs, limit, large }
    }
}

/// `bash_kill`'s arguments.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct KillArgs {
    /// The job id bash returned, e.g. bash_1.
    pub bash_id: String,
}

impl super::TypedTool for BashKillTool {
    type Args = KillArgs;

    fn name(&self) -> &str {
        "bash_kill"
    }

    fn description(&self) -> &str {
        "Stop a background job and its children (TERM, then KILL after 5 s) and return the output \
         it printed since the last read."
    }

    fn effect(&self) -> ToolEffect {
        ToolEffect::RunsCommands
    }

    fn run(&self, args: KillArgs, _context: ToolContext) -> BoxFuture<'_, ToolOutput> {
        Box::pin(async move {
            let id = args.bash_id;
            if let Err(message) = self.jobs.kill(&id, KILL_GRACE).await {
                return ToolOutput::error(message);
            }
            match self.jobs.read(&id) {
                Ok(read) => ToolOutput::ok(format_report(&id, &read, None, self.limit, self.large)),
                Err(message) => ToolOutput::error(message),
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tools::OutputSink;
    use crate::tools::Tool;
    use crate::tools::paths::Workspace;
    use pretty_assertions::assert_eq;
    use serde_json::json;
    use tokio_util::sync::CancellationToken;

    fn context() -> ToolContext {
        ToolContext {
            workspace: Arc::new(Workspace::new(&std::env::temp_dir(), &[])),
            cancel: CancellationToken::new(),
            output: OutputSink::discard(),
            approval: crate::config::ApprovalMode::FullAuto,
            unasked: false,
            sub_agents: None,
            save_to: None,
        }
    }

    async fn wait_until_ended(jobs: &BackgroundJobs, id: &str) {
        let mut status = lock(&jobs.state).jobs[id].status.clone();
        let _ = tokio::time::timeout(
            Duration::from_secs(10),
            status.wait_for(|s| *s != JobStatus::Running),
        )
        .await;
    }

    /// Waits until the job's unread output is `expected` (without reading it), so a test
    /// waits on what the job did rather than on the clock.
    async fn wait_for_unread(jobs: &BackgroundJobs, id: &str, expected: &str) {
        let unread = Arc::clone(&lock(&jobs.state).jobs[id].unread);
        let deadline = std::time::Instant::now() + Duration::from_secs(30);
        while lock(&unread).text() != expected {
            assert!(
                std::time::Instant::now() < deadline,
                "the job printed {:?}, not {expected:?}",
                lock(&unread).text()
            );
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    }

    #[tokio::test]
    async fn output_is_read_incrementally_and_final_lines_survive() {
        let jobs = BackgroundJobs::default();
        // The job goes on only once the test made `go`: the first read sees "first" alone
        // however slowly either side runs.
        let gate = std::env::temp_dir().join(format!(
            "miniagent-job-gate-{}-{}",
            std::process::id(),
            fastrand::u64(..)
        ));
        let id = jobs
            .start(
                &format!(
                    "echo first; while [ ! -e '{}' ]; do sleep 0.01; done; \
                     for i in 1 2 3; do echo line $i; done",
                    gate.display()
                ),
                &std::env::temp_dir(),
                10_000,
                &Confinement::Unconfined,
                &[],
                None,
            )
            .unwrap();
        let tool = BashOutputTool::new(jobs.clone(), 10_000, 20_000);
        wait_for_unread(&jobs, &id, "first\n").await;
        let early = tool.run(json!({"bash_id": id}), context()).await;
        assert_eq!(early, ToolOutput::ok("[job bash_1: running]\nfirst"));
        std::fs::write(&gate, "").unwrap();
        wait_until_ended(&jobs, &id).await;
        let _ = std::fs::remove_file(&gate);
        let late = tool
            .run(json!({"bash_id": id, "filter_str": "line [13]"}), context())
            .await;
        assert_eq!(late, ToolOutput::ok("[job bash_1: exited 0]\nline 1\nline 3"));
        let again = tool.run(json!({"bash_id": "bash_1"}), context()).await;
        assert_eq!(again, ToolOutput::ok("[job bash_1: exited 0]\n(no new output)"));
        let bad = tool.run(json!({"bash_id": "bash_9"}), context()).await;
        assert_eq!(
            bad,
            ToolOutput::error(
                "no background job `bash_9` in this run: its jobs are bash_1 (jobs end when miniagent exits)"
            )
        );
        let regex = tool
            .run(json!({"bash_id": id, "filter_str": "("}), context())
            .await;
        assert!(
            regex
                .content
                .starts_with("`filter_str` is not a valid regular expression")
        );
    }

    #[tokio::test]
    async fn kill_stops_the_group_and_returns_the_rest() {
        let jobs = BackgroundJobs::default();
        let id = jobs
            .start(
                "trap '' TERM; echo stubborn; while true; do sleep 0.05; done",
                &std::env::temp_dir(),
                10_000,
                &Confinement::Unconfined,
                &[],
                None,
            )
            .unwrap();
        // "stubborn" comes after the trap: from then on TERM is ignored.
        wait_for_unread(&jobs, &id, "stubborn\n").await;
        let started = std::time::Instant::now();
        jobs.kill(&id, Duration::from_millis(300)).await.unwrap();
        let read = jobs.read(&id).unwrap();
        assert_eq!(read.output, "stubborn\n");
        assert_eq!(read.status, JobStatus::Killed(libc::SIGKILL));
        assert!(started.elapsed() < Duration::from_secs(3));
    }

    /// A job that prints more than a read keeps: the read says where everything is, and
    /// the file holds every line (as the model reads output: no escape sequences).
    #[tokio::test]
    async fn a_read_that_cannot_show_everything_names_the_saved_output() {
        let store = crate::tools::spill::ResultStore::new(
            std::env::temp_dir().join(format!("miniagent-job-log-{}", std::process::id())),
        );
        let jobs = BackgroundJobs::default();
        // A job started by call `call_id`, its output saved in `store`.
        let start = |command: &str, call_id: &str| {
            jobs.start(
                command,
                &std::env::temp_dir(),
                10_000,
                &Confinement::Unconfined,
                &[],
                Some(crate::tools::spill::SaveTarget {
                    store: store.clone(),
                    call_id: call_id.into(),
                }),
            )
            .unwrap()
        };
        let id = start(
            "printf '\\033[31mred\\033[0m\\n'; seq 1 50000; printf 'no newline at the end'",
            "toolu_job",
        );
        wait_until_ended(&jobs, &id).await;
        let tool = BashOutputTool::new(jobs.clone(), 10_000, 20_000);
        let read = tool.run(json!({"bash_id": id}), context()).await;
        let path = store.path_for("toolu_job", "");
        let shown = path.display().to_string();
        // A preview, as of any large result.
        assert!(read.content.len() < 3_000, "{}", read.content.len());
        assert!(
            read.content.starts_with(&format!(
                "[job bash_1: exited 0]\n[not all of this read is shown; everything the job printed is saved in {shown}: read it with read_file {{\"path\": \"{shown}\""
            )),
            "{}",
            &read.content[..300]
        );
        let saved = std::fs::read_to_string(&path).unwrap();
        let expected: String = (1..=50_000).map(|n| format!("{n}\n")).collect();
        assert_eq!(saved, format!("red\n{expected}no newline at the end"));
        // A line that never ends, full of escape sequences: saved without any piece of
        // one, however the pipe cut it.
        let id = start(
            "for i in $(seq 1 30000); do printf '\\033[31mX\\033[0m \\033]8;;http://e\\007L\\033]8;;\\007 '; done",
            "toolu_line",
        );
        wait_until_ended(&jobs, &id).await;
        let _ = tool.run(json!({"bash_id": id}), context()).await;
        let saved = std::fs::read_to_string(store.path_for("toolu_line", "")).unwrap();
        assert_eq!(saved, "X L ".repeat(30_000));
        // A small read says nothing of it.
        let again = tool.run(json!({"bash_id": "bash_1"}), context()).await;
        assert_eq!(again, ToolOutput::ok("[job bash_1: exited 0]\n(no new output)"));
        let _ = std::fs::remove_dir_all(store.dir());
    }
}
