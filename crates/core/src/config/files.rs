//! miniagent's own files: folders and logs readable by this user only.

/// The user this process acts as, whose files miniagent's folders hold.
pub fn effective_uid() -> u32 {
    // SAFETY: geteuid has no preconditions and cannot fail.
    unsafe { libc::geteuid() }
}

/// Creates `dir` (and its parents) readable by this user only, as the sessions folder is:
/// logs hold what commands printed and servers said.
pub fn private_dir(dir: &std::path::Path) -> std::io::Result<()> {
    use std::os::unix::fs::DirBuilderExt;
    std::fs::DirBuilder::new().recursive(true).mode(0o700).create(dir)
}

/// Opens a log file for appending, readable by this user only (one an older version made
/// readable by others is closed, when it is this user's).
pub fn private_log(path: &std::path::Path) -> std::io::Result<std::fs::File> {
    use std::os::unix::fs::{MetadataExt, OpenOptionsExt, PermissionsExt};
    let file = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .mode(0o600)
        .open(path)?;
    if let Ok(meta) = file.metadata()
        && meta.uid() == effective_uid()
        && meta.mode() & 0o077 != 0
    {
        let _ = file.set_permissions(std::fs::Permissions::from_mode(0o600));
    }
    Ok(file)
}
