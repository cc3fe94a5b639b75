//! What every request passes before a handler sees it: a `Host` that is this server's
//! (a web page whose name was pointed at 127.0.0.1 — DNS rebinding — sends its own), no
//! browser `Origin` unless configured, no token in the query string, and the bearer token
//! in the `Authorization` header (all but `/health`). Each request is logged as method,
//! path and status: never a header, a query or a body.

use std::net::SocketAddr;
use std::sync::Arc;

use axum::extract::{Request, State};
use axum::http::{StatusCode, Uri, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};

use crate::error::ApiError;
use crate::state::AppState;

/// Query parameters a client might put a token in; refused whatever their value.
const TOKEN_PARAMETERS: &[&str] = &[
    "token",
    "access_token",
    "bearer",
    "auth",
    "authorization",
    "api_key",
    "apikey",
    "key",
];

/// The layer itself: refuses what [`check`] refuses, runs the rest, logs the outcome.
pub async fn guard(State(state): State<Arc<AppState>>, request: Request, next: Next) -> Response {
    let method = request.method().clone();
    // The path only: a query may hold what must never be logged.
    let path = miniagent_text::clean(request.uri().path()).into_owned();
    let response = match check(&state, &request) {
        Ok(()) => next.run(request).await,
        Err(refusal) => refusal.into_response(),
    };
    tracing::info!("serve: {method} {path} {}", response.status().as_u16());
    response
}

/// Why `request` may not go further, if it may not.
pub fn check(state: &AppState, request: &Request) -> Result<(), ApiError> {
    let headers = request.headers();
    let host = headers.get(header::HOST).and_then(|value| value.to_str().ok());
    if !host.is_some_and(|host| host_allowed(host, state.local, &state.settings.allowed_hosts)) {
        return Err(ApiError::new(
            StatusCode::FORBIDDEN,
            "host_not_allowed",
            "the Host header is not this server's address (add it to serve.allowed_hosts to accept it)",
        ));
    }
    if let Some(origin) = headers.get(header::ORIGIN) {
        let allowed = origin.to_str().is_ok_and(|origin| {
            state
                .settings
                .allowed_origins
                .iter()
                .any(|allowed| allowed.eq_ignore_ascii_case(origin.trim_end_matches('/')))
        });
        if !allowed {
            return Err(ApiError::new(
                StatusCode::FORBIDDEN,
                "origin_not_allowed",
                "requests from a web page are refused unless its origin is in serve.allowed_origins",
            ));
        }
    }
    if token_in_query(request.uri(), &state.token) {
        return Err(ApiError::new(
            StatusCode::BAD_REQUEST,
            "token_in_query",
            "a token is accepted only in the Authorization header (Bearer), never in the URL, which proxies and logs keep",
        ));
    }
    if request.uri().path() == "/health" {
        return Ok(());
    }
    let offered = headers
        .get(header::AUTHORIZATION)
        .and_then(|value| value.to_str().ok())
        .and_then(|value| bearer(value));
    match offered {
        Some(offered) if state.token.matches(offered) => Ok(()),
        Some(_) => Err(ApiError::new(
            StatusCode::UNAUTHORIZED,
            "bad_token",
            "the bearer token is not this server's",
        )),
        None => Err(ApiError::new(
            StatusCode::UNAUTHORIZED,
            "no_token",
            "send the server's token as Authorization: Bearer TOKEN",
        )),
    }
}

/// The token of an `Authorization: Bearer TOKEN` value (the scheme in any case).
fn bearer(value: &str) -> Option<&str> {
    let (scheme, token) = value.trim().split_once(' ')?;
    scheme.eq_ignore_ascii_case("bearer").then(|| token.trim())
}

/// Whether `host` names this server: the address it is bound to, a loopback name or
/// address with its port, or a configured host (with or without the port).
fn host_allowed(host: &str, local: SocketAddr, allowed: &[String]) -> bool {
    let host = host.trim().to_ascii_lowercase();
    let port = local.port();
    let own = [
        local.to_string(),
        format!("localhost:{port}"),
        format!("127.0.0.1:{port}"),
        format!("[::1]:{port}"),
    ];
    own.contains(&host)
        || allowed.iter().any(|name| {
            let name = name.to_ascii_lowercase();
            name == host || format!("{name}:{port}") == host
        })
}

/// Whether the query string carries a token: a parameter named like one, or any value
/// that is the token.
fn token_in_query(uri: &Uri, token: &miniagent_api::ServeToken) -> bool {
    let Some(query) = uri.query() else {
        return false;
    };
    query.split('&').any(|pair| {
        let (name, value) = pair.split_once('=').unwrap_or((pair, ""));
        let name = name.to_ascii_lowercase();
        TOKEN_PARAMETERS.contains(&name.as_str())
            || (!value.is_empty() && token.matches(&percent_decoded(value)))
            || (!name.is_empty() && token.matches(&percent_decoded(&name)))
    })
}

/// `%XX` and `+` decoded (lossy for bytes that are not UTF-8: those are no token).
fn percent_decoded(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'%' if i + 2 < bytes.len() => {
                let hex = std::str::from_utf8(&bytes[i + 1..i + 3]).ok();
                match hex.and_then(|hex| u8::from_str_radix(hex, 16).ok()) {
                    Some(byte) => {
                        out.push(byte);
                        i += 3;
                        continue;
                    }
                    None => out.push(b'%'),
                }
            }
            b'+' => out.push(b' '),
            byte => out.push(byte),
        }
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hosts_are_this_servers_own_or_configured() {
        let local: SocketAddr = "127.0.0.1:8420".parse().unwrap();
        let allowed = vec!["agent.example".to_string()];
        for host in [
            "127.0.0.1:8420",
            "localhost:8420",
            "LOCALHOST:8420",
            "agent.example",
            "agent.example:8420",
        ] {
            assert!(host_allowed(host, local, &allowed), "{host}");
        }
        for host in [
            "evil.example:8420",
            "localhost:9999",
            "127.0.0.1",
            "localhost",
            "",
        ] {
            assert!(!host_allowed(host, local, &allowed), "{host}");
        }
    }

    #[test]
    fn percent_decoding_reads_escapes_and_keeps_stray_percents() {
        assert_eq!(percent_decoded("a%2Db+c"), "a-b c");
        assert_eq!(percent_decoded("100%"), "100%");
        assert_eq!(percent_decoded("%zz%4"), "%zz%4");
    }

    #[test]
    fn bearer_takes_the_scheme_in_any_case() {
        assert_eq!(bearer("Bearer abc"), Some("abc"));
        assert_eq!(bearer("bearer  abc "), Some("abc"));
        assert_eq!(bearer("Basic abc"), None);
        assert_eq!(bearer("abc"), None);
    }
}
