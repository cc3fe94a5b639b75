//! `miniagent acp` driven by a client this project did not write: the official ACP
//! Python SDK (`agent-client-protocol` on PyPI, pinned), installed by the test itself
//! into a virtual environment in the target folder (`<target>/acp-interop/venv`, kept
//! for later runs). Its script, `tests/acp/client.py`, plays an editor against the
//! binary and the scripted model server, validates every message it receives with the
//! SDK's schema models, and prints a summary this test compares whole; the requests the
//! model server got are checked here too, and every line the binary wrote on standard
//! output must be a JSON-RPC message.
//!
//! Without python3, its venv module or PyPI the test can check nothing, and says so:
//! under `CI=true` it fails unless `MINIAGENT_TEST_WITHOUT` names `python3`.

use std::path::{Path, PathBuf};
use std::process::Command;

use pretty_assertions::assert_eq;
use serde_json::{Value, json};

use crate::support::harness::TEST_KEY;
use crate::support::{Reply, ScriptedServer, TempDir, Turn};

const PACKAGE: &str = "agent-client-protocol";
const VERSION: &str = "0.12.1";

/// The venv's python with the SDK installed, installing it first if need be; why not,
/// when python3, venv or pip fails. The tests run in parallel: one installs while the
/// others wait (two pips in one venv break it), and all get its answer.
pub(crate) fn install() -> Result<PathBuf, String> {
    static INSTALLED: std::sync::OnceLock<Result<PathBuf, String>> = std::sync::OnceLock::new();
    INSTALLED.get_or_init(install_once).clone()
}

fn install_once() -> Result<PathBuf, String> {
    // The test binary is `<target>/<profile>/deps/all-<hash>`.
    let exe = std::env::current_exe().map_err(|err| err.to_string())?;
    let venv = exe
        .ancestors()
        .nth(3)
        .ok_or("no target folder")?
        .join("acp-interop/venv");
    let python = venv.join("bin/python");
    let installed = Command::new(&python)
        .args([
            "-c",
            &format!("import importlib.metadata as m; print(m.version('{PACKAGE}'))"),
        ])
        .output()
        .is_ok_and(|output| String::from_utf8_lossy(&output.stdout).trim() == VERSION);
    if installed {
        return Ok(python);
    }
    let run = |command: &mut Command, what: &str| -> Result<(), String> {
        let output = command
            .stdin(std::process::Stdio::null())
            .output()
            .map_err(|err| format!("cannot run {what}: {err}"))?;
        if output.status.success() {
            return Ok(());
        }
        let stderr = String::from_utf8_lossy(&output.stderr);
        let why: Vec<&str> = stderr.lines().rev().take(3).collect();
        Err(format!("{what} failed: {}", why.join(" / ")))
    };
    run(
        Command::new("python3").args(["-m", "venv"]).arg(&venv),
        "python3 -m venv",
    )?;
    run(
        Command::new(&python).args([
            "-m",
            "pip",
            "install",
            "--quiet",
            "--disable-pip-version-check",
            &format!("{PACKAGE}=={VERSION}"),
        ]),
        "pip install",
    )?;
    Ok(python)
}

/// The model's replies, one scenario step after another (see client.py).
fn script() -> Vec<Reply> {
    vec![
        // hello: thinking, then text.
        Reply::Stream(Turn::thinking_text(
            "The person greets me.",
            "sig-1",
            "Hello! How can I help?",
        )),
        // say hi: a command, allowed once.
        Reply::tool("call-bash", "bash", r#"{"command":"echo hi"}"#),
        Reply::text("It printed hi."),
        // edit the notes: an edit, allowed once.
        Reply::tool(
            "call-edit",
            "edit_file",
            r#"{"path":"notes.txt","old_str":"one","new_str":"two"}"#,
        ),
        Reply::text("Edited."),
        // remove the notes: rejected.
        Reply::tool("call-rm", "bash", r#"{"command":"rm notes.txt"}"#),
        Reply::text("I left it."),
        // wait a while: cancelled while it runs.
        Reply::tool("call-sleep", "bash", r#"{"command":"sleep 30"}"#),
        // touch a file: cancelled while the permission request waits.
        Reply::tool("call-touch", "bash", r#"{"command":"touch held.txt"}"#),
        // are you there?
        Reply::text("Still here."),
        // (second connection) go on.
        Reply::text("Going on."),
        // fresh start, after /clear.
        Reply::text("A fresh start."),
    ]
}

/// The text of the tool results the model got in its last message.
fn tool_results(request: &Value) -> Vec<(String, String)> {
    let messages = request["messages"].as_array().cloned().unwrap_or_default();
    let last = messages.last().cloned().unwrap_or(Value::Null);
    last["content"]
        .as_array()
        .cloned()
        .unwrap_or_default()
        .iter()
        .filter(|block| block["type"] == "tool_result")
        .map(|block| {
            let text = match &block["content"] {
                Value::String(text) => text.clone(),
                Value::Array(parts) => parts
                    .iter()
                    .filter_map(|part| part["text"].as_str())
                    .collect::<Vec<_>>()
                    .join(""),
                other => other.to_string(),
            };
            (
                block["tool_use_id"].as_str().unwrap_or_default().to_string(),
                text,
            )
        })
        .collect()
}

pub(crate) fn run_client(python: &Path, setup: &Value) -> Value {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/acp/client.py");
    let output = Command::new(python)
        .arg(script)
        .arg(setup.to_string())
        .stdin(std::process::Stdio::null())
        .output()
        .expect("python runs");
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success(),
        "client.py failed: {}\n{stdout}",
        String::from_utf8_lossy(&output.stderr)
    );
    serde_json::from_str(stdout.trim()).unwrap_or_else(|err| panic!("{err}: {stdout}"))
}

#[test]
fn the_official_python_sdk_drives_a_whole_session() {
    let python = match install() {
        Ok(python) => python,
        Err(why) => {
            // Fails under CI unless MINIAGENT_TEST_WITHOUT names python3.
            crate::support::skip::missing("python3", why);
            return;
        }
    };
    let server = ScriptedServer::start_blocking(script());
    // `/compact`'s summary call (it declares no tools).
    server.answer_toolless_with(Reply::text("The person said hello and had notes edited."));
    let home = TempDir::new();
    let workspace = TempDir::new();
    workspace.write("notes.txt", "one\n");
    let ws = workspace.path().canonicalize().unwrap();
    let raw = home.join("stdout.jsonl");
    // The binary's standard output is copied (tee) so that every byte of it is checked.
    let program = env!("CARGO_BIN_EXE_miniagent");
    let setup = json!({
        "program": "sh",
        "args": ["-c", "\"$0\" \"$@\" | tee -a \"$ACP_RAW\"", program, "acp",
                 "--base-url", server.anthropic_base_url(), "--model", "scripted-model",
                 "--approval", "ask"],
        "env": {
            "ACP_RAW": raw,
            "MINIAGENT_CONFIG_DIR": home.path(),
            "MINIAGENT_DATA_DIR": home.path(),
            "MINIAGENT_LOG_DIR": home.path(),
            "MINIAGENT_API_KEY": TEST_KEY,
            "XDG_CACHE_HOME": home.join("cache"),
        },
        "workspace": ws,
    });
    let summary = run_client(&python, &setup);
    // Seen with --nocapture; the 500 ms budget is the interrupt bench's to hold.
    println!(
        "session/cancel to the prompt's answer: {} ms",
        summary["cancel"]["ms"]
    );
    check_summary(&summary, &ws.display().to_string());
    check_requests(&server);
    // The session goes on outside the editor: `exec --resume` continues its log.
    server.push(Reply::text("From exec."));
    let id = summary["session_id"].as_str().unwrap();
    let output = crate::support::cli::exec(&home, &workspace, &server, &["--resume", id, "one more"]);
    assert_eq!(
        (
            output.status.code(),
            crate::support::cli::text(&output.stdout).trim()
        ),
        (Some(0), "From exec.")
    );
    let last = server.last_request().unwrap().body;
    let texts: Vec<&str> = last["messages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|message| message["content"][0]["text"].as_str().unwrap_or_default())
        .collect();
    assert_eq!(texts, ["fresh start", "A fresh start.", "one more"]);
    // Standard output held JSON-RPC messages and nothing else.
    let raw = std::fs::read_to_string(&raw).unwrap();
    assert!(raw.lines().count() > 40, "{raw}");
    for line in raw.lines() {
        let message: Value = serde_json::from_str(line).unwrap_or_else(|err| panic!("{err}: {line:?}"));
        assert_eq!(message["jsonrpc"], "2.0", "{line}");
    }
}

/// A chunk as client.py shows it (chunks of a kind joined).
fn chunk(kind: &str, text: &str) -> Value {
    json!([kind, text])
}

fn text_content(text: &str) -> Value {
    json!([{"type": "content", "content": {"type": "text", "text": text}}])
}

fn tool_call(id: &str, title: &str, kind: &str, input: Value, locations: Option<Value>) -> Value {
    let mut call = json!({"sessionUpdate": "tool_call", "toolCallId": id, "title": title, "kind": kind, "rawInput": input});
    if let Some(locations) = locations {
        call["locations"] = locations;
    }
    call
}

fn call_update(id: &str, status: &str, content: Option<Value>) -> Value {
    let mut update = json!({"sessionUpdate": "tool_call_update", "toolCallId": id, "status": status});
    if let Some(content) = content {
        update["content"] = content;
    }
    update
}

fn asked(id: &str, content: Value) -> Value {
    json!({"toolCall": {"toolCallId": id, "content": content},
           "options": ["allow_once", "allow_always", "reject_once", "reject_always"]})
}

const REFUSED: &str = "the person refused this call: they rejected it in their editor, which gives no reason. Do not retry it; adjust the plan or ask them.";

/// What the first connection saw: every prompt's updates, permission requests and stop.
fn check_summary(summary: &Value, ws: &str) {
    assert_eq!(summary["schema_problems"], json!([]));
    assert_eq!(summary["validated"], true);
    assert_eq!(
        summary["initialize"],
        json!({"protocolVersion": 1, "authMethods": [],
               "agentInfo": {"name": "miniagent", "title": "miniagent", "version": env!("CARGO_PKG_VERSION")},
               "agentCapabilities": {"loadSession": true, "auth": {},
                   "promptCapabilities": {"image": false, "audio": false, "embeddedContext": true},
                   "mcpCapabilities": {"http": true, "sse": false, "acp": false},
                   "sessionCapabilities": {"list": {}, "resume": {}, "close": {}}}})
    );
    assert_eq!(summary["session"]["modes"]["currentModeId"], "ask");
    assert_eq!(summary["session"]["configOptions"], json!(["mode", "model"]));
    assert_eq!(summary["commands"], json!([["compact", "clear", "init"]]));
    assert_eq!(
        summary["hello"],
        json!({"stop": "end_turn", "permissions": [], "updates": [
            chunk("agent_thought_chunk", "The person greets me."),
            chunk("agent_message_chunk", "Hello! How can I help?")]})
    );
    let bash = tool_call(
        "call-bash",
        "bash: echo hi",
        "execute",
        json!({"command": "echo hi"}),
        None,
    );
    assert_eq!(
        summary["bash"],
        json!({"stop": "end_turn",
               "permissions": [asked("call-bash", text_content(&format!("```sh\necho hi\n```\nin {ws}")))],
               "updates": [bash, call_update("call-bash", "in_progress", None),
                   call_update("call-bash", "completed", Some(text_content("hi\n[exit code: 0]"))),
                   chunk("agent_message_chunk", "It printed hi.")]})
    );
    let notes = format!("{ws}/notes.txt");
    let diff = json!([{"type": "diff", "path": notes, "oldText": "one\n", "newText": "two\n"}]);
    let edit = tool_call(
        "call-edit",
        "edit_file: notes.txt",
        "edit",
        json!({"path": "notes.txt", "old_str": "one", "new_str": "two"}),
        Some(json!([{"path": notes}])),
    );
    assert_eq!(
        summary["edit"],
        json!({"stop": "end_turn", "permissions": [asked("call-edit", diff.clone())],
               "updates": [edit, call_update("call-edit", "in_progress", None),
                   call_update("call-edit", "completed", Some(diff)), chunk("agent_message_chunk", "Edited.")]})
    );
    let rm = tool_call(
        "call-rm",
        "bash: rm notes.txt",
        "execute",
        json!({"command": "rm notes.txt"}),
        None,
    );
    assert_eq!(
        summary["denied"],
        json!({"stop": "end_turn",
               "permissions": [asked("call-rm", text_content(&format!("```sh\nrm notes.txt\n```\nin {ws}")))],
               "updates": [rm, call_update("call-rm", "failed", Some(text_content(REFUSED))),
                   chunk("agent_message_chunk", "I left it.")]})
    );
    let sleep = tool_call(
        "call-sleep",
        "bash: sleep 30",
        "execute",
        json!({"command": "sleep 30"}),
        None,
    );
    assert_eq!(
        summary["cancel"],
        json!({"stop": "cancelled", "within_5s": true, "ms": summary["cancel"]["ms"],
               "permissions": [asked("call-sleep", text_content(&format!("```sh\nsleep 30\n```\nin {ws}")))],
               "updates": [sleep, call_update("call-sleep", "in_progress", None),
                   call_update("call-sleep", "failed", Some(text_content("interrupted by the user")))]})
    );
    let touch = tool_call(
        "call-touch",
        "bash: touch held.txt",
        "execute",
        json!({"command": "touch held.txt"}),
        None,
    );
    assert_eq!(
        summary["cancel_asking"],
        json!({"stop": "cancelled",
               "permissions": [asked("call-touch", text_content(&format!("```sh\ntouch held.txt\n```\nin {ws}")))],
               "updates": [touch, call_update("call-touch", "failed", Some(text_content("interrupted by the user")))]})
    );
    assert_eq!(
        summary["after_cancel"],
        json!({"stop": "end_turn", "permissions": [], "updates": [chunk("agent_message_chunk", "Still here.")]})
    );
    assert_eq!(
        summary["while_running"],
        json!([
            -32600,
            "a prompt is running in this session; cancel it or wait for its end"
        ])
    );
    assert_eq!(summary["mode"], json!({}));
    assert_eq!(
        summary["mode_updates"][0],
        json!({"sessionUpdate": "current_mode_update", "currentModeId": "auto-edit"})
    );
    assert_eq!(
        summary["mode_updates"][1]["configOptions"][0]["currentValue"],
        "auto-edit"
    );
    check_second_connection(summary, ws);
}

/// The second connection: the session listed, loaded (its history replayed before the
/// answer) and continued, `/compact` and `/clear` run.
fn check_second_connection(summary: &Value, ws: &str) {
    let id = summary["session_id"].as_str().unwrap();
    assert_eq!(summary["listed"], json!([[id, "hello"]]));
    assert_eq!(summary["load_elsewhere"], -32602);
    let notes = format!("{ws}/notes.txt");
    let diff = json!([{"type": "diff", "path": notes, "oldText": "one\n", "newText": "two\n"}]);
    assert_eq!(
        summary["replayed"],
        json!([
            chunk("user_message_chunk", "hello"),
            chunk("agent_thought_chunk", "The person greets me."),
            chunk("agent_message_chunk", "Hello! How can I help?"),
            chunk("user_message_chunk", "say hi"),
            tool_call(
                "call-bash",
                "bash: echo hi",
                "execute",
                json!({"command": "echo hi"}),
                None
            ),
            call_update("call-bash", "completed", Some(text_content("hi\n[exit code: 0]"))),
            chunk("agent_message_chunk", "It printed hi."),
            chunk("user_message_chunk", "edit the notes"),
            tool_call(
                "call-edit",
                "edit_file: notes.txt",
                "edit",
                json!({"path": "notes.txt", "old_str": "one", "new_str": "two"}),
                Some(json!([{"path": notes}]))
            ),
            call_update("call-edit", "completed", Some(diff)),
            chunk("agent_message_chunk", "Edited."),
            chunk("user_message_chunk", "remove the notes"),
            tool_call(
                "call-rm",
                "bash: rm notes.txt",
                "execute",
                json!({"command": "rm notes.txt"}),
                None
            ),
            call_update("call-rm", "failed", Some(text_content(REFUSED))),
            chunk("agent_message_chunk", "I left it."),
            chunk("user_message_chunk", "wait a while"),
            tool_call(
                "call-sleep",
                "bash: sleep 30",
                "execute",
                json!({"command": "sleep 30"}),
                None
            ),
            call_update(
                "call-sleep",
                "failed",
                Some(text_content("interrupted by the user"))
            ),
            chunk("user_message_chunk", "touch a file"),
            tool_call(
                "call-touch",
                "bash: touch held.txt",
                "execute",
                json!({"command": "touch held.txt"}),
                None
            ),
            call_update(
                "call-touch",
                "failed",
                Some(text_content("interrupted by the user"))
            ),
            chunk("user_message_chunk", "are you there?"),
            chunk("agent_message_chunk", "Still here."),
        ])
    );
    // The mode was set in the first connection only; a loaded session starts as configured.
    assert_eq!(summary["loaded_mode"], "ask");
    assert_eq!(
        summary["continued"],
        json!({"stop": "end_turn", "permissions": [], "updates": [chunk("agent_message_chunk", "Going on.")]})
    );
    // The compaction's report (its figures depend on the prompt's size). When `/compact`
    // comes while the agent still puts the last turn away, it first says it waits.
    let report = summary["compact"]["updates"][0][1].as_str().unwrap_or_default();
    let report = report
        .strip_prefix("a turn is running; the history is compacted when it ends\n")
        .unwrap_or(report);
    let figures = regex::Regex::new("[0-9]+").unwrap().replace_all(report, "N");
    assert_eq!(
        (
            &summary["compact"]["stop"],
            summary["compact"]["updates"].as_array().map(Vec::len),
            figures.as_ref()
        ),
        (
            &json!("end_turn"),
            Some(1),
            "cannot compact further: the prompt is about N tokens; the system prompt and tools take about N and your messages about N, which are summarized only when the prompt would not fit otherwise, and the last N steps stay verbatim"
        )
    );
    assert_eq!(
        summary["clear"],
        json!({"stop": "end_turn", "permissions": [], "updates": [chunk(
            "agent_message_chunk",
            "The conversation was cleared: the next prompt starts afresh (the session log keeps what came before)."
        )]})
    );
    assert_eq!(
        summary["fresh"],
        json!({"stop": "end_turn", "permissions": [], "updates": [chunk("agent_message_chunk", "A fresh start.")]})
    );
}

/// What the model server was sent: the rejection said plainly, the cancelled call given
/// a result, the loaded session's history continued, and nothing left after `/clear`.
fn check_requests(server: &ScriptedServer) {
    let requests: Vec<Value> = server
        .requests()
        .into_iter()
        .map(|request| request.body)
        .filter(|body| body["tools"].is_array())
        .collect();
    assert_eq!(requests.len(), 12);
    assert_eq!(
        tool_results(&requests[2]),
        [("call-bash".to_string(), "hi\n[exit code: 0]".to_string())]
    );
    assert_eq!(
        tool_results(&requests[6]),
        [("call-rm".to_string(), REFUSED.to_string())]
    );
    // After the cancel the call has a result, and the next message comes with it.
    assert_eq!(
        tool_results(&requests[8]),
        [("call-sleep".to_string(), "interrupted by the user".to_string())]
    );
    assert_eq!(
        tool_results(&requests[9]),
        [("call-touch".to_string(), "interrupted by the user".to_string())]
    );
    let after_cancel = requests[9]["messages"].as_array().unwrap();
    assert_eq!(
        after_cancel.last().unwrap()["content"][1]["text"],
        "are you there?"
    );
    // The loaded session went on from the whole history: what came before is there.
    assert_eq!(
        requests[10]["messages"].as_array().map(Vec::len),
        Some(after_cancel.len() + 2)
    );
    assert_eq!(
        requests[11]["messages"],
        json!([{"role": "user", "content": [{"type": "text", "text": "fresh start", "cache_control": {"type": "ephemeral"}}]}])
    );
}

/// An editor that reads and writes text files gets the file tools through it (issue 28):
/// `read_file` sees its unsaved buffer, not the disk; an edit is made on the buffer, shown
/// as a diff of it, and lands in the editor; the disk is left as it was.
#[test]
fn an_editor_that_offers_its_files_gets_reads_and_edits_through_it() {
    let python = match install() {
        Ok(python) => python,
        Err(why) => {
            crate::support::skip::missing("python3", why);
            return;
        }
    };
    let server = ScriptedServer::start_blocking(vec![
        Reply::tool("call-read", "read_file", r#"{"path":"buffer.txt"}"#),
        Reply::tool(
            "call-edit",
            "edit_file",
            r#"{"path":"buffer.txt","old_str":"unsaved","new_str":"edited"}"#,
        ),
        Reply::text("Fixed in your editor."),
    ]);
    let home = TempDir::new();
    let workspace = TempDir::new();
    workspace.write("buffer.txt", "saved text\n");
    let ws = workspace.path().canonicalize().unwrap();
    let buffer = ws.join("buffer.txt").display().to_string();
    let setup = json!({
        "scenario": "files",
        "buffers": {buffer.clone(): "unsaved text\n"},
        "program": env!("CARGO_BIN_EXE_miniagent"),
        "args": ["acp", "--base-url", server.anthropic_base_url(), "--model", "scripted-model", "--approval", "ask"],
        "env": {
            "MINIAGENT_CONFIG_DIR": home.path(),
            "MINIAGENT_DATA_DIR": home.path(),
            "MINIAGENT_LOG_DIR": home.path(),
            "MINIAGENT_API_KEY": TEST_KEY,
            "XDG_CACHE_HOME": home.join("cache"),
        },
        "workspace": ws,
    });
    let summary = run_client(&python, &setup);
    assert_eq!(summary["schema_problems"], json!([]));
    assert_eq!(summary["stop"], "end_turn");
    assert_eq!(summary["writes"], json!({buffer.clone(): "edited text\n"}));
    assert!(
        summary["reads"]
            .as_array()
            .is_some_and(|reads| !reads.is_empty() && reads.iter().all(|read| *read == json!(buffer))),
        "{}",
        summary["reads"]
    );
    // The approval showed the change to the buffer, not to the disk.
    let asked = summary["permissions"][0]["toolCall"]["content"][0].clone();
    assert_eq!(
        (
            asked["type"].clone(),
            asked["oldText"].clone(),
            asked["newText"].clone()
        ),
        (json!("diff"), json!("unsaved text\n"), json!("edited text\n")),
        "{asked}"
    );
    let requests = server.requests();
    assert_eq!(
        tool_results(&requests[1].body),
        [("call-read".to_string(), "     1|unsaved text".to_string())]
    );
    assert_eq!(
        std::fs::read_to_string(ws.join("buffer.txt")).unwrap(),
        "saved text\n"
    );
}

/// A session recorded outside the editor (by `exec`, as the workbench records them) is
/// loaded in the editor: its history is replayed, and the next prompt goes on from it.
#[test]
fn a_session_recorded_outside_the_editor_is_loaded_and_goes_on() {
    let python = match install() {
        Ok(python) => python,
        Err(why) => {
            crate::support::skip::missing("python3", why);
            return;
        }
    };
    let server = ScriptedServer::start_blocking(vec![
        Reply::text("Recorded by exec."),
        Reply::text("Going on in the editor."),
    ]);
    let home = TempDir::new();
    let workspace = TempDir::new();
    let ws = workspace.path().canonicalize().unwrap();
    let output = crate::support::cli::exec(&home, &workspace, &server, &["first, from a terminal"]);
    assert_eq!(
        output.status.code(),
        Some(0),
        "{}",
        crate::support::cli::text(&output.stderr)
    );
    let log = crate::support::cli::session_logs(&home)
        .pop()
        .expect("exec recorded the session");
    let id = crate::support::cli::session_id(&log);
    let setup = json!({
        "scenario": "load",
        "session_id": id,
        "program": env!("CARGO_BIN_EXE_miniagent"),
        "args": ["acp", "--base-url", server.anthropic_base_url(), "--model", "scripted-model"],
        "env": {
            "MINIAGENT_CONFIG_DIR": home.path(),
            "MINIAGENT_DATA_DIR": home.path(),
            "MINIAGENT_LOG_DIR": home.path(),
            "MINIAGENT_API_KEY": TEST_KEY,
            "XDG_CACHE_HOME": home.join("cache"),
        },
        "workspace": ws,
    });
    let summary = run_client(&python, &setup);
    assert_eq!(summary["schema_problems"], json!([]));
    assert_eq!(
        summary["replayed"],
        json!([
            chunk("user_message_chunk", "first, from a terminal"),
            chunk("agent_message_chunk", "Recorded by exec.")
        ])
    );
    assert_eq!(
        summary["continued"],
        json!({"stop": "end_turn", "permissions": [], "updates": [chunk("agent_message_chunk", "Going on in the editor.")]})
    );
    let last = server.last_request().unwrap().body;
    let texts: Vec<&str> = last["messages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|message| message["content"][0]["text"].as_str().unwrap_or_default())
        .collect();
    assert_eq!(texts, ["first, from a terminal", "Recorded by exec.", "and now?"]);
}
