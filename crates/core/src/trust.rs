//! Trusting a workspace. A workspace's own `.miniagent/mcp.json` starts programs (outside
//! the sandbox), its `hooks.json` runs commands on the agent's events, its `config.toml`
//! sets permission rules, and its `skills/` and `commands/` change the agent's
//! instructions, so all of them are used only once the person said they trust them. What
//! is trusted is their content, not the folder's name: the answer is remembered in
//! `<config dir>/trusted-workspaces.json` as the canonical path with a SHA-256
//! fingerprint of those files (and of every file under `skills/` and `commands/`). Any
//! change to them (by the repository, a `git pull`, or the agent's own commands) means the
//! next start asks again.
//!
//! The MCP servers started are parsed from the very bytes that were fingerprinted, so a
//! file swapped between the check and the start is never used; so are hooks and settings
//! ([`WorkspaceExtras::hooks`], [`WorkspaceExtras::settings`]). Skills and commands are
//! read again when the session is built and when they are used; they steer the agent but
//! run nothing by themselves (their scripts run through `bash`, in the sandbox).

use std::io::Read;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use crate::tools::files::{Capped, human_size, read_at_most, write_atomic};
use crate::tools::mcp::{self, McpConfig, McpTransport};

/// The workspace's MCP file, relative to the workspace.
pub const WORKSPACE_MCP: &str = ".miniagent/mcp.json";
const TRUST_FILE: &str = "trusted-workspaces.json";
/// More than this under `.miniagent/skills/` is not fingerprinted (so not trusted): a
/// repository cannot make every start read gigabytes.
const MAX_FINGERPRINT_BYTES: u64 = 64 * 1024 * 1024;
const MAX_FINGERPRINT_FILES: usize = 10_000;
/// Folder levels followed under `skills/` (skill discovery goes 3 deep; resources deeper).
const MAX_FINGERPRINT_DEPTH: usize = 8;
/// The largest workspace `mcp.json` read (before trust, and for use): a server list is a
/// few KB; a repository's sparse gigabyte file must not be read whole.
const MAX_MCP_JSON_BYTES: u64 = 1024 * 1024;
/// The workspace's hooks (commands run on the agent's events), relative to the workspace.
pub const WORKSPACE_HOOKS: &str = ".miniagent/hooks.json";
/// The workspace's own settings (its permission rules), relative to the workspace.
pub const WORKSPACE_CONFIG: &str = ".miniagent/config.toml";
/// The workspace's custom slash commands (Markdown prompt files), relative to the workspace.
pub const WORKSPACE_COMMANDS_DIR: &str = ".miniagent/commands";

/// One remembered answer. Lists written before fingerprints existed hold bare paths:
/// those read as trusted with no fingerprint, which matches no content, so they ask again.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(untagged)]
enum TrustEntry {
    Content { path: PathBuf, fingerprint: String },
    PathOnly(PathBuf),
}

impl TrustEntry {
    fn path(&self) -> &Path {
        match self {
            TrustEntry::Content { path, .. } | TrustEntry::PathOnly(path) => path,
        }
    }
}

fn trusted(config_dir: &Path) -> Vec<TrustEntry> {
    std::fs::read_to_string(config_dir.join(TRUST_FILE))
        .ok()
        .and_then(|text| serde_json::from_str::<Vec<TrustEntry>>(&text).ok())
        .unwrap_or_default()
}

/// Whether the person trusted what `extras` holds, as it is now.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum TrustStatus {
    /// The workspace brings nothing that needs trust.
    NothingToTrust,
    /// Trusted with exactly this content.
    Trusted,
    /// Never trusted.
    Unknown,
    /// Trusted once, but `.miniagent/` changed since (or was trusted before miniagent
    /// checked content).
    Changed,
    /// It cannot be trusted at all (too large to fingerprint); the reason says why.
    Untrustable(String),
}

/// What `config_dir` remembers about `extras` of `workspace`.
pub fn status(config_dir: Option<&Path>, workspace: &Path, extras: &WorkspaceExtras) -> TrustStatus {
    if extras.is_empty() {
        return TrustStatus::NothingToTrust;
    }
    let fingerprint = match &extras.fingerprint {
        Ok(fingerprint) => fingerprint,
        Err(why) => return TrustStatus::Untrustable(why.clone()),
    };
    let entries = config_dir.map(trusted).unwrap_or_default();
    let mut known = false;
    for entry in entries.iter().filter(|entry| entry.path() == workspace) {
        known = true;
        if let TrustEntry::Content {
            fingerprint: kept, ..
        } = entry
            && kept == fingerprint
        {
            return TrustStatus::Trusted;
        }
    }
    if known {
        TrustStatus::Changed
    } else {
        TrustStatus::Unknown
    }
}

/// Why the trust list could not be written.
#[derive(Debug, thiserror::Error)]
#[error("cannot remember the trusted workspace: {0}")]
pub struct RememberError(String);

/// Remembers that the person trusts `workspace` with the content `extras` holds now.
pub fn remember(config_dir: &Path, workspace: &Path, extras: &WorkspaceExtras) -> Result<(), RememberError> {
    let fingerprint = extras.fingerprint.clone().map_err(RememberError)?;
    let mut list = trusted(config_dir);
    list.retain(|entry| entry.path() != workspace);
    list.push(TrustEntry::Content {
        path: workspace.to_path_buf(),
        fingerprint,
    });
    let text = serde_json::to_string_pretty(&list).map_err(|err| RememberError(err.to_string()))?;
    std::fs::create_dir_all(config_dir).map_err(|err| RememberError(err.to_string()))?;
    write_atomic(&config_dir.join(TRUST_FILE), text.as_bytes()).map_err(|err| RememberError(err.to_string()))
}

/// What a workspace brings of its own that needs trust.
#[derive(Clone, Debug, PartialEq)]
pub struct WorkspaceExtras {
    /// Its `.miniagent/mcp.json`, parsed from the bytes the fingerprint covers.
    pub mcp: Option<McpConfig>,
    /// Names of the skills in its `.miniagent/skills/`.
    pub skills: Vec<String>,
    /// Why its `mcp.json` cannot be used (unreadable, not JSON, not a server list): the
    /// rest still works, and the person is told.
    pub mcp_problem: Option<String>,
    /// Its `.miniagent/hooks.json`, the very bytes the fingerprint covers (parse these,
    /// never the file again: hooks run programs).
    pub hooks: Option<Vec<u8>>,
    /// Its `.miniagent/config.toml`, the very bytes the fingerprint covers.
    pub settings: Option<Vec<u8>>,
    /// Whether it has a `.miniagent/commands/` folder (every file in it is fingerprinted).
    pub commands: bool,
    /// Why a file of the above could not be read (too large, unreadable): it is left out.
    pub problems: Vec<String>,
    /// SHA-256 over `mcp.json`, the files its servers and hooks name, `hooks.json`, `config.toml`
    /// and every file under `skills/` and `commands/` (hex), or why there is none.
    fingerprint: Result<String, String>,
}

impl WorkspaceExtras {
    /// Reads what `workspace` has. A damaged `mcp.json` is not an error: the repository
    /// is not the person's to fix before they can work, so its servers are left out and
    /// [`Self::mcp_problem`] says why.
    pub fn load(workspace: &Path) -> Self {
        let skills = crate::tools::skills::SkillSet::discover_in(None, None, Some(workspace))
            .skills()
            .iter()
            .map(|skill| skill.name.clone())
            .collect();
        let mcp_path = workspace.join(WORKSPACE_MCP);
        let mut mcp_problem = None;
        let mcp_bytes = match read_at_most(&mcp_path, MAX_MCP_JSON_BYTES) {
            Ok(Capped::Whole(bytes)) => Some(bytes),
            Ok(Capped::TooLarge(size)) => {
                mcp_problem = Some(format!(
                    "{}: it is {}, more than the {} miniagent reads of it",
                    mcp_path.display(),
                    human_size(size),
                    human_size(MAX_MCP_JSON_BYTES)
                ));
                None
            }
            Err(err) if err.kind() == std::io::ErrorKind::NotFound => None,
            Err(err) => {
                mcp_problem = Some(format!("{}: cannot read: {err}", mcp_path.display()));
                None
            }
        };
        let parsed = mcp_bytes.as_ref().map(|bytes| {
            std::str::from_utf8(bytes)
                .map_err(|_| format!("{}: not UTF-8 text", mcp_path.display()))
                .and_then(|text| mcp::config_from_text(text, &mcp_path).map_err(|err| err.to_string()))
                // Trusted with the workspace, they start in it unless they name a `cwd`.
                .map(|config| config.for_workspace(workspace, workspace))
        });
        let mcp = match parsed {
            Some(Ok(config)) => Some(config),
            Some(Err(why)) => {
                mcp_problem = Some(why);
                None
            }
            None => None,
        };
        let mut programs = mcp
            .as_ref()
            .map(|mcp| program_files(workspace, mcp))
            .unwrap_or_default();
        let mut problems = Vec::new();
        let hooks = read_own_file(workspace, WORKSPACE_HOOKS, &mut problems);
        for file in hooks
            .as_deref()
            .map(|bytes| hook_files(workspace, bytes))
            .unwrap_or_default()
        {
            if !programs.contains(&file) {
                programs.push(file);
            }
        }
        let settings = read_own_file(workspace, WORKSPACE_CONFIG, &mut problems);
        let commands = workspace.join(WORKSPACE_COMMANDS_DIR).is_dir();
        let own = OwnFiles {
            mcp: mcp_bytes.as_deref(),
            hooks: hooks.as_deref(),
            settings: settings.as_deref(),
        };
        let fingerprint = fingerprint(workspace, &own, &programs);
        Self {
            hooks,
            settings,
            commands,
            problems,
            mcp,
            skills,
            mcp_problem: mcp_problem.map(|why| {
                format!(
                    "this workspace's MCP servers are not used: {}",
                    miniagent_text::clean(&why)
                )
            }),
            fingerprint,
        }
    }

    pub fn is_empty(&self) -> bool {
        self.mcp.is_none()
            && self.skills.is_empty()
            && self.hooks.is_none()
            && self.settings.is_none()
            && !self.commands
    }

    /// One line per server it would start and per skill it would add, for the prompt.
    pub fn describe(&self) -> Vec<String> {
        let mut lines = self.mcp.as_ref().map(describe).unwrap_or_default();
        lines.extend(
            self.skills
                .iter()
                .map(|name| format!("skill `{name}`: instructions the agent may follow")),
        );
        if let Some(bytes) = &self.hooks {
            lines.push(format!("{WORKSPACE_HOOKS}: commands run on the agent's events"));
            // Each command as the person can read it: trusting them runs them.
            let commands = hook_commands(bytes);
            lines.extend(commands.iter().take(MAX_HOOK_LINES).map(|(event, command)| {
                format!("  hook {}: runs {}", visible_word(event), visible_word(command))
            }));
            if commands.len() > MAX_HOOK_LINES {
                lines.push(format!("  and {} more hooks", commands.len() - MAX_HOOK_LINES));
            }
        }
        if let Some(settings) = &self.settings {
            lines.extend(permission_lines(settings));
        }
        if self.commands {
            lines.push(format!("{WORKSPACE_COMMANDS_DIR}/: slash commands (prompts)"));
        }
        lines
    }
}

/// Words of one server's command line looked at for file names: a hostile `mcp.json`
/// with a megabyte of short words costs this many `stat`s at most, not one per word.
const MAX_NAMED_WORDS: usize = 1024;
/// A file a sandboxed command cannot write, larger than this, is fingerprinted by its
/// identity rather than its content (see [`coverage`]).
const MAX_READ_OUTSIDE: u64 = 1024 * 1024;
/// Folders of the system's own programs, owned by root and written by the package
/// manager. A sandboxed command cannot write there (it writes only under the workspace,
/// the temp folder and `/dev/shm`), and an upgrade of `node` asking the person to trust
/// every repository again would teach them to say yes; so files here are left out
/// (unless they are under one of those writable folders).
const SYSTEM_PREFIXES: &[&str] = &[
    "/usr",
    "/bin",
    "/sbin",
    "/lib",
    "/lib32",
    "/lib64",
    "/libx32",
    "/etc",
    "/opt",
    "/nix/store",
    "/snap",
];

/// Every file a stdio server's command line names, wherever it is, as its real path: the
/// program (found on the `PATH` the server gets, as its start does), and each word of its
/// arguments and variables that names a file, seen from its folder (`cwd`, else the
/// folder miniagent runs in, and the workspace). Words are also split where a shell would
/// split them (`sh -c "cd x && sh srv.sh"`, `NODE_OPTIONS=--require ./hook.js`) and after
/// an `=` (`--config=srv.toml`). What those files load in turn is not followed.
fn program_files(workspace: &Path, mcp: &McpConfig) -> Vec<PathBuf> {
    let mut files = Vec::new();
    let mut add = |path: PathBuf| add_real_file(&mut files, &path);
    for server in &mcp.servers {
        let McpTransport::Stdio {
            command,
            args,
            env,
            cwd,
        } = &server.transport
        else {
            continue;
        };
        let mut bases = Vec::new();
        match cwd {
            Some(cwd) => bases.push(cwd.clone()),
            None => {
                bases.extend(std::env::current_dir().ok());
                bases.push(workspace.to_path_buf());
            }
        }
        bases.dedup();
        if !command.contains('/') {
            let path = env
                .get("PATH")
                .map(std::ffi::OsString::from)
                .or_else(|| std::env::var_os("PATH"))
                .unwrap_or_default();
            let found = std::env::split_paths(&path)
                .filter(|dir| !dir.as_os_str().is_empty())
                .map(|dir| {
                    bases
                        .first()
                        .map(|base| base.join(&dir))
                        .unwrap_or(dir)
                        .join(command)
                })
                .find(|candidate| is_executable(candidate));
            add(found.unwrap_or_default());
        }
        let words = std::iter::once(command.as_str())
            .chain(args.iter().map(String::as_str))
            .chain(env.values().map(String::as_str))
            .flat_map(named_words)
            .take(MAX_NAMED_WORDS);
        for word in words {
            for base in &bases {
                add(base.join(word));
            }
        }
    }
    files
}

/// Hook commands listed one by one in the trust question (the rest are counted).
const MAX_HOOK_LINES: usize = 64;

/// Each hook command of a `hooks.json` with its event, in the file's order.
fn hook_commands(hooks: &[u8]) -> Vec<(String, String)> {
    let Ok(json) = serde_json::from_slice::<serde_json::Value>(hooks) else {
        return Vec::new();
    };
    let mut commands = Vec::new();
    let events = json.get("hooks").and_then(serde_json::Value::as_object);
    for (event, groups) in events.into_iter().flatten() {
        let hooks = groups
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|group| group.get("hooks").and_then(serde_json::Value::as_array))
            .flatten()
            .filter_map(|hook| hook.get("command").and_then(serde_json::Value::as_str));
        commands.extend(hooks.map(|command| (event.clone(), command.to_string())));
    }
    // By event, each event's in the file's order: a JSON object's key order is not one.
    commands.sort_by(|a, b| a.0.cmp(&b.0));
    commands
}

/// Every file a workspace hook's command line names, as its real path, found as
/// [`program_files`] finds a server's: the first word on the `PATH`, and each word (and
/// piece of one) as a path from the workspace, where hooks run. So `./check.sh` or
/// `python3 .miniagent/guard.py` is trusted with its content, and a change to it asks
/// again, as `hooks.json` itself does. What those files load in turn is not followed.
fn hook_files(workspace: &Path, hooks: &[u8]) -> Vec<PathBuf> {
    let commands = hook_commands(hooks);
    let mut files = Vec::new();
    let mut add = |path: PathBuf| add_real_file(&mut files, &path);
    let path = std::env::var_os("PATH").unwrap_or_default();
    let mut words = 0;
    for (_, command) in &commands {
        let first = command.split_whitespace().next().unwrap_or_default();
        if !first.is_empty() && !first.contains('/') {
            let found = std::env::split_paths(&path)
                .filter(|dir| dir.is_absolute())
                .map(|dir| dir.join(first))
                .find(|candidate| is_executable(candidate));
            add(found.unwrap_or_default());
        }
        for word in named_words(command) {
            if words == MAX_NAMED_WORDS {
                return files;
            }
            words += 1;
            add(workspace.join(word));
        }
    }
    files
}

/// Adds `path`'s real path to `files` when it is a file not there yet.
fn add_real_file(files: &mut Vec<PathBuf>, path: &Path) {
    if let Ok(real) = path.canonicalize()
        && real.is_file()
        && !files.contains(&real)
    {
        files.push(real);
    }
}

/// `word`, its part after the first `=`, and its pieces between shell separators.
fn named_words(word: &str) -> impl Iterator<Item = &str> {
    let after_equals = word.split_once('=').map(|(_, value)| value);
    let pieces = word.split(|c: char| c.is_whitespace() || ";|&<>()'\"`=".contains(c));
    std::iter::once(word)
        .chain(after_equals)
        .chain(pieces)
        .filter(|word| !word.is_empty())
}

fn is_executable(path: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(path).is_ok_and(|meta| meta.is_file() && meta.permissions().mode() & 0o111 != 0)
}

/// How a file a server's command line names is covered by the fingerprint.
#[derive(Debug, PartialEq, Eq)]
enum Coverage {
    /// Its whole content, counted against the budget.
    Content,
    /// Its device, inode, size, and modification and change times: any write to it
    /// changes the change time, which no process without `CAP_SYS_TIME` can set back.
    /// For large files a sandboxed command cannot write (`~/.nvm/…/node`, 90 MB): read
    /// on every start, they would cost more than they protect.
    Identity,
    /// Not covered: see [`SYSTEM_PREFIXES`].
    LeftOut,
}

/// How `path` (real, `len` bytes) is covered, given the folders a sandboxed command may
/// write under (real paths).
fn coverage(path: &Path, len: u64, writable: &[PathBuf]) -> Coverage {
    if writable.iter().any(|root| path.starts_with(root)) {
        Coverage::Content
    } else if SYSTEM_PREFIXES.iter().any(|prefix| path.starts_with(prefix)) {
        Coverage::LeftOut
    } else if len > MAX_READ_OUTSIDE {
        Coverage::Identity
    } else {
        Coverage::Content
    }
}

/// Where a sandboxed command may write (see `tools::sandbox`), as given and as real paths.
fn sandbox_writable(workspace: &Path) -> Vec<PathBuf> {
    let mut roots = Vec::new();
    for root in [
        workspace.to_path_buf(),
        std::env::temp_dir(),
        PathBuf::from("/dev/shm"),
    ] {
        roots.extend(root.canonicalize().ok());
        roots.push(root);
    }
    roots
}

/// The fingerprint of what trust would unlock: `mcp_bytes` (as read for use), the
/// files its servers' and its hooks' command lines name (each as [`coverage`] says), and
/// every file under `.miniagent/skills/`, each with its path, in a fixed order.
fn fingerprint(workspace: &Path, own: &OwnFiles<'_>, programs: &[PathBuf]) -> Result<String, String> {
    use std::os::unix::ffi::OsStrExt;
    use std::os::unix::fs::MetadataExt;
    let mut hasher = Sha256::new();
    hasher.update(b"miniagent-trust-v1\0");
    if let Some(bytes) = own.mcp {
        hash_entry(&mut hasher, b"mcp.json", bytes);
    }
    // Present only when the files are, so what was trusted before they existed still is.
    if let Some(bytes) = own.hooks {
        hash_entry(&mut hasher, b"hooks.json", bytes);
    }
    if let Some(bytes) = own.settings {
        hash_entry(&mut hasher, b"config.toml", bytes);
    }
    let mut budget = Budget {
        bytes: MAX_FINGERPRINT_BYTES,
        files: MAX_FINGERPRINT_FILES,
    };
    let writable = sandbox_writable(workspace);
    for program in programs {
        let meta =
            std::fs::metadata(program).map_err(|err| format!("cannot read {}: {err}", program.display()))?;
        let name = program.as_os_str().as_bytes();
        match coverage(program, meta.len(), &writable) {
            Coverage::Content => {
                if meta.len() > budget.bytes {
                    return Err(format!(
                        "{} (named by a server's or a hook's command line) is larger than the {} MiB checked on every start",
                        program.display(),
                        MAX_FINGERPRINT_BYTES / (1024 * 1024)
                    ));
                }
                let content = read_counted(program, &mut budget)?;
                hash_entry(&mut hasher, name, &content);
            }
            Coverage::Identity => {
                let identity = [
                    meta.dev(),
                    meta.ino(),
                    meta.len(),
                    meta.mtime() as u64,
                    meta.mtime_nsec() as u64,
                    meta.ctime() as u64,
                    meta.ctime_nsec() as u64,
                ];
                let bytes: Vec<u8> = identity.iter().flat_map(|value| value.to_le_bytes()).collect();
                hash_entry(&mut hasher, name, &bytes);
            }
            Coverage::LeftOut => {}
        }
    }
    let skills = workspace.join(crate::tools::skills::WORKSPACE_SKILLS_DIR);
    let mut visited = Vec::new();
    hash_tree(
        &mut hasher,
        &skills,
        Path::new("skills"),
        0,
        &mut budget,
        &mut visited,
    )?;
    hash_tree(
        &mut hasher,
        &workspace.join(WORKSPACE_COMMANDS_DIR),
        Path::new("commands"),
        0,
        &mut budget,
        &mut visited,
    )?;
    Ok(hasher
        .finalize()
        .iter()
        .map(|byte| format!("{byte:02x}"))
        .collect())
}

struct Budget {
    bytes: u64,
    files: usize,
}

fn hash_entry(hasher: &mut Sha256, name: &[u8], content: &[u8]) {
    hasher.update((name.len() as u64).to_le_bytes());
    hasher.update(name);
    hasher.update((content.len() as u64).to_le_bytes());
    hasher.update(content);
}

/// Hashes every file under `dir` (named `shown` in the hash), following symlinks as skill
/// discovery does, each real folder once.
fn hash_tree(
    hasher: &mut Sha256,
    dir: &Path,
    shown: &Path,
    depth: usize,
    budget: &mut Budget,
    visited: &mut Vec<PathBuf>,
) -> Result<(), String> {
    use std::os::unix::ffi::OsStrExt;
    let Ok(real) = dir.canonicalize() else {
        return Ok(());
    };
    if !real.is_dir() || visited.contains(&real) || depth > MAX_FINGERPRINT_DEPTH {
        return Ok(());
    }
    visited.push(real);
    let mut entries: Vec<_> = std::fs::read_dir(dir)
        .map_err(|err| format!("cannot read {}: {err}", dir.display()))?
        .filter_map(Result::ok)
        .map(|entry| entry.file_name())
        .collect();
    entries.sort();
    for name in entries {
        let path = dir.join(&name);
        let shown = shown.join(&name);
        let Ok(meta) = std::fs::metadata(&path) else {
            // A dangling link: its name is part of what was trusted.
            hash_entry(hasher, shown.as_os_str().as_bytes(), b"\0dangling");
            continue;
        };
        if meta.is_dir() {
            hash_tree(hasher, &path, &shown, depth + 1, budget, visited)?;
            continue;
        }
        if !meta.is_file() {
            continue;
        }
        let content = read_counted(&path, budget)?;
        hash_entry(hasher, shown.as_os_str().as_bytes(), &content);
    }
    Ok(())
}

/// The whole of `path`, counted against `budget`.
fn read_counted(path: &Path, budget: &mut Budget) -> Result<Vec<u8>, String> {
    let len = std::fs::metadata(path)
        .map_err(|err| format!("cannot read {}: {err}", path.display()))?
        .len();
    budget.files = budget.files.checked_sub(1).ok_or_else(too_large)?;
    budget.bytes = budget.bytes.checked_sub(len).ok_or_else(too_large)?;
    let mut content = Vec::new();
    std::fs::File::open(path)
        .and_then(|file| file.take(len + 1).read_to_end(&mut content))
        .map_err(|err| format!("cannot read {}: {err}", path.display()))?;
    if content.len() as u64 > len {
        return Err(format!("{} changed while it was read", path.display()));
    }
    Ok(content)
}

fn too_large() -> String {
    format!(
        ".miniagent/skills and commands hold more than {MAX_FINGERPRINT_FILES} files or {} MiB, too much to check on every start",
        MAX_FINGERPRINT_BYTES / (1024 * 1024)
    )
}

/// What trusting would start, one line per server, for the prompt: the command line as a
/// shell would read it (each word quoted when it needs to be, so `sh -c "a; b"` cannot
/// pass for two commands), the variables it sets and the folder it runs in. Nothing can
/// hide in a word: control and invisible characters are written as escapes and long
/// runs of spaces as a count.
pub fn describe(config: &McpConfig) -> Vec<String> {
    config
        .servers
        .iter()
        .map(|server| {
            let name = visible_word(&server.name);
            match &server.transport {
                McpTransport::Stdio {
                    command,
                    args,
                    env,
                    cwd,
                } => {
                    let mut line = String::new();
                    for (key, value) in env {
                        line.push_str(&format!("{}={} ", visible_word(key), visible_word(value)));
                    }
                    let words: Vec<String> = std::iter::once(command)
                        .chain(args)
                        .map(|w| visible_word(w))
                        .collect();
                    line.push_str(&words.join(" "));
                    // The workspace is where its servers start unless they say.
                    let place = cwd
                        .as_ref()
                        .filter(|cwd| config.workspace.as_ref() != Some(*cwd))
                        .map(|cwd| format!(" (in {})", visible_word(&cwd.to_string_lossy())))
                        .unwrap_or_default();
                    format!("{name}: runs {line}{place}")
                }
                McpTransport::Http { url, .. } => format!("{name}: connects to {}", visible_word(url)),
            }
        })
        .collect()
}

/// `word` as a person can read it unambiguously: bare when it is plain, else in single
/// quotes; control, invisible and bidi characters as `\u{…}` escapes (`\n`, `\t` for the
/// common two), and a run of more than three spaces as `<N spaces>`.
fn visible_word(word: &str) -> String {
    let plain = |c: char| c.is_alphanumeric() || "_@%+=:,./-~".contains(c);
    if !word.is_empty() && word.chars().all(plain) && word.chars().all(miniagent_text::shown) {
        return word.to_string();
    }
    let mut out = String::from("'");
    let mut chars = word.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            ' ' => {
                let mut run = 1;
                while chars.next_if_eq(&' ').is_some() {
                    run += 1;
                }
                if run > 3 {
                    out.push_str(&format!("<{run} spaces>"));
                } else {
                    out.extend(std::iter::repeat_n(' ', run));
                }
            }
            '\'' => out.push_str("'\\''"),
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            c if !miniagent_text::shown(c) || is_invisible(c) => {
                out.push_str(&format!("\\u{{{:x}}}", u32::from(c)));
            }
            c => out.push(c),
        }
    }
    out.push('\'');
    out
}

/// Characters that take no room on screen, so could hide text between visible words.
fn is_invisible(c: char) -> bool {
    matches!(c, '\u{200b}'..='\u{200f}' | '\u{2060}'..='\u{2064}' | '\u{feff}' | '\u{ad}' | '\u{3164}' | '\u{115f}' | '\u{1160}')
}

/// The user's servers with the workspace's added; a workspace server never replaces one
/// of the user's with the same name.
pub fn merge(user: Option<McpConfig>, workspace: McpConfig) -> McpConfig {
    let mut merged = user.unwrap_or_default();
    merged.workspace = merged.workspace.or(workspace.workspace);
    merged.filled_env.extend(workspace.filled_env);
    for server in workspace.servers {
        if !merged.servers.iter().any(|existing| existing.name == server.name) {
            merged.servers.push(server);
        }
    }
    merged.servers.sort_by(|a, b| a.name.cmp(&b.name));
    merged
}

mod own;
use own::{OwnFiles, permission_lines, read_own_file};

#[cfg(test)]
mod tests;
