//! An MCP server's tool as one of ours: its name made safe for model APIs, its schema
//! made an object schema, its results turned into text.

use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use futures_util::future::BoxFuture;
use rmcp::model::{CallToolResult, ContentBlock, ResourceContents};
use serde_json::{Map, Value, json};

use super::config::{McpApproval, McpServerConfig};
use crate::tools::paths::Workspace;
use crate::tools::{Tool, ToolContext, ToolEffect, ToolOutput};
use miniagent_protocol::ApprovalRequest;

/// Longest tool name the model APIs accept.
pub(super) const MAX_TOOL_NAME: usize = 64;

/// Results beyond this are cut in the middle, keeping head and tail.
pub(super) const RESULT_LIMIT_BYTES: usize = 100_000;

/// The server a tool's calls go to (the manager's slot for it). A trait here, so this
/// module does not import the manager that creates the tools.
pub(super) trait ToolServer: Send + Sync {
    fn config(&self) -> &McpServerConfig;
    /// Runs one call of the server's `tool` on its current connection.
    fn call<'a>(&'a self, tool: &'a str, arguments: Value, context: ToolContext)
    -> BoxFuture<'a, ToolOutput>;
}

/// A tool of a connected MCP server, named `mcp__<server>__<tool>`. Calls go to
/// whichever connection the server has at the time, so a tool kept across a reconnect
/// keeps working.
pub struct McpTool {
    name: String,
    remote_name: String,
    description: String,
    input_schema: Value,
    approval: McpApproval,
    server: Arc<dyn ToolServer>,
    /// Bytes of its name, description and schema: what declaring it adds to a request.
    spec_bytes: usize,
    /// Their tokens, counted the first time they are asked for.
    spec_tokens: std::sync::OnceLock<u64>,
}

impl McpTool {
    pub(super) fn new(name: String, remote: &rmcp::model::Tool, server: Arc<dyn ToolServer>) -> Self {
        let remote_name = remote.name.to_string();
        let description = remote
            .description
            .as_deref()
            .map(str::to_string)
            .or_else(|| remote.title.clone())
            .unwrap_or_else(|| format!("Tool `{remote_name}` of MCP server `{}`.", server.config().name));
        let input_schema = object_schema(&remote.input_schema);
        Self {
            approval: server.config().approval_for(&remote_name),
            spec_bytes: name.len() + description.len() + input_schema.to_string().len(),
            spec_tokens: std::sync::OnceLock::new(),
            input_schema,
            name,
            remote_name,
            description,
            server,
        }
    }

    /// The same tool under another name (to keep names unique across servers).
    pub(super) fn renamed(&self, name: String) -> Self {
        Self {
            spec_bytes: self.spec_bytes - self.name.len() + name.len(),
            spec_tokens: std::sync::OnceLock::new(),
            name,
            remote_name: self.remote_name.clone(),
            description: self.description.clone(),
            input_schema: self.input_schema.clone(),
            approval: self.approval,
            server: self.server.clone(),
        }
    }

    /// Bytes of its name, description and schema, which every request declaring it
    /// carries (about four to a token).
    pub fn spec_bytes(&self) -> usize {
        self.spec_bytes
    }

    /// Tokens of its name, description and schema as `counter` counts them for the
    /// budget; counted once.
    pub fn spec_tokens(&self, counter: &crate::tokens::TokenCounter) -> u64 {
        *self.spec_tokens.get_or_init(|| {
            counter.count(&self.name)
                + counter.count(&self.description)
                + counter.count(&self.input_schema.to_string())
        })
    }

    /// Whether calls need the person's approval, from the server's `approval` and its
    /// `tool_approval` override for this tool.
    pub fn approval(&self) -> McpApproval {
        self.approval
    }

    /// The configured name of the server the tool belongs to.
    pub fn server_name(&self) -> &str {
        &self.server.config().name
    }

    /// The tool's name as the server spells it.
    pub fn remote_name(&self) -> &str {
        &self.remote_name
    }
}

impl Tool for McpTool {
    fn name(&self) -> &str {
        &self.name
    }

    fn description(&self) -> &str {
        &self.description
    }

    fn input_schema(&self) -> Value {
        self.input_schema.clone()
    }

    fn effect(&self) -> ToolEffect {
        ToolEffect::External
    }

    fn auto_approved(&self) -> bool {
        self.approval == McpApproval::Auto
    }

    fn approval_request<'a>(
        &'a self,
        arguments: &'a Value,
        _workspace: &'a Workspace,
    ) -> BoxFuture<'a, Result<ApprovalRequest, crate::tools::InvalidCall>> {
        let request = ApprovalRequest::McpCall {
            server: self.server_name().to_string(),
            tool: self.remote_name().to_string(),
            arguments: arguments.clone(),
        };
        Box::pin(async move { Ok(request) })
    }

    fn run(&self, arguments: Value, context: ToolContext) -> BoxFuture<'_, ToolOutput> {
        self.server.call(&self.remote_name, arguments, context)
    }
}

/// The server's schema as an object schema: model APIs accept nothing else, and a tool
/// without parameters often sends `{}` or omits `type`.
fn object_schema(schema: &Map<String, Value>) -> Value {
    match schema.get("type") {
        Some(Value::String(kind)) if kind == "object" => {}
        None => {}
        Some(_) => return json!({"type": "object", "properties": {}}),
    }
    let mut schema = schema.clone();
    // Says which draft the server's generator wrote; the model has no use for it.
    schema.remove("$schema");
    schema.insert("type".to_string(), json!("object"));
    schema.entry("properties").or_insert_with(|| json!({}));
    Value::Object(schema)
}

/// `mcp__<server>__<tool>` for each of `tools`, limited to `[a-zA-Z0-9_-]` and 64
/// characters, made unique with `_2`, `_3`… in order.
pub(super) fn tool_names(server: &str, tools: &[&str]) -> Vec<String> {
    let mut taken = Taken::default();
    tools
        .iter()
        .map(|tool| {
            unique_name(
                &format!("mcp__{}__{}", sanitize(server), sanitize(tool)),
                &mut taken,
            )
        })
        .collect()
}

/// Each server's name made safe for tool names (as [`tool_names`] does), unique among
/// them: a name that meets an earlier one's gets `_2`, `_3`… in configuration order.
pub(super) fn server_prefixes(servers: &[&str]) -> Vec<String> {
    let mut taken = HashSet::new();
    servers
        .iter()
        .map(|server| {
            let base = sanitize(server);
            let mut prefix = base.clone();
            let mut counter = 2;
            while !taken.insert(prefix.clone()) {
                prefix = format!("{base}_{counter}");
                counter += 1;
            }
            prefix
        })
        .collect()
}

/// Tool names given so far, and for each name asked for again the next suffix to try:
/// ten thousand tools of one name must not cost fifty million tries (it took 22 s).
#[derive(Default)]
pub(super) struct Taken {
    names: HashSet<String>,
    next: HashMap<String, usize>,
}

/// `base` (cut to 64 characters) or, when taken, the first free `base_N`.
pub(super) fn unique_name(base: &str, taken: &mut Taken) -> String {
    // Sanitised names are ASCII, so byte and character positions agree.
    let cut = |limit: usize| base[..base.len().min(limit)].to_string();
    let name = cut(MAX_TOOL_NAME);
    if taken.names.insert(name.clone()) {
        return name;
    }
    let counter = taken.next.entry(base.to_string()).or_insert(2);
    loop {
        let suffix = format!("_{counter}");
        let name = format!("{}{suffix}", cut(MAX_TOOL_NAME - suffix.len()));
        *counter += 1;
        if taken.names.insert(name.clone()) {
            return name;
        }
    }
}

fn sanitize(text: &str) -> String {
    text.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
                c
            } else {
                '_'
            }
        })
        .collect()
}

/// The text the model reads for a result: text items as they are, one summary line
/// for each image, audio clip or resource; `isError` makes it an error result.
pub(super) fn format_result(result: CallToolResult) -> ToolOutput {
    let mut parts: Vec<String> = result.content.iter().map(describe_content).collect();
    if parts.is_empty()
        && let Some(structured) = &result.structured_content
    {
        parts.push(structured.to_string());
    }
    let text = crate::tools::output::cap_text(&parts.join("\n"), RESULT_LIMIT_BYTES);
    if result.is_error == Some(true) {
        ToolOutput::error(if text.is_empty() {
            "the tool reported an error without a message".to_string()
        } else {
            text
        })
    } else {
        ToolOutput::ok(text)
    }
}

fn describe_content(content: &ContentBlock) -> String {
    match content {
        ContentBlock::Text(text) => text.text.clone(),
        ContentBlock::Image(image) => summary("image", base64_len(&image.data), Some(&image.mime_type), None),
        ContentBlock::Audio(audio) => summary("audio", base64_len(&audio.data), Some(&audio.mime_type), None),
        ContentBlock::Resource(embedded) => match &embedded.resource {
            ResourceContents::TextResourceContents {
                uri, mime_type, text, ..
            } => summary(
                "resource",
                Some(text.len() as u64),
                mime_type.as_deref(),
                Some(uri),
            ),
            ResourceContents::BlobResourceContents {
                uri, mime_type, blob, ..
            } => summary("resource", base64_len(blob), mime_type.as_deref(), Some(uri)),
            // Open-ended upstream (`non_exhaustive`): a new kind still gets its line.
            _ => "[resource]".to_string(),
        },
        ContentBlock::ResourceLink(link) => summary(
            "resource link",
            link.size,
            link.mime_type.as_deref(),
            Some(&link.uri),
        ),
        // The content union is open-ended (`non_exhaustive`); show what a new kind is.
        other => match serde_json::to_value(other) {
            Ok(value) => format!("[{} content]", value["type"].as_str().unwrap_or("unknown")),
            Err(_) => "[unknown content]".to_string(),
        },
    }
}

/// `[image: 1234 bytes, image/png]`, `[resource: 12 bytes, text/plain, file:///a.txt]`.
fn summary(kind: &str, bytes: Option<u64>, mime: Option<&str>, uri: Option<&str>) -> String {
    let mut fields = Vec::new();
    if let Some(bytes) = bytes {
        fields.push(format!("{bytes} bytes"));
    }
    fields.extend(mime.map(str::to_string));
    fields.extend(uri.map(str::to_string));
    format!("[{kind}: {}]", fields.join(", "))
}

/// Decoded size of base64 `data`, without decoding it.
fn base64_len(data: &str) -> Option<u64> {
    let symbols = data
        .bytes()
        .filter(|byte| byte.is_ascii_alphanumeric() || matches!(byte, b'+' | b'/' | b'-' | b'_'))
        .count() as u64;
    // Every 4 symbols carry 3 bytes; padding and line breaks carry none.
    Some(symbols * 3 / 4)
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn names_are_safe_short_and_unique() {
        let long = "x".repeat(80);
        assert_eq!(
            tool_names(
                "my server",
                &["read.file", "read_file", "read file", &long, &long]
            ),
            vec![
                "mcp__my_server__read_file".to_string(),
                "mcp__my_server__read_file_2".to_string(),
                "mcp__my_server__read_file_3".to_string(),
                format!("mcp__my_server__{}", "x".repeat(64 - 16)),
                format!("mcp__my_server__{}_2", "x".repeat(64 - 18)),
            ]
        );
        assert_eq!(
            tool_names("日本", &["読む"]),
            vec![format!("mcp{}", "_".repeat(8))]
        );
    }

    /// Ten thousand tools of one name (a hostile server's list) are named at once, each
    /// its own; a name that is another's suffixed form is skipped over.
    #[test]
    fn many_tools_of_one_name_are_named_at_once() {
        let mut tools = vec!["t"; 10_005];
        tools.insert(0, "t_3");
        let started = std::time::Instant::now();
        let named = tool_names("s", &tools);
        assert!(
            started.elapsed() < std::time::Duration::from_secs(2),
            "{:?}",
            started.elapsed()
        );
        assert_eq!(
            named[..4],
            ["mcp__s__t_3", "mcp__s__t", "mcp__s__t_2", "mcp__s__t_4"]
        );
        assert_eq!(named[10_005], "mcp__s__t_10006");
        assert_eq!(named.iter().collect::<HashSet<_>>().len(), 10_006);
    }

    #[test]
    fn schemas_become_object_schemas() {
        let map = |value: Value| value.as_object().cloned().unwrap();
        assert_eq!(
            object_schema(&map(json!({}))),
            json!({"type": "object", "properties": {}})
        );
        assert_eq!(
            object_schema(&map(
                json!({"$schema": "http://json-schema.org/draft-07/schema#", "type": "object",
                       "properties": {"a": {"type": "number"}}, "required": ["a"]})
            )),
            json!({"type": "object", "properties": {"a": {"type": "number"}}, "required": ["a"]})
        );
        assert_eq!(
            object_schema(&map(json!({"type": "string"}))),
            json!({"type": "object", "properties": {}})
        );
    }

    #[test]
    fn results_become_text_with_one_line_per_attachment() {
        let result: CallToolResult = serde_json::from_value(json!({
            "content": [
                {"type": "text", "text": "first"},
                {"type": "image", "data": "aGVsbG8=", "mimeType": "image/png"},
                {"type": "audio", "data": "AAAA", "mimeType": "audio/wav"},
                {"type": "resource", "resource": {"uri": "file:///a.txt", "mimeType": "text/plain", "text": "hello"}},
                {"type": "resource", "resource": {"uri": "file:///b.bin", "blob": "AAAAAA=="}},
                {"type": "resource_link", "uri": "file:///c", "name": "c"},
                {"type": "text", "text": "last"}
            ]
        }))
        .unwrap();
        assert_eq!(
            format_result(result),
            ToolOutput::ok(
                "first\n[image: 5 bytes, image/png]\n[audio: 3 bytes, audio/wav]\n\
                 [resource: 5 bytes, text/plain, file:///a.txt]\n[resource: 4 bytes, file:///b.bin]\n\
                 [resource link: file:///c]\nlast"
            )
        );
        let failed: CallToolResult = serde_json::from_value(
            json!({"content": [{"type": "text", "text": "no such file"}], "isError": true}),
        )
        .unwrap();
        assert_eq!(format_result(failed), ToolOutput::error("no such file"));
        let structured: CallToolResult =
            serde_json::from_value(json!({"content": [], "structuredContent": {"a": 1}})).unwrap();
        assert_eq!(format_result(structured), ToolOutput::ok("{\"a\":1}"));
    }
}
