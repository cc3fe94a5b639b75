//! Building the app: its state, and the input box completing the slash commands.

use std::path::PathBuf;
use std::time::{Instant, SystemTime};

use crate::app::{App, Figures, Look, PaneLayout, Places, Session, Turn};
use crate::conversation::Conversation;
use crate::input::InputBox;
use crate::theme::Theme;
use crate::thinking::ThinkingPane;
use crate::timeline::Timeline;
use crate::tree::FileTree;
use miniagent_protocol::ApprovalMode;

impl App {
    pub fn new(
        theme: Theme,
        workspace: PathBuf,
        approval_mode: ApprovalMode,
        max_steps: u32,
        session_start: SystemTime,
    ) -> Self {
        let now = Instant::now();
        let mut input = InputBox::new(crate::commands::hints());
        input.set_theme(&theme);
        input.set_workspace(workspace.clone());
        App {
            look: Look::new(theme),
            places: Places::default(),
            session: Session::new(workspace.display().to_string(), approval_mode, max_steps),
            turn: Turn::default(),
            figures: Figures::default(),
            layout: PaneLayout::default(),
            conversation: Conversation::default(),
            thinking: ThinkingPane::default(),
            timeline: Timeline::default(),
            plan: crate::plan::PlanView::default(),
            tree: FileTree::new(workspace, session_start),
            input,
            layers: crate::layer::LayerStack::default(),
            answers: crate::question::Answers::default(),
            now,
            pending: Vec::new(),
            replay: None,
            replay_origin: now,
            welcome: None,
            undo_asked: false,
            attention: crate::app::Attention::default(),
        }
    }
}
