//! Hooks read from their file and run as real processes.

use super::*;

struct Scratch(PathBuf);

impl Scratch {
    fn new(name: &str) -> Self {
        let dir = std::env::temp_dir().join(format!("miniagent-hooks-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        Self(dir)
    }

    fn env(&self) -> HookEnv {
        HookEnv {
            workspace: self.0.clone(),
            bash: crate::tools::bash::tests::settings(),
            key_vars: Vec::new(),
        }
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// Hooks of the user's, one per event, each `command`.
fn user_hooks(json: &str) -> Hooks {
    let (hooks, problems) = Hooks::load(None, None);
    assert!(hooks.is_empty() && problems.is_empty());
    let mut list = Vec::new();
    let mut problems = Vec::new();
    parse_into(
        json.as_bytes(),
        HookSource::User,
        Path::new("hooks.json"),
        &mut list,
        &mut problems,
    );
    assert_eq!(problems, Vec::<String>::new());
    Hooks { hooks: list }
}

fn info(event: &str, matcher: &str, command: &str, timeout_s: u64, source: &str) -> HookInfo {
    HookInfo {
        event: event.to_string(),
        matcher: matcher.to_string(),
        command: command.to_string(),
        timeout_s,
        source: source.to_string(),
    }
}

#[test]
fn a_hooks_file_is_read_with_its_problems_named_and_the_rest_kept() {
    let scratch = Scratch::new("load");
    std::fs::write(
        scratch.0.join(USER_HOOKS),
        r#"{"hooks": {
            "Stop": [{"hooks": [{"type": "command", "command": "./stop.sh"}]}],
            "PreToolUse": [
                {"matcher": "bash|write_file", "hooks": [
                    {"type": "command", "command": "./guard.sh", "timeout": 5},
                    {"type": "prompt", "command": "x"},
                    {"type": "command"},
                    {"type": "command", "command": "forever", "timeout": 100000}
                ]},
                {"matcher": "(", "hooks": [{"type": "command", "command": "never"}]}
            ],
            "OnLunch": [{"hooks": [{"type": "command", "command": "eat"}]}]
        }}"#,
    )
    .unwrap();
    let workspace =
        br#"{"hooks": {"PostToolUse": [{"matcher": "", "hooks": [{"type": "command", "command": "log"}]}]}}"#;
    let (hooks, problems) = Hooks::load(Some(&scratch.0), Some(workspace));
    assert_eq!(
        hooks.infos(),
        [
            info("PreToolUse", "bash|write_file", "./guard.sh", 5, "user"),
            info("PreToolUse", "bash|write_file", "forever", 600, "user"),
            info("Stop", "*", "./stop.sh", 60, "user"),
            info("PostToolUse", "*", "log", 60, "workspace"),
        ]
    );
    let file = scratch.0.join(USER_HOOKS).display().to_string();
    assert_eq!(
        problems,
        [
            format!(
                "hooks: {file}: `OnLunch` is not an event hooks run on (PreToolUse, PostToolUse, UserPromptSubmit, Stop, SessionStart, PreCompact); left out"
            ),
            format!(
                "hooks: {file}: PreToolUse: a hook left out: type `prompt` is not supported (only `command`)"
            ),
            format!("hooks: {file}: PreToolUse: a hook left out: it has no `command`"),
            format!("hooks: {file}: PreToolUse: matcher `(` left out: error: unclosed group"),
        ]
    );
    // A file that is not JSON is left out whole.
    let (hooks, problems) = Hooks::load(None, Some(b"{not json"));
    assert!(hooks.is_empty());
    assert_eq!(
        problems,
        ["hooks: .miniagent/hooks.json: not used: key must be a string at line 1 column 2"]
    );
}

#[test]
fn a_matcher_matches_the_whole_tool_name() {
    let hooks = user_hooks(
        r#"{"hooks": {"PreToolUse": [{"matcher": "bash|write_file", "hooks": [{"type": "command", "command": "x"}]},
                                     {"matcher": "mcp__.*", "hooks": [{"type": "command", "command": "y"}]}]}}"#,
    );
    let matching = |name: &str| -> Vec<&str> {
        hooks
            .hooks
            .iter()
            .filter(|hook| hook.matches(Some(name)))
            .map(|hook| hook.command.as_str())
            .collect()
    };
    assert_eq!(matching("bash"), ["x"]);
    assert_eq!(matching("write_file"), ["x"]);
    assert_eq!(matching("bash_output"), Vec::<&str>::new());
    assert_eq!(matching("mcp__github__search"), ["y"]);
}

fn fire(hooks: &Hooks, scratch: &Scratch, event: HookEvent, cancel: &CancellationToken) -> Fired {
    let input = input(
        event,
        Some("s-1"),
        None,
        &scratch.0,
        serde_json::json!({"tool_name": "bash", "tool_input": {"command": "ls"}})
            .as_object()
            .cloned()
            .unwrap_or_default(),
    );
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
        .block_on(hooks.fire(event, Some("bash"), &input, &scratch.env(), cancel))
}

fn one(event: &str, command: &str, timeout: f64) -> Hooks {
    let json = serde_json::json!({"hooks": {event: [{"hooks": [{"type": "command", "command": command, "timeout": timeout}]}]}});
    user_hooks(&json.to_string())
}

#[test]
fn a_hook_reads_the_event_on_its_input_and_exit_2_blocks_with_its_stderr() {
    let scratch = Scratch::new("block");
    let hooks = one(
        "PreToolUse",
        "cat > input.json; echo 'no ls here' >&2; exit 2",
        10.0,
    );
    let fired = fire(&hooks, &scratch, HookEvent::PreToolUse, &CancellationToken::new());
    assert_eq!(
        fired,
        Fired {
            blocked: Some(Blocked {
                reason: "no ls here".to_string(),
                command: "cat > input.json; echo 'no ls here' >&2; exit 2".to_string(),
            }),
            ..Fired::default()
        }
    );
    let input: Value = serde_json::from_slice(&std::fs::read(scratch.0.join("input.json")).unwrap()).unwrap();
    assert_eq!(
        input,
        serde_json::json!({
            "session_id": "s-1",
            "transcript_path": null,
            "cwd": scratch.0.display().to_string(),
            "hook_event_name": "PreToolUse",
            "tool_name": "bash",
            "tool_input": {"command": "ls"},
        })
    );
}

#[test]
fn json_answers_block_and_give_context_but_never_approve() {
    let scratch = Scratch::new("json");
    let deny = r#"echo '{"hookSpecificOutput": {"permissionDecision": "deny", "permissionDecisionReason": "not today"}}'"#;
    let fired = fire(
        &one("PreToolUse", deny, 10.0),
        &scratch,
        HookEvent::PreToolUse,
        &CancellationToken::new(),
    );
    assert_eq!(fired.blocked.map(|b| b.reason), Some("not today".to_string()));
    let allow = r#"echo '{"hookSpecificOutput": {"permissionDecision": "allow"}}'"#;
    let fired = fire(
        &one("PreToolUse", allow, 10.0),
        &scratch,
        HookEvent::PreToolUse,
        &CancellationToken::new(),
    );
    assert_eq!(fired, Fired::default());
    let context = r#"echo '{"hookSpecificOutput": {"additionalContext": "branch: main"}}'"#;
    let fired = fire(
        &one("UserPromptSubmit", context, 10.0),
        &scratch,
        HookEvent::UserPromptSubmit,
        &CancellationToken::new(),
    );
    assert_eq!(fired.context, ["branch: main"]);
    // Plain output is the context, as a terminal would show it.
    let plain = "printf '\\033[31mred\\033[0m today\\n'";
    let fired = fire(
        &one("UserPromptSubmit", plain, 10.0),
        &scratch,
        HookEvent::UserPromptSubmit,
        &CancellationToken::new(),
    );
    assert_eq!(fired.context, ["red today"]);
}

#[test]
fn other_endings_are_reported_and_block_nothing() {
    let scratch = Scratch::new("fail");
    let fired = fire(
        &one("PreToolUse", "echo oops >&2; exit 1", 10.0),
        &scratch,
        HookEvent::PreToolUse,
        &CancellationToken::new(),
    );
    assert_eq!(
        fired,
        Fired {
            notices: vec!["hook PreToolUse `echo oops >&2; exit 1` exited with code 1: oops".to_string()],
            ..Fired::default()
        }
    );
    // SessionStart cannot block: its exit 2 is a failure like any other.
    let fired = fire(
        &one("SessionStart", "exit 2", 10.0),
        &scratch,
        HookEvent::SessionStart,
        &CancellationToken::new(),
    );
    assert_eq!(fired.notices, ["hook SessionStart `exit 2` exited with code 2"]);
    assert_eq!(fired.blocked, None);
}

/// Whether process `pid` is still alive (and not a zombie).
fn alive(pid: i32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|stat| {
        !stat
            .rsplit(')')
            .next()
            .unwrap_or_default()
            .trim_start()
            .starts_with('Z')
    })
}

#[test]
fn a_slow_hook_is_stopped_at_its_timeout_with_what_it_started() {
    let scratch = Scratch::new("slow");
    let started = std::time::Instant::now();
    let fired = fire(
        &one(
            "PreToolUse",
            "sleep 300 & echo $! > child.pid; echo waiting >&2; sleep 300",
            1.0,
        ),
        &scratch,
        HookEvent::PreToolUse,
        &CancellationToken::new(),
    );
    let took = started.elapsed();
    assert_eq!(
        fired.notices,
        [
            "hook PreToolUse `sleep 300 & echo $! > child.pid; echo waiting >&2; sleep 300` ran past its timeout of 1 s and was stopped: waiting"
        ]
    );
    assert_eq!(fired.blocked, None);
    assert!(took < std::time::Duration::from_secs(10), "{took:?}");
    let child: i32 = std::fs::read_to_string(scratch.0.join("child.pid"))
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(5);
    while alive(child) && std::time::Instant::now() < deadline {
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    assert!(!alive(child), "the hook's background child {child} outlived it");
}

#[test]
fn an_interrupt_stops_a_running_hook() {
    let scratch = Scratch::new("cancel");
    let cancel = CancellationToken::new();
    let later = cancel.clone();
    std::thread::spawn(move || {
        std::thread::sleep(std::time::Duration::from_millis(300));
        later.cancel();
    });
    let started = std::time::Instant::now();
    let fired = fire(
        &one("Stop", "sleep 300", 60.0),
        &scratch,
        HookEvent::Stop,
        &cancel,
    );
    assert!(fired.cancelled);
    assert!(started.elapsed() < std::time::Duration::from_secs(10));
}

#[test]
fn output_without_end_is_capped() {
    let scratch = Scratch::new("flood");
    let fired = fire(
        &one("UserPromptSubmit", "yes 0123456789 | head -c 50000000", 30.0),
        &scratch,
        HookEvent::UserPromptSubmit,
        &CancellationToken::new(),
    );
    assert_eq!(fired.notices, Vec::<String>::new());
    assert_eq!(fired.context.len(), 1);
    assert!(
        fired.context[0].len() <= MAX_TEXT_TO_MODEL + 100,
        "{}",
        fired.context[0].len()
    );
}
