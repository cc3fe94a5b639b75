//! The input box: a multi-line editor (ratatui-textarea) with history recall, a
//! completion popup for slash commands, and the `@` file picker ([`crate::mention`]).

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use ratatui::buffer::Buffer;
use ratatui::layout::{Position, Rect};
use ratatui::widgets::Widget;
use ratatui_textarea::{CursorMove, TextArea, WrapMode};

use super::keys::{CommandHint, KeyHint};
use super::mention::Picker;
use super::theme::Theme;

/// How long Tab or Enter in the `@` picker waits for the workspace's listing when it
/// has found nothing yet (keys typed in one burst with the `@`).
const SETTLE: std::time::Duration = std::time::Duration::from_millis(300);

/// What a key did to the input.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum InputAction {
    /// Not an input key; let the workbench have it.
    Ignored,
    Changed,
    /// Enter on a non-empty input: the text to send (or the command to run).
    Submit(String),
}

/// The input box.
pub struct InputBox {
    editor: TextArea<'static>,
    history: Vec<String>,
    /// While recalling: the index into `history`, and what was typed before recalling.
    recall: Option<(usize, String)>,
    /// The highlighted completion, while the popup shows.
    completion: usize,
    popup_dismissed: bool,
    /// The slash commands it completes.
    commands: Vec<CommandHint>,
    /// The session's prompt commands (`commands/` files), after the built-in ones.
    prompt_commands: Vec<CommandHint>,
    /// The `@` file picker, and the mention (row, column of its `@`) it was closed on.
    picker: Picker,
    picker_dismissed: Option<(usize, usize)>,
}

impl InputBox {
    /// An empty input that completes `commands`.
    pub fn new(commands: Vec<CommandHint>) -> Self {
        let mut editor = TextArea::default();
        editor.set_wrap_mode(WrapMode::WordOrGlyph);
        editor.set_placeholder_text("Ask miniagent…  Enter sends · Alt-Enter new line · / commands");
        Self {
            editor,
            history: Vec::new(),
            recall: None,
            completion: 0,
            popup_dismissed: false,
            commands,
            prompt_commands: Vec::new(),
            picker: Picker::new(),
            picker_dismissed: None,
        }
    }

    /// The session's prompt commands, completed after the built-in ones; one with a
    /// built-in's name is not (the built-in wins).
    pub fn set_prompt_commands(&mut self, commands: Vec<CommandHint>) {
        self.prompt_commands = commands
            .into_iter()
            .filter(|command| !self.commands.iter().any(|builtin| builtin.name == command.name))
            .collect();
        self.completion = 0;
    }

    /// The folder the `@` picker lists (the workspace).
    pub fn set_workspace(&mut self, root: std::path::PathBuf) {
        self.picker.set_root(root);
    }

    pub fn text(&self) -> String {
        self.editor.lines().join("\n")
    }

    pub fn is_empty(&self) -> bool {
        self.editor.is_empty()
    }

    pub fn clear(&mut self) {
        self.set_text("");
    }

    /// Empties the box as an edit (Ctrl-C on a typed message): Ctrl-Z brings it back.
    pub fn clear_undoably(&mut self) {
        self.editor.select_all();
        self.editor.cut();
        self.recall = None;
    }

    /// Replaces what is typed as one edit (the text from Ctrl-G's editor): Ctrl-Z brings
    /// back what was there.
    pub fn replace_undoably(&mut self, text: &str) {
        self.clear_undoably();
        self.paste(text);
        self.popup_dismissed = false;
        self.completion = 0;
    }

    /// Replaces what is typed, the cursor at its end.
    pub fn set_text(&mut self, text: &str) {
        let mut editor = TextArea::new(text.split('\n').map(str::to_string).collect());
        editor.set_wrap_mode(WrapMode::WordOrGlyph);
        editor.set_placeholder_text(self.editor.placeholder_text().to_string());
        editor.move_cursor(CursorMove::Bottom);
        editor.move_cursor(CursorMove::End);
        self.editor = editor;
        self.popup_dismissed = false;
        self.completion = 0;
        self.picker_dismissed = None;
        self.update_picker();
    }

    /// A paste arrives as one insert, however long, never as a flood of keys.
    pub fn paste(&mut self, text: &str) {
        let normalized = text.replace("\r\n", "\n").replace('\r', "\n");
        self.editor.insert_str(normalized);
        self.recall = None;
        self.update_picker();
    }

    /// Slash commands matching what is typed, while the input is a bare `/word`.
    pub fn completions(&self) -> Vec<CommandHint> {
        self.matching_commands().cloned().collect()
    }

    /// Whether any slash command completes what is typed (asked on every key, so the
    /// input's text is not joined or the matches copied for it).
    pub fn completing(&self) -> bool {
        self.matching_commands().next().is_some()
    }

    fn matching_commands(&self) -> impl Iterator<Item = &CommandHint> {
        // A bare `/word` is one line: a line break is whitespace too.
        let word = match self.editor.lines() {
            [line]
                if !self.popup_dismissed && line.starts_with('/') && !line.contains(char::is_whitespace) =>
            {
                Some(line.as_str())
            }
            _ => None,
        };
        self.commands
            .iter()
            .chain(&self.prompt_commands)
            .filter(move |c| word.is_some_and(|word| c.name.starts_with(word)))
    }

    pub fn selected_completion(&self) -> usize {
        self.completion
    }

    pub fn on_key(&mut self, key: KeyEvent) -> InputAction {
        if let Some(action) = self.picker_key(key) {
            return action;
        }
        let action = self.editing_key(key);
        self.update_picker();
        action
    }

    fn editing_key(&mut self, key: KeyEvent) -> InputAction {
        let completions = self.completions();
        if !completions.is_empty() {
            match key.code {
                KeyCode::Up => {
                    self.completion = self.completion.checked_sub(1).unwrap_or(completions.len() - 1);
                    return InputAction::Changed;
                }
                KeyCode::Down => {
                    self.completion = (self.completion + 1) % completions.len();
                    return InputAction::Changed;
                }
                KeyCode::Esc => {
                    self.popup_dismissed = true;
                    return InputAction::Changed;
                }
                KeyCode::Tab | KeyCode::Enter if key.modifiers.is_empty() => {
                    let chosen = &completions[self.completion.min(completions.len() - 1)];
                    // Enter on a whole command runs it, even one that takes an argument:
                    // the command then says (or offers) what it needs.
                    if key.code == KeyCode::Enter && (chosen.args.is_empty() || self.text() == chosen.name) {
                        let name = chosen.name.to_string();
                        self.clear();
                        self.history_push(&name);
                        return InputAction::Submit(name);
                    }
                    let completed = if chosen.args.is_empty() {
                        chosen.name.to_string()
                    } else {
                        format!("{} ", chosen.name)
                    };
                    self.set_text(&completed);
                    return InputAction::Changed;
                }
                _ => {}
            }
        }
        let newline = matches!(key.code, KeyCode::Enter)
            && (key.modifiers.contains(KeyModifiers::SHIFT) || key.modifiers.contains(KeyModifiers::ALT))
            || (key.code == KeyCode::Char('j') && key.modifiers == KeyModifiers::CONTROL);
        if newline {
            self.editor.insert_newline();
            return InputAction::Changed;
        }
        match key.code {
            KeyCode::Enter if key.modifiers.is_empty() => {
                let text = self.text();
                if text.trim().is_empty() {
                    return InputAction::Ignored;
                }
                self.history_push(&text);
                self.clear();
                InputAction::Submit(text)
            }
            KeyCode::Up if key.modifiers.is_empty() && self.editor.cursor().0 == 0 => self.recall_older(),
            KeyCode::Down
                if key.modifiers.is_empty() && self.editor.cursor().0 + 1 >= self.editor.lines().len() =>
            {
                self.recall_newer()
            }
            // Keys the workbench owns.
            KeyCode::Tab
            | KeyCode::BackTab
            | KeyCode::Esc
            | KeyCode::F(_)
            | KeyCode::PageUp
            | KeyCode::PageDown => InputAction::Ignored,
            KeyCode::Char('c' | 'd') if key.modifiers.contains(KeyModifiers::CONTROL) => InputAction::Ignored,
            // As in a shell: Ctrl-U deletes back to the line's start (the editor's own
            // binding was undo, which took one character back), Ctrl-Z undoes.
            KeyCode::Char('u') if key.modifiers == KeyModifiers::CONTROL => {
                self.edited(|editor| editor.delete_line_by_head())
            }
            KeyCode::Char('z') if key.modifiers == KeyModifiers::CONTROL => {
                self.edited(|editor| editor.undo())
            }
            _ => {
                let cursor = self.editor.cursor();
                if self.editor.input(key) {
                    self.popup_dismissed = false;
                    self.completion = 0;
                    InputAction::Changed
                } else if self.editor.cursor() != cursor {
                    // Only the cursor moved: the frame must show where typing goes now
                    // (and an input method opens its window there).
                    InputAction::Changed
                } else {
                    InputAction::Ignored
                }
            }
        }
    }

    /// The mention the cursor is in: the column of its `@` on the cursor's row, and the
    /// text typed after it (inside the quotes of `@"a b`); `None` when the cursor is not
    /// right after an `@word` that starts a line or follows whitespace.
    fn mention_at_cursor(&self) -> Option<(usize, usize, String)> {
        let ratatui_textarea::DataCursor(row, column) = self.editor.cursor();
        let before: Vec<char> = self.editor.lines().get(row)?.chars().take(column).collect();
        let at = (0..before.len())
            .rev()
            .find(|&i| before[i] == '@' && (i == 0 || before[i - 1].is_whitespace()))?;
        let typed = &before[at + 1..];
        let query: String = match typed.split_first() {
            Some(('"', quoted)) if !quoted.contains(&'"') => quoted.iter().collect(),
            _ if typed.iter().any(|c| c.is_whitespace() || *c == '"') => return None,
            _ => typed.iter().collect(),
        };
        Some((row, at, query))
    }

    /// Whether the `@` picker shows.
    pub fn picking(&self) -> bool {
        !self.completing()
            && self
                .mention_at_cursor()
                .is_some_and(|(row, at, _)| self.picker_dismissed != Some((row, at)))
    }

    /// The picker, while it shows.
    pub fn picker(&self) -> Option<&Picker> {
        self.picking().then_some(&self.picker)
    }

    /// Whether the picker shows while the workspace is still being listed: the event
    /// loop then ticks, and [`InputBox::refresh_picker`] shows what more was found.
    pub fn listing_files(&self) -> bool {
        self.picker.listing() && self.picking()
    }

    /// Takes what the workspace's listing found since the last look; whether the picker
    /// changed.
    pub fn refresh_picker(&mut self) -> bool {
        self.picking() && self.picker.refresh()
    }

    /// Waits for the workspace's listing and ranks it (tests only: the workbench never
    /// waits, it shows more as its ticks find it).
    #[cfg(test)]
    pub fn picker_listed(&mut self) {
        self.picker.wait_listed();
    }

    /// Ranks the files for the mention being typed, or closes the picker.
    fn update_picker(&mut self) {
        match self.mention_at_cursor() {
            Some((row, at, query)) if self.picker_dismissed != Some((row, at)) => {
                self.picker_dismissed = None;
                self.picker.search(&query);
            }
            Some(_) => {}
            None => {
                self.picker_dismissed = None;
                self.picker.close();
            }
        }
    }

    /// A key for the open picker: the arrows move, Tab or Enter takes the file, Esc
    /// closes it leaving the text. `None`: not the picker's key.
    fn picker_key(&mut self, key: KeyEvent) -> Option<InputAction> {
        if !self.picking() || !key.modifiers.is_empty() {
            return None;
        }
        match key.code {
            KeyCode::Up | KeyCode::Down => {
                self.picker.move_selection(key.code == KeyCode::Down);
                Some(InputAction::Changed)
            }
            KeyCode::Esc => {
                let (row, at, _) = self.mention_at_cursor()?;
                self.picker_dismissed = Some((row, at));
                self.picker.close();
                Some(InputAction::Changed)
            }
            KeyCode::Tab | KeyCode::Enter => {
                self.picker.settle(SETTLE);
                let Some(chosen) = self.picker.chosen().map(crate::mention::mention_of) else {
                    // Nothing to take: Tab stays here; Enter sends the message as typed.
                    return (key.code == KeyCode::Tab).then_some(InputAction::Changed);
                };
                let (_, at, _) = self.mention_at_cursor()?;
                let typed = self.editor.cursor().1 - at;
                for _ in 0..typed {
                    self.editor.delete_char();
                }
                self.editor.insert_str(format!("{chosen} "));
                self.recall = None;
                self.update_picker();
                Some(InputAction::Changed)
            }
            _ => None,
        }
    }

    /// Applies an edit; whether it changed the text.
    fn edited(&mut self, edit: impl FnOnce(&mut TextArea<'static>) -> bool) -> InputAction {
        if edit(&mut self.editor) {
            self.popup_dismissed = false;
            self.completion = 0;
            InputAction::Changed
        } else {
            InputAction::Ignored
        }
    }

    fn history_push(&mut self, text: &str) {
        if self.history.last().is_none_or(|last| last != text) {
            self.history.push(text.to_string());
        }
        self.recall = None;
    }

    fn recall_older(&mut self) -> InputAction {
        if self.history.is_empty() {
            return InputAction::Ignored;
        }
        let (index, draft) = match self.recall.take() {
            Some((index, draft)) => (index.saturating_sub(1), draft),
            None => (self.history.len() - 1, self.text()),
        };
        let text = self.history[index].clone();
        self.set_text(&text);
        self.recall = Some((index, draft));
        InputAction::Changed
    }

    fn recall_newer(&mut self) -> InputAction {
        let Some((index, draft)) = self.recall.take() else {
            return InputAction::Ignored;
        };
        if index + 1 < self.history.len() {
            let text = self.history[index + 1].clone();
            self.set_text(&text);
            self.recall = Some((index + 1, draft));
        } else {
            self.set_text(&draft);
        }
        InputAction::Changed
    }

    /// Rows the editor wants at `width` (without borders), between 1 and `max`.
    pub fn wanted_height(&self, width: u16, max: u16) -> u16 {
        let width = usize::from(width.max(1));
        let rows: usize = self
            .editor
            .lines()
            .iter()
            .map(|line| super::text::wrap::display_width(line).div_ceil(width).max(1))
            .sum();
        u16::try_from(rows).unwrap_or(u16::MAX).clamp(1, max.max(1))
    }

    pub fn key_hints(&self) -> Vec<KeyHint> {
        vec![
            KeyHint::new("Enter", "send"),
            KeyHint::new("Alt-Enter/Ctrl-J", "new line"),
            KeyHint::new("↑/↓", "earlier inputs"),
            KeyHint::new("/", "commands"),
        ]
    }

    /// Every key the help lists for the input: the bar's, and the editing keys.
    pub fn all_key_hints(&self) -> Vec<KeyHint> {
        let mut hints = self.key_hints();
        hints.extend([
            KeyHint::new("Ctrl-U", "delete to line start"),
            KeyHint::new("Ctrl-K", "delete to line end"),
            KeyHint::new("Ctrl-W", "delete a word back"),
            KeyHint::new("Ctrl-Z", "undo"),
            KeyHint::new("@", "attach a file (picker: Tab/Enter takes, Esc closes)"),
        ]);
        hints
    }

    /// Takes the colours of `theme` (set whenever the app's theme is).
    pub fn set_theme(&mut self, theme: &Theme) {
        self.editor.set_style(theme.text);
        self.editor.set_placeholder_style(theme.dim);
        self.editor
            .set_cursor_line_style(ratatui::style::Style::default());
        self.editor.set_cursor_style(theme.text);
    }

    /// Draws the editor into `area` (the caller draws the frame). The cursor is the
    /// terminal's own (see [`InputBox::cursor_position`]), so none is drawn here.
    pub fn render(&self, area: Rect, buf: &mut Buffer) {
        (&self.editor).render(area, buf);
    }

    /// Where the terminal's cursor belongs, after the editor was last drawn into `area`:
    /// input methods (CJK) open their popups there.
    pub fn cursor_position(&self, area: Rect) -> Option<Position> {
        if area.is_empty() {
            return None;
        }
        let cursor = self.editor.screen_cursor();
        let (top_row, left_column) = self.editor.scroll_offset();
        let row = cursor.row.checked_sub(usize::from(top_row))?;
        if row >= usize::from(area.height) {
            return None;
        }
        // At the end of a full row the cursor waits in the last column.
        let column = cursor
            .col
            .saturating_sub(usize::from(left_column))
            .min(usize::from(area.width) - 1);
        Some(Position::new(
            area.x + u16::try_from(column).unwrap_or(0),
            area.y + u16::try_from(row).unwrap_or(0),
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    fn key(code: KeyCode) -> KeyEvent {
        KeyEvent::new(code, KeyModifiers::NONE)
    }

    fn type_text(input: &mut InputBox, text: &str) {
        for c in text.chars() {
            input.on_key(key(KeyCode::Char(c)));
        }
    }

    #[test]
    fn enter_sends_and_newline_keys_do_not() {
        let mut input = InputBox::new(crate::commands::hints());
        type_text(&mut input, "hello");
        input.on_key(KeyEvent::new(KeyCode::Enter, KeyModifiers::ALT));
        input.on_key(KeyEvent::new(KeyCode::Char('j'), KeyModifiers::CONTROL));
        type_text(&mut input, "world");
        assert_eq!(
            input.on_key(key(KeyCode::Enter)),
            InputAction::Submit("hello\n\nworld".into())
        );
        assert!(input.is_empty());
        assert_eq!(input.on_key(key(KeyCode::Enter)), InputAction::Ignored);
    }

    /// Ctrl-U deletes back to the start of the line, as in a shell (it was the editor's
    /// undo, which took one character back: a fresh-eyes run sent a half-deleted
    /// message); Ctrl-Z undoes.
    #[test]
    fn ctrl_u_deletes_to_the_line_start_and_ctrl_z_undoes() {
        let ctrl = |c| KeyEvent::new(KeyCode::Char(c), KeyModifiers::CONTROL);
        let mut input = InputBox::new(crate::commands::hints());
        type_text(&mut input, "first line");
        input.on_key(ctrl('j'));
        type_text(&mut input, "hello world foo");
        input.on_key(key(KeyCode::Left));
        input.on_key(key(KeyCode::Left));
        input.on_key(key(KeyCode::Left));
        assert_eq!(input.on_key(ctrl('u')), InputAction::Changed);
        assert_eq!(input.text(), "first line\nfoo");
        assert_eq!(input.on_key(ctrl('z')), InputAction::Changed);
        assert_eq!(input.text(), "first line\nhello world foo");
        // Ctrl-K deletes to the line's end, Ctrl-W a word back.
        input.on_key(ctrl('k'));
        assert_eq!(input.text(), "first line\nhello world ");
        input.on_key(ctrl('w'));
        assert_eq!(input.text(), "first line\nhello ");
        // Emptied as an edit (Ctrl-C), it comes back with Ctrl-Z.
        input.clear_undoably();
        assert!(input.is_empty());
        assert_eq!(input.on_key(ctrl('z')), InputAction::Changed);
        assert_eq!(input.text(), "first line\nhello ");
        // At a line's start, Ctrl-U takes the line break: pressed again and again it
        // clears a message of many lines.
        input.on_key(ctrl('u'));
        input.on_key(ctrl('u'));
        input.on_key(ctrl('u'));
        assert!(input.is_empty(), "{:?}", input.text());
    }

    /// Moving the cursor changes the screen (the terminal's cursor follows it), found
    /// by a fresh-eyes run where Left and Home in CJK text drew nothing.
    #[test]
    fn moving_the_cursor_is_a_change_and_the_cursor_shows_where_it_went() {
        let mut input = InputBox::new(crate::commands::hints());
        type_text(&mut input, "日本語abc");
        let area = Rect::new(0, 0, 40, 3);
        let end = input.cursor_position(area);
        assert_eq!(input.on_key(key(KeyCode::Left)), InputAction::Changed);
        assert_eq!(input.on_key(key(KeyCode::Home)), InputAction::Changed);
        let mut buf = Buffer::empty(area);
        input.render(area, &mut buf);
        assert_eq!(input.cursor_position(area), Some(Position::new(0, 0)));
        assert_ne!(input.cursor_position(area), end);
        // At the start already: nothing moves, nothing to draw.
        assert_eq!(input.on_key(key(KeyCode::Home)), InputAction::Ignored);
        assert_eq!(input.on_key(key(KeyCode::End)), InputAction::Changed);
        input.render(area, &mut buf);
        assert_eq!(input.cursor_position(area), Some(Position::new(9, 0)));
    }

    #[test]
    fn history_recall_keeps_the_draft() {
        let mut input = InputBox::new(crate::commands::hints());
        for text in ["one", "two"] {
            type_text(&mut input, text);
            input.on_key(key(KeyCode::Enter));
        }
        type_text(&mut input, "dra");
        input.on_key(key(KeyCode::Up));
        assert_eq!(input.text(), "two");
        input.on_key(key(KeyCode::Up));
        assert_eq!(input.text(), "one");
        input.on_key(key(KeyCode::Down));
        input.on_key(key(KeyCode::Down));
        assert_eq!(input.text(), "dra");
    }

    #[test]
    fn slash_completion_filters_and_completes() {
        let mut input = InputBox::new(crate::commands::hints());
        type_text(&mut input, "/app");
        let completions = input.completions();
        let names: Vec<&str> = completions.iter().map(|c| c.name.as_ref()).collect();
        assert_eq!(names, vec!["/approval", "/approvals"]);
        input.on_key(key(KeyCode::Tab));
        assert_eq!(input.text(), "/approval ");
        assert!(input.completions().is_empty());
        input.clear();
        type_text(&mut input, "/st");
        assert_eq!(
            input.on_key(key(KeyCode::Enter)),
            InputAction::Submit("/stats".into())
        );
    }

    #[test]
    fn a_big_paste_is_one_insert() {
        let mut input = InputBox::new(crate::commands::hints());
        let big = "line\r\n".repeat(100_000);
        input.paste(&big);
        assert_eq!(input.text().lines().count(), 100_000);
        assert_eq!(input.wanted_height(40, 8), 8);
    }
}
