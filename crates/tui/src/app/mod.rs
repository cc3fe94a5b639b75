//! The workbench's state: one `App`, made of parts that own their state (the turn, the
//! pane layout, the session it talks to, the figures, the look, the panes, the layer
//! stack). Agent events reach it through `events.rs` (one line per variant, naming a
//! handler kept beside the state it changes), keys and the mouse through
//! `control/keys.rs`; it is drawn by pure functions of it (`render.rs`). Each handler
//! returns an [`Outcome`]: whether the screen changed and what the event loop is to do
//! (send an op to the agent, quit, start the session); see `action.rs`.

mod action;
mod answers;
mod approvals;
mod attention;
mod calls;
mod compaction;
mod events;
mod figures;
mod layout;
mod look;
mod playback;
mod resume;
mod rewind;
mod session;
mod settings;
mod sub_agent;
mod turn;
mod turns;

use std::path::PathBuf;
use std::time::Instant;

use super::conversation::{Conversation, Entry, NoticeKind};
use super::input::InputBox;
use super::panes::Areas;
pub use super::panes::Pane;
use super::theme::Theme;
use super::thinking::ThinkingPane;
use super::timeline::Timeline;
use super::tree::FileTree;
use miniagent_protocol::{Event, Op};

/// Finished calls whose results the timeline keeps in memory when the session is
/// recorded; older ones are read back from the log when opened.
const RESULTS_KEPT: usize = 20;

pub use action::{Action, Outcome};
pub use approvals::{
    ANSWER_SETTLE, APPROVAL_GRACE, ApprovalDialog, ApprovalLayout, ENTER_AFTER_ANSWER, PendingApproval,
    STALL, TYPING_QUIET,
};
pub use attention::Attention;
pub use figures::{CompactionFigures, Figures, Stats, TokenFigures, TurnFigures};
pub(crate) use layout::is_side;
pub use layout::{PaneLayout, SidePanes};
pub use look::Look;
pub use resume::Playback;
pub(crate) use rewind::{files_not_named, one_line};
pub use session::{Session, SessionView};
pub use settings::AppSettings;
pub use turn::{Activity, Turn};

/// Where the workbench finds and keeps its files: plain paths, set once when it is built.
#[derive(Clone, Debug, Default)]
pub struct Places {
    /// Config folder, for `/theme` lookups.
    pub config_dir: Option<PathBuf>,
    /// Where session logs are kept, for `/resume`; `None`: this machine has no data folder.
    pub sessions_dir: Option<PathBuf>,
    /// `HOME`, shown as `~` in the title bar's workspace.
    pub home: Option<String>,
    /// The editor Ctrl-G runs (`$VISUAL`, `$EDITOR`); empty: `vi`.
    pub editor: String,
}

/// The welcome panel's facts (`layers/first_run.rs` draws it): why there is no model yet.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FirstRun {
    /// Why there is no agent yet (the API key problem).
    pub problem: String,
    /// The user's config file.
    pub config_path: String,
    /// A local OpenAI-compatible server found answering: (base URL, model).
    pub local_server: Option<(String, String)>,
}

/// The whole workbench state.
pub struct App {
    /// The theme and the terminal's colours.
    pub(crate) look: Look,
    /// Where the workbench finds and keeps its files.
    pub(crate) places: Places,
    /// What the session talks to: model, workspace, approval mode and rules, servers,
    /// skills, the latest history snapshot.
    pub(crate) session: Session,
    /// The turn running now, and what waits behind it.
    pub(crate) turn: Turn,
    /// Tokens, cost and the counters `/stats` shows.
    pub(crate) figures: Figures,
    /// Which pane has the keys, which show, and where they were drawn.
    pub(crate) layout: PaneLayout,
    pub(crate) conversation: Conversation,
    pub(crate) thinking: ThinkingPane,
    pub(crate) timeline: Timeline,
    /// The agent's latest plan and whether its section shows (Ctrl-T).
    pub(crate) plan: super::plan::PlanView,
    pub(crate) tree: FileTree,
    pub(crate) input: InputBox,
    /// The overlays, and the questions among them (the approval dialog, trust, resume):
    /// one stack, opened and closed only through it.
    pub(crate) layers: crate::layer::LayerStack<App>,
    /// A letter held while it settles, the answer just given: what keeps keys meant for
    /// the input from answering a question.
    pub(crate) answers: crate::question::Answers,
    /// The clock everything is drawn against (set by the event loop; fixed in tests).
    pub(crate) now: Instant,
    /// What the handler running now asks the event loop to do; handed back in its
    /// [`Outcome`], never read by the loop from here.
    pub(crate) pending: Vec<Action>,
    /// Set while a recorded session plays back: what the input box shows instead of a
    /// prompt. The workbench then sends nothing anywhere.
    pub(crate) replay: Option<miniagent_protocol::PlaybackStatus>,
    /// A replay's clock: the moment its start is shown at (the app's `now` is this plus
    /// the replay's position).
    pub(crate) replay_origin: Instant,
    /// While no model is set up (no API key): the welcome panel's facts, to open it again
    /// when a prompt cannot be sent.
    pub(crate) welcome: Option<FirstRun>,
    /// `/undo` was sent and not answered yet: its answer is named as an undo's.
    pub(crate) undo_asked: bool,
    /// Whether the terminal is focused, and how a notification reaches the person when
    /// it is not.
    pub(crate) attention: Attention,
}

impl App {
    /// Whether something on screen moves by itself (a spinner, a ticking duration, a
    /// countdown); only then does the event loop tick.
    pub fn animating(&self) -> bool {
        !matches!(self.turn.activity(), Activity::Idle)
            || self.timeline.any_running()
            || self.question_arming()
            || self.answers.holding()
            || self.input.listing_files()
    }

    /// The log this session is recorded in, once the agent named it.
    pub fn session_log_path(&self) -> Option<PathBuf> {
        let id = self.session.view().session_id.as_ref()?;
        Some(self.places.sessions_dir.as_ref()?.join(format!("{id}.jsonl")))
    }

    /// Keeps memory flat over a long session: only the newest results stay in the
    /// timeline when the session is recorded (the inspector reads older ones back).
    fn forget_old_results(&mut self) {
        if self.session_log_path().is_some_and(|path| path.exists()) {
            self.timeline.forget_old_results(RESULTS_KEPT);
        }
    }

    /// Files changed in the workspace: the file tree reads its folders again.
    pub fn refresh_tree(&mut self) {
        self.tree.refresh();
    }

    /// Syntax highlighting finished loading: code drawn plain so far gets its colours.
    pub fn on_highlight_ready(&mut self) {
        self.conversation.invalidate_all();
    }

    /// Where each pane was drawn last.
    pub fn areas(&self) -> Areas {
        self.layout.areas()
    }

    /// A frame was laid out as `areas`.
    pub(crate) fn drawn_at(&self, areas: Areas) {
        self.layout.drawn_at(areas);
    }

    /// Draws with `theme` from now on.
    pub fn set_theme(&mut self, theme: Theme) {
        self.input.set_theme(&theme);
        self.look.set_theme(theme);
        self.conversation.invalidate_all();
        self.thinking.invalidate_all();
    }

    /// In a replay (a recording holds no agent to ask, which would never answer), says
    /// "this is a replay: `why`" and gives true; a live session gives false.
    pub(crate) fn refused_in_replay(&mut self, why: &str) -> bool {
        if self.replay.is_none() {
            return false;
        }
        self.notice(NoticeKind::Info, format!("this is a replay: {why}"));
        true
    }

    /// Shows a notice in the conversation and the status bar.
    pub fn notice(&mut self, kind: NoticeKind, text: String) {
        let entry = Entry::Notice {
            kind,
            text: text.clone(),
        };
        // `/compact`'s progress line gives way to what comes of it.
        match self.turn.take_compact_line() {
            Some(index) if self.is_compact_line(index) => self.conversation.replace(index, entry),
            _ => self.conversation.push(entry),
        }
        self.turn.noticed(kind, text);
    }

    /// [`Self::notice`], unless the transcript's last entry already says it (a hint a key
    /// repeats, such as "press Ctrl-C again", is not stacked).
    pub(crate) fn notice_once(&mut self, kind: NoticeKind, text: String) {
        let repeated = matches!(
            self.conversation.entries().last(),
            Some(Entry::Notice { kind: last, text: said }) if *last == kind && *said == text
        );
        if repeated {
            self.turn.noticed(kind, text);
        } else {
            self.notice(kind, text);
        }
    }

    /// The entry at `index` is still a compaction's progress line (the transcript may
    /// have been cleared or grown since).
    fn is_compact_line(&self, index: usize) -> bool {
        index + 1 == self.conversation.entries().len()
            && matches!(
                self.conversation.entries().get(index),
                Some(Entry::Notice { text, .. }) if text.starts_with("compacting: ")
            )
    }

    /// The status line: exactly what the agent is doing.
    pub fn status_text(&self) -> String {
        self.turn.status_text(self.now)
    }

    /// Sends an op to the agent (through the event loop).
    pub(crate) fn send(&mut self, op: Op) {
        if self.welcome.is_some() {
            // Nobody to send it to. A session to resume is shown now and waits for a
            // model; a snapshot request has nothing to inspect yet.
            match op {
                Op::Resume { .. } => self.request(Action::Send(op)),
                Op::InspectHistory | Op::InspectContext => {}
                Op::ReadNotes => self.layers_take(&Event::Notes {
                    notes: Vec::new(),
                    error: Some(
                        "the agent reads the notes, and it starts once a model is set up".to_string(),
                    ),
                }),
                _ => self.notice(
                    NoticeKind::Warning,
                    "that needs a model, and none is set up yet: set an API key (the welcome panel says how)"
                        .to_string(),
                ),
            }
            return;
        }
        self.request(Action::Send(op));
    }
}

impl crate::popup::Themed for App {
    fn theme(&self) -> &Theme {
        self.look.theme()
    }
}
