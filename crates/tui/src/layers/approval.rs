//! The approval dialog: a tool call waiting for the person's decision, as a layer that
//! keeps the top of the stack while calls wait. What is asked is shown exactly (an edit
//! as a coloured diff, a command as its lines and where it runs); `y` and `a` count only
//! once all of it has been on screen, and no key answers before the dialog armed
//! (`question.rs`). Its state is the app's `ApprovalDialog` (`app/approvals.rs`); its
//! keys are the table `bindings::APPROVAL`.

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use ratatui::buffer::Buffer;
use ratatui::layout::{Position, Rect};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, BorderType, Borders, Widget};

use super::Layer;
use crate::app::{App, ApprovalDialog, ApprovalLayout, PendingApproval};
use crate::bindings::{self, APPROVAL};
use crate::keys::{KeyHint, OverlayAction, OverlayContext};
use crate::popup::{centered, clear_for_popup};
use crate::question::Arming;
use crate::text::{diff::diff_lines, wrap};
use crate::theme::Theme;
use miniagent_protocol::{ApprovalRequest, ApprovalRule};

/// Keys while the rule `A` saves is confirmed.
pub const ALWAYS_HINTS: [KeyHint; 2] = [
    KeyHint::new("Enter", "approve and save the rule"),
    KeyHint::new("Esc", "back"),
];

/// Keys while a reason for a refusal is typed.
pub const DENY_REASON_HINTS: [KeyHint; 2] = [
    KeyHint::new("Enter", "send the reason"),
    KeyHint::new("Esc", "back"),
];

impl Layer for ApprovalDialog {
    type State = App;

    fn title(&self) -> String {
        self.front()
            .map_or_else(String::new, |front| format!("Allow {}?", front.name))
    }

    /// Its keys once armed (the bar says it arms until then).
    fn key_hints(&self) -> Vec<KeyHint> {
        if self.reason().is_some() {
            DENY_REASON_HINTS.to_vec()
        } else if self.always().is_some() {
            ALWAYS_HINTS.to_vec()
        } else {
            bindings::bar_hints(APPROVAL, self)
        }
    }

    fn on_key(&mut self, key: KeyEvent, _context: OverlayContext<'_>) -> OverlayAction {
        let ctrl = key.modifiers.contains(KeyModifiers::CONTROL);
        if ctrl && key.code == KeyCode::Char('c') {
            return OverlayAction::Interrupt;
        }
        if let Some(action) = self.reason_key(key, ctrl) {
            return action;
        }
        if let Some(action) = self.always_key(key, ctrl) {
            return action;
        }
        bindings::dispatch(APPROVAL, self, key).unwrap_or(OverlayAction::Ignored)
    }

    /// The wheel scrolls the call's body; the dialog keeps the mouse whatever it does.
    fn scroll(&mut self, lines: i32) -> bool {
        self.wheel(lines);
        true
    }

    fn question(&self) -> Option<&Arming> {
        self.arming()
    }

    fn question_mut(&mut self) -> Option<&mut Arming> {
        self.arming_mut()
    }

    fn takes_answer_letters(&self) -> bool {
        self.reason().is_none() && self.always().is_none()
    }

    fn keeps_top(&self) -> bool {
        true
    }

    fn finished(&self) -> bool {
        self.waiting() == 0
    }

    fn paste(&mut self, text: &str) -> bool {
        self.paste_reason(text)
    }

    /// Measured before the status bar, which says whether the call may be approved.
    fn prepare(&self, app: &App, size: Rect) {
        self.keep_layout(measure(self, app, size));
    }

    fn render(&self, app: &App, size: Rect, buf: &mut Buffer) {
        let layout = self.take_layout().or_else(|| measure(self, app, size));
        self.set_cursor(layout.and_then(|layout| draw(self, app, layout, buf)));
    }

    fn cursor(&self) -> Option<Position> {
        self.drawn_cursor()
    }

    /// The calls belong to the session: another one resumed has none waiting.
    fn about_session(&self) -> bool {
        true
    }
}

fn hint_line(hints: &[KeyHint], app: &App) -> Line<'static> {
    let mut spans = Vec::new();
    for hint in hints {
        spans.push(Span::styled(hint.keys.to_string(), app.look.theme().key));
        spans.push(Span::styled(
            format!(" {}   ", hint.action),
            app.look.theme().text,
        ));
    }
    Line::from(spans)
}

/// How many rows the reason for a refusal may take before it scrolls.
const REASON_ROWS: usize = 4;

/// What is drawn at the end of the reason being typed; the terminal's cursor stands on it.
const REASON_CURSOR: &str = "▏";

/// The reason for a refusal as it is typed, wrapped to `width`: its last
/// [`REASON_ROWS`] rows, so what is typed (and the cursor after it) always shows.
fn reason_rows(reason: &str, width: u16, theme: &Theme) -> Vec<Line<'static>> {
    field_rows(
        "Why not? Sent to the model (Enter sends · Esc back): ",
        reason,
        width,
        theme,
    )
}

/// The rule `A` saves, as it is confirmed or edited, wrapped as [`reason_rows`] is.
fn always_rows(rule: &str, width: u16, theme: &Theme) -> Vec<Line<'static>> {
    field_rows(
        "Always allow, saved to the allow list of [permissions] in your config.toml (edit it; Enter approves and saves · Esc back): ",
        rule,
        width,
        theme,
    )
}

fn field_rows(label: &'static str, text: &str, width: u16, theme: &Theme) -> Vec<Line<'static>> {
    let field = Line::from(vec![
        Span::styled(label, theme.warning),
        // Typed by the person, but drawn inert all the same.
        Span::styled(miniagent_text::clean(text).into_owned(), theme.text),
        Span::styled(REASON_CURSOR, theme.text),
    ]);
    let mut rows = wrap::wrap_line(&field, width);
    let hidden = rows.len().saturating_sub(REASON_ROWS);
    rows.drain(..hidden);
    rows
}

fn approval_layout(
    app: &App,
    dialog: &ApprovalDialog,
    pending: &PendingApproval,
    size: Rect,
) -> ApprovalLayout {
    let width = size.width.saturating_sub(4).min(110);
    // As tall as the body wrapped to the dialog's width (one long line is many rows).
    let wrapped = approval_body(pending, app.look.theme(), width.saturating_sub(2));
    let body_rows = u16::try_from(wrapped.len()).unwrap_or(u16::MAX);
    let field_width = width.saturating_sub(2);
    let reason = match (dialog.reason(), dialog.always()) {
        (Some(reason), _) => reason_rows(reason, field_width, app.look.theme()),
        (None, Some(rule)) => always_rows(rule, field_width, app.look.theme()),
        (None, None) => Vec::new(),
    };
    // The footer: the scroll position, what `a` covers, and the keys (or the reason).
    let footer_rows = 2 + u16::try_from(reason.len().max(1)).unwrap_or(1);
    let height = body_rows
        .saturating_add(2 + footer_rows)
        .min(size.height.saturating_sub(2))
        .max(6.min(size.height));
    let area = centered(size, width, height);
    let inner = Block::default().borders(Borders::ALL).inner(area);
    let body_area = Rect {
        height: inner.height.saturating_sub(footer_rows),
        ..inner
    };
    let rows = wrapped.len();
    let height = usize::from(body_area.height);
    let max_scroll = rows.saturating_sub(height);
    let scroll = usize::from(dialog.scroll()).min(max_scroll);
    ApprovalLayout {
        area,
        inner,
        body_area,
        wrapped,
        scroll,
        max_scroll,
        reason,
    }
}

/// Lays out the front approval for this frame and notes how far it scrolls and how much
/// of it has been on screen (before anything reads whether it may be approved): every
/// row, from the top down without a gap (jumping to the end skips what lies between, so
/// it does not count). The frame draws it last with [`draw`].
fn measure(dialog: &ApprovalDialog, app: &App, size: Rect) -> Option<ApprovalLayout> {
    let pending = dialog.front()?;
    let layout = approval_layout(app, dialog, pending, size);
    let height = usize::from(layout.body_area.height);
    pending
        .max_scroll
        .set(u16::try_from(layout.max_scroll).unwrap_or(u16::MAX));
    if layout.inner.height >= 2 && height > 0 && layout.scroll <= pending.seen_rows.get() {
        let seen = pending.seen_rows.get().max(layout.scroll + height);
        pending.seen_rows.set(seen);
        if seen >= layout.wrapped.len() {
            pending.seen_all.set(true);
        }
    }
    Some(layout)
}

/// The front approval, laid out by [`measure`]: what is asked, the keys, and whether
/// they answer yet. Returns where the terminal's cursor goes while a reason for a refusal
/// is typed.
fn draw(dialog: &ApprovalDialog, app: &App, layout: ApprovalLayout, buf: &mut Buffer) -> Option<Position> {
    let pending = dialog.front()?;
    let theme = app.look.theme();
    let ApprovalLayout {
        area,
        inner,
        body_area,
        wrapped,
        scroll,
        max_scroll,
        reason,
    } = layout;
    // More requests waiting behind this one; else its place among the reply's calls.
    let queue = match (dialog.waiting(), pending.in_step) {
        (waiting, _) if waiting > 1 => format!(" (1 of {waiting} waiting)"),
        (_, Some((call, of))) => format!(" (call {call} of {of})"),
        (_, None) => String::new(),
    };
    clear_for_popup(area, buf);
    let mut block = Block::default()
        .borders(Borders::ALL)
        .border_type(BorderType::Double)
        .border_style(theme.warning)
        .title(Span::styled(
            format!(" Allow {}?{queue} ", pending.name),
            theme.warning.patch(theme.strong),
        ));
    // A replayed approval is shown, never answered: it neither arms nor is armed.
    let armed = pending.arming.armed(app.now);
    if app.replay.is_none() {
        let state = if armed {
            Span::styled(" ● armed ", theme.ok)
        } else {
            Span::styled(" ◌ arming… ", theme.dim)
        };
        block = block.title_top(Line::from(state).right_aligned());
    }
    block.render(area, buf);
    if inner.height < 2 {
        return None;
    }
    let below = max_scroll - scroll;
    for (row, line) in wrapped
        .iter()
        .skip(scroll)
        .take(usize::from(body_area.height))
        .enumerate()
    {
        let y = body_area.y + u16::try_from(row).unwrap_or(0);
        buf.set_line(body_area.x, y, line, body_area.width);
    }
    // The reason's rows end at the bottom; the rows above them stay the same.
    // The keys (or the reason being typed) end at the bottom, with what `a` covers and
    // the scroll position above them.
    let keys_rows = u16::try_from(reason.len().max(1)).unwrap_or(1);
    let footer_y = (inner.y + inner.height).saturating_sub(keys_rows).max(inner.y);
    let cursor = if dialog.reason().is_some() || dialog.always().is_some() {
        let height = keys_rows.min(inner.y + inner.height - footer_y);
        draw_reason(
            &reason,
            Rect {
                y: footer_y,
                height,
                ..inner
            },
            buf,
        )
    } else {
        let footer = keys_line(app, dialog, armed, below, wrapped.len(), inner.width);
        buf.set_line(inner.x, footer_y, &footer, inner.width);
        None
    };
    let above = |rows: u16| footer_y.checked_sub(rows).filter(|y| *y >= inner.y);
    if let Some(y) = above(1) {
        buf.set_line(
            inner.x,
            y,
            &session_scope(pending.session_rule.as_ref(), theme),
            inner.width,
        );
    }
    if let Some(y) = above(2)
        && wrapped.len() > usize::from(body_area.height)
    {
        let more = format!(
            "↑/↓ scroll · {}/{} lines",
            scroll + usize::from(body_area.height).min(wrapped.len()),
            wrapped.len()
        );
        buf.set_stringn(inner.x, y, &more, usize::from(inner.width), theme.dim);
    }
    cursor
}

/// The dialog's last row: the keys that answer now, or why none does yet.
fn keys_line(
    app: &App,
    dialog: &ApprovalDialog,
    armed: bool,
    below: usize,
    rows: usize,
    width: u16,
) -> Line<'static> {
    let theme = app.look.theme();
    if app.replay.is_some() {
        // A recorded request is shown, never answered: no keys to offer.
        return Line::from(Span::styled(
            "recorded: how it was answered follows in the replay",
            theme.dim,
        ));
    }
    if !armed {
        return Line::from(Span::styled(
            "◌ arming: keys answer in a moment; typing goes to the input",
            theme.dim,
        ));
    }
    let Some(pending) = dialog.front() else {
        return Line::default();
    };
    if pending.seen_all.get() {
        return hint_line(&bindings::bar_hints(APPROVAL, dialog), app);
    }
    let left = rows_text(pending.seen_rows.get(), rows, below);
    let read_on = if below == 0 {
        // At the end (End skipped rows): reading on means going back up.
        format!("{left} not seen: Home, then ↓/PgDn, before y")
    } else {
        format!("↓ {left} left to read (↓, PgDn) before y")
    };
    // The whole hint where it fits, else with fewer words: never cut mid-word.
    let line = |gap: &str, stop: &str| {
        Line::from(vec![
            Span::styled(format!("{read_on}{gap}"), theme.warning),
            Span::styled("n", theme.key),
            Span::styled(format!(" deny{gap}"), theme.text),
            Span::styled("Esc", theme.key),
            Span::styled(stop.to_string(), theme.text),
        ])
    };
    [
        line("   ", " stop the turn"),
        line("  ", " stop the turn"),
        line("  ", " stop"),
    ]
    .into_iter()
    .find(|line| line.width() <= usize::from(width))
    .unwrap_or_else(|| line(" ", " stop"))
}

/// The reason for a refusal being typed, in `area`: its last rows, wrapped. Returns
/// where the terminal's cursor goes: on the mark after the last character typed.
fn draw_reason(rows: &[Line<'static>], area: Rect, buf: &mut Buffer) -> Option<Position> {
    for (y, row) in (area.y..area.y + area.height).zip(rows) {
        buf.set_line(area.x, y, row, area.width);
    }
    let last = rows.len().checked_sub(1)?;
    let y = area.y + u16::try_from(last).ok()?;
    let width = rows.get(last).map_or(0, Line::width);
    let x = area.x + u16::try_from(width.saturating_sub(1)).ok()?;
    (y < area.y + area.height && x < area.x + area.width).then_some(Position::new(x, y))
}

/// What an approval dialog shows, wrapped to `width`: why it asks, then the request as
/// its kind reads best (an edit as a coloured diff, a command as its line and where it
/// runs).
fn approval_body(pending: &PendingApproval, theme: &Theme, width: u16) -> Vec<Line<'static>> {
    let body = approval_lines(pending, theme);
    let mut rows = Vec::with_capacity(body.len());
    for (line, numbered) in body {
        if numbered {
            rows.extend(numbered_rows(&line, width));
        } else {
            rows.extend(wrap::wrap_line(&line, width));
        }
    }
    rows
}

/// A numbered diff line (its gutter of line numbers, then its text) wrapped to `width`:
/// the text is broken between characters beside the gutter and continues under the
/// text, so a long line without spaces never leaves its number alone on a row.
fn numbered_rows(line: &Line<'static>, width: u16) -> Vec<Line<'static>> {
    let [gutter, text] = &line.spans[..] else {
        return wrap::wrap_line(line, width);
    };
    let indent = u16::try_from(gutter.width()).unwrap_or(u16::MAX);
    // Too narrow for a gutter beside the text: the line as any other.
    if indent.saturating_mul(2) >= width {
        return wrap::wrap_line(line, width);
    }
    let pieces = wrap::hard_wrap_line(&Line::from(text.clone()), width - indent);
    pieces
        .into_iter()
        .enumerate()
        .map(|(index, piece)| {
            let lead = if index == 0 {
                gutter.clone()
            } else {
                Span::raw(" ".repeat(usize::from(indent)))
            };
            let mut spans = vec![lead];
            spans.extend(piece.spans);
            Line::from(spans)
        })
        .collect()
}

/// What an approval dialog shows, each line with whether it is a numbered diff line.
fn approval_lines(pending: &PendingApproval, theme: &Theme) -> Vec<(Line<'static>, bool)> {
    let unnumbered = |lines: Vec<Line<'static>>| lines.into_iter().map(|line| (line, false));
    // What is approved is shown exactly: a character a terminal would act on, or one
    // that reorders text (bidi), is shown as what it is, not dropped or obeyed.
    let plain = |text: &str| -> Vec<Line<'static>> {
        shown_exactly(text)
            .lines()
            .map(|line| Line::from(Span::styled(line.to_string(), theme.text)))
            .collect()
    };
    let Some(request) = &pending.request else {
        // An older log: its plain text is all there is.
        return unnumbered(plain(&pending.preview)).collect();
    };
    let mut body = Vec::new();
    for note in &pending.notes {
        body.extend(plain(note));
        body.push(Line::default());
    }
    let mut body: Vec<(Line<'static>, bool)> = unnumbered(body).collect();
    match request {
        ApprovalRequest::Edit { summary, diff, .. } => {
            // Numbered lines are the diff's own; the rest (headers, what is not shown)
            // is one span, as any text.
            body.extend(
                diff_lines(&shown_exactly(&format!("{summary}\n{diff}")), theme)
                    .into_iter()
                    .map(|line| {
                        let numbered = line.spans.len() == 2;
                        (line, numbered)
                    }),
            );
        }
        ApprovalRequest::Command {
            command,
            cwd,
            timeout_s,
            compound,
            ..
        } => {
            body.extend(unnumbered(command_lines(
                &shown_exactly(&format!("$ {command}")),
                theme,
            )));
            let how = match timeout_s {
                Some(seconds) => format!("timeout {seconds} s"),
                None => "in the background".to_string(),
            };
            body.push((
                Line::from(Span::styled(format!("(in {cwd}, {how})"), theme.text)),
                false,
            ));
            if *compound {
                body.push((
                    Line::from(Span::styled(
                        "several commands, redirections or substitutions: check all of it",
                        theme.dim,
                    )),
                    false,
                ));
            }
        }
        ApprovalRequest::McpCall {
            server,
            tool,
            arguments,
        } => {
            // Both names come from the server's side: shown as inert text.
            body.push((
                Line::from(Span::styled(
                    miniagent_text::clean(&format!("tool `{tool}` of MCP server `{server}`")).into_owned(),
                    theme.dim,
                )),
                false,
            ));
            let json = serde_json::to_string_pretty(arguments).unwrap_or_else(|_| arguments.to_string());
            body.extend(unnumbered(plain(&json)));
        }
        ApprovalRequest::Other { preview, .. } => body.extend(unnumbered(plain(preview))),
    }
    body
}

/// How many rows are left to read: the unseen ones, at least those below the view.
fn rows_text(seen: usize, rows: usize, below: usize) -> String {
    match rows.saturating_sub(seen).max(below) {
        1 => "1 line".to_string(),
        n => format!("{n} lines"),
    }
}

/// What is approved, exactly: see [`miniagent_text::exact`].
fn shown_exactly(text: &str) -> String {
    miniagent_text::exact(text).into_owned()
}

/// A command's lines, a run of blank lines folded into one line that counts them: padding
/// cannot push the rest of a command out of the dialog.
fn command_lines(command: &str, theme: &Theme) -> Vec<Line<'static>> {
    let mut lines = Vec::new();
    let mut blank = 0usize;
    let fold = |blank: usize, lines: &mut Vec<Line<'static>>| match blank {
        0 => {}
        1 => lines.push(Line::default()),
        n => lines.push(Line::from(Span::styled(
            format!("⋮ {n} blank lines"),
            theme.warning,
        ))),
    };
    for line in command.split('\n') {
        if line.trim().is_empty() {
            blank += 1;
            continue;
        }
        fold(blank, &mut lines);
        blank = 0;
        lines.push(Line::from(Span::styled(line.to_string(), theme.text)));
    }
    fold(blank, &mut lines);
    lines
}

/// What approving for the session will cover, said before the key is pressed.
fn session_scope(rule: Option<&ApprovalRule>, theme: &Theme) -> Line<'static> {
    let covers = match rule {
        Some(ApprovalRule::Tool { name }) => {
            format!(" approves every `{name}` call for the rest of the session")
        }
        Some(ApprovalRule::Command { program }) => {
            format!(" approves `{program} …` commands for the session, unless they run other code")
        }
        Some(ApprovalRule::CommandLine { .. }) => {
            " approves exactly this command line for the session, and nothing else".to_string()
        }
        Some(ApprovalRule::Domain { host }) => {
            format!(" approves fetching pages from `{host}` for the session (not other hosts)")
        }
        None => {
            return Line::from(Span::styled(
                "a (for the session) is not offered: this call can only be approved once",
                theme.dim,
            ));
        }
    };
    Line::from(vec![
        Span::styled("a", theme.key),
        Span::styled(covers, theme.dim),
    ])
}
