//! Hardening done first thing at process start, before any thread or child exists
//! (`hardening::start()` is the first line of `main`):
//!
//! - Every descriptor above 2 inherited from whoever launched miniagent is marked
//!   close-on-exec, so no command, job or MCP server inherits it (issue 15: `echo … >&7`
//!   wrote through a descriptor the launching shell had opened on a file outside the
//!   sandbox). Marking once, at the cause, is enough: every descriptor Rust and its
//!   crates open afterwards is close-on-exec already. The command supervisor closes
//!   everything above 2 again before it starts a command ([`crate::tools::supervisor`]).
//! - The API key must not be readable from `/proc/PID/environ`, which shows the block of
//!   variables the process started with. A command that keeps root's capabilities (run
//!   with `--sandbox off`; sandboxed ones once kept all but two) reads it, and `maps`,
//!   whatever `PR_SET_DUMPABLE` says (kernel 6.18). So every variable is copied to the
//!   heap (`setenv`, which later lookups use) and the original block is zeroed:
//!   `environ` then reads as NUL bytes.
//! - The process is made non-dumpable (`PR_SET_DUMPABLE 0`): its memory (`/proc/PID/mem`,
//!   where the key also is), `maps`, `environ` and descriptors can then be opened only
//!   with `CAP_SYS_PTRACE`, and sandboxed commands hold no capability at all
//!   ([`crate::tools::sandbox`]). A command run outside the sandbox by root keeps it and
//!   can read them.
//! - The binary records the supervisor commands run under (`miniagent-supervise` beside
//!   it, or itself), and when it was started as one, runs as that instead.

/// Call first in `main`. Never returns when the process was started as a supervisor.
pub fn start() {
    if let Some(code) = crate::tools::supervisor::run_if_requested() {
        std::process::exit(code);
    }
    close_inherited_on_exec();
    wipe_initial_environment();
    // SAFETY: prctl with these arguments reads no memory.
    unsafe { libc::prctl(libc::PR_SET_DUMPABLE, 0, 0, 0, 0) };
    if let Some(program) = supervisor_program() {
        crate::tools::supervisor::use_program(program);
    }
}

/// What commands run under: a sealed copy in memory of the small `miniagent-supervise`
/// installed beside this binary, or else this binary itself. The copy is made now,
/// once: the file beside it may sit in the workspace (a build of miniagent working on
/// its own source), where a command could rewrite it between two commands, while this
/// binary cannot be written as it runs. Either path (`/proc/self/fd/N`,
/// `/proc/self/exe`) keeps naming what was started even after the files on disk are
/// replaced (a rebuild while a session runs).
fn supervisor_program() -> Option<std::path::PathBuf> {
    let own = std::path::PathBuf::from("/proc/self/exe");
    let beside = std::fs::read_link(&own)
        .or_else(|_| std::env::current_exe())
        .ok()
        .and_then(|exe| Some(exe.parent()?.join(SUPERVISOR)));
    if let Some(fd) = beside.and_then(|path| sealed_copy(&path)) {
        return Some(std::path::PathBuf::from(format!("/proc/self/fd/{fd}")));
    }
    if own.exists() {
        return Some(own);
    }
    std::env::current_exe().ok()
}

/// A sealed, executable, close-on-exec in-memory copy of the program at `path`, held
/// open for the life of the process; `None` where the kernel lets no such copy run.
#[cfg(target_os = "linux")]
fn sealed_copy(path: &std::path::Path) -> Option<i32> {
    use std::io::{Read, Write};
    use std::os::fd::{AsRawFd, FromRawFd, IntoRawFd};
    // 2 refuses to run any in-memory file (and 1 makes ours non-executable).
    if std::fs::read_to_string("/proc/sys/vm/memfd_noexec").is_ok_and(|v| v.trim() != "0") {
        return None;
    }
    // A regular file only: opening a named pipe put there would wait for a writer.
    if !std::fs::metadata(path).is_ok_and(|meta| meta.is_file()) {
        return None;
    }
    let mut program = std::fs::File::open(path).ok()?;
    // ELF, or it is not the supervisor.
    let mut magic = [0u8; 4];
    program.read_exact(&mut magic).ok()?;
    if &magic != b"\x7fELF" {
        return None;
    }
    const MFD_EXEC: libc::c_uint = 0x10;
    let flags = libc::MFD_CLOEXEC | libc::MFD_ALLOW_SEALING;
    // SAFETY: memfd_create reads the NUL-terminated name and takes plain flags.
    let mut fd = unsafe { libc::memfd_create(c"miniagent-supervise".as_ptr(), flags | MFD_EXEC) };
    if fd < 0 {
        // Kernels before 6.3 know no MFD_EXEC; their in-memory files are executable.
        // SAFETY: as above.
        fd = unsafe { libc::memfd_create(c"miniagent-supervise".as_ptr(), flags) };
    }
    if fd < 0 {
        return None;
    }
    // SAFETY: the kernel just returned this descriptor; nothing else owns it.
    let mut file = unsafe { std::fs::File::from_raw_fd(fd) };
    // Copied in the kernel (copy_file_range), through no buffer of ours.
    file.write_all(&magic).ok()?;
    std::io::copy(&mut program, &mut file).ok()?;
    let seals = libc::F_SEAL_SEAL | libc::F_SEAL_SHRINK | libc::F_SEAL_GROW | libc::F_SEAL_WRITE;
    // SAFETY: fcntl on our own descriptor with integer arguments.
    if unsafe { libc::fcntl(file.as_raw_fd(), libc::F_ADD_SEALS, seals) } != 0 {
        return None;
    }
    Some(file.into_raw_fd())
}

#[cfg(not(target_os = "linux"))]
fn sealed_copy(_path: &std::path::Path) -> Option<i32> {
    None
}

/// The supervisor's binary, installed beside miniagent's (`src/supervise.rs`).
pub const SUPERVISOR: &str = "miniagent-supervise";

/// Marks every descriptor above 2 close-on-exec.
fn close_inherited_on_exec() {
    const CLOSE_RANGE_CLOEXEC: u32 = 1 << 2;
    // SAFETY: close_range takes plain integers and only changes descriptor flags here.
    let marked = unsafe { libc::syscall(libc::SYS_close_range, 3u32, u32::MAX, CLOSE_RANGE_CLOEXEC) };
    if marked != 0 {
        // Kernels before 5.11.
        crate::tools::supervisor::close_on_exec_from(3);
    }
}

/// Moves every variable to the heap and zeroes the block the process started with (what
/// `/proc/PID/environ` shows). Runs before any other thread exists, so nothing reads the
/// environment meanwhile.
#[cfg(target_os = "linux")]
fn wipe_initial_environment() {
    use std::os::unix::ffi::OsStrExt;
    let Some((start, end)) = environment_block() else {
        return;
    };
    for (name, value) in std::env::vars_os() {
        let (Ok(name), Ok(value)) = (
            std::ffi::CString::new(name.as_bytes()),
            std::ffi::CString::new(value.as_bytes()),
        ) else {
            return;
        };
        // SAFETY: single-threaded (see above); both strings are NUL-terminated and live
        // across the call, which copies them.
        if unsafe { libc::setenv(name.as_ptr(), value.as_ptr(), 1) } != 0 {
            // A variable still points into the block: leave the block as it is.
            return;
        }
    }
    // Every entry of `environ` now points at a heap copy; the block is unreferenced.
    // SAFETY: [start, end) is this process's own initial environment block, mapped
    // writable on its stack, as the kernel reports it; nothing points into it any more.
    unsafe { std::ptr::write_bytes(start as *mut u8, 0, end - start) };
}

#[cfg(not(target_os = "linux"))]
fn wipe_initial_environment() {}

/// `env_start` and `env_end` from /proc/self/stat (fields 50 and 51).
#[cfg(target_os = "linux")]
fn environment_block() -> Option<(usize, usize)> {
    let stat = std::fs::read_to_string("/proc/self/stat").ok()?;
    let (_, rest) = stat.rsplit_once(')')?;
    // `rest` starts at field 3.
    let mut fields = rest.split_whitespace().skip(50 - 3);
    let start: usize = fields.next()?.parse().ok()?;
    let end: usize = fields.next()?.parse().ok()?;
    (start != 0 && end > start && end - start < 16 << 20).then_some((start, end))
}
