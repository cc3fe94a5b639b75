//! `miniagent serve` driven by a real HTTP client (reqwest, with eventsource-stream for
//! the SSE) against the scripted model server: sessions, prompts streamed as SSE,
//! approvals and interrupts over HTTP, reconnecting with `Last-Event-ID`, and the guards
//! (token, Origin, Host, body size, malformed JSON, unknown sessions, a second prompt).
//! Generous timeouts only: budgets are the benchmark's (`benches/serve.rs`).

use std::io::{BufRead, BufReader};
use std::process::{Child, Stdio};
use std::time::Duration;

use eventsource_stream::Eventsource;
use futures_util::StreamExt;
use pretty_assertions::assert_eq;
use serde_json::{Value, json};

use crate::support::cli::against;
use crate::support::{Reply, ScriptedServer, TempDir};

#[path = "serve/guards.rs"]
mod guards;

const WAIT: Duration = Duration::from_secs(10);

/// A running `miniagent serve`, stopped when dropped.
struct Served {
    child: Child,
    base: String,
    port: u16,
    token: String,
    client: reqwest::Client,
}

impl Served {
    /// `miniagent serve --bind 127.0.0.1:0 --root ROOT` with `home`'s folders, against
    /// `server`; the address and token are read from the two lines it prints.
    fn start(home: &TempDir, root: &TempDir, server: &ScriptedServer, extra: &[&str]) -> Served {
        let mut command = against(home, root, server);
        command
            .arg("serve")
            .args(["--bind", "127.0.0.1:0", "--root"])
            .arg(root.path())
            .args(extra)
            .stdout(Stdio::piped())
            .stderr(Stdio::null());
        let mut child = command.spawn().expect("miniagent serve starts");
        let mut lines = BufReader::new(child.stdout.take().expect("stdout"));
        let mut first = String::new();
        lines.read_line(&mut first).expect("the address line");
        let mut second = String::new();
        lines.read_line(&mut second).expect("the token line");
        let address = first
            .trim()
            .strip_prefix("miniagent serve: listening on ")
            .unwrap_or_else(|| panic!("unexpected first line {first:?}"))
            .to_string();
        let token = second
            .trim()
            .strip_prefix("token: ")
            .unwrap_or_else(|| panic!("unexpected second line {second:?}"))
            .to_string();
        assert_eq!(token.len(), 43, "a generated token is 43 characters");
        let port = address.rsplit(':').next().unwrap().parse().unwrap();
        Served {
            child,
            base: address,
            port,
            token,
            client: reqwest::Client::new(),
        }
    }

    fn url(&self, path: &str) -> String {
        format!("{}{path}", self.base)
    }

    fn get(&self, path: &str) -> reqwest::RequestBuilder {
        self.client.get(self.url(path)).bearer_auth(&self.token)
    }

    fn post(&self, path: &str, body: Value) -> reqwest::RequestBuilder {
        self.client
            .post(self.url(path))
            .bearer_auth(&self.token)
            .json(&body)
    }

    /// Creates a session in `workspace` (ask mode); its id.
    async fn create(&self, workspace: &std::path::Path) -> String {
        let response = self
            .post("/api/v1/sessions", json!({"workspace": workspace}))
            .send()
            .await
            .unwrap();
        assert_eq!(response.status(), 201);
        let body: Value = response.json().await.unwrap();
        assert_eq!(body["approval"], "ask");
        assert_eq!(body["model"], "scripted-model");
        body["session_id"].as_str().unwrap().to_string()
    }

    /// Sends a prompt; its SSE stream.
    async fn prompt(&self, session: &str, message: &str) -> Sse {
        let response = self
            .post(
                "/api/v1/prompt",
                json!({"session_id": session, "message": message}),
            )
            .send()
            .await
            .unwrap();
        assert_eq!(response.status(), 200, "{:?}", response.text().await);
        Sse::new(response)
    }

    async fn list(&self) -> Value {
        self.get("/api/v1/sessions")
            .send()
            .await
            .unwrap()
            .json()
            .await
            .unwrap()
    }

    /// The list once new sessions have told their start-up events (their last index
    /// stays put).
    async fn settled_list(&self) -> Value {
        let mut last = self.list().await;
        loop {
            tokio::time::sleep(Duration::from_millis(200)).await;
            let now = self.list().await;
            if now == last {
                return now;
            }
            last = now;
        }
    }
}

impl Served {
    /// Stops it as a person would (SIGTERM): it closes its sessions, their logs written.
    fn stop(mut self) {
        let pid = i32::try_from(self.child.id()).unwrap();
        // SAFETY: kill sends a signal to the child this test started.
        assert_eq!(unsafe { libc::kill(pid, libc::SIGTERM) }, 0);
        let status = self.child.wait().unwrap();
        assert!(status.success(), "{status}");
    }
}

impl Drop for Served {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// One event as it came over SSE: its id, type, and data parsed.
#[derive(Clone, Debug, PartialEq)]
struct Got {
    id: u64,
    kind: String,
    data: Value,
    /// The data line as sent.
    raw: String,
}

type EventStream = std::pin::Pin<Box<dyn futures_util::Stream<Item = Option<Got>> + Send>>;

/// An SSE response read event by event.
struct Sse {
    events: EventStream,
    got: Vec<Got>,
}

impl Sse {
    fn new(response: reqwest::Response) -> Sse {
        assert_eq!(
            response.headers()["content-type"].to_str().unwrap(),
            "text/event-stream"
        );
        let events = response.bytes_stream().eventsource().map(|event| {
            event.ok().map(|event| {
                let data: Value = serde_json::from_str(&event.data).expect("data is JSON");
                // The type is said twice: as the SSE event and in the JSON, as exec prints.
                assert_eq!(data["type"], event.event.as_str());
                Got {
                    id: event.id.parse().expect("the id is an index"),
                    kind: event.event,
                    data,
                    raw: event.data,
                }
            })
        });
        Sse {
            events: Box::pin(events),
            got: Vec::new(),
        }
    }

    /// The next event, or `None` when the stream ended.
    async fn next(&mut self) -> Option<Got> {
        let event = tokio::time::timeout(WAIT, self.events.next())
            .await
            .expect("an event within the wait")
            .flatten()?;
        self.got.push(event.clone());
        Some(event)
    }

    /// Reads until an event of type `kind`; that event.
    async fn until(&mut self, kind: &str) -> Got {
        loop {
            let event = self
                .next()
                .await
                .unwrap_or_else(|| panic!("ended before {kind}: {:?}", self.kinds()));
            if event.kind == kind {
                return event;
            }
        }
    }

    /// Reads to the end of the stream; every type received.
    async fn rest(&mut self) -> Vec<String> {
        while self.next().await.is_some() {}
        self.kinds()
    }

    fn kinds(&self) -> Vec<String> {
        self.got.iter().map(|event| event.kind.clone()).collect()
    }
}

fn kinds(names: &[&str]) -> Vec<String> {
    names.iter().map(|name| name.to_string()).collect()
}

/// The text of the tool result the model got in request `n`.
fn tool_result(server: &ScriptedServer, n: usize) -> String {
    let block = server.last_block(n);
    assert_eq!(block["type"], "tool_result", "{block}");
    match &block["content"] {
        Value::String(text) => text.clone(),
        Value::Array(parts) => parts.iter().filter_map(|part| part["text"].as_str()).collect(),
        other => panic!("unexpected tool result {other}"),
    }
}

/// Two sessions at once: A's bash call waits for approval while B runs a whole turn;
/// A is approved over HTTP and finishes; B's next call is interrupted mid-tool; a client
/// that reconnects to A with Last-Event-ID gets exactly what came after.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_sessions_run_at_once_with_approvals_interrupts_and_reconnects() {
    let server = ScriptedServer::start(vec![]).await;
    let (home, root) = (TempDir::new(), TempDir::new());
    std::fs::create_dir_all(root.join("a")).unwrap();
    std::fs::create_dir_all(root.join("b")).unwrap();
    let served = Served::start(&home, &root, &server, &[]);
    let a = served.create(&root.join("a")).await;
    let b = served.create(&root.join("b")).await;
    assert_ne!(a, b);

    // A asks to run a command and waits for its approval.
    server.push(Reply::tool("call_a", "bash", r#"{"command":"echo from-a"}"#));
    let mut stream_a = served.prompt(&a, "run it").await;
    let asked = stream_a.until("approval_requested").await;
    assert_eq!(asked.data["id"], "call_a");

    // Meanwhile B runs a whole turn.
    server.push(Reply::text("B is done"));
    let mut stream_b = served.prompt(&b, "hello B").await;
    assert_eq!(
        stream_b.rest().await,
        kinds(&[
            "turn_started",
            "step_started",
            "text_delta",
            "assistant_message",
            "token_usage",
            "turn_usage",
            "turn_complete"
        ])
    );
    assert_eq!(
        stream_b.got.last().unwrap().data,
        json!({"type": "turn_complete", "text": "B is done"})
    );
    let listed = served.list().await;
    let states: Vec<(String, String)> = listed["live"]
        .as_array()
        .unwrap()
        .iter()
        .map(|live| {
            (
                live["session_id"].as_str().unwrap().to_string(),
                live["state"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    let mut expected = vec![
        (a.clone(), "waiting_approval".to_string()),
        (b.clone(), "idle".to_string()),
    ];
    expected.sort();
    assert_eq!(states, expected);

    // A is approved over HTTP, runs, and the model gets the command's output.
    server.push(Reply::text("A is done"));
    let approved = served
        .post(
            &format!("/api/v1/sessions/{a}/approvals"),
            json!({"call_id": "call_a", "decision": "approve"}),
        )
        .send()
        .await
        .unwrap();
    assert_eq!(approved.status(), 200);
    // The same call cannot be answered twice.
    let again = served
        .post(
            &format!("/api/v1/sessions/{a}/approvals"),
            json!({"call_id": "call_a", "decision": "approve"}),
        )
        .send()
        .await
        .unwrap();
    assert_eq!(again.status(), 404);
    let rest = stream_a.rest().await;
    assert_eq!(
        rest.iter()
            .filter(
                |kind| ["tool_call_started", "tool_call_finished", "turn_complete"].contains(&kind.as_str())
            )
            .collect::<Vec<_>>(),
        vec!["tool_call_started", "tool_call_finished", "turn_complete"]
    );
    assert_eq!(
        stream_a.got.last().unwrap().data,
        json!({"type": "turn_complete", "text": "A is done"})
    );
    let requests = server.requests();
    assert_eq!(requests.len(), 3);
    assert_eq!(requests[0].body["messages"][0]["content"][0]["text"], "run it");
    assert_eq!(requests[1].body["messages"][0]["content"][0]["text"], "hello B");
    assert!(
        tool_result(&server, 2).contains("from-a"),
        "{}",
        tool_result(&server, 2)
    );

    // Indexes run on without gaps within a session.
    let ids: Vec<u64> = stream_a.got.iter().map(|event| event.id).collect();
    assert!(ids.windows(2).all(|pair| pair[1] == pair[0] + 1), "{ids:?}");

    // A client that reconnects after the approval request gets exactly what followed.
    let missed_from = asked.id;
    let response = served
        .get(&format!("/api/v1/sessions/{a}/events"))
        .header("Last-Event-ID", missed_from.to_string())
        .send()
        .await
        .unwrap();
    let mut replay = Sse::new(response);
    let expected: Vec<Got> = stream_a
        .got
        .iter()
        .filter(|event| event.id > missed_from)
        .cloned()
        .collect();
    for _ in 0..expected.len() {
        replay.next().await.expect("a missed event");
    }
    assert_eq!(replay.got, expected);
    // The same with ?since=N.
    let response = served
        .get(&format!(
            "/api/v1/sessions/{a}/events?since={}",
            ids[ids.len() - 2]
        ))
        .send()
        .await
        .unwrap();
    let mut tail = Sse::new(response);
    assert_eq!(tail.next().await.as_ref(), stream_a.got.last());
    drop((replay, tail));

    // B's next call is approved, then interrupted while it runs.
    server.push(Reply::tool("call_b", "bash", r#"{"command":"sleep 30"}"#));
    let mut stream_b = served.prompt(&b, "wait a while").await;
    stream_b.until("approval_requested").await;
    let approved = served
        .post(
            &format!("/api/v1/sessions/{b}/approvals"),
            json!({"call_id": "call_b", "decision": "approve"}),
        )
        .send()
        .await
        .unwrap();
    assert_eq!(approved.status(), 200);
    stream_b.until("tool_call_started").await;
    let interrupted = served
        .post(&format!("/api/v1/sessions/{b}/interrupt"), json!({}))
        .send()
        .await
        .unwrap();
    assert_eq!(interrupted.status(), 202);
    let rest = stream_b.rest().await;
    assert_eq!(rest.last().map(String::as_str), Some("turn_aborted"));
    assert_eq!(
        server.requests().len(),
        4,
        "the interrupted turn asks the model nothing more"
    );

    // Both sessions close; their logs stay and are listed as recorded.
    for id in [&a, &b] {
        let closed = served
            .client
            .delete(served.url(&format!("/api/v1/sessions/{id}")))
            .bearer_auth(&served.token)
            .send()
            .await
            .unwrap();
        assert_eq!(closed.status(), 200);
        assert_eq!(
            closed.json::<Value>().await.unwrap(),
            json!({"session_id": id, "closed": true})
        );
    }
    let listed = served.list().await;
    assert_eq!(listed["live"], json!([]));
    let mut recorded: Vec<&str> = listed["recorded"]
        .as_array()
        .unwrap()
        .iter()
        .map(|info| info["id"].as_str().unwrap())
        .collect();
    recorded.sort();
    let mut both = vec![a.as_str(), b.as_str()];
    both.sort();
    assert_eq!(recorded, both);
}

/// With nobody connected, a call that needs approval is refused and the model is told:
/// when the client left before the request came, and when the last client leaves while
/// the call waits.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_call_needing_approval_is_refused_when_no_client_is_connected() {
    let server = ScriptedServer::start(vec![]).await;
    let (home, root) = (TempDir::new(), TempDir::new());
    let served = Served::start(&home, &root, &server, &[]);
    let id = served.create(root.path()).await;

    // The client sends the prompt and goes away at once.
    server.push(Reply::tool("call_1", "bash", r#"{"command":"touch one"}"#));
    server.push(Reply::text("could not"));
    drop(served.prompt(&id, "make a file").await);
    server.wait_for_requests(2, WAIT).await;
    let told = tool_result(&server, 1);
    assert!(told.contains(miniagent_serve::NO_CLIENT), "{told}");
    wait_idle(&served, &id).await;

    // The client stays until the call asks, then leaves.
    server.push(Reply::tool("call_2", "bash", r#"{"command":"touch two"}"#));
    server.push(Reply::text("could not either"));
    let mut stream = served.prompt(&id, "make another").await;
    stream.until("approval_requested").await;
    drop(stream);
    server.wait_for_requests(4, WAIT).await;
    let told = tool_result(&server, 3);
    assert!(told.contains(miniagent_serve::NO_CLIENT), "{told}");
    assert!(!root.join("one").exists() && !root.join("two").exists());
    wait_idle(&served, &id).await;
}

/// Waits until session `id` is idle again.
async fn wait_idle(served: &Served, id: &str) {
    let deadline = tokio::time::Instant::now() + WAIT;
    loop {
        let listed = served.list().await;
        let state = listed["live"]
            .as_array()
            .unwrap()
            .iter()
            .find(|live| live["session_id"] == id)
            .map(|live| live["state"].clone());
        if state == Some(json!("idle")) {
            return;
        }
        assert!(tokio::time::Instant::now() < deadline, "{listed}");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// A session recorded by one server is listed by the next and resumed with its history.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_restarted_server_lists_and_resumes_a_recorded_session() {
    let server = ScriptedServer::start(vec![Reply::text("first answer"), Reply::text("second answer")]).await;
    let (home, root) = (TempDir::new(), TempDir::new());
    let served = Served::start(&home, &root, &server, &[]);
    let id = served.create(root.path()).await;
    served.prompt(&id, "remember this").await.rest().await;
    served.stop();

    let served = Served::start(&home, &root, &server, &[]);
    let listed = served.list().await;
    assert_eq!(listed["live"], json!([]));
    assert_eq!(listed["recorded"][0]["id"], id.as_str());
    let resumed = served
        .post(&format!("/api/v1/sessions/{id}/resume"), json!({}))
        .send()
        .await
        .unwrap();
    assert_eq!(resumed.status(), 200);
    let body: Value = resumed.json().await.unwrap();
    assert_eq!(body["session_id"], id.as_str());
    let twice = served
        .post(&format!("/api/v1/sessions/{id}/resume"), json!({}))
        .send()
        .await
        .unwrap();
    assert_eq!(twice.status(), 409);
    let kinds = served.prompt(&id, "what was it").await.rest().await;
    assert_eq!(kinds.last().map(String::as_str), Some("turn_complete"));
    let texts: Vec<Value> = server.requests()[1].body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|message| message["content"][0]["text"].clone())
        .collect();
    assert_eq!(
        texts,
        vec![
            json!("remember this"),
            json!("first answer"),
            json!("what was it")
        ]
    );
}

/// A turn's SSE data lines are the lines `exec --json` prints for the same turn.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sse_data_is_the_json_exec_prints() {
    let turn = || {
        Reply::Stream(
            crate::support::Turn::new()
                .thinking("let me see", "sig")
                .with_text("hello there")
                .usage(20, 5),
        )
    };
    let server = ScriptedServer::start(vec![turn(), turn()]).await;
    let (home, root) = (TempDir::new(), TempDir::new());
    let served = Served::start(&home, &root, &server, &[]);
    let id = served.create(root.path()).await;
    let mut stream = served.prompt(&id, "say hello").await;
    stream.rest().await;
    // The session's own start-up events (skills, notices) may come first: the turn is
    // compared.
    let streamed: Vec<String> = stream
        .got
        .iter()
        .skip_while(|event| event.kind != "turn_started")
        .map(|event| event.raw.clone())
        .collect();
    assert_eq!(stream.got.last().unwrap().kind, "turn_complete");

    let mut exec = against(&home, &root, &server);
    exec.args(["exec", "--json", "--approval", "ask", "say hello"]);
    let output = tokio::task::spawn_blocking(move || exec.output().unwrap())
        .await
        .unwrap();
    assert!(output.status.success());
    let printed: Vec<String> = String::from_utf8(output.stdout)
        .unwrap()
        .lines()
        .map(str::to_string)
        .collect();
    let start = printed
        .iter()
        .position(|line| line.starts_with(r#"{"type":"turn_started""#))
        .unwrap();
    let end = printed
        .iter()
        .position(|line| line.starts_with(r#"{"type":"turn_complete""#))
        .unwrap();
    assert_eq!(streamed, printed[start..=end].to_vec());
}

/// A client asking for events older than the session keeps gets 410 and the first index
/// it can have; from there it gets the rest.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn events_no_longer_kept_are_a_410_with_the_first_kept() {
    let server = ScriptedServer::start(vec![Reply::text(
        "one two three four five six seven eight nine ten",
    )])
    .await;
    let (home, root) = (TempDir::new(), TempDir::new());
    std::fs::write(home.join("config.toml"), "[serve]\nevents_kept = 4\n").unwrap();
    let served = Served::start(&home, &root, &server, &[]);
    let id = served.create(root.path()).await;
    let mut stream = served.prompt(&id, "count").await;
    stream.rest().await;
    let last = stream.got.last().unwrap().clone();
    let gone = served
        .get(&format!("/api/v1/sessions/{id}/events?since=1"))
        .send()
        .await
        .unwrap();
    assert_eq!(gone.status(), 410);
    let body: Value = gone.json().await.unwrap();
    let first = last.id - 3;
    assert_eq!(body["error"]["code"], "events_gone");
    assert_eq!(body["error"]["first_available"], first);
    let response = served
        .get(&format!("/api/v1/sessions/{id}/events"))
        .header("Last-Event-ID", (first - 1).to_string())
        .send()
        .await
        .unwrap();
    let mut replay = Sse::new(response);
    for _ in 0..4 {
        replay.next().await.unwrap();
    }
    assert_eq!(replay.got.last(), Some(&last));
    assert_eq!(replay.got[0].id, first);
}
