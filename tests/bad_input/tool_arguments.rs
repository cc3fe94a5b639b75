//! Bad tool arguments, through the agent: the harness that runs a session of bad calls
//! against a model server and reads back what the model received for each. The cases
//! are in [`json`] (the arguments' text and values) and [`filesystem`] (paths and files
//! a file tool must refuse).

mod filesystem;
mod json;

use std::collections::{BTreeMap, VecDeque};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use miniagent_core::config::Provider;
use miniagent_protocol::Event;
use pretty_assertions::assert_eq;
use serde_json::{Value, json};

use crate::support::harness::{Harness, test_config};
use crate::support::validate::assert_valid_anthropic;
use crate::support::{self, Reply, ScriptedServer, TempDir};

/// What the model received for one call: (content, is_error).
type Received = (String, bool);

/// The call every session makes after its bad ones, to show it goes on.
const AFTER_CONTENT: &str = "still working\n";

/// Files outside the workspace that no call may touch: a folder with a secret in it.
struct Outside {
    dir: TempDir,
    before: BTreeMap<PathBuf, Vec<u8>>,
}

impl Outside {
    fn new() -> Outside {
        let dir = TempDir::new();
        dir.write("secret.txt", "do not touch\n");
        dir.write("nested/deeper.txt", "nor this\n");
        let before = Self::contents(dir.path());
        Outside { dir, before }
    }

    fn path(&self) -> PathBuf {
        self.dir.path().canonicalize().expect("outside folder exists")
    }

    /// The folder's name, for `..` paths from a sibling workspace.
    fn name(&self) -> String {
        self.dir
            .path()
            .file_name()
            .map(|name| name.to_string_lossy().into_owned())
            .unwrap_or_default()
    }

    /// Every file (and symlink target) under `dir`, with its bytes.
    fn contents(dir: &Path) -> BTreeMap<PathBuf, Vec<u8>> {
        let mut files = BTreeMap::new();
        let mut pending = vec![dir.to_path_buf()];
        while let Some(folder) = pending.pop() {
            for entry in std::fs::read_dir(&folder)
                .expect("outside folder lists")
                .flatten()
            {
                let path = entry.path();
                let meta = std::fs::symlink_metadata(&path).expect("entry has metadata");
                if meta.is_dir() {
                    pending.push(path.clone());
                    files.insert(path, b"(folder)".to_vec());
                } else {
                    files.insert(path.clone(), std::fs::read(&path).unwrap_or_default());
                }
            }
        }
        files
    }

    fn assert_untouched(&self) {
        assert_eq!(
            Self::contents(self.dir.path()),
            self.before,
            "nothing outside the workspace changed"
        );
    }
}

/// The script's tool calls as replies, then the good `write_file` call and the final text.
fn script_of(calls: &[(&str, String)]) -> Vec<(String, String, String)> {
    let mut script: Vec<(String, String, String)> = calls
        .iter()
        .enumerate()
        .map(|(i, (name, args))| (format!("toolu_{i}"), name.to_string(), args.clone()))
        .collect();
    script.push((
        "toolu_after".into(),
        "write_file".into(),
        json!({"path": "after.txt", "content": AFTER_CONTENT}).to_string(),
    ));
    script
}

/// Checks the turn ended normally and the good call after the bad ones worked, and
/// returns what the model received for each bad call, read from the requests that
/// followed them.
fn results_of(agent: &Harness, events: &[Event], bodies: &[Value], calls: usize) -> Vec<Received> {
    assert_eq!(
        events.last(),
        Some(&Event::TurnComplete { text: "done".into() }),
        "the session went on to the end"
    );
    let mut received: Vec<Received> = bodies[1..]
        .iter()
        .map(|body| {
            assert_valid_anthropic(body);
            let last = body["messages"]
                .as_array()
                .and_then(|messages| messages.last())
                .cloned()
                .unwrap_or(Value::Null);
            let block = &last["content"][0];
            (
                block["content"].as_str().unwrap_or("(no result)").to_string(),
                block["is_error"].as_bool().unwrap_or(false),
            )
        })
        .collect();
    assert_eq!(received.len(), calls + 1);
    let after = received.pop().unwrap_or_default();
    assert_eq!(
        after,
        (
            format!("wrote {} bytes to after.txt (new file)", AFTER_CONTENT.len()),
            false
        ),
        "a good call after the bad ones works"
    );
    assert_eq!(
        std::fs::read_to_string(agent.workspace.join("after.txt")).unwrap_or_default(),
        AFTER_CONTENT
    );
    received
}

/// Runs `calls` (raw argument text, one model step each) in a full-auto session whose
/// workspace `setup` prepared, then one good `write_file` call; returns what the model
/// received for each bad call, after checking the good one worked.
async fn run_bad_calls(setup: impl FnOnce(&TempDir), calls: &[(&str, String)]) -> (Vec<Received>, Harness) {
    let mut script: Vec<Reply> = script_of(calls)
        .into_iter()
        .map(|(id, name, args)| Reply::tool(id, name, args))
        .collect();
    script.push(Reply::text("done"));
    let server = ScriptedServer::start(script).await;
    let mut agent = Harness::start(test_config(Provider::Anthropic, &server));
    setup(&agent.workspace);
    let events = agent.turn("do it").await;
    let bodies: Vec<Value> = server
        .requests()
        .into_iter()
        .map(|request| request.body)
        .collect();
    let received = results_of(&agent, &events, &bodies, calls.len());
    (received, agent)
}

/// An Anthropic stream of one tool call, its arguments in a single delta.
fn bulk_tool_reply(id: &str, name: &str, arguments: &str) -> String {
    let events = [
        json!({"type": "message_start", "message": {"usage": {"input_tokens": 10, "output_tokens": 1}}}),
        json!({"type": "content_block_start", "index": 0, "content_block": {"type": "tool_use", "id": id, "name": name, "input": {}}}),
        json!({"type": "content_block_delta", "index": 0, "delta": {"type": "input_json_delta", "partial_json": arguments}}),
        json!({"type": "content_block_stop", "index": 0}),
        json!({"type": "message_delta", "delta": {"stop_reason": "tool_use"}, "usage": {"output_tokens": 5}}),
        json!({"type": "message_stop"}),
    ];
    events
        .iter()
        .map(|event| {
            format!(
                "event: {}\ndata: {event}\n\n",
                event["type"].as_str().unwrap_or("message")
            )
        })
        .collect()
}

fn bulk_text_reply(text: &str) -> String {
    let events = [
        json!({"type": "message_start", "message": {"usage": {"input_tokens": 10, "output_tokens": 1}}}),
        json!({"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}}),
        json!({"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": text}}),
        json!({"type": "message_delta", "delta": {"stop_reason": "end_turn"}, "usage": {"output_tokens": 5}}),
        json!({"type": "message_stop"}),
    ];
    events
        .iter()
        .map(|event| {
            format!(
                "event: {}\ndata: {event}\n\n",
                event["type"].as_str().unwrap_or("message")
            )
        })
        .collect()
}

/// A model server for megabytes of arguments: it sends each call's arguments in one SSE
/// event, where the scripted server sends eight characters an event (1.3 million events
/// for 10 MB, far too slow for a test). It records each request body.
struct BulkServer {
    base_url: String,
    bodies: Arc<Mutex<Vec<Vec<u8>>>>,
}

impl BulkServer {
    async fn start(replies: Vec<String>) -> BulkServer {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("a port");
        let base_url = format!("http://{}", listener.local_addr().expect("an address"));
        let bodies = Arc::new(Mutex::new(Vec::new()));
        let recorded = Arc::clone(&bodies);
        let replies = Arc::new(Mutex::new(VecDeque::from(replies)));
        tokio::spawn(async move {
            while let Ok((mut stream, _)) = listener.accept().await {
                let recorded = Arc::clone(&recorded);
                let replies = Arc::clone(&replies);
                tokio::spawn(async move {
                    let Ok(request) = support::http::read_request(&mut stream).await else {
                        return;
                    };
                    recorded.lock().expect("not poisoned").push(request.body);
                    let reply = replies.lock().expect("not poisoned").pop_front();
                    let body = reply.unwrap_or_else(|| bulk_text_reply("out of script"));
                    let _ =
                        support::http::write_full(&mut stream, 200, &[], "text/event-stream", &body).await;
                });
            }
        });
        BulkServer { base_url, bodies }
    }
}

/// [`run_bad_calls`] through a [`BulkServer`], with a context budget no call can exceed
/// (compaction is not what these calls test).
async fn run_bulk_calls(setup: impl FnOnce(&TempDir), calls: &[(&str, String)]) -> (Vec<Received>, Harness) {
    let mut replies: Vec<String> = script_of(calls)
        .iter()
        .map(|(id, name, args)| bulk_tool_reply(id, name, args))
        .collect();
    replies.push(bulk_text_reply("done"));
    let server = BulkServer::start(replies).await;
    let unused = ScriptedServer::start(Vec::new()).await;
    let mut config = test_config(Provider::Anthropic, &unused);
    config.model.base_url = server.base_url.clone();
    config.model.context_window = 1 << 40;
    config.agent.token_limit = 1 << 40;
    let mut agent = Harness::start(config);
    setup(&agent.workspace);
    let events = agent.turn("do it").await;
    let bodies: Vec<Value> = server
        .bodies
        .lock()
        .expect("not poisoned")
        .iter()
        .map(|body| serde_json::from_slice(body).unwrap_or(Value::Null))
        .collect();
    let received = results_of(&agent, &events, &bodies, calls.len());
    (received, agent)
}

fn args(value: Value) -> String {
    value.to_string()
}

/// Asserts `received` is an error result that starts with `start`.
#[track_caller]
fn assert_refused(received: &Received, start: &str) {
    assert!(
        received.1 && received.0.starts_with(start),
        "expected an error starting with {start:?}, got {received:?}"
    );
}

/// The workspace's resolved root, as messages name it.
fn root_of(agent: &Harness) -> PathBuf {
    agent.workspace.path().canonicalize().expect("workspace exists")
}
