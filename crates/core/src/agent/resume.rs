//! [`Op::Resume`](miniagent_protocol::Op::Resume): continue a recorded session. Its history,
//! summaries, masking, remembered approvals and token figures replace the current ones,
//! and later records are appended to its log.

use std::path::Path;

use super::{Restored, Session, Shared};
use crate::session;
use crate::tokens::TokenCounter;
use miniagent_protocol::{ApprovalRule, Event};

pub(super) async fn resume(shared: &Shared, path: &Path) {
    let events = &shared.events;
    let loaded = match session::load(path) {
        Ok(loaded) => loaded,
        Err(why) => {
            events.emit(Event::Error {
                message: format!("cannot resume: {why}"),
            });
            return;
        }
    };
    let mut session = shared.session.lock().await;
    // What this session did so far stays in its own log.
    events.checkpoint(&mut session);
    let closing = loaded.closing_events();
    let Some((restored, mended)) = sendable(shared, path, &loaded, &closing, session.context.counter())
    else {
        return;
    };
    let model = shared.options.client.model().to_string();
    let provider = shared.options.client.provider().to_string();
    // Continuing without recording would lose what comes next: no log, no resume.
    if let Err(why) = shared
        .options
        .session_log
        .resume(path, &loaded, &model, &provider)
    {
        warn(events, &loaded);
        events.emit(Event::Error {
            message: format!("cannot resume: {why}"),
        });
        return;
    }
    // The front end shows the session it continues from the agent's copy, before what
    // follows from here (which is recorded as usual).
    events.show(Event::HistoryRestored {
        events: loaded.events().map(|(_, event)| event.clone()).collect(),
    });
    for note in mended {
        events.emit(Event::Notice {
            message: format!("the resumed history was mended: {note}"),
        });
    }
    session.context = restored.context;
    session.last_usage = Default::default();
    shared.meter.set(restored.meter);
    session.compaction_log = restored.compactions;
    session.turns = restored.turns;
    super::checkpoints::resumed(shared, own_file_changes(shared, path, restored.file_changes));
    let rules = restore_rules(shared, path, restored.rules, restored.refused);
    // Calls and a turn the log left open are closed, and the closing is recorded.
    for event in closing {
        events.emit(event);
    }
    // After them, as the session's last words before this one's.
    warn(events, &loaded);
    announce(shared, &mut session, path, &loaded);
    if (restored.model.as_str(), restored.provider.as_str()) != (model.as_str(), provider.as_str())
        && !restored.model.is_empty()
    {
        events.emit(Event::Notice {
            message: model_change(
                (&restored.recorded_model, &restored.recorded_provider),
                (&restored.model, &restored.provider),
                (&model, &provider),
            ),
        });
    }
    events.emit(rules);
    if let Some(usage) = restored.usage {
        events.emit(usage);
    }
    events.checkpoint(&mut session);
}

/// The log's history made one a provider takes, with notes on what was mended; `None`
/// (and the error said) when it cannot be. This comes before anything is written: a
/// damaged or edited log must not send (and record) what every request would fail on.
fn sendable(
    shared: &Shared,
    path: &Path,
    loaded: &session::Loaded,
    closing: &[Event],
    counter: TokenCounter,
) -> Option<(Restored, Vec<String>)> {
    let mut restored = loaded.restore(counter);
    let config = &shared.options.config;
    let window = config.agent.token_limit.min(config.model.context_window);
    let mut mended = restored.cut_oversized_messages(window);
    match restored.make_sendable(closing) {
        Ok(notes) => mended.extend(notes),
        Err(why) => {
            warn(&shared.events, loaded);
            shared.events.emit(Event::Error {
                message: format!("cannot resume {}: {why}", path.display()),
            });
            return None;
        }
    }
    Some((restored, mended))
}

/// The file changes a resumed log recorded, which `/undo` and `/rewind` may take back:
/// only from this user's own logs. A log from anywhere else could claim it created any
/// file (a rewind would delete it) or name contents to write back.
fn own_file_changes(
    shared: &Shared,
    path: &Path,
    recorded: crate::checkpoint::Ledger,
) -> crate::checkpoint::Ledger {
    let own = session::store::is_own_log(shared.options.session_log.sessions_folder().as_deref(), path);
    if own {
        return recorded;
    }
    if !recorded.steps().is_empty() {
        shared.events.emit(Event::Notice {
            message: format!(
                "{} is not one of your recorded sessions, so the file changes it records cannot be taken back here (/undo and /rewind start from this point)",
                path.display()
            ),
        });
    }
    crate::checkpoint::Ledger::default()
}

/// Puts the log's remembered approvals and refusals in place of the current ones, and
/// returns the event that lists them. They come back only from this user's own logs: a
/// log from anywhere else could name any rule.
fn restore_rules(
    shared: &Shared,
    path: &Path,
    recorded: Vec<ApprovalRule>,
    refused: Vec<ApprovalRule>,
) -> Event {
    let own = session::store::is_own_log(shared.options.session_log.sessions_folder().as_deref(), path);
    if !own && !recorded.is_empty() {
        shared.events.emit(Event::Notice {
            message: format!(
                "{} is not one of your recorded sessions, so its {} remembered approval(s) were not restored",
                path.display(),
                recorded.len()
            ),
        });
    }
    let (rules, refused) = if own {
        (recorded, refused)
    } else {
        Default::default()
    };
    shared.policy.with(|policy| {
        for rule in [policy.rules(), policy.refused()].concat() {
            policy.revoke(&rule);
        }
        for rule in refused {
            policy.refuse(rule);
        }
        for rule in rules {
            policy.remember(rule);
        }
        policy.rules_event()
    })
}

/// Says which session goes on (under which id, in which file), its size, and the gauge.
fn announce(shared: &Shared, session: &mut Session, path: &Path, loaded: &session::Loaded) {
    let events = &shared.events;
    // A message taken back out of the session was not a turn.
    let turns = loaded
        .events()
        .map(|(_, event)| match event {
            Event::TurnStarted { .. } => 1,
            Event::PromptReturned { .. } => -1,
            _ => 0,
        })
        .sum::<i64>()
        .max(0);
    // A log from elsewhere goes on as a copy in the sessions folder, perhaps under a new
    // id: the one to continue it with is the copy's.
    let id = shared
        .options
        .session_log
        .id()
        .unwrap_or_else(|| loaded.header.id.clone());
    if let Some(copy) = shared.options.session_log.path().filter(|copy| copy != path) {
        events.emit(Event::Notice {
            message: format!(
                "{} is not in your sessions folder, so it is left as it was: the session goes on in a copy, {}",
                path.display(),
                copy.display()
            ),
        });
    }
    events.emit(Event::SessionResumed {
        id,
        messages: session.context.messages().len() as u64,
        turns: u32::try_from(turns).unwrap_or(u32::MAX),
    });
    events.emit(super::compaction::usage_event(
        session,
        &shared.options,
        shared.meter.get(),
    ));
}

/// The notice of a session that goes on with another model than the one that last ran
/// it: the one it was recorded with (its header's), and the last one when they differ.
fn model_change(recorded: (&str, &str), last: (&str, &str), now: (&str, &str)) -> String {
    // A log without a header model (never written so) names only the last.
    let recorded = if recorded.0.is_empty() { last } else { recorded };
    let since = if recorded == last {
        String::new()
    } else {
        format!(" and last ran with {} ({})", last.0, last.1)
    };
    format!(
        "this session was recorded with {} ({}){since}; it continues with {} ({})",
        recorded.0, recorded.1, now.0, now.1
    )
}

/// The log's own warnings (a damaged line, a cut-off end), as notices.
fn warn(events: &super::EventSink, loaded: &session::Loaded) {
    for warning in &loaded.warnings {
        events.emit(Event::Notice {
            message: warning.clone(),
        });
    }
}
