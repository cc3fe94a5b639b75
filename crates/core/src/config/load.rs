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
mod tests {
    use super::*;
    use crate::config::{ApprovalMode, Provider};
    use pretty_assertions::assert_eq;

    fn no_env(_: &str) -> Option<String> {
        None
    }

    fn write(dir: &Path, name: &str, text: &str) -> PathBuf {
        let path = dir.join(name);
        std::fs::write(&path, text).unwrap();
        path
    }

    fn scratch(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("miniagent-config-{name}-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        dir
    }

    fn load_with(
        config_dir: Option<PathBuf>,
        file: Option<PathBuf>,
        env: impl Fn(&str) -> Option<String> + Send + Sync + 'static,
    ) -> Result<Config, ConfigError> {
        load(&LoadOptions {
            config_dir,
            config_file: file,
            overrides: Overrides::default(),
            env: &super::super::Env::with(env),
        })
    }

    #[test]
    fn defaults_load() {
        let config = load_with(None, None, no_env).unwrap();
        assert_eq!(config.model.provider, Provider::Anthropic);
        assert_eq!(config.agent.max_steps, 50);
        assert_eq!(config.agent.token_limit, 80_000);
        assert_eq!(config.retry.max_retries, 3);
    }

    #[test]
    fn layers_apply_in_order() {
        let dir = scratch("layers");
        write(
            &dir,
            "config.toml",
            "[agent]\nmax_steps = 7\ntoken_limit = 1000\n[model]\nmodel = \"user-model\"\n",
        );
        let file = write(&dir, "extra.toml", "[agent]\nmax_steps = 9\n");
        let env = |name: &str| match name {
            "MINIAGENT_TOKEN_LIMIT" => Some("2000".to_string()),
            "MINIAGENT_MODEL" => Some("env-model".to_string()),
            _ => None,
        };
        let config = load(&LoadOptions {
            config_dir: Some(dir.clone()),
            config_file: Some(file),
            overrides: Overrides {
                model: Some("flag-model".into()),
                approval: Some(ApprovalMode::FullAuto),
                ..Overrides::default()
            },
            env: &super::super::Env::with(env),
        })
        .unwrap();
        assert_eq!(config.agent.max_steps, 9);
        assert_eq!(config.agent.token_limit, 2000);
        assert_eq!(config.model.model, "flag-model");
        assert_eq!(config.agent.approval, ApprovalMode::FullAuto);
        std::fs::remove_dir_all(dir).unwrap();
    }

    #[test]
    fn errors_name_the_file_and_key() {
        let dir = scratch("errors");
        let cases = [
            (
                "[agent]\nmax_steps = \"many\"\n",
                "key `agent.max_steps`: expected a whole number, got the string \"many\"",
            ),
            (
                "[agent]\nmax_steps = -1\n",
                "key `agent.max_steps`: invalid value: integer `-1`, expected a whole number from 0 to 4294967295",
            ),
            (
                "[ui]\nshow_thinking = \"yes\"\n",
                "key `ui.show_thinking`: expected true or false, got the string \"yes\"",
            ),
            (
                "[ui]\nnotify = \"popup\"\n",
                "key `ui.notify`: unknown variant `popup`, expected one of `auto`, `osc9`, `osc777`, `osc99`, `bell`, `off`",
            ),
            (
                "[prices.\"m\"]\ninput = \"cheap\"\noutput = 1.0\n",
                "key `prices.m.input`: invalid type: string \"cheap\", expected a number",
            ),
            (
                "[agent]\nmax_stpes = 3\n",
                "unknown key `agent.max_stpes` (known in agent: approval, compaction, delegate_max_steps, keep_recent_steps, keep_tool_results, max_cost, max_steps, system_prompt_file, token_limit, tokenizer)",
            ),
            ("[modle]\n", "unknown key `modle`"),
            (
                "[model]\nprovider = \"gemini\"\n",
                "key `model.provider`: unknown variant `gemini`, expected `anthropic` or `openai`",
            ),
            (
                "agent = 5\n",
                "key `agent` is a section, not a value: write [agent] and under it its keys (approval, compaction, delegate_max_steps, keep_recent_steps, keep_tool_results, max_cost, max_steps, system_prompt_file, token_limit, tokenizer)",
            ),
            (
                "model_provider = \"openai\"\n",
                "unknown key `model_provider` (known in the top level: agent, instructions, model, permissions, prices, profiles, retry, serve, session, tools, ui); miniagent's is `provider` under [model]",
            ),
            // Codex's way of naming the model.
            (
                "model = \"gpt-5\"\n",
                "key `model` is a section, not a value: write [model] and under it model = \"gpt-5\"",
            ),
            (
                "[tools]\nbash = 1\n",
                "key `tools.bash` is a section, not a value: write [tools.bash] and under it its keys (",
            ),
            (
                "[model]\napi_key_env = \"${OPENAI_API_KEY}\"\n",
                "key `model.api_key_env`: takes the variable's name without the $: OPENAI_API_KEY",
            ),
            (
                "[model]\napi_key_env = \"my key\"\n",
                "key `model.api_key_env`: takes the name of the environment variable that holds the key: letters, digits and _, such as MY_API_KEY",
            ),
            // Found by tests/bad_input: serde said "invalid type: unit variant, expected
            // string only" and "unknown variant `a`" for these.
            (
                "[agent]\napproval = 7\n",
                "key `agent.approval`: expected a string, got the integer 7",
            ),
            (
                "[model]\nprovider = { a = 1 }\n",
                "key `model.provider`: expected a string, got a table",
            ),
            ("[agent\nmax_steps = 3\n", "TOML syntax error at line 1, column 7"),
            (
                "[agent]\nmax_steps = 0\n",
                "key `agent.max_steps`: must be at least 1",
            ),
            // A name, never a path out of the folders it is looked for in.
            (
                "[instructions]\nfiles = [\"AGENTS.md\", \"../../etc/passwd\"]\n",
                "key `instructions.files`: takes file names such as AGENTS.md, and \"../../etc/passwd\" is not one",
            ),
            (
                "[agent]\nmax_cost = -1.0\n",
                "key `agent.max_cost`: must be a number of US dollars, 0 or more",
            ),
            (
                "[prices.\"my-model\"]\ninput = 1.0\noutput = 2.0\ncache_reed = 0.1\n",
                "unknown field `cache_reed`",
            ),
            (
                "[prices.\"my-model\"]\ninput = 1.0\noutput = -2.0\n",
                "key `prices.my-model.output`: prices must be numbers of US dollars, 0 or more",
            ),
            (
                "[model]\nmodel = \"unpriced\"\n[agent]\nmax_cost = 1.0\n",
                "a cost limit needs the price of model `unpriced`",
            ),
        ];
        for (text, expected) in cases {
            let file = write(&dir, "bad.toml", text);
            let err = load_with(None, Some(file.clone()), no_env).unwrap_err().0;
            assert!(err.starts_with(&format!("{}: ", file.display())), "{err}");
            assert!(err.contains(expected), "{text:?} gave {err}");
            assert!(!err.contains('\n'), "{err}");
        }
        std::fs::remove_dir_all(dir).unwrap();
    }

    /// Each provider brings its own API and model when the file names neither; MiniMax's
    /// hosts their model; what the file names stays.
    #[test]
    fn a_provider_brings_its_own_base_url_and_model() {
        let loaded = |provider: &'static str, base_url: &'static str, model: &'static str| {
            let config = load_with(None, None, move |name: &str| match name {
                "MINIAGENT_PROVIDER" => Some(provider.to_string()),
                "MINIAGENT_BASE_URL" => Some(base_url.to_string()),
                "MINIAGENT_MODEL" => Some(model.to_string()),
                _ => None,
            })
            .unwrap();
            (config.model.base_url, config.model.model, config.base_url_source)
        };
        let owned =
            |url: &str, model: &str, source: &str| (url.to_string(), model.to_string(), source.to_string());
        assert_eq!(
            loaded("anthropic", "", ""),
            owned(
                "https://api.anthropic.com",
                "claude-sonnet-4-5",
                "the default of provider anthropic"
            )
        );
        assert_eq!(
            loaded("openai", "", ""),
            owned(
                "https://api.openai.com/v1",
                "gpt-4.1",
                "the default of provider openai"
            )
        );
        for provider in ["anthropic", "openai"] {
            assert_eq!(
                loaded(provider, "https://api.minimaxi.com", ""),
                owned(
                    "https://api.minimaxi.com",
                    "MiniMax-M2",
                    "environment variable MINIAGENT_BASE_URL"
                )
            );
        }
        assert_eq!(
            loaded("openai", "http://127.0.0.1:8080/v1", "qwen3"),
            owned(
                "http://127.0.0.1:8080/v1",
                "qwen3",
                "environment variable MINIAGENT_BASE_URL"
            )
        );
    }

    /// A key pasted where a variable's name goes is refused without being repeated.
    #[test]
    fn a_key_given_as_the_variable_name_is_never_repeated() {
        for pasted in [
            "sk-ant-api03-abcDEF123",
            "sk-proj-abc123",
            "gsk_abcdefghijklmnop1234567890",
            "AIzaSyA1b2C3d4E5f6G7h8",
            "abcdefgh12345678ijklmnop90",
        ] {
            let err = load_with(None, None, move |name: &str| {
                (name == "MINIAGENT_API_KEY_ENV").then(|| pasted.to_string())
            })
            .unwrap_err()
            .0;
            assert_eq!(
                err,
                "environment variable MINIAGENT_API_KEY_ENV: key `model.api_key_env`: takes the name of the environment variable that holds the key (such as MY_API_KEY), and this looks like a key itself; put the key in a variable and name that"
            );
        }
        for name in [
            "MY_API_KEY",
            "OPENROUTER_API_KEY",
            "_KEY2",
            "groq_key",
            "my_company_openrouter_key2",
        ] {
            let config = load_with(None, None, move |var: &str| {
                (var == "MINIAGENT_API_KEY_ENV").then(|| name.to_string())
            })
            .unwrap();
            assert_eq!(config.model.api_key_env, name);
        }
    }

    #[test]
    fn bad_environment_values_are_named() {
        let env = |name: &str| (name == "MINIAGENT_MAX_STEPS").then(|| "lots".to_string());
        let err = load_with(None, None, env).unwrap_err().0;
        assert_eq!(
            err,
            "environment variable MINIAGENT_MAX_STEPS: key `agent.max_steps`: expected a whole number, got `lots`"
        );
        let env = |name: &str| (name == "MINIAGENT_APPROVAL").then(|| "sometimes".to_string());
        let err = load_with(None, None, env).unwrap_err().0;
        assert!(
            err.starts_with(
                "environment variable MINIAGENT_APPROVAL: key `agent.approval`: unknown variant `sometimes`"
            ),
            "{err}"
        );
    }

    #[test]
    fn missing_config_file_is_an_error() {
        let err = load_with(None, Some(PathBuf::from("/nonexistent/miniagent.toml")), no_env)
            .unwrap_err()
            .0;
        assert!(
            err.starts_with("/nonexistent/miniagent.toml: cannot read the config file"),
            "{err}"
        );
    }

    #[test]
    fn system_prompt_file_is_relative_to_its_config_file() {
        let dir = scratch("prompt");
        let file = write(&dir, "c.toml", "[agent]\nsystem_prompt_file = \"prompt.md\"\n");
        let config = load_with(None, Some(file), no_env).unwrap();
        assert_eq!(config.system_prompt_path, Some(dir.join("prompt.md")));
        std::fs::remove_dir_all(dir).unwrap();
    }

    /// `[serve]` loads with its documented defaults, and values the server could not use
    /// are refused at load, naming the key (a token pasted for its variable's name is
    /// not repeated).
    #[test]
    fn the_serve_table_has_safe_defaults_and_refuses_what_cannot_work() {
        let serve = load_with(None, None, no_env).unwrap().serve;
        assert_eq!(
            serve,
            crate::config::ServeConfig {
                bind: "127.0.0.1:8420".parse().unwrap(),
                roots: Vec::new(),
                token_env: "MINIAGENT_SERVE_TOKEN".into(),
                allowed_hosts: Vec::new(),
                allowed_origins: Vec::new(),
                models: Vec::new(),
                approval_modes: vec![ApprovalMode::ReadOnly, ApprovalMode::Ask],
                max_sessions: 64,
                max_body_bytes: 1_048_576,
                events_kept: 4096,
            }
        );
        let dir = scratch("serve");
        let path = dir.join("config.toml").display().to_string();
        let cases = [
            (
                "bind = \"everywhere\"",
                "key `serve.bind`: invalid socket address syntax",
            ),
            (
                "roots = [\"projects\"]",
                "key `serve.roots`: takes absolute folders, and projects is not one",
            ),
            (
                "token_env = \"sk-ant-api03-secret\"",
                "key `serve.token_env`: takes the name of the environment variable that holds the token (letters, digits and _, such as MINIAGENT_SERVE_TOKEN), not the token",
            ),
            (
                "approval_modes = []",
                "key `serve.approval_modes`: needs at least one mode (read-only, ask, auto-edit, full-auto)",
            ),
            ("max_sessions = 0", "key `serve.max_sessions`: must be at least 1"),
            ("events_kept = 0", "key `serve.events_kept`: must be at least 1"),
            (
                "models = [\" \"]",
                "key `serve.models`: a model's name cannot be empty",
            ),
            (
                "allowed_origins = [\"\"]",
                "key `serve.allowed_origins`: each entry is one word, such as https://example.com",
            ),
        ];
        for (line, error) in cases {
            write(&dir, "config.toml", &format!("[serve]\n{line}\n"));
            let err = load_with(Some(dir.clone()), None, no_env).unwrap_err();
            assert_eq!(err.0, format!("{path}: {error}"), "{line}");
        }
        std::fs::remove_dir_all(dir).unwrap();
    }
}
