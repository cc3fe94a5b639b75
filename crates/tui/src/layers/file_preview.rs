//! A file of the tree, previewed (Enter on a file, or a click): highlighted, scrolled.

use std::path::Path;

use crossterm::event::KeyEvent;
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;

use super::{Layer, text_area};
use crate::app::App;
use crate::keys::KeyHint;
use crate::keys::{OverlayAction, OverlayContext};
use crate::popup::popup;
use crate::tree::{FilePreview, PreviewAction};

/// The preview of one file, titled with its path in the workspace.
pub struct FilePreviewLayer {
    pub preview: FilePreview,
    title: String,
}

/// Opens the preview of `path`.
pub fn open(app: &mut App, path: &Path) {
    let preview = FilePreview::open(path, app.look.theme());
    let title = preview.title(app.tree.root());
    app.open_layer(Box::new(FilePreviewLayer { preview, title }));
}

fn action(action: PreviewAction) -> OverlayAction {
    match action {
        PreviewAction::Ignored => OverlayAction::Ignored,
        PreviewAction::Changed => OverlayAction::Changed,
        PreviewAction::Close => OverlayAction::Close,
    }
}

impl Layer for FilePreviewLayer {
    type State = crate::app::App;

    fn title(&self) -> String {
        self.title.clone()
    }

    fn key_hints(&self) -> Vec<KeyHint> {
        self.preview.key_hints()
    }

    fn on_key(&mut self, key: KeyEvent, _context: OverlayContext<'_>) -> OverlayAction {
        action(self.preview.on_key(key))
    }

    fn scroll(&mut self, lines: i32) -> bool {
        self.preview.on_scroll(lines) != PreviewAction::Ignored
    }

    fn render(&self, app: &App, size: Rect, buf: &mut Buffer) {
        let inner = popup(buf, text_area(size), &self.title, Vec::new(), 0, app, false);
        self.preview.render(inner, buf, app.look.theme());
    }
}
