//! Geometry, clearing and framed popups for anything drawn over the panes, and the short token figures
//! the status bar, `/stats` and the inspector share: a leaf the overlays can use without
//! the workbench's renderer.

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, BorderType, Borders, Clear, Paragraph, Widget, Wrap};

use super::scroll::Scroll;
use super::text::wrap;
use super::theme::Theme;

/// What a popup is drawn with: the app, or just a theme.
pub trait Themed {
    fn theme(&self) -> &Theme;
}

impl Themed for Theme {
    fn theme(&self) -> &Theme {
        self
    }
}

/// The inner area of a bordered pane.
pub fn inner(area: Rect) -> Rect {
    Rect {
        x: area.x.saturating_add(1),
        y: area.y.saturating_add(1),
        width: area.width.saturating_sub(2),
        height: area.height.saturating_sub(2),
    }
}

/// "12.3k" for token counts.
pub fn tokens(count: u64) -> String {
    miniagent_protocol::short_count(count)
}

/// Where an overlay stands: the screen between the title bar (its first row) and the
/// status bar (its last), which stay in sight, the status bar with the overlay's keys.
/// A rectangle centred in it is where it would be on the whole screen, unless taller.
pub fn between_bars(size: Rect) -> Rect {
    Rect {
        y: size.y.saturating_add(1).min(size.bottom()),
        height: size.height.saturating_sub(2),
        ..size
    }
}

/// A centred rectangle of at most `width` × `height` inside `area`.
pub fn centered(area: Rect, width: u16, height: u16) -> Rect {
    let width = width.min(area.width);
    let height = height.min(area.height);
    Rect {
        x: area.x + (area.width - width) / 2,
        y: area.y + (area.height - height) / 2,
        width,
        height,
    }
}

/// Clears `area` for a popup. A wide (CJK) character whose cell lies just left of the
/// area would otherwise spill its second column over the popup's border; the half of
/// one cut by the right edge would leave a stray column.
pub fn clear_for_popup(area: Rect, buf: &mut Buffer) {
    let bounds = buf.area;
    for y in area.top()..area.bottom() {
        if area.left() > bounds.left()
            && let Some(cell) = buf.cell_mut((area.left() - 1, y))
            && wrap::display_width(cell.symbol()) > 1
        {
            cell.set_symbol(" ");
        }
        if area.right() < bounds.right()
            && let Some(cell) = buf.cell_mut((area.right(), y))
            && cell.symbol().is_empty()
        {
            cell.set_symbol(" ");
        }
    }
    Clear.render(area, buf);
}

/// Draws a framed popup with `lines`, scrolled by `scroll`; returns the inner area.
pub fn popup(
    buf: &mut Buffer,
    area: Rect,
    title: &str,
    lines: Vec<Line<'static>>,
    scroll: u16,
    app: &impl Themed,
    wrap_text: bool,
) -> Rect {
    let theme = app.theme();
    clear_for_popup(area, buf);
    let block = Block::default()
        .borders(Borders::ALL)
        .border_type(BorderType::Thick)
        .border_style(theme.border_focused)
        .title(Span::styled(format!(" {title} "), theme.title));
    let inner = block.inner(area);
    block.render(area, buf);
    let max_scroll = u16::try_from(lines.len())
        .unwrap_or(u16::MAX)
        .saturating_sub(inner.height);
    let mut paragraph = Paragraph::new(lines)
        .style(theme.text)
        .scroll((scroll.min(max_scroll), 0));
    if wrap_text {
        paragraph = paragraph.wrap(Wrap { trim: false });
    }
    paragraph.render(inner, buf);
    inner
}

/// Draws a framed popup with `lines` (wrapped to its width when `wrap_text`) from
/// `scroll`'s position, which learns how tall the text and the view are.
pub fn scrolled_popup(
    buf: &mut Buffer,
    area: Rect,
    title: &str,
    lines: Vec<Line<'static>>,
    scroll: &mut Scroll,
    app: &impl Themed,
    wrap_text: bool,
) -> Rect {
    let inner = inner(area);
    let lines = if wrap_text {
        wrap::wrap_lines(&lines, inner.width)
    } else {
        lines
    };
    let top = scroll.fit(lines.len(), usize::from(inner.height));
    popup(
        buf,
        area,
        title,
        lines,
        u16::try_from(top).unwrap_or(u16::MAX),
        app,
        false,
    )
}
