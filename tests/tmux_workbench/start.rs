//! How the workbench starts from the command line: a prompt as the first message,
//! `--continue`, text piped in, and where it cannot be drawn at all.

use super::*;

/// Types `command` at the shell prompt (`$ `) with miniagent's folders in `home`.
fn shell(tmux: &Tmux, home: &TempDir, command: &str) {
    tmux.send(&format!(
        "MINIAGENT_CONFIG_DIR={home} MINIAGENT_LOG_DIR={home} MINIAGENT_DATA_DIR={home} MINIAGENT_API_KEY={TEST_KEY} {command}",
        home = shell_quote(home.path().to_str().unwrap()),
    ));
}

/// A tmux window in `workspace` whose shell's prompt is a bare `$ `.
fn plain_shell(workspace: &TempDir) -> Tmux {
    let tmux = Tmux::start(workspace);
    tmux.send("export PS1='$ '");
    tmux
}

/// The command that runs miniagent against `server`'s scripted model, quoted for the shell.
fn binary_against(server: &ScriptedServer) -> String {
    format!(
        "{} --base-url {} --model scripted-model",
        shell_quote(env!("CARGO_BIN_EXE_miniagent")),
        server.anthropic_base_url()
    )
}

/// The user messages of a request to the Anthropic endpoint.
fn user_texts(request: &RecordedRequest) -> Vec<String> {
    request.body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["role"] == "user")
        .map(|m| match m["content"].as_str() {
            Some(text) => text.to_string(),
            None => m["content"][0]["text"].as_str().unwrap_or_default().to_string(),
        })
        .collect()
}

/// The screen with wrapped lines joined, once a line starts with `exit=`.
fn joined_after_exit(tmux: &Tmux) -> String {
    tmux.wait_for("the exit status", |s| s.lines().any(|l| l.starts_with("exit=")));
    let output = tmux
        .run(&["capture-pane", "-p", "-J", "-t", "main"])
        .0
        .output()
        .expect("tmux runs");
    String::from_utf8_lossy(&output.stdout).into_owned()
}

/// Clears the shell's screen, and waits until it is.
fn clear(tmux: &Tmux) {
    tmux.ok(&["send-keys", "-t", "main", "clear", "Enter"]);
    tmux.wait_for("a clear screen", |s| s.trim() == "$");
}

fn quit_to_shell(tmux: &Tmux) {
    tmux.quit_with_ctrl_d();
    clear(tmux);
}

/// `miniagent "fix the tests"` opens the workbench and sends it; `--continue "…"` takes
/// up that session and sends the next; text piped in is the first message (after the
/// prompt given), while keys still come from the terminal.
#[test]
fn a_prompt_continue_and_piped_text_start_the_workbench_in_tmux() {
    let server = ScriptedServer::start_blocking(vec![
        Reply::text("Fixed them."),
        Reply::text("Continued."),
        Reply::text("Reviewed the diff."),
        Reply::text("Typed one answered."),
    ]);
    let workspace = TempDir::new();
    let home = TempDir::new();
    let tmux = plain_shell(&workspace);
    let binary = binary_against(&server);

    shell(&tmux, &home, &format!("{binary} 'fix the tests'"));
    let screen = tmux.wait_for_text("Fixed them.");
    assert!(screen.contains("fix the tests"), "{screen}");
    assert_eq!(user_texts(&server.requests()[0]), vec!["fix the tests"]);
    quit_to_shell(&tmux);

    shell(&tmux, &home, &format!("{binary} --continue 'and now?'"));
    let screen = tmux.wait_for_text("Continued.");
    assert!(screen.contains("Fixed them."), "the session came back: {screen}");
    assert_eq!(
        user_texts(&server.requests()[1]),
        vec!["fix the tests", "and now?"]
    );
    quit_to_shell(&tmux);
    assert_eq!(support::cli::session_logs(&home).len(), 1);

    shell(
        &tmux,
        &home,
        &format!("printf 'line one\\nline two\\n' | {binary} 'review this'"),
    );
    tmux.wait_for_text("Reviewed the diff.");
    assert_eq!(
        user_texts(&server.requests()[2]),
        vec!["review this\n\nline one\nline two"]
    );
    // Keys are read from the terminal, not the pipe.
    tmux.send("typed one");
    tmux.wait_for_text("Typed one answered.");
    assert_eq!(
        user_texts(&server.requests()[3]),
        vec!["review this\n\nline one\nline two", "typed one"]
    );
    quit_to_shell(&tmux);
}

/// Where the workbench cannot be drawn it says so at once, before writing anything to
/// the terminal or the file, and names `exec`: standard output redirected, no terminal
/// at all, and TERM=dumb.
#[test]
fn the_workbench_says_at_once_when_it_cannot_draw_in_tmux() {
    let workspace = TempDir::new();
    let home = TempDir::new();
    let tmux = plain_shell(&workspace);
    let binary = shell_quote(env!("CARGO_BIN_EXE_miniagent"));
    let out = workspace.join("out.txt");
    let started = Instant::now();
    shell(
        &tmux,
        &home,
        &format!("{binary} > {}; echo exit=$?", shell_quote(out.to_str().unwrap())),
    );
    let screen = joined_after_exit(&tmux);
    assert!(started.elapsed() < Duration::from_secs(3), "at once");
    assert!(
        screen.contains("miniagent: the workbench needs a terminal, and standard output is not one (it goes to a file or a pipe); to run without it: miniagent exec \"PROMPT\"\nexit=1"),
        "{screen}"
    );
    assert_eq!(std::fs::read(&out).unwrap(), b"", "nothing written to the file");
    clear(&tmux);

    shell(&tmux, &home, &format!("TERM=dumb {binary}; echo exit=$?"));
    let screen = joined_after_exit(&tmux);
    assert!(
        screen.contains("miniagent: the workbench needs a terminal that can draw a full screen, and this one says it cannot (TERM=dumb); to run without it: miniagent exec \"PROMPT\"\nexit=1"),
        "{screen}"
    );
    // Cleared before the next command: its `exit=` line must not be the one above.
    clear(&tmux);

    // A message given to --resume is taken as the id: what to type instead.
    shell(
        &tmux,
        &home,
        &format!("{binary} --resume 'fix the tests'; echo exit=$?"),
    );
    let screen = joined_after_exit(&tmux);
    assert!(
        screen.contains(&format!("miniagent: no session `fix the tests` in {}/sessions; `miniagent sessions list` shows them; --resume takes a session id, and to continue this workspace's newest session with a first message: miniagent --continue \"fix the tests\"\nexit=1", home.path().display())),
        "{screen}"
    );
    clear(&tmux);

    // No controlling terminal and standard input not one: no keys can be read.
    shell(
        &tmux,
        &home,
        &format!("setsid -w {binary} < /dev/null; echo exit=$?"),
    );
    let screen = joined_after_exit(&tmux);
    assert!(
        screen.contains("miniagent: the workbench needs a terminal, and this process has none (No such device or address (os error 6)); to run without it: miniagent exec \"PROMPT\"\nexit=1"),
        "{screen}"
    );
}

/// A pipe that stays open holds the workbench back: after a second it says what it waits
/// for (before, nothing was on screen), and opens once the pipe ends.
#[test]
fn a_pipe_that_stays_open_is_said_in_tmux() {
    let server = ScriptedServer::start_blocking(vec![Reply::text("Read it.")]);
    let workspace = TempDir::new();
    let home = TempDir::new();
    let tmux = plain_shell(&workspace);
    let binary = binary_against(&server);
    // The text, then four seconds before the pipe ends.
    tmux.send(&format!(
        "(echo late text; sleep 4) | MINIAGENT_CONFIG_DIR={home} MINIAGENT_LOG_DIR={home} MINIAGENT_DATA_DIR={home} MINIAGENT_API_KEY={TEST_KEY} {binary} 'read this'",
        home = shell_quote(home.path().to_str().unwrap()),
    ));
    tmux.wait_for_text(
        "miniagent: waiting for the text piped in to end (it becomes the first message; Ctrl-C stops)",
    );
    tmux.wait_for_text("Read it.");
    assert_eq!(user_texts(&server.requests()[0]), vec!["read this\n\nlate text"]);
    quit_to_shell(&tmux);
}
