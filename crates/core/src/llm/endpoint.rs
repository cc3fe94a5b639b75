//! Base URL handling: MiniMax hosts serve both protocols under a path suffix.

use reqwest::Url;

use super::Provider;

/// Hosts that serve the Anthropic protocol under `/anthropic` and OpenAI's under `/v1`.
const MINIMAX_HOSTS: [&str; 2] = ["api.minimax.io", "api.minimaxi.com"];

/// Whether the URL points at a MiniMax host (exact host match, not a suffix match).
pub fn is_minimax(base_url: &str) -> bool {
    Url::parse(base_url)
        .ok()
        .and_then(|url| url.host_str().map(|host| MINIMAX_HOSTS.contains(&host)))
        .unwrap_or(false)
}

/// The field `base_url`'s server is known to take reasoning back in, for
/// `model.send_reasoning = "auto"`: MiniMax's and OpenRouter's `reasoning_details`,
/// DeepSeek's `reasoning_content`; none for any other server.
pub fn reasoning_field_for(base_url: &str) -> super::ReasoningField {
    use super::ReasoningField;
    match host_of(base_url).as_deref() {
        Some(host) if MINIMAX_HOSTS.contains(&host) || host == "openrouter.ai" => ReasoningField::Details,
        Some("api.deepseek.com") => ReasoningField::Content,
        _ => ReasoningField::Off,
    }
}

/// Whether the URL points at OpenAI's own API (or Azure's OpenAI service), which takes
/// the reply's limit as `max_completion_tokens` (its reasoning models refuse
/// `max_tokens`); other OpenAI-compatible servers are sent `max_tokens`, which they all
/// know.
pub fn is_openai_api(base_url: &str) -> bool {
    host_of(base_url).is_some_and(|host| host == "api.openai.com" || host.ends_with(".openai.azure.com"))
}

/// Whether the URL is OpenAI's own API (`api.openai.com`), the one server known to take
/// every field of its protocol (`prompt_cache_key`).
pub fn is_openai_itself(base_url: &str) -> bool {
    host_of(base_url).is_some_and(|host| host == "api.openai.com")
}

/// A company whose API keys miniagent knows: the variable its key is usually in, the
/// hosts its keys are for, and the beginnings its keys alone have. A key of theirs goes
/// to their hosts only (or to a server the person names the variable for).
#[derive(Debug, PartialEq, Eq)]
pub struct KeyOwner {
    pub name: &'static str,
    pub variable: &'static str,
    pub hosts: &'static [&'static str],
    /// The domains whose every host is theirs too (a regional API, `eu.api.openai.com`):
    /// their keys go there, and over https only.
    pub domains: &'static [&'static str],
    /// Its API, as `model.base_url` names it.
    pub base_url: &'static str,
    pub key_prefixes: &'static [&'static str],
    /// The model asked for on its hosts when `model.model` is empty, where that is not
    /// the provider's own default (MiniMax serves both protocols).
    pub default_model: Option<&'static str>,
}

/// Anthropic: the `anthropic` provider's own API.
pub const ANTHROPIC: KeyOwner = KeyOwner {
    name: "Anthropic",
    variable: "ANTHROPIC_API_KEY",
    hosts: &["api.anthropic.com"],
    domains: &["anthropic.com"],
    base_url: "https://api.anthropic.com",
    key_prefixes: &["sk-ant-"],
    default_model: None,
};

/// OpenAI: the `openai` provider's own API.
pub const OPENAI: KeyOwner = KeyOwner {
    name: "OpenAI",
    variable: "OPENAI_API_KEY",
    hosts: &["api.openai.com"],
    domains: &["openai.com"],
    base_url: "https://api.openai.com/v1",
    key_prefixes: &["sk-proj-", "sk-svcacct-", "sk-admin-"],
    default_model: None,
};

/// MiniMax, which serves both protocols.
pub const MINIMAX: KeyOwner = KeyOwner {
    name: "MiniMax",
    variable: "MINIMAX_API_KEY",
    hosts: &MINIMAX_HOSTS,
    domains: &["minimax.io", "minimaxi.com"],
    base_url: "https://api.minimax.io",
    key_prefixes: &[],
    default_model: Some("MiniMax-M2"),
};

/// Every company whose keys are kept to its own hosts.
pub const KEY_OWNERS: [&KeyOwner; 3] = [&ANTHROPIC, &OPENAI, &MINIMAX];

/// Whose host the URL names, if a key owner's.
pub fn host_owner(base_url: &str) -> Option<&'static KeyOwner> {
    let host = host_of(base_url)?;
    KEY_OWNERS.into_iter().find(|owner| {
        owner.hosts.contains(&host.as_str())
            || owner
                .domains
                .iter()
                .any(|domain| host == *domain || host.ends_with(&format!(".{domain}")))
    })
}

/// Whose key `variable` usually holds, if a key owner's.
pub fn variable_owner(variable: &str) -> Option<&'static KeyOwner> {
    KEY_OWNERS.into_iter().find(|owner| owner.variable == variable)
}

/// Whose key `key` is by its form, if it begins as only one owner's keys do.
pub fn key_owner(key: &str) -> Option<(&'static KeyOwner, &'static str)> {
    KEY_OWNERS.into_iter().find_map(|owner| {
        owner
            .key_prefixes
            .iter()
            .find(|prefix| key.trim().starts_with(**prefix))
            .map(|prefix| (owner, *prefix))
    })
}

/// A key that belongs to one company about to go to another's host.
#[derive(Debug, PartialEq, Eq)]
pub struct ForeignKey {
    /// The variable the key came from.
    pub variable: String,
    pub owner: &'static KeyOwner,
    /// The beginning that marks it as the owner's, when that, not its variable, says
    /// whose it is.
    pub prefix: Option<&'static str>,
    /// The host it would have gone to, and whose that is.
    pub host: String,
    pub host_owner: &'static KeyOwner,
}

impl ForeignKey {
    /// `the key in VAR is X's and goes only to HOST, not to OTHER`.
    pub fn describe(&self) -> String {
        let marked = self
            .prefix
            .map(|prefix| format!(" (it starts with {prefix})"))
            .unwrap_or_default();
        format!(
            "the key in {} is {}'s{marked} and goes only to {}, not to {}",
            self.variable, self.owner.name, self.owner.hosts[0], self.host
        )
    }

    /// What to set instead, in one clause. `named`: the variable was named on purpose
    /// (`--api-key-env`), so the host's own variable would not be read.
    pub fn remedy(&self, named: bool) -> String {
        let other = if named {
            format!(
                "name the variable that holds {}'s key with --api-key-env",
                self.host_owner.name
            )
        } else if variable_owner(&self.variable).is_none() {
            // MINIAGENT_API_KEY is read first: the host's own variable would not be.
            format!("put {}'s key in {}", self.host_owner.name, self.variable)
        } else {
            format!("give {} its own key in {}", self.host, self.host_owner.variable)
        };
        format!(
            "set model.base_url to {} (--base-url), or {other}",
            self.owner.base_url
        )
    }
}

/// Whether sending the key from `variable` to `base_url` would hand one company's key
/// to another's host: by the variable it is in (`OPENAI_API_KEY`), else by its form
/// (`sk-ant-…`). A host that is no key owner's is the person's own choice (a gateway, a
/// server on this machine) and is never refused here.
pub fn foreign_key(base_url: &str, variable: &str, key: &str) -> Option<ForeignKey> {
    let host_owner = host_owner(base_url)?;
    // Either says whose it is: an Anthropic key put in OPENAI_API_KEY is still Anthropic's.
    let (owner, prefix) = variable_owner(variable)
        .map(|owner| (owner, None))
        .into_iter()
        .chain(key_owner(key).map(|(owner, prefix)| (owner, Some(prefix))))
        .find(|(owner, _)| *owner != host_owner)?;
    Some(ForeignKey {
        variable: variable.to_string(),
        owner,
        prefix,
        host: host_of(base_url).unwrap_or_default(),
        host_owner,
    })
}

/// A key owner's host named over plain `http://`: its key would cross the network
/// readable by anyone on the path. Such a URL is refused before any key is sent.
pub fn plain_http_to_owner(base_url: &str) -> Option<&'static KeyOwner> {
    let url = Url::parse(base_url.trim()).ok()?;
    if url.scheme() != "http" {
        return None;
    }
    host_owner(base_url)
}

/// The model asked for when `model.model` is empty: MiniMax's on a MiniMax host, else
/// the provider's own.
pub fn default_model(provider: Provider, base_url: &str) -> &'static str {
    host_owner(base_url)
        .and_then(|owner| owner.default_model)
        .unwrap_or(provider.spec().default_model)
}

/// The URL's host, lower-cased, without the trailing dot of a fully qualified name.
pub fn host_of(base_url: &str) -> Option<String> {
    let url = Url::parse(base_url.trim()).ok()?;
    Some(url.host_str()?.trim_end_matches('.').to_ascii_lowercase())
}

/// A base URL that cannot be used, said without naming the setting (the caller knows
/// whether it came from a file, a variable or `--base-url`).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct BaseUrlError(String);

/// The base URL requests are built on, without a trailing slash in its path and without
/// a fragment; a query (`?api-version=…`) is kept for [`request_url`] to carry. A bare
/// MiniMax host gets the suffix of the chosen protocol; any other URL is used as given.
pub fn resolve_base_url(provider: Provider, base_url: &str) -> Result<String, BaseUrlError> {
    let given = base_url.trim();
    // `127.0.0.1:8080` does not parse and `localhost:8080` parses with `localhost` as its
    // scheme: both lack the same thing, and are told the same.
    let Some((scheme, rest)) = given
        .split_once("://")
        .filter(|(scheme, _)| scheme.eq_ignore_ascii_case("http") || scheme.eq_ignore_ascii_case("https"))
    else {
        let rest = given.split_once("://").map_or(given, |(_, rest)| rest);
        let local = ["localhost", "127.", "0.0.0.0", "[::1]"]
            .iter()
            .any(|start| rest.to_ascii_lowercase().starts_with(start));
        let scheme = if local { "http" } else { "https" };
        // Only a host can follow: not a typed scheme (`http//x`), a path or a space.
        let hostlike = rest.starts_with(|c: char| c.is_ascii_alphanumeric() || c == '[')
            && !rest.to_ascii_lowercase().starts_with("http")
            && !rest.contains(char::is_whitespace);
        let example = if hostlike {
            format!(", as in {scheme}://{rest}")
        } else {
            String::new()
        };
        return Err(BaseUrlError(format!(
            "`{base_url}` must start with http:// or https://{example}"
        )));
    };
    let mut url = Url::parse(&format!("{}://{rest}", scheme.to_ascii_lowercase()))
        .map_err(|err| BaseUrlError(format!("`{base_url}` is not a URL: {err}")))?;
    url.set_fragment(None);
    let mut path = url.path().trim_end_matches('/').to_string();
    if is_minimax(given) && path.is_empty() {
        path = provider.spec().minimax_path.to_string();
    }
    url.set_path(&path);
    Ok(match url.query() {
        Some(_) => url.to_string(),
        None => url.as_str().trim_end_matches('/').to_string(),
    })
}

/// The URL of `path` (`/v1/messages`) under a resolved base URL: the path goes after the
/// base's path and before its query.
pub fn request_url(base: &str, path: &str) -> String {
    match Url::parse(base) {
        Ok(mut url) => {
            let joined = format!("{}{path}", url.path().trim_end_matches('/'));
            url.set_path(&joined);
            url.to_string()
        }
        Err(_) => format!("{base}{path}"),
    }
}

/// What a URL holds of a credential, in every form a provider may echo it: its password
/// (as written and decoded) and the HTTP Basic value made of it, and the values of query
/// parameters named like one (`key`, `api-key`, `token`, `sig`, `code`, …), as written
/// and decoded. `api-version=2024-06-01` is not one: redacting a date everywhere would
/// mangle what commands print.
pub fn url_secrets(url: &str) -> Vec<String> {
    use base64::Engine;
    const CREDENTIAL_NAMES: [&str; 8] = ["key", "token", "secret", "sig", "pass", "auth", "cred", "code"];
    let Ok(parsed) = Url::parse(url.trim()) else {
        return Vec::new();
    };
    let credential = |name: &str| {
        let name = name.to_ascii_lowercase();
        CREDENTIAL_NAMES.iter().any(|part| name.contains(part))
    };
    let mut secrets = Vec::new();
    if let Some(password) = parsed.password() {
        let user = parsed.username();
        let (plain_user, plain_password) = (decoded(user), decoded(password));
        for (user, password) in [(user, password), (plain_user.as_str(), plain_password.as_str())] {
            let basic = base64::engine::general_purpose::STANDARD.encode(format!("{user}:{password}"));
            secrets.extend([password.to_string(), basic]);
        }
    }
    for pair in parsed.query().unwrap_or("").split('&') {
        let (name, value) = pair.split_once('=').unwrap_or((pair, ""));
        if credential(&decoded(name)) {
            secrets.extend([value.to_string(), decoded(value)]);
        }
    }
    secrets
}

/// A URL component with its percent-escapes decoded (and `+` as a space, as a query
/// reads it).
fn decoded(text: &str) -> String {
    let Ok(mut url) = Url::parse("http://decode.invalid/") else {
        return text.to_string();
    };
    url.set_query(Some(&format!("x={text}")));
    url.query_pairs()
        .next()
        .map_or_else(|| text.to_string(), |(_, value)| value.into_owned())
}

/// `url` as the log and messages may show it: without a user name, password or query,
/// where a credential may be.
pub fn without_credentials(url: &str) -> String {
    match Url::parse(url) {
        Ok(mut parsed) => {
            let _ = parsed.set_username("");
            let _ = parsed.set_password(None);
            parsed.set_query(None);
            parsed.set_fragment(None);
            parsed.to_string()
        }
        Err(_) => url.to_string(),
    }
}

/// The base URL requests go to, as front ends may show it: resolved as the client
/// resolves it, without a user name, password, query or fragment (a URL may carry a
/// credential); empty when it does not resolve.
pub fn shown_endpoint(provider: Provider, base_url: &str) -> String {
    let Ok(resolved) = resolve_base_url(provider, base_url) else {
        return String::new();
    };
    without_credentials(&resolved).trim_end_matches('/').to_string()
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    /// A company's regional hosts are its own: its key goes there (over https only) and
    /// another company's never does (fresh-eyes finding: `http://eu.api.openai.com`
    /// would have carried an OpenAI key in the clear).
    #[test]
    fn every_host_of_a_companys_domain_is_its_own() {
        let owner = |url: &str| host_owner(url).map(|owner| owner.name);
        assert_eq!(owner("https://eu.api.openai.com/v1"), Some("OpenAI"));
        assert_eq!(owner("https://API.Anthropic.com."), Some("Anthropic"));
        assert_eq!(owner("https://api.minimaxi.com"), Some("MiniMax"));
        assert_eq!(owner("https://openai.com.evil.example"), None);
        assert_eq!(owner("https://notopenai.com"), None);
        assert_eq!(
            plain_http_to_owner("http://eu.api.openai.com/v1").map(|owner| owner.name),
            Some("OpenAI")
        );
        assert_eq!(plain_http_to_owner("https://eu.api.openai.com/v1"), None);
        assert!(foreign_key("https://eu.api.openai.com/v1", "MINIAGENT_API_KEY", "sk-ant-x").is_some());
        assert!(foreign_key("https://eu.api.openai.com/v1", "MINIAGENT_API_KEY", "sk-proj-x").is_none());
    }

    #[test]
    fn a_query_in_the_base_url_stays_after_the_path() {
        let base = resolve_base_url(
            Provider::Openai,
            "https://proxy.example/v1/?api-version=2024#frag",
        )
        .unwrap();
        assert_eq!(base, "https://proxy.example/v1?api-version=2024");
        assert_eq!(
            request_url(&base, "/chat/completions"),
            "https://proxy.example/v1/chat/completions?api-version=2024"
        );
        let plain = resolve_base_url(Provider::Anthropic, "http://127.0.0.1:8080/").unwrap();
        assert_eq!(plain, "http://127.0.0.1:8080");
        assert_eq!(
            request_url(&plain, "/v1/messages"),
            "http://127.0.0.1:8080/v1/messages"
        );
        assert_eq!(
            without_credentials("http://u:p@h.example/x?key=1"),
            "http://h.example/x"
        );
    }

    #[test]
    fn a_urls_credentials_are_its_password_and_key_like_parameters() {
        let secrets = url_secrets(
            "https://me:hunter2pw@proxy.example/v1?api-version=2024-06-01&key=SECRETQ9&sig=abcdef&code=FUNCKEY1",
        );
        // bWU6aHVudGVyMnB3 is `me:hunter2pw` as HTTP Basic auth sends it.
        for secret in ["hunter2pw", "SECRETQ9", "abcdef", "FUNCKEY1", "bWU6aHVudGVyMnB3"] {
            assert!(secrets.iter().any(|s| s == secret), "{secret} not in {secrets:?}");
        }
        assert!(!secrets.iter().any(|s| s.contains("2024")), "{secrets:?}");
        // As written and decoded: a provider may echo either.
        let secrets = url_secrets("http://u:p%40ss%2Bword@h.example/?key=PCT%2BSECRET");
        for secret in ["p%40ss%2Bword", "p@ss+word", "PCT%2BSECRET", "PCT+SECRET"] {
            assert!(secrets.iter().any(|s| s == secret), "{secret} not in {secrets:?}");
        }
        assert!(url_secrets("https://api.anthropic.com").is_empty());
    }

    #[test]
    fn only_openai_itself_is_sent_max_completion_tokens() {
        assert!(is_openai_api("https://api.openai.com/v1"));
        assert!(is_openai_api("https://api.openai.com./v1"));
        assert!(is_openai_itself("https://API.openai.com./v1"));
        assert!(is_openai_api(
            "https://mine.openai.azure.com/openai/deployments/x"
        ));
        assert!(!is_openai_api("http://127.0.0.1:11434/v1"));
        assert!(!is_openai_api("https://api.openai.com.evil.example/v1"));
    }

    #[test]
    fn the_shown_endpoint_carries_no_credential() {
        assert_eq!(
            shown_endpoint(
                Provider::Openai,
                "https://user:secret@proxy.example/v1/?key=abc#x"
            ),
            "https://proxy.example/v1"
        );
        assert_eq!(
            shown_endpoint(Provider::Anthropic, "https://api.minimax.io"),
            "https://api.minimax.io/anthropic"
        );
        assert_eq!(shown_endpoint(Provider::Openai, "not a url"), "");
    }

    #[test]
    fn minimax_hosts_get_the_protocol_suffix() {
        let cases = [
            (
                Provider::Anthropic,
                "https://api.minimax.io",
                "https://api.minimax.io/anthropic",
            ),
            (
                Provider::Openai,
                "https://api.minimax.io/",
                "https://api.minimax.io/v1",
            ),
            (
                Provider::Openai,
                "https://api.minimaxi.com",
                "https://api.minimaxi.com/v1",
            ),
            (
                Provider::Anthropic,
                "https://api.minimax.io/anthropic",
                "https://api.minimax.io/anthropic",
            ),
            // Not an exact host match: used as given.
            (
                Provider::Openai,
                "https://evil-api.minimax.io.example.com",
                "https://evil-api.minimax.io.example.com",
            ),
            (
                Provider::Anthropic,
                "https://api.anthropic.com/",
                "https://api.anthropic.com",
            ),
            (
                Provider::Openai,
                "http://127.0.0.1:8080/v1",
                "http://127.0.0.1:8080/v1",
            ),
        ];
        for (provider, input, expected) in cases {
            assert_eq!(resolve_base_url(provider, input).unwrap(), expected, "{input}");
        }
    }

    #[test]
    fn bad_urls_are_refused() {
        let refused = |url: &str| resolve_base_url(Provider::Openai, url).unwrap_err().to_string();
        assert_eq!(
            refused("not a url"),
            "`not a url` must start with http:// or https://"
        );
        assert_eq!(
            refused("ftp://x.example"),
            "`ftp://x.example` must start with http:// or https://, as in https://x.example"
        );
        // Found by a new user: one parsed as a relative URL, the other with `localhost` as
        // its scheme; both are told the same.
        assert_eq!(
            refused("127.0.0.1:8080"),
            "`127.0.0.1:8080` must start with http:// or https://, as in http://127.0.0.1:8080"
        );
        assert_eq!(
            refused("localhost:8080/v1"),
            "`localhost:8080/v1` must start with http:// or https://, as in http://localhost:8080/v1"
        );
        for typed in [
            "http//localhost:8080",
            "https:/api.openai.com",
            "file:///etc/passwd",
        ] {
            assert_eq!(
                refused(typed),
                format!("`{typed}` must start with http:// or https://")
            );
        }
        assert_eq!(
            refused("http://exa mple.com"),
            "`http://exa mple.com` is not a URL: invalid international domain name"
        );
        assert_eq!(
            resolve_base_url(Provider::Openai, "HTTP://Example.com/v1/").unwrap(),
            "http://example.com/v1"
        );
    }
}
