//! Large results stay out of the prompt, and the model can still reach every byte of
//! them: what was sent (a preview naming the saved file) and what came back (the line
//! found by reading that file).

use crate::support;

use miniagent_core::config::Provider;
use miniagent_protocol::Event;
use serde_json::json;
use support::harness::{Harness, test_config};
use support::*;

/// The last tool result a request carries.
fn last_result(request: &RecordedRequest) -> String {
    let messages = request.body["messages"].as_array().unwrap();
    let blocks = messages.last().unwrap()["content"].as_array().unwrap();
    let result = blocks.iter().rev().find(|b| b["type"] == "tool_result").unwrap();
    result["content"].as_str().unwrap().to_string()
}

/// The saved file a preview names.
fn saved_path(preview: &str) -> String {
    let start = preview.find("it is saved in ").unwrap() + "it is saved in ".len();
    let end = start + preview[start..].find(". Its first").unwrap();
    preview[start..end].to_string()
}

/// A 5 MB output whose answer is one line in its middle: the preview the model gets
/// does not show it; the model finds it by searching and by reading the saved file,
/// whose path the preview gives, and answers with it.
#[tokio::test]
async fn the_model_finds_a_line_in_the_middle_of_five_megabytes_by_reading_the_saved_file() {
    let command = "seq 1 400000; echo 'the answer is 7f3a-91c2'; seq 400001 800000";
    let server = ScriptedServer::start(Vec::new()).await;
    let mut agent = Harness::start(test_config(Provider::Anthropic, &server));
    // Where the whole output will be, as the preview names it (checked below): the
    // script plays a model that read it there.
    let path = agent
        .data
        .join("results/unrecorded/call_big.txt")
        .display()
        .to_string();
    server.push(Reply::tool(
        "call_big",
        "bash",
        json!({ "command": command }).to_string(),
    ));
    server.push(Reply::tool(
        "call_grep",
        "bash",
        json!({ "command": format!("grep -n 'answer' '{path}'") }).to_string(),
    ));
    server.push(Reply::tool(
        "call_read",
        "read_file",
        json!({ "path": path, "offset": 400001, "limit": 1 }).to_string(),
    ));
    server.push(Reply::text("The answer is 7f3a-91c2."));
    let events = agent.turn("what does the command say the answer is?").await;
    assert_eq!(
        events.last(),
        Some(&Event::TurnComplete {
            text: "The answer is 7f3a-91c2.".into()
        })
    );
    let requests = server.requests();
    assert_eq!(requests.len(), 4);
    // The result arrived as a preview naming the file; the middle is not in it.
    let preview = last_result(&requests[1]);
    assert!(preview.len() < 3_000, "{} bytes reached the model", preview.len());
    assert_eq!(saved_path(&preview), path);
    assert!(!preview.contains("the answer is"), "the preview shows the middle");
    assert!(preview.contains("\n1\n2\n3\n"), "{preview}");
    assert!(preview.ends_with("799999\n800000\n[exit code: 0]"), "{preview}");
    assert!(std::fs::metadata(&path).unwrap().len() > 5_000_000);
    // Searching the file with bash, and reading the line with read_file, found it.
    assert_eq!(
        last_result(&requests[2]),
        "400001:the answer is 7f3a-91c2\n[exit code: 0]"
    );
    let read = last_result(&requests[3]);
    assert!(read.contains("400001|the answer is 7f3a-91c2"), "{read}");
}

/// The results folder is read-only to file tools: what the model reads back is what the
/// command printed; and only this session's results may be read.
#[tokio::test]
async fn a_saved_result_cannot_be_rewritten_by_a_file_tool() {
    let server = ScriptedServer::start(Vec::new()).await;
    let mut agent = Harness::start(test_config(Provider::Anthropic, &server));
    let path = agent
        .data
        .join("results/unrecorded/big.txt")
        .display()
        .to_string();
    server.push(Reply::tool(
        "big",
        "bash",
        json!({"command": "seq 1 10000"}).to_string(),
    ));
    server.push(Reply::tool(
        "overwrite",
        "write_file",
        json!({"path": path, "content": "nothing to see"}).to_string(),
    ));
    // Another session's saved results are not this one's to read.
    let other = agent.data.join("results/20261126-000000-abcd/secret.txt");
    std::fs::create_dir_all(other.parent().unwrap()).unwrap();
    std::fs::write(&other, "another session's output").unwrap();
    server.push(Reply::tool(
        "peek",
        "read_file",
        json!({"path": other.display().to_string()}).to_string(),
    ));
    server.push(Reply::text("done"));
    agent.turn("go").await;
    let refused = last_result(&server.requests()[2]);
    assert!(refused.contains("is outside the workspace"), "{refused}");
    assert!(std::fs::read_to_string(&path).unwrap().starts_with("1\n2\n3\n"));
    let peeked = last_result(&server.requests()[3]);
    assert!(peeked.contains("is outside the workspace"), "{peeked}");
    assert!(!peeked.contains("another session's output"));
}

/// An MCP-sized answer (any tool's result over the limit, not only a command's) is saved
/// too; read_file's own results never are (it reads in pages); a small result is sent
/// as it is.
#[tokio::test]
async fn any_large_result_but_a_file_read_is_saved() {
    let server = ScriptedServer::start(vec![
        Reply::tool("small", "bash", json!({"command": "echo small"}).to_string()),
        Reply::tool("medium", "bash", json!({"command": "seq 1 5000"}).to_string()),
        Reply::tool("file", "read_file", json!({"path": "big.txt"}).to_string()),
        Reply::text("done"),
    ])
    .await;
    let mut agent = Harness::start(test_config(Provider::Anthropic, &server));
    let big: String = (1..=5000).map(|n| format!("line {n}\n")).collect();
    agent.workspace.write("big.txt", &big);
    agent.turn("go").await;
    let requests = server.requests();
    assert_eq!(last_result(&requests[1]), "small\n[exit code: 0]");
    // 23,893 bytes: over the 20,000 limit, under what bash keeps in memory.
    let medium = last_result(&requests[2]);
    assert!(
        medium.starts_with("[the whole result is 23907 bytes"),
        "{}",
        &medium[..200]
    );
    let saved = std::fs::read_to_string(saved_path(&medium)).unwrap();
    let expected: String = (1..=5000).map(|n| format!("{n}\n")).collect::<String>() + "[exit code: 0]";
    assert_eq!(saved, expected);
    let file = last_result(&requests[3]);
    assert!(
        file.contains("5000|line 5000"),
        "read_file's result is sent as it is"
    );
    assert!(!file.contains("too long for the context"));
}

/// A recorded session's results are in its own folder; a later run of the resumed
/// session that reuses a call id gets a file of its own (the earlier preview's path still
/// holds what it said); removing the session removes them.
#[test]
fn a_sessions_results_live_and_go_with_it() {
    use support::cli::{exec, miniagent, session_id, session_logs, text};
    let (home, workspace) = (TempDir::new(), TempDir::new());
    let big = |n: u32| {
        Reply::tool(
            "call_1",
            "bash",
            json!({"command": format!("seq {n} {}", n + 9999)}).to_string(),
        )
    };
    let server = ScriptedServer::start_blocking(vec![
        big(1),
        Reply::text("listed"),
        big(100_000),
        Reply::text("again"),
    ]);
    let first = exec(&home, &workspace, &server, &["list numbers"]);
    assert_eq!(first.status.code(), Some(0), "{}", text(&first.stderr));
    let id = session_id(&session_logs(&home)[0]);
    let folder = home.join(format!("results/{id}"));
    assert!(folder.join("call_1.txt").exists());
    let second = exec(&home, &workspace, &server, &["--resume", &id, "list more"]);
    assert_eq!(second.status.code(), Some(0), "{}", text(&second.stderr));
    let earlier = std::fs::read_to_string(folder.join("call_1.txt")).unwrap();
    assert!(earlier.starts_with("1\n2\n"), "the first run's file is as it was");
    // The repeated id was given a fresh one, or the file a fresh name: either way a file
    // of its own, in the session's folder.
    let preview = last_result(server.requests().last().unwrap());
    let later = saved_path(&preview);
    assert_ne!(later, folder.join("call_1.txt").display().to_string());
    assert!(later.starts_with(&folder.display().to_string()), "{later}");
    assert!(std::fs::read_to_string(&later).unwrap().starts_with("100000\n"));
    let removed = miniagent(&home).args(["sessions", "rm", &id]).output().unwrap();
    assert_eq!(removed.status.code(), Some(0), "{}", text(&removed.stderr));
    assert!(!folder.exists(), "the results went with the session");
}

/// Whether a result is kept out of the prompt depends on what the model would read of
/// it: a progress bar's thousands of redraws are one line.
#[tokio::test]
async fn a_large_output_that_reads_small_goes_into_the_prompt() {
    let command = "for i in $(seq 1 8000); do printf '\\rprogress %d' $i; done; echo";
    let server = ScriptedServer::start(vec![
        Reply::tool("bar", "bash", json!({ "command": command }).to_string()),
        Reply::text("done"),
    ])
    .await;
    let mut agent = Harness::start(test_config(Provider::Anthropic, &server));
    agent.turn("go").await;
    let result = last_result(&server.requests()[1]);
    assert_eq!(result, "progress 8000\n[exit code: 0]");
    let folder = agent.data.join("results/unrecorded");
    let left = std::fs::read_dir(&folder).map_or(0, |entries| entries.count());
    assert_eq!(left, 0, "no file stays");
}

/// A background job's output is saved whole too: a read of it that cannot show
/// everything names the file, and the model finds a line from the middle there.
#[tokio::test]
async fn the_model_finds_a_line_in_the_middle_of_a_background_jobs_output() {
    let command = "seq 1 200000; echo 'the job says 51c0-ffee'; seq 200001 400000";
    let server = ScriptedServer::start(Vec::new()).await;
    let mut agent = Harness::start(test_config(Provider::Anthropic, &server));
    let path = agent
        .data
        .join("results/unrecorded/call_job.txt")
        .display()
        .to_string();
    server.push(Reply::tool(
        "call_job",
        "bash",
        json!({ "command": command, "run_in_background": true }).to_string(),
    ));
    // Time for the job to finish: its whole output is on disk when it ends.
    server.push(Reply::tool(
        "call_wait",
        "bash",
        json!({ "command": "sleep 2" }).to_string(),
    ));
    server.push(Reply::tool(
        "call_read",
        "bash_output",
        json!({ "bash_id": "bash_1" }).to_string(),
    ));
    server.push(Reply::tool(
        "call_grep",
        "bash",
        json!({ "command": format!("grep -n 'job says' '{path}'") }).to_string(),
    ));
    server.push(Reply::text("It says 51c0-ffee."));
    let events = agent.turn("what does the job say?").await;
    assert_eq!(
        events.last(),
        Some(&Event::TurnComplete {
            text: "It says 51c0-ffee.".into()
        })
    );
    let requests = server.requests();
    assert_eq!(requests.len(), 5);
    // The read was bounded and named the file; the middle was not in it.
    let read = last_result(&requests[3]);
    assert!(
        read.starts_with(
            "[job bash_1: exited 0]\n[not all of this read is shown; everything the job printed is saved in "
        ),
        "{}",
        &read[..200.min(read.len())]
    );
    assert!(read.contains(&path), "{}", &read[..300.min(read.len())]);
    assert!(!read.contains("job says"), "the read shows the middle");
    assert!(read.len() < 3_000, "{} bytes reached the model", read.len());
    assert_eq!(
        last_result(&requests[4]),
        "200001:the job says 51c0-ffee\n[exit code: 0]"
    );
}

/// The input a request's tool call `id` carries, as sent.
fn call_input(request: &RecordedRequest, id: &str) -> serde_json::Value {
    let messages = request.body["messages"].as_array().unwrap();
    messages
        .iter()
        .filter_map(|m| m["content"].as_array())
        .flatten()
        .find(|block| block["type"] == "tool_use" && block["id"] == id)
        .map(|block| block["input"].clone())
        .unwrap_or_else(|| panic!("no call {id} in the request"))
}

/// Text of `bytes` bytes in numbered lines (none alike, so it counts as a model's own
/// prose would, about five bytes a token).
fn written_text(bytes: usize) -> String {
    let mut text = String::with_capacity(bytes + 64);
    let mut n = 0;
    while text.len() < bytes {
        n += 1;
        text.push_str(&format!(
            "row {n}: the value of entry {n} is {}\n",
            n * 7919 % 10_007
        ));
    }
    text
}

/// A reply calling `name` with `arguments` streamed in 64 KB pieces (as a fast provider
/// would: the script's usual 8-character pieces make a 3 MB call take minutes in a debug
/// build).
fn large_call(id: &str, name: &str, arguments: &str) -> Reply {
    let events = support::wire::anthropic_events(&Turn::tool(id, name, ""), "scripted-model", 0);
    let mut out = Vec::new();
    for event in events {
        if event.contains("\"input_json_delta\"") {
            continue;
        }
        let stop = event.starts_with("event: content_block_stop");
        if stop {
            let mut rest = arguments;
            while !rest.is_empty() {
                let mut cut = rest.len().min(64 << 10);
                while !rest.is_char_boundary(cut) {
                    cut -= 1;
                }
                let delta = json!({"type": "content_block_delta", "index": 0,
                    "delta": {"type": "input_json_delta", "partial_json": &rest[..cut]}});
                out.push(format!("event: content_block_delta\ndata: {delta}\n\n"));
                rest = &rest[cut..];
            }
        }
        out.push(event);
    }
    Reply::Events(out)
}

/// Issue 26 point 5: a model's own large argument (a 400 KB and a 3 MB `write_file`) does
/// not end the session: once the call ran, its request shows the argument as a stub
/// saying what it was and the saved file that holds it, and the turns go on.
#[tokio::test]
async fn a_calls_large_argument_is_shown_as_a_stub_once_it_ran_and_the_session_goes_on() {
    let big = written_text(400_000);
    let huge = written_text(3_000_000);
    let server = ScriptedServer::start(vec![
        large_call(
            "write_big",
            "write_file",
            &json!({"path": "big.txt", "content": big}).to_string(),
        ),
        large_call(
            "write_huge",
            "write_file",
            &json!({"path": "huge.txt", "content": huge}).to_string(),
        ),
        Reply::text("Both written."),
        Reply::tool("count", "bash", json!({"command": "wc -l huge.txt"}).to_string()),
        Reply::text("Still here."),
    ])
    .await;
    let mut agent = Harness::start(test_config(Provider::Anthropic, &server));
    let events = agent.turn("Write the two tables.").await;
    assert_eq!(
        events.last(),
        Some(&Event::TurnComplete {
            text: "Both written.".into()
        })
    );
    let events = agent.turn("How many rows has the large one?").await;
    assert_eq!(
        events.last(),
        Some(&Event::TurnComplete {
            text: "Still here.".into()
        })
    );
    // The gauge takes the stub in at once: it never shows a prompt the model is not sent
    // for longer than the reply is running.
    for id in ["write_big", "write_huge"] {
        let finished = agent
            .events
            .iter()
            .position(|e| matches!(e, Event::ToolCallFinished { id: done, .. } if done == id))
            .unwrap();
        let gauge = agent.events[finished..].iter().find_map(|e| match e {
            Event::TokenUsage { context_tokens, .. } => Some(*context_tokens),
            _ => None,
        });
        assert!(gauge.is_some_and(|tokens| tokens < 10_000), "{id}: {gauge:?}");
        // Nor while the call waits (for approval, or to run): the reply's whole argument
        // is never sent again, so the gauge counts the stub it becomes (about the same
        // as once it is one: the saved file's name differs) rather than 58k of 80k for
        // 400 KB and 759k for 3 MB.
        let requested = agent
            .events
            .iter()
            .position(|e| {
                matches!(e, Event::AssistantMessage { tool_calls, .. }
                    if tool_calls.iter().any(|call| call.id == id))
            })
            .unwrap();
        let waiting = agent.events[requested..finished].iter().find_map(|e| match e {
            Event::TokenUsage { context_tokens, .. } => Some(*context_tokens),
            _ => None,
        });
        let (waiting, gauge) = (waiting.unwrap(), gauge.unwrap());
        assert!(
            waiting.abs_diff(gauge) < 100,
            "{id}: {waiting} waiting, {gauge} after"
        );
    }
    assert_eq!(
        std::fs::read_to_string(agent.workspace.join("big.txt")).unwrap(),
        big
    );
    assert_eq!(
        std::fs::read_to_string(agent.workspace.join("huge.txt")).unwrap(),
        huge
    );
    let requests = server.requests();
    assert_eq!(requests.len(), 5);
    let saved = |id: &str| agent.data.join(format!("results/unrecorded/{id}-argument-1.txt"));
    let stub = |text: &str, id: &str| {
        let path = saved(id).display().to_string();
        format!(
            "[argument omitted to save context: {} bytes, {} lines; saved whole in {path}: read it with read_file {{\"path\": {}, \"offset\": LINE, \"limit\": LINES}}]",
            text.len(),
            text.lines().count(),
            serde_json::Value::String(path.clone())
        )
    };
    let big_stub = json!({"path": "big.txt", "content": stub(&big, "write_big")});
    let huge_stub = json!({"path": "huge.txt", "content": stub(&huge, "write_huge")});
    // Every request after a call ran shows its argument as the stub, never whole.
    for request in &requests[1..] {
        assert_eq!(call_input(request, "write_big"), big_stub);
        assert!(
            request.body.to_string().len() < 60_000,
            "a request of {} bytes",
            request.body.to_string().len()
        );
    }
    for request in &requests[2..] {
        assert_eq!(call_input(request, "write_huge"), huge_stub);
    }
    // The saved files hold the arguments as the model wrote them.
    assert_eq!(std::fs::read_to_string(saved("write_big")).unwrap(), big);
    assert_eq!(std::fs::read_to_string(saved("write_huge")).unwrap(), huge);
    assert!(last_result(&requests[4]).contains("huge.txt"));
}

/// Point 5, tried on a case the fix was not written for: a session recorded before
/// arguments were stubbed (its log holds the 400 KB argument whole, and no stub) is
/// resumed with `exec --resume`, and its next turn is sent with the argument stubbed.
#[test]
fn a_resumed_session_whose_log_holds_a_large_argument_goes_on() {
    use support::cli::{exec, session_id, session_logs, text};
    let big = written_text(400_000);
    let server = ScriptedServer::start_blocking(vec![
        large_call(
            "write_big",
            "write_file",
            &json!({"path": "big.txt", "content": big}).to_string(),
        ),
        Reply::text("Written."),
        Reply::text("Still here."),
    ]);
    let (home, workspace) = (TempDir::new(), TempDir::new());
    let first = exec(&home, &workspace, &server, &["Write the table."]);
    assert_eq!(first.status.code(), Some(0), "{}", text(&first.stderr));
    // The log as an earlier version wrote it: without the records that hold the stub.
    let log = session_logs(&home)[0].clone();
    let kept: String = std::fs::read_to_string(&log)
        .unwrap()
        .lines()
        .filter(|line| !line.contains("[argument omitted to save context"))
        .map(|line| format!("{line}\n"))
        .collect();
    let escaped = serde_json::to_string(&big[..1000]).unwrap();
    assert!(
        kept.contains(escaped.trim_matches('"')),
        "the log holds the argument whole"
    );
    std::fs::write(&log, kept).unwrap();
    let id = session_id(&log);
    let second = exec(&home, &workspace, &server, &["--resume", &id, "Go on."]);
    assert_eq!(second.status.code(), Some(0), "{}", text(&second.stderr));
    assert_eq!(text(&second.stdout), "Still here.\n");
    let last = server.requests().pop().unwrap();
    let content = call_input(&last, "write_big")["content"]
        .as_str()
        .unwrap()
        .to_string();
    let prefix = format!(
        "[argument omitted to save context: {} bytes, {} lines; saved whole in {}",
        big.len(),
        big.lines().count(),
        home.join(format!("results/{id}/write_big-argument-1")).display()
    );
    assert!(content.starts_with(&prefix), "{content}");
    assert!(last.body.to_string().len() < 20_000);
}
