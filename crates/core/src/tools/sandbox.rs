//! The Linux Landlock sandbox `bash` commands (and background jobs) run in: they may read
//! and execute anything but terminals and input, sound, video and disk devices
//! ([`readable`]), write only under the workspace, the system temp dir
//! (`std::env::temp_dir()`) and `/dev/shm`, plus to `/dev/null`-like devices, and make no
//! device node anywhere. Device ioctls (Landlock ABI 5) are allowed only on `/dev/null`
//! and friends. A terminal (`/dev/tty`, `/dev/pts/*`, `/dev/ptmx`, `/dev/console`, …)
//! cannot be opened at all: the workbench owns its own, and the person's others hold what
//! they type.
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
//! (sudo) do not gain privileges inside the sandbox. Landlock does not mediate changes to
//! a file's metadata: a command may still `chmod`, `touch` or set user extended
//! attributes on files outside that its user owns.
//!
//! Beyond files, the same thread also: scopes the domain (Landlock ABI 6) so a command
//! can neither signal processes outside it nor connect to abstract Unix sockets; with
//! `tools.bash.network = false`, refuses TCP bind and connect (ABI 4); drops every
//! capability, bounding and ambient sets included ([`caps`]), so root's commands run as
//! an ordinary process of uid 0 (no `mknod`, `chown`, `chattr +i`, module loading,
//! `CAP_DAC_OVERRIDE`), and with the agent non-dumpable ([`crate::hardening`]) cannot
//! read its `/proc/PID/environ`, `maps` or memory (Landlock does not mediate those
//! reads); and, unless
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

use std::path::{Component, Path, PathBuf};
use std::sync::Arc;
use std::sync::OnceLock;

use crate::config::{ApprovalMode, BashSettings};
use miniagent_protocol::SandboxState;

pub use miniagent_protocol::SandboxSetting;

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
            reason: reason.to_string(),
        },
        Ok(_) => match setting {
            SandboxSetting::Auto => SandboxState::Enforced,
            SandboxSetting::Off => SandboxState::Off,
        },
    }
}

/// Why commands cannot be sandboxed on this machine.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum NoLandlock {
    #[error("the kernel has no Landlock")]
    NotInKernel,
    #[error("Landlock is disabled in this kernel's boot options")]
    Disabled,
    #[error("Landlock cannot be used: {0}")]
    Unusable(String),
    #[error("unexpected Landlock ABI {0}")]
    UnexpectedAbi(i64),
    #[error("Landlock exists only on Linux")]
    NotLinux,
}

/// The kernel's Landlock ABI version, or why there is none; asked once per process.
pub fn kernel_abi() -> &'static Result<u32, NoLandlock> {
    static ABI: OnceLock<Result<u32, NoLandlock>> = OnceLock::new();
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

    /// A line telling the model its command hit the sandbox, when `output` shows a path
    /// refused that the sandbox keeps from commands: a terminal, another process's
    /// insides, or a write outside the allowed folders (relative paths are taken from
    /// `cwd`).
    pub fn denial_hint(&self, output: &str, cwd: &Path) -> Option<String> {
        let Confinement::Sandboxed(ruleset) = self else {
            return None;
        };
        let denied = denied_paths(output, cwd);
        if let Some(terminal) = denied.iter().find(|path| ruleset.unreadable(path)) {
            return Some(format!(
                "[sandbox: commands cannot open terminals or input devices ({})]",
                terminal.display()
            ));
        }
        if let Some(process) = denied.iter().find(|path| is_process_entry(path)) {
            return Some(format!(
                "[sandbox: commands cannot look into processes outside the sandbox, miniagent among them ({})]",
                process.display()
            ));
        }
        if let Some(device) = denied
            .iter()
            .find(|path| !ruleset.allows(path) && is_device(path))
        {
            return Some(format!(
                "[sandbox: of the devices, commands may write to and control only {}; this one was refused ({})]",
                WRITABLE_DEVICES.join(", "),
                device.display()
            ));
        }
        // Anything else the sandbox refuses is a write: it lets every other file be read.
        let refused = denied
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

/// What a rule allows under its path.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Access {
    /// Open files for reading.
    Read,
    /// Everything a command does in its own folders: read, write, create, remove, rename;
    /// never make a device.
    Write,
    /// Read, write and control one device (`/dev/null` and friends).
    Device,
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
    /// Terminals and devices left out of reading (see [`readable`]).
    unreadable: Vec<PathBuf>,
}

/// Devices a shell may write to wherever it runs (`> /dev/null`).
const WRITABLE_DEVICES: [&str; 5] = [
    "/dev/null",
    "/dev/zero",
    "/dev/full",
    "/dev/random",
    "/dev/urandom",
];

/// The folders a sandboxed command may write under: the workspace, the system temp dir
/// and `/dev/shm`.
fn writable_folders(workspace: &Path) -> [PathBuf; 3] {
    [
        workspace.to_path_buf(),
        std::env::temp_dir(),
        PathBuf::from("/dev/shm"),
    ]
}

/// Which of miniagent's own folders (`own`: settings, sessions, saved results, logs) a
/// sandboxed command could still write to, each with the writable folder holding it.
/// Landlock only grants rights, so nothing inside the workspace or the temp dir can be
/// kept from commands; the person is told instead. Paths are compared resolved (a folder
/// not made yet by its nearest existing parent).
pub fn own_folders_within_reach(workspace: &Path, own: &[PathBuf]) -> Vec<(PathBuf, PathBuf)> {
    let roots: Vec<PathBuf> = writable_folders(workspace)
        .iter()
        .map(|root| resolved(root))
        .collect();
    own.iter()
        .filter_map(|folder| {
            let at = resolved(folder);
            roots
                .iter()
                .find(|root| at.starts_with(root))
                .map(|root| (folder.clone(), root.clone()))
        })
        .collect()
}

/// `path` with symbolic links resolved as far as it exists.
fn resolved(path: &Path) -> PathBuf {
    let mut existing = path;
    let mut rest = Vec::new();
    loop {
        if let Ok(canonical) = existing.canonicalize() {
            return rest.iter().rev().fold(canonical, |path, part| path.join(part));
        }
        match (existing.parent(), existing.file_name()) {
            (Some(parent), Some(name)) => {
                rest.push(name.to_os_string());
                existing = parent;
            }
            _ => return path.to_path_buf(),
        }
    }
}

impl Ruleset {
    fn build(abi: u32, workspace: &Path, options: Options) -> std::io::Result<Self> {
        let folders = writable_folders(workspace);
        let temp = folders[1].clone();
        let devices = WRITABLE_DEVICES.map(PathBuf::from);
        let cover = readable::cover();
        let rules: Vec<(PathBuf, Access)> = (cover.readable.iter().map(|p| (p.clone(), Access::Read)))
            .chain(folders.iter().map(|p| (p.clone(), Access::Write)))
            .chain(devices.iter().map(|p| (p.clone(), Access::Device)))
            .collect();
        let fd = landlock::ruleset(abi, &rules, options)?;
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
            unreadable: cover.denied,
        })
    }

    fn allows(&self, path: &Path) -> bool {
        self.allowed.iter().any(|root| path.starts_with(root))
    }

    /// Whether `path` is a terminal or device commands may not open.
    fn unreadable(&self, path: &Path) -> bool {
        self.unreadable.iter().any(|denied| path.starts_with(denied))
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
    // Most output has no such line: one pass over the bytes, no allocation per line.
    if !mentions_denial(output) {
        return paths;
    }
    for line in output.lines() {
        if !mentions_denial(line) {
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

/// Whether `text` says "permission denied", in any case.
fn mentions_denial(text: &str) -> bool {
    const NEEDLE: &[u8] = b"permission denied";
    let bytes = text.as_bytes();
    memchr::memchr2_iter(b'p', b'P', bytes).any(|at| {
        bytes
            .get(at..at + NEEDLE.len())
            .is_some_and(|window| window.eq_ignore_ascii_case(NEEDLE))
    })
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

/// Whether `path` is a character or block device.
fn is_device(path: &Path) -> bool {
    use std::os::unix::fs::FileTypeExt;
    path.metadata()
        .is_ok_and(|meta| meta.file_type().is_char_device() || meta.file_type().is_block_device())
}

/// `/proc/PID/…`: what a command is refused there belongs to a process outside its
/// sandbox (its own are open to it).
fn is_process_entry(path: &Path) -> bool {
    let mut components = path.components();
    components.next() == Some(Component::RootDir)
        && components.next() == Some(Component::Normal("proc".as_ref()))
        && components
            .next()
            .and_then(|c| c.as_os_str().to_str())
            .is_some_and(|pid| !pid.is_empty() && pid.bytes().all(|b| b.is_ascii_digit()))
}

/// Whether file permissions alone would let a sandboxed command write `path` (or create
/// it in its nearest existing folder): then a refusal came from the sandbox, not from
/// ownership or modes. Root's commands hold no capabilities in the sandbox, so for root
/// the mode bits decide, not `access(2)` (which root always passes).
fn writable_without_sandbox(path: &Path) -> bool {
    use std::os::unix::ffi::OsStrExt;
    let Some(existing) = path.ancestors().find(|p| p.symlink_metadata().is_ok()) else {
        return false;
    };
    let Ok(c_path) = std::ffi::CString::new(existing.as_os_str().as_bytes()) else {
        return false;
    };
    // SAFETY: access(2) reads a NUL-terminated string that lives across the call.
    let access = unsafe { libc::access(c_path.as_ptr(), libc::W_OK) == 0 };
    // SAFETY: geteuid has no preconditions.
    if !access || unsafe { libc::geteuid() } != 0 {
        return access;
    }
    existing.metadata().is_ok_and(|meta| mode_lets_root_write(&meta))
}

/// The write bit that applies to uid 0 without capabilities: the owner's, the group's
/// when root is in the file's group, else the others'.
fn mode_lets_root_write(meta: &std::fs::Metadata) -> bool {
    use std::os::unix::fs::MetadataExt;
    let mode = meta.mode();
    if meta.uid() == 0 {
        return mode & 0o200 != 0;
    }
    // SAFETY: getegid has no preconditions.
    let in_group = meta.gid() == unsafe { libc::getegid() } || supplementary_groups().contains(&meta.gid());
    if in_group {
        mode & 0o020 != 0
    } else {
        mode & 0o002 != 0
    }
}

/// This process's supplementary groups.
fn supplementary_groups() -> Vec<libc::gid_t> {
    // SAFETY: with size 0, getgroups only returns the count.
    let count = unsafe { libc::getgroups(0, std::ptr::null_mut()) };
    let Ok(len) = usize::try_from(count) else {
        return Vec::new();
    };
    let mut groups = vec![0; len];
    // SAFETY: `groups` has room for `count` entries.
    let got = unsafe { libc::getgroups(count, groups.as_mut_ptr()) };
    groups.truncate(usize::try_from(got).unwrap_or(0));
    groups
}

#[cfg(target_os = "linux")]
mod landlock;

#[cfg(not(target_os = "linux"))]
mod landlock {
    //! Landlock is Linux-only.

    use std::os::fd::OwnedFd;
    use std::path::PathBuf;

    pub(super) fn abi() -> Result<u32, super::NoLandlock> {
        Err(super::NoLandlock::NotLinux)
    }

    pub(super) fn ruleset(
        _: u32,
        _: &[(PathBuf, super::Access)],
        _: super::Options,
    ) -> std::io::Result<OwnedFd> {
        Err(std::io::Error::other("Landlock exists only on Linux"))
    }
}

#[cfg(target_os = "linux")]
mod seccomp;

#[cfg(target_os = "linux")]
mod caps;

mod readable;

/// The suite's one way to skip where the machine lacks something (shared with the
/// integration tests).
#[cfg(test)]
#[path = "../../../../tests/support/skip.rs"]
mod skip;

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
                    reason: reason.to_string(),
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
    fn own_folders_under_the_temp_dir_or_the_workspace_are_within_reach() {
        let temp = std::env::temp_dir().canonicalize().unwrap();
        let workspace = temp.join("miniagent-reach-test-workspace");
        let own = [
            // Not made yet: judged by the folder that exists above it.
            temp.join("miniagent-reach-test-data/sessions"),
            workspace.join(".config/miniagent"),
            PathBuf::from("/nonexistent-root-folder/miniagent"),
        ];
        let within = own_folders_within_reach(&workspace, &own);
        assert_eq!(
            within,
            vec![
                (own[0].clone(), temp.clone()),
                (own[1].clone(), workspace.clone())
            ]
        );
        // The home folder's usual places are out of reach.
        assert!(
            own_folders_within_reach(&workspace, &[PathBuf::from("/root/.local/share/miniagent")]).is_empty()
        );
    }

    #[test]
    fn process_entries_are_told_apart() {
        assert!(is_process_entry(Path::new("/proc/123/mem")));
        assert!(is_process_entry(Path::new("/proc/1/fd/0")));
        assert!(!is_process_entry(Path::new("/proc/self/status")));
        assert!(!is_process_entry(Path::new("/proc/sys/kernel/x")));
        assert!(!is_process_entry(Path::new("/home/proc/1")));
    }

    #[test]
    fn the_hint_names_the_allowed_folders_only_for_writes_outside_them() {
        let Some(abi) = skip::needs("landlock", kernel_abi().as_ref()) else {
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
            skip::missing(
                "outside-folder",
                "no writable folder outside the temp folder to probe",
            );
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
