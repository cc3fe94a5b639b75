//! Dropping every capability of the calling thread, for what it starts from then on.
//!
//! Root keeps its user id in the sandbox but none of root's powers: without
//! `CAP_MKNOD`, `CAP_CHOWN`, `CAP_FOWNER`, `CAP_LINUX_IMMUTABLE`, `CAP_DAC_OVERRIDE`,
//! `CAP_SYS_MODULE`, … a command can no longer make a device node in the workspace and
//! write a disk through it, change the owner of a file outside, make it immutable, or
//! load a module (issue 15 review: all of these worked with only two capabilities
//! dropped). On `execve` a root process gets the bounding set and the inheritable set as
//! its permitted set, so both must be empty, and the ambient set too.

/// `_LINUX_CAPABILITY_VERSION_3`: two 32-bit words per set.
const VERSION_3: u32 = 0x2008_0522;

#[repr(C)]
struct Header {
    version: u32,
    pid: libc::c_int,
}

#[repr(C)]
#[derive(Clone, Copy, Default)]
struct Data {
    effective: u32,
    permitted: u32,
    inheritable: u32,
}

/// Empties the bounding, ambient, effective, permitted and inheritable sets of the calling
/// thread (which must already have `no_new_privs`: without `CAP_SYS_ADMIN` it is what lets
/// the thread enter Landlock and seccomp afterwards). Fails only if a set could not be
/// emptied.
pub(super) fn drop_all() -> std::io::Result<()> {
    // The bounding set first: dropping from it needs CAP_SETPCAP, which goes with the
    // rest below. Without CAP_SETPCAP (any user but root) it cannot change, and then the
    // empty inheritable set and no_new_privs already keep a program from gaining anything.
    let mut capability: libc::c_ulong = 0;
    // SAFETY: prctl with these arguments reads no memory; it fails with EINVAL past the
    // last capability the kernel knows.
    while unsafe { libc::prctl(libc::PR_CAPBSET_READ, capability, 0, 0, 0) } >= 0 {
        // SAFETY: as above.
        unsafe { libc::prctl(libc::PR_CAPBSET_DROP, capability, 0, 0, 0) };
        capability += 1;
        if capability > 255 {
            break;
        }
    }
    // SAFETY: as above; kernels before 4.3 have no ambient set and fail with EINVAL.
    unsafe { libc::prctl(libc::PR_CAP_AMBIENT, libc::PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) };
    let header = Header {
        version: VERSION_3,
        pid: 0,
    };
    let data = [Data::default(); 2];
    // SAFETY: `header` and the two-element `data` array are what capset(2) reads for
    // version 3; both live across the call.
    let set = unsafe { libc::syscall(libc::SYS_capset, &header as *const Header, data.as_ptr()) };
    if set != 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(())
}
