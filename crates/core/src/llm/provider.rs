//! The model providers miniagent speaks to, as one registry. A provider is one file in
//! `llm/` (its client and a [`ProviderSpec`] naming it) and one line in [`PROVIDERS`];
//! the configuration (`model.provider`, `--provider`), the key lookup and the base URL
//! rules all read the registry.

use std::fmt;
use std::sync::Arc;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

use super::{ModelClient, ModelConfig, anthropic, openai};

/// What miniagent knows of one provider.
pub struct ProviderSpec {
    /// The name users write: `provider = "anthropic"`, `--provider anthropic`.
    pub name: &'static str,
    /// The company whose API it is: where requests go when `model.base_url` is empty,
    /// and the variable its key is usually in (after `MINIAGENT_API_KEY`).
    pub owner: &'static super::endpoint::KeyOwner,
    /// The model asked for when `model.model` is empty (on its own API).
    pub default_model: &'static str,
    /// Where a bare MiniMax host serves this protocol (`/anthropic`, `/v1`).
    pub minimax_path: &'static str,
    /// Its client, on the resolved base URL, holding the key.
    pub client: fn(reqwest::Client, String, String, &ModelConfig) -> Arc<dyn ModelClient>,
}

/// Every provider, in the order errors and `--help` list them.
pub const PROVIDERS: [&ProviderSpec; 2] = [&anthropic::SPEC, &openai::SPEC];

/// The providers' names, for messages and `--help`.
pub const NAMES: [&str; PROVIDERS.len()] = {
    let mut names = [""; PROVIDERS.len()];
    let mut index = 0;
    while index < PROVIDERS.len() {
        names[index] = PROVIDERS[index].name;
        index += 1;
    }
    names
};

const ALL: [Provider; PROVIDERS.len()] = {
    let mut all = [Provider(""); PROVIDERS.len()];
    let mut index = 0;
    while index < PROVIDERS.len() {
        all[index] = Provider(PROVIDERS[index].name);
        index += 1;
    }
    all
};

/// Which wire protocol the model speaks: one of [`PROVIDERS`], by its name (so code can
/// match on a provider's constant).
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct Provider(&'static str);

impl Provider {
    /// The provider `spec` describes (its file's constant).
    pub(super) const fn of(spec: &'static ProviderSpec) -> Self {
        Self(spec.name)
    }

    /// The provider called `name` (as users write it, any case).
    pub fn named(name: &str) -> Option<Self> {
        ALL.iter()
            .copied()
            .find(|provider| provider.0.eq_ignore_ascii_case(name.trim()))
    }

    /// What the registry says of it. A provider is made only from the registry or from
    /// a registered file's constant (a test checks each), so it is always found.
    pub fn spec(self) -> &'static ProviderSpec {
        PROVIDERS
            .iter()
            .copied()
            .find(|spec| spec.name == self.0)
            .unwrap_or(PROVIDERS[0])
    }

    pub fn name(self) -> &'static str {
        self.0
    }
}

impl fmt::Debug for Provider {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Provider({})", self.0)
    }
}

impl fmt::Display for Provider {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.0)
    }
}

impl Serialize for Provider {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.0)
    }
}

impl<'de> Deserialize<'de> for Provider {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let name = String::deserialize(deserializer)?;
        // Names are matched exactly, as serde matched the variants before.
        ALL.iter()
            .copied()
            .find(|provider| provider.0 == name)
            .ok_or_else(|| serde::de::Error::unknown_variant(&name, &NAMES))
    }
}

#[cfg(feature = "clap")]
impl clap::ValueEnum for Provider {
    fn value_variants<'a>() -> &'a [Self] {
        &ALL
    }

    fn to_possible_value(&self) -> Option<clap::builder::PossibleValue> {
        Some(clap::builder::PossibleValue::new(self.0))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn providers_are_found_by_name_and_read_and_written_as_their_names() {
        assert_eq!(NAMES, ["anthropic", "openai"]);
        assert_eq!(Provider::named(" OpenAI "), Some(Provider::Openai));
        assert_eq!(Provider::named("gemini"), None);
        assert_eq!(Provider::Anthropic.to_string(), "anthropic");
        let read: Provider = serde_json::from_str("\"openai\"").unwrap();
        assert_eq!(read, Provider::Openai);
        assert_eq!(serde_json::to_string(&read).unwrap(), "\"openai\"");
        let unknown = serde_json::from_str::<Provider>("\"gemini\"").unwrap_err();
        assert!(
            unknown
                .to_string()
                .starts_with("unknown variant `gemini`, expected `anthropic` or `openai`"),
            "{unknown}"
        );
        assert_eq!(Provider::Openai.spec().owner.variable, "OPENAI_API_KEY");
        // Every registered provider and every provider file's constant find their spec.
        for spec in PROVIDERS {
            let provider = Provider::named(spec.name).unwrap();
            assert_eq!(provider.spec().owner, spec.owner, "{}", spec.name);
        }
        for (constant, spec) in [
            (Provider::Anthropic, &anthropic::SPEC),
            (Provider::Openai, &openai::SPEC),
        ] {
            assert_eq!(constant.spec().name, spec.name);
            assert_eq!(constant.spec().minimax_path, spec.minimax_path);
        }
    }
}
