//! What a sandboxed command may open for reading: every file but terminals and the
//! devices that hear or see the person (issue 15 review: a background job ran
//! `cat /dev/pts/N` and captured what was typed into the workbench).
//!
//! Landlock only allows, so "everything but these" is written as the largest files and
//! folders that hold none of them: one rule per entry of `/` but `/dev`, one per entry of
//! `/dev` but the terminals, and so on, walking down only where something refused lies
//! below (`/dev`, and the folders leading to any other devpts mount). Refused:
//! - every devpts mount (`/dev/pts`, with its `ptmx`), found in `/proc/self/mountinfo`;
//! - block devices (reading a disk bypasses every file's permissions);
//! - character devices of the terminal, console, virtual-console, input, sound and video
//!   drivers, by major number;
//! - in `/dev`, the same by name (`tty*`, `console`, `ptmx`, `vcs*`, `input`,
//!   `uinput`, `hidraw*`, `snd`, `video*`, …), for drivers with dynamic numbers.
//!
//! Symbolic links get no rule (Landlock checks where they lead) and sockets none
//! (connecting is not reading).

use std::path::{Path, PathBuf};

/// Folders walked at most this deep below `/`, and this many entries listed in all; past
/// either, what was not listed is left unreadable rather than allowed unseen.
const MAX_DEPTH: usize = 8;
const MAX_ENTRIES: usize = 20_000;

/// Names under `/dev` refused whatever their numbers: exact, then prefixes.
const DENIED_NAMES: [&str; 10] = [
    "pts", "ptmx", "console", "input", "uinput", "uhid", "snd", "dsp", "audio", "mixer",
];
const DENIED_PREFIXES: [&str; 7] = ["tty", "vcs", "hidraw", "video", "media", "hvc", "pty"];

/// Character-device majors refused: old BSD ptys (2, 3), ttys (4), `/dev/tty`, console
/// and ptmx (5), virtual-console memory (7), input (13), OSS sound (14), video4linux
/// (81), ALSA (116), Unix98 ptys (136–143), ttyACM (166), ttyUSB (188), low-density
/// serial (204), hvc (229).
fn denied_major(major: u32) -> bool {
    matches!(major, 2..=5 | 7 | 13 | 14 | 81 | 116 | 136..=143 | 166 | 188 | 204 | 229)
}

/// The result of the walk.
#[derive(Debug, Default)]
pub(super) struct Cover {
    /// Files and folders commands may read everything under.
    pub readable: Vec<PathBuf>,
    /// Terminals and devices found and left out (devpts mounts among them).
    pub denied: Vec<PathBuf>,
    listed: usize,
}

/// Walks the file system from `/` as described in the module header.
pub(super) fn cover() -> Cover {
    let mounts = std::fs::read_to_string("/proc/self/mountinfo")
        .map(|info| devpts_mounts(&info))
        .unwrap_or_default();
    cover_from(Path::new("/"), Path::new("/dev"), &mounts)
}

/// [`cover`] from `root`, with `dev` the folder whose entries are also judged by name and
/// `mounts` the devpts mount points.
fn cover_from(root: &Path, dev: &Path, mounts: &[PathBuf]) -> Cover {
    let mut out = Cover::default();
    if walk(root, false, &Places { dev, mounts }, 0, &mut out) {
        out.readable.push(root.to_path_buf());
    }
    out
}

/// Where denied things are known to be.
struct Places<'a> {
    dev: &'a Path,
    mounts: &'a [PathBuf],
}

/// Adds to `out` the largest clean files and folders in `dir`, unless all of `dir` is
/// clean: then it adds nothing and returns true, for the caller to add `dir` whole.
fn walk(dir: &Path, in_dev: bool, places: &Places, depth: usize, out: &mut Cover) -> bool {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return false;
    };
    let mut clean = Vec::new();
    let mut all_clean = true;
    for entry in entries.flatten() {
        out.listed += 1;
        if out.listed > MAX_ENTRIES {
            all_clean = false;
            break;
        }
        let path = entry.path();
        let Ok(meta) = path.symlink_metadata() else {
            all_clean = false;
            continue;
        };
        let kind = meta.file_type();
        if kind.is_symlink() || is_socket(&kind) {
            continue;
        }
        let by_name = dir == places.dev;
        if places.mounts.contains(&path) || denied_node(&path, &meta, by_name) {
            all_clean = false;
            out.denied.push(path);
            continue;
        }
        if kind.is_dir() {
            let is_dev = path == places.dev;
            let holds_denied =
                is_dev || in_dev || places.mounts.iter().any(|m| m != &path && m.starts_with(&path));
            if holds_denied && (depth >= MAX_DEPTH || !walk(&path, in_dev || is_dev, places, depth + 1, out))
            {
                all_clean = false;
                continue;
            }
        }
        clean.push(path);
    }
    if !all_clean {
        out.readable.extend(clean);
    }
    all_clean
}

#[cfg(unix)]
fn is_socket(kind: &std::fs::FileType) -> bool {
    std::os::unix::fs::FileTypeExt::is_socket(kind)
}

#[cfg(not(unix))]
fn is_socket(_: &std::fs::FileType) -> bool {
    false
}

/// Whether `path` is a terminal, an input, sound or video device, or a disk; `by_name`
/// for entries of `/dev`, also judged by their names.
#[cfg(unix)]
fn denied_node(path: &Path, meta: &std::fs::Metadata, by_name: bool) -> bool {
    use std::os::unix::fs::{FileTypeExt, MetadataExt};
    let kind = meta.file_type();
    if kind.is_block_device() {
        return true;
    }
    if kind.is_char_device() && denied_major(major(meta.rdev())) {
        return true;
    }
    by_name
        && path.file_name().and_then(|n| n.to_str()).is_some_and(|name| {
            DENIED_NAMES.contains(&name) || DENIED_PREFIXES.iter().any(|p| name.starts_with(p))
        })
}

#[cfg(not(unix))]
fn denied_node(_: &Path, _: &std::fs::Metadata, _: bool) -> bool {
    false
}

/// The major number of a device number, as glibc's `major()` computes it.
fn major(rdev: u64) -> u32 {
    (((rdev >> 32) & 0xffff_f000) | ((rdev >> 8) & 0x0000_0fff)) as u32
}

/// Mount points of devpts file systems in a `/proc/PID/mountinfo` text.
fn devpts_mounts(info: &str) -> Vec<PathBuf> {
    info.lines()
        .filter_map(|line| {
            let (mount, fs) = line.split_once(" - ")?;
            let mount_point = mount.split(' ').nth(4)?;
            (fs.split(' ').next()? == "devpts").then(|| PathBuf::from(unescape(mount_point)))
        })
        .collect()
}

/// Undoes mountinfo's octal escapes (`\040` for a space).
fn unescape(field: &str) -> String {
    let bytes = field.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut index = 0;
    while index < bytes.len() {
        let octal = bytes.get(index + 1..index + 4).and_then(|digits| {
            let text = std::str::from_utf8(digits).ok()?;
            u8::from_str_radix(text, 8).ok()
        });
        match (bytes[index], octal) {
            (b'\\', Some(byte)) => {
                out.push(byte);
                index += 4;
            }
            (byte, _) => {
                out.push(byte);
                index += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn devpts_mounts_are_found_in_mountinfo_with_escapes_undone() {
        let info = "22 1 0:21 / /proc rw,nosuid - proc proc rw\n\
                    25 23 0:23 / /dev/pts rw,nosuid - devpts devpts rw,mode=600\n\
                    40 1 0:23 / /srv/a\\040b/dev/pts rw - devpts devpts rw\n\
                    41 1 0:24 / /mnt/devpts-like rw - tmpfs devpts rw\n";
        assert_eq!(
            devpts_mounts(info),
            vec![PathBuf::from("/dev/pts"), PathBuf::from("/srv/a b/dev/pts")]
        );
    }

    #[test]
    fn device_numbers_split_as_glibc_does() {
        for (major_number, minor_number) in [(136, 3), (4, 64), (5000, 70_000)] {
            assert_eq!(major(libc::makedev(major_number, minor_number)), major_number);
        }
    }

    #[test]
    fn the_walk_leaves_out_denied_names_and_mounts_and_keeps_clean_folders_whole() {
        let root = std::env::temp_dir().join(format!("miniagent-cover-{}", fastrand::u64(..)));
        let dev = root.join("dev");
        for dir in [
            "usr/lib",
            "dev/shm",
            "dev/pts",
            "dev/input",
            "dev/dri",
            "home/u/jail/pts",
        ] {
            std::fs::create_dir_all(root.join(dir)).unwrap();
        }
        for file in [
            "dev/null-like",
            "dev/tty-like",
            "dev/console",
            "dev/dri/card0",
            "home/u/notes",
        ] {
            std::fs::write(root.join(file), "").unwrap();
        }
        std::os::unix::fs::symlink("/dev/pts/0", dev.join("stdin-like")).unwrap();
        let mounts = [dev.join("pts"), root.join("home/u/jail/pts")];
        let mut cover = cover_from(&root, &dev, &mounts);
        cover.readable.sort();
        cover.denied.sort();
        assert_eq!(
            cover.readable,
            ["dev/dri", "dev/null-like", "dev/shm", "home/u/notes", "usr"]
                .map(|p| root.join(p))
                .to_vec()
        );
        assert_eq!(
            cover.denied,
            [
                "dev/console",
                "dev/input",
                "dev/pts",
                "dev/tty-like",
                "home/u/jail/pts"
            ]
            .map(|p| root.join(p))
            .to_vec()
        );
        let _ = std::fs::remove_dir_all(&root);
    }

    #[test]
    fn on_this_machine_terminals_are_left_out_and_the_rest_of_the_system_kept() {
        let cover = cover();
        for kept in ["/usr", "/proc", "/etc"] {
            assert!(
                cover.readable.iter().any(|p| Path::new(kept).starts_with(p)),
                "{kept}: {cover:?}"
            );
        }
        for refused in ["/dev/pts/0", "/dev/tty", "/dev/ptmx", "/dev/console"] {
            assert!(
                !cover.readable.iter().any(|p| Path::new(refused).starts_with(p)),
                "{refused}: {cover:?}"
            );
        }
        assert!(
            cover.readable.iter().any(|p| p == Path::new("/dev/null")),
            "{cover:?}"
        );
    }
}
