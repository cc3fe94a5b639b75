//! Resuming another session from the workbench: the `/resume` picker and the question
//! asked before a log from elsewhere continues here.

use std::path::Path;

use crate::app::{App, Outcome};
use crate::conversation::NoticeKind;
use crate::layers::resume_question::ResumeQuestion;
use crate::layers::sessions::SessionPicker;
use miniagent_protocol::Op;

impl App {
    /// `/resume`: the picker of recorded sessions (listed now; each is a small file).
    pub(crate) fn open_session_picker(&mut self) {
        let picker = SessionPicker::open(
            self.places.sessions_dir.as_deref(),
            &self.session.view().workspace,
            self.session.view().session_id.as_deref(),
        );
        self.open_layer(Box::new(picker));
    }

    /// Continues the session recorded in `path`: a fresh view filled from its log, and
    /// the agent asked to take it up. The session left behind stays in its own log. A log
    /// recorded in another workspace, or not one of this user's sessions, is asked about
    /// first ([`ResumeQuestion`]).
    pub fn resume_session(&mut self, path: &Path) -> Outcome {
        self.resume(path, Confirmation::AskIfForeign);
        self.outcome(true)
    }

    /// [`Self::resume_session`] once the person said yes to continuing it here.
    pub(crate) fn resume_session_confirmed(&mut self, path: &Path) {
        self.resume(path, Confirmation::Given);
    }

    pub(super) fn resume(&mut self, path: &Path, confirmation: Confirmation) {
        if self.turn.running() {
            self.notice(
                NoticeKind::Warning,
                "a turn is running: resume another session once it ends (Esc interrupts it)".to_string(),
            );
            return;
        }
        let origin = match miniagent_api::log_origin(path, self.places.sessions_dir.as_deref()) {
            Ok(origin) => origin,
            Err(why) => {
                self.notice(NoticeKind::Error, format!("cannot resume: {why}"));
                return;
            }
        };
        if self.session.view().session_id.as_deref() == Some(origin.id.as_str()) {
            self.notice(
                NoticeKind::Info,
                format!("session {} is the one you are in", origin.id),
            );
            return;
        }
        let own = origin.own;
        let recorded = origin.workspace;
        let here = self.session.view().workspace.clone();
        let elsewhere =
            recorded != here && Path::new(&recorded).canonicalize().ok().as_deref() != Some(Path::new(&here));
        if confirmation == Confirmation::AskIfForeign && (elsewhere || !own) {
            // A new question arms afresh, whatever came before it.
            self.open_layer(Box::new(ResumeQuestion::new(
                path.to_path_buf(),
                origin.id,
                recorded,
                here,
                elsewhere,
                own,
            )));
            return;
        }
        // The view changes when the agent sends the session back: a log it cannot
        // continue leaves the session here as it is.
        self.send(Op::Resume {
            path: path.to_path_buf(),
        });
    }
}

/// Whether a log from elsewhere is asked about before it continues.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Confirmation {
    AskIfForeign,
    Given,
}
