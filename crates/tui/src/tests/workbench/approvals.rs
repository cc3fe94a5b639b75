use pretty_assertions::assert_eq;

use super::*;
use crate::app::{ANSWER_SETTLE, TYPING_QUIET};
use crate::protocol::ApprovalRequest;

#[test]
fn first_frame_shows_every_pane() {
    let workspace = TempDir::new();
    let mut app = app_in(&workspace);
    assert_screen!("empty_160x48", screen(&mut app, 160, 48));
    assert_screen!("empty_80x24", screen(&mut app, 80, 24));
}

#[test]
fn a_busy_session_at_both_sizes() {
    let workspace = TempDir::new();
    let mut app = app_in(&workspace);
    busy_session(&mut app);
    assert_screen!("busy_160x48", screen(&mut app, 160, 48));
    assert_screen!("busy_80x24", screen(&mut app, 80, 24));
    assert_eq!(app.status_text(), "running read_file for 4.2 s");
}

#[test]
fn approval_overlays_for_an_edit_and_a_command() {
    let workspace = TempDir::new();
    let mut app = app_in(&workspace);
    app.on_agent_event(Event::TurnStarted {
        text: "fix the greeting".into(),
    });
    // One reply with three calls: the dialog says which of them it asks about.
    app.on_agent_event(Event::AssistantMessage {
        thinking: String::new(),
        text: String::new(),
        tool_calls: ["e1", "b1", "r1"]
            .into_iter()
            .map(|id| ToolCallSummary {
                id: id.into(),
                name: "bash".into(),
            })
            .collect(),
        stop_reason: StopReason::ToolUse,
    });
    app.on_agent_event(Event::ToolCallRequested {
        id: "e1".into(),
        name: "edit_file".into(),
        arguments: json!({"path": "src/main.rs", "old_str": "hi", "new_str": "hello"}),
        summary: "src/main.rs".into(),
    });
    app.on_agent_event(Event::ApprovalRequested {
        id: "e1".into(),
        name: "edit_file".into(),
        preview: "edit src/main.rs (1 replacement)\n--- a/src/main.rs\n+++ b/src/main.rs\n@@ -1,3 +1,3 @@\n fn main() {\n-    println!(\"hi\");\n+    println!(\"hello\");\n }\n".into(),
        session_rule: Some(ApprovalRule::Tool {
            name: "edit_file".into(),
        }),
        request: Some(ApprovalRequest::Edit {
            path: "src/main.rs".into(),
            summary: "edit src/main.rs (1 replacement)".into(),
            diff: "--- a/src/main.rs\n+++ b/src/main.rs\n@@ -1,3 +1,3 @@\n fn main() {\n-    println!(\"hi\");\n+    println!(\"hello\");\n }\n".into(),
        }),
        notes: Vec::new(),
    });
    app.on_agent_event(Event::ToolCallRequested {
        id: "b1".into(),
        name: "bash".into(),
        arguments: json!({"command": "cargo fmt"}),
        summary: "cargo fmt".into(),
    });
    app.on_agent_event(Event::ApprovalRequested {
        id: "b1".into(),
        name: "bash".into(),
        preview: "$ cargo fmt\n(in /home/dev/project, timeout 120 s)".into(),
        session_rule: Some(ApprovalRule::Command {
            program: "cargo".into(),
        }),
        request: Some(ApprovalRequest::Command {
            command: "cargo fmt".into(),
            program: Some("cargo".into()),
            argv: vec!["cargo".into(), "fmt".into()],
            cwd: "/home/dev/project".into(),
            timeout_s: Some(120),
            compound: false,
        }),
        notes: Vec::new(),
    });
    // Just opened: arming, the keys not shown yet.
    assert_screen!("approval_edit_arming_80x24", screen(&mut app, 80, 24));
    app.now += APPROVAL_GRACE;
    assert_screen!("approval_edit_160x48", screen(&mut app, 160, 48));
    assert_screen!("approval_edit_80x24", screen(&mut app, 80, 24));
    app.on_key(key(KeyCode::Char('y')));
    app.settle();
    // The next request arms on its own.
    screen(&mut app, 80, 24);
    arm(&mut app);
    assert_screen!("approval_command_160x48", screen(&mut app, 160, 48));
    assert_screen!("approval_command_80x24", screen(&mut app, 80, 24));
    app.on_key(key(KeyCode::Char('n')));
    app.settle();
    type_text(&mut app, "not now");
    // While the reason is typed, the bar shows the keys that apply to it, not `y approve`.
    assert_screen!("approval_deny_reason_80x24", screen(&mut app, 80, 24));
}

#[test]
fn a_key_pressed_twice_answers_one_approval_and_types_nothing() {
    let workspace = TempDir::new();
    let mut app = app_in(&workspace);
    app.on_agent_event(Event::TurnStarted { text: "go".into() });
    for id in ["b1", "b2"] {
        app.on_agent_event(Event::ApprovalRequested {
            id: id.into(),
            name: "bash".into(),
            preview: "$ make".into(),
            session_rule: None,
            request: None,
            notes: Vec::new(),
        });
    }
    arm(&mut app);
    // `y y`: a double press answers once; the second is not typed anywhere.
    app.on_key(key(KeyCode::Char('y')));
    app.on_key(key(KeyCode::Char('y')));
    app.settle();
    screen(&mut app, 80, 24);
    assert_eq!(
        app.sent,
        vec![Op::Approval {
            id: "b1".into(),
            decision: Decision::Approve
        }]
    );
    assert_eq!(app.input.text(), "", "the second `y` is not typed into the input");
    app.now += APPROVAL_GRACE;
    app.on_key(key(KeyCode::Char('n')));
    app.settle();
    app.on_key(key(KeyCode::Enter));
    assert_eq!(app.sent.len(), 2);
    // With no approval left, typing goes to the input again.
    type_text(&mut app, "next");
    assert_eq!(app.input.text(), "next");
}

#[test]
fn a_call_that_cannot_be_approved_for_the_session_does_not_offer_it() {
    let workspace = TempDir::new();
    let mut app = app_in(&workspace);
    app.on_agent_event(Event::TurnStarted { text: "go".into() });
    app.on_agent_event(Event::ToolCallRequested {
        id: "c1".into(),
        name: "write_file".into(),
        arguments: json!({"path": ".miniagent/config.toml", "content": "x"}),
        summary: ".miniagent/config.toml".into(),
    });
    app.on_agent_event(Event::ApprovalRequested {
        id: "c1".into(),
        name: "write_file".into(),
        preview: "This changes miniagent's own settings: asked each time.\n\nreplace .miniagent/config.toml (1 bytes)".into(),
        session_rule: None,
        request: Some(ApprovalRequest::Edit {
            path: ".miniagent/config.toml".into(),
            summary: "replace .miniagent/config.toml (1 bytes)".into(),
            diff: String::new(),
        }),
        notes: vec!["This changes miniagent's own settings: asked each time.".into()],
    });
    screen(&mut app, 80, 24);
    arm(&mut app);
    assert_screen!("approval_once_only_80x24", screen(&mut app, 80, 24));
    app.on_key(key(KeyCode::Char('a')));
    assert!(!app.settle(), "`a` is not offered");
    assert!(app.sent.is_empty());
    app.on_key(key(KeyCode::Char('y')));
    app.settle();
    assert_eq!(
        app.sent,
        vec![Op::Approval {
            id: "c1".into(),
            decision: Decision::Approve
        }]
    );
}

#[test]
fn keys_typed_before_the_dialog_could_be_read_answer_nothing() {
    let workspace = TempDir::new();
    let mut app = app_in(&workspace);
    type_text(&mut app, "check the logs");
    app.on_key(key(KeyCode::Enter));
    app.on_agent_event(Event::TurnStarted {
        text: "check the logs".into(),
    });
    app.sent.clear();
    // The person goes on typing their next message while the agent works.
    type_text(&mut app, "and the te");
    app.on_agent_event(Event::ApprovalRequested {
        id: "b1".into(),
        name: "bash".into(),
        preview: "$ rm -rf build".into(),
        session_rule: Some(ApprovalRule::Command { program: "rm".into() }),
        request: None,
        notes: Vec::new(),
    });
    // Keys already queued when the dialog opened, before it was ever drawn.
    type_text(&mut app, "sts a");
    assert!(!app.approval_armed());
    let start = app.now;
    screen(&mut app, 80, 24);
    // Drawn, but a key follows at once: still arming, and the wait starts over.
    app.now = start + Duration::from_millis(300);
    type_text(&mut app, "y");
    app.now = start + Duration::from_millis(600);
    assert!(!app.approval_armed());
    assert!(app.on_key(key(KeyCode::Char('a'))));
    assert!(app.sent.is_empty(), "{:?}", app.sent);
    assert_eq!(app.approvals.len(), 1);
    // Nothing typed was lost: it went to the input, where it was meant to go.
    assert_eq!(app.input.text(), "and the tests aya");
    assert_screen!("approval_arming_160x48", screen(&mut app, 160, 48));
    // A quiet moment later the dialog is armed, and says so.
    app.now = start + Duration::from_millis(600) + TYPING_QUIET;
    assert!(app.approval_armed());
    let armed = screen(&mut app, 160, 48);
    assert!(
        armed.contains("● armed") && armed.contains("y approve"),
        "{armed}"
    );
    app.on_key(key(KeyCode::Char('n')));
    app.settle();
    assert_eq!(app.input.text(), "and the tests aya");
    app.on_key(key(KeyCode::Enter));
    assert_eq!(
        app.sent,
        vec![Op::Approval {
            id: "b1".into(),
            decision: Decision::Deny { reason: None }
        }]
    );
}

#[test]
fn approve_deny_with_reason_and_abort_send_the_right_ops() {
    let workspace = TempDir::new();
    let mut app = app_in(&workspace);
    app.on_agent_event(Event::TurnStarted { text: "go".into() });
    for id in ["a", "b", "c"] {
        app.on_agent_event(Event::ApprovalRequested {
            id: id.into(),
            name: "bash".into(),
            preview: "$ ls".into(),
            session_rule: None,
            request: None,
            notes: Vec::new(),
        });
    }
    arm(&mut app);
    // A letter the approval does not use is the person writing: it goes to the input,
    // and the dialog takes no answer until they have stopped for a while.
    app.on_key(key(KeyCode::Char('x')));
    app.settle();
    assert_eq!(app.input.text(), "x");
    assert!(app.sent.is_empty());
    assert!(!app.approval_armed());
    app.now += APPROVAL_GRACE;
    assert!(
        !app.approval_armed(),
        "a slow typist's next letter is not an answer"
    );
    app.now += TYPING_QUIET;
    assert!(app.approval_armed());
    app.input.clear();
    app.on_key(key(KeyCode::Char('y')));
    app.settle();
    arm(&mut app);
    app.on_key(key(KeyCode::Char('n')));
    app.settle();
    type_text(&mut app, "too risky");
    app.on_key(key(KeyCode::Backspace));
    app.on_key(key(KeyCode::Char('y')));
    app.on_key(key(KeyCode::Enter));
    arm(&mut app);
    app.on_key(key(KeyCode::Esc));
    assert_eq!(
        app.sent,
        vec![
            Op::Approval {
                id: "a".into(),
                decision: Decision::Approve
            },
            Op::Approval {
                id: "b".into(),
                decision: Decision::Deny {
                    reason: Some("too risky".into())
                }
            },
            Op::Approval {
                id: "c".into(),
                decision: Decision::Abort
            },
        ]
    );
    assert!(app.approvals.is_empty());
    assert_eq!(app.status_text(), "interrupting…");
}

/// A sentence begun on an armed dialog without looking at it ("also, …", "yes and …")
/// answers nothing, however fast it comes (a burst from tmux or a queued terminal): its
/// first letter waits to be sure it was pressed alone, the next key says it was typing,
/// and everything typed goes to the input while the dialog arms again.
#[test]
fn a_sentence_typed_over_an_armed_approval_answers_nothing() {
    let workspace = TempDir::new();
    let mut app = app_in(&workspace);
    app.on_agent_event(Event::TurnStarted { text: "go".into() });
    app.on_agent_event(Event::ApprovalRequested {
        id: "b1".into(),
        name: "bash".into(),
        preview: "$ rm -rf build".into(),
        session_rule: Some(ApprovalRule::Command { program: "rm".into() }),
        request: None,
        notes: Vec::new(),
    });
    arm(&mut app);
    for text in [
        "also, list hidden files",
        "yes and the tests",
        "no wait",
        "aardvark",
    ] {
        type_text(&mut app, text);
        assert!(!app.approval_armed(), "{text}: the dialog arms again");
        // The loop ticks on: nothing settles into an answer.
        app.now += ANSWER_SETTLE;
        app.on_tick();
        assert!(app.sent.is_empty(), "{text}: {:?}", app.sent);
        assert_eq!(app.approvals.len(), 1);
        assert_eq!(app.input.text(), text, "what was typed went to the input");
        app.input.clear();
        app.now += TYPING_QUIET;
    }
    // A stalled process reads a burst long after it was typed: a letter that follows a
    // held one is typing however late it is read, if no tick let the first answer.
    assert!(app.approval_armed());
    app.on_key(key(KeyCode::Char('y')));
    app.now += ANSWER_SETTLE * 2;
    type_text(&mut app, "es please");
    assert!(app.sent.is_empty(), "{:?}", app.sent);
    assert_eq!(app.input.text(), "yes please");
    app.input.clear();
    app.now += TYPING_QUIET;
    // Its first letter alone, slower than typing, is an answer; not before it settled.
    assert!(app.approval_armed());
    app.on_key(key(KeyCode::Char('a')));
    app.now += ANSWER_SETTLE / 2;
    app.on_tick();
    assert!(app.sent.is_empty());
    app.now += ANSWER_SETTLE / 2;
    app.on_tick();
    assert_eq!(
        app.sent,
        vec![Op::Approval {
            id: "b1".into(),
            decision: Decision::ApproveForSession
        }]
    );
    assert_eq!(app.input.text(), "");
}

fn command_request(id: &str, command: &str) -> Event {
    Event::ApprovalRequested {
        id: id.into(),
        name: "bash".into(),
        preview: format!("$ {command}"),
        session_rule: None,
        request: Some(ApprovalRequest::Command {
            command: command.into(),
            program: Some("ls".into()),
            argv: Vec::new(),
            cwd: "/home/dev/project".into(),
            timeout_s: Some(120),
            compound: true,
        }),
        notes: Vec::new(),
    }
}

/// What is approved is on screen: blank lines padding a command are folded into one
/// line that counts them, a command longer than the dialog is approved only once it was
/// scrolled to its end, and characters a terminal would act on are shown as what they
/// are (found by a fresh-eyes run: 40 newlines hid a `touch` below the fold).
#[test]
fn nothing_approved_is_out_of_sight() {
    let workspace = TempDir::new();
    let mut app = app_in(&workspace);
    app.on_agent_event(Event::TurnStarted { text: "go".into() });
    let padded = format!("ls -la{}touch ~/PWNED", "\n".repeat(40));
    app.on_agent_event(command_request("p1", &padded));
    arm(&mut app);
    let shown = screen(&mut app, 80, 24);
    assert!(shown.contains("⋮ 39 blank lines"), "{shown}");
    assert!(shown.contains("touch ~/PWNED"), "{shown}");
    app.on_key(key(KeyCode::Char('y')));
    app.settle();
    assert_eq!(app.sent.len(), 1, "all of it was on screen: y approves");

    let long: String = (1..=60).map(|n| format!("echo step {n}\n")).collect::<String>() + "rm -rf ~";
    app.on_agent_event(command_request("p2", &long));
    arm(&mut app);
    assert_screen!("approval_long_command_80x24", screen(&mut app, 80, 24));
    app.on_key(key(KeyCode::Char('y')));
    app.settle();
    app.on_key(key(KeyCode::Char('a')));
    app.settle();
    assert_eq!(
        app.sent.len(),
        1,
        "y waits until the end was on screen: {:?}",
        app.sent
    );
    // Jumping to the end skips what lies between: it does not count as read.
    app.on_key(key(KeyCode::End));
    let end = screen(&mut app, 80, 24);
    assert!(end.contains("rm -rf ~"), "{end}");
    // At the end, the footer says how to read on (↓ would move nothing).
    assert!(end.contains("not seen: Home, then ↓/PgDn, before y"), "{end}");
    app.on_key(key(KeyCode::Char('y')));
    app.settle();
    assert_eq!(app.sent.len(), 1, "End then y approves nothing");
    app.on_key(key(KeyCode::Home));
    for _ in 0..10 {
        app.on_key(key(KeyCode::PageDown));
        screen(&mut app, 80, 24);
    }
    app.on_key(key(KeyCode::Char('y')));
    app.settle();
    assert_eq!(
        app.sent.last(),
        Some(&Op::Approval {
            id: "p2".into(),
            decision: Decision::Approve
        })
    );

    // A tab reads as nothing between two words, a zero-width space as nothing at all:
    // both are shown.
    app.on_agent_event(command_request("p4", "touch notes\t/tmp/PWNED\u{200b}"));
    arm(&mut app);
    let shown = screen(&mut app, 80, 24);
    assert!(shown.contains("$ touch notes␉/tmp/PWNED<U+200B>"), "{shown}");
    app.on_key(key(KeyCode::Esc));
    app.on_agent_event(Event::TurnStarted { text: "go".into() });

    app.on_agent_event(Event::ApprovalRequested {
        id: "p3".into(),
        name: "write_file".into(),
        preview: String::new(),
        session_rule: None,
        request: Some(ApprovalRequest::Edit {
            path: "e\u{1b}]0;X\u{7}vil\u{202e}.txt".into(),
            summary: "create e\u{1b}]0;X\u{7}vil\u{202e}.txt (7 bytes)".into(),
            diff: String::new(),
        }),
        notes: Vec::new(),
    });
    arm(&mut app);
    let shown = screen(&mut app, 80, 24);
    assert!(
        shown.contains("create e␛]0;X␇vil<U+202E>.txt (7 bytes)"),
        "{shown}"
    );
}

/// `n` then Enter at once is a refusal without a reason, as a person types it: a key
/// that types nothing lets the held letter answer first.
#[test]
fn n_then_enter_at_once_refuses_without_a_reason() {
    let workspace = TempDir::new();
    let mut app = app_in(&workspace);
    app.on_agent_event(Event::TurnStarted { text: "go".into() });
    app.on_agent_event(command_request("b1", "rm -rf build"));
    arm(&mut app);
    app.on_key(key(KeyCode::Char('n')));
    app.on_key(key(KeyCode::Enter));
    assert_eq!(
        app.sent,
        vec![Op::Approval {
            id: "b1".into(),
            decision: Decision::Deny { reason: None }
        }]
    );
    assert_eq!(app.input.text(), "");
}

/// A bash approval for `rm -rf build`, armed.
fn armed_approval(app: &mut Bench) {
    app.on_agent_event(Event::TurnStarted { text: "go".into() });
    app.on_agent_event(Event::ApprovalRequested {
        id: "b1".into(),
        name: "bash".into(),
        preview: "$ rm -rf build".into(),
        session_rule: Some(ApprovalRule::Command { program: "rm".into() }),
        request: None,
        notes: Vec::new(),
    });
    arm(app);
}

/// Typed one key at a time, `gap` apart, the loop ticking in between.
fn type_slowly(app: &mut Bench, text: &str, gap: Duration) {
    for c in text.chars() {
        app.on_key(key(KeyCode::Char(c)));
        let mut waited = Duration::ZERO;
        while waited < gap {
            let tick = Duration::from_millis(100).min(gap - waited);
            app.now += tick;
            waited += tick;
            app.on_tick();
        }
    }
}

/// Found by a fresh-eyes run: a slow typist's letter that answers nothing was dropped
/// and left the dialog armed, so the `y` or `a` of the next word answered it ("hey",
/// "can you"). A letter that answers nothing is typing: it goes to the input, and the
/// dialog waits until the typing stops.
#[test]
fn a_slow_typist_answers_nothing() {
    for (text, gap_ms) in [("hey", 600), ("can you", 450), ("say", 600), ("okay", 1000)] {
        let workspace = TempDir::new();
        let mut app = app_in(&workspace);
        armed_approval(&mut app);
        type_slowly(&mut app, text, Duration::from_millis(gap_ms));
        assert!(
            app.sent.is_empty(),
            "{text:?} at {gap_ms} ms a key answered: {:?}",
            app.sent
        );
        assert_eq!(app.approvals.len(), 1);
        assert_eq!(app.input.text(), text, "everything typed is in the input");
    }
}

/// The same for the trust question, which starts a workspace's programs.
#[test]
fn a_slow_typist_does_not_trust_a_workspace() {
    use crate::layers::trust::TrustPrompt;
    let workspace = TempDir::new();
    let mut app = app_in(&workspace);
    app.open_layer(Box::new(TrustPrompt::new(
        vec!["fmt: runs sh -c 'touch pwned'".into()],
        false,
    )));
    screen(&mut app, 80, 24);
    app.frame_drawn();
    app.now += APPROVAL_GRACE;
    assert!(app.consent_armed());
    type_slowly(&mut app, "hey", Duration::from_millis(600));
    assert_eq!(app.actions, vec![], "nothing was trusted");
    assert!(app.top::<TrustPrompt>().is_some());
    assert_eq!(app.input.text(), "hey");
}

/// Found by a fresh-eyes run: `y` then Enter approved and then sent the draft waiting in
/// the input. The Enter belongs to the answer.
#[test]
fn enter_right_after_an_answer_does_not_send_the_draft() {
    let workspace = TempDir::new();
    let mut app = app_in(&workspace);
    app.input.paste("half a thought");
    armed_approval(&mut app);
    app.on_key(key(KeyCode::Char('y')));
    app.on_key(key(KeyCode::Enter));
    assert_eq!(
        app.sent,
        vec![Op::Approval {
            id: "b1".into(),
            decision: Decision::Approve
        }]
    );
    assert_eq!(app.input.text(), "half a thought", "the draft stays");
    // The same once the answer settled on its own.
    let mut app = app_in(&workspace);
    app.input.paste("half a thought");
    armed_approval(&mut app);
    app.on_key(key(KeyCode::Char('y')));
    app.settle();
    app.now += Duration::from_millis(200);
    app.on_key(key(KeyCode::Enter));
    assert_eq!(app.sent.len(), 1, "{:?}", app.sent);
    assert_eq!(app.input.text(), "half a thought");
    // A deliberate Enter later sends it (queued behind the running turn).
    app.now += crate::app::ENTER_AFTER_ANSWER;
    app.on_key(key(KeyCode::Enter));
    assert_eq!(app.input.text(), "");
}

/// Found by a fresh-eyes run: a paste while a question was open vanished. It goes to the
/// input, answers nothing, and the question waits.
#[test]
fn a_paste_while_a_question_is_open_goes_to_the_input() {
    let workspace = TempDir::new();
    let mut app = app_in(&workspace);
    armed_approval(&mut app);
    app.on_paste("yes, a long pasted paragraph");
    app.settle();
    assert!(app.sent.is_empty());
    assert_eq!(app.input.text(), "yes, a long pasted paragraph");
    assert!(
        !app.approval_armed(),
        "the question waits while the person writes"
    );
    app.now += crate::app::TYPING_QUIET;
    assert!(app.approval_armed());
}
