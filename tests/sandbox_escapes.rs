//! The ways out of a command's confinement that issue 15 found, each reproduced against the
//! real binary (`miniagent exec`, full-auto, sandbox on) and the scripted model server:
//! a tmux server reached through its socket, a descriptor inherited from the launching
//! shell, the API key in a command's environment or read from the agent's
//! `/proc/PID/environ`, and a process that leaves its group and clears its environment
//! (`env -i setsid`) outliving the command and the agent. Tests that need Landlock or tmux
//! print why and return where they are missing.

mod support;

use std::os::unix::fs::OpenOptionsExt;
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
const WALK: &str = r#"p=$PPID; while [ "$p" -gt 1 ]; do if (exec 3< /proc/$p/maps) 2>/dev/null; then maps=open; else maps=refused; fi; if e=$(tr '\0' '\n' < /proc/$p/environ 2>/dev/null); then case "$e" in *MINIAGENT_API_KEY*|*sk-test-*) env=key;; *) env=clean;; esac; else env=refused; fi; if (exec 3< /proc/$p/mem) 2>/dev/null; then mem=open; else mem=refused; fi; echo "$p environ:$env maps:$maps mem:$mem"; p=$(awk '{print $4}' /proc/$p/stat); done"#;

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
    // maps was readable here before (issue 15 review, F10): it shows where the key sits.
    assert!(line.ends_with(" maps:refused mem:refused"), "{walked}");
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

/// A device ioctl on `/dev/null` (allowed: it reaches the driver, which knows no such
/// call) and on the first other device there is (refused by the sandbox, Landlock ABI 5).
const IOCTLS: &str = r#"python3 - <<'PY'
import fcntl, os, termios
others = [p for p in ['/dev/loop-control', '/dev/fuse', '/dev/cpu_dma_latency', '/dev/net/tun'] if os.path.exists(p)]
for path in ['/dev/null'] + others[:1]:
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError as e:
        print(path, 'open:', e.strerror)
        continue
    try:
        fcntl.ioctl(fd, termios.TCGETS, bytes(64))
        print(path, 'ioctl: ok')
    except OSError as e:
        print(path, 'ioctl:', e.strerror)
PY"#;

/// The five capability sets of `/proc/self/status`, as `Name:\tHEX` lines.
const CAPS: &str = "grep -E '^Cap(Inh|Prm|Eff|Bnd|Amb)' /proc/self/status";

/// Whether every capability line in `result` is all zeros (and there are five of them).
fn holds_no_capability(result: &str) -> bool {
    let lines: Vec<&str> = result.lines().filter(|l| l.starts_with("Cap")).collect();
    lines.len() == 5 && lines.iter().all(|l| l.ends_with("0000000000000000"))
}

#[test]
fn a_sandboxed_command_and_job_hold_no_capabilities() {
    if !landlock() {
        return;
    }
    let Some(outside) = outside_dir("caps") else {
        return;
    };
    let victim = outside.join("victim");
    std::fs::write(&victim, "victim\n").unwrap();
    let owner = std::os::unix::fs::MetadataExt::uid(&std::fs::metadata(&victim).unwrap());
    let home = TempDir::new();
    let workspace = TempDir::new();
    // As root these all worked in the sandbox before (issue 15 review, F1): a block device
    // made in the workspace wrote to a loop device backed by a file outside.
    let command = format!(
        "{CAPS}; mknod ./blk b 7 0; echo mknod-block $?; mknod ./chr c 1 3; echo mknod-char $?; \
         mkfifo ./fifo; echo fifo $?; chown 1234:1234 '{v}'; echo chown $?; \
         chattr +i '{v}' 2>/dev/null; echo chattr $?",
        v = victim.display()
    );
    let server = ScriptedServer::start_blocking(vec![
        bash("t1", &command),
        Reply::tool(
            "t2",
            "bash",
            json!({"command": CAPS, "run_in_background": true}).to_string(),
        ),
        bash("t3", "sleep 0.5"),
        Reply::tool("t4", "bash_output", json!({"bash_id": "bash_1"}).to_string()),
        bash("t5", IOCTLS),
        Reply::text("done"),
    ]);
    let output = exec(&home, &workspace, &server, &["use capabilities"]);
    // Undo an immutable flag before anything else can fail, so the folder can be removed.
    let _ = Command::new("chattr").arg("-i").arg(&victim).status();
    assert!(output.status.success(), "{}", text(&output.stderr));
    let results = tool_results(&server);
    assert_eq!(results.len(), 5, "{results:?}");
    assert!(holds_no_capability(&results[0]), "{results:?}");
    let ioctls: Vec<&str> = results[4].lines().filter(|l| l.starts_with("/dev/")).collect();
    assert_eq!(
        ioctls[0], "/dev/null ioctl: Inappropriate ioctl for device",
        "{results:?}"
    );
    if let Some(other) = ioctls.get(1) {
        let landlock_5 = sandbox::kernel_abi().as_ref().is_ok_and(|abi| *abi >= 5);
        assert!(
            !landlock_5
                || other.ends_with("ioctl: Permission denied")
                || other.ends_with("open: Permission denied"),
            "{results:?}"
        );
    }
    assert!(
        holds_no_capability(&results[3]),
        "the background job: {results:?}"
    );
    for refused in ["mknod-block 1", "mknod-char 1", "chown 1", "chattr 1"] {
        assert!(results[0].contains(refused), "{refused}: {results:?}");
    }
    assert!(
        results[0].contains("fifo 0"),
        "a fifo may still be made: {results:?}"
    );
    assert!(!workspace.join("blk").exists() && !workspace.join("chr").exists());
    let after = std::fs::metadata(&victim).unwrap();
    assert_eq!(std::os::unix::fs::MetadataExt::uid(&after), owner);
    assert!(
        std::fs::OpenOptions::new().append(true).open(&victim).is_ok(),
        "the file outside was made immutable"
    );
    let _ = std::fs::remove_dir_all(&outside);
}

#[test]
fn an_unsandboxed_command_keeps_the_capabilities_it_had() {
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } != 0 {
        println!("skipped: only root has capabilities to keep");
        return;
    }
    let home = TempDir::new();
    let workspace = TempDir::new();
    let server = ScriptedServer::start_blocking(vec![bash("t1", CAPS), Reply::text("done")]);
    let output = exec(&home, &workspace, &server, &["--sandbox", "off", "caps"]);
    assert!(output.status.success(), "{}", text(&output.stderr));
    let results = tool_results(&server);
    let effective = results[0]
        .lines()
        .find(|l| l.starts_with("CapEff:"))
        .unwrap_or("");
    assert!(
        !effective.ends_with("0000000000000000"),
        "--sandbox off changes nothing: {results:?}"
    );
}

/// A pseudo-terminal pair, as another terminal of the person's would be: the master end
/// and the slave's path; `None` where the system has no pseudo-terminals.
fn open_pty() -> Option<(std::fs::File, String)> {
    use std::os::fd::FromRawFd;
    // SAFETY: plain calls on a descriptor this function owns (wrapped in a File at once,
    // so it is closed on every path); ptsname_r writes at most `buffer.len()` bytes.
    unsafe {
        let master = libc::posix_openpt(libc::O_RDWR | libc::O_NOCTTY | libc::O_CLOEXEC);
        if master < 0 {
            return None;
        }
        let file = std::fs::File::from_raw_fd(master);
        let mut buffer = [0 as libc::c_char; 128];
        if libc::grantpt(master) != 0
            || libc::unlockpt(master) != 0
            || libc::ptsname_r(master, buffer.as_mut_ptr(), buffer.len()) != 0
        {
            return None;
        }
        let path = std::ffi::CStr::from_ptr(buffer.as_ptr())
            .to_string_lossy()
            .into_owned();
        Some((file, path))
    }
}

/// Tools a command commonly runs, each printing something that does not depend on where
/// or how it ran: the same output with the sandbox on and off means none of them broke.
const ORDINARY: &str = r#"cat /dev/null && echo null-ok
head -c 16 /dev/urandom | wc -c
head -c 4 /dev/zero | od -An -tx1
echo discard > /dev/null; echo full > /dev/full 2>/dev/null || echo full-refused
grep -c '^Name:' /proc/self/status; readlink /proc/self/fd/1 | cut -c1-5
f=/dev/shm/miniagent-ordinary-$$; echo shm > $f && cat $f && rm $f
cat <(echo via-dev-fd); echo to-stdout > /dev/stdout
tty; test -t 0 || echo stdin-not-a-tty
git init -q repo && git -C repo -c user.name=t -c user.email=t@t commit -q --allow-empty -m m && git -C repo log --format=%s
python3 -m venv --without-pip venv && ./venv/bin/python -c 'import sys; print(sys.prefix.endswith("venv"))'
python3 -c 'import os, tempfile; print(len(os.urandom(4)), os.path.isdir(tempfile.gettempdir()))'
node -e 'console.log(require("fs").readFileSync("/dev/null").length, require("os").cpus().length > 0)'
cargo --version > /dev/null && echo cargo-ok
ls /dev > /dev/null && echo ls-dev-ok"#;

#[test]
fn a_sandboxed_command_or_job_cannot_open_a_terminal_while_ordinary_tools_still_work() {
    if !landlock() {
        return;
    }
    let Some((mut master, slave)) = open_pty() else {
        println!("skipped: no pseudo-terminals here");
        return;
    };
    // What the person types into that terminal, waiting to be read.
    std::io::Write::write_all(&mut master, b"typed-secret\n").unwrap();
    let terminals = format!(
        "timeout 3 cat {slave}; echo cat $?; stty -F {slave} size; echo stty $?; \
         for t in /dev/tty /dev/ptmx /dev/pts/ptmx /dev/console /dev/tty0 /dev/vcs; do \
         if [ -e $t ]; then (exec 3< $t) 2>&1 | sed 's/.*: //'; fi; done"
    );
    let home = TempDir::new();
    let workspace = TempDir::new();
    let server = ScriptedServer::start_blocking(vec![
        bash("t1", &terminals),
        Reply::tool(
            "t2",
            "bash",
            json!({"command": format!("timeout 3 cat {slave} > keys.txt"), "run_in_background": true})
                .to_string(),
        ),
        bash("t3", "sleep 0.5"),
        Reply::tool("t4", "bash_output", json!({"bash_id": "bash_1"}).to_string()),
        bash("t5", ORDINARY),
        Reply::text("done"),
    ]);
    let output = exec(&home, &workspace, &server, &["read a terminal"]);
    assert!(output.status.success(), "{}", text(&output.stderr));
    let results = tool_results(&server);
    assert_eq!(results.len(), 5, "{results:?}");
    assert!(!results.iter().any(|r| r.contains("typed-secret")), "{results:?}");
    let keys = std::fs::read_to_string(workspace.join("keys.txt")).unwrap_or_default();
    assert!(
        !keys.contains("typed-secret"),
        "a background job read the terminal: {keys}"
    );
    let first = &results[0];
    assert!(
        first.contains(&format!("cat: {slave}: Permission denied")) && first.contains("cat 1"),
        "{first}"
    );
    assert!(first.contains("stty 1"), "{first}");
    assert!(
        first.contains(&format!(
            "[sandbox: commands cannot open terminals or input devices ({slave})]"
        )),
        "{first}"
    );
    // Every terminal device that exists was refused; none opened.
    assert!(
        first.lines().filter(|l| *l == "Permission denied").count() >= 2,
        "{first}"
    );
    assert!(!first.contains("No such device"), "{first}");
    assert!(results[3].contains("Permission denied"), "{results:?}");

    // The same ordinary tools, unsandboxed, print the same.
    let unsandboxed = ScriptedServer::start_blocking(vec![bash("t1", ORDINARY), Reply::text("done")]);
    let other = TempDir::new();
    let output = exec(&home, &other, &unsandboxed, &["--sandbox", "off", "ordinary"]);
    assert!(output.status.success(), "{}", text(&output.stderr));
    assert_eq!(results[4], tool_results(&unsandboxed)[0]);
    assert!(results[4].contains("null-ok\n16\n"), "{}", results[4]);

    // The terminal still holds what was typed: nothing read it.
    let mut slave_end = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOCTTY)
        .open(&slave)
        .unwrap();
    let mut typed = [0u8; 13];
    std::io::Read::read_exact(&mut slave_end, &mut typed).unwrap();
    assert_eq!(&typed, b"typed-secret\n");
}

#[test]
fn a_refused_read_of_the_agents_memory_is_not_called_a_write() {
    if !landlock() {
        return;
    }
    let home = TempDir::new();
    let workspace = TempDir::new();
    // $PPID is the supervisor; its parent is the agent.
    let server = ScriptedServer::start_blocking(vec![
        bash(
            "t1",
            "a=$(awk '{print $4}' /proc/$PPID/stat); head -c 1 /proc/$a/mem; head -c 1 /proc/$a/maps",
        ),
        Reply::text("done"),
    ]);
    let output = exec(&home, &workspace, &server, &["read the agent's memory"]);
    assert!(output.status.success(), "{}", text(&output.stderr));
    let result = tool_results(&server).remove(0);
    assert!(result.contains("for reading: Permission denied"), "{result}");
    assert!(!result.contains("tried to write"), "{result}");
    assert!(
        result.contains(
            "[sandbox: commands cannot look into processes outside the sandbox, miniagent among them (/proc/"
        ),
        "{result}"
    );
}

#[test]
fn a_sandboxed_command_cannot_read_the_environment_of_another_process_of_the_user() {
    if !landlock() {
        return;
    }
    // A wrapper or shell of the person's, with a key in its environment.
    let duration = unique_sleep();
    let _cleanup = KillOnDrop(format!("sleep {duration}"));
    let mut wrapper = Command::new("sleep")
        .arg(&duration)
        .env("WRAPPER_SECRET", "sk-wrapper-7777")
        .spawn()
        .unwrap();
    let command = format!(
        "cat /proc/{}/environ | tr '\\0' '\\n' | grep WRAPPER_SECRET",
        wrapper.id()
    );
    let home = TempDir::new();
    let workspace = TempDir::new();
    let server = ScriptedServer::start_blocking(vec![bash("t1", &command), Reply::text("done")]);
    let output = exec(&home, &workspace, &server, &["read a wrapper"]);
    let _ = wrapper.kill();
    let _ = wrapper.wait();
    assert!(output.status.success(), "{}", text(&output.stderr));
    let result = tool_results(&server).remove(0);
    assert!(!result.contains("sk-wrapper-7777"), "{result}");
    assert!(result.contains("Permission denied"), "{result}");
}
