//! Keys, the mouse and pastes. A key goes to the layer stack first (the top layer, or the
//! question on top while it arms: `layer_keys.rs`), then to the workbench's own keys (the
//! table `bindings::WORKBENCH`), then to the focused pane; the first that uses it wins.
//! Slash commands run from `commands`.

use crossterm::event::{KeyCode, KeyEvent, MouseButton, MouseEvent, MouseEventKind};
use ratatui::layout::Position;

use crate::app::{App, Outcome, Pane};
use crate::conversation::NoticeKind;
use crate::input::InputAction;
use crate::keys::types_char;
use crate::theme::Theme;
use crate::tree::TreeAction;
use miniagent_protocol::Op;

/// The largest paste the input takes. More is far beyond any model's context window, and
/// laying out megabytes in the input box would stall the workbench for seconds.
pub const MAX_PASTE_BYTES: usize = 1024 * 1024;

/// How soon a second Esc on an empty input must follow the first to open the rewind
/// picker: a deliberate double press, not two presses a thought apart.
pub const ESCAPE_AGAIN: std::time::Duration = std::time::Duration::from_millis(600);

impl App {
    /// Applies a key.
    pub fn on_key(&mut self, key: KeyEvent) -> Outcome {
        let changed = self.key(key);
        self.outcome(changed)
    }

    /// Applies a pasted text.
    pub fn on_paste(&mut self, text: &str) -> Outcome {
        let changed = self.paste(text);
        self.outcome(changed)
    }

    /// Applies a mouse event.
    pub fn on_mouse(&mut self, mouse: MouseEvent) -> Outcome {
        let changed = self.mouse(mouse);
        self.outcome(changed)
    }

    /// Submits `text` as if typed into the input and sent with Enter: a message or a
    /// slash command.
    pub fn submit(&mut self, text: String) -> Outcome {
        self.submit_text(text);
        self.outcome(true)
    }

    /// Time passed: an answer key held while it settled answers now (see
    /// [`crate::question::ANSWER_SETTLE`]).
    pub fn on_tick(&mut self) -> Outcome {
        let changed = self.settle_held_answer();
        // The `@` picker shows the files its listing found since.
        let listed = self.input.refresh_picker();
        self.outcome(changed || listed)
    }

    /// Applies a key at once: the layers first, then the workbench's bindings, then the
    /// focused pane.
    pub(super) fn key_now(&mut self, key: KeyEvent) -> bool {
        // The search line and the conversation's reading keys, before a replay's
        // controls (a query is typed with space and q) and the workbench's (Esc ends a
        // search first); a layer on top takes every key itself.
        if self.layers.is_empty()
            && let Some(changed) = self.reading_key(key)
        {
            return changed;
        }
        if let Some(changed) = self.replay_key(key) {
            return changed;
        }
        if let Some(changed) = self.layer_key(key) {
            return changed;
        }
        if let Some(changed) = crate::bindings::dispatch(crate::bindings::WORKBENCH, self, key) {
            return changed;
        }
        self.pane_key(key)
    }

    /// The terminal was resized to `width` columns (see [`crate::app::PaneLayout::resized`]).
    pub(crate) fn resized(&mut self, width: u16) {
        self.layout.resized(width);
    }

    /// Esc on the workbench: closes an open side pane, else interrupts the turn, else
    /// restores a maximised pane; with none of those to do, on an empty input between
    /// turns, a second Esc within [`ESCAPE_AGAIN`] opens the rewind picker. Returns
    /// whether anything changed.
    pub(crate) fn escape(&mut self) -> bool {
        // A side pane open over the conversation is put away first (as `q` does), before
        // Esc interrupts: it is what the person looks at.
        let done = if self.layout.close_side_popup() {
            true
        } else if self.turn.running() {
            self.interrupt();
            true
        } else {
            self.layout.restore()
        };
        if !done {
            return self.escape_on_empty_input();
        }
        // It did something else: the next Esc is a first one again.
        self.turn.disarm_rewind();
        true
    }

    /// An Esc with nothing else to do: the first arms, the second opens the rewind
    /// picker. Only between turns (a rewind waits for them; an Esc while one runs
    /// interrupts it), on an empty input (a draft is not to be replaced by the message
    /// rewound to), in a live session with a model.
    fn escape_on_empty_input(&mut self) -> bool {
        let idle = !self.turn.busy() && matches!(self.turn.activity(), crate::app::Activity::Idle);
        if !idle || !self.input.is_empty() || self.replay.is_some() || self.welcome.is_some() {
            self.turn.disarm_rewind();
            return false;
        }
        if self.turn.take_rewind_armed(self.now) {
            crate::layers::rewind::open(self);
            return true;
        }
        self.turn.arm_rewind(self.now + ESCAPE_AGAIN);
        false
    }

    /// F2/F3/F4, the same at every width and however often pressed: the side pane is
    /// shown (folded into the layout at full width, over the conversation below 120
    /// columns) and gets the keys. It never puts the pane away (`q` in the pane does), so
    /// "F4, ↑, Enter" opens a call wherever and whenever it is typed, never re-sending the
    /// prompt from the input.
    pub(crate) fn show_side(&mut self, pane: Pane) -> bool {
        let had_keys = self.layout.focus() == pane;
        if !self.layout.show_side(pane) {
            return false;
        }
        // The tools pane given the keys follows its newest call, as a log view its tail:
        // "F4, ↑, Enter" opens the last call wherever the selection was left.
        if pane == Pane::Timeline && !had_keys {
            self.timeline.follow_newest();
        }
        self.tree_focused();
        true
    }

    /// `q` in a focused side pane, the same at every width: the pane is put away (the
    /// popup over the conversation closed below 120 columns, the column folded at full
    /// width) and the input gets the keys back. Whether it was a side pane with the keys.
    pub(crate) fn put_side_away(&mut self) -> bool {
        self.layout.put_side_away()
    }

    /// The panes on screen now, in Tab order.
    pub fn visible_panes(&self) -> Vec<Pane> {
        self.layout.visible_panes()
    }

    pub(crate) fn cycle_focus(&mut self, forward: bool) {
        self.layout.cycle_focus(forward);
        self.tree_focused();
    }

    /// The file tree just got the focus: it reads its folders again, so what changed
    /// outside the agent (another terminal, an editor) shows.
    fn tree_focused(&mut self) {
        if self.layout.focus() == Pane::Tree {
            self.tree.refresh_changed();
        }
    }

    /// The terminal got the focus back (the person was in another window): the file
    /// tree reads its folders again. Always a frame: the terminal may have drawn over.
    pub fn on_focus_gained(&mut self) -> Outcome {
        self.attention.set_focused(true);
        self.tree.refresh_changed();
        self.outcome(true)
    }

    /// The terminal lost the focus: what waits for the person from now on sends a
    /// notification.
    pub fn on_focus_lost(&mut self) {
        self.attention.set_focused(false);
    }

    /// Ctrl-G: asks the event loop to open the person's editor on the input's text.
    pub(crate) fn edit_input(&mut self) -> bool {
        let command = match self.places.editor.as_str() {
            "" => "vi".to_string(),
            command => command.to_string(),
        };
        self.request(crate::app::Action::EditInput {
            command,
            text: self.input.text(),
        });
        false
    }

    /// What Ctrl-G's editor saved (the input takes it, as one edit Ctrl-Z takes back),
    /// or why nothing came back (the input stays as it was). Always a frame: the editor
    /// drew over the screen.
    pub fn edited(&mut self, result: Result<String, String>) -> Outcome {
        match result {
            Ok(text) if text == self.input.text() => {}
            Ok(text) => {
                self.layout.focus_on(Pane::Input);
                self.input.replace_undoably(&text);
            }
            Err(why) => self.notice(NoticeKind::Warning, format!("{why}; the input is as it was")),
        }
        self.outcome(true)
    }

    fn pane_key(&mut self, key: KeyEvent) -> bool {
        match self.layout.focus() {
            Pane::Input => match self.input.on_key(key) {
                // End with the cursor already at its line's end moves nothing there: it
                // brings the conversation back to the newest output, as the hint
                // "new output below (End)" says, without taking End from the editor.
                InputAction::Ignored if key.code == KeyCode::End && !self.conversation.is_following() => {
                    self.conversation.scroll_to_bottom();
                    true
                }
                InputAction::Ignored => false,
                InputAction::Changed => true,
                InputAction::Submit(text) => {
                    self.submit_text(text);
                    true
                }
            },
            Pane::Conversation => {
                let page = self.conversation.page();
                match key.code {
                    KeyCode::Up | KeyCode::Char('k') => self.conversation.scroll_up(1),
                    KeyCode::Down | KeyCode::Char('j') => self.conversation.scroll_down(1),
                    KeyCode::PageUp => self.conversation.scroll_up(page),
                    KeyCode::PageDown | KeyCode::Char(' ') => self.conversation.scroll_down(page),
                    KeyCode::Home | KeyCode::Char('g') => self.conversation.scroll_to_top(),
                    KeyCode::End | KeyCode::Char('G') => self.conversation.scroll_to_bottom(),
                    _ => return self.type_into_input(key),
                }
                true
            }
            Pane::Thinking => {
                let page = self.thinking.page();
                match key.code {
                    KeyCode::Up | KeyCode::Char('k') => self.thinking.select_previous(),
                    KeyCode::Down | KeyCode::Char('j') => self.thinking.select_next(),
                    KeyCode::Enter => self.thinking.toggle_selected(),
                    KeyCode::PageUp => self.thinking.scroll_up(page),
                    KeyCode::PageDown => self.thinking.scroll_down(page),
                    _ => return self.type_into_input(key),
                }
                true
            }
            Pane::Timeline => {
                let page = i64::try_from(self.timeline.page()).unwrap_or(i64::MAX);
                match key.code {
                    KeyCode::Up | KeyCode::Char('k') => self.timeline.select_previous(),
                    KeyCode::Down | KeyCode::Char('j') => self.timeline.select_next(),
                    KeyCode::PageUp => self.timeline.select_by(-page),
                    KeyCode::PageDown => self.timeline.select_by(page),
                    KeyCode::Home => self.timeline.select_by(i64::MIN),
                    KeyCode::End => self.timeline.select_by(i64::MAX),
                    KeyCode::Enter => self.open_selected_call(),
                    _ => return self.type_into_input(key),
                }
                true
            }
            Pane::Tree => match self.tree.on_key(key) {
                TreeAction::Ignored => self.type_into_input(key),
                TreeAction::Changed => true,
                TreeAction::Open(path) => {
                    crate::layers::file_preview::open(self, &path);
                    true
                }
            },
        }
    }

    fn open_selected_call(&mut self) {
        if self.timeline.selected().is_none() {
            // Nothing chosen yet: the newest call.
            self.timeline.select_previous();
        }
        if let Some(call) = self.timeline.selected() {
            let call_id = call.id.clone();
            if call.in_log {
                // The log has it: the agent reads it back and the view fills in.
                self.send(Op::RecordedCall { id: call_id.clone() });
            }
            self.open_layer(Box::new(crate::layers::tool_detail::ToolDetail::for_call(
                call_id,
            )));
        }
    }

    /// A printable key in a pane that does not use it starts typing in the input.
    fn type_into_input(&mut self, key: KeyEvent) -> bool {
        if !types_char(key) {
            return false;
        }
        self.layout.focus_on(Pane::Input);
        self.input.on_key(key);
        true
    }

    /// A pasted text: into the input (as one insert), or into the deny reason. One over
    /// [`MAX_PASTE_BYTES`] is refused with a notice.
    fn paste(&mut self, text: &str) -> bool {
        if text.len() > MAX_PASTE_BYTES {
            self.notice(
                NoticeKind::Warning,
                format!(
                    "the paste was not inserted: it is {:.1} MB and the input takes at most 1 MB; save it to a file in the workspace and ask the agent to read it",
                    text.len() as f64 / 1_048_576.0
                ),
            );
            return true;
        }
        if self.layers.top_mut().is_some_and(|top| top.paste(text)) {
            // The reason for a refusal being typed.
            return true;
        }
        if self.layers.question().is_some() && self.replay.is_none() {
            // Pasted while a question is open: it was meant for the input, where it goes,
            // and the person is busy writing, so the question waits.
            self.disarm_question();
            self.input.paste(text);
            return true;
        }
        if !self.layers.is_empty() {
            return false;
        }
        if self.conversation.search_editing() {
            return self.conversation.search_paste(text);
        }
        self.layout.focus_on(Pane::Input);
        self.input.paste(text);
        true
    }

    /// Runs a submitted input: a slash command, or a message for the agent.
    pub(crate) fn submit_text(&mut self, text: String) {
        let trimmed = text.trim();
        if trimmed.starts_with('/') {
            crate::commands::run(self, trimmed);
            return;
        }
        if self.replay.is_some() {
            // A recording takes no messages, however its turn stands (never queued): the
            // playback answers why, and what was typed stays to be made a command.
            self.input.set_text(&text);
            self.send(Op::UserInput { text });
            return;
        }
        if let Some(welcome) = self.welcome.clone() {
            // Nothing to send it to: the text stays, and the panel says how to set a key.
            self.input.set_text(&text);
            self.show_welcome(welcome);
            self.notice(
                NoticeKind::Warning,
                "not sent: no model is set up yet. Set an API key (the panel says how) and start miniagent again"
                    .to_string(),
            );
            return;
        }
        if self.turn_busy() {
            self.turn.queue(text);
            self.notice(
                NoticeKind::Info,
                "queued: sent when this turn ends (stopping the turn puts it back in the input)".to_string(),
            );
        } else {
            self.send_message(text);
        }
        self.conversation.scroll_to_bottom();
    }

    /// Switches to the theme `name` and saves it in the config, for the next start.
    pub(crate) fn choose_theme(&mut self, name: &str) {
        let theme = match Theme::load(name, self.places.config_dir.as_deref(), self.look.no_color()) {
            Ok(theme) => theme,
            Err(message) => return self.notice(NoticeKind::Error, message.to_string()),
        };
        self.set_theme(theme);
        self.look.set_name(name.to_string());
        let saved = match &self.places.config_dir {
            Some(dir) => miniagent_api::save_setting(dir, "ui", "theme", name)
                .map(|path| format!("theme {name}, saved in {}", path.display()))
                .map_err(|err| err.to_string()),
            None => Err("there is no config folder to save it in".to_string()),
        };
        match saved {
            Ok(message) => self.notice(NoticeKind::Info, message),
            Err(why) => self.notice(
                NoticeKind::Warning,
                format!("theme {name} for this session; not saved: {why}"),
            ),
        }
    }

    /// Applies a mouse event: focus and select on click, scroll with the wheel.
    fn mouse(&mut self, mouse: MouseEvent) -> bool {
        let position = Position::new(mouse.column, mouse.row);
        // While an approval waits, the wheel outside its dialog scrolls the pane under
        // it (the conversation behind); inside, it scrolls what is asked.
        let wheel = matches!(mouse.kind, MouseEventKind::ScrollUp | MouseEventKind::ScrollDown);
        let behind_approval = wheel
            && self
                .layers
                .top_as::<crate::app::ApprovalDialog>()
                .is_some_and(|dialog| {
                    let drawn = dialog.drawn();
                    !drawn.is_empty() && !drawn.contains(position)
                });
        if !behind_approval && let Some(top) = self.layers.top_mut() {
            return match mouse.kind {
                MouseEventKind::ScrollUp => top.scroll(-3),
                MouseEventKind::ScrollDown => top.scroll(3),
                _ => false,
            };
        }
        let Some((pane, area)) = self.layout.pane_at(position) else {
            return false;
        };
        let inner_row = mouse.row.saturating_sub(area.y + 1);
        match mouse.kind {
            MouseEventKind::Down(MouseButton::Left) => {
                self.layout.focus_on(pane);
                match pane {
                    Pane::Tree => {
                        if let TreeAction::Open(path) = self.tree.on_click(inner_row) {
                            crate::layers::file_preview::open(self, &path);
                        }
                    }
                    Pane::Timeline => {
                        let already = self.timeline.selected().map(|c| c.id.clone());
                        if self.timeline.select_row(inner_row)
                            && already == self.timeline.selected().map(|c| c.id.clone())
                        {
                            self.open_selected_call();
                        }
                    }
                    Pane::Conversation | Pane::Input | Pane::Thinking => {}
                }
                true
            }
            MouseEventKind::ScrollUp | MouseEventKind::ScrollDown => {
                let up = mouse.kind == MouseEventKind::ScrollUp;
                match pane {
                    Pane::Conversation | Pane::Input if up => self.conversation.scroll_up(3),
                    Pane::Conversation | Pane::Input => self.conversation.scroll_down(3),
                    Pane::Thinking if up => self.thinking.scroll_up(3),
                    Pane::Thinking => self.thinking.scroll_down(3),
                    Pane::Timeline => self.timeline.scroll_by(if up { -3 } else { 3 }),
                    Pane::Tree => {
                        self.tree.on_scroll(if up { -3 } else { 3 });
                    }
                }
                true
            }
            _ => false,
        }
    }
}
