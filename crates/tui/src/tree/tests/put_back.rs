//! What a rewind's files do to the tree's marks.

use super::*;
use pretty_assertions::assert_eq;

#[test]
fn files_a_rewind_put_back_lose_their_marks_and_the_tree_is_read_again() {
    let dir = project("put-back");
    let mut tree = open_tree(&dir);
    dir.file("made_by_turn.rs", "");
    tree.mark_touched(Path::new("made_by_turn.rs"));
    tree.mark_touched(Path::new("Cargo.toml"));
    tree.mark_touched(&dir.root.join("src/tui/mod.rs"));
    tree.refresh();
    assert_eq!(rows(&tree)[1], " ▸ src/ •");
    assert!(
        rows(&tree).contains(&" ● made_by_turn.rs".to_string()),
        "{:?}",
        rows(&tree)
    );
    // The rewind removed the file the turn made and put the other two back.
    std::fs::remove_file(dir.root.join("made_by_turn.rs")).unwrap();
    tree.put_back(&[
        "made_by_turn.rs".to_string(),
        "Cargo.toml".to_string(),
        "src/tui/mod.rs".to_string(),
        "../outside".to_string(),
    ]);
    assert_eq!(rows(&tree)[1], " ▸ src/");
    assert!(
        rows(&tree).contains(&"   Cargo.toml".to_string()),
        "{:?}",
        rows(&tree)
    );
    assert!(
        !rows(&tree).iter().any(|row| row.contains("made_by_turn")),
        "{:?}",
        rows(&tree)
    );
}
