//! Opening one connection: starting a stdio server in its own process group (stderr to
//! the log), or reaching an HTTP one, then the `initialize` handshake and the tool list,
//! all within the server's connect timeout.

use std::collections::VecDeque;
use std::io::Write;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use rmcp::model::{ClientCapabilities, ClientConfig, Implementation, ProtocolVersion};
use rmcp::service::{NotificationContext, RoleClient, RunningService, RxJsonRpcMessage, TxJsonRpcMessage};
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use rmcp::transport::{StreamableHttpClientTransport, Transport};
use rmcp::{ClientHandler, ServiceExt};
use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::sync::Notify;
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

use super::config::{HttpKind, McpServerConfig, McpTransport};
use super::sse::LegacySseTransport;

/// The running client side of one connection.
pub(super) type Client = RunningService<RoleClient, ClientEvents>;

/// Variables a stdio server inherits from miniagent; everything else (API keys above
/// all) stays with us unless the server's `env` sets it. The list follows the official
/// MCP SDKs' default environment, plus locale, temp dir, proxies and certificates so
/// `npx`-started servers can still download.
const INHERITED_ENV: &[&str] = &[
    "HOME",
    "LOGNAME",
    "PATH",
    "SHELL",
    "TERM",
    "USER",
    "LANG",
    "LC_ALL",
    "LC_CTYPE",
    "TMPDIR",
    "TZ",
    "XDG_CACHE_HOME",
    "XDG_CONFIG_HOME",
    "XDG_DATA_HOME",
    "XDG_RUNTIME_DIR",
    "HTTP_PROXY",
    "HTTPS_PROXY",
    "NO_PROXY",
    "ALL_PROXY",
    "http_proxy",
    "https_proxy",
    "no_proxy",
    "all_proxy",
    "SSL_CERT_FILE",
    "SSL_CERT_DIR",
    "NODE_EXTRA_CA_CERTS",
];

/// Prefixes of inherited variables (npm's own configuration, e.g. its cache folder).
const INHERITED_ENV_PREFIXES: &[&str] = &["npm_config_", "NPM_CONFIG_"];

/// Stderr lines kept in memory to explain a failure.
const STDERR_TAIL_LINES: usize = 3;
/// Longest stderr line kept in memory (the log file gets all of it).
const STDERR_TAIL_LINE_BYTES: usize = 300;

/// A process group we started; its id is the leader's pid.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct ChildGroup {
    pub pid: u32,
}

impl ChildGroup {
    fn signal(self, signal: i32) {
        let Ok(pgid) = i32::try_from(self.pid) else {
            return;
        };
        // SAFETY: kill(2) has no memory-safety preconditions; a group that is already
        // gone only makes it fail with ESRCH, which is what we want to ignore.
        unsafe {
            libc::kill(-pgid, signal);
        }
    }

    /// KILL to every process of the group, now (used where we cannot wait).
    pub fn kill_now(self) {
        self.signal(libc::SIGKILL);
    }

    /// Whether any process of the group is still running (zombies do not count: they
    /// are dead, only not yet reaped by their parent).
    pub fn alive(self) -> bool {
        let Ok(pgid) = i32::try_from(self.pid) else {
            return false;
        };
        // SAFETY: signal 0 only checks that the group exists; no memory is involved.
        if unsafe { libc::kill(-pgid, 0) } != 0 {
            return false;
        }
        group_has_live_member(pgid)
    }

    /// TERM, up to `grace` for the group to go, then KILL to whatever is left.
    pub async fn terminate(self, grace: Duration) {
        if !self.alive() {
            return;
        }
        self.signal(libc::SIGTERM);
        let deadline = Instant::now() + grace;
        while Instant::now() < deadline {
            tokio::time::sleep(Duration::from_millis(25)).await;
            if !self.alive() {
                return;
            }
        }
        self.kill_now();
    }
}

/// Linux: scans /proc for a non-zombie process in the group.
#[cfg(target_os = "linux")]
fn group_has_live_member(pgid: i32) -> bool {
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return true;
    };
    entries.flatten().any(|entry| {
        let Ok(stat) = std::fs::read_to_string(entry.path().join("stat")) else {
            return false;
        };
        // Fields after the parenthesised command (which may hold spaces): state, ppid, pgrp.
        let Some(rest) = stat.rsplit_once(')').map(|(_, rest)| rest) else {
            return false;
        };
        let mut fields = rest.split_whitespace();
        let state = fields.next();
        let group = fields.nth(1).and_then(|field| field.parse::<i32>().ok());
        group == Some(pgid) && state != Some("Z") && state != Some("X")
    })
}

/// Elsewhere the group answering signal 0 is the best evidence there is.
#[cfg(not(target_os = "linux"))]
fn group_has_live_member(_pgid: i32) -> bool {
    true
}

/// Where one server's stderr and log messages go: appended to the shared log file with
/// the server's name in front, and the last few lines kept to explain failures.
pub(super) struct ServerLog {
    server: String,
    file: Mutex<Option<std::fs::File>>,
    tail: Mutex<VecDeque<String>>,
    /// Replaced by `[redacted]` in the file and the tail.
    secrets: crate::secrets::Secrets,
}

impl ServerLog {
    pub fn new(server: &str, path: Option<&PathBuf>, secrets: crate::secrets::Secrets) -> Self {
        // A log that cannot be opened loses lines but must not stop the server.
        let file = path.and_then(|path| crate::config::private_log(path).ok());
        Self {
            server: miniagent_text::clean(server).into_owned(),
            file: Mutex::new(file),
            tail: Mutex::new(VecDeque::new()),
            secrets,
        }
    }

    pub fn line(&self, line: &str) {
        // The file is read on a terminal. Cleaned before redaction, so controls put
        // inside a secret cannot keep it from being recognised.
        let line = miniagent_text::clean(line.trim_end());
        let line = self.secrets.redact(&line);
        let line = line.as_ref();
        if let Some(file) = lock(&self.file).as_mut() {
            // One write per line so servers sharing the file interleave whole lines.
            let _ = file.write_all(format!("[{}] {line}\n", self.server).as_bytes());
        }
        if line.trim().is_empty() {
            return;
        }
        let mut tail = lock(&self.tail);
        if tail.len() == STDERR_TAIL_LINES {
            tail.pop_front();
        }
        let mut kept = line.trim().to_string();
        if kept.len() > STDERR_TAIL_LINE_BYTES {
            let mut end = STDERR_TAIL_LINE_BYTES;
            while !kept.is_char_boundary(end) {
                end -= 1;
            }
            kept.truncate(end);
            kept.push('…');
        }
        tail.push_back(kept);
    }

    /// The last stderr lines, for a failure reason.
    pub fn tail(&self) -> Option<String> {
        let tail = lock(&self.tail);
        (!tail.is_empty()).then(|| tail.iter().cloned().collect::<Vec<_>>().join(" | "))
    }
}

/// Locks a mutex, recovering the data if a panicking thread poisoned it (every value
/// guarded here stays consistent between statements).
pub(super) fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// Our side of the protocol: no sampling, roots or elicitation; notices a changed tool
/// list so the manager can list the tools again.
pub(super) struct ClientEvents {
    info: ClientConfig,
    tools_changed: Arc<Notify>,
}

impl ClientHandler for ClientEvents {
    fn get_info(&self) -> ClientConfig {
        self.info.clone()
    }

    async fn on_tool_list_changed(&self, _context: NotificationContext<RoleClient>) {
        self.tools_changed.notify_one();
    }
}

/// A transport that reports when it has closed (the server hung up or died), so a lost
/// server turns `Failed` without waiting for the next call.
struct Watched<T> {
    inner: T,
    closed: CancellationToken,
}

impl<T: Transport<RoleClient>> Transport<RoleClient> for Watched<T> {
    type Error = T::Error;

    fn send(
        &mut self,
        item: TxJsonRpcMessage<RoleClient>,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
        self.inner.send(item)
    }

    async fn receive(&mut self) -> Option<RxJsonRpcMessage<RoleClient>> {
        let message = self.inner.receive().await;
        if message.is_none() {
            self.closed.cancel();
        }
        message
    }

    fn close(&mut self) -> impl Future<Output = Result<(), Self::Error>> + Send {
        self.inner.close()
    }
}

impl<T> Drop for Watched<T> {
    fn drop(&mut self) {
        self.closed.cancel();
    }
}

/// A connection that finished its handshake and listed its tools.
pub(super) struct Opened {
    pub client: Client,
    pub tools: Vec<rmcp::model::Tool>,
    /// Cancelled when the transport closes.
    pub closed: CancellationToken,
    pub tools_changed: Arc<Notify>,
}

/// Connects to `config`'s server within its connect timeout. `on_spawn` is called with
/// the process group as soon as a stdio server is started, before any waiting, so the
/// caller can kill it whatever happens next.
pub(super) async fn open(
    config: &McpServerConfig,
    log: &Arc<ServerLog>,
    on_spawn: impl FnOnce(ChildGroup) -> Result<(), String>,
) -> Result<Opened, String> {
    let deadline = Instant::now() + config.connect_timeout;
    let limit = seconds(config.connect_timeout);
    let closed = CancellationToken::new();
    let tools_changed = Arc::new(Notify::new());
    let events = ClientEvents {
        info: client_info(),
        tools_changed: tools_changed.clone(),
    };
    let handshake = match &config.transport {
        McpTransport::Stdio {
            command,
            args,
            env,
            cwd,
        } => {
            let mut child = tokio::process::Command::new(command);
            child
                .args(args)
                .env_clear()
                .envs(inherited_env())
                .envs(env)
                .process_group(0)
                .kill_on_drop(true);
            if let Some(cwd) = cwd {
                child.current_dir(cwd);
            }
            // Our own stdout reader bounds each message (see `bounded`).
            let (transport, pid, stderr) =
                super::bounded::spawn(child).map_err(|err| format!("cannot start `{command}`: {err}"))?;
            on_spawn(ChildGroup { pid })?;
            if let Some(stderr) = stderr {
                let log = log.clone();
                // Drained until the child closes it, so a chatty server never blocks on
                // a full pipe; bytes that are not UTF-8 are kept lossily.
                tokio::spawn(async move {
                    let mut reader = BufReader::new(stderr);
                    let mut line = Vec::new();
                    while let Ok(read) = reader.read_until(b'\n', &mut line).await {
                        if read == 0 {
                            break;
                        }
                        log.line(&String::from_utf8_lossy(&line));
                        line.clear();
                    }
                });
            }
            let transport = Watched {
                inner: transport,
                closed: closed.clone(),
            };
            tokio::time::timeout_at(deadline, events.serve(transport)).await
        }
        McpTransport::Http {
            url,
            headers,
            kind: HttpKind::StreamableHttp,
        } => {
            let transport = StreamableHttpClientTransport::from_config(
                StreamableHttpClientTransportConfig::with_uri(url.as_str())
                    .custom_headers(header_map(headers)?),
            );
            let transport = Watched {
                inner: transport,
                closed: closed.clone(),
            };
            tokio::time::timeout_at(deadline, events.serve(transport)).await
        }
        McpTransport::Http {
            url,
            headers,
            kind: HttpKind::Sse,
        } => {
            let transport =
                tokio::time::timeout_at(deadline, LegacySseTransport::open(url, header_map(headers)?))
                    .await
                    .map_err(|_| format!("the SSE stream announced no endpoint within {limit}"))??;
            let transport = Watched {
                inner: transport,
                closed: closed.clone(),
            };
            tokio::time::timeout_at(deadline, events.serve(transport)).await
        }
    };
    let client = match handshake {
        Ok(Ok(client)) => client,
        Ok(Err(err)) => return Err(describe_init_error(&err)),
        Err(_) => return Err(format!("no answer to `initialize` within {limit}")),
    };
    let tools = match tokio::time::timeout_at(deadline, list_tools(client.peer())).await {
        Ok(Ok(tools)) => tools,
        Ok(Err(ListError::Service(err))) => {
            return Err(format!("listing tools failed: {}", error_chain(&err)));
        }
        Ok(Err(too_many)) => return Err(too_many.to_string()),
        Err(_) => return Err(format!("listing tools took longer than {limit}")),
    };
    Ok(Opened {
        client,
        tools,
        closed,
        tools_changed,
    })
}

/// The most tools (or pages), and bytes of their declarations and page cursors, taken
/// from one server: a server that pages on without end (a new cursor every time, empty
/// pages with huge cursors) would otherwise grow memory until its timeout, page after
/// page of up to 4 MB each.
const MAX_LISTED_TOOLS: usize = 100_000;
const MAX_LISTED_BYTES: usize = 64 * 1024 * 1024;

/// Why a server's tool list was not taken.
#[derive(Debug, thiserror::Error)]
pub(super) enum ListError {
    #[error(transparent)]
    Service(#[from] rmcp::ServiceError),
    #[error(
        "the server listed more than {MAX_LISTED_TOOLS} tools or 64 MB of tool declarations; it is not used"
    )]
    TooMany,
    #[error("the server's tool list repeated a page cursor (it would never end); it is not used")]
    Loop,
}

/// Every page of a server's tool list, bounded (rmcp's `list_all_tools` is not).
pub(super) async fn list_tools(
    peer: &rmcp::service::Peer<RoleClient>,
) -> Result<Vec<rmcp::model::Tool>, ListError> {
    let mut tools = Vec::new();
    let mut bytes = 0usize;
    let mut cursors = std::collections::HashSet::new();
    let mut cursor = None;
    loop {
        let page = peer
            .list_tools(Some(
                rmcp::model::PaginatedRequestParams::default().with_cursor(cursor),
            ))
            .await?;
        for tool in page.tools {
            bytes += serde_json::to_vec(&tool).map_or(0, |json| json.len());
            tools.push(tool);
            if tools.len() > MAX_LISTED_TOOLS || bytes > MAX_LISTED_BYTES {
                return Err(ListError::TooMany);
            }
        }
        cursor = match page.next_cursor {
            None => return Ok(tools),
            Some(next) if !cursors.insert(next.clone()) => return Err(ListError::Loop),
            Some(next) => {
                // The cursors are kept (to see a loop): they count as much as the tools.
                bytes += next.len();
                if bytes > MAX_LISTED_BYTES || cursors.len() > MAX_LISTED_TOOLS {
                    return Err(ListError::TooMany);
                }
                Some(next)
            }
        };
    }
}

/// Who we are in `initialize`. We speak the handshake (not `server/discover`), so we
/// offer the newest protocol version that still has one.
fn client_info() -> ClientConfig {
    ClientConfig::new(
        ClientCapabilities::default(),
        Implementation::new("miniagent", env!("CARGO_PKG_VERSION")),
    )
    .with_protocol_version(ProtocolVersion::LATEST_WITH_INITIALIZE)
}

/// `vars_os`, not `vars`: a variable that is not UTF-8 must not stop a server starting.
fn inherited_env() -> Vec<(std::ffi::OsString, std::ffi::OsString)> {
    inherited_from(std::env::vars_os())
}

/// The variables of `vars` a stdio server inherits.
fn inherited_from(
    vars: impl IntoIterator<Item = (std::ffi::OsString, std::ffi::OsString)>,
) -> Vec<(std::ffi::OsString, std::ffi::OsString)> {
    vars.into_iter()
        .filter(|(name, _)| {
            name.to_str().is_some_and(|name| {
                INHERITED_ENV.contains(&name)
                    || INHERITED_ENV_PREFIXES
                        .iter()
                        .any(|prefix| name.starts_with(prefix))
            })
        })
        .collect()
}

fn header_map(
    headers: &std::collections::BTreeMap<String, String>,
) -> Result<std::collections::HashMap<reqwest::header::HeaderName, reqwest::header::HeaderValue>, String> {
    headers
        .iter()
        .map(|(name, value)| {
            let name = reqwest::header::HeaderName::from_bytes(name.as_bytes())
                .map_err(|_| format!("\"{name}\" is not a valid header name"))?;
            let value = reqwest::header::HeaderValue::from_str(value)
                .map_err(|_| format!("the value of header \"{name}\" is not valid"))?;
            Ok((name, value))
        })
        .collect()
}

fn describe_init_error(err: &rmcp::service::ClientInitializeError) -> String {
    use rmcp::service::ClientInitializeError as Init;
    match err {
        Init::ConnectionClosed(_) => {
            "the server closed the connection before answering `initialize`".to_string()
        }
        Init::TransportError { error, context } => {
            format!("{context} failed: {}", transport_error(error))
        }
        Init::JsonRpcError(error) => format!("the server refused `initialize`: {}", error.message),
        other => format!("`initialize` failed: {other}"),
    }
}

/// What went wrong in a transport, without rmcp's wrapper type names. The streamable
/// HTTP client keeps reqwest's error as a value rather than a source, so it is dug out
/// to reach the cause that matters ("Connection refused").
pub(super) fn transport_error(error: &rmcp::transport::DynamicTransportError) -> String {
    use rmcp::transport::streamable_http_client::StreamableHttpError;
    let inner: &(dyn std::error::Error + 'static) = error.error.as_ref();
    match inner.downcast_ref::<StreamableHttpError<reqwest::Error>>() {
        Some(StreamableHttpError::Client(http)) => error_chain(http),
        _ => error_chain(inner),
    }
}

/// An error and its sources on one line ("error sending request: connection refused").
pub(super) fn error_chain(err: &(dyn std::error::Error + 'static)) -> String {
    crate::llm::error_chain(err)
}

/// "2 s", "1.5 s": a duration as people write it in messages.
pub(super) fn seconds(duration: Duration) -> String {
    let secs = duration.as_secs_f64();
    if secs.fract() == 0.0 {
        format!("{secs:.0} s")
    } else {
        format!("{secs:.1} s")
    }
}

#[cfg(test)]
mod env_tests {
    use super::*;

    #[test]
    fn a_stdio_server_inherits_no_key_and_no_socket_variable() {
        let vars = [
            ("PATH", "/usr/bin"),
            ("HOME", "/root"),
            ("npm_config_cache", "/c"),
            ("MINIAGENT_API_KEY", "sk-a"),
            ("ANTHROPIC_API_KEY", "sk-b"),
            ("OPENAI_API_KEY", "sk-c"),
            ("MINIMAX_API_KEY", "sk-d"),
            ("MY_OWN_KEY_VAR", "sk-e"),
            ("TMUX", "/tmp/tmux-0/default,1,0"),
            ("SSH_AUTH_SOCK", "/tmp/agent"),
            ("DOCKER_HOST", "unix:///var/run/docker.sock"),
        ]
        .map(|(name, value)| (name.into(), value.into()));
        let kept: Vec<String> = inherited_from(vars)
            .into_iter()
            .map(|(name, _)| name.to_string_lossy().into_owned())
            .collect();
        assert_eq!(kept, ["PATH", "HOME", "npm_config_cache"]);
    }
}
