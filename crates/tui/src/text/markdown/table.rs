//! GFM tables laid out to fit the width: column widths from content, narrow columns
//! kept, wide ones shrunk in proportion, cells cut with `…`.

use super::*;

impl Renderer<'_> {
    pub(super) fn emit_table(&mut self, table: Table) {
        let columns = table
            .rows
            .iter()
            .map(Vec::len)
            .max()
            .unwrap_or(0)
            .max(table.alignments.len());
        if columns == 0 {
            return;
        }
        let mut natural = vec![0; columns];
        for row in &table.rows {
            for (column, cell) in row.iter().enumerate() {
                let width: usize = cell.iter().map(|span| display_width(&span.content)).sum();
                natural[column] = natural[column].max(width);
            }
        }
        let room = self.room();
        let widths = fit_columns(&natural, room.saturating_sub(COLUMN_GAP * (columns - 1)));
        let border = self.theme.dim;
        for (index, row) in table.rows.iter().enumerate() {
            let header = index < table.header_rows;
            let mut spans: Vec<Span<'static>> = Vec::new();
            for (column, width) in widths.iter().enumerate() {
                if column > 0 {
                    spans.push(Span::styled(" │ ", border));
                }
                let cell = row.get(column).map(Vec::as_slice).unwrap_or_default();
                let mut content = truncate_spans(cell, *width);
                if header {
                    content = content
                        .into_iter()
                        .map(|span| Span::styled(span.content, span.style.patch(self.theme.strong)))
                        .collect();
                }
                let used: usize = content.iter().map(|span| display_width(&span.content)).sum();
                let pad = width.saturating_sub(used);
                let alignment = table.alignments.get(column).copied().unwrap_or(Alignment::None);
                let (left, right) = match alignment {
                    Alignment::Right => (pad, 0),
                    Alignment::Center => (pad / 2, pad - pad / 2),
                    Alignment::None | Alignment::Left => (0, pad),
                };
                // The last column needs no padding on the right.
                let right = if column + 1 == widths.len() { 0 } else { right };
                if left > 0 {
                    spans.push(Span::raw(" ".repeat(left)));
                }
                spans.extend(content);
                if right > 0 {
                    spans.push(Span::raw(" ".repeat(right)));
                }
            }
            self.emit_fitted(spans, room);
            if index + 1 == table.header_rows {
                let rule: Vec<String> = widths.iter().map(|width| "─".repeat(*width)).collect();
                let spans = vec![Span::styled(rule.join("─┼─"), border)];
                self.emit_fitted(spans, room);
            }
        }
    }

    /// Emits a table line, cut to the room when even the narrowest columns do not fit.
    pub(super) fn emit_fitted(&mut self, spans: Vec<Span<'static>>, room: usize) {
        let width = spans_width(&spans);
        let spans = if width > room {
            truncate_spans(&spans, room)
        } else {
            spans
        };
        self.emit(Line::from(spans));
    }
}

/// Column widths that fit `budget` columns: the natural widths when they fit. Else
/// columns no wider than an even share of the budget keep their width and the wider
/// ones shrink in proportion to how far they exceed it, so one long column does not
/// squeeze the short ones. No column goes below `MIN_COLUMN` while the budget allows.
pub(super) fn fit_columns(natural: &[usize], budget: usize) -> Vec<usize> {
    let total: usize = natural.iter().sum();
    if total <= budget || natural.is_empty() {
        return natural.to_vec();
    }
    let share = (budget / natural.len()).max(MIN_COLUMN);
    let floors: Vec<usize> = natural.iter().map(|width| (*width).min(share)).collect();
    let floor_total: usize = floors.iter().sum();
    if floor_total >= budget {
        // Not even the floors fit: the lines are cut at the edge later.
        return floors;
    }
    let spare = budget - floor_total;
    let excess: Vec<usize> = natural
        .iter()
        .zip(&floors)
        .map(|(width, floor)| width - floor)
        .collect();
    let excess_total: usize = excess.iter().sum();
    let mut widths: Vec<usize> = floors
        .iter()
        .zip(&excess)
        .map(|(floor, extra)| floor + extra * spare / excess_total.max(1))
        .collect();
    // Rounding down leaves a few columns over; give them to the columns cut the most.
    let mut left = budget.saturating_sub(widths.iter().sum());
    while left > 0 {
        let Some(column) = (0..widths.len())
            .filter(|column| widths[*column] < natural[*column])
            .max_by_key(|column| natural[*column] - widths[*column])
        else {
            break;
        };
        widths[column] += 1;
        left -= 1;
    }
    widths
}
