use super::*;

/// The folders and the user's skills are found where the injected environment says,
/// not where the process's own variables point.
#[test]
fn folders_and_skills_come_from_the_environment_given() {
    let home = std::env::temp_dir().join(format!("miniagent-startup-env-{}", std::process::id()));
    let skill = home.join("config/skills/house-style");
    std::fs::create_dir_all(&skill).unwrap();
    std::fs::write(
        skill.join("SKILL.md"),
        "---\nname: house-style\ndescription: How this house writes code.\n---\nUse tabs.\n",
    )
    .unwrap();
    let root = home.clone();
    let env = crate::config::Env::with(move |name: &str| match name {
        "MINIAGENT_LOG_DIR" => Some(root.join("logs").display().to_string()),
        "MINIAGENT_CONFIG_DIR" => Some(root.join("config").display().to_string()),
        "MINIAGENT_DATA_DIR" => Some(root.join("data").display().to_string()),
        _ => None,
    });
    assert_eq!(log_dir(&env), Some(home.join("logs")));
    assert_eq!(mcp_log_path(&env), Some(home.join("logs/mcp.log")));
    // The bundled skills' files too, every version's.
    assert_eq!(
        own_folders(&env),
        [
            "config",
            "data/sessions",
            "data/results",
            "data/checkpoints",
            "logs",
            "data/cache/skills"
        ]
        .map(|folder| home.join(folder))
    );
    let skills = discover_skills(&home, false, &env);
    assert!(
        skills.prompt_metadata().contains("house-style"),
        "{}",
        skills.prompt_metadata()
    );
    // With the data folder named and no log folder, nothing goes to the home folder's:
    // the log and the bundled skills are in the data folder too.
    let root = home.clone();
    let data_only = crate::config::Env::with(move |name: &str| match name {
        "MINIAGENT_DATA_DIR" => Some(root.join("data").display().to_string()),
        _ => None,
    });
    assert_eq!(log_dir(&data_only), Some(home.join("data/logs")));
    let bundled = skills::default_install_dir(&data_only).unwrap();
    assert!(bundled.starts_with(home.join("data/cache/skills")), "{bundled:?}");
    discover_skills(&home, false, &data_only);
    assert!(
        bundled.is_dir(),
        "the bundled skills are installed in the data folder"
    );
    let _ = std::fs::remove_dir_all(&home);
}

/// A client's server joins the user's with the user's rules (the neutral folder,
/// `${workspace}` filled in); one named like a configured server is left out, said.
#[test]
fn a_clients_servers_join_the_users_and_never_replace_one() {
    let user = mcp::parse_config(
        r#"{"mcpServers": {"notes": {"command": "users-notes"}}}"#,
        "mcp.json",
    )
    .unwrap()
    .for_workspace(
        std::path::Path::new("/work"),
        std::path::Path::new(mcp::NEUTRAL_FOLDER),
    );
    let client = mcp::parse_config(
        r#"{"mcpServers": {"notes": {"command": "clients-notes"},
            "lint": {"command": "lint", "args": ["${workspace}"], "env": {"LINT_TOKEN": "abcdef"}}}}"#,
        "client",
    )
    .unwrap();
    let (merged, notices) = add_client_servers(Some(user), &client.servers, std::path::Path::new("/work"));
    let started: Vec<(String, mcp::McpTransport)> = merged
        .servers
        .iter()
        .map(|server| (server.name.clone(), server.transport.clone()))
        .collect();
    let stdio = |command: &str, args: &[&str], env: &[(&str, &str)]| mcp::McpTransport::Stdio {
        command: command.into(),
        args: args.iter().map(|arg| arg.to_string()).collect(),
        env: env.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect(),
        cwd: Some(PathBuf::from(mcp::NEUTRAL_FOLDER)),
    };
    assert_eq!(
        started,
        vec![
            (
                "lint".to_string(),
                stdio("lint", &["/work"], &[("LINT_TOKEN", "abcdef")])
            ),
            ("notes".to_string(), stdio("users-notes", &[], &[])),
        ]
    );
    assert_eq!(
        notices,
        vec![
            "the client's MCP server `notes` is not used: your mcp.json has a server of that name, which is"
                .to_string()
        ]
    );
    assert_eq!(merged.secret_values(), vec!["abcdef".to_string()]);
}

fn config_with(api_key_env: &str, base_url: &str) -> Config {
    let mut config = crate::config::built_in();
    config.model.api_key_env = api_key_env.into();
    config.model.base_url = base_url.into();
    config
}

#[test]
fn key_lookup_order() {
    let lookup = |name: &str| match name {
        "MINIAGENT_API_KEY" => Some("generic".to_string()),
        "ANTHROPIC_API_KEY" => Some("anthropic".to_string()),
        "MINIMAX_API_KEY" => Some("minimax".to_string()),
        "MY_KEY" => Some("mine".to_string()),
        _ => None,
    };
    let env = crate::config::Env::with(lookup);
    let key = |api_key_env: &str, base_url: &str, env: &crate::config::Env| {
        api_key(&config_with(api_key_env, base_url), env).map(|key| key.value)
    };
    assert_eq!(key("MY_KEY", "https://api.anthropic.com", &env).unwrap(), "mine");
    assert_eq!(key("", "https://api.anthropic.com", &env).unwrap(), "generic");
    // Where it came from, and what it was used before, for a 401 to say.
    let generic = api_key(&config_with("", "https://api.anthropic.com"), &env).unwrap();
    assert_eq!(
        (generic.variable.as_deref(), generic.passed_over.as_deref()),
        (Some("MINIAGENT_API_KEY"), Some("ANTHROPIC_API_KEY"))
    );
    let no_generic = crate::config::Env::with(move |name: &str| {
        if name == "MINIAGENT_API_KEY" {
            None
        } else {
            lookup(name)
        }
    });
    assert_eq!(
        key("", "https://api.anthropic.com", &no_generic).unwrap(),
        "anthropic"
    );
    assert_eq!(key("", "https://api.minimax.io", &no_generic).unwrap(), "minimax");
    // Neither company's key goes to a gateway unasked, nor to a server on this machine.
    assert_eq!(
        key("", "https://gateway.example/v1", &no_generic),
        Err(KeyError::Missing(
            "no API key for gateway.example: ANTHROPIC_API_KEY goes only to api.anthropic.com; set MINIAGENT_API_KEY, or name the variable with --api-key-env to send it there".into()
        ))
    );
    assert_eq!(key("", "http://127.0.0.1:9/v1", &no_generic).unwrap(), "");
    assert_eq!(
        key("ANTHROPIC_API_KEY", "https://gateway.example/v1", &no_generic).unwrap(),
        "anthropic"
    );
    let err = key("UNSET_VAR", "https://api.anthropic.com", &env).unwrap_err();
    assert!(err.to_string().contains("UNSET_VAR"), "{err}");
    let err = key("", "https://api.anthropic.com", &crate::config::Env::empty()).unwrap_err();
    assert!(err.to_string().starts_with("no API key"), "{err}");
    assert_eq!(
        key("", "http://127.0.0.1:9/v1", &crate::config::Env::empty()).unwrap(),
        ""
    );
}

/// A company's key never goes to another company's host, whether its variable or its
/// form says whose it is.
#[test]
fn a_key_is_refused_for_another_companys_host() {
    let env = crate::config::Env::with(|name: &str| match name {
        "ANTHROPIC_API_KEY" => Some("sk-ant-api03-x".to_string()),
        "MINIMAX_API_KEY" => Some("mm-key".to_string()),
        "MY_KEY" => Some("sk-ant-api03-mine".to_string()),
        _ => None,
    });
    let mut config = config_with("MINIMAX_API_KEY", "https://api.openai.com/v1");
    config.base_url_source = "--base-url".into();
    assert_eq!(
        api_key(&config, &env),
        Err(KeyError::Refused(
            "the key in MINIMAX_API_KEY is MiniMax's and goes only to api.minimax.io, not to api.openai.com (model.base_url, from --base-url): set model.base_url to https://api.minimax.io (--base-url), or name the variable that holds OpenAI's key with --api-key-env".into()
        ))
    );
    // Named on purpose, a company's variable still goes to its own hosts only.
    config.model.api_key_env = "ANTHROPIC_API_KEY".into();
    config.model.base_url = "https://API.openai.com./v1".into();
    assert!(matches!(api_key(&config, &env), Err(KeyError::Refused(_))));
    // An Anthropic key in a variable of the person's own, by its form.
    config.model.api_key_env = "MY_KEY".into();
    let Err(KeyError::Refused(why)) = api_key(&config, &env) else {
        panic!("an sk-ant- key went to OpenAI's host");
    };
    assert!(
        why.starts_with("the key in MY_KEY is Anthropic's (it starts with sk-ant-) and goes only to api.anthropic.com, not to api.openai.com"),
        "{why}"
    );
    config.model.base_url = "https://api.anthropic.com".into();
    assert_eq!(api_key(&config, &env).unwrap().value, "sk-ant-api03-mine");
    // An Anthropic key put in OpenAI's variable is still Anthropic's.
    let misplaced = crate::config::Env::with(|name: &str| {
        (name == "OPENAI_API_KEY").then(|| "sk-ant-api03-x".to_string())
    });
    let mut config = config_with("", "https://api.openai.com/v1");
    config.model.provider = crate::config::Provider::Openai;
    let Err(KeyError::Refused(why)) = api_key(&config, &misplaced) else {
        panic!("an sk-ant- key went to OpenAI's host");
    };
    assert!(
        why.starts_with("the key in OPENAI_API_KEY is Anthropic's (it starts with sk-ant-)"),
        "{why}"
    );
}
