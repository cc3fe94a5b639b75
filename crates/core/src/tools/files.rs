//! File helpers shared by the file tools: atomic writes, removing the temporary files a
//! killed process left behind, unified diffs, timestamps.

use std::ffi::{OsStr, OsString};
use std::io::Write;
use std::os::fd::{AsFd, BorrowedFd};
use std::os::unix::ffi::OsStrExt;
use std::path::Path;

use super::at;
use super::at::Kind;
use miniagent_protocol::TextChange;

/// The part of a file's name kept in its temporary file's name, so that the whole stays
/// within the 255 bytes a name may have.
const TEMP_NAME_KEEP: usize = 200;

/// The largest text, before or after, a file change carries whole ([`text_change`]): it
/// goes into the session log with the call, so a large file's would weigh on every log.
pub const CHANGE_LIMIT_BYTES: usize = 256 * 1024;

/// A file's text before (`None`: a new file) and after a change, for front ends that
/// draw their own diff; `None` when either is over [`CHANGE_LIMIT_BYTES`].
pub fn text_change(before: Option<&str>, after: &str) -> Option<TextChange> {
    let small = |text: &str| text.len() <= CHANGE_LIMIT_BYTES;
    (before.is_none_or(small) && small(after)).then(|| TextChange {
        old_text: before.map(str::to_string),
        new_text: after.to_string(),
    })
}

/// What [`read_at_most`] found.
#[derive(Debug, PartialEq, Eq)]
pub enum Capped {
    /// The whole file.
    Whole(Vec<u8>),
    /// The file holds more than the limit (this many bytes); nothing of it was kept.
    TooLarge(u64),
}

/// The whole regular file at `path` (symlinks followed) if it holds at most `limit`
/// bytes, reading no more than `limit + 1` of it: for files a repository brings, read
/// before anyone looked at them (a sparse file can claim terabytes). A pipe swapped in
/// is not waited on, and anything but a regular file is refused.
pub fn read_at_most(path: &Path, limit: u64) -> std::io::Result<Capped> {
    use std::io::Read;
    use std::os::unix::fs::OpenOptionsExt;
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK)
        .open(path)?;
    let meta = file.metadata()?;
    if !meta.is_file() {
        return Err(std::io::Error::other("not a regular file"));
    }
    if meta.len() > limit {
        return Ok(Capped::TooLarge(meta.len()));
    }
    let mut content = Vec::new();
    file.take(limit + 1).read_to_end(&mut content)?;
    match u64::try_from(content.len()).unwrap_or(u64::MAX) > limit {
        // It grew while it was read.
        true => Ok(Capped::TooLarge(u64::try_from(content.len()).unwrap_or(u64::MAX))),
        false => Ok(Capped::Whole(content)),
    }
}

/// `bytes` for a person: "512 bytes", "352 KiB", "64 MiB".
pub fn human_size(bytes: u64) -> String {
    const KIB: u64 = 1024;
    match bytes {
        0..KIB => format!("{bytes} bytes"),
        KIB..0x10_0000 => format!("{} KiB", (bytes + KIB / 2) / KIB),
        _ => format!("{} MiB", (bytes + KIB * KIB / 2) / (KIB * KIB)),
    }
}

/// Writes `content` to `path` so that readers see the old file or the new one, never a
/// mix. Parent folders are created; an existing file's permissions are kept. For the
/// agent's own files (configuration, sessions); the file tools go through
/// [`super::paths::Located::write_atomic`].
pub fn write_atomic(path: &Path, content: &[u8]) -> std::io::Result<()> {
    let parent = path
        .parent()
        .ok_or_else(|| std::io::Error::other("the path has no parent folder"))?;
    let name = path
        .file_name()
        .ok_or_else(|| std::io::Error::other("the path has no file name"))?;
    std::fs::create_dir_all(parent)?;
    let folder = at::open_folder(parent)?;
    write_atomic_in(folder.as_fd(), name, content)
}

/// Writes `content` to `name` in `folder` atomically: a temporary file created in the
/// same folder handle (never through a symlink), flushed to disk, then renamed over the
/// name (a symlink or hard link there is replaced, not written through). An existing
/// file's permissions are kept.
pub fn write_atomic_in(folder: BorrowedFd<'_>, name: &OsStr, content: &[u8]) -> std::io::Result<()> {
    write_atomic_in_mode(folder, name, content, None)
}

/// [`write_atomic_in`], giving a new file `mode` (permission bits) when there is no file
/// there whose permissions to keep.
pub fn write_atomic_in_mode(
    folder: BorrowedFd<'_>,
    name: &OsStr,
    content: &[u8],
    mode: Option<u32>,
) -> std::io::Result<()> {
    let temp = temp_name(name);
    let file = at::open_at(
        folder,
        &temp,
        libc::O_WRONLY | libc::O_CREAT | libc::O_EXCL,
        0o666,
    )?;
    let result = (|| {
        let mut file = std::fs::File::from(file);
        file.write_all(content)?;
        match at::stat_at(folder, name) {
            Ok(stat) if at::kind_of(&stat) == Kind::File => {
                at::set_mode(file.as_fd(), stat.st_mode & 0o7777)?;
            }
            _ => {
                // Read and write bits only: a recorded mode (a session log can be
                // edited) never makes a file set-user-id, set-group-id or sticky.
                if let Some(mode) = mode {
                    at::set_mode(file.as_fd(), mode & 0o777)?;
                }
            }
        }
        file.sync_all()?;
        at::rename_at(folder, &temp, name)
    })();
    if result.is_err() {
        let _ = at::remove_file_at(folder, &temp);
    }
    result
}

/// `.NAME.miniagent-PID-RANDOM.tmp`, NAME cut to fit.
fn temp_name(name: &OsStr) -> OsString {
    let bytes = name.as_bytes();
    let kept = String::from_utf8_lossy(&bytes[..bytes.len().min(TEMP_NAME_KEEP)]).into_owned();
    OsString::from(format!(
        ".{kept}.miniagent-{}-{:08x}.tmp",
        std::process::id(),
        fastrand::u32(..)
    ))
}

/// The PID in a name of the exact form [`temp_name`] makes, if it is one.
fn temp_file_pid(name: &[u8]) -> Option<u32> {
    let rest = name.strip_prefix(b".")?.strip_suffix(b".tmp")?;
    let (before, random) = split_last(rest, b'-')?;
    let (before, pid) = split_last(before, b'-')?;
    let is_hex = |b: &u8| b.is_ascii_digit() || (b'a'..=b'f').contains(b);
    if random.len() != 8 || !random.iter().all(is_hex) {
        return None;
    }
    if pid.is_empty() || pid.len() > 10 || !pid.iter().all(u8::is_ascii_digit) {
        return None;
    }
    let stem = before.strip_suffix(b".miniagent")?;
    if stem.is_empty() {
        return None;
    }
    std::str::from_utf8(pid).ok()?.parse().ok()
}

fn split_last(bytes: &[u8], at: u8) -> Option<(&[u8], &[u8])> {
    let index = memchr::memrchr(at, bytes)?;
    Some((&bytes[..index], &bytes[index + 1..]))
}

/// Whether `pid` is this process or a live miniagent (a PID reused by another program
/// does not keep a dead writer's file).
fn writer_alive(pid: u32) -> bool {
    if pid == std::process::id() {
        return true;
    }
    match std::fs::read(format!("/proc/{pid}/comm")) {
        Ok(comm) => comm.starts_with(b"miniagent"),
        Err(_) => false,
    }
}

/// Folders a start-up sweep looks into at most, so a huge tree cannot stall it.
const SWEEP_MAX_FOLDERS: usize = 20_000;
/// Depth a sweep goes to at most.
const SWEEP_MAX_DEPTH: usize = 64;

/// Removes the temporary files of atomic writes that a killed miniagent left under
/// `root`: only regular files named exactly like [`temp_name`]'s whose writer is not a
/// live miniagent process. Folders are walked by handle without following symlinks, and
/// `.git` is skipped. Returns how many files were removed.
pub fn remove_stale_temp_files(root: &Path) -> usize {
    let Ok(top) = at::open_folder(root) else {
        return 0;
    };
    let mut removed = 0;
    let mut visited = 0;
    let mut stack = vec![(top, 0usize)];
    while let Some((folder, depth)) = stack.pop() {
        visited += 1;
        if visited > SWEEP_MAX_FOLDERS {
            break;
        }
        let Ok(entries) = at::list_folder(folder.as_fd()) else {
            continue;
        };
        for (name, kind) in entries {
            let kind = kind.or_else(|| at::stat_at(folder.as_fd(), &name).ok().map(|s| at::kind_of(&s)));
            match kind {
                Some(Kind::Folder) if depth < SWEEP_MAX_DEPTH && name != ".git" => {
                    if let Ok(sub) = at::open_subfolder(folder.as_fd(), &name) {
                        stack.push((sub, depth + 1));
                    }
                }
                Some(Kind::File) => {
                    let Some(pid) = temp_file_pid(name.as_bytes()) else {
                        continue;
                    };
                    // Looked at again just before: only a regular file is removed.
                    let still_file =
                        at::stat_at(folder.as_fd(), &name).is_ok_and(|stat| at::kind_of(&stat) == Kind::File);
                    if still_file && !writer_alive(pid) && at::remove_file_at(folder.as_fd(), &name).is_ok() {
                        removed += 1;
                    }
                }
                _ => {}
            }
        }
    }
    removed
}

/// [`remove_stale_temp_files`] on a thread of its own, so start-up does not wait for it.
pub fn remove_stale_temp_files_in_background(root: &Path) {
    let root = root.to_path_buf();
    let spawned = std::thread::Builder::new()
        .name("temp-sweep".to_string())
        .spawn(move || {
            let removed = remove_stale_temp_files(&root);
            if removed > 0 {
                tracing::info!("removed {removed} temporary files left by interrupted writes");
            }
        });
    if let Err(err) = spawned {
        tracing::warn!("cannot start the sweep of stale temporary files: {err}");
    }
}

/// A unified diff of two texts, with `context` lines around each change; empty when equal.
pub fn unified_diff(old: &str, new: &str, label: &str, context: usize) -> String {
    if old == new {
        return String::new();
    }
    similar::TextDiff::from_lines(old, new)
        .unified_diff()
        .context_radius(context)
        .header(&format!("a/{label}"), &format!("b/{label}"))
        .to_string()
}

/// The current time in UTC as ISO 8601 (`2026-11-22T01:38:55Z`).
pub fn now_iso8601() -> String {
    let seconds = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0);
    iso8601(seconds)
}

pub fn iso8601(unix_seconds: u64) -> String {
    let days = (unix_seconds / 86_400) as i64;
    let of_day = unix_seconds % 86_400;
    // Civil date from days since 1970-01-01 (Howard Hinnant's algorithm).
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}Z",
        of_day / 3600,
        (of_day / 60) % 60,
        of_day % 60
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn timestamps_are_iso8601() {
        assert_eq!(iso8601(0), "1970-01-01T00:00:00Z");
        assert_eq!(iso8601(951_782_400), "2000-02-29T00:00:00Z");
        assert_eq!(iso8601(1_795_311_535), "2026-11-22T01:38:55Z");
    }

    #[test]
    fn diffs_are_unified() {
        assert_eq!(
            unified_diff("a\nb\nc\n", "a\nB\nc\n", "f.txt", 1),
            "--- a/f.txt\n+++ b/f.txt\n@@ -1,3 +1,3 @@\n a\n-b\n+B\n c\n"
        );
        assert_eq!(unified_diff("same", "same", "f", 3), "");
    }

    #[test]
    fn atomic_write_replaces_and_keeps_permissions() {
        use std::os::unix::fs::PermissionsExt;
        let dir = std::env::temp_dir().join(format!("miniagent-atomic-{}", std::process::id()));
        let path = dir.join("deep/er/file.sh");
        write_atomic(&path, b"one").unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
        write_atomic(&path, b"two").unwrap();
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "two");
        assert_eq!(
            std::fs::metadata(&path).unwrap().permissions().mode() & 0o777,
            0o755
        );
        let leftovers: Vec<_> = std::fs::read_dir(path.parent().unwrap()).unwrap().collect();
        assert_eq!(leftovers.len(), 1);
        std::fs::remove_dir_all(dir).unwrap();
    }
}
