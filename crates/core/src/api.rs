//! The core's public face for front ends. A front end starts a session here from the
//! person's options and gets a [`Handle`] (an `Op` sender and an `Event` receiver);
//! everything else it learns (the settings to show, the trust question, the recorded
//! sessions, where a log comes from) comes back as protocol types or as the small types
//! here. Every face (the workbench, `exec`, the `sessions` commands, the supervisor
//! binary) uses this module and `miniagent_protocol`, nothing else of the core.

use std::future::Future;
use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::Context;

mod faces;
mod serve;
mod sessions;

pub use crate::agent::AgentHandle as Handle;
pub use crate::config::Env;
pub use crate::config::edit::EditError;
pub use crate::config::{Overrides, Provider};
pub use crate::local_server::LocalServer;
pub use crate::session::SessionError;
pub use crate::session::store::SessionInfo;
pub use crate::startup::StartOptions;
pub use crate::tools::client_files::{ClientFileError, ClientFiles};
pub use faces::{FaceExtras, McpServerSpec, claim_stdout, start_with};
/// What [`ClientFiles`]'s methods return: a boxed future that may move between threads.
pub use futures_util::future::BoxFuture;
pub use serve::{Refusal, ServeSettings, ServeToken, SessionRequest, TokenError, serve_token};
pub use sessions::{
    ExportError, LogEntry, RecordedSession, RemoveError, SessionLog, SessionOrigin, SessionStore,
    remove_session, session_info, session_lines, session_summary,
};

use crate::config::{self, Config};
use crate::tools::mcp::McpConfig;
use crate::{agent, session, startup, trust};
use miniagent_protocol::{FrontEndSettings, LogOrigin, TrustQuestion};

/// What miniagent does first, before it reads its arguments: when started as a command's
/// supervisor it is that and exits; otherwise it closes what it inherited, keeps secrets
/// out of its environment and core dumps, and seals the supervisor it runs commands under.
pub fn harden_process() {
    crate::hardening::start();
}

/// The `miniagent-supervise` binary's work: when the arguments ask for a supervisor, runs
/// as one and returns its exit code; `None` when it was started by hand.
pub fn supervise_if_asked() -> Option<i32> {
    crate::tools::supervisor::run_if_requested()
}

/// The log `--resume [ID]` continues in the workbench: session `id` (an id, a unique
/// prefix, or a file), else the newest recorded in the workspace. A log recorded
/// elsewhere is the workbench's to ask about.
pub fn session_to_resume(options: &StartOptions, id: Option<&str>, env: &Env) -> anyhow::Result<PathBuf> {
    Ok(startup::resume_target(options, id, env)?.path)
}

/// The same for a front end with nobody to ask (`exec`): a log from elsewhere, or one
/// recorded in another workspace, is continued only where `-w` says.
pub fn session_to_resume_unattended(
    options: &StartOptions,
    id: Option<&str>,
    env: &Env,
) -> anyhow::Result<PathBuf> {
    let target = startup::resume_target(options, id, env)?;
    target.check_for_exec(options)?;
    Ok(target.path)
}

/// Whether session `id` has a log in the sessions folder: only a session that was
/// recorded can be continued (a log that could not be written was said in a notice).
pub fn is_recorded(id: &str, env: &Env) -> bool {
    session::store::sessions_dir(env).is_some_and(|dir| dir.join(format!("{id}.jsonl")).is_file())
}

/// The async runtime could not start (the system refused threads or file descriptors).
#[derive(Debug, thiserror::Error)]
#[error("cannot start the async runtime: {0}")]
pub struct RuntimeError(#[from] std::io::Error);

/// Runs `future` to its end on a fresh runtime, the one set-up every front end uses.
/// Errs only when the runtime cannot start.
pub fn block_on<T>(future: impl Future<Output = T>) -> Result<T, RuntimeError> {
    let runtime = tokio::runtime::Runtime::new()?;
    let output = runtime.block_on(future);
    // Tool processes were stopped by the agent; stray blocking tasks are not waited for.
    runtime.shutdown_timeout(Duration::from_millis(200));
    Ok(output)
}

/// Sends the log to `miniagent.log` (never to the terminal): `MINIAGENT_LOG_DIR`, else
/// `logs` in `MINIAGENT_DATA_DIR`, else the platform's local data folder, else the config
/// folder.
pub fn start_logging(env: &Env) {
    let dir = crate::startup::log_dir(env).or_else(|| config::config_dir(env));
    let Some(dir) = dir else { return };
    if config::private_dir(&dir).is_err() {
        return;
    }
    let Ok(file) = config::private_log(&dir.join("miniagent.log")) else {
        return;
    };
    // Never to the terminal the workbench owns.
    let _ = tracing_subscriber::fmt()
        .with_writer(std::sync::Mutex::new(miniagent_text::CleanWriter::new(file)))
        .with_ansi(false)
        .with_max_level(tracing::Level::INFO)
        .try_init();
}

/// Starts a session with nobody to ask (`exec`): the trust question is answered by
/// `--trust-workspace` and what is left out is said in the session's first notices.
/// Call it inside the runtime ([`block_on`]).
pub fn start(options: &StartOptions, env: &Env) -> anyhow::Result<Handle> {
    Ok(agent::spawn(startup::prepare(options, env)?))
}

/// The line a front end prints when it ends: session `id` and the command that
/// continues it (`exec`: the `exec` form).
pub fn continue_line(id: &str, workspace: &Path, exec: bool) -> String {
    session::continue_line(id, workspace, exec)
}

/// The sessions recorded in `folder`, newest first (each is a small file read now).
pub fn list_sessions(folder: Option<&Path>) -> Vec<SessionInfo> {
    folder.map(session::store::list).unwrap_or_default()
}

/// Where the session recorded in `path` comes from; the log is read whole, so a log
/// that cannot be resumed says why here.
pub fn log_origin(path: &Path, sessions_dir: Option<&Path>) -> Result<LogOrigin, SessionError> {
    let loaded = session::load(path)?;
    Ok(LogOrigin {
        id: loaded.header.id,
        workspace: loaded.header.workspace,
        own: session::store::is_own_log(sessions_dir, path),
    })
}

/// Saves `[table] key = value` in the user's config file, for the next start; returns
/// the file written.
pub fn save_setting(config_dir: &Path, table: &str, key: &str, value: &str) -> Result<PathBuf, EditError> {
    config::edit::set_value(config_dir, table, key, value)
}

/// An OpenAI-compatible model server answering on this machine (Ollama's or llama.cpp's
/// usual port), to offer a person who has no API key; `None` when none lists a model.
pub async fn find_local_server() -> Option<LocalServer> {
    crate::local_server::probe().await
}

/// Where [`find_local_server`] looks, as a person reads it (`127.0.0.1:11434`).
pub fn local_server_addresses() -> Vec<&'static str> {
    crate::local_server::addresses()
}

/// A session on its way to start in the workbench: what can fail with a plain message
/// failed in [`Launch::prepare`], before the screen changes; the session itself is built
/// by [`Launch::start`], once the person answered what there is to ask.
pub struct Launch {
    config: Config,
    workspace: PathBuf,
    config_dir: Option<PathBuf>,
    sessions_dir: Option<PathBuf>,
    key: Result<crate::llm::ApiKey, String>,
    /// The MCP servers to start (the user's, and the workspace's once trusted).
    mcp: Option<McpConfig>,
    /// The workspace's own servers and skills, while the trust question is open.
    asking: Option<trust::WorkspaceExtras>,
    /// The trusted workspace's `hooks.json`, as trust fingerprinted it.
    workspace_hooks: Option<Vec<u8>>,
    question: Option<TrustQuestion>,
    trusted: bool,
    notices: Vec<String>,
    /// The variables it was prepared with, for building the session.
    env: Env,
}

impl Launch {
    /// Reads the configuration, the workspace, the key, the MCP servers and the
    /// workspace's trust; `resume`, a log to continue, must load.
    /// The variables are the ones `env` gives.
    pub fn prepare(options: &StartOptions, resume: Option<&Path>, env: &Env) -> anyhow::Result<Self> {
        let mut config = startup::load_config(options, env)?;
        let workspace = startup::resolve_workspace(options)?;
        let config_dir = config::config_dir(env);
        let sessions_dir = session::store::sessions_dir(env);
        // A missing key is the first-run panel's to explain; a key that must not go where
        // the configuration points stops here.
        let key = match startup::api_key(&config, env) {
            Ok(key) => Ok(key),
            Err(startup::KeyError::Missing(why)) => Err(why),
            Err(refused @ startup::KeyError::Refused(_)) => return Err(refused.into()),
        };
        let mut mcp = startup::mcp_config(options, env, &workspace)?;
        if let Some(path) = resume {
            session::load(path).map_err(|why| anyhow::anyhow!(why))?;
        }
        // Errors that building the session would find late are found now, cheaply.
        crate::llm::endpoint::resolve_base_url(config.model.provider, &config.model.base_url)
            .map_err(|err| anyhow::anyhow!("model.base_url {err}"))?;
        config::system_prompt(&config, &workspace, "").map_err(|why| anyhow::anyhow!(why))?;

        let mut notices: Vec<String> = key
            .as_ref()
            .ok()
            .and_then(|key| startup::key_notice(key, &config.model.base_url))
            .into_iter()
            .collect();
        let mut asking = None;
        let mut question = None;
        let mut trusted = false;
        let mut workspace_hooks = None;
        let extras = trust::WorkspaceExtras::load(&workspace);
        notices.extend(extras.mcp_problem.clone());
        notices.extend(extras.problems.iter().cloned());
        match trust::status(config_dir.as_deref(), &workspace, &extras) {
            trust::TrustStatus::NothingToTrust => {}
            trust::TrustStatus::Trusted => {
                trusted = true;
                workspace_hooks = extras.hooks.clone();
                notices.extend(startup::use_workspace_permissions(
                    &mut config,
                    extras.settings.as_deref(),
                ));
                if let Some(project) = extras.mcp {
                    mcp = Some(trust::merge(mcp, project));
                }
            }
            trust::TrustStatus::Untrustable(why) => notices.push(format!(
                "this workspace's own settings in .miniagent/ (MCP servers, hooks, permission rules, skills, commands) are not used: {why}"
            )),
            trust::TrustStatus::Unknown | trust::TrustStatus::Changed if options.trust_workspace => {
                if let Some(dir) = &config_dir {
                    trust::remember(dir, &workspace, &extras).map_err(|why| anyhow::anyhow!(why))?;
                }
                trusted = true;
                workspace_hooks = extras.hooks.clone();
                notices.extend(startup::use_workspace_permissions(
                    &mut config,
                    extras.settings.as_deref(),
                ));
                if let Some(project) = extras.mcp {
                    mcp = Some(trust::merge(mcp, project));
                }
            }
            status @ (trust::TrustStatus::Unknown | trust::TrustStatus::Changed) => {
                // Without a key the first-run panel shows instead, and its local server
                // starts without the workspace's extras.
                if key.is_ok() {
                    question = Some(TrustQuestion {
                        items: extras.describe(),
                        changed: status == trust::TrustStatus::Changed,
                    });
                    asking = Some(extras);
                }
            }
        }
        Ok(Self {
            config,
            workspace,
            config_dir,
            sessions_dir,
            key,
            mcp,
            asking,
            workspace_hooks,
            question,
            trusted,
            notices,
            env: env.clone(),
        })
    }

    /// The settings to show until the agent says otherwise.
    pub fn settings(&self) -> FrontEndSettings {
        FrontEndSettings {
            workspace: self.workspace.clone(),
            model: self.config.model.model.clone(),
            provider: self.config.model.provider.to_string(),
            approval: self.config.agent.approval,
            max_steps: self.config.agent.max_steps,
            token_limit: self.config.agent.token_limit,
            context_window: self.config.model.context_window,
            theme: self.config.ui.theme.clone(),
            show_thinking: self.config.ui.show_thinking,
            config_dir: self.config_dir.clone(),
            sessions_dir: self.sessions_dir.clone(),
            notify: self.config.ui.notify,
        }
    }

    /// Warnings about the workspace's own servers and skills, to show at once.
    pub fn notices(&self) -> &[String] {
        &self.notices
    }

    /// Why there is no API key (the first-run panel says it), if there is none.
    pub fn missing_key(&self) -> Option<&str> {
        self.key.as_ref().err().map(String::as_str)
    }

    /// The config file, as the first-run panel names it.
    pub fn config_path(&self) -> String {
        self.config_dir
            .as_ref()
            .map(|dir| dir.join("config.toml").display().to_string())
            .unwrap_or_else(|| "config.toml in your config folder".to_string())
    }

    /// The question the session waits on before it starts, while it is open.
    pub fn trust_question(&self) -> Option<&TrustQuestion> {
        self.question.as_ref()
    }

    /// The person's answer to [`Self::trust_question`]: a yes is remembered and brings
    /// the workspace's servers and skills in. Returns a warning when it cannot be
    /// remembered (the session still uses them).
    pub fn answer_trust(&mut self, yes: bool) -> Option<String> {
        self.question = None;
        let project = self.asking.take()?;
        if !yes {
            return None;
        }
        self.trusted = true;
        let warnings: Vec<String> = self
            .config_dir
            .as_ref()
            .and_then(|dir| trust::remember(dir, &self.workspace, &project).err())
            .map(|err| err.to_string())
            .into_iter()
            .chain(startup::use_workspace_permissions(
                &mut self.config,
                project.settings.as_deref(),
            ))
            .collect();
        let warning = (!warnings.is_empty()).then(|| warnings.join("; "));
        self.workspace_hooks = project.hooks.clone();
        if let Some(servers) = project.mcp {
            self.mcp = Some(trust::merge(self.mcp.take(), servers));
        }
        warning
    }

    /// The first-run panel's choice: the OpenAI-compatible server found on this machine,
    /// with no key. The workspace's own extras stay out (there was no trust question).
    pub fn use_local_server(&mut self, base_url: String, model: String) {
        self.config.model.provider = Provider::Openai;
        self.config.model.base_url = base_url;
        self.config.model.model = model;
        self.key = Ok(crate::llm::ApiKey::default());
        self.question = None;
        self.asking = None;
        self.workspace_hooks = None;
        self.trusted = false;
    }

    /// Makes the tokenizer ready (its tables are in the binary: this reads their
    /// layout, no more).
    pub fn preload(&self) {
        crate::tokens::preload(self.config.agent.tokenizer);
    }

    /// Builds the session off the async threads (certificates, skills, MCP servers) and
    /// starts the agent. Call it inside the runtime.
    pub fn start(self) -> tokio::task::JoinHandle<anyhow::Result<Handle>> {
        tokio::spawn(async move {
            let Self {
                config,
                workspace,
                key,
                mcp,
                trusted,
                workspace_hooks,
                env,
                ..
            } = self;
            let key = key.map_err(|why| anyhow::anyhow!(why))?;
            let built = tokio::task::spawn_blocking(move || {
                let mut built = startup::build(config, workspace, key, mcp, trusted, &env)?;
                startup::load_hooks(&mut built, workspace_hooks.as_deref(), &env);
                anyhow::Ok(built)
            })
            .await
            .context("building the session stopped unexpectedly")??;
            Ok(agent::spawn(built))
        })
    }
}

use crate::playback::Playback;
pub use crate::playback::{NOT_CHANGED, NOT_SENT};
use crate::tokens::TokenCounter;

/// A recorded session opened for `miniagent replay`, with the settings a replay takes
/// from the configuration. A replay needs no model: a config that does not load only
/// loses its settings.
pub struct Recording {
    log: crate::session::Loaded,
    /// `ui.theme` ("dark" without a configuration).
    pub theme: String,
    /// `ui.show_thinking`.
    pub show_thinking: bool,
    /// Where themes are found.
    pub config_dir: Option<PathBuf>,
    tokenizer: crate::tokens::Encoding,
}

impl Recording {
    /// Opens `file`: a log (a path is read as one, and a missing file says so), or a
    /// recorded session's id (or id prefix).
    pub fn open(file: &str, env: &Env) -> Result<Self, SessionError> {
        let path = if Path::new(file).is_file() || file.ends_with(".jsonl") || file.contains('/') {
            PathBuf::from(file)
        } else {
            let dir = session::store::sessions_dir(env);
            session::store::resolve(dir.as_deref(), file)?
        };
        let log = session::load(&path)?;
        let config = startup::load_config(&StartOptions::default(), env).ok();
        Ok(Self {
            log,
            theme: config
                .as_ref()
                .map_or_else(|| "dark".to_string(), |config| config.ui.theme.clone()),
            show_thinking: config.as_ref().is_none_or(|config| config.ui.show_thinking),
            config_dir: config::config_dir(env),
            tokenizer: config
                .as_ref()
                .map_or(crate::tokens::Encoding::Cl100kBase, |config| {
                    config.agent.tokenizer
                }),
        })
    }

    /// Makes the tokenizer the inspector counts with ready (a few checks).
    pub fn preload(&self) {
        crate::tokens::preload(self.tokenizer);
    }

    /// What the inspector counts the history's tokens with.
    fn counter(&self) -> TokenCounter {
        TokenCounter::new(self.tokenizer)
    }

    /// The recording's playback, paused at its start.
    fn playback(&self) -> Playback {
        Playback::new(&self.log, self.counter())
    }

    /// What the replay opens on: the recorded session, and where playback stands (the
    /// handle's first event says the same).
    pub fn opening(
        &self,
    ) -> (
        miniagent_protocol::RecordingInfo,
        miniagent_protocol::PlaybackStatus,
    ) {
        let playback = self.playback();
        let status = playback.clock().status(std::time::Instant::now());
        (playback.recording().clone(), status)
    }

    /// Plays the recording behind a handle like a live agent's: it opens and starts
    /// playing at once. Call it inside the runtime ([`block_on`]).
    pub fn play(&self) -> Handle {
        crate::playback::spawn(self.playback())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn temp_dir(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("miniagent-api-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        dir.canonicalize().unwrap()
    }

    /// A workspace with its own MCP server is a question the front end gets as a value;
    /// a yes is remembered, so the next start asks nothing and uses the server.
    #[test]
    fn the_trust_question_is_returned_and_its_answer_remembered() {
        let home = temp_dir("trust-home");
        let workspace = temp_dir("trust-workspace");
        std::fs::create_dir_all(workspace.join(".miniagent")).unwrap();
        std::fs::write(
            workspace.join(".miniagent/mcp.json"),
            r#"{"mcpServers":{"tracker":{"command":"tracker-server"}}}"#,
        )
        .unwrap();
        let folders = home.clone();
        let vars = crate::config::Env::with(move |name: &str| match name {
            "MINIAGENT_CONFIG_DIR" => Some(folders.join("config").display().to_string()),
            "MINIAGENT_DATA_DIR" => Some(folders.join("data").display().to_string()),
            "MINIAGENT_API_KEY" => Some("test-key".to_string()),
            _ => None,
        });
        let options = StartOptions {
            workspace: Some(workspace.clone()),
            ..StartOptions::default()
        };
        let mut launch = Launch::prepare(&options, None, &vars).unwrap();
        let question = launch.trust_question().cloned().unwrap();
        assert!(!question.changed);
        assert!(
            question.items.iter().any(|item| item.contains("tracker")),
            "{question:?}"
        );
        assert_eq!(launch.missing_key(), None);
        assert_eq!(launch.settings().sessions_dir, Some(home.join("data/sessions")));
        assert_eq!(launch.answer_trust(true), None);
        assert!(launch.trust_question().is_none());
        assert!(
            launch
                .mcp
                .as_ref()
                .is_some_and(|mcp| mcp.servers.iter().any(|server| server.name == "tracker"))
        );

        let again = Launch::prepare(&options, None, &vars).unwrap();
        assert!(again.trust_question().is_none());
        assert!(again.trusted);
        assert!(
            again
                .mcp
                .as_ref()
                .is_some_and(|mcp| mcp.servers.iter().any(|server| server.name == "tracker"))
        );

        // Without a key there is no question: the first-run panel comes instead.
        let all = vars.clone();
        let keyless = crate::config::Env::with(move |name: &str| {
            if name == "MINIAGENT_API_KEY" {
                None
            } else {
                all.var(name)
            }
        });
        std::fs::write(
            workspace.join(".miniagent/mcp.json"),
            r#"{"mcpServers":{"other":{"command":"other-server"}}}"#,
        )
        .unwrap();
        let first_run = Launch::prepare(&options, None, &keyless).unwrap();
        assert!(first_run.trust_question().is_none());
        assert!(
            first_run
                .missing_key()
                .is_some_and(|why| why.starts_with("no API key"))
        );
        let _ = std::fs::remove_dir_all(&home);
        let _ = std::fs::remove_dir_all(&workspace);
    }
}
