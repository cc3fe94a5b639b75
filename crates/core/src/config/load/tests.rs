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
            "unknown key `model_provider` (known in the top level: agent, checkpoints, instructions, model, permissions, prices, profiles, retry, serve, session, tools, ui); miniagent's is `provider` under [model]",
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
