//! `/rewind`: the person's messages to go back to, and going back: the conversation here
//! (what followed is set aside, kept by the context as a branch and by the log), the code
//! through `checkpoints::restore_code`.
//!
//! Only the history moves. The session's notes are workspace files (a code rewind puts
//! them back when the session changed them); the plan goes back to the one the kept
//! history last set (`Event::PlanUpdated`, empty when it set none) when the set-aside
//! messages changed it; no queued message can be waiting (a rewind is refused while a turn runs, and the
//! queue only holds messages while one does).

use super::{Session, Shared, TurnMark, checkpoints, compaction};
use crate::llm::Usage;
use miniagent_protocol::{Event, RewindPoint, RewindScope};

/// Answers `Op::ListRewindPoints`: one point per person's message of the conversation as
/// it stands, oldest first (one a summary replaced cannot take the conversation back),
/// and, for the code alone, the turns a `/clear` or a rewind took out of the conversation
/// whose file changes a code rewind would still put back.
pub(super) async fn points(shared: &Shared) {
    let session = shared.session.lock().await;
    // One copy of the ledger for the whole list.
    let ledger = shared.checkpoints.ledger();
    let points = session
        .turns
        .iter()
        .filter(|mark| mark.sent)
        .filter_map(|mark| {
            let files = u32::try_from(ledger.files_from(mark.turn).len()).unwrap_or(u32::MAX);
            let conversation = conversation_index(&session, mark).is_ok();
            // One inside a summarized range is listed too: the picker says why only its
            // code can go back.
            (mark.message.is_some() || files > 0).then(|| RewindPoint {
                turn: mark.turn,
                text: mark.text.clone(),
                files,
                conversation,
            })
        })
        .collect();
    shared.events.emit(Event::RewindPoints { points });
}

/// Answers `Op::Rewind`; a refusal changes nothing.
pub(super) async fn rewind(shared: &Shared, turn: u32, scope: RewindScope) {
    let mut session = shared.session.lock().await;
    let Some(mark) = session.turns.iter().find(|mark| mark.turn == turn).cloned() else {
        return refuse(
            shared,
            format!("there is no turn {turn} in this session"),
            Vec::new(),
        );
    };
    // Checked before the code moves: a conversation that cannot go back stops both.
    let index = match scope {
        RewindScope::Code => None,
        RewindScope::Conversation | RewindScope::Both => match conversation_index(&session, &mark) {
            Ok(index) => Some(index),
            Err(why) => return refuse(shared, why, Vec::new()),
        },
    };
    let files = match scope {
        RewindScope::Conversation => Vec::new(),
        RewindScope::Code | RewindScope::Both => {
            match checkpoints::restore_code(shared, &mut session, turn).await {
                Ok(files) => files,
                Err(refusal) => return refuse(shared, refusal.message, refusal.files),
            }
        }
    };
    let mut plan = None;
    let (messages, text) = match index {
        Some(index) => match set_aside(shared, &mut session, index, turn) {
            Ok((messages, changed_plan)) => {
                if changed_plan {
                    let kept = session.context.messages();
                    plan = Some(crate::tools::plan::plan_in(kept).unwrap_or_default());
                }
                (messages, mark.text.clone())
            }
            // Checked above under the same lock: only a broken history gets here.
            Err(why) => return refuse(shared, why, Vec::new()),
        },
        None => (0, String::new()),
    };
    shared.events.emit(Event::Rewound {
        turn,
        scope,
        files,
        messages,
        text,
    });
    if let Some(entries) = plan {
        shared.events.emit(Event::PlanUpdated { entries });
    }
    if index.is_some() {
        // The gauge shows the shorter context at once (as after `/clear`).
        let usage = compaction::usage_event(&mut session, &shared.options, shared.meter.get());
        shared.events.emit(usage);
    }
    shared.events.checkpoint(&mut session);
}

/// Where turn `mark`'s message is in the history, if the conversation can go back to
/// just before it; else why not, whole.
fn conversation_index(session: &Session, mark: &TurnMark) -> Result<usize, String> {
    let turn = mark.turn;
    if !mark.sent {
        return Err(format!(
            "turn {turn}'s message was not sent (it was refused or given back): there is nothing to go back to"
        ));
    }
    let Some(index) = mark.message else {
        return Err(format!(
            "turn {turn}'s message is no longer in the conversation (/clear or an earlier rewind set it aside): only its code can be rewound"
        ));
    };
    let context = &session.context;
    if !context
        .messages()
        .get(index)
        .is_some_and(super::context::is_persons)
    {
        return Err(format!(
            "turn {turn}'s message is not where the session recorded it in the history: the conversation cannot go back to it"
        ));
    }
    context
        .can_rewind_to(index)
        .map(|()| index)
        .map_err(|why| format!("the conversation cannot go back to turn {turn}: {why}"))
}

/// Sets the history from `index` (turn `turn`'s message) on aside and records it; also
/// says whether what was set aside changed the plan.
fn set_aside(
    shared: &Shared,
    session: &mut Session,
    index: usize,
    turn: u32,
) -> Result<(usize, bool), String> {
    let changed_plan =
        crate::tools::plan::calls_plan(session.context.messages().get(index..).unwrap_or_default());
    // What the context holds that the log does not yet goes first, in its order.
    shared.events.commit(session);
    let messages = session
        .context
        .rewind_to(index, turn)
        .map_err(|why| format!("the conversation cannot go back to turn {turn}: {why}"))?;
    // Recorded ahead of the `rewound` event, so a replay's inspector at that event shows
    // the shorter history and the branch.
    shared.events.commit(session);
    super::turns_set_aside(&mut session.turns, index);
    // The provider's figures were for the longer history: the gauge counts anew.
    session.last_usage = Usage::default();
    session.last_usage_estimated = true;
    Ok((messages, changed_plan))
}

fn refuse(shared: &Shared, message: String, files: Vec<String>) {
    shared.events.emit(Event::RewindRefused { message, files });
}
