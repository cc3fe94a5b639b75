//! A file of the tree, previewed (Enter on a file, or a click): highlighted, scrolled.
//! A file the session changed (marked in the tree) shows what the session changed in
//! it: the preview asks the agent for the session's diff (`Op::Diff`, the whole
//! session) as it opens, and shows the file's diff once the answer names it; `d` turns
//! between the diff and the file as it is.

use std::path::Path;

use crossterm::event::{KeyCode, KeyEvent};
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;

use super::diff::file::FileView;
use super::{Layer, text_area};
use crate::app::App;
use crate::keys::KeyHint;
use crate::keys::{OverlayAction, OverlayContext};
use crate::popup::popup;
use crate::tree::{FilePreview, PreviewAction};
use miniagent_protocol::{Event, Op};

/// The preview of one file, titled with its path in the workspace.
pub struct FilePreviewLayer {
    pub preview: FilePreview,
    title: String,
    changes: Changes,
}

/// What the session changed in the previewed file.
enum Changes {
    /// Not a file the session changed, or the answer did not name it.
    None,
    /// Asked for; the file's path relative to the workspace, as the answer names it.
    Awaited(String),
    /// Its diff, shown while `showing` (`d` turns to the file as it is and back).
    Shown { view: Box<FileView>, showing: bool },
}

/// Opens the preview of `path`, asking for the session's changes when the tree marks
/// it as changed this session.
pub fn open(app: &mut App, path: &Path) {
    let preview = FilePreview::open(path, app.look.theme());
    let title = preview.title(app.tree.root());
    let relative = path
        .strip_prefix(app.tree.root())
        .ok()
        .and_then(|relative| relative.to_str())
        .filter(|relative| !relative.is_empty())
        .map(|relative| relative.replace(std::path::MAIN_SEPARATOR, "/"));
    let changes = match relative {
        // A recording holds no agent to ask.
        Some(relative) if app.replay.is_none() && app.tree.changed_this_session(path) => {
            Changes::Awaited(relative)
        }
        _ => Changes::None,
    };
    let ask = matches!(changes, Changes::Awaited(_));
    app.open_layer(Box::new(FilePreviewLayer {
        preview,
        title,
        changes,
    }));
    if ask {
        app.send(Op::Diff { turn: None });
    }
}

fn action(action: PreviewAction) -> OverlayAction {
    match action {
        PreviewAction::Ignored => OverlayAction::Ignored,
        PreviewAction::Changed => OverlayAction::Changed,
        PreviewAction::Close => OverlayAction::Close,
    }
}

impl FilePreviewLayer {
    /// The file's diff, while it is shown.
    fn diff_shown(&self) -> Option<&FileView> {
        match &self.changes {
            Changes::Shown { view, showing: true } => Some(view),
            _ => None,
        }
    }

    /// Whether the file's diff is what it shows now.
    #[cfg(test)]
    pub fn shows_diff(&self) -> bool {
        self.diff_shown().is_some()
    }
}

impl Layer for FilePreviewLayer {
    type State = crate::app::App;

    fn title(&self) -> String {
        match &self.changes {
            Changes::Shown { showing: true, .. } => format!("{} · changes this session", self.title),
            _ => self.title.clone(),
        }
    }

    fn key_hints(&self) -> Vec<KeyHint> {
        let mut hints = self.preview.key_hints();
        match &self.changes {
            Changes::Shown { showing: true, .. } => hints.insert(0, KeyHint::new("d", "the file")),
            Changes::Shown { showing: false, .. } => hints.insert(0, KeyHint::new("d", "its changes")),
            Changes::None | Changes::Awaited(_) => {}
        }
        hints
    }

    fn on_key(&mut self, key: KeyEvent, _context: OverlayContext<'_>) -> OverlayAction {
        if let Changes::Shown { view, showing } = &mut self.changes {
            if key.code == KeyCode::Char('d') && key.modifiers.is_empty() {
                *showing = !*showing;
                return OverlayAction::Changed;
            }
            if *showing {
                return match key.code {
                    KeyCode::Esc | KeyCode::Char('q') => OverlayAction::Close,
                    _ => view.on_key(key),
                };
            }
        }
        action(self.preview.on_key(key))
    }

    fn scroll(&mut self, lines: i32) -> bool {
        match &mut self.changes {
            Changes::Shown { view, showing: true } => view.scroll(lines),
            _ => self.preview.on_scroll(lines) != PreviewAction::Ignored,
        }
    }

    fn render(&self, app: &App, size: Rect, buf: &mut Buffer) {
        let inner = popup(buf, text_area(size), &self.title(), Vec::new(), 0, app, false);
        match self.diff_shown() {
            Some(view) => view.render(inner, buf, app.look.theme()),
            None => self.preview.render(inner, buf, app.look.theme()),
        }
    }

    fn on_event(&mut self, event: &Event) -> bool {
        let Event::DiffReport {
            turn: None, files, ..
        } = event
        else {
            return false;
        };
        let Changes::Awaited(relative) = &self.changes else {
            return false;
        };
        self.changes = match files.iter().find(|file| file.path == *relative) {
            Some(file) => Changes::Shown {
                view: Box::new(super::diff::file::view(file)),
                showing: true,
            },
            None => Changes::None,
        };
        true
    }
}
