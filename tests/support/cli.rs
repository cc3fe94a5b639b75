//! Runs the `miniagent` binary isolated from the machine: its own config and data folders
//! (so sessions are recorded in a temporary folder), the test key, no standard input.

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use super::harness::TEST_KEY;
use super::{ScriptedServer, TempDir};

/// A `miniagent` command whose config and data folders are `home`.
pub fn miniagent(home: &TempDir) -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_miniagent"));
    for (name, _) in std::env::vars() {
        if name.starts_with("MINIAGENT_") || name.ends_with("_API_KEY") || name == "NO_COLOR" {
            command.env_remove(name);
        }
    }
    command
        .env("MINIAGENT_CONFIG_DIR", home.path())
        .env("MINIAGENT_DATA_DIR", home.path())
        .env("MINIAGENT_LOG_DIR", home.path())
        .env("MINIAGENT_API_KEY", TEST_KEY)
        .env("XDG_CACHE_HOME", home.join("cache"))
        .stdin(Stdio::null());
    command
}

/// [`miniagent`] in `workspace` against `server`'s Anthropic endpoint.
pub fn against(home: &TempDir, workspace: &TempDir, server: &ScriptedServer) -> Command {
    let mut command = miniagent(home);
    command.arg("--workspace").arg(workspace.path()).args([
        "--base-url",
        &server.anthropic_base_url(),
        "--model",
        "scripted-model",
    ]);
    command
}

/// `miniagent exec --approval full-auto ARGS…` in `workspace` against `server`'s
/// Anthropic endpoint, ready to run or spawn.
pub fn exec_command(home: &TempDir, workspace: &TempDir, server: &ScriptedServer, args: &[&str]) -> Command {
    let mut command = against(home, workspace, server);
    command.arg("exec").args(["--approval", "full-auto"]).args(args);
    command
}

/// [`exec_command`], run to its end.
pub fn exec(home: &TempDir, workspace: &TempDir, server: &ScriptedServer, args: &[&str]) -> Output {
    exec_command(home, workspace, server, args)
        .output()
        .expect("miniagent runs")
}

/// The session logs recorded under `home`, oldest first.
pub fn session_logs(home: &TempDir) -> Vec<PathBuf> {
    let dir = home.join("sessions");
    let mut logs: Vec<PathBuf> = std::fs::read_dir(&dir)
        .map(|entries| {
            entries
                .filter_map(Result::ok)
                .map(|entry| entry.path())
                .filter(|path| path.extension().is_some_and(|ext| ext == "jsonl"))
                .collect()
        })
        .unwrap_or_default();
    logs.sort();
    logs
}

/// A session's id: its log's file name without `.jsonl`.
pub fn session_id(log: &Path) -> String {
    log.file_stem()
        .and_then(|s| s.to_str())
        .unwrap_or_default()
        .to_string()
}

/// Text of captured output.
pub fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}
