//! Turning command-line options into a ready session: configuration, workspace, API key,
//! model client, system prompt and tools. Shared by every front end.

use std::path::PathBuf;
use std::sync::Arc;

use anyhow::{Context, bail};

use crate::agent::AgentOptions;
use crate::config::{self, Config, LoadOptions, Overrides};
use crate::llm::{self, endpoint};
use crate::secrets::Secrets;
use crate::session::{self, SessionLog};
use crate::tools::ToolRegistry;
use crate::tools::mcp;
use crate::tools::skills::{self, SkillSet};
use crate::trust;
use miniagent_protocol::{Event, SkillInfo};

mod keys;
pub use keys::{KeyError, api_key, key_notice};

/// What the person chose on the command line.
#[derive(Clone, Debug, Default)]
pub struct StartOptions {
    /// Default: the current directory.
    pub workspace: Option<PathBuf>,
    pub config_file: Option<PathBuf>,
    /// `--mcp-config FILE`, over `<config dir>/mcp.json`.
    pub mcp_config: Option<PathBuf>,
    /// `--trust-workspace`: use (and remember trusting) the workspace's `.miniagent/mcp.json`.
    pub trust_workspace: bool,
    pub overrides: Overrides,
}

/// Reads the configuration layers for these options.
pub fn load_config(options: &StartOptions, env: &crate::config::Env) -> anyhow::Result<Config> {
    Ok(config::load(&LoadOptions {
        config_dir: config::config_dir(env),
        config_file: options.config_file.clone(),
        overrides: options.overrides.clone(),
        env,
    })?)
}

/// Builds everything a session needs. Errors are one line, ready to show.
pub fn prepare(options: &StartOptions, env: &crate::config::Env) -> anyhow::Result<AgentOptions> {
    prepare_with(options, &[], env)
}

/// [`prepare`], with the MCP servers a face's client brought (an editor's `mcpServers`)
/// started as the user's own: outside the workspace, their credentials redacted.
pub fn prepare_with(
    options: &StartOptions,
    client_servers: &[mcp::McpServerConfig],
    env: &crate::config::Env,
) -> anyhow::Result<AgentOptions> {
    let mut config = load_config(options, env)?;
    crate::tokens::preload(config.agent.tokenizer);
    let workspace = resolve_workspace(options)?;
    let api_key = api_key(&config, env)?;
    let mut mcp = mcp_config(options, env, &workspace)?;
    let mut notices: Vec<String> = key_notice(&api_key, &config.model.base_url).into_iter().collect();
    if !client_servers.is_empty() {
        let (merged, clashes) = add_client_servers(mcp, client_servers, &workspace);
        mcp = Some(merged);
        notices.extend(clashes);
    }
    let extras = trust::WorkspaceExtras::load(&workspace);
    notices.extend(extras.mcp_problem.clone());
    notices.extend(extras.problems.iter().cloned());
    let config_dir = config::config_dir(env);
    let trusted = match trust::status(config_dir.as_deref(), &workspace, &extras) {
        trust::TrustStatus::NothingToTrust => false,
        trust::TrustStatus::Trusted => true,
        trust::TrustStatus::Untrustable(why) => {
            notices.push(format!(
                "this workspace's own settings in .miniagent/ (MCP servers, hooks, permission rules, skills, commands) are not used: {why}"
            ));
            false
        }
        trust::TrustStatus::Unknown | trust::TrustStatus::Changed if options.trust_workspace => {
            if let Some(dir) = &config_dir
                && let Err(why) = trust::remember(dir, &workspace, &extras)
            {
                notices.push(why.to_string());
            }
            true
        }
        trust::TrustStatus::Unknown => {
            notices.push(format!(
                "this workspace has its own settings in .miniagent/ ({}): MCP servers and hooks run programs, skills, commands and permission rules steer the agent, so they are used only if you trust the workspace (--trust-workspace)",
                extras.describe().join("; ")
            ));
            false
        }
        trust::TrustStatus::Changed => {
            notices.push(format!(
                "this workspace's .miniagent/ changed since you trusted it ({}); its servers and skills are used only once you trust it again (--trust-workspace)",
                extras.describe().join("; ")
            ));
            false
        }
    };
    let workspace_hooks = if trusted { extras.hooks.clone() } else { None };
    if trusted {
        notices.extend(use_workspace_permissions(&mut config, extras.settings.as_deref()));
    }
    if trusted && let Some(project) = extras.mcp {
        mcp = Some(trust::merge(mcp, project));
    }
    let mut options = build(config, workspace, api_key, mcp, trusted, env)?;
    options.startup_notices.extend(notices);
    load_hooks(&mut options, workspace_hooks.as_deref(), env);
    Ok(options)
}

/// Adds the `[permissions]` rules of a trusted workspace's `.miniagent/config.toml`
/// (`settings`, the bytes trust fingerprinted) to `config`; one whose rules cannot be
/// read gives a notice instead, and none of them is used (the repository is not the
/// person's to fix before they can work, as with its `mcp.json`).
pub fn use_workspace_permissions(config: &mut Config, settings: Option<&[u8]>) -> Option<String> {
    let settings = settings?;
    match config::PermissionSettings::from_workspace(settings) {
        Ok(rules) => {
            config.permission_sources.workspace = rules;
            None
        }
        Err(why) => Some(format!(
            "the permission rules in this workspace's .miniagent/config.toml are not used: {why}"
        )),
    }
}

/// The user's servers with the client's added, each started as a user's server is
/// ([`mcp::NEUTRAL_FOLDER`] as its folder, `${workspace}` filled in), and a notice for
/// each client server left out because a configured one has its name.
fn add_client_servers(
    user: Option<mcp::McpConfig>,
    client_servers: &[mcp::McpServerConfig],
    workspace: &std::path::Path,
) -> (mcp::McpConfig, Vec<String>) {
    let clashes = client_servers
        .iter()
        .filter(|server| {
            user.as_ref()
                .is_some_and(|user| user.servers.iter().any(|own| own.name == server.name))
        })
        .map(|server| {
            format!(
                "the client's MCP server `{}` is not used: your mcp.json has a server of that name, which is",
                server.name
            )
        })
        .collect();
    let client = mcp::McpConfig {
        servers: client_servers.to_vec(),
        ..mcp::McpConfig::default()
    }
    .for_workspace(workspace, std::path::Path::new(mcp::NEUTRAL_FOLDER));
    // The user's entries come first and keep their names.
    (trust::merge(user, client), clashes)
}

/// Says so when a sandboxed command could change miniagent's own settings, sessions or
/// saved results: the sandbox lets commands write anywhere under the workspace and the
/// temp folder, and cannot keep a folder inside them apart.
fn own_folders_notice(options: &AgentOptions) -> Option<String> {
    use crate::tools::sandbox;
    let sandboxed = sandbox::session_state(options.config.tools.bash.sandbox)
        == miniagent_protocol::SandboxState::Enforced;
    let within = sandbox::own_folders_within_reach(&options.workspace, &options.protected);
    if !sandboxed || within.is_empty() {
        return None;
    }
    // Each folder once, and not one inside another already named (the data folder
    // holds the sessions and results).
    let mut folders: Vec<&std::path::Path> = within.iter().map(|(folder, _)| folder.as_path()).collect();
    folders.sort();
    folders.dedup();
    let outermost: Vec<&std::path::Path> = folders
        .iter()
        .copied()
        .filter(|folder| {
            !folders
                .iter()
                .any(|other| other != folder && folder.starts_with(other))
        })
        .collect();
    let mut roots: Vec<String> = within
        .iter()
        .map(|(_, root)| root.display().to_string())
        .collect();
    roots.sort();
    roots.dedup();
    Some(format!(
        "sandboxed commands may write anywhere inside {}, and miniagent's own folders are there: {}; a command could change its settings, sessions or saved results. Keep MINIAGENT_CONFIG_DIR and MINIAGENT_DATA_DIR elsewhere",
        roots.join(" and "),
        outermost
            .iter()
            .map(|folder| folder.display().to_string())
            .collect::<Vec<_>>()
            .join(", ")
    ))
}

/// The MCP servers to start: `--mcp-config FILE`, else `<config dir>/mcp.json` when it
/// exists. A workspace's own `.miniagent/mcp.json` is never read: it would start
/// programs from whatever repository is opened. Those servers start outside `workspace`
/// ([`mcp::NEUTRAL_FOLDER`]) unless their entry names a `cwd`, so nothing of an
/// untrusted workspace runs; `${workspace}` in them names it.
pub fn mcp_config(
    options: &StartOptions,
    env: &crate::config::Env,
    workspace: &std::path::Path,
) -> anyhow::Result<Option<mcp::McpConfig>> {
    let path = match &options.mcp_config {
        Some(path) => path.clone(),
        None => match config::config_dir(env).map(|dir| dir.join("mcp.json")) {
            Some(path) if path.exists() => path,
            _ => return Ok(None),
        },
    };
    let config = mcp::load_config(&path)?;
    Ok(Some(config.for_workspace(
        workspace,
        std::path::Path::new(mcp::NEUTRAL_FOLDER),
    )))
}

/// The workspace folder, resolved: the option given, else the current directory.
pub fn resolve_workspace(options: &StartOptions) -> anyhow::Result<PathBuf> {
    let workspace = match &options.workspace {
        Some(dir) => dir.clone(),
        None => std::env::current_dir().context("cannot read the current directory")?,
    };
    let workspace = workspace
        .canonicalize()
        .with_context(|| format!("workspace {}: cannot open it", workspace.display()))?;
    if !workspace.is_dir() {
        bail!("workspace {}: not a directory", workspace.display());
    }
    Ok(workspace)
}

/// A log `--resume` would continue, and what the person should know before it does.
#[derive(Clone, Debug)]
pub struct ResumeTarget {
    pub path: PathBuf,
    pub id: String,
    /// The workspace the log says it was recorded in.
    pub recorded_workspace: PathBuf,
    /// One of this user's recorded sessions ([`session::store::is_own_log`]).
    pub own: bool,
}

impl ResumeTarget {
    /// `exec` has nobody to ask: it continues a log from elsewhere, or one recorded in
    /// another workspace, only where `-w` says. A crafted log never moves the workspace.
    pub fn check_for_exec(&self, options: &StartOptions) -> anyhow::Result<()> {
        if options.workspace.is_some() {
            return Ok(());
        }
        let here = resolve_workspace(options)?;
        if !self.own {
            bail!(
                "{} is not one of your recorded sessions; to continue it, name the workspace it may work in with -w (its remembered approvals are not restored)",
                self.path.display()
            );
        }
        if self.recorded_workspace.canonicalize().ok().as_deref() != Some(here.as_path()) {
            bail!(
                "session {} was recorded in {}, not here ({}); run it there, or name the workspace with -w (-w {} to continue it there)",
                self.id,
                self.recorded_workspace.display(),
                here.display(),
                self.recorded_workspace.display()
            );
        }
        Ok(())
    }
}

/// The log `--resume [ID]` continues: session `id` (or an id prefix, or a file), else the
/// newest session recorded in the workspace. The workspace stays the one the person
/// named (or the current directory): front ends ask, or refuse, when the log was
/// recorded elsewhere ([`ResumeTarget::check_for_exec`]).
pub fn resume_target(
    options: &StartOptions,
    id: Option<&str>,
    env: &crate::config::Env,
) -> anyhow::Result<ResumeTarget> {
    let dir = session::store::sessions_dir(env);
    let path = match id {
        Some(id) => session::store::resolve(dir.as_deref(), id).map_err(|why| anyhow::anyhow!(why))?,
        None => {
            let workspace = resolve_workspace(options)?;
            let newest = dir
                .as_deref()
                .and_then(|dir| session::store::newest_for(dir, &workspace));
            match newest {
                Some(info) => info.path,
                None => bail!(
                    "no session was recorded in {}; `miniagent sessions list` shows them all",
                    workspace.display()
                ),
            }
        }
    };
    let loaded = session::load(&path).map_err(|why| anyhow::anyhow!(why))?;
    Ok(ResumeTarget {
        own: session::store::is_own_log(dir.as_deref(), &path),
        id: loaded.header.id.clone(),
        recorded_workspace: PathBuf::from(&loaded.header.workspace),
        path,
    })
}

/// Where MCP servers' stderr goes: `mcp.log` beside miniagent's own log, never the screen.
fn mcp_log_path(env: &crate::config::Env) -> Option<PathBuf> {
    let dir = log_dir(env)?;
    config::private_dir(&dir).ok()?;
    Some(dir.join("mcp.log"))
}

/// miniagent's own log folder: `MINIAGENT_LOG_DIR`, else `logs` in `MINIAGENT_DATA_DIR`,
/// else the platform's local data folder. (With the data folder named, nothing is
/// written to the home folder's.)
pub(crate) fn log_dir(env: &crate::config::Env) -> Option<PathBuf> {
    env.var("MINIAGENT_LOG_DIR")
        .filter(|dir| !dir.is_empty())
        .map(PathBuf::from)
        .or_else(|| config::named_data_dir(env).map(|dir| dir.join("logs")))
        .or_else(|| {
            directories::ProjectDirs::from("", "", "miniagent").map(|d| d.data_local_dir().to_path_buf())
        })
}

/// The skills of this session: the bundled ones (written to the cache folder so the agent
/// can read their files), the user's, and the workspace's when it is trusted.
pub fn discover_skills(workspace: &std::path::Path, trusted: bool, env: &crate::config::Env) -> SkillSet {
    let bundled = skills::default_install_dir(env).and_then(|dir| match skills::install_bundled(&dir) {
        Ok(dir) => Some(dir),
        Err(why) => {
            tracing::warn!("the bundled skills could not be installed: {why}");
            None
        }
    });
    let user = config::config_dir(env).map(|dir| skills::user_skills_dir(&dir));
    SkillSet::discover_in(bundled.as_deref(), user.as_deref(), trusted.then_some(workspace))
}

/// Every secret the session's output is cleaned of: the key in use, every provider key
/// this process was given, the credentials in base URLs and MCP servers' settings.
fn session_secrets(
    config: &Config,
    api_key: &llm::ApiKey,
    mcp_config: Option<&mcp::McpConfig>,
    env: &crate::config::Env,
) -> Secrets {
    // Every provider key this process was given, not only the one in use: a command can
    // find them elsewhere (a wrapper's /proc/PID/environ) and print them.
    let mut secrets = vec![api_key.value.clone()];
    // The profiles' key variables too: `/model` may switch to any of them.
    let named = std::iter::once(&config.model)
        .chain(config.profiles.values().map(|profile| &profile.model))
        .map(|model| model.api_key_env.trim())
        .filter(|named| !named.is_empty());
    secrets.extend(
        crate::tools::process::KEY_VARS
            .iter()
            .copied()
            .chain(named)
            .filter_map(|var| env.var(var)),
    );
    for profile in config.profiles.values() {
        secrets.extend(endpoint::url_secrets(&profile.model.base_url));
    }
    if let Some(mcp) = mcp_config {
        secrets.extend(mcp.secret_values());
    }
    // A base URL may carry a credential too (user:password@, ?key=…): a provider that
    // echoes the URL in an error must not put it on screen or in the log.
    secrets.extend(endpoint::url_secrets(&config.model.base_url));
    Secrets::new(secrets)
}

/// The skills found, as the front ends list them (with what each pre-approves).
fn skills_loaded(skills: &SkillSet) -> Event {
    Event::SkillsLoaded {
        skills: skills
            .skills()
            .iter()
            .map(|skill| {
                let approvals = skills::SkillApprovals::from_entries(
                    &skill.name,
                    skill.allowed_tools.as_deref().unwrap_or_default(),
                );
                SkillInfo {
                    name: skill.name.clone(),
                    description: skill.description.clone(),
                    source: skill.source.to_string(),
                    root: skill.root.display().to_string(),
                    pre_approves: approvals.describe(),
                    not_pre_approved: approvals.ignored,
                }
            })
            .collect(),
        warnings: skills.warnings().to_vec(),
    }
}

/// A session from a loaded configuration, a resolved workspace and a key.
/// `trusted`: the workspace's own skills are used (its MCP servers come in `mcp_config`).
pub fn build(
    config: Config,
    workspace: PathBuf,
    api_key: llm::ApiKey,
    mcp_config: Option<mcp::McpConfig>,
    trusted: bool,
    env: &crate::config::Env,
) -> anyhow::Result<AgentOptions> {
    let secrets = session_secrets(&config, &api_key, mcp_config.as_ref(), env);
    let client = llm::build_client(&config.model, api_key)?;
    let (session_log, log_notice) = session_log(&config, &workspace, client.as_ref(), secrets.clone(), env);
    crate::tools::files::remove_stale_temp_files_in_background(&workspace);
    let skills = Arc::new(discover_skills(&workspace, trusted, env));
    let instructions = crate::instructions::Instructions::discover(
        &config.instructions,
        config::config_dir(env).as_deref(),
        &workspace,
    );
    let skills_prompt = skills.prompt_metadata();
    let mut system_prompt = config::system_prompt(&config, &workspace, &skills_prompt)?;
    system_prompt.push_str(&instructions.prompt_section());
    let mut tools = ToolRegistry::builtin(&config);
    if !skills.is_empty() {
        tools.register(Arc::new(skills::GetSkillTool::new(Arc::clone(&skills))));
    }
    let (side_tx, side_rx) = tokio::sync::mpsc::unbounded_channel();
    let commands = Arc::new(crate::commands::PromptCommands::discover(
        config::config_dir(env).map(|dir| dir.join("commands")).as_deref(),
        trusted
            .then(|| workspace.join(crate::trust::WORKSPACE_COMMANDS_DIR))
            .as_deref(),
    ));
    let _ = side_tx.send(Event::CommandsLoaded {
        commands: commands.infos(),
        warnings: commands.warnings().to_vec(),
    });
    let _ = side_tx.send(skills_loaded(&skills));
    // MCP servers connect in the background; their tools join as each one is ready.
    let mcp = mcp_config.map(|mcp_config| {
        let events = side_tx.clone();
        let on_state: mcp::McpStateCallback = Arc::new(move |server: &str, state: &mcp::McpServerState| {
            let _ = events.send(Event::McpServerStatus {
                server: server.to_string(),
                state: state.clone().into(),
            });
        });
        let manager = mcp::McpManager::start(mcp_config, mcp_log_path(env), on_state);
        manager.share_tools(mcp_share(&config, side_tx.clone()));
        tools.add_source(Arc::new(manager.clone()));
        manager
    });
    // Settings adjusted while loading come first: they explain what follows.
    let mut startup_notices: Vec<String> = config
        .notices
        .iter()
        .cloned()
        .chain(log_notice)
        .chain(instructions.notices.iter().cloned())
        .collect();
    // The folder is made now, so a data folder where it cannot be is said at the start
    // (large results then reach the model as their first and last part only).
    let results = (config.tools.large_result_bytes > 0)
        .then(|| results_dir(env))
        .flatten()
        .filter(|dir| match crate::config::private_dir(dir) {
            Ok(()) => true,
            Err(err) => {
                startup_notices.push(format!(
                    "large results cannot be saved in {} ({err}): the model gets only their first and last part",
                    dir.display()
                ));
                false
            }
        });
    // Saved results are read back with read_file (each call may read its session's
    // folder); no tool writes there.
    let read_roots = skills.roots();
    let mut options = AgentOptions {
        results,
        config,
        workspace,
        read_roots,
        mcp: mcp.map(|manager| Arc::new(manager) as Arc<dyn crate::tools::McpControl>),
        startup_notices,
        side_events: std::sync::Mutex::new(Some(side_rx)),
        system_prompt,
        skills_prompt,
        commands,
        instructions,
        client,
        tools,
        session_log,
        secrets,
        protected: own_folders(env),
        client_files: None,
        hooks: Arc::default(),
        models: Some(Arc::new(KeyedModels { env: env.clone() })),
        checkpoints: checkpoints_dir(env),
    };
    // Every face starts sessions here: each hears of it.
    if let Some(notice) = own_folders_notice(&options) {
        options.startup_notices.push(notice);
    }
    Ok(options)
}

/// Gives the session its hooks: the user's `hooks.json` and `workspace` (the trusted
/// workspace's `hooks.json`, the bytes trust fingerprinted), with a notice for each
/// problem in them.
pub fn load_hooks(options: &mut AgentOptions, workspace: Option<&[u8]>, env: &crate::config::Env) {
    let (hooks, problems) = crate::hooks::Hooks::load(config::config_dir(env).as_deref(), workspace);
    options.hooks = Arc::new(hooks);
    options.startup_notices.extend(problems);
}

/// Builds the client of another model mid-session (`/model`) as a session's start does:
/// the key from the same variables, under the same rules of where it may go.
pub struct KeyedModels {
    env: crate::config::Env,
}

impl KeyedModels {
    /// Keys are read from `env` when a switch asks for one.
    pub fn new(env: crate::config::Env) -> Self {
        Self { env }
    }
}

impl crate::agent::ModelSource for KeyedModels {
    fn client_for(&self, config: &Config) -> Result<Arc<dyn llm::ModelClient>, String> {
        let key = api_key(config, &self.env).map_err(|err| err.to_string())?;
        llm::build_client(&config.model, key).map_err(|err| format!("{err:#}"))
    }
}

/// What the MCP tools' declarations may take of every request: a quarter of the prompt
/// budget (the window or `agent.token_limit`, less the output reserve and the margin),
/// so a server listing thousands of tools cannot leave no room for the conversation;
/// past it the largest servers' tools are found by search, and the person is told.
fn mcp_share(config: &Config, events: tokio::sync::mpsc::UnboundedSender<Event>) -> mcp::ToolShare {
    let limit = config.agent.token_limit.min(config.model.context_window);
    let budget = limit.saturating_sub(u64::from(config.model.max_output_tokens) + config::MARGIN_TOKENS);
    mcp::ToolShare {
        tokens: budget / 4,
        counter: Some(crate::tokens::TokenCounter::new(config.agent.tokenizer)),
        on_notice: Arc::new({
            let events = events.clone();
            move |message| {
                let _ = events.send(Event::Notice { message });
            }
        }),
        on_deferred: Arc::new(move |servers| {
            let _ = events.send(Event::McpToolsDeferred { servers });
        }),
    }
}

/// The data folder's `results`, beside `sessions`.
pub(crate) fn results_dir(env: &crate::config::Env) -> Option<PathBuf> {
    session::store::sessions_dir(env).map(|sessions| sessions.with_file_name("results"))
}

/// The data folder's `checkpoints`, beside `sessions` (each session's kept file contents).
pub(crate) fn checkpoints_dir(env: &crate::config::Env) -> Option<PathBuf> {
    session::store::sessions_dir(env).map(|sessions| sessions.with_file_name("checkpoints"))
}

/// miniagent's own folders, which file tools change only with approval each time: the
/// configuration (trust, MCP servers, skills), the session logs (their remembered
/// approvals are restored on resume), the log folder, and the bundled skills' files
/// (every version's: their scripts are run as the skills say).
fn own_folders(env: &crate::config::Env) -> Vec<PathBuf> {
    [
        config::config_dir(env),
        session::store::sessions_dir(env),
        results_dir(env),
        checkpoints_dir(env),
        log_dir(env),
        skills::default_install_dir(env).and_then(|dir| dir.parent().map(std::path::Path::to_path_buf)),
    ]
    .into_iter()
    .flatten()
    .collect()
}

/// Where this session is recorded (`session.record`), and a notice when it cannot be.
fn session_log(
    config: &Config,
    workspace: &std::path::Path,
    client: &dyn llm::ModelClient,
    secrets: Secrets,
    env: &crate::config::Env,
) -> (SessionLog, Option<String>) {
    if !config.session.record {
        return (SessionLog::disabled(), None);
    }
    let Some(dir) = session::store::sessions_dir(env) else {
        return (
            SessionLog::disabled(),
            Some(
                "this machine has no data folder, so the session is not recorded; set MINIAGENT_DATA_DIR"
                    .to_string(),
            ),
        );
    };
    let header = session::Header {
        id: String::new(),
        created: crate::tools::files::now_iso8601(),
        workspace: workspace.display().to_string(),
        model: client.model().to_string(),
        provider: client.provider().to_string(),
        version: env!("CARGO_PKG_VERSION").to_string(),
        format: session::FORMAT,
        fixed_tokens: 0,
    };
    (SessionLog::create(&dir, header, secrets), None)
}

#[cfg(test)]
mod tests;
