//! Turning command-line options into a ready session: configuration, workspace, API key,
//! model client, system prompt and tools. Shared by every front end.

use std::path::PathBuf;
use std::sync::Arc;

use anyhow::{Context, bail};

use crate::agent::AgentOptions;
use crate::config::{self, Config, LoadOptions, Overrides, Provider};
use crate::llm::{self, endpoint};
use crate::tools::ToolRegistry;

/// What the person chose on the command line.
#[derive(Clone, Debug, Default)]
pub struct StartOptions {
    /// Default: the current directory.
    pub workspace: Option<PathBuf>,
    pub config_file: Option<PathBuf>,
    pub overrides: Overrides,
}

/// Reads the configuration layers for these options.
pub fn load_config(options: &StartOptions, env: &dyn Fn(&str) -> Option<String>) -> anyhow::Result<Config> {
    Ok(config::load(&LoadOptions {
        config_dir: config::config_dir(env),
        config_file: options.config_file.clone(),
        overrides: options.overrides.clone(),
        env,
    })?)
}

/// Builds everything a session needs. Errors are one line, ready to show.
pub fn prepare(options: &StartOptions, env: &dyn Fn(&str) -> Option<String>) -> anyhow::Result<AgentOptions> {
    let config = load_config(options, env)?;
    let workspace = resolve_workspace(options)?;
    let api_key = api_key(&config, env)?;
    build(config, workspace, api_key)
}

/// The workspace folder, resolved: the option given, else the current directory.
pub fn resolve_workspace(options: &StartOptions) -> anyhow::Result<PathBuf> {
    let workspace = match &options.workspace {
        Some(dir) => dir.clone(),
        None => std::env::current_dir().context("cannot read the current directory")?,
    };
    let workspace = workspace
        .canonicalize()
        .with_context(|| format!("workspace {}: cannot open it", workspace.display()))?;
    if !workspace.is_dir() {
        bail!("workspace {}: not a directory", workspace.display());
    }
    Ok(workspace)
}

/// A session from a loaded configuration, a resolved workspace and a key.
pub fn build(config: Config, workspace: PathBuf, api_key: String) -> anyhow::Result<AgentOptions> {
    let client = llm::build_client(&config.model, api_key)?;
    let system_prompt = config::system_prompt(&config, &workspace, "")?;
    let tools = ToolRegistry::builtin(&config);
    Ok(AgentOptions {
        config,
        workspace,
        read_roots: Vec::new(),
        mcp: None,
        side_events: std::sync::Mutex::new(None),
        system_prompt,
        client: Arc::clone(&client),
        tools,
    })
}

/// The API key: the variable `model.api_key_env` names, else `MINIAGENT_API_KEY`, else the
/// provider's usual variable. A server on this machine may need none.
pub fn api_key(config: &Config, env: &dyn Fn(&str) -> Option<String>) -> anyhow::Result<String> {
    let named = config.model.api_key_env.trim();
    if !named.is_empty() {
        return env(named).filter(|key| !key.is_empty()).with_context(|| {
            format!("the API key variable {named} (model.api_key_env / --api-key-env) is not set")
        });
    }
    let usual = if endpoint::is_minimax(&config.model.base_url) {
        "MINIMAX_API_KEY"
    } else {
        match config.model.provider {
            Provider::Anthropic => "ANTHROPIC_API_KEY",
            Provider::Openai => "OPENAI_API_KEY",
        }
    };
    for var in ["MINIAGENT_API_KEY", usual] {
        if let Some(key) = env(var).filter(|key| !key.is_empty()) {
            return Ok(key);
        }
    }
    if is_loopback(&config.model.base_url) {
        return Ok(String::new());
    }
    bail!("no API key: set MINIAGENT_API_KEY or {usual}, or name another variable with --api-key-env")
}

fn is_loopback(base_url: &str) -> bool {
    reqwest::Url::parse(base_url)
        .ok()
        .and_then(|url| {
            url.host_str()
                .map(|host| matches!(host, "localhost" | "127.0.0.1" | "[::1]"))
        })
        .unwrap_or(false)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn config_with(api_key_env: &str, base_url: &str) -> Config {
        let mut config = config::load(&LoadOptions {
            config_dir: None,
            config_file: None,
            overrides: Overrides::default(),
            env: &|_| None,
        })
        .unwrap();
        config.model.api_key_env = api_key_env.into();
        config.model.base_url = base_url.into();
        config
    }

    #[test]
    fn key_lookup_order() {
        let env = |name: &str| match name {
            "MINIAGENT_API_KEY" => Some("generic".to_string()),
            "ANTHROPIC_API_KEY" => Some("anthropic".to_string()),
            "MINIMAX_API_KEY" => Some("minimax".to_string()),
            "MY_KEY" => Some("mine".to_string()),
            _ => None,
        };
        assert_eq!(
            api_key(&config_with("MY_KEY", "https://api.anthropic.com"), &env).unwrap(),
            "mine"
        );
        assert_eq!(
            api_key(&config_with("", "https://api.anthropic.com"), &env).unwrap(),
            "generic"
        );
        let no_generic = |name: &str| {
            if name == "MINIAGENT_API_KEY" {
                None
            } else {
                env(name)
            }
        };
        assert_eq!(
            api_key(&config_with("", "https://api.anthropic.com"), &no_generic).unwrap(),
            "anthropic"
        );
        assert_eq!(
            api_key(&config_with("", "https://api.minimax.io"), &no_generic).unwrap(),
            "minimax"
        );
        let err = api_key(&config_with("UNSET_VAR", "https://api.anthropic.com"), &env).unwrap_err();
        assert!(err.to_string().contains("UNSET_VAR"), "{err}");
        let err = api_key(&config_with("", "https://api.anthropic.com"), &|_| None).unwrap_err();
        assert!(err.to_string().starts_with("no API key"), "{err}");
        assert_eq!(
            api_key(&config_with("", "http://127.0.0.1:9/v1"), &|_| None).unwrap(),
            ""
        );
    }
}
