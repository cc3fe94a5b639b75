//! Workspace confinement: every path a file tool touches is resolved (relative to the
//! workspace, `..` folded, symlinks followed) and must land inside the workspace, or,
//! for reading only, inside an extra allowed root.

use std::path::{Component, Path, PathBuf};

/// How a path will be used.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Access {
    Read,
    Write,
}

/// The folders file tools may use.
#[derive(Clone, Debug)]
pub struct Workspace {
    root: PathBuf,
    read_roots: Vec<PathBuf>,
}

/// Symlink hops followed before giving up (the kernel's own limit is 40).
const MAX_SYMLINK_HOPS: u32 = 40;
/// The longest path a tool takes (Linux's `PATH_MAX`); a longer one cannot name a file,
/// and echoing megabytes of it back would bury the message.
const MAX_PATH_BYTES: usize = 4096;

impl Workspace {
    /// `root` and the extra read-only roots; both are resolved once here, so a workspace
    /// reached through a symlink still matches its resolved paths.
    pub fn new(root: &Path, read_roots: &[PathBuf]) -> Self {
        let canonical = |p: &Path| p.canonicalize().unwrap_or_else(|_| normalize(p));
        Self {
            root: canonical(root),
            read_roots: read_roots.iter().map(|p| canonical(&root.join(p))).collect(),
        }
    }

    pub fn root(&self) -> &Path {
        &self.root
    }

    /// The real path `path` names, if `access` to it is allowed; otherwise a message for
    /// the model that names the resolved path.
    pub fn resolve(&self, path: &str, access: Access) -> Result<PathBuf, String> {
        if path.trim().is_empty() {
            return Err("the path is empty".to_string());
        }
        if path.contains('\0') {
            return Err("the path contains a NUL byte".to_string());
        }
        if path.len() > MAX_PATH_BYTES {
            return Err(format!(
                "the path is {} bytes long; a path has at most {MAX_PATH_BYTES} bytes",
                path.len()
            ));
        }
        let named = Path::new(path);
        let joined = if named.is_absolute() {
            named.to_path_buf()
        } else {
            self.root.join(named)
        };
        let real = real_path(&normalize(&joined), 0)?;
        if real.starts_with(&self.root) {
            return Ok(real);
        }
        if access == Access::Read && self.read_roots.iter().any(|root| real.starts_with(root)) {
            return Ok(real);
        }
        let extra = match access {
            Access::Read if !self.read_roots.is_empty() => " or the allowed read-only folders",
            _ => "",
        };
        Err(format!(
            "`{path}` resolves to {}, which is outside the workspace {}{extra}; file tools only work inside it",
            real.display(),
            self.root.display()
        ))
    }

    /// `path` relative to the workspace when inside it, for messages.
    pub fn display(&self, path: &Path) -> String {
        match path.strip_prefix(&self.root) {
            Ok(relative) if relative.as_os_str().is_empty() => ".".to_string(),
            Ok(relative) => relative.display().to_string(),
            Err(_) => path.display().to_string(),
        }
    }
}

/// Folds `.` and `..` without touching the file system (`..` at the root stays at the root).
fn normalize(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for component in path.components() {
        match component {
            Component::ParentDir => {
                out.pop();
            }
            Component::CurDir => {}
            Component::Prefix(_) | Component::RootDir | Component::Normal(_) => out.push(component),
        }
    }
    out
}

/// The path with every symlink resolved, also for paths that do not exist yet and for
/// symlinks whose target does not exist (a write through them would create the target).
fn real_path(path: &Path, hops: u32) -> Result<PathBuf, String> {
    if hops > MAX_SYMLINK_HOPS {
        return Err(format!("too many levels of symbolic links at {}", path.display()));
    }
    if let Ok(real) = path.canonicalize() {
        return Ok(real);
    }
    if let Ok(meta) = std::fs::symlink_metadata(path)
        && meta.file_type().is_symlink()
    {
        let target = std::fs::read_link(path)
            .map_err(|err| format!("cannot read the symbolic link {}: {err}", path.display()))?;
        let joined = match path.parent() {
            Some(parent) if target.is_relative() => parent.join(target),
            _ => target,
        };
        return real_path(&normalize(&joined), hops + 1);
    }
    match (path.parent(), path.file_name()) {
        (Some(parent), Some(name)) => Ok(real_path(parent, hops)?.join(name)),
        _ => Ok(path.to_path_buf()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    struct Scratch(PathBuf);

    impl Scratch {
        fn new(name: &str) -> Self {
            let dir = std::env::temp_dir().join(format!("miniagent-paths-{name}-{}", std::process::id()));
            let _ = std::fs::remove_dir_all(&dir);
            std::fs::create_dir_all(dir.join("ws/sub")).unwrap();
            std::fs::create_dir_all(dir.join("outside")).unwrap();
            Self(dir.canonicalize().unwrap())
        }
    }

    impl Drop for Scratch {
        fn drop(&mut self) {
            let _ = std::fs::remove_dir_all(&self.0);
        }
    }

    #[test]
    fn inside_paths_resolve_and_escapes_are_refused() {
        let scratch = Scratch::new("escape");
        let ws = Workspace::new(&scratch.0.join("ws"), &[]);
        let root = scratch.0.join("ws");
        assert_eq!(
            ws.resolve("sub/new.txt", Access::Write),
            Ok(root.join("sub/new.txt"))
        );
        assert_eq!(ws.resolve("sub/../a.txt", Access::Write), Ok(root.join("a.txt")));
        assert_eq!(
            ws.resolve(root.join("b").to_str().unwrap(), Access::Write),
            Ok(root.join("b"))
        );
        let err = ws.resolve("../escape.txt", Access::Write).unwrap_err();
        assert_eq!(
            err,
            format!(
                "`../escape.txt` resolves to {}, which is outside the workspace {}; file tools only work inside it",
                scratch.0.join("escape.txt").display(),
                root.display()
            )
        );
        assert!(
            ws.resolve("/tmp/escape.txt", Access::Write)
                .unwrap_err()
                .contains("resolves to /tmp/escape.txt")
        );
        assert!(ws.resolve("a\0b", Access::Read).is_err());
        assert!(ws.resolve("", Access::Read).is_err());
        assert_eq!(
            ws.resolve(&"a".repeat(10_000), Access::Write),
            Err("the path is 10000 bytes long; a path has at most 4096 bytes".to_string())
        );
    }

    #[test]
    fn symlinks_are_followed_even_when_dangling() {
        let scratch = Scratch::new("links");
        let root = scratch.0.join("ws");
        std::os::unix::fs::symlink(scratch.0.join("outside"), root.join("out-dir")).unwrap();
        std::os::unix::fs::symlink(scratch.0.join("outside/ghost.txt"), root.join("ghost")).unwrap();
        std::os::unix::fs::symlink("sub", root.join("inner")).unwrap();
        let ws = Workspace::new(&root, &[]);
        assert!(
            ws.resolve("out-dir/x.txt", Access::Write)
                .unwrap_err()
                .contains("outside/x.txt")
        );
        assert!(
            ws.resolve("ghost", Access::Write)
                .unwrap_err()
                .contains("outside/ghost.txt")
        );
        assert_eq!(ws.resolve("inner/f", Access::Write), Ok(root.join("sub/f")));
    }

    #[test]
    fn extra_roots_are_read_only() {
        let scratch = Scratch::new("roots");
        let ws = Workspace::new(&scratch.0.join("ws"), &[scratch.0.join("outside")]);
        let file = scratch.0.join("outside/skill.md");
        assert_eq!(ws.resolve(file.to_str().unwrap(), Access::Read), Ok(file.clone()));
        assert!(ws.resolve(file.to_str().unwrap(), Access::Write).is_err());
    }
}
