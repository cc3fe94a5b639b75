//! BASE SKELETON (issue 30): the rewind helper replaces every body here.
//! `/rewind`: the person's messages to go back to, and going back (the conversation
//! here, the code through `checkpoints::restore_code`).

use super::{Shared, checkpoints};
use miniagent_protocol::{Event, RewindPoint, RewindScope};

/// Answers `Op::ListRewindPoints`.
pub(super) async fn points(shared: &Shared) {
    let session = shared.session.lock().await;
    let points = session
        .turns
        .iter()
        .map(|mark| RewindPoint {
            turn: mark.turn,
            text: mark.text.clone(),
            files: checkpoints::files_from(shared, &session, mark.turn),
            conversation: false,
        })
        .collect();
    shared.events.emit(Event::RewindPoints { points });
}

/// Answers `Op::Rewind`.
pub(super) async fn rewind(shared: &Shared, turn: u32, scope: RewindScope) {
    let mut session = shared.session.lock().await;
    match scope {
        RewindScope::Code => match checkpoints::restore_code(shared, &mut session, turn).await {
            Ok(files) => shared.events.emit(Event::Rewound {
                turn,
                scope,
                files,
                messages: 0,
                text: String::new(),
            }),
            Err(refusal) => shared.events.emit(Event::RewindRefused {
                message: refusal.message,
                files: refusal.files,
            }),
        },
        RewindScope::Conversation | RewindScope::Both => shared.events.emit(Event::RewindRefused {
            message: "rewinding the conversation is not built yet".to_string(),
            files: Vec::new(),
        }),
    }
}
