//! A command's processes, and ending all of them: every command `bash` runs (in the
//! foreground, or as a background job through [`super::jobs`]) leads its own process
//! group, and [`ProcessGroup`] signals that group when the command ends.
//!
//! Processes that leave the group (`setsid`, daemons) are found by a tag: every command
//! gets its own value of [`TAG_VAR`] in its environment, which its descendants inherit.
//! When the command ends (exit, timeout, interrupt), whatever still carries its tag is
//! killed too, found through `/proc`. The rule is exact: a process is killed only if it
//! carries this command's tag, so background jobs (their own tags) and MCP servers (no
//! tag) live on. What escapes: a process that clears its environment (`env -i`, `sudo`).
//! miniagent does not become a child subreaper for this: adopted orphans would become its
//! zombies, which only a `waitpid(-1)` could reap, stealing the exit statuses of the
//! children tokio waits for.
use std::process::Stdio;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use super::sandbox::Confinement;

/// How long a process group gets between SIGTERM and SIGKILL.
const KILL_GRACE: Duration = Duration::from_secs(2);
/// The environment variable whose value tags every process of one command.
pub const TAG_VAR: &str = "MINIAGENT_COMMAND_TAG";

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
    }

    /// TERM for the group and the tagged processes now, KILL after [`KILL_GRACE`].
    pub(crate) fn terminate(&mut self) {
        if !self.armed {
            return;
        }
        self.armed = false;
        let pgid = self.pgid;
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
            kill_all(self.pgid, &self.tag);
        }
    }
}

impl Drop for ProcessGroup {
    fn drop(&mut self) {
        self.terminate();
    }
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

/// Starts `bash -c command` in `workspace` as the leader of a new process group, tagged,
/// confined as `confinement` says, with no standard input and both outputs piped.
pub(crate) fn spawn_in_group(
    command: &str,
    workspace: &std::path::Path,
    confinement: &Confinement,
) -> Result<(tokio::process::Child, ProcessGroup), String> {
    let tag = new_tag();
    let mut bash = tokio::process::Command::new("bash");
    bash.arg("-c")
        .arg(command)
        .current_dir(workspace)
        .env(TAG_VAR, &tag)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0)
        .kill_on_drop(true);
    let child = confinement
        .spawn(&mut bash)
        .map_err(|err| format!("cannot start bash: {err}"))?;
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
        },
    ))
}

/// Kills what is left of a command off the async workers.
pub(crate) async fn kill_rest(mut group: ProcessGroup) {
    let _ = tokio::task::spawn_blocking(move || group.kill_now()).await;
}
