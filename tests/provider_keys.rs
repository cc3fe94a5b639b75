//! Which key goes to which host, and what a newcomer's configuration mistakes say: the
//! `miniagent` binary against the scripted server, which stands in for a provider's host
//! as the HTTP proxy every request goes through (so it records the host a request was
//! for, and for `http://` URLs the headers it carried).
#![allow(clippy::unwrap_used, clippy::expect_used)] // A test fails by panicking.

use crate::support;

use std::io::{Read, Write};
use std::process::{Command, Output};
use std::time::{Duration, Instant};

use pretty_assertions::assert_eq;
use support::harness::TEST_KEY;
use support::*;

const ANTHROPIC_KEY: &str = "sk-ant-api03-AAAAtestkeyAAAA";
const OPENAI_KEY: &str = "sk-proj-OOOOtestkeyOOOO";

/// `miniagent` with no key of its own and no proxy from the machine, one attempt per
/// call (a refused tunnel is not worth waiting for).
fn bare(home: &TempDir) -> Command {
    let mut command = cli::miniagent(home);
    command.env_remove("MINIAGENT_API_KEY");
    for proxy in ["HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "NO_PROXY"] {
        command.env_remove(proxy).env_remove(proxy.to_ascii_lowercase());
    }
    let config = home.write("one-attempt.toml", "[retry]\nmax_retries = 0\n");
    std::fs::create_dir_all(home.join("workspace")).unwrap();
    command
        .arg("--config")
        .arg(config)
        .arg("--workspace")
        .arg(home.join("workspace"));
    command
}

/// [`bare`], with every request going through `server` as its proxy.
fn through(home: &TempDir, server: &ScriptedServer) -> Command {
    let mut command = bare(home);
    let proxy = format!("http://{}", server.addr());
    command.env("HTTP_PROXY", &proxy).env("HTTPS_PROXY", &proxy);
    command
}

fn run(command: &mut Command, args: &[&str]) -> Output {
    command.args(args).output().expect("miniagent runs")
}

/// What the server was asked for: method and target (a proxy's target names the host).
fn asked(server: &ScriptedServer) -> Vec<(String, String)> {
    server
        .requests()
        .into_iter()
        .map(|request| (request.method, request.path))
        .collect()
}

fn assert_no_key_shown(output: &Output) {
    let shown = format!("{}{}", cli::text(&output.stdout), cli::text(&output.stderr));
    for key in [ANTHROPIC_KEY, OPENAI_KEY, TEST_KEY] {
        assert!(!shown.contains(key), "{key} shown: {shown}");
    }
}

/// `exec hi` with `command` against `server` on this machine, in Anthropic's protocol.
fn exec_at_anthropic(command: &mut Command, server: &ScriptedServer) -> Output {
    run(
        command,
        &["--base-url", &server.anthropic_base_url(), "exec", "hi"],
    )
}

/// `exec hi` with `command` against `server` on this machine, in OpenAI's protocol.
fn exec_at_openai(command: &mut Command, server: &ScriptedServer) -> Output {
    run(
        command,
        &[
            "--provider",
            "openai",
            "--base-url",
            &server.openai_base_url(),
            "exec",
            "hi",
        ],
    )
}

/// `exec hi` with `keys` in the environment and `args` (configuration in `home`), through a
/// proxy that must be asked for nothing: it exits with 1 and shows no key. Its stderr.
fn refused_before_sending(home: &TempDir, keys: &[(&str, &str)], args: &[&str]) -> String {
    let server = ScriptedServer::start_blocking(vec![]);
    let mut command = through(home, &server);
    command.envs(keys.iter().copied());
    let output = run(command.args(args), &["exec", "hi"]);
    let stderr = cli::text(&output.stderr);
    assert_eq!(output.status.code(), Some(1), "{args:?}: {stderr}");
    assert_eq!(asked(&server), vec![], "{args:?}");
    assert_no_key_shown(&output);
    stderr
}

/// `--provider openai` goes to OpenAI's host with OpenAI's default model; before, it kept
/// Anthropic's URL and model and sent the OpenAI key there.
#[test]
fn a_provider_brings_its_own_host_and_model() {
    let home = TempDir::new();
    let server = ScriptedServer::start_blocking(vec![]);
    let output = run(
        through(&home, &server)
            .env("OPENAI_API_KEY", OPENAI_KEY)
            .env("ANTHROPIC_API_KEY", ANTHROPIC_KEY),
        &["exec", "--provider", "openai", "hi"],
    );
    assert_eq!(output.status.code(), Some(1), "{}", cli::text(&output.stderr));
    assert_eq!(
        asked(&server),
        vec![("CONNECT".to_string(), "api.openai.com:443".to_string())]
    );
    assert_no_key_shown(&output);

    // The model follows the provider too (a server of one's own, at its address).
    let server = ScriptedServer::start_blocking(vec![Reply::text("hello")]);
    let output = exec_at_openai(bare(&home).env("MINIAGENT_API_KEY", TEST_KEY), &server);
    assert_eq!(output.status.code(), Some(0), "{}", cli::text(&output.stderr));
    assert_eq!(server.requests()[0].body["model"], "gpt-4.1");
}

/// The keys in the environment, the arguments, and the line the run is refused with.
type RefusedCase = (
    &'static [(&'static str, &'static str)],
    Vec<&'static str>,
    &'static str,
);

/// A key from a provider's own variable, or shaped like a provider's key, never goes to
/// another provider's host: the run is refused with one line and nothing is sent.
#[test]
fn a_key_never_goes_to_another_providers_host() {
    // The provider changed on the command line, the URL still Anthropic's from the file.
    let anthropic_file = "[model]\nprovider = \"anthropic\"\nbase_url = \"http://api.anthropic.com\"\n";
    let cases: [RefusedCase; 4] = [
        (
            &[("OPENAI_API_KEY", OPENAI_KEY)],
            vec!["--provider", "openai"],
            "miniagent: the key in OPENAI_API_KEY is OpenAI's and goes only to api.openai.com, not to api.anthropic.com (model.base_url, from {file}): set model.base_url to https://api.openai.com/v1 (--base-url), or give api.anthropic.com its own key in ANTHROPIC_API_KEY",
        ),
        (
            &[("MINIAGENT_API_KEY", ANTHROPIC_KEY)],
            vec!["--provider", "openai", "--base-url", "http://api.openai.com/v1"],
            "miniagent: the key in MINIAGENT_API_KEY is Anthropic's (it starts with sk-ant-) and goes only to api.anthropic.com, not to api.openai.com (model.base_url, from --base-url): set model.base_url to https://api.anthropic.com (--base-url), or put OpenAI's key in MINIAGENT_API_KEY",
        ),
        (
            &[("ANTHROPIC_API_KEY", ANTHROPIC_KEY)],
            vec![
                "--provider",
                "openai",
                "--base-url",
                "http://api.openai.com/v1",
                "--api-key-env",
                "ANTHROPIC_API_KEY",
            ],
            "miniagent: the key in ANTHROPIC_API_KEY is Anthropic's and goes only to api.anthropic.com, not to api.openai.com (model.base_url, from --base-url): set model.base_url to https://api.anthropic.com (--base-url), or name the variable that holds OpenAI's key with --api-key-env",
        ),
        // A provider's variable is not sent to a server of someone else's unasked.
        (
            &[("ANTHROPIC_API_KEY", ANTHROPIC_KEY)],
            vec!["--base-url", "http://gateway.example"],
            "miniagent: no API key for gateway.example: ANTHROPIC_API_KEY goes only to api.anthropic.com; set MINIAGENT_API_KEY, or name the variable with --api-key-env to send it there",
        ),
    ];
    for (index, (keys, args, expected)) in cases.into_iter().enumerate() {
        let home = TempDir::new();
        if index == 0 {
            home.write("config.toml", anthropic_file);
        }
        let stderr = refused_before_sending(&home, keys, &args);
        let file = home.join("config.toml").display().to_string();
        assert_eq!(
            stderr,
            format!("{}\n", expected.replace("{file}", &file)),
            "{args:?}"
        );
    }

    // Named on purpose, a provider's key goes to a gateway that is no provider's.
    let home = TempDir::new();
    let server = ScriptedServer::start_blocking(vec![]);
    run(
        through(&home, &server).env("ANTHROPIC_API_KEY", ANTHROPIC_KEY),
        &[
            "--base-url",
            "http://gateway.example",
            "--api-key-env",
            "ANTHROPIC_API_KEY",
            "exec",
            "hi",
        ],
    );
    let requests = server.requests();
    assert_eq!(requests.len(), 1);
    assert_eq!(requests[0].path, "http://gateway.example/v1/messages");
    assert_eq!(requests[0].header("x-api-key"), Some(ANTHROPIC_KEY));

    // A server on this machine gets no provider's key it was not given.
    let server = ScriptedServer::start_blocking(vec![Reply::text("local")]);
    let output = exec_at_anthropic(
        bare(&home)
            .env("ANTHROPIC_API_KEY", ANTHROPIC_KEY)
            .env("OPENAI_API_KEY", OPENAI_KEY),
        &server,
    );
    assert_eq!(output.status.code(), Some(0), "{}", cli::text(&output.stderr));
    let request = &server.requests()[0];
    assert_eq!(
        (request.header("x-api-key"), request.header("authorization")),
        (None, None)
    );
    // Not silently: the person is told which key was kept back and how to send it.
    let stderr = cli::text(&output.stderr);
    assert!(
        stderr.contains(
            "no API key is sent to 127.0.0.1: ANTHROPIC_API_KEY goes only to api.anthropic.com; if this server needs it, start with --api-key-env ANTHROPIC_API_KEY"
        ),
        "{stderr}"
    );
    assert_no_key_shown(&output);
}

/// A refused key says which variable it came from, and that `MINIAGENT_API_KEY` was used
/// before the provider's own variable.
#[test]
fn a_refused_key_names_its_variable() {
    let home = TempDir::new();
    let server = ScriptedServer::start_blocking(vec![Reply::status(401, "invalid x-api-key")]);
    let output = exec_at_anthropic(
        bare(&home)
            .env("MINIAGENT_API_KEY", TEST_KEY)
            .env("ANTHROPIC_API_KEY", ANTHROPIC_KEY),
        &server,
    );
    let stderr = cli::text(&output.stderr);
    assert_eq!(output.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains(
            "HTTP 401 from the provider: invalid x-api-key (the key in MINIAGENT_API_KEY was refused; it is used before ANTHROPIC_API_KEY, which is set too)"
        ),
        "{stderr}"
    );
    assert_eq!(server.request_count(), 1);
    assert_no_key_shown(&output);

    // A server on this machine that wants a key it was not given says how to give one.
    let server = ScriptedServer::start_blocking(vec![Reply::status(401, "key required")]);
    let output = exec_at_anthropic(&mut bare(&home), &server);
    let stderr = cli::text(&output.stderr);
    assert!(
        stderr.contains(
            "HTTP 401 from the provider: key required (no key was sent: set MINIAGENT_API_KEY, or name the variable that holds it with --api-key-env)"
        ),
        "{stderr}"
    );
    assert_eq!(server.requests()[0].header("x-api-key"), None);

    // An OpenAI-style server on this machine, OPENAI_API_KEY set but not sent: the 401
    // names it and says how to send it.
    let server = ScriptedServer::start_blocking(vec![Reply::status(401, "key required")]);
    let output = exec_at_openai(bare(&home).env("OPENAI_API_KEY", OPENAI_KEY), &server);
    let stderr = cli::text(&output.stderr);
    assert!(
        stderr.contains(
            "HTTP 401 from the provider: key required (no key was sent: OPENAI_API_KEY is set but goes only to its company's host; to send it here, start with --api-key-env OPENAI_API_KEY)"
        ),
        "{stderr}"
    );
    assert_eq!(server.requests()[0].header("authorization"), None);
    assert_no_key_shown(&output);
}

/// A Codex-style top-level `model = "…"` says what to write, naming the file, with or
/// without `--model`.
#[test]
fn a_top_level_model_says_to_write_a_model_section() {
    let home = TempDir::new();
    let file = home.write("config.toml", "model = \"gpt-5\"\n");
    for extra in [&[][..], &["--model", "gpt-4.1"][..]] {
        let output = run(bare(&home).args(extra), &["exec", "hi"]);
        assert_eq!(output.status.code(), Some(1));
        assert_eq!(
            cli::text(&output.stderr),
            format!(
                "miniagent: {}: key `model` is a section, not a value: write [model] and under it model = \"gpt-5\"\n",
                file.display()
            ),
            "{extra:?}"
        );
    }
}

/// A key pasted where `--api-key-env` wants a variable's name is never printed back.
#[test]
fn a_key_given_as_the_variable_name_is_not_printed() {
    let home = TempDir::new();
    for pasted in [ANTHROPIC_KEY, "gsk_1234567890abcdefGHIJKLMNOPqrstuv"] {
        let output = run(&mut bare(&home), &["--api-key-env", pasted, "exec", "hi"]);
        assert_eq!(output.status.code(), Some(1));
        assert_eq!(
            cli::text(&output.stderr),
            "miniagent: --api-key-env: key `model.api_key_env`: takes the name of the environment variable that holds the key (such as MY_API_KEY), and this looks like a key itself; put the key in a variable and name that\n"
        );
    }
}

/// A base URL without its scheme gets one message, whatever the host looks like.
#[test]
fn a_base_url_without_a_scheme_says_what_to_write() {
    let home = TempDir::new();
    for (given, suggested) in [
        ("127.0.0.1:8080", "http://127.0.0.1:8080"),
        ("localhost:8080", "http://localhost:8080"),
        ("api.example.com/v1", "https://api.example.com/v1"),
    ] {
        let output = run(
            bare(&home).env("MINIAGENT_API_KEY", TEST_KEY),
            &["--base-url", given, "exec", "hi"],
        );
        assert_eq!(output.status.code(), Some(1));
        assert_eq!(
            cli::text(&output.stderr),
            format!(
                "miniagent: --base-url: key `model.base_url`: `{given}` must start with http:// or https://, as in {suggested}\n"
            )
        );
    }
}

/// An `https://` URL pointed at a plain-HTTP server fails once, at once, and says why.
#[test]
fn https_to_a_plain_http_server_is_not_retried() {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let connections = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let counted = connections.clone();
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { continue };
            counted.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            // What a plain HTTP server answers to a TLS hello.
            let mut hello = [0u8; 512];
            let _ = stream.read(&mut hello);
            let _ = stream
                .write_all(b"HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\nConnection: close\r\n\r\n");
        }
    });
    let home = TempDir::new();
    let started = Instant::now();
    let output = run(
        cli::miniagent(&home).arg("--workspace").arg(home.path()),
        &["--base-url", &format!("https://127.0.0.1:{port}"), "exec", "hi"],
    );
    let stderr = cli::text(&output.stderr);
    assert_eq!(output.status.code(), Some(1), "{stderr}");
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "{:?}",
        started.elapsed()
    );
    assert_eq!(
        connections.load(std::sync::atomic::Ordering::SeqCst),
        1,
        "{stderr}"
    );
    assert!(!stderr.contains("retrying"), "{stderr}");
    assert!(
        stderr.contains(&format!(
            "the TLS handshake with 127.0.0.1:{port} failed: the server answered in plain text; does the server speak https? try http://"
        )),
        "{stderr}"
    );
}

/// A provider's key goes to its own host only over https: `http://api.anthropic.com`
/// would carry it unencrypted past anyone on the path. Refused with one line, nothing
/// sent (the proxy would have seen the key in the clear).
#[test]
fn a_providers_key_never_goes_to_its_host_over_plain_http() {
    let cases: [(&str, &str, Vec<&str>, &str); 2] = [
        (
            "ANTHROPIC_API_KEY",
            ANTHROPIC_KEY,
            vec!["--base-url", "http://api.anthropic.com"],
            "miniagent: model.base_url (from --base-url) names Anthropic's host over plain http://, where the key would cross the network unencrypted: write https://api.anthropic.com (https://)\n",
        ),
        (
            "MINIAGENT_API_KEY",
            OPENAI_KEY,
            vec!["--provider", "openai", "--base-url", "HTTP://API.OPENAI.COM./v1"],
            "miniagent: model.base_url (from --base-url) names OpenAI's host over plain http://, where the key would cross the network unencrypted: write https://api.openai.com/v1 (https://)\n",
        ),
    ];
    for (variable, key, args, expected) in cases {
        let stderr = refused_before_sending(&TempDir::new(), &[(variable, key)], &args);
        assert_eq!(stderr, expected, "{args:?}");
    }
}
