//! The workbench's own keys and the approval dialog's, as tables that dispatch, the help
//! overlay and the bottom bar all read: a binding is one row here, never a `match` arm
//! plus a hint kept by hand beside it.

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

use super::app::{App, ApprovalDialog, Pane};
use super::keys::{KeyHint, OverlayAction};
use miniagent_protocol::Decision;

/// One key binding of a table acting on `S` (the workbench's on the app, the approval
/// dialog's on the dialog), its run answering with an `R`.
#[derive(Clone, Copy, Debug)]
pub struct Binding<S = App, R = bool> {
    /// How the keys are written, e.g. `Tab/Shift-Tab`.
    pub keys: &'static str,
    /// What they do, short.
    pub action: &'static str,
    /// Whether the bottom bar shows it (the help shows every binding).
    pub bar: bool,
    /// Whether it takes `key` in the state now; when not, the key goes on.
    pub takes: fn(&S, KeyEvent) -> bool,
    /// Whether the bar offers it in the state now.
    pub offered: fn(&S) -> bool,
    /// Does it; the workbench's return whether the screen changed.
    pub run: fn(&mut S, KeyEvent) -> R,
}

impl<S, R> Binding<S, R> {
    pub fn hint(&self) -> KeyHint {
        KeyHint::new(self.keys, self.action)
    }
}

/// How long a second Ctrl-C quits after the first one on an empty input.
const QUIT_AGAIN: std::time::Duration = std::time::Duration::from_secs(2);

fn ctrl(key: KeyEvent, c: char) -> bool {
    key.code == KeyCode::Char(c) && key.modifiers.contains(KeyModifiers::CONTROL)
}

/// Alt with `code` and nothing else (Alt-Shift-→ is the input's to take).
fn alt(key: KeyEvent, code: KeyCode) -> bool {
    key.code == code && key.modifiers == KeyModifiers::ALT
}

fn always<S>(_: &S) -> bool {
    true
}

/// The input's completion popup (and its `@` file picker) uses Esc, Tab and the arrows
/// while it shows.
fn completing(app: &App) -> bool {
    app.layout.focus() == Pane::Input && (app.input.completing() || app.input.picking())
}

fn open_help(app: &mut App, _: KeyEvent) -> bool {
    app.open_help();
    true
}

/// The workbench's own keys, tried after the overlays and before the focused pane.
pub const WORKBENCH: &[Binding] = &[
    Binding {
        keys: "Esc",
        action: "interrupt the step; twice when idle: /rewind",
        bar: false,
        takes: |app, key| key.code == KeyCode::Esc && !completing(app),
        offered: always,
        run: |app, _| app.escape(),
    },
    Binding {
        keys: "Ctrl-C",
        action: "interrupt / clear input / quit (twice)",
        bar: false,
        takes: |_, key| ctrl(key, 'c'),
        offered: always,
        run: |app, _| {
            if app.turn.running() {
                app.interrupt();
            } else if !app.input.is_empty() {
                // Undoable (Ctrl-Z): it may hold messages put back after an interrupt.
                app.input.clear_undoably();
            } else if app.turn.quit_armed(app.now) {
                app.request(crate::app::Action::Quit);
            } else {
                // One press too many (after an interrupt or a clear) does not end the
                // session: a second one soon after does.
                app.turn.arm_quit(app.now + QUIT_AGAIN);
                app.notice_once(
                    crate::conversation::NoticeKind::Info,
                    "press Ctrl-C again to quit (Ctrl-D on an empty input quits at once)".to_string(),
                );
            }
            true
        },
    },
    Binding {
        keys: "Ctrl-D",
        action: "quit (empty input)",
        bar: false,
        takes: |app, key| ctrl(key, 'd') && app.input.is_empty(),
        offered: always,
        run: |app, _| {
            app.request(crate::app::Action::Quit);
            true
        },
    },
    Binding {
        keys: "Ctrl-G",
        action: "edit the input in $VISUAL/$EDITOR",
        bar: false,
        // A recording takes no input.
        takes: |app, key| ctrl(key, 'g') && app.replay.is_none(),
        offered: always,
        run: |app, _| app.edit_input(),
    },
    Binding {
        keys: "F1",
        action: "help",
        bar: true,
        takes: |_, key| key.code == KeyCode::F(1),
        offered: always,
        run: open_help,
    },
    Binding {
        keys: "?",
        action: "help (outside the input)",
        bar: false,
        takes: |app, key| key.code == KeyCode::Char('?') && app.layout.focus() != Pane::Input,
        offered: always,
        run: open_help,
    },
    Binding {
        keys: "Tab/Alt-→",
        action: "next pane",
        bar: true,
        // Tab completes a command while the popup shows; Alt-→ always moves.
        takes: |app, key| (key.code == KeyCode::Tab && !completing(app)) || alt(key, KeyCode::Right),
        offered: always,
        run: |app, _| {
            app.cycle_focus(true);
            true
        },
    },
    Binding {
        keys: "Alt-←",
        action: "previous pane",
        bar: false,
        takes: |_, key| alt(key, KeyCode::Left),
        offered: always,
        run: |app, _| {
            app.cycle_focus(false);
            true
        },
    },
    Binding {
        keys: "Shift-Tab",
        action: "next approval mode (ask → auto-edit → read-only)",
        bar: true,
        // A recording's mode is not the person's to change.
        takes: |app, key| key.code == KeyCode::BackTab && app.replay.is_none(),
        offered: |app| app.replay.is_none(),
        run: |app, _| app.cycle_approval_mode(),
    },
    Binding {
        keys: "F2",
        action: "show and focus the files",
        bar: false,
        takes: |_, key| key.code == KeyCode::F(2),
        offered: always,
        run: |app, _| app.show_side(Pane::Tree),
    },
    Binding {
        keys: "F3",
        action: "show and focus the thinking",
        bar: false,
        takes: |_, key| key.code == KeyCode::F(3),
        offered: always,
        run: |app, _| app.show_side(Pane::Thinking),
    },
    Binding {
        keys: "F4",
        action: "show and focus the tools",
        bar: false,
        takes: |_, key| key.code == KeyCode::F(4),
        offered: always,
        run: |app, _| app.show_side(Pane::Timeline),
    },
    Binding {
        keys: "q",
        action: "hide this side pane",
        bar: true,
        takes: |app, key| {
            key.code == KeyCode::Char('q')
                && !key
                    .modifiers
                    .intersects(KeyModifiers::CONTROL | KeyModifiers::ALT)
                && crate::app::is_side(app.layout.focus())
        },
        offered: |app| crate::app::is_side(app.layout.focus()),
        run: |app, _| app.put_side_away(),
    },
    Binding {
        keys: "Ctrl-T",
        action: "show / hide the plan",
        bar: false,
        takes: |_, key| ctrl(key, 't'),
        offered: always,
        run: |app, _| app.toggle_plan(),
    },
    Binding {
        keys: "F5",
        action: "maximise / restore pane",
        bar: false,
        takes: |_, key| key.code == KeyCode::F(5),
        offered: always,
        run: |app, _| {
            app.layout.toggle_maximized();
            true
        },
    },
    Binding {
        keys: "F6",
        action: "history inspector",
        bar: false,
        takes: |_, key| key.code == KeyCode::F(6),
        offered: always,
        run: |app, _| {
            app.open_history();
            true
        },
    },
    Binding {
        keys: "PgUp/PgDn",
        action: "scroll the conversation (from the input)",
        bar: false,
        takes: |app, key| {
            matches!(key.code, KeyCode::PageUp | KeyCode::PageDown) && app.layout.focus() == Pane::Input
        },
        offered: always,
        run: |app, key| {
            let page = app.conversation.page();
            if key.code == KeyCode::PageUp {
                app.conversation.scroll_up(page);
            } else {
                app.conversation.scroll_down(page);
            }
            true
        },
    },
    Binding {
        keys: "Ctrl-F",
        action: "search the conversation",
        bar: false,
        takes: |_, key| ctrl(key, 'f'),
        offered: always,
        run: |app, _| app.start_search(),
    },
    Binding {
        keys: "mouse",
        action: "focus, select, scroll",
        bar: false,
        // Listed for the help; the mouse arrives as mouse events, not keys.
        takes: |_, _| false,
        offered: always,
        run: |_, _| false,
    },
];

/// The approval dialog's keys, once it is armed.
pub const APPROVAL: &[Binding<ApprovalDialog, OverlayAction>] = &[
    Binding {
        keys: "y",
        action: "approve",
        bar: true,
        takes: |dialog, key| key.code == KeyCode::Char('y') && dialog.seen(),
        offered: ApprovalDialog::seen,
        run: |dialog, _| dialog.decide(Decision::Approve),
    },
    Binding {
        keys: "a",
        action: "approve for the session",
        bar: true,
        takes: |dialog, key| key.code == KeyCode::Char('a') && dialog.session_offered() && dialog.seen(),
        offered: |dialog| dialog.session_offered() && dialog.seen(),
        run: |dialog, _| dialog.decide(Decision::ApproveForSession),
    },
    Binding {
        keys: "n",
        action: "deny (why?)",
        bar: true,
        takes: |_, key| key.code == KeyCode::Char('n'),
        offered: always,
        run: |dialog, _| {
            dialog.ask_reason();
            OverlayAction::Changed
        },
    },
    Binding {
        keys: "Esc",
        action: "stop the turn",
        bar: true,
        takes: |_, key| key.code == KeyCode::Esc,
        offered: always,
        run: |dialog, _| dialog.decide(Decision::Abort),
    },
    Binding {
        keys: "A",
        action: "always allow (saved to config)",
        bar: true,
        takes: |dialog, key| key.code == KeyCode::Char('A') && dialog.always_offered() && dialog.seen(),
        offered: |dialog| dialog.always_offered() && dialog.seen(),
        run: |dialog, _| {
            dialog.ask_always();
            OverlayAction::Changed
        },
    },
    Binding {
        keys: "↑/↓",
        action: "scroll the preview",
        bar: false,
        takes: |_, key| {
            matches!(
                key.code,
                KeyCode::Up
                    | KeyCode::Char('k')
                    | KeyCode::Down
                    | KeyCode::Char('j')
                    | KeyCode::PageUp
                    | KeyCode::PageDown
                    | KeyCode::Home
                    | KeyCode::End
            )
        },
        offered: always,
        run: |dialog, key| {
            dialog.scroll_to(|scroll, most| match key.code {
                KeyCode::Up | KeyCode::Char('k') => scroll.saturating_sub(1),
                KeyCode::Down | KeyCode::Char('j') => scroll.saturating_add(1).min(most),
                KeyCode::PageUp => scroll.saturating_sub(10),
                KeyCode::Home => 0,
                KeyCode::End => most,
                _ => scroll.saturating_add(10).min(most),
            });
            OverlayAction::Changed
        },
    },
];

/// While an approval waits: keys that scroll the conversation behind the dialog (the
/// dialog's own ↑/↓ scroll what it asks). Tried before the dialog, armed or not: they
/// answer nothing.
pub const BEHIND_APPROVAL: &[Binding] = &[
    Binding {
        keys: "Shift-↑/↓",
        action: "scroll the conversation behind",
        bar: false,
        takes: |_, key| {
            matches!(key.code, KeyCode::Up | KeyCode::Down) && key.modifiers == KeyModifiers::SHIFT
        },
        offered: always,
        run: |app, key| {
            if key.code == KeyCode::Up {
                app.conversation.scroll_up(1);
            } else {
                app.conversation.scroll_down(1);
            }
            true
        },
    },
    Binding {
        keys: "Shift-PgUp/PgDn",
        action: "scroll the conversation behind by a page",
        bar: false,
        takes: |_, key| {
            matches!(key.code, KeyCode::PageUp | KeyCode::PageDown) && key.modifiers == KeyModifiers::SHIFT
        },
        offered: always,
        run: |app, key| {
            let page = app.conversation.page();
            if key.code == KeyCode::PageUp {
                app.conversation.scroll_up(page);
            } else {
                app.conversation.scroll_down(page);
            }
            true
        },
    },
    Binding {
        keys: "wheel outside it",
        action: "scroll the pane under the pointer",
        bar: false,
        // Listed for the help; the wheel arrives as mouse events, not keys.
        takes: |_, _| false,
        offered: always,
        run: |_, _| false,
    },
];

/// Runs the first binding of `table` that takes `key` now; `None` when none does.
pub fn dispatch<S, R>(table: &[Binding<S, R>], state: &mut S, key: KeyEvent) -> Option<R> {
    let binding = table.iter().find(|binding| (binding.takes)(state, key))?;
    Some((binding.run)(state, key))
}

/// The hints of `table` the bottom bar shows in the state now.
pub fn bar_hints<S, R>(table: &[Binding<S, R>], state: &S) -> Vec<KeyHint> {
    table
        .iter()
        .filter(|binding| binding.bar && (binding.offered)(state))
        .map(Binding::hint)
        .collect()
}

/// Every hint of `table`, for the help.
pub fn help_hints<S, R>(table: &[Binding<S, R>]) -> Vec<KeyHint> {
    table.iter().map(Binding::hint).collect()
}
