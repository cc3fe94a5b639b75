//! What the MCP tests share: the pinned npm packages and a once-per-binary download of
//! them, state and process inspection, and an everything server over HTTP.

use std::path::Path;
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant};

use miniagent_core::tools::mcp::{McpConfig, McpManager, McpServerState, McpStateCallback, parse_config};
use miniagent_core::tools::paths::Workspace;
use miniagent_core::tools::{OutputSink, Tool, ToolContext, ToolOutput};
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

pub const EVERYTHING: &str = "@modelcontextprotocol/server-everything@2026.8.31";
pub const FILESYSTEM: &str = "@modelcontextprotocol/server-filesystem@2026.8.31";

/// The everything server's tools, as it names them.
pub const EVERYTHING_TOOLS: &[&str] = &[
    "echo",
    "get-annotated-message",
    "get-env",
    "get-resource-links",
    "get-resource-reference",
    "get-structured-content",
    "get-sum",
    "get-tiny-image",
    "gzip-file-as-resource",
    "toggle-simulated-logging",
    "toggle-subscriber-updates",
    "trigger-long-running-operation",
    "simulate-research-query",
];

/// Generous: on a fresh machine a connect may still be finishing npm's work.
pub const READY_TIMEOUT: Duration = Duration::from_secs(120);

/// Downloads both packages into npm's cache, once per test binary, before any test
/// starts a server: parallel first-time `npx` runs of one package race in its cache.
pub async fn warm_npm_cache() {
    static WARM: OnceLock<()> = OnceLock::new();
    tokio::task::spawn_blocking(|| {
        WARM.get_or_init(|| {
            let installs: Vec<_> = [EVERYTHING, FILESYSTEM]
                .into_iter()
                .map(|package| {
                    std::thread::spawn(move || {
                        // `-p` installs into the same npx cache entry `npx <package>` uses.
                        let output = std::process::Command::new("npx")
                            .args(["-y", "--prefer-offline", "-p", package, "--", "node", "-e", "0"])
                            .stdin(std::process::Stdio::null())
                            .output()
                            .expect("npx must be installed (Node.js) to run the MCP tests");
                        assert!(
                            output.status.success(),
                            "installing {package} failed: {}",
                            String::from_utf8_lossy(&output.stderr)
                        );
                    })
                })
                .collect();
            for install in installs {
                install.join().expect("npm install thread");
            }
        });
    })
    .await
    .expect("warming npm's cache");
}

pub fn npx(package: &str, extra: &[&str]) -> Value {
    let mut args = vec!["-y", "--prefer-offline", package];
    args.extend(extra);
    json!({"command": "npx", "args": args, "connect_timeout": READY_TIMEOUT.as_secs()})
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

/// The everything server in an HTTP mode, as the test's own child in its own process
/// group; killed with the group when dropped.
pub struct HttpServer {
    child: std::process::Child,
    pub port: u16,
}

impl HttpServer {
    pub async fn start(mode: &str) -> HttpServer {
        use std::os::unix::process::CommandExt;
        warm_npm_cache().await;
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let child = std::process::Command::new("npx")
            .args(["-y", "--prefer-offline", EVERYTHING, mode])
            .env("PORT", port.to_string())
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .process_group(0)
            .spawn()
            .unwrap();
        let mut server = HttpServer { child, port };
        let deadline = Instant::now() + READY_TIMEOUT;
        while tokio::net::TcpStream::connect(("127.0.0.1", port)).await.is_err() {
            assert!(
                server.child.try_wait().unwrap().is_none(),
                "the {mode} server exited"
            );
            assert!(Instant::now() < deadline, "the {mode} server never listened");
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        server
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
