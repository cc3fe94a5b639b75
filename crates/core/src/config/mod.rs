//! Configuration: the typed settings and how the layers that make them are read.

pub mod edit;
mod env;
mod load;
mod prompt;
pub mod retry;

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

pub use crate::llm::{ModelConfig, Provider, endpoint};
pub use crate::protocol::ApprovalMode;
pub use env::Env;
pub use load::{ConfigError, LoadOptions, Overrides, config_dir, load, named_data_dir};
pub use prompt::{SYSTEM_PROMPT, system_prompt};

pub use retry::RetryPolicy;

/// The built-in defaults, the first layer; they list every key that exists.
pub const DEFAULT_CONFIG: &str = include_str!("../../../../config/default.toml");

/// Tokens compaction keeps free beyond the output reserve, for estimate error (the
/// start-up check of `token_limit` against the reserve counts them too).
pub const MARGIN_TOKENS: u64 = 1000;

/// `[agent]`: the loop's limits and policy.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AgentSettings {
    pub max_steps: u32,
    pub token_limit: u64,
    pub compaction: crate::protocol::CompactionStrategy,
    pub keep_tool_results: usize,
    pub keep_recent_steps: usize,
    pub delegate_max_steps: u32,
    pub tokenizer: crate::protocol::Encoding,
    pub approval: ApprovalMode,
    pub system_prompt_file: String,
}

/// `[tools.bash]`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BashSettings {
    pub default_timeout_s: u64,
    pub max_timeout_s: u64,
    pub output_limit_bytes: usize,
    /// Whether full-auto sandboxes commands too (the other modes always do).
    pub sandbox: crate::protocol::SandboxSetting,
    /// Variables that reach commands although they point at a socket or agent outside
    /// the sandbox (`SSH_AUTH_SOCK`, `DOCKER_HOST`, …); API key variables never do.
    pub pass_env: Vec<String>,
    /// Whether sandboxed commands may open Unix sockets (psql, docker).
    pub unix_sockets: bool,
    /// Whether sandboxed commands may bind or connect TCP sockets (Landlock ABI 4).
    pub network: bool,
}

/// `[ui]`: the workbench.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct UiSettings {
    pub theme: String,
    pub show_thinking: bool,
}

/// `[session]`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SessionSettings {
    pub record: bool,
}

/// `[tools.read_file]`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ReadFileSettings {
    pub max_tokens: u64,
}

/// `[tools]`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ToolSettings {
    /// Extra read-only roots for file tools.
    pub allow_paths: Vec<PathBuf>,
    pub read_file: ReadFileSettings,
    pub bash: BashSettings,
}

/// Everything miniagent reads from configuration.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Config {
    pub model: ModelConfig,
    pub retry: RetryPolicy,
    pub agent: AgentSettings,
    pub session: SessionSettings,
    pub ui: UiSettings,
    pub tools: ToolSettings,
    /// Where the system prompt file, if any, was resolved to (not a config key).
    #[serde(skip)]
    pub system_prompt_path: Option<PathBuf>,
    /// Settings adjusted while loading, one line each, for the person (not config keys).
    #[serde(skip)]
    pub notices: Vec<String>,
}
