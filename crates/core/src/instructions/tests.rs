use super::*;
use pretty_assertions::assert_eq;

/// A folder of its own under the temp dir, removed at the end.
struct Scratch(PathBuf);

impl Scratch {
    fn new(name: &str) -> Self {
        let dir = std::env::temp_dir().join(format!("miniagent-instructions-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        Self(std::fs::canonicalize(&dir).unwrap())
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

fn settings(max_bytes: usize) -> InstructionSettings {
    InstructionSettings {
        files: vec!["AGENTS.md".into(), "CLAUDE.md".into(), "GEMINI.md".into()],
        max_bytes,
    }
}

fn listed(found: &Instructions) -> Vec<(PathBuf, String, bool, bool)> {
    found
        .files
        .iter()
        .map(|file| (file.path.clone(), file.text.clone(), file.truncated, file.user))
        .collect()
}

/// The user's file first, then the repository root's, then each folder down to the
/// workspace; in each folder the first name of the list that exists, the others not.
#[test]
fn files_come_top_down_with_the_first_name_of_each_folder() {
    let scratch = Scratch::new("order");
    let config = scratch.write("config/AGENTS.md", "user rules");
    std::fs::create_dir_all(scratch.0.join("repo/.git")).unwrap();
    let root = scratch.write("repo/AGENTS.md", "root rules");
    scratch.write("repo/CLAUDE.md", "not read: AGENTS.md is first");
    let middle = scratch.write("repo/crates/CLAUDE.md", "middle rules\u{1b}[31m");
    scratch.write("repo/crates/GEMINI.md", "not read: CLAUDE.md comes before");
    let deep = scratch.write("repo/crates/core/GEMINI.md", "deep rules");
    // Above the repository root: not read.
    scratch.write("AGENTS.md", "outside the repository");
    let found = Instructions::discover(
        &settings(32 * 1024),
        Some(&scratch.0.join("config")),
        &scratch.0.join("repo/crates/core"),
    );
    assert_eq!(
        listed(&found),
        vec![
            (config, "user rules".into(), false, true),
            (root, "root rules".into(), false, false),
            (middle, "middle rules".into(), false, false),
            (deep, "deep rules".into(), false, false),
        ]
    );
    assert_eq!(found.notices, Vec::<String>::new());
}

/// Without a repository the workspace is the only folder looked at.
#[test]
fn without_a_repository_only_the_workspace_is_read() {
    let scratch = Scratch::new("norepo");
    scratch.write("AGENTS.md", "the parent's");
    let own = scratch.write("work/AGENTS.md", "the workspace's");
    let found = Instructions::discover(&settings(1000), None, &scratch.0.join("work"));
    assert_eq!(
        listed(&found),
        vec![(own, "the workspace's".into(), false, false)]
    );
}

/// The cap is over all files: the one that crosses it is cut (at a character), the
/// ones after it are left out, and the person is told of both.
#[test]
fn the_byte_cap_cuts_and_leaves_out() {
    let scratch = Scratch::new("cap");
    std::fs::create_dir_all(scratch.0.join(".git")).unwrap();
    let root = scratch.write("AGENTS.md", "ééééé");
    let sub = scratch.write("sub/AGENTS.md", "more");
    let found = Instructions::discover(&settings(5), None, &scratch.0);
    assert_eq!(listed(&found), vec![(root.clone(), "éé".into(), true, false)]);
    let found = Instructions::discover(&settings(10), None, &scratch.0.join("sub"));
    assert_eq!(listed(&found), vec![(root.clone(), "ééééé".into(), false, false)]);
    assert_eq!(
        found.notices,
        vec![format!(
            "{}: not used as instructions: the files before it fill instructions.max_bytes (10 bytes)",
            sub.display()
        )]
    );
    assert!(
        found
            .prompt_section()
            .contains(&format!("### {}\n\nééééé\n", root.display()))
    );
}

/// A link in the repository is read when it stays inside, never when it leads out; a
/// folder or a pipe under the name is not waited on.
#[test]
fn links_out_of_the_repository_and_odd_files_are_skipped() {
    let scratch = Scratch::new("links");
    let secret = scratch.write("secret.txt", "a secret");
    std::fs::create_dir_all(scratch.0.join("repo/.git")).unwrap();
    let inside = scratch.write("repo/docs/rules.md", "linked rules");
    std::os::unix::fs::symlink(&inside, scratch.0.join("repo/AGENTS.md")).unwrap();
    std::fs::create_dir_all(scratch.0.join("repo/a")).unwrap();
    std::os::unix::fs::symlink(&secret, scratch.0.join("repo/a/AGENTS.md")).unwrap();
    std::fs::create_dir_all(scratch.0.join("repo/a/b/AGENTS.md")).unwrap();
    let fifo = scratch.0.join("repo/a/b/c/AGENTS.md");
    std::fs::create_dir_all(fifo.parent().unwrap()).unwrap();
    let made = std::process::Command::new("mkfifo").arg(&fifo).status().unwrap();
    assert!(made.success());
    let found = Instructions::discover(&settings(1000), None, &scratch.0.join("repo/a/b/c"));
    assert_eq!(
        listed(&found),
        vec![(
            scratch.0.join("repo/AGENTS.md"),
            "linked rules".into(),
            false,
            false
        )]
    );
    assert_eq!(
        found.notices,
        vec![
            format!(
                "{}: not used as instructions: it is a link that leads out of the repository",
                scratch.0.join("repo/a/AGENTS.md").display()
            ),
            format!(
                "{}: not used as instructions: it is not a regular file",
                scratch.0.join("repo/a/b/AGENTS.md").display()
            ),
            format!(
                "{}: not used as instructions: it is not a regular file",
                fifo.display()
            ),
        ]
    );
}

/// `files = []` reads nothing.
#[test]
fn an_empty_list_reads_nothing() {
    let scratch = Scratch::new("empty");
    scratch.write("AGENTS.md", "rules");
    let none = InstructionSettings {
        files: Vec::new(),
        max_bytes: 1000,
    };
    assert_eq!(
        Instructions::discover(&none, None, &scratch.0),
        Instructions::default()
    );
}
