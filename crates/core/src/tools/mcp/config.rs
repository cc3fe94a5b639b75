//! `mcp.json`: which MCP servers to start and how. The format is the one Claude Desktop,
//! Mini-Agent and most MCP clients share, plus approval settings:
//!
//! ```json
//! {"mcpServers": {
//!   "files": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-filesystem", "${workspace}"],
//!             "env": {"KEY": "value"}, "cwd": "/some/dir"},
//!   "remote": {"url": "https://example.com/mcp", "headers": {"Authorization": "Bearer …"},
//!              "type": "streamable_http", "approval": "auto",
//!              "tool_approval": {"delete_everything": "ask"}}
//! }}
//! ```
//!
//! Servers are kept sorted by name. Every server also takes `disabled` (default false), `connect_timeout` and
//! `execute_timeout` (seconds, defaults 10 and 60), `approval` (`"ask"`, the default, or
//! `"auto"`) and `tool_approval` (per-tool overrides of `approval`, keyed by the tool's
//! name as the server spells it). In a stdio server's `args`, `env` values and `cwd`,
//! `${workspace}` stands for the workspace's path; a user's server with no `cwd` starts
//! in [`NEUTRAL_FOLDER`], never the workspace. `type` may be `stdio` (with `command`),
//! `streamable_http`/`http` or `sse` (with `url`; without `type` a URL means streamable
//! HTTP). Mini-Agent's `sse_read_timeout` is accepted and ignored. Any other key is an
//! error, so a typo never passes silently.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::{Path, PathBuf};
use std::time::Duration;

use reqwest::header::{HeaderName, HeaderValue};
use serde_json::{Map, Value};

/// Default time a server has to answer `initialize` and list its tools.
pub const DEFAULT_CONNECT_TIMEOUT: Duration = Duration::from_secs(10);
/// Default time one tool call may take.
pub const DEFAULT_EXECUTE_TIMEOUT: Duration = Duration::from_secs(60);

/// Keys a server entry may have; anything else is reported as a typo.
const SERVER_KEYS: &[&str] = &[
    "command",
    "args",
    "env",
    "cwd",
    "url",
    "headers",
    "type",
    "disabled",
    "connect_timeout",
    "execute_timeout",
    "sse_read_timeout",
    "approval",
    "tool_approval",
];

/// Headers the streamable HTTP transport sets itself and refuses from configuration.
const RESERVED_HEADERS: &[&str] = &["accept", "mcp-session-id", "last-event-id"];

/// A parsed `mcp.json`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct McpConfig {
    /// Sorted by name (JSON objects carry no order miniagent keeps).
    pub servers: Vec<McpServerConfig>,
    /// The workspace whose path [`Self::for_workspace`] put in for [`WORKSPACE`].
    pub workspace: Option<PathBuf>,
    /// The `env` values (server, variable) it was put in: that path is no credential,
    /// however long a value holding it is.
    pub filled_env: BTreeSet<(String, String)>,
}

impl McpConfig {
    /// Configured values that may be credentials, to keep out of logs: every header
    /// value (and the token after `Bearer `), and environment values whose name says
    /// secret or that are long enough to be a key.
    pub fn secret_values(&self) -> Vec<String> {
        const SECRET_NAMES: [&str; 6] = ["KEY", "TOKEN", "SECRET", "PASS", "AUTH", "CREDENTIAL"];
        let mut secrets = Vec::new();
        for server in &self.servers {
            match &server.transport {
                McpTransport::Http { headers, .. } => {
                    for value in headers.values() {
                        secrets.push(value.clone());
                        if let Some((_, token)) = value.split_once(' ') {
                            secrets.push(token.to_string());
                        }
                    }
                }
                McpTransport::Stdio { env, .. } => {
                    for (name, value) in env {
                        let upper = name.to_ascii_uppercase();
                        let filled = self.filled_env.contains(&(server.name.clone(), name.clone()));
                        let own = match &self.workspace {
                            Some(workspace) if filled => value.replace(&*workspace.to_string_lossy(), ""),
                            _ => value.clone(),
                        };
                        if own.len() >= 20 || SECRET_NAMES.iter().any(|word| upper.contains(word)) {
                            secrets.push(value.clone());
                        }
                    }
                }
            }
        }
        secrets
    }
}

/// Written in a stdio server's `args`, `env` values or `cwd`, stands for the workspace's
/// path ([`McpConfig::for_workspace`]).
pub const WORKSPACE: &str = "${workspace}";

/// Where the user's own servers start when their entry names no `cwd`: never the
/// workspace, whose files must not run before the person trusted it (`python3 -m x`
/// imports `x/` from its folder first, `npx x` runs a `node_modules/.bin/x` it finds
/// there). The root folder is what the desktop clients use too; only the administrator
/// can put a file there.
pub const NEUTRAL_FOLDER: &str = "/";

impl McpConfig {
    /// The servers as they start in `workspace`: [`WORKSPACE`] in each stdio server's
    /// `args`, `env` values and `cwd` replaced by its path, and a server whose entry names
    /// no `cwd` started in `default_cwd` (for the user's servers [`NEUTRAL_FOLDER`]; for a
    /// trusted workspace's own, the workspace).
    pub fn for_workspace(mut self, workspace: &Path, default_cwd: &Path) -> Self {
        // A path that is not UTF-8 cannot be put in a string argument whole; its lossy
        // form names no other folder than one with U+FFFD in its name.
        self.workspace = Some(workspace.to_path_buf());
        let path = workspace.to_string_lossy();
        let fill = |text: &mut String| {
            if text.contains(WORKSPACE) {
                *text = text.replace(WORKSPACE, &path);
            }
        };
        for server in &mut self.servers {
            if let McpTransport::Stdio { args, env, cwd, .. } = &mut server.transport {
                args.iter_mut().for_each(&fill);
                for (name, value) in env.iter_mut() {
                    if value.contains(WORKSPACE) {
                        self.filled_env.insert((server.name.clone(), name.clone()));
                        fill(value);
                    }
                }
                *cwd = Some(match cwd.take() {
                    Some(folder) => {
                        let mut text = folder.to_string_lossy().into_owned();
                        if text.contains(WORKSPACE) {
                            fill(&mut text);
                            PathBuf::from(text)
                        } else {
                            folder
                        }
                    }
                    None => default_cwd.to_path_buf(),
                });
            }
        }
        self
    }
}

/// One entry of `mcpServers`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct McpServerConfig {
    /// The key under `mcpServers`; tool names are derived from it.
    pub name: String,
    /// How to reach it: a program to start, or a URL.
    pub transport: McpTransport,
    /// A disabled server is listed but never started.
    pub disabled: bool,
    /// Time to start, answer `initialize` and list tools (default 10 s).
    pub connect_timeout: Duration,
    /// Time one tool call may take (default 60 s).
    pub execute_timeout: Duration,
    /// Whether this server's tools may run without asking (default: ask).
    pub approval: McpApproval,
    /// Per-tool overrides of [`Self::approval`] (config key `tool_approval`), keyed by the
    /// tool's name as the server reports it, not the `mcp__…` name the model sees.
    pub tool_approval: HashMap<String, McpApproval>,
}

impl McpServerConfig {
    /// The approval setting for one of this server's tools (server's own tool name).
    pub fn approval_for(&self, tool: &str) -> McpApproval {
        self.tool_approval.get(tool).copied().unwrap_or(self.approval)
    }
}

/// How miniagent talks to a server.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum McpTransport {
    /// A child process speaking JSON-RPC on stdin/stdout.
    Stdio {
        /// The program, found on `PATH` like a shell would.
        command: String,
        args: Vec<String>,
        /// Added to the few variables the child inherits (see the manager's docs).
        env: BTreeMap<String, String>,
        /// Working directory; relative paths in a loaded file are resolved against the
        /// file's folder.
        cwd: Option<PathBuf>,
    },
    /// A server reached over HTTP.
    Http {
        /// The MCP endpoint (streamable HTTP) or the event stream (SSE).
        url: String,
        /// Sent with every request (e.g. `Authorization`).
        headers: BTreeMap<String, String>,
        kind: HttpKind,
    },
}

/// Which HTTP flavour of MCP a server speaks.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum HttpKind {
    /// The current transport: one endpoint, POST for requests, SSE for streamed answers.
    StreamableHttp,
    /// The 2024-11-05 transport: a GET event stream plus a POST endpoint it announces.
    Sse,
}

/// Whether calls to a tool need the person's approval.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum McpApproval {
    /// Runs without asking (the read-only mode still refuses it).
    Auto,
    /// Asks every time, unless approved for the session.
    Ask,
}

/// Why an `mcp.json` cannot be used: one line naming the file (and the server and key).
#[derive(Debug, thiserror::Error)]
pub enum McpConfigError {
    #[error("{}: cannot read: {error}", path.display())]
    Read {
        path: std::path::PathBuf,
        error: std::io::Error,
    },
    #[error("{source_name}: invalid JSON: {error}")]
    Json {
        source_name: String,
        error: serde_json::Error,
    },
    /// The file is JSON but not a server list.
    #[error("{source_name}: {problem}")]
    Shape { source_name: String, problem: String },
    #[error("{source_name}: server `{name}`: {problem}")]
    Server {
        source_name: String,
        name: String,
        problem: String,
    },
}

/// Reads and parses `path`; every problem is one line naming the file and the
/// server/key. Relative `cwd` values are resolved against the file's folder.
pub fn load_config(path: &Path) -> Result<McpConfig, McpConfigError> {
    let text = std::fs::read_to_string(path).map_err(|error| McpConfigError::Read {
        path: path.to_path_buf(),
        error,
    })?;
    config_from_text(&text, path)
}

/// Parses `text`, read from the file at `path` (relative `cwd`s are taken from its folder;
/// one that starts with [`WORKSPACE`] is the workspace's, filled in by
/// [`McpConfig::for_workspace`]).
pub fn config_from_text(text: &str, path: &Path) -> Result<McpConfig, McpConfigError> {
    let source = path.display().to_string();
    let mut config = parse_config(text, &source)?;
    let base = path.parent().unwrap_or(Path::new(""));
    for server in &mut config.servers {
        if let McpTransport::Stdio { cwd: Some(cwd), .. } = &mut server.transport
            && cwd.is_relative()
            && !cwd.to_string_lossy().starts_with(WORKSPACE)
        {
            *cwd = base.join(&*cwd);
        }
    }
    Ok(config)
}

/// Parses the text of an `mcp.json`; `source` names it in errors (usually the path).
pub fn parse_config(text: &str, source: &str) -> Result<McpConfig, McpConfigError> {
    let shape = |problem: String| McpConfigError::Shape {
        source_name: source.to_string(),
        problem,
    };
    let root: Value = serde_json::from_str(text).map_err(|error| McpConfigError::Json {
        source_name: source.to_string(),
        error,
    })?;
    let Value::Object(root) = root else {
        return Err(shape("expected a JSON object with `mcpServers`".to_string()));
    };
    let servers = match root.get("mcpServers") {
        Some(Value::Object(servers)) => servers,
        Some(other) => {
            return Err(shape(format!(
                "`mcpServers` must be an object of servers, got {}",
                kind(other)
            )));
        }
        None => return Err(shape("`mcpServers` is missing".to_string())),
    };
    let mut servers = servers
        .iter()
        .map(|(name, entry)| {
            parse_server(name, entry).map_err(|problem| McpConfigError::Server {
                source_name: source.to_string(),
                name: name.to_string(),
                problem,
            })
        })
        .collect::<Result<Vec<_>, _>>()?;
    // Sorted by name, as promised above, whatever order the object's keys come in (a
    // `serde_json::Map` keeps the file's order when `preserve_order` is on in the build).
    servers.sort_by(|a, b| a.name.cmp(&b.name));
    Ok(McpConfig {
        servers,
        workspace: None,
        filled_env: BTreeSet::new(),
    })
}

fn parse_server(name: &str, entry: &Value) -> Result<McpServerConfig, String> {
    if name.trim().is_empty() {
        return Err("the server name is empty".to_string());
    }
    let Value::Object(entry) = entry else {
        return Err(format!("expected an object, got {}", kind(entry)));
    };
    if let Some(key) = entry.keys().find(|key| !SERVER_KEYS.contains(&key.as_str())) {
        return Err(format!("unknown key `{key}` (known: {})", SERVER_KEYS.join(", ")));
    }
    let transport = parse_transport(entry)?;
    let approval = match entry.get("approval") {
        Some(value) => parse_approval(value, "approval")?,
        None => McpApproval::Ask,
    };
    let mut tool_approval = HashMap::new();
    if let Some(value) = entry.get("tool_approval") {
        let Value::Object(tools) = value else {
            return Err(format!(
                "`tool_approval` must be an object of tool names, got {}",
                kind(value)
            ));
        };
        for (tool, value) in tools {
            tool_approval.insert(
                tool.clone(),
                parse_approval(value, &format!("tool_approval.{tool}"))?,
            );
        }
    }
    if let Some(value) = entry.get("sse_read_timeout") {
        seconds(value, "sse_read_timeout")?;
    }
    Ok(McpServerConfig {
        name: name.to_string(),
        transport,
        disabled: match entry.get("disabled") {
            Some(Value::Bool(disabled)) => *disabled,
            Some(other) => return Err(format!("`disabled` must be true or false, got {}", kind(other))),
            None => false,
        },
        connect_timeout: optional_seconds(entry, "connect_timeout")?.unwrap_or(DEFAULT_CONNECT_TIMEOUT),
        execute_timeout: optional_seconds(entry, "execute_timeout")?.unwrap_or(DEFAULT_EXECUTE_TIMEOUT),
        approval,
        tool_approval,
    })
}

fn parse_transport(entry: &Map<String, Value>) -> Result<McpTransport, String> {
    let declared = match entry.get("type") {
        Some(Value::String(kind)) => Some(kind.as_str()),
        Some(other) => return Err(format!("`type` must be a string, got {}", kind(other))),
        None => None,
    };
    let command = optional_string(entry, "command")?;
    let url = optional_string(entry, "url")?;
    match (command, url) {
        (Some(_), Some(_)) => Err("has both `command` and `url`; a server is one or the other".to_string()),
        (None, None) => Err("needs `command` (a program to start) or `url` (a server to reach)".to_string()),
        (Some(command), None) => {
            if let Some(declared) = declared
                && declared != "stdio"
            {
                return Err(format!(
                    "`type` is \"{declared}\" but the server has a `command` (use \"stdio\")"
                ));
            }
            if entry.contains_key("headers") {
                return Err("`headers` only applies to servers with a `url`".to_string());
            }
            if command.trim().is_empty() {
                return Err("`command` is empty".to_string());
            }
            let args = match entry.get("args") {
                Some(Value::Array(items)) => items
                    .iter()
                    .map(|item| match item {
                        Value::String(arg) => Ok(arg.clone()),
                        other => Err(format!("`args` must hold strings only, found {}", kind(other))),
                    })
                    .collect::<Result<Vec<_>, _>>()?,
                Some(other) => {
                    return Err(format!("`args` must be an array of strings, got {}", kind(other)));
                }
                None => Vec::new(),
            };
            Ok(McpTransport::Stdio {
                command,
                args,
                env: string_map(entry, "env")?,
                cwd: optional_string(entry, "cwd")?.map(PathBuf::from),
            })
        }
        (None, Some(url)) => {
            let kind = match declared {
                None | Some("streamable_http" | "streamableHttp" | "streamable-http" | "http") => {
                    HttpKind::StreamableHttp
                }
                Some("sse") => HttpKind::Sse,
                Some("stdio") => return Err("`type` is \"stdio\" but the server has a `url`".to_string()),
                Some(other) => {
                    return Err(format!(
                        "`type` \"{other}\" is not one of \"streamable_http\", \"http\", \"sse\", \"stdio\""
                    ));
                }
            };
            for key in ["args", "env", "cwd"] {
                if entry.contains_key(key) {
                    return Err(format!("`{key}` only applies to servers with a `command`"));
                }
            }
            let parsed =
                reqwest::Url::parse(&url).map_err(|err| format!("`url` \"{url}\" is not a URL: {err}"))?;
            if !matches!(parsed.scheme(), "http" | "https") {
                return Err(format!("`url` \"{url}\" must start with http:// or https://"));
            }
            let headers = string_map(entry, "headers")?;
            for (name, value) in &headers {
                check_header(name, value)?;
            }
            Ok(McpTransport::Http { url, headers, kind })
        }
    }
}

/// Rejects headers HTTP would refuse or the transport owns, at load time rather than at
/// the first request.
fn check_header(name: &str, value: &str) -> Result<(), String> {
    HeaderName::from_bytes(name.as_bytes())
        .map_err(|_| format!("`headers`: \"{name}\" is not a valid header name"))?;
    HeaderValue::from_str(value)
        .map_err(|_| format!("`headers.{name}`: the value is not a valid header value"))?;
    if RESERVED_HEADERS
        .iter()
        .any(|reserved| reserved.eq_ignore_ascii_case(name))
    {
        return Err(format!(
            "`headers`: \"{name}\" is set by the transport and cannot be configured"
        ));
    }
    Ok(())
}

fn parse_approval(value: &Value, key: &str) -> Result<McpApproval, String> {
    match value {
        Value::String(text) if text == "auto" => Ok(McpApproval::Auto),
        Value::String(text) if text == "ask" => Ok(McpApproval::Ask),
        other => Err(format!("`{key}` must be \"auto\" or \"ask\", got {other}")),
    }
}

fn optional_string(entry: &Map<String, Value>, key: &str) -> Result<Option<String>, String> {
    match entry.get(key) {
        Some(Value::String(text)) => Ok(Some(text.clone())),
        Some(other) => Err(format!("`{key}` must be a string, got {}", kind(other))),
        None => Ok(None),
    }
}

fn string_map(entry: &Map<String, Value>, key: &str) -> Result<BTreeMap<String, String>, String> {
    match entry.get(key) {
        Some(Value::Object(items)) => items
            .iter()
            .map(|(name, value)| match value {
                Value::String(text) => Ok((name.clone(), text.clone())),
                other => Err(format!("`{key}.{name}` must be a string, got {}", kind(other))),
            })
            .collect(),
        Some(other) => Err(format!(
            "`{key}` must be an object of strings, got {}",
            kind(other)
        )),
        None => Ok(BTreeMap::new()),
    }
}

fn optional_seconds(entry: &Map<String, Value>, key: &str) -> Result<Option<Duration>, String> {
    entry.get(key).map(|value| seconds(value, key)).transpose()
}

/// A positive number of seconds (fractions allowed), at most a day.
fn seconds(value: &Value, key: &str) -> Result<Duration, String> {
    let Some(number) = value.as_f64() else {
        return Err(format!(
            "`{key}` must be a number of seconds, got {}",
            kind(value)
        ));
    };
    if !(number > 0.0 && number <= 86_400.0) {
        return Err(format!(
            "`{key}` must be between 0 and 86400 seconds, got {number}"
        ));
    }
    Ok(Duration::from_secs_f64(number))
}

fn kind(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}
