//! [`Op::SetModel`](miniagent_protocol::Op::SetModel), `/model`: the session goes on with
//! another model (a provider profile of the config, or another model of the current
//! provider). A new client is built with the key rules a session starts with, and put in
//! place of the old one between turns; the history carries over as it is (each provider's
//! wire format leaves out the thinking it cannot take back). A switch that cannot be made
//! leaves the old model in place and says why.

use std::sync::Arc;

use super::{AgentOptions, Shared};
use crate::config::{Config, ModelConfig};
use miniagent_protocol::{Event, ModelChoice};

/// The longest model name `/model NAME` takes.
const MAX_MODEL_CHARS: usize = 128;

/// Builds a model client for another `[model]` mid-session, with the key rules of the
/// session's start (where the key is found, which hosts may receive it).
pub trait ModelSource: Send + Sync {
    /// A client for `config.model`, or why there cannot be one (no key, a key that must
    /// not go to that host, a base URL that does not parse).
    fn client_for(&self, config: &Config) -> Result<Arc<dyn crate::llm::ModelClient>, String>;
}

/// The configuration `name` stands for over the session's (its `profile` is the profile
/// `name` names, if one), or why it names nothing.
fn chosen(config: &Config, name: &str) -> Result<Config, String> {
    let mut next = config.clone();
    if let Some(profile) = config.profiles.get(name) {
        next.model = profile.model.clone();
        next.base_url_source = profile.base_url_source.clone();
        next.profile = Some(name.to_string());
        return Ok(next);
    }
    let usable = !name.is_empty()
        && name.chars().count() <= MAX_MODEL_CHARS
        && !name.chars().any(|c| c.is_whitespace() || c.is_control());
    if !usable {
        return Err(format!(
            "no profile or model {:?}: name a profile of the config or a model of {}",
            miniagent_text::visible(name),
            config.model.provider
        ));
    }
    // Another model of the same provider, at the same host, with the same key.
    next.model.model = name.to_string();
    next.profile = None;
    if config.agent.max_cost > 0.0 && next.price().is_none() {
        return Err(format!(
            "agent.max_cost needs the price of model `{name}`: add [prices.\"{name}\"] to the config"
        ));
    }
    Ok(next)
}

/// Switches the session to `name`, or says why it stays on its model. The caller made
/// sure no turn runs.
pub(super) async fn switch(shared: &mut Shared, name: &str) {
    let events = shared.events.clone();
    let old = shared.options.client.model().to_string();
    let refuse = |why: String| {
        events.emit(Event::ModelChangeRefused {
            name: name.to_string(),
            message: format!(
                "cannot switch to {}: {why}; the session stays on {old}",
                miniagent_text::visible(name)
            ),
        });
    };
    let Some(source) = shared.options.models.clone() else {
        refuse("this session cannot change its model".to_string());
        return;
    };
    let config = match chosen(&shared.options.config, name) {
        Ok(config) => config,
        Err(why) => return refuse(why),
    };
    let client = match source.client_for(&config) {
        Ok(client) => client,
        Err(why) => return refuse(why),
    };
    // A name that is no profile and no model whose price the config knows may be a typo:
    // the switch stands (new models come before their prices), and the person is told.
    let unknown = (config.profile.is_none() && config.price().is_none()).then(|| Event::Notice {
        message: format!(
            "`{}` is not a profile or a model miniagent knows the price of: requests go to it as named, with the window of [model]; /model lists the ones it knows",
            miniagent_text::visible(name)
        ),
    });
    let changed = Event::ModelChanged {
        profile: config.profile.clone(),
        model: client.model().to_string(),
        provider: client.provider().to_string(),
        endpoint: crate::llm::endpoint::shown_endpoint(config.model.provider, &config.model.base_url),
        context_window: config.model.context_window,
    };
    shared.options = Arc::new(shared.options.with_model(config, client));
    let mut session = shared.session.lock().await;
    events.emit(changed);
    if let Some(notice) = unknown {
        events.emit(notice);
    }
    events.emit(choices_event(&shared.options));
    // The gauge's window is the new model's.
    events.emit(super::compaction::usage_event(
        &mut session,
        &shared.options,
        shared.meter.get(),
    ));
    events.checkpoint(&mut session);
}

/// [`Event::ModelChoices`]: the profiles, then the priced models of the current provider
/// (those the config's prices name for its company's default host), the one in use marked.
pub(super) fn choices_event(options: &AgentOptions) -> Event {
    let config = &options.config;
    let now = &config.model;
    let mut choices: Vec<ModelChoice> = config
        .profiles
        .iter()
        .map(|(name, profile)| ModelChoice {
            name: name.clone(),
            profile: true,
            model: profile.model.model.clone(),
            provider: profile.model.provider.to_string(),
            context_window: profile.model.context_window,
            current: config.profile.as_deref() == Some(name.as_str())
                || (config.profile.is_none() && same_model(&profile.model, now)),
        })
        .collect();
    // Only one entry is the current one: the profile started with, else the first that
    // matches.
    let mut marked = false;
    for choice in &mut choices {
        choice.current &= !marked;
        marked |= choice.current;
    }
    let provider = now.provider.to_string();
    // The provider's models are those of its default model's family (claude-, gpt-,
    // MiniMax-), and the one in use.
    let default = crate::llm::endpoint::default_model(now.provider, &now.base_url);
    let family = |model: &str| model.split('-').next().unwrap_or_default().to_string();
    let mut models: Vec<&String> = config
        .prices
        .keys()
        .filter(|model| family(model) == family(default))
        .collect();
    if !models.contains(&&now.model) {
        models.insert(0, &now.model);
    }
    for model in models {
        choices.push(ModelChoice {
            name: model.clone(),
            profile: false,
            model: model.clone(),
            provider: provider.clone(),
            context_window: now.context_window,
            current: !marked && *model == now.model,
        });
    }
    Event::ModelChoices { choices }
}

fn same_model(a: &ModelConfig, b: &ModelConfig) -> bool {
    (a.provider, &a.base_url, &a.model) == (b.provider, &b.base_url, &b.model)
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    fn with_profiles() -> Config {
        let mut config = crate::config::built_in();
        let mut fast = config.profiles["default"].clone();
        fast.model.model = "claude-haiku-4-5".to_string();
        config.profiles.insert("fast".to_string(), fast);
        config
    }

    #[test]
    fn a_name_is_a_profile_first_then_a_model_of_the_provider() {
        let config = with_profiles();
        let next = chosen(&config, "fast").unwrap();
        let profile = next.profile.clone();
        assert_eq!(
            (profile.as_deref(), next.model.model.as_str()),
            (Some("fast"), "claude-haiku-4-5")
        );
        let next = chosen(&config, "claude-opus-4-5").unwrap();
        let profile = next.profile.clone();
        assert_eq!(
            (profile, next.model.model.as_str(), next.model.base_url.as_str()),
            (None, "claude-opus-4-5", config.model.base_url.as_str())
        );
        for bad in ["", "two words", "x\u{1b}[2J", &"m".repeat(200)] {
            assert!(chosen(&config, bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn a_cost_limit_refuses_a_model_without_a_price() {
        let mut config = with_profiles();
        config.agent.max_cost = 1.0;
        assert_eq!(
            chosen(&config, "unpriced-model").map(|next| next.model.model),
            Err("agent.max_cost needs the price of model `unpriced-model`: add [prices.\"unpriced-model\"] to the config".to_string())
        );
    }
}
