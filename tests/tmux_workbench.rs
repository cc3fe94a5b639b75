//! The real binary in tmux against the scripted server: the first frame, a streamed
//! answer, an approved command, a denied write with its reason, keys typed while an
//! approval opens, a failed command's exit status, Esc during a long tool,
//! resizes, long typed bursts taken in whole, and a clean shell after quitting; then a
//! recorded session resumed, picked and replayed; and an old call's result and output
//! read back from the session log.
#![allow(clippy::unwrap_used, clippy::expect_used)] // A test fails by panicking.

use crate::support;

use std::process::Command;
use std::time::{Duration, Instant};

use support::harness::TEST_KEY;
use support::*;

/// A private tmux server with one 160×48 window running a plain shell.
struct Tmux {
    socket: String,
}

impl Tmux {
    fn start(workspace: &TempDir) -> Tmux {
        let socket = format!("miniagent-test-{}-{}", std::process::id(), fastrand_suffix());
        let tmux = Tmux { socket };
        tmux.run(&["new-session", "-d", "-s", "main", "-x", "160", "-y", "48", "-c"])
            .arg_path(workspace.path())
            .finish(&["bash --norc --noprofile"]);
        // Esc must reach the program at once, not after tmux's escape delay.
        tmux.ok(&["set", "-sg", "escape-time", "0"]);
        tmux
    }

    fn run(&self, args: &[&str]) -> PendingCommand {
        let mut command = Command::new("tmux");
        // CI has no terminal of its own; tmux makes one, and needs only a known TERM.
        command
            .env("TERM", "xterm-256color")
            .env_remove("TMUX")
            .args(["-L", &self.socket])
            .args(args);
        PendingCommand(command)
    }

    fn ok(&self, args: &[&str]) {
        let status = self.run(args).0.status().expect("tmux runs");
        assert!(status.success(), "tmux {args:?} failed");
    }

    fn keys(&self, keys: &[&str]) {
        let mut args = vec!["send-keys", "-t", "main"];
        args.extend_from_slice(keys);
        self.ok(&args);
    }

    /// Types text literally (no key-name interpretation).
    fn type_text(&self, text: &str) {
        self.ok(&["send-keys", "-t", "main", "-l", text]);
    }

    fn screen(&self) -> String {
        let output = self
            .run(&["capture-pane", "-p", "-t", "main"])
            .0
            .output()
            .expect("tmux runs");
        String::from_utf8_lossy(&output.stdout).into_owned()
    }

    /// Waits until the screen satisfies `pred` (15 s at most) and returns it.
    fn wait_for(&self, what: &str, pred: impl Fn(&str) -> bool) -> String {
        let deadline = Instant::now() + Duration::from_secs(15);
        loop {
            let screen = self.screen();
            if pred(&screen) {
                return screen;
            }
            if Instant::now() > deadline {
                panic!("timed out waiting for {what}; the screen is:\n{screen}");
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    fn wait_for_text(&self, text: &str) -> String {
        self.wait_for(text, |screen| screen.contains(text))
    }

    /// Types `text` literally and presses Enter.
    fn send(&self, text: &str) {
        self.type_text(text);
        self.keys(&["Enter"]);
    }

    /// Waits until the workbench is gone and the shell's bare prompt (`$`) stands on a line.
    fn wait_for_shell_prompt(&self) -> String {
        self.wait_for("the shell prompt", |s| {
            s.lines().any(|l| l.trim_end() == "$") && !s.contains("Conversation")
        })
    }

    /// Asserts that the terminal is out of raw mode: the shell at its prompt finds
    /// canonical input and echo back.
    fn assert_terminal_cooked(&self) {
        self.send("stty -a | grep -q -e -icanon -e ' -echo ' && echo MODE-RAW || echo MODE-COOKED");
        let modes = self.wait_for("the stty answer", |s| s.lines().any(|l| l.starts_with("MODE-")));
        assert!(modes.lines().any(|l| l.trim_end() == "MODE-COOKED"), "{modes}");
    }

    /// Quits the workbench with Ctrl-D and waits for the shell prompt.
    fn quit_with_ctrl_d(&self) -> String {
        self.keys(&["C-d"]);
        self.wait_for_shell_prompt()
    }
}

impl Drop for Tmux {
    fn drop(&mut self) {
        let _ = Command::new("tmux")
            .args(["-L", &self.socket, "kill-server"])
            .status();
    }
}

struct PendingCommand(Command);

impl PendingCommand {
    fn arg_path(mut self, path: &std::path::Path) -> Self {
        self.0.arg(path);
        self
    }

    fn finish(mut self, args: &[&str]) {
        let status = self.0.args(args).status().expect("tmux runs");
        assert!(status.success(), "tmux failed to start");
    }
}

fn fastrand_suffix() -> u32 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.subsec_nanos())
        .unwrap_or(0)
}

fn shell_quote(text: &str) -> String {
    format!("'{}'", text.replace('\'', "'\\''"))
}

/// Starts the workbench in `tmux`'s shell against `server`, in full-auto, with its
/// configuration, logs and sessions in `home` and `extra` arguments.
fn launch(tmux: &Tmux, home: &TempDir, server: &ScriptedServer, extra: &str) {
    tmux.send("export PS1='$ '");
    tmux.send(&format!(
        "MINIAGENT_CONFIG_DIR={home} MINIAGENT_LOG_DIR={home} MINIAGENT_DATA_DIR={home} MINIAGENT_API_KEY={TEST_KEY} {} --base-url {} --model scripted-model --approval full-auto {extra}",
        shell_quote(env!("CARGO_BIN_EXE_miniagent")),
        server.anthropic_base_url(),
        home = shell_quote(home.path().to_str().unwrap()),
    ));
}

/// Starts the workbench as [`launch`] does (no `extra` arguments), sends `prompt` once its
/// panes are drawn, and waits for `answer` and then for the turn's end (`ready`).
fn launch_and_ask(tmux: &Tmux, home: &TempDir, server: &ScriptedServer, prompt: &str, answer: &str) {
    launch(tmux, home, server, "");
    tmux.wait_for_text("Conversation");
    tmux.send(prompt);
    tmux.wait_for_text(answer);
    tmux.wait_for_text("ready");
}

/// Starts the workbench in `tmux`'s shell against `server` in the default approval mode
/// (ask), with its configuration, logs and sessions in `home`.
fn launch_asking(tmux: &Tmux, home: &TempDir, server: &ScriptedServer) {
    let home = shell_quote(home.path().to_str().unwrap());
    tmux.send("export PS1='$ '");
    tmux.send(&format!(
        "MINIAGENT_CONFIG_DIR={home} MINIAGENT_LOG_DIR={home} MINIAGENT_DATA_DIR={home} MINIAGENT_API_KEY={TEST_KEY} {} --base-url {} --model scripted-model",
        shell_quote(env!("CARGO_BIN_EXE_miniagent")),
        server.anthropic_base_url(),
    ));
}

/// The terminal cursor: `(x, y, visible)`.
fn cursor(tmux: &Tmux) -> (usize, usize, bool) {
    let output = tmux
        .run(&[
            "display",
            "-p",
            "-t",
            "main",
            "#{cursor_x} #{cursor_y} #{cursor_flag}",
        ])
        .0
        .output()
        .expect("tmux runs");
    let text = String::from_utf8_lossy(&output.stdout).into_owned();
    let fields: Vec<usize> = text.split_whitespace().filter_map(|f| f.parse().ok()).collect();
    assert_eq!(fields.len(), 3, "{text}");
    (fields[0], fields[1], fields[2] == 1)
}

/// The numbers after `prefix` on screen (`out-007` → 7).
fn numbers_after(screen: &str, prefix: &str) -> Vec<u32> {
    screen
        .split(prefix)
        .skip(1)
        .filter_map(|rest| {
            let digits: String = rest.chars().take_while(char::is_ascii_digit).collect();
            digits.parse().ok()
        })
        .collect()
}

#[path = "tmux_workbench/bursts.rs"]
mod bursts;
#[path = "tmux_workbench/checkpoints.rs"]
mod checkpoints;
#[path = "tmux_workbench/commands.rs"]
mod commands;
#[path = "tmux_workbench/diff.rs"]
mod diff;
#[path = "tmux_workbench/editing.rs"]
mod editing;
#[path = "tmux_workbench/keys.rs"]
mod keys;
#[path = "tmux_workbench/mentions.rs"]
mod mentions;
#[path = "tmux_workbench/model.rs"]
mod model;
#[path = "tmux_workbench/permissions.rs"]
mod permissions;
#[path = "tmux_workbench/plan.rs"]
mod plan;
#[path = "tmux_workbench/reading.rs"]
mod reading;
#[path = "tmux_workbench/resize.rs"]
mod resize;
#[path = "tmux_workbench/rewind.rs"]
mod rewind;
#[path = "tmux_workbench/screen.rs"]
mod screen;
#[path = "tmux_workbench/sessions.rs"]
mod sessions;
#[path = "tmux_workbench/signals.rs"]
mod signals;
#[path = "tmux_workbench/start.rs"]
mod start;
