//! Large arguments of calls that ran leave the prompt: they become stubs naming the
//! saved files that hold them, as large results do.

use serde_json::Value;

use super::results_store;
use crate::agent::history::Role;
use crate::agent::{Session, TurnContext};

/// Arguments longer than this leave the prompt once their call ran when
/// `tools.large_result_bytes` is 0 (large results are not saved then, but a model's
/// megabyte `write_file` must still not go back to it at every step).
const ARGUMENT_LIMIT_BYTES: usize = 20_000;

/// Shows the large arguments of the step's calls, which have all run (or been answered
/// for), as stubs naming the saved files that hold them, like large results: a model may
/// write more in one call than the budget holds, and the next request would carry it.
pub(in crate::agent) fn stub_large_arguments(session: &mut Session, context: &TurnContext) {
    let messages = session.context.messages();
    let Some(results) = messages.iter().rposition(|m| m.role == Role::Tool) else {
        return;
    };
    if let Some(index) = results
        .checked_sub(1)
        .filter(|i| messages[*i].role == Role::Assistant)
        && stub_arguments_of(session, context, index)
        && !context.events.is_nested()
    {
        // The gauge counted the reply whole; until the next reply it would show a prompt
        // the model is never sent.
        let usage = crate::agent::compaction::usage_event(session, &context.options, context.meter.get());
        context.events.emit(usage);
    }
}

/// [`stub_large_arguments`] for the whole history, at a turn's start: a session recorded
/// before arguments were stubbed (resumed) may hold one too large for any prompt. Only
/// after the last message a summary let go of: rewriting a message logs it and all after
/// it again, and those hold no text any more.
pub(in crate::agent) fn stub_earlier_large_arguments(session: &mut Session, context: &TurnContext) {
    let messages = session.context.messages();
    let from = (0..messages.len())
        .rev()
        .find(|index| session.context.is_released(*index))
        .map_or(0, |index| index + 1);
    let replies: Vec<usize> = (from..messages.len().saturating_sub(1))
        .filter(|index| messages[*index].role == Role::Assistant && messages[index + 1].role == Role::Tool)
        .collect();
    for index in replies {
        stub_arguments_of(session, context, index);
    }
}

/// Arguments longer than this many bytes become stubs once their call ran.
pub(in crate::agent) fn argument_limit(context: &TurnContext) -> usize {
    match context.options.config.tools.large_result_bytes {
        0 => ARGUMENT_LIMIT_BYTES,
        limit => limit,
    }
}

/// Stubs the large arguments of the calls in `messages()[index]`; returns whether there
/// were any.
fn stub_arguments_of(session: &mut Session, context: &TurnContext, index: usize) -> bool {
    let limit = argument_limit(context);
    let store = results_store(context);
    let secrets = &context.options.secrets;
    let stubbed: Vec<(String, Value)> = session.context.messages()[index]
        .tool_uses()
        .filter_map(|call| {
            let mut save = |ordinal: usize, text: &str| {
                let store = store.as_ref()?;
                store
                    .save(call.id, &format!("-argument-{ordinal}"), &secrets.redact(text))
                    .ok()
            };
            let input = crate::agent::context::stub_arguments(call.input, limit, &mut save)?;
            Some((call.id.to_string(), input))
        })
        .collect();
    let any = !stubbed.is_empty();
    for (id, input) in stubbed {
        session.context.set_call_input(index, &id, input);
    }
    any
}
