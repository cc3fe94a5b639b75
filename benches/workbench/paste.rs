//! The `paste` part: bracketed pastes into the real workbench's input on a pseudo-terminal,
//! as a terminal sends them. Two pastes of 10 MB (many lines; one line) that the input
//! refuses, and the largest it takes (1 MB): each is timed from the first byte written to
//! the frame that shows a key typed right behind it (events are handled in order, so that
//! frame comes after the paste was answered). Budget: 5 s each. That the refused pastes
//! left the input as it was is checked where it arrives, at the scripted server; that
//! the taken one shows, on the screen.

use std::time::{Duration, Instant};

use super::pty::Pty;
use super::{COLS, FRAME_END, KEY, ROWS, TempDir, ms, workbench};
use crate::support::{Reply, ScriptedServer};

const BUDGET: Duration = Duration::from_secs(5);
/// How long a paste may take before the part gives up on it.
const GIVE_UP: Duration = Duration::from_secs(120);
const LINE: &str = "pasted text with 中文 and tabs\tand more words to fill the line\r\n";

/// Pastes `text`, then types [`KEY`]: the time until the key shows, or `None` when it
/// did not within [`GIVE_UP`]. The key is taken back out after.
fn paste(pty: &mut Pty, text: &str) -> Option<Duration> {
    let from = pty.screen().text.len();
    let mut bytes = Vec::with_capacity(text.len() + 20);
    bytes.extend_from_slice(b"\x1b[200~");
    bytes.extend_from_slice(text.as_bytes());
    bytes.extend_from_slice(b"\x1b[201~");
    bytes.extend_from_slice(KEY.as_bytes());
    let started = Instant::now();
    pty.send(&bytes);
    let (shown, _) = pty.wait_for(KEY, from, GIVE_UP)?;
    pty.send(b"\x7f");
    Some(shown.saturating_duration_since(started))
}

/// Sends the input with Enter and returns the text of the user message that reached the
/// server (the session's first).
fn submit(pty: &mut Pty, server: &ScriptedServer) -> String {
    pty.send(b"\r");
    let deadline = Instant::now() + Duration::from_secs(30);
    while server.request_count() == 0 {
        assert!(Instant::now() < deadline, "the message reaches the server");
        std::thread::sleep(Duration::from_millis(10));
    }
    let body = &server.requests()[0].body;
    let messages = body["messages"].as_array().expect("the request's messages");
    let content = &messages.last().expect("a user message")["content"];
    match content.as_str() {
        Some(text) => text.to_string(),
        None => content[0]["text"].as_str().unwrap_or_default().to_string(),
    }
}

fn report(what: &str, bytes: usize, took: Option<Duration>) {
    let (figure, verdict) = match took {
        Some(took) => (ms(took), if took <= BUDGET { "ok" } else { "OVER" }),
        None => (format!("no answer within {} s", GIVE_UP.as_secs()), "OVER"),
    };
    println!(
        "paste: {what} ({:.1} MB) answered in {figure} (budget {}: {verdict})",
        bytes as f64 / (1024.0 * 1024.0),
        ms(BUDGET)
    );
}

pub fn pastes(home: &TempDir) {
    let server = ScriptedServer::start_blocking(vec![Reply::text("noted")]);
    let workspace = TempDir::new();
    let mut pty = Pty::spawn(workbench(home, &workspace, &server, &[]), COLS, ROWS);
    pty.wait_for(FRAME_END, 0, Duration::from_secs(10))
        .expect("first frame");
    std::thread::sleep(Duration::from_millis(500));
    // The screen is drawn as diffs, so the word may not show whole: the key after it does.
    pty.send(b"draft");
    let from = pty.screen().text.len();
    pty.send(KEY.as_bytes());
    pty.wait_for(KEY, from, Duration::from_secs(5))
        .expect("the typed keys show");
    pty.send(b"\x7f");

    let many_lines = LINE.repeat(10 * 1024 * 1024 / LINE.len() + 1);
    let one_line = "x".repeat(10 * 1024 * 1024);
    for (what, text) in [
        ("a refused paste of many lines", &many_lines),
        ("a refused paste of one line", &one_line),
    ] {
        let from = pty.screen().text.len();
        let took = paste(&mut pty, text);
        assert!(
            pty.screen().find("中文".as_bytes(), from).is_none(),
            "a refused paste does not show"
        );
        report(what, text.len(), took);
        if took.is_none() {
            return;
        }
    }
    assert_eq!(submit(&mut pty, &server), "draft", "both pastes were refused");
    std::thread::sleep(Duration::from_secs(1));

    // Taken, it shows in the input box (as a message it would be too large for the
    // scripted model's prompt, so it is not sent).
    let largest = LINE.repeat(1024 * 1024 / LINE.len());
    let from = pty.screen().text.len();
    let took = paste(&mut pty, &largest);
    report("the largest paste taken", largest.len(), took);
    assert!(
        took.is_none() || pty.screen().find("中文".as_bytes(), from).is_some(),
        "the largest paste shows in the input"
    );
    pty.finish();
}
