//! The ways out of a command's confinement that issue 15 found, each reproduced against the
//! real binary (`miniagent exec`, full-auto, sandbox on) and the scripted model server:
//! a tmux server reached through its socket, a descriptor inherited from the launching
//! shell, the API key in a command's environment or read from the agent's
//! `/proc/PID/environ`, and a process that leaves its group and clears its environment
//! (`env -i setsid`) outliving the command and the agent. Tests that need Landlock, tmux or
//! a pseudo-terminal skip where they are missing ([`skip`]).
#![allow(clippy::unwrap_used, clippy::expect_used)] // A test fails by panicking.

#[path = "sandbox_escapes/confinement.rs"]
mod confinement;
#[path = "sandbox_escapes/leaks.rs"]
mod leaks;
#[path = "sandbox_escapes/processes.rs"]
mod processes;
use crate::support;

use std::os::unix::fs::OpenOptionsExt;
use std::os::unix::process::CommandExt;
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use miniagent_core::tools::sandbox;
use serde_json::json;
use support::cli::{exec, exec_command, text};
use support::harness::TEST_KEY;
use support::skip;
use support::*;

/// Whether the kernel has Landlock; reports the skip ([`skip`]) when not.
fn landlock() -> bool {
    skip::needs("landlock", sandbox::kernel_abi().as_ref()).is_some()
}

/// A writable folder outside the temp dir (the build tree's scratch folder), or `None`
/// after the skip is reported.
fn outside_dir(name: &str) -> Option<PathBuf> {
    let dir =
        PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(format!("escapes-{name}-{}", std::process::id()));
    if dir.starts_with(std::env::temp_dir()) || std::fs::create_dir_all(&dir).is_err() {
        skip::missing(
            "outside-folder",
            format!("no writable folder outside {}", std::env::temp_dir().display()),
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

/// A pseudo-terminal pair, as another terminal of the person's would be: the master end
/// and the slave's path; why not where the system has no pseudo-terminals.
fn open_pty() -> Result<(std::fs::File, String), String> {
    use std::os::fd::FromRawFd;
    let failed = |call: &str| format!("{call}: {}", std::io::Error::last_os_error());
    // SAFETY: plain calls on a descriptor this function owns (wrapped in a File at once,
    // so it is closed on every path); ptsname_r writes at most `buffer.len()` bytes.
    unsafe {
        let master = libc::posix_openpt(libc::O_RDWR | libc::O_NOCTTY | libc::O_CLOEXEC);
        if master < 0 {
            return Err(failed("posix_openpt"));
        }
        let file = std::fs::File::from_raw_fd(master);
        let mut buffer = [0 as libc::c_char; 128];
        if libc::grantpt(master) != 0
            || libc::unlockpt(master) != 0
            || libc::ptsname_r(master, buffer.as_mut_ptr(), buffer.len()) != 0
        {
            return Err(failed("grantpt, unlockpt or ptsname_r"));
        }
        let path = std::ffi::CStr::from_ptr(buffer.as_ptr())
            .to_string_lossy()
            .into_owned();
        Ok((file, path))
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

/// What [`ORDINARY`] prints where every tool ran, sandboxed or not (a command's output is
/// a pipe, its input not a terminal).
const ORDINARY_OUTPUT: &str = "null-ok\n16\n 00 00 00 00\nfull-refused\n1\npipe:\nshm\nvia-dev-fd\n\
    to-stdout\nnot a tty\nstdin-not-a-tty\nm\nTrue\n4 True\n0 true\ncargo-ok\nls-dev-ok\n[exit code: 0]";
