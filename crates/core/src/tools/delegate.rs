//! `delegate {task, tools?}`: hands a self-contained task to a sub-agent. The tool only
//! reads its arguments; the sub-agent itself (its own history, tools, step limit and
//! prompt) is run by the agent loop through [`super::SubAgents`], so a delegate call goes
//! through the same validation, approval and result path as every other call.

use futures_util::future::BoxFuture;
use schemars::JsonSchema;
use serde::Deserialize;

use super::{ToolContext, ToolEffect, ToolOutput};

/// The tool's name.
pub const NAME: &str = "delegate";

/// The `delegate` tool.
pub struct DelegateTool;

/// `delegate`'s arguments.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct DelegateArgs {
    /// The whole task, with everything the sub-agent needs to know.
    pub task: String,
    /// Tool names it may use (default: the read-only tools).
    pub tools: Option<Vec<String>>,
}

impl super::TypedTool for DelegateTool {
    type Args = DelegateArgs;

    fn name(&self) -> &str {
        NAME
    }

    fn description(&self) -> &str {
        "Hand a self-contained task to a sub-agent with its own fresh context, for example to search \
         or read widely without filling your own context. It gets only the tools you name (default: the \
         read-only ones), works alone, and its final report comes back as this call's result. Describe the \
         task completely: it sees nothing of this conversation."
    }

    /// The call itself changes nothing: each call the sub-agent makes is approved on its own.
    fn effect(&self) -> ToolEffect {
        ToolEffect::ReadOnly
    }

    /// A sub-agent works the task out: it acts only through its own calls, each shown.
    fn kind(&self) -> miniagent_protocol::ToolKind {
        miniagent_protocol::ToolKind::Think
    }

    fn run(&self, args: DelegateArgs, context: ToolContext) -> BoxFuture<'_, ToolOutput> {
        Box::pin(async move {
            let task = args.task.trim().to_string();
            if task.is_empty() {
                return ToolOutput::error("`task` is empty");
            }
            match &context.sub_agents {
                Some(sub_agents) => sub_agents.run(task, args.tools).await,
                None => ToolOutput::error("a sub-agent cannot delegate: do the task with the tools you have"),
            }
        })
    }
}
