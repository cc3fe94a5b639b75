//! Overlays drawn over the panes: a tool call's detail, a file preview, stats, the
//! history inspector, the session picker, the trust and resume questions, the first-run
//! panel, themes, and any `layers::Layer` (an overlay in a file of its own).
//! The top one gets keys first. (The approval overlay is the app's own, above all of
//! these.)

use std::cell::Cell;

use crossterm::event::{KeyCode, KeyEvent};

pub use super::first_run::FirstRun;
use super::inspector::{HistoryInspector, INSPECTOR_HINTS, INSPECTOR_TITLE};
use super::keys::KeyHint;
pub use super::keys::OverlayAction;
use super::scroll::Scroll;
use super::sessions::{PICKER_HINTS, PICKER_TITLE, SessionPicker};
use super::tree::{FilePreview, PreviewAction};
use crate::protocol::{ApprovalRule, HistorySnapshot};

/// Asked before a log is continued that was recorded in another workspace, or is not
/// one of this user's recorded sessions: a log names its workspace and its remembered
/// approvals, and a crafted one may name anything.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ResumeQuestion {
    pub path: std::path::PathBuf,
    pub id: String,
    /// Where the log says it was recorded.
    pub recorded: String,
    /// This workspace, where it would continue.
    pub here: String,
    /// Whether `recorded` differs from `here`.
    pub elsewhere: bool,
    /// One of this user's recorded sessions.
    pub own: bool,
}

/// The question asked before a workspace's own `.miniagent/mcp.json` may start programs.
///
/// What it lists may be longer than the screen (a hostile file pads a command with
/// spaces or adds many servers), so it scrolls, and `y` counts only once the person has
/// scrolled to the end: nothing trusted was off screen.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TrustPrompt {
    /// One line per server it would start and per skill it would add.
    pub servers: Vec<String>,
    /// Trusted before, but `.miniagent/` changed since.
    pub changed: bool,
    /// The person's answer, once given; the event loop acts on it.
    pub answer: Option<bool>,
    /// Rows scrolled past.
    pub scroll: u16,
    /// Set by the last draw: the most `scroll` can be, and a page's rows.
    pub view: Cell<TrustView>,
}

/// How the trust prompt fit on screen when it was last drawn.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct TrustView {
    /// Rows below the first screenful (0: everything fits).
    pub max_scroll: u16,
    /// Rows of the list shown at once.
    pub page: u16,
}

impl TrustPrompt {
    pub fn new(servers: Vec<String>, changed: bool) -> Self {
        Self {
            servers,
            changed,
            answer: None,
            scroll: 0,
            view: Cell::new(TrustView::default()),
        }
    }

    /// Whether every line has been on screen, so `y` may trust.
    pub fn seen_all(&self) -> bool {
        self.scroll >= self.view.get().max_scroll
    }
}

/// What an overlay may read of the app while it handles a key.
#[derive(Clone, Copy, Debug)]
pub struct OverlayContext<'a> {
    /// The remembered approvals (for `/approvals`).
    pub rules: &'a [ApprovalRule],
    /// The latest history snapshot (for the inspector).
    pub history: Option<&'a HistorySnapshot>,
    /// The MCP servers and their states (for `/mcp`).
    pub mcp: &'a [(String, crate::protocol::McpState)],
}

/// An overlay. `History` is the summarized-history inspector (`/history`, F6).
pub enum Overlay {
    ToolDetail {
        call_id: String,
        scroll: Scroll,
    },
    FilePreview(Box<FilePreview>),
    Stats {
        scroll: Scroll,
    },
    History(HistoryInspector),
    /// `/resume`: the recorded sessions to continue.
    Sessions(SessionPicker),
    /// The workspace has its own MCP servers: trust it (and start them) or not.
    Trust(TrustPrompt),
    /// A log from elsewhere: continue it here or not.
    ResumeQuestion(ResumeQuestion),
    FirstRun(FirstRun),
    /// An overlay in a file of its own under `layers/`.
    Layer(Box<dyn super::layers::Layer>),
}

impl Overlay {
    /// Applies a key to this overlay.
    pub fn on_key(&mut self, key: KeyEvent, context: OverlayContext<'_>) -> OverlayAction {
        if let Overlay::Layer(layer) = self {
            return layer.on_key(key, context);
        }
        if let Overlay::History(inspector) = self {
            return inspector.on_key(key, context.history);
        }
        if let Overlay::Sessions(picker) = self {
            return picker.on_key(key);
        }
        if let Overlay::FilePreview(preview) = self {
            return match preview.on_key(key) {
                PreviewAction::Ignored => OverlayAction::Ignored,
                PreviewAction::Changed => OverlayAction::Changed,
                PreviewAction::Close => OverlayAction::Close,
            };
        }
        if let Overlay::ResumeQuestion(question) = self {
            return match key.code {
                KeyCode::Char('y') => OverlayAction::ResumeConfirmed(question.path.clone()),
                KeyCode::Char('n') | KeyCode::Esc => OverlayAction::Close,
                _ => OverlayAction::Ignored,
            };
        }
        if let Overlay::Trust(prompt) = self {
            let view = prompt.view.get();
            let scroll_to = |to: u16| to.min(view.max_scroll);
            return match key.code {
                KeyCode::Char('y') if prompt.seen_all() => {
                    prompt.answer = Some(true);
                    OverlayAction::Changed
                }
                KeyCode::Up | KeyCode::Char('k') => {
                    prompt.scroll = prompt.scroll.saturating_sub(1);
                    OverlayAction::Changed
                }
                KeyCode::Down | KeyCode::Char('j') => {
                    prompt.scroll = scroll_to(prompt.scroll.saturating_add(1));
                    OverlayAction::Changed
                }
                KeyCode::PageUp => {
                    prompt.scroll = prompt.scroll.saturating_sub(view.page.max(1));
                    OverlayAction::Changed
                }
                KeyCode::PageDown | KeyCode::Char(' ') => {
                    prompt.scroll = scroll_to(prompt.scroll.saturating_add(view.page.max(1)));
                    OverlayAction::Changed
                }
                KeyCode::Home => {
                    prompt.scroll = 0;
                    OverlayAction::Changed
                }
                KeyCode::End => {
                    prompt.scroll = view.max_scroll;
                    OverlayAction::Changed
                }
                KeyCode::Char('n') | KeyCode::Esc => {
                    prompt.answer = Some(false);
                    OverlayAction::Changed
                }
                _ => OverlayAction::Ignored,
            };
        }
        if let Overlay::FirstRun(first_run) = self {
            // Every key a person tries to get out with gets them out; the workbench works
            // on without a model (the app opens help after F1 and types the `/`).
            return match key.code {
                KeyCode::Enter if first_run.local_server.is_some() => {
                    first_run.accepted = true;
                    OverlayAction::Changed
                }
                KeyCode::Enter | KeyCode::Esc | KeyCode::F(1) | KeyCode::Char('q' | '/') => {
                    OverlayAction::Close
                }
                _ => OverlayAction::Ignored,
            };
        }
        if matches!(key.code, KeyCode::Esc | KeyCode::Char('q')) {
            return OverlayAction::Close;
        }
        let Some(scroll) = self.scroll_state() else {
            return OverlayAction::Ignored;
        };
        let moved = match key.code {
            KeyCode::Up | KeyCode::Char('k') => scroll.by(-1),
            KeyCode::Down | KeyCode::Char('j') => scroll.by(1),
            KeyCode::PageUp => scroll.page_up(),
            KeyCode::PageDown | KeyCode::Char(' ') => scroll.page_down(),
            KeyCode::Home | KeyCode::Char('g') => scroll.to_top(),
            KeyCode::End | KeyCode::Char('G') => scroll.to_bottom(),
            _ => return OverlayAction::Ignored,
        };
        if moved {
            OverlayAction::Changed
        } else {
            OverlayAction::Ignored
        }
    }

    /// The scroll position of an overlay whose text the overlay stack draws.
    pub fn scroll_state(&mut self) -> Option<&mut Scroll> {
        match self {
            Overlay::ToolDetail { scroll, .. } | Overlay::Stats { scroll } => Some(scroll),
            Overlay::FilePreview(_)
            | Overlay::History(_)
            | Overlay::Sessions(_)
            | Overlay::Trust(_)
            | Overlay::ResumeQuestion(_)
            | Overlay::FirstRun(_)
            | Overlay::Layer(_) => None,
        }
    }

    /// Scrolls by `lines` (negative: up), as the mouse wheel does. Returns whether
    /// anything moved.
    pub fn scroll(&mut self, lines: i32) -> bool {
        if let Some(scroll) = self.scroll_state() {
            return scroll.by(i64::from(lines));
        }
        match self {
            Overlay::FilePreview(preview) => preview.on_scroll(lines) != PreviewAction::Ignored,
            Overlay::History(inspector) => inspector.scroll_text(lines),
            Overlay::Layer(layer) => layer.scroll(lines),
            Overlay::ToolDetail { .. }
            | Overlay::Stats { .. }
            | Overlay::Sessions(_)
            | Overlay::Trust(_)
            | Overlay::ResumeQuestion(_)
            | Overlay::FirstRun(_) => false,
        }
    }

    /// Whether it shows the session itself, so it closes when another is resumed.
    pub fn about_session(&self) -> bool {
        match self {
            Overlay::History(_) | Overlay::Stats { .. } | Overlay::ToolDetail { .. } => true,
            Overlay::Layer(layer) => layer.about_session(),
            Overlay::FilePreview(_)
            | Overlay::Sessions(_)
            | Overlay::Trust(_)
            | Overlay::ResumeQuestion(_)
            | Overlay::FirstRun(_) => false,
        }
    }

    /// The overlay's frame title.
    pub fn title(&self, root: &std::path::Path) -> String {
        match self {
            Overlay::ToolDetail { .. } => "Tool call".to_string(),
            Overlay::FilePreview(preview) => preview.title(root),
            Overlay::Stats { .. } => "Session statistics".to_string(),
            Overlay::History(_) => INSPECTOR_TITLE.to_string(),
            Overlay::Sessions(_) => PICKER_TITLE.to_string(),
            Overlay::Trust(_) => "Trust this workspace?".to_string(),
            Overlay::ResumeQuestion(_) => "Continue this session here?".to_string(),
            Overlay::FirstRun(_) => "Welcome to miniagent".to_string(),
            Overlay::Layer(layer) => layer.title(),
        }
    }

    /// The keys this overlay takes, for the bottom bar.
    pub fn key_hints(&self) -> Vec<KeyHint> {
        match self {
            Overlay::FilePreview(preview) => preview.key_hints(),
            Overlay::Layer(layer) => layer.key_hints(),
            Overlay::History(_) => INSPECTOR_HINTS.to_vec(),
            Overlay::Sessions(_) => PICKER_HINTS.to_vec(),
            Overlay::Trust(_) => vec![
                KeyHint::new("y", "trust and start them"),
                KeyHint::new("n", "not now"),
                KeyHint::new("↑/↓/PgUp/PgDn", "scroll"),
            ],
            Overlay::ResumeQuestion(_) => vec![
                KeyHint::new("y", "continue it here"),
                KeyHint::new("n/Esc", "do not resume"),
            ],
            Overlay::FirstRun(first_run) if first_run.local_server.is_some() => {
                vec![
                    KeyHint::new("Enter", "use the local server"),
                    KeyHint::new("Esc", "close"),
                    KeyHint::new("Ctrl-C", "quit"),
                ]
            }
            Overlay::FirstRun(_) => vec![KeyHint::new("Esc/Enter", "close"), KeyHint::new("Ctrl-C", "quit")],
            Overlay::ToolDetail { .. } | Overlay::Stats { .. } => {
                vec![
                    KeyHint::new("↑/↓/PgUp/PgDn", "scroll"),
                    KeyHint::new("Esc/q", "close"),
                ]
            }
        }
    }
}
