//! What the real binary writes outside the workbench, read back from a pseudo-terminal:
//! hostile text from the model, tools, MCP servers, providers and session logs reaches
//! it with every escape sequence and control character removed and its visible text
//! kept; `--json` carries the raw text only in escaped form. Also: a reader that went
//! away (`| head -1`) ends the run quietly instead of with a panic.
#![allow(clippy::unwrap_used, clippy::expect_used)] // A test fails by panicking.

use crate::support;

use std::io::Read;
use std::os::fd::{FromRawFd, OwnedFd};
use std::process::{Command, ExitStatus, Stdio};
use std::sync::mpsc;
use std::time::Duration;

use support::cli::{against, exec_command, miniagent, session_logs};
use support::skip;
use support::*;

/// Every kind of sequence a terminal acts on, with the letters of `VISIBLE` between
/// them: OSC 0 (title, BEL), OSC 52 (clipboard, ST), CSI 2J, a DCS, C1 CSI and OSC, a
/// bell, a backspace, a carriage return, a bidi override, and an OSC 52 never ended.
const HOSTILE: &str = concat!(
    "V\x1b]0;owned title\x07",
    "I\x1b]52;c;cm0gLXJmIH4=\x1b\\",
    "S\x1b[2J\x1b[H",
    "I\x1bP+q544e\x1b\\",
    "B\u{9b}31m",
    "L\u{9d}0;c1 title\u{9c}",
    "E\x07\x08\r\u{202e}",
    "\x1b]52;c;cHduZWQ=",
);
const VISIBLE: &str = "VISIBLE";

/// How `exec` (and `replay --headless`) show the hostile turn's calls: the escapes in a
/// name and its arguments made visible (so no name passes for another), cut short.
const BASH_LINE: &str =
    "✗ bash printf '%s' 'V␛]0;owned title␇I␛]52;c;cm0gLXJmIH4=␛\\S␛[2J␛[HI␛P+q544e␛\\B<U+009B… (";
const TOOL_LINE: &str = "✗ toolV␛]0;owned title␇I␛]52;c;cm0gLXJmIH4=␛\\S␛[2J␛[HI␛P+q544e␛\\B… V␛]0;owned title␇I␛]52;c;cm0gLXJmIH4=␛\\S␛[2J␛[HI␛P+q544e␛\\B<U+009B>31mL<U+009D>… (0 ms) — unknown tool `tool";

/// Runs `command` with stdout and stderr on a new pseudo-terminal and returns its exit
/// status and every byte the terminal received; `None` (the skip reported, [`skip`])
/// where the system offers no pseudo-terminals.
fn on_pty(mut command: Command) -> Option<(ExitStatus, Vec<u8>)> {
    let (mut master, slave) = {
        let mut master = -1;
        let mut slave = -1;
        // SAFETY: openpty writes two descriptors we then own; the name, termios and
        // window-size arguments may be null.
        let opened = unsafe {
            libc::openpty(
                &mut master,
                &mut slave,
                std::ptr::null_mut(),
                std::ptr::null(),
                std::ptr::null(),
            )
        };
        if opened != 0 {
            skip::missing("pty", format!("openpty: {}", std::io::Error::last_os_error()));
            return None;
        }
        // SAFETY: both descriptors were just opened and nothing else owns them.
        unsafe {
            (
                std::fs::File::from(OwnedFd::from_raw_fd(master)),
                OwnedFd::from_raw_fd(slave),
            )
        }
    };
    command
        .stdout(Stdio::from(slave.try_clone().unwrap()))
        .stderr(Stdio::from(slave))
        .stdin(Stdio::null());
    let mut child = command.spawn().expect("miniagent starts");
    // The parent's copies of the terminal's side close with the command, so the reader
    // sees the end once the child and everything it started are gone.
    drop(command);
    let (sender, chunks) = mpsc::channel();
    std::thread::spawn(move || {
        let mut buffer = [0u8; 4096];
        // Linux answers EIO once the last holder of the other side has closed it.
        while let Ok(n @ 1..) = master.read(&mut buffer) {
            if sender.send(buffer[..n].to_vec()).is_err() {
                break;
            }
        }
    });
    let status = child.wait().unwrap();
    let mut bytes = Vec::new();
    while let Ok(chunk) = chunks.recv_timeout(Duration::from_secs(5)) {
        bytes.extend(chunk);
    }
    Some((status, bytes))
}

/// Fails if `bytes` hold an escape, a C1 control, or any C0 control but the line ends
/// and tabs a terminal needs (the terminal itself turns `\n` into `\r\n`); `own` lists
/// the colour sequences miniagent itself writes, removed first.
fn assert_inert(bytes: &[u8], own: &[&str], what: &str) -> String {
    let mut text = String::from_utf8_lossy(bytes).into_owned();
    for sequence in own {
        text = text.replace(sequence, "");
    }
    let bad: Vec<(usize, char)> = text
        .char_indices()
        .filter(|&(_, c)| (c.is_control() && !matches!(c, '\n' | '\r' | '\t')) || is_bidi_control(c))
        .collect();
    assert!(
        bad.is_empty(),
        "{what}: controls {bad:?} reached the terminal in {text:?}"
    );
    // Bytes too: a lone 0x9b, not UTF-8, is CSI to some terminals.
    assert!(std::str::from_utf8(bytes).is_ok(), "{what}: not UTF-8: {bytes:?}");
    text.replace('\r', "")
}

fn is_bidi_control(c: char) -> bool {
    matches!(c, '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}')
}

/// The colour `exec` dims progress with when it writes to a terminal.
const DIM: [&str; 2] = ["\x1b[2m", "\x1b[0m"];

/// One turn whose every part is hostile: thinking, text beside a call, the call's
/// arguments, a failing command's output, a tool name no tool has, and the answer.
fn hostile_turn() -> Vec<Reply> {
    let command = serde_json::json!({ "command": format!("printf '%s' '{HOSTILE}'; exit 3") });
    let arguments = serde_json::json!({ "command": HOSTILE });
    vec![
        Reply::Stream(
            Turn::new()
                .thinking(format!("thinking {HOSTILE}"), "sig")
                .with_text(format!("beside {HOSTILE}"))
                .with_tool("t1", "bash", command.to_string())
                .with_tool("t2", format!("tool{HOSTILE}"), arguments.to_string()),
        ),
        Reply::text(format!("answer {HOSTILE}")),
    ]
}

#[test]
fn exec_progress_and_answer_reach_a_terminal_without_escapes() {
    let server = ScriptedServer::start_blocking(hostile_turn());
    let (home, workspace) = (TempDir::new(), TempDir::new());
    let Some((status, bytes)) = on_pty(exec_command(&home, &workspace, &server, &["go"])) else {
        return;
    };
    let text = assert_inert(&bytes, &DIM, "exec");
    assert!(status.success(), "{status}: {text}");
    for shown in [
        format!("thinking {VISIBLE}"),
        format!("beside {VISIBLE}"),
        // A call's name and arguments show their escapes as what they are, inert.
        BASH_LINE.to_string(),
        TOOL_LINE.to_string(),
        format!("answer {VISIBLE}\n"),
    ] {
        assert!(text.contains(&shown), "{shown:?} missing from {text:?}");
    }
}

#[test]
fn a_provider_error_body_reaches_a_terminal_without_escapes() {
    let server = ScriptedServer::start_blocking(vec![Reply::status(400, format!("body {HOSTILE}"))]);
    let (home, workspace) = (TempDir::new(), TempDir::new());
    let mut command = exec_command(&home, &workspace, &server, &["go"]);
    command.env("NO_COLOR", "1");
    let Some((status, bytes)) = on_pty(command) else {
        return;
    };
    let text = assert_inert(&bytes, &[], "provider error");
    assert_eq!(status.code(), Some(1), "{text}");
    assert!(
        text.contains(&format!(
            "error: the model call failed: HTTP 400 from the provider: body {VISIBLE}"
        )),
        "{text:?}"
    );
}

#[test]
fn mcp_server_names_and_stderr_reach_neither_the_terminal_nor_the_log_raw() {
    // The reply takes seconds (its events 700 ms apart), so the server's failure is
    // reported before the turn ends.
    let server = ScriptedServer::start_blocking(vec![Reply::slow(Turn::text("done"), 700)]);
    let (home, workspace) = (TempDir::new(), TempDir::new());
    // The server's stderr line, as printf's format: octal escapes for the controls. It
    // waits before it exits so the line is read before the failure is reported.
    let printed = "boot\\033]52;c;cm0gLXJmIH4=\\007 failed\\033[2J\\n";
    let config = serde_json::json!({ "mcpServers": { format!("srv{HOSTILE}"): {
        "command": "sh",
        "args": ["-c", format!("printf '{printed}' >&2; sleep 1; exit 3")],
        "connect_timeout": 10,
    }}});
    let mcp_file = home.join("servers.json");
    std::fs::write(&mcp_file, config.to_string()).unwrap();
    let mut command = exec_command(&home, &workspace, &server, &["go"]);
    command.arg("--mcp-config").arg(&mcp_file);
    let Some((status, bytes)) = on_pty(command) else {
        return;
    };
    let text = assert_inert(&bytes, &DIM, "mcp");
    assert!(status.success(), "{status}: {text}");
    // The name, cleaned on its own, cannot hide the rest of its line.
    assert!(text.contains(&format!("mcp: srv{VISIBLE} failed: ")), "{text:?}");
    assert!(
        text.contains("boot failed"),
        "the stderr tail is quoted: {text:?}"
    );
    let log = std::fs::read(home.join("mcp.log")).expect("mcp.log written");
    let log = assert_inert(&log, &[], "mcp.log");
    assert!(log.contains(&format!("[srv{VISIBLE}] boot failed")), "{log:?}");
}

#[test]
fn sessions_show_export_list_and_headless_replay_reach_a_terminal_without_escapes() {
    let server = ScriptedServer::start_blocking(hostile_turn());
    let (home, workspace) = (TempDir::new(), TempDir::new());
    let mut command = exec_command(&home, &workspace, &server, &[&format!("prompt {HOSTILE}")]);
    command.env("NO_COLOR", "1");
    let Some((status, _)) = on_pty(command) else {
        return;
    };
    assert!(status.success());
    let log = session_logs(&home).pop().expect("a session log");
    let log = log.to_str().unwrap();
    let run = |args: &[&str]| {
        let mut command = miniagent(&home);
        command.args(args);
        let (status, bytes) = on_pty(command).expect("a pseudo-terminal, as for the first run");
        let text = assert_inert(&bytes, &DIM, &args.join(" "));
        assert!(status.success(), "{args:?}: {status}: {text}");
        text
    };
    let shown = run(&["sessions", "show", log]);
    let markdown = run(&["sessions", "export", log, "--format", "md"]);
    let replayed = run(&["replay", "--headless", log]);
    for (what, text) in [("show", &shown), ("md", &markdown), ("replay", &replayed)] {
        for visible in [format!("answer {VISIBLE}"), format!("prompt {VISIBLE}")] {
            assert!(
                text.contains(&visible),
                "{what}: {visible:?} missing from {text:?}"
            );
        }
    }
    assert!(replayed.contains(&format!("thinking {VISIBLE}")), "{replayed:?}");
    // A tool name or arguments left unfinished cannot hide the rest of their line.
    assert!(
        shown.contains(&format!("✗ tool{VISIBLE} {VISIBLE} (error")),
        "{shown:?}"
    );
    assert!(
        replayed.contains(BASH_LINE) && replayed.contains(TOOL_LINE),
        "{replayed:?}"
    );
    assert!(
        markdown.contains(&format!("🔧 tool{VISIBLE} — {VISIBLE} (error")),
        "{markdown:?}"
    );
    let listed = run(&["sessions", "list"]);
    assert!(listed.contains(&format!("prompt {VISIBLE}")), "{listed:?}");
    // JSON keeps the text, every control escaped, so it is inert on a terminal too.
    let json = run(&["sessions", "export", log, "--format", "json"]);
    assert!(json.contains("\\u001b]52;c;cm0gLXJmIH4="), "{json:?}");
    assert!(json.contains("\\u009b31m"), "{json:?}");
    assert!(json.contains("\\u202e"), "{json:?}");
}

#[test]
fn exec_json_escapes_every_control_it_carries() {
    let server = ScriptedServer::start_blocking(hostile_turn());
    let (home, workspace) = (TempDir::new(), TempDir::new());
    let Some((status, bytes)) = on_pty(exec_command(&home, &workspace, &server, &["--json", "go"])) else {
        return;
    };
    let text = assert_inert(&bytes, &[], "exec --json");
    assert!(status.success(), "{status}: {text}");
    let answer = text
        .lines()
        .filter_map(|line| serde_json::from_str::<serde_json::Value>(line).ok())
        .find(|event| event["type"] == "turn_complete")
        .unwrap_or_else(|| panic!("no turn_complete in {text:?}"));
    assert_eq!(
        answer["text"],
        format!("answer {HOSTILE}"),
        "JSON carries the raw text"
    );
}

/// A pipe whose reading end is already closed, as `| head -1` leaves it once it has
/// its line: every write to the other end fails with EPIPE.
fn closed_pipe() -> Stdio {
    let (reader, writer) = std::io::pipe().unwrap();
    drop(reader);
    Stdio::from(writer)
}

#[test]
fn a_closed_pipe_ends_exec_quietly() {
    let server = ScriptedServer::start_blocking(hostile_turn());
    let (home, workspace) = (TempDir::new(), TempDir::new());
    // `exec … 2>&1 >/dev/null | head -1`: stderr closed.
    let mut command = exec_command(&home, &workspace, &server, &["go"]);
    command.stdout(Stdio::null()).stderr(closed_pipe());
    let status = command.status().unwrap();
    assert_ne!(status.code(), Some(101), "exec panicked: {status}");
    assert_eq!(status.code(), Some(0), "{status}");
    // `exec … | head -1`: stdout closed; stderr says nothing of a panic.
    let server = ScriptedServer::start_blocking(hostile_turn());
    let mut command = exec_command(&home, &workspace, &server, &["go"]);
    let output = command
        .stdout(closed_pipe())
        .stderr(Stdio::piped())
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(!stderr.contains("panicked"), "{stderr}");
    assert_eq!(output.status.code(), Some(0), "{stderr}");
}

#[test]
fn a_closed_pipe_ends_sessions_and_errors_quietly() {
    let server = ScriptedServer::start_blocking(hostile_turn());
    let (home, workspace) = (TempDir::new(), TempDir::new());
    let status = exec_command(&home, &workspace, &server, &["go"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .unwrap();
    assert!(status.success());
    let log = session_logs(&home).pop().expect("a session log");
    let log = log.to_str().unwrap();
    for args in [
        vec!["sessions", "show", log],
        vec!["sessions", "list"],
        vec!["sessions", "export", log, "--format", "md"],
        vec!["sessions", "export", log, "--format", "json"],
        vec!["replay", "--headless", log],
    ] {
        for stdout_closed in [true, false] {
            let mut command = miniagent(&home);
            command.args(&args);
            let output = if stdout_closed {
                command
                    .stdout(closed_pipe())
                    .stderr(Stdio::piped())
                    .output()
                    .unwrap()
            } else {
                command
                    .stdout(Stdio::null())
                    .stderr(closed_pipe())
                    .output()
                    .unwrap()
            };
            let stderr = String::from_utf8_lossy(&output.stderr);
            assert!(!stderr.contains("panicked"), "{args:?}: {stderr}");
            assert_eq!(output.status.code(), Some(0), "{args:?}: {stderr}");
        }
    }
    // Errors, written to a closed stderr, are an exit status of 1 and nothing more.
    for args in [vec!["sessions", "show", "no-such-session"], vec!["exec", ""]] {
        let status = miniagent(&home)
            .args(&args)
            .stderr(closed_pipe())
            .status()
            .unwrap();
        assert_eq!(status.code(), Some(1), "{args:?}");
    }
    let server = ScriptedServer::start_blocking(vec![Reply::status(400, "refused")]);
    let status = against(&home, &workspace, &server)
        .args(["exec", "go"])
        .stderr(closed_pipe())
        .status()
        .unwrap();
    assert_eq!(status.code(), Some(1));
}
