//! What "approve for the session" remembers for a `bash` command.
//!
//! Approving a program by name (`cargo …`) is safe only when what the program does is in
//! the shape of its arguments: `cargo test -q` and `cargo build` differ in flags, not in
//! code handed to them. Interpreters (`python3 -c …`), shells, wrappers that run another
//! command (`env`, `xargs`, `timeout`), package runners (`npx`) and programs with an
//! option that executes or deletes (`git -c`, `find -exec`) take arbitrary code in their
//! arguments: for them, and for compound commands (pipes, chains, redirects,
//! substitutions) and programs named by a path, only the exact command line is
//! remembered. So it is for a package manager's subcommands that fetch code from outside
//! the project (`npm install x`, `cargo install x`, `pip install x`): approving
//! `npm test` does not approve them.
//!
//! A program approved by name still runs what the project's own files say: `cargo test`
//! runs the tests and build scripts, `git commit` runs the repository's hooks. That is
//! what approving the program means, and the README says so.

use crate::protocol::ApprovalRule;

/// Shells and programs that run another command given in their arguments.
const RUNS_A_COMMAND: &[&str] = &[
    "sh",
    "bash",
    "zsh",
    "dash",
    "ksh",
    "mksh",
    "ash",
    "fish",
    "csh",
    "tcsh",
    "busybox",
    "sudo",
    "su",
    "doas",
    "env",
    "xargs",
    "eval",
    "exec",
    "nohup",
    "timeout",
    "nice",
    "ionice",
    "time",
    "command",
    "builtin",
    "source",
    ".",
    "setsid",
    "stdbuf",
    "chroot",
    "flock",
    "watch",
    "parallel",
    "strace",
    "ltrace",
    "unbuffer",
    "script",
    "nsenter",
    "unshare",
    "firejail",
    "systemd-run",
    "ssh",
    "docker",
    "podman",
    "kubectl",
    "nix-shell",
    "tmux",
    "screen",
    "make",
    "gmake",
    "taskset",
    "chrt",
    "prlimit",
    "setpriv",
    "fakeroot",
    "valgrind",
    "perf",
    "xvfb-run",
    "dbus-run-session",
    "runuser",
    "sg",
    "pkexec",
    "ssh-agent",
    "toybox",
    "rsync",
    "scp",
    "tar",
    "zip",
    "trap",
    "uv",
    "poetry",
    "pipenv",
    "pdm",
    "hatch",
    "conda",
    "mamba",
    "bundle",
    "stack",
    "cabal",
    "opam",
    "rustup",
    "mvn",
    "gradle",
    "cmake",
    "less",
    "more",
    "view",
    "xdg-open",
];

/// Interpreters and tools whose arguments can carry a program (`-c`, `-e`, scripts on the
/// command line, shell escapes); versioned names (`python3.11`) count by their base.
const INTERPRETERS: &[&str] = &[
    "python",
    "pypy",
    "node",
    "nodejs",
    "deno",
    "bun",
    "ruby",
    "irb",
    "perl",
    "php",
    "lua",
    "luajit",
    "r",
    "rscript",
    "julia",
    "tclsh",
    "wish",
    "awk",
    "gawk",
    "mawk",
    "nawk",
    "sed",
    "java",
    "jshell",
    "groovy",
    "scala",
    "kotlin",
    "osascript",
    "pwsh",
    "powershell",
    "expect",
    "gdb",
    "lldb",
    "vim",
    "vi",
    "nvim",
    "emacs",
    "ed",
    "ex",
    "sqlite",
    "psql",
    "mysql",
    "npx",
    "pnpx",
    "bunx",
    "uvx",
    "pipx",
    "ts-node",
    "tsx",
    "ipython",
    "dc",
    "bc",
    "gnuplot",
    "m4",
];

/// `git` subcommands approved by name: they only read, and take no option that runs a
/// program. Every other one (`config`, which sets aliases and pagers; `difftool -x`,
/// `rebase -x`, `submodule foreach`, `clone -u`, …) is remembered as the exact line.
const GIT_READS: &[&str] = &[
    "status",
    "log",
    "diff",
    "show",
    "blame",
    "branch",
    "rev-parse",
    "ls-files",
    "describe",
    "shortlog",
    "reflog",
];

/// Options after which `find` runs a command, deletes or writes files.
const FIND_ACTIONS: &[&str] = &[
    "-exec", "-execdir", "-ok", "-okdir", "-delete", "-fprint", "-fprint0", "-fprintf", "-fls",
];

/// Package managers and toolchains whose subcommands in [`FETCHES_CODE`] bring code from
/// outside the project (and often run it: install scripts, build scripts).
const PACKAGE_MANAGERS: &[&str] = &[
    "npm",
    "yarn",
    "pnpm",
    "cargo",
    "pip",
    "pip3",
    "gem",
    "go",
    "apt",
    "apt-get",
    "dnf",
    "yum",
    "apk",
    "pacman",
    "zypper",
    "brew",
    "composer",
    "dotnet",
    "nuget",
    "conda",
    "mamba",
    "micromamba",
    "rustup",
    "opam",
    "cabal",
    "stack",
    "mix",
    "helm",
    "snap",
    "flatpak",
    "port",
    "vcpkg",
    "conan",
];

/// Subcommands that fetch code from outside the project: approving `npm test` must not
/// approve `npm install some-package`.
const FETCHES_CODE: &[&str] = &[
    "install",
    "i",
    "add",
    "ci",
    "get",
    "update",
    "up",
    "upgrade",
    "sync",
    "download",
    "require",
    "global",
    "link",
    "publish",
    "login",
    "adduser",
    "toolchain",
    "component",
    "target",
    "tap",
    "source",
    "remote",
    "repo",
];

/// Characters that make a command more than one simple command, or hide its program.
const OPERATORS: &[&str] = &[";", "&", "|", "<", ">", "`", "$(", "\n", "\r"];

/// Whether `command` is one simple command: no pipe, chain, redirect or substitution.
pub fn is_simple(command: &str) -> bool {
    !OPERATORS.iter().any(|op| command.contains(op))
}

/// What approving `command` for the session remembers.
pub fn session_rule(command: &str) -> ApprovalRule {
    match program_by_name(command) {
        Some(program) => ApprovalRule::Command {
            program: program.to_string(),
        },
        None => ApprovalRule::CommandLine {
            command: command.to_string(),
        },
    }
}

/// The program `command` runs, when approving it by name is safe (see the module header).
pub fn program_by_name(command: &str) -> Option<&str> {
    if OPERATORS.iter().any(|op| command.contains(op)) {
        return None;
    }
    let mut words = command.split_whitespace();
    let program = words.next()?;
    let plain = program
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.' | '+'));
    if !plain || program == "." {
        return None;
    }
    let lower = program.to_ascii_lowercase();
    let base = lower.trim_end_matches(|c: char| c.is_ascii_digit() || c == '.');
    if RUNS_A_COMMAND.contains(&lower.as_str())
        || INTERPRETERS.contains(&lower.as_str())
        || INTERPRETERS.contains(&base)
    {
        return None;
    }
    let args: Vec<&str> = words.collect();
    let executes = match lower.as_str() {
        // `git -c core.pager=…`, `--config-env`, `--exec-path` and aliases set on the
        // command line run whatever they name.
        "git" => {
            args.first().is_none_or(|sub| !GIT_READS.contains(sub))
                || args.iter().any(|arg| {
                    arg.starts_with("-c")
                        || arg.starts_with("--config-env")
                        || arg.starts_with("--exec-path")
                        || arg.starts_with("--open-files-in-pager")
                        || arg.starts_with("--ext-diff")
                        || arg.starts_with("--output")
                })
        }
        // `--config` can set a runner, linker or alias that runs anything.
        "cargo" => args
            .iter()
            .any(|arg| arg.starts_with("--config") || arg.starts_with("-Z")),
        "go" => args
            .iter()
            .any(|arg| arg.starts_with("-exec") || arg.starts_with("-toolexec")),
        "find" => args.iter().any(|arg| FIND_ACTIONS.contains(arg)),
        // `--pre COMMAND` runs a program on every file searched.
        "rg" => args.iter().any(|arg| arg.starts_with("--pre")),
        // Package managers' "run any package" subcommands.
        "npm" | "yarn" | "pnpm" => args.first().is_some_and(|sub| {
            matches!(
                *sub,
                "exec" | "x" | "dlx" | "create" | "init" | "explore" | "node" | "run-script"
            )
        }),
        _ => false,
    };
    let fetches = PACKAGE_MANAGERS.contains(&lower.as_str())
        && args
            .iter()
            .find(|arg| !arg.starts_with('-'))
            .is_some_and(|sub| FETCHES_CODE.contains(sub));
    (!executes && !fetches).then_some(program)
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn programs_whose_effect_is_in_their_arguments_are_remembered_by_name() {
        for (command, program) in [
            ("cargo test -q", "cargo"),
            ("ls -la src", "ls"),
            ("git status", "git"),
            ("git log --oneline -5", "git"),
            ("cargo build --release", "cargo"),
            ("find . -name '*.rs'", "find"),
            ("npm test", "npm"),
            ("npm run build", "npm"),
            ("cargo run --release", "cargo"),
            ("pip list", "pip"),
            ("go vet ./...", "go"),
            ("rg -n TODO", "rg"),
            ("c++ -O2 main.cc", "c++"),
        ] {
            assert_eq!(
                session_rule(command),
                ApprovalRule::Command {
                    program: program.into()
                },
                "{command}"
            );
        }
    }

    #[test]
    fn code_in_the_arguments_is_remembered_as_the_exact_line() {
        for command in [
            "python3 --version",
            "python3 -c \"import shutil; shutil.rmtree('precious')\"",
            "python3.11 -m http.server",
            "/usr/bin/python3 x.py",
            "./run.sh",
            "node -e 'require(\"fs\").rmSync(\"x\")'",
            "perl -e 'unlink glob \"*\"'",
            "awk 'BEGIN{system(\"rm -rf x\")}'",
            "sed -n 1p file",
            "bash -c 'rm -rf x'",
            "env rm -rf x",
            "xargs rm",
            "timeout 5 rm -rf x",
            "make clean",
            "npx cowsay hi",
            "npm exec -- rimraf .",
            "git -c core.pager='rm -rf x' log",
            "git --config-env=core.pager=EVIL log",
            "find . -exec rm {} +",
            "find . -delete",
            "rg --pre sh TODO",
            "git config alias.pwn '!rm -rf precious'",
            "git pwn",
            "git difftool -y -x 'rm -rf x' HEAD~1",
            "git rebase -x 'rm -rf x' HEAD~1",
            "git grep --open-files-in-pager=sh x",
            "git",
            "cargo --config 'target.x.runner=\"rm\"' run",
            "npm explore x -- rm -rf y",
            "go test -exec 'rm -rf x' ./...",
            "tar --to-command=sh -xf a.tar",
            "rsync -e 'sh -c x' a b",
            "valgrind rm -rf x",
            "FOO=1 cargo test",
            "cargo test; rm -rf ~",
            "ls | sh",
            "ls $(rm -rf x)",
            "\"cargo\" test",
            "npm install evil-pkg",
            "npm i evil-pkg",
            "npm --silent install evil-pkg",
            "yarn add evil-pkg",
            "pnpm add evil-pkg",
            "cargo install evil",
            "cargo add evil",
            "cargo update",
            "pip install evil",
            "pip3 install --user evil",
            "go install example.com/evil@latest",
            "go get example.com/evil",
            "gem install evil",
            "apt-get install -y evil",
            "brew install evil",
            "rustup toolchain install nightly",
        ] {
            assert_eq!(
                session_rule(command),
                ApprovalRule::CommandLine {
                    command: command.into()
                },
                "{command}"
            );
        }
    }
}
