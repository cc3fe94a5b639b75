//! Geometry and clearing for anything drawn over the panes, and the short token figures
//! the status bar, `/stats` and the inspector share: a leaf the overlays can use without
//! the workbench's renderer.

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::widgets::{Clear, Widget};

use super::text::wrap;

/// "12.3k" for token counts.
pub fn tokens(count: u64) -> String {
    if count >= 1_000_000 {
        format!("{:.1}M", count as f64 / 1e6)
    } else if count >= 10_000 {
        format!("{}k", count / 1000)
    } else if count >= 1000 {
        format!("{:.1}k", count as f64 / 1000.0)
    } else {
        count.to_string()
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
