//! git for a command that runs without a question (a skill pre-approved it, a person
//! approved its program or its line for the session): git runs programs its
//! configuration names, and the repository's `.git/config` is not the person's choice.
//! It may have shipped with the repository, or a write the model made without a
//! question (auto-edit) may have put it there.
//!
//! Two things are done. Settings whose program can be turned off by a harmless value are
//! overridden for every such command through git's own environment variables
//! ([`overrides`]): `core.fsmonitor` (run by `git status`), `core.hooksPath` (every
//! hook), the pager and the editors, the `ext::` transport, and git running itself
//! inside submodules, whose configuration miniagent does not read. Settings that cannot
//! be turned off that way (`diff.external`, a textconv or filter driver, an alias, a
//! remote's upload-pack, a credential helper, …) are looked for in the configuration
//! git would read for the command ([`hazards`]); when the repository (or a file inside
//! the workspace) sets one, the command is asked about, naming them. git's own options
//! that choose the repository (`-C sub`, `--git-dir`) are read with the command; a
//! command through which git would read configuration the check cannot read (a
//! submodule's own, with `--submodule=diff`; another folder's, after `cd`), set some
//! that undoes what was turned off (`-c`), write a file or run a program its options
//! name (`--output`, `grep -O`), or whose options the shell works out (`$x`, a glob),
//! is asked about ([`reach`]).

use std::ffi::{OsStr, OsString};
use std::path::Path;
use std::time::Duration;

/// How long reading git's configuration may take; a command that cannot be checked in
/// time is asked about.
const READ_TIMEOUT: Duration = Duration::from_secs(5);
/// The most configuration text read; a larger one is asked about.
const MAX_CONFIG_BYTES: usize = 1024 * 1024;
/// The most characters of a value shown in the question.
const SHOWN_VALUE_CHARS: usize = 80;

/// git settings set for every command that runs without a question: each turns off a
/// program the repository could name, with a value that changes nothing else a reading
/// command shows.
const FIXED: &[(&str, &str)] = &[
    // `git status` runs the fsmonitor hook.
    ("core.fsmonitor", "false"),
    // Hooks (`git commit`, `git checkout`, reference updates, auto-gc).
    ("core.hooksPath", "/dev/null"),
    // `url.*.insteadOf` could turn any remote into `ext::sh -c …`.
    ("protocol.ext.allow", "never"),
    // git runs itself inside each submodule, which reads that submodule's own
    // configuration; only the commits recorded for submodules are compared.
    ("diff.ignoreSubmodules", "dirty"),
    ("status.submoduleSummary", "false"),
    ("diff.submodule", "short"),
    ("submodule.recurse", "false"),
];

/// Variables that beat any configured pager or editor.
const FIXED_ENV: &[(&str, &str)] = &[
    ("GIT_PAGER", "cat"),
    ("GIT_EDITOR", "true"),
    ("GIT_SEQUENCE_EDITOR", "true"),
];

/// Why git's configuration could not be checked.
#[derive(Debug, thiserror::Error)]
pub enum GuardError {
    #[error("git could not be started to read the repository's configuration: {0}")]
    Start(std::io::Error),
    #[error("reading the repository's git configuration took longer than {} s", READ_TIMEOUT.as_secs())]
    Timeout,
    #[error("the repository's git configuration is larger than {} KiB", MAX_CONFIG_BYTES / 1024)]
    TooLarge,
}

/// Whether `command` may run git (a word `git`, or a path ending in it, with the shell's
/// quotes and backslashes, which hide nothing from it, removed: `g\it`, `'g'it`).
pub fn names_git(command: &str) -> bool {
    let unquoted: String = command
        .chars()
        .filter(|c| !matches!(c, '\\' | '\'' | '"'))
        .collect();
    unquoted
        .split(|c: char| !(c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.')))
        .any(|word| word == "git")
}

mod command;
pub use command::{Reach, reach};

/// Whether `command` names a repository's own folder (`.git`, `.git/hooks/…`,
/// `sub/.git/config`), in any case (a case-insensitive file system finds `.GIT`).
pub fn names_git_folder(command: &str) -> bool {
    let name_char = |c: char| c.is_alphanumeric() || matches!(c, '-' | '_' | '.');
    // Quotes and backslashes hide nothing from the shell: `.g''it`, `.gi\t`, `"".git`.
    let lower: String = command
        .to_lowercase()
        .chars()
        .filter(|c| !matches!(c, '\\' | '\'' | '"'))
        .collect();
    lower.match_indices(".git").any(|(at, found)| {
        let before = lower[..at].chars().next_back();
        let after = lower[at + found.len()..].chars().next();
        before.is_none_or(|c| !name_char(c)) && after.is_none_or(|c| !name_char(c))
    })
}

/// Whether `path` (a real path) is in a repository's own folder: a component below
/// `root` is `.git`, in any case.
pub fn in_git_folder(path: &Path, root: &Path) -> bool {
    path.strip_prefix(root)
        .unwrap_or(path)
        .components()
        .any(|part| part.as_os_str().to_string_lossy().eq_ignore_ascii_case(".git"))
}

/// Whether writing `path` (a real path) changes a folder at or below `root` that is, or
/// with this write becomes, a repository's own folder by its contents: git takes a
/// folder holding `HEAD` beside `objects/` and `refs/` (or a `commondir` file naming
/// where they are) for a bare repository when run inside it, and runs what its `config`
/// and `hooks/` name. Names compare without case, as a case-insensitive file system
/// finds them.
pub fn in_git_directory(path: &Path, root: &Path) -> bool {
    path.ancestors()
        .take_while(|folder| folder.starts_with(root))
        .any(|folder| {
            let written = path
                .strip_prefix(folder)
                .ok()
                .and_then(|inside| inside.components().next())
                .map(|first| first.as_os_str().to_string_lossy().into_owned());
            let holds = |name: &str| {
                written
                    .as_deref()
                    .is_some_and(|first| first.eq_ignore_ascii_case(name))
                    || folder.join(name).exists()
            };
            holds("HEAD") && ((holds("objects") && holds("refs")) || holds("commondir"))
        })
}

/// One setting as `git config --list --show-scope --show-origin` gives it.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Setting {
    scope: String,
    origin: String,
    key: String,
    value: String,
}

/// The settings that name a program git would run for `command` and that the person did
/// not choose: set by the repository's own configuration, or by a configuration file
/// inside the workspace `root`. Each as `key = value` (value cut and without control
/// characters), for the question.
///
/// With `asked` (the person is asked about the command anyway, and it runs with nothing
/// turned off), also the settings [`FIXED`] and [`FIXED_ENV`] would have turned off.
/// `options` are git's own options from the command that choose the repository
/// ([`Reach::Checked`]).
pub async fn hazards(
    command: &str,
    root: &Path,
    env: &[(OsString, OsString)],
    options: &[String],
    asked: bool,
) -> Result<Vec<String>, GuardError> {
    let text = git_output(
        root,
        env,
        options,
        &[
            "config",
            "--list",
            "--show-scope",
            "--show-origin",
            "--includes",
            "-z",
        ],
    )
    .await?;
    let Some(text) = text else { return Ok(Vec::new()) };
    // A builtin that only reads (what approving git by name covers) never runs an alias.
    let builtin_read = super::command_rule::program_by_name(command) == Some("git");
    let real_root = root.canonicalize().unwrap_or_else(|_| root.to_path_buf());
    Ok(parse(&text)
        .into_iter()
        .filter(|setting| chosen_for_the_person(setting, &real_root, root))
        .filter(|setting| {
            names_program(&setting.key, &setting.value, builtin_read)
                || (asked && turned_off_when_covered(&setting.key, &setting.value))
        })
        .map(|setting| format!("{} = {}", setting.key, shown(&setting.value)))
        .collect())
}

/// The environment for `command` running without a question: `env` plus the [`FIXED`]
/// settings (after any `GIT_CONFIG_COUNT` ones `env` has), one more per submodule the
/// repository at `root` declares when the command names git, and the pager and editor
/// variables. (A program that runs git itself, a build script, gets them too.)
pub async fn overrides(
    command: &str,
    root: &Path,
    env: &[(OsString, OsString)],
) -> Vec<(OsString, OsString)> {
    let mut settings = fixed();
    // `.gitmodules` (a workspace file) can set a submodule's `ignore`, which beats
    // `diff.ignoreSubmodules`; the command line's own setting beats it. (A command
    // whose repository cannot be told is asked about, and never gets here.)
    if names_git(command) {
        let options = match reach(command) {
            Reach::Checked(options) => options,
            Reach::Unchecked(_) => Vec::new(),
        };
        for name in submodule_names(root, env, &options).await {
            settings.push((format!("submodule.{name}.ignore"), "dirty".to_string()));
        }
    }
    with_settings(env, &settings)
}

/// [`FIXED`] as owned pairs.
fn fixed() -> Vec<(String, String)> {
    FIXED
        .iter()
        .map(|(key, value)| (key.to_string(), value.to_string()))
        .collect()
}

/// `env` with `settings` added as `GIT_CONFIG_KEY_n`/`GIT_CONFIG_VALUE_n` after those it
/// already has, and [`FIXED_ENV`].
fn with_settings(env: &[(OsString, OsString)], settings: &[(String, String)]) -> Vec<(OsString, OsString)> {
    let count_var = OsStr::new("GIT_CONFIG_COUNT");
    let replaced = |name: &OsStr| name == count_var || FIXED_ENV.iter().any(|(fixed, _)| name == *fixed);
    let first = env
        .iter()
        .find(|(name, _)| name == count_var)
        .and_then(|(_, value)| value.to_str()?.trim().parse::<usize>().ok())
        .unwrap_or(0);
    let mut out: Vec<(OsString, OsString)> =
        env.iter().filter(|(name, _)| !replaced(name)).cloned().collect();
    for (offset, (key, value)) in settings.iter().enumerate() {
        let index = first + offset;
        out.push((format!("GIT_CONFIG_KEY_{index}").into(), key.into()));
        out.push((format!("GIT_CONFIG_VALUE_{index}").into(), value.into()));
    }
    out.push((count_var.into(), (first + settings.len()).to_string().into()));
    out.extend(FIXED_ENV.iter().map(|(name, value)| (name.into(), value.into())));
    out
}

/// The submodule names in the `.gitmodules` of the repository git finds in `root` with
/// `options`.
async fn submodule_names(root: &Path, env: &[(OsString, OsString)], options: &[String]) -> Vec<String> {
    let top = match git_output(root, env, options, &["rev-parse", "--show-toplevel"]).await {
        Ok(Some(top)) => top.trim_end_matches('\n').to_string(),
        Ok(None) | Err(_) => return Vec::new(),
    };
    let file = Path::new(&top).join(".gitmodules");
    if !file.is_file() {
        return Vec::new();
    }
    let file = file.display().to_string();
    let Ok(Some(text)) = git_output(
        root,
        env,
        &[],
        &["config", "--file", &file, "--name-only", "--list", "-z"],
    )
    .await
    else {
        return Vec::new();
    };
    let mut names: Vec<String> = text
        .split('\0')
        .filter_map(|key| {
            let rest = key.strip_prefix("submodule.")?;
            Some(rest.rsplit_once('.')?.0.to_string())
        })
        .collect();
    names.sort();
    names.dedup();
    names
}

/// What `git options args` prints in `root` with `env` (the command's own, with the
/// fixed settings, so includes and scopes resolve as for the command); `None` when git
/// fails (not a repository, or git is not installed): git itself cannot run programs
/// from a configuration it cannot read.
async fn git_output(
    root: &Path,
    env: &[(OsString, OsString)],
    options: &[String],
    args: &[&str],
) -> Result<Option<String>, GuardError> {
    let mut command = tokio::process::Command::new("git");
    command
        .args(options)
        .args(args)
        .current_dir(root)
        .env_clear()
        .envs(with_settings(env, &fixed()))
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .kill_on_drop(true);
    let mut child = match command.spawn() {
        Ok(child) => child,
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(err) => return Err(GuardError::Start(err)),
    };
    let read = async {
        use tokio::io::AsyncReadExt;
        let mut stdout = Vec::new();
        if let Some(pipe) = child.stdout.take() {
            // One byte past the limit tells a larger output from one at the limit.
            pipe.take(MAX_CONFIG_BYTES as u64 + 1)
                .read_to_end(&mut stdout)
                .await
                .map_err(GuardError::Start)?;
        }
        if stdout.len() > MAX_CONFIG_BYTES {
            return Err(GuardError::TooLarge);
        }
        let status = child.wait().await.map_err(GuardError::Start)?;
        Ok(status
            .success()
            .then(|| String::from_utf8_lossy(&stdout).into_owned()))
    };
    // Dropping the child on a timeout or a too-large output kills it.
    tokio::time::timeout(READ_TIMEOUT, read)
        .await
        .map_err(|_| GuardError::Timeout)?
}

/// Settings from `-z` output: `scope NUL origin NUL key LF value NUL` each.
fn parse(text: &str) -> Vec<Setting> {
    let mut fields = text.split('\0');
    let mut settings = Vec::new();
    while let (Some(scope), Some(origin), Some(entry)) = (fields.next(), fields.next(), fields.next()) {
        let (key, value) = entry.split_once('\n').unwrap_or((entry, ""));
        settings.push(Setting {
            scope: scope.to_string(),
            origin: origin.to_string(),
            key: key.to_string(),
            value: value.to_string(),
        });
    }
    settings
}

/// Whether the person did not choose `setting`: it comes from the repository's own
/// configuration (`local`, `worktree`, and what they include), or from a file inside
/// the workspace (a home folder used as the workspace holds `~/.gitconfig`). The
/// person's own global and system files, and the command's `-c`, are theirs.
fn chosen_for_the_person(setting: &Setting, real_root: &Path, root: &Path) -> bool {
    match setting.scope.as_str() {
        "local" | "worktree" => true,
        "command" => false,
        _ => setting.origin.strip_prefix("file:").is_some_and(|file| {
            let path = Path::new(file);
            let real = path.canonicalize().unwrap_or_else(|_| path.to_path_buf());
            real.starts_with(real_root) || path.starts_with(root)
        }),
    }
}

/// Whether the setting `key` names a program git runs that [`FIXED`] does not turn off.
/// Section and variable names compare without case, as git compares them.
fn names_program(key: &str, value: &str, builtin_read: bool) -> bool {
    let lower = key.to_ascii_lowercase();
    let Some((section, rest)) = lower.split_once('.') else {
        return false;
    };
    let (subsection, name) = match rest.rsplit_once('.') {
        Some((subsection, name)) => (Some(subsection), name),
        None => (None, rest),
    };
    let named = subsection.is_some();
    match (section, name) {
        ("diff", "external") => !named,
        ("diff", "textconv" | "command") => named,
        ("filter", "clean" | "smudge" | "process") => named,
        ("merge", "driver") => named,
        ("alias", _) => !builtin_read,
        ("remote", "uploadpack" | "receivepack" | "vcs") => named,
        ("difftool" | "mergetool", "cmd") => named,
        ("trailer", "command" | "cmd") => named,
        ("submodule", "update") => value.trim_start().starts_with('!'),
        ("credential", "helper") => !value.is_empty(),
        ("core", "sshcommand" | "gitproxy" | "alternaterefscommand" | "askpass") => !named,
        ("gpg", "program" | "defaultkeycommand") => true,
        ("sendemail", name) => name == "smtpserver" || name.ends_with("cmd"),
        ("hook", _) => named,
        ("uploadpack", "packobjectshook") => true,
        ("man", "viewer") => !named,
        ("man", "cmd" | "path") => named,
        ("web" | "help", "browser") => !named,
        ("browser", "cmd" | "path") => named,
        _ => false,
    }
}

/// Whether the setting `key` names a program that [`FIXED`] or [`FIXED_ENV`] turns off
/// for a covered command: the fsmonitor hook (not its `true` or `false`), the hooks
/// folder, pagers and editors.
fn turned_off_when_covered(key: &str, value: &str) -> bool {
    let lower = key.to_ascii_lowercase();
    match lower.as_str() {
        "core.fsmonitor" => !matches!(value.trim().to_ascii_lowercase().as_str(), "" | "true" | "false"),
        "core.hookspath" | "core.pager" | "core.editor" | "sequence.editor" => true,
        _ => lower.starts_with("pager.") && !matches!(value.trim(), "" | "true" | "false"),
    }
}

/// `value` as one short line for the question.
fn shown(value: &str) -> String {
    let clean: String = value
        .chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect();
    match clean.char_indices().nth(SHOWN_VALUE_CHARS) {
        Some((cut, _)) => format!("{}…", &clean[..cut]),
        None => clean,
    }
}

#[cfg(test)]
mod tests;
