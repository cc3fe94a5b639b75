//! Safe wrappers over the `*at` system calls the confined file tools use: every name is
//! one path component looked up relative to a folder handle, and none follows a symlink
//! unless the caller resolves it itself. std has no handle-relative API, hence libc.

use std::ffi::{CString, OsStr, OsString};
use std::io;
use std::os::fd::{AsRawFd, BorrowedFd, FromRawFd, OwnedFd};
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::path::Path;

/// What a directory entry or a `stat` says a name is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    File,
    Folder,
    Symlink,
    /// A device, pipe or socket.
    Other,
}

pub fn kind_of(stat: &libc::stat) -> Kind {
    match stat.st_mode & libc::S_IFMT {
        libc::S_IFREG => Kind::File,
        libc::S_IFDIR => Kind::Folder,
        libc::S_IFLNK => Kind::Symlink,
        _ => Kind::Other,
    }
}

fn c_string(bytes: &[u8]) -> io::Result<CString> {
    CString::new(bytes).map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "a name contains a NUL byte"))
}

/// Runs a call that returns -1 on error, again when a signal interrupted it.
fn retry(mut call: impl FnMut() -> libc::c_long) -> io::Result<libc::c_long> {
    loop {
        let result = call();
        if result >= 0 {
            return Ok(result);
        }
        let err = io::Error::last_os_error();
        if err.kind() != io::ErrorKind::Interrupted {
            return Err(err);
        }
    }
}

fn owned(raw: libc::c_long) -> io::Result<OwnedFd> {
    let raw = i32::try_from(raw).map_err(|_| io::Error::other("descriptor out of range"))?;
    // SAFETY: `raw` is a descriptor the kernel just returned to us and nothing else owns.
    Ok(unsafe { OwnedFd::from_raw_fd(raw) })
}

/// A handle on the folder at `path` (following symlinks: the roots are trusted), usable
/// only as the base of lookups.
pub fn open_folder(path: &Path) -> io::Result<OwnedFd> {
    let name = c_string(path.as_os_str().as_bytes())?;
    let flags = libc::O_PATH | libc::O_DIRECTORY | libc::O_CLOEXEC;
    // SAFETY: `name` is NUL-terminated and outlives the call.
    owned(retry(|| unsafe { libc::open(name.as_ptr(), flags) }.into())?)
}

/// `openat(dir, name, flags | O_NOFOLLOW | O_CLOEXEC)`; `mode` applies when creating.
pub fn open_at(dir: BorrowedFd<'_>, name: &OsStr, flags: i32, mode: u32) -> io::Result<OwnedFd> {
    let name = c_string(name.as_bytes())?;
    let flags = flags | libc::O_NOFOLLOW | libc::O_CLOEXEC;
    // SAFETY: `name` is NUL-terminated and outlives the call; `dir` is an open descriptor.
    owned(retry(|| {
        unsafe { libc::openat(dir.as_raw_fd(), name.as_ptr(), flags, mode) }.into()
    })?)
}

/// The sub-folder `name` of `dir` as a lookup handle; a symlink is not followed (the
/// kernel answers `ENOTDIR` for it, as for a file).
pub fn open_subfolder(dir: BorrowedFd<'_>, name: &OsStr) -> io::Result<OwnedFd> {
    open_at(dir, name, libc::O_PATH | libc::O_DIRECTORY, 0)
}

/// The kernel's `struct open_how` (libc's is non-exhaustive, so it cannot be built here).
#[repr(C)]
struct OpenHow {
    flags: u64,
    mode: u64,
    resolve: u64,
}

/// The folder `relative` names under `dir`, if the kernel can reach it without following
/// any symlink and without leaving `dir` (`openat2` with `RESOLVE_BENEATH`); `None` where
/// the kernel lacks `openat2`.
pub fn open_beneath(dir: BorrowedFd<'_>, relative: &Path) -> io::Result<Option<OwnedFd>> {
    let name = c_string(relative.as_os_str().as_bytes())?;
    let how = OpenHow {
        flags: (libc::O_PATH | libc::O_DIRECTORY | libc::O_CLOEXEC) as u64,
        mode: 0,
        resolve: libc::RESOLVE_BENEATH | libc::RESOLVE_NO_SYMLINKS | libc::RESOLVE_NO_MAGICLINKS,
    };
    let result = retry(|| {
        // SAFETY: `name` and `how` outlive the call, and the size passed is `how`'s own.
        unsafe {
            libc::syscall(
                libc::SYS_openat2,
                dir.as_raw_fd(),
                name.as_ptr(),
                &how as *const OpenHow,
                std::mem::size_of::<OpenHow>(),
            )
        }
    });
    match result {
        Ok(raw) => owned(raw).map(Some),
        Err(err) if err.raw_os_error() == Some(libc::ENOSYS) => Ok(None),
        Err(err) => Err(err),
    }
}

/// `fstatat(dir, name, AT_SYMLINK_NOFOLLOW)`; `name` "." is `dir` itself.
pub fn stat_at(dir: BorrowedFd<'_>, name: &OsStr) -> io::Result<libc::stat> {
    let name = c_string(name.as_bytes())?;
    // SAFETY: an all-zero `stat` is a valid value of this plain C struct.
    let mut stat: libc::stat = unsafe { std::mem::zeroed() };
    // SAFETY: `name` is NUL-terminated, `stat` is writable, and both outlive the call.
    retry(|| {
        unsafe {
            libc::fstatat(
                dir.as_raw_fd(),
                name.as_ptr(),
                &mut stat,
                libc::AT_SYMLINK_NOFOLLOW,
            )
        }
        .into()
    })?;
    Ok(stat)
}

/// `fstat` of an open descriptor.
pub fn stat_fd(fd: BorrowedFd<'_>) -> io::Result<libc::stat> {
    // SAFETY: an all-zero `stat` is a valid value of this plain C struct.
    let mut stat: libc::stat = unsafe { std::mem::zeroed() };
    // SAFETY: `stat` is writable and outlives the call.
    retry(|| unsafe { libc::fstat(fd.as_raw_fd(), &mut stat) }.into())?;
    Ok(stat)
}

/// The target of the symlink `name` in `dir`.
pub fn read_link_at(dir: BorrowedFd<'_>, name: &OsStr) -> io::Result<OsString> {
    let name = c_string(name.as_bytes())?;
    let mut buffer = vec![0u8; libc::PATH_MAX as usize];
    // SAFETY: `buffer` is writable for its length, `name` is NUL-terminated.
    let length = retry(|| {
        unsafe {
            libc::readlinkat(
                dir.as_raw_fd(),
                name.as_ptr(),
                buffer.as_mut_ptr().cast(),
                buffer.len(),
            )
        }
        .try_into()
        .unwrap_or(-1)
    })?;
    buffer.truncate(usize::try_from(length).unwrap_or(0));
    Ok(OsString::from_vec(buffer))
}

pub fn make_folder_at(dir: BorrowedFd<'_>, name: &OsStr) -> io::Result<()> {
    let name = c_string(name.as_bytes())?;
    // SAFETY: `name` is NUL-terminated and outlives the call.
    retry(|| unsafe { libc::mkdirat(dir.as_raw_fd(), name.as_ptr(), 0o777) }.into()).map(drop)
}

/// Renames `from` to `to`, both in `dir`; `to` is replaced (a symlink there is replaced,
/// not followed).
pub fn rename_at(dir: BorrowedFd<'_>, from: &OsStr, to: &OsStr) -> io::Result<()> {
    let (from, to) = (c_string(from.as_bytes())?, c_string(to.as_bytes())?);
    // SAFETY: both names are NUL-terminated and outlive the call.
    retry(|| unsafe { libc::renameat(dir.as_raw_fd(), from.as_ptr(), dir.as_raw_fd(), to.as_ptr()) }.into())
        .map(drop)
}

/// Removes the file (never a folder) `name` from `dir`.
pub fn remove_file_at(dir: BorrowedFd<'_>, name: &OsStr) -> io::Result<()> {
    let name = c_string(name.as_bytes())?;
    // SAFETY: `name` is NUL-terminated and outlives the call.
    retry(|| unsafe { libc::unlinkat(dir.as_raw_fd(), name.as_ptr(), 0) }.into()).map(drop)
}

pub fn set_mode(fd: BorrowedFd<'_>, mode: libc::mode_t) -> io::Result<()> {
    // SAFETY: plain call on an open descriptor.
    retry(|| unsafe { libc::fchmod(fd.as_raw_fd(), mode) }.into()).map(drop)
}

/// The entries of the folder `dir` (without `.` and `..`), with their kinds as the
/// folder reports them (`None` when it does not say).
pub fn list_folder(dir: BorrowedFd<'_>) -> io::Result<Vec<(OsString, Option<Kind>)>> {
    // A lookup handle cannot be read; open the folder itself for reading.
    let readable = open_at(dir, OsStr::new("."), libc::O_RDONLY | libc::O_DIRECTORY, 0)?;
    let raw = readable.as_raw_fd();
    // SAFETY: `raw` is an open folder descriptor; on success the stream owns it.
    let stream = unsafe { libc::fdopendir(raw) };
    if stream.is_null() {
        return Err(io::Error::last_os_error());
    }
    std::mem::forget(readable);
    let mut entries = Vec::new();
    loop {
        // SAFETY: `stream` is a valid open stream until `closedir` below.
        let entry = unsafe { libc::readdir64(stream) };
        if entry.is_null() {
            break;
        }
        // SAFETY: `readdir64` returned a valid entry whose name is NUL-terminated; it
        // stays valid until the next call on the stream, and is copied out before that.
        let (name, kind) = unsafe {
            let name = std::ffi::CStr::from_ptr((*entry).d_name.as_ptr())
                .to_bytes()
                .to_vec();
            (name, (*entry).d_type)
        };
        if name == b"." || name == b".." {
            continue;
        }
        let kind = match kind {
            libc::DT_REG => Some(Kind::File),
            libc::DT_DIR => Some(Kind::Folder),
            libc::DT_LNK => Some(Kind::Symlink),
            libc::DT_UNKNOWN => None,
            _ => Some(Kind::Other),
        };
        entries.push((OsString::from_vec(name), kind));
    }
    // SAFETY: `stream` is open and not used after this.
    unsafe { libc::closedir(stream) };
    Ok(entries)
}
