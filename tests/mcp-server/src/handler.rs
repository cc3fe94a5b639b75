//! What the server answers: `initialize` when its gate opens, its tool list, and calls.
//!
//! The built-in tools give each test a fixed, known answer: texts, an image, an embedded
//! resource, the server's own environment and command line, a request header, an error
//! result, a wait the client can cancel, and an answer of any size.

use std::time::Duration;

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, InitializeRequestParams, InitializeResult,
    ListToolsResult, PaginatedRequestParams, ServerConfig,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData as McpError, RoleServer, ServerHandler};
use serde_json::{Map, Value, json};

use crate::{InitGate, Listing, Options};

/// Tools a page of a file's listing holds.
const PAGE: usize = 2_000;

/// A 1×1 PNG (70 bytes), the `image` tool's picture.
pub const PNG_BASE64: &str =
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg==";

pub struct TestServer {
    options: Options,
    /// The tools of `--tools-file`, read once.
    listed: Vec<Value>,
    /// Pages of an endless list served so far.
    pages: std::sync::atomic::AtomicUsize,
}

impl TestServer {
    pub fn new(options: Options) -> TestServer {
        let listed = match &options.listing {
            Listing::File(path) => std::fs::read_to_string(path)
                .ok()
                .and_then(|text| serde_json::from_str(&text).ok())
                .unwrap_or_else(|| {
                    eprintln!("cannot read the tools of {}", path.display());
                    Vec::new()
                }),
            _ => Vec::new(),
        };
        TestServer {
            options,
            listed,
            pages: Default::default(),
        }
    }

    async fn open_gate(&self) {
        match &self.options.init {
            InitGate::Now => {}
            InitGate::AfterMs(ms) => tokio::time::sleep(Duration::from_millis(*ms)).await,
            InitGate::Never => std::future::pending().await,
            InitGate::AfterFile(path) => {
                while !path.exists() {
                    tokio::time::sleep(Duration::from_millis(20)).await;
                }
            }
        }
    }

    fn page(&self, cursor: Option<&str>) -> Value {
        match &self.options.listing {
            Listing::Builtin => json!({"tools": builtin_tools()}),
            Listing::File(_) => {
                let from: usize = cursor.and_then(|cursor| cursor.parse().ok()).unwrap_or(0);
                let from = from.min(self.listed.len());
                let to = (from + PAGE).min(self.listed.len());
                let mut page = json!({"tools": self.listed[from..to]});
                if to < self.listed.len() {
                    page["nextCursor"] = json!(to.to_string());
                }
                page
            }
            Listing::Endless(mode) => {
                let page = self.pages.fetch_add(1, std::sync::atomic::Ordering::SeqCst) + 1;
                match mode.as_str() {
                    "cursors" => {
                        json!({"tools": [], "nextCursor": format!("{page}-{}", "c".repeat(1 << 20))})
                    }
                    _ => json!({
                        "tools": [{"name": format!("tool_{page}"), "description": "d".repeat(100 * 1024),
                                   "inputSchema": {"type": "object"}}],
                        "nextCursor": if mode == "loop" { "again".to_string() } else { format!("page-{page}") },
                    }),
                }
            }
        }
    }

    async fn call(
        &self,
        name: &str,
        arguments: &Map<String, Value>,
        context: &RequestContext<RoleServer>,
    ) -> Value {
        if !matches!(self.options.listing, Listing::Builtin) {
            return text(&format!("{name} answered"));
        }
        let number = |key: &str| arguments.get(key).and_then(Value::as_f64).unwrap_or(0.0);
        let string = |key: &str| {
            arguments
                .get(key)
                .and_then(Value::as_str)
                .unwrap_or("")
                .to_string()
        };
        match name {
            "echo" => text(&format!("Echo: {}", string("message"))),
            "add" => {
                let (a, b) = (number("a"), number("b"));
                text(&format!("The sum of {a} and {b} is {}.", a + b))
            }
            "image" => json!({"content": [
                {"type": "text", "text": "A picture:"},
                {"type": "image", "data": PNG_BASE64, "mimeType": "image/png"},
            ]}),
            "resource" => json!({"content": [{"type": "resource", "resource": {
                "uri": "test://notes/1", "mimeType": "text/plain", "text": "The first note.",
            }}]}),
            "env" => {
                let env: Map<String, Value> =
                    std::env::vars().map(|(key, value)| (key, json!(value))).collect();
                text(&Value::Object(env).to_string())
            }
            "args" => {
                let args: Vec<String> = std::env::args().skip(1).collect();
                let cwd = std::env::current_dir()
                    .map(|dir| dir.display().to_string())
                    .unwrap_or_default();
                text(&json!({"args": args, "cwd": cwd}).to_string())
            }
            "header" => {
                let wanted = string("name");
                let value = context
                    .extensions
                    .get::<http::request::Parts>()
                    .and_then(|parts| parts.headers.get(wanted.as_str()))
                    .map(|value| String::from_utf8_lossy(value.as_bytes()).into_owned());
                text(&value.unwrap_or_else(|| "(no such header)".into()))
            }
            "fail" => json!({"content": [{"type": "text", "text": "failed as asked"}], "isError": true}),
            "sleep" => {
                let seconds = number("seconds");
                tokio::select! {
                    _ = tokio::time::sleep(Duration::from_secs_f64(seconds.max(0.0))) => {
                        text(&format!("slept {seconds} s"))
                    }
                    _ = context.ct.cancelled() => text("cancelled"),
                }
            }
            "huge" => {
                let bytes = (number("megabytes") * 1024.0 * 1024.0) as usize;
                text(&format!("BEGIN {}", "x".repeat(bytes)))
            }
            other => {
                json!({"content": [{"type": "text", "text": format!("no tool {other}")}], "isError": true})
            }
        }
    }
}

fn text(text: &str) -> Value {
    json!({"content": [{"type": "text", "text": text}]})
}

/// The built-in tools, in the order they are listed.
pub fn builtin_tools() -> Value {
    let none = json!({"type": "object", "properties": {}});
    let number = json!({"type": "number"});
    json!([
        {"name": "echo", "description": "Echoes back the input string", "inputSchema": {
            "type": "object",
            "properties": {"message": {"type": "string", "description": "Message to echo"}},
            "required": ["message"]}},
        {"name": "add", "description": "Adds two numbers", "inputSchema": {
            "type": "object", "properties": {"a": number, "b": number}, "required": ["a", "b"]}},
        {"name": "image", "description": "Answers with a 1x1 PNG", "inputSchema": none},
        {"name": "resource", "description": "Answers with an embedded text resource", "inputSchema": none},
        {"name": "env", "description": "The server's environment, as JSON", "inputSchema": none},
        {"name": "args", "description": "The server's arguments and folder, as JSON", "inputSchema": none},
        {"name": "header", "description": "An HTTP header of the call's request", "inputSchema": {
            "type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]}},
        {"name": "fail", "description": "Answers with an error result", "inputSchema": none},
        {"name": "sleep", "description": "Answers after `seconds`, or when the call is cancelled", "inputSchema": {
            "type": "object", "properties": {"seconds": number}, "required": ["seconds"]}},
        {"name": "huge", "description": "Answers with `megabytes` of text", "inputSchema": {
            "type": "object", "properties": {"megabytes": number}, "required": ["megabytes"]}},
    ])
}

fn from_json<T: serde::de::DeserializeOwned>(value: Value) -> Result<T, McpError> {
    serde_json::from_value(value).map_err(|err| McpError::internal_error(err.to_string(), None))
}

impl ServerHandler for TestServer {
    fn get_info(&self) -> ServerConfig {
        serde_json::from_value(json!({
            "protocolVersion": "2025-06-18",
            "capabilities": {"tools": {}},
            "serverInfo": {"name": self.options.name, "version": "1.0.0"},
        }))
        .unwrap_or_default()
    }

    async fn initialize(
        &self,
        request: InitializeRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<InitializeResult, McpError> {
        self.open_gate().await;
        context.peer.set_peer_info(request.clone());
        self.negotiate_initialize(&request)
    }

    async fn list_tools(
        &self,
        request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, McpError> {
        let cursor = request.as_ref().and_then(|request| request.cursor.as_deref());
        from_json(self.page(cursor))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, McpError> {
        let arguments = request.arguments.clone().unwrap_or_default();
        let result: CallToolResult = from_json(self.call(&request.name, &arguments, &context).await)?;
        Ok(result.into())
    }
}
