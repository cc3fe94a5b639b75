//! The session task's routing: each [`Op`] to what answers it, the turn that runs (one
//! at a time), the messages queued behind it, and what follows when it ends.

use std::collections::VecDeque;
use std::ops::ControlFlow;
use std::sync::Arc;
use std::sync::atomic::Ordering;

use tokio::task::{JoinError, JoinHandle};
use tokio_util::sync::CancellationToken;

use super::{
    Shared, TurnContext, answers, checkpoints, compaction, delegate, inspect, meter, resume, rewind, switch,
    turn,
};
use crate::llm::Usage;
use miniagent_protocol::{CallId, Decision, Event, Op, PermanentRule, RuleSource};

/// Work that holds the session while it runs.
enum Job {
    Turn(String),
    /// `/compact`: compact everything that can be, now.
    Compact,
}

struct RunningTurn {
    task: JoinHandle<()>,
    cancel: CancellationToken,
    /// [`EventSink::jobs_closed`] when it started: more, and its last event went out.
    closed_before: u64,
}

/// The router's state between ops.
pub(super) struct Router {
    shared: Shared,
    running: Option<RunningTurn>,
    /// Messages sent while a turn ran, started one by one after it.
    queued: VecDeque<String>,
    /// `/compact` asked for while a turn ran.
    compact_next: bool,
}

impl Router {
    pub(super) fn new(shared: Shared) -> Self {
        Self {
            shared,
            running: None,
            queued: VecDeque::new(),
            compact_next: false,
        }
    }

    /// Answers one op; `Break` after [`Op::Shutdown`] (the running turn stopped).
    pub(super) async fn on_op(&mut self, op: Op) -> ControlFlow<()> {
        // A front end acts on the job's last event at once; the task may not have
        // returned yet (it writes the log out): what it sends next meets the job as over.
        if let Some(turn) = self.running.as_mut()
            && self.shared.events.jobs_closed() > turn.closed_before
        {
            let joined = (&mut turn.task).await;
            self.after_turn(joined).await;
        }
        match op {
            Op::UserInput { text } => self.user_input(text),
            Op::Approval { id, decision } => self.approval(&id, decision),
            Op::RevokeApproval { rule } => self.revoke(&rule),
            Op::RemovePermissionRule { rule } => self.remove_permission_rule(&rule),
            Op::Interrupt => self.interrupt(),
            Op::SetApprovalMode { mode } => {
                self.shared.policy.with(|policy| policy.set_mode(mode));
                self.notify(Event::ApprovalModeChanged { mode });
            }
            Op::ClearHistory => self.clear_history().await,
            Op::ReconnectMcp { server } => self.reconnect_mcp(server),
            Op::Resume { path } => {
                if self.running.is_some() {
                    self.notice("a turn is running; interrupt it before resuming another session");
                } else {
                    resume::resume(&self.shared, &path).await;
                }
            }
            Op::InspectHistory => self.inspect(inspect::HISTORY),
            Op::InspectContext => self.inspect(inspect::CONTEXT),
            Op::RunCommand { name, arguments } => self.run_command(&name, &arguments),
            Op::CompactNow => self.compact_now(),
            Op::ReadNotes => answers::notes(
                self.shared.workspace.root().to_path_buf(),
                self.shared.events.clone(),
            ),
            Op::RecordedCall { id } => {
                answers::recorded_call(
                    self.shared.options.session_log.path(),
                    id,
                    self.shared.events.clone(),
                );
            }
            Op::Playback { .. } => {
                self.notice("this session is live, not a replay: there is nothing to play");
            }
            Op::SetModel { name } => {
                if self.running.is_some() {
                    let message = format!(
                        "a turn is running: the model changes between turns; send /model {} again when it ends",
                        miniagent_text::visible(&name)
                    );
                    self.notify(Event::ModelChangeRefused { name, message });
                } else {
                    switch::switch(&mut self.shared, &name).await;
                }
            }
            Op::Diff { turn } => checkpoints::diff(&self.shared, turn),
            Op::ListRewindPoints | Op::Rewind { .. } | Op::Undo if self.running.is_some() => {
                self.notify(Event::RewindRefused {
                    message: "a turn is running: /rewind and /undo work between turns (interrupt it first)"
                        .to_string(),
                    files: Vec::new(),
                });
            }
            Op::ListRewindPoints => rewind::points(&self.shared).await,
            Op::Rewind { turn, scope } => rewind::rewind(&self.shared, turn, scope).await,
            Op::Undo => checkpoints::undo(&self.shared).await,
            Op::Shutdown => {
                self.stop_turn().await;
                return ControlFlow::Break(());
            }
        }
        ControlFlow::Continue(())
    }

    fn notify(&self, event: Event) {
        self.shared.events.emit(event);
    }

    fn notice(&self, message: impl Into<String>) {
        self.notify(Event::Notice {
            message: message.into(),
        });
    }

    /// Takes a permanent rule out of the user's config and out of this session.
    fn remove_permission_rule(&self, rule: &PermanentRule) {
        if rule.source == RuleSource::Workspace {
            self.notice(format!(
                "`{}` is the workspace's own rule, in its .miniagent/config.toml: change that file to remove it (the workspace is then asked to be trusted again)",
                rule.pattern
            ));
            return;
        }
        let Some(file) = self
            .shared
            .policy
            .with(|policy| policy.permissions().user_file().map(std::path::Path::to_path_buf))
        else {
            self.notice("there is no config folder: no rule can be removed");
            return;
        };
        let removed = crate::config::edit::change_list(&file, "permissions", rule.list.key(), |list| {
            list.retain(|pattern| pattern.trim() != rule.pattern);
        });
        match removed {
            Err(why) => return self.notice(format!("`{}` was not removed: {why}", rule.pattern)),
            Ok(false) => self.notice(format!(
                "`{}` is not in {}, but in a file given with --config: it is off for this session; remove it there too",
                rule.pattern,
                file.display()
            )),
            Ok(true) => self.notice(format!(
                "removed `{}` from the {} list in {}",
                rule.pattern,
                rule.list.key(),
                file.display()
            )),
        }
        let event = self.shared.policy.with(|policy| {
            policy.permissions_mut().remove(rule);
            policy.permissions_event()
        });
        self.notify(event);
    }

    fn user_input(&mut self, text: String) {
        if self.running.is_some() {
            self.queued.push_back(text);
        } else {
            self.running = Some(start_job(&self.shared, Job::Turn(text)));
        }
    }

    fn approval(&self, id: &CallId, decision: Decision) {
        if let Some(problem) = self.shared.options.session_log.decision(id, &decision) {
            self.notice(problem);
        }
        if !self.shared.approvals.resolve(id, decision) {
            self.notice(format!("no tool call `{id}` is waiting for approval"));
        }
    }

    fn revoke(&self, rule: &miniagent_protocol::ApprovalRule) {
        let (revoked, event) = self
            .shared
            .policy
            .with(|policy| (policy.revoke(rule), policy.rules_event()));
        if revoked {
            self.notify(event);
        } else {
            self.notice(format!("no remembered approval or refusal for {rule}"));
        }
    }

    fn interrupt(&mut self) {
        let Some(turn) = &self.running else {
            self.notice("nothing is running");
            return;
        };
        turn.cancel.cancel();
        if !self.queued.is_empty() {
            self.notice(format!(
                "dropped {} queued message(s) with the interrupt",
                self.queued.len()
            ));
            self.queued.clear();
        }
    }

    /// `/clear`: the conversation starts over (the log records it, so a resumed session
    /// starts over there too).
    async fn clear_history(&self) {
        if self.running.is_some() {
            self.notice("a turn is running; interrupt it before clearing the conversation");
            return;
        }
        let mut session = self.shared.session.lock().await;
        session.context.clear();
        super::turns_set_aside(&mut session.turns, 0);
        session.last_usage = Usage::default();
        session.compaction_log.clear();
        self.notify(Event::HistoryCleared);
        self.shared.events.checkpoint(&mut session);
    }

    /// Reconnecting runs beside the session: the server's status events say how it went.
    fn reconnect_mcp(&self, server: String) {
        let Some(mcp) = self.shared.options.mcp.clone() else {
            self.notice("no MCP servers are configured");
            return;
        };
        let events = self.shared.events.clone();
        tokio::spawn(async move {
            if let Err(why) = mcp.reconnect(server.clone()).await {
                events.emit(Event::Notice {
                    message: format!("cannot reconnect `{server}`: {why}"),
                });
            }
        });
    }

    fn inspect(&self, asked: u8) {
        match self.shared.session.try_lock() {
            Ok(mut session) => {
                for answer in inspect::answers(asked, &mut session, &self.shared.options) {
                    self.notify(answer);
                }
            }
            // A turn holds the session: it answers at its next step.
            Err(_) => {
                self.shared.inspect_requested.fetch_or(asked, Ordering::SeqCst);
            }
        }
    }

    /// A prompt command: its expanded text goes on as the person's message. A name the
    /// session does not know goes as written, so nothing the person typed is lost.
    fn run_command(&mut self, name: &str, arguments: &str) {
        match self.shared.options.commands.expand(name, arguments) {
            Some(text) => self.user_input(text),
            None => {
                self.notice(format!(
                    "there is no command /{}: sent as written",
                    miniagent_text::clean(name)
                ));
                let text = format!("/{name} {arguments}");
                self.user_input(text.trim_end().to_string());
            }
        }
    }

    fn compact_now(&mut self) {
        if self.running.is_some() {
            // Also right after a turn's last event, before its task ended.
            self.compact_next = true;
            self.notice("a turn is running; the history is compacted when it ends");
        } else {
            self.running = Some(start_job(&self.shared, Job::Compact));
        }
    }

    /// An event from outside the loop (an MCP server's status, skills found).
    pub(super) fn on_side_event(&self, event: Event) {
        let tools_changed = matches!(event, Event::McpServerStatus { .. });
        self.notify(event);
        // A server's tools join every prompt: the gauge says so while idle
        // (a turn reports at its next step).
        if tools_changed
            && self.running.is_none()
            && let Ok(mut session) = self.shared.session.try_lock()
        {
            self.notify(compaction::usage_event(
                &mut session,
                &self.shared.options,
                self.shared.meter.get(),
            ));
        }
    }

    /// Resolves when the running turn's task ends; never while none runs.
    pub(super) async fn turn_ended(&mut self) -> Result<(), JoinError> {
        match self.running.as_mut() {
            Some(turn) => (&mut turn.task).await,
            None => std::future::pending().await,
        }
    }

    /// A turn ended: answer an inspector that asked meanwhile, then start what waited.
    pub(super) async fn after_turn(&mut self, joined: Result<(), JoinError>) {
        self.running = None;
        if let Err(err) = joined {
            recover_from_crash(&self.shared, &err.to_string()).await;
        }
        let asked = self.shared.inspect_requested.swap(0, Ordering::SeqCst);
        if asked != 0 {
            let mut session = self.shared.session.lock().await;
            for answer in inspect::answers(asked, &mut session, &self.shared.options) {
                self.notify(answer);
            }
        }
        if std::mem::take(&mut self.compact_next) {
            self.running = Some(start_job(&self.shared, Job::Compact));
        } else if let Some(text) = self.queued.pop_front() {
            self.running = Some(start_job(&self.shared, Job::Turn(text)));
        }
    }

    /// Cancels the running turn, if any, and waits for it to leave the history valid.
    pub(super) async fn stop_turn(&mut self) {
        if let Some(turn) = self.running.take() {
            turn.cancel.cancel();
            if let Err(err) = turn.task.await {
                recover_from_crash(&self.shared, &err.to_string()).await;
            }
        }
    }

    /// The session ends: MCP servers are stopped and the log written out.
    pub(super) async fn shutdown(self) {
        let shared = self.shared;
        if let Some(mcp) = shared.options.mcp.clone() {
            mcp.shutdown().await;
        }
        shared.events.checkpoint(&mut *shared.session.lock().await);
        shared.events.emit(Event::ShutdownComplete);
    }
}

fn start_job(shared: &Shared, job: Job) -> RunningTurn {
    let cancel = CancellationToken::new();
    let context = TurnContext {
        options: Arc::clone(&shared.options),
        workspace: Arc::clone(&shared.workspace),
        events: shared.events.clone(),
        cancel: cancel.clone(),
        approvals: shared.approvals.clone(),
        policy: shared.policy.clone(),
        inspect_requested: Arc::clone(&shared.inspect_requested),
        sub_agents: Some(delegate::start),
        meter: shared.meter.clone(),
        cost_limit: meter::CostLimit::for_turn(&shared.options.config, &shared.meter),
        checkpoints: Arc::clone(&shared.checkpoints),
    };
    let session = Arc::clone(&shared.session);
    let closed_before = shared.events.jobs_closed();
    let task = tokio::spawn(async move {
        let mut session = session.lock().await;
        match job {
            Job::Turn(text) => turn::run_turn(&mut session, text, &context).await,
            Job::Compact => turn::compact_now(&mut session, &context).await,
        }
        context.events.checkpoint(&mut session);
    });
    RunningTurn {
        task,
        cancel,
        closed_before,
    }
}

/// A turn task panicked: repair the history it left and say so.
async fn recover_from_crash(shared: &Shared, why: &str) {
    let mut session = shared.session.lock().await;
    session
        .context
        .close_open_tool_calls("the agent crashed while this call was running");
    shared.events.emit(Event::Error {
        message: format!("internal error, the turn was stopped: {why}"),
    });
    shared.events.checkpoint(&mut session);
}
