//! Tool calls waiting for the person's decision: the approval dialog's state (the calls
//! asked about, in order; the reason for a refusal being typed; how far the front one is
//! scrolled). The dialog is a layer on the app's stack that keeps the top while calls
//! wait (`layers/approval.rs` draws it and takes its keys); the app asks and settles
//! calls through the methods here, as the agent's events come.

use std::cell::{Cell, RefCell};
use std::collections::VecDeque;

use crossterm::event::{KeyCode, KeyEvent};
use ratatui::layout::{Position, Rect};
use ratatui::text::Line;

use super::App;
use crate::keys::OverlayAction;
use crate::question::Arming;
use miniagent_protocol::{Decision, Event};

pub use crate::question::{ANSWER_SETTLE, APPROVAL_GRACE, ENTER_AFTER_ANSWER, STALL, TYPING_QUIET};

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
    /// When keys answer it: from a moment after it is first drawn, pushed back by keys
    /// pressed before then.
    pub arming: Arming,
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
    /// What `A` (always) offers to save to the `allow` list: only where `a` would
    /// remember something (not for a call asked about each time).
    pub fn proposed_rule(&self) -> Option<String> {
        let session_rule = self.session_rule.as_ref()?;
        miniagent_protocol::proposed_rule(&self.name, self.request.as_ref()?, Some(session_rule))
    }

    /// The request an [`Event::ApprovalRequested`] asks about, not on screen yet
    /// (`None` for any other event).
    pub fn asked(event: Event) -> Option<Self> {
        let Event::ApprovalRequested {
            id,
            name,
            preview,
            request,
            notes,
            session_rule,
        } = event
        else {
            return None;
        };
        Some(Self {
            id,
            name,
            preview,
            request,
            notes,
            session_rule,
            arming: Arming::approval(),
            in_step: None,
            max_scroll: Cell::new(0),
            seen_rows: Cell::new(0),
            seen_all: Cell::new(false),
        })
    }
}

/// The approval dialog: the calls waiting, the front one shown.
#[derive(Debug, Default)]
pub struct ApprovalDialog {
    waiting: VecDeque<PendingApproval>,
    /// While the person types a reason for denying the front call.
    reason: Option<String>,
    /// While the person confirms (and may edit) the rule `A` saves for the front call.
    always: Option<String>,
    /// How far the front call's body is scrolled.
    scroll: u16,
    /// Kept by drawing from one step of a frame to the next (its layout, measured before
    /// the status bar reads how much was seen, and where the terminal's cursor goes);
    /// drawing borrows the app immutably.
    layout: RefCell<Option<ApprovalLayout>>,
    cursor: Cell<Option<Position>>,
    /// Where the last frame drew the dialog: the wheel outside it scrolls what is behind.
    drawn: Cell<Rect>,
}

/// Where the front call's dialog goes on a screen, its body wrapped, and the scroll
/// position shown (`overlay_view` lays it out).
#[derive(Debug)]
pub struct ApprovalLayout {
    pub(crate) area: Rect,
    pub(crate) inner: Rect,
    pub(crate) body_area: Rect,
    pub(crate) wrapped: Vec<Line<'static>>,
    pub(crate) scroll: usize,
    pub(crate) max_scroll: usize,
    /// The reason being typed for a refusal, wrapped: its last rows, where typing goes.
    pub(crate) reason: Vec<Line<'static>>,
}

impl ApprovalDialog {
    /// The call shown.
    pub fn front(&self) -> Option<&PendingApproval> {
        self.waiting.front()
    }

    /// How many calls wait, the one shown among them.
    pub fn waiting(&self) -> usize {
        self.waiting.len()
    }

    /// The reason for a refusal being typed, if one is.
    pub fn reason(&self) -> Option<&str> {
        self.reason.as_deref()
    }

    /// The rule `A` would save, while it is confirmed.
    pub fn always(&self) -> Option<&str> {
        self.always.as_deref()
    }

    /// Whether the front call offers `A`: where a rule can be proposed for it.
    pub fn always_offered(&self) -> bool {
        self.front().and_then(PendingApproval::proposed_rule).is_some()
    }

    /// `A`: the proposed rule is shown to be confirmed (or edited) before it is saved.
    pub(crate) fn ask_always(&mut self) {
        self.always = self.front().and_then(PendingApproval::proposed_rule);
    }

    /// A key while the rule is confirmed (`None` when it is not): Enter approves and
    /// saves it, Esc goes back to the keys, other keys edit it.
    pub(crate) fn always_key(&mut self, key: KeyEvent, ctrl: bool) -> Option<OverlayAction> {
        let rule = self.always.as_mut()?;
        Some(match key.code {
            KeyCode::Enter => {
                let rule = rule.trim().to_string();
                if rule.is_empty() {
                    return Some(OverlayAction::Ignored);
                }
                self.decide(Decision::ApproveAlways { rule })
            }
            KeyCode::Esc => {
                self.always = None;
                OverlayAction::Changed
            }
            KeyCode::Backspace => {
                rule.pop();
                OverlayAction::Changed
            }
            KeyCode::Char(c) if !ctrl => {
                rule.push(c);
                OverlayAction::Changed
            }
            _ => OverlayAction::Ignored,
        })
    }

    /// How far the front call is scrolled.
    pub fn scroll(&self) -> u16 {
        self.scroll
    }

    fn push(&mut self, pending: PendingApproval) {
        self.waiting.push_back(pending);
    }

    /// The call `id` was decided (here, or in the session being replayed).
    fn settled(&mut self, id: &str) {
        self.waiting.retain(|pending| pending.id != id);
    }

    /// The front call's arming.
    pub(crate) fn arming(&self) -> Option<&Arming> {
        self.waiting.front().map(|front| &front.arming)
    }

    pub(crate) fn arming_mut(&mut self) -> Option<&mut Arming> {
        self.waiting.front_mut().map(|front| &mut front.arming)
    }

    /// Whether all of the front call has been on screen, so it may be approved.
    pub fn seen(&self) -> bool {
        self.front().is_some_and(|front| front.seen_all.get())
    }

    /// Whether the front call offers `a`: only where its dialog says what it covers.
    pub fn session_offered(&self) -> bool {
        self.front().is_some_and(|front| front.session_rule.is_some())
    }

    /// Answers the front call; the next one (if any) shows. Stopping the turn answers
    /// them all.
    pub(crate) fn decide(&mut self, decision: Decision) -> OverlayAction {
        self.reason = None;
        self.always = None;
        self.scroll = 0;
        let Some(pending) = self.waiting.pop_front() else {
            return OverlayAction::Changed;
        };
        if decision == Decision::Abort {
            self.waiting.clear();
        }
        OverlayAction::Decide {
            id: pending.id,
            decision,
        }
    }

    /// `n`: the person says why not, or sends none.
    pub(crate) fn ask_reason(&mut self) {
        self.reason = Some(String::new());
    }

    /// A key while the reason is typed (`None` when none is): Enter denies with it,
    /// Esc goes back to the keys.
    pub(crate) fn reason_key(&mut self, key: KeyEvent, ctrl: bool) -> Option<OverlayAction> {
        let reason = self.reason.as_mut()?;
        Some(match key.code {
            KeyCode::Enter => {
                let reason = reason.trim().to_string();
                self.decide(Decision::Deny {
                    reason: (!reason.is_empty()).then_some(reason),
                })
            }
            KeyCode::Esc => {
                self.reason = None;
                OverlayAction::Changed
            }
            KeyCode::Backspace => {
                reason.pop();
                OverlayAction::Changed
            }
            KeyCode::Char(c) if !ctrl => {
                reason.push(c);
                OverlayAction::Changed
            }
            _ => OverlayAction::Ignored,
        })
    }

    /// A pasted text goes into the reason being typed, on one line; whether one is.
    pub(crate) fn paste_reason(&mut self, text: &str) -> bool {
        let Some(reason) = self.reason.as_mut().or(self.always.as_mut()) else {
            return false;
        };
        reason.push_str(&text.replace(['\r', '\n'], " "));
        true
    }

    /// Keeps the layout measured for this frame, for drawing it.
    pub(crate) fn keep_layout(&self, layout: Option<ApprovalLayout>) {
        self.drawn
            .set(layout.as_ref().map_or_else(Rect::default, |layout| layout.area));
        *self.layout.borrow_mut() = layout;
    }

    /// Where the last frame drew the dialog (nothing before the first).
    pub(crate) fn drawn(&self) -> Rect {
        self.drawn.get()
    }

    /// The layout measured for this frame, once.
    pub(crate) fn take_layout(&self) -> Option<ApprovalLayout> {
        self.layout.borrow_mut().take()
    }

    /// Where the last frame put the terminal's cursor (in the reason being typed).
    pub(crate) fn drawn_cursor(&self) -> Option<Position> {
        self.cursor.get()
    }

    pub(crate) fn set_cursor(&self, cursor: Option<Position>) {
        self.cursor.set(cursor);
    }

    /// The mouse wheel: `lines` up (negative) or down.
    pub(crate) fn wheel(&mut self, lines: i32) {
        let by = u16::try_from(lines.unsigned_abs()).unwrap_or(u16::MAX);
        if lines < 0 {
            self.scroll = self.scroll.saturating_sub(by);
        } else {
            let most = self.front().map_or(0, |front| front.max_scroll.get());
            self.scroll = self.scroll.saturating_add(by).min(most);
        }
    }

    /// Scrolls the front call to `to`, within what the last frame measured.
    pub(crate) fn scroll_to(&mut self, to: impl FnOnce(u16, u16) -> u16) {
        let most = self.front().map_or(0, |front| front.max_scroll.get());
        self.scroll = to(self.scroll.min(most), most).min(most);
    }
}

impl App {
    /// The approval dialog, while calls wait.
    pub fn approval(&self) -> Option<&ApprovalDialog> {
        self.layers.find::<ApprovalDialog>()
    }

    /// How many calls wait for a decision.
    pub fn approvals_waiting(&self) -> usize {
        self.approval().map_or(0, ApprovalDialog::waiting)
    }

    /// The reason for a refusal being typed, if one is.
    pub fn deny_reason(&self) -> Option<&str> {
        self.approval()?.reason()
    }

    /// A call to decide on: it joins the dialog, which opens (on top) if it was closed.
    pub(crate) fn ask_approval(&mut self, pending: PendingApproval) {
        match self.layers.find_mut::<ApprovalDialog>() {
            Some(dialog) => dialog.push(pending),
            None => {
                let mut dialog = ApprovalDialog::default();
                dialog.push(pending);
                self.layers.open(Box::new(dialog));
            }
        }
    }

    /// The call `id` was decided (it runs, or finished): it leaves the dialog, which
    /// closes when no call is left.
    pub(crate) fn approval_settled(&mut self, id: &str) {
        if let Some(dialog) = self.layers.find_mut::<ApprovalDialog>() {
            dialog.settled(id);
        }
        self.layers.close_finished();
    }

    /// No call waits any more (the turn ended or was stopped).
    pub(crate) fn close_approvals(&mut self) {
        self.layers
            .close_where(|layer| layer.as_any().is::<ApprovalDialog>());
    }

    /// A frame was drawn: the question it showed on top (an approval, trust, resume)
    /// starts arming, if it was not yet.
    pub fn frame_drawn(&mut self) {
        self.layers.frame_drawn(self.now);
    }

    /// Whether the question on top (trust, a foreign session) takes answers now.
    pub fn consent_armed(&self) -> bool {
        self.layers
            .question()
            .is_some_and(|arming| arming.armed(self.now))
    }

    /// Whether keys answer the front approval now (it has been on screen long enough).
    pub fn approval_armed(&self) -> bool {
        self.approval()
            .and_then(ApprovalDialog::arming)
            .is_some_and(|arming| arming.armed(self.now))
    }

    /// Whether a question is on top and does not take answers yet.
    pub(crate) fn question_arming(&self) -> bool {
        self.layers
            .question()
            .is_some_and(|arming| !arming.armed(self.now))
    }
}
