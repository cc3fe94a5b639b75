//! Tests of workspace confinement: resolving, symlinks, protected folders, listing.

use super::*;
use pretty_assertions::assert_eq;

/// `resolve` with its error as the text the model sees, which is what these tests check.
trait ResolveText {
    fn resolve_text(&self, path: &str, access: Access) -> Result<PathBuf, String>;
}

impl ResolveText for Workspace {
    fn resolve_text(&self, path: &str, access: Access) -> Result<PathBuf, String> {
        self.resolve(path, access).map_err(String::from)
    }
}

struct Scratch(PathBuf);

impl Scratch {
    fn new(name: &str) -> Self {
        let dir = std::env::temp_dir().join(format!("miniagent-paths-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(dir.join("ws/sub")).unwrap();
        std::fs::create_dir_all(dir.join("outside")).unwrap();
        Self(dir.canonicalize().unwrap())
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

#[test]
fn writes_enter_protected_folders_only_when_approved() {
    let scratch = Scratch::new("protected");
    let root = scratch.0.join("ws");
    std::fs::create_dir_all(root.join("conf/deep")).unwrap();
    let ws = Workspace::new(&root, &[]).protecting(&[root.join("conf")]);
    let write = |ws: &Workspace, path: &str| {
        ws.locate(path, Access::Write)
            .unwrap()
            .write_atomic(b"x")
            .map_err(|err| err.to_string())
    };
    assert_eq!(write(&ws, "sub/a.txt"), Ok(()));
    for path in [
        ".miniagent/mcp.json",
        ".miniagent/skills/x/SKILL.md",
        "conf/deep/x.toml",
    ] {
        let err = write(&ws, path).unwrap_err();
        assert!(err.contains("holds miniagent's own settings"), "{path}: {err}");
        assert!(!root.join(path).exists(), "{path}");
    }
    // Not even the folders on the way were created.
    assert!(!root.join(".miniagent").exists());
    let approved = ws.approving_protected_writes();
    assert_eq!(write(&approved, ".miniagent/skills/x/SKILL.md"), Ok(()));
    assert_eq!(write(&approved, "conf/deep/x.toml"), Ok(()));
    assert_eq!(write(&ws, "sub/b.txt"), Ok(()));
}

#[test]
fn inside_paths_resolve_and_escapes_are_refused() {
    let scratch = Scratch::new("escape");
    let ws = Workspace::new(&scratch.0.join("ws"), &[]);
    let root = scratch.0.join("ws");
    assert_eq!(
        ws.resolve_text("sub/new.txt", Access::Write),
        Ok(root.join("sub/new.txt"))
    );
    assert_eq!(
        ws.resolve_text("sub/../a.txt", Access::Write),
        Ok(root.join("a.txt"))
    );
    assert_eq!(
        ws.resolve_text(root.join("b").to_str().unwrap(), Access::Write),
        Ok(root.join("b"))
    );
    let err = ws.resolve_text("../escape.txt", Access::Write).unwrap_err();
    assert_eq!(
        err,
        format!(
            "`../escape.txt` resolves to {}, which is outside the workspace {}; file tools only work inside it",
            scratch.0.join("escape.txt").display(),
            root.display()
        )
    );
    assert!(
        ws.resolve_text("/tmp/escape.txt", Access::Write)
            .unwrap_err()
            .contains("resolves to /tmp/escape.txt")
    );
    assert!(ws.resolve_text("a\0b", Access::Read).is_err());
    assert!(ws.resolve_text("", Access::Read).is_err());
    assert_eq!(
        ws.resolve_text(&"a".repeat(10_000), Access::Write),
        Err("the path is 10000 bytes long; a path has at most 4096 bytes".to_string())
    );
}

#[test]
fn symlinks_are_followed_even_when_dangling() {
    let scratch = Scratch::new("links");
    let root = scratch.0.join("ws");
    std::os::unix::fs::symlink(scratch.0.join("outside"), root.join("out-dir")).unwrap();
    std::os::unix::fs::symlink(scratch.0.join("outside/ghost.txt"), root.join("ghost")).unwrap();
    std::os::unix::fs::symlink("sub", root.join("inner")).unwrap();
    let ws = Workspace::new(&root, &[]);
    assert!(
        ws.resolve_text("out-dir/x.txt", Access::Write)
            .unwrap_err()
            .contains("outside/x.txt")
    );
    assert!(
        ws.resolve_text("ghost", Access::Write)
            .unwrap_err()
            .contains("outside/ghost.txt")
    );
    assert_eq!(ws.resolve_text("inner/f", Access::Write), Ok(root.join("sub/f")));
}

#[test]
fn extra_roots_confine_reads_to_themselves() {
    let scratch = Scratch::new("skillroot");
    let skills = scratch.0.join("outside/skills");
    std::fs::create_dir_all(skills.join("demo")).unwrap();
    std::fs::write(skills.join("demo/SKILL.md"), "skill").unwrap();
    std::fs::write(scratch.0.join("outside/secret.txt"), "secret").unwrap();
    std::os::unix::fs::symlink("../../secret.txt", skills.join("demo/leak")).unwrap();
    std::os::unix::fs::symlink(&skills, scratch.0.join("ws/skills-link")).unwrap();
    let ws = Workspace::new(&scratch.0.join("ws"), std::slice::from_ref(&skills));
    let skill = skills.join("demo/SKILL.md");
    assert_eq!(
        ws.resolve_text(skill.to_str().unwrap(), Access::Read),
        Ok(skill.clone())
    );
    // Through a workspace symlink into the skills folder: read-only too.
    assert_eq!(
        ws.resolve_text("skills-link/demo/SKILL.md", Access::Read),
        Ok(skill)
    );
    assert!(ws.resolve_text("skills-link/demo/new.md", Access::Write).is_err());
    let leak = skills.join("demo/leak");
    let err = ws.resolve_text(leak.to_str().unwrap(), Access::Read).unwrap_err();
    assert!(
        err.contains(&format!(
            "resolves to {}",
            scratch.0.join("outside/secret.txt").display()
        )),
        "{err}"
    );
}

#[test]
fn absolute_paths_with_dot_dot_before_the_workspace_are_refused_clearly() {
    let scratch = Scratch::new("absdotdot");
    let root = scratch.0.join("ws");
    let ws = Workspace::new(&root, &[]);
    let path = format!("{}/sub/../../ws/a.txt", root.display());
    assert_eq!(
        ws.resolve_text(&path, Access::Write),
        Err(format!(
            "`{path}` goes above {} with `..` before coming back; file tools do not leave the workspace even on the way",
            root.display()
        ))
    );
    assert_eq!(
        ws.resolve_text(&format!("{}/sub/../a.txt", root.display()), Access::Write),
        Ok(root.join("a.txt"))
    );
    let path = format!("{}/outside/../ws/a.txt", scratch.0.display());
    assert_eq!(
        ws.resolve_text(&path, Access::Write),
        Err(format!(
            "`{path}` goes through `..` before it reaches the workspace {}; give the path relative to the workspace",
            root.display()
        ))
    );
}

#[test]
fn extra_roots_are_read_only() {
    let scratch = Scratch::new("roots");
    let ws = Workspace::new(&scratch.0.join("ws"), &[scratch.0.join("outside")]);
    let file = scratch.0.join("outside/skill.md");
    assert_eq!(
        ws.resolve_text(file.to_str().unwrap(), Access::Read),
        Ok(file.clone())
    );
    assert!(ws.resolve_text(file.to_str().unwrap(), Access::Write).is_err());
}
