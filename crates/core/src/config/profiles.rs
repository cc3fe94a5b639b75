//! Provider profiles: `[profiles.NAME]` tables holding the `[model]` keys that differ
//! (provider, base URL, model, key variable, window…). `--profile NAME` starts with one;
//! `/model NAME` switches to one mid-session. Each is resolved at load over the `[model]`
//! the files and the environment give (not the flags), and checked like `[model]` itself,
//! so a profile that could not work is an error at start, not at the switch.

use std::collections::BTreeMap;

use toml::{Table, Value};

use super::check::{fill_provider_defaults, fit_output_reserve, validate};
use super::{Config, ConfigError, ModelConfig};

/// The profile every session has: the `[model]` table itself, unless the config names
/// one so.
pub const DEFAULT_PROFILE: &str = "default";

/// The longest profile name: it goes in a title bar and a picker.
const MAX_NAME_CHARS: usize = 64;

/// One resolved profile: the whole `[model]` it stands for.
#[derive(Clone, Debug, PartialEq)]
pub struct Profile {
    pub model: ModelConfig,
    /// Where its base URL was set, for messages about the key.
    pub base_url_source: String,
}

/// Whether `name` may name a profile: letters, digits, `-`, `_` and `.`, as a command's
/// argument and a config table's key can both hold.
pub fn is_profile_name(name: &str) -> bool {
    !name.is_empty()
        && name.chars().count() <= MAX_NAME_CHARS
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
}

/// How the loader checks a layer's keys against the known ones (`known`, `layer`, the
/// path so far, the layer's source).
pub(super) type CheckKeys = dyn Fn(&Table, &Table, &str, &str) -> Result<(), ConfigError>;

/// Checks a layer's `[profiles]`: each entry a table of `[model]`'s keys.
pub(super) fn check_keys(
    known: &Table,
    profiles: &Table,
    source: &str,
    check_known_keys: &CheckKeys,
) -> Result<(), ConfigError> {
    let model = match known.get("model") {
        Some(Value::Table(model)) => model,
        _ => return Err(ConfigError("built-in defaults: no [model] table".to_string())),
    };
    for (name, value) in profiles {
        if !is_profile_name(name) {
            return Err(ConfigError(format!(
                "{source}: profile name {name:?}: use letters, digits, -, _ and . (at most {MAX_NAME_CHARS})"
            )));
        }
        let Value::Table(keys) = value else {
            return Err(ConfigError(format!(
                "{source}: key `profiles.{name}` is a section: write [profiles.{name}] and under it the [model] keys that differ (provider, base_url, model, api_key_env, context_window, …)"
            )));
        };
        check_known_keys(model, keys, &format!("profiles.{name}"), source)?;
    }
    Ok(())
}

/// Where requests go and with which key: a profile that names another provider or host
/// does not take these from `[model]` (a key named for one host must not go to another
/// unasked, nor a model name to a provider that has none of it); left out, they are the
/// provider's own.
const WHERE_KEYS: [&str; 3] = ["base_url", "model", "api_key_env"];

/// The profile's keys as a `[model]` table over `[model]`: with [`WHERE_KEYS`] emptied
/// when it moves to another provider or host.
fn model_layer(keys: &Table) -> Table {
    let mut keys = keys.clone();
    if keys.contains_key("provider") || keys.contains_key("base_url") {
        for key in WHERE_KEYS {
            keys.entry(key.to_string())
                .or_insert_with(|| Value::String(String::new()));
        }
    }
    let mut layer = Table::new();
    layer.insert("model".to_string(), Value::Table(keys));
    layer
}

/// The table `--profile NAME` layers over the config: the profile's keys as `[model]`'s.
pub(super) fn start_layer(profiles: &Table, name: &str) -> Result<Table, ConfigError> {
    match profiles.get(name) {
        Some(Value::Table(keys)) => Ok(model_layer(keys)),
        _ if name == DEFAULT_PROFILE => Ok(model_layer(&Table::new())),
        _ => Err(unknown(profiles, name)),
    }
}

/// `layer`'s keys over `into`'s, tables merged key by key.
fn overlay(into: &mut Table, layer: &Table) {
    for (key, value) in layer {
        match (into.get_mut(key), value) {
            (Some(Value::Table(existing)), Value::Table(inner)) => overlay(existing, inner),
            _ => {
                into.insert(key.clone(), value.clone());
            }
        }
    }
}

fn unknown(profiles: &Table, name: &str) -> ConfigError {
    let mut names: Vec<&str> = profiles.keys().map(String::as_str).collect();
    if !names.contains(&DEFAULT_PROFILE) {
        names.push(DEFAULT_PROFILE);
    }
    names.sort_unstable();
    ConfigError(format!(
        "--profile: no profile {name:?} in the config (profiles: {})",
        names.join(", ")
    ))
}

/// Every profile (and [`DEFAULT_PROFILE`]) as the whole `[model]` it stands for, over
/// `base` (the merged layers without the flags). `source_of(profile, key)` names the
/// layer that set a `model.*` key for that profile.
pub(super) fn resolve(
    base: &Table,
    profiles: &Table,
    source_of: &dyn Fn(&str, &str) -> String,
) -> Result<BTreeMap<String, Profile>, ConfigError> {
    let empty = Table::new();
    let mut names: Vec<(&str, &Table)> = profiles
        .iter()
        .filter_map(|(name, value)| value.as_table().map(|keys| (name.as_str(), keys)))
        .collect();
    if !profiles.contains_key(DEFAULT_PROFILE) {
        names.push((DEFAULT_PROFILE, &empty));
    }
    let mut resolved = BTreeMap::new();
    for (name, keys) in names {
        let within = |err: ConfigError| ConfigError(format!("profile `{name}`: {}", err.0));
        let mut table = base.clone();
        overlay(&mut table, &model_layer(keys));
        let mut config: Config = serde_path_to_error::deserialize(Value::Table(table)).map_err(|err| {
            within(ConfigError(format!(
                "{}: key `profiles.{name}.{}`: {}",
                source_of(name, &err.path().to_string()),
                err.path().to_string().trim_start_matches("model."),
                err.inner()
            )))
        })?;
        let source = |key: &str| source_of(name, key);
        fill_provider_defaults(&mut config, source("model.base_url"));
        validate(&config, &source).map_err(within)?;
        fit_output_reserve(&mut config, &source).map_err(within)?;
        resolved.insert(
            name.to_string(),
            Profile {
                model: config.model,
                base_url_source: config.base_url_source,
            },
        );
    }
    Ok(resolved)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::{Env, LoadOptions, Overrides, Provider, load};
    use pretty_assertions::assert_eq;

    fn load_text(text: &str, overrides: Overrides) -> Result<Config, ConfigError> {
        static NEXT: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
        let dir = std::env::temp_dir().join(format!(
            "miniagent-profiles-{}-{}",
            std::process::id(),
            NEXT.fetch_add(1, std::sync::atomic::Ordering::SeqCst)
        ));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("config.toml"), text).unwrap();
        let loaded = load(&LoadOptions {
            config_dir: Some(dir.clone()),
            config_file: None,
            overrides,
            env: &Env::empty(),
        });
        std::fs::remove_dir_all(&dir).unwrap();
        loaded.map_err(|err| ConfigError(err.0.replace(&dir.display().to_string(), "DIR")))
    }

    const PROFILES: &str = "[model]\nmodel = \"m1\"\n\n[profiles.fast]\nmodel = \"claude-haiku-4-5\"\n\n[profiles.gpt]\nprovider = \"openai\"\ncontext_window = 400000\n";

    #[test]
    fn each_profile_is_model_with_its_own_keys_over_it() {
        let config = load_text(PROFILES, Overrides::default()).unwrap();
        let summary: Vec<(&str, Provider, &str, &str, u64)> = config
            .profiles
            .iter()
            .map(|(name, p)| {
                let m = &p.model;
                (
                    name.as_str(),
                    m.provider,
                    m.base_url.as_str(),
                    m.model.as_str(),
                    m.context_window,
                )
            })
            .collect();
        assert_eq!(
            summary,
            vec![
                (
                    "default",
                    Provider::Anthropic,
                    "https://api.anthropic.com",
                    "m1",
                    200_000
                ),
                (
                    "fast",
                    Provider::Anthropic,
                    "https://api.anthropic.com",
                    "claude-haiku-4-5",
                    200_000
                ),
                // Another provider: its own host, model and key, not [model]'s.
                (
                    "gpt",
                    Provider::Openai,
                    "https://api.openai.com/v1",
                    "gpt-4.1",
                    400_000
                ),
            ]
        );
        assert_eq!((config.profile, config.model.model.as_str()), (None, "m1"));
    }

    #[test]
    fn profile_starts_with_one_and_the_flags_win_over_it() {
        let config = load_text(
            PROFILES,
            Overrides {
                profile: Some("gpt".into()),
                model: Some("gpt-5".into()),
                ..Overrides::default()
            },
        )
        .unwrap();
        let m = &config.model;
        assert_eq!(
            (
                config.profile.as_deref(),
                m.provider,
                m.base_url.as_str(),
                m.model.as_str(),
                m.context_window
            ),
            (
                Some("gpt"),
                Provider::Openai,
                "https://api.openai.com/v1",
                "gpt-5",
                400_000
            )
        );
        // The profiles themselves are the config's, without the flags.
        assert_eq!(config.profiles["gpt"].model.model, "gpt-4.1");
    }

    #[test]
    fn a_profile_that_could_not_work_is_an_error_at_load_naming_it() {
        let cases = [
            (
                "[profiles.fast]\nmodle = \"x\"\n",
                None,
                "DIR/config.toml: unknown key `profiles.fast.modle`",
            ),
            (
                "[profiles.fast]\napi_key_env = \"sk-abcdef0123456789abcdef\"\n",
                None,
                "profile `fast`: DIR/config.toml: key `model.api_key_env`: takes the name",
            ),
            (
                "[profiles]\nfast = \"claude-haiku-4-5\"\n",
                None,
                "DIR/config.toml: key `profiles.fast` is a section",
            ),
            (
                "[profiles.\"two words\"]\nmodel = \"x\"\n",
                None,
                "DIR/config.toml: profile name \"two words\": use letters",
            ),
            (
                "[profiles.fast]\ncontext_window = 2000\n",
                None,
                "profile `fast`: model.context_window 2000 leaves no room for the prompt",
            ),
            (
                "[profiles.fast]\nmodel = \"x\"\n",
                Some("slow"),
                "--profile: no profile \"slow\" in the config (profiles: default, fast)",
            ),
        ];
        for (text, profile, start) in cases {
            let err = load_text(
                text,
                Overrides {
                    profile: profile.map(str::to_string),
                    ..Overrides::default()
                },
            )
            .unwrap_err();
            assert!(err.0.starts_with(start), "{text:?}: {}", err.0);
        }
    }
}
