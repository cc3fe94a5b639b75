//! A command's processes, and ending all of them: every command `bash` runs (in the
//! foreground, or as a background job through [`super::jobs`]) leads its own process
//! group, and [`ProcessGroup`] signals that group when the command ends.
//!
//! Each command runs under a supervisor ([`super::supervisor`]: `miniagent-supervise`),
//! a child subreaper that every descendant of the command stays under,
//! detached or not, and that kills them all when the command ends, when it is told to
//! stop, or when the agent ends (its standard input, a pipe only the agent holds, closes).
//! miniagent does not become a child subreaper itself: adopted orphans would become its
//! zombies, which only a `waitpid(-1)` could reap, stealing the exit statuses of the
//! children tokio waits for.
//!
//! Without a supervisor binary (the library used on its own, unit tests), processes
//! that leave the group (`setsid`, daemons) are found by a tag: every command gets its
//! own value of [`TAG_VAR`] in its environment, which its descendants inherit. When the
//! command ends, whatever still carries its tag is killed too, found through `/proc`.
//! What escapes that: a process that clears its environment (`env -i`, `sudo`).
//!
//! Commands get the agent's environment scrubbed ([`command_env`]): never an API key
//! variable, and no variable leading to a socket or agent outside the sandbox unless
//! `tools.bash.pass_env` names it.
use std::ffi::OsString;
use std::process::Stdio;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use super::sandbox::Confinement;

/// How long a process group gets between SIGTERM and SIGKILL.
const KILL_GRACE: Duration = Duration::from_secs(2);
/// The environment variable whose value tags every process of one command.
pub const TAG_VAR: &str = "MINIAGENT_COMMAND_TAG";

/// Variables that hold a provider's API key: never passed to a command.
pub const KEY_VARS: [&str; 4] = [
    "MINIAGENT_API_KEY",
    "ANTHROPIC_API_KEY",
    "OPENAI_API_KEY",
    "MINIMAX_API_KEY",
];

/// Variables that lead to a socket, agent or display outside the sandbox, through which
/// a server would act for the command: passed only when `tools.bash.pass_env` names them.
pub const SOCKET_VARS: [&str; 22] = [
    "TMUX",
    "TMUX_PANE",
    "STY",
    "ZELLIJ",
    "ZELLIJ_SESSION_NAME",
    "SSH_AUTH_SOCK",
    "SSH_AGENT_PID",
    "GPG_AGENT_INFO",
    "DBUS_SESSION_BUS_ADDRESS",
    "DBUS_SYSTEM_BUS_ADDRESS",
    "DOCKER_HOST",
    "CONTAINER_HOST",
    "DISPLAY",
    "WAYLAND_DISPLAY",
    "WAYLAND_SOCKET",
    "XAUTHORITY",
    "PULSE_SERVER",
    "KITTY_LISTEN_ON",
    "NVIM",
    "NVIM_LISTEN_ADDRESS",
    "VSCODE_IPC_HOOK_CLI",
    "WEZTERM_UNIX_SOCKET",
];

/// The environment a command gets: the agent's, without the key variables (the fixed
/// ones and `key_vars`, those `model.api_key_env` and the profiles name) and without [`SOCKET_VARS`]
/// not in `pass`.
pub fn command_env(
    vars: impl IntoIterator<Item = (OsString, OsString)>,
    key_vars: &[String],
    pass: &[String],
) -> Vec<(OsString, OsString)> {
    vars.into_iter()
        .filter(|(name, _)| {
            let Some(name) = name.to_str() else {
                return true;
            };
            let key =
                KEY_VARS.contains(&name) || key_vars.iter().any(|var| !var.is_empty() && name == var.trim());
            let socket = SOCKET_VARS.contains(&name) && !pass.iter().any(|p| p == name);
            !key && !socket && name != TAG_VAR
        })
        .collect()
}

/// Sends a signal to a whole process group.
pub(crate) fn signal_group(pgid: i32, signal: i32) {
    // SAFETY: kill(2) has no memory-safety preconditions; a stale or foreign group id
    // only makes it fail with ESRCH/EPERM, which we ignore.
    unsafe {
        libc::kill(-pgid, signal);
    }
}

/// Owns a running command: its process group and its tag. Unless disarmed, dropping it
/// sends TERM to both and KILL after a grace period, so cancelling the future never
/// leaves children behind.
pub(crate) struct ProcessGroup {
    pgid: i32,
    tag: String,
    armed: bool,
    /// The write end of the supervisor's standard input: closing it stops the command.
    /// `None` without a supervisor.
    control: Option<tokio::process::ChildStdin>,
}

impl ProcessGroup {
    pub(crate) fn pgid(&self) -> i32 {
        self.pgid
    }

    pub(crate) fn tag(&self) -> &str {
        &self.tag
    }

    /// The group ended by itself: nothing to signal on drop.
    pub(crate) fn disarm(&mut self) {
        self.armed = false;
        self.control = None;
    }

    /// Whether a supervisor runs the command (it then ends everything of it itself).
    pub(crate) fn supervised(&self) -> bool {
        self.control.is_some()
    }

    /// The command's first process exited: a supervisor has already ended the rest.
    pub(crate) fn exited(&mut self) {
        if self.supervised() {
            self.disarm();
        }
    }

    /// TERM for the group and the tagged processes now, KILL after [`KILL_GRACE`]; a
    /// supervisor does both itself, for every descendant.
    pub(crate) fn terminate(&mut self) {
        if !self.armed {
            return;
        }
        self.armed = false;
        let pgid = self.pgid;
        if self.control.take().is_some() {
            signal_group(pgid, libc::SIGTERM);
            return;
        }
        let tag = self.tag.clone();
        signal_group(pgid, libc::SIGTERM);
        // The rest follows on a plain thread: it scans /proc, which blocks, and the KILL
        // must also happen when the runtime is shutting down.
        std::thread::spawn(move || {
            signal_tagged(&tag, libc::SIGTERM);
            std::thread::sleep(KILL_GRACE);
            kill_all(pgid, &tag);
        });
    }

    /// KILL for everything of the command, now. Scans /proc: call it off the async workers.
    fn kill_now(&mut self) {
        if self.armed {
            self.armed = false;
            if self.control.take().is_some() {
                force(self.pgid, true);
            } else {
                kill_all(self.pgid, &self.tag);
            }
        }
    }
}

impl Drop for ProcessGroup {
    fn drop(&mut self) {
        self.terminate();
    }
}

/// KILL for the group; with a supervisor, which KILL would leave its descendants to,
/// SIGUSR1, which makes it KILL every one of them. Call it only while the group's
/// leader is not yet reaped.
pub(crate) fn force(pgid: i32, supervised: bool) {
    signal_group(pgid, if supervised { libc::SIGUSR1 } else { libc::SIGKILL });
}

/// KILL for the group and every process carrying `tag`. Blocks briefly (scans /proc).
pub(crate) fn kill_all(pgid: i32, tag: &str) {
    signal_group(pgid, libc::SIGKILL);
    // A process caught forking during one scan shows up in the next.
    for _ in 0..10 {
        if signal_tagged(tag, libc::SIGKILL) == 0 {
            break;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// Sends `signal` to every live process whose environment carries `tag`; returns how many.
#[cfg(target_os = "linux")]
fn signal_tagged(tag: &str, signal: i32) -> usize {
    use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
    let needle = format!("{TAG_VAR}={tag}");
    let carries_tag = |pid: &str| {
        // A zombie's environment reads as empty: it is not counted.
        std::fs::read(format!("/proc/{pid}/environ"))
            .is_ok_and(|environ| environ.split(|b| *b == 0).any(|var| var == needle.as_bytes()))
    };
    let own = std::process::id().to_string();
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return 0;
    };
    let mut signalled = 0;
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(pid) = name.to_str().filter(|n| *n != own) else {
            continue;
        };
        let Ok(number) = pid.parse::<i32>() else {
            continue;
        };
        if !carries_tag(pid) {
            continue;
        }
        // A pidfd pins the process: reading the tag again after opening it proves the
        // one signalled is the one tagged, even if the pid was reused in between.
        // SAFETY: pidfd_open takes a pid and flags and reads no memory.
        let raw = unsafe { libc::syscall(libc::SYS_pidfd_open, number, 0u32) };
        if raw < 0 {
            if std::io::Error::last_os_error().raw_os_error() == Some(libc::ENOSYS) {
                // Kernels before 5.3: a plain kill, with the small reuse race that implies.
                // SAFETY: kill(2) has no memory-safety preconditions.
                unsafe { libc::kill(number, signal) };
                signalled += 1;
            }
            continue;
        }
        let Ok(raw) = i32::try_from(raw) else { continue };
        // SAFETY: the kernel just returned this descriptor; nothing else owns it.
        let pidfd = unsafe { OwnedFd::from_raw_fd(raw) };
        if carries_tag(pid) {
            // SAFETY: pidfd_send_signal with a null siginfo reads no memory.
            unsafe {
                libc::syscall(
                    libc::SYS_pidfd_send_signal,
                    pidfd.as_raw_fd(),
                    signal,
                    std::ptr::null::<libc::siginfo_t>(),
                    0u32,
                )
            };
            signalled += 1;
        }
    }
    signalled
}

/// Without /proc the process group is all there is to go by.
#[cfg(not(target_os = "linux"))]
fn signal_tagged(_tag: &str, _signal: i32) -> usize {
    0
}

/// A tag no other command of any miniagent process shares.
fn new_tag() -> String {
    static NEXT: AtomicU64 = AtomicU64::new(1);
    format!(
        "{}-{}-{:08x}",
        std::process::id(),
        NEXT.fetch_add(1, Ordering::Relaxed),
        fastrand::u32(..)
    )
}

/// Starts `bash -c command` in `workspace` as the leader of a new process group (under
/// the supervisor when there is one), tagged, confined as `confinement` says, with the
/// environment `env`, no standard input and both outputs piped.
pub(crate) fn spawn_in_group(
    command: &str,
    workspace: &std::path::Path,
    confinement: &Confinement,
    env: &[(OsString, OsString)],
) -> Result<(tokio::process::Child, ProcessGroup), String> {
    let tag = new_tag();
    let supervisor = super::supervisor::program();
    let mut bash = match supervisor {
        Some(program) => {
            let mut supervised = tokio::process::Command::new(program);
            supervised
                .arg(super::supervisor::ARG)
                .arg(KILL_GRACE.as_millis().to_string());
            if matches!(confinement, Confinement::Sandboxed(_)) {
                supervised.arg(super::supervisor::SANDBOXED);
            }
            supervised.arg("--").arg("bash");
            supervised
        }
        None => tokio::process::Command::new("bash"),
    };
    bash.arg("-c")
        .arg(command)
        .current_dir(workspace)
        .env_clear()
        .envs(env.iter().map(|(name, value)| (name, value)))
        .env(TAG_VAR, &tag)
        .stdin(if supervisor.is_some() {
            Stdio::piped()
        } else {
            Stdio::null()
        })
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0)
        // A supervisor killed outright would leave the command's processes behind:
        // dropping the handle closes its input instead, and it ends them all.
        .kill_on_drop(supervisor.is_none());
    let mut child = confinement
        .spawn(&mut bash)
        .map_err(|err| format!("cannot start bash: {err}"))?;
    let control = child.stdin.take();
    let pid = child
        .id()
        .and_then(|id| i32::try_from(id).ok())
        .ok_or_else(|| "bash exited before it could be tracked".to_string())?;
    Ok((
        child,
        ProcessGroup {
            pgid: pid,
            tag,
            armed: true,
            control,
        },
    ))
}

/// Kills what is left of a command off the async workers.
pub(crate) async fn kill_rest(mut group: ProcessGroup) {
    let _ = tokio::task::spawn_blocking(move || group.kill_now()).await;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn commands_get_no_key_and_only_the_socket_variables_passed_through() {
        let vars = [
            ("PATH", "/usr/bin"),
            ("MINIAGENT_API_KEY", "sk-a"),
            ("OPENAI_API_KEY", "sk-c"),
            ("MY_OWN_KEY_VAR", "sk-e"),
            ("TMUX", "/tmp/tmux-0/default,1,0"),
            ("SSH_AUTH_SOCK", "/tmp/agent"),
            (TAG_VAR, "someone-else"),
        ]
        .map(|(name, value)| (name.into(), value.into()));
        let pass = vec!["SSH_AUTH_SOCK".to_string(), "MINIAGENT_API_KEY".to_string()];
        let kept: Vec<String> = command_env(vars, &[" MY_OWN_KEY_VAR ".to_string()], &pass)
            .into_iter()
            .map(|(name, _)| name.to_string_lossy().into_owned())
            .collect();
        assert_eq!(kept, ["PATH", "SSH_AUTH_SOCK"]);
    }
}
