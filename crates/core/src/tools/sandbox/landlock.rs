//! The raw Landlock system calls (there is no libc wrapper).

use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::path::PathBuf;

const CREATE_RULESET_VERSION: u32 = 1 << 0;
const RULE_PATH_BENEATH: libc::c_int = 1;

const READ_FILE: u64 = 1 << 2;
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
/// ABI 5: device-specific ioctls on a character or block device opened in the domain.
const IOCTL_DEV: u64 = 1 << 15;

/// ABI 4: TCP bind and connect.
const NET_BIND_TCP: u64 = 1 << 0;
const NET_CONNECT_TCP: u64 = 1 << 1;
/// ABI 6: no connecting to abstract Unix sockets, no signals, outside the domain.
const SCOPE_ABSTRACT_UNIX_SOCKET: u64 = 1 << 0;
const SCOPE_SIGNAL: u64 = 1 << 1;

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

/// Every right `abi` knows but execution and listing folders, which stay allowed
/// everywhere. Reading is handled so that terminals can be left out of it.
fn handled(abi: u32) -> u64 {
    let mut rights = READ_FILE
        | WRITE_FILE
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
    if abi >= 5 {
        rights |= IOCTL_DEV;
    }
    rights
}

/// What each kind of rule allows, of what `handled` holds. No rule allows making
/// character or block devices: a device node made in the workspace reached a disk.
fn rights(access: super::Access, handled: u64) -> u64 {
    let wanted = match access {
        super::Access::Read => READ_FILE,
        super::Access::Write => handled & !(MAKE_CHAR | MAKE_BLOCK | IOCTL_DEV),
        super::Access::Device => READ_FILE | WRITE_FILE | TRUNCATE | IOCTL_DEV,
    };
    wanted & handled
}

pub(super) fn abi() -> Result<u32, super::NoLandlock> {
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
        return u32::try_from(abi).map_err(|_| super::NoLandlock::UnexpectedAbi(abi));
    }
    let err = std::io::Error::last_os_error();
    Err(match err.raw_os_error() {
        Some(libc::ENOSYS) => super::NoLandlock::NotInKernel,
        Some(libc::EOPNOTSUPP) => super::NoLandlock::Disabled,
        _ => super::NoLandlock::Unusable(err.to_string()),
    })
}

/// A ruleset allowing what each rule says under its path; paths that do not exist are
/// left out.
pub(super) fn ruleset(
    abi: u32,
    rules: &[(PathBuf, super::Access)],
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
    let ruleset = create_ruleset(&attr)?;
    // Rights that make sense on a file; the others are invalid in a rule on one.
    let file_rights = handled & (READ_FILE | WRITE_FILE | TRUNCATE | IOCTL_DEV);
    for (path, access) in rules {
        let Some(opened) = open_path(path, matches!(access, super::Access::Read)) else {
            continue;
        };
        let rights = rights(*access, handled);
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

/// A new ruleset handling what `attr` says.
fn create_ruleset(attr: &RulesetAttr) -> std::io::Result<OwnedFd> {
    // SAFETY: `attr` is a valid struct of the size passed, alive across the call.
    let fd = unsafe {
        libc::syscall(
            libc::SYS_landlock_create_ruleset,
            attr as *const RulesetAttr,
            std::mem::size_of::<RulesetAttr>(),
            0u32,
        )
    };
    if fd < 0 {
        return Err(std::io::Error::last_os_error());
    }
    let fd = i32::try_from(fd).map_err(|_| std::io::Error::other("ruleset fd out of range"))?;
    // SAFETY: the kernel just returned this descriptor; nothing else owns it.
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
}

/// `path`, or with `exact` never where a symbolic link there leads: a path found by the
/// walk for reads may have been swapped for a link to a terminal since.
fn open_path(path: &std::path::Path, exact: bool) -> Option<std::fs::File> {
    use std::os::unix::fs::OpenOptionsExt;
    let flags = if exact {
        libc::O_PATH | libc::O_NOFOLLOW
    } else {
        libc::O_PATH
    };
    std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(flags)
        .open(path)
        .ok()
        .filter(|file| file.metadata().is_ok_and(|m| !m.file_type().is_symlink()))
}

/// A domain that only scopes signals, entered by the calling thread.
pub(super) fn scope_signals() -> std::io::Result<()> {
    let attr = RulesetAttr {
        handled_access_fs: 0,
        handled_access_net: 0,
        scoped: SCOPE_SIGNAL,
    };
    let ruleset = create_ruleset(&attr)?;
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

/// No new privileges, no capabilities, the socket filter when `seccomp`, then enter the
/// ruleset: all for the calling thread only, and for whatever it starts from then on.
pub(super) fn restrict_self(ruleset: i32, seccomp: bool) -> std::io::Result<()> {
    // SAFETY: prctl with these arguments reads no memory.
    if unsafe { libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) } != 0 {
        return Err(std::io::Error::last_os_error());
    }
    super::caps::drop_all()?;
    if seccomp {
        super::seccomp::refuse_unix_sockets()?;
    }
    // SAFETY: a plain system call on a descriptor the ruleset keeps open; no memory is read.
    if unsafe { libc::syscall(libc::SYS_landlock_restrict_self, ruleset, 0u32) } != 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(())
}
