//! Reading and copying: the conversation's search and block selection keys, `/copy`,
//! `y`, and `/mouse` (mouse capture off, so the terminal's own selection works).

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

use crate::app::{Action, App, Pane};
use crate::clipboard;
use crate::conversation::{NoticeKind, Selection};

impl App {
    /// The search line's keys while a query is typed, and the conversation pane's own
    /// reading keys. `None`: not one of them.
    pub(crate) fn reading_key(&mut self, key: KeyEvent) -> Option<bool> {
        if self.conversation.search_editing() {
            if self.layout.focus() == Pane::Conversation {
                return self.conversation.search_key(key);
            }
            // A click gave another pane the keys: the query stays as typed, kept.
            self.conversation.keep_search();
        }
        if self.layout.focus() != Pane::Conversation
            || key
                .modifiers
                .intersects(KeyModifiers::CONTROL | KeyModifiers::ALT)
        {
            return None;
        }
        match key.code {
            KeyCode::Esc if self.conversation.search_active() => {
                self.conversation.end_search();
                Some(true)
            }
            KeyCode::Esc if self.conversation.has_selection() => Some(self.conversation.unselect()),
            KeyCode::Char('/') => {
                self.conversation.start_search();
                Some(true)
            }
            KeyCode::Char(c @ ('n' | 'N')) if self.conversation.search_active() => {
                Some(self.conversation.next_match(c == 'n'))
            }
            KeyCode::Char(c @ ('[' | ']')) => Some(self.conversation.select_block(c == ']')),
            KeyCode::Char('y') if self.conversation.has_selection() => {
                self.copy_selection();
                Some(true)
            }
            _ => None,
        }
    }

    /// Ctrl-F: the conversation gets the keys and the search line opens.
    pub(crate) fn start_search(&mut self) -> bool {
        self.layout.focus_on(Pane::Conversation);
        self.conversation.start_search();
        true
    }

    /// `/copy`: the last reply's markdown source.
    pub(crate) fn copy_last_answer(&mut self) {
        match self.conversation.last_answer().map(str::to_string) {
            Some(text) => self.copy("the last answer", &text),
            None => self.notice(
                NoticeKind::Warning,
                "/copy: there is no answer to copy yet".to_string(),
            ),
        }
    }

    /// `y`: the selected code block's code, or the selected call's command (or
    /// arguments) and output.
    pub(crate) fn copy_selection(&mut self) {
        match self.conversation.selection() {
            Some(Selection::Code(code)) => self.copy("the code block", &code),
            Some(Selection::Tool(id)) => match self.timeline.get(&id) {
                Some(call) => {
                    let text = call_text(call);
                    let what = if call.in_log {
                        "the call (its output is in the session log: open it in the tools pane to read it back)"
                    } else {
                        "the call and its output"
                    };
                    self.copy(what, &text);
                }
                None => self.notice(NoticeKind::Warning, "that call is no longer known".to_string()),
            },
            None => {}
        }
    }

    /// Sends `text` to the terminal's clipboard, and says so (or why not).
    fn copy(&mut self, what: &str, text: &str) {
        let text = clipboard::copied_text(text);
        match clipboard::osc52(&text) {
            Ok(sequence) => {
                self.request(Action::Clipboard(sequence));
                self.notice(NoticeKind::Info, clipboard::sent_notice(what, text.len()));
            }
            Err(why) => self.notice(NoticeKind::Warning, format!("copy: {why}")),
        }
    }

    /// `/mouse`: mouse capture off (the terminal selects text itself; the wheel and
    /// clicks no longer reach the panes) or back on.
    pub(crate) fn toggle_mouse(&mut self) {
        let capture = !self.look.mouse_captured();
        self.look.set_mouse_captured(capture);
        self.request(Action::MouseCapture(capture));
        let said = if capture {
            "mouse capture on: the wheel scrolls and clicks focus panes (/mouse to select text with the mouse)"
        } else {
            "mouse capture off: select text with the mouse as in any terminal (/mouse turns it back on)"
        };
        self.notice(NoticeKind::Info, said.to_string());
    }
}

/// What copying a tool call gives: `$ command` for a command, else the tool's name and
/// its arguments; then its output.
fn call_text(call: &crate::timeline::Call) -> String {
    let head = match call.arguments.get("command").and_then(|command| command.as_str()) {
        Some(command) => format!("$ {command}"),
        None => format!(
            "{} {}",
            call.name,
            serde_json::to_string_pretty(&call.arguments).unwrap_or_default()
        ),
    };
    let output = match &call.result {
        Some(result) => result.to_string(),
        None => call.streamed.text(),
    };
    if output.is_empty() {
        head
    } else {
        format!("{head}\n{output}")
    }
}
