//! What the MCP tests share: the test server this repository builds
//! (`tests/mcp-server`, rmcp's server side), state and process inspection, and the
//! server over HTTP. The reference server from npm is `mcp_interop`'s alone.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant};

use miniagent_core::tools::mcp::{McpConfig, McpManager, McpServerState, McpStateCallback, parse_config};
use miniagent_core::tools::paths::Workspace;
use miniagent_core::tools::{OutputSink, Tool, ToolContext, ToolOutput};
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

/// The test server's tools, as it lists them.
pub const TOOLS: &[&str] = &[
    "echo", "add", "image", "resource", "env", "args", "header", "fail", "sleep", "huge",
];

/// Generous: a loaded machine may take a while to start a process.
pub const READY_TIMEOUT: Duration = Duration::from_secs(60);

/// The test server's binary. The suite's own build leaves it out (see the root
/// Cargo.toml), so the first test to need it builds it, once per test run, with the
/// cargo that runs the tests; later runs find it built.
pub fn server_binary() -> &'static Path {
    static BINARY: OnceLock<PathBuf> = OnceLock::new();
    BINARY.get_or_init(|| {
        let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
        let output = std::process::Command::new(cargo)
            // `--locked`: the outer cargo has settled Cargo.lock; this one must not touch it.
            .args(["build", "--locked", "--package", "miniagent-mcp-test-server"])
            .args([
                "--bin",
                "miniagent-mcp-test-server",
                "--message-format=json-render-diagnostics",
            ])
            .current_dir(env!("CARGO_MANIFEST_DIR"))
            .stdin(std::process::Stdio::null())
            .stderr(std::process::Stdio::inherit())
            .output()
            .expect("cargo runs");
        assert!(output.status.success(), "building the MCP test server failed");
        // The artifact's path from cargo itself: right whatever the target folder.
        String::from_utf8_lossy(&output.stdout)
            .lines()
            .filter_map(|line| serde_json::from_str::<Value>(line).ok())
            .find(|message| message["target"]["name"] == "miniagent-mcp-test-server")
            .and_then(|message| message["executable"].as_str().map(PathBuf::from))
            .expect("cargo names the test server's binary")
    })
}

/// A stdio entry of `mcp.json` for the test server with `args`.
pub fn server(args: &[&str]) -> Value {
    json!({"command": server_binary(), "args": args, "connect_timeout": READY_TIMEOUT.as_secs()})
}

pub fn config(servers: Value) -> McpConfig {
    parse_config(&json!({ "mcpServers": servers }).to_string(), "test.json").unwrap()
}

/// Every state change, per server, in the order reported.
#[derive(Clone, Default)]
pub struct Recorder(Arc<Mutex<Vec<(String, McpServerState)>>>);

impl Recorder {
    pub fn callback(&self) -> McpStateCallback {
        let seen = self.0.clone();
        Arc::new(move |server, state| seen.lock().unwrap().push((server.to_string(), state.clone())))
    }

    pub fn of(&self, server: &str) -> Vec<McpServerState> {
        let seen = self.0.lock().unwrap();
        seen.iter()
            .filter(|(name, _)| name == server)
            .map(|(_, state)| state.clone())
            .collect()
    }
}

pub fn state_of(manager: &McpManager, server: &str) -> McpServerState {
    manager
        .states()
        .into_iter()
        .find(|(name, _)| name == server)
        .map(|(_, state)| state)
        .unwrap_or_else(|| panic!("no server {server}"))
}

/// Waits until `server` has left `Connecting` (or the predicate holds) and returns its state.
pub async fn settle(manager: &McpManager, server: &str) -> McpServerState {
    let deadline = Instant::now() + READY_TIMEOUT;
    loop {
        let state = state_of(manager, server);
        if state != McpServerState::Connecting || Instant::now() > deadline {
            return state;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

pub async fn wait_for(what: &str, mut done: impl FnMut() -> bool) {
    let deadline = Instant::now() + Duration::from_secs(10);
    while !done() {
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// Ready with `tools` (names as the server spells them, all already safe), listed as the
/// model calls them: `mcp__<prefix>__<tool>`.
pub fn ready(prefix: &str, tools: &[&str]) -> McpServerState {
    McpServerState::Ready {
        tools: tools
            .iter()
            .map(|tool| format!("mcp__{prefix}__{tool}"))
            .collect(),
    }
}

pub fn context(dir: &Path) -> ToolContext {
    ToolContext {
        workspace: Arc::new(Workspace::new(dir, &[])),
        cancel: CancellationToken::new(),
        output: OutputSink::discard(),
        approval: miniagent_core::config::ApprovalMode::FullAuto,
        unasked: false,
        sub_agents: None,
        save_to: None,
    }
}

pub fn tool(manager: &McpManager, name: &str) -> Arc<dyn Tool> {
    manager
        .tools()
        .into_iter()
        .find(|tool| tool.name() == name)
        .unwrap_or_else(|| panic!("no tool {name}"))
}

pub async fn call(manager: &McpManager, name: &str, arguments: Value, dir: &Path) -> ToolOutput {
    tool(manager, name).run(arguments, context(dir)).await
}

/// Every process in process group `pgid` (zombies included).
pub fn group_members(pgid: u32) -> Vec<u32> {
    let mut members = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(pid) = entry.file_name().to_string_lossy().parse::<u32>() else {
            continue;
        };
        let Ok(stat) = std::fs::read_to_string(entry.path().join("stat")) else {
            continue;
        };
        let rest = stat.rsplit_once(')').unwrap().1;
        let group: u32 = rest.split_whitespace().nth(2).unwrap().parse().unwrap();
        if group == pgid {
            members.push(pid);
        }
    }
    members
}

/// Running: /proc has it and it is not a zombie (dead, only not yet reaped).
pub fn running(pid: u32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Ok(stat) => {
            let state = stat
                .rsplit_once(')')
                .unwrap()
                .1
                .split_whitespace()
                .next()
                .unwrap();
            state != "Z" && state != "X"
        }
        Err(_) => false,
    }
}

/// Pids whose command line is exactly `args`.
pub fn pids_running(args: &[&str]) -> Vec<u32> {
    let wanted: Vec<u8> = args
        .iter()
        .flat_map(|arg| [arg.as_bytes(), b"\0"].concat())
        .collect();
    std::fs::read_dir("/proc")
        .unwrap()
        .flatten()
        .filter_map(|entry| entry.file_name().to_string_lossy().parse::<u32>().ok())
        .filter(|pid| std::fs::read(format!("/proc/{pid}/cmdline")).is_ok_and(|line| line == wanted))
        .filter(|pid| running(*pid))
        .collect()
}

/// The test server over HTTP (`transport` is `http` or `sse`), as the test's own child
/// in its own process group; killed with the group when dropped.
pub struct HttpServer {
    child: std::process::Child,
    /// `http://127.0.0.1:<port>`, as the server said it listens.
    pub base: String,
}

impl HttpServer {
    pub async fn start(transport: &str) -> HttpServer {
        use std::io::BufRead;
        use std::os::unix::process::CommandExt;
        let mut child = std::process::Command::new(server_binary())
            .args(["--transport", transport])
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::null())
            .process_group(0)
            .spawn()
            .unwrap();
        let stdout = child.stdout.take().unwrap();
        // It names its port on its first line: no port is chosen here and then raced for.
        let line = tokio::task::spawn_blocking(move || {
            let mut line = String::new();
            std::io::BufReader::new(stdout).read_line(&mut line).map(|_| line)
        });
        let line = tokio::time::timeout(READY_TIMEOUT, line)
            .await
            .unwrap()
            .unwrap()
            .unwrap();
        let base = line
            .trim()
            .strip_prefix("listening on ")
            .unwrap_or_else(|| panic!("the {transport} server said {line:?}"))
            .to_string();
        HttpServer { child, base }
    }
}
impl Drop for HttpServer {
    fn drop(&mut self) {
        // SAFETY: kill(2) on our own child's process group; no memory is involved.
        unsafe {
            libc::kill(-(self.child.id() as i32), libc::SIGKILL);
        }
        let _ = self.child.wait();
    }
}
