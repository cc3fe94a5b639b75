//! The guards of `miniagent serve`: the token on every endpoint, foreign origins and hosts,
//! malformed or oversized requests, the session limit, where it listens, and a token from
//! the environment.

use pretty_assertions::assert_eq;

use super::*;

/// Every endpoint but /health needs the token in the Authorization header: none or a
/// wrong one is 401, one in the query string 400 (never echoed), whatever the endpoint.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_token_is_enforced_on_every_endpoint() {
    let server = ScriptedServer::start(vec![]).await;
    let (home, root) = (TempDir::new(), TempDir::new());
    let served = Served::start(&home, &root, &server, &[]);
    let id = served.create(root.path()).await;
    let endpoints: Vec<(reqwest::Method, String)> = vec![
        (reqwest::Method::GET, "/ready".into()),
        (reqwest::Method::POST, "/api/v1/sessions".into()),
        (reqwest::Method::GET, "/api/v1/sessions".into()),
        (reqwest::Method::POST, format!("/api/v1/sessions/{id}/resume")),
        (reqwest::Method::POST, "/api/v1/prompt".into()),
        (reqwest::Method::GET, format!("/api/v1/sessions/{id}/events")),
        (reqwest::Method::POST, format!("/api/v1/sessions/{id}/approvals")),
        (reqwest::Method::POST, format!("/api/v1/sessions/{id}/interrupt")),
        (reqwest::Method::DELETE, format!("/api/v1/sessions/{id}")),
        (reqwest::Method::GET, "/api/v1/no-such-endpoint".into()),
    ];
    let body = json!({"session_id": id, "message": "hi", "workspace": root.path(), "call_id": "x", "decision": "approve"});
    let before = served.settled_list().await;
    for (method, path) in &endpoints {
        let ask = |query: &str, token: Option<&str>| {
            let mut request = served
                .client
                .request(method.clone(), served.url(&format!("{path}{query}")))
                .json(&body);
            if let Some(token) = token {
                request = request.bearer_auth(token);
            }
            request.send()
        };
        let cases = [
            ("", None, 401, "no_token"),
            (
                "",
                Some("wrong-token-of-the-right-size-000000000000000"),
                401,
                "bad_token",
            ),
            (
                &format!("?token={}", served.token) as &str,
                None,
                400,
                "token_in_query",
            ),
            (
                &format!("?since=0&x={}", served.token) as &str,
                None,
                400,
                "token_in_query",
            ),
            (
                &format!("?access_token={}", served.token) as &str,
                Some(served.token.as_str()),
                400,
                "token_in_query",
            ),
        ];
        for (query, token, status, code) in cases {
            let response = ask(query, token).await.unwrap();
            assert_eq!(response.status(), status, "{method} {path}{query}");
            let text = response.text().await.unwrap();
            assert!(!text.contains(&served.token), "{text}");
            let error: Value = serde_json::from_str(&text).unwrap();
            assert_eq!(error["error"]["code"], code, "{method} {path}");
        }
    }
    // /health needs none, and still refuses one in the URL.
    let health = served.client.get(served.url("/health")).send().await.unwrap();
    assert_eq!(
        (health.status().as_u16(), health.json::<Value>().await.unwrap()),
        (200, json!({"status": "ok"}))
    );
    let leaked = served
        .client
        .get(served.url(&format!("/health?token={}", served.token)))
        .send()
        .await
        .unwrap();
    assert_eq!(leaked.status(), 400);
    // Nothing changed, and the log holds no token.
    assert_eq!(served.list().await, before);
    let log = std::fs::read_to_string(home.join("miniagent.log")).unwrap();
    assert!(log.contains("serve: GET /ready 401"), "{log}");
    assert!(!log.contains(&served.token));
}

/// A browser's Origin and a Host that is not the server's (DNS rebinding) are refused
/// before anything else, token or not; configured ones are accepted.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn foreign_origins_and_hosts_are_refused() {
    let server = ScriptedServer::start(vec![]).await;
    let (home, root) = (TempDir::new(), TempDir::new());
    std::fs::write(
        home.join("config.toml"),
        "[serve]\nallowed_origins = [\"http://tool.example\"]\nallowed_hosts = [\"agent.example\"]\n",
    )
    .unwrap();
    let served = Served::start(&home, &root, &server, &[]);
    let workspace = json!({"workspace": root.path()});
    let cases: [(&str, &str, u16, Option<&str>); 7] = [
        ("origin", "http://evil.example", 403, Some("origin_not_allowed")),
        ("origin", "null", 403, Some("origin_not_allowed")),
        ("origin", "http://tool.example", 201, None),
        ("host", "evil.example", 403, Some("host_not_allowed")),
        (
            "host",
            &format!("evil.example:{}", served.port),
            403,
            Some("host_not_allowed"),
        ),
        ("host", &format!("localhost:{}", served.port), 201, None),
        ("host", &format!("agent.example:{}", served.port), 201, None),
    ];
    for (header, value, status, code) in cases {
        let response = served
            .post("/api/v1/sessions", workspace.clone())
            .header(header, value)
            .send()
            .await
            .unwrap();
        assert_eq!(response.status(), status, "{header}: {value}");
        let body: Value = response.json().await.unwrap();
        if let Some(code) = code {
            assert_eq!(body["error"]["code"], code);
        }
    }
    assert_eq!(served.list().await["live"].as_array().unwrap().len(), 3);
}

/// Bad input gets a 4xx with a JSON error and changes nothing.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bad_requests_get_json_errors_and_change_nothing() {
    let server = ScriptedServer::start(vec![]).await;
    let (home, root, outside) = (TempDir::new(), TempDir::new(), TempDir::new());
    let served = Served::start(&home, &root, &server, &[]);
    let id = served.create(root.path()).await;
    let before = served.settled_list().await;
    let raw = |path: &str, body: Vec<u8>| {
        served
            .client
            .post(served.url(path))
            .bearer_auth(&served.token)
            .header("content-type", "application/json")
            .body(body)
            .send()
    };
    let error = |status: u16, code: &str| (status, code.to_string());
    let code_of = |response: reqwest::Response| async move {
        let status = response.status().as_u16();
        let body: Value = response.json().await.unwrap();
        (
            status,
            body["error"]["code"].as_str().unwrap_or("no code").to_string(),
        )
    };
    let huge = format!(
        "{{\"session_id\":\"{id}\",\"message\":\"{}\"}}",
        "x".repeat(2 * 1024 * 1024)
    );
    assert_eq!(
        code_of(raw("/api/v1/prompt", huge.into_bytes()).await.unwrap()).await,
        error(413, "body_too_large")
    );
    assert_eq!(
        code_of(raw("/api/v1/prompt", b"{\"session_id\":".to_vec()).await.unwrap()).await,
        error(400, "malformed_json")
    );
    assert_eq!(
        code_of(raw("/api/v1/prompt", b"{\"session\":1}".to_vec()).await.unwrap()).await,
        error(400, "malformed_json")
    );
    assert_eq!(
        code_of(raw("/api/v1/sessions", b"[]".to_vec()).await.unwrap()).await,
        error(400, "malformed_json")
    );
    let sent = served
        .post("/api/v1/sessions", json!({"workspace": outside.path()}))
        .send()
        .await
        .unwrap();
    assert_eq!(code_of(sent).await, error(403, "not_admitted"));
    let sent = served
        .post(
            "/api/v1/sessions",
            json!({"workspace": root.path(), "approval": "full-auto"}),
        )
        .send()
        .await
        .unwrap();
    assert_eq!(code_of(sent).await, error(403, "not_admitted"));
    let sent = served
        .post("/api/v1/prompt", json!({"session_id": "nope", "message": "hi"}))
        .send()
        .await
        .unwrap();
    assert_eq!(code_of(sent).await, error(404, "unknown_session"));
    for path in ["events", "approvals", "interrupt"] {
        let request = if path == "events" {
            served.get(&format!("/api/v1/sessions/nope/{path}"))
        } else {
            served.post(
                &format!("/api/v1/sessions/nope/{path}"),
                json!({"call_id": "c", "decision": "approve"}),
            )
        };
        assert_eq!(
            code_of(request.send().await.unwrap()).await,
            error(404, "unknown_session"),
            "{path}"
        );
    }
    let sent = served
        .client
        .delete(served.url("/api/v1/sessions/nope"))
        .bearer_auth(&served.token)
        .send()
        .await
        .unwrap();
    assert_eq!(code_of(sent).await, error(404, "unknown_session"));
    let sent = served
        .post("/api/v1/sessions/nope/resume", json!({}))
        .send()
        .await
        .unwrap();
    assert_eq!(code_of(sent).await, error(404, "unknown_session"));
    let sent = served
        .get(&format!("/api/v1/sessions/{id}/events?since=x"))
        .send()
        .await
        .unwrap();
    assert_eq!(code_of(sent).await, error(400, "bad_query"));
    assert_eq!(served.list().await, before);
    assert_eq!(server.requests().len(), 0, "nothing reached the model");

    // A prompt while a turn runs is refused (not queued) and the turn goes on.
    server.push(Reply::tool("call_1", "bash", r#"{"command":"echo x"}"#));
    server.push(Reply::text("done"));
    let mut stream = served.prompt(&id, "first").await;
    stream.until("approval_requested").await;
    let sent = served
        .post("/api/v1/prompt", json!({"session_id": id, "message": "second"}))
        .send()
        .await
        .unwrap();
    assert_eq!(sent.status(), 409);
    let body: Value = sent.json().await.unwrap();
    assert_eq!(body["error"]["code"], "turn_running");
    assert!(
        body["error"]["message"].as_str().unwrap().contains("not queued"),
        "{body}"
    );
    served
        .post(
            &format!("/api/v1/sessions/{id}/approvals"),
            json!({"call_id": "call_1", "decision": "deny", "reason": "not now"}),
        )
        .send()
        .await
        .unwrap();
    assert_eq!(
        stream.rest().await.last().map(String::as_str),
        Some("turn_complete")
    );
    let requests = server.requests();
    assert_eq!(requests.len(), 2, "the refused prompt never reached the model");
    assert!(
        tool_result(&server, 1).contains("not now"),
        "{}",
        tool_result(&server, 1)
    );
}

/// No more sessions than `serve.max_sessions` are open at once; closing one makes room.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sessions_beyond_the_limit_are_refused() {
    let server = ScriptedServer::start(vec![]).await;
    let (home, root) = (TempDir::new(), TempDir::new());
    std::fs::write(home.join("config.toml"), "[serve]\nmax_sessions = 2\n").unwrap();
    let served = Served::start(&home, &root, &server, &[]);
    let first = served.create(root.path()).await;
    served.create(root.path()).await;
    let ready = served.get("/ready").send().await.unwrap();
    assert_eq!(ready.status(), 503);
    let refused = served
        .post("/api/v1/sessions", json!({"workspace": root.path()}))
        .send()
        .await
        .unwrap();
    assert_eq!(refused.status(), 503);
    let body: Value = refused.json().await.unwrap();
    assert_eq!(body["error"]["code"], "too_many_sessions");
    assert_eq!(served.list().await["live"].as_array().unwrap().len(), 2);
    let closed = served
        .client
        .delete(served.url(&format!("/api/v1/sessions/{first}")))
        .bearer_auth(&served.token)
        .send()
        .await
        .unwrap();
    assert_eq!(closed.status(), 200);
    let ready = served.get("/ready").send().await.unwrap();
    assert_eq!(ready.status(), 200);
    served.create(root.path()).await;
}

/// An address beyond this machine is taken only from `--bind`: one in the configuration
/// is refused at start, as is a root that does not exist.
#[test]
fn serve_listens_beyond_this_machine_only_when_told() {
    let server = ScriptedServer::start_blocking(vec![]);
    let (home, root) = (TempDir::new(), TempDir::new());
    std::fs::write(home.join("config.toml"), "[serve]\nbind = \"0.0.0.0:0\"\n").unwrap();
    let output = against(&home, &root, &server).arg("serve").output().unwrap();
    assert_eq!(
        (
            output.status.code(),
            String::from_utf8_lossy(&output.stderr).trim()
        ),
        (
            Some(1),
            "miniagent: serve.bind 0.0.0.0:0 is not a loopback address: to listen beyond this machine, say so with --bind 0.0.0.0:0"
        )
    );
    assert!(output.stdout.is_empty());
    let missing = root.join("missing");
    let output = against(&home, &root, &server)
        .args(["serve", "--bind", "127.0.0.1:0", "--root"])
        .arg(&missing)
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(1));
    assert_eq!(
        String::from_utf8_lossy(&output.stderr).trim(),
        format!(
            "miniagent: --root {}: No such file or directory (os error 2)",
            missing.display()
        )
    );
}

/// A token from the environment is the one accepted, and is never printed.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_token_from_the_environment_is_used_and_never_printed() {
    let server = ScriptedServer::start(vec![]).await;
    let (home, root) = (TempDir::new(), TempDir::new());
    let token = "a-token-chosen-by-the-person-0123";
    let mut child = against(&home, &root, &server)
        .args(["serve", "--bind", "127.0.0.1:0"])
        .env("MINIAGENT_SERVE_TOKEN", token)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap());
    let mut first = String::new();
    lines.read_line(&mut first).unwrap();
    let base = first
        .trim()
        .strip_prefix("miniagent serve: listening on ")
        .unwrap()
        .to_string();
    let client = reqwest::Client::new();
    let ready = client
        .get(format!("{base}/ready"))
        .bearer_auth(token)
        .send()
        .await
        .unwrap();
    assert_eq!(ready.status(), 200);
    let pid = i32::try_from(child.id()).unwrap();
    // SAFETY: kill sends a signal to the child this test started.
    assert_eq!(unsafe { libc::kill(pid, libc::SIGTERM) }, 0);
    let mut rest = String::new();
    std::io::Read::read_to_string(&mut lines, &mut rest).unwrap();
    assert!(child.wait().unwrap().success());
    assert_eq!(rest, "", "nothing more on stdout");
    let log = std::fs::read_to_string(home.join("miniagent.log")).unwrap();
    assert!(!log.contains(token), "{log}");
}
