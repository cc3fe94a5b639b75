//! Tests of the file tree and the file preview.

use super::preview::{PREVIEW_LIMIT, PreviewBody, slice_columns};
use super::*;
use crate::text::highlight;
use crate::text::wrap::display_width;
use crossterm::event::KeyModifiers;
use pretty_assertions::assert_eq;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

/// A folder under the temp dir, removed when dropped.
struct TempTree {
    root: PathBuf,
}

impl TempTree {
    fn new(name: &str) -> Self {
        static NEXT: AtomicUsize = AtomicUsize::new(0);
        let unique = NEXT.fetch_add(1, Ordering::Relaxed);
        let root =
            std::env::temp_dir().join(format!("miniagent-tree-{name}-{}-{unique}", std::process::id()));
        let _ = std::fs::remove_dir_all(&root);
        std::fs::create_dir_all(&root).unwrap();
        Self {
            root: root.canonicalize().unwrap(),
        }
    }

    fn file(&self, relative: &str, contents: impl AsRef<[u8]>) -> PathBuf {
        let path = self.root.join(relative);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, contents).unwrap();
        path
    }

    fn folder(&self, relative: &str) -> PathBuf {
        let path = self.root.join(relative);
        std::fs::create_dir_all(&path).unwrap();
        path
    }
}

impl Drop for TempTree {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.root);
    }
}

/// A small project: ignore rules, hidden files, nested folders, a CJK name.
fn project(name: &str) -> TempTree {
    let dir = TempTree::new(name);
    dir.file(".gitignore", "target/\n*.log\n");
    dir.file(".git/HEAD", "ref: refs/heads/main\n");
    dir.file(".env.example", "KEY=\n");
    dir.file("Cargo.toml", "[package]\n");
    dir.file("README.md", "# demo\n");
    dir.file("alpha.txt", "a\n");
    dir.file("Zeta.txt", "z\n");
    dir.file("build.log", "noise\n");
    dir.file("target/debug/app", "binary");
    dir.file("src/main.rs", "fn main() {}\n");
    dir.file("src/lib.rs", "pub fn lib() {}\n");
    dir.file("src/debug.log", "noise\n");
    dir.file("src/tui/mod.rs", "pub mod tree;\n");
    dir.file("src/tui/target/stale.rs", "");
    dir.file("docs/guide.md", "# guide\n");
    dir.file("docs/笔记.md", "# 笔记\n");
    dir
}

/// A session that started after every fixture file was written, so only what a test
/// marks or dates later counts as touched.
fn session_start() -> SystemTime {
    SystemTime::now() + Duration::from_secs(3600)
}

fn open_tree(dir: &TempTree) -> FileTree {
    FileTree::with_global_excludes(dir.root.clone(), session_start(), GlobalExcludes::Skip)
}

/// Every row as text, the selected one marked with `>`.
fn rows(tree: &FileTree) -> Vec<String> {
    let theme = Theme::monochrome();
    tree.rows
        .iter()
        .enumerate()
        .map(|(index, row)| {
            let line = tree.row_line(row, &theme, usize::MAX);
            let text: String = line.spans.iter().map(|span| span.content.as_ref()).collect();
            let mark = if index == tree.selected { ">" } else { " " };
            format!("{mark}{text}")
        })
        .collect()
}

fn key(code: KeyCode) -> KeyEvent {
    KeyEvent::new(code, KeyModifiers::NONE)
}

fn press(tree: &mut FileTree, codes: &[KeyCode]) -> Vec<TreeAction> {
    codes.iter().map(|code| tree.on_key(key(*code))).collect()
}

/// The buffer's text, one line per row, trailing spaces dropped; a wide character's
/// hidden second cell is skipped.
fn buffer_text(buf: &Buffer) -> String {
    let area = buf.area;
    let mut lines = Vec::new();
    for y in area.top()..area.bottom() {
        let mut line = String::new();
        let mut x = area.left();
        while x < area.right() {
            let symbol = buf[(x, y)].symbol();
            line.push_str(symbol);
            x += u16::try_from(display_width(symbol).max(1)).unwrap();
        }
        lines.push(line.trim_end().to_string());
    }
    lines.join("\n")
}

/// Where the selection is drawn, since the snapshot text has no styles: one line per
/// styled row, `R` for reversed (focused) and `U` for underlined (unfocused) cells.
fn selection_mask(buf: &Buffer) -> String {
    let area = buf.area;
    let mut lines = vec!["-- selection: R reversed, U underlined --".to_string()];
    for y in area.top()..area.bottom() {
        let mask: String = (area.left()..area.right())
            .map(|x| {
                let modifier = buf[(x, y)].modifier;
                if modifier.contains(Modifier::REVERSED) {
                    'R'
                } else if modifier.contains(Modifier::UNDERLINED) {
                    'U'
                } else {
                    '.'
                }
            })
            .collect();
        if mask.contains(['R', 'U']) {
            lines.push(format!("row {y:>2}: {}", mask.trim_end_matches('.')));
        }
    }
    lines.join("\n")
}

fn render_tree(tree: &mut FileTree, width: u16, height: u16, focused: bool) -> Buffer {
    let area = Rect::new(0, 0, width, height);
    let mut buf = Buffer::empty(area);
    tree.render(area, &mut buf, &Theme::monochrome(), focused);
    buf
}

fn strings(items: &[&str]) -> Vec<String> {
    items.iter().map(|item| item.to_string()).collect()
}

#[test]
fn root_lists_folders_first_and_honours_ignore_rules() {
    let dir = project("root");
    let tree = open_tree(&dir);
    assert_eq!(
        rows(&tree),
        strings(&[
            ">▸ docs/",
            " ▸ src/",
            "   .env.example",
            "   .gitignore",
            "   alpha.txt",
            "   Cargo.toml",
            "   README.md",
            "   Zeta.txt",
        ])
    );
    assert_eq!(tree.root(), dir.root.as_path());
    // Only the root was read.
    assert_eq!(tree.listings.keys().collect::<Vec<_>>(), vec![&dir.root]);
}

#[test]
fn keys_expand_collapse_and_move() {
    let dir = project("keys");
    let mut tree = open_tree(&dir);
    use KeyCode::{Down, Left, Right, Up};
    assert_eq!(
        press(&mut tree, &[Down, Right]),
        vec![TreeAction::Changed, TreeAction::Changed]
    );
    assert_eq!(
        rows(&tree),
        strings(&[
            " ▸ docs/",
            ">▾ src/",
            "   ▸ tui/",
            "     lib.rs",
            "     main.rs",
            "   .env.example",
            "   .gitignore",
            "   alpha.txt",
            "   Cargo.toml",
            "   README.md",
            "   Zeta.txt",
        ])
    );
    // Right on an open folder steps into it; the nested `target/` stays hidden.
    press(&mut tree, &[Right, Right, Down]);
    assert_eq!(
        rows(&tree)[..7],
        strings(&[
            " ▸ docs/",
            " ▾ src/",
            "   ▾ tui/",
            ">      mod.rs",
            "     lib.rs",
            "     main.rs",
            "   .env.example",
        ])
    );
    // Left on a file goes to its folder, then collapses it, then goes up again.
    assert_eq!(press(&mut tree, &[Left]), vec![TreeAction::Changed]);
    assert_eq!(rows(&tree)[2], ">  ▾ tui/");
    press(&mut tree, &[Left]);
    assert_eq!(rows(&tree)[2..4], strings(&[">  ▸ tui/", "     lib.rs"]));
    press(&mut tree, &[Left]);
    assert_eq!(rows(&tree)[1], ">▾ src/");
    // Left at the top level with nothing to collapse does nothing, but the key is
    // still the tree's.
    press(&mut tree, &[Left]);
    assert_eq!(press(&mut tree, &[Left]), vec![TreeAction::Changed]);
    assert_eq!(
        rows(&tree)[..3],
        strings(&[" ▸ docs/", ">▸ src/", "   .env.example"])
    );
    // Moving stops at the ends.
    assert_eq!(
        press(&mut tree, &[Up, Up]),
        vec![TreeAction::Changed, TreeAction::Changed]
    );
    assert_eq!(rows(&tree)[0], ">▸ docs/");
    assert_eq!(press(&mut tree, &[KeyCode::End]), vec![TreeAction::Changed]);
    assert_eq!(rows(&tree).last().unwrap(), ">  Zeta.txt");
    assert_eq!(
        press(&mut tree, &[Down, KeyCode::Char('j')]),
        vec![TreeAction::Changed, TreeAction::Changed]
    );
    assert_eq!(rows(&tree).last().unwrap(), ">  Zeta.txt");
    press(&mut tree, &[KeyCode::Home]);
    assert_eq!(rows(&tree)[0], ">▸ docs/");
    // vi keys and chords: `j` moves, Ctrl-J is the workbench's.
    assert_eq!(tree.on_key(key(KeyCode::Char('j'))), TreeAction::Changed);
    assert_eq!(
        tree.on_key(KeyEvent::new(KeyCode::Char('j'), KeyModifiers::CONTROL)),
        TreeAction::Ignored
    );
    assert_eq!(tree.on_key(key(KeyCode::Char('x'))), TreeAction::Ignored);
}

#[test]
fn reopening_a_folder_restores_its_open_subfolders() {
    let dir = project("reopen");
    let mut tree = open_tree(&dir);
    use KeyCode::{Down, Enter};
    press(
        &mut tree,
        &[
            Down,
            Enter,
            Down,
            Enter,
            Down,
            Down,
            Down,
            Down,
            KeyCode::Char('k'),
        ],
    );
    press(&mut tree, &[KeyCode::Home, Down, Enter]);
    assert_eq!(
        rows(&tree)[..3],
        strings(&[" ▸ docs/", ">▸ src/", "   .env.example"])
    );
    press(&mut tree, &[Enter]);
    assert_eq!(
        rows(&tree)[..7],
        strings(&[
            " ▸ docs/",
            ">▾ src/",
            "   ▾ tui/",
            "       mod.rs",
            "     lib.rs",
            "     main.rs",
            "   .env.example"
        ])
    );
}

#[test]
fn enter_toggles_folders_and_opens_files() {
    let dir = project("enter");
    let mut tree = open_tree(&dir);
    assert_eq!(tree.on_key(key(KeyCode::Enter)), TreeAction::Changed);
    assert_eq!(
        rows(&tree)[..4],
        strings(&[">▾ docs/", "     guide.md", "     笔记.md", " ▸ src/"])
    );
    press(&mut tree, &[KeyCode::Down, KeyCode::Down]);
    assert_eq!(
        tree.on_key(key(KeyCode::Enter)),
        TreeAction::Open(dir.root.join("docs/笔记.md"))
    );
    press(&mut tree, &[KeyCode::Up, KeyCode::Up]);
    assert_eq!(tree.on_key(key(KeyCode::Enter)), TreeAction::Changed);
    assert_eq!(rows(&tree)[..2], strings(&[">▸ docs/", " ▸ src/"]));
}

#[test]
fn clicks_select_then_activate() {
    let dir = project("clicks");
    let mut tree = open_tree(&dir);
    render_tree(&mut tree, 30, 5, true);
    assert_eq!(tree.on_click(1), TreeAction::Changed);
    assert_eq!(rows(&tree)[1], ">▸ src/");
    assert_eq!(tree.on_click(1), TreeAction::Changed);
    assert_eq!(rows(&tree)[1..3], strings(&[">▾ src/", "   ▸ tui/"]));
    assert_eq!(tree.on_click(3), TreeAction::Changed);
    assert_eq!(tree.on_click(3), TreeAction::Open(dir.root.join("src/lib.rs")));
    assert_eq!(tree.on_click(40), TreeAction::Ignored);
    // Clicks count from the first visible row.
    assert_eq!(tree.on_scroll(3), TreeAction::Changed);
    assert_eq!(tree.on_click(0), TreeAction::Open(dir.root.join("src/lib.rs")));
    assert_eq!(tree.on_click(1), TreeAction::Changed);
    assert_eq!(tree.on_click(1), TreeAction::Open(dir.root.join("src/main.rs")));
}

#[test]
fn refresh_shows_new_files_drops_deleted_ones_and_keeps_state() {
    let dir = project("refresh");
    let mut tree = open_tree(&dir);
    use KeyCode::{Down, Enter};
    press(&mut tree, &[Down, Enter, Down, Enter, Down, Down, Down]);
    assert_eq!(rows(&tree)[5], ">    main.rs");
    dir.file("src/new.rs", "");
    dir.file("src/Extra/one.rs", "");
    dir.file("src/tui/view.rs", "");
    dir.file("src/trace.log", "ignored");
    std::fs::remove_file(dir.root.join("src/lib.rs")).unwrap();
    tree.refresh();
    assert_eq!(
        rows(&tree)[..9],
        strings(&[
            " ▸ docs/",
            " ▾ src/",
            "   ▸ Extra/",
            "   ▾ tui/",
            "       mod.rs",
            "       view.rs",
            ">    main.rs",
            "     new.rs",
            "   .env.example",
        ])
    );
    // The selected file goes: the selection stays at its place in the list.
    std::fs::remove_file(dir.root.join("src/main.rs")).unwrap();
    tree.refresh();
    assert_eq!(rows(&tree)[6], ">    new.rs");
    // An open folder that goes is forgotten.
    std::fs::remove_dir_all(dir.root.join("src/tui")).unwrap();
    tree.refresh();
    assert_eq!(
        rows(&tree)[1..4],
        strings(&[" ▾ src/", "   ▸ Extra/", ">    new.rs"])
    );
    assert!(!tree.expanded.contains(&dir.root.join("src/tui")));
}

#[test]
fn touched_files_are_marked_and_their_folders_too() {
    let dir = project("touched");
    let mut tree = open_tree(&dir);
    tree.mark_touched(&dir.root.join("src/tui/mod.rs"));
    tree.mark_touched(Path::new("Cargo.toml"));
    assert_eq!(rows(&tree)[..2], strings(&[">▸ docs/", " ▸ src/ •"]));
    assert_eq!(rows(&tree)[5], " ● Cargo.toml");
    press(
        &mut tree,
        &[KeyCode::Down, KeyCode::Right, KeyCode::Right, KeyCode::Right],
    );
    assert_eq!(
        rows(&tree)[1..4],
        strings(&[" ▾ src/ •", ">  ▾ tui/ •", "     ● mod.rs"])
    );
    // A change made behind the tools' back (through `bash`, say) shows at refresh.
    let later = session_start() + Duration::from_secs(60);
    let readme = dir.root.join("README.md");
    std::fs::File::options()
        .write(true)
        .open(&readme)
        .unwrap()
        .set_modified(later)
        .unwrap();
    assert_eq!(rows(&tree)[10], "   README.md");
    tree.refresh();
    assert_eq!(rows(&tree)[10], " ● README.md");
}

#[test]
#[cfg(unix)]
fn odd_names_are_escaped_and_symlinks_never_followed() {
    let dir = TempTree::new("names");
    dir.file("esc\u{1b}[31mred.txt", "");
    dir.file("new\nline.txt", "");
    dir.file("日本語のファイル名.txt", "");
    dir.file("emoji😀.md", "");
    dir.file("rtl\u{202e}txt.exe", "");
    dir.file("real/file.rs", "");
    std::os::unix::fs::symlink(".", dir.root.join("loop")).unwrap();
    std::os::unix::fs::symlink("real/file.rs", dir.root.join("link.rs")).unwrap();
    std::os::unix::fs::symlink("missing", dir.root.join("dangling")).unwrap();
    let mut tree = open_tree(&dir);
    assert_eq!(
        rows(&tree),
        strings(&[
            "   loop/ → .",
            " ▸ real/",
            "   dangling → missing",
            "   emoji😀.md",
            "   esc\\u{1b}[31mred.txt",
            "   link.rs → real/file.rs",
            "   new\\nline.txt",
            "   rtl\\u{202e}txt.exe",
            "   日本語のファイル名.txt",
        ])
        .into_iter()
        .enumerate()
        .map(|(index, row)| if index == 0 {
            row.replacen(' ', ">", 1)
        } else {
            row
        })
        .collect::<Vec<_>>()
    );
    // A link to a folder is not opened (it could lead back up); a link to a file is.
    assert_eq!(tree.on_key(key(KeyCode::Enter)), TreeAction::Changed);
    assert_eq!(tree.on_key(key(KeyCode::Right)), TreeAction::Changed);
    assert_eq!(rows(&tree)[..2], strings(&[">  loop/ → .", " ▸ real/"]));
    press(
        &mut tree,
        &[
            KeyCode::Down,
            KeyCode::Down,
            KeyCode::Down,
            KeyCode::Down,
            KeyCode::Down,
        ],
    );
    assert_eq!(
        tree.on_key(key(KeyCode::Enter)),
        TreeAction::Open(dir.root.join("link.rs"))
    );
    // Raw control characters never reach the screen.
    let buf = render_tree(&mut tree, 20, 9, true);
    assert!(
        buf.content()
            .iter()
            .all(|cell| !cell.symbol().chars().any(needs_escape))
    );
    assert_eq!(buffer_text(&buf).lines().nth(8), Some("  日本語のファイル…"));
}

#[test]
fn empty_and_missing_workspaces_and_unreadable_folders() {
    let dir = TempTree::new("empty");
    let mut tree = open_tree(&dir);
    assert_eq!(buffer_text(&render_tree(&mut tree, 12, 2, true)), "(empty)\n");
    use KeyCode::{Down, End, Enter, Left, PageDown, Right};
    for code in [Down, End, Enter, Left, Right, PageDown] {
        assert_eq!(tree.on_key(key(code)), TreeAction::Changed);
    }
    assert_eq!(tree.on_key(key(KeyCode::Tab)), TreeAction::Ignored);
    assert_eq!(tree.on_click(0), TreeAction::Ignored);
    assert_eq!(tree.on_scroll(3), TreeAction::Ignored);
    assert_eq!(tree.on_scroll(-3), TreeAction::Ignored);

    // A workspace that is not on this machine (a replay of another's session): its
    // path, its end kept when cut, and why nothing is listed.
    let mut missing = open_tree(&dir);
    missing.root = PathBuf::from("/home/李雷/projects/demo");
    missing.refresh();
    assert_eq!(
        buffer_text(&render_tree(&mut missing, 24, 3, true)),
        "/home/李雷/projects/demo\n(not on this machine)\n"
    );
    assert_eq!(
        buffer_text(&render_tree(&mut missing, 14, 2, true)),
        "…projects/demo\n(not on this m"
    );
    assert_eq!(missing.on_key(key(Enter)), TreeAction::Changed);

    // A folder that cannot be listed (here: gone since the parent was read; as
    // root, permission bits would not stop us) says so when opened.
    dir.folder("gone");
    dir.file("kept.txt", "");
    tree.refresh();
    std::fs::remove_dir(dir.root.join("gone")).unwrap();
    assert_eq!(tree.on_key(key(Enter)), TreeAction::Changed);
    assert_eq!(rows(&tree), strings(&[">▾ gone/ (unreadable)", "   kept.txt"]));
    tree.refresh();
    assert_eq!(rows(&tree), strings(&[">  kept.txt"]));
    // A zero-sized area draws nothing and breaks nothing.
    render_tree(&mut tree, 0, 0, true);
    assert_eq!(tree.on_key(key(Down)), TreeAction::Changed);
    assert_eq!(tree.on_scroll(1), TreeAction::Ignored);
}

#[test]
fn ten_thousand_files_page_and_scroll_with_the_selection_in_view() {
    let dir = TempTree::new("many");
    for index in 0..10_000 {
        dir.file(&format!("many/f{index:05}.txt"), "");
    }
    let mut tree = open_tree(&dir);
    render_tree(&mut tree, 30, 12, true);
    tree.on_key(key(KeyCode::Enter));
    assert_eq!(tree.rows.len(), 10_001);
    tree.on_key(key(KeyCode::End));
    let text = buffer_text(&render_tree(&mut tree, 30, 12, true));
    assert_eq!(text.lines().last(), Some("    f09999.txt"));
    assert_eq!(text.lines().next(), Some("    f09988.txt"));
    assert_eq!(tree.on_key(key(KeyCode::PageUp)), TreeAction::Changed);
    assert_eq!(rows(&tree)[9988], ">    f09987.txt");
    // The wheel scrolls the view and drags the selection along when it would leave.
    assert_eq!(tree.on_scroll(-100), TreeAction::Changed);
    assert_eq!((tree.offset.get(), tree.selected), (9888, 9899));
    assert_eq!(tree.on_scroll(20_000), TreeAction::Changed);
    assert_eq!((tree.offset.get(), tree.selected), (10_001 - 12, 10_001 - 12));
    assert_eq!(tree.on_scroll(1), TreeAction::Ignored);
    assert_eq!(tree.on_key(key(KeyCode::PageDown)), TreeAction::Changed);
    assert_eq!((tree.offset.get(), tree.selected), (10_001 - 12, 10_000));
}

#[test]
fn selection_style_depends_on_focus() {
    let dir = project("focus");
    let mut tree = open_tree(&dir);
    let theme = Theme::monochrome();
    let focused = render_tree(&mut tree, 20, 3, true);
    assert_eq!(focused[(19, 0)].modifier, theme.selection.add_modifier);
    let unfocused = render_tree(&mut tree, 20, 3, false);
    assert!(unfocused[(2, 0)].modifier.contains(Modifier::UNDERLINED));
    assert!(!unfocused[(19, 0)].modifier.contains(Modifier::UNDERLINED));
    assert!(!unfocused[(2, 0)].modifier.contains(Modifier::REVERSED));
}

/// The tree of the snapshots: both folders open, a touched file selected.
fn snapshot_tree(dir: &TempTree) -> FileTree {
    dir.file("docs/a-rather-long-file-name-for-a-narrow-pane.md", "");
    let mut tree = open_tree(dir);
    tree.mark_touched(&dir.root.join("src/main.rs"));
    press(&mut tree, &[KeyCode::Enter, KeyCode::End]);
    press(
        &mut tree,
        &[
            KeyCode::Home,
            KeyCode::Down,
            KeyCode::Down,
            KeyCode::Down,
            KeyCode::Down,
        ],
    );
    press(
        &mut tree,
        &[KeyCode::Enter, KeyCode::Down, KeyCode::Down, KeyCode::Down],
    );
    tree
}

#[test]
fn tree_snapshots() {
    let dir = project("snap");
    let mut tree = snapshot_tree(&dir);
    for (width, height) in [(30, 12), (60, 20)] {
        for (focus, focused) in [("focused", true), ("unfocused", false)] {
            let buf = render_tree(&mut tree, width, height, focused);
            let text = format!("{}\n{}", buffer_text(&buf), selection_mask(&buf));
            insta::assert_snapshot!(format!("tree_{width}x{height}_{focus}"), text);
        }
    }
}

#[test]
fn key_hints_name_every_binding() {
    let dir = TempTree::new("hints");
    let tree = open_tree(&dir);
    let keys: Vec<&str> = tree.key_hints().iter().map(|hint| hint.keys).collect();
    assert_eq!(keys, vec!["↑/↓", "←/→", "Enter", "PgUp/PgDn", "Home/End"]);
    let preview = FilePreview::open(&dir.root.join("none"), &Theme::dark());
    let keys: Vec<&str> = preview.key_hints().iter().map(|hint| hint.keys).collect();
    assert_eq!(keys, vec!["↑/↓", "PgUp/PgDn", "Home/End", "←/→", "Esc/q"]);
}

// ---- preview ----

fn wait_for_syntaxes() {
    highlight::load_now();
}

fn render_preview(preview: &FilePreview, width: u16, height: u16) -> String {
    let area = Rect::new(0, 0, width, height);
    let mut buf = Buffer::empty(area);
    preview.render(area, &mut buf, &Theme::dark());
    buffer_text(&buf)
}

const RUST: &str = "//! A tiny program.\n\nuse std::fmt;\n\n/// Says hello.\nfn main() {\n\tlet name = \"世界\";\n\tprintln!(\"hello, {name}\"); // a comment that runs on and on past the edge of a narrow overlay\n}\n";

#[test]
fn preview_snapshots_of_a_rust_file() {
    wait_for_syntaxes();
    let dir = TempTree::new("preview");
    let path = dir.file("src/main.rs", RUST);
    let preview = FilePreview::open(&path, &Theme::dark());
    let title = preview.title(&dir.root);
    assert_eq!(title, "src/main.rs");
    for (width, height) in [(80, 24), (160, 48)] {
        let text = render_preview(&preview, width, height);
        insta::assert_snapshot!(
            format!("preview_rust_{width}x{height}"),
            format!("[{title}]\n{text}")
        );
    }
}

#[test]
fn preview_of_a_binary_file() {
    let dir = TempTree::new("binary");
    let mut bytes = b"\x89PNG\r\n\x1a\n".to_vec();
    bytes.extend(std::iter::repeat_n(0u8, 3000));
    let path = dir.file("assets/logo.png", bytes);
    let mut preview = FilePreview::open(&path, &Theme::dark());
    let text = render_preview(&preview, 40, 4);
    insta::assert_snapshot!(
        "preview_binary",
        format!("[{}]\n{text}", preview.title(&dir.root))
    );
    assert_eq!(preview.on_key(key(KeyCode::Down)), PreviewAction::Ignored);
    assert_eq!(preview.on_key(key(KeyCode::Esc)), PreviewAction::Close);
}

#[test]
fn preview_of_a_long_line_scrolled_right() {
    let dir = TempTree::new("long");
    let long: String = (0..30).map(|n| format!("{n:02}-456789 ")).collect();
    let contents = format!("short\n{long}\nx中文中文中文中文中文中文中文中文中文中文中文中文中文\nend\n");
    let path = dir.file("notes/long.txt", contents);
    let mut preview = FilePreview::open(&path, &Theme::dark());
    render_preview(&preview, 40, 6);
    let moves: Vec<PreviewAction> = (0..3).map(|_| preview.on_key(key(KeyCode::Right))).collect();
    assert_eq!(moves, vec![PreviewAction::Changed; 3]);
    let text = render_preview(&preview, 40, 6);
    // 8 columns a step: 24 columns off the left; the CJK line's character cut in
    // half shows as a space.
    insta::assert_snapshot!(
        "preview_long_line_scrolled",
        format!("[{}]\n{text}", preview.title(&dir.root))
    );
    // Scrolling right stops where the widest line ends.
    for _ in 0..100 {
        preview.on_key(key(KeyCode::Right));
    }
    assert_eq!(preview.left, 300 - 36);
    assert_eq!(preview.on_key(key(KeyCode::Right)), PreviewAction::Ignored);
    assert_eq!(preview.on_key(key(KeyCode::Left)), PreviewAction::Changed);
    assert_eq!(preview.on_key(key(KeyCode::Down)), PreviewAction::Ignored);
}

#[test]
fn preview_scrolls_vertically_within_the_text() {
    let dir = TempTree::new("scroll");
    let contents: String = (1..=100).map(|n| format!("line {n}\n")).collect();
    let path = dir.file("lines.txt", contents);
    let mut preview = FilePreview::open(&path, &Theme::dark());
    render_preview(&preview, 20, 10);
    assert_eq!(preview.on_key(key(KeyCode::Up)), PreviewAction::Ignored);
    assert_eq!(preview.on_key(key(KeyCode::Char('j'))), PreviewAction::Changed);
    assert_eq!(preview.on_key(key(KeyCode::PageDown)), PreviewAction::Changed);
    assert_eq!(preview.top, 9, "a page leaves two lines of context");
    assert_eq!(preview.on_key(key(KeyCode::Char('G'))), PreviewAction::Changed);
    assert_eq!(preview.top, 90);
    assert_eq!(
        render_preview(&preview, 20, 10).lines().last(),
        Some("100 │ line 100")
    );
    assert_eq!(preview.on_scroll(5), PreviewAction::Ignored);
    assert_eq!(preview.on_scroll(-5), PreviewAction::Changed);
    assert_eq!(preview.on_key(key(KeyCode::Home)), PreviewAction::Changed);
    assert_eq!(render_preview(&preview, 20, 2), "  1 │ line 1\n  2 │ line 2");
    assert_eq!(preview.on_key(key(KeyCode::Char('q'))), PreviewAction::Close);
}

#[test]
fn preview_reads_at_most_a_megabyte_and_says_so() {
    let dir = TempTree::new("big");
    // Each line is 64 bytes with its newline; a 3-byte character straddles the cut.
    let line = format!("{}\n", "x".repeat(63));
    let mut contents = line.repeat(PREVIEW_LIMIT / 64 - 1);
    contents.push_str(&"y".repeat(62));
    contents.push_str("€€€\n");
    contents.push_str(&line.repeat(8000));
    let path = dir.file("big.txt", &contents);
    let mut preview = FilePreview::open(&path, &Theme::dark());
    render_preview(&preview, 30, 3);
    preview.on_key(key(KeyCode::End));
    let text = render_preview(&preview, 40, 3);
    assert_eq!(
        text,
        format!(
            "16384 │ {}\n16384 │ yyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyy\n… showing the first 1 MB of 1.5 MB",
            "x".repeat(32)
        )
        .replacen("16384", "16383", 1)
    );
    let PreviewBody::Text(body) = &preview.body else {
        panic!("not text")
    };
    assert_eq!(body.source.last().unwrap(), &"y".repeat(62));
}

#[test]
fn preview_decodes_lossily_and_escapes_controls() {
    let dir = TempTree::new("lossy");
    let path = dir.file("mixed.txt", b"caf\xe9\r\n\tx\x1b[31my\r\nlast");
    let preview = FilePreview::open(&path, &Theme::dark());
    assert_eq!(
        render_preview(&preview, 30, 4),
        "1 │ caf\u{fffd}\n2 │     x\\u{1b}[31my\n3 │ last\n"
    );
    let empty = FilePreview::open(&dir.file("empty.txt", ""), &Theme::dark());
    assert_eq!(render_preview(&empty, 30, 1), "empty file");
    let missing = FilePreview::open(&dir.root.join("missing.txt"), &Theme::dark());
    assert_eq!(
        render_preview(&missing, 80, 1),
        "cannot read this file: No such file or directory (os error 2)"
    );
}

#[test]
#[cfg(unix)]
fn preview_never_opens_pipes_or_sockets() {
    let dir = TempTree::new("special");
    let socket_path = dir.root.join("agent.sock");
    let _socket = std::os::unix::net::UnixListener::bind(&socket_path).unwrap();
    let fifo = dir.root.join("pipe");
    let status = std::process::Command::new("mkfifo").arg(&fifo).status().unwrap();
    assert!(status.success());
    for path in [socket_path, fifo] {
        let preview = FilePreview::open(&path, &Theme::dark());
        assert_eq!(
            render_preview(&preview, 60, 1),
            "not a regular file (a pipe, socket or device): not shown"
        );
    }
    let folder = FilePreview::open(&dir.root, &Theme::dark());
    assert_eq!(render_preview(&folder, 60, 1), "a folder: not shown");
}

#[test]
fn preview_titles_are_relative_inside_the_root() {
    let dir = TempTree::new("titles");
    let path = dir.file("a/b.rs", "");
    let preview = FilePreview::open(&path, &Theme::dark());
    assert_eq!(preview.title(&dir.root), "a/b.rs");
    assert_eq!(preview.title(Path::new("/elsewhere")), path.display().to_string());
}

#[test]
fn slicing_by_columns_handles_wide_characters() {
    let line = Line::from(vec![Span::raw("ab"), Span::raw("日本c")]);
    let text = |line: Line<'_>| {
        line.spans
            .iter()
            .map(|span| span.content.to_string())
            .collect::<String>()
    };
    assert_eq!(text(slice_columns(&line, 3, 10)), " 本c");
    assert_eq!(text(slice_columns(&line, 0, 3)), "ab ");
    assert_eq!(text(slice_columns(&line, 2, 2)), "日");
    assert_eq!(text(slice_columns(&line, 9, 5)), "");
}

mod put_back;
