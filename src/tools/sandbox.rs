//! The Linux Landlock sandbox `bash` commands (and background jobs) run in: they may read
//! and execute anything, but write only under the workspace, the system temp dir
//! (`std::env::temp_dir()`) and `/dev/shm`, plus to `/dev/null`-like devices. Writing to
//! the terminal (`/dev/tty`, `/dev/pts/*`) is not allowed: the workbench owns it.
//!
//! When: read-only, ask and auto-edit always sandbox; full-auto sandboxes too unless
//! `tools.bash.sandbox = "off"` (`--sandbox off`). The approval mode is read when each call
//! starts, so `/approval` takes effect on the next command. A kernel without Landlock runs
//! commands unsandboxed, and the session says so (`session_configured`, the title bar,
//! exec's first line).
//!
//! How: the ruleset is built in the parent (opening paths allocates). A short-lived
//! thread enters it (`prctl(PR_SET_NO_NEW_PRIVS)`, then `landlock_restrict_self`, both of
//! which bind only the calling thread) and starts the command; a child inherits the
//! credentials of the thread that starts it, sandbox included. That way the command
//! starts with `posix_spawn` (a vfork) instead of a fork of the whole process with code to
//! run between fork and exec: 1.7 ms instead of 4.4 ms from a 40 MB process on the 2-core
//! machine. Rights a kernel's Landlock ABI does not know are left out; on ABI 1, moving a
//! file to another folder is always refused. `no_new_privs` also means set-uid programs
//! (sudo) do not gain privileges inside the sandbox.
//!
//! Beyond files, the same thread also: scopes the domain (Landlock ABI 6) so a command
//! can neither signal processes outside it nor connect to abstract Unix sockets; with
//! `tools.bash.network = false`, refuses TCP bind and connect (ABI 4); drops
//! `CAP_SYS_ADMIN` (with which root could push keys into any terminal) and
//! `CAP_SYS_PTRACE` from the capability bounding set (when running as root), so with the
//! agent non-dumpable ([`crate::hardening`]) a command cannot read the agent's
//! `/proc/PID/environ` or memory (Landlock does not mediate those reads); and, unless
//! `tools.bash.unix_sockets = true`, installs a seccomp filter that refuses
//! `socket(AF_UNIX, …)`. That last one is needed because Landlock (up to ABI 7) does not
//! mediate `connect()` to a *pathname* socket: a tmux, docker or D-Bus server listening on
//! one would otherwise act for the command, outside the sandbox (`tmux -S sock
//! run-shell …`). `socketpair` stays allowed (shells and runtimes use it internally);
//! `io_uring_setup` is refused too (io_uring can create and connect sockets without the
//! `socket` call), as is `socketcall` for 32-bit programs (its arguments are in memory a
//! filter cannot read); x32 calls are checked like native ones. The filter is a dozen
//! classic-BPF instructions written here rather than a crate: it is fixed, small, and
//! read once in review; a crate such as `seccompiler` would add a dependency for less
//! clarity. Architectures other than x86_64 and aarch64 get no filter.

use std::fmt;
use std::path::{Component, Path, PathBuf};
use std::sync::Arc;
use std::sync::OnceLock;

use serde::{Deserialize, Serialize};

use crate::config::{ApprovalMode, BashSettings};
use crate::protocol::SandboxState;

/// `tools.bash.sandbox`: whether full-auto sandboxes commands too.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "lowercase")]
pub enum SandboxSetting {
    /// Sandbox commands in every approval mode, where the kernel supports it.
    #[default]
    #[serde(alias = "on")]
    #[value(name = "on", alias = "auto")]
    Auto,
    /// Full-auto runs commands unsandboxed; the other modes still sandbox them.
    Off,
}

impl fmt::Display for SandboxSetting {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            SandboxSetting::Auto => "auto",
            SandboxSetting::Off => "off",
        })
    }
}

/// Whether a command started in `mode` is sandboxed under `setting` (kernel permitting).
pub fn applies(setting: SandboxSetting, mode: ApprovalMode) -> bool {
    match mode {
        ApprovalMode::ReadOnly | ApprovalMode::Ask | ApprovalMode::AutoEdit => true,
        ApprovalMode::FullAuto => match setting {
            SandboxSetting::Auto => true,
            SandboxSetting::Off => false,
        },
    }
}

/// What the session reports: the setting, unless the kernel cannot sandbox at all.
pub fn session_state(setting: SandboxSetting) -> SandboxState {
    match kernel_abi() {
        Err(reason) => SandboxState::Unavailable {
            reason: reason.clone(),
        },
        Ok(_) => match setting {
            SandboxSetting::Auto => SandboxState::Enforced,
            SandboxSetting::Off => SandboxState::Off,
        },
    }
}

/// Whether commands started now in `mode` are sandboxed, as far as `state` tells.
pub fn active(state: &SandboxState, mode: ApprovalMode) -> Option<bool> {
    match state {
        SandboxState::Unknown => None,
        SandboxState::Enforced => Some(true),
        SandboxState::Off => Some(applies(SandboxSetting::Off, mode)),
        SandboxState::Unavailable { .. } => Some(false),
    }
}

/// The kernel's Landlock ABI version, or why there is none; asked once per process.
pub fn kernel_abi() -> &'static Result<u32, String> {
    static ABI: OnceLock<Result<u32, String>> = OnceLock::new();
    ABI.get_or_init(landlock::abi)
}

/// Puts the calling thread, and what it starts from then on, in a Landlock domain of its
/// own that only forbids signalling processes outside it (ABI 6; nothing on older
/// kernels). The supervisor starts a sandboxed command this way, so the command cannot
/// kill its supervisor and leave its other processes unwatched.
pub(crate) fn scope_signals_of_this_thread() -> std::io::Result<()> {
    match kernel_abi() {
        Ok(abi) if *abi >= 6 => landlock::scope_signals(),
        _ => Ok(()),
    }
}

/// How one command runs.
pub enum Confinement {
    /// In the Landlock sandbox.
    Sandboxed(Ruleset),
    /// Without one: turned off for full-auto, or the kernel has no Landlock.
    Unconfined,
}

impl Confinement {
    /// The confinement of a command started now in `mode`, working in `workspace`.
    pub fn for_command(
        settings: &BashSettings,
        mode: ApprovalMode,
        workspace: &Path,
    ) -> Result<Self, String> {
        if !applies(settings.sandbox, mode) {
            return Ok(Confinement::Unconfined);
        }
        let options = Options {
            unix_sockets: settings.unix_sockets,
            network: settings.network,
        };
        match kernel_abi() {
            Ok(abi) => Ruleset::build(*abi, workspace, options)
                .map(Confinement::Sandboxed)
                .map_err(|err| format!("cannot set up the sandbox: {err}")),
            Err(_) => Ok(Confinement::Unconfined),
        }
    }

    /// Starts `command` inside the sandbox (or not, when unconfined). Call it from within
    /// the tokio runtime: the child is reaped, and its pipes read, by that runtime.
    pub fn spawn(&self, command: &mut tokio::process::Command) -> std::io::Result<tokio::process::Child> {
        match self {
            Confinement::Sandboxed(ruleset) => ruleset.spawn(command),
            Confinement::Unconfined => command.spawn(),
        }
    }

    /// A line telling the model its command hit the sandbox, when `output` shows a write
    /// refused outside the allowed folders (relative paths are taken from `cwd`).
    pub fn denial_hint(&self, output: &str, cwd: &Path) -> Option<String> {
        let Confinement::Sandboxed(ruleset) = self else {
            return None;
        };
        let refused = denied_paths(output, cwd)
            .into_iter()
            .find(|path| !ruleset.allows(path) && writable_without_sandbox(path));
        if let Some(refused) = refused {
            return Some(format!(
                "[sandbox: writes are allowed only under {} and {}; this command tried to write elsewhere ({})]",
                ruleset.workspace.display(),
                ruleset.temp.display(),
                refused.display()
            ));
        }
        let socket_refused = output.lines().any(|line| {
            let line = line.to_ascii_lowercase();
            line.contains("permission denied") && (line.contains("socket") || line.contains("connect"))
        });
        (socket_refused && !ruleset.options.unix_sockets).then(|| {
            "[sandbox: Unix sockets are refused to sandboxed commands, since a server outside the sandbox would act for them; tools.bash.unix_sockets = true allows them]"
                .to_string()
        })
    }
}

/// What a sandboxed command may do besides writing under its folders.
#[derive(Clone, Copy, Debug)]
struct Options {
    /// Open Unix sockets (no seccomp filter, no abstract-socket scope).
    unix_sockets: bool,
    /// Bind and connect TCP sockets.
    network: bool,
}

/// A Landlock ruleset ready to be entered by a child process.
pub struct Ruleset {
    #[cfg_attr(not(target_os = "linux"), allow(dead_code))]
    fd: Arc<std::os::fd::OwnedFd>,
    #[cfg_attr(not(target_os = "linux"), allow(dead_code))]
    options: Options,
    workspace: PathBuf,
    temp: PathBuf,
    /// Every folder or device writes are allowed under, as given and canonical.
    allowed: Vec<PathBuf>,
}

/// Devices a shell may write to wherever it runs (`> /dev/null`).
const WRITABLE_DEVICES: [&str; 5] = [
    "/dev/null",
    "/dev/zero",
    "/dev/full",
    "/dev/random",
    "/dev/urandom",
];

impl Ruleset {
    fn build(abi: u32, workspace: &Path, options: Options) -> std::io::Result<Self> {
        let temp = std::env::temp_dir();
        let folders = [workspace.to_path_buf(), temp.clone(), PathBuf::from("/dev/shm")];
        let devices = WRITABLE_DEVICES.map(PathBuf::from);
        let fd = landlock::ruleset(abi, &folders, &devices, options)?;
        let mut allowed = Vec::new();
        for path in folders.iter().chain(devices.iter()) {
            if let Ok(canonical) = path.canonicalize()
                && canonical != *path
            {
                allowed.push(canonical);
            }
            allowed.push(path.clone());
        }
        Ok(Self {
            fd: Arc::new(fd),
            options,
            workspace: workspace.to_path_buf(),
            temp,
            allowed,
        })
    }

    fn allows(&self, path: &Path) -> bool {
        self.allowed.iter().any(|root| path.starts_with(root))
    }

    /// Starts `command` from a thread that has entered the ruleset; the thread ends with
    /// the spawn, so the restriction binds nothing else of this process.
    #[cfg(target_os = "linux")]
    fn spawn(&self, command: &mut tokio::process::Command) -> std::io::Result<tokio::process::Child> {
        use std::os::fd::AsRawFd;
        let runtime = tokio::runtime::Handle::try_current().map_err(std::io::Error::other)?;
        let fd = self.fd.as_raw_fd();
        let seccomp = !self.options.unix_sockets;
        std::thread::scope(|scope| {
            let spawner = std::thread::Builder::new()
                .name("sandboxed-spawn".into())
                .spawn_scoped(scope, || {
                    let _runtime = runtime.enter();
                    landlock::restrict_self(fd, seccomp)?;
                    command.spawn()
                })?;
            spawner
                .join()
                .unwrap_or_else(|_| Err(std::io::Error::other("the sandboxed spawn panicked")))
        })
    }

    #[cfg(not(target_os = "linux"))]
    fn spawn(&self, command: &mut tokio::process::Command) -> std::io::Result<tokio::process::Child> {
        command.spawn()
    }
}

/// Paths named by "Permission denied" lines: quoted ones, and `: `-separated fields that
/// look like paths (`bash: line 1: /root/x: Permission denied`).
fn denied_paths(output: &str, cwd: &Path) -> Vec<PathBuf> {
    let mut paths = Vec::new();
    for line in output.lines() {
        if !line.to_ascii_lowercase().contains("permission denied") {
            continue;
        }
        let mut candidates: Vec<&str> = Vec::new();
        for quote in ['\'', '"', '`'] {
            let mut parts = line.split(quote);
            parts.next();
            while let Some(inside) = parts.next() {
                candidates.push(inside);
                parts.next();
            }
        }
        candidates.extend(line.split(": ").map(str::trim));
        for candidate in candidates {
            let candidate = candidate.trim_end_matches(['\'', '"', ',']);
            let looks_like_path = ["/", "./", "../", "~/"].iter().any(|p| candidate.starts_with(p));
            if looks_like_path && !candidate.contains('\n') {
                let path = match candidate.strip_prefix("~/") {
                    Some(rest) => {
                        std::env::var_os("HOME").map_or_else(|| cwd.join(rest), |h| Path::new(&h).join(rest))
                    }
                    None => cwd.join(candidate),
                };
                paths.push(normalize(&path));
            }
        }
    }
    paths
}

/// `a/./b/../c` → `a/c`, without touching the file system.
fn normalize(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for component in path.components() {
        match component {
            Component::ParentDir => {
                out.pop();
            }
            Component::CurDir => {}
            other => out.push(other),
        }
    }
    out
}

/// Whether file permissions alone would let us write `path` (or create it in its nearest
/// existing folder): then a refusal came from the sandbox, not from ownership or modes.
fn writable_without_sandbox(path: &Path) -> bool {
    use std::os::unix::ffi::OsStrExt;
    let Some(existing) = path.ancestors().find(|p| p.symlink_metadata().is_ok()) else {
        return false;
    };
    let Ok(c_path) = std::ffi::CString::new(existing.as_os_str().as_bytes()) else {
        return false;
    };
    // SAFETY: access(2) reads a NUL-terminated string that lives across the call.
    unsafe { libc::access(c_path.as_ptr(), libc::W_OK) == 0 }
}

#[cfg(target_os = "linux")]
mod landlock {
    //! The raw Landlock system calls (there is no libc wrapper).

    use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
    use std::path::PathBuf;

    const CREATE_RULESET_VERSION: u32 = 1 << 0;
    const RULE_PATH_BENEATH: libc::c_int = 1;

    const WRITE_FILE: u64 = 1 << 1;
    const REMOVE_DIR: u64 = 1 << 4;
    const REMOVE_FILE: u64 = 1 << 5;
    const MAKE_CHAR: u64 = 1 << 6;
    const MAKE_DIR: u64 = 1 << 7;
    const MAKE_REG: u64 = 1 << 8;
    const MAKE_SOCK: u64 = 1 << 9;
    const MAKE_FIFO: u64 = 1 << 10;
    const MAKE_BLOCK: u64 = 1 << 11;
    const MAKE_SYM: u64 = 1 << 12;
    /// ABI 2: link or rename into another folder.
    const REFER: u64 = 1 << 13;
    /// ABI 3: truncate (including `open(O_TRUNC)`).
    const TRUNCATE: u64 = 1 << 14;

    /// ABI 4: TCP bind and connect.
    const NET_BIND_TCP: u64 = 1 << 0;
    const NET_CONNECT_TCP: u64 = 1 << 1;
    /// ABI 6: no connecting to abstract Unix sockets, no signals, outside the domain.
    const SCOPE_ABSTRACT_UNIX_SOCKET: u64 = 1 << 0;
    const SCOPE_SIGNAL: u64 = 1 << 1;
    /// `CAP_SYS_PTRACE` in `linux/capability.h`.
    const CAP_SYS_PTRACE: libc::c_ulong = 19;
    /// `CAP_SYS_ADMIN`: among much else, it lets root push keys into any terminal
    /// (TIOCSTI) and mount over the workspace's view of the file system.
    const CAP_SYS_ADMIN: libc::c_ulong = 21;

    /// `struct landlock_ruleset_attr`. Older kernels take it whole as long as the fields
    /// they do not know are zero.
    #[repr(C)]
    struct RulesetAttr {
        handled_access_fs: u64,
        handled_access_net: u64,
        scoped: u64,
    }

    /// `struct landlock_path_beneath_attr` (packed in the kernel's header).
    #[repr(C, packed)]
    struct PathBeneathAttr {
        allowed_access: u64,
        parent_fd: i32,
    }

    /// Every write-type right `abi` knows; reads and execution are not handled, so stay allowed.
    fn handled(abi: u32) -> u64 {
        let mut rights = WRITE_FILE
            | REMOVE_DIR
            | REMOVE_FILE
            | MAKE_CHAR
            | MAKE_DIR
            | MAKE_REG
            | MAKE_SOCK
            | MAKE_FIFO
            | MAKE_BLOCK
            | MAKE_SYM;
        if abi >= 2 {
            rights |= REFER;
        }
        if abi >= 3 {
            rights |= TRUNCATE;
        }
        rights
    }

    pub(super) fn abi() -> Result<u32, String> {
        // SAFETY: with a null attribute, size 0 and the version flag the call reads no
        // memory and only returns the ABI version.
        let abi = unsafe {
            libc::syscall(
                libc::SYS_landlock_create_ruleset,
                std::ptr::null::<libc::c_void>(),
                0usize,
                CREATE_RULESET_VERSION,
            )
        };
        if abi >= 1 {
            return u32::try_from(abi).map_err(|_| format!("unexpected Landlock ABI {abi}"));
        }
        let err = std::io::Error::last_os_error();
        Err(match err.raw_os_error() {
            Some(libc::ENOSYS) => "the kernel has no Landlock".to_string(),
            Some(libc::EOPNOTSUPP) => "Landlock is disabled in this kernel's boot options".to_string(),
            _ => format!("Landlock cannot be used: {err}"),
        })
    }

    /// A ruleset allowing every handled right under `folders` and writing to `devices`;
    /// paths that do not exist are left out.
    pub(super) fn ruleset(
        abi: u32,
        folders: &[PathBuf],
        devices: &[PathBuf],
        options: super::Options,
    ) -> std::io::Result<OwnedFd> {
        let handled = handled(abi);
        // Handled with no rule: all TCP binds and connects are refused.
        let handled_access_net = if abi >= 4 && !options.network {
            NET_BIND_TCP | NET_CONNECT_TCP
        } else {
            0
        };
        let scoped = match (abi >= 6, options.unix_sockets) {
            (false, _) => 0,
            (true, true) => SCOPE_SIGNAL,
            (true, false) => SCOPE_SIGNAL | SCOPE_ABSTRACT_UNIX_SOCKET,
        };
        let attr = RulesetAttr {
            handled_access_fs: handled,
            handled_access_net,
            scoped,
        };
        // SAFETY: `attr` is a valid struct of the size passed, alive across the call.
        let fd = unsafe {
            libc::syscall(
                libc::SYS_landlock_create_ruleset,
                &attr as *const RulesetAttr,
                std::mem::size_of::<RulesetAttr>(),
                0u32,
            )
        };
        if fd < 0 {
            return Err(std::io::Error::last_os_error());
        }
        let fd = i32::try_from(fd).map_err(|_| std::io::Error::other("ruleset fd out of range"))?;
        // SAFETY: the kernel just returned this descriptor; nothing else owns it.
        let ruleset = unsafe { OwnedFd::from_raw_fd(fd) };
        let file_rights = handled & (WRITE_FILE | TRUNCATE);
        for (path, rights) in folders
            .iter()
            .map(|p| (p, handled))
            .chain(devices.iter().map(|p| (p, file_rights)))
        {
            let Some(opened) = open_path(path) else {
                continue;
            };
            // Folder rights on a file are invalid: a folder named as a device gets file rights.
            let is_dir = opened.metadata().is_ok_and(|m| m.is_dir());
            let rule = PathBeneathAttr {
                allowed_access: if is_dir { rights } else { rights & file_rights },
                parent_fd: opened.as_raw_fd(),
            };
            // SAFETY: `rule` is a valid, packed `landlock_path_beneath_attr`, alive across
            // the call; both descriptors are open.
            let added = unsafe {
                libc::syscall(
                    libc::SYS_landlock_add_rule,
                    ruleset.as_raw_fd(),
                    RULE_PATH_BENEATH,
                    &rule as *const PathBeneathAttr,
                    0u32,
                )
            };
            if added != 0 {
                return Err(std::io::Error::last_os_error());
            }
        }
        Ok(ruleset)
    }

    fn open_path(path: &std::path::Path) -> Option<std::fs::File> {
        use std::os::unix::fs::OpenOptionsExt;
        std::fs::OpenOptions::new()
            .read(true)
            .custom_flags(libc::O_PATH)
            .open(path)
            .ok()
    }

    /// A domain that only scopes signals, entered by the calling thread.
    pub(super) fn scope_signals() -> std::io::Result<()> {
        let attr = RulesetAttr {
            handled_access_fs: 0,
            handled_access_net: 0,
            scoped: SCOPE_SIGNAL,
        };
        // SAFETY: `attr` is a valid struct of the size passed, alive across the call.
        let fd = unsafe {
            libc::syscall(
                libc::SYS_landlock_create_ruleset,
                &attr as *const RulesetAttr,
                std::mem::size_of::<RulesetAttr>(),
                0u32,
            )
        };
        if fd < 0 {
            return Err(std::io::Error::last_os_error());
        }
        let fd = i32::try_from(fd).map_err(|_| std::io::Error::other("ruleset fd out of range"))?;
        // SAFETY: the kernel just returned this descriptor; nothing else owns it.
        let ruleset = unsafe { OwnedFd::from_raw_fd(fd) };
        // SAFETY: prctl with these arguments reads no memory.
        if unsafe { libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) } != 0 {
            return Err(std::io::Error::last_os_error());
        }
        // SAFETY: a plain system call on a descriptor held open by `ruleset`.
        if unsafe { libc::syscall(libc::SYS_landlock_restrict_self, ruleset.as_raw_fd(), 0u32) } != 0 {
            return Err(std::io::Error::last_os_error());
        }
        Ok(())
    }

    /// No new privileges, no `CAP_SYS_PTRACE` nor `CAP_SYS_ADMIN`, the socket filter when
    /// `seccomp`, then
    /// enter the ruleset: all for the calling thread only, and for whatever it starts
    /// from then on.
    pub(super) fn restrict_self(ruleset: i32, seccomp: bool) -> std::io::Result<()> {
        // SAFETY: prctl with these arguments reads no memory.
        if unsafe { libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) } != 0 {
            return Err(std::io::Error::last_os_error());
        }
        // Only a process with CAP_SETPCAP (root) can drop it, and only root has it to
        // drop: elsewhere this fails with EPERM, which is the state wanted anyway.
        // SAFETY: prctl with these arguments reads no memory.
        unsafe { libc::prctl(libc::PR_CAPBSET_DROP, CAP_SYS_PTRACE, 0, 0, 0) };
        // SAFETY: as above.
        unsafe { libc::prctl(libc::PR_CAPBSET_DROP, CAP_SYS_ADMIN, 0, 0, 0) };
        if seccomp {
            super::seccomp::refuse_unix_sockets()?;
        }
        // SAFETY: a plain system call on a descriptor the ruleset keeps open; no memory is read.
        if unsafe { libc::syscall(libc::SYS_landlock_restrict_self, ruleset, 0u32) } != 0 {
            return Err(std::io::Error::last_os_error());
        }
        Ok(())
    }
}

#[cfg(not(target_os = "linux"))]
mod landlock {
    //! Landlock is Linux-only.

    use std::os::fd::OwnedFd;
    use std::path::PathBuf;

    pub(super) fn abi() -> Result<u32, String> {
        Err("Landlock exists only on Linux".to_string())
    }

    pub(super) fn ruleset(
        _: u32,
        _: &[PathBuf],
        _: &[PathBuf],
        _: super::Options,
    ) -> std::io::Result<OwnedFd> {
        Err(std::io::Error::other("Landlock exists only on Linux"))
    }
}

#[cfg(target_os = "linux")]
mod seccomp {
    //! The filter refusing Unix sockets: classic BPF over `struct seccomp_data`
    //! (`nr` at 0, `arch` at 4, `args[0]` at 16, low half first on these little-endian
    //! machines).

    const LD_W_ABS: u16 = 0x20; // BPF_LD | BPF_W | BPF_ABS
    const JEQ_K: u16 = 0x15; // BPF_JMP | BPF_JEQ | BPF_K
    const AND_K: u16 = 0x54; // BPF_ALU | BPF_AND | BPF_K
    const RET_K: u16 = 0x06; // BPF_RET | BPF_K
    const RET_ALLOW: u32 = 0x7fff_0000;
    const RET_ERRNO: u32 = 0x0005_0000;
    const AF_UNIX: u32 = 1;

    /// (native arch, its `socket`, its compat arch, the compat `socket`, the compat
    /// `socketcall` or 0): numbers from the kernel's syscall tables.
    #[cfg(target_arch = "x86_64")]
    const ARCH: Option<(u32, u32, u32, u32, u32)> = Some((0xc000_003e, 41, 0x4000_0003, 359, 102));
    #[cfg(target_arch = "aarch64")]
    const ARCH: Option<(u32, u32, u32, u32, u32)> = Some((0xc000_00b7, 198, 0x4000_0028, 281, 0));
    #[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
    const ARCH: Option<(u32, u32, u32, u32, u32)> = None;
    /// `io_uring_setup`, the same number on every architecture.
    const IO_URING_SETUP: u32 = 425;
    /// x32 calls are native numbers with this bit set.
    const X32_BIT: u32 = 0x4000_0000;

    fn op(code: u16, jt: u8, jf: u8, k: u32) -> libc::sock_filter {
        libc::sock_filter { code, jt, jf, k }
    }

    /// The program; a jump's `jt`/`jf` count the instructions it skips.
    fn program() -> Option<Vec<libc::sock_filter>> {
        let (native, socket, compat, compat_socket, socketcall) = ARCH?;
        // No socketcall on this compat arch: a number no call has.
        let socketcall = if socketcall == 0 { u32::MAX } else { socketcall };
        let deny = RET_ERRNO | libc::EACCES as u32;
        Some(vec![
            op(LD_W_ABS, 0, 0, 4),            // 0: arch
            op(JEQ_K, 0, 5, native),          // 1: native → 2, else → 7
            op(LD_W_ABS, 0, 0, 0),            // 2: nr
            op(AND_K, 0, 0, !X32_BIT),        // 3: x32 calls as native ones
            op(JEQ_K, 8, 0, socket),          // 4: → 13
            op(JEQ_K, 10, 0, IO_URING_SETUP), // 5: → 16
            op(RET_K, 0, 0, RET_ALLOW),       // 6
            op(JEQ_K, 0, 7, compat),          // 7: compat → 8, else → 15
            op(LD_W_ABS, 0, 0, 0),            // 8: nr
            op(JEQ_K, 3, 0, compat_socket),   // 9: → 13
            op(JEQ_K, 5, 0, IO_URING_SETUP),  // 10: → 16
            op(JEQ_K, 4, 0, socketcall),      // 11: → 16
            op(RET_K, 0, 0, RET_ALLOW),       // 12
            op(LD_W_ABS, 0, 0, 16),           // 13: socket's domain
            op(JEQ_K, 1, 0, AF_UNIX),         // 14: → 16
            op(RET_K, 0, 0, RET_ALLOW),       // 15
            op(RET_K, 0, 0, deny),            // 16
        ])
    }

    /// Installs the filter on the calling thread (which already has `no_new_privs`); it
    /// is inherited by whatever the thread starts.
    pub(super) fn refuse_unix_sockets() -> std::io::Result<()> {
        let Some(mut filter) = program() else {
            return Ok(());
        };
        let prog = libc::sock_fprog {
            len: u16::try_from(filter.len()).map_err(std::io::Error::other)?,
            filter: filter.as_mut_ptr(),
        };
        // SAFETY: `prog` points at `filter`, alive across the call; the kernel copies it.
        let installed = unsafe {
            libc::prctl(
                libc::PR_SET_SECCOMP,
                libc::SECCOMP_MODE_FILTER,
                &prog as *const libc::sock_fprog,
                0,
                0,
            )
        };
        if installed != 0 {
            return Err(std::io::Error::last_os_error());
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    fn settings(sandbox: SandboxSetting) -> BashSettings {
        BashSettings {
            default_timeout_s: 120,
            max_timeout_s: 600,
            output_limit_bytes: 1000,
            sandbox,
            pass_env: Vec::new(),
            unix_sockets: false,
            network: true,
        }
    }

    #[test]
    fn every_mode_but_full_auto_with_the_sandbox_off_is_sandboxed() {
        let cases = [
            (ApprovalMode::ReadOnly, SandboxSetting::Auto, true),
            (ApprovalMode::ReadOnly, SandboxSetting::Off, true),
            (ApprovalMode::Ask, SandboxSetting::Auto, true),
            (ApprovalMode::Ask, SandboxSetting::Off, true),
            (ApprovalMode::AutoEdit, SandboxSetting::Auto, true),
            (ApprovalMode::AutoEdit, SandboxSetting::Off, true),
            (ApprovalMode::FullAuto, SandboxSetting::Auto, true),
            (ApprovalMode::FullAuto, SandboxSetting::Off, false),
        ];
        for (mode, setting, expected) in cases {
            assert_eq!(applies(setting, mode), expected, "{mode} with sandbox {setting}");
        }
    }

    #[test]
    fn full_auto_with_the_sandbox_off_runs_unconfined() {
        let confinement = Confinement::for_command(
            &settings(SandboxSetting::Off),
            ApprovalMode::FullAuto,
            Path::new("/"),
        )
        .unwrap();
        assert!(matches!(confinement, Confinement::Unconfined));
    }

    #[test]
    fn the_session_state_follows_the_kernel_and_the_setting() {
        let (auto, off) = (
            session_state(SandboxSetting::Auto),
            session_state(SandboxSetting::Off),
        );
        match kernel_abi() {
            Ok(_) => assert_eq!((auto, off), (SandboxState::Enforced, SandboxState::Off)),
            Err(reason) => {
                let unavailable = SandboxState::Unavailable {
                    reason: reason.clone(),
                };
                assert_eq!((auto, off), (unavailable.clone(), unavailable));
            }
        }
    }

    #[test]
    fn denied_paths_are_found_in_common_messages() {
        let output = "bash: line 1: /root/probe: Permission denied\n\
                      touch: cannot touch '/etc/x y': Permission denied\n\
                      PermissionError: [Errno 13] Permission denied: '../up.txt'\n\
                      Error: EACCES: permission denied, open '/var/lib/z'\n\
                      cat: ok.txt: No such file or directory\n";
        assert_eq!(
            denied_paths(output, Path::new("/ws/sub")),
            vec![
                PathBuf::from("/root/probe"),
                PathBuf::from("/etc/x y"),
                PathBuf::from("/ws/up.txt"),
                PathBuf::from("/var/lib/z"),
            ]
        );
    }

    #[test]
    fn the_hint_names_the_allowed_folders_only_for_writes_outside_them() {
        let Ok(abi) = kernel_abi() else {
            println!(
                "skipped: {}",
                kernel_abi().as_ref().err().map_or("", String::as_str)
            );
            return;
        };
        let workspace = std::env::temp_dir();
        let options = Options {
            unix_sockets: false,
            network: true,
        };
        let ruleset = Ruleset::build(*abi, &workspace, options).unwrap();
        // A writable folder outside the workspace and the temp folder (a checkout may
        // itself live under /tmp, as a fresh CI clone can).
        let candidates = [
            Some(PathBuf::from(env!("CARGO_MANIFEST_DIR"))),
            std::env::var_os("HOME").map(PathBuf::from),
            std::env::current_exe()
                .ok()
                .and_then(|exe| exe.parent().map(Path::to_path_buf)),
        ];
        let Some(outside) = candidates
            .into_iter()
            .flatten()
            .map(|dir| dir.join("probe.txt"))
            .find(|probe| !ruleset.allows(probe) && writable_without_sandbox(probe))
        else {
            println!("skipped: no writable folder outside the temp folder to probe");
            return;
        };
        let confinement = Confinement::Sandboxed(ruleset);
        let hint = confinement.denial_hint(
            &format!("bash: line 1: {}: Permission denied\n", outside.display()),
            &workspace,
        );
        assert_eq!(
            hint,
            Some(format!(
                "[sandbox: writes are allowed only under {} and {}; this command tried to write elsewhere ({})]",
                workspace.display(),
                std::env::temp_dir().display(),
                outside.display()
            ))
        );
        let inside = workspace.join("x");
        assert_eq!(
            confinement.denial_hint(&format!("{}: Permission denied", inside.display()), &workspace),
            None
        );
        assert_eq!(
            Confinement::Unconfined
                .denial_hint(&format!("{}: Permission denied", outside.display()), &workspace),
            None
        );
    }
}
