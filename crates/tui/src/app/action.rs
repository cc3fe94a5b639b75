//! What the app's handlers give back to the event loop. The app never reaches the agent,
//! the terminal or the loop's state itself: a key, a paste, a click or an agent's event
//! is applied to it, and the handler returns an [`Outcome`], whether the screen changed
//! and the [`Action`]s the loop is to carry out, in order.

use miniagent_protocol::Op;

/// One thing the event loop is asked to do.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Action {
    /// Send this to the agent (or, before it runs, keep it for when it does).
    Send(Op),
    /// Leave the workbench.
    Quit,
    /// The person answered the trust question: start the session with the workspace's
    /// servers and skills (`true`) or without them.
    Trust(bool),
    /// The person chose the local model server the welcome panel found: start the
    /// session with it.
    UseLocalServer { base_url: String, model: String },
    /// Write this OSC 52 sequence (base64 only between its marks) to the terminal: a
    /// copy to its clipboard.
    Clipboard(String),
    /// Turn the terminal's mouse capture on or off (off: its own selection works).
    MouseCapture(bool),
    /// Ctrl-G: hand the terminal to `command` (the person's editor) on `text`, and give
    /// what it saved to [`super::App::edited`].
    EditInput { command: String, text: String },
    /// Write these bytes (a desktop notification, `notify.rs`) to the terminal.
    Notify(Vec<u8>),
}

/// What one handler did.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Outcome {
    /// Whether the screen changed (a frame is due).
    pub changed: bool,
    pub actions: Vec<Action>,
}

impl super::App {
    /// Asks the event loop for `action` once the handler running now returns.
    pub(crate) fn request(&mut self, action: Action) {
        self.pending.push(action);
    }

    /// The handler's outcome: `changed`, and what it asked the loop to do.
    pub(crate) fn outcome(&mut self, changed: bool) -> Outcome {
        Outcome {
            changed,
            actions: std::mem::take(&mut self.pending),
        }
    }
}
