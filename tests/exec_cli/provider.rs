//! `exec` and its provider: retries of an unreachable one, the OpenAI provider from the
//! environment, a base URL carrying a credential, and a redirect that must not take the key.

use pretty_assertions::assert_eq;

use super::*;

/// An unreachable provider: one line per retry saying what failed, and the error once.
#[test]
fn an_unreachable_provider_prints_one_short_line_per_retry() {
    let port = support::closed_port();
    let workspace = TempDir::new();
    let config_dir = TempDir::new();
    config_dir.write(
        "config.toml",
        "[retry]\ninitial_delay_ms = 10\nmax_delay_ms = 20\n",
    );
    let output = miniagent(Some(&workspace), &config_dir)
        .args(["--base-url", &format!("http://127.0.0.1:{port}"), "exec", "hi"])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(1));
    let stderr = text(&output.stderr);
    let mut lines: Vec<&str> = stderr.lines().skip(1).collect();
    // The test's folders are in the temp folder, where sandboxed commands may write: the
    // run says so first.
    if stderr
        .lines()
        .next()
        .is_some_and(|first| first.ends_with("sandbox ✓"))
    {
        let note = lines.remove(0);
        assert!(
            note.starts_with("note: sandboxed commands may write anywhere inside "),
            "{stderr}"
        );
        assert!(
            note.contains(&config_dir.path().display().to_string()),
            "{stderr}"
        );
    }
    let what = format!("connection refused at 127.0.0.1:{port}");
    assert_eq!(lines.len(), 5, "{stderr}");
    for (retry, line) in lines[..3].iter().enumerate() {
        assert!(
            line.starts_with(&format!("retrying ({}/3) in ", retry + 1)),
            "{stderr}"
        );
        assert!(line.ends_with(&format!(": {what}")), "{stderr}");
    }
    assert_eq!(lines[3], format!("error: the model call failed: {what}"));
    assert!(lines[4].starts_with("session "), "{stderr}");
    // The whole chain is in the log.
    let log = std::fs::read_to_string(config_dir.join("miniagent.log")).unwrap();
    assert!(log.contains("Connection refused (os error 111)"), "{log}");
}

#[test]
fn openai_provider_from_the_environment() {
    let server = ScriptedServer::start_blocking(vec![Reply::text("from openai")]);
    let workspace = TempDir::new();
    let config_dir = TempDir::new();
    let output = miniagent(Some(&workspace), &config_dir)
        .env("MINIAGENT_PROVIDER", "openai")
        .env("MINIAGENT_BASE_URL", server.openai_base_url())
        .env("MINIAGENT_MODEL", "env-model")
        .args(["exec", "hi"])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(0), "{}", text(&output.stderr));
    assert_eq!(text(&output.stdout), "from openai\n");
    let request = &server.requests()[0];
    assert_eq!(request.path, "/v1/chat/completions");
    assert_eq!(request.body["model"], "env-model");
}

/// A base URL may carry a credential (`user:password@`, `?key=`) and a query a proxy
/// needs: requests keep the query after the API's path, and neither the screen nor the
/// log nor the session log shows the credential.
#[test]
fn a_base_url_with_a_credential_and_a_query_works_and_is_never_shown() {
    for provider in ["anthropic", "openai"] {
        let server = ScriptedServer::start_blocking(vec![Reply::text("hello")]);
        let base = match provider {
            "anthropic" => server.anthropic_base_url(),
            _ => server.openai_base_url(),
        };
        let base = base.replace("http://", "http://someone:hunter2pw@") + "/?key=SECRETQ9#fragment";
        let workspace = TempDir::new();
        let config_dir = TempDir::new();
        let output = miniagent(Some(&workspace), &config_dir)
            .args([
                "--provider",
                provider,
                "--base-url",
                &base,
                "--model",
                "scripted-model",
            ])
            .args(["exec", "--json", "hi"])
            .output()
            .unwrap();
        let stdout = text(&output.stdout);
        assert_eq!(
            output.status.code(),
            Some(0),
            "{provider}: {}",
            text(&output.stderr)
        );
        let request = server.last_request().unwrap();
        let path = match provider {
            "anthropic" => "/v1/messages",
            _ => "/v1/chat/completions",
        };
        assert_eq!(request.path, format!("{path}?key=SECRETQ9"), "{provider}");
        // `--json` names the endpoint, without the credential.
        assert!(stdout.contains(r#""endpoint":"http://127.0.0.1:"#), "{stdout}");
        let mut shown = stdout + &text(&output.stderr);
        for entry in walk(config_dir.path()) {
            shown.push_str(&std::fs::read_to_string(entry).unwrap_or_default());
        }
        for secret in ["hunter2pw", "SECRETQ9"] {
            assert!(!shown.contains(secret), "{provider}: {secret} shown");
        }
    }
    // A provider that quotes the URL in its error: the credential is redacted there too,
    // on screen and in the session log.
    let server = ScriptedServer::start_blocking(vec![Reply::status(
        400,
        "bad request to /v1/messages?key=SECRETQ9 from someone:hunter2pw, auth=Basic c29tZW9uZTpodW50ZXIycHc=",
    )]);
    let base = server
        .anthropic_base_url()
        .replace("http://", "http://someone:hunter2pw@")
        + "?key=SECRETQ9";
    let workspace = TempDir::new();
    let config_dir = TempDir::new();
    let output = miniagent(Some(&workspace), &config_dir)
        .args(["--base-url", &base, "exec", "hi"])
        .output()
        .unwrap();
    let mut shown = text(&output.stdout) + &text(&output.stderr);
    assert!(
        shown.contains("HTTP 400 from the provider: bad request to"),
        "{shown}"
    );
    for entry in walk(config_dir.path()) {
        shown.push_str(&std::fs::read_to_string(entry).unwrap_or_default());
    }
    // The Basic value is `someone:hunter2pw` as the request's Authorization header sent it.
    for secret in ["hunter2pw", "SECRETQ9", "c29tZW9uZTpodW50ZXIycHc"] {
        assert!(!shown.contains(secret), "{secret} shown: {shown}");
    }
    // A provider that cannot be reached: the log's connection error names the URL without it.
    let port = support::closed_port();
    let workspace = TempDir::new();
    let config_dir = TempDir::new();
    config_dir.write("config.toml", "[retry]\nmax_retries = 0\n");
    let output = miniagent(Some(&workspace), &config_dir)
        .args([
            "--base-url",
            &format!("http://someone:hunter2pw@127.0.0.1:{port}/p?key=SECRETQ9"),
        ])
        .args(["exec", "hi"])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(1));
    let log = std::fs::read_to_string(config_dir.join("miniagent.log")).unwrap();
    assert!(
        log.contains(&format!(
            "cannot connect to http://127.0.0.1:{port}/p/v1/messages"
        )),
        "{log}"
    );
    let shown = log + &text(&output.stderr);
    for secret in ["hunter2pw", "SECRETQ9"] {
        assert!(!shown.contains(secret), "{secret} shown: {shown}");
    }
}

/// Every file under `dir`.
fn walk(dir: &std::path::Path) -> Vec<std::path::PathBuf> {
    let mut files = Vec::new();
    let mut pending = vec![dir.to_path_buf()];
    while let Some(dir) = pending.pop() {
        for entry in std::fs::read_dir(&dir).into_iter().flatten().flatten() {
            let path = entry.path();
            if path.is_dir() {
                pending.push(path);
            } else {
                files.push(path);
            }
        }
    }
    files
}

/// A provider that answers with a redirect is not followed: Anthropic's key travels in
/// a header reqwest would forward to any host, and the prompt with it. The run says
/// where the redirect pointed and what to do.
#[test]
fn a_redirect_is_not_followed_with_the_key() {
    for provider in ["anthropic", "openai"] {
        let elsewhere = ScriptedServer::start_blocking(vec![Reply::text("stolen")]);
        let path = match provider {
            "anthropic" => "/v1/messages",
            _ => "/v1/chat/completions",
        };
        let server = ScriptedServer::start_blocking(vec![Reply::Redirect {
            status: 307,
            location: format!("http://localhost:{}{path}", elsewhere.addr().port()),
        }]);
        let base = match provider {
            "anthropic" => server.anthropic_base_url(),
            _ => server.openai_base_url(),
        };
        let workspace = TempDir::new();
        let config_dir = TempDir::new();
        let output = miniagent(Some(&workspace), &config_dir)
            .args(["--provider", provider, "--base-url", &base, "exec", "hi"])
            .output()
            .unwrap();
        let stderr = text(&output.stderr);
        assert_eq!(output.status.code(), Some(1), "{provider}: {stderr}");
        assert_eq!(
            elsewhere.requests().len(),
            0,
            "{provider}: the redirect was followed"
        );
        assert_eq!(server.requests().len(), 1, "{provider}: not retried");
        assert!(
            stderr.contains("HTTP 307 from the provider: a redirect to localhost, not followed"),
            "{stderr}"
        );
    }
}
