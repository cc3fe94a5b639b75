//! `bash {command, timeout?}`: runs a command with `bash -c` in the workspace, in its own
//! process group with no standard input, and kills the whole group on timeout or
//! interrupt so no child outlives the call. Commands run in the Landlock sandbox where it
//! applies ([`super::sandbox`]), under a supervisor that ends every process they leave
//! behind, and with the agent's environment minus API keys and socket variables
//! (`tools::process`).
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use futures_util::future::BoxFuture;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::Value;
use tokio::io::{AsyncRead, AsyncReadExt};

use super::jobs::BackgroundJobs;
use super::output::HeadTailBuffer;
use super::paths::Workspace;
use super::process::{command_env, kill_rest, spawn_in_group};
use super::sandbox::Confinement;
use super::spill::SpillWriter;
use super::{OutputSink, ToolContext, ToolEffect, ToolOutput};
use crate::config::BashSettings;
use miniagent_protocol::{ApprovalRequest, ApprovalRule};

/// How long to keep reading after the shell exited, for output still in the pipes.
const DRAIN_AFTER_EXIT: Duration = Duration::from_millis(250);
/// How long to keep reading once everything was killed: only a process that escaped the
/// group and the tag can hold the pipes open longer.
const DRAIN_AFTER_KILL: Duration = Duration::from_secs(3);
// Public here since before the process code had its own module.
pub use super::process::TAG_VAR;
/// The `bash` tool.
pub struct BashTool {
    settings: BashSettings,
    jobs: BackgroundJobs,
    /// The variable `model.api_key_env` names, kept from commands like the usual ones.
    key_vars: Vec<String>,
}

impl BashTool {
    pub fn new(settings: BashSettings, jobs: BackgroundJobs) -> Self {
        Self {
            settings,
            jobs,
            key_vars: Vec::new(),
        }
    }

    /// Also keeps `key_var` (an API key variable the config names: `[model]`'s or a
    /// profile's) from commands.
    pub fn hiding(mut self, key_var: &str) -> Self {
        let key_var = key_var.trim();
        if !key_var.is_empty() && !self.key_vars.iter().any(|known| known == key_var) {
            self.key_vars.push(key_var.to_string());
        }
        self
    }
}

/// `bash`'s arguments.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct BashArgs {
    /// The command line to run.
    pub command: String,
    /// Seconds before the command and its children are killed{limits}; not used in the background.
    #[serde(default, deserialize_with = "super::typed::whole_number")]
    #[schemars(range(min = 1))]
    pub timeout: Option<u64>,
    /// Start the command and return at once with a bash_id.
    pub run_in_background: Option<bool>,
}

/// Where `timeout`'s description says its default and maximum, which are settings.
const LIMITS: &str = "{limits}";

impl super::TypedTool for BashTool {
    type Args = BashArgs;

    fn name(&self) -> &str {
        "bash"
    }

    fn description(&self) -> &str {
        "Run a shell command with `bash -c` in the workspace and return its output and exit code. \
         The command has no terminal and no standard input. Both stdout and stderr are returned, \
         even when the command fails; long output keeps its beginning and end. Processes the \
         command leaves behind (with &, nohup or setsid) are stopped when it ends: set \
         run_in_background for servers and other long-running commands, then use bash_output \
         and bash_kill with the returned bash_id. In the sandbox, writes outside the workspace \
         and the temp dir are refused."
    }

    fn input_schema(&self) -> Value {
        let mut schema = super::typed::schema_of::<BashArgs>();
        if let Some(timeout) = schema
            .pointer_mut("/properties/timeout")
            .and_then(Value::as_object_mut)
        {
            timeout.insert("maximum".to_string(), self.settings.max_timeout_s.into());
            let limits = format!(
                " (default {}, max {})",
                self.settings.default_timeout_s, self.settings.max_timeout_s
            );
            if let Some(Value::String(description)) = timeout.get_mut("description") {
                *description = description.replace(LIMITS, &limits);
            }
        }
        schema
    }

    fn effect(&self) -> ToolEffect {
        ToolEffect::RunsCommands
    }

    fn command<'a>(&self, args: &'a BashArgs) -> Option<&'a str> {
        Some(&args.command)
    }

    fn approval_request<'a>(
        &'a self,
        args: &'a BashArgs,
        workspace: &'a Workspace,
    ) -> BoxFuture<'a, Result<Option<ApprovalRequest>, super::InvalidCall>> {
        Box::pin(async move {
            let command = &args.command;
            if command.trim().is_empty() {
                return Err(super::InvalidCall("`command` is empty".to_string()));
            }
            let argv = super::command_rule::argv(command).unwrap_or_default();
            Ok(Some(ApprovalRequest::Command {
                command: command.clone(),
                program: argv.first().cloned(),
                compound: !super::command_rule::is_simple(command),
                argv,
                cwd: workspace.root().display().to_string(),
                timeout_s: (!args.in_background()).then(|| self.timeout(args).as_secs()),
            }))
        })
    }

    /// The command line, which `bash(…)` permission rules are matched against.
    fn rule_subject(&self, args: &BashArgs) -> Option<String> {
        Some(args.command.clone())
    }

    fn session_rule(&self, args: &BashArgs) -> Option<ApprovalRule> {
        Some(super::command_rule::session_rule(&args.command))
    }

    fn repository_hazard<'a>(
        &'a self,
        args: &'a BashArgs,
        workspace: &'a Workspace,
        covered: bool,
    ) -> BoxFuture<'a, Option<String>> {
        Box::pin(self.git_hazard(&args.command, workspace, covered))
    }

    fn run(&self, args: BashArgs, context: ToolContext) -> BoxFuture<'_, ToolOutput> {
        Box::pin(async move {
            let command = args.command.as_str();
            if command.trim().is_empty() {
                return ToolOutput::error("`command` is empty");
            }
            let limit = self.settings.output_limit_bytes;
            let root = context.workspace.root();
            let confinement = match Confinement::for_command(&self.settings, context.approval, root) {
                Ok(confinement) => confinement,
                Err(message) => return ToolOutput::error(message),
            };
            let mut env = command_env(std::env::vars_os(), &self.key_vars, &self.settings.pass_env);
            if context.unasked {
                env = super::git_guard::overrides(command, root, &env).await;
            }
            if args.in_background() {
                let save_to = context.save_to.clone();
                return match self.jobs.start(command, root, limit, &confinement, &env, save_to) {
                    Ok(id) => ToolOutput::ok(format!(
                        "started background job {id}: {command}\nRead its output with bash_output {{\"bash_id\": \"{id}\"}}; stop it with bash_kill."
                    )),
                    Err(message) => ToolOutput::error(message),
                };
            }
            run_command(command, self.timeout(&args), &context, limit, &confinement, &env).await
        })
    }
}

impl BashArgs {
    fn in_background(&self) -> bool {
        self.run_in_background == Some(true)
    }
}

impl BashTool {
    fn timeout(&self, args: &BashArgs) -> Duration {
        let seconds = args
            .timeout
            .unwrap_or(self.settings.default_timeout_s)
            .clamp(1, self.settings.max_timeout_s);
        Duration::from_secs(seconds)
    }

    /// What the repository's git configuration would have `command` run
    /// ([`super::TypedTool::repository_hazard`]).
    async fn git_hazard(&self, command: &str, workspace: &Workspace, covered: bool) -> Option<String> {
        if !super::git_guard::names_git(command) {
            return None;
        }
        let env = command_env(std::env::vars_os(), &self.key_vars, &self.settings.pass_env);
        let options = match super::git_guard::reach(command) {
            super::git_guard::Reach::Checked(options) => options,
            super::git_guard::Reach::Unchecked(why) if covered => {
                return Some(format!(
                    "This command runs git {why}; miniagent cannot check what programs git would run there. A rule or a skill covers the command, but not that, so it needs your approval this time."
                ));
            }
            super::git_guard::Reach::Unchecked(why) => {
                // Asked anyway: what the workspace's own repository names is told too.
                let found = super::git_guard::hazards(command, workspace.root(), &env, &[], true).await;
                let named = match found {
                    Ok(found) if !found.is_empty() => format!(
                        " The repository's git configuration also names programs git would run for it: {}.",
                        found.join("; ")
                    ),
                    Ok(_) | Err(_) => String::new(),
                };
                return Some(format!(
                    "This command runs git {why}; miniagent cannot check what programs git would run there.{named}"
                ));
            }
        };
        let found = super::git_guard::hazards(command, workspace.root(), &env, &options, !covered).await;
        match (found, covered) {
            (Ok(found), _) if found.is_empty() => None,
            (Ok(found), true) => Some(format!(
                "This command runs git, and the repository's git configuration names programs git would run for it: {}. A rule or a skill covers the command, but not what the repository chose; it needs your approval this time.",
                found.join("; ")
            )),
            (Ok(found), false) => Some(format!(
                "This command runs git, and the repository's git configuration names programs git would run for it: {}. Approved, it runs them.",
                found.join("; ")
            )),
            (Err(why), true) => Some(format!(
                "This command runs git, and what programs the repository's git configuration names could not be checked ({why}); it needs your approval this time."
            )),
            (Err(why), false) => Some(format!(
                "This command runs git, and what programs the repository's git configuration names could not be checked ({why})."
            )),
        }
    }
}

enum Ending {
    Exited(std::process::ExitStatus),
    TimedOut,
    Interrupted,
}

/// Runs `command` in the foreground: its output streams to the front end and the model
/// gets what was kept of it, how it ended, and a hint when the sandbox refused something.
async fn run_command(
    command: &str,
    timeout: Duration,
    context: &ToolContext,
    limit: usize,
    confinement: &Confinement,
    env: &[(std::ffi::OsString, std::ffi::OsString)],
) -> ToolOutput {
    let (mut child, mut group) = match spawn_in_group(command, context.workspace.root(), confinement, env) {
        Ok(spawned) => spawned,
        Err(message) => return ToolOutput::error(message),
    };
    let started = Instant::now();
    let readers = Readers::start(&mut child, context, limit);
    let ending = tokio::select! {
        status = child.wait() => match status {
            Ok(status) => Ending::Exited(status),
            Err(err) => return ToolOutput::error(format!("waiting for bash failed: {err}")),
        },
        _ = tokio::time::sleep(timeout) => Ending::TimedOut,
        _ = context.cancel.cancelled() => Ending::Interrupted,
    };
    match ending {
        Ending::Exited(_) => group.exited(),
        Ending::TimedOut | Ending::Interrupted => group.terminate(),
    }
    let read = readers.drain(group).await;
    let (mut text, stdout_bytes) = read.text();
    let hint = confinement.denial_hint(&text, context.workspace.root());
    let elapsed = started.elapsed().as_secs_f64();
    let mut output = match ending {
        Ending::Exited(status) => exited(status, text),
        Ending::TimedOut => {
            text.push_str(&format!(
                "[timed out after {} s ({elapsed:.1} s elapsed); the command and its children were killed]",
                timeout.as_secs()
            ));
            ToolOutput::error(text)
        }
        Ending::Interrupted => {
            text.push_str("[interrupted by the user; the command and its children were killed]");
            ToolOutput::error(text)
        }
    };
    if let Some(hint) = hint {
        output.content.push('\n');
        output.content.push_str(&hint);
    }
    if let Some(spill) = read.spilled {
        output.saved = spill.finish(output.content.get(stdout_bytes..).unwrap_or_default());
    }
    output
}

/// The result of a command that ended by itself: `text` and its exit code or signal.
fn exited(status: std::process::ExitStatus, mut text: String) -> ToolOutput {
    use std::os::unix::process::ExitStatusExt;
    match (status.code(), status.signal()) {
        (Some(0), _) => {
            if text.is_empty() {
                text.push_str("(no output)\n");
            }
            text.push_str("[exit code: 0]");
            ToolOutput::ok(text)
        }
        (Some(code), _) => {
            text.push_str(&format!("[exit code: {code}]"));
            ToolOutput::error(text)
        }
        (None, Some(signal)) => {
            text.push_str(&format!("[killed by signal {signal}]"));
            ToolOutput::error(text)
        }
        (None, None) => {
            text.push_str("[ended without an exit code]");
            ToolOutput::error(text)
        }
    }
}

/// The tasks reading a command's stdout and stderr, and what they keep of each.
struct Readers {
    stdout: Arc<Mutex<HeadTailBuffer>>,
    stderr: Arc<Mutex<HeadTailBuffer>>,
    stdout_reader: tokio::task::JoinHandle<Option<SpillWriter>>,
    stderr_reader: tokio::task::JoinHandle<Option<SpillWriter>>,
}

/// What was read of a command once its pipes were drained.
struct Read {
    stdout: String,
    stderr: String,
    /// The whole stdout, saved past what memory keeps.
    spilled: Option<SpillWriter>,
    /// A process that escaped the group held the pipes open; reading stopped.
    escaped: bool,
}

impl Readers {
    /// Starts reading `child`'s pipes: stdout keeps up to `limit` bytes (and all of it in
    /// a file past that, where the session saves results), stderr a third of it.
    fn start(child: &mut tokio::process::Child, context: &ToolContext, limit: usize) -> Self {
        let stdout = Arc::new(Mutex::new(HeadTailBuffer::new(limit)));
        let stderr = Arc::new(Mutex::new(HeadTailBuffer::new(limit / 3)));
        let spill = context
            .save_to
            .clone()
            .map(|target| SpillWriter::new(target, limit));
        let stdout_reader = tokio::spawn(collect(
            child.stdout.take(),
            Arc::clone(&stdout),
            context.output.clone(),
            spill,
        ));
        let stderr_reader = tokio::spawn(collect(
            child.stderr.take(),
            Arc::clone(&stderr),
            context.output.clone(),
            None,
        ));
        Self {
            stdout,
            stderr,
            stdout_reader,
            stderr_reader,
        }
    }

    /// Keeps what is still in the pipes, but does not wait on background children that
    /// hold them open: after a short drain, everything left of the command is killed.
    async fn drain(self, group: super::process::ProcessGroup) -> Read {
        let (stdout_abort, stderr_abort) = (
            self.stdout_reader.abort_handle(),
            self.stderr_reader.abort_handle(),
        );
        let (stdout_reader, stderr_reader) = (self.stdout_reader, self.stderr_reader);
        let drain = async {
            let spilled = stdout_reader.await.ok().flatten();
            let _ = stderr_reader.await;
            spilled
        };
        tokio::pin!(drain);
        let mut escaped = false;
        let spilled = match tokio::time::timeout(DRAIN_AFTER_EXIT, &mut drain).await {
            Ok(spilled) => {
                kill_rest(group).await;
                spilled
            }
            Err(_) => {
                kill_rest(group).await;
                match tokio::time::timeout(DRAIN_AFTER_KILL, &mut drain).await {
                    Ok(spilled) => spilled,
                    Err(_) => {
                        escaped = true;
                        stdout_abort.abort();
                        stderr_abort.abort();
                        None
                    }
                }
            }
        };
        let take = |buffer: &Mutex<HeadTailBuffer>| {
            buffer
                .lock()
                .map(|buffer| buffer.text())
                .unwrap_or_else(|poisoned| poisoned.into_inner().text())
        };
        Read {
            stdout: take(&self.stdout),
            stderr: take(&self.stderr),
            spilled,
            escaped,
        }
    }
}

impl Read {
    /// The output as the model reads it (stdout, then stderr under a heading), each line
    /// ended, and how many bytes of it are stdout: what follows them, the saved file
    /// ends with too.
    fn text(&self) -> (String, usize) {
        let mut text = self.stdout.clone();
        let stdout_bytes = text.len();
        if !self.stderr.is_empty() {
            if !text.is_empty() && !text.ends_with('\n') {
                text.push('\n');
            }
            text.push_str("[stderr]\n");
            text.push_str(&self.stderr);
        }
        if !text.is_empty() && !text.ends_with('\n') {
            text.push('\n');
        }
        if self.escaped {
            text.push_str(
                "[a process that left the command's group still holds its output open; stopped reading]\n",
            );
        }
        (text, stdout_bytes)
    }
}

/// Reads a pipe to its end, streaming decoded text to the front end and keeping a
/// bounded copy for the model.
async fn collect<R: AsyncRead + Unpin>(
    pipe: Option<R>,
    buffer: Arc<Mutex<HeadTailBuffer>>,
    sink: OutputSink,
    mut spill: Option<SpillWriter>,
) -> Option<SpillWriter> {
    let Some(mut pipe) = pipe else {
        return spill;
    };
    let mut chunk = vec![0u8; 16 * 1024];
    // Bytes of a UTF-8 character split across reads, carried to the next read.
    let mut carry: Vec<u8> = Vec::new();
    loop {
        match pipe.read(&mut chunk).await {
            Ok(0) | Err(_) => break,
            Ok(n) => {
                // Only this task pushes; a poisoned lock still holds whole chunks.
                buffer
                    .lock()
                    .unwrap_or_else(|poisoned| poisoned.into_inner())
                    .push(&chunk[..n]);
                if let Some(spill) = spill.as_mut() {
                    spill.push(&chunk[..n]);
                }
                carry.extend_from_slice(&chunk[..n]);
                let valid = match std::str::from_utf8(&carry) {
                    Ok(_) => carry.len(),
                    Err(err) if err.error_len().is_none() => err.valid_up_to(),
                    Err(_) => carry.len(),
                };
                let text = String::from_utf8_lossy(&carry[..valid]).into_owned();
                carry.drain(..valid);
                if !text.is_empty() {
                    sink.send(text);
                }
            }
        }
    }
    if !carry.is_empty() {
        sink.send(String::from_utf8_lossy(&carry).into_owned());
    }
    spill
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::tools::Tool;
    use serde_json::json;
    use tokio_util::sync::CancellationToken;

    /// Settings for tests: the default timeouts, a small output limit.
    pub(crate) fn settings() -> BashSettings {
        BashSettings {
            default_timeout_s: 120,
            max_timeout_s: 600,
            output_limit_bytes: 1000,
            sandbox: crate::tools::sandbox::SandboxSetting::Auto,
            pass_env: Vec::new(),
            unix_sockets: false,
            network: true,
        }
    }

    fn context(cancel: CancellationToken) -> ToolContext {
        ToolContext {
            workspace: std::sync::Arc::new(Workspace::new(&std::env::temp_dir(), &[])),
            cancel,
            output: OutputSink::discard(),
            approval: crate::config::ApprovalMode::FullAuto,
            unasked: false,
            sub_agents: None,
            save_to: None,
        }
    }

    #[tokio::test]
    async fn stdout_and_stderr_reach_the_model_even_on_failure() {
        let tool = BashTool::new(settings(), BackgroundJobs::default());
        let out = Tool::run(
            &tool,
            json!({"command": "echo out; echo err >&2; exit 3"}),
            context(CancellationToken::new()),
        )
        .await;
        assert_eq!(out, ToolOutput::error("out\n[stderr]\nerr\n[exit code: 3]"));
    }

    #[tokio::test]
    async fn timeout_kills_the_group_and_keeps_partial_output() {
        let tool = BashTool::new(settings(), BackgroundJobs::default());
        let marker = format!("miniagent-test-{}", std::process::id());
        let out = Tool::run(
            &tool,
            json!({"command": format!("echo started; (sleep 30; echo {marker}) & sleep 30"), "timeout": 1}),
            context(CancellationToken::new()),
        )
        .await;
        assert!(out.is_error);
        assert!(
            out.content.starts_with("started\n[timed out after 1 s"),
            "{}",
            out.content
        );
    }

    #[tokio::test]
    async fn huge_output_is_capped() {
        let tool = BashTool::new(settings(), BackgroundJobs::default());
        let out = Tool::run(
            &tool,
            json!({"command": "seq 1 100000"}),
            context(CancellationToken::new()),
        )
        .await;
        assert!(!out.is_error, "{}", out.content);
        assert!(out.content.starts_with("1\n2\n3\n"), "{}", &out.content[..50]);
        assert!(out.content.contains("bytes of output cut"));
        assert!(
            out.content.ends_with("99999\n100000\n[exit code: 0]"),
            "{}",
            out.content
        );
        assert!(out.content.len() < 1200);
    }
}
