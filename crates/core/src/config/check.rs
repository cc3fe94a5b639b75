//! Checking the loaded settings: values no layer may give (a zero step limit, a key where
//! a variable's name goes), and the ones filled in or fitted after loading (the
//! provider's own API and model, the reply's reserve).

use super::{Config, ConfigError};

/// Refuses a value no layer may give, naming the key and the layer that set it.
pub(super) fn validate(config: &Config, source_of: &dyn Fn(&str) -> String) -> Result<(), ConfigError> {
    let fail =
        |key: &str, message: &str| Err(ConfigError(format!("{}: key `{key}`: {message}", source_of(key))));
    if config.agent.max_steps == 0 {
        return fail("agent.max_steps", "must be at least 1");
    }
    if !(config.agent.max_cost.is_finite() && config.agent.max_cost >= 0.0) {
        return fail("agent.max_cost", "must be a number of US dollars, 0 or more");
    }
    for (model, price) in &config.prices {
        let figures = [
            ("input", Some(price.input)),
            ("output", Some(price.output)),
            ("cache_read", price.cache_read),
            ("cache_write", price.cache_write),
        ];
        let bad = figures
            .into_iter()
            .find(|(_, figure)| figure.is_some_and(|p| !(p.is_finite() && p >= 0.0)));
        if let Some((field, _)) = bad {
            return fail(
                &format!("prices.{model}.{field}"),
                "prices must be numbers of US dollars, 0 or more",
            );
        }
    }
    if config.agent.max_cost > 0.0 && config.price().is_none() {
        return fail(
            "agent.max_cost",
            &format!(
                "a cost limit needs the price of model `{}`: add [prices.\"{}\"] with input and output (US dollars per million tokens)",
                config.model.model, config.model.model
            ),
        );
    }
    if config.model.call_deadline_s == 0 {
        return fail("model.call_deadline_s", "must be at least 1");
    }
    if config.model.max_output_tokens == 0 {
        return fail("model.max_output_tokens", "must be at least 1");
    }
    if config.tools.bash.default_timeout_s == 0
        || config.tools.bash.default_timeout_s > config.tools.bash.max_timeout_s
    {
        return fail(
            "tools.bash.default_timeout_s",
            "must be between 1 and tools.bash.max_timeout_s",
        );
    }
    if config.tools.web_fetch.timeout_s == 0 {
        return fail("tools.web_fetch.timeout_s", "must be at least 1");
    }
    if config.tools.web_fetch.max_bytes == 0 {
        return fail("tools.web_fetch.max_bytes", "must be at least 1");
    }
    if config.retry.exponential_base.is_nan() || config.retry.exponential_base < 1.0 {
        return fail("retry.exponential_base", "must be 1.0 or more");
    }
    validate_serve(&config.serve, &fail)?;
    // A name, not a path: each is looked for in every folder from the repository root
    // down, and a path could reach out of them.
    if let Some(name) = config.instructions.files.iter().find(|name| {
        name.is_empty()
            || name.contains(['/', '\\'])
            || *name == "."
            || *name == ".."
            || name.chars().any(char::is_control)
    }) {
        return fail(
            "instructions.files",
            &format!("takes file names such as AGENTS.md, and {name:?} is not one"),
        );
    }
    // The value is never repeated: a key pasted here would be printed back.
    let named = config.model.api_key_env.trim();
    if looks_like_a_key(named) {
        return fail(
            "model.api_key_env",
            "takes the name of the environment variable that holds the key (such as MY_API_KEY), and this looks like a key itself; put the key in a variable and name that",
        );
    }
    // `$OPENAI_API_KEY` as a shell would write it: the name is safe to repeat.
    let bare = named
        .trim_start_matches('$')
        .trim_start_matches('{')
        .trim_end_matches('}');
    if named.starts_with('$') && is_variable_name(bare) {
        return fail(
            "model.api_key_env",
            &format!("takes the variable's name without the $: {bare}"),
        );
    }
    if !named.is_empty() && !is_variable_name(named) {
        return fail(
            "model.api_key_env",
            "takes the name of the environment variable that holds the key: letters, digits and _, such as MY_API_KEY",
        );
    }
    super::endpoint::resolve_base_url(config.model.provider, &config.model.base_url)
        .map(|_| ())
        .or_else(|err| fail("model.base_url", &err.to_string()))
}

/// `[serve]`: values the server could not work with, found at load rather than at the
/// first request.
fn validate_serve(
    serve: &super::ServeConfig,
    fail: &dyn Fn(&str, &str) -> Result<(), ConfigError>,
) -> Result<(), ConfigError> {
    if let Some(root) = serve.roots.iter().find(|root| !root.is_absolute()) {
        return fail(
            "serve.roots",
            &format!("takes absolute folders, and {} is not one", root.display()),
        );
    }
    let token_env = serve.token_env.trim();
    // As for model.api_key_env: a token pasted here is never printed back.
    if looks_like_a_key(token_env) || !is_variable_name(token_env) {
        return fail(
            "serve.token_env",
            "takes the name of the environment variable that holds the token (letters, digits and _, such as MINIAGENT_SERVE_TOKEN), not the token",
        );
    }
    if serve.models.iter().any(|model| model.trim().is_empty()) {
        return fail("serve.models", "a model's name cannot be empty");
    }
    if serve.approval_modes.is_empty() {
        return fail(
            "serve.approval_modes",
            "needs at least one mode (read-only, ask, auto-edit, full-auto)",
        );
    }
    let positive = [
        ("serve.max_sessions", serve.max_sessions),
        ("serve.max_body_bytes", serve.max_body_bytes),
        ("serve.events_kept", serve.events_kept),
    ];
    if let Some((key, _)) = positive.into_iter().find(|(_, value)| *value == 0) {
        return fail(key, "must be at least 1");
    }
    let lists = [
        (
            "serve.allowed_hosts",
            &serve.allowed_hosts,
            "example.com or example.com:8420",
        ),
        (
            "serve.allowed_origins",
            &serve.allowed_origins,
            "https://example.com",
        ),
    ];
    for (key, entries, example) in lists {
        if entries
            .iter()
            .any(|entry| entry.is_empty() || entry.contains(char::is_whitespace))
        {
            return fail(key, &format!("each entry is one word, such as {example}"));
        }
    }
    Ok(())
}

/// Whether `value` could be a key pasted where a variable's name goes: a known key's
/// beginning, or a long run mixing lower-case letters and digits without the `_` that
/// long variable names have.
fn looks_like_a_key(value: &str) -> bool {
    const KEY_STARTS: [&str; 9] = [
        "sk-", "sk_", "gsk_", "xai-", "AIza", "nvapi-", "hf_", "pplx-", "csk-",
    ];
    let long_mix = value.len() >= 24
        && value.bytes().any(|b| b.is_ascii_digit())
        && value.bytes().any(|b| b.is_ascii_lowercase())
        && !value.contains('_');
    KEY_STARTS.iter().any(|start| value.starts_with(start)) || long_mix
}

/// Whether `value` is an environment variable's name (letters, digits and `_`, not
/// starting with a digit).
fn is_variable_name(value: &str) -> bool {
    value
        .bytes()
        .next()
        .is_some_and(|first| first.is_ascii_alphabetic() || first == b'_')
        && value.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_')
}

/// An empty base URL is the provider's own API and an empty model its default model
/// (MiniMax's on a MiniMax host): `--provider openai` alone goes to OpenAI, never with
/// its key to Anthropic's host.
pub(super) fn fill_provider_defaults(config: &mut Config, base_url_source: String) {
    let provider = config.model.provider;
    config.base_url_source = base_url_source;
    if config.model.base_url.trim().is_empty() {
        config.model.base_url = provider.spec().owner.base_url.to_string();
        config.base_url_source = format!("the default of provider {provider}");
    }
    if config.model.model.trim().is_empty() {
        config.model.model = super::endpoint::default_model(provider, &config.model.base_url).to_string();
    }
}

/// The reply's reserve (`model.max_output_tokens`) is taken from the budget of every
/// request; when it leaves the prompt less than half the limit, every prompt would fail.
/// The built-in reserve is lowered to fit, with one line saying so; a reserve the person
/// set is refused, naming both settings.
pub(super) fn fit_output_reserve(
    config: &mut Config,
    source_of: &dyn Fn(&str) -> String,
) -> Result<(), ConfigError> {
    let margin = super::MARGIN_TOKENS;
    let (limit_key, limit) = if config.model.context_window < config.agent.token_limit {
        ("model.context_window", config.model.context_window)
    } else {
        ("agent.token_limit", config.agent.token_limit)
    };
    let reserve = u64::from(config.model.max_output_tokens);
    // At most half of what the margin leaves, so the prompt has the other half.
    let most = limit.saturating_sub(margin) / 2;
    if reserve <= most {
        return Ok(());
    }
    if most < MIN_OUTPUT_RESERVE {
        return Err(ConfigError(format!(
            "{}: key `{limit_key}`: {limit} tokens is too small for a prompt and a reply (at least {})",
            source_of(limit_key),
            margin + 2 * MIN_OUTPUT_RESERVE
        )));
    }
    let source = source_of("model.max_output_tokens");
    if source != "built-in defaults" {
        return Err(ConfigError(format!(
            "{limit_key} {limit} leaves no room for the prompt: model.max_output_tokens {reserve} ({source}) is reserved for the reply out of it; raise {limit_key} or set model.max_output_tokens to at most {most}"
        )));
    }
    config.model.max_output_tokens = u32::try_from(most).unwrap_or(u32::MAX);
    config.notices.push(format!(
        "{limit_key} {limit} ({}) cannot hold the default model.max_output_tokens {reserve}; replies are limited to {most} tokens so the prompt keeps half of it",
        source_of(limit_key)
    ));
    Ok(())
}

/// The smallest reply reserve worth a request.
const MIN_OUTPUT_RESERVE: u64 = 256;
