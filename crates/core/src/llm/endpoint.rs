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

/// The base URL requests are built on, without a trailing slash. A bare MiniMax host gets
/// the suffix of the chosen protocol; any other URL is used as given.
pub fn resolve_base_url(provider: Provider, base_url: &str) -> anyhow::Result<String> {
    let url = Url::parse(base_url.trim())
        .map_err(|err| anyhow::anyhow!("model.base_url `{base_url}` is not a URL: {err}"))?;
    if !matches!(url.scheme(), "http" | "https") {
        anyhow::bail!("model.base_url `{base_url}` must start with http:// or https://");
    }
    let trimmed = url.as_str().trim_end_matches('/').to_string();
    if is_minimax(base_url) && matches!(url.path(), "" | "/") {
        return Ok(format!("{trimmed}{}", provider.spec().minimax_path));
    }
    Ok(trimmed)
}

/// The base URL requests go to, as front ends may show it: resolved as the client
/// resolves it, without a user name, password, query or fragment (a URL may carry a
/// credential); empty when it does not resolve.
pub fn shown_endpoint(provider: Provider, base_url: &str) -> String {
    let Ok(resolved) = resolve_base_url(provider, base_url) else {
        return String::new();
    };
    let Ok(mut url) = Url::parse(&resolved) else {
        return String::new();
    };
    let _ = url.set_username("");
    let _ = url.set_password(None);
    url.set_query(None);
    url.set_fragment(None);
    url.as_str().trim_end_matches('/').to_string()
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

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
        assert!(resolve_base_url(Provider::Openai, "not a url").is_err());
        assert!(resolve_base_url(Provider::Openai, "ftp://x.example").is_err());
    }
}
