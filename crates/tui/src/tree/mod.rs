//! The workspace file tree pane and the read-only file preview overlay.
//!
//! The tree lists the workspace the way `git status` sees it (`.gitignore`, `.ignore`
//! and global excludes honoured, `.git/` hidden), loads folders lazily when they are
//! first expanded, and marks the files the agent created or changed in this session.
//! The preview shows one file with line numbers and syntax colours.

use std::cell::Cell;
use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::time::SystemTime;

use crossterm::event::{KeyCode, KeyEvent};
use ignore::WalkBuilder;
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};

use crate::keys::{KeyHint, is_plain_press};
use crate::text::wrap::truncate_spans;
use crate::theme::Theme;

/// What a tree handler did with an input.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum TreeAction {
    /// Not the tree's input (a key it does not bind, a click below the last row, a
    /// scroll at a limit); the caller may offer it to someone else.
    Ignored,
    /// The tree used the input; redraw it. A bound key is never `Ignored`, even when it
    /// changes nothing (Down on the last row), so that `j` or `k` at a limit is not
    /// passed on and typed into the prompt.
    Changed,
    /// The user asked to open this file in the preview.
    Open(PathBuf),
}

/// What a preview handler did with an input.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PreviewAction {
    /// Nothing happened (the key is not bound here, or the scroll hit a limit).
    Ignored,
    /// The view scrolled and should be redrawn.
    Changed,
    /// The user asked to close the preview.
    Close,
}

/// Columns of indentation per folder level.
const INDENT: usize = 2;
/// Rows a page key moves before the first render tells us the real height.
const DEFAULT_PAGE: usize = 10;

/// What a listed name is.
#[derive(Clone, Debug, PartialEq, Eq)]
enum EntryKind {
    Folder,
    File,
    /// Never followed, so a link to an ancestor cannot make the tree loop.
    Symlink {
        target: String,
        to_folder: bool,
    },
}

/// One name in a folder listing.
#[derive(Clone, Debug)]
struct Entry {
    path: PathBuf,
    /// The name as shown: control and invisible formatting characters escaped.
    name: String,
    kind: EntryKind,
    /// A file whose mtime is at or after the session start (changed through `bash`, say).
    recent: bool,
}

/// A folder's contents as last read.
#[derive(Debug)]
enum Listing {
    Read(Vec<Entry>),
    Unreadable,
    /// The folder does not exist (a replayed session's workspace on another machine).
    Missing,
}

/// One visible row of the tree.
#[derive(Clone, Debug)]
struct Row {
    entry: Entry,
    depth: usize,
}

/// Whether the per-user git excludes file is consulted; tests turn it off so the
/// machine's own excludes cannot change what they see.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum GlobalExcludes {
    Use,
    #[cfg(test)]
    Skip,
}

/// The workspace file tree pane: folders first, lazily loaded, with the agent's
/// changes of this session marked.
#[derive(Debug)]
pub struct FileTree {
    root: PathBuf,
    session_start: SystemTime,
    global_excludes: GlobalExcludes,
    /// Listings of the root and of the folders reached through expanded folders.
    listings: HashMap<PathBuf, Listing>,
    /// Each listed folder's modification time when it was read (an entry added, removed
    /// or renamed changes it).
    listed_at: HashMap<PathBuf, Option<SystemTime>>,
    /// Expanded folders, kept while a parent is collapsed so reopening restores them.
    expanded: HashSet<PathBuf>,
    /// Files named by `mark_touched`.
    marked: HashSet<PathBuf>,
    /// Folders holding a marked or recent file somewhere below them.
    touched_folders: HashSet<PathBuf>,
    rows: Vec<Row>,
    selected: usize,
    /// The first visible row (a cell: drawing, which borrows the app immutably, keeps
    /// the selection in view).
    offset: Cell<usize>,
    /// The height of the last render, for paging and keeping the selection in view.
    page: Cell<usize>,
}

impl FileTree {
    /// Loads only the root's entries; folders load when first expanded.
    pub fn new(root: PathBuf, session_start: SystemTime) -> Self {
        Self::with_global_excludes(root, session_start, GlobalExcludes::Use)
    }

    fn with_global_excludes(
        root: PathBuf,
        session_start: SystemTime,
        global_excludes: GlobalExcludes,
    ) -> Self {
        // The file tools report resolved paths; resolving the root too lets their
        // `mark_touched` paths match the rows.
        let root = root.canonicalize().unwrap_or(root);
        let mut tree = Self {
            root,
            session_start,
            global_excludes,
            listings: HashMap::new(),
            listed_at: HashMap::new(),
            expanded: HashSet::new(),
            marked: HashSet::new(),
            touched_folders: HashSet::new(),
            rows: Vec::new(),
            selected: 0,
            offset: Cell::new(0),
            page: Cell::new(DEFAULT_PAGE),
        };
        tree.reload();
        tree
    }

    /// Re-reads every expanded folder (after each tool call): new files appear, deleted
    /// ones go, expansion and selection (by path) are kept.
    pub fn refresh(&mut self) {
        self.expanded.retain(|folder| folder.is_dir());
        self.listings.clear();
        self.reload();
    }

    /// Re-reads the expanded folders whose entries changed since they were read (by
    /// their modification time): cheap enough for every focus change, however large a
    /// folder is. A file changed in place keeps its folder's time, so its `●` waits for
    /// the next [`refresh`](Self::refresh).
    pub fn refresh_changed(&mut self) {
        self.expanded.retain(|folder| folder.is_dir());
        let listed_at = &self.listed_at;
        self.listings.retain(|folder, _| {
            listed_at
                .get(folder)
                .is_some_and(|at| *at == folder_time(folder) && at.is_some())
        });
        self.reload();
    }

    /// Marks a file as created/modified by the agent in this session.
    #[cfg(test)]
    pub fn mark_touched(&mut self, path: &Path) {
        self.mark_all_touched([path]);
    }

    /// [`Self::mark_touched`] for many files at once: the folders are worked out once,
    /// not once per file (a command that made 20,000 files made it quadratic).
    pub fn mark_all_touched<'a>(&mut self, paths: impl IntoIterator<Item = &'a Path>) {
        for path in paths {
            let path = if path.is_relative() {
                self.root.join(path)
            } else {
                path.to_path_buf()
            };
            let path = path.canonicalize().unwrap_or(path);
            self.marked.insert(path);
        }
        self.update_touched_folders();
    }

    /// Whether the tree marks `path` as changed this session (by the agent's tools, or
    /// written since the session started).
    pub fn changed_this_session(&self, path: &Path) -> bool {
        let path = path.canonicalize().unwrap_or_else(|_| path.to_path_buf());
        self.marked.contains(&path)
            || self
                .rows
                .iter()
                .any(|row| row.entry.recent && row.entry.path == path)
    }

    /// A rewind put `paths` (relative to the workspace) back as they were: the agent's
    /// marks on them go, and the folders are read again (a file the rewind removed
    /// leaves, one it brought back shows). A file whose time on disk is still after the
    /// session's start keeps its `●` from that, as any recent file does.
    pub fn put_back(&mut self, paths: &[String]) {
        for path in paths {
            let path = self.root.join(path);
            let resolved = path.canonicalize().unwrap_or(path);
            self.marked.remove(&resolved);
        }
        self.refresh();
        self.update_touched_folders();
    }

    /// Handles a key while the tree has focus.
    pub fn on_key(&mut self, key: KeyEvent) -> TreeAction {
        if !is_plain_press(&key) {
            return TreeAction::Ignored;
        }
        let action = match key.code {
            KeyCode::Up | KeyCode::Char('k') => self.select(self.selected.saturating_sub(1)),
            KeyCode::Down | KeyCode::Char('j') => self.select(self.selected.saturating_add(1)),
            KeyCode::PageUp => self.select(self.selected.saturating_sub(self.page.get())),
            KeyCode::PageDown => self.select(self.selected.saturating_add(self.page.get())),
            KeyCode::Home => self.select(0),
            KeyCode::End => self.select(usize::MAX),
            KeyCode::Left | KeyCode::Char('h') => self.collapse_or_parent(),
            KeyCode::Right | KeyCode::Char('l') => self.expand_or_child(),
            KeyCode::Enter => self.activate(),
            _ => return TreeAction::Ignored,
        };
        match action {
            TreeAction::Ignored => TreeAction::Changed,
            used => used,
        }
    }

    /// A click on `row` rows below the top of the pane's inner area: select it; a click
    /// on the selected row toggles a folder or opens a file.
    pub fn on_click(&mut self, row: u16) -> TreeAction {
        let index = self.offset.get().saturating_add(usize::from(row));
        if index >= self.rows.len() {
            return TreeAction::Ignored;
        }
        if index == self.selected {
            return self.activate();
        }
        self.selected = index;
        self.scroll_to_selection();
        TreeAction::Changed
    }

    /// Scrolls the view by `lines` (negative: up), dragging the selection along only as
    /// far as needed to keep it visible.
    pub fn on_scroll(&mut self, lines: i32) -> TreeAction {
        let page = self.page.get();
        let max_offset = self.rows.len().saturating_sub(page);
        let step = usize::try_from(lines.unsigned_abs()).unwrap_or(usize::MAX);
        let offset = if lines < 0 {
            self.offset.get().saturating_sub(step)
        } else {
            self.offset.get().saturating_add(step).min(max_offset)
        };
        if offset == self.offset.get() {
            return TreeAction::Ignored;
        }
        self.offset.set(offset);
        let last_visible = offset + page.max(1) - 1;
        // max-then-min rather than `clamp`, which panics if the bounds ever crossed.
        self.selected = self
            .selected
            .max(offset)
            .min(last_visible)
            .min(self.rows.len().saturating_sub(1));
        TreeAction::Changed
    }

    /// Draws into the pane's inner area (the caller draws the border and title).
    pub fn render(&self, area: Rect, buf: &mut Buffer, theme: &Theme, focused: bool) {
        self.page.set(usize::from(area.height).max(1));
        if area.is_empty() {
            return;
        }
        let width = usize::from(area.width);
        if self.rows.is_empty() {
            let note = match self.listings.get(&self.root) {
                Some(Listing::Unreadable) => "(unreadable)",
                Some(Listing::Missing) => {
                    // The path (its end, which names the project), then why nothing is listed.
                    let path = keep_end(&self.root.display().to_string(), width);
                    buf.set_stringn(area.x, area.y, &path, width, theme.text);
                    if area.height > 1 {
                        buf.set_stringn(area.x, area.y + 1, "(not on this machine)", width, theme.dim);
                    }
                    return;
                }
                Some(Listing::Read(_)) | None => "(empty)",
            };
            buf.set_stringn(area.x, area.y, note, width, theme.dim);
            return;
        }
        self.scroll_to_selection();
        let visible = self
            .rows
            .iter()
            .enumerate()
            .skip(self.offset.get())
            .take(usize::from(area.height));
        for (y, (index, row)) in (area.y..).zip(visible) {
            let line = self.row_line(row, theme, width);
            buf.set_line(area.x, y, &line, area.width);
            if index == self.selected {
                if focused {
                    buf.set_style(Rect::new(area.x, y, area.width, 1), theme.selection);
                } else {
                    // Out of focus the selection stays findable without competing with
                    // the focused pane's highlight.
                    let to_cols = |columns: usize| u16::try_from(columns).unwrap_or(u16::MAX).min(area.width);
                    let indent = to_cols(row.depth * INDENT);
                    let label = to_cols(line.width()).saturating_sub(indent);
                    let underline = Style::default().add_modifier(Modifier::UNDERLINED);
                    buf.set_style(Rect::new(area.x.saturating_add(indent), y, label, 1), underline);
                }
            }
        }
    }

    /// The bindings the tree offers, for the help overlay and the bottom bar.
    pub fn key_hints(&self) -> Vec<KeyHint> {
        vec![
            KeyHint::new("↑/↓", "move"),
            KeyHint::new("←/→", "collapse / expand"),
            KeyHint::new("Enter", "open / expand"),
            KeyHint::new("PgUp/PgDn", "page"),
            KeyHint::new("Home/End", "first / last"),
        ]
    }

    /// The workspace folder the tree shows (resolved when it exists).
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// Loads whatever expanded folders lack a listing, then rebuilds the rows keeping
    /// the selected path selected.
    fn reload(&mut self) {
        let selected_path = self.rows.get(self.selected).map(|row| row.entry.path.clone());
        let mut pending = vec![self.root.clone()];
        while let Some(folder) = pending.pop() {
            if !self.listings.contains_key(&folder) {
                // The time first: a change made while the folder is read is seen next time.
                self.listed_at.insert(folder.clone(), folder_time(&folder));
                let listing = read_folder(&folder, self.session_start, self.global_excludes);
                self.listings.insert(folder.clone(), listing);
            }
            if let Some(Listing::Read(entries)) = self.listings.get(&folder) {
                let expanded = entries
                    .iter()
                    .filter(|entry| entry.kind == EntryKind::Folder && self.expanded.contains(&entry.path));
                pending.extend(expanded.map(|entry| entry.path.clone()));
            }
        }
        self.rows = self.visible_rows();
        self.selected = selected_path
            .and_then(|path| self.rows.iter().position(|row| row.entry.path == path))
            .unwrap_or(self.selected)
            .min(self.rows.len().saturating_sub(1));
        self.update_touched_folders();
        self.scroll_to_selection();
    }

    /// The rows in display order: a depth-first walk through the expanded folders.
    fn visible_rows(&self) -> Vec<Row> {
        let mut rows = Vec::new();
        let Some(Listing::Read(top)) = self.listings.get(&self.root) else {
            return rows;
        };
        // An explicit stack, so a very deep tree cannot overflow the call stack.
        let mut stack: Vec<(&[Entry], usize)> = vec![(top.as_slice(), 0)];
        while let Some((entries, next)) = stack.last_mut() {
            let Some(entry) = entries.get(*next) else {
                stack.pop();
                continue;
            };
            *next += 1;
            let depth = stack.len() - 1;
            rows.push(Row {
                entry: entry.clone(),
                depth,
            });
            if entry.kind == EntryKind::Folder
                && self.expanded.contains(&entry.path)
                && let Some(Listing::Read(children)) = self.listings.get(&entry.path)
            {
                stack.push((children.as_slice(), 0));
            }
        }
        rows
    }

    fn update_touched_folders(&mut self) {
        let recent = self
            .listings
            .values()
            .filter_map(|listing| match listing {
                Listing::Read(entries) => Some(entries),
                Listing::Unreadable | Listing::Missing => None,
            })
            .flatten()
            .filter(|entry| entry.recent)
            .map(|entry| &entry.path);
        let mut folders = HashSet::new();
        for path in self.marked.iter().chain(recent) {
            for folder in path.ancestors().skip(1) {
                if folder == self.root
                    || !folder.starts_with(&self.root)
                    || !folders.insert(folder.to_path_buf())
                {
                    break;
                }
            }
        }
        self.touched_folders = folders;
    }

    fn select(&mut self, index: usize) -> TreeAction {
        let index = index.min(self.rows.len().saturating_sub(1));
        if self.rows.is_empty() || index == self.selected {
            return TreeAction::Ignored;
        }
        self.selected = index;
        self.scroll_to_selection();
        TreeAction::Changed
    }

    fn scroll_to_selection(&self) {
        let page = self.page.get().max(1);
        let mut offset = self.offset.get();
        if self.selected < offset {
            offset = self.selected;
        } else if self.selected >= offset + page {
            offset = self.selected + 1 - page;
        }
        // No blank tail after a collapse or a deletion when rows above could fill it.
        self.offset.set(offset.min(self.rows.len().saturating_sub(page)));
    }

    /// Enter, or a click on the selected row.
    fn activate(&mut self) -> TreeAction {
        let Some(row) = self.rows.get(self.selected) else {
            return TreeAction::Ignored;
        };
        match &row.entry.kind {
            EntryKind::Folder => {
                let path = row.entry.path.clone();
                self.toggle(path)
            }
            EntryKind::File | EntryKind::Symlink { to_folder: false, .. } => {
                TreeAction::Open(row.entry.path.clone())
            }
            EntryKind::Symlink { to_folder: true, .. } => TreeAction::Ignored,
        }
    }

    fn toggle(&mut self, folder: PathBuf) -> TreeAction {
        if self.expanded.remove(&folder) {
            self.rows = self.visible_rows();
            self.scroll_to_selection();
            return TreeAction::Changed;
        }
        // Expanding shows the folder as it is now, not as it was when last opened.
        self.listings.retain(|listed, _| !listed.starts_with(&folder));
        self.expanded.insert(folder);
        self.reload();
        TreeAction::Changed
    }

    fn collapse_or_parent(&mut self) -> TreeAction {
        let Some(row) = self.rows.get(self.selected) else {
            return TreeAction::Ignored;
        };
        if row.entry.kind == EntryKind::Folder && self.expanded.contains(&row.entry.path) {
            let path = row.entry.path.clone();
            return self.toggle(path);
        }
        let Some(parent_depth) = row.depth.checked_sub(1) else {
            return TreeAction::Ignored;
        };
        let parent = self.rows[..self.selected]
            .iter()
            .rposition(|above| above.depth == parent_depth);
        match parent {
            Some(index) => self.select(index),
            None => TreeAction::Ignored,
        }
    }

    fn expand_or_child(&mut self) -> TreeAction {
        let Some(row) = self.rows.get(self.selected) else {
            return TreeAction::Ignored;
        };
        if row.entry.kind != EntryKind::Folder {
            return TreeAction::Ignored;
        }
        if !self.expanded.contains(&row.entry.path) {
            let path = row.entry.path.clone();
            return self.toggle(path);
        }
        let depth = row.depth;
        match self.rows.get(self.selected + 1) {
            Some(child) if child.depth > depth => self.select(self.selected + 1),
            _ => TreeAction::Ignored,
        }
    }

    /// One row's text, cut to `width` columns.
    fn row_line(&self, row: &Row, theme: &Theme, width: usize) -> Line<'static> {
        let entry = &row.entry;
        let mut pieces: Vec<Span<'static>> = vec![Span::styled(" ".repeat(row.depth * INDENT), theme.text)];
        match &entry.kind {
            EntryKind::Folder => {
                let expanded = self.expanded.contains(&entry.path);
                let arrow = if expanded { "▾ " } else { "▸ " };
                pieces.push(Span::styled(arrow, theme.dim));
                pieces.push(Span::styled(format!("{}/", entry.name), theme.accent));
                if self.touched_folders.contains(&entry.path) {
                    pieces.push(Span::styled(" •", theme.dim));
                }
                if expanded
                    && matches!(
                        self.listings.get(&entry.path),
                        Some(Listing::Unreadable | Listing::Missing)
                    )
                {
                    pieces.push(Span::styled(" (unreadable)", theme.error));
                }
            }
            EntryKind::File => {
                if entry.recent || self.marked.contains(&entry.path) {
                    pieces.push(Span::styled("● ", theme.warning));
                } else {
                    pieces.push(Span::styled("  ", theme.text));
                }
                pieces.push(Span::styled(entry.name.clone(), theme.text));
            }
            EntryKind::Symlink { target, to_folder } => {
                let slash = if *to_folder { "/" } else { "" };
                pieces.push(Span::styled("  ", theme.text));
                pieces.push(Span::styled(format!("{}{slash}", entry.name), theme.text));
                pieces.push(Span::styled(format!(" → {target}"), theme.dim));
            }
        }
        Line::from(truncate_spans(&pieces, width))
    }
}

/// The last `width` columns of `text`, with `…` in front when cut.
fn keep_end(text: &str, width: usize) -> String {
    use crate::text::wrap::display_width;
    if display_width(text) <= width {
        return text.to_string();
    }
    if width == 0 {
        return String::new();
    }
    let mut kept: Vec<char> = Vec::new();
    let mut used = 1;
    for c in text.chars().rev() {
        let columns = display_width(c.encode_utf8(&mut [0; 4]));
        if used + columns > width {
            break;
        }
        used += columns;
        kept.push(c);
    }
    std::iter::once('…').chain(kept.into_iter().rev()).collect()
}

/// A folder's modification time, when it can be read.
fn folder_time(folder: &Path) -> Option<SystemTime> {
    std::fs::metadata(folder).and_then(|meta| meta.modified()).ok()
}

/// Reads one folder's entries through the ignore rules, sorted folders first and then
/// case-insensitively.
fn read_folder(folder: &Path, session_start: SystemTime, global_excludes: GlobalExcludes) -> Listing {
    // The walker skips folders it cannot read without saying so; asking first is the
    // only way to tell "unreadable" from "empty".
    if let Err(err) = std::fs::read_dir(folder) {
        return match err.kind() {
            std::io::ErrorKind::NotFound => Listing::Missing,
            _ => Listing::Unreadable,
        };
    }
    let walk = WalkBuilder::new(folder)
        .max_depth(Some(1))
        .hidden(false)
        .follow_links(false)
        .require_git(false)
        .git_global(global_excludes == GlobalExcludes::Use)
        .filter_entry(|entry| entry.file_name() != ".git")
        .build();
    let mut entries: Vec<(bool, String, Entry)> = walk
        .filter_map(Result::ok)
        .filter(|found| found.depth() == 1)
        .map(|found| {
            let raw_name = found.file_name().to_string_lossy().into_owned();
            let path = found.into_path();
            let entry = read_entry(path, &raw_name, session_start);
            let folder_like = matches!(
                entry.kind,
                EntryKind::Folder | EntryKind::Symlink { to_folder: true, .. }
            );
            (!folder_like, raw_name.to_lowercase(), entry)
        })
        .collect();
    entries.sort_by(|a, b| (a.0, &a.1, &a.2.name).cmp(&(b.0, &b.1, &b.2.name)));
    Listing::Read(entries.into_iter().map(|(_, _, entry)| entry).collect())
}

fn read_entry(path: PathBuf, raw_name: &str, session_start: SystemTime) -> Entry {
    let link_meta = std::fs::symlink_metadata(&path).ok();
    let file_type = link_meta.as_ref().map(|meta| meta.file_type());
    let kind = match file_type {
        Some(kind) if kind.is_symlink() => EntryKind::Symlink {
            target: std::fs::read_link(&path)
                .map(|target| escape_controls(&target.to_string_lossy()))
                .unwrap_or_else(|_| "?".to_string()),
            to_folder: path.is_dir(),
        },
        Some(kind) if kind.is_dir() => EntryKind::Folder,
        _ => EntryKind::File,
    };
    let recent = kind == EntryKind::File
        && link_meta
            .and_then(|meta| meta.modified().ok())
            .is_some_and(|modified| modified >= session_start);
    Entry {
        path,
        name: escape_controls(raw_name),
        kind,
        recent,
    }
}

/// Control characters (and the invisible ones that reorder or hide text) written as
/// escapes, so a file name cannot move the cursor or repaint the screen.
fn escape_controls(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        if needs_escape(c) {
            out.extend(c.escape_default());
        } else {
            out.push(c);
        }
    }
    out
}

fn needs_escape(c: char) -> bool {
    c.is_control()
        || matches!(c, '\u{200B}'..='\u{200F}' | '\u{202A}'..='\u{202E}' | '\u{2066}'..='\u{2069}' | '\u{FEFF}')
}

mod preview;
pub use preview::FilePreview;
pub(crate) use preview::{human_size, slice_columns};

#[cfg(test)]
mod tests;
