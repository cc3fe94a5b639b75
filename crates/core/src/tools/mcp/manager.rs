//! The servers of a session: connecting them in the background, keeping their state,
//! routing tool calls, reconnecting and shutting them down.

use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures_util::future::BoxFuture;
use rmcp::model::CallToolRequestParams;
use rmcp::service::ServiceError;
use serde_json::Value;
use tokio::task::{AbortHandle, JoinHandle};
use tokio_util::sync::CancellationToken;

use super::McpServerState;
use super::config::{McpConfig, McpServerConfig};
use super::connect::{self, ChildGroup, Client, ServerLog, error_chain, lock, seconds, transport_error};
use super::deferred::{Deferral, Deferred, SearchTool, ServerTools, ToolShare};
use super::tool::{McpTool, Taken, ToolServer, format_result, server_prefixes, tool_names, unique_name};
use crate::tools::{McpControl, Tool, ToolContext, ToolOutput, ToolSource};

/// Called with a server's name and its new state, from whichever task changed it. It
/// may look at the manager (`states`, `tools`) but should return quickly.
pub type McpStateCallback = Arc<dyn Fn(&str, &McpServerState) + Send + Sync>;

/// How long a stopping server gets between TERM and KILL.
const STOP_GRACE: Duration = Duration::from_millis(1500);
/// How long a server that lost its stdin gets to exit on its own before TERM.
const STDIN_CLOSE_GRACE: Duration = Duration::from_millis(300);

/// Connected (or connecting) MCP servers. Cloning shares them; when the last handle is
/// dropped without [`McpManager::shutdown`], every server process group is killed.
#[derive(Clone)]
pub struct McpManager {
    inner: Arc<ManagerInner>,
}

struct ManagerInner {
    slots: Vec<Arc<ServerSlot>>,
    closed: AtomicBool,
    /// Woken at every state change of any server.
    changed: Arc<tokio::sync::Notify>,
    /// Which servers' tools stay out of the requests, and the ones searches found.
    deferral: Mutex<Deferral>,
}

/// One configured server and whatever connection it has now.
pub(super) struct ServerSlot {
    pub config: McpServerConfig,
    /// `<prefix>` of its tools' `mcp__<prefix>__<tool>` names: its name made safe, and
    /// unique among the servers (`a.b` and `a_b` both make `a_b`; the second is `a_b_2`).
    prefix: String,
    stderr_log: Option<PathBuf>,
    /// The configuration's secret values, kept out of `stderr_log`.
    secrets: crate::secrets::Secrets,
    on_state: McpStateCallback,
    inner: Mutex<SlotInner>,
    /// Held while reporting, so callbacks arrive in the order the states were set.
    reporting: Mutex<()>,
}

struct SlotInner {
    state: McpServerState,
    /// Bumped by every (re)connect and by shutdown; work started for an older
    /// generation finds it changed and gives up.
    generation: u64,
    closed: bool,
    connecting: Option<AbortHandle>,
    child: Option<ChildGroup>,
    live: Option<Live>,
    tools: Vec<Arc<McpTool>>,
}

/// A ready connection.
struct Live {
    client: Arc<Client>,
    log: Arc<ServerLog>,
    closed: CancellationToken,
    watcher: AbortHandle,
}

/// What a stopped connection leaves to clean up.
#[derive(Default)]
struct Leftovers {
    connecting: Option<AbortHandle>,
    child: Option<ChildGroup>,
    live: Option<Live>,
}

impl Leftovers {
    /// Stops everything at once, for places that cannot wait (Drop, failures).
    fn kill_now(self) {
        if let Some(task) = self.connecting {
            task.abort();
        }
        if let Some(live) = self.live {
            live.watcher.abort();
            live.client.cancellation_token().cancel();
        }
        if let Some(child) = self.child {
            child.kill_now();
        }
    }

    /// Closes the connection (a stdio server sees its stdin end), then TERM and KILL
    /// to the process group if it has not gone by itself.
    async fn stop(self) {
        if let Some(task) = self.connecting {
            task.abort();
        }
        if let Some(live) = self.live {
            live.watcher.abort();
            live.client.cancellation_token().cancel();
        }
        if let Some(child) = self.child {
            let deadline = tokio::time::Instant::now() + STDIN_CLOSE_GRACE;
            while child.alive() && tokio::time::Instant::now() < deadline {
                tokio::time::sleep(Duration::from_millis(25)).await;
            }
            child.terminate(STOP_GRACE).await;
        }
    }
}

/// Why an MCP server could not be connected again.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ReconnectError {
    #[error("there is no MCP server named `{0}`")]
    NoSuchServer(String),
    #[error("MCP server `{0}` is disabled in the configuration")]
    Disabled(String),
    #[error("the MCP servers were shut down")]
    ShutDown,
    #[error("MCP server `{0}` was reconnected or shut down meanwhile")]
    Superseded(String),
    /// The connection failed; the reason is the server's state's.
    #[error("{0}")]
    Failed(String),
    #[error("MCP server `{server}` is {state}")]
    NotReady { server: String, state: String },
}

impl McpManager {
    /// Starts connecting every enabled server concurrently in the background and returns
    /// at once; must be called inside a tokio runtime (without one, every server fails).
    /// `on_state(server, state)` is called on every state change, from any task.
    ///
    /// Stdio servers get stdin/stdout as the protocol, stderr appended to `stderr_log`
    /// (each line prefixed with `[server]`, the configuration's secret values replaced by
    /// `[redacted]`; never the terminal), their own process
    /// group, and only a few of miniagent's environment variables (`PATH`, `HOME`,
    /// locale, proxies, certificates, `npm_config_*`) plus their configured `env`.
    pub fn start(config: McpConfig, stderr_log: Option<PathBuf>, on_state: McpStateCallback) -> McpManager {
        let runtime = tokio::runtime::Handle::try_current();
        let changed = Arc::new(tokio::sync::Notify::new());
        let on_state: McpStateCallback = {
            let changed = changed.clone();
            Arc::new(move |server: &str, state: &McpServerState| {
                on_state(server, state);
                changed.notify_waiters();
            })
        };
        // A server may print its own token (in its environment or headers) to stderr.
        let secrets = crate::secrets::Secrets::new(config.secret_values());
        let names: Vec<&str> = config.servers.iter().map(|server| server.name.as_str()).collect();
        let prefixes = server_prefixes(&names);
        let slots: Vec<Arc<ServerSlot>> = config
            .servers
            .into_iter()
            .zip(prefixes)
            .map(|(config, prefix)| {
                Arc::new(ServerSlot {
                    inner: Mutex::new(SlotInner {
                        state: if config.disabled {
                            McpServerState::Disabled
                        } else {
                            McpServerState::Connecting
                        },
                        generation: 0,
                        closed: false,
                        connecting: None,
                        child: None,
                        live: None,
                        tools: Vec::new(),
                    }),
                    config,
                    prefix,
                    stderr_log: stderr_log.clone(),
                    secrets: secrets.clone(),
                    on_state: on_state.clone(),
                    reporting: Mutex::new(()),
                })
            })
            .collect();
        for slot in &slots {
            let state = lock(&slot.inner).state.clone();
            slot.report(&state);
            if slot.config.disabled {
                continue;
            }
            match &runtime {
                Ok(runtime) => {
                    let task = runtime.spawn(slot.clone().connect(0));
                    let mut inner = lock(&slot.inner);
                    if inner.generation == 0 && !task.is_finished() {
                        inner.connecting = Some(task.abort_handle());
                    }
                }
                Err(_) => slot.fail(0, "MCP servers need a tokio runtime to run in".to_string()),
            }
        }
        McpManager {
            inner: Arc::new(ManagerInner {
                slots,
                closed: AtomicBool::new(false),
                changed,
                deferral: Mutex::new(Deferral::default()),
            }),
        }
    }

    /// Tools of the servers ready now, in configuration order, as the model is offered
    /// them; names are unique. Past the share given to [`Self::share_tools`], the largest
    /// servers' tools are left out but for those the model found with the search tool,
    /// which is offered then.
    pub fn tools(&self) -> Vec<Arc<dyn Tool>> {
        let servers = self.server_tools();
        let plan = lock(&self.inner.deferral).plan(&servers);
        let offered = servers
            .iter()
            .enumerate()
            .filter(|(index, _)| !plan.deferred.contains(index))
            .flat_map(|(_, server)| server.tools.iter())
            .chain(plan.found.iter());
        let mut taken = Taken::default();
        let mut tools: Vec<Arc<dyn Tool>> = Vec::new();
        for tool in offered {
            let name = unique_name(tool.name(), &mut taken);
            if name == tool.name() {
                tools.push(tool.clone());
            } else {
                // Names of two servers that meet all the same (`a` with a tool `b__c`,
                // `a__b` with a tool `c`): the later one gets a suffix rather than
                // hiding the first.
                tools.push(Arc::new(tool.renamed(name)));
            }
        }
        if !plan.deferred.is_empty() {
            let deferred: Vec<(String, usize)> = plan
                .deferred
                .iter()
                .map(|index| (servers[*index].name.clone(), servers[*index].tools.len()))
                .collect();
            tools.push(Arc::new(SearchTool::new(&deferred, Arc::new(self.clone()))));
        }
        tools
    }

    /// Limits what the MCP tools may take of every request ([`ToolShare`]); without it
    /// every tool is offered.
    pub fn share_tools(&self, share: ToolShare) {
        lock(&self.inner.deferral).set_share(share);
    }

    /// A tool by the name the model calls it, offered now or deferred.
    pub fn find(&self, name: &str) -> Option<Arc<dyn Tool>> {
        if let Some(tool) = self.tools().into_iter().find(|tool| tool.name() == name) {
            return Some(tool);
        }
        self.server_tools()
            .into_iter()
            .flat_map(|server| server.tools)
            .find(|tool| tool.name() == name)
            .map(|tool| tool as Arc<dyn Tool>)
    }

    /// Every server's tools as they are now, in configuration order.
    fn server_tools(&self) -> Vec<ServerTools> {
        self.inner
            .slots
            .iter()
            .map(|slot| ServerTools {
                name: slot.config.name.clone(),
                tools: lock(&slot.inner).tools.clone(),
            })
            .collect()
    }

    /// Every configured server and its state, in configuration order.
    pub fn states(&self) -> Vec<(String, McpServerState)> {
        self.inner
            .slots
            .iter()
            .map(|slot| (slot.config.name.clone(), lock(&slot.inner).state.clone()))
            .collect()
    }

    /// The servers still connecting, with their connect timeouts.
    pub fn connecting(&self) -> Vec<(String, Duration)> {
        self.inner
            .slots
            .iter()
            .filter(|slot| matches!(lock(&slot.inner).state, McpServerState::Connecting))
            .map(|slot| (slot.config.name.clone(), slot.config.connect_timeout))
            .collect()
    }

    /// Returns once no server is connecting (each is ready, failed or disabled), or after
    /// `limit`. A server's own attempt gives up at its connect timeout, so a limit a
    /// little over the longest one is only a backstop.
    pub async fn settled(&self, limit: Duration) {
        let deadline = tokio::time::Instant::now() + limit;
        loop {
            let changed = self.inner.changed.notified();
            tokio::pin!(changed);
            // Registered before looking, so a change in between is not missed.
            changed.as_mut().enable();
            if self.connecting().is_empty() {
                return;
            }
            tokio::select! {
                _ = changed => {}
                _ = tokio::time::sleep_until(deadline) => return,
            }
        }
    }

    /// Drops the server's connection (killing its child) and connects again; returns
    /// once the new connection is ready, or why it failed.
    pub async fn reconnect(&self, server: &str) -> Result<(), ReconnectError> {
        let slot = self
            .inner
            .slots
            .iter()
            .find(|slot| slot.config.name == server)
            .ok_or_else(|| ReconnectError::NoSuchServer(server.to_string()))?
            .clone();
        if slot.config.disabled {
            return Err(ReconnectError::Disabled(server.to_string()));
        }
        if self.inner.closed.load(Ordering::SeqCst) {
            return Err(ReconnectError::ShutDown);
        }
        let (generation, leftovers) = {
            let mut inner = lock(&slot.inner);
            inner.generation += 1;
            inner.tools.clear();
            inner.state = McpServerState::Connecting;
            (inner.generation, take_leftovers(&mut inner))
        };
        slot.report(&McpServerState::Connecting);
        leftovers.stop().await;
        let task: JoinHandle<()> = tokio::spawn(slot.clone().connect(generation));
        {
            let mut inner = lock(&slot.inner);
            if inner.generation == generation && !task.is_finished() {
                inner.connecting = Some(task.abort_handle());
            }
        }
        // Only this call's attempt counts; a later reconnect makes it moot.
        let _ = task.await;
        let inner = lock(&slot.inner);
        if inner.generation != generation {
            return Err(ReconnectError::Superseded(server.to_string()));
        }
        match &inner.state {
            McpServerState::Ready { .. } => Ok(()),
            McpServerState::Failed { reason } => Err(ReconnectError::Failed(reason.clone())),
            other => Err(ReconnectError::NotReady {
                server: server.to_string(),
                state: other.to_string(),
            }),
        }
    }

    /// Shuts every server down: connections closed, then TERM and, after a short grace,
    /// KILL to each stdio server's process group, so no child is left running.
    pub async fn shutdown(&self) {
        self.inner.closed.store(true, Ordering::SeqCst);
        let stops = self.inner.slots.iter().map(|slot| {
            let leftovers = slot.close();
            leftovers.stop()
        });
        futures_util::future::join_all(stops).await;
    }

    /// The pids of the stdio servers started and not yet stopped (each leads its own
    /// process group).
    pub fn child_pids(&self) -> Vec<u32> {
        self.inner
            .slots
            .iter()
            .filter_map(|slot| lock(&slot.inner).child.map(|child| child.pid))
            .collect()
    }
}

impl ToolSource for McpManager {
    fn tools(&self) -> Vec<Arc<dyn Tool>> {
        McpManager::tools(self)
    }

    fn find(&self, name: &str) -> Option<Arc<dyn Tool>> {
        McpManager::find(self, name)
    }
}

impl Deferred for McpManager {
    fn search(&self, query: &str, limit: usize) -> ToolOutput {
        let servers = self.server_tools();
        lock(&self.inner.deferral).search(&servers, query, limit)
    }
}

impl McpControl for McpManager {
    fn connecting(&self) -> Vec<(String, Duration)> {
        McpManager::connecting(self)
    }

    fn settled(&self, limit: Duration) -> BoxFuture<'static, ()> {
        let manager = self.clone();
        Box::pin(async move { McpManager::settled(&manager, limit).await })
    }

    fn reconnect(&self, server: String) -> BoxFuture<'static, Result<(), ReconnectError>> {
        let manager = self.clone();
        Box::pin(async move { McpManager::reconnect(&manager, &server).await })
    }

    fn shutdown(&self) -> BoxFuture<'static, ()> {
        let manager = self.clone();
        Box::pin(async move { McpManager::shutdown(&manager).await })
    }
}

impl Drop for ManagerInner {
    fn drop(&mut self) {
        // Best effort without an await: KILL now rather than leave servers running.
        for slot in &self.slots {
            slot.close().kill_now();
        }
    }
}

fn take_leftovers(inner: &mut SlotInner) -> Leftovers {
    Leftovers {
        connecting: inner.connecting.take(),
        child: inner.child.take(),
        live: inner.live.take(),
    }
}

impl ToolServer for ServerSlot {
    fn config(&self) -> &McpServerConfig {
        &self.config
    }

    fn call<'a>(
        &'a self,
        tool: &'a str,
        arguments: Value,
        context: ToolContext,
    ) -> BoxFuture<'a, ToolOutput> {
        Box::pin(ServerSlot::call(self, tool, arguments, context))
    }
}

impl ServerSlot {
    fn report(&self, state: &McpServerState) {
        let _order = lock(&self.reporting);
        (self.on_state)(&self.config.name, state);
    }

    /// Sets `state` if `generation` is still current, then reports it (outside the state
    /// lock, so the callback may look at the manager).
    fn set_state(&self, generation: u64, state: McpServerState) -> bool {
        let _order = lock(&self.reporting);
        {
            let mut inner = lock(&self.inner);
            if inner.generation != generation || inner.closed {
                return false;
            }
            if inner.state == state {
                return true;
            }
            inner.state = state.clone();
        }
        (self.on_state)(&self.config.name, &state);
        true
    }

    /// Marks the connection of `generation` failed and kills what is left of it.
    fn fail(&self, generation: u64, reason: String) {
        let leftovers = {
            let mut inner = lock(&self.inner);
            if inner.generation != generation || inner.closed {
                return;
            }
            // The first report of a loss wins; a call failing on the same dead
            // connection later has nothing to add.
            if inner.live.is_none() && matches!(inner.state, McpServerState::Failed { .. }) {
                return;
            }
            inner.tools.clear();
            take_leftovers(&mut inner)
        };
        // This may abort the very task running it (the connect task or the watcher);
        // that only takes effect at its next await, and none follows.
        leftovers.kill_now();
        self.set_state(generation, McpServerState::Failed { reason });
    }

    /// Ends the slot for good (shutdown or drop) and returns what must be stopped.
    fn close(&self) -> Leftovers {
        let (leftovers, changed) = {
            let mut inner = lock(&self.inner);
            if inner.closed {
                return Leftovers::default();
            }
            inner.closed = true;
            inner.generation += 1;
            inner.tools.clear();
            let changed = !matches!(inner.state, McpServerState::Disabled);
            if changed {
                inner.state = McpServerState::Failed {
                    reason: "shut down".to_string(),
                };
            }
            (take_leftovers(&mut inner), changed)
        };
        if changed {
            self.report(&McpServerState::Failed {
                reason: "shut down".to_string(),
            });
        }
        leftovers
    }

    /// One connection attempt for `generation`, ending `Ready` or `Failed`.
    async fn connect(self: Arc<Self>, generation: u64) {
        if !self.set_state(generation, McpServerState::Connecting) {
            return;
        }
        let log = Arc::new(ServerLog::new(
            &self.config.name,
            self.stderr_log.as_ref(),
            self.secrets.clone(),
        ));
        let opened = connect::open(&self.config, &log, |child| {
            let mut inner = lock(&self.inner);
            if inner.generation != generation || inner.closed {
                child.kill_now();
                return Err("superseded by a newer connection".to_string());
            }
            inner.child = Some(child);
            Ok(())
        })
        .await;
        let opened = match opened {
            Ok(opened) => opened,
            Err(reason) => {
                self.fail(generation, with_stderr(reason, &log));
                return;
            }
        };
        let (tools, state) = self.build_tools(&opened.tools);
        let client = Arc::new(opened.client);
        let _order = lock(&self.reporting);
        {
            let mut inner = lock(&self.inner);
            if inner.generation != generation || inner.closed {
                // Superseded while connecting: whoever bumped the generation owns the
                // cleanup of the child; the client closes here.
                client.cancellation_token().cancel();
                return;
            }
            // Spawned under the lock so a server that dies at once is seen as ready
            // first and failed second, never the other way round.
            let watcher = tokio::spawn(self.clone().watch(
                generation,
                client.clone(),
                opened.closed.clone(),
                opened.tools_changed,
                log.clone(),
            ));
            inner.live = Some(Live {
                client,
                log,
                closed: opened.closed,
                watcher: watcher.abort_handle(),
            });
            inner.tools = tools;
            inner.connecting = None;
            inner.state = state.clone();
        }
        (self.on_state)(&self.config.name, &state);
    }

    /// Follows a ready connection: a closed transport makes the server `Failed`; a
    /// changed tool list is listed again.
    async fn watch(
        self: Arc<Self>,
        generation: u64,
        client: Arc<Client>,
        closed: CancellationToken,
        tools_changed: Arc<tokio::sync::Notify>,
        log: Arc<ServerLog>,
    ) {
        loop {
            tokio::select! {
                _ = closed.cancelled() => {
                    self.fail(generation, with_stderr("the server closed the connection".to_string(), &log));
                    return;
                }
                _ = tools_changed.notified() => {
                    let listed = tokio::time::timeout(self.config.connect_timeout, super::connect::list_tools(client.peer())).await;
                    let Ok(Ok(remote)) = listed else {
                        // Keep the old list; a dead server is caught by `closed`.
                        continue;
                    };
                    self.replace_tools(generation, &remote);
                }
            }
        }
    }

    /// A newly listed set of tools replaces the old one (descriptions and schemas may
    /// have changed too); the state is reported only if the names changed.
    fn replace_tools(self: &Arc<Self>, generation: u64, remote: &[rmcp::model::Tool]) {
        let (tools, state) = self.build_tools(remote);
        {
            let mut inner = lock(&self.inner);
            if inner.generation != generation || inner.closed || inner.live.is_none() {
                return;
            }
            inner.tools = tools;
        }
        self.set_state(generation, state);
    }

    /// Our tools for the server's `remote` ones, and the `Ready` state listing them by
    /// the names the model calls them.
    fn build_tools(self: &Arc<Self>, remote: &[rmcp::model::Tool]) -> (Vec<Arc<McpTool>>, McpServerState) {
        let remote_names: Vec<&str> = remote.iter().map(|tool| tool.name.as_ref()).collect();
        let names = tool_names(&self.prefix, &remote_names);
        let state = McpServerState::Ready { tools: names.clone() };
        let tools = names
            .into_iter()
            .zip(remote)
            .map(|(name, remote)| Arc::new(McpTool::new(name, remote, self.clone())))
            .collect();
        (tools, state)
    }

    /// Runs one tool call on the current connection.
    async fn call(&self, tool: &str, arguments: Value, context: ToolContext) -> ToolOutput {
        let server = &self.config.name;
        let (client, generation, closed, log) = {
            let inner = lock(&self.inner);
            match &inner.live {
                Some(live) => (
                    live.client.clone(),
                    inner.generation,
                    live.closed.clone(),
                    live.log.clone(),
                ),
                None => return ToolOutput::error(not_connected(server, &inner.state)),
            }
        };
        let arguments = match arguments {
            Value::Object(arguments) => Some(arguments),
            Value::Null => None,
            other => return ToolOutput::error(format!("the arguments must be a JSON object, got {other}")),
        };
        let mut params = CallToolRequestParams::new(tool.to_string());
        params.arguments = arguments;
        let limit = self.config.execute_timeout;
        // Dropping the call (timeout, interrupt) sends the server `notifications/cancelled`.
        let outcome = tokio::select! {
            _ = context.cancel.cancelled() => {
                return ToolOutput::error("[interrupted by the user; the MCP call was cancelled]");
            }
            outcome = tokio::time::timeout(limit, client.call_tool(params)) => outcome,
        };
        match outcome {
            Ok(Ok(result)) => format_result(result),
            Err(_) => ToolOutput::error(format!(
                "MCP tool `{tool}` of server `{server}` did not finish within {}; the call was cancelled",
                seconds(limit)
            )),
            Ok(Err(ServiceError::McpError(error))) => ToolOutput::error(format!(
                "MCP server `{server}` refused the call: {} (error {})",
                error.message, error.code.0
            )),
            Ok(Err(error @ (ServiceError::TransportClosed | ServiceError::TransportSend(_)))) => {
                let detail = match &error {
                    ServiceError::TransportSend(send) => transport_error(send),
                    _ => "the connection closed".to_string(),
                };
                // A send error over HTTP can be one bad request; a closed transport or
                // a stdio pipe that broke means the server is gone.
                if matches!(error, ServiceError::TransportClosed)
                    || closed.is_cancelled()
                    || self.child_dead()
                {
                    let reason =
                        with_stderr(format!("the connection was lost during a call ({detail})"), &log);
                    self.fail(generation, reason.clone());
                    ToolOutput::error(format!(
                        "MCP server `{server}` is not connected (failed: {reason}); /mcp can reconnect it"
                    ))
                } else {
                    ToolOutput::error(format!("MCP server `{server}` could not be reached: {detail}"))
                }
            }
            Ok(Err(error)) => ToolOutput::error(format!(
                "MCP call to `{tool}` on server `{server}` failed: {}",
                error_chain(&error)
            )),
        }
    }

    /// Whether this slot started a process group that no longer has a live process.
    fn child_dead(&self) -> bool {
        lock(&self.inner).child.is_some_and(|child| !child.alive())
    }
}

/// What a tool of a server that is not ready says.
fn not_connected(server: &str, state: &McpServerState) -> String {
    match state {
        McpServerState::Failed { reason } => {
            format!("MCP server `{server}` is not connected (failed: {reason}); /mcp can reconnect it")
        }
        McpServerState::Connecting => format!("MCP server `{server}` is still connecting; try again shortly"),
        McpServerState::Disabled => format!("MCP server `{server}` is disabled in the configuration"),
        McpServerState::Ready { .. } => {
            format!("MCP server `{server}` is not connected; /mcp can reconnect it")
        }
    }
}

/// A failure reason with the server's last stderr lines, which usually say why.
fn with_stderr(reason: String, log: &ServerLog) -> String {
    match log.tail() {
        Some(tail) => format!("{reason}; stderr: {tail}"),
        None => reason,
    }
}
