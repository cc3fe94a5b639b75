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
