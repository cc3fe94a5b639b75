//! Reading the configuration layers: built-in defaults < user file < `--config FILE` <
//! environment < flags.
//!
//! Each layer is a TOML table. A key a layer sets that the defaults do not have is an
//! error naming the layer; the merged table is then deserialized once, and a type error
//! names the key and the layer that set it.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use toml::{Table, Value};

use super::check::{fill_provider_defaults, fit_output_reserve, validate};
use super::{Config, ConfigError, DEFAULT_CONFIG};

/// Values given on the command line; `None` leaves the lower layers' value.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Overrides {
    pub provider: Option<super::Provider>,
    pub base_url: Option<String>,
    pub model: Option<String>,
    pub api_key_env: Option<String>,
    pub approval: Option<super::ApprovalMode>,
    pub max_steps: Option<u32>,
    /// `--sandbox`: `tools.bash.sandbox`.
    pub sandbox: Option<miniagent_protocol::SandboxSetting>,
    /// `--profile NAME`: the `[profiles.NAME]` table over `[model]`, under the flags.
    pub profile: Option<String>,
}

/// Where to look and what to put on top.
pub struct LoadOptions<'a> {
    /// The user's config directory; `config.toml` there is read when it exists.
    pub config_dir: Option<PathBuf>,
    /// `--config FILE`: must exist.
    pub config_file: Option<PathBuf>,
    pub overrides: Overrides,
    /// Reads an environment variable (a parameter so tests need not touch the process env).
    pub env: &'a super::Env,
}

/// Environment variables that set config keys.
const ENV_KEYS: [(&str, &str); 7] = [
    ("MINIAGENT_PROVIDER", "model.provider"),
    ("MINIAGENT_BASE_URL", "model.base_url"),
    ("MINIAGENT_MODEL", "model.model"),
    ("MINIAGENT_API_KEY_ENV", "model.api_key_env"),
    ("MINIAGENT_APPROVAL", "agent.approval"),
    ("MINIAGENT_MAX_STEPS", "agent.max_steps"),
    ("MINIAGENT_TOKEN_LIMIT", "agent.token_limit"),
];

/// The user's config directory: `MINIAGENT_CONFIG_DIR`, else the platform's
/// (`~/.config/miniagent` on Linux).
pub fn config_dir(env: &super::Env) -> Option<PathBuf> {
    if let Some(dir) = env.var("MINIAGENT_CONFIG_DIR").filter(|d| !d.is_empty()) {
        return Some(PathBuf::from(dir));
    }
    directories::ProjectDirs::from("", "", "miniagent").map(|dirs| dirs.config_dir().to_path_buf())
}

/// The data folder named by `MINIAGENT_DATA_DIR`, if one is (sessions, logs and the
/// bundled skills go there instead of the platform's folders).
pub fn named_data_dir(env: &super::Env) -> Option<PathBuf> {
    env.var("MINIAGENT_DATA_DIR")
        .filter(|dir| !dir.is_empty())
        .map(PathBuf::from)
}

struct Layer {
    /// Shown in errors: a file path, `environment variable X` or `--flag`.
    source: String,
    /// The folder relative paths in this layer are resolved against.
    base_dir: Option<PathBuf>,
    table: Table,
}

/// Reads every layer and returns the resulting configuration.
pub fn load(options: &LoadOptions<'_>) -> Result<Config, ConfigError> {
    let defaults = parse_toml(DEFAULT_CONFIG, "built-in defaults")?;
    let mut layers = Vec::new();
    if let Some(dir) = &options.config_dir {
        let path = dir.join("config.toml");
        if path.exists() {
            layers.push(file_layer(&path)?);
        }
    }
    if let Some(path) = &options.config_file {
        layers.push(file_layer(path)?);
    }
    layers.extend(env_layers(&defaults, options.env)?);
    // Profiles are resolved over what the files and the environment say, without the
    // flags: a switch mid-session keeps nothing of the command line's model.
    let mut base = defaults.clone();
    let mut origins: HashMap<String, usize> = HashMap::new();
    for (index, layer) in layers.iter().enumerate() {
        check_known_keys(&defaults, &layer.table, "", &layer.source)?;
        check_permissions(&layer.table, &layer.source)?;
        merge(&mut base, &layer.table, "", index, &mut origins);
    }
    let profiles = match base.remove("profiles") {
        Some(Value::Table(profiles)) => profiles,
        _ => Table::new(),
    };
    let from_flags = layers.len();
    if let Some(name) = &options.overrides.profile {
        layers.push(Layer {
            source: format!("--profile {name}"),
            base_dir: None,
            table: super::profiles::start_layer(&profiles, name)?,
        });
    }
    layers.extend(override_layers(&options.overrides));
    let mut merged = base.clone();
    for (index, layer) in layers.iter().enumerate().skip(from_flags) {
        check_known_keys(&defaults, &layer.table, "", &layer.source)?;
        check_permissions(&layer.table, &layer.source)?;
        merge(&mut merged, &layer.table, "", index, &mut origins);
    }
    let source_of = |path: &str| -> String {
        // The deepest key (or table) a layer set that contains `path`.
        let mut key = path;
        loop {
            if let Some(index) = origins.get(key) {
                return layers[*index].source.clone();
            }
            match key.rfind('.') {
                Some(dot) => key = &key[..dot],
                None => return "built-in defaults".to_string(),
            }
        }
    };
    let merged = Value::Table(merged);
    let mut config: Config = serde_path_to_error::deserialize(merged.clone()).map_err(|err| {
        let path = err.path().to_string();
        let mut message = one_line(&err.inner().to_string());
        // Deserializing from a TOML value appends the key, which this message already names.
        if let Some(stripped) = message.strip_suffix(&format!(" in `{path}`")) {
            message = stripped.to_string();
        }
        // A value of another type is said in the words of the file, not of the program
        // ("expected u32", "expected struct ModelConfig"); serde's words for a key that
        // takes one of a few names say nothing useful either ("invalid type: unit variant,
        // expected string only").
        let given = merged.as_table().and_then(|table| lookup(table, &path));
        if let (Some(default), Some(given)) = (lookup(&defaults, &path), given)
            && let Some(kind) = other_kind(default, given)
        {
            message = format!("expected {kind}, got {}", describe(given));
        }
        ConfigError(format!(
            "{}: key `{path}`: {}",
            source_of(&path),
            in_plain_words(&message)
        ))
    })?;
    fill_provider_defaults(&mut config, source_of("model.base_url"));
    config.permission_sources = super::PermissionSources {
        user_file: options.config_dir.as_ref().map(|dir| dir.join("config.toml")),
        home: options
            .env
            .var("HOME")
            .filter(|home| !home.is_empty())
            .map(PathBuf::from),
        workspace: super::PermissionSettings::default(),
    };
    validate(&config, &source_of)?;
    fit_output_reserve(&mut config, &source_of)?;
    config.profile = options.overrides.profile.clone();
    config.profiles = super::profiles::resolve(&base, &profiles, &|name: &str, key: &str| {
        // A layer that brought the whole profile is where each of its keys came from.
        let in_profile = key.strip_prefix("model.").and_then(|rest| {
            [format!("profiles.{name}.{rest}"), format!("profiles.{name}")]
                .iter()
                .find_map(|path| origins.get(path).copied())
        });
        match in_profile {
            Some(index) => layers[index].source.clone(),
            None => source_of(key),
        }
    })?;
    if !config.agent.system_prompt_file.is_empty() {
        let named = PathBuf::from(&config.agent.system_prompt_file);
        let base = origins
            .get("agent.system_prompt_file")
            .and_then(|index| layers[*index].base_dir.clone());
        config.system_prompt_path = Some(match base {
            Some(base) if named.is_relative() => base.join(named),
            _ => named,
        });
    }
    Ok(config)
}

fn parse_toml(text: &str, source: &str) -> Result<Table, ConfigError> {
    text.parse::<Table>().map_err(|err| {
        let location = err
            .span()
            .map(|span| {
                let before = &text[..span.start.min(text.len())];
                let line = before.matches('\n').count() + 1;
                let column = before.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
                format!(" at line {line}, column {column}")
            })
            .unwrap_or_default();
        ConfigError(format!(
            "{source}: TOML syntax error{location}: {}",
            one_line(err.message())
        ))
    })
}

fn file_layer(path: &Path) -> Result<Layer, ConfigError> {
    let shown = path.display().to_string();
    let text = std::fs::read_to_string(path)
        .map_err(|err| ConfigError(format!("{shown}: cannot read the config file: {err}")))?;
    Ok(Layer {
        table: parse_toml(&text, &shown)?,
        base_dir: path.parent().map(Path::to_path_buf),
        source: shown,
    })
}

/// Environment values are strings; each is typed like the default it replaces.
fn env_layers(defaults: &Table, env: &super::Env) -> Result<Vec<Layer>, ConfigError> {
    let mut layers = Vec::new();
    for (var, key) in ENV_KEYS {
        let Some(raw) = env.var(var).filter(|v| !v.is_empty()) else {
            continue;
        };
        let source = format!("environment variable {var}");
        let value = match lookup(defaults, key) {
            Some(Value::Integer(_)) => raw.trim().parse::<i64>().map(Value::Integer).map_err(|_| {
                ConfigError(format!(
                    "{source}: key `{key}`: expected a whole number, got `{raw}`"
                ))
            })?,
            _ => Value::String(raw),
        };
        layers.push(Layer {
            table: nested(key, value),
            base_dir: std::env::current_dir().ok(),
            source,
        });
    }
    Ok(layers)
}

fn override_layers(overrides: &Overrides) -> Vec<Layer> {
    let flags: [(&str, &str, Option<Value>); 7] = [
        (
            "--provider",
            "model.provider",
            overrides.provider.map(|p| Value::String(p.to_string())),
        ),
        (
            "--base-url",
            "model.base_url",
            overrides.base_url.clone().map(Value::String),
        ),
        (
            "--model",
            "model.model",
            overrides.model.clone().map(Value::String),
        ),
        (
            "--api-key-env",
            "model.api_key_env",
            overrides.api_key_env.clone().map(Value::String),
        ),
        (
            "--approval",
            "agent.approval",
            overrides.approval.map(|a| Value::String(a.to_string())),
        ),
        (
            "--max-steps",
            "agent.max_steps",
            overrides.max_steps.map(|n| Value::Integer(i64::from(n))),
        ),
        (
            "--sandbox",
            "tools.bash.sandbox",
            overrides.sandbox.map(|s| Value::String(s.to_string())),
        ),
    ];
    flags
        .into_iter()
        .filter_map(|(flag, key, value)| {
            value.map(|value| Layer {
                source: flag.to_string(),
                base_dir: std::env::current_dir().ok(),
                table: nested(key, value),
            })
        })
        .collect()
}

fn nested(dotted: &str, value: Value) -> Table {
    let mut parts: Vec<&str> = dotted.split('.').collect();
    let last = parts.pop().unwrap_or(dotted);
    let mut table = Table::new();
    table.insert(last.to_string(), value);
    for part in parts.into_iter().rev() {
        let mut outer = Table::new();
        outer.insert(part.to_string(), Value::Table(table));
        table = outer;
    }
    table
}

fn lookup<'a>(table: &'a Table, dotted: &str) -> Option<&'a Value> {
    let mut parts = dotted.split('.');
    let mut value = table.get(parts.next()?)?;
    for part in parts {
        value = value.as_table()?.get(part)?;
    }
    Some(value)
}

fn join(prefix: &str, key: &str) -> String {
    if prefix.is_empty() {
        key.to_string()
    } else {
        format!("{prefix}.{key}")
    }
}

pub(super) fn check_known_keys(
    known: &Table,
    layer: &Table,
    prefix: &str,
    source: &str,
) -> Result<(), ConfigError> {
    for (key, value) in layer {
        let path = join(prefix, key);
        match (known.get(key), value) {
            (None, _) => {
                let section = if prefix.is_empty() {
                    "the top level"
                } else {
                    prefix
                };
                let mut choices: Vec<&str> = known.keys().map(String::as_str).collect();
                choices.sort_unstable();
                // Codex's names for what miniagent keeps in a section.
                let ours = match path.as_str() {
                    "model_provider" => "; miniagent's is `provider` under [model]",
                    "approval_policy" => "; miniagent's is `approval` under [agent]",
                    _ => "",
                };
                return Err(ConfigError(format!(
                    "{source}: unknown key `{path}` (known in {section}: {}){ours}",
                    choices.join(", ")
                )));
            }
            // Any model may be priced; each price's own keys are checked when it is read.
            (Some(Value::Table(_)), Value::Table(_)) if path == "prices" => {}
            // Any name may be a profile; its keys are those of [model].
            (Some(Value::Table(_)), Value::Table(profiles)) if path == "profiles" => {
                super::profiles::check_keys(known, profiles, source, &check_known_keys)?;
            }
            (Some(Value::Table(known_inner)), Value::Table(inner)) => {
                check_known_keys(known_inner, inner, &path, source)?;
            }
            // Codex writes `model = "gpt-5"` at the top; here `model` is a section.
            (Some(Value::Table(known_inner)), value) => {
                return Err(ConfigError(format!(
                    "{source}: key `{path}` is a section, not a value: {}",
                    section_advice(&path, key, known_inner, value)
                )));
            }
            // A type mismatch (e.g. a table where a value belongs) is reported by the
            // typed deserialization, which names the expected type.
            (Some(_), _) => {}
        }
    }
    Ok(())
}

/// How to write what `key = value` meant, where `key` is a section: under it, as its
/// key of the same name when it has one (`[model]` then `model = …`), else its keys.
fn section_advice(path: &str, key: &str, known: &Table, value: &Value) -> String {
    let written = value.to_string();
    if known.contains_key(key) {
        // A value too long for one line is not repeated whole.
        let shown = if written.chars().count() <= 80 && !written.contains('\n') {
            written
        } else {
            "…".to_string()
        };
        return format!("write [{path}] and under it {key} = {shown}");
    }
    let mut keys: Vec<&str> = known.keys().map(String::as_str).collect();
    keys.sort_unstable();
    format!("write [{path}] and under it its keys ({})", keys.join(", "))
}

/// A layer's `[permissions]` patterns are rules, or the error names the layer and the
/// pattern (the lists add up, so the merged table no longer says which layer wrote one).
fn check_permissions(layer: &Table, source: &str) -> Result<(), ConfigError> {
    let Some(Value::Table(table)) = layer.get("permissions") else {
        return Ok(());
    };
    for (key, value) in table {
        let Value::Array(patterns) = value else {
            continue;
        };
        for pattern in patterns {
            let Value::String(pattern) = pattern else {
                return Err(ConfigError(format!(
                    "{source}: key `permissions.{key}`: expected a list of strings, got {}",
                    describe(pattern)
                )));
            };
            super::permissions::Pattern::parse(pattern).map_err(|why| {
                ConfigError(format!(
                    "{source}: key `permissions.{key}`: `{}` is not a rule: {why}",
                    pattern.escape_debug()
                ))
            })?;
        }
    }
    Ok(())
}

pub(super) fn merge(
    into: &mut Table,
    layer: &Table,
    prefix: &str,
    index: usize,
    origins: &mut HashMap<String, usize>,
) {
    for (key, value) in layer {
        let path = join(prefix, key);
        match (into.get_mut(key), value) {
            (Some(Value::Table(existing)), Value::Table(inner)) => {
                merge(existing, inner, &path, index, origins)
            }
            // A later layer adds rules; it cannot take one (a deny) away.
            (Some(Value::Array(existing)), Value::Array(more)) if prefix == "permissions" => {
                existing.extend(more.iter().cloned());
                origins.insert(path, index);
            }
            _ => {
                into.insert(key.clone(), value.clone());
                origins.insert(path, index);
            }
        }
    }
}

/// What a key takes, when `given` is not of its kind (a whole number where a number
/// goes is of its kind).
fn other_kind(default: &Value, given: &Value) -> Option<&'static str> {
    let kind = match default {
        Value::String(_) => "a string",
        Value::Integer(_) => "a whole number",
        Value::Float(_) => "a number",
        Value::Boolean(_) => "true or false",
        Value::Datetime(_) => "a date",
        Value::Array(_) => "a list",
        Value::Table(_) => "a table",
    };
    let same = std::mem::discriminant(default) == std::mem::discriminant(given)
        || matches!((default, given), (Value::Float(_), Value::Integer(_)));
    (!same).then_some(kind)
}

/// serde's message with the program's type names in the file's words: `-1` for a count
/// is "expected u32" to serde.
fn in_plain_words(message: &str) -> String {
    const TYPES: [(&str, &str); 7] = [
        ("u8", "a whole number from 0 to 255"),
        ("u16", "a whole number from 0 to 65535"),
        ("u32", "a whole number from 0 to 4294967295"),
        ("u64", "a whole number, 0 or more"),
        ("usize", "a whole number, 0 or more"),
        ("f64", "a number"),
        ("bool", "true or false"),
    ];
    TYPES
        .iter()
        .find_map(|(name, words)| {
            message
                .strip_suffix(&format!("expected {name}"))
                .map(|start| format!("{start}expected {words}"))
        })
        .unwrap_or_else(|| message.to_string())
}

/// A TOML value as an error message names it.
fn describe(value: &Value) -> String {
    match value {
        Value::String(text) => format!("the string {text:?}"),
        Value::Integer(number) => format!("the integer {number}"),
        Value::Float(number) => format!("the number {number}"),
        Value::Boolean(flag) => format!("the boolean {flag}"),
        Value::Datetime(date) => format!("the date {date}"),
        Value::Array(_) => "a list".to_string(),
        Value::Table(_) => "a table".to_string(),
    }
}

fn one_line(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

#[cfg(test)]
mod tests;
