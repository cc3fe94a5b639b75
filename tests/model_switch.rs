//! `/model` (`Op::SetModel`) end to end, against two scripted servers: one Anthropic-shaped,
//! one OpenAI-shaped. A turn runs on the first; the switch sends the next request to the
//! second with the history so far (the first's signed thinking left out), the gauge's
//! window follows, a failed switch keeps the old model, and the log records the switch.
#![allow(clippy::unwrap_used, clippy::expect_used)] // A test fails by panicking.

use crate::support;

use miniagent_core::config::{Config, Profile, Provider};
use miniagent_core::llm::ReasoningField;
use miniagent_protocol::{Event, ModelChoice, Op};
use pretty_assertions::assert_eq;
use serde_json::json;
use support::harness::{Harness, session_log_in, test_config};
use support::validate::unmarked;
use support::*;

/// The Anthropic server's config with two profiles: `other` (the OpenAI-shaped server,
/// DeepSeek-style reasoning, a smaller window) and `broken` (a key variable not set).
fn with_profiles(first: &ScriptedServer, second: &ScriptedServer) -> Config {
    let mut config = test_config(Provider::Anthropic, first);
    let mut other = config.model.clone();
    other.provider = Provider::Openai;
    other.base_url = second.openai_base_url();
    other.model = "other-model".to_string();
    other.context_window = 64_000;
    other.send_reasoning = ReasoningField::Content;
    let mut broken = other.clone();
    broken.api_key_env = "MISSING_KEY_VAR".to_string();
    for (name, model) in [("other", other), ("broken", broken)] {
        config.profiles.insert(
            name.to_string(),
            Profile {
                model,
                base_url_source: "a test".to_string(),
            },
        );
    }
    config
}

fn window(event: &Event) -> Option<u64> {
    match event {
        Event::TokenUsage { context_window, .. } => Some(*context_window),
        _ => None,
    }
}

#[tokio::test]
async fn a_switch_sends_the_history_to_the_other_provider_without_its_thinking() {
    let first = ScriptedServer::start(vec![Reply::Stream(Turn::thinking_text(
        "anthropic thought",
        "sig-a",
        "first answer",
    ))])
    .await;
    let second = ScriptedServer::start(vec![Reply::text("second answer")]).await;
    let data = support::TempDir::new();
    let log = session_log_in(&data);
    let mut agent = Harness::start_recorded(with_profiles(&first, &second), log.clone());
    agent.turn("hello").await;

    // A profile whose key is not there: said, and the old model stays.
    agent.send(Op::SetModel {
        name: "broken".into(),
    });
    let refused = agent
        .wait_for(|e| matches!(e, Event::ModelChangeRefused { .. }))
        .await;
    assert_eq!(
        refused,
        Event::ModelChangeRefused {
            name: "broken".into(),
            message: "cannot switch to broken: the API key variable MISSING_KEY_VAR (model.api_key_env / --api-key-env) is not set; the session stays on scripted-model".into()
        }
    );

    agent.send(Op::SetModel { name: "other".into() });
    let changed = agent.wait_for(|e| matches!(e, Event::ModelChanged { .. })).await;
    assert_eq!(
        changed,
        Event::ModelChanged {
            profile: Some("other".into()),
            model: "other-model".into(),
            provider: "openai".into(),
            endpoint: miniagent_core::llm::endpoint::shown_endpoint(
                Provider::Openai,
                &second.openai_base_url()
            ),
            context_window: 64_000,
        }
    );
    let choices = agent.next().await;
    let Event::ModelChoices { choices } = choices else {
        panic!("expected the choices, got {choices:?}");
    };
    let current: Vec<&ModelChoice> = choices.iter().filter(|c| c.current).collect();
    assert_eq!(
        current
            .iter()
            .map(|c| (c.name.as_str(), c.profile))
            .collect::<Vec<_>>(),
        vec![("other", true)]
    );
    // The gauge's window is the new model's.
    let usage = agent.next().await;
    assert_eq!(window(&usage), Some(64_000));

    let events = agent.turn("again").await;
    assert_eq!(
        events.last(),
        Some(&Event::TurnComplete {
            text: "second answer".into()
        })
    );
    assert_eq!(first.request_count(), 1, "nothing more went to the first server");
    let request = second.requests().remove(0);
    assert_eq!(request.path, "/v1/chat/completions");
    assert_eq!(request.body["model"], "other-model");
    // The history carried over; the Anthropic thinking did not (DeepSeek-style reasoning
    // would have carried it as reasoning_content).
    assert_eq!(
        unmarked(&request.body["messages"])
            .as_array()
            .unwrap()
            .iter()
            .filter(|m| m["role"] != "system")
            .cloned()
            .collect::<Vec<_>>(),
        vec![
            json!({"role": "user", "content": "hello"}),
            json!({"role": "assistant", "content": "first answer"}),
            json!({"role": "user", "content": "again"}),
        ]
    );
    let windows: Vec<u64> = events.iter().filter_map(window).collect();
    assert!(
        !windows.is_empty() && windows.iter().all(|w| *w == 64_000),
        "{windows:?}"
    );

    // The log keeps the switch and the thinking; a resume says which model ran last.
    let path = log.path().expect("the session is recorded");
    let loaded = miniagent_core::session::load(&path).unwrap();
    let switches: Vec<&Event> = loaded
        .events()
        .map(|(_, e)| e)
        .filter(|e| matches!(e, Event::ModelChanged { .. }))
        .collect();
    assert_eq!(switches, vec![&changed]);
    let text = std::fs::read_to_string(&path).unwrap();
    assert!(text.contains("anthropic thought"), "the log keeps the thinking");

    let fresh = ScriptedServer::start(Vec::new()).await;
    let mut resumed = Harness::start(test_config(Provider::Anthropic, &fresh));
    resumed.send(Op::Resume { path });
    let notice = resumed
        .wait_for(
            |e| matches!(e, Event::Notice { message } if message.starts_with("this session was recorded")),
        )
        .await;
    assert_eq!(
        notice,
        Event::Notice {
            message: "this session was recorded with scripted-model (anthropic) and last ran with other-model (openai); it continues with scripted-model (anthropic)".into()
        }
    );
}

#[tokio::test]
async fn a_switch_waits_for_the_turn_and_names_nothing_unknown() {
    let first = ScriptedServer::start(vec![Reply::slow(Turn::text("slow answer"), 300)]).await;
    let second = ScriptedServer::start(Vec::new()).await;
    let mut agent = Harness::start(with_profiles(&first, &second));
    agent.send(Op::UserInput { text: "hello".into() });
    agent.wait_for(|e| matches!(e, Event::StepStarted { .. })).await;
    agent.send(Op::SetModel { name: "other".into() });
    let refused = agent
        .wait_for(|e| matches!(e, Event::ModelChangeRefused { .. }))
        .await;
    assert_eq!(
        refused,
        Event::ModelChangeRefused {
            name: "other".into(),
            message:
                "a turn is running: the model changes between turns; send /model other again when it ends"
                    .into()
        }
    );
    agent.wait_for(support::harness::is_turn_end).await;
    agent.send(Op::SetModel {
        name: "no such\u{1b}[2J".into(),
    });
    let refused = agent
        .wait_for(|e| matches!(e, Event::ModelChangeRefused { .. }))
        .await;
    assert_eq!(
        refused,
        Event::ModelChangeRefused {
            name: "no such\u{1b}[2J".into(),
            message: "cannot switch to no such␛[2J: no profile or model \"no such␛[2J\": name a profile of the config or a model of anthropic; the session stays on scripted-model".into()
        }
    );
    assert_eq!(second.request_count(), 0);
    // A name that is no profile and no model the config prices switches (a new model
    // comes before its price), and the person is told it may be a typo.
    agent.send(Op::SetModel {
        name: "claude-nosuch".into(),
    });
    agent.wait_for(|e| matches!(e, Event::ModelChanged { .. })).await;
    let told = agent.wait_for(|e| matches!(e, Event::Notice { .. })).await;
    assert_eq!(
        told,
        Event::Notice {
            message: "`claude-nosuch` is not a profile or a model miniagent knows the price of: requests go to it as named, with the window of [model]; /model lists the ones it knows".into()
        }
    );
}

/// `exec --profile NAME` starts with the profile: its provider, host and model, under
/// the flags; an unknown one is an error naming those there are.
#[test]
fn exec_starts_with_the_profile_it_is_given() {
    let server = ScriptedServer::start_blocking(vec![Reply::text("profiled answer")]);
    let home = support::TempDir::new();
    let workspace = support::TempDir::new();
    std::fs::write(
        home.join("config.toml"),
        format!(
            "[profiles.local]\nprovider = \"openai\"\nbase_url = \"{}\"\nmodel = \"profiled-model\"\ncontext_window = 64000\n",
            server.openai_base_url()
        ),
    )
    .unwrap();
    let run = |profile: &str| {
        support::cli::miniagent(&home)
            .arg("--workspace")
            .arg(workspace.path())
            .args(["exec", "--profile", profile, "--approval", "full-auto", "hi"])
            .output()
            .unwrap()
    };
    let output = run("local");
    assert_eq!(
        support::cli::text(&output.stdout),
        "profiled answer\n",
        "{}",
        support::cli::text(&output.stderr)
    );
    let request = server.requests().remove(0);
    assert_eq!(
        (request.path.as_str(), request.body["model"].as_str()),
        ("/v1/chat/completions", Some("profiled-model"))
    );

    let output = run("nowhere");
    assert_eq!(
        output.status.code(),
        Some(1),
        "{}",
        support::cli::text(&output.stderr)
    );
    assert_eq!(
        support::cli::text(&output.stderr).trim_end(),
        "miniagent: --profile: no profile \"nowhere\" in the config (profiles: default, local)"
    );
    assert_eq!(server.request_count(), 1);
}

/// An editor (ACP) sees the profiles as the `model` config option's values and switches
/// through it: a profile without its key is refused with the reason, the other answers
/// once the agent has switched, and the next prompt goes to its server.
#[test]
fn an_editor_switches_through_the_model_config_option() {
    let python = match crate::acp::install() {
        Ok(python) => python,
        Err(why) => {
            support::skip::missing("python3", why);
            return;
        }
    };
    let first = ScriptedServer::start_blocking(vec![Reply::text("first answer")]);
    let second = ScriptedServer::start_blocking(vec![Reply::text("second answer")]);
    let home = support::TempDir::new();
    let workspace = support::TempDir::new();
    std::fs::write(
        home.join("config.toml"),
        format!(
            "[profiles.other]\nprovider = \"openai\"\nbase_url = \"{url}\"\nmodel = \"other-model\"\n\n[profiles.broken]\nprovider = \"openai\"\nbase_url = \"{url}\"\napi_key_env = \"MISSING_KEY_VAR\"\n",
            url = second.openai_base_url()
        ),
    )
    .unwrap();
    let ws = workspace.path().canonicalize().unwrap();
    let setup = json!({
        "scenario": "model",
        "program": env!("CARGO_BIN_EXE_miniagent"),
        "args": ["acp", "--base-url", first.anthropic_base_url(), "--model", "scripted-model", "--approval", "ask"],
        "env": {
            "MINIAGENT_CONFIG_DIR": home.path(),
            "MINIAGENT_DATA_DIR": home.path(),
            "MINIAGENT_LOG_DIR": home.path(),
            "MINIAGENT_API_KEY": support::harness::TEST_KEY,
            "XDG_CACHE_HOME": home.join("cache"),
        },
        "workspace": ws,
    });
    let summary = crate::acp::run_client(&python, &setup);
    assert_eq!(summary["schema_problems"], json!([]));
    let values: Vec<&str> = summary["offered"]["options"]
        .as_array()
        .unwrap()
        .iter()
        .map(|option| option["value"].as_str().unwrap())
        .collect();
    assert_eq!(&values[..3], ["broken", "default", "other"]);
    assert_eq!(summary["offered"]["currentValue"], "scripted-model");
    assert_eq!(summary["first"]["stop"], "end_turn");
    assert_eq!(
        summary["broken"],
        json!([
            -32602,
            "cannot switch to broken: the API key variable MISSING_KEY_VAR (model.api_key_env / --api-key-env) is not set; the session stays on scripted-model"
        ])
    );
    assert_eq!(summary["switched"], "other");
    assert_eq!(summary["second"]["stop"], "end_turn");
    assert_eq!(first.request_count(), 1);
    let request = second.requests().remove(0);
    assert_eq!(request.body["model"], "other-model");
    let said: Vec<&str> = request.body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["role"] != "system")
        .map(|m| m["content"].as_str().unwrap_or_default())
        .collect();
    assert_eq!(said, ["hello", "first answer", "again"]);
}
