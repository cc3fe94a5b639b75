//! What a workbench starts with, in one value: the app is built from it in one place
//! ([`App::build`]), never field by field after construction.

use std::path::PathBuf;
use std::time::SystemTime;

use super::App;
use crate::palette::ColorDepth;
use crate::theme::Theme;
use miniagent_protocol::ApprovalMode;

/// The settings the app is built with.
pub struct AppSettings {
    pub theme: Theme,
    /// The name `/theme` shows as chosen (the theme's own name unless set).
    pub theme_name: String,
    pub workspace: PathBuf,
    pub approval: ApprovalMode,
    pub max_steps: u32,
    /// Files changed after this count as touched in the tree.
    pub session_start: SystemTime,
    /// The model and provider to show until the agent says which it talks to.
    pub model: String,
    pub provider: String,
    pub token_limit: u64,
    pub context_window: u64,
    pub show_thinking: bool,
    pub config_dir: Option<PathBuf>,
    pub sessions_dir: Option<PathBuf>,
    /// `HOME`, shown as `~`.
    pub home: Option<String>,
    pub no_color: bool,
    pub color_depth: ColorDepth,
    /// The editor Ctrl-G runs (`$VISUAL`, `$EDITOR`, `vi`).
    pub editor: String,
    /// How a notification reaches the person while the terminal is not focused, and
    /// whether it goes through tmux.
    pub notifier: crate::notify::Notifier,
    pub in_tmux: bool,
}

impl AppSettings {
    /// `theme` on `workspace`, with the built-in defaults for the rest.
    pub fn new(theme: Theme, workspace: PathBuf) -> Self {
        Self {
            theme_name: theme.name.clone(),
            theme,
            workspace,
            approval: ApprovalMode::Ask,
            max_steps: 50,
            session_start: SystemTime::now(),
            model: String::new(),
            provider: String::new(),
            token_limit: 0,
            context_window: 0,
            show_thinking: true,
            config_dir: None,
            sessions_dir: None,
            home: None,
            no_color: false,
            color_depth: ColorDepth::TrueColor,
            editor: "vi".to_string(),
            notifier: crate::notify::Notifier::Off,
            in_tmux: false,
        }
    }
}

impl App {
    /// The workbench these settings describe, before any agent event.
    pub fn build(settings: AppSettings) -> Self {
        let AppSettings {
            theme,
            theme_name,
            workspace,
            approval,
            max_steps,
            session_start,
            model,
            provider,
            token_limit,
            context_window,
            show_thinking,
            config_dir,
            sessions_dir,
            home,
            no_color,
            color_depth,
            editor,
            notifier,
            in_tmux,
        } = settings;
        let mut app = App::new(theme, workspace, approval, max_steps, session_start);
        app.look.set_name(theme_name);
        app.session.name_model(model);
        app.session.name_provider(provider);
        app.figures.set_budget(token_limit, context_window);
        app.layout.set_shown(crate::panes::Pane::Thinking, show_thinking);
        app.places = super::Places {
            config_dir,
            sessions_dir,
            home,
            editor,
        };
        app.attention = super::Attention::new(notifier, in_tmux);
        app.look.set_no_color(no_color);
        app.look.set_color_depth(color_depth);
        app
    }
}
