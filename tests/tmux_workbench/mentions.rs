//! The `@` file picker on the real binary: typed slowly and in one burst, Tab takes the
//! file, and the scripted model receives the file's text with the message.

use super::*;

/// The content blocks of the first user message of `request`.
fn first_user_blocks(request: &RecordedRequest) -> Vec<String> {
    request.body["messages"][0]["content"]
        .as_array()
        .unwrap()
        .iter()
        .map(|block| block["text"].as_str().unwrap_or_default().to_string())
        .collect()
}

fn workspace_with_sources() -> TempDir {
    let workspace = TempDir::new();
    workspace.write("src/main.rs", "fn main() {}\n");
    workspace.write("src/cmd/mail.rs", "// mail\n");
    workspace.write("README.md", "# demo\n");
    workspace
}

const MAIN_BLOCK: &str = "\n\n<file path=\"src/main.rs\" lines=\"1\">\nfn main() {}\n</file>";

#[test]
fn at_opens_the_file_picker_and_tab_takes_the_file_the_model_then_receives_in_tmux() {
    let server = ScriptedServer::start_blocking(vec![Reply::text("answer-one"), Reply::text("answer-two")]);
    let (workspace, home) = (workspace_with_sources(), TempDir::new());
    let tmux = Tmux::start(&workspace);
    tmux.ok(&["resize-window", "-t", "main", "-x", "80", "-y", "24"]);
    launch(&tmux, &home, &server, "");
    tmux.wait_for_text("Conversation");
    // One key at a time: the picker opens at the `@` and narrows as the path is typed.
    tmux.type_text("explain @");
    tmux.wait_for_text("Files · Tab/Enter takes");
    tmux.type_text("src/ma");
    let screen = tmux.wait_for("the picker narrowed", |s| s.contains("2 of 3 files"));
    let main_row = screen.lines().position(|l| l.contains("┃src/main.rs"));
    let mail_row = screen.lines().position(|l| l.contains("┃src/cmd/mail.rs"));
    assert!(main_row.is_some() && main_row < mail_row, "{screen}");
    tmux.keys(&["Tab"]);
    tmux.wait_for("the picker closed", |s| !s.contains("Files · Tab"));
    tmux.send("now");
    tmux.wait_for_text("answer-one");
    tmux.wait_for_text("📎 src/main.rs (1 line)");
    assert_eq!(
        first_user_blocks(&server.requests()[0]),
        vec!["explain @src/main.rs now".to_string(), MAIN_BLOCK.to_string()]
    );
    tmux.wait_for_text("ready");
    tmux.quit_with_ctrl_d();
}

/// The same keys in one burst on a fresh workbench: Tab may arrive before the listing
/// (started by the `@` of the same burst) had a moment.
#[test]
fn the_picker_takes_a_file_from_keys_typed_in_one_burst_in_tmux() {
    let server = ScriptedServer::start_blocking(vec![Reply::text("answer-burst")]);
    let (workspace, home) = (workspace_with_sources(), TempDir::new());
    let tmux = Tmux::start(&workspace);
    tmux.ok(&["resize-window", "-t", "main", "-x", "80", "-y", "24"]);
    launch(&tmux, &home, &server, "");
    tmux.wait_for_text("Conversation");
    tmux.keys(&["again @src/ma", "Tab", "please", "Enter"]);
    tmux.wait_for_text("answer-burst");
    assert_eq!(
        first_user_blocks(&server.requests()[0]),
        vec!["again @src/main.rs please".to_string(), MAIN_BLOCK.to_string()]
    );
    tmux.quit_with_ctrl_d();
}

#[test]
fn esc_closes_the_picker_and_keeps_the_text_in_tmux() {
    let server = ScriptedServer::start_blocking(vec![Reply::text("plain-answer")]);
    let (workspace, home) = (workspace_with_sources(), TempDir::new());
    let tmux = Tmux::start(&workspace);
    launch(&tmux, &home, &server, "");
    tmux.wait_for_text("Conversation");
    tmux.type_text("mail me@home and @READ");
    tmux.wait_for_text("Files · Tab/Enter takes");
    tmux.keys(&["Escape"]);
    tmux.wait_for("the picker closed", |s| !s.contains("Files · Tab"));
    tmux.keys(&["Enter"]);
    tmux.wait_for_text("plain-answer");
    // README.md was named only in part: nothing is attached.
    assert_eq!(
        first_user_blocks(&server.requests()[0]),
        vec!["mail me@home and @READ".to_string()]
    );
    tmux.quit_with_ctrl_d();
}
