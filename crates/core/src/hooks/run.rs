//! Running one hook: `bash -c COMMAND` in the workspace, as the leader of its own process
//! group under the command supervisor (as `bash` runs commands, [`crate::tools::process`]),
//! with the event's JSON on its standard input, both outputs read up to a cap, and
//! stopped, with everything it started, at its timeout or when the person interrupts.
//!
//! Where it runs: a workspace's hook (trusted with the workspace) runs in the command
//! sandbox whatever the approval mode, as `bash` does in `ask` mode: trust let the
//! repository's hooks run, not reach past what the agent's own commands may. A user's
//! hook is the person's own command, written in their own config folder: it runs
//! unsandboxed, like an MCP server they configured. Either way its environment is the
//! agent's without the provider key variables; a workspace hook's is also without the
//! socket variables `tools.bash.pass_env` does not name.
//!
//! The supervisor gives a command `/dev/null` as its standard input (its own is the pipe
//! that stops it), so the input is written to a private file in the temp folder, which
//! the command's first line makes its standard input; the file goes when the hook ends.

use std::ffi::OsString;
use std::io::Write;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use tokio::io::AsyncReadExt;
use tokio_util::sync::CancellationToken;

use super::{Hook, HookSource};
use crate::config::{ApprovalMode, BashSettings};
use crate::tools::process::{SOCKET_VARS, command_env, kill_rest, spawn_in_group};
use crate::tools::sandbox::Confinement;

/// What of each of a hook's outputs is kept; the rest is read and dropped, so a hook
/// printing without end neither blocks on a full pipe nor grows memory.
const MAX_OUTPUT_BYTES: usize = 64 * 1024;
/// How long the pipes are read after the hook ended, for what a background child of it
/// still holds open.
const DRAIN: Duration = Duration::from_millis(500);
/// The variable naming the file that holds the hook's input.
const INPUT_VAR: &str = "MINIAGENT_HOOK_INPUT";

/// What every hook of a session runs with.
#[derive(Clone, Debug)]
pub struct HookEnv {
    /// Where hooks run (`cwd` in their input), and what a workspace hook's sandbox opens.
    pub workspace: PathBuf,
    /// The sandbox's settings and the socket variables passed (`tools.bash`).
    pub bash: BashSettings,
    /// The variables `model.api_key_env` and the profiles' name, never passed.
    pub key_vars: Vec<String>,
}

/// How a hook ended.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Ending {
    Code(i32),
    Signal(i32),
    TimedOut,
    /// The person interrupted; it was stopped.
    Cancelled,
    /// It could not be started: why.
    NotStarted(String),
}

/// A hook's run: how it ended and what it printed (capped, lossy UTF-8).
#[derive(Clone, Debug)]
pub struct Ran {
    pub ending: Ending,
    pub stdout: String,
    pub stderr: String,
}

impl Ran {
    fn not_started(why: String) -> Self {
        Self {
            ending: Ending::NotStarted(why),
            stdout: String::new(),
            stderr: String::new(),
        }
    }
}

/// The input file; removed when dropped.
struct InputFile(PathBuf);

impl InputFile {
    fn write(bytes: &[u8]) -> std::io::Result<Self> {
        use std::os::unix::fs::OpenOptionsExt;
        let path = std::env::temp_dir().join(format!(
            "miniagent-hook-{}-{:016x}.json",
            std::process::id(),
            fastrand::u64(..)
        ));
        let mut file = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(0o600)
            .open(&path)?;
        let file_guard = Self(path);
        file.write_all(bytes)?;
        Ok(file_guard)
    }
}

impl Drop for InputFile {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
    }
}

/// Runs `hook` with `input` on its standard input.
pub(super) async fn run(hook: &Hook, input: &[u8], env: &HookEnv, cancel: &CancellationToken) -> Ran {
    if cancel.is_cancelled() {
        return Ran {
            ending: Ending::Cancelled,
            stdout: String::new(),
            stderr: String::new(),
        };
    }
    let input_file = match InputFile::write(input) {
        Ok(file) => file,
        Err(err) => return Ran::not_started(format!("cannot write its input to the temp folder: {err}")),
    };
    let confinement = match hook.source {
        // Sandboxed as `bash` is in a mode that always sandboxes.
        HookSource::Workspace => match Confinement::for_command(&env.bash, ApprovalMode::Ask, &env.workspace)
        {
            Ok(confinement) => confinement,
            Err(why) => return Ran::not_started(why),
        },
        HookSource::User => Confinement::Unconfined,
    };
    let pass: Vec<String> = match hook.source {
        HookSource::Workspace => env.bash.pass_env.clone(),
        HookSource::User => SOCKET_VARS.iter().map(|name| name.to_string()).collect(),
    };
    let mut vars = command_env(std::env::vars_os(), &env.key_vars, &pass);
    vars.push((OsString::from(INPUT_VAR), input_file.0.clone().into_os_string()));
    vars.push((
        OsString::from("MINIAGENT_PROJECT_DIR"),
        env.workspace.clone().into_os_string(),
    ));
    // A failed redirection ends a non-interactive shell before the command runs. On the
    // command's first line, so the shell's messages number its lines as written.
    let script = format!("exec 0<\"${INPUT_VAR}\"; {}", hook.command);
    let (mut child, mut group) = match spawn_in_group(&script, &env.workspace, &confinement, &vars) {
        Ok(spawned) => spawned,
        Err(why) => return Ran::not_started(why),
    };
    let (stdout_kept, stderr_kept) = (Arc::default(), Arc::default());
    let stdout = tokio::spawn(read_capped(child.stdout.take(), Arc::clone(&stdout_kept)));
    let stderr = tokio::spawn(read_capped(child.stderr.take(), Arc::clone(&stderr_kept)));
    let ending = tokio::select! {
        status = child.wait() => match status {
            Ok(status) => {
                use std::os::unix::process::ExitStatusExt;
                group.exited();
                match (status.code(), status.signal()) {
                    (Some(code), _) => Ending::Code(code),
                    (None, Some(signal)) => Ending::Signal(signal),
                    (None, None) => Ending::Signal(0),
                }
            }
            Err(err) => Ending::NotStarted(format!("waiting for it failed: {err}")),
        },
        () = tokio::time::sleep(hook.timeout) => Ending::TimedOut,
        () = cancel.cancelled() => Ending::Cancelled,
    };
    if !matches!(ending, Ending::Code(_) | Ending::Signal(_)) {
        group.terminate();
    }
    let stdout = drained(stdout, &stdout_kept).await;
    let stderr = drained(stderr, &stderr_kept).await;
    kill_rest(group).await;
    drop(input_file);
    Ran {
        ending,
        stdout,
        stderr,
    }
}

/// What a reader kept, waiting at most [`DRAIN`] for a pipe a leftover child holds open.
async fn drained(reader: tokio::task::JoinHandle<()>, kept: &Kept) -> String {
    let abort = reader.abort_handle();
    if tokio::time::timeout(DRAIN, reader).await.is_err() {
        abort.abort();
    }
    let bytes = kept.lock().map(|bytes| bytes.clone()).unwrap_or_default();
    String::from_utf8_lossy(&bytes).into_owned()
}

/// What is kept of one output.
type Kept = Arc<std::sync::Mutex<Vec<u8>>>;

/// Reads `pipe` to its end, keeping the first [`MAX_OUTPUT_BYTES`] in `kept`.
async fn read_capped(pipe: Option<impl tokio::io::AsyncRead + Unpin>, kept: Kept) {
    let Some(mut pipe) = pipe else {
        return;
    };
    let mut chunk = vec![0u8; 8192];
    while let Ok(read) = pipe.read(&mut chunk).await {
        if read == 0 {
            break;
        }
        if let Ok(mut bytes) = kept.lock() {
            let room = MAX_OUTPUT_BYTES.saturating_sub(bytes.len());
            bytes.extend_from_slice(chunk.get(..read.min(room)).unwrap_or_default());
        }
    }
}
