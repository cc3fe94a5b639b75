//! The workbench's state: one `App`, changed by agent events (here) and by keys and the
//! mouse (`keys.rs`), drawn by pure functions of it (`render.rs`). Each handler returns
//! an [`Outcome`]: whether the screen changed and what the event loop is to do (send an
//! op to the agent, quit, start the session); see `action.rs`.

mod action;
mod answers;
mod approvals;
mod playback;
mod resume;
mod settings;
mod sub_agent;
mod turns;

use std::cell::RefCell;
use std::collections::{BTreeMap, VecDeque};
use std::path::PathBuf;
use std::time::{Duration, Instant};

use super::conversation::{Conversation, Entry, NoticeKind};
use super::input::InputBox;
use super::panes::Areas;
pub use super::panes::Pane;
use super::theme::Theme;
use super::thinking::ThinkingPane;
use super::timeline::{CallStatus, Timeline};
use super::tree::FileTree;
use miniagent_protocol::{ApprovalMode, ApprovalRule, Event, HistorySnapshot, Op, SandboxState, ToolInfo};

/// Finished calls whose results the timeline keeps in memory when the session is
/// recorded; older ones are read back from the log when opened.
const RESULTS_KEPT: usize = 20;

pub use action::{Action, Outcome};
pub use approvals::{
    ANSWER_SETTLE, APPROVAL_GRACE, ApprovalDialog, ApprovalLayout, ENTER_AFTER_ANSWER, PendingApproval,
    STALL, TYPING_QUIET,
};
pub use resume::Playback;
pub use settings::AppSettings;

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

/// What the agent is doing, as precisely as the events say.
#[derive(Clone, Debug, PartialEq)]
pub enum Activity {
    Idle,
    /// Waiting for the model's first output of a step.
    Waiting {
        since: Instant,
    },
    Thinking {
        since: Instant,
    },
    Writing {
        since: Instant,
    },
    Running {
        name: String,
        since: Instant,
    },
    AwaitingApproval,
    Retrying {
        until: Instant,
        attempt: u32,
        of: u32,
    },
    Compacting,
    Interrupting,
}

/// The token-budget figures.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct TokenFigures {
    pub context_tokens: u64,
    pub estimated: bool,
    pub token_limit: u64,
    pub context_window: u64,
    pub total_input: u64,
    pub total_output: u64,
    /// Of the input, what the provider read from and wrote to its prompt cache.
    pub total_cache_read: u64,
    pub total_cache_write: u64,
    /// What the session has cost, when the model's price is known.
    pub cost: Option<f64>,
    /// What the last turn used.
    pub last_turn: Option<TurnFigures>,
    pub compactions: u32,
    /// The latest compaction's prompt size before and after, for the gauge.
    pub last_compaction: Option<CompactionFigures>,
}

/// What one turn used.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct TurnFigures {
    pub model_calls: u64,
    pub input: u64,
    pub output: u64,
    pub cache_read: u64,
    pub cost: Option<f64>,
}

/// The whole prompt's tokens around one compaction.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CompactionFigures {
    pub tokens_before: u64,
    pub tokens_after: u64,
}

/// Counters for `/stats`.
#[derive(Clone, Debug, Default)]
pub struct Stats {
    pub turns: u32,
    pub steps: u32,
    /// Summary calls (each announced by `compaction_started`): model calls too.
    pub summary_calls: u32,
    pub tool_calls: BTreeMap<String, u32>,
    pub retries: u32,
}

/// Which side panes show at full width.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SidePanes {
    pub tree: bool,
    pub thinking: bool,
    pub timeline: bool,
}

/// What the session talks to, from `session_configured`.
#[derive(Clone, Debug, Default)]
pub struct SessionView {
    pub model: String,
    pub provider: String,
    pub workspace: String,
    pub tools: Vec<ToolInfo>,
    /// The id the session is recorded under.
    pub session_id: Option<String>,
    /// Whether `bash` commands are sandboxed.
    pub sandbox: SandboxState,
    /// Where model requests go (empty when a recording does not say).
    pub endpoint: String,
}

/// The whole workbench state.
pub struct App {
    pub theme: Theme,
    /// The name the theme was chosen by (`Theme::name` is the file's own, and
    /// `monochrome` under `NO_COLOR`).
    pub theme_name: String,
    pub session: SessionView,
    pub approval_mode: ApprovalMode,
    pub max_steps: u32,
    pub step: Option<u32>,
    pub activity: Activity,
    pub turn_running: bool,
    pub conversation: Conversation,
    pub thinking: ThinkingPane,
    pub timeline: Timeline,
    pub tree: FileTree,
    pub input: InputBox,
    pub tokens: TokenFigures,
    pub stats: Stats,
    pub focus: Pane,
    pub maximized: Option<Pane>,
    pub side: SidePanes,
    /// Below 120 columns: the side pane open over the conversation, if any. It stays
    /// pane state, not a layer: it is a pane like the others (it has the focus, takes
    /// its place in the Tab order, scrolls with the wheel, `q`/Esc put it away, and it
    /// joins the layout when the window widens), not a modal that holds the keys, so the
    /// layout draws it and the focus routes its keys as any pane's.
    pub side_popup: Option<Pane>,
    /// The overlays, and the questions among them (the approval dialog, trust, resume):
    /// one stack, opened and closed only through it.
    pub(crate) layers: crate::layer::LayerStack<App>,
    /// A letter held while it settles, the answer just given: what keeps keys meant for
    /// the input from answering a question.
    pub(crate) answers: crate::question::Answers,
    /// The tool calls of the model's latest reply, by id, in order.
    pub(crate) step_calls: Vec<String>,
    /// The person declined to trust this workspace: its own servers and skills are off.
    pub workspace_declined: bool,
    pub rules: Vec<ApprovalRule>,
    /// Messages typed while a turn runs, sent one per turn as each ends. They stay here,
    /// not with the agent, so that stopping the turn can give them back to the input.
    pub queued: VecDeque<String>,
    /// A message was sent and its turn has not started yet.
    pub(crate) turn_requested: bool,
    /// The latest notice, shown in the status bar until the next turn.
    pub last_notice: Option<(NoticeKind, String)>,
    /// Where in the transcript the progress line of a compaction outside a turn
    /// (`/compact`) is: the next notice (its report) takes its place, so one line remains.
    pub(crate) compact_line: Option<usize>,
    /// Until when a Ctrl-C on an empty input quits (the first one says so).
    pub quit_armed_until: Option<Instant>,
    /// The clock everything is drawn against (set by the event loop; fixed in tests).
    pub now: Instant,
    /// What the handler running now asks the event loop to do; handed back in its
    /// [`Outcome`], never read by the loop from here.
    pub(crate) pending: Vec<Action>,
    /// Where each pane was drawn last, for the mouse (set by drawing, which borrows the
    /// app immutably).
    pub(crate) areas: RefCell<Areas>,
    /// MCP servers and their states, by name.
    pub mcp: BTreeMap<String, miniagent_protocol::McpState>,
    /// The ready servers whose tools are held back from the model, and what it found.
    pub mcp_deferred: Vec<miniagent_protocol::DeferredServer>,
    /// The skills the agent can load, and problems finding them.
    pub skills: Vec<miniagent_protocol::SkillInfo>,
    pub skill_warnings: Vec<String>,
    /// The latest history snapshot from the agent (for the inspector and `/stats`).
    pub history: Option<HistorySnapshot>,
    /// Config folder, for `/theme` lookups.
    pub config_dir: Option<PathBuf>,
    /// Where session logs are kept, for `/resume`; `None`: this machine has no data folder.
    pub sessions_dir: Option<PathBuf>,
    /// Set while a recorded session plays back: what the input box shows instead of a
    /// prompt. The workbench then sends nothing anywhere.
    pub replay: Option<miniagent_protocol::PlaybackStatus>,
    /// `HOME`, shown as `~` in the title bar's workspace.
    pub home: Option<String>,
    /// A replay's clock: the moment its start is shown at (the app's `now` is this plus
    /// the replay's position).
    pub(crate) replay_origin: Instant,
    pub no_color: bool,
    /// While no model is set up (no API key): the welcome panel's facts, to open it again
    /// when a prompt cannot be sent.
    pub welcome: Option<FirstRun>,
    /// The colours the terminal shows; each frame is brought down to them.
    pub color_depth: super::palette::ColorDepth,
}

impl App {
    /// Whether something on screen moves by itself (a spinner, a ticking duration, a
    /// countdown); only then does the event loop tick.
    pub fn animating(&self) -> bool {
        !matches!(self.activity, Activity::Idle)
            || self.timeline.any_running()
            || self.question_arming()
            || self.answers.holding()
    }

    /// The log this session is recorded in, once the agent named it.
    pub fn session_log_path(&self) -> Option<PathBuf> {
        let id = self.session.session_id.as_ref()?;
        Some(self.sessions_dir.as_ref()?.join(format!("{id}.jsonl")))
    }

    /// Keeps memory flat over a long session: only the newest results stay in the
    /// timeline when the session is recorded (the inspector reads older ones back).
    fn forget_old_results(&mut self) {
        if self.session_log_path().is_some_and(|path| path.exists()) {
            self.timeline.forget_old_results(RESULTS_KEPT);
        }
    }

    /// Applies one agent event.
    pub fn on_agent_event(&mut self, event: Event) -> Outcome {
        let changed = self.agent_event(event);
        self.outcome(changed)
    }

    /// Applies one agent event. Returns whether the screen changed.
    pub(crate) fn agent_event(&mut self, event: Event) -> bool {
        let now = self.now;
        match event {
            Event::PlaybackOpened { recording, status } => self.open_recording(&recording, status),
            Event::PlaybackStatus { status } => self.playback_moved(status),
            Event::Replayed { at_ms, event } => return self.replayed(at_ms, *event),
            Event::SessionConfigured {
                model,
                provider,
                workspace,
                tools,
                session_id,
                sandbox,
                endpoint,
            } => {
                self.session = SessionView {
                    model,
                    provider,
                    workspace,
                    tools,
                    session_id,
                    sandbox,
                    endpoint,
                };
            }
            Event::HistoryRestored { events } => self.show_restored(events),
            Event::SessionResumed { id, messages, turns } => {
                // What the log left open was closed just before: the resumed session
                // waits, idle, for the person.
                self.settle();
                self.session.session_id = Some(id.clone());
                self.notice(
                    NoticeKind::Info,
                    format!("resumed session {id}: {turns} turn(s), {messages} messages of history"),
                );
            }
            Event::TurnStarted { text } => {
                self.turn_running = true;
                self.turn_requested = false;
                self.last_notice = None;
                self.stats.turns += 1;
                self.conversation.push(Entry::User(text));
                self.conversation.scroll_to_bottom();
                self.activity = Activity::Waiting { since: now };
            }
            Event::StepStarted { step, max_steps } => {
                self.step = Some(step);
                self.max_steps = max_steps;
                self.stats.steps += 1;
                self.thinking.start_step(self.stats.turns, step);
                self.activity = Activity::Waiting { since: now };
            }
            Event::ThinkingDelta { delta } => {
                self.thinking.push_delta(&delta);
                if !matches!(self.activity, Activity::Thinking { .. }) {
                    self.activity = Activity::Thinking { since: now };
                }
            }
            Event::TextDelta { delta } => {
                self.conversation.push_assistant_delta(&delta);
                if !matches!(self.activity, Activity::Writing { .. }) {
                    self.activity = Activity::Writing { since: now };
                }
            }
            Event::AssistantMessage { text, tool_calls, .. } => {
                self.step_calls = tool_calls.into_iter().map(|call| call.id).collect();
                self.conversation.finish_assistant(&text);
                self.activity = Activity::Waiting { since: now };
            }
            Event::ToolCallRequested {
                id,
                name,
                arguments,
                summary,
            } => {
                self.timeline.requested(&id, &name, &arguments, &summary);
                *self.stats.tool_calls.entry(name.clone()).or_default() += 1;
                let summary = crate::timeline::shown_line(&summary);
                self.conversation.push(Entry::Tool { id, name, summary });
            }
            Event::ApprovalRequested {
                id,
                name,
                preview,
                request,
                notes,
                session_rule,
            } => {
                self.timeline.set_status(&id, CallStatus::AwaitingApproval, now);
                self.conversation.invalidate_tool(&id);
                let in_step = self
                    .step_calls
                    .iter()
                    .position(|call| *call == id)
                    .map(|index| (index + 1, self.step_calls.len()))
                    .filter(|(_, of)| *of > 1);
                self.ask_approval(PendingApproval::new(
                    id,
                    name,
                    preview,
                    request,
                    notes,
                    session_rule,
                    in_step,
                ));
                self.activity = Activity::AwaitingApproval;
            }
            Event::ApprovalRulesChanged { rules } => self.rules = rules,
            Event::ApprovalModeChanged { mode } => {
                self.approval_mode = mode;
                self.notice(NoticeKind::Info, format!("approval mode: {mode}"));
            }
            Event::HistoryCleared => {
                self.conversation.clear();
                self.thinking.clear();
                self.timeline.clear();
                self.tokens = TokenFigures {
                    token_limit: self.tokens.token_limit,
                    context_window: self.tokens.context_window,
                    ..TokenFigures::default()
                };
                self.step = None;
                // The agent forgot the history and its compactions; so does the inspector.
                self.history = None;
                self.notice(NoticeKind::Info, "the conversation was cleared".to_string());
            }
            Event::ToolCallStarted { id, name } => {
                self.timeline.set_status(&id, CallStatus::Running, now);
                self.conversation.invalidate_tool(&id);
                // A call that runs was decided on (here, or in the session being replayed).
                self.approval_settled(&id);
                self.activity = Activity::Running { name, since: now };
            }
            Event::ToolOutputDelta { id, delta } => self.timeline.output(&id, &delta),
            Event::ToolCallFinished {
                id,
                outcome,
                duration_ms,
                output,
                output_preview,
                effects,
                ..
            } => {
                self.apply_effects(&effects);
                self.timeline
                    .finished(&id, outcome, duration_ms, &output, &output_preview);
                self.forget_old_results();
                self.conversation.invalidate_tool(&id);
                self.approval_settled(&id);
                self.tree.refresh();
                self.activity = Activity::Waiting { since: now };
            }
            Event::TokenUsage {
                context_tokens,
                estimated,
                token_limit,
                context_window,
                total_input_tokens,
                total_output_tokens,
                total_cache_read_tokens,
                total_cache_write_tokens,
                cost_usd,
                ..
            } => {
                self.tokens = TokenFigures {
                    context_tokens,
                    estimated,
                    token_limit,
                    context_window,
                    total_input: total_input_tokens,
                    total_output: total_output_tokens,
                    total_cache_read: total_cache_read_tokens,
                    total_cache_write: total_cache_write_tokens,
                    // What a recording says is shown only when it makes sense.
                    cost: miniagent_protocol::sane_cost(cost_usd),
                    ..self.tokens
                };
            }
            Event::TurnUsage {
                model_calls,
                input_tokens,
                output_tokens,
                cache_read_tokens,
                cost_usd,
                ..
            } => {
                self.tokens.last_turn = Some(TurnFigures {
                    model_calls,
                    input: input_tokens,
                    output: output_tokens,
                    cache_read: cache_read_tokens,
                    cost: miniagent_protocol::sane_cost(cost_usd),
                });
            }
            Event::Retrying {
                attempt,
                max_attempts,
                delay_ms,
                reason,
                discard_partial,
            } => {
                if discard_partial {
                    self.conversation.discard_streaming();
                    self.thinking.discard_current();
                }
                self.stats.retries += 1;
                self.activity = Activity::Retrying {
                    until: now + Duration::from_millis(delay_ms),
                    attempt: attempt + 1,
                    of: max_attempts + 1,
                };
                self.notice(NoticeKind::Warning, format!("retrying: {reason}"));
            }
            Event::SubAgent { agent, event, .. } => self.on_sub_agent_event(&agent, *event),
            Event::McpServerStatus { server, state } => {
                match &state {
                    miniagent_protocol::McpState::Failed { reason } => {
                        self.notice(
                            NoticeKind::Warning,
                            format!("MCP server `{server}` failed: {reason}"),
                        );
                    }
                    miniagent_protocol::McpState::Ready { tools } => {
                        self.notice(
                            NoticeKind::Info,
                            format!("MCP server `{server}` ready with {} tools", tools.len()),
                        );
                    }
                    miniagent_protocol::McpState::Connecting | miniagent_protocol::McpState::Disabled => {}
                }
                self.mcp.insert(server, state);
            }
            Event::McpToolsDeferred { servers } => self.mcp_deferred = servers,
            Event::SkillsLoaded { skills, warnings } => {
                self.skills = skills;
                self.skill_warnings = warnings;
            }
            event @ Event::Notes { .. } => self.layers_take(&event),
            Event::RecordedCall {
                id,
                result,
                output,
                error,
            } => self.recorded_call_arrived(&id, result, output, error),
            event @ Event::HistorySnapshot { .. } => {
                self.layers_take(&event);
                if let Event::HistorySnapshot { snapshot } = event {
                    self.history = Some(snapshot);
                }
            }
            Event::CompactionStarted { reason } => {
                self.activity = Activity::Compacting;
                self.stats.summary_calls += 1;
                self.notice(NoticeKind::Info, format!("compacting: {reason}"));
                if !self.turn_running {
                    self.compact_line = self.conversation.entries().len().checked_sub(1);
                }
            }
            Event::ContextCompacted {
                tokens_before,
                tokens_after,
                ..
            } => {
                self.tokens.compactions += 1;
                self.tokens.last_compaction = Some(CompactionFigures {
                    tokens_before,
                    tokens_after,
                });
                // Until the next model call reports, the estimate after compaction is the best figure.
                self.tokens.context_tokens = tokens_after;
                self.tokens.estimated = true;
                if self.activity == Activity::Compacting {
                    self.activity = if self.turn_running {
                        Activity::Waiting { since: now }
                    } else {
                        Activity::Idle
                    };
                }
                self.refresh_history_views();
                // Outside a turn it is `/compact`'s, whose report says the same and more.
                if self.turn_running {
                    self.notice(
                        NoticeKind::Info,
                        format!("context compacted: {tokens_before} → {tokens_after} tokens"),
                    );
                }
            }
            Event::CompactionEnded { outcome, reason } => {
                if self.activity == Activity::Compacting {
                    self.activity = if self.turn_running {
                        Activity::Waiting { since: now }
                    } else {
                        Activity::Idle
                    };
                }
                let (kind, what) = match outcome {
                    miniagent_protocol::CompactionOutcome::Failed => {
                        (NoticeKind::Warning, "compaction failed")
                    }
                    miniagent_protocol::CompactionOutcome::Cancelled => {
                        (NoticeKind::Info, "compaction cancelled")
                    }
                };
                self.notice(kind, format!("{what}: {reason}"));
            }
            Event::Notice { message } => {
                // A `/compact` outside a turn ends with a notice when nothing was compacted.
                if self.activity == Activity::Compacting && !self.turn_running {
                    self.activity = Activity::Idle;
                }
                self.notice(NoticeKind::Info, message);
            }
            Event::TurnComplete { .. } => self.end_turn(),
            Event::TurnAborted { reason } => {
                self.conversation.stop_streaming();
                // Only the person stops a turn: what they queued waits for them again.
                let returned = self.return_queued_to_input();
                self.end_turn();
                self.notice(NoticeKind::Warning, reason);
                if let Some(where_they_went) = returned {
                    self.notice(NoticeKind::Info, where_they_went);
                }
            }
            Event::StepLimitReached { steps, report } => {
                self.conversation.finish_assistant(&report);
                self.end_turn();
                self.notice(
                    NoticeKind::Warning,
                    format!("stopped at the step limit ({steps} steps)"),
                );
            }
            Event::Error { message } => {
                self.conversation.stop_streaming();
                self.end_turn();
                self.notice(NoticeKind::Error, message);
            }
            Event::ShutdownComplete => self.request(Action::Quit),
        }
        true
    }

    /// Syntax highlighting finished loading: code drawn plain so far gets its colours.
    pub fn on_highlight_ready(&mut self) {
        self.conversation.invalidate_all();
    }

    /// Where each pane was drawn last.
    pub fn areas(&self) -> Areas {
        self.areas.borrow().clone()
    }

    /// A frame was laid out as `areas`.
    pub(crate) fn drawn_at(&self, areas: Areas) {
        *self.areas.borrow_mut() = areas;
    }

    /// Draws with `theme` from now on.
    pub fn set_theme(&mut self, theme: Theme) {
        self.input.set_theme(&theme);
        self.theme = theme;
        self.conversation.invalidate_all();
        self.thinking.invalidate_all();
    }

    /// Shows a notice in the conversation and the status bar.
    pub fn notice(&mut self, kind: NoticeKind, text: String) {
        let entry = Entry::Notice {
            kind,
            text: text.clone(),
        };
        // `/compact`'s progress line gives way to what comes of it.
        match self.compact_line.take() {
            Some(index) if self.is_compact_line(index) => self.conversation.replace(index, entry),
            _ => self.conversation.push(entry),
        }
        self.last_notice = Some((kind, text));
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
        let now = self.now;
        let secs = |since: Instant| now.saturating_duration_since(since).as_secs_f64();
        match &self.activity {
            Activity::Idle => "ready".to_string(),
            Activity::Waiting { since } => format!("waiting for the model {:.1} s", secs(*since)),
            Activity::Thinking { .. } => "thinking".to_string(),
            Activity::Writing { .. } => "writing".to_string(),
            Activity::Running { name, since } => format!("running {name} for {:.1} s", secs(*since)),
            Activity::AwaitingApproval => "waiting for approval".to_string(),
            Activity::Retrying { until, attempt, of } => {
                let left = until.saturating_duration_since(now).as_secs_f64().ceil();
                format!("retrying in {left:.0} s (attempt {attempt} of {of})")
            }
            Activity::Compacting => "compacting".to_string(),
            Activity::Interrupting => "interrupting…".to_string(),
        }
    }

    /// Sends an op to the agent (through the event loop).
    pub(crate) fn send(&mut self, op: Op) {
        if self.welcome.is_some() {
            // Nobody to send it to. A session to resume is shown now and waits for a
            // model; a snapshot request has nothing to inspect yet.
            match op {
                Op::Resume { .. } => self.request(Action::Send(op)),
                Op::InspectHistory => {}
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
        &self.theme
    }
}
