//! Questions the workbench asks (an approval, trusting a workspace, continuing a session
//! from elsewhere): layers that hold the keys until answered. Two things keep a key
//! meant for the input from answering one: each question [`Arming`] (it takes answers
//! only once it has been on screen, quietly, for a moment) and the workbench's
//! [`Answers`] (a letter that would answer waits to be sure it was pressed alone; keys
//! right after an answer belong to it).

use std::time::{Duration, Instant};

use crossterm::event::{KeyCode, KeyEvent};

use crate::keys::types_char;

/// How long an approval dialog is on screen, with no key pressed, before keys answer it:
/// a person typing a message while the agent works cannot approve by accident.
pub const APPROVAL_GRACE: Duration = Duration::from_millis(500);

/// How long a letter that would answer an armed question waits to be sure it was pressed
/// alone. Typists leave about 240 ms between keys on average (many 300 ms and more), a
/// burst (a paste-like send, keys queued in the terminal) far less, so a sentence begun
/// without looking at the dialog ("also…", "yes, and…") is seen as typing; a deliberate
/// answer lands this much later.
pub const ANSWER_SETTLE: Duration = Duration::from_millis(400);

/// Once keys typed while a question is open show that the person is writing (a letter
/// that answers nothing, a burst, keys while it arms), it takes answers again only after
/// this long without a key: a slow typist's next letter is not an answer.
pub const TYPING_QUIET: Duration = Duration::from_millis(1500);

/// After a question is answered, an Enter this soon belongs to the answer (`y` Enter),
/// never to the input's draft.
pub const ENTER_AFTER_ANSWER: Duration = Duration::from_millis(1000);

/// A gap between two turns of the event loop this long, while an answer key settles,
/// means the process was stalled (the loop ticks every 100 ms then).
pub const STALL: Duration = Duration::from_millis(250);

/// The two kinds of question, which arm alike but for what came before they were seen.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    /// A tool call to approve. It comes while the person may be typing their next
    /// message: keys from before its first frame were meant for the input, and its wait
    /// starts when it is drawn. What is typed while it arms goes on into the input only
    /// when the input is what lies beneath it (nothing else open, the input focused, no
    /// answer just given: a `y` pressed twice is not the start of a message).
    Approval,
    /// A question asking for consent (trust a workspace, continue a foreign session),
    /// asked as the workbench starts or right after a command: keys typed from the
    /// moment it opened push its wait back, and typing goes on into the input.
    Consent,
}

/// When a question takes answers: from a moment after it was first drawn, pushed back
/// by each key pressed before then.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Arming {
    kind: Kind,
    /// From when keys answer it. `None`: not on screen yet.
    at: Option<Instant>,
}

impl Arming {
    /// An approval's: see [`Kind::Approval`].
    pub fn approval() -> Self {
        Self {
            kind: Kind::Approval,
            at: None,
        }
    }

    /// A consent question's: see [`Kind::Consent`].
    pub fn consent() -> Self {
        Self {
            kind: Kind::Consent,
            at: None,
        }
    }

    /// Whether it takes answers at `now`.
    pub fn armed(&self, now: Instant) -> bool {
        self.at.is_some_and(|at| now >= at)
    }

    /// A frame showed it at `now`: the first one starts its wait.
    pub fn drawn(&mut self, now: Instant) {
        if self.at.is_none() {
            self.at = Some(now + APPROVAL_GRACE);
        }
    }

    /// It is covered by another layer: it arms afresh once it shows again.
    pub fn covered(&mut self) {
        self.at = None;
    }

    /// `key` was pressed at `now` while it arms: it takes answers only after a quiet
    /// moment, longer after typing (the person is writing). For an approval, a Backspace
    /// is typing too.
    pub fn key_while_arming(&mut self, key: KeyEvent, now: Instant) {
        let typing = types_char(key) || (self.kind == Kind::Approval && key.code == KeyCode::Backspace);
        self.hold_off(now + if typing { TYPING_QUIET } else { APPROVAL_GRACE });
    }

    /// A key was pressed while it arms: it takes answers no sooner than `until`.
    fn hold_off(&mut self, until: Instant) {
        self.at = match (self.kind, self.at) {
            (_, Some(at)) => Some(at.max(until)),
            (Kind::Approval, None) => None,
            (Kind::Consent, None) => Some(until),
        };
    }

    /// The person is typing: it takes answers only from `until`.
    pub fn disarm(&mut self, until: Instant) {
        self.at = Some(until);
    }

    /// Whether what is typed while it arms goes into the input even with something else
    /// open or just answered (see [`Kind`]).
    pub fn types_into_any_input(&self) -> bool {
        self.kind == Kind::Consent
    }

    /// What the bottom bar says while it arms.
    pub fn arming_hint(&self) -> &'static str {
        match self.kind {
            Kind::Approval => "approval arming…",
            Kind::Consent => "question arming…",
        }
    }
}

/// The workbench's memory of answers across questions: a letter held while it settles,
/// and the answer just given.
#[derive(Clone, Debug, Default)]
pub struct Answers {
    /// A letter that would answer the question on screen, held while it settles: the
    /// key, when it was last pressed, and how many times in a row.
    held: Option<(KeyEvent, Instant, usize)>,
    /// The last key answered an approval: keys pressed while the next one arms are
    /// dropped rather than typed (a `y` pressed twice is not the start of a message).
    approval_answered: bool,
    /// When a question was last answered: an Enter right after belongs to the answer
    /// ([`ENTER_AFTER_ANSWER`]).
    answered_at: Option<Instant>,
}

impl Answers {
    /// Holds `key`, pressed `presses` times in a row, the last at `now`.
    pub fn hold(&mut self, key: KeyEvent, now: Instant, presses: usize) {
        self.held = Some((key, now, presses));
    }

    /// The held letter and how many times it was pressed, no longer held.
    pub fn take_held(&mut self) -> Option<(KeyEvent, usize)> {
        self.held.take().map(|(key, _, presses)| (key, presses))
    }

    /// The held letter, when it has settled by `now` (it answers then).
    pub fn settled(&mut self, now: Instant) -> Option<KeyEvent> {
        match self.held {
            Some((key, at, _)) if now >= at + ANSWER_SETTLE => {
                self.held = None;
                Some(key)
            }
            Some(_) | None => None,
        }
    }

    /// Whether a letter is held (the clock must tick for it to settle).
    pub fn holding(&self) -> bool {
        self.held.is_some()
    }

    /// The loop's clock moves from `before` to `wall`: a longer gap than [`STALL`] means
    /// this process was stalled, and keys typed meanwhile are not read yet, so the held
    /// key's wait starts over (they are read, as typing, before it counts).
    pub fn clock_moved(&mut self, before: Instant, wall: Instant) {
        if let Some((_, at, _)) = self.held.as_mut()
            && wall.saturating_duration_since(before) > STALL
        {
            *at = wall;
        }
    }

    /// A question other than an approval was answered at `now`.
    pub fn answered(&mut self, now: Instant) {
        self.answered_at = Some(now);
    }

    /// An approval was answered at `now`.
    pub fn approval_answered(&mut self, now: Instant) {
        self.approval_answered = true;
        self.answered_at = Some(now);
    }

    /// Whether the last key answered an approval.
    pub fn just_answered_approval(&self) -> bool {
        self.approval_answered
    }

    /// A key came with no approval open. Whether it is an Enter that belongs to the
    /// answer just given (`y` Enter), and so does nothing more.
    pub fn key_without_approval(&mut self, key: KeyEvent, now: Instant) -> bool {
        self.approval_answered = false;
        self.answered_at.take().is_some_and(|at| {
            key.code == KeyCode::Enter && key.modifiers.is_empty() && now < at + ENTER_AFTER_ANSWER
        })
    }
}
