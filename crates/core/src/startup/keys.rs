//! The API key a session uses: where it is looked for, and where it must not be sent
//! (a gateway that is not the key's owner, plain HTTP).

use crate::config::Config;
use crate::llm::{self, endpoint};

/// Why there is no key to use.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum KeyError {
    /// None was found where one is needed: the workbench's first-run panel says it.
    #[error("{0}")]
    Missing(String),
    /// The one found must not go where the configuration points: nothing starts.
    #[error("{0}")]
    Refused(String),
}

/// The API key: the variable `model.api_key_env` names, else `MINIAGENT_API_KEY`, else the
/// variable of the company whose host the base URL names (`ANTHROPIC_API_KEY` for
/// api.anthropic.com). A company's key never goes to another company's host, and goes to
/// a host that is no company's (a gateway) only from a variable named for it; a server on
/// this machine may need none.
pub fn api_key(config: &Config, env: &crate::config::Env) -> Result<llm::ApiKey, KeyError> {
    let base_url = &config.model.base_url;
    let set = |var: &str| env.var(var).filter(|key| !key.is_empty());
    let read = |variable: &str, value: String, passed_over: Option<&str>| llm::ApiKey {
        value,
        variable: Some(variable.to_string()),
        passed_over: passed_over.map(str::to_string),
    };
    let host_owner = endpoint::host_owner(base_url);
    let named = config.model.api_key_env.trim();
    let key = if !named.is_empty() {
        let value = set(named).ok_or_else(|| {
            KeyError::Missing(format!(
                "the API key variable {named} (model.api_key_env / --api-key-env) is not set"
            ))
        })?;
        read(named, value, None)
    } else if let Some(value) = set("MINIAGENT_API_KEY") {
        let passed_over = host_owner.unwrap_or(config.model.provider.spec().owner).variable;
        let passed_over = Some(passed_over).filter(|variable| set(variable).is_some());
        read("MINIAGENT_API_KEY", value, passed_over)
    } else if let Some(owner) = host_owner {
        // The provider's own variable, when the host's is not set, is read only to be
        // refused below: the person meant it, and is told why it cannot go there.
        let provider_variable = config.model.provider.spec().owner.variable;
        let (variable, value) = [owner.variable, provider_variable]
            .into_iter()
            .find_map(|variable| set(variable).map(|value| (variable, value)))
            .ok_or_else(|| {
                KeyError::Missing(format!(
                    "no API key: set MINIAGENT_API_KEY or {}, or name another variable with --api-key-env",
                    owner.variable
                ))
            })?;
        read(variable, value, None)
    } else if is_loopback(base_url) {
        // A server on this machine may need no key; a company's key set in the
        // environment is not sent to it unasked, and the person is told (key_notice).
        let unsent = std::iter::once(config.model.provider.spec().owner)
            .chain(endpoint::KEY_OWNERS)
            .find(|owner| set(owner.variable).is_some());
        return Ok(llm::ApiKey {
            passed_over: unsent.map(|owner| owner.variable.to_string()),
            ..llm::ApiKey::default()
        });
    } else {
        return Err(KeyError::Missing(no_key_for_gateway(config, env)));
    };
    if let Some(foreign) =
        endpoint::foreign_key(base_url, key.variable.as_deref().unwrap_or_default(), &key.value)
    {
        return Err(KeyError::Refused(format!(
            "{} (model.base_url, from {}): {}",
            foreign.describe(),
            config.base_url_source,
            foreign.remedy(!named.is_empty())
        )));
    }
    match endpoint::plain_http_to_owner(base_url) {
        Some(owner) => Err(KeyError::Refused(plain_http(owner, &config.base_url_source))),
        None => Ok(key),
    }
}

/// What to say at start about the key: a company's key that is set but not sent to the
/// server on this machine the configuration names (which may need none).
pub fn key_notice(key: &llm::ApiKey, base_url: &str) -> Option<String> {
    if !key.value.is_empty() {
        return None;
    }
    let variable = key.passed_over.as_deref()?;
    let owner = endpoint::variable_owner(variable)?;
    let host = endpoint::host_of(base_url).unwrap_or_else(|| base_url.to_string());
    Some(format!(
        "no API key is sent to {host}: {variable} goes only to {}; if this server needs it, start with --api-key-env {variable}",
        owner.hosts[0]
    ))
}

/// Why a company's host named over `http://` gets no key, and what to write.
pub(crate) fn plain_http(owner: &endpoint::KeyOwner, source: &str) -> String {
    format!(
        "model.base_url (from {source}) names {}'s host over plain http://, where the key would cross the network unencrypted: write {} (https://)",
        owner.name, owner.base_url
    )
}

/// Why a host that is no key owner's gets no key: a company's variable is never read
/// for it unasked.
fn no_key_for_gateway(config: &Config, env: &crate::config::Env) -> String {
    let host = endpoint::host_of(&config.model.base_url).unwrap_or_default();
    // The provider's own variable first: the one the person most likely meant.
    let set = std::iter::once(config.model.provider.spec().owner)
        .chain(endpoint::KEY_OWNERS)
        .find(|owner| env.var(owner.variable).is_some_and(|key| !key.is_empty()));
    match set {
        Some(owner) => format!(
            "no API key for {host}: {} goes only to {}; set MINIAGENT_API_KEY, or name the variable with --api-key-env to send it there",
            owner.variable, owner.hosts[0]
        ),
        None => format!(
            "no API key for {host}: set MINIAGENT_API_KEY, or name the variable that holds it with --api-key-env"
        ),
    }
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
