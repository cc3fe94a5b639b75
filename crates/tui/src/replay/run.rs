//! The replay's event loop: terminal input and the replay's own clock feed one
//! [`Player`]. Frames are requested by changes and capped like the workbench's; a
//! paused replay draws nothing.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use anyhow::Context;
use crossterm::event::{Event as TermEvent, EventStream};
use futures_util::StreamExt;
use tokio::signal::unix::{SignalKind, signal};

use super::Player;
use crate::config;
use crate::session::{self, Loaded};
use crate::startup::{self, StartOptions};
use crate::tokens::{Encoding, TokenCounter};
use crate::tui::pacing::FramePacer;
use crate::tui::render;
use crate::tui::terminal::TerminalGuard;
use crate::tui::text::highlight;
use crate::tui::theme::Theme;

fn env(name: &str) -> Option<String> {
    std::env::var(name).ok()
}

/// `miniagent replay FILE`: plays the session in `file` (a log, or a recorded session's
/// id) in the workbench. Returns the process exit code.
pub fn replay(file: &str, theme: Option<String>) -> i32 {
    // Everything that can fail with a plain message fails before the screen changes.
    let (loaded, theme, settings) = match prepare(file, theme) {
        Ok(prepared) => prepared,
        Err(why) => {
            crate::terminal_text::eprintln(&format!("miniagent: {why}"));
            return 1;
        }
    };
    highlight::preload();
    crate::tokens::preload(settings.tokenizer);
    let runtime = match tokio::runtime::Runtime::new() {
        Ok(runtime) => runtime,
        Err(err) => {
            crate::terminal_text::eprintln(&format!("miniagent: cannot start the async runtime: {err}"));
            return 1;
        }
    };
    let result = runtime.block_on(async {
        let mut player = Player::new(&loaded, theme);
        player.counter = TokenCounter::new(settings.tokenizer);
        player.app.side.thinking = settings.show_thinking;
        player.app.color_depth = settings.color_depth;
        let mut guard = TerminalGuard::enter().context("cannot set up the terminal")?;
        let result = event_loop(&mut guard, &mut player).await;
        drop(guard);
        result
    });
    runtime.shutdown_timeout(Duration::from_millis(200));
    match result {
        Ok(()) => 0,
        Err(err) => {
            crate::terminal_text::eprintln(&format!("miniagent: {err:#}"));
            1
        }
    }
}

/// What a replay takes from the configuration, when it loads.
struct ReplaySettings {
    tokenizer: Encoding,
    show_thinking: bool,
    color_depth: crate::tui::palette::ColorDepth,
}

/// The log, the theme and the settings of a replay.
fn prepare(file: &str, theme: Option<String>) -> Result<(Loaded, Theme, ReplaySettings), String> {
    // A path is read as one (a missing file says so); anything else is a session id.
    let path = if Path::new(file).is_file() || file.ends_with(".jsonl") || file.contains('/') {
        PathBuf::from(file)
    } else {
        let dir = session::store::sessions_dir(&env);
        session::store::resolve(dir.as_deref(), file).map_err(|err| err.to_string())?
    };
    let loaded = session::load(&path).map_err(|err| err.to_string())?;
    // A replay needs no model: a config that does not load only loses its settings.
    let config = startup::load_config(&StartOptions::default(), &env).ok();
    let config_dir = config::config_dir(&env);
    let no_color = env("NO_COLOR").is_some_and(|v| !v.is_empty());
    let name = theme
        .or_else(|| config.as_ref().map(|c| c.ui.theme.clone()))
        .unwrap_or_else(|| "dark".to_string());
    let theme = Theme::load(&name, config_dir.as_deref(), no_color).map_err(|e| e.to_string())?;
    let color_depth = crate::tui::palette::ColorDepth::detect(&env, no_color);
    let settings = match &config {
        Some(config) => ReplaySettings {
            tokenizer: config.agent.tokenizer,
            show_thinking: config.ui.show_thinking,
            color_depth,
        },
        None => ReplaySettings {
            tokenizer: Encoding::Cl100kBase,
            show_thinking: true,
            color_depth,
        },
    };
    Ok((loaded, theme, settings))
}

async fn event_loop(guard: &mut TerminalGuard, player: &mut Player) -> anyhow::Result<()> {
    let mut terminal_events = EventStream::new();
    let mut sigterm = signal(SignalKind::terminate()).context("cannot listen for SIGTERM")?;
    let mut sighup = signal(SignalKind::hangup()).context("cannot listen for SIGHUP")?;
    let mut pacer = FramePacer::new();
    let mut highlight_pending = !highlight::is_ready();
    player.start(Instant::now());
    loop {
        let now = Instant::now();
        pacer.changed(player.tick(now));
        if pacer.due(now) {
            guard
                .terminal
                .draw(|frame| render::draw(frame, &mut player.app))
                .context("cannot draw")?;
            pacer.drawn(now, now.elapsed());
        }
        if player.app.quit {
            return Ok(());
        }
        let redraw_in = pacer.wait(Instant::now());
        let wake = player.next_wake(now);
        tokio::select! {
            event = terminal_events.next() => match event {
                Some(Ok(TermEvent::Key(key))) => pacer.key(player.on_key(key, Instant::now())),
                Some(Ok(TermEvent::Paste(text))) => pacer.key(player.app.on_paste(&text)),
                Some(Ok(TermEvent::Mouse(mouse))) => pacer.changed(player.app.on_mouse(mouse)),
                Some(Ok(TermEvent::Resize(..))) => pacer.key(true),
                Some(Ok(TermEvent::FocusGained | TermEvent::FocusLost)) => {}
                Some(Err(err)) => return Err(err).context("cannot read the terminal"),
                None => return Ok(()),
            },
            _ = tokio::time::sleep(redraw_in.unwrap_or(Duration::ZERO)), if redraw_in.is_some() => {}
            _ = tokio::time::sleep(wake.unwrap_or(Duration::ZERO)), if wake.is_some() => pacer.changed(true),
            _ = tokio::time::sleep(Duration::from_millis(100)), if highlight_pending => {
                if highlight::is_ready() {
                    highlight_pending = false;
                    player.app.on_highlight_ready();
                    pacer.changed(true);
                }
            }
            _ = sigterm.recv() => player.app.quit = true,
            _ = sighup.recv() => player.app.quit = true,
        }
    }
}
