//! Drawing the workbench: a function of the app state into the frame.

use std::time::Instant;

use ratatui::Frame;
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::Style;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, BorderType, Borders, Widget};

use super::app::{Activity, App, Pane};
use super::keys::KeyHint;
use super::layout::{self, Areas};
use super::overlay_view;
pub use super::popup::{centered, clear_for_popup, popup, scrolled_popup, tokens};
use super::text::wrap;
use super::timeline::CallStatus;
use miniagent_protocol::PlaybackStatus;

const SPINNER: [&str; 10] = ["⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"];

/// Draws one frame. The app is only read; what drawing keeps for the next key (the
/// layout, for the mouse; each pane's scroll and render cache) is in cells.
pub fn draw(frame: &mut Frame, app: &App) {
    let size = frame.area();
    let areas = layout::compute(size, app);
    app.drawn_at(areas.clone());
    let buf = frame.buffer_mut();
    draw_title(app, areas.title, buf);
    let focus = app.layout.focus();
    for &(pane, area) in &areas.panes {
        if matches!(app.layout.side_popup(), Some(side) if side == pane) && areas.narrow {
            clear_for_popup(area, buf);
        }
        draw_pane(app, pane, area, buf, pane == focus, areas.narrow);
    }
    if let Some(area) = areas.plan {
        if areas.narrow {
            clear_for_popup(area, buf);
        }
        app.plan.render(area, buf, app.look.theme(), areas.narrow);
    }
    // Whether the front approval may be approved (all of it seen) shows in the status
    // bar as well as in its dialog, which is drawn with the layers, last.
    app.layers.prepare(app, size);
    draw_status(app, &areas, areas.status, buf);
    // Under an overlay or a question the input has not the keys: no popup of its own
    // shows through (a `/` typed as the trust question came drew it over the question).
    if app.layout.focus() == Pane::Input
        && app.layers.is_empty()
        && let Some(input_area) = areas.get(Pane::Input)
    {
        overlay_view::draw_completions(app, input_area, size, buf);
        overlay_view::draw_mentions(app, input_area, size, buf);
    }
    let reason_cursor = app.layers.render(app, size, buf);
    app.look.color_depth().apply(frame.buffer_mut());
    split_flags(frame.buffer_mut());
    // The terminal's cursor stands in the input while it has the keys, or where a
    // refusal's reason is typed; ratatui hides it for a frame that places none.
    if let Some(position) = reason_cursor.or_else(|| input_cursor(app, &areas)) {
        frame.set_cursor_position(position);
    }
}

/// Each flag (a pair of regional indicators, one cluster two columns wide) goes into two
/// cells, one indicator each. tmux keeps a flag as two one-column cells, not as one wide
/// character: a frame that drew a new flag one column to the left of an old one (the
/// conversation scrolled) overwrote only the old one's first half, and the cell after
/// the new flag, blank in both frames, was never written again, so the old second half
/// stayed on screen. As two cells, each half is compared and written like any other
/// character; a terminal that joins the two into one flag draws the same two columns.
pub fn split_flags(buf: &mut Buffer) {
    let regional = |c: char| ('\u{1f1e6}'..='\u{1f1ff}').contains(&c);
    let width = usize::from(buf.area.width);
    if width < 2 {
        return;
    }
    for row in buf.content.chunks_mut(width) {
        for x in 0..row.len() - 1 {
            let mut chars = row[x].symbol().chars();
            let (Some(first), Some(second), None) = (chars.next(), chars.next(), chars.next()) else {
                continue;
            };
            if regional(first) && regional(second) {
                let style = row[x].style();
                row[x].set_char(first);
                row[x + 1].set_char(second).set_style(style);
            }
        }
    }
}

/// Where the terminal's cursor goes: in the input, when it is focused and nothing covers it.
fn input_cursor(app: &App, areas: &Areas) -> Option<ratatui::layout::Position> {
    let typing = app.layout.focus() == Pane::Input
        && app.layers.is_empty()
        && !(app.replay.is_some() && app.input.is_empty());
    if !typing {
        return None;
    }
    let area = super::popup::inner(areas.get(Pane::Input)?);
    app.input.cursor_position(area)
}

/// The border and title every pane gets; the focused one stands out.
pub fn pane_block<'a>(title: String, focused: bool, app: &App) -> Block<'a> {
    let theme = app.look.theme();
    let (border, kind) = if focused {
        (theme.border_focused, BorderType::Thick)
    } else {
        (theme.border, BorderType::Rounded)
    };
    Block::default()
        .borders(Borders::ALL)
        .border_type(kind)
        .border_style(border)
        .title(Span::styled(
            format!(" {title} "),
            if focused { theme.title } else { theme.dim },
        ))
}

fn draw_pane(app: &App, pane: Pane, area: Rect, buf: &mut Buffer, focused: bool, narrow: bool) {
    if area.width < 3 || area.height < 3 {
        return;
    }
    let title = match pane {
        Pane::Conversation if !app.conversation.is_following() => "Conversation (scrolled)".to_string(),
        Pane::Input if app.replay.is_some() => "Replay · / for commands".to_string(),
        Pane::Input if !app.turn.queued().is_empty() => format!("Input · {} queued", app.turn.queued().len()),
        Pane::Thinking => {
            if narrow {
                // Over the conversation: Esc (or q) puts it away; F3 only brings it back.
                "Thinking · Esc closes".to_string()
            } else {
                "Thinking · F3".to_string()
            }
        }
        Pane::Timeline => format!("Tools · {}", app.timeline.calls().len()),
        other => other.title().to_string(),
    };
    let block = pane_block(title, focused, app);
    let inner = block.inner(area);
    block.render(area, buf);
    let now = app.now;
    match pane {
        Pane::Conversation => {
            let timeline = &app.timeline;
            // Running calls' durations tick: their lines are drawn afresh each frame.
            for call in timeline.calls().iter().rev().take_while(|c| {
                matches!(
                    c.status,
                    CallStatus::Running | CallStatus::Queued | CallStatus::AwaitingApproval
                )
            }) {
                app.conversation.invalidate_tool(&call.id);
            }
            let status_of = |id: &str| timeline.tool_line(id, now);
            app.conversation.render(inner, buf, app.look.theme(), &status_of);
        }
        Pane::Input => match &app.replay {
            // A replay takes no prompts: its state and keys stand where one is typed,
            // until a command is typed.
            Some(status) if app.input.is_empty() => draw_replay_status(status, app, inner, buf),
            Some(_) | None => app.input.render(inner, buf),
        },
        Pane::Thinking => app.thinking.render(inner, buf, app.look.theme(), focused),
        Pane::Timeline => app.timeline.render(inner, buf, app.look.theme(), now, focused),
        Pane::Tree => app.tree.render(inner, buf, app.look.theme(), focused),
    }
}

/// `▶ replay 2× · event 45/300 · 00:12/01:40 · space pause · → step …`, as many of the
/// keys as fit.
fn draw_replay_status(status: &PlaybackStatus, app: &App, area: Rect, buf: &mut Buffer) {
    if area.is_empty() {
        return;
    }
    let theme = app.look.theme();
    let width = usize::from(area.width);
    let head = wrap::truncate(&super::replay::status_head(status), width);
    let mut used = wrap::display_width(&head);
    let mut spans = vec![Span::styled(head, theme.strong)];
    for hint in super::replay::status_hints(status) {
        let piece = 3 + wrap::display_width(hint.keys) + 1 + wrap::display_width(hint.action);
        if used + piece > width {
            break;
        }
        used += piece;
        spans.push(Span::styled(" · ", theme.dim));
        spans.push(Span::styled(hint.keys, theme.key));
        spans.push(Span::styled(format!(" {}", hint.action), theme.text));
    }
    buf.set_line(area.x, area.y, &Line::from(spans), area.width);
}

fn spinner(now: Instant, since: Instant) -> &'static str {
    let frame = (now.saturating_duration_since(since).as_millis() / 100) as usize;
    SPINNER[frame % SPINNER.len()]
}

fn activity_since(activity: &Activity) -> Option<Instant> {
    match activity {
        Activity::Waiting { since }
        | Activity::Thinking { since }
        | Activity::Writing { since }
        | Activity::Running { since, .. } => Some(*since),
        Activity::Idle
        | Activity::AwaitingApproval
        | Activity::Retrying { .. }
        | Activity::Compacting
        | Activity::Interrupting => None,
    }
}

fn draw_title(app: &App, area: Rect, buf: &mut Buffer) {
    let theme = app.look.theme();
    buf.set_style(area, theme.title_bar);
    let step = match app.turn.step() {
        Some(step) if app.turn.running() => format!("step {step}/{}", app.session.max_steps()),
        _ => format!("max {} steps", app.session.max_steps()),
    };
    let mark = match activity_since(app.turn.activity()) {
        Some(since) => spinner(app.now, since),
        None if *app.turn.activity() == Activity::Idle => "●",
        None => "◆",
    };
    let workspace = shorten_home(&app.session.view().workspace, app.places.home.as_deref());
    // How far the plan got stays in sight at any width, the section shown or not.
    let plan = app
        .plan
        .progress()
        .map(|progress| format!("{progress} · "))
        .unwrap_or_default();
    let state = format!("{plan}{mark} {}", app.status_text());
    let left = match app.replay {
        // What the recording ran with; its approval mode is not known.
        Some(_) => format!(
            " miniagent replay · {} · {} · {workspace} · {step} ",
            app.session.view().model,
            app.session.view().provider
        ),
        None => {
            let sandbox = match app.session.view().sandbox.active(app.session.approval_mode()) {
                Some(true) => " · sandbox ✓",
                Some(false) => " · no sandbox",
                None => "",
            };
            // What keeps the person safe first: a narrow terminal cuts the end, the folder.
            format!(
                " miniagent · {}{sandbox} · {step} · {} · {} · {workspace} ",
                app.session.approval_mode(),
                app.session.view().model,
                app.session.view().provider
            )
        }
    };
    let width = usize::from(area.width);
    let state_width = wrap::display_width(&state) + 1;
    // One column always separates the two halves.
    let left = wrap::truncate(&left, width.saturating_sub(state_width + 1));
    let pad = width.saturating_sub(wrap::display_width(&left) + state_width);
    let mut spans = mode_marked(app, left);
    spans.extend([
        Span::styled(" ".repeat(pad), theme.title_bar),
        Span::styled(state, theme.title_bar.patch(theme.strong)),
        Span::styled(" ", theme.title_bar),
    ]);
    buf.set_line(area.x, area.y, &Line::from(spans), area.width);
}

/// The title bar's left half, with the approval mode (what Shift-Tab changes, right
/// after the name) set apart: bold, and in the danger colour in full-auto.
fn mode_marked(app: &App, left: String) -> Vec<Span<'static>> {
    let theme = app.look.theme();
    const NAME: &str = " miniagent · ";
    let mode = app.session.approval_mode().to_string();
    if app.replay.is_some() || !left.starts_with(NAME) || !left[NAME.len()..].starts_with(&mode) {
        return vec![Span::styled(left, theme.title_bar)];
    }
    let mut style = theme.title_bar.patch(theme.strong);
    if app.session.approval_mode() == miniagent_protocol::ApprovalMode::FullAuto {
        style = style.patch(theme.gauge_danger);
    }
    let rest = left[NAME.len() + mode.len()..].to_string();
    vec![
        Span::styled(NAME, theme.title_bar),
        Span::styled(mode, style),
        Span::styled(rest, theme.title_bar),
    ]
}

fn shorten_home(path: &str, home: Option<&str>) -> String {
    match home {
        Some(home) if !home.is_empty() && path.starts_with(home) => format!("~{}", &path[home.len()..]),
        _ => path.to_string(),
    }
}

fn draw_status(app: &App, areas: &Areas, area: Rect, buf: &mut Buffer) {
    let theme = app.look.theme();
    buf.set_style(area, theme.status_bar);
    let figures = app.figures.tokens();
    // What the prompt may fill: the budget, or the model's window when that is smaller.
    let budget = match figures.context_window {
        0 => figures.token_limit,
        window => figures.token_limit.min(window),
    };
    let ratio = if budget > 0 {
        figures.context_tokens as f64 / budget as f64
    } else {
        0.0
    };
    let gauge_style = if ratio >= 0.9 {
        theme.gauge_danger
    } else if ratio >= 0.7 {
        theme.gauge_warn
    } else {
        theme.gauge_ok
    };
    let cells = 10usize;
    let filled = ((ratio.min(1.0) * cells as f64).round() as usize).min(cells);
    let approx = if figures.estimated { "~" } else { "" };
    let mut spans = vec![
        Span::styled(" ctx ", theme.status_bar),
        Span::styled("█".repeat(filled), theme.status_bar.patch(gauge_style)),
        Span::styled("░".repeat(cells - filled), theme.status_bar.patch(theme.dim)),
        Span::styled(
            format!(
                " {approx}{}/{} {:.0}%",
                tokens(figures.context_tokens),
                tokens(budget),
                ratio * 100.0
            ),
            theme.status_bar.patch(gauge_style),
        ),
    ];
    // The last compaction's drop, e.g. `⇣75k→19k`.
    let last_drop = figures
        .last_compaction
        .filter(|_| figures.compactions > 0)
        .map(|last| format!("⇣{}→{}", tokens(last.tokens_before), tokens(last.tokens_after)));
    // What the session has cost, when the model's price is known; it shows at any width.
    let cost = figures.cost.map(miniagent_protocol::usd);
    if areas.narrow {
        if let Some(cost) = &cost {
            spans.push(Span::styled(format!(" {cost}"), theme.status_bar));
        }
        // The long figures do not fit; the compactions still show, short.
        if figures.compactions > 0 {
            spans.push(Span::styled(
                format!(" Σ{}", figures.compactions),
                theme.status_bar.patch(theme.strong),
            ));
        }
        if let Some(drop) = last_drop {
            spans.push(Span::styled(format!(" {drop}"), theme.status_bar));
        }
    } else {
        // The share of the input read from the provider's cache, once there is one.
        let cached = (figures.total_cache_read > 0 && figures.total_input > 0).then(|| {
            let percent = figures.total_cache_read.saturating_mul(100) / figures.total_input;
            format!(" ({percent}% cached)")
        });
        spans.push(Span::styled(
            format!(
                " · window {} · in {}{} out {}{} · {} compaction{}",
                tokens(figures.context_window),
                tokens(figures.total_input),
                cached.unwrap_or_default(),
                tokens(figures.total_output),
                cost.map(|cost| format!(" · {cost}")).unwrap_or_default(),
                figures.compactions,
                if figures.compactions == 1 { "" } else { "s" }
            ),
            theme.status_bar,
        ));
        if let Some(drop) = last_drop {
            spans.push(Span::styled(format!(", last {drop}"), theme.status_bar));
        }
    }
    // The terminal selects text while the workbench leaves it the mouse (`/mouse`).
    if !app.look.mouse_captured() {
        spans.push(Span::styled(
            " · mouse off: select text; /mouse",
            theme.status_bar.patch(theme.warning),
        ));
    }
    let left = Line::from(spans);
    let left_width = left.width();
    let hints = current_hints(app);
    let room = usize::from(area.width).saturating_sub(left_width + 2);
    let mut right: Vec<Span> = Vec::new();
    let mut used = 0;
    for hint in hints {
        let piece = wrap::display_width(hint.keys) + wrap::display_width(hint.action) + 3;
        if used + piece > room {
            break;
        }
        used += piece;
        right.push(Span::styled(
            hint.keys.to_string(),
            theme.status_bar.patch(theme.key),
        ));
        right.push(Span::styled(format!(" {}  ", hint.action), theme.status_bar));
    }
    buf.set_line(area.x, area.y, &left, area.width);
    let right_line = Line::from(right);
    let x = area.x + area.width.saturating_sub(u16::try_from(used).unwrap_or(u16::MAX));
    buf.set_line(x, area.y, &right_line, u16::try_from(used).unwrap_or(u16::MAX));
}

/// The keys that matter now: the top layer's (or that its question arms), else the
/// focused pane's followed by the workbench's.
pub fn current_hints(app: &App) -> Vec<KeyHint> {
    // A replayed approval is shown, not answered: the keys are those of what it covers.
    let replay = app.replay.is_some();
    let top = app
        .layers
        .iter()
        .rev()
        .find(|layer| !(replay && layer.keeps_top()));
    if let Some(top) = top {
        return match top.question() {
            Some(arming) if !replay && !arming.armed(app.now) => {
                vec![KeyHint::new("◌", arming.arming_hint())]
            }
            Some(_) | None => top.key_hints(),
        };
    }
    let mut hints = match app.layout.focus() {
        Pane::Input if app.replay.is_some() => super::replay::REPLAY_BAR_HINTS.to_vec(),
        Pane::Input => app.input.key_hints(),
        Pane::Conversation => app.conversation.bar_hints(),
        Pane::Thinking => app.thinking.key_hints(),
        Pane::Timeline => app.timeline.key_hints(),
        Pane::Tree => app.tree.key_hints(),
    };
    if app.turn.running() && app.replay.is_none() {
        hints.insert(0, KeyHint::new("Esc", "interrupt"));
    }
    hints.extend(super::bindings::bar_hints(super::bindings::WORKBENCH, app));
    hints
}

/// A style for text that must stand out in any theme.
pub fn emphasis(app: &App) -> Style {
    app.look.theme().strong
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn a_flag_is_drawn_as_its_two_halves_in_two_cells() {
        let mut buf = Buffer::empty(Rect::new(0, 0, 8, 1));
        let style = Style::default().fg(ratatui::style::Color::Red);
        // Two flags, a lone indicator (one column) and a wide CJK character.
        buf.set_string(0, 0, "🇯🇵🇺🇸🇫你", style);
        split_flags(&mut buf);
        let cells: Vec<(&str, Style)> = buf
            .content
            .iter()
            .map(|cell| (cell.symbol(), cell.style()))
            .collect();
        let red = Style::default()
            .fg(ratatui::style::Color::Red)
            .bg(ratatui::style::Color::Reset)
            .underline_color(ratatui::style::Color::Reset);
        let blank = ratatui::buffer::Cell::default().style();
        assert_eq!(
            cells,
            vec![
                ("🇯", red),
                ("🇵", red),
                ("🇺", red),
                ("🇸", red),
                ("🇫", red),
                ("你", red),
                (" ", blank),
                (" ", blank),
            ]
        );
    }
}
