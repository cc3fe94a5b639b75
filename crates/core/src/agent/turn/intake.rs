//! The person's message on its way into a turn: its `@path` attachments, the check that
//! it could ever fit the prompt budget, the hooks that may add to it or refuse it, and
//! giving it back when it is refused.

use crate::agent::attach;
use crate::agent::compaction;
use crate::agent::history::{ContentBlock, Message};
use crate::agent::hooks;
use crate::agent::{Session, TurnContext};
use crate::hooks::HookEvent;
use crate::tools::output::cap_text;
use miniagent_protocol::Event;

/// How much of a refused (too large) message is echoed and recorded.
pub(super) const REFUSED_ECHO_BYTES: usize = 2_000;

/// Whether `message` could ever be sent: with the system prompt and the tools, alone in
/// the history, it must fit the prompt budget. A message that does not would make every
/// request of the session fail (it cannot be compacted: it is the person's own latest
/// words), and keep failing after a resume, so it is refused before it enters the history.
pub(super) fn fits_alone(
    session: &Session,
    context: &TurnContext,
    specs: &[crate::llm::ToolSpec],
    message: &Message,
) -> Result<(), String> {
    let budget = compaction::budget(context);
    let text = &message.content;
    // A token is at least one byte, so a message under half the budget is left to the
    // usual checks (this skips counting every ordinary message).
    let bytes: usize = text
        .iter()
        .map(|block| match block {
            ContentBlock::Text { text } => text.len(),
            _ => 0,
        })
        .sum();
    if (bytes as u64) < budget / 2 {
        return Ok(());
    }
    let counter = session.context.counter();
    let fixed = counter.count(&context.options.system_prompt) + counter.tools(specs);
    let tokens = counter.message(message);
    if fixed.saturating_add(tokens) <= budget {
        return Ok(());
    }
    let config = &context.options.config;
    Err(format!(
        "it is about {tokens} tokens ({bytes} bytes), and with the system prompt and tools (about {fixed} tokens) it can never fit the prompt budget of {budget} tokens (agent.token_limit {}, window {}, output reserve {}). Send less, or save the text to a file in the workspace and ask for it to be read in parts.",
        config.agent.token_limit, config.model.context_window, config.model.max_output_tokens
    ))
}

/// The person's message once hooks had their say: what the session's `SessionStart` hooks
/// and the `UserPromptSubmit` hooks add as context. `None` when a hook refused it or the
/// person interrupted: then the text went back to them and the turn's last event is out.
pub(super) async fn hooked_message(
    session: &mut Session,
    context: &TurnContext,
    message: Message,
) -> Option<Message> {
    let mut message = message;
    // The person's own words: what the session's hooks add, and the files their mentions
    // attached, are not theirs.
    let prompt = attach::persons_words(&message);
    if let Some(start) = session.session_start.take() {
        match start.finished(&context.cancel).await {
            Some(added) => message = hooks::with_context(message, HookEvent::SessionStart, &added),
            None => return refuse(context, message, None),
        }
    }
    let fired = hooks::fire(
        context,
        HookEvent::UserPromptSubmit,
        None,
        serde_json::json!({ "prompt": prompt }),
    )
    .await;
    if fired.cancelled {
        return refuse(context, message, None);
    }
    if let Some(blocked) = fired.blocked {
        return refuse(context, message, Some(blocked.reason));
    }
    Some(hooks::with_context(
        message,
        HookEvent::UserPromptSubmit,
        &fired.context,
    ))
}

/// Ends a turn whose message never entered the history: the person interrupted while its
/// hooks ran (`reason` `None`), or a hook refused it for `reason`. The person's text goes
/// back to them.
fn refuse(context: &TurnContext, message: Message, reason: Option<String>) -> Option<Message> {
    give_back(context, attach::persons_words(&message));
    context.events.emit_closing(match reason {
        None => Event::TurnAborted {
            reason: "you interrupted the turn while its hooks ran; the message was not sent".to_string(),
        },
        Some(reason) => Event::Error {
            message: format!("the message was not sent: a UserPromptSubmit hook refused it: {reason}"),
        },
    });
    None
}

/// `text` as the person's message, with the files its `@path` mentions name (read on a
/// blocking thread).
pub(super) async fn with_attachments(context: &TurnContext, text: String) -> attach::WithAttachments {
    let workspace = context.workspace.clone();
    let secrets = context.options.secrets.clone();
    let fallback = text.clone();
    let rules = rule_check(context);
    tokio::task::spawn_blocking(move || attach::attach(&workspace, &secrets, text, &rules))
        .await
        .unwrap_or_else(|_| attach::WithAttachments {
            message: Message::user(fallback),
            files: Vec::new(),
        })
}

/// The `[permissions]` rules for `read_file`, asked of each file a mention names: a deny
/// rule refuses it, and an ask rule too (a mention is not asked about: the model can be
/// asked to read the file, and the rule asks then).
fn rule_check(context: &TurnContext) -> attach::RuleCheck {
    let rules = context.policy.with(|policy| policy.permissions().clone());
    let workspace = context.workspace.clone();
    let Some(read_file) = context.options.tools.get("read_file") else {
        return Box::new(|_| None);
    };
    Box::new(move |path: &str| {
        let call = read_file.read(serde_json::json!({ "path": path })).ok()?;
        let rule = rules.decide("read_file", &*call, &workspace)?;
        match rule.list {
            miniagent_protocol::RuleList::Allow => None,
            miniagent_protocol::RuleList::Deny => Some(format!("{rule} refuses reading it")),
            miniagent_protocol::RuleList::Ask => Some(format!(
                "{rule} asks before it is read: ask for it to be read instead"
            )),
        }
    })
}

/// The turn's request could not be made to fit. When nothing of the turn was sent yet
/// (its message is still the history's last), the message is taken back out of the
/// session, so a refused message never weighs on the next (each would need more room
/// than the last), and given back to the person; the error says the ways out.
pub(super) fn too_large(session: &mut Session, context: &TurnContext, pushed: usize, why: &str) -> Event {
    let unsent = session.context.messages().len() == pushed;
    let Some(message) = unsent.then(|| session.context.take_back_last_user()).flatten() else {
        return Event::Error {
            message: format!("the request was not sent: {why}"),
        };
    };
    super::super::turn_message(&mut session.turns, None);
    context.events.commit(session);
    // The person's own words, without the files their mentions attached.
    give_back(context, attach::persons_words(&message));
    Event::Error {
        message: format!(
            "the message was not sent, and was taken back out of the session: {why}. Send something shorter, start a new session (/clear), or raise agent.token_limit"
        ),
    }
}

/// Gives the person's refused message back to the front end, whole; the log records it
/// cut, like the turn's start (a refused message can be many times the budget), so a
/// resumed session does not count the refused turn.
pub(super) fn give_back(context: &TurnContext, text: String) {
    let recorded = Event::PromptReturned {
        text: cap_text(&text, REFUSED_ECHO_BYTES),
    };
    context
        .events
        .give_back(Event::PromptReturned { text }, &recorded);
}
