//! What a failed request came to, in a few words: the connection, the TLS handshake, or
//! the request itself; the whole chain goes to the log.

use super::{LlmError, endpoint};

/// Turns a transport error into the matching [`LlmError`].
pub(crate) fn transport_error(url: &str, err: &reqwest::Error, idle_timeout_s: u64) -> LlmError {
    if err.is_timeout() {
        LlmError::Timeout(idle_timeout_s)
    } else if err.is_connect() {
        // The chain (reqwest, hyper, the OS) is three lines of nested causes: the log
        // keeps it, the person gets the cause that matters.
        // A URL may carry a credential (user:password@, ?key=): the log gets it without.
        tracing::warn!(
            "cannot connect to {}: {}",
            endpoint::without_credentials(url),
            chain_without_credentials(url, err)
        );
        match tls_failure(err) {
            Some(detail) => LlmError::Tls {
                address: address_of(url),
                detail,
            },
            None => LlmError::Connect {
                address: address_of(url),
                detail: connect_failure(err),
            },
        }
    } else if err.is_builder() {
        LlmError::Request(chain_without_credentials(url, err))
    } else {
        LlmError::StreamBroken(chain_without_credentials(url, err))
    }
}

/// [`error_chain`] of a request's error with its URL shown without credentials: reqwest
/// names the URL it sent to (the user name and password moved to a header, the query
/// kept).
fn chain_without_credentials(url: &str, err: &reqwest::Error) -> String {
    let shown = endpoint::without_credentials(url);
    let mut text = error_chain(err).replace(url, &shown);
    if let Some(sent) = err.url() {
        text = text.replace(sent.as_str(), &shown);
    }
    text
}

/// `host:port` of `url` (the whole text when it does not parse).
fn address_of(url: &str) -> String {
    match reqwest::Url::parse(url) {
        Ok(parsed) => match (parsed.host_str(), parsed.port_or_known_default()) {
            (Some(host), Some(port)) => format!("{host}:{port}"),
            (Some(host), None) => host.to_string(),
            (None, _) => url.to_string(),
        },
        Err(_) => url.to_string(),
    }
}

/// What a failed TLS handshake came to, if that is what failed: a server that answered
/// in plain HTTP (its reply is not a TLS record) is told as such; a certificate problem
/// as rustls says it.
fn tls_failure(err: &(dyn std::error::Error + 'static)) -> Option<String> {
    let mut source = Some(err);
    while let Some(cause) = source {
        if let Some(tls) = rustls_error_in(cause) {
            return Some(match tls {
                rustls::Error::InvalidMessage(rustls::InvalidMessage::InvalidContentType) => {
                    "the server answered in plain text; does the server speak https? try http://".to_string()
                }
                other => other.to_string(),
            });
        }
        source = cause.source();
    }
    None
}

/// The rustls error `err` is, or holds inside I/O errors (which show their inner error
/// but do not give it as their source; the connector wraps one in another).
fn rustls_error_in<'a>(mut err: &'a (dyn std::error::Error + 'static)) -> Option<&'a rustls::Error> {
    loop {
        if let Some(tls) = err.downcast_ref::<rustls::Error>() {
            return Some(tls);
        }
        err = err.downcast_ref::<std::io::Error>()?.get_ref()?;
    }
}

/// What a failed connection came to, in a few words: the operating system's reason for
/// the usual cases, else the innermost cause of the chain.
fn connect_failure(err: &(dyn std::error::Error + 'static)) -> String {
    let mut innermost = err.to_string();
    let mut dns = false;
    let mut source = Some(err);
    while let Some(cause) = source {
        let text = cause.to_string();
        dns |= text.starts_with("dns error");
        if let Some(io) = cause.downcast_ref::<std::io::Error>() {
            use std::io::ErrorKind;
            let known = match io.kind() {
                ErrorKind::ConnectionRefused => Some("connection refused"),
                ErrorKind::TimedOut => Some("connection timed out"),
                ErrorKind::ConnectionReset => Some("connection reset"),
                ErrorKind::ConnectionAborted => Some("connection aborted"),
                ErrorKind::HostUnreachable => Some("host unreachable"),
                ErrorKind::NetworkUnreachable => Some("network unreachable"),
                ErrorKind::AddrNotAvailable => Some("address not available"),
                _ => None,
            };
            if let Some(known) = known {
                return known.to_string();
            }
        }
        innermost = text;
        source = cause.source();
    }
    if dns {
        return format!("cannot resolve the host name ({innermost})");
    }
    // "… (os error 111)" adds nothing a person can use.
    match innermost.rfind(" (os error ") {
        Some(cut) if innermost.ends_with(')') => innermost[..cut].to_string(),
        _ => innermost,
    }
}

/// An error with its causes, on one line (reqwest hides the useful part in `source()`).
pub(crate) fn error_chain(err: &dyn std::error::Error) -> String {
    let mut text = err.to_string();
    let mut source = err.source();
    while let Some(cause) = source {
        let cause_text = cause.to_string();
        if !text.contains(&cause_text) {
            text.push_str(": ");
            text.push_str(&cause_text);
        }
        source = cause.source();
    }
    text
}
