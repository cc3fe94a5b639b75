//! Two kernel barriers of the command sandbox, each seen from inside a sandboxed command
//! that the scripted model runs through the real binary (`miniagent exec`, full-auto,
//! sandbox on), beside the same probe run outside: seccomp refuses `io_uring_setup`
//! (io_uring could make and connect sockets without the `socket` call the filter
//! checks), and Landlock's scope (ABI 6) keeps a command from reaching an abstract Unix
//! socket opened outside, even through a socket `socketpair` made, which seccomp allows.
#![allow(clippy::unwrap_used, clippy::expect_used)] // A test fails by panicking.

use crate::support;

use std::os::linux::net::SocketAddrExt;
use std::os::unix::net::{SocketAddr, UnixDatagram};
use std::process::{Command, Stdio};

use miniagent_core::tools::sandbox;
use pretty_assertions::assert_eq;
use serde_json::json;
use support::cli::{exec, text};
use support::{Reply, ScriptedServer, TempDir};

/// Whether `missing` is `None`; otherwise the shared skip rule reports why (failing the
/// test under CI unless the capability is named absent on purpose).
fn capable_or_skip(capability: &str, missing: Option<String>) -> bool {
    match missing {
        None => true,
        Some(why) => {
            support::skip::missing(capability, why);
            false
        }
    }
}

/// The Landlock ABI, when it is at least `at_least`; otherwise why not.
fn landlock_below(at_least: u32) -> Option<String> {
    match sandbox::kernel_abi() {
        Ok(abi) if *abi >= at_least => None,
        Ok(abi) => Some(format!("Landlock ABI {abi}, below {at_least}")),
        Err(reason) => Some(reason.to_string()),
    }
}

/// Runs `script` with python3 in `workspace` twice: sandboxed, as the model's `bash` call
/// through `miniagent exec`, and directly; returns (inside, outside) output.
fn probe(workspace: &TempDir, script: &str, args: &str) -> (String, String) {
    std::fs::write(workspace.join("probe.py"), script).unwrap();
    let command = format!("python3 probe.py {args}");
    let server = ScriptedServer::start_blocking(vec![
        Reply::tool("p1", "bash", json!({ "command": command }).to_string()),
        Reply::text("probed"),
    ]);
    let home = TempDir::new();
    let output = exec(&home, workspace, &server, &["probe the sandbox"]);
    assert_eq!(output.status.code(), Some(0), "{}", text(&output.stderr));
    let result = server.last_block(1);
    assert_eq!(result["is_error"], false, "{result}");
    let inside = result["content"].as_str().unwrap().to_string();
    let outside = Command::new("sh")
        .arg("-c")
        .arg(&command)
        .current_dir(workspace.path())
        .stdin(Stdio::null())
        .output()
        .unwrap();
    (inside, text(&outside.stdout))
}

/// Asks the kernel for an io_uring instance and prints the result: `fd`, or the errno.
const IO_URING_PROBE: &str = r#"
import ctypes
libc = ctypes.CDLL(None, use_errno=True)
params = ctypes.create_string_buffer(120)
ret = libc.syscall(425, 1, params)
print("io_uring_setup:", "fd" if ret >= 0 else "errno %d" % ctypes.get_errno())
"#;

#[test]
fn a_sandboxed_command_cannot_set_up_io_uring() {
    let arch = cfg!(any(target_arch = "x86_64", target_arch = "aarch64"));
    let missing = landlock_below(1).or((!arch).then(|| "no seccomp filter on this architecture".to_string()));
    if !capable_or_skip("landlock", missing) {
        return;
    }
    let workspace = TempDir::new();
    let (inside, outside) = probe(&workspace, IO_URING_PROBE, "");
    // The filter answers EACCES, an errno io_uring_setup itself never gives (outside it
    // makes an instance, or says EPERM or ENOSYS where io_uring is turned off).
    assert_eq!(inside, "io_uring_setup: errno 13\n[exit code: 0]");
    assert!(
        [
            "io_uring_setup: fd\n",
            "io_uring_setup: errno 1\n",
            "io_uring_setup: errno 38\n"
        ]
        .contains(&outside.as_str()),
        "{outside:?}"
    );
}

/// Sends a datagram to the abstract socket its argument names, from one end of a
/// socketpair, and prints whether it went.
const ABSTRACT_PROBE: &str = r#"
import socket, sys
ours, _ = socket.socketpair(socket.AF_UNIX, socket.SOCK_DGRAM)
try:
    ours.sendto(b"probe", b"\0" + sys.argv[1].encode())
    print("sent")
except OSError as err:
    print("refused: errno", err.errno)
"#;

#[test]
fn a_sandboxed_command_cannot_reach_an_abstract_socket_opened_outside() {
    if !capable_or_skip("landlock-scope", landlock_below(6)) {
        return;
    }
    let name = format!("miniagent-test-{}-{}", std::process::id(), fastrand::u64(..));
    let listener = UnixDatagram::bind_addr(&SocketAddr::from_abstract_name(&name).unwrap()).unwrap();
    listener.set_nonblocking(true).unwrap();
    let workspace = TempDir::new();
    let (inside, outside) = probe(&workspace, ABSTRACT_PROBE, &name);
    assert_eq!(inside, "refused: errno 1\n[exit code: 0]");
    assert_eq!(outside, "sent\n");
    // Only the probe run outside reached the listener.
    let mut received = Vec::new();
    let mut buffer = [0u8; 64];
    while let Ok(n) = listener.recv(&mut buffer) {
        received.push(String::from_utf8_lossy(&buffer[..n]).into_owned());
    }
    assert_eq!(received, ["probe"]);
}
