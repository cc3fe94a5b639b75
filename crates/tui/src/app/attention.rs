//! Whether the person is looking, and how to call them when not: the terminal reports
//! focus (`FocusGained`/`FocusLost`), and an approval that waits or a turn that ends
//! while it is away asks the event loop to write a notification (`notify.rs` makes the
//! bytes). A terminal that never reports focus is taken to be looked at: nothing is sent.

use crate::notify::{Notifier, sequence};
use miniagent_protocol::Event;

#[derive(Clone, Debug)]
pub struct Attention {
    notifier: Notifier,
    /// Inside tmux: an OSC goes through its passthrough.
    in_tmux: bool,
    /// Whether the terminal's window has the focus (until it says otherwise, it has).
    focused: bool,
}

impl Default for Attention {
    fn default() -> Self {
        Self::new(Notifier::Off, false)
    }
}

impl Attention {
    pub fn new(notifier: Notifier, in_tmux: bool) -> Self {
        Self {
            notifier,
            in_tmux,
            focused: true,
        }
    }

    pub(crate) fn set_focused(&mut self, focused: bool) {
        self.focused = focused;
    }

    /// The notification `event` calls for while the terminal is not focused: an
    /// approval waiting (the session's or a sub-agent's), or the turn's end.
    pub(crate) fn alert(&self, event: &Event) -> Option<Vec<u8>> {
        if self.focused || self.notifier == Notifier::Off {
            return None;
        }
        let body = match event {
            Event::ApprovalRequested { name, .. } => format!("approval waiting: {name}"),
            Event::SubAgent { agent, event, .. } => match event.as_ref() {
                Event::ApprovalRequested { name, .. } => format!("approval waiting: {name} ({agent})"),
                _ => return None,
            },
            Event::TurnComplete { .. } => "turn finished".to_string(),
            Event::StepLimitReached { .. } => "turn stopped at the step limit".to_string(),
            Event::Error { .. } => "turn stopped on an error".to_string(),
            _ => return None,
        };
        Some(sequence(self.notifier, &body, self.in_tmux))
    }
}
