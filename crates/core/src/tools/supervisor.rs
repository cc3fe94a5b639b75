//! The supervisor every command runs under: `miniagent-supervise` (`src/supervise.rs`,
//! run from a sealed copy in memory the agent made at start), or the miniagent binary
//! re-executed where that is not installed, as
//! `PROGRAM __miniagent-supervise GRACE_MS [--sandboxed] -- bash -c COMMAND`. It makes itself a child
//! subreaper, so every process the command starts, however it detaches (`setsid`,
//! double forks, `env -i`), stays its descendant: orphans are reparented to it, not to
//! init. It starts the command, relays its exit status as its own, and when the command
//! ends, or it is told to stop, kills and reaps every descendant left, so none outlives
//! the command.
//!
//! Told to stop: SIGTERM/SIGINT/SIGHUP (TERM to every descendant, then KILL after the
//! grace period), SIGUSR1 (KILL now), or end of file on its standard input. The agent
//! holds the only write end of that pipe, so the agent ending in any way, `kill -9`
//! included, stops the command too. (`PR_SET_PDEATHSIG` would not do: it fires when the
//! *thread* that started the child ends, and sandboxed commands are started from
//! short-lived threads.)
//!
//! A sandboxed command (`--sandboxed`; the supervisor itself is already in the sandbox)
//! is started in a nested Landlock domain that scopes signals (ABI 6), so it cannot kill
//! its supervisor (`kill -9 $PPID`) to get its processes out from under it.
//!
//! Why a separate process: the agent itself cannot be the subreaper, since adopted
//! orphans would be zombies that only `waitpid(-1)` reaps, stealing the exit statuses of
//! the children tokio waits for. The supervisor is single-threaded and owns all its
//! children, so it can. It costs one more exec per command, which is why it is a small
//! program of its own: started as the whole miniagent binary it ran 960,000
//! instructions (two thirds of them relocating the 30 MB binary) and took 333 page
//! faults, as `miniagent-supervise` 339,000 and 123 (`perf stat`, supervising
//! `/bin/true`: 2.1 ms of CPU against 1.8, 0.6 of them `/bin/true`'s own). Where no
//! supervisor can be run (a library user, unit tests), commands run without it and only
//! their process group and tag are ended ([`super::process`]).

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

/// The hidden first argument that makes the binary a supervisor.
pub const ARG: &str = "__miniagent-supervise";
/// The optional argument saying the command is sandboxed.
pub const SANDBOXED: &str = "--sandboxed";

static PROGRAM: OnceLock<PathBuf> = OnceLock::new();

/// Commands run under `program` (`miniagent-supervise`, or the miniagent binary) as
/// their supervisor from now on. The first call wins; the binary calls it at start.
pub fn use_program(program: PathBuf) {
    let _ = PROGRAM.set(program);
}

/// The supervisor binary, when one was set.
pub(crate) fn program() -> Option<&'static Path> {
    PROGRAM.get().map(PathBuf::as_path)
}

/// Runs as the supervisor when the arguments ask for it; returns the exit code then.
pub fn run_if_requested() -> Option<i32> {
    let mut args = std::env::args_os().skip(1);
    if args.next()? != ARG {
        return None;
    }
    let grace = args
        .next()
        .and_then(|ms| ms.to_str().and_then(|ms| ms.parse::<u64>().ok()))
        .map(Duration::from_millis);
    let mut separator = args.next();
    let sandboxed = separator.as_ref().is_some_and(|arg| arg == SANDBOXED);
    if sandboxed {
        separator = args.next();
    }
    let command: Vec<OsString> = args.collect();
    match (grace, separator) {
        (Some(grace), Some(sep)) if sep == "--" && !command.is_empty() => {
            Some(supervise(grace, sandboxed, &command))
        }
        _ => {
            eprintln!("miniagent: {ARG} takes GRACE_MS -- PROGRAM ARGS…");
            Some(2)
        }
    }
}

#[cfg(target_os = "linux")]
fn supervise(grace: Duration, sandboxed: bool, command: &[OsString]) -> i32 {
    match linux::supervise(grace, sandboxed, command) {
        Ok(code) => code,
        Err(err) => {
            eprintln!("miniagent: the command's supervisor failed: {err}");
            126
        }
    }
}

#[cfg(not(target_os = "linux"))]
fn supervise(_grace: Duration, _sandboxed: bool, command: &[OsString]) -> i32 {
    // No subreapers here: run the command and relay its status.
    match std::process::Command::new(&command[0])
        .args(&command[1..])
        .status()
    {
        Ok(status) => status.code().unwrap_or(128),
        Err(err) => {
            eprintln!("miniagent: cannot start {}: {err}", command[0].to_string_lossy());
            127
        }
    }
}

#[cfg(target_os = "linux")]
mod linux {
    use super::*;
    use std::io::{Error, Result};
    use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
    use std::os::unix::process::ExitStatusExt;

    fn check(result: libc::c_int) -> Result<libc::c_int> {
        if result < 0 {
            Err(Error::last_os_error())
        } else {
            Ok(result)
        }
    }

    /// The signals the loop handles; blocked, and read from a signalfd instead.
    fn handled_signals() -> libc::sigset_t {
        // SAFETY: sigemptyset/sigaddset initialise and fill the local set.
        unsafe {
            let mut set: libc::sigset_t = std::mem::zeroed();
            libc::sigemptyset(&mut set);
            for signal in [
                libc::SIGCHLD,
                libc::SIGTERM,
                libc::SIGINT,
                libc::SIGHUP,
                libc::SIGUSR1,
                libc::SIGPIPE,
            ] {
                libc::sigaddset(&mut set, signal);
            }
            set
        }
    }

    pub(super) fn supervise(grace: Duration, sandboxed: bool, command: &[OsString]) -> Result<i32> {
        // Nothing but the standard descriptors may reach the command (issue 15: a
        // descriptor inherited on a file outside the sandbox is a way out of it).
        // SAFETY: close_range takes plain integers.
        if unsafe { libc::syscall(libc::SYS_close_range, 3u32, u32::MAX, 0u32) } != 0 {
            close_on_exec_from(3);
        }
        // SAFETY: prctl with these arguments reads no memory.
        check(unsafe { libc::prctl(libc::PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) })?;
        let set = handled_signals();
        // SAFETY: `set` is initialised; the old mask is not wanted.
        check(unsafe { libc::sigprocmask(libc::SIG_BLOCK, &set, std::ptr::null_mut()) })?;
        // SAFETY: `set` is initialised; the returned descriptor is owned below.
        let signals = check(unsafe { libc::signalfd(-1, &set, libc::SFD_CLOEXEC) })?;
        // SAFETY: the kernel just returned this descriptor; nothing else owns it.
        let signals = unsafe { OwnedFd::from_raw_fd(signals) };

        let child = if sandboxed {
            // From a thread of its own: the nested domain binds that thread and the
            // command, not this loop.
            std::thread::scope(|scope| {
                scope
                    .spawn(|| {
                        crate::tools::sandbox::scope_signals_of_this_thread()?;
                        spawn(command)
                    })
                    .join()
                    .unwrap_or_else(|_| Err(Error::other("the command's start panicked")))
            })
        } else {
            spawn(command)
        };
        let main = match child {
            Ok(pid) => pid,
            Err(err) => {
                eprintln!("miniagent: cannot start {}: {err}", command[0].to_string_lossy());
                return Ok(127);
            }
        };

        let mut status: Option<i32> = None;
        let mut control_open = true;
        let mut deadline: Option<Instant> = None;
        loop {
            reap(main, &mut status, false);
            if status.is_some() {
                break;
            }
            if deadline.is_some_and(|d| Instant::now() >= d) {
                break;
            }
            let mut fds = [
                libc::pollfd {
                    fd: signals.as_raw_fd(),
                    events: libc::POLLIN,
                    revents: 0,
                },
                libc::pollfd {
                    fd: if control_open { 0 } else { -1 },
                    events: libc::POLLIN,
                    revents: 0,
                },
            ];
            let timeout = deadline.map_or(-1, |d| {
                i32::try_from(d.saturating_duration_since(Instant::now()).as_millis()).unwrap_or(i32::MAX)
            });
            // SAFETY: `fds` is a valid array of two pollfd for the length given.
            if unsafe { libc::poll(fds.as_mut_ptr(), 2, timeout) } < 0 {
                if Error::last_os_error().kind() == std::io::ErrorKind::Interrupted {
                    continue;
                }
                break;
            }
            if fds[1].revents != 0 {
                let mut buffer = [0u8; 64];
                // SAFETY: reads into a local buffer of the size given.
                let n = unsafe { libc::read(0, buffer.as_mut_ptr().cast(), buffer.len()) };
                if n <= 0 {
                    // The agent closed the pipe, or ended.
                    control_open = false;
                    stop(&mut deadline, grace);
                }
            }
            if fds[0].revents != 0 {
                // SAFETY: an all-zero siginfo is a valid value of this plain C struct.
                let mut info: libc::signalfd_siginfo = unsafe { std::mem::zeroed() };
                let size = std::mem::size_of::<libc::signalfd_siginfo>();
                // SAFETY: reads one siginfo into `info`, of exactly its size.
                let n = unsafe {
                    libc::read(
                        signals.as_raw_fd(),
                        (&mut info as *mut libc::signalfd_siginfo).cast(),
                        size,
                    )
                };
                if usize::try_from(n).ok() == Some(size) {
                    match i32::try_from(info.ssi_signo).unwrap_or(0) {
                        libc::SIGTERM | libc::SIGINT | libc::SIGHUP => stop(&mut deadline, grace),
                        libc::SIGUSR1 => deadline = Some(Instant::now()),
                        _ => {}
                    }
                }
            }
        }
        // The command ended, or the grace period did: nothing of it may stay.
        kill_descendants(main, &mut status);
        drop(signals);
        Ok(relay(status.unwrap_or(libc::SIGKILL)))
    }

    /// Starts `command` (looked up in PATH) with standard input from /dev/null, no signal
    /// blocked and SIGPIPE at its default: posix_spawn directly, because std's `Command`
    /// passes on the signals this process blocks for its signalfd.
    fn spawn(command: &[OsString]) -> Result<i32> {
        use std::ffi::CString;
        use std::os::unix::ffi::OsStrExt;
        let args: Vec<CString> = command
            .iter()
            .map(|arg| CString::new(arg.as_bytes()).map_err(Error::other))
            .collect::<Result<_>>()?;
        let mut argv: Vec<*mut libc::c_char> = args.iter().map(|arg| arg.as_ptr().cast_mut()).collect();
        argv.push(std::ptr::null_mut());
        let null = c"/dev/null";
        // SAFETY: the attribute and file-action objects are initialised before use and
        // destroyed after; every pointer passed (argv, the path, `environ`) stays valid
        // across posix_spawnp, which copies what it needs.
        unsafe {
            let mut attr: libc::posix_spawnattr_t = std::mem::zeroed();
            let mut actions: libc::posix_spawn_file_actions_t = std::mem::zeroed();
            libc::posix_spawnattr_init(&mut attr);
            libc::posix_spawn_file_actions_init(&mut actions);
            let mut empty: libc::sigset_t = std::mem::zeroed();
            libc::sigemptyset(&mut empty);
            let mut default: libc::sigset_t = std::mem::zeroed();
            libc::sigemptyset(&mut default);
            libc::sigaddset(&mut default, libc::SIGPIPE);
            libc::posix_spawnattr_setsigmask(&mut attr, &empty);
            libc::posix_spawnattr_setsigdefault(&mut attr, &default);
            // A session of its own: the command has no controlling terminal, so it can
            // neither open /dev/tty to read what the person types nor push keys into
            // their terminal with TIOCSTI (issue 15 review: a sandboxed command typed a
            // command line into the shell that started miniagent).
            libc::posix_spawnattr_setflags(
                &mut attr,
                (libc::POSIX_SPAWN_SETSIGMASK | libc::POSIX_SPAWN_SETSIGDEF) as libc::c_short
                    | libc::POSIX_SPAWN_SETSID,
            );
            libc::posix_spawn_file_actions_addopen(&mut actions, 0, null.as_ptr(), libc::O_RDONLY, 0);
            let mut pid: libc::pid_t = 0;
            let result = libc::posix_spawnp(&mut pid, argv[0], &actions, &attr, argv.as_ptr(), environ);
            libc::posix_spawn_file_actions_destroy(&mut actions);
            libc::posix_spawnattr_destroy(&mut attr);
            if result != 0 {
                return Err(Error::from_raw_os_error(result));
            }
            Ok(pid)
        }
    }

    unsafe extern "C" {
        static environ: *const *mut libc::c_char;
    }

    /// TERM to every descendant, and the deadline for the KILL that follows.
    fn stop(deadline: &mut Option<Instant>, grace: Duration) {
        if deadline.is_none() {
            for pid in descendants() {
                // SAFETY: kill(2) has no memory-safety preconditions.
                unsafe { libc::kill(pid, libc::SIGTERM) };
            }
            *deadline = Some(Instant::now() + grace);
        }
    }

    /// Reaps what has ended, noting the status of `main`; with `block`, first waits for
    /// one child to end. Returns false when no child is left.
    fn reap(main: i32, status: &mut Option<i32>, block: bool) -> bool {
        let mut flags = if block { 0 } else { libc::WNOHANG };
        loop {
            let mut raw = 0;
            // SAFETY: `raw` is a valid place for the status.
            let pid = unsafe { libc::waitpid(-1, &mut raw, flags) };
            if pid < 0 {
                if Error::last_os_error().kind() == std::io::ErrorKind::Interrupted {
                    continue;
                }
                return false;
            }
            if pid == 0 {
                return true;
            }
            if pid == main {
                *status = Some(raw);
            }
            flags = libc::WNOHANG;
        }
    }

    /// KILL for every process left under this one, until none is: a process killed
    /// leaves its children to us (we are their subreaper), and they go in the next round.
    fn kill_descendants(main: i32, status: &mut Option<i32>) {
        while reap(main, status, false) {
            for pid in children() {
                // SAFETY: kill(2) has no memory-safety preconditions.
                unsafe { libc::kill(pid, libc::SIGKILL) };
            }
            if !reap(main, status, true) {
                return;
            }
        }
    }

    /// This process's children: not yet reaped, so their pids cannot have been reused.
    fn children() -> Vec<i32> {
        let own = std::process::id();
        match std::fs::read_to_string(format!("/proc/{own}/task/{own}/children")) {
            Ok(list) => list
                .split_whitespace()
                .filter_map(|pid| pid.parse().ok())
                .collect(),
            // A kernel without CONFIG_PROC_CHILDREN.
            Err(_) => descendants(),
        }
    }

    /// Every process below this one, found through the parent ids in /proc.
    fn descendants() -> Vec<i32> {
        let own = std::process::id().cast_signed();
        let mut parents: Vec<(i32, i32)> = Vec::new();
        if let Ok(entries) = std::fs::read_dir("/proc") {
            for entry in entries.flatten() {
                let Some(pid) = entry.file_name().to_str().and_then(|n| n.parse::<i32>().ok()) else {
                    continue;
                };
                let Ok(stat) = std::fs::read_to_string(entry.path().join("stat")) else {
                    continue;
                };
                // `pid (comm) state ppid …`: comm may hold spaces and parentheses.
                let ppid = stat
                    .rsplit_once(')')
                    .and_then(|(_, rest)| rest.split_whitespace().nth(1))
                    .and_then(|ppid| ppid.parse::<i32>().ok());
                if let Some(ppid) = ppid {
                    parents.push((pid, ppid));
                }
            }
        }
        let mut found = vec![own];
        let mut index = 0;
        while index < found.len() {
            let parent = found[index];
            found.extend(parents.iter().filter(|(_, p)| *p == parent).map(|(pid, _)| *pid));
            index += 1;
        }
        found.remove(0);
        found
    }

    /// Ends this process as the command ended: its exit code, or its signal.
    fn relay(raw: i32) -> i32 {
        let status = std::process::ExitStatus::from_raw(raw);
        if let Some(code) = status.code() {
            return code;
        }
        let signal = status.signal().unwrap_or(libc::SIGKILL);
        // SAFETY: resetting a handler, unblocking all signals and raising one read no
        // memory but the local set.
        unsafe {
            libc::signal(signal, libc::SIG_DFL);
            let mut all: libc::sigset_t = std::mem::zeroed();
            libc::sigfillset(&mut all);
            libc::sigprocmask(libc::SIG_UNBLOCK, &all, std::ptr::null_mut());
            libc::raise(signal);
        }
        128 + signal
    }
}

/// Marks every open descriptor from `first` on close-on-exec, as listed in /proc.
pub(crate) fn close_on_exec_from(first: i32) {
    let Ok(entries) = std::fs::read_dir("/proc/self/fd") else {
        return;
    };
    // Collected first: the listing's own descriptor is among them.
    let fds: Vec<i32> = entries
        .flatten()
        .filter_map(|entry| entry.file_name().to_str().and_then(|n| n.parse().ok()))
        .filter(|fd| *fd >= first)
        .collect();
    for fd in fds {
        // SAFETY: fcntl on a descriptor number; a closed one fails with EBADF, ignored.
        unsafe {
            let flags = libc::fcntl(fd, libc::F_GETFD);
            if flags >= 0 {
                libc::fcntl(fd, libc::F_SETFD, flags | libc::FD_CLOEXEC);
            }
        }
    }
}
