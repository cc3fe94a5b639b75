//! The replay's event loop: terminal input and the replay's own clock feed one
//! [`Player`]. Frames are requested by changes and capped like the workbench's; a
//! paused replay draws nothing.

use std::time::{Duration, Instant};

use anyhow::Context;
use crossterm::event::{Event as TermEvent, EventStream};
use futures_util::StreamExt;
use tokio::signal::unix::{SignalKind, signal};

use super::Player;
use crate::api::{self, Recording};
use crate::tui::pacing::FramePacer;
use crate::tui::render;
use crate::tui::terminal::TerminalGuard;
use crate::tui::text::highlight;
use crate::tui::theme::Theme;

/// `miniagent replay FILE`: plays the session in `file` (a log, or a recorded session's
/// id) in the workbench. Returns the process exit code.
pub fn replay(file: &str, theme: Option<String>, env: &api::Env) -> i32 {
    // Everything that can fail with a plain message fails before the screen changes.
    let (recording, theme) = match prepare(file, theme, env) {
        Ok(prepared) => prepared,
        Err(why) => {
            crate::terminal_text::eprintln(&format!("miniagent: {why}"));
            return 1;
        }
    };
    highlight::preload();
    recording.preload();
    let no_color = env.var("NO_COLOR").is_some_and(|v| !v.is_empty());
    let color_depth = crate::tui::palette::ColorDepth::detect(env, no_color);
    let result = api::block_on(async {
        let mut player = Player::new(&recording.log, theme);
        player.counter = recording.counter();
        player.app.side.thinking = recording.show_thinking;
        player.app.color_depth = color_depth;
        let mut guard = TerminalGuard::enter().context("cannot set up the terminal")?;
        let result = event_loop(&mut guard, &mut player).await;
        drop(guard);
        result
    });
    match result {
        Ok(Ok(())) => 0,
        Ok(Err(err)) => {
            crate::terminal_text::eprintln(&format!("miniagent: {err:#}"));
            1
        }
        Err(why) => {
            crate::terminal_text::eprintln(&format!("miniagent: {why}"));
            1
        }
    }
}

/// The recording and the theme of a replay.
fn prepare(file: &str, theme: Option<String>, env: &api::Env) -> Result<(Recording, Theme), String> {
    let recording = Recording::open(file, env).map_err(|err| err.to_string())?;
    let no_color = env.var("NO_COLOR").is_some_and(|v| !v.is_empty());
    let name = theme.unwrap_or_else(|| recording.theme.clone());
    let theme = Theme::load(&name, recording.config_dir.as_deref(), no_color).map_err(|e| e.to_string())?;
    Ok((recording, theme))
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
