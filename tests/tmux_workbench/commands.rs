//! A prompt command of the person's own on the real binary: `/git:co`, Tab, its
//! arguments, Enter, typed key by key and in one burst; the instruction file named in the
//! first lines; and what reached the model.

use super::*;
use pretty_assertions::assert_eq;

/// The text of the newest user message of `request`.
fn last_user_text(request: &RecordedRequest) -> String {
    let messages = request.body["messages"].as_array().cloned().unwrap_or_default();
    let last = messages
        .iter()
        .rev()
        .find(|m| m["role"] == "user")
        .cloned()
        .unwrap_or_default();
    match &last["content"] {
        serde_json::Value::String(text) => text.clone(),
        serde_json::Value::Array(blocks) => blocks.iter().filter_map(|b| b["text"].as_str()).collect(),
        _ => String::new(),
    }
}

#[test]
fn a_prompt_command_completes_and_runs_in_tmux() {
    let server = ScriptedServer::start_blocking(vec![
        Reply::text("First commit made."),
        Reply::text("Second commit made."),
    ]);
    let (workspace, home) = (TempDir::new(), TempDir::new());
    home.write("AGENTS.md", "Keep answers short.\n");
    home.write(
        "commands/git/commit.md",
        "---\ndescription: Commit the staged work\nargument-hint: MESSAGE\n---\nCommit with the message \"$1\" ($ARGUMENTS).\n",
    );
    let tmux = Tmux::start(&workspace);
    launch(&tmux, &home, &server, "");
    let first = tmux.wait_for_text("instructions:");
    assert!(first.contains("AGENTS.md"), "{first}");
    // Key by key: the popup offers it, Tab takes it and leaves room for the arguments.
    tmux.type_text("/git:co");
    tmux.wait_for_text("Commit the staged work");
    tmux.keys(&["Tab"]);
    tmux.wait_for("the completed name", |s| {
        s.contains("/git:commit") && !s.contains("Commit the staged work")
    });
    tmux.type_text("'fix the parser' now");
    tmux.keys(&["Enter"]);
    tmux.wait_for_text("First commit made.");
    tmux.wait_for_text("ready");
    // The same in one burst, as a person types it.
    tmux.keys(&["/git:co", "Tab", "tidy up", "Enter"]);
    tmux.wait_for_text("Second commit made.");
    let requests = server.requests();
    assert_eq!(requests.len(), 2);
    assert_eq!(
        last_user_text(&requests[0]),
        "Commit with the message \"fix the parser\" ('fix the parser' now)."
    );
    assert_eq!(
        last_user_text(&requests[1]),
        "Commit with the message \"tidy\" (tidy up)."
    );
    let system = &requests[0].body["system"];
    let system = match system {
        serde_json::Value::String(text) => text.clone(),
        other => other
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|b| b["text"].as_str())
            .collect(),
    };
    assert!(system.contains("\n\nKeep answers short.\n"), "{system}");
    tmux.quit_with_ctrl_d();
}
