use super::*;
use pretty_assertions::assert_eq;

struct Scratch(PathBuf);

impl Scratch {
    fn new(name: &str) -> Self {
        let dir = std::env::temp_dir().join(format!("miniagent-commands-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        Self(dir)
    }

    fn write(&self, path: &str, text: &str) -> PathBuf {
        let path = self.0.join(path);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, text).unwrap();
        path
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn named(commands: &PromptCommands) -> Vec<(String, String, Option<String>, CommandSource)> {
    commands
        .commands()
        .iter()
        .map(|c| {
            (
                c.name.clone(),
                c.description.clone(),
                c.argument_hint.clone(),
                c.source,
            )
        })
        .collect()
}

/// Sub-folders are namespaces; front matter gives the description and hint, else the
/// first line does; a built-in wins over both, the person's over the workspace's, and
/// the one left out is named.
#[test]
fn commands_are_found_named_and_ranked() {
    let scratch = Scratch::new("found");
    scratch.write(
        "user/git/commit.md",
        "---\ndescription: Commit the staged work\nargument-hint: \"[message]\"\n---\nCommit with message $1.\n",
    );
    scratch.write(
        "user/review.md",
        "# Review the diff\nReview $ARGUMENTS carefully.\n",
    );
    let init = scratch.write("user/init.md", "My own init\n");
    let theirs = scratch.write("work/review.md", "Their review: approve everything.\n");
    scratch.write(
        "work/deploy.md",
        "---\ndescription: \"Deploy \\e[31mnow\\e[0m\"\n---\nDeploy.\n",
    );
    scratch.write("work/bad name.md", "x");
    scratch.write("work/notes.txt", "not a command");
    scratch.write("work/empty.md", "---\ndescription: nothing\n---\n\n");
    let commands = PromptCommands::discover(Some(&scratch.0.join("user")), Some(&scratch.0.join("work")));
    assert_eq!(
        named(&commands),
        vec![
            (
                "deploy".into(),
                "Deploy now".into(),
                None,
                CommandSource::Workspace
            ),
            (
                "git:commit".into(),
                "Commit the staged work".into(),
                Some("[message]".into()),
                CommandSource::User
            ),
            (
                "init".into(),
                "Ask the model to write a starting AGENTS.md for this workspace".into(),
                Some("[what to stress]".into()),
                CommandSource::BuiltIn
            ),
            (
                "review".into(),
                "Review the diff".into(),
                None,
                CommandSource::User
            ),
        ]
    );
    assert_eq!(
        commands.warnings(),
        vec![
            format!(
                "{}: not offered: the built-in command /init has its name",
                init.display()
            ),
            format!(
                "{}: not offered: a command's name takes letters, digits, - and _ (at most 64)",
                scratch.0.join("work/bad name.md").display()
            ),
            format!(
                "{}: not offered as a command: it holds no prompt",
                scratch.0.join("work/empty.md").display()
            ),
            format!(
                "{}: not offered: the user command /review has its name",
                theirs.display()
            ),
        ]
    );
    assert_eq!(
        commands.expand("git:commit", "\"fix the \\\"parser\\\"\" ignored"),
        Some("Commit with message fix the \"parser\".".to_string())
    );
    assert_eq!(commands.expand("nope", ""), None);
}

/// `$ARGUMENTS` takes the whole text, `$N` the Nth word (quotes honoured, missing ones
/// empty), in one pass; arguments to a template that takes none follow it.
#[test]
fn arguments_are_substituted_once() {
    assert_eq!(
        expand("A=$ARGUMENTS 1=$1 2=$2 3=$3 cost $ 0=$0", " one 'two words'  "),
        "A=one 'two words' 1=one 2=two words 3= cost $ 0=$0"
    );
    assert_eq!(expand("Say $1.", "'$2' x"), "Say $2.");
    assert_eq!(
        expand("No arguments here.", "extra words"),
        "No arguments here.\n\nARGUMENTS: extra words"
    );
    assert_eq!(expand("No arguments here.", "  "), "No arguments here.");
    assert_eq!(
        split_words(r#"a\ b "c \"d\" \n" 'e\' "unclosed"#),
        vec!["a b", "c \"d\" \\n", "e\\", "unclosed"]
    );
}

/// Folders nest three deep at most, a link is not followed, and a file past the size
/// limit is left out with its reason.
#[test]
fn limits_hold() {
    let scratch = Scratch::new("limits");
    scratch.write("user/a/b/c/ok.md", "deep enough");
    scratch.write("user/a/b/c/d/no.md", "too deep");
    scratch.write(
        "user/big.md",
        &"x".repeat(usize::try_from(MAX_FILE_BYTES).unwrap() + 1),
    );
    let outside = scratch.write("secret.md", "a secret");
    std::os::unix::fs::symlink(&outside, scratch.0.join("user/linked.md")).unwrap();
    let commands = PromptCommands::discover(Some(&scratch.0.join("user")), None);
    let names: Vec<&str> = commands.commands().iter().map(|c| c.name.as_str()).collect();
    assert_eq!(names, vec!["a:b:c:ok", "init"]);
    assert_eq!(
        commands.warnings(),
        vec![
            format!(
                "{}: not read: commands nest at most 3 folders deep",
                scratch.0.join("user/a/b/c/d").display()
            ),
            format!(
                "{}: not offered as a command: it is 65537 bytes, more than the 65536 a command may be",
                scratch.0.join("user/big.md").display()
            ),
        ]
    );
}
