//! The workbench's event loop: terminal input, agent events and (only while something
//! animates) a tick, feeding one `App`. Redraws are requested by changes, coalesced,
//! and capped at 60 frames per second; an idle workbench draws nothing.

use std::path::PathBuf;
use std::time::{Duration, Instant, SystemTime};

use anyhow::Context;
use crossterm::event::{Event as TermEvent, EventStream};
use futures_util::StreamExt;
use tokio::signal::unix::{SignalKind, signal};
use tokio::sync::mpsc;

use super::app::App;
use super::overlay::{FirstRun, Overlay, TrustPrompt};
use super::pacing::FramePacer;
use super::terminal::TerminalGuard;
use super::theme::Theme;
use super::{first_run, render, text::highlight};
use crate::agent::{self, AgentHandle};
use crate::config::{self, Config, Provider};
use crate::protocol::{Event, Op};
use crate::session;
use crate::startup::{self, StartOptions};
use crate::trust;

/// How often animated things (spinners, ticking durations) advance.
const TICK: Duration = Duration::from_millis(100);
/// How long quitting waits for the agent to stop its tools.
const SHUTDOWN_WAIT: Duration = Duration::from_secs(3);

/// What the workbench is started with.
#[derive(Clone, Debug, Default)]
pub struct WorkbenchOptions {
    pub start: StartOptions,
    /// `--theme NAME`, over `ui.theme`.
    pub theme: Option<String>,
    /// `--resume`: the session log to continue.
    pub resume: Option<PathBuf>,
}

fn env(name: &str) -> Option<String> {
    std::env::var(name).ok()
}

/// Runs the workbench until the person quits; returns the process exit code.
pub fn run(options: WorkbenchOptions) -> i32 {
    let runtime = match tokio::runtime::Runtime::new() {
        Ok(runtime) => runtime,
        Err(err) => {
            crate::terminal_text::eprintln(&format!("miniagent: cannot start the async runtime: {err}"));
            return 1;
        }
    };
    let result = runtime.block_on(workbench(options));
    runtime.shutdown_timeout(Duration::from_millis(200));
    match result {
        Ok(()) => 0,
        Err(err) => {
            crate::terminal_text::eprintln(&format!("miniagent: {err:#}"));
            1
        }
    }
}

/// Sends the log to `miniagent.log` (never to the terminal); `exec` logs there too.
pub fn start_logging(config_dir: Option<&std::path::Path>) {
    let dir = env("MINIAGENT_LOG_DIR")
        .map(PathBuf::from)
        .or_else(|| {
            directories::ProjectDirs::from("", "", "miniagent").map(|d| d.data_local_dir().to_path_buf())
        })
        .or_else(|| config_dir.map(std::path::Path::to_path_buf));
    let Some(dir) = dir else { return };
    if std::fs::create_dir_all(&dir).is_err() {
        return;
    }
    let Ok(file) = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(dir.join("miniagent.log"))
    else {
        return;
    };
    // Never to the terminal the workbench owns.
    let _ = tracing_subscriber::fmt()
        .with_writer(std::sync::Mutex::new(crate::terminal_text::CleanWriter::new(
            file,
        )))
        .with_ansi(false)
        .with_max_level(tracing::Level::INFO)
        .try_init();
}

async fn workbench(options: WorkbenchOptions) -> anyhow::Result<()> {
    // Everything that can fail with a plain message fails before the screen changes.
    let config = startup::load_config(&options.start, &env)?;
    let workspace = startup::resolve_workspace(&options.start)?;
    let config_dir = config::config_dir(&env);
    start_logging(config_dir.as_deref());
    let no_color = env("NO_COLOR").is_some_and(|v| !v.is_empty());
    let theme_name = options.theme.clone().unwrap_or_else(|| config.ui.theme.clone());
    let theme =
        Theme::load(&theme_name, config_dir.as_deref(), no_color).map_err(|err| anyhow::anyhow!(err))?;
    let key = startup::api_key(&config, &env);
    let mut pending_key: Option<String> = None;
    // A bad mcp.json is reported before the screen changes; the servers start with the agent.
    let mut mcp = startup::mcp_config(&options.start, &env)?;
    // So is a log that cannot be resumed.
    if let Some(path) = &options.resume {
        session::load(path).map_err(|why| anyhow::anyhow!(why))?;
    }
    // Errors that building the session would find late are found now, cheaply.
    crate::llm::endpoint::resolve_base_url(config.model.provider, &config.model.base_url)?;
    config::system_prompt(&config, &workspace, "").map_err(|why| anyhow::anyhow!(why))?;

    let mut app = App::new(
        theme,
        workspace.clone(),
        config.agent.approval,
        config.agent.max_steps,
        SystemTime::now(),
    );
    app.config_dir = config_dir.clone();
    app.theme_name = theme_name;
    app.no_color = no_color;
    app.color_depth = super::palette::ColorDepth::detect(&env, no_color);
    app.side.thinking = config.ui.show_thinking;
    app.tokens.token_limit = config.agent.token_limit;
    app.tokens.context_window = config.model.context_window;
    app.session.model = config.model.model.clone();
    app.session.provider = config.model.provider.to_string();
    app.sessions_dir = session::store::sessions_dir(&env);
    // The panes show the resumed session at once (or the question whether to continue a
    // log from elsewhere here); the agent takes it up when it starts.
    if let Some(path) = &options.resume {
        app.resume_session(path);
    }

    // A workspace's own MCP servers start programs and its skills steer the agent: only
    // with the person's trust.
    let mut awaiting = None;
    let mut trusted = false;
    let extras = trust::WorkspaceExtras::load(&workspace);
    if let Some(problem) = &extras.mcp_problem {
        app.notice(crate::tui::conversation::NoticeKind::Warning, problem.clone());
    }
    match trust::status(config_dir.as_deref(), &workspace, &extras) {
        trust::TrustStatus::NothingToTrust => {}
        trust::TrustStatus::Trusted => {
            trusted = true;
            if let Some(project) = extras.mcp {
                mcp = Some(trust::merge(mcp, project));
            }
        }
        trust::TrustStatus::Untrustable(why) => app.notice(
            crate::tui::conversation::NoticeKind::Warning,
            format!("this workspace's own MCP servers and skills in .miniagent/ are not used: {why}"),
        ),
        trust::TrustStatus::Unknown | trust::TrustStatus::Changed if options.start.trust_workspace => {
            if let Some(dir) = &config_dir {
                trust::remember(dir, &workspace, &extras)?;
            }
            trusted = true;
            if let Some(project) = extras.mcp {
                mcp = Some(trust::merge(mcp, project));
            }
        }
        status @ (trust::TrustStatus::Unknown | trust::TrustStatus::Changed) => {
            if key.is_ok() {
                app.overlays.push(Overlay::Trust(TrustPrompt::new(
                    extras.describe(),
                    status == trust::TrustStatus::Changed,
                )));
                awaiting = Some(extras);
            }
        }
    }

    let (probe_tx, mut probe_rx) = mpsc::unbounded_channel();
    let mut build = None;
    let mut agent = match key {
        // The session starts once the person answered the trust question.
        Ok(key) if awaiting.is_some() => {
            pending_key = Some(key);
            None
        }
        // Built once the first frame is on screen.
        Ok(key) => {
            build = Some(BuildArgs {
                key,
                mcp: mcp.take(),
                trusted,
            });
            None
        }
        Err(problem) => {
            let config_path = config_dir
                .as_ref()
                .map(|dir| dir.join("config.toml").display().to_string())
                .unwrap_or_else(|| "config.toml in your config folder".to_string());
            app.show_welcome(FirstRun {
                problem: problem.to_string(),
                config_path,
                local_server: None,
                accepted: false,
            });
            tokio::spawn(async move {
                let _ = probe_tx.send(first_run::probe_local_servers().await);
            });
            None
        }
    };

    let mut guard = TerminalGuard::enter().context("cannot set up the terminal")?;
    let result = event_loop(
        &mut guard,
        &mut app,
        &mut agent,
        &config,
        &workspace,
        &mut probe_rx,
        &mut Deferred {
            mcp,
            project: awaiting,
            key: pending_key,
            config_dir,
            build,
            building: None,
        },
    )
    .await;
    if let Some(agent) = agent.as_mut() {
        shut_down(agent).await;
    }
    drop(guard);
    // With the terminal restored: the session, if one was recorded, and how to continue it.
    if let (Some(id), Some(log)) = (app.session.session_id.as_deref(), app.session_log_path())
        && log.exists()
    {
        crate::terminal_text::print(&format!(
            "{}\n",
            crate::session::continue_line(id, &workspace, false)
        ));
    }
    result
}

async fn shut_down(agent: &mut AgentHandle) {
    let _ = agent.ops.send(Op::Shutdown);
    let _ = tokio::time::timeout(SHUTDOWN_WAIT, async {
        while let Some(event) = agent.events.recv().await {
            if event == Event::ShutdownComplete {
                break;
            }
        }
    })
    .await;
}

async fn next_agent_event(agent: &mut Option<AgentHandle>) -> Option<Event> {
    match agent.as_mut() {
        Some(agent) => agent.events.recv().await,
        None => std::future::pending().await,
    }
}

async fn event_loop(
    guard: &mut TerminalGuard,
    app: &mut App,
    agent: &mut Option<AgentHandle>,
    config: &Config,
    workspace: &std::path::Path,
    probe_rx: &mut mpsc::UnboundedReceiver<Option<(String, String)>>,
    deferred: &mut Deferred,
) -> anyhow::Result<()> {
    let mut terminal_events = EventStream::new();
    let mut sigterm = signal(SignalKind::terminate()).context("cannot listen for SIGTERM")?;
    let mut sighup = signal(SignalKind::hangup()).context("cannot listen for SIGHUP")?;
    let mut pacer = FramePacer::new();
    let mut warmed = false;
    let mut agent_gone = false;
    let mut highlight_pending = !highlight::is_ready();
    let mut probing = true;
    loop {
        app.now = Instant::now();
        // Events that arrived while a frame was waiting are taken all at once.
        if let Some(handle) = agent.as_mut()
            && !agent_gone
        {
            loop {
                match handle.events.try_recv() {
                    Ok(event) => pacer.changed(app.on_agent_event(event)),
                    Err(mpsc::error::TryRecvError::Empty) => break,
                    Err(mpsc::error::TryRecvError::Disconnected) => {
                        agent_gone = true;
                        break;
                    }
                }
            }
            app.now = Instant::now();
        }
        if pacer.due(app.now) {
            guard
                .terminal
                .draw(|frame| render::draw(frame, app))
                .context("cannot draw")?;
            pacer.drawn(app.now, app.now.elapsed());
            app.frame_drawn();
            if !warmed {
                // What the first frame did not wait for starts now: building the session
                // (loading the system's certificates, finding skills), the syntax sets and
                // the tokenizer.
                warmed = true;
                highlight::preload();
                crate::tokens::preload(config.agent.tokenizer);
                if let Some(args) = deferred.build.take() {
                    deferred.start_building(config.clone(), workspace, args);
                }
            }
        }
        if let Some(agent) = agent.as_ref() {
            for op in app.outbox.drain(..) {
                let _ = agent.ops.send(op);
            }
        } else if deferred.build.is_none() && deferred.building.is_none() {
            // No session is coming until the person answers: nothing to send to, but the
            // session to resume is still the agent's first request once it starts.
            app.outbox.retain(|op| matches!(op, Op::Resume { .. }));
        }
        if app.quit {
            return Ok(());
        }
        if start_local_if_accepted(app, config, workspace, deferred)
            || start_after_trust(app, config, workspace, deferred)
        {
            pacer.changed(true);
            continue;
        }
        let redraw_in = pacer.wait(Instant::now());
        // While a frame waits for its time, agent events wait with it (they are taken
        // at the top of the loop): a fast stream wakes the loop once a frame, not once
        // an event. Keys are still read at once.
        let frame_waiting = redraw_in.is_some_and(|wait| !wait.is_zero());
        let tick = app.animating().then_some(TICK);
        tokio::select! {
            event = terminal_events.next() => match event {
                Some(Ok(TermEvent::Key(key))) => {
                    // Keys are judged against the time they arrive (an approval arms by it).
                    app.now = Instant::now();
                    pacer.key(app.on_key(key))
                }
                Some(Ok(TermEvent::Paste(text))) => pacer.key(app.on_paste(&text)),
                Some(Ok(TermEvent::Mouse(mouse))) => pacer.changed(app.on_mouse(mouse)),
                Some(Ok(TermEvent::Resize(..))) => pacer.key(true),
                Some(Ok(TermEvent::FocusGained | TermEvent::FocusLost)) => {}
                Some(Err(err)) => return Err(err).context("cannot read the terminal"),
                None => return Ok(()),
            },
            event = next_agent_event(agent), if !agent_gone && !frame_waiting => match event {
                Some(event) => {
                    app.now = Instant::now();
                    pacer.changed(app.on_agent_event(event));
                }
                None => agent_gone = true,
            },
            probe = probe_rx.recv(), if probing => match probe {
                Some(Some(found)) => {
                    app.local_server_found(found);
                    pacer.changed(true);
                }
                Some(None) => {}
                // The probe is over: a closed channel would wake this loop again and again.
                None => probing = false,
            },
            _ = tokio::time::sleep(redraw_in.unwrap_or(Duration::ZERO)), if redraw_in.is_some() => {}
            _ = tokio::time::sleep(tick.unwrap_or(TICK)), if tick.is_some() => pacer.changed(true),
            _ = tokio::time::sleep(TICK), if highlight_pending => {
                if highlight::is_ready() {
                    highlight_pending = false;
                    app.on_highlight_ready();
                    pacer.changed(true);
                }
            }
            built = finish_build(&mut deferred.building) => {
                *agent = Some(agent::spawn(built?));
                pacer.changed(true);
            }
            _ = sigterm.recv() => app.quit = true,
            _ = sighup.recv() => app.quit = true,
        }
    }
}

/// The session being built, once it is; never resolves while nothing is being built.
async fn finish_build(
    building: &mut Option<tokio::task::JoinHandle<anyhow::Result<agent::AgentOptions>>>,
) -> anyhow::Result<agent::AgentOptions> {
    let Some(handle) = building.as_mut() else {
        return std::future::pending().await;
    };
    let built = handle.await;
    *building = None;
    built.context("building the session stopped unexpectedly")?
}

impl Deferred {
    /// Builds the session off the drawing thread; the event loop takes it up when ready.
    fn start_building(&mut self, config: Config, workspace: &std::path::Path, args: BuildArgs) {
        let workspace = workspace.to_path_buf();
        self.building = Some(tokio::task::spawn_blocking(move || {
            startup::build(config, workspace, args.key, args.mcp, args.trusted)
        }));
    }
}

/// What a session is built from, besides the configuration and the workspace.
struct BuildArgs {
    key: String,
    mcp: Option<crate::tools::mcp::McpConfig>,
    trusted: bool,
}

/// What the session waits for before it starts: the trust answer (and the key to use).
struct Deferred {
    /// The user's MCP servers, until the agent takes them.
    mcp: Option<crate::tools::mcp::McpConfig>,
    /// The workspace's own servers and skills, while the trust question is open.
    project: Option<trust::WorkspaceExtras>,
    key: Option<String>,
    config_dir: Option<std::path::PathBuf>,
    /// The session to build after the first frame, then the build under way.
    build: Option<BuildArgs>,
    building: Option<tokio::task::JoinHandle<anyhow::Result<agent::AgentOptions>>>,
}

/// The person answered the trust question: remember a yes, and start the session with or
/// without the workspace's servers.
fn start_after_trust(
    app: &mut App,
    config: &Config,
    workspace: &std::path::Path,
    deferred: &mut Deferred,
) -> bool {
    let Some(Overlay::Trust(prompt)) = app.overlays.last() else {
        return false;
    };
    let Some(trusted) = prompt.answer else {
        return false;
    };
    app.overlays.pop();
    let (Some(project), Some(key)) = (deferred.project.take(), deferred.key.take()) else {
        return true;
    };
    let mut mcp = deferred.mcp.take();
    if trusted {
        if let Some(dir) = &deferred.config_dir
            && let Err(why) = trust::remember(dir, workspace, &project)
        {
            app.notice(crate::tui::conversation::NoticeKind::Warning, why.to_string());
        }
        if let Some(servers) = project.mcp {
            mcp = Some(trust::merge(mcp, servers));
        }
    }
    deferred.start_building(config.clone(), workspace, BuildArgs { key, mcp, trusted });
    true
}

/// The person chose the local server on the first-run panel: start the agent with it.
fn start_local_if_accepted(
    app: &mut App,
    config: &Config,
    workspace: &std::path::Path,
    deferred: &mut Deferred,
) -> bool {
    let Some(Overlay::FirstRun(first_run)) = app.overlays.last() else {
        return false;
    };
    if !first_run.accepted {
        return false;
    }
    let Some((base_url, model)) = first_run.local_server.clone() else {
        return false;
    };
    app.overlays.pop();
    app.welcome = None;
    let mut config = config.clone();
    config.model.provider = Provider::Openai;
    config.model.base_url = base_url;
    config.model.model = model.clone();
    app.session.model = model;
    app.session.provider = Provider::Openai.to_string();
    // The first-run path has no trust prompt: the workspace's own extras stay out.
    let mcp = deferred.mcp.take();
    deferred.start_building(
        config,
        workspace,
        BuildArgs {
            key: String::new(),
            mcp,
            trusted: false,
        },
    );
    true
}
