//! The `@` file picker: typing `@` in the input (at a line's start or after a space)
//! lists the workspace's files the way `git status` sees them (`.gitignore`, `.ignore`
//! and global excludes honoured, `.git/` left out), ranked as the person types after the
//! `@` ([`fuzzy`]). The first `@` starts one walk of the workspace on a thread of its own
//! (at most [`MAX_FILES`] files, with a note when cut); the picker shows what it has
//! found so far and never waits for it, so no frame waits for the disk. Tab or Enter
//! takes the highlighted file (`@src/main.rs `, `@"a b.txt" ` with spaces); the core
//! attaches it when the message is sent.

pub mod fuzzy;

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard};

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::Style;
use ratatui::text::{Line, Span};

use crate::popup::popup;
use crate::text::wrap;
use crate::theme::Theme;

/// Files the walk lists at most; a larger tree is cut there, with a note.
pub const MAX_FILES: usize = 200_000;
/// Rows of matches the picker shows.
pub const ROWS: usize = 8;
/// Files the walk hands over at a time while it runs.
const BATCH: usize = 2_000;

/// What the background walk found and the picker has not taken yet.
#[derive(Default)]
struct Found {
    paths: Vec<String>,
    done: bool,
    /// It stopped at [`MAX_FILES`].
    cut: bool,
}

/// The workspace's files, listed once on a thread of its own.
struct Walk {
    found: Arc<Mutex<Found>>,
    /// Only tests wait for it; the workbench lets it run out on its own.
    #[cfg_attr(not(test), allow(dead_code))]
    thread: Option<std::thread::JoinHandle<()>>,
}

fn lock(found: &Mutex<Found>) -> MutexGuard<'_, Found> {
    found.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

impl Walk {
    fn start(root: PathBuf) -> Walk {
        let found = Arc::new(Mutex::new(Found::default()));
        let shared = found.clone();
        let thread = std::thread::Builder::new()
            .name("mention-walk".into())
            .spawn(move || walk(&root, &shared))
            .ok();
        if thread.is_none() {
            lock(&found).done = true;
        }
        Walk { found, thread }
    }
}

/// Lists the files under `root` into `found`, a batch at a time.
fn walk(root: &Path, found: &Mutex<Found>) {
    let mut batch = Vec::with_capacity(BATCH);
    let mut count = 0;
    let mut cut = false;
    let walker = ignore::WalkBuilder::new(root)
        .hidden(false)
        .follow_links(false)
        .filter_entry(|entry| entry.file_name() != ".git")
        .build();
    for entry in walker.flatten() {
        if !entry.file_type().is_some_and(|kind| kind.is_file()) {
            continue;
        }
        let Some(path) = entry
            .path()
            .strip_prefix(root)
            .ok()
            .and_then(Path::to_str)
            .filter(|path| mentionable(path))
        else {
            continue;
        };
        if count == MAX_FILES {
            cut = true;
            break;
        }
        count += 1;
        batch.push(path.to_string());
        if batch.len() == BATCH {
            lock(found).paths.append(&mut batch);
        }
    }
    let mut found = lock(found);
    found.paths.append(&mut batch);
    found.cut = cut;
    found.done = true;
}

/// Whether a path can be written as a mention the core reads back: not one with a
/// quote or a line break (which no quoting carries), nor a control character.
fn mentionable(path: &str) -> bool {
    !path.is_empty() && !path.chars().any(|c| c == '"' || c.is_control())
}

/// `path` as it goes into the input: `@path`, or `@"path"` when it holds whitespace.
pub fn mention_of(path: &str) -> String {
    if path.chars().any(char::is_whitespace) {
        format!("@\"{path}\"")
    } else {
        format!("@{path}")
    }
}

/// The picker: the walk (started at the first `@`) and the ranking of the query now.
pub struct Picker {
    root: Option<PathBuf>,
    walk: Option<Walk>,
    /// The walk's paths, moved over from it as it finds them.
    paths: Vec<String>,
    done: bool,
    cut: bool,
    /// The query ranked, and its results.
    query: Option<String>,
    best: Vec<usize>,
    /// Every match of the query (its count shows under the picker).
    all: Vec<usize>,
    selected: usize,
    /// How many paths the last ranking looked at: its matches narrow the next query's
    /// only while no more were listed since.
    ranked_over: usize,
}

impl Picker {
    pub fn new() -> Self {
        Picker {
            root: None,
            walk: None,
            paths: Vec::new(),
            done: false,
            cut: false,
            query: None,
            best: Vec::new(),
            all: Vec::new(),
            selected: 0,
            ranked_over: 0,
        }
    }

    /// Where files are listed from (the workspace); nothing is read until the first `@`.
    pub fn set_root(&mut self, root: PathBuf) {
        if self.root.as_ref() != Some(&root) {
            *self = Picker::new();
            self.root = Some(root);
        }
    }

    /// Whether the walk is still running (the picker then animates, to show more).
    pub fn listing(&self) -> bool {
        self.walk.is_some() && !self.done
    }

    /// Ranks `query` (the text after the `@`), starting the walk the first time.
    pub fn search(&mut self, query: &str) {
        if self.walk.is_none()
            && let Some(root) = &self.root
        {
            self.walk = Some(Walk::start(root.clone()));
        }
        self.take_found();
        if self.query.as_deref() == Some(query) {
            return;
        }
        // A query that extends the last only narrows its matches, when they were
        // looked for among every path listed so far.
        let among = self
            .query
            .as_deref()
            .filter(|last| {
                query.starts_with(last) && !last.is_empty() && self.ranked_over == self.paths.len()
            })
            .map(|_| std::mem::take(&mut self.all));
        self.rank(query, among.as_deref());
    }

    /// Takes what the walk found since last time; whether there was anything new.
    pub fn refresh(&mut self) -> bool {
        let before = (self.paths.len(), self.done);
        self.take_found();
        if (self.paths.len(), self.done) == before {
            return false;
        }
        if let Some(query) = self.query.take() {
            self.rank(&query, None);
        }
        true
    }

    fn take_found(&mut self) {
        let Some(walk) = &self.walk else {
            return;
        };
        let mut found = lock(&walk.found);
        self.paths.append(&mut found.paths);
        self.done = found.done;
        self.cut = found.cut;
    }

    fn rank(&mut self, query: &str, among: Option<&[usize]>) {
        let ranked = fuzzy::rank(&fuzzy::Query::new(query), &self.paths, among, ROWS);
        self.best = ranked.best;
        self.all = ranked.all;
        self.query = Some(query.to_string());
        self.selected = self.selected.min(self.best.len().saturating_sub(1));
        self.ranked_over = self.paths.len();
    }

    /// When nothing matches yet and the listing runs on, waits for it a little (at most
    /// `limit`): until something matches or it ends. For Tab or Enter typed in the same
    /// burst as the `@`, before the listing had a moment; the picker never waits to draw.
    pub fn settle(&mut self, limit: std::time::Duration) {
        let deadline = std::time::Instant::now() + limit;
        while self.best.is_empty() && self.listing() && std::time::Instant::now() < deadline {
            std::thread::sleep(std::time::Duration::from_millis(2));
            self.refresh();
        }
    }

    /// Forgets the query (the picker closed); the files listed stay.
    pub fn close(&mut self) {
        self.query = None;
        self.best.clear();
        self.all.clear();
        self.selected = 0;
    }

    pub fn move_selection(&mut self, down: bool) {
        let count = self.best.len();
        if count == 0 {
            return;
        }
        self.selected = if down {
            (self.selected + 1) % count
        } else {
            self.selected.checked_sub(1).unwrap_or(count - 1)
        };
    }

    /// The highlighted file's path.
    pub fn chosen(&self) -> Option<&str> {
        self.best
            .get(self.selected)
            .map(|&index| self.paths[index].as_str())
    }

    /// The results in order, for tests.
    #[cfg(test)]
    pub fn results(&self) -> Vec<&str> {
        self.best
            .iter()
            .map(|&index| self.paths[index].as_str())
            .collect()
    }

    /// Waits for the walk to end (tests only: the workbench never waits).
    #[cfg(test)]
    pub fn wait_listed(&mut self) {
        if let Some(thread) = self.walk.as_mut().and_then(|walk| walk.thread.take()) {
            let _ = thread.join();
        }
        self.refresh();
    }

    /// The line under the matches: how many, and how the listing stands.
    fn status(&self) -> String {
        let total = self.paths.len();
        let mut status = format!("{} of {total} files", self.all.len());
        if !self.done {
            status.push_str(" · listing…");
        } else if self.cut {
            status.push_str(&format!(" · listing cut at {MAX_FILES} files"));
        }
        status
    }

    /// Draws the picker just above `input` (below it when there is no room above).
    pub fn render(&self, input: Rect, size: Rect, theme: &Theme, buf: &mut Buffer) {
        let rows = u16::try_from(self.best.len().max(1)).unwrap_or(1) + 3;
        let room_above = input.y.saturating_sub(size.y);
        let room_below = size.bottom().saturating_sub(input.bottom());
        let width = input.width.max(60).min(size.right().saturating_sub(input.x));
        let area = if room_above >= rows.min(4) || room_above >= room_below {
            let height = rows.min(room_above);
            Rect::new(input.x, input.y - height, width, height)
        } else {
            Rect::new(input.x, input.bottom(), width, rows.min(room_below))
        };
        if area.height < 3 || area.width < 10 {
            return;
        }
        let room = usize::from(area.width.saturating_sub(4));
        let query = fuzzy::Query::new(self.query.as_deref().unwrap_or_default());
        let mut lines: Vec<Line<'static>> = self
            .best
            .iter()
            .enumerate()
            .map(|(row, &index)| {
                let path = &self.paths[index];
                let positions = query.score(path).map(|m| m.positions).unwrap_or_default();
                let line = highlighted(path, &positions, room, theme);
                if row == self.selected {
                    theme.selected(line)
                } else {
                    line
                }
            })
            .collect();
        if lines.is_empty() {
            let empty = if self.done {
                "no file matches"
            } else {
                "listing files…"
            };
            lines.push(Line::from(Span::styled(empty, theme.dim)));
        }
        lines.push(Line::from(Span::styled(
            wrap::truncate(&self.status(), room),
            theme.dim,
        )));
        popup(
            buf,
            area,
            "Files · Tab/Enter takes · Esc closes",
            lines,
            0,
            theme,
            false,
        );
    }
}

impl Default for Picker {
    fn default() -> Self {
        Picker::new()
    }
}

/// `path` cut to `room` columns (its start dropped first: the file's name matters most),
/// the matched characters in the key colour.
fn highlighted(path: &str, positions: &[usize], room: usize, theme: &Theme) -> Line<'static> {
    // A file's name is the workspace's, not ours: a bidi control in it is shown, not
    // obeyed (control characters never get this far: such names are not listed).
    let shown: Vec<(usize, String)> = path
        .char_indices()
        .map(|(at, c)| {
            (
                at,
                miniagent_text::visible(c.encode_utf8(&mut [0; 4])).into_owned(),
            )
        })
        .collect();
    let width: usize = shown.iter().map(|(_, s)| wrap::display_width(s)).sum();
    let mut skip = width.saturating_sub(room);
    let mut spans = Vec::new();
    if skip > 0 {
        spans.push(Span::styled("…", theme.dim));
        skip += 1;
    }
    let mut column = 0;
    for (at, text) in shown {
        column += wrap::display_width(&text);
        if column <= skip {
            continue;
        }
        let style: Style = if positions.contains(&at) {
            theme.key
        } else {
            theme.text
        };
        spans.push(Span::styled(text, style));
    }
    Line::from(spans)
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn a_mention_is_quoted_only_with_whitespace_and_unquotable_names_are_left_out() {
        assert_eq!(mention_of("src/main.rs"), "@src/main.rs");
        assert_eq!(mention_of("notes/a b.md"), "@\"notes/a b.md\"");
        assert!(mentionable("日本語.md"));
        assert!(!mentionable("say \"hi\".txt"));
        assert!(!mentionable("line\nbreak"));
        assert!(!mentionable("esc\u{1b}[31m"));
    }

    /// The figures the picker is held to on a 100,000-file tree: time to the first
    /// results after the `@`, to the whole listing, and per keystroke. Not run by
    /// default (it writes 100,000 files); run it with
    /// `cargo test -p miniagent-tui --release mention::tests::measure -- --ignored --nocapture`.
    #[test]
    #[ignore = "a measurement on 100,000 files written for it; run by hand"]
    fn measure_on_a_hundred_thousand_files() {
        use std::time::{Duration, Instant};
        let root = std::env::temp_dir().join(format!("miniagent-picker-100k-{}", std::process::id()));
        for dir in 0..1_000 {
            let folder = root.join(format!("crate{}/src/module{dir}", dir % 37));
            std::fs::create_dir_all(&folder).unwrap();
            for file in 0..100 {
                std::fs::write(folder.join(format!("file_{file}_item.rs")), "").unwrap();
            }
        }
        let mut picker = Picker::new();
        picker.set_root(root.clone());
        let started = Instant::now();
        picker.search("");
        while picker.best.is_empty() {
            std::thread::sleep(Duration::from_micros(200));
            picker.refresh();
        }
        let first = started.elapsed();
        picker.wait_listed();
        let listed = started.elapsed();
        assert_eq!(picker.paths.len(), 100_000);
        let mut slowest = Duration::ZERO;
        let query = "module42/file_7_item";
        for end in 1..=query.len() {
            let started = Instant::now();
            picker.search(&query[..end]);
            slowest = slowest.max(started.elapsed());
        }
        assert_eq!(picker.chosen(), Some("crate5/src/module42/file_7_item.rs"));
        // A fresh query (the first key after the `@`) ranks every path.
        picker.close();
        let started = Instant::now();
        picker.search("m");
        let full = started.elapsed();
        println!(
            "100000 files: first results {first:?}, all listed {listed:?}, slowest keystroke of {query:?} {slowest:?}, a full ranking {full:?}"
        );
        let _ = std::fs::remove_dir_all(&root);
    }
}
