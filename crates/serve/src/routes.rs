//! The endpoints: each reads its request, asks the api or the session, and answers. No
//! agent logic is here, only translation between HTTP and `Op`/`Event`.

use std::convert::Infallible;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Weak};
use std::time::Duration;

use axum::Json;
use axum::extract::rejection::{JsonRejection, QueryRejection};
use axum::extract::{DefaultBodyLimit, Path as UrlPath, Query, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::sse::{Event as SseEvent, KeepAlive, Sse};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Router, middleware};
use futures_util::Stream;
use miniagent_api::{self as api, FaceExtras, RecordedSession, SessionRequest, StartOptions};
use miniagent_protocol::{ApprovalMode, Decision, Event, Op};
use serde::Deserialize;
use serde_json::{Value, json};

use crate::error::ApiError;
use crate::guard::guard;
use crate::session::{Indexed, Live, PromptRefused, SessionFacts, Subscription, TurnState};
use crate::state::{AppState, Slot};

/// How long a new session may take to say it is ready (its MCP servers connect later).
const START_TIMEOUT: Duration = Duration::from_secs(60);

/// How long closing a session waits for its log to be written out.
const CLOSE_TIMEOUT: Duration = Duration::from_secs(10);

type Answer = Result<Response, ApiError>;

pub fn router(state: Arc<AppState>) -> Router {
    Router::new()
        .route("/health", get(health))
        .route("/ready", get(ready))
        .route("/api/v1/sessions", post(create).get(list))
        .route("/api/v1/sessions/{id}", axum::routing::delete(close))
        .route("/api/v1/sessions/{id}/resume", post(resume))
        .route("/api/v1/sessions/{id}/events", get(events))
        .route("/api/v1/sessions/{id}/approvals", post(approve))
        .route("/api/v1/sessions/{id}/interrupt", post(interrupt))
        .route("/api/v1/prompt", post(prompt))
        .fallback(not_found)
        .method_not_allowed_fallback(method_not_allowed)
        .layer(DefaultBodyLimit::max(state.settings.max_body_bytes))
        .layer(middleware::from_fn_with_state(Arc::clone(&state), guard))
        .with_state(state)
}

async fn not_found() -> ApiError {
    ApiError::new(StatusCode::NOT_FOUND, "not_found", "no such endpoint")
}

async fn method_not_allowed() -> ApiError {
    ApiError::new(
        StatusCode::METHOD_NOT_ALLOWED,
        "method_not_allowed",
        "this endpoint does not take that method",
    )
}

async fn health() -> Json<Value> {
    Json(json!({"status": "ok"}))
}

/// 200 when a session could start now: the configuration loads, a key is there, and
/// there is room below `max_sessions`.
async fn ready(State(state): State<Arc<AppState>>) -> Answer {
    let (open, max) = {
        let registry = state.registry();
        (
            registry.live.len() + registry.starting,
            state.settings.max_sessions,
        )
    };
    let not_ready = |why: String| ApiError::new(StatusCode::SERVICE_UNAVAILABLE, "not_ready", why);
    if open >= max {
        return Err(not_ready(format!("{open} of {max} sessions are open")));
    }
    let (mut base, env) = (state.base.clone(), state.env.clone());
    // A check changes nothing: `--trust-workspace` is remembered when a session starts,
    // not here.
    base.trust_workspace = false;
    let prepared = tokio::task::spawn_blocking(move || {
        api::Launch::prepare(&base, None, &env).map(|launch| launch.missing_key().map(str::to_string))
    })
    .await;
    match prepared {
        Ok(Ok(None)) => {
            Ok(Json(json!({"status": "ready", "sessions": open, "max_sessions": max})).into_response())
        }
        Ok(Ok(Some(why))) => Err(not_ready(clean(&why))),
        Ok(Err(err)) => Err(not_ready(clean(&format!("{err:#}")))),
        Err(_) => Err(not_ready("the check stopped unexpectedly".to_string())),
    }
}

fn clean(text: &str) -> String {
    miniagent_text::clean(text).chars().take(1000).collect()
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct CreateBody {
    workspace: PathBuf,
    #[serde(default)]
    model: Option<String>,
    #[serde(default)]
    approval: Option<ApprovalMode>,
}

async fn create(State(state): State<Arc<AppState>>, body: Result<Json<CreateBody>, JsonRejection>) -> Answer {
    let Json(body) = body?;
    let request = SessionRequest {
        workspace: body.workspace,
        model: body.model,
        approval: body.approval,
    };
    let options = state.settings.admit(&request).map_err(refused)?;
    let slot = Slot::take(&state).ok_or_else(too_many)?;
    let live = open(&state, slot, options, FaceExtras::default(), None).await?;
    Ok((StatusCode::CREATED, Json(describe(&live))).into_response())
}

fn refused(why: api::Refusal) -> ApiError {
    let status = match why {
        api::Refusal::RelativeWorkspace | api::Refusal::NoWorkspace => StatusCode::BAD_REQUEST,
        _ => StatusCode::FORBIDDEN,
    };
    ApiError::new(status, "not_admitted", why.to_string())
}

fn too_many() -> ApiError {
    ApiError::new(
        StatusCode::SERVICE_UNAVAILABLE,
        "too_many_sessions",
        "this server has as many sessions open as serve.max_sessions allows; close one first",
    )
}

/// What a session is, as create, resume and the list say it.
fn describe(live: &Live) -> Value {
    let (turn, last_event, waiting) = live.state();
    let facts = &live.facts;
    json!({
        "session_id": facts.id,
        "model": facts.model,
        "provider": facts.provider,
        "workspace": facts.workspace,
        "approval": facts.approval,
        "tools": facts.tools,
        "state": match (turn, waiting) {
            (TurnState::Idle, _) => "idle",
            (_, 0) => "running",
            _ => "waiting_approval",
        },
        "last_event": last_event,
    })
}

/// Starts a session with `options` and takes `slot` for it; with `resuming`, waits until
/// the recorded session `resuming` names is taken up (or refused).
async fn open(
    state: &Arc<AppState>,
    slot: Slot,
    options: StartOptions,
    extras: FaceExtras,
    resuming: Option<&str>,
) -> Result<Arc<Live>, ApiError> {
    let approval = options.overrides.approval.unwrap_or(ApprovalMode::Ask);
    let env = state.env.clone();
    let started = tokio::task::spawn_blocking(move || api::start_with(&options, extras, &env)).await;
    let mut handle = match started {
        Ok(Ok(handle)) => handle,
        Ok(Err(err)) => {
            tracing::warn!("serve: a session could not start: {err:#}");
            return Err(ApiError::new(
                StatusCode::INTERNAL_SERVER_ERROR,
                "cannot_start",
                clean(&format!("{err:#}")),
            ));
        }
        Err(_) => return Err(internal("starting the session stopped unexpectedly")),
    };
    let mut earlier = Vec::new();
    let mut configured = None;
    let waited = tokio::time::timeout(START_TIMEOUT, async {
        while let Some(event) = handle.events.recv().await {
            match &event {
                Event::SessionConfigured {
                    model,
                    provider,
                    workspace,
                    tools,
                    session_id,
                    ..
                } => {
                    configured = Some((
                        model.clone(),
                        provider.clone(),
                        workspace.clone(),
                        tools.clone(),
                        session_id.clone(),
                    ));
                    if resuming.is_none() {
                        earlier.push(event);
                        return Ok(None);
                    }
                }
                Event::SessionResumed { id, .. } if resuming.is_some() => {
                    let id = id.clone();
                    earlier.push(event);
                    return Ok(Some(id));
                }
                Event::Error { message } if resuming.is_some() => return Err(message.clone()),
                _ => {}
            }
            earlier.push(event);
        }
        Err("the session stopped as it started".to_string())
    })
    .await;
    let resumed_id = match waited {
        Ok(Ok(id)) => id,
        Ok(Err(why)) => {
            let _ = handle.ops.send(Op::Shutdown);
            return Err(ApiError::new(StatusCode::CONFLICT, "cannot_resume", clean(&why)));
        }
        Err(_) => {
            let _ = handle.ops.send(Op::Shutdown);
            return Err(internal("the session did not start in time"));
        }
    };
    let Some((model, provider, workspace, tools, session_id)) = configured else {
        return Err(internal("the session did not say how it was configured"));
    };
    let id = match resumed_id.or(session_id) {
        Some(id) => id,
        None => {
            let mut registry = state.registry();
            registry.unrecorded += 1;
            format!("unrecorded-{}", registry.unrecorded)
        }
    };
    let facts = SessionFacts {
        id,
        model,
        provider,
        workspace,
        approval,
        tools: tools.into_iter().map(|tool| tool.name).collect(),
    };
    let registry: Weak<AppState> = Arc::downgrade(state);
    let live = Live::start(facts, handle, earlier, state.settings.events_kept, move |live| {
        if let Some(state) = registry.upgrade() {
            let mut registry = state.registry();
            if registry
                .live
                .get(&live.facts.id)
                .is_some_and(|open| Arc::ptr_eq(open, live))
            {
                registry.live.remove(&live.facts.id);
            }
        }
    });
    slot.fill(Arc::clone(&live));
    Ok(live)
}

fn internal(why: &str) -> ApiError {
    ApiError::new(StatusCode::INTERNAL_SERVER_ERROR, "internal", why)
}

/// The live sessions, and the recorded ones whose workspace is in a root.
async fn list(State(state): State<Arc<AppState>>) -> Json<Value> {
    let mut live: Vec<(String, Value)> = state
        .registry()
        .live
        .iter()
        .map(|(id, live)| (id.clone(), describe(live)))
        .collect();
    live.sort_by(|a, b| a.0.cmp(&b.0));
    let store = state.store.clone();
    let roots = state.settings.roots.clone();
    let recorded = tokio::task::spawn_blocking(move || {
        store
            .list()
            .into_iter()
            .filter(|info| {
                roots
                    .iter()
                    .any(|root| Path::new(&info.workspace).starts_with(root))
            })
            .filter_map(|info| serde_json::to_value(info).ok())
            .collect::<Vec<_>>()
    })
    .await
    .unwrap_or_default();
    Json(json!({
        "live": live.into_iter().map(|(_, value)| value).collect::<Vec<_>>(),
        "recorded": recorded,
    }))
}

/// Continues recorded session `id` as a live one, in its own workspace (which must be in
/// a root), with the server's model and `ask`.
async fn resume(State(state): State<Arc<AppState>>, UrlPath(id): UrlPath<String>) -> Answer {
    {
        let mut registry = state.registry();
        if registry.live.contains_key(&id) || !registry.resuming.insert(id.clone()) {
            return Err(ApiError::new(
                StatusCode::CONFLICT,
                "already_live",
                "this session is open on this server already",
            ));
        }
    }
    let answer = resume_recorded(&state, &id).await;
    state.registry().resuming.remove(&id);
    answer
}

async fn resume_recorded(state: &Arc<AppState>, id: &str) -> Answer {
    let store = state.store.clone();
    let wanted = id.to_string();
    let found = tokio::task::spawn_blocking(move || {
        let session = store.find(&wanted).ok()?;
        let origin = store.origin(&session).ok()?;
        Some((session, origin))
    })
    .await
    .ok()
    .flatten();
    let (session, origin): (RecordedSession, _) = found.ok_or_else(|| ApiError::unknown_session(id))?;
    let request = SessionRequest {
        workspace: origin.workspace,
        model: None,
        approval: None,
    };
    let options = state.settings.admit(&request).map_err(refused)?;
    let slot = Slot::take(state).ok_or_else(too_many)?;
    let extras = FaceExtras::default().resuming(session);
    let live = open(state, slot, options, extras, Some(id)).await?;
    Ok((StatusCode::OK, Json(describe(&live))).into_response())
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct PromptBody {
    session_id: String,
    message: String,
}

/// Sends a message as the session's next turn and streams that turn's events, ending
/// after its closing event. A prompt while a turn runs is refused (409), not queued.
async fn prompt(
    State(state): State<Arc<AppState>>,
    body: Result<Json<PromptBody>, JsonRejection>,
) -> Result<Sse<impl Stream<Item = Result<SseEvent, Infallible>>>, ApiError> {
    let Json(body) = body?;
    let live = state
        .live(&body.session_id)
        .ok_or_else(|| ApiError::unknown_session(&body.session_id))?;
    if body.message.trim().is_empty() {
        return Err(ApiError::new(
            StatusCode::BAD_REQUEST,
            "empty_message",
            "the message is empty",
        ));
    }
    match live.prompt(body.message) {
        Ok(subscription) => Ok(stream(subscription, true)),
        Err(PromptRefused::TurnRunning) => Err(ApiError::new(
            StatusCode::CONFLICT,
            "turn_running",
            "a turn is running in this session; prompts are not queued: wait for it to end (follow GET /api/v1/sessions/{id}/events) or interrupt it",
        )),
        Err(PromptRefused::Ended) => Err(ApiError::new(
            StatusCode::CONFLICT,
            "session_ended",
            "this session's agent has stopped",
        )),
    }
}

/// The SSE response: each event as `id: INDEX`, `event: TYPE`, `data: JSON`.
fn stream(
    subscription: Subscription,
    until_turn_end: bool,
) -> Sse<impl Stream<Item = Result<SseEvent, Infallible>>> {
    let events = futures_util::stream::unfold(
        (subscription, false),
        move |(mut subscription, over)| async move {
            if over {
                return None;
            }
            let event = subscription.next().await?;
            let over = until_turn_end && event.closes_turn;
            Some((Ok(sse_event(&event)), (subscription, over)))
        },
    );
    Sse::new(events).keep_alive(KeepAlive::default())
}

fn sse_event(event: &Indexed) -> SseEvent {
    SseEvent::default()
        .id(event.index.to_string())
        .event(&event.kind)
        .data(&event.json)
}

#[derive(Deserialize)]
struct EventsQuery {
    since: Option<u64>,
}

/// The session's events after an index (`Last-Event-ID`, else `?since=N`, else all that
/// are kept), then the live ones; 410 when some after it are no longer kept.
async fn events(
    State(state): State<Arc<AppState>>,
    UrlPath(id): UrlPath<String>,
    headers: HeaderMap,
    query: Result<Query<EventsQuery>, QueryRejection>,
) -> Result<Sse<impl Stream<Item = Result<SseEvent, Infallible>>>, ApiError> {
    let Query(query) = query?;
    let live = state.live(&id).ok_or_else(|| ApiError::unknown_session(&id))?;
    let since = match headers.get("last-event-id") {
        Some(value) => value
            .to_str()
            .ok()
            .and_then(|value| value.trim().parse::<u64>().ok())
            .ok_or_else(|| {
                ApiError::new(
                    StatusCode::BAD_REQUEST,
                    "bad_last_event_id",
                    "Last-Event-ID must be an event index",
                )
            })?,
        None => query.since.unwrap_or(0),
    };
    match live.subscribe(since) {
        Ok(subscription) => Ok(stream(subscription, false)),
        Err(too_old) => Err(ApiError {
            first_available: Some(too_old.first_available),
            ..ApiError::new(
                StatusCode::GONE,
                "events_gone",
                format!(
                    "events after {since} are no longer kept here; the oldest kept is {} (the session's log has them all)",
                    too_old.first_available
                ),
            )
        }),
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ApprovalBody {
    call_id: String,
    decision: ClientDecision,
    #[serde(default)]
    reason: Option<String>,
}

#[derive(Clone, Copy, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
enum ClientDecision {
    Approve,
    ApproveForSession,
    Deny,
    DenyForSession,
    Abort,
}

async fn approve(
    State(state): State<Arc<AppState>>,
    UrlPath(id): UrlPath<String>,
    body: Result<Json<ApprovalBody>, JsonRejection>,
) -> Answer {
    let Json(body) = body?;
    let live = state.live(&id).ok_or_else(|| ApiError::unknown_session(&id))?;
    let reason = body.reason.clone();
    let decision = match body.decision {
        ClientDecision::Approve => Decision::Approve,
        ClientDecision::ApproveForSession => Decision::ApproveForSession,
        ClientDecision::Deny => Decision::Deny { reason },
        ClientDecision::DenyForSession => Decision::DenyForSession { reason },
        ClientDecision::Abort => Decision::Abort,
    };
    if !live.answer(&body.call_id, decision.clone()) {
        return Err(ApiError::new(
            StatusCode::NOT_FOUND,
            "not_waiting",
            "no call with that id waits for approval in this session",
        ));
    }
    Ok(Json(json!({"call_id": body.call_id, "decision": decision})).into_response())
}

async fn interrupt(State(state): State<Arc<AppState>>, UrlPath(id): UrlPath<String>) -> Answer {
    let live = state.live(&id).ok_or_else(|| ApiError::unknown_session(&id))?;
    let (turn, _, _) = live.state();
    live.send(Op::Interrupt);
    Ok((
        StatusCode::ACCEPTED,
        Json(json!({"session_id": id, "turn_running": turn != TurnState::Idle})),
    )
        .into_response())
}

/// Ends the live session; its log stays, and can be resumed.
async fn close(State(state): State<Arc<AppState>>, UrlPath(id): UrlPath<String>) -> Answer {
    let live = state
        .registry()
        .live
        .remove(&id)
        .ok_or_else(|| ApiError::unknown_session(&id))?;
    live.send(Op::Shutdown);
    let finished = tokio::time::timeout(CLOSE_TIMEOUT, live.finished()).await.is_ok();
    Ok(Json(json!({"session_id": id, "closed": finished})).into_response())
}
