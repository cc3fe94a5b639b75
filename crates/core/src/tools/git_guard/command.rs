//! Reading a command for where git, run by it, reads its configuration ([`reach`]):
//! git's own options that choose the repository, and everything that takes git where
//! the check cannot follow (submodules, `cd`, `-c`, options that write or run, words the
//! shell works out).

use super::shown;

/// How far the check can follow where git, in a command, reads its configuration.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Reach {
    /// What `git OPTIONS config --list` reads in the workspace root, OPTIONS being git's
    /// own options from the command that choose the repository (`-C sub`,
    /// `--git-dir=x`, `--work-tree=y`, `--bare`), in their order.
    Checked(Vec<String>),
    /// Why git would read configuration the check does not read, or could undo what
    /// [`overrides`](super::overrides) turns off; for the question.
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

/// Where git, run by `command`, reads its configuration, as far as
/// [`hazards`](super::hazards) can read the same. git looks into submodules with
/// `--submodule=diff` (a `git diff` in each, with its external diff and textconv),
/// `--ignore-submodules=none` or `untracked` (a `git status` in each, with its filters)
/// and `--recurse-submodules`, each reading the submodule's own configuration;
/// `cd`, `env -C`, `GIT_DIR=…` and `xargs` take it where the check does not follow; `-c` and
/// `--config-env` can turn back on what [`overrides`](super::overrides) turns off, and
/// `--exec-path` replaces git's own programs. Options that write a file or run a program
/// ([`writes_or_runs`]) are not followed either, nor a word the shell works out, which
/// could be any of them ([`worked_out_word`]). The words are read with their quotes
/// removed, and in a longer command (a pipe, a chain) as any word of it, which can only
/// make a command ask that would not need to.
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
    if let Some(words) = crate::tools::command_rule::words(command) {
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
