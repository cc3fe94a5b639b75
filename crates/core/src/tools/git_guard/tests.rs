use super::*;
use pretty_assertions::assert_eq;

#[test]
fn git_is_found_as_a_word_or_a_path() {
    for (command, expected) in [
        ("git status", true),
        ("/usr/bin/git diff", true),
        ("g\\it status", true),
        ("'g'\"it\" status", true),
        ("cd x && git log", true),
        ("cargo test", false),
        ("gitk", false),
        ("cat .gitignore", false),
        ("ls my-git-tools", false),
    ] {
        assert_eq!(names_git(command), expected, "{command}");
    }
}

#[test]
fn a_repositorys_own_folder_is_found_in_commands_and_paths() {
    for (command, expected) in [
        ("cp x .git/config", true),
        ("ls .git", true),
        ("cat sub/.GIT/hooks/pre-commit", true),
        ("tee '.git/info/attributes'", true),
        ("git status", false),
        ("cat .gitignore .gitattributes", false),
        ("ls repo.git", false),
    ] {
        assert_eq!(names_git_folder(command), expected, "{command}");
    }
    let root = Path::new("/w");
    assert!(in_git_folder(Path::new("/w/.git/config"), root));
    assert!(in_git_folder(Path::new("/w/sub/.Git/hooks/x"), root));
    assert!(!in_git_folder(Path::new("/w/.gitignore"), root));
    assert!(!in_git_folder(Path::new("/w/src/main.rs"), root));
}

#[test]
fn where_git_reads_its_configuration_is_followed_or_asked_about() {
    let checked = |options: &[&str]| Reach::Checked(options.iter().map(|o| o.to_string()).collect());
    for (command, expected) in [
        ("git status", checked(&[])),
        ("git diff -C --stat", checked(&[])),
        ("git --no-pager -C 'my dir' log", checked(&["-C", "my dir"])),
        (
            "git --git-dir=x --work-tree y --bare status",
            checked(&["--git-dir=x", "--work-tree", "y", "--bare"]),
        ),
        ("git log --submodule=log -p", checked(&[])),
        ("git diff --submodule --ignore-submodules=dirty", checked(&[])),
        ("git fetch --no-recurse-submodules", checked(&[])),
        ("git log | head -5", checked(&[])),
        ("git diff --output-indicator-new=+ HEAD", checked(&[])),
        ("make -C sub", checked(&[])),
    ] {
        assert_eq!(reach(command), expected, "{command}");
    }
    for (command, starts) in [
        ("git log -p '--submodule=diff'", "with `--submodule=diff`"),
        ("git diff --help", "with `--help`"),
        ("git status --he", "with `--he`"),
        ("git help log", "with `help`"),
        ("git diff --sub=diff", "with `--sub=diff`"),
        (
            "git status --ignore-submodules=none",
            "with `--ignore-submodules=none`",
        ),
        ("git grep --recurse-submodules x", "with `--recurse-submodules`"),
        (
            "git ls-files --recurse-submodules=yes",
            "with `--recurse-submodules=yes`",
        ),
        (
            "git diff --name-only --output=.g''it/config",
            "with `--output=.git/config`, which makes git write",
        ),
        ("git log --output x.txt", "with `--output`, which makes git write"),
        ("git diff --out=a", "with `--out=a`, which makes git write"),
        (
            "git format-patch --output-directory=.git/hooks HEAD~1",
            "with `--output-directory=.git/hooks`",
        ),
        ("git -c core.pager=x log", "with `-c`"),
        ("git --config-env=core.pager=X log", "with `--config-env`"),
        ("git --exec-path=./bin diff", "with `--exec-path`"),
        (
            "git --super-prefix=x diff",
            "with `--super-prefix=x` before its subcommand",
        ),
        ("cd sub && git status", "after `cd`"),
        ("env -C sub git status", "in another folder (`-C`)"),
        ("env --chdir=sub git status", "in another folder (`--chdir=sub`)"),
        ("GIT_DIR=sub/.git git log", "with `GIT_DIR` set"),
        ("GIT_CONFIG_COUNT=0 git status", "with `GIT_CONFIG_COUNT` set"),
        ("ls | xargs git log", "through `xargs`"),
        (
            "git log -1; git -C sub log -1",
            "with `-C`, `--git-dir` or `--work-tree` in a longer command",
        ),
        (
            "git -C $HOME log",
            "with `-C`, `--git-dir` or `--work-tree` naming a folder the shell works out",
        ),
    ] {
        match reach(command) {
            Reach::Unchecked(why) => assert!(why.starts_with(starts), "{command}: {why}"),
            Reach::Checked(options) => panic!("{command}: checked with {options:?}"),
        }
    }
}

#[test]
fn a_folder_holding_head_objects_and_refs_is_a_repositorys_own() {
    let scratch = std::env::temp_dir().join(format!("miniagent-bare-{}", std::process::id()));
    let root = scratch.join("w");
    std::fs::create_dir_all(root.join("br/objects")).unwrap();
    std::fs::create_dir_all(root.join("wt")).unwrap();
    std::fs::write(root.join("br/HEAD"), "ref: refs/heads/main\n").unwrap();
    std::fs::write(root.join("wt/HEAD"), "0\n").unwrap();
    std::fs::write(root.join("wt/commondir"), "../br\n").unwrap();
    for (path, expected) in [
        // Completes `br/`, or writes inside what then is one.
        ("br/refs/heads/.keep", true),
        ("br/refs", true),
        ("br/REFS/x", true),
        ("wt/config", true),
        // `br/` is not one yet, and its parent never was.
        ("br/config", false),
        ("br/objects/x", false),
        ("HEAD", false),
        ("refs/x", false),
    ] {
        assert_eq!(in_git_directory(&root.join(path), &root), expected, "{path}");
    }
    // Above the workspace is not looked at.
    std::fs::create_dir_all(scratch.join("refs")).unwrap();
    std::fs::create_dir_all(scratch.join("objects")).unwrap();
    std::fs::write(scratch.join("HEAD"), "x").unwrap();
    assert!(!in_git_directory(&root.join("a.txt"), &root));
    std::fs::remove_dir_all(&scratch).unwrap();
}

#[test]
fn program_settings_are_told_from_the_rest() {
    for (key, value, expected) in [
        ("diff.external", "x", true),
        ("diff.evil.textconv", "x", true),
        ("diff.Evil.Command", "x", true),
        ("diff.renames", "true", false),
        ("filter.lfs.process", "git-lfs filter-process", true),
        ("merge.ours.driver", "true", true),
        ("alias.st", "!sh", true),
        ("remote.origin.uploadpack", "x", true),
        ("remote.origin.url", "x", false),
        ("submodule.s.update", "!sh x", true),
        ("submodule.s.update", "rebase", false),
        ("credential.helper", "store", true),
        ("credential.https://x.helper", "!x", true),
        ("credential.helper", "", false),
        ("core.sshCommand", "x", true),
        ("core.fsmonitor", "x", false),
        ("gpg.ssh.program", "x", true),
        ("sendemail.smtpServer", "/bin/x", true),
        ("user.name", "x", false),
        ("man.viewer", "evil", true),
        ("man.evil.cmd", "/tmp/x", true),
        ("man.evil.path", "/tmp/x", true),
        ("web.browser", "evil", true),
        ("browser.evil.cmd", "/tmp/x", true),
        ("help.format", "web", false),
    ] {
        assert_eq!(names_program(key, value, false), expected, "{key}");
    }
    // A builtin that only reads never runs an alias.
    assert!(!names_program("alias.status", "!sh", true));
    // What a covered command has turned off is named when the person is asked.
    for (key, value, expected) in [
        ("core.fsmonitor", "./x.sh", true),
        ("core.fsmonitor", "true", false),
        ("core.hooksPath", "hooks", true),
        ("core.editor", "vim", true),
        ("pager.log", "sh x", true),
        ("pager.log", "false", false),
        ("core.autocrlf", "true", false),
    ] {
        assert_eq!(turned_off_when_covered(key, value), expected, "{key}");
    }
}

#[test]
fn overrides_follow_the_settings_the_environment_already_has() {
    let env: Vec<(OsString, OsString)> = vec![
        ("GIT_CONFIG_COUNT".into(), "1".into()),
        ("GIT_CONFIG_KEY_0".into(), "user.name".into()),
        ("GIT_CONFIG_VALUE_0".into(), "me".into()),
        ("GIT_PAGER".into(), "less".into()),
    ];
    let out = with_settings(&env, &[("core.fsmonitor".into(), "false".into())]);
    let text: Vec<(String, String)> = out
        .iter()
        .map(|(k, v)| (k.to_string_lossy().into_owned(), v.to_string_lossy().into_owned()))
        .collect();
    let pair = |k: &str, v: &str| (k.to_string(), v.to_string());
    assert_eq!(
        text,
        vec![
            pair("GIT_CONFIG_KEY_0", "user.name"),
            pair("GIT_CONFIG_VALUE_0", "me"),
            pair("GIT_CONFIG_KEY_1", "core.fsmonitor"),
            pair("GIT_CONFIG_VALUE_1", "false"),
            pair("GIT_CONFIG_COUNT", "2"),
            pair("GIT_PAGER", "cat"),
            pair("GIT_EDITOR", "true"),
            pair("GIT_SEQUENCE_EDITOR", "true"),
        ]
    );
}

#[test]
fn listed_settings_are_read_with_scope_and_origin() {
    let text =
        "local\0file:.git/config\0diff.x.textconv\nsh -c 'a\nb'\0command\0command line:\0core.pager\ncat\0";
    assert_eq!(
        parse(text),
        vec![
            Setting {
                scope: "local".into(),
                origin: "file:.git/config".into(),
                key: "diff.x.textconv".into(),
                value: "sh -c 'a\nb'".into(),
            },
            Setting {
                scope: "command".into(),
                origin: "command line:".into(),
                key: "core.pager".into(),
                value: "cat".into(),
            },
        ]
    );
    assert_eq!(shown("sh -c 'a\nb'"), "sh -c 'a b'");
}
