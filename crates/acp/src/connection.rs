//! The connection: one handler per ACP method. Each returns at once (the SDK runs
//! handlers inside its dispatch loop, and waiting there for the client would stop it):
//! starting a session runs in a task of its own, and a session's requests go to its task
//! ([`crate::session`]).

use std::collections::HashMap;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard, OnceLock};
use std::time::Duration;

use agent_client_protocol::v1::schema as acp;
use agent_client_protocol::v1::{ConnectionTo, Responder};
use agent_client_protocol::{Agent, Client, Error, ErrorCode, Lines};
use futures::{Sink, Stream};
use miniagent_api::{self as api, Env, FaceExtras, Handle, McpServerSpec, SessionStore, StartOptions};
use miniagent_protocol::{ApprovalMode, Event};
use tokio::sync::mpsc;
use tokio::task::JoinHandle;

use crate::files::EditorFiles;
use crate::prompt;
use crate::session::{Inbox, Session};
use crate::translate;

/// How long the sessions get to write their logs after the client hung up.
const SHUTDOWN_WAIT: Duration = Duration::from_secs(2);

/// A session the connection knows: where its requests go, and what its config options
/// say.
struct Entry {
    inbox: mpsc::UnboundedSender<Inbox>,
    models: crate::session::SharedModels,
    mode: ApprovalMode,
}

/// What every handler shares.
struct Face {
    options: StartOptions,
    env: Env,
    store: SessionStore,
    sessions: Mutex<HashMap<String, Entry>>,
    tasks: Mutex<Vec<JoinHandle<()>>>,
    /// The client shows `notice` updates (it said so at `initialize`).
    notices: Mutex<bool>,
    /// The client reads and writes text files (it said so at `initialize`): the file
    /// tools go through it.
    editor_files: Mutex<bool>,
}

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

fn invalid(message: impl Into<String>) -> Error {
    Error::new(ErrorCode::INVALID_PARAMS, message.into())
}

fn unknown_session(id: &acp::SessionId) -> Error {
    Error::new(
        ErrorCode::RESOURCE_NOT_FOUND,
        format!("no session `{id}` is open on this connection"),
    )
}

/// Serves the connection until the client hangs up, then shuts the sessions down.
pub async fn serve(
    options: StartOptions,
    env: Env,
    outgoing: impl Sink<String, Error = io::Error> + Send + 'static,
    incoming: impl Stream<Item = io::Result<String>> + Send + 'static,
) -> Result<(), Error> {
    let face = Arc::new(Face {
        options,
        store: SessionStore::new(&env),
        env,
        sessions: Mutex::new(HashMap::new()),
        tasks: Mutex::new(Vec::new()),
        notices: Mutex::new(false),
        editor_files: Mutex::new(false),
    });
    let served = connect(face.clone(), Lines::new(outgoing, incoming)).await;
    // Dropping their inboxes ends the sessions; each waits for its agent to stop.
    lock(&face.sessions).clear();
    let tasks = std::mem::take(&mut *lock(&face.tasks));
    let _ = tokio::time::timeout(SHUTDOWN_WAIT, futures::future::join_all(tasks)).await;
    served
}

/// Registers a handler for request type `$request` that calls `Face::$method`.
macro_rules! request {
    ($builder:expr, $face:expr, $request:ty, $method:ident) => {{
        let face = $face.clone();
        $builder.on_receive_request(
            async move |request: $request, responder, cx: ConnectionTo<Client>| {
                face.$method(request, responder, cx)
            },
            agent_client_protocol::on_receive_request!(),
        )
    }};
}

/// The handlers, connected to the client over `transport` until it hangs up.
async fn connect(
    face: Arc<Face>,
    transport: impl agent_client_protocol::ConnectTo<Agent> + 'static,
) -> Result<(), Error> {
    let builder = Agent.v1().name("miniagent");
    let builder = request!(builder, face, acp::InitializeRequest, initialize);
    let builder = request!(builder, face, acp::NewSessionRequest, new_session);
    let builder = request!(builder, face, acp::LoadSessionRequest, load_session);
    let builder = request!(builder, face, acp::ResumeSessionRequest, resume_session);
    let builder = request!(builder, face, acp::ListSessionsRequest, list_sessions);
    let builder = request!(builder, face, acp::CloseSessionRequest, close_session);
    let builder = request!(builder, face, acp::PromptRequest, prompt);
    let builder = request!(builder, face, acp::SetSessionModeRequest, set_mode);
    let builder = request!(
        builder,
        face,
        acp::SetSessionConfigOptionRequest,
        set_config_option
    );
    let cancel = face.clone();
    builder
        .on_receive_notification(
            async move |notification: acp::CancelNotification, _cx: ConnectionTo<Client>| {
                cancel.cancel(&notification.session_id);
                Ok(())
            },
            agent_client_protocol::on_receive_notification!(),
        )
        .connect_to(transport)
        .await
}

/// A session as it stands once the agent is ready.
struct Opened {
    id: acp::SessionId,
    agent: Handle,
    models: translate::Models,
    mode: ApprovalMode,
    /// The agent's prompt commands, when they were announced while the session opened
    /// (else the session offers them when they are).
    commands: Option<Vec<miniagent_protocol::CommandInfo>>,
}

/// What to do with a recorded session as it opens.
/// A recorded session asked for by `session/load` or `session/resume`.
struct Reopen {
    id: acp::SessionId,
    cwd: PathBuf,
    servers: Vec<acp::McpServer>,
    /// Send its history to the client first (`session/load`).
    replay: bool,
}

enum Resume {
    /// A new session.
    No,
    /// Continue it; `replay`: send its history to the client first (`session/load`).
    Yes {
        session: api::RecordedSession,
        replay: bool,
    },
}

impl Face {
    fn initialize(
        &self,
        request: acp::InitializeRequest,
        responder: Responder<acp::InitializeResponse>,
        _cx: ConnectionTo<Client>,
    ) -> Result<(), Error> {
        let notices = request
            .client_capabilities
            .session
            .as_ref()
            .is_some_and(|session| session.notices.is_some());
        *lock(&self.notices) = notices;
        // Both or neither: reading the editor's buffer and writing the disk (or the other
        // way round) would leave the two apart.
        let fs = &request.client_capabilities.fs;
        *lock(&self.editor_files) = fs.read_text_file && fs.write_text_file;
        let capabilities = acp::AgentCapabilities::new()
            .load_session(true)
            .prompt_capabilities(
                acp::PromptCapabilities::new()
                    .image(false)
                    .audio(false)
                    .embedded_context(true),
            )
            .mcp_capabilities(acp::McpCapabilities::new().http(true))
            .session_capabilities(
                acp::SessionCapabilities::new()
                    .list(acp::SessionListCapabilities::new())
                    .resume(acp::SessionResumeCapabilities::new())
                    .close(acp::SessionCloseCapabilities::new()),
            );
        responder.respond(
            acp::InitializeResponse::new(crate::protocol_version())
                .agent_capabilities(capabilities)
                .agent_info(
                    acp::Implementation::new("miniagent", env!("CARGO_PKG_VERSION")).title("miniagent"),
                ),
        )
    }

    fn new_session(
        self: &Arc<Self>,
        request: acp::NewSessionRequest,
        responder: Responder<acp::NewSessionResponse>,
        cx: ConnectionTo<Client>,
    ) -> Result<(), Error> {
        let cwd = match workspace(&request.cwd) {
            Ok(cwd) => cwd,
            Err(err) => return responder.respond_with_error(err),
        };
        let face = self.clone();
        self.spawn(async move {
            match face.open(&cx, &cwd, request.mcp_servers, Resume::No).await {
                Ok(opened) => {
                    let response = acp::NewSessionResponse::new(opened.id.clone())
                        .modes(translate::modes(opened.mode))
                        .config_options(translate::config_options(opened.mode, &opened.models));
                    face.attach(&cx, opened, move || responder.respond(response));
                }
                Err(err) => {
                    let _ = responder.respond_with_error(err);
                }
            }
        });
        Ok(())
    }
}

impl Face {
    /// `session/load` and `session/resume`: a session recorded in the same workspace,
    /// not open on this connection already.
    fn recorded(&self, id: &acp::SessionId, cwd: &Path) -> Result<api::RecordedSession, Error> {
        if lock(&self.sessions).contains_key(id.0.as_ref()) {
            return Err(Error::new(
                ErrorCode::INVALID_REQUEST,
                format!("session `{id}` is open on this connection already"),
            ));
        }
        let not_found = |err: api::SessionError| Error::new(ErrorCode::RESOURCE_NOT_FOUND, err.to_string());
        let recorded = self.store.find(&id.0).map_err(not_found)?;
        let origin = self.store.origin(&recorded).map_err(not_found)?;
        let recorded_in = origin.workspace.canonicalize().unwrap_or(origin.workspace);
        if recorded_in != cwd {
            return Err(invalid(format!(
                "session `{id}` was recorded in {}, not in {}; open it with that folder as cwd",
                recorded_in.display(),
                cwd.display()
            )));
        }
        Ok(recorded)
    }

    fn load_session(
        self: &Arc<Self>,
        request: acp::LoadSessionRequest,
        responder: Responder<acp::LoadSessionResponse>,
        cx: ConnectionTo<Client>,
    ) -> Result<(), Error> {
        let reopen = Reopen {
            id: request.session_id,
            cwd: request.cwd,
            servers: request.mcp_servers,
            replay: true,
        };
        self.reopen(reopen, responder, cx, |opened| {
            acp::LoadSessionResponse::new()
                .modes(translate::modes(opened.mode))
                .config_options(translate::config_options(opened.mode, &opened.models))
        })
    }

    fn resume_session(
        self: &Arc<Self>,
        request: acp::ResumeSessionRequest,
        responder: Responder<acp::ResumeSessionResponse>,
        cx: ConnectionTo<Client>,
    ) -> Result<(), Error> {
        let reopen = Reopen {
            id: request.session_id,
            cwd: request.cwd,
            servers: request.mcp_servers,
            replay: false,
        };
        self.reopen(reopen, responder, cx, |opened| {
            acp::ResumeSessionResponse::new()
                .modes(translate::modes(opened.mode))
                .config_options(translate::config_options(opened.mode, &opened.models))
        })
    }

    /// `session/load` and `session/resume`: the recorded session goes on in a session
    /// of this connection, answered with what `answer` makes of it.
    fn reopen<R>(
        self: &Arc<Self>,
        reopen: Reopen,
        responder: Responder<R>,
        cx: ConnectionTo<Client>,
        answer: fn(&Opened) -> R,
    ) -> Result<(), Error>
    where
        R: agent_client_protocol::JsonRpcResponse + Send + 'static,
    {
        let found = workspace(&reopen.cwd).and_then(|cwd| Ok((self.recorded(&reopen.id, &cwd)?, cwd)));
        let (session, cwd) = match found {
            Ok(found) => found,
            Err(err) => return responder.respond_with_error(err),
        };
        let face = self.clone();
        self.spawn(async move {
            let resume = Resume::Yes {
                session,
                replay: reopen.replay,
            };
            match face.open(&cx, &cwd, reopen.servers, resume).await {
                Ok(opened) => {
                    let response = answer(&opened);
                    face.attach(&cx, opened, move || responder.respond(response));
                }
                Err(err) => {
                    let _ = responder.respond_with_error(err);
                }
            }
        });
        Ok(())
    }

    fn list_sessions(
        &self,
        request: acp::ListSessionsRequest,
        responder: Responder<acp::ListSessionsResponse>,
        _cx: ConnectionTo<Client>,
    ) -> Result<(), Error> {
        let listed = match &request.cwd {
            Some(cwd) => self.store.list_in(cwd),
            None => self.store.list(),
        };
        let sessions = listed
            .into_iter()
            .map(|info| {
                acp::SessionInfo::new(info.id, PathBuf::from(info.workspace))
                    .title(info.first_prompt)
                    .updated_at(info.updated)
            })
            .collect();
        responder.respond(acp::ListSessionsResponse::new(sessions))
    }

    fn close_session(
        &self,
        request: acp::CloseSessionRequest,
        responder: Responder<acp::CloseSessionResponse>,
        _cx: ConnectionTo<Client>,
    ) -> Result<(), Error> {
        let entry = lock(&self.sessions).remove(request.session_id.0.as_ref());
        match entry {
            // The session answers once its agent has stopped.
            Some(entry) => {
                if let Err(refused) = entry.inbox.send(Inbox::Close { responder })
                    && let Inbox::Close { responder } = refused.0
                {
                    return responder.respond(acp::CloseSessionResponse::new());
                }
                Ok(())
            }
            None => responder.respond_with_error(unknown_session(&request.session_id)),
        }
    }

    fn prompt(
        &self,
        request: acp::PromptRequest,
        responder: Responder<acp::PromptResponse>,
        _cx: ConnectionTo<Client>,
    ) -> Result<(), Error> {
        let prompt = match prompt::read(&request.prompt) {
            Ok(prompt) => prompt,
            Err(why) => return responder.respond_with_error(invalid(why.to_string())),
        };
        let inbox = lock(&self.sessions)
            .get(request.session_id.0.as_ref())
            .map(|entry| entry.inbox.clone());
        let Some(inbox) = inbox else {
            return responder.respond_with_error(unknown_session(&request.session_id));
        };
        // The session answers at the turn's end.
        if let Err(refused) = inbox.send(Inbox::Prompt { prompt, responder })
            && let Inbox::Prompt { responder, .. } = refused.0
        {
            return responder.respond_with_internal_error("the session has ended");
        }
        Ok(())
    }

    /// `session/cancel`: never waits; the running prompt answers `cancelled`.
    fn cancel(&self, id: &acp::SessionId) {
        if let Some(entry) = lock(&self.sessions).get(id.0.as_ref()) {
            let _ = entry.inbox.send(Inbox::Cancel);
        }
    }

    /// Sets session `id`'s approval mode; its config options as they then stand.
    fn switch_mode(
        &self,
        id: &acp::SessionId,
        mode_id: &str,
    ) -> Result<Vec<acp::SessionConfigOption>, Error> {
        let mode = translate::mode_from_id(mode_id).ok_or_else(|| invalid(format!("no mode `{mode_id}`")))?;
        let mut sessions = lock(&self.sessions);
        let entry = sessions
            .get_mut(id.0.as_ref())
            .ok_or_else(|| unknown_session(id))?;
        entry
            .inbox
            .send(Inbox::SetMode(mode))
            .map_err(|_| Error::new(ErrorCode::INTERNAL_ERROR, "the session has ended"))?;
        entry.mode = mode;
        Ok(translate::config_options(mode, &lock(&entry.models)))
    }

    fn set_mode(
        &self,
        request: acp::SetSessionModeRequest,
        responder: Responder<acp::SetSessionModeResponse>,
        _cx: ConnectionTo<Client>,
    ) -> Result<(), Error> {
        match self.switch_mode(&request.session_id, &request.mode_id.0) {
            Ok(_) => responder.respond(acp::SetSessionModeResponse::new()),
            Err(err) => responder.respond_with_error(err),
        }
    }

    fn set_config_option(
        &self,
        request: acp::SetSessionConfigOptionRequest,
        responder: Responder<acp::SetSessionConfigOptionResponse>,
        _cx: ConnectionTo<Client>,
    ) -> Result<(), Error> {
        let Some(value) = request.value.as_value_id() else {
            return responder.respond_with_error(invalid("both config options take a value id"));
        };
        let options = match request.config_id.0.as_ref() {
            "mode" => self.switch_mode(&request.session_id, &value.0),
            "model" => {
                let sessions = lock(&self.sessions);
                let Some(entry) = sessions.get(request.session_id.0.as_ref()) else {
                    return responder.respond_with_error(unknown_session(&request.session_id));
                };
                let current = lock(&entry.models).current();
                if current == value.0.as_ref() {
                    // The one in use: choosing it changes nothing.
                    Ok(translate::config_options(entry.mode, &lock(&entry.models)))
                } else {
                    // The session answers once the agent has switched, or said why not.
                    let name = value.0.to_string();
                    return match entry.inbox.send(Inbox::SetModel { name, responder }) {
                        Ok(()) => Ok(()),
                        Err(mpsc::error::SendError(Inbox::SetModel { responder, .. })) => {
                            responder.respond_with_internal_error("the session has ended")
                        }
                        Err(_) => Ok(()),
                    };
                }
            }
            other => Err(invalid(format!("no config option `{other}`"))),
        };
        match options {
            Ok(options) => responder.respond(acp::SetSessionConfigOptionResponse::new(options)),
            Err(err) => responder.respond_with_error(err),
        }
    }

    fn spawn(&self, task: impl std::future::Future<Output = ()> + Send + 'static) {
        let mut tasks = lock(&self.tasks);
        tasks.retain(|task| !task.is_finished());
        tasks.push(tokio::spawn(task));
    }

    /// Makes `opened` a session of this connection: its requests find it from now on,
    /// `respond` answers the request that opened it, then its task starts (so no update
    /// of it reaches the client before that answer).
    fn attach(
        self: &Arc<Self>,
        cx: &ConnectionTo<Client>,
        opened: Opened,
        respond: impl FnOnce() -> Result<(), Error>,
    ) {
        let (inbox, received) = mpsc::unbounded_channel();
        let Opened {
            id,
            agent,
            models,
            mode,
            commands,
        } = opened;
        let models = Arc::new(Mutex::new(models));
        let weak = inbox.downgrade();
        lock(&self.sessions).insert(
            id.to_string(),
            Entry {
                inbox,
                models: Arc::clone(&models),
                mode,
            },
        );
        let _ = respond();
        // The commands are offered once, with the agent's prompt commands: here when they
        // came while the session opened, else by the session when they come.
        let mut session = Session::new(id, cx.clone(), agent, weak, *lock(&self.notices), models, mode);
        if let Some(commands) = commands {
            session.offer_commands(&commands);
        }
        self.spawn(async move {
            let _ = session.run(received).await;
        });
    }

    /// Starts the agent in `cwd` with the client's MCP servers and waits until it is
    /// ready; a recorded session is taken up first (and its history replayed to the
    /// client when asked).
    async fn open(
        &self,
        cx: &ConnectionTo<Client>,
        cwd: &Path,
        servers: Vec<acp::McpServer>,
        resume: Resume,
    ) -> Result<Opened, Error> {
        let mut options = self.options.clone();
        options.workspace = Some(cwd.to_path_buf());
        let mut extras =
            FaceExtras::default().with_mcp_servers(servers.into_iter().filter_map(mcp_server).collect());
        let replay = match resume {
            Resume::No => None,
            Resume::Yes { session, replay } => {
                let id = acp::SessionId::new(session.id().to_string());
                extras = extras.resuming(session);
                Some((id, replay))
            }
        };
        let internal = |message: String| Error::new(ErrorCode::INTERNAL_ERROR, message);
        let editor_session = Arc::new(OnceLock::new());
        if *lock(&self.editor_files) {
            extras = extras.with_client_files(Arc::new(EditorFiles::new(cx.clone(), editor_session.clone())));
        }
        let mut agent =
            api::start_with(&options, extras, &self.env).map_err(|err| internal(format!("{err:#}")))?;
        let mode = self.approval_mode(&options);
        let mut models = translate::Models::default();
        let mut commands = None;
        // A new session is open once the agent said what it runs and, right after, what
        // it may switch to.
        let mut configured = None;
        while let Some(event) = agent.events.recv().await {
            match event {
                Event::CommandsLoaded { commands: found, .. } => commands = Some(found),
                Event::SessionConfigured {
                    model: named,
                    session_id,
                    ..
                } => {
                    models.model = named;
                    if replay.is_none() {
                        configured = Some(session_id.unwrap_or_else(unrecorded_id));
                    }
                }
                Event::ModelChoices { choices } => {
                    models.choices = choices;
                    if let Some(id) = configured.take() {
                        let _ = editor_session.set(acp::SessionId::new(id.clone()));
                        return Ok(Opened {
                            id: acp::SessionId::new(id),
                            agent,
                            models,
                            mode,
                            commands,
                        });
                    }
                }
                Event::HistoryRestored { events } => {
                    if let Some((id, true)) = &replay {
                        for update in events.iter().flat_map(translate::replay) {
                            let _ = cx.send_notification(acp::SessionNotification::new(id.clone(), update));
                        }
                    }
                }
                Event::SessionResumed { id, .. } => {
                    let _ = editor_session.set(acp::SessionId::new(id.clone()));
                    return Ok(Opened {
                        id: acp::SessionId::new(id),
                        agent,
                        models,
                        mode,
                        commands,
                    });
                }
                Event::Error { message } => {
                    let _ = agent.ops.send(miniagent_protocol::Op::Shutdown);
                    return Err(internal(message));
                }
                Event::Notice { message } => tracing::info!("starting a session: {message}"),
                _ => {}
            }
        }
        Err(internal(
            "the agent stopped while the session started".to_string(),
        ))
    }

    /// The approval mode the session starts in: the command line's, else the
    /// configuration's.
    fn approval_mode(&self, options: &StartOptions) -> ApprovalMode {
        options.overrides.approval.unwrap_or_else(|| {
            api::Launch::prepare(options, None, &self.env)
                .map(|launch| launch.settings().approval)
                .unwrap_or(ApprovalMode::Ask)
        })
    }
}

/// An id for a session that is not recorded (no data folder): it lives as long as the
/// connection.
fn unrecorded_id() -> String {
    static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);
    format!(
        "unrecorded-{}",
        NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
    )
}

/// A client's MCP server as the api takes it; a kind this face does not know is left out.
fn mcp_server(server: acp::McpServer) -> Option<McpServerSpec> {
    match server {
        acp::McpServer::Stdio(stdio) => Some(McpServerSpec::Stdio {
            name: stdio.name,
            command: stdio.command.to_string_lossy().into_owned(),
            args: stdio.args,
            env: stdio.env.into_iter().map(|var| (var.name, var.value)).collect(),
        }),
        acp::McpServer::Http(http) => Some(McpServerSpec::Http {
            name: http.name,
            url: http.url,
            headers: http
                .headers
                .into_iter()
                .map(|header| (header.name, header.value))
                .collect(),
        }),
        acp::McpServer::Sse(sse) => Some(McpServerSpec::Sse {
            name: sse.name,
            url: sse.url,
            headers: sse
                .headers
                .into_iter()
                .map(|header| (header.name, header.value))
                .collect(),
        }),
        other => {
            tracing::warn!("an MCP server of a kind miniagent does not know was left out: {other:?}");
            None
        }
    }
}

/// The client's `cwd` as the workspace: it must be an absolute path to a folder.
fn workspace(cwd: &Path) -> Result<PathBuf, Error> {
    if !cwd.is_absolute() {
        return Err(invalid(format!(
            "cwd must be an absolute path, not `{}`",
            cwd.display()
        )));
    }
    cwd.canonicalize()
        .ok()
        .filter(|path| path.is_dir())
        .ok_or_else(|| invalid(format!("cwd `{}` is not a folder", cwd.display())))
}
