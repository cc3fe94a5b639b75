//! Configuration: the typed settings and how the layers that make them are read.

mod check;
pub mod edit;
mod env;
mod files;
mod load;
pub mod permissions;
mod profiles;
mod prompt;
pub mod retry;

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

pub use crate::llm::{ModelConfig, Provider, endpoint};
pub use env::Env;
pub use files::{effective_uid, private_dir, private_log};
pub use load::{LoadOptions, Overrides, config_dir, load, named_data_dir};
pub use miniagent_protocol::ApprovalMode;
pub use permissions::{PermissionSettings, PermissionSources};
pub use profiles::{DEFAULT_PROFILE, Profile, is_profile_name};
pub use prompt::{SYSTEM_PROMPT, system_prompt};

pub use retry::RetryPolicy;

/// A configuration problem, as one line naming where it came from.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct ConfigError(pub String);

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
    pub compaction: miniagent_protocol::CompactionStrategy,
    pub keep_tool_results: usize,
    pub keep_recent_steps: usize,
    pub delegate_max_steps: u32,
    pub tokenizer: miniagent_protocol::Encoding,
    pub approval: ApprovalMode,
    pub system_prompt_file: String,
    /// The most one turn may cost, in US dollars (0: no limit); needs the model's price.
    pub max_cost: f64,
}

/// One model's prices, in US dollars per million tokens (`[prices."MODEL"]`).
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ModelPrice {
    /// Input tokens neither read from nor written to the cache.
    pub input: f64,
    pub output: f64,
    /// Input tokens written to the cache; the input price where not given.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cache_write: Option<f64>,
    /// Input tokens read from the cache; the input price where not given.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cache_read: Option<f64>,
}

/// Token counts of one call, as a bill needs them.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct BilledTokens {
    /// The whole prompt, cached parts included.
    pub input: u64,
    pub output: u64,
    pub cache_read: u64,
    pub cache_write: u64,
}

impl ModelPrice {
    /// What a call with these token counts costs, in US dollars.
    pub fn cost(&self, tokens: BilledTokens) -> f64 {
        let cached = tokens.cache_read.saturating_add(tokens.cache_write);
        let plain = tokens.input.saturating_sub(cached);
        let per_token = |price: f64, count: u64| price * count as f64 / 1_000_000.0;
        per_token(self.input, plain)
            + per_token(self.cache_read.unwrap_or(self.input), tokens.cache_read)
            + per_token(self.cache_write.unwrap_or(self.input), tokens.cache_write)
            + per_token(self.output, tokens.output)
    }
}

impl Config {
    /// The configured prices of the model in use, if any.
    pub fn price(&self) -> Option<ModelPrice> {
        price_of(&self.prices, &self.model.model)
    }
}

/// The price for `model`: its own entry, else the entry it is a dated version of
/// (`claude-sonnet-4-5` prices `claude-sonnet-4-5-20250929`, `gpt-4o` prices
/// `gpt-4o-2024-08-06` but not `gpt-4o-mini`, another model at another price).
pub fn price_of(prices: &std::collections::BTreeMap<String, ModelPrice>, model: &str) -> Option<ModelPrice> {
    if let Some(price) = prices.get(model) {
        return Some(*price);
    }
    let dated = |rest: &str| {
        rest.strip_prefix('-').is_some_and(|date| {
            date.bytes().all(|b| b.is_ascii_digit() || b == b'-')
                && date.bytes().filter(u8::is_ascii_digit).count() >= 8
        })
    };
    prices
        .iter()
        .find(|(name, _)| model.strip_prefix(name.as_str()).is_some_and(dated))
        .map(|(_, price)| *price)
}

/// `[tools.bash]`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BashSettings {
    pub default_timeout_s: u64,
    pub max_timeout_s: u64,
    pub output_limit_bytes: usize,
    /// Whether full-auto sandboxes commands too (the other modes always do).
    pub sandbox: miniagent_protocol::SandboxSetting,
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
    /// How the workbench sends a desktop notification when it is not focused.
    #[serde(default)]
    pub notify: miniagent_protocol::NotifySetting,
}

/// `[session]`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SessionSettings {
    pub record: bool,
}

/// `[serve]`: what `miniagent serve` listens on and lets a remote client start. Read
/// through `api::ServeSettings`, which fills in the empty lists.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ServeConfig {
    pub bind: std::net::SocketAddr,
    /// Absolute folders a workspace may be in; empty: the folder the server started in.
    pub roots: Vec<PathBuf>,
    /// The variable holding the bearer token (its name, never the token).
    pub token_env: String,
    pub allowed_hosts: Vec<String>,
    pub allowed_origins: Vec<String>,
    /// Models a session may ask for; empty: the configured one.
    pub models: Vec<String>,
    pub approval_modes: Vec<ApprovalMode>,
    pub max_sessions: usize,
    pub max_body_bytes: usize,
    pub events_kept: usize,
}

/// `[instructions]`: the instruction files (`AGENTS.md` and its fallbacks).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct InstructionSettings {
    /// The names looked for in each folder, the first that exists taken.
    pub files: Vec<String>,
    /// The most all of them together put in the prompt, in bytes.
    pub max_bytes: usize,
}

/// `[checkpoints]`: what is kept to put the workspace back (`/diff`, `/undo`, `/rewind`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CheckpointSettings {
    /// Whether anything is kept.
    pub enabled: bool,
    /// A larger file is recorded as not kept.
    pub max_file_bytes: u64,
    /// The most files one look at the workspace (before or after a command) reads.
    pub max_files: usize,
    /// The most bytes one session keeps.
    pub max_session_bytes: u64,
}

/// `[tools.read_file]`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ReadFileSettings {
    pub max_tokens: u64,
}

/// `[tools.web_fetch]`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WebFetchSettings {
    /// Seconds one fetch may take, redirects and the body included.
    pub timeout_s: u64,
    /// The most of a body read; the rest is not downloaded.
    pub max_bytes: usize,
    /// Whether addresses on this machine and private networks may be fetched.
    pub allow_private: bool,
    /// Hosts (as a URL names them) fetched whatever their addresses are.
    pub allow_hosts: Vec<String>,
}

/// `[tools]`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ToolSettings {
    /// Extra read-only roots for file tools.
    pub allow_paths: Vec<PathBuf>,
    /// A result longer than this is saved whole, and the model gets its head and tail
    /// and the file's path (0: results are only cut, as each tool cuts them).
    pub large_result_bytes: usize,
    pub read_file: ReadFileSettings,
    pub bash: BashSettings,
    pub web_fetch: WebFetchSettings,
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
    pub serve: ServeConfig,
    pub instructions: InstructionSettings,
    pub checkpoints: CheckpointSettings,
    /// Prices by model name; a name also prices its dated versions (the name, a dash and
    /// a date).
    pub prices: std::collections::BTreeMap<String, ModelPrice>,
    /// `[permissions]`: allow, ask and deny rules; each layer's lists add to the ones
    /// before, so no later layer can take a rule away.
    pub permissions: PermissionSettings,
    /// The user's config file and home folder the rules need, and the trusted
    /// workspace's own rules (not config keys).
    #[serde(skip)]
    pub permission_sources: PermissionSources,
    /// Where `model.base_url` was set (a file, a variable, a flag, or the provider's
    /// default), for messages (not a config key).
    #[serde(skip)]
    pub base_url_source: String,
    /// Where the system prompt file, if any, was resolved to (not a config key).
    #[serde(skip)]
    pub system_prompt_path: Option<PathBuf>,
    /// Settings adjusted while loading, one line each, for the person (not config keys).
    #[serde(skip)]
    pub notices: Vec<String>,
    /// `[profiles.NAME]`, each resolved to the whole `[model]` it stands for, and
    /// `default` (the `[model]` table itself) unless the config names one so.
    #[serde(skip)]
    pub profiles: std::collections::BTreeMap<String, Profile>,
    /// The profile the session started with (`--profile`).
    #[serde(skip)]
    pub profile: Option<String>,
}

/// The built-in configuration alone (no user file, no variables), for tests.
#[cfg(test)]
#[allow(clippy::expect_used)] // The built-in defaults always load; a test fails if not.
pub(crate) fn built_in() -> Config {
    load(&LoadOptions {
        config_dir: None,
        config_file: None,
        overrides: Overrides::default(),
        env: &Env::empty(),
    })
    .expect("the built-in configuration loads")
}

#[cfg(test)]
mod price_tests {
    use super::*;

    #[test]
    fn a_price_covers_its_dated_versions_only() {
        let config = crate::config::built_in();
        let price = |model: &str| price_of(&config.prices, model).map(|p| (p.input, p.output));
        assert_eq!(price("claude-sonnet-4-5"), Some((3.0, 15.0)));
        assert_eq!(price("claude-sonnet-4-5-20250929"), Some((3.0, 15.0)));
        assert_eq!(price("gpt-4o-2024-08-06"), Some((2.5, 10.0)));
        // Another model whose name begins like a priced one is not priced like it.
        assert_eq!(price("gpt-4o-mini"), Some((0.15, 0.6)));
        assert_eq!(price("gpt-4o-audio-preview"), None);
        assert_eq!(price("claude-sonnet-4-6"), None);
        assert_eq!(price("unknown-model"), None);
        // The built-in default model is priced.
        assert!(config.price().is_some());
    }
}
