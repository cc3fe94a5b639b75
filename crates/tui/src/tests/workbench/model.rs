//! `/model`: the picker of profiles and models, the switch it sends, and what the
//! workbench shows when the agent switches or refuses.

use pretty_assertions::assert_eq;

use super::*;
use miniagent_protocol::{ModelChoice, Op};

fn choice(name: &str, profile: bool, model: &str, provider: &str, current: bool) -> ModelChoice {
    ModelChoice {
        name: name.into(),
        profile,
        model: model.into(),
        provider: provider.into(),
        context_window: if provider == "openai" { 400_000 } else { 200_000 },
        current,
    }
}

fn choices() -> Event {
    Event::ModelChoices {
        choices: vec![
            choice("default", true, "claude-sonnet-4-5", "anthropic", true),
            choice("fast", true, "claude-haiku-4-5", "anthropic", false),
            choice("gpt", true, "gpt-5", "openai", false),
            choice(
                "claude-sonnet-4-5",
                false,
                "claude-sonnet-4-5",
                "anthropic",
                false,
            ),
            choice("claude-opus-4-5", false, "claude-opus-4-5", "anthropic", false),
        ],
    }
}

#[test]
fn slash_model_opens_the_picker_and_enter_switches_to_the_one_picked() {
    let workspace = TempDir::new();
    let mut app = app_in(&workspace);
    app.on_agent_event(choices());
    type_text(&mut app, "/model");
    app.on_key(key(KeyCode::Enter));
    assert!(
        app.layers.top().is_some_and(|top| top.title() == "Model"),
        "one Enter opens the model choice"
    );
    assert_screen!("model_choice_80x24", screen(&mut app, 80, 24));
    assert_screen!("model_choice_160x48", screen(&mut app, 160, 48));
    app.on_key(key(KeyCode::Down));
    app.on_key(key(KeyCode::Down));
    app.on_key(key(KeyCode::Enter));
    assert!(app.layers.is_empty(), "the choice closes the picker");
    assert_eq!(app.sent.last(), Some(&Op::SetModel { name: "gpt".into() }));

    // The agent switches: the title bar names the new model, the transcript says so.
    app.on_agent_event(Event::ModelChanged {
        profile: Some("gpt".into()),
        model: "gpt-5".into(),
        provider: "openai".into(),
        endpoint: "https://api.openai.com/v1".into(),
        context_window: 400_000,
    });
    let seen = screen(&mut app, 120, 30);
    assert!(seen.contains("gpt-5"), "{seen}");
    assert!(
        seen.contains("model: gpt-5 (openai), a window of 400000 tokens"),
        "{seen}"
    );

    // A name typed after the command switches directly; a refusal is shown whole.
    app.submit("/model claude-opus-4-5".into());
    assert_eq!(
        app.sent.last(),
        Some(&Op::SetModel {
            name: "claude-opus-4-5".into()
        })
    );
    app.on_agent_event(Event::ModelChangeRefused {
        name: "nowhere".into(),
        message: "cannot switch to nowhere: no key".into(),
    });
    let seen = screen(&mut app, 120, 30);
    assert!(seen.contains("cannot switch to nowhere: no key"), "{seen}");
}

#[test]
fn the_picker_says_when_there_is_nothing_to_pick_and_esc_closes_it() {
    let workspace = TempDir::new();
    let mut app = app_in(&workspace);
    app.submit("/model".into());
    let seen = screen(&mut app, 80, 24);
    assert!(seen.contains("this session cannot change its model"), "{seen}");
    app.on_key(key(KeyCode::Enter));
    assert!(app.layers.is_empty());
    assert_eq!(app.sent, Vec::<Op>::new());
    app.submit("/model".into());
    app.on_key(key(KeyCode::Esc));
    assert!(app.layers.is_empty());
}

/// The gauge measures the prompt against what it may fill: `agent.token_limit`, or the
/// model's window when that is smaller, and a switch to a model with a smaller window
/// brings the gauge's denominator with it (the fresh check saw `2.3k/80k` after a switch
/// to a 32k model).
#[test]
fn the_gauge_follows_a_smaller_window_after_a_switch() {
    let workspace = TempDir::new();
    let mut app = app_in(&workspace);
    let seen = screen(&mut app, 160, 48);
    assert!(seen.contains("/80k"), "{seen}");
    app.on_agent_event(Event::ModelChanged {
        profile: Some("local".into()),
        model: "small-model".into(),
        provider: "openai".into(),
        endpoint: "http://127.0.0.1:8080/v1".into(),
        context_window: 32_000,
    });
    let seen = screen(&mut app, 160, 48);
    let status = seen.lines().last().unwrap_or_default();
    assert!(status.contains("/32k"), "{status}");
    assert!(status.contains("window 32k"), "{status}");
}
