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
        ("cp x .g''it/hooks/pre-commit", true),
        ("cp x .gi\\t/config", true),
        ("cp x \"\".git/config", true),
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

/// Options of a covered git command that make git write a file, run a program, or
/// read configuration from elsewhere, each spelled as the model could spell it, and the
/// shell's own spellings of a word, which could be any of them; and what stays checked.
#[test]
fn what_git_writes_or_runs_through_its_options_is_asked_about() {
    let unchecked = |why: &str| Reach::Unchecked(why.to_string());
    let writes = |word: &str| {
        unchecked(&format!(
            "with `{word}`, which makes git write its output to a file it names (a repository's own configuration, say)"
        ))
    };
    let worked_out = |word: &str| {
        unchecked(&format!(
            "with `{word}`, a word the shell works out, which could be any option (one that writes a file, say)"
        ))
    };
    let runs = |word: &str| {
        unchecked(&format!(
            "with `{word}`, which makes git run the program it names on the files it finds"
        ))
    };
    let set = |name: &str| {
        unchecked(&format!(
            "with `{name}` set, which tells git where its repository, configuration or programs are, or what to run or write"
        ))
    };
    let checked = Reach::Checked(Vec::new());
    for (command, expected) in [
        // Writes a file.
        (
            "git diff --name-only --output=.g''it/config",
            writes("--output=.git/config"),
        ),
        ("git diff --output=.gi\\t/config", writes("--output=.git/config")),
        ("git show --output .git/config", writes("--output")),
        ("git log --outp=x", writes("--outp=x")),
        ("git diff -- --output=x", writes("--output=x")),
        (
            "git format-patch -so .git HEAD~1",
            unchecked(
                "with `-so`, which makes git write its patches into the folder it names (a repository's own, say)",
            ),
        ),
        // Runs a program.
        ("git grep -O./evil.sh x", runs("-O./evil.sh")),
        ("git grep -iOsh x", runs("-iOsh")),
        ("git grep --op=sh x", runs("--op=sh")),
        (
            "git --no-pager grep --open-files-in-pager x",
            runs("--open-files-in-pager"),
        ),
        // A word the shell works out could be any of them.
        (
            r"git diff $'\x2d-output=.git/config'",
            worked_out(r"$'\x2d-output=.git/config'"),
        ),
        (
            "git diff ${x:---output=.git/config}",
            worked_out("${x:---output=.git/config}"),
        ),
        ("git diff --o$x", worked_out("--o$x")),
        ("git diff \"$f\"", worked_out("\"$f\"")),
        (
            "git diff --outpu[t]=.git/config",
            worked_out("--outpu[t]=.git/config"),
        ),
        ("git diff */*", worked_out("*/*")),
        ("git diff ''*", worked_out("''*")),
        ("git diff -- *.rs", worked_out("*.rs")),
        ("git log -i*", worked_out("-i*")),
        ("git log {-1,--outpu''t=x}", worked_out("{-1,--outpu''t=x}")),
        ("git log | grep `id`", worked_out("`id`")),
        ("$'git' diff --stat", worked_out("$'git'")),
        // Variables that tell git where to read, what to run or where to write.
        (
            "GIT_EXTERNAL_DIFF=./x git diff --ext-diff",
            set("GIT_EXTERNAL_DIFF"),
        ),
        ("GIT_TRACE=.git/config git status", set("GIT_TRACE")),
        ("GIT_INDEX_FILE=x git status", set("GIT_INDEX_FILE")),
        ("HOME=. git diff", set("HOME")),
        ("env XDG_CONFIG_HOME=. git diff", set("XDG_CONFIG_HOME")),
        // Read only, or what the shell leaves as it is.
        ("git diff -O.order --stat", checked.clone()),
        ("git log -O x", checked.clone()),
        ("git format-patch --stdout -1", checked.clone()),
        ("git show HEAD~1 HEAD^{tree} @{1}", checked.clone()),
        ("git log --grep='^fix$' --format='%H $x'", checked.clone()),
        ("git log --grep=fix*", checked.clone()),
        ("git diff -- 'src/*.rs' src/*.rs", checked.clone()),
        ("git log --format=%s$", checked.clone()),
        ("git diff --no-index a b", checked.clone()),
        ("git log -g --follow -- a", checked.clone()),
        ("git diff --ext-diff --textconv", checked.clone()),
    ] {
        assert_eq!(reach(command), expected, "{command}");
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
