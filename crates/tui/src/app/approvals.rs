//! The approval and consent questions: a pending tool call waiting for the person's
//! decision, and the grace period before keys answer it or a consent question.

use std::cell::Cell;
use std::time::{Duration, Instant};

use super::App;

/// A tool call waiting for the person's decision.
#[derive(Clone, Debug, PartialEq)]
pub struct PendingApproval {
    pub id: String,
    pub name: String,
    /// The request as plain text, drawn when `request` is `None` (an older log).
    pub preview: String,
    /// What is asked about, as the agent described it.
    pub request: Option<miniagent_protocol::ApprovalRequest>,
    /// Why the person is asked although a rule would have let it run.
    pub notes: Vec<String>,
    /// What `a` (approve for the session) remembers; `None`: this call only.
    pub session_rule: Option<miniagent_protocol::ApprovalRule>,
    /// From when keys answer it: set when its dialog is first drawn, and pushed back by
    /// keys pressed before then. `None`: not on screen yet.
    pub armed_at: Option<Instant>,
    /// Its place among the calls of the model's reply (call 2 of 3), when there are several.
    pub in_step: Option<(usize, usize)>,
    /// Set by drawing: the most the dialog's body scrolls, and whether all of it has
    /// been on screen. `y` and `a` wait for that: nothing approved was out of sight (a
    /// command padded with blank lines hides what follows below the fold).
    pub max_scroll: Cell<u16>,
    /// Rows of the body on screen so far, from the top without a gap.
    pub seen_rows: Cell<usize>,
    pub seen_all: Cell<bool>,
}

impl PendingApproval {
    /// A request just asked about: not on screen yet.
    pub fn new(
        id: String,
        name: String,
        preview: String,
        request: Option<miniagent_protocol::ApprovalRequest>,
        notes: Vec<String>,
        session_rule: Option<miniagent_protocol::ApprovalRule>,
        in_step: Option<(usize, usize)>,
    ) -> Self {
        Self {
            id,
            name,
            preview,
            request,
            notes,
            session_rule,
            armed_at: None,
            in_step,
            max_scroll: Cell::new(0),
            seen_rows: Cell::new(0),
            seen_all: Cell::new(false),
        }
    }
}

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

impl App {
    /// A frame was drawn: the approval it showed starts arming, if it was not yet, and so
    /// does a question asking for the person's consent.
    pub fn frame_drawn(&mut self) {
        if let Some(front) = self.approvals.front_mut()
            && front.armed_at.is_none()
        {
            front.armed_at = Some(self.now + APPROVAL_GRACE);
        }
        if self.consent_on_top() {
            if self.consent_armed_at.is_none() {
                self.consent_armed_at = Some(self.now + APPROVAL_GRACE);
            }
        } else {
            self.consent_armed_at = None;
        }
    }

    /// Whether the top overlay asks for consent (trust, a foreign session).
    pub fn consent_on_top(&self) -> bool {
        self.overlays.last().is_some_and(|layer| layer.is_question())
    }

    /// Whether the consent question on top takes answers now.
    pub fn consent_armed(&self) -> bool {
        self.consent_armed_at.is_some_and(|at| self.now >= at)
    }

    /// Whether keys answer the front approval now (it has been on screen long enough).
    pub fn approval_armed(&self) -> bool {
        self.approvals
            .front()
            .and_then(|front| front.armed_at)
            .is_some_and(|at| self.now >= at)
    }
}
