//! A key's way through the layer stack, before the workbench's own keys: a letter that
//! would answer a question waits to be sure it was pressed alone; a question that is not
//! armed yet takes no answer (what is typed goes on into the input); else the top layer
//! takes the key, and the app carries out what it answered ([`OverlayAction`]).

use crossterm::event::{KeyCode, KeyEvent, KeyEventKind, KeyModifiers};

use crate::app::{Action, App, Pane};
use crate::input::InputAction;
use crate::keys::{OverlayAction, OverlayContext, types_char};
use crate::question::TYPING_QUIET;
use miniagent_protocol::{Decision, Op};

impl App {
    /// Applies a key. Returns whether the screen changed.
    ///
    /// A letter that would answer an armed question (an approval, the trust question) is
    /// held for [`crate::question::ANSWER_SETTLE`]: pressed alone, it answers then;
    /// followed by another key within that time, it was the start of something typed
    /// without looking at the dialog, and both letters go to the input while the question
    /// arms again, unanswered. The same letter pressed again while it settles is a double
    /// press: one answer, once it settles. A key that types nothing (Enter after `n`)
    /// lets the letter answer at once and then does its own work.
    pub(super) fn key(&mut self, key: KeyEvent) -> bool {
        if key.kind == KeyEventKind::Release {
            return false;
        }
        if key.code != KeyCode::Esc {
            // Esc Esc is two presses in a row: anything between starts it over.
            self.turn.disarm_rewind();
        }
        if let Some((held, presses)) = self.answers.take_held() {
            // Typing after it, however late the key is read (a stalled process reads a
            // burst long after it was typed), means it was not an answer: had it stood
            // alone, the loop's tick would have let it answer already.
            if types_char(key) {
                if key == held {
                    // A double press, unless typing follows: it waits on.
                    self.answers.hold(held, self.now, presses + 1);
                    return true;
                }
                self.disarm_question();
                for _ in 0..presses {
                    self.key_now(held);
                }
                self.key_now(key);
                return true;
            }
            // Settled, or followed by a key that is not typing (Enter after `n`, Esc):
            // the letter answers first, then that key does what it does.
            self.key_now(held);
        }
        if self.answering_letter(key) {
            self.answers.hold(key, self.now, 1);
            return true;
        }
        self.key_now(key)
    }

    /// Time passed: an answer key held while it settled answers now.
    pub(super) fn settle_held_answer(&mut self) -> bool {
        match self.answers.settled(self.now) {
            Some(held) => self.key_now(held),
            None => false,
        }
    }

    /// Whether `key` is a plain letter pressed while the question on top takes answers.
    fn answering_letter(&self, key: KeyEvent) -> bool {
        let armed = self.layers.top().is_some_and(|top| {
            top.takes_answer_letters() && top.question().is_some_and(|arming| arming.armed(self.now))
        });
        types_char(key) && self.replay.is_none() && armed
    }

    /// The person is typing: the question on screen stops taking answers until they have
    /// been quiet for [`TYPING_QUIET`].
    pub(super) fn disarm_question(&mut self) {
        let later = self.now + TYPING_QUIET;
        if let Some(arming) = self.layers.question_mut() {
            arming.disarm(later);
        }
    }

    /// The stack's turn at a key: `Some(changed)` when a layer took it or holds the keys;
    /// `None` lets it go on to the workbench's bindings (no layer is open, or the key is
    /// one that always works).
    pub(super) fn layer_key(&mut self, key: KeyEvent) -> Option<bool> {
        // Scrolling what is behind an approval answers nothing, so it neither waits for
        // the dialog to arm nor holds its arming back.
        if self.approval().is_some()
            && let Some(changed) = crate::bindings::dispatch(crate::bindings::BEHIND_APPROVAL, self, key)
        {
            return Some(changed);
        }
        if self.approval().is_none() && self.answers.key_without_approval(key, self.now) {
            // `y` Enter: the Enter confirms the answer in the person's mind; it must not
            // send the draft in the input.
            return Some(true);
        }
        let ctrl_c = key.code == KeyCode::Char('c') && key.modifiers.contains(KeyModifiers::CONTROL);
        let leaves = self.layers.top().is_some_and(|top| top.leaves_while_arming(key));
        if self.question_arming() && !ctrl_c && !leaves {
            // Not yet readable: the key answers nothing and the question arms later; what
            // was typed goes on into the input, where it was meant to go.
            return Some(self.key_while_arming(key));
        }
        let servers: Vec<(String, miniagent_protocol::McpState)> = self
            .session
            .mcp()
            .iter()
            .map(|(name, state)| (name.clone(), state.clone()))
            .collect();
        let context = OverlayContext {
            rules: self.session.rules(),
            refused: self.session.refused(),
            permanent: self.session.permanent_rules(),
            history: self.session.history(),
            mcp: &servers,
        };
        let top = self.layers.top_mut()?;
        let question = top.question().is_some();
        match top.on_key(key, context) {
            // A letter that answers nothing is the person writing: it goes to the input,
            // and the question waits until they stop.
            OverlayAction::Ignored
                if question && types_char(key) && !is_answer_letter(key) && self.replay.is_none() =>
            {
                self.disarm_question();
                Some(self.key_while_arming(key))
            }
            // A layer that did not use the key still blocks the panes under it, except
            // for the keys that must always work.
            OverlayAction::Ignored => (!ctrl_c).then_some(false),
            action => Some(self.layer_answered(action, key)),
        }
    }

    /// A key pressed before the question on top could be read (typed for the input, or
    /// already queued when it opened): it answers nothing, and the question arms only
    /// after a quiet moment. Typing goes on in the input, where it was meant to go.
    fn key_while_arming(&mut self, key: KeyEvent) -> bool {
        let typing = types_char(key) || key.code == KeyCode::Backspace;
        let Some(arming) = self.layers.question_mut() else {
            return true;
        };
        arming.key_while_arming(key, self.now);
        if arming.types_into_any_input() {
            if typing {
                self.input.on_key(key);
            }
            return true;
        }
        // An approval's: only into the input it covers, and not right after an answer
        // (a `y` pressed twice is not the start of a message).
        if typing
            && !self.answers.just_answered_approval()
            && self.layout.focus() == Pane::Input
            && self.layers.len() == 1
            && self.replay.is_none()
        {
            match self.input.on_key(key) {
                InputAction::Ignored | InputAction::Changed => {}
                InputAction::Submit(text) => self.submit_text(text),
            }
        }
        true
    }

    /// Carries out what the top layer answered to `key`.
    fn layer_answered(&mut self, action: OverlayAction, key: KeyEvent) -> bool {
        match action {
            OverlayAction::Ignored | OverlayAction::Changed => {}
            OverlayAction::Close => {
                let closed = self.layers.close();
                if closed.is_some_and(|layer| layer.as_any().is::<crate::layers::first_run::FirstRun>()) {
                    // The key that closed the welcome panel does what it does elsewhere.
                    match key.code {
                        KeyCode::F(1) => self.open_help(),
                        KeyCode::Char('/') => {
                            self.layout.focus_on(Pane::Input);
                            self.input.on_key(key);
                        }
                        _ => {}
                    }
                }
            }
            OverlayAction::Send(op) => self.send(op),
            OverlayAction::Resume(path) => {
                self.layers.close();
                self.resume(&path, super::resume::Confirmation::AskIfForeign);
            }
            OverlayAction::ResumeConfirmed(path) => {
                self.layers.close();
                self.answers.answered(self.now);
                self.resume_session_confirmed(&path);
            }
            OverlayAction::Theme(name) => {
                self.layers.close();
                self.choose_theme(&name);
            }
            OverlayAction::SetModel(name) => {
                self.layers.close();
                self.send(miniagent_protocol::Op::SetModel { name });
            }
            OverlayAction::Trust(trusted) => {
                self.layers.close();
                self.answers.answered(self.now);
                self.request(Action::Trust(trusted));
            }
            OverlayAction::UseLocalServer { base_url, model } => {
                self.layers.close();
                self.welcome = None;
                self.session.name_model(model.clone());
                self.request(Action::UseLocalServer { base_url, model });
            }
            OverlayAction::Decide { id, decision } => self.decided(id, decision),
            OverlayAction::Interrupt => self.interrupt(),
        }
        true
    }

    /// The person decided on the call `id` (its dialog shows the next one, or closes).
    fn decided(&mut self, id: String, decision: Decision) {
        self.answers.approval_answered(self.now);
        if decision == Decision::Abort {
            self.turn.interrupting();
        }
        self.send(Op::Approval { id, decision });
        self.layers.close_finished();
    }

    pub(crate) fn interrupt(&mut self) {
        // A replayed turn runs to its recorded end.
        if self.turn.running() && self.replay.is_none() {
            self.send(Op::Interrupt);
            self.close_approvals();
            self.turn.interrupting();
        }
    }
}

/// A letter some question takes as an answer: one not offered now (`a` for a call asked
/// each time, `y` before all of it was seen) was still meant as an answer, not typing.
fn is_answer_letter(key: KeyEvent) -> bool {
    matches!(key.code, KeyCode::Char('y' | 'a' | 'A' | 'n'))
}
