//! Hooks: the person's own commands, run on the agent's events, in the shape Claude Code,
//! Codex and Crush share. They come from `hooks.json` in the config folder and, once the
//! person trusts the workspace, from its `.miniagent/hooks.json` (the very bytes trust
//! fingerprinted, never the file read again):
//!
//! ```json
//! {"hooks": {"PreToolUse": [{"matcher": "bash|write_file",
//!   "hooks": [{"type": "command", "command": "./check.sh", "timeout": 30}]}]}}
//! ```
//!
//! Each hook gets the event as JSON on its standard input ([`input`]). Exit 0 goes on
//! (for `UserPromptSubmit` and `SessionStart` its standard output is added to the
//! person's message as context); exit 2 blocks, its standard error the reason; any other
//! ending (another code, a signal, its timeout) is reported and blocks nothing. What
//! blocking does depends on the event ([`HookEvent`]). Hooks of one event run one after
//! another, in the order written (the user's first), and the first that blocks ends the
//! run. How a hook's process is run and bounded is [`run`]'s.

mod run;

use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::Deserialize;
use serde_json::{Map, Value};
use tokio_util::sync::CancellationToken;

use miniagent_protocol::HookInfo;

pub use run::{Ending, HookEnv, Ran};

/// The config folder's hooks file, relative to it.
pub const USER_HOOKS: &str = "hooks.json";
/// How long a hook may run when it does not say.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(60);
/// The longest a hook may ask for.
pub const MAX_TIMEOUT: Duration = Duration::from_secs(600);
/// The largest hooks file read (a list of commands is a few KB).
const MAX_FILE_BYTES: u64 = 1024 * 1024;
/// Hooks kept from one file: a hostile file cannot make every event start thousands.
const MAX_HOOKS: usize = 64;
/// The largest compiled matcher.
const MAX_MATCHER_BYTES: usize = 64 * 1024;
/// What of a hook's standard output or error the model may get (a reason, a context).
const MAX_TEXT_TO_MODEL: usize = 8 * 1024;
/// What of a hook's standard error a notice quotes.
const MAX_TEXT_IN_NOTICE: usize = 300;

/// The events hooks run on.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum HookEvent {
    /// Before a tool call is approved and run; blocking refuses the call, the reason
    /// going to the model as its result.
    PreToolUse,
    /// After a tool call ran; blocking adds the reason to the result the model reads.
    PostToolUse,
    /// When the person sends a message, before it enters the history; blocking refuses
    /// it (nothing is sent) and gives the text back.
    UserPromptSubmit,
    /// When the model answers without calling tools (the turn would end); blocking makes
    /// the agent go on with the reason as the next instruction, a few times per turn at most.
    Stop,
    /// When the session starts; it cannot block. Its output is context for the first message.
    SessionStart,
    /// Before the history is summarized; it cannot block.
    PreCompact,
}

impl HookEvent {
    pub const ALL: [HookEvent; 6] = [
        HookEvent::PreToolUse,
        HookEvent::PostToolUse,
        HookEvent::UserPromptSubmit,
        HookEvent::Stop,
        HookEvent::SessionStart,
        HookEvent::PreCompact,
    ];

    /// Its name in `hooks.json` and in the hook's input (`hook_event_name`).
    pub fn name(self) -> &'static str {
        match self {
            HookEvent::PreToolUse => "PreToolUse",
            HookEvent::PostToolUse => "PostToolUse",
            HookEvent::UserPromptSubmit => "UserPromptSubmit",
            HookEvent::Stop => "Stop",
            HookEvent::SessionStart => "SessionStart",
            HookEvent::PreCompact => "PreCompact",
        }
    }

    fn from_name(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|event| event.name() == name)
    }

    /// Whether a hook's standard output (exit 0) is context for the model.
    fn gives_context(self) -> bool {
        matches!(self, HookEvent::UserPromptSubmit | HookEvent::SessionStart)
    }

    /// Whether exit 2 means anything for it.
    fn can_block(self) -> bool {
        !matches!(self, HookEvent::SessionStart | HookEvent::PreCompact)
    }
}

/// Where a hook was written, which decides how it runs ([`run`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum HookSource {
    /// The config folder's `hooks.json`: the person's own, run as their commands.
    User,
    /// The trusted workspace's `.miniagent/hooks.json`: run in the command sandbox.
    Workspace,
}

impl HookSource {
    fn name(self) -> &'static str {
        match self {
            HookSource::User => "user",
            HookSource::Workspace => "workspace",
        }
    }
}

/// One hook command.
#[derive(Clone, Debug)]
pub struct Hook {
    pub event: HookEvent,
    /// `None`: every tool (or source, trigger); else matched whole against it.
    matcher: Option<regex::Regex>,
    /// As written (`*` when there was none).
    matcher_text: String,
    pub command: String,
    pub timeout: Duration,
    pub source: HookSource,
}

impl Hook {
    /// Whether it runs for `subject` (a tool name, `SessionStart`'s source, `PreCompact`'s
    /// trigger; `None` for events that have none).
    fn matches(&self, subject: Option<&str>) -> bool {
        match (&self.matcher, subject) {
            (None, _) | (_, None) => true,
            (Some(matcher), Some(subject)) => matcher.is_match(subject),
        }
    }

    fn info(&self) -> HookInfo {
        HookInfo {
            event: self.event.name().to_string(),
            matcher: self.matcher_text.clone(),
            command: self.command.clone(),
            timeout_s: self.timeout.as_secs(),
            source: self.source.name().to_string(),
        }
    }
}

/// Every hook of a session.
#[derive(Clone, Debug, Default)]
pub struct Hooks {
    hooks: Vec<Hook>,
}

#[derive(Deserialize)]
struct FileSpec {
    #[serde(default)]
    hooks: Map<String, Value>,
}

#[derive(Deserialize)]
struct GroupSpec {
    #[serde(default)]
    matcher: Option<String>,
    #[serde(default)]
    hooks: Vec<CommandSpec>,
}

#[derive(Deserialize)]
struct CommandSpec {
    #[serde(rename = "type", default)]
    kind: Option<String>,
    #[serde(default)]
    command: Option<String>,
    /// Seconds.
    #[serde(default)]
    timeout: Option<f64>,
}

impl Hooks {
    /// The user's hooks (`<config_dir>/hooks.json`) then the workspace's (`workspace`,
    /// the trusted bytes), with one notice per problem: a damaged file or entry is left
    /// out, the rest still runs.
    pub fn load(config_dir: Option<&Path>, workspace: Option<&[u8]>) -> (Self, Vec<String>) {
        let mut hooks = Vec::new();
        let mut problems = Vec::new();
        if let Some(path) = config_dir.map(|dir| dir.join(USER_HOOKS)) {
            match crate::tools::files::read_at_most(&path, MAX_FILE_BYTES) {
                Ok(crate::tools::files::Capped::Whole(bytes)) => {
                    parse_into(&bytes, HookSource::User, &path, &mut hooks, &mut problems);
                }
                Ok(crate::tools::files::Capped::TooLarge(_)) => problems.push(format!(
                    "{}: not used: larger than the {} KiB read of it",
                    path.display(),
                    MAX_FILE_BYTES / 1024
                )),
                Err(err) if err.kind() == std::io::ErrorKind::NotFound => {}
                Err(err) => problems.push(format!("{}: not used: cannot read it: {err}", path.display())),
            }
        }
        if let Some(bytes) = workspace {
            let path = PathBuf::from(crate::trust::WORKSPACE_HOOKS);
            parse_into(bytes, HookSource::Workspace, &path, &mut hooks, &mut problems);
        }
        let problems = problems
            .into_iter()
            .map(|problem| miniagent_text::clean(&format!("hooks: {problem}")).into_owned())
            .collect();
        (Self { hooks }, problems)
    }

    pub fn is_empty(&self) -> bool {
        self.hooks.is_empty()
    }

    /// Whether any hook runs on `event`.
    pub fn has(&self, event: HookEvent) -> bool {
        self.hooks.iter().any(|hook| hook.event == event)
    }

    /// Every hook, as front ends list them.
    pub fn infos(&self) -> Vec<HookInfo> {
        self.hooks.iter().map(Hook::info).collect()
    }

    /// Runs the hooks of `event` that match `subject`, one after another, each with
    /// `input` on its standard input, until one blocks or `cancel` fires.
    pub async fn fire(
        &self,
        event: HookEvent,
        subject: Option<&str>,
        input: &Value,
        env: &HookEnv,
        cancel: &CancellationToken,
    ) -> Fired {
        let mut fired = Fired::default();
        let matching: Vec<&Hook> = self
            .hooks
            .iter()
            .filter(|hook| hook.event == event && hook.matches(subject))
            .collect();
        if matching.is_empty() {
            return fired;
        }
        let bytes = serde_json::to_vec(input).unwrap_or_default();
        for hook in matching {
            let ran = run::run(hook, &bytes, env, cancel).await;
            if judge(hook, ran, &mut fired) {
                break;
            }
        }
        fired
    }
}

/// What running an event's hooks came to.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Fired {
    /// A hook blocked: why (its standard error, or its JSON `reason`), for the model or
    /// the person as the event says, and the hook's command.
    pub blocked: Option<Blocked>,
    /// What hooks of an event that gives context printed (exit 0).
    pub context: Vec<String>,
    /// Problems to report: a hook that failed, timed out or could not start.
    pub notices: Vec<String>,
    /// The person interrupted while a hook ran (it was stopped).
    pub cancelled: bool,
}

/// A hook that blocked.
#[derive(Debug, PartialEq, Eq)]
pub struct Blocked {
    pub reason: String,
    pub command: String,
}

/// Takes in one hook's run; true when it ends the event's run (it blocked, or the
/// person interrupted).
fn judge(hook: &Hook, ran: Ran, fired: &mut Fired) -> bool {
    let who = format!("hook {} `{}`", hook.event.name(), shown_command(&hook.command));
    let stderr_line = || {
        let text = miniagent_text::clean(ran.stderr.trim()).into_owned();
        if text.is_empty() {
            String::new()
        } else {
            format!(": {}", crate::tools::output::cap_text(&text, MAX_TEXT_IN_NOTICE))
        }
    };
    match ran.ending {
        Ending::Cancelled => {
            fired.cancelled = true;
            true
        }
        Ending::NotStarted(why) => {
            fired.notices.push(format!("{who} could not start: {why}"));
            false
        }
        Ending::TimedOut => {
            fired.notices.push(format!(
                "{who} ran past its timeout of {} s and was stopped{}",
                hook.timeout.as_secs(),
                stderr_line()
            ));
            false
        }
        Ending::Signal(signal) => {
            fired
                .notices
                .push(format!("{who} was killed by signal {signal}{}", stderr_line()));
            false
        }
        Ending::Code(0) => {
            let json = json_output(&ran.stdout);
            if hook.event.can_block()
                && let Some(reason) = json.as_ref().and_then(|json| json_block(hook.event, json))
            {
                fired.blocked = Some(Blocked {
                    reason: for_model(&reason, &hook.command),
                    command: hook.command.clone(),
                });
                return true;
            }
            if hook.event.gives_context() {
                let context = match &json {
                    Some(json) => json
                        .pointer("/hookSpecificOutput/additionalContext")
                        .and_then(Value::as_str)
                        .unwrap_or_default()
                        .to_string(),
                    None => ran.stdout.clone(),
                };
                let context = miniagent_text::for_model(context.trim()).into_owned();
                if !context.is_empty() {
                    fired
                        .context
                        .push(crate::tools::output::cap_text(&context, MAX_TEXT_TO_MODEL));
                }
            }
            false
        }
        Ending::Code(2) if hook.event.can_block() => {
            fired.blocked = Some(Blocked {
                reason: for_model(&ran.stderr, &hook.command),
                command: hook.command.clone(),
            });
            true
        }
        Ending::Code(code) => {
            fired
                .notices
                .push(format!("{who} exited with code {code}{}", stderr_line()));
            false
        }
    }
}

/// A hook's reason as the model (or the person) reads it: as a terminal would show it,
/// capped; a hook that gave none is named instead.
fn for_model(reason: &str, command: &str) -> String {
    let reason = miniagent_text::for_model(reason.trim()).into_owned();
    if reason.is_empty() {
        format!("the hook `{}` gave no reason", shown_command(command))
    } else {
        crate::tools::output::cap_text(&reason, MAX_TEXT_TO_MODEL)
    }
}

/// A command as one line of a notice.
fn shown_command(command: &str) -> String {
    let line = command.split_whitespace().collect::<Vec<_>>().join(" ");
    crate::tools::output::cap_text(&miniagent_text::clean(&line), 80)
}

/// A hook's standard output read as Claude Code's JSON answer, when it is a JSON object.
fn json_output(stdout: &str) -> Option<Value> {
    let trimmed = stdout.trim();
    if !trimmed.starts_with('{') {
        return None;
    }
    serde_json::from_str::<Value>(trimmed)
        .ok()
        .filter(Value::is_object)
}

/// The reason a JSON answer blocks with: `{"decision": "block", "reason": …}`, or for
/// `PreToolUse` `hookSpecificOutput.permissionDecision` `"deny"`. An `"allow"` or `"ask"`
/// is not followed: a hook can refuse a call but never approve one the policy would ask
/// about (a workspace's hook would otherwise approve its own commands).
fn json_block(event: HookEvent, json: &Value) -> Option<String> {
    let text = |pointer: &str| json.pointer(pointer).and_then(Value::as_str).unwrap_or_default();
    if text("/decision") == "block" {
        return Some(text("/reason").to_string());
    }
    if event == HookEvent::PreToolUse && text("/hookSpecificOutput/permissionDecision") == "deny" {
        return Some(text("/hookSpecificOutput/permissionDecisionReason").to_string());
    }
    None
}

/// Reads one hooks file's entries into `hooks`; what cannot be used goes to `problems`.
fn parse_into(
    bytes: &[u8],
    source: HookSource,
    path: &Path,
    hooks: &mut Vec<Hook>,
    problems: &mut Vec<String>,
) {
    let shown = path.display();
    let file: FileSpec = match serde_json::from_slice(bytes) {
        Ok(file) => file,
        Err(err) => {
            problems.push(format!("{shown}: not used: {err}"));
            return;
        }
    };
    let mut kept = 0;
    for name in file
        .hooks
        .keys()
        .filter(|name| HookEvent::from_name(name).is_none())
    {
        problems.push(format!(
            "{shown}: `{name}` is not an event hooks run on ({}); left out",
            HookEvent::ALL.map(HookEvent::name).join(", ")
        ));
    }
    // In a fixed order: a JSON object's key order is not one (see `MAX_HOOKS`).
    for event in HookEvent::ALL {
        let name = event.name();
        let Some(groups) = file.hooks.get(name) else {
            continue;
        };
        let groups: Vec<GroupSpec> = match serde_json::from_value(groups.clone()) {
            Ok(groups) => groups,
            Err(err) => {
                problems.push(format!("{shown}: {name}: left out: {err}"));
                continue;
            }
        };
        for group in groups {
            let matcher_text = group
                .matcher
                .filter(|m| !m.trim().is_empty())
                .unwrap_or_else(|| "*".to_string());
            let matcher = match compile_matcher(&matcher_text) {
                Ok(matcher) => matcher,
                Err(why) => {
                    problems.push(format!(
                        "{shown}: {name}: matcher `{matcher_text}` left out: {why}"
                    ));
                    continue;
                }
            };
            for spec in group.hooks {
                if kept == MAX_HOOKS {
                    problems.push(format!(
                        "{shown}: more than {MAX_HOOKS} hooks; the rest are left out"
                    ));
                    return;
                }
                match command_of(spec) {
                    Ok((command, timeout)) => {
                        kept += 1;
                        hooks.push(Hook {
                            event,
                            matcher: matcher.clone(),
                            matcher_text: matcher_text.clone(),
                            command,
                            timeout,
                            source,
                        });
                    }
                    Err(why) => problems.push(format!("{shown}: {name}: a hook left out: {why}")),
                }
            }
        }
    }
}

/// `*` (every subject) or a regular expression matched against the whole subject, so
/// `bash` does not also match `bash_output`.
fn compile_matcher(text: &str) -> Result<Option<regex::Regex>, String> {
    if text.trim() == "*" {
        return Ok(None);
    }
    regex::RegexBuilder::new(&format!("^(?:{text})$"))
        .size_limit(MAX_MATCHER_BYTES)
        .build()
        .map(Some)
        .map_err(|err| err.to_string().lines().last().unwrap_or_default().to_string())
}

/// A hook entry's command and timeout.
fn command_of(spec: CommandSpec) -> Result<(String, Duration), String> {
    match spec.kind.as_deref() {
        Some("command") => {}
        Some(other) => return Err(format!("type `{other}` is not supported (only `command`)")),
        None => return Err("it has no `type` (`command`)".to_string()),
    }
    let command = spec
        .command
        .filter(|command| !command.trim().is_empty())
        .ok_or_else(|| "it has no `command`".to_string())?;
    let timeout = match spec.timeout {
        None => DEFAULT_TIMEOUT,
        Some(seconds) if seconds.is_finite() && seconds > 0.0 => {
            Duration::from_secs_f64(seconds.min(MAX_TIMEOUT.as_secs_f64()))
        }
        Some(seconds) => return Err(format!("timeout {seconds} is not a number of seconds above 0")),
    };
    Ok((command, timeout))
}

/// The input every hook gets: Claude Code's common fields, then `fields` of the event.
pub fn input(
    event: HookEvent,
    session_id: Option<&str>,
    transcript: Option<&Path>,
    cwd: &Path,
    fields: Map<String, Value>,
) -> Value {
    let mut input = Map::new();
    input.insert("session_id".into(), session_id.map_or(Value::Null, Value::from));
    input.insert(
        "transcript_path".into(),
        transcript.map_or(Value::Null, |path| Value::from(path.display().to_string())),
    );
    input.insert("cwd".into(), Value::from(cwd.display().to_string()));
    input.insert("hook_event_name".into(), Value::from(event.name()));
    input.extend(fields);
    Value::Object(input)
}

#[cfg(test)]
mod tests;
