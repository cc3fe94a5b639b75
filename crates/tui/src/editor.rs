//! Ctrl-G: the input's text edited in the person's own editor (`$VISUAL`, else
//! `$EDITOR`, else `vi`). The text goes into a file of its own in a private folder, the
//! editor runs on it with the terminal handed over (the event loop does that part), and
//! what it saved comes back. Nothing is sent: the input shows it.

use std::io::{Read, Write};
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

/// The largest text taken back: as much as a paste takes (more stalls the input box for
/// seconds).
const MAX_EDITED_BYTES: u64 = 1024 * 1024;

/// Why the edited text did not come back; the input is left as it was.
#[derive(Debug, thiserror::Error)]
pub enum EditError {
    #[error("the editor command is empty (set VISUAL or EDITOR)")]
    Empty,
    #[error("cannot read the editor command `{0}` as a shell would (an unclosed quote?)")]
    Unsplittable(String),
    #[error("cannot make a private file for the editor: {0}")]
    TempFile(std::io::Error),
    #[error("cannot start the editor `{program}`: {source}")]
    Start { program: String, source: std::io::Error },
    #[error("the editor `{program}` {status}")]
    Failed { program: String, status: String },
    #[error("cannot read back what the editor saved: {0}")]
    ReadBack(std::io::Error),
    #[error("the edited text is {0} bytes; the input takes at most 1 MB")]
    TooLarge(u64),
    #[error("the edited file is not UTF-8 text")]
    NotText,
}

/// The editor command the environment names: `VISUAL`, else `EDITOR` (an empty one does
/// not count), else `vi`.
pub fn command(var: impl Fn(&str) -> Option<String>) -> String {
    ["VISUAL", "EDITOR"]
        .into_iter()
        .find_map(|name| var(name).filter(|value| !value.trim().is_empty()))
        .unwrap_or_else(|| "vi".to_string())
}

/// `command` as a shell splits it into words (`code --wait`, `"my editor" -f`), the
/// file to edit last.
fn words(command: &str, file: &Path) -> Result<Vec<String>, EditError> {
    let mut words = shlex::split(command).ok_or_else(|| EditError::Unsplittable(command.to_string()))?;
    if words.is_empty() {
        return Err(EditError::Empty);
    }
    words.push(file.display().to_string());
    Ok(words)
}

/// A folder only this user can enter, removed (with the file in it) when dropped.
struct PrivateDir(PathBuf);

impl PrivateDir {
    fn create() -> std::io::Result<PrivateDir> {
        let base = std::env::temp_dir();
        let mut attempt = 0u32;
        loop {
            let nanos = std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map(|elapsed| elapsed.subsec_nanos())
                .unwrap_or(0);
            let path = base.join(format!("miniagent-edit-{}-{nanos}-{attempt}", std::process::id()));
            // `create` fails on a name that exists: another process's folder (or one put
            // there to be written through) is never used.
            match std::fs::DirBuilder::new().mode(0o700).create(&path) {
                Ok(()) => return Ok(PrivateDir(path)),
                Err(err) if err.kind() == std::io::ErrorKind::AlreadyExists && attempt < 16 => attempt += 1,
                Err(err) => return Err(err),
            }
        }
    }
}

impl Drop for PrivateDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// Writes `text` to a new private file (0600, in a 0700 folder).
fn write_private(dir: &PrivateDir, text: &str) -> std::io::Result<PathBuf> {
    // `.md`: editors colour it as the Markdown it mostly is.
    let path = dir.0.join("message.md");
    let mut file = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(&path)?;
    file.write_all(text.as_bytes())?;
    file.sync_all()?;
    Ok(path)
}

/// What the editor left in `path`, without the newline editors add at the end.
fn read_back(path: &Path) -> Result<String, EditError> {
    let file = std::fs::File::open(path).map_err(EditError::ReadBack)?;
    let mut bytes = Vec::new();
    // One byte more than allowed tells a file that is too large, however it grew.
    file.take(MAX_EDITED_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(EditError::ReadBack)?;
    let length = bytes.len() as u64;
    if length > MAX_EDITED_BYTES {
        let size = std::fs::metadata(path).map_or(length, |meta| meta.len());
        return Err(EditError::TooLarge(size));
    }
    let text = String::from_utf8(bytes).map_err(|_| EditError::NotText)?;
    Ok(text.trim_end_matches(['\n', '\r']).to_string())
}

/// Runs `command` on a private copy of `text` and returns what it saved. The caller has
/// handed the terminal over; the editor inherits it (standard input, output and error).
pub async fn edit(command: &str, text: &str) -> Result<String, EditError> {
    let dir = PrivateDir::create().map_err(EditError::TempFile)?;
    let path = write_private(&dir, text).map_err(EditError::TempFile)?;
    let words = words(command, &path)?;
    let program = words[0].clone();
    // Out of raw mode, Ctrl-C in an editor that leaves the terminal cooked (one waiting
    // for a window, `code --wait`) signals the whole foreground group: caught here while
    // it runs, it stops the editor, not the workbench. A handler does not survive exec,
    // so the editor gets its Ctrl-C as usual.
    let interrupt = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::interrupt()).ok();
    let status = tokio::process::Command::new(&program)
        .args(&words[1..])
        .status()
        .await;
    drop(interrupt);
    let status = status.map_err(|source| EditError::Start {
        program: program.clone(),
        source,
    })?;
    if !status.success() {
        let status = match (
            status.code(),
            std::os::unix::process::ExitStatusExt::signal(&status),
        ) {
            (Some(code), _) => format!("exited with status {code}"),
            (None, Some(signal)) => format!("was stopped by signal {signal}"),
            (None, None) => "failed".to_string(),
        };
        return Err(EditError::Failed { program, status });
    }
    read_back(&path)
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;
    use std::os::unix::fs::PermissionsExt;

    #[test]
    fn the_editor_is_visual_then_editor_then_vi() {
        let vars = |pairs: &'static [(&'static str, &'static str)]| {
            move |name: &str| {
                pairs
                    .iter()
                    .find(|(key, _)| *key == name)
                    .map(|(_, value)| value.to_string())
            }
        };
        assert_eq!(command(vars(&[("VISUAL", "nvim"), ("EDITOR", "nano")])), "nvim");
        assert_eq!(
            command(vars(&[("VISUAL", " "), ("EDITOR", "code --wait")])),
            "code --wait"
        );
        assert_eq!(command(vars(&[])), "vi");
    }

    /// Split as a shell would: arguments, quotes, the file last; a broken quote is an
    /// error, not a guess.
    #[test]
    fn the_command_is_split_like_a_shell_would() {
        let file = Path::new("/tmp/x/message.md");
        assert_eq!(
            words("code --wait", file).expect("splits"),
            ["code", "--wait", "/tmp/x/message.md"]
        );
        assert_eq!(
            words(r#""/opt/my editor/bin/ed" -c 'set tw=80'"#, file).expect("splits"),
            ["/opt/my editor/bin/ed", "-c", "set tw=80", "/tmp/x/message.md"]
        );
        assert!(matches!(
            words("vim 'unclosed", file),
            Err(EditError::Unsplittable(_))
        ));
        assert!(matches!(words("   ", file), Err(EditError::Empty)));
    }

    /// The copy is private (0600 in a 0700 folder) and gone afterwards; what the editor
    /// saved comes back without its final newline.
    #[tokio::test]
    async fn the_text_goes_through_a_private_file_and_comes_back() {
        let dir = PrivateDir::create().expect("made");
        let path = write_private(&dir, "hello foo").expect("written");
        let mode = |path: &Path| std::fs::metadata(path).expect("there").permissions().mode() & 0o777;
        assert_eq!((mode(&dir.0), mode(&path)), (0o700, 0o600));
        let folder = dir.0.clone();
        drop(dir);
        assert!(!folder.exists());

        let edited = edit("sed -i s/foo/bar/", "hello foo\n").await.expect("edited");
        assert_eq!(edited, "hello bar");
    }

    /// An editor that fails, cannot start or saves what is not text gives nothing back.
    #[tokio::test]
    async fn a_failing_editor_gives_nothing_back() {
        let failed = edit("false", "kept").await.expect_err("fails");
        assert_eq!(failed.to_string(), "the editor `false` exited with status 1");
        let missing = edit("/nonexistent/editor", "kept").await.expect_err("fails");
        assert!(
            missing
                .to_string()
                .starts_with("cannot start the editor `/nonexistent/editor`: "),
            "{missing}"
        );
        let binary = edit("sh -c 'printf \"\\377\" > \"$1\"' sh", "kept")
            .await
            .expect_err("fails");
        assert!(matches!(binary, EditError::NotText), "{binary}");
    }
}
