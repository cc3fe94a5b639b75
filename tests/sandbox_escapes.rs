//! The ways out of a command's confinement that issue 15 found, each reproduced against the
//! real binary (`miniagent exec`, full-auto, sandbox on) and the scripted model server:
//! a tmux server reached through its socket, a descriptor inherited from the launching
//! shell, the API key in a command's environment or read from the agent's
//! `/proc/PID/environ`, and a process that leaves its group and clears its environment
//! (`env -i setsid`) outliving the command and the agent. Tests that need Landlock or tmux
//! print why and return where they are missing.

mod support;

use std::os::unix::process::CommandExt;
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use miniagent::tools::sandbox;
use serde_json::json;
use support::cli::{exec, exec_command, text};
use support::harness::TEST_KEY;
use support::*;

/// Whether the kernel has Landlock; prints why the test is skipped when not.
fn landlock() -> bool {
    match sandbox::kernel_abi() {
        Ok(_) => true,
        Err(reason) => {
            println!("skipped: {reason}");
            false
        }
    }
}

/// A writable folder outside the temp dir (the build tree's scratch folder), or `None`
/// after printing why the test is skipped.
fn outside_dir(name: &str) -> Option<PathBuf> {
    let dir =
        PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(format!("escapes-{name}-{}", std::process::id()));
    if dir.starts_with(std::env::temp_dir()) || std::fs::create_dir_all(&dir).is_err() {
        println!(
            "skipped: no writable folder outside {}",
            std::env::temp_dir().display()
        );
        return None;
    }
    Some(dir)
}

/// A `bash` call as the model sends it.
fn bash(id: &str, command: &str) -> Reply {
    Reply::tool(id, "bash", json!({ "command": command }).to_string())
}

/// What the model received as tool results, in order.
fn tool_results(server: &ScriptedServer) -> Vec<String> {
    server
        .requests()
        .iter()
        .filter_map(|request| {
            let last = request.body["messages"].as_array()?.last()?.clone();
            let block = &last["content"][0];
            (block["type"] == "tool_result")
                .then(|| block["content"].as_str().unwrap_or_default().to_string())
        })
        .collect()
}

/// Pids of live processes whose command line starts with `prefix` (NUL-separated args
/// joined by spaces), zombies excluded.
fn processes_running(prefix: &str) -> Vec<i32> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Some(pid) = entry.file_name().to_str().and_then(|n| n.parse::<i32>().ok()) else {
            continue;
        };
        let Ok(cmdline) = std::fs::read(entry.path().join("cmdline")) else {
            continue;
        };
        let joined = String::from_utf8_lossy(&cmdline).replace('\0', " ");
        let zombie = std::fs::read_to_string(entry.path().join("stat")).is_ok_and(|stat| {
            stat.rsplit(')')
                .next()
                .is_some_and(|rest| rest.trim_start().starts_with('Z'))
        });
        if joined.starts_with(prefix) && !zombie {
            found.push(pid);
        }
    }
    found
}

/// Kills what a failed test left behind, so one failure does not leave a sleeper for hours.
struct KillOnDrop(String);

impl Drop for KillOnDrop {
    fn drop(&mut self) {
        for pid in processes_running(&self.0) {
            // SAFETY: kill(2) has no memory-safety preconditions.
            unsafe { libc::kill(pid, libc::SIGKILL) };
        }
    }
}

/// A sleep duration no other test uses, so its process can be found by its command line.
fn unique_sleep() -> String {
    format!("1000.{}{:06}", std::process::id(), fastrand::u32(..1_000_000))
}

fn wait_until(timeout: Duration, mut done: impl FnMut() -> bool) -> bool {
    let started = Instant::now();
    while started.elapsed() < timeout {
        if done() {
            return true;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    done()
}

#[test]
fn a_tmux_server_reached_through_its_socket_does_not_write_outside_for_a_sandboxed_command() {
    if !landlock() {
        return;
    }
    if Command::new("tmux").arg("-V").output().is_err() {
        println!("skipped: tmux is not installed");
        return;
    }
    let Some(outside) = outside_dir("tmux") else {
        return;
    };
    let target = outside.join("OUTSIDE");
    let _ = std::fs::remove_file(&target);
    let sockets = TempDir::new();
    let socket = sockets.join("tmux.sock");
    let started = Command::new("tmux")
        .args(["-f", "/dev/null", "-S"])
        .arg(&socket)
        .args(["new-session", "-d", "-s", "escape", "sleep 600"])
        .env_remove("TMUX")
        .status()
        .unwrap();
    assert!(started.success(), "the tmux server starts");
    struct KillServer(PathBuf);
    impl Drop for KillServer {
        fn drop(&mut self) {
            let _ = Command::new("tmux")
                .arg("-S")
                .arg(&self.0)
                .arg("kill-server")
                .status();
        }
    }
    let _server_guard = KillServer(socket.clone());

    let home = TempDir::new();
    let workspace = TempDir::new();
    let command = format!(
        "tmux -S '{}' run-shell 'touch {}'; echo tmux exited $?",
        socket.display(),
        target.display()
    );
    let server = ScriptedServer::start_blocking(vec![bash("t1", &command), Reply::text("done")]);
    let output = exec(&home, &workspace, &server, &["escape through tmux"]);
    assert!(output.status.success(), "{}", text(&output.stderr));
    // The server would run the command at once; give a stray one time to land anyway.
    std::thread::sleep(Duration::from_millis(300));
    let results = tool_results(&server);
    assert!(
        !target.exists(),
        "the tmux server wrote outside the workspace for a sandboxed command: {results:?}"
    );
    assert_eq!(results.len(), 1, "{results:?}");
    assert!(
        results[0].contains("Permission denied") && results[0].contains("tools.bash.unix_sockets = true"),
        "{results:?}"
    );
    let _ = std::fs::remove_dir_all(&outside);
}

#[test]
fn a_descriptor_the_launching_shell_left_open_does_not_reach_commands() {
    if !landlock() {
        return;
    }
    let Some(outside) = outside_dir("fd") else { return };
    let target = outside.join("log");
    std::fs::write(&target, "").unwrap();
    let file = std::fs::OpenOptions::new().append(true).open(&target).unwrap();
    let home = TempDir::new();
    let workspace = TempDir::new();
    let server = ScriptedServer::start_blocking(vec![
        bash("t1", "echo escaped >&7; echo status $?; ls /proc/self/fd"),
        Reply::text("done"),
    ]);
    let mut command = exec_command(&home, &workspace, &server, &["write through fd 7"]);
    let raw = std::os::fd::AsRawFd::as_raw_fd(&file);
    // SAFETY: dup2 is async-signal-safe; `raw` stays open in the parent until after spawn.
    unsafe {
        command.pre_exec(move || {
            if libc::dup2(raw, 7) < 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
    let output = command.output().unwrap();
    assert!(output.status.success(), "{}", text(&output.stderr));
    let results = tool_results(&server);
    assert_eq!(
        std::fs::read_to_string(&target).unwrap(),
        "",
        "a command wrote through an inherited descriptor: {results:?}"
    );
    assert!(results[0].contains("Bad file descriptor"), "{results:?}");
    let _ = std::fs::remove_dir_all(&outside);
}

/// Variables a command must not see, set on the agent; the last one is passed through by
/// the config file written in `home`.
const HIDDEN: [(&str, &str); 7] = [
    ("ANTHROPIC_API_KEY", "sk-ant-other-key-4242"),
    ("MY_OWN_KEY_VAR", TEST_KEY),
    ("TMUX", "/tmp/tmux-0/default,1,0"),
    ("TMUX_PANE", "%1"),
    ("SSH_AUTH_SOCK", "/tmp/ssh-agent.sock"),
    ("DBUS_SESSION_BUS_ADDRESS", "unix:path=/run/user/0/bus"),
    ("DOCKER_HOST", "unix:///var/run/docker.sock"),
];

#[test]
fn neither_a_command_nor_a_background_job_sees_the_api_key_or_the_agents_sockets() {
    let home = TempDir::new();
    let workspace = TempDir::new();
    std::fs::write(
        home.join("config.toml"),
        "[tools.bash]\npass_env = [\"DOCKER_HOST\"]\n",
    )
    .unwrap();
    let server = ScriptedServer::start_blocking(vec![
        bash("t1", "env; echo; env | base64 -w0"),
        Reply::tool(
            "t2",
            "bash",
            json!({"command": "sleep 0.2; env", "run_in_background": true}).to_string(),
        ),
        bash("t3", "sleep 1"),
        Reply::tool("t4", "bash_output", json!({"bash_id": "bash_1"}).to_string()),
        Reply::text("done"),
    ]);
    let mut command = exec_command(
        &home,
        &workspace,
        &server,
        &["--api-key-env", "MY_OWN_KEY_VAR", "show env"],
    );
    for (name, value) in HIDDEN {
        command.env(name, value);
    }
    let output = command.output().unwrap();
    assert!(output.status.success(), "{}", text(&output.stderr));
    let results = tool_results(&server);
    assert_eq!(results.len(), 4, "{results:?}");
    for (index, result) in [(0, &results[0]), (3, &results[3])] {
        assert!(
            result.contains("PATH="),
            "result {index} is not an environment: {result}"
        );
        let (plain, encoded) = result.split_once("\n\n").unwrap_or((result, ""));
        let decoded = decode_base64(encoded.lines().next().unwrap_or(""));
        for shown in [plain.to_string(), decoded] {
            for (name, value) in &HIDDEN[..6] {
                let line = format!("{name}=");
                assert!(
                    !shown.lines().any(|l| l.starts_with(&line)),
                    "result {index} shows {name}: {shown}"
                );
                assert!(
                    !shown.contains(value),
                    "result {index} shows the value of {name}: {shown}"
                );
            }
            assert!(
                !shown.contains(TEST_KEY) && !shown.contains("MINIAGENT_API_KEY="),
                "{shown}"
            );
        }
        assert!(
            plain
                .lines()
                .any(|l| l == "DOCKER_HOST=unix:///var/run/docker.sock"),
            "pass_env keeps DOCKER_HOST: {plain}"
        );
    }
}

fn decode_base64(text: &str) -> String {
    let mut child = Command::new("base64")
        .arg("-d")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    use std::io::Write;
    child.stdin.take().unwrap().write_all(text.as_bytes()).unwrap();
    String::from_utf8_lossy(&child.wait_with_output().unwrap().stdout).into_owned()
}

/// Every ancestor of the shell, the agent among them: does its environment show a key,
/// and can its memory be opened?
const WALK: &str = r#"p=$PPID; while [ "$p" -gt 1 ]; do if e=$(tr '\0' '\n' < /proc/$p/environ 2>/dev/null); then case "$e" in *MINIAGENT_API_KEY*|*sk-test-*) env=key;; *) env=clean;; esac; else env=refused; fi; if (exec 3< /proc/$p/mem) 2>/dev/null; then mem=open; else mem=refused; fi; echo "$p environ:$env mem:$mem"; p=$(awk '{print $4}' /proc/$p/stat); done"#;

/// The agent's line of [`WALK`] run by `bash` in an `exec` with `args`.
fn agent_seen_from_a_command(args: &[&str]) -> (String, String) {
    let home = TempDir::new();
    let workspace = TempDir::new();
    let server = ScriptedServer::start_blocking(vec![bash("t1", WALK), Reply::text("done")]);
    let child = exec_command(&home, &workspace, &server, args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let agent = child.id();
    let output = child.wait_with_output().unwrap();
    assert!(output.status.success(), "{}", text(&output.stderr));
    let walked = tool_results(&server).remove(0);
    assert!(
        !walked.contains("environ:key") && !walked.contains(TEST_KEY),
        "{walked}"
    );
    let line = walked
        .lines()
        .find(|line| line.starts_with(&format!("{agent} ")))
        .unwrap_or_else(|| panic!("the agent ({agent}) is an ancestor of the command: {walked}"))
        .to_string();
    (line, walked)
}

#[test]
fn a_sandboxed_command_cannot_read_the_agents_environment_or_memory() {
    if !landlock() {
        return;
    }
    let (line, walked) = agent_seen_from_a_command(&["read the agent"]);
    assert!(line.ends_with(" mem:refused"), "{walked}");
    assert!(!line.contains("environ:key"), "{walked}");
}

#[test]
fn an_unsandboxed_command_does_not_find_the_key_in_the_agents_environ_either() {
    let (line, walked) = agent_seen_from_a_command(&["--sandbox", "off", "read the agent"]);
    // The memory stays open to a command running as root outside the sandbox (it keeps
    // CAP_SYS_PTRACE); the environ block no longer holds the key.
    println!("outside the sandbox: {line}");
    assert!(!line.contains("environ:key"), "{walked}");
}

#[test]
fn a_process_that_leaves_the_group_and_clears_its_environment_ends_with_the_command() {
    let home = TempDir::new();
    let workspace = TempDir::new();
    let duration = unique_sleep();
    let _cleanup = KillOnDrop(format!("sleep {duration}"));
    let check = format!(
        "for f in /proc/[0-9]*/cmdline; do tr '\\0' ' ' < $f 2>/dev/null; echo; done | grep -c '^sleep {duration} ' || true"
    );
    let server = ScriptedServer::start_blocking(vec![
        bash(
            "t1",
            &format!(
                "env -i setsid sleep {duration} > /dev/null 2>&1 & (env -i setsid sh -c 'sleep {duration}' >/dev/null 2>&1 &); echo started"
            ),
        ),
        bash("t2", &check),
        Reply::text("done"),
    ]);
    let output = exec(&home, &workspace, &server, &["leave a sleeper"]);
    assert!(output.status.success(), "{}", text(&output.stderr));
    let results = tool_results(&server);
    assert!(results[0].starts_with("started"), "{results:?}");
    assert!(
        results[1].starts_with("0\n"),
        "a process that cleared its tag outlived its command: {results:?}"
    );
    assert!(
        processes_running(&format!("sleep {duration}")).is_empty(),
        "a process outlived the agent"
    );
}

#[test]
fn a_job_that_left_its_group_ends_when_the_agent_is_killed() {
    let home = TempDir::new();
    let workspace = TempDir::new();
    let duration = unique_sleep();
    let _cleanup = KillOnDrop(format!("sleep {duration}"));
    let server = ScriptedServer::start_blocking(vec![
        Reply::tool(
            "t1",
            "bash",
            json!({"command": format!("env -i setsid sleep {duration} >/dev/null 2>&1 & sleep {duration}"), "run_in_background": true})
                .to_string(),
        ),
        bash("t2", &format!("sleep {duration}")),
        Reply::text("done"),
    ]);
    let mut child = exec_command(&home, &workspace, &server, &["leave a sleeper"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let pattern = format!("sleep {duration}");
    assert!(
        wait_until(Duration::from_secs(20), || processes_running(&pattern).len() == 3),
        "the job's sleepers and the command started"
    );
    child.kill().unwrap();
    child.wait().unwrap();
    assert!(
        wait_until(Duration::from_secs(10), || processes_running(&pattern).is_empty()),
        "a process of a command or a background job outlived the killed agent"
    );
}

#[test]
fn a_sandboxed_command_cannot_kill_its_supervisor_to_leave_a_process_behind() {
    if !landlock() {
        return;
    }
    let home = TempDir::new();
    let workspace = TempDir::new();
    let duration = unique_sleep();
    let pattern = format!("sleep {duration}");
    let _cleanup = KillOnDrop(pattern.clone());
    let server = ScriptedServer::start_blocking(vec![
        bash(
            "t1",
            &format!(
                "kill -9 $PPID; echo kill $?; sleep 0.2; env -i setsid sleep {duration} >/dev/null 2>&1 & echo started"
            ),
        ),
        Reply::text("done"),
    ]);
    let output = exec(&home, &workspace, &server, &["kill the supervisor"]);
    assert!(output.status.success(), "{}", text(&output.stderr));
    let results = tool_results(&server);
    assert!(
        wait_until(Duration::from_secs(5), || processes_running(&pattern).is_empty()),
        "a process outlived its command after the command killed its parent: {results:?}"
    );
}

#[test]
fn a_command_starts_with_no_signal_blocked_and_sigpipe_at_its_default() {
    let home = TempDir::new();
    let workspace = TempDir::new();
    let server = ScriptedServer::start_blocking(vec![
        bash(
            "t1",
            "grep SigBlk /proc/self/status; yes | head -1 >/dev/null; echo pipe ${PIPESTATUS[0]}",
        ),
        Reply::text("done"),
    ]);
    let output = exec(&home, &workspace, &server, &["signals"]);
    assert!(output.status.success(), "{}", text(&output.stderr));
    let results = tool_results(&server);
    assert!(
        results[0].starts_with("SigBlk:\t0000000000000000\npipe 141\n"),
        "{results:?}"
    );
}

/// The first tool result of an `exec` with `config` as its config.toml, running `command`.
fn first_result_with_config(config: &str, command: &str) -> String {
    let home = TempDir::new();
    let workspace = TempDir::new();
    std::fs::write(home.join("config.toml"), config).unwrap();
    let server = ScriptedServer::start_blocking(vec![bash("t1", command), Reply::text("done")]);
    let output = exec(&home, &workspace, &server, &["options"]);
    assert!(output.status.success(), "{}", text(&output.stderr));
    tool_results(&server).remove(0)
}

#[test]
fn unix_sockets_and_tcp_follow_their_options() {
    if !landlock() {
        return;
    }
    let unix = "python3 -c 'import socket; socket.socket(socket.AF_UNIX); print(\"unix ok\")' 2>&1 | tail -1";
    let refused = first_result_with_config("", unix);
    assert!(refused.contains("Permission denied"), "{refused}");
    let allowed = first_result_with_config("[tools.bash]\nunix_sockets = true\n", unix);
    assert!(allowed.starts_with("unix ok"), "{allowed}");
    let pair = "python3 -c 'import socket; socket.socketpair(); print(\"pair ok\")'";
    assert!(first_result_with_config("", pair).starts_with("pair ok"));

    if sandbox::kernel_abi().as_ref().is_ok_and(|abi| *abi < 4) {
        println!("skipped the TCP part: Landlock ABI below 4");
        return;
    }
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let tcp = format!("(exec 3<>/dev/tcp/127.0.0.1/{port}) 2>/dev/null && echo tcp ok || echo tcp refused");
    assert!(first_result_with_config("", &tcp).starts_with("tcp ok"));
    let off = first_result_with_config("[tools.bash]\nnetwork = false\n", &tcp);
    assert!(off.starts_with("tcp refused"), "{off}");
}
