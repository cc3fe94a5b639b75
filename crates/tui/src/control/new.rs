//! Building the app: its state, and the input box completing the slash commands.

use std::path::PathBuf;
use std::time::{Instant, SystemTime};

use crate::app::{App, Figures, PaneLayout, Session, Turn};
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
        App {
            theme_name: theme.name.clone(),
            theme,
            session: Session::new(workspace.display().to_string(), approval_mode, max_steps),
            turn: Turn::default(),
            figures: Figures::default(),
            layout: PaneLayout::default(),
            conversation: Conversation::default(),
            thinking: ThinkingPane::default(),
            timeline: Timeline::default(),
            tree: FileTree::new(workspace, session_start),
            input,
            layers: crate::layer::LayerStack::default(),
            answers: crate::question::Answers::default(),
            now,
            pending: Vec::new(),
            config_dir: None,
            sessions_dir: None,
            replay: None,
            home: None,
            replay_origin: now,
            no_color: false,
            welcome: None,
            color_depth: crate::palette::ColorDepth::TrueColor,
        }
    }
}
