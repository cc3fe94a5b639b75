//! One ACP session: a task that owns the agent's handle, forwards the client's requests
//! as `Op`s and the agent's events as `session/update`s, answers the running prompt at
//! its turn's end, and asks the client about approvals from tasks of their own (a
//! handler that waited for the client's answer would stop the connection's loop).

use std::collections::HashMap;
use std::time::Instant;

use agent_client_protocol::v1::schema as acp;
use agent_client_protocol::v1::{ConnectionTo, Responder};
use agent_client_protocol::{Client, Error, ErrorCode, RequestCancellationHandle};
use miniagent_api::Handle;
use miniagent_protocol::{ApprovalMode, CallId, Decision, Event, Op};
use tokio::sync::mpsc;

use crate::permission;
use crate::prompt::Prompt;
use crate::translate::{self, Live};

/// What the connection's handlers hand a session.
pub enum Inbox {
    /// `session/prompt`, read; answered at the turn's end.
    Prompt {
        prompt: Prompt,
        responder: Responder<acp::PromptResponse>,
    },
    /// `session/cancel`.
    Cancel,
    /// `session/set_mode` (or the `mode` config option).
    SetMode(ApprovalMode),
    /// `session/close`: the agent shuts down, then this is answered.
    Close {
        responder: Responder<acp::CloseSessionResponse>,
    },
    /// The client answered the permission request for call `id`.
    Answered { id: CallId, decision: Decision },
    /// The `model` config option: switch to `name`; answered once the agent has.
    SetModel {
        name: String,
        responder: Responder<acp::SetSessionConfigOptionResponse>,
    },
}

/// What the running prompt is, for the event that ends it.
enum Running {
    /// A message: ends with the turn.
    Turn,
    /// `/compact`: ends with the report the compaction gives as a notice, which follows
    /// its usage figures (a notice before them says it waits for a turn to end).
    Compact { counted: bool },
    /// `/clear`: ends when the history is cleared (or with the notice saying why not).
    Clear,
}

/// A session's state, owned by its task.
pub struct Session {
    id: acp::SessionId,
    cx: ConnectionTo<Client>,
    agent: Handle,
    inbox_tx: mpsc::WeakUnboundedSender<Inbox>,
    prompt: Option<(Running, Responder<acp::PromptResponse>)>,
    /// Calls waiting for the client's answer, with the handle that withdraws the request.
    asking: HashMap<CallId, RequestCancellationHandle>,
    live: Live,
    /// Whether the client shows `notice` updates (it said so at `initialize`).
    notices: bool,
    /// The agent's prompt commands: a prompt `/name …` naming one runs it.
    prompt_commands: Vec<String>,
    /// The `model` config option's state, shared with the connection's entry.
    models: SharedModels,
    /// The approval mode, for the config options a model switch answers with.
    mode: ApprovalMode,
    /// The `model` config option's request, answered when the agent switches or refuses.
    switching: Option<Responder<acp::SetSessionConfigOptionResponse>>,
}

/// The `model` config option's state, which the session's events change and the
/// connection's handlers read.
pub type SharedModels = std::sync::Arc<std::sync::Mutex<translate::Models>>;

fn models_of(shared: &SharedModels) -> std::sync::MutexGuard<'_, translate::Models> {
    shared.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

impl Session {
    pub fn new(
        id: acp::SessionId,
        cx: ConnectionTo<Client>,
        agent: Handle,
        inbox_tx: mpsc::WeakUnboundedSender<Inbox>,
        notices: bool,
        models: SharedModels,
        mode: ApprovalMode,
    ) -> Self {
        Self {
            id,
            cx,
            agent,
            inbox_tx,
            prompt: None,
            asking: HashMap::new(),
            live: Live::default(),
            notices,
            prompt_commands: Vec::new(),
            models,
            mode,
            switching: None,
        }
    }

    /// Runs until the agent ends (closed, or the connection went away).
    pub async fn run(mut self, mut inbox: mpsc::UnboundedReceiver<Inbox>) -> Result<(), Error> {
        loop {
            tokio::select! {
                message = inbox.recv() => match message {
                    Some(Inbox::Close { responder }) => {
                        self.shut_down().await;
                        return responder.respond(acp::CloseSessionResponse::new());
                    }
                    Some(message) => self.on_inbox(message),
                    None => {
                        self.shut_down().await;
                        return Ok(());
                    }
                },
                event = self.agent.events.recv() => match event {
                    Some(event) => self.on_event(&event),
                    None => {
                        self.end_prompt(Err("the agent stopped unexpectedly".to_string()));
                        return Ok(());
                    }
                },
            }
        }
    }

    /// Stops the agent and waits for it (its log is written out as it goes).
    async fn shut_down(&mut self) {
        let _ = self.agent.ops.send(Op::Shutdown);
        while let Some(event) = self.agent.events.recv().await {
            if matches!(event, Event::ShutdownComplete) {
                break;
            }
        }
        self.end_prompt(Ok(acp::StopReason::Cancelled));
    }

    fn on_inbox(&mut self, message: Inbox) {
        match message {
            Inbox::Prompt { prompt, responder } => self.start_prompt(prompt, responder),
            Inbox::Cancel => {
                // The turn ends with `TurnAborted`, which answers the prompt; the
                // client answers the withdrawn requests `cancelled` meanwhile.
                if self.prompt.is_some() {
                    let _ = self.agent.ops.send(Op::Interrupt);
                }
                for (_, request) in self.asking.drain() {
                    let _ = request.cancel();
                }
            }
            Inbox::Answered { id, decision } => {
                // An answer to a request already withdrawn (the turn was interrupted)
                // is not the agent's business any more.
                if self.asking.remove(&id).is_some() {
                    let _ = self.agent.ops.send(Op::Approval { id, decision });
                }
            }
            Inbox::SetMode(mode) => {
                let _ = self.agent.ops.send(Op::SetApprovalMode { mode });
            }
            Inbox::SetModel { name, responder } => {
                if self.switching.is_some() {
                    let _ = responder.respond_with_error(Error::new(
                        ErrorCode::INVALID_REQUEST,
                        "a model switch is under way in this session",
                    ));
                } else if self.agent.ops.send(Op::SetModel { name }).is_err() {
                    let _ = responder.respond_with_internal_error("the agent has stopped");
                } else {
                    self.switching = Some(responder);
                }
            }
            Inbox::Close { .. } => {}
        }
    }

    fn start_prompt(&mut self, prompt: Prompt, responder: Responder<acp::PromptResponse>) {
        if self.prompt.is_some() {
            let _ = responder.respond_with_error(Error::new(
                ErrorCode::INVALID_REQUEST,
                "a prompt is running in this session; cancel it or wait for its end",
            ));
            return;
        }
        let (running, op) = match prompt {
            Prompt::Message(text) => (Running::Turn, self.message_op(text)),
            Prompt::Compact => (Running::Compact { counted: false }, Op::CompactNow),
            Prompt::Clear => (Running::Clear, Op::ClearHistory),
        };
        if self.agent.ops.send(op).is_err() {
            let _ = responder.respond_with_internal_error("the agent has stopped");
            return;
        }
        self.prompt = Some((running, responder));
    }

    /// Answers the running prompt, if any: a stop reason, or an error saying why the
    /// turn failed.
    fn end_prompt(&mut self, result: Result<acp::StopReason, String>) {
        let Some((_, responder)) = self.prompt.take() else {
            return;
        };
        self.asking.clear();
        let _ = match result {
            Ok(reason) => responder.respond(acp::PromptResponse::new(reason)),
            Err(message) => responder.respond_with_error(Error::new(ErrorCode::INTERNAL_ERROR, message)),
        };
    }

    fn send(&self, update: acp::SessionUpdate) {
        let _ = self
            .cx
            .send_notification(acp::SessionNotification::new(self.id.clone(), update));
    }

    /// Offers the client this face's commands and the agent's prompt `commands`, and
    /// runs those when a prompt names one.
    pub fn offer_commands(&mut self, commands: &[miniagent_protocol::CommandInfo]) {
        self.prompt_commands = commands
            .iter()
            .filter(|command| !crate::translate::OWN_COMMANDS.contains(&command.name.as_str()))
            .map(|command| command.name.clone())
            .collect();
        self.send(crate::translate::commands(commands));
    }

    /// A message `/name arguments` naming one of the agent's prompt commands runs it;
    /// anything else is the person's message as written.
    fn message_op(&self, text: String) -> Op {
        let trimmed = text.trim();
        let command = trimmed.strip_prefix('/').and_then(|rest| {
            let (name, arguments) = rest.split_once(char::is_whitespace).unwrap_or((rest, ""));
            self.prompt_commands
                .iter()
                .any(|known| known == name)
                .then(|| (name.to_string(), arguments.trim().to_string()))
        });
        match command {
            Some((name, arguments)) => Op::RunCommand { name, arguments },
            None => Op::UserInput { text },
        }
    }

    fn on_event(&mut self, event: &Event) {
        for update in self.live.updates(event, Instant::now()) {
            self.send(update);
        }
        if let Event::CommandsLoaded { commands, .. } = event {
            self.offer_commands(commands);
        }
        match event {
            Event::ApprovalRequested {
                id,
                preview,
                request,
                notes,
                session_rule,
                ..
            } => {
                let call = permission::tool_call(id, preview, request.as_ref(), notes);
                self.ask(id.clone(), call, permission::options(session_rule.as_ref()));
            }
            Event::ApprovalModeChanged { mode } => {
                self.mode = *mode;
                self.send(acp::SessionUpdate::ConfigOptionUpdate(
                    acp::ConfigOptionUpdate::new(self.config_options(*mode)),
                ));
            }
            Event::ModelChoices { choices } => {
                models_of(&self.models).choices = choices.clone();
                // After a switch the choices mark the new model: the option's answer.
                self.answer_switch();
            }
            Event::ModelChanged { model, .. } => {
                models_of(&self.models).model = model.clone();
                self.notice(&format!("the model is now {model}"));
            }
            Event::ModelChangeRefused { message, .. } => match self.switching.take() {
                Some(responder) => {
                    let _ =
                        responder.respond_with_error(Error::new(ErrorCode::INVALID_PARAMS, message.clone()));
                }
                None => self.notice(message),
            },
            Event::TurnComplete { .. } => self.end_prompt(Ok(acp::StopReason::EndTurn)),
            Event::StepLimitReached { .. } => self.end_prompt(Ok(acp::StopReason::MaxTurnRequests)),
            Event::TurnAborted { .. } => self.end_prompt(Ok(acp::StopReason::Cancelled)),
            Event::Error { message } => self.end_prompt(Err(message.clone())),
            Event::HistoryCleared if matches!(self.prompt, Some((Running::Clear, _))) => {
                // Said, so the person sees the command did something.
                self.send(translate::message_chunk(
                    "The conversation was cleared: the next prompt starts afresh (the session log keeps what came before).".to_string(),
                ));
                self.end_prompt(Ok(acp::StopReason::EndTurn));
            }
            Event::TokenUsage { .. } => {
                if let Some((Running::Compact { counted }, _)) = &mut self.prompt {
                    *counted = true;
                }
            }
            Event::Notice { message }
                if self
                    .prompt
                    .as_ref()
                    .is_some_and(|(running, _)| !matches!(running, Running::Turn)) =>
            {
                self.command_notice(message);
            }
            Event::Notice { message } => self.notice(message),
            Event::McpServerStatus {
                server,
                state: miniagent_protocol::McpState::Failed { reason },
            } => self.notice(&format!("MCP server `{server}` failed: {reason}")),
            _ => {}
        }
    }

    /// A notice while a slash command runs: its answer (the agent meets a command sent
    /// on a turn's last event with the turn over, so none is refused for it).
    fn command_notice(&mut self, message: &str) {
        match &mut self.prompt {
            Some((Running::Compact { counted: false }, _)) => {
                self.send(translate::message_chunk(format!("{message}\n")));
            }
            _ => {
                self.send(translate::message_chunk(message.to_string()));
                self.end_prompt(Ok(acp::StopReason::EndTurn));
            }
        }
    }

    fn config_options(&self, mode: ApprovalMode) -> Vec<acp::SessionConfigOption> {
        translate::config_options(mode, &models_of(&self.models))
    }

    /// The switch's answer, once the choices that follow `ModelChanged` mark the new one.
    fn answer_switch(&mut self) {
        if let Some(responder) = self.switching.take() {
            let options = self.config_options(self.mode);
            let _ = responder.respond(acp::SetSessionConfigOptionResponse::new(options));
        }
    }

    /// Something worth the person's eyes that is not part of the conversation: a notice
    /// where the client shows them, else the log.
    fn notice(&self, message: &str) {
        if self.notices {
            self.send(acp::SessionUpdate::Notice(acp::Notice::new(
                acp::NoticeSeverity::Info,
                message.to_string(),
            )));
        } else {
            tracing::info!(session = %self.id, "notice: {message}");
        }
    }

    /// Asks the client about call `id` from a task of its own; the answer comes back
    /// through the inbox.
    fn ask(&mut self, id: CallId, call: acp::ToolCallUpdate, options: Vec<acp::PermissionOption>) {
        let request =
            self.cx
                .send_request(acp::RequestPermissionRequest::new(self.id.clone(), call, options));
        self.asking.insert(id.clone(), request.cancellation_handle());
        let inbox = self.inbox_tx.clone();
        let spawned = self.cx.spawn(async move {
            let decision = match request.block_task().await {
                Ok(response) => permission::decision(&response.outcome),
                Err(err) => {
                    tracing::info!("a permission request failed: {err:?}");
                    Decision::Abort
                }
            };
            if let Some(inbox) = inbox.upgrade() {
                let _ = inbox.send(Inbox::Answered { id, decision });
            }
            Ok(())
        });
        if let Err(err) = spawned {
            tracing::warn!("cannot ask the client for permission: {err:?}");
        }
    }
}
