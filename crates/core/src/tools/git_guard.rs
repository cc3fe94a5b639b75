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

/// How far the check can follow where git, in a command, reads its configuration.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Reach {
    /// What `git OPTIONS config --list` reads in the workspace root, OPTIONS being git's
    /// own options from the command that choose the repository (`-C sub`,
    /// `--git-dir=x`, `--work-tree=y`, `--bare`), in their order.
    Checked(Vec<String>),
    /// Why git would read configuration the check does not read, or could undo what
    /// [`overrides`] turns off; for the question.
    Unchecked(String),
}

/// git's own options that choose the repository, and so the configuration it reads.
const GIT_LOCATION: &[&str] = &["-C", "--git-dir", "--work-tree"];
/// git's own options that take a value and change neither the configuration it reads
/// nor the programs it runs.
const GIT_PLAIN_WITH_VALUE: &[&str] = &["--namespace", "--shallow-file", "--attr-source", "--list-cmds"];
/// git's own options without a value that change neither.
const GIT_PLAIN_FLAGS: &[&str] = &[
    "-p",
    "--paginate",
    "-P",
    "--no-pager",
    "--no-replace-objects",
    "--literal-pathspecs",
    "--no-literal-pathspecs",
    "--glob-pathspecs",
    "--noglob-pathspecs",
    "--icase-pathspecs",
    "--no-optional-locks",
    "--no-advice",
    "-v",
    "--version",
    "-h",
    "--help",
    "--html-path",
    "--man-path",
    "--info-path",
];
/// Environment variables besides git's own (`GIT_*`: its repository, configuration,
/// programs, external diff, index file, trace files) that change what git reads: the
/// folders its global configuration is read from.
const CONFIG_HOME_VARS: &[&str] = &["HOME", "XDG_CONFIG_HOME"];

/// Where git, run by `command`, reads its configuration, as far as [`hazards`] can read
/// the same. git looks into submodules with `--submodule=diff` (a `git diff` in each,
/// with its external diff and textconv), `--ignore-submodules=none` or `untracked` (a
/// `git status` in each, with its filters) and `--recurse-submodules`, each reading the
/// submodule's own configuration; `cd`, `env -C`, `GIT_DIR=…` and `xargs` take it where
/// the check does not follow; `-c` and `--config-env` can turn back on what
/// [`overrides`] turns off, and `--exec-path` replaces git's own programs. Options
/// that write a file or run a program ([`writes_or_runs`]) are not followed either, nor
/// a word the shell works out, which could be any of them ([`worked_out_word`]). The
/// words are read with their quotes removed, and in a longer command (a pipe, a chain)
/// as any word of it, which can only make a command ask that would not need to.
pub fn reach(command: &str) -> Reach {
    let rough = rough_words(command);
    let first_git = rough.iter().position(|word| is_git(word));
    let subcommand = first_git.and_then(|git| subcommand(rough.get(git + 1..).unwrap_or_default()));
    let worked_out = worked_out_word(command).map(|word| {
        Reach::Unchecked(format!(
            "with `{}`, a word the shell works out, which could be any option (one that writes a file, say)",
            shown(&word)
        ))
    });
    for (at, word) in rough.iter().enumerate() {
        let before_git = first_git.is_some_and(|git| at < git);
        if let Some(why) = moves_git(word, before_git) {
            return Reach::Unchecked(why);
        }
        if first_git.is_some_and(|git| at > git) && asks_for_help(word) {
            return Reach::Unchecked(format!(
                "with `{}`, which makes git run a manual viewer or web browser its configuration may name",
                shown(word)
            ));
        }
        if first_git.is_some_and(|git| at > git)
            && let Some(why) = writes_or_runs(word, subcommand)
        {
            return Reach::Unchecked(format!("with `{}`, {why}", shown(word)));
        }
        if looks_into_submodules(word) {
            return Reach::Unchecked(format!(
                "with `{}`, which makes git look into each submodule, reading that submodule's own configuration",
                shown(word)
            ));
        }
    }
    // One simple command running git once: its repository options are read with it.
    if let Some(words) = super::command_rule::words(command) {
        let mut gits = words.iter().enumerate().filter(|(_, (word, _))| is_git(word));
        if let (Some((at, _)), None) = (gits.next(), gits.next()) {
            let after = words.get(at + 1..).unwrap_or_default();
            let texts: Vec<String> = after.iter().map(|(word, _)| word.clone()).collect();
            return match git_options(&texts) {
                Err(why) => Reach::Unchecked(why),
                Ok(chosen) if after.iter().take(chosen.len()).any(|(_, expands)| *expands) => {
                    Reach::Unchecked(
                        "with `-C`, `--git-dir` or `--work-tree` naming a folder the shell works out".into(),
                    )
                }
                Ok(chosen) => worked_out.unwrap_or(Reach::Checked(chosen)),
            };
        }
    }
    for (at, _) in rough.iter().enumerate().filter(|(_, word)| is_git(word)) {
        match git_options(rough.get(at + 1..).unwrap_or_default()) {
            Err(why) => return Reach::Unchecked(why),
            Ok(chosen) if !chosen.is_empty() => {
                return Reach::Unchecked(
                    "with `-C`, `--git-dir` or `--work-tree` in a longer command, where the repository it reads cannot be told".into(),
                );
            }
            Ok(_) => {}
        }
    }
    worked_out.unwrap_or(Reach::Checked(Vec::new()))
}

/// The words of `command` with quotes and backslashes removed (which hide nothing from
/// the shell), split at blanks and at the shell's operators.
fn rough_words(command: &str) -> Vec<String> {
    command
        .chars()
        .filter(|c| !matches!(c, '\\' | '\'' | '"'))
        .collect::<String>()
        .split(|c: char| {
            c.is_whitespace() || matches!(c, ';' | '&' | '|' | '(' | ')' | '<' | '>' | '`' | '$' | '{' | '}')
        })
        .filter(|word| !word.is_empty())
        .map(str::to_string)
        .collect()
}

/// Whether `word` runs git: `git`, or a path ending in it.
fn is_git(word: &str) -> bool {
    word == "git" || word.ends_with("/git")
}

/// Why `word` takes git somewhere the check does not follow: a change of folder, a
/// variable naming git's repository or configuration, arguments from elsewhere.
fn moves_git(word: &str, before_git: bool) -> Option<String> {
    if matches!(word, "cd" | "pushd" | "popd" | "chdir") {
        return Some(format!("after `{word}`, in whatever repository it finds there"));
    }
    if before_git && (word == "-C" || word.starts_with("--chdir")) {
        return Some(format!(
            "in another folder (`{}`), in whatever repository it finds there",
            shown(word)
        ));
    }
    if word == "xargs" {
        return Some("through `xargs`, with arguments read from elsewhere".to_string());
    }
    let name = word.split_once('=')?.0;
    (name.starts_with("GIT_") || CONFIG_HOME_VARS.contains(&name)).then(|| {
        format!(
            "with `{}` set, which tells git where its repository, configuration or programs are, or what to run or write",
            shown(name)
        )
    })
}

/// Whether `word` asks git for a manual page: `git help …`, `--help` (or an
/// abbreviation of it). git then runs `man.viewer`, `man.<tool>.cmd`, or with
/// `help.format = web` a browser, as the configuration names.
fn asks_for_help(word: &str) -> bool {
    word == "help" || (word.len() >= "--he".len() && "--help".starts_with(word))
}

/// Why `word`, an argument of git's `subcommand`, makes git write a file or run a
/// program the command names, if it does. `--output` and `--output-directory` (or an
/// abbreviation of one, as git's option parser takes), with or without their value, and
/// `format-patch -o`: git writes where the command says, anywhere the command may
/// write (`git diff --output=.git/config` wrote a repository's configuration from its
/// file names, unasked under a skill's pre-approval). `grep -O` and
/// `--open-files-in-pager`: git runs the program named with the files it found. A short
/// option is looked for in a cluster too (`-iO./x`, `-so .git`).
fn writes_or_runs(word: &str, subcommand: Option<&str>) -> Option<&'static str> {
    let name = word.split_once('=').map_or(word, |(name, _)| name);
    let long = |option: &str, shortest: usize| name.len() >= shortest && option.starts_with(name);
    let short = |letter: char| !word.starts_with("--") && word.starts_with('-') && word.contains(letter);
    if long("--output-directory", "--ou".len()) {
        Some("which makes git write its output to a file it names (a repository's own configuration, say)")
    } else if subcommand == Some("format-patch") && short('o') {
        Some("which makes git write its patches into the folder it names (a repository's own, say)")
    } else if long("--open-files-in-pager", "--op".len()) || (subcommand == Some("grep") && short('O')) {
        Some("which makes git run the program it names on the files it finds")
    } else {
        None
    }
}

/// git's subcommand in `args` (the words after `git`): the first word that is neither
/// one of git's own options nor the value of one.
fn subcommand(args: &[String]) -> Option<&str> {
    let mut rest = args.iter();
    while let Some(arg) = rest.next() {
        if !arg.starts_with('-') {
            return Some(arg);
        }
        let takes_value = GIT_LOCATION.contains(&arg.as_str())
            || GIT_PLAIN_WITH_VALUE.contains(&arg.as_str())
            || matches!(arg.as_str(), "-c" | "--config-env");
        if takes_value {
            rest.next();
        }
    }
    None
}

/// The first word of `command` after the first `git` (or any word, when no word is
/// plainly `git`) that the shell works out into something that could be an option,
/// as written: one with a `$` outside single quotes (a variable, `${x:---output=f}`,
/// `$'\x2d…'`, a substitution, whose value the shell may also split into more words)
/// or a backquote; one whose glob or brace may turn into a file name beginning with
/// `-`, as it begins with `*`, `?`, `[` or `{` (`*/*` matches a folder named
/// `--output=.git`); and an option whose name holds one (`--outpu[t]=x`, `-i*`). A
/// word beginning with anything else keeps that beginning.
fn worked_out_word(command: &str) -> Option<String> {
    let words = spelled_words(command);
    let first_git = words.iter().position(|word| is_git(&word.text));
    words
        .into_iter()
        .skip(first_git.map_or(0, |git| git + 1))
        .find(|word| {
            let option_glob = if word.text.starts_with("--") {
                word.glob_before_value
            } else {
                word.glob && word.text.starts_with('-')
            };
            word.substituted || word.starts_glob || option_glob
        })
        .map(|word| word.raw)
}

/// One word of a command as written (`raw`) and as the shell leaves it before it
/// expands anything (`text`, quotes and backslashes removed), and what the shell would
/// expand in it.
#[derive(Debug, Default)]
struct Spelled {
    raw: String,
    text: String,
    /// A `$` (but one ending the word) or a backquote outside single quotes.
    substituted: bool,
    /// A `*`, `?`, `[` or `{` outside quotes.
    glob: bool,
    /// One of those before the word's first `=`.
    glob_before_value: bool,
    /// The first character the word gives is one of those.
    starts_glob: bool,
}

/// The words of `command` as [`Spelled`], split at blanks and at the shell's operators
/// outside quotes; a backslash-newline joins lines, as the shell does.
fn spelled_words(command: &str) -> Vec<Spelled> {
    let ends_word = |c: char| c.is_whitespace() || matches!(c, ';' | '&' | '|' | '(' | ')' | '<' | '>');
    let mut words = Vec::new();
    let mut word = Spelled::default();
    let mut chars = command.chars().peekable();
    while let Some(c) = chars.next() {
        if ends_word(c) {
            if !word.raw.is_empty() {
                words.push(std::mem::take(&mut word));
            }
            continue;
        }
        word.raw.push(c);
        match c {
            '\\' => match chars.next() {
                Some('\n') => {
                    word.raw.pop();
                }
                Some(next) => {
                    word.raw.push(next);
                    word.text.push(next);
                }
                None => {}
            },
            '\'' => {
                for inside in chars.by_ref() {
                    word.raw.push(inside);
                    if inside == '\'' {
                        break;
                    }
                    word.text.push(inside);
                }
            }
            '"' => double_quoted(&mut chars, &mut word),
            '$' | '`' => {
                word.substituted |= c == '`' || chars.peek().is_some_and(|next| !ends_word(*next));
                word.text.push(c);
            }
            '*' | '?' | '[' | '{' => {
                word.starts_glob |= word.text.is_empty();
                word.glob_before_value |= !word.text.contains('=');
                word.glob = true;
                word.text.push(c);
            }
            _ => word.text.push(c),
        }
    }
    if !word.raw.is_empty() {
        words.push(word);
    }
    words
}

/// The rest of a double-quoted string (its opening quote read) into `word`: a
/// backslash quotes only `$`, a backquote, `"`, itself and a newline there.
fn double_quoted(chars: &mut std::iter::Peekable<std::str::Chars<'_>>, word: &mut Spelled) {
    while let Some(inside) = chars.next() {
        word.raw.push(inside);
        match inside {
            '"' => return,
            '\\' => match chars.next() {
                Some('\n') => {
                    word.raw.pop();
                }
                Some(next) => {
                    word.raw.push(next);
                    if !matches!(next, '$' | '`' | '"' | '\\') {
                        word.text.push('\\');
                    }
                    word.text.push(next);
                }
                None => {}
            },
            '$' | '`' => {
                word.substituted = true;
                word.text.push(inside);
            }
            _ => word.text.push(inside),
        }
    }
}

/// Whether `word` is an option (or an abbreviation of one, as git's option parser
/// takes) that makes git look into submodules: `--submodule` with a value other than
/// `short` or `log` (both read the recorded commits in git's own process),
/// `--ignore-submodules` with one other than `all` or `dirty`, `--recurse-submodules`.
fn looks_into_submodules(word: &str) -> bool {
    let (name, value) = match word.split_once('=') {
        Some((name, value)) => (name, Some(value)),
        None => (word, None),
    };
    let names =
        |option: &str| name.len() >= "--sub".len() && name.starts_with("--") && option.starts_with(name);
    (names("--submodule") && !matches!(value, None | Some("short" | "log")))
        || (names("--ignore-submodules") && !matches!(value, None | Some("all" | "dirty")))
        || (names("--recurse-submodules") && value != Some("no"))
}

/// git's own options at the start of `args` (the words after `git`, up to its
/// subcommand): those that choose the repository, with their values; or why one makes
/// git read or set configuration the check cannot follow.
fn git_options(args: &[String]) -> Result<Vec<String>, String> {
    let mut chosen = Vec::new();
    let mut rest = args.iter();
    while let Some(arg) = rest.next() {
        if !arg.starts_with('-') {
            break;
        }
        let (name, has_value) = match arg.split_once('=') {
            Some((name, _)) => (name, true),
            None => (arg.as_str(), false),
        };
        if GIT_LOCATION.contains(&name) || arg == "--bare" {
            chosen.push(arg.clone());
            if !has_value && arg != "--bare" {
                chosen.extend(rest.next().cloned());
            }
        } else if GIT_PLAIN_WITH_VALUE.contains(&name) {
            if !has_value {
                rest.next();
            }
        } else if matches!(name, "-c" | "--config-env") {
            return Err(format!(
                "with `{name}`, which sets configuration on its command line and can turn back on what miniagent turns off"
            ));
        } else if name == "--exec-path" {
            return Err(
                "with `--exec-path`, which names the folder git runs its own programs from".to_string(),
            );
        } else if !GIT_PLAIN_FLAGS.contains(&arg.as_str()) {
            return Err(format!(
                "with `{}` before its subcommand, an option miniagent does not know",
                shown(arg)
            ));
        }
    }
    Ok(chosen)
}

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
