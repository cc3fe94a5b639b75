//! Tools whose arguments are a Rust type: the built-in tools. The schema the model sees is
//! generated from that type ([`schema_of`]), and a call's arguments are read into it once
//! ([`TypedTool`], through [`super::Tool::read`]); the approval policy, the question, the
//! session rule and the run all get that one value. MCP tools keep their servers' schemas
//! and JSON arguments ([`JsonCall`]).

use futures_util::future::BoxFuture;
use schemars::JsonSchema;
use schemars::generate::SchemaSettings;
use schemars::transform::RecursiveTransform;
use serde::de::DeserializeOwned;
use serde_json::Value;

use super::paths::Workspace;
use super::{InvalidCall, ResultText, Tool, ToolContext, ToolEffect, ToolOutput, pretty_json};
use miniagent_protocol::{ApprovalRequest, ApprovalRule, Location, ToolKind};

/// One call, its arguments checked and read: what the approval policy asks about, what
/// the person is asked to approve, what "approve for this session" remembers, and the run.
pub trait ToolCall<'a>: Send + Sync {
    /// The command line the call runs (`bash`), which the approval policy looks into.
    fn command(&self) -> Option<&str>;
    /// What the person is asked to approve. An error means the call cannot succeed (a
    /// path outside the workspace, an edit that matches nothing): the model gets it as the
    /// result and nobody is asked.
    fn approval_request<'b>(
        &'b self,
        workspace: &'b Workspace,
    ) -> BoxFuture<'b, Result<ApprovalRequest, InvalidCall>>;
    /// What "approve for this session" remembers; `None` when it cannot be remembered safely.
    fn session_rule(&self) -> Option<ApprovalRule>;
    /// The paths (as the model named them) the call would create, change or delete.
    fn changed_paths(&self) -> Vec<String>;
    /// What a permission rule's pattern is matched against (`bash(git status*)` against the
    /// command line, `web_fetch(domain:docs.rs)` against `domain:` and the host); `None`:
    /// only a rule naming the tool alone covers the call.
    fn rule_subject(&self) -> Option<String>;
    /// What the workspace chose that the call would run ([`Tool::repository_hazard`]).
    fn repository_hazard<'b>(
        &'b self,
        workspace: &'b Workspace,
        covered: bool,
    ) -> BoxFuture<'b, Option<String>>;
    /// Runs the call.
    fn run(self: Box<Self>, context: ToolContext) -> BoxFuture<'a, ToolOutput>;
}

/// A tool whose arguments are [`Self::Args`]: its schema is generated from that type and
/// each call's arguments are read into it once, after they passed the schema. It is a
/// [`Tool`] (the registry holds it as one).
pub trait TypedTool: Send + Sync {
    /// The arguments object. Its doc comments are the descriptions the model reads;
    /// `#[serde(deny_unknown_fields)]` makes the schema refuse other fields.
    type Args: DeserializeOwned + JsonSchema + Send + Sync + 'static;
    fn name(&self) -> &str;
    fn description(&self) -> &str;
    fn effect(&self) -> ToolEffect;
    /// What kind of call front ends show it as ([`Tool::kind`]).
    fn kind(&self) -> ToolKind {
        self.effect().kind()
    }
    /// The files and lines a call works on ([`Tool::locations`]).
    fn locations(&self, args: &Self::Args, workspace: &Workspace) -> Vec<Location> {
        let _ = (args, workspace);
        Vec::new()
    }
    /// The schema the model sees: [`Self::Args`]'s. A tool whose limits are settings
    /// (`bash`'s timeout) writes them into it.
    fn input_schema(&self) -> Value {
        schema_of::<Self::Args>()
    }
    /// What the result text is; most tools print terminal output.
    fn result_text(&self) -> ResultText {
        ResultText::TerminalOutput
    }
    /// The command line a call runs, for a tool that runs one.
    fn command<'a>(&self, args: &'a Self::Args) -> Option<&'a str> {
        let _ = args;
        None
    }
    /// What the person is asked to approve; `None`: the arguments as the model wrote them.
    /// An error means the call cannot succeed, and nobody is asked. A future, because the
    /// edit tools read the file for the diff, maybe through the editor ([`Workspace::client_files`]).
    fn approval_request<'a>(
        &'a self,
        args: &'a Self::Args,
        workspace: &'a Workspace,
    ) -> BoxFuture<'a, Result<Option<ApprovalRequest>, InvalidCall>> {
        let _ = (args, workspace);
        Box::pin(async { Ok(None) })
    }
    /// What "approve for this session" remembers: by default, the tool.
    fn session_rule(&self, args: &Self::Args) -> Option<ApprovalRule> {
        let _ = args;
        Some(ApprovalRule::Tool {
            name: self.name().to_string(),
        })
    }
    /// The paths (as the model named them) a call would create, change or delete.
    fn changed_paths(&self, args: &Self::Args) -> Vec<String> {
        let _ = args;
        Vec::new()
    }
    /// What a permission rule's pattern is matched against ([`ToolCall::rule_subject`]).
    fn rule_subject(&self, args: &Self::Args) -> Option<String> {
        let _ = args;
        None
    }
    /// What the workspace chose that a call would run ([`Tool::repository_hazard`]).
    fn repository_hazard<'a>(
        &'a self,
        args: &'a Self::Args,
        workspace: &'a Workspace,
        covered: bool,
    ) -> BoxFuture<'a, Option<String>> {
        let _ = (args, workspace, covered);
        Box::pin(async { None })
    }
    fn run(&self, args: Self::Args, context: ToolContext) -> BoxFuture<'_, ToolOutput>;
}

/// Reads `arguments` (already checked against the schema) into `A`; the error names the
/// argument, what it must be and what it was.
pub fn read_args<A: DeserializeOwned>(arguments: &Value) -> Result<A, InvalidCall> {
    serde_path_to_error::deserialize(arguments).map_err(|error| {
        let path = error.path().to_string();
        let what = error.into_inner();
        InvalidCall(match path.as_str() {
            "." => what.to_string(),
            _ => format!("`{path}`: {what}"),
        })
    })
}

/// The schema of `A` as the model sees it: an object schema without the meta-schema,
/// title, `format`, null defaults or nullable types that the generator adds (an argument
/// that may be left out is simply not required).
pub fn schema_of<A: JsonSchema>() -> Value {
    let generator = SchemaSettings::draft2020_12()
        .with(|settings| {
            settings.meta_schema = None;
            settings.inline_subschemas = true;
        })
        .with_transform(RecursiveTransform(plain))
        .into_generator();
    let mut schema = generator.into_root_schema_for::<A>();
    schema.remove("title");
    schema.remove("description");
    schema.to_value()
}

/// What [`schema_of`] leaves out of each subschema.
fn plain(schema: &mut schemars::Schema) {
    schema.remove("format");
    if schema.get("default") == Some(&Value::Null) {
        schema.remove("default");
    }
    if let Some(Value::Array(types)) = schema.get_mut("type") {
        types.retain(|kind| kind != "null");
        if let [only] = types.as_slice() {
            let only = only.clone();
            schema.insert("type".to_string(), only);
        }
        // An optional enum's values: `null` went with its type.
        if let Some(Value::Array(values)) = schema.get_mut("enum") {
            values.retain(|value| !value.is_null());
        }
    }
}

/// A [`TypedTool`]'s call: the tool and its arguments, read once.
struct TypedCall<'a, T: TypedTool> {
    tool: &'a T,
    /// As the model wrote them, for a question that shows them so.
    arguments: Value,
    args: T::Args,
}

impl<'a, T: TypedTool> ToolCall<'a> for TypedCall<'a, T> {
    fn command(&self) -> Option<&str> {
        self.tool.command(&self.args)
    }

    fn approval_request<'b>(
        &'b self,
        workspace: &'b Workspace,
    ) -> BoxFuture<'b, Result<ApprovalRequest, InvalidCall>> {
        Box::pin(async move {
            Ok(self
                .tool
                .approval_request(&self.args, workspace)
                .await?
                .unwrap_or_else(|| ApprovalRequest::Other {
                    name: self.tool.name().to_string(),
                    preview: pretty_json(&self.arguments),
                }))
        })
    }

    fn session_rule(&self) -> Option<ApprovalRule> {
        self.tool.session_rule(&self.args)
    }

    fn changed_paths(&self) -> Vec<String> {
        self.tool.changed_paths(&self.args)
    }

    fn rule_subject(&self) -> Option<String> {
        self.tool.rule_subject(&self.args)
    }

    fn repository_hazard<'b>(
        &'b self,
        workspace: &'b Workspace,
        covered: bool,
    ) -> BoxFuture<'b, Option<String>> {
        self.tool.repository_hazard(&self.args, workspace, covered)
    }

    fn run(self: Box<Self>, context: ToolContext) -> BoxFuture<'a, ToolOutput> {
        let TypedCall { tool, args, .. } = *self;
        tool.run(args, context)
    }
}

/// A tool's call whose arguments stay JSON: an MCP tool's, whose server reads them.
pub(super) struct JsonCall<'a, T: ?Sized> {
    pub(super) tool: &'a T,
    pub(super) arguments: Value,
}

impl<'a, T: Tool + ?Sized> ToolCall<'a> for JsonCall<'a, T> {
    /// A `command` string argument is looked into as `bash`'s is: a server's tool that
    /// takes a command line gets the same care.
    fn command(&self) -> Option<&str> {
        self.arguments.get("command").and_then(Value::as_str)
    }

    fn approval_request<'b>(
        &'b self,
        workspace: &'b Workspace,
    ) -> BoxFuture<'b, Result<ApprovalRequest, InvalidCall>> {
        self.tool.approval_request(&self.arguments, workspace)
    }

    fn session_rule(&self) -> Option<ApprovalRule> {
        self.tool.session_rule(&self.arguments)
    }

    fn changed_paths(&self) -> Vec<String> {
        self.tool.changed_paths(&self.arguments)
    }

    /// A server's tool is matched by its name alone (`mcp__github__*`).
    fn rule_subject(&self) -> Option<String> {
        None
    }

    fn repository_hazard<'b>(
        &'b self,
        workspace: &'b Workspace,
        covered: bool,
    ) -> BoxFuture<'b, Option<String>> {
        self.tool.repository_hazard(&self.arguments, workspace, covered)
    }

    fn run(self: Box<Self>, context: ToolContext) -> BoxFuture<'a, ToolOutput> {
        let JsonCall { tool, arguments } = *self;
        tool.run(arguments, context)
    }
}

/// Every typed tool is a [`Tool`]: its calls are read once ([`Tool::read`]); the methods
/// that take JSON read it for callers that hold it so.
impl<T: TypedTool> Tool for T {
    fn name(&self) -> &str {
        TypedTool::name(self)
    }

    fn description(&self) -> &str {
        TypedTool::description(self)
    }

    fn input_schema(&self) -> Value {
        TypedTool::input_schema(self)
    }

    fn effect(&self) -> ToolEffect {
        TypedTool::effect(self)
    }

    fn kind(&self) -> ToolKind {
        TypedTool::kind(self)
    }

    fn locations(&self, arguments: &Value, workspace: &Workspace) -> Vec<Location> {
        match read_args(arguments) {
            Ok(args) => TypedTool::locations(self, &args, workspace),
            Err(_) => Vec::new(),
        }
    }

    fn result_text(&self) -> ResultText {
        TypedTool::result_text(self)
    }

    fn read<'a>(&'a self, arguments: Value) -> Result<Box<dyn ToolCall<'a> + 'a>, InvalidCall> {
        let args = read_args(&arguments)?;
        Ok(Box::new(TypedCall {
            tool: self,
            arguments,
            args,
        }))
    }

    fn approval_request<'a>(
        &'a self,
        arguments: &'a Value,
        workspace: &'a Workspace,
    ) -> BoxFuture<'a, Result<ApprovalRequest, InvalidCall>> {
        Box::pin(async move {
            let call = self.read(arguments.clone())?;
            call.approval_request(workspace).await
        })
    }

    fn session_rule(&self, arguments: &Value) -> Option<ApprovalRule> {
        self.read(arguments.clone()).ok()?.session_rule()
    }

    fn changed_paths(&self, arguments: &Value) -> Vec<String> {
        self.read(arguments.clone())
            .map(|call| call.changed_paths())
            .unwrap_or_default()
    }

    fn repository_hazard<'a>(
        &'a self,
        arguments: &'a Value,
        workspace: &'a Workspace,
        covered: bool,
    ) -> BoxFuture<'a, Option<String>> {
        Box::pin(async move {
            let call = self.read(arguments.clone()).ok()?;
            call.repository_hazard(workspace, covered).await
        })
    }

    fn run(&self, arguments: Value, context: ToolContext) -> BoxFuture<'_, ToolOutput> {
        match self.read(arguments) {
            Ok(call) => call.run(context),
            Err(invalid) => Box::pin(async move { ToolOutput::error(invalid.0) }),
        }
    }
}

/// Deserializes an optional count that the schema declares an integer: JSON Schema counts
/// `5.0` as one, and so does this (serde's `u64` would refuse it). A whole number too
/// large for a count (`1e20`) is the largest count, as the schema sets no maximum.
pub fn whole_number<'de, D: serde::Deserializer<'de>>(deserializer: D) -> Result<Option<u64>, D::Error> {
    use serde::Deserialize;
    use serde::de::Error;
    let Some(number) = Option::<serde_json::Number>::deserialize(deserializer)? else {
        return Ok(None);
    };
    if let Some(whole) = number.as_u64() {
        return Ok(Some(whole));
    }
    match number.as_f64() {
        // `as` saturates: past `u64::MAX` it is `u64::MAX`.
        Some(float) if float.fract() == 0.0 && float >= 0.0 => Ok(Some(float as u64)),
        _ => Err(D::Error::custom(format!(
            "expected a whole number of at least 0, got {number}"
        ))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tools::{bash, delegate, edit, jobs, notes, read, skills};
    use pretty_assertions::assert_eq;
    use serde_json::json;
    use std::sync::Arc;

    /// Each built-in tool's generated schema is the one written by hand before it was
    /// generated: the same properties, types, bounds, required list and descriptions.
    #[test]
    fn generated_schemas_are_the_hand_written_ones() {
        let jobs = jobs::BackgroundJobs::default();
        let path = "File path, relative to the workspace or absolute inside it.";
        let bash_id = "The job id bash returned, e.g. bash_1.";
        let cases: Vec<(Box<dyn Tool>, Value)> = vec![
            (
                Box::new(read::ReadFileTool::new(1000, crate::tokens::Encoding::Cl100kBase)),
                json!({
                    "type": "object",
                    "properties": {
                        "path": {"type": "string", "description": path},
                        "offset": {"type": "integer", "minimum": 1, "description": "Line number to start at (1-based)."},
                        "limit": {"type": "integer", "minimum": 1, "description": "Number of lines to read."},
                        "column": {"type": "integer", "minimum": 1, "description": "Byte in the first line to start at (1-based), to read on in a line that was cut."},
                    },
                    "required": ["path"],
                    "additionalProperties": false,
                }),
            ),
            (
                Box::new(edit::WriteFileTool),
                json!({
                    "type": "object",
                    "properties": {
                        "path": {"type": "string", "description": path},
                        "content": {"type": "string", "description": "The complete new content."},
                    },
                    "required": ["path", "content"],
                    "additionalProperties": false,
                }),
            ),
            (
                Box::new(edit::EditFileTool),
                json!({
                    "type": "object",
                    "properties": {
                        "path": {"type": "string", "description": path},
                        "old_str": {"type": "string", "description": "The exact text to replace."},
                        "new_str": {"type": "string", "description": "The text to put in its place."},
                        "replace_all": {"type": "boolean", "description": "Replace every occurrence (default false)."},
                    },
                    "required": ["path", "old_str", "new_str"],
                    "additionalProperties": false,
                }),
            ),
            (
                Box::new(bash::BashTool::new(bash::tests::settings(), jobs.clone())),
                json!({
                    "type": "object",
                    "properties": {
                        "command": {"type": "string", "description": "The command line to run."},
                        "timeout": {
                            "type": "integer",
                            "minimum": 1,
                            "maximum": 600,
                            "description": "Seconds before the command and its children are killed (default 120, max 600); not used in the background.",
                        },
                        "run_in_background": {"type": "boolean", "description": "Start the command and return at once with a bash_id."},
                    },
                    "required": ["command"],
                    "additionalProperties": false,
                }),
            ),
            (
                Box::new(jobs::BashOutputTool::new(jobs.clone(), 1000, 1000)),
                json!({
                    "type": "object",
                    "properties": {
                        "bash_id": {"type": "string", "description": bash_id},
                        "filter_str": {"type": "string", "description": "Regular expression; only matching lines are returned."},
                    },
                    "required": ["bash_id"],
                    "additionalProperties": false,
                }),
            ),
            (
                Box::new(jobs::BashKillTool::new(jobs, 1000, 1000)),
                json!({
                    "type": "object",
                    "properties": {
                        "bash_id": {"type": "string", "description": bash_id},
                    },
                    "required": ["bash_id"],
                    "additionalProperties": false,
                }),
            ),
            (
                Box::new(notes::RecordNoteTool::new(notes::NotesLock::default())),
                json!({
                    "type": "object",
                    "properties": {
                        "content": {"type": "string", "description": "What to remember."},
                        "category": {"type": "string", "description": "A label to group notes by (default \"general\")."},
                    },
                    "required": ["content"],
                    "additionalProperties": false,
                }),
            ),
            (
                Box::new(notes::RecallNotesTool),
                json!({
                    "type": "object",
                    "properties": {
                        "category": {"type": "string", "description": "Only notes of this category."},
                    },
                    "additionalProperties": false,
                }),
            ),
            (
                Box::new(delegate::DelegateTool),
                json!({
                    "type": "object",
                    "properties": {
                        "task": {"type": "string", "description": "The whole task, with everything the sub-agent needs to know."},
                        "tools": {"type": "array", "items": {"type": "string"}, "description": "Tool names it may use (default: the read-only tools)."},
                    },
                    "required": ["task"],
                    "additionalProperties": false,
                }),
            ),
            (
                Box::new(skills::GetSkillTool::new(Arc::new(skills::SkillSet::default()))),
                json!({
                    "type": "object",
                    "properties": {
                        "skill_name": {"type": "string", "description": "The skill's name, as listed in the system prompt."},
                    },
                    "required": ["skill_name"],
                    "additionalProperties": false,
                }),
            ),
        ];
        for (tool, hand_written) in cases {
            assert_eq!(tool.input_schema(), hand_written, "{}", tool.name());
        }
    }

    /// What the schema check lets through but the type refuses (callers that skip the
    /// check, or a schema looser than the type) is said as the check says it: which
    /// argument, what it must be, what it was.
    #[test]
    fn a_value_the_type_refuses_names_the_argument() {
        let refused = |arguments: Value| read_args::<read::ReadArgs>(&arguments).unwrap_err().0;
        assert_eq!(
            refused(json!({"path": "a", "limit": 1.5})),
            "`limit`: expected a whole number of at least 0, got 1.5"
        );
        assert_eq!(
            refused(json!({"path": 5})),
            "`path`: invalid type: integer `5`, expected a string"
        );
        assert_eq!(refused(json!({})), "missing field `path`");
        let read: read::ReadArgs = read_args(&json!({"path": "a", "offset": 2.0, "limit": 1e20})).unwrap();
        assert_eq!((read.offset, read.limit), (Some(2), Some(u64::MAX)));
    }
}
