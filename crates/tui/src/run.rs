//! The workbench's event loop: terminal input, agent events and (only while something
//! animates) a tick, feeding one `App`. A live session and a replay (`miniagent replay`,
//! the core's playback behind the same kind of handle) run in this one loop. Redraws are requested by changes, coalesced,
//! and capped at 60 frames per second; an idle workbench draws nothing.

use std::path::PathBuf;
use std::time::{Duration, Instant, SystemTime};

use anyhow::Context;
use crossterm::event::Event as TermEvent;
use futures_util::StreamExt;
use tokio::signal::unix::{SignalKind, signal};
use tokio::sync::mpsc;

use super::app::{Action, App, AppSettings};
use super::layers::first_run::FirstRun;
use super::layers::trust::TrustPrompt;
use super::pacing::FramePacer;
use super::term_input::TerminalInput;
use super::terminal::TerminalGuard;
use super::theme::Theme;
use super::{render, text::highlight};
use miniagent_api::{self, Handle, Launch, Recording, StartOptions};
use miniagent_protocol::{Event, Op};

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
    /// `miniagent PROMPT` (and text piped in): sent as if typed once the workbench is open.
    pub prompt: Option<String>,
    /// The environment miniagent reads (`NO_COLOR`, `COLORTERM`, folders, the key).
    pub env: miniagent_api::Env,
}

/// Runs the workbench until the person quits; returns the process exit code.
pub fn run(options: WorkbenchOptions) -> i32 {
    if let Err(why) = super::terminal::check(options.env.var("TERM").as_deref()) {
        miniagent_text::eprintln(&format!(
            "miniagent: {why}; to run without it: miniagent exec \"PROMPT\""
        ));
        return 1;
    }
    match miniagent_api::block_on(workbench(options)) {
        Ok(Ok(ended)) => ended.exit_code(),
        Ok(Err(err)) => {
            miniagent_text::eprintln(&format!("miniagent: {err:#}"));
            1
        }
        Err(why) => {
            miniagent_text::eprintln(&format!("miniagent: {why}"));
            1
        }
    }
}

/// How the event loop ended: the person quit, or a signal told the process to stop.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Ended {
    Quit,
    Signal(i32),
}

impl Ended {
    /// The process exit code: 0, or 128 plus the signal's number as shells report it.
    fn exit_code(self) -> i32 {
        match self {
            Ended::Quit => 0,
            Ended::Signal(number) => 128 + number,
        }
    }
}

async fn workbench(options: WorkbenchOptions) -> anyhow::Result<Ended> {
    // Everything that can fail with a plain message fails before the screen changes.
    let env = &options.env;
    let launch = Launch::prepare(&options.start, options.resume.as_deref(), env)?;
    let settings = launch.settings();
    miniagent_api::start_logging(env);
    let no_color = env.var("NO_COLOR").is_some_and(|v| !v.is_empty());
    let theme_name = options.theme.clone().unwrap_or_else(|| settings.theme.clone());
    let theme = Theme::load(&theme_name, settings.config_dir.as_deref(), no_color)
        .map_err(|err| anyhow::anyhow!(err))?;
    let workspace = settings.workspace.clone();

    let mut app = App::build(AppSettings {
        theme,
        theme_name,
        workspace: workspace.clone(),
        approval: settings.approval,
        max_steps: settings.max_steps,
        session_start: SystemTime::now(),
        model: settings.model.clone(),
        provider: settings.provider.clone(),
        token_limit: settings.token_limit,
        context_window: settings.context_window,
        show_thinking: settings.show_thinking,
        config_dir: settings.config_dir.clone(),
        sessions_dir: settings.sessions_dir.clone(),
        home: env.var("HOME"),
        no_color,
        color_depth: super::palette::ColorDepth::detect(env, no_color),
        editor: super::editor::command(|name| env.var(name)),
        notifier: super::notify::choose(settings.notify, |name| env.var(name)),
        in_tmux: env.var("TMUX").is_some_and(|value| !value.is_empty()),
    });
    // The session to continue is the agent's first request once it starts (or the
    // question whether to continue a log from elsewhere here comes first); the agent
    // sends its history back when it has taken it up.
    let mut first = Vec::new();
    if let Some(path) = &options.resume {
        first = app.resume_session(path).actions;
    }
    // A workspace's own MCP servers start programs and its skills steer the agent: only
    // with the person's trust.
    for notice in launch.notices() {
        app.notice(crate::conversation::NoticeKind::Warning, notice.clone());
    }
    if let Some(question) = launch.trust_question() {
        app.open_layer(Box::new(TrustPrompt::new(
            question.items.clone(),
            question.changed,
        )));
    }

    let (probe_tx, mut probe_rx) = mpsc::unbounded_channel();
    // With a key and nothing to ask, the session is built once the first frame is on screen.
    let build_after_first_frame = launch.missing_key().is_none() && launch.trust_question().is_none();
    if let Some(problem) = launch.missing_key() {
        app.show_welcome(FirstRun {
            problem: problem.to_string(),
            config_path: launch.config_path(),
            local_server: None,
        });
        tokio::spawn(async move {
            let found = miniagent_api::find_local_server().await;
            let _ = probe_tx.send(found.map(|server| (server.base_url, server.model)));
        });
    }

    // The first message goes as if typed: after the session to continue, and kept in the
    // input when the person is asked first whether to continue it here (or no model is
    // set up yet).
    if let Some(text) = options.prompt.clone() {
        if options.resume.is_some() && first.is_empty() {
            app.input.set_text(&text);
        } else {
            first.extend(app.send_first_message(text).actions);
        }
    }
    let mut agent = None;
    let mut guard = TerminalGuard::enter().context("cannot set up the terminal")?;
    let result = event_loop(
        &mut guard,
        &mut app,
        &mut agent,
        &mut probe_rx,
        &mut Deferred {
            launch: Some(launch),
            build_after_first_frame,
            building: None,
            waiting: Vec::new(),
        },
        first,
    )
    .await;
    if let Some(agent) = agent.as_mut() {
        shut_down(agent).await;
    }
    drop(guard);
    // With the terminal restored: the session, if one was recorded, and how to continue it.
    if let (Some(id), Some(log)) = (app.session.view().session_id.as_deref(), app.session_log_path())
        && log.exists()
    {
        miniagent_text::print(&format!(
            "{}\n",
            miniagent_api::continue_line(id, &workspace, false)
        ));
    }
    result
}

/// `miniagent replay FILE`: plays the session in `file` (a log, or a recorded session's
/// id) in the workbench. Returns the process exit code.
pub fn replay(file: &str, theme: Option<String>, env: &miniagent_api::Env) -> i32 {
    if let Err(why) = super::terminal::check(env.var("TERM").as_deref()) {
        miniagent_text::eprintln(&format!(
            "miniagent: {why}; to print the session instead: miniagent replay --headless {}",
            file
        ));
        return 1;
    }
    // Everything that can fail with a plain message fails before the screen changes.
    let (recording, theme) = match prepare(file, theme, env) {
        Ok(prepared) => prepared,
        Err(why) => {
            miniagent_text::eprintln(&format!("miniagent: {why}"));
            return 1;
        }
    };
    highlight::preload();
    recording.preload();
    let no_color = env.var("NO_COLOR").is_some_and(|v| !v.is_empty());
    let color_depth = super::palette::ColorDepth::detect(env, no_color);
    let result = miniagent_api::block_on(async {
        let (info, status) = recording.opening();
        let mut app = App::for_replay(
            AppSettings {
                show_thinking: recording.show_thinking,
                home: env.var("HOME"),
                no_color,
                color_depth,
                ..AppSettings::new(theme, PathBuf::from(&info.workspace))
            },
            &info,
            status,
        );
        let handle = recording.play();
        let mut guard = TerminalGuard::enter().context("cannot set up the terminal")?;
        let result = drive(&mut guard, &mut app, handle).await;
        drop(guard);
        result
    });
    match result {
        Ok(Ok(ended)) => ended.exit_code(),
        Ok(Err(err)) => {
            miniagent_text::eprintln(&format!("miniagent: {err:#}"));
            1
        }
        Err(why) => {
            miniagent_text::eprintln(&format!("miniagent: {why}"));
            1
        }
    }
}

/// The recording and the theme of a replay.
fn prepare(
    file: &str,
    theme: Option<String>,
    env: &miniagent_api::Env,
) -> Result<(Recording, Theme), String> {
    let recording = Recording::open(file, env).map_err(|err| err.to_string())?;
    let no_color = env.var("NO_COLOR").is_some_and(|v| !v.is_empty());
    let name = theme.unwrap_or_else(|| recording.theme.clone());
    let theme = Theme::load(&name, recording.config_dir.as_deref(), no_color).map_err(|e| e.to_string())?;
    Ok((recording, theme))
}

/// Runs the event loop on `handle`, a session already started (a replay's), until the
/// person quits; then stops it.
pub(crate) async fn drive(guard: &mut TerminalGuard, app: &mut App, handle: Handle) -> anyhow::Result<Ended> {
    // Nothing to probe for: the probe's channel is closed from the start.
    let (_, mut probe_rx) = mpsc::unbounded_channel();
    let mut agent = Some(handle);
    let mut nothing_deferred = Deferred {
        launch: None,
        build_after_first_frame: false,
        building: None,
        waiting: Vec::new(),
    };
    let result = event_loop(
        guard,
        app,
        &mut agent,
        &mut probe_rx,
        &mut nothing_deferred,
        Vec::new(),
    )
    .await;
    if let Some(agent) = agent.as_mut() {
        shut_down(agent).await;
    }
    result
}

async fn shut_down(agent: &mut Handle) {
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

async fn next_agent_event(agent: &mut Option<Handle>) -> Option<Event> {
    match agent.as_mut() {
        Some(agent) => agent.events.recv().await,
        None => std::future::pending().await,
    }
}

/// Applies the agent events that arrived while a frame was waiting, all at once.
/// Returns whether the agent is gone (its channel closed).
fn take_waiting_events(
    app: &mut App,
    handle: &mut Handle,
    pacer: &mut FramePacer,
    actions: &mut Vec<Action>,
) -> bool {
    let gone = loop {
        match handle.events.try_recv() {
            Ok(event) => {
                let outcome = app.on_agent_event(event);
                pacer.changed(outcome.changed);
                actions.extend(outcome.actions);
            }
            Err(mpsc::error::TryRecvError::Empty) => break false,
            Err(mpsc::error::TryRecvError::Disconnected) => break true,
        }
    };
    app.set_now(Instant::now());
    gone
}

/// Draws one frame, started at `wall`.
fn draw_frame(
    guard: &mut TerminalGuard,
    app: &mut App,
    pacer: &mut FramePacer,
    wall: Instant,
) -> anyhow::Result<()> {
    guard
        .terminal
        .draw(|frame| render::draw(frame, app))
        .context("cannot draw")?;
    pacer.drawn(wall, wall.elapsed());
    app.frame_drawn();
    Ok(())
}

/// After the first frame: what it did not wait for starts now, building the session
/// (loading the system's certificates, finding skills), the syntax sets and the
/// tokenizer.
fn warm_up(deferred: &mut Deferred) {
    highlight::preload();
    if let Some(launch) = &deferred.launch {
        launch.preload();
    }
    if deferred.build_after_first_frame {
        deferred.start_building();
    }
}

async fn event_loop(
    guard: &mut TerminalGuard,
    app: &mut App,
    agent: &mut Option<Handle>,
    probe_rx: &mut mpsc::UnboundedReceiver<Option<(String, String)>>,
    deferred: &mut Deferred,
    // What the handlers asked for and the loop has not carried out yet.
    mut actions: Vec<Action>,
) -> anyhow::Result<Ended> {
    let mut terminal_events =
        crate::key_burst::KeyBursts::new(TerminalInput::spawn().context("cannot read the terminal")?);
    let mut sigterm = signal(SignalKind::terminate()).context("cannot listen for SIGTERM")?;
    let mut sighup = signal(SignalKind::hangup()).context("cannot listen for SIGHUP")?;
    let mut pacer = FramePacer::new();
    let mut warmed = false;
    let mut agent_gone = false;
    let mut highlight_pending = !highlight::is_ready();
    let mut probing = true;
    // SIGTERM or SIGHUP: the workbench quits as the person would, and says why in its
    // exit code.
    let mut ended = Ended::Quit;
    loop {
        app.set_now(Instant::now());
        // Events that arrived while a frame was waiting are taken all at once.
        if let Some(handle) = agent.as_mut()
            && !agent_gone
        {
            agent_gone = take_waiting_events(app, handle, &mut pacer, &mut actions);
        }
        // Frames are paced by the wall clock (a replay's app keeps the replay's time).
        let wall = Instant::now();
        // Keys that arrived together are all taken before the frame that shows them.
        if pacer.due(wall) && !terminal_events.has_waiting() {
            draw_frame(guard, app, &mut pacer, wall)?;
            if !warmed {
                warmed = true;
                warm_up(deferred);
            }
        }
        let mut edits = Vec::new();
        let asked = std::mem::take(&mut actions);
        if carry_out(asked, app, agent.as_ref(), deferred, guard, &mut edits) == Flow::Quit {
            return Ok(ended);
        }
        // Ctrl-G twice in one burst opens the editor once: a second one would start
        // from the text as it was before the first came back.
        if let Some((command, text)) = edits.into_iter().next() {
            let outcome = edit_input(guard, &terminal_events, app, &command, &text).await?;
            pacer.key(outcome.changed);
            actions.extend(outcome.actions);
        }
        let redraw_in = pacer.wait(Instant::now());
        // While a frame waits for its time, agent events wait with it (they are taken
        // at the top of the loop): a fast stream wakes the loop once a frame, not once
        // an event. Keys are still read at once.
        let frame_waiting = redraw_in.is_some_and(|wait| !wait.is_zero());
        let tick = app.animating().then_some(TICK);
        tokio::select! {
            event = terminal_events.next() => {
                // Keys are judged against the time they arrive (an approval arms by it).
                app.set_now(Instant::now());
                if on_terminal_event(app, event, &mut pacer, &mut actions)? == Flow::Quit {
                    return Ok(ended);
                }
            }
            event = next_agent_event(agent), if !agent_gone && !frame_waiting => match event {
                Some(event) => {
                    app.set_now(Instant::now());
                    let outcome = app.on_agent_event(event);
                    pacer.changed(outcome.changed);
                    actions.extend(outcome.actions);
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
            _ = tokio::time::sleep(tick.unwrap_or(TICK)), if tick.is_some() => {
                app.set_now(Instant::now());
                // What waits for time to pass (an answer key settling) happens now.
                let outcome = app.on_tick();
                actions.extend(outcome.actions);
                pacer.changed(true);
            }
            _ = tokio::time::sleep(TICK), if highlight_pending => {
                if highlight::is_ready() {
                    highlight_pending = false;
                    app.on_highlight_ready();
                    pacer.changed(true);
                }
            }
            built = finish_build(&mut deferred.building) => {
                let built = built?;
                // What was asked before the session ran is its first request.
                for op in deferred.waiting.drain(..) {
                    let _ = built.ops.send(op);
                }
                *agent = Some(built);
                pacer.changed(true);
            }
            _ = sigterm.recv() => {
                ended = Ended::Signal(SignalKind::terminate().as_raw_value());
                actions.push(Action::Quit);
            }
            _ = sighup.recv() => {
                ended = Ended::Signal(SignalKind::hangup().as_raw_value());
                actions.push(Action::Quit);
            }
        }
    }
}

/// The session being built, once it is; never resolves while nothing is being built.
async fn finish_build(
    building: &mut Option<tokio::task::JoinHandle<anyhow::Result<Handle>>>,
) -> anyhow::Result<Handle> {
    let Some(handle) = building.as_mut() else {
        return std::future::pending().await;
    };
    let built = handle.await;
    *building = None;
    built.context("building the session stopped unexpectedly")?
}

/// What the session waits for before it starts: the first frame, the trust answer, or
/// the first-run panel's local server.
struct Deferred {
    /// The session until it is built.
    launch: Option<Launch>,
    /// Nothing to ask: build as soon as the first frame is drawn.
    build_after_first_frame: bool,
    building: Option<tokio::task::JoinHandle<anyhow::Result<Handle>>>,
    /// Ops asked for before the session runs, sent to it first.
    waiting: Vec<Op>,
}

impl Deferred {
    /// Builds the session off the drawing thread; the event loop takes it up when ready.
    fn start_building(&mut self) {
        self.build_after_first_frame = false;
        if let Some(launch) = self.launch.take() {
            self.building = Some(launch.start());
        }
    }

    /// Keeps `op` for the session about to start. While none is coming until the person
    /// answers a question, only the session to resume and a message wait (they are the
    /// agent's first requests once it starts); anything else has nobody to go to.
    fn keep(&mut self, op: Op) {
        let coming = self.build_after_first_frame || self.building.is_some();
        // The first message (`miniagent PROMPT`) waits with it for the answer.
        let first = matches!(op, Op::Resume { .. } | Op::UserInput { .. }) && self.launch.is_some();
        if coming || first {
            self.waiting.push(op);
        }
    }
}

/// Applies one event read from the terminal; `Quit` when the terminal is gone.
fn on_terminal_event(
    app: &mut App,
    event: Option<std::io::Result<TermEvent>>,
    pacer: &mut FramePacer,
    actions: &mut Vec<Action>,
) -> anyhow::Result<Flow> {
    match event {
        Some(Ok(TermEvent::Key(key))) => {
            let outcome = app.on_key(key);
            pacer.key(outcome.changed);
            actions.extend(outcome.actions);
        }
        Some(Ok(TermEvent::Paste(text))) => {
            let outcome = app.on_paste(&text);
            pacer.key(outcome.changed);
            actions.extend(outcome.actions);
        }
        Some(Ok(TermEvent::Mouse(mouse))) => {
            let outcome = app.on_mouse(mouse);
            pacer.changed(outcome.changed);
            actions.extend(outcome.actions);
        }
        Some(Ok(TermEvent::Resize(width, _))) => {
            app.resized(width);
            pacer.key(true);
        }
        Some(Ok(TermEvent::FocusGained)) => pacer.changed(app.on_focus_gained().changed),
        Some(Ok(TermEvent::FocusLost)) => app.on_focus_lost(),
        Some(Err(err)) => return Err(err).context("cannot read the terminal"),
        None => return Ok(Flow::Quit),
    }
    Ok(Flow::Go)
}

/// Whether the event loop goes on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Flow {
    Go,
    Quit,
}

/// Ctrl-G: the terminal handed to the person's editor on `text` (the reader thread kept
/// off it, raw mode and the alternate screen left), taken back when the editor exits,
/// and what it saved given to the app. Agent events wait in their channel meanwhile and
/// are applied after; nothing is drawn.
async fn edit_input(
    guard: &mut TerminalGuard,
    terminal_events: &crate::key_burst::KeyBursts<TerminalInput>,
    app: &mut App,
    command: &str,
    text: &str,
) -> anyhow::Result<crate::app::Outcome> {
    let input = terminal_events.input();
    if !input.pause().await {
        tracing::warn!("the terminal reader did not stop within a second; the editor starts anyway");
    }
    guard.suspend();
    let edited = super::editor::edit(command, text).await;
    let resumed = guard.resume();
    input.resume();
    resumed.context("cannot take the terminal back from the editor")?;
    // The window may have been resized while the editor had it.
    if let Ok((width, _)) = crossterm::terminal::size() {
        app.resized(width);
    }
    app.set_now(Instant::now());
    Ok(app.edited(edited.map_err(|err| err.to_string())))
}

/// Carries out what the handlers asked for, in order; Ctrl-G's edits are left in `edits`
/// for the loop (they wait for the editor).
fn carry_out(
    actions: Vec<Action>,
    app: &mut App,
    agent: Option<&Handle>,
    deferred: &mut Deferred,
    guard: &mut TerminalGuard,
    edits: &mut Vec<(String, String)>,
) -> Flow {
    for action in actions {
        match action {
            Action::EditInput { command, text } => edits.push((command, text)),
            Action::Notify(bytes) => {
                // Between frames: an OSC or a bell moves no cursor. A terminal that
                // cannot take it is no reason to stop.
                use std::io::Write;
                let out = guard.terminal.backend_mut();
                let _ = out.write_all(&bytes).and_then(|()| out.flush());
            }
            Action::Send(op) => match agent {
                Some(agent) => {
                    let _ = agent.ops.send(op);
                }
                None => deferred.keep(op),
            },
            Action::Quit => return Flow::Quit,
            Action::Trust(trusted) => {
                // Remember a yes, and start the session with or without the workspace's
                // servers and skills.
                if let Some(launch) = deferred.launch.as_mut() {
                    if let Some(why) = launch.answer_trust(trusted) {
                        app.notice(crate::conversation::NoticeKind::Warning, why);
                    }
                    if !trusted {
                        app.session.decline_workspace();
                        app.notice(
                            crate::conversation::NoticeKind::Info,
                            "this workspace's own settings (.miniagent/: MCP servers, hooks, permission rules, skills, commands) are not used this session; you are asked again when miniagent next starts here".to_string(),
                        );
                    }
                    deferred.start_building();
                }
            }
            Action::Clipboard(sequence) => {
                if let Err(err) = crate::terminal::write_sequence(&sequence) {
                    app.notice(
                        crate::conversation::NoticeKind::Warning,
                        format!("copy: could not write to the terminal: {err}"),
                    );
                }
            }
            Action::MouseCapture(on) => {
                if let Err(err) = crate::terminal::set_mouse_capture(on) {
                    app.notice(
                        crate::conversation::NoticeKind::Warning,
                        format!("/mouse: the terminal did not take it: {err}"),
                    );
                }
            }
            Action::UseLocalServer { base_url, model } => {
                if let Some(launch) = deferred.launch.as_mut() {
                    launch.use_local_server(base_url, model);
                    app.session.name_provider(launch.settings().provider);
                    deferred.start_building();
                }
            }
        }
    }
    Flow::Go
}
