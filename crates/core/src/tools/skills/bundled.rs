//! The skills that ship inside the binary, and their installation on disk so that their
//! scripts and references exist for the agent's tools to read and run. The skills
//! themselves (their `SKILL.md`: what they pre-approve, their instructions) are read from
//! the binary, never from that folder: a `SKILL.md` written there, new or changed, is
//! not a bundled skill.

use std::path::{Path, PathBuf};

use crate::tools::files::write_atomic;

/// One file of a bundled skill.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BundledFile {
    /// Relative to the skills folder, `/`-separated: `review-diff/SKILL.md`.
    pub path: &'static str,
    pub content: &'static str,
}

/// Declares a bundled file by its path under the repository's `skills/` folder, so the
/// path is written once for both the table and `include_str!`.
macro_rules! bundled {
    ($path:literal) => {
        BundledFile {
            path: $path,
            content: include_str!(concat!("../../../../../skills/", $path)),
        }
    };
}

/// Every file under the repository's `skills/` folder; a test keeps this list and the
/// folder in step.
pub const BUNDLED_FILES: &[BundledFile] = &[
    bundled!("commit-message/SKILL.md"),
    bundled!("commit-message/references/examples.md"),
    bundled!("commit-message/scripts/staged_summary.sh"),
    bundled!("review-diff/SKILL.md"),
    bundled!("review-diff/references/checklist.md"),
    bundled!("test-fix-loop/SKILL.md"),
    bundled!("test-fix-loop/references/runners.md"),
    bundled!("test-fix-loop/scripts/detect_test_command.sh"),
    bundled!("write-skill/SKILL.md"),
    bundled!("write-skill/references/format.md"),
];

/// Why the bundled skills could not be written out.
#[derive(Debug, thiserror::Error)]
pub enum InstallError {
    #[error("cannot create the bundled skills folder {}: {source}", dir.display())]
    Folder { dir: PathBuf, source: std::io::Error },
    #[error("cannot install the bundled skill file {}: {source}", path.display())]
    File { path: PathBuf, source: std::io::Error },
    #[error("cannot make {} executable: {source}", path.display())]
    Executable { path: PathBuf, source: std::io::Error },
}

/// The bundled skills ship inside the binary (`include_str!` of every file under skills/,
/// listed in [`BUNDLED_FILES`]); this writes them under `dir` (creating it, atomically per
/// file, only when missing or different) and returns the folder to pass as `bundled` to
/// [`super::SkillSet::discover`], so level-3 files exist on disk for the agent's tools.
///
/// Files under `scripts/` are made executable for convenience, though skills run them
/// with `bash path` and do not rely on it.
pub fn install_bundled(dir: &Path) -> Result<PathBuf, InstallError> {
    std::fs::create_dir_all(dir).map_err(|source| InstallError::Folder {
        dir: dir.to_path_buf(),
        source,
    })?;
    for file in BUNDLED_FILES {
        let path = file
            .path
            .split('/')
            .fold(dir.to_path_buf(), |path, part| path.join(part));
        let current = std::fs::read(&path).ok();
        if current.as_deref() == Some(file.content.as_bytes()) {
            continue;
        }
        write_atomic(&path, file.content.as_bytes()).map_err(|source| InstallError::File {
            path: path.clone(),
            source,
        })?;
        if file.path.contains("/scripts/") {
            make_executable(&path).map_err(|source| InstallError::Executable {
                path: path.clone(),
                source,
            })?;
        }
    }
    Ok(dir.canonicalize().unwrap_or_else(|_| dir.to_path_buf()))
}

/// The bundled skills, read from the binary, with their roots in `dir` (where
/// [`install_bundled`] put their files), and what reading them warned about.
pub(super) fn bundled_skills(dir: &Path) -> (Vec<super::Skill>, Vec<String>) {
    let mut skills = Vec::new();
    let mut warnings = Vec::new();
    for file in BUNDLED_FILES {
        let Some(folder) = file.path.strip_suffix(&format!("/{}", super::SKILL_FILE)) else {
            continue;
        };
        let root = folder
            .split('/')
            .fold(dir.to_path_buf(), |path, part| path.join(part));
        let root = root.canonicalize().unwrap_or(root);
        match super::Skill::parse(file.content, root, super::SkillSource::Bundled) {
            Ok((skill, field_warnings)) => {
                warnings.extend(
                    field_warnings
                        .into_iter()
                        .map(|warning| format!("bundled {}: {warning}", file.path)),
                );
                skills.push(skill);
            }
            Err(reason) => warnings.push(format!("skipped bundled {}: {reason}", file.path)),
        }
    }
    (skills, warnings)
}

#[cfg(unix)]
fn make_executable(path: &Path) -> std::io::Result<()> {
    use std::os::unix::fs::PermissionsExt;
    let mut permissions = std::fs::metadata(path)?.permissions();
    permissions.set_mode(permissions.mode() | 0o111);
    std::fs::set_permissions(path, permissions)
}

#[cfg(not(unix))]
fn make_executable(_path: &Path) -> std::io::Result<()> {
    Ok(())
}

/// Where the running version installs its bundled skills by default: the user's cache
/// folder (they are rebuilt from the binary at will), one subfolder per version so two
/// installed versions never overwrite each other's files. With `MINIAGENT_DATA_DIR` set,
/// `cache/skills/<version>` in it (nothing goes to the home folder's). `None` without
/// either.
///
/// A cache folder also keeps the path free of spaces on macOS (`~/Library/Caches`, unlike
/// `Application Support`), which matters because skills paste these paths into commands.
pub fn default_install_dir(env: &crate::config::Env) -> Option<PathBuf> {
    let cache = match crate::config::named_data_dir(env) {
        Some(data) => data.join("cache"),
        None => directories::ProjectDirs::from("", "", "miniagent")?
            .cache_dir()
            .to_path_buf(),
    };
    Some(cache.join("skills").join(env!("CARGO_PKG_VERSION")))
}
