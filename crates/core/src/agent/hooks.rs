//! Where the agent runs hooks ([`crate::hooks`]): the session's start, a message sent, a
//! tool call before and after it runs, the turn about to end, a summary about to be
//! written. This is the glue: each hook's input as the event gives it, its problems
//! reported as notices (shown, printed by exec, recorded in the log), and an interrupt
//! stopping it.

use serde_json::{Map, Value, json};
use tokio_util::sync::CancellationToken;

use super::history::{ContentBlock, Message};
use super::{AgentOptions, EventSink, TurnContext};
use crate::hooks::{self, Fired, HookEnv, HookEvent};
use miniagent_protocol::Event;

/// A turn whose Stop hooks keep asking to go on ends after this many continuations.
pub(super) const MAX_STOP_CONTINUATIONS: u32 = 3;

/// What hooks run with in this session.
fn env_of(options: &AgentOptions) -> HookEnv {
    HookEnv {
        workspace: options.workspace.clone(),
        bash: options.config.tools.bash.clone(),
        // Every key variable the config names, a profile's too (as `bash` hides them).
        key_vars: std::iter::once(&options.config.model.api_key_env)
            .chain(
                options
                    .config
                    .profiles
                    .values()
                    .map(|profile| &profile.model.api_key_env),
            )
            .map(|name| name.trim().to_string())
            .filter(|name| !name.is_empty())
            .collect(),
    }
}

/// Runs `event`'s hooks matching `subject` with `fields` (besides the common ones),
/// reporting their problems on `events`; `cancel` stops them.
async fn fire_with(
    options: &AgentOptions,
    events: &EventSink,
    cancel: &CancellationToken,
    (event, subject): (HookEvent, Option<&str>),
    fields: Map<String, Value>,
) -> Fired {
    if !options.hooks.has(event) {
        return Fired::default();
    }
    let transcript = options.session_log.path();
    let input = hooks::input(
        event,
        options.session_log.id().as_deref(),
        transcript.as_deref(),
        &options.workspace,
        fields,
    );
    let fired = options
        .hooks
        .fire(event, subject, &input, &env_of(options), cancel)
        .await;
    for message in &fired.notices {
        events.emit(Event::Notice {
            message: message.clone(),
        });
    }
    fired
}

/// [`fire_with`] in a turn: its sink, its interrupt.
pub(super) async fn fire(
    context: &TurnContext,
    event: HookEvent,
    subject: Option<&str>,
    fields: Value,
) -> Fired {
    let fields = match fields {
        Value::Object(fields) => fields,
        _ => Map::new(),
    };
    fire_with(
        &context.options,
        &context.events,
        &context.cancel,
        (event, subject),
        fields,
    )
    .await
}

/// The session's `SessionStart` hooks, started at once in a task of their own (they
/// must not hold up the router: an interrupt or a shutdown is answered meanwhile); the
/// first turn waits for what they add to its message.
pub(super) struct SessionStart {
    task: tokio::task::JoinHandle<Vec<String>>,
    cancel: CancellationToken,
}

impl SessionStart {
    pub(super) fn start(options: &std::sync::Arc<AgentOptions>, events: &EventSink) -> Option<Self> {
        if !options.hooks.has(HookEvent::SessionStart) {
            return None;
        }
        let cancel = CancellationToken::new();
        let task = tokio::spawn({
            let (options, events, cancel) = (std::sync::Arc::clone(options), events.clone(), cancel.clone());
            async move {
                let fields = json!({"source": "startup"});
                let Value::Object(fields) = fields else {
                    return Vec::new();
                };
                let subject = Some("startup");
                fire_with(
                    &options,
                    &events,
                    &cancel,
                    (HookEvent::SessionStart, subject),
                    fields,
                )
                .await
                .context
            }
        });
        Some(Self { task, cancel })
    }

    /// What the hooks added, once they are done; `None` when the turn was interrupted
    /// first (then they are stopped).
    pub(super) async fn finished(self, turn: &CancellationToken) -> Option<Vec<String>> {
        let Self { task, cancel } = self;
        let _stop = cancel.drop_guard();
        tokio::select! {
            _ = turn.cancelled() => None,
            context = task => Some(context.unwrap_or_default()),
        }
    }
}

/// The person's message with what hooks added (`context`, from `event`'s hooks) after
/// their own text, each marked as a hook's.
pub(super) fn with_context(mut message: Message, event: HookEvent, context: &[String]) -> Message {
    for text in context {
        message.content.push(ContentBlock::Text {
            text: format!(
                "\n\n<hook-context event=\"{}\">\n{text}\n</hook-context>",
                event.name()
            ),
        });
    }
    message
}
