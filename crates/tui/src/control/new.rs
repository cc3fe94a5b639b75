//! Building the app: its state, and the input box completing the slash commands.

use std::cell::RefCell;
use std::collections::{BTreeMap, VecDeque};
use std::path::PathBuf;
use std::time::{Instant, SystemTime};

use crate::app::{Activity, App, SessionView, SidePanes, Stats, TokenFigures};
use crate::conversation::Conversation;
use crate::input::InputBox;
use crate::panes::{Areas, Pane};
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
            session: SessionView {
                workspace: workspace.display().to_string(),
                ..SessionView::default()
            },
            approval_mode,
            max_steps,
            step: None,
            activity: Activity::Idle,
            turn_running: false,
            conversation: Conversation::default(),
            thinking: ThinkingPane::default(),
            timeline: Timeline::default(),
            tree: FileTree::new(workspace, session_start),
            input,
            tokens: TokenFigures::default(),
            stats: Stats::default(),
            focus: Pane::Input,
            maximized: None,
            side: SidePanes {
                tree: true,
                thinking: true,
                timeline: true,
            },
            side_popup: None,
            layers: crate::layer::LayerStack::default(),
            answers: crate::question::Answers::default(),
            step_calls: Vec::new(),
            workspace_declined: false,
            rules: Vec::new(),
            queued: VecDeque::new(),
            turn_requested: false,
            last_notice: None,
            compact_line: None,
            quit_armed_until: None,
            now,
            pending: Vec::new(),
            areas: RefCell::new(Areas::default()),
            history: None,
            mcp: BTreeMap::new(),
            mcp_deferred: Vec::new(),
            skills: Vec::new(),
            skill_warnings: Vec::new(),
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
