//! GFM tables laid out to fit the width: column widths from content, narrow columns
//! kept, wide ones shrunk in proportion, and a shrunk column's cells wrapped inside it
//! (a row as tall as its tallest cell, rows ruled apart once any wraps). When a column
//! cannot get even [`FEW_COLUMNS`] characters, the table is shown as a list instead: one
//! `header: value` line per cell, rows ruled apart. Cutting cells with `…` made wide
//! tables unreadable (CJK cells especially).

use super::*;

/// The fewest columns a shrunk table column may get before the table becomes a list.
const FEW_COLUMNS: usize = 6;

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
                natural[column] = natural[column].max(spans_width(cell));
            }
        }
        let room = self.room();
        let budget = room.saturating_sub(COLUMN_GAP * (columns - 1));
        let needed: usize = natural.iter().map(|width| (*width).min(FEW_COLUMNS)).sum();
        if needed > budget {
            self.emit_table_as_list(&table, room);
            return;
        }
        let widths = fit_columns(&natural, budget);
        let wraps = table.rows.iter().any(|row| {
            row.iter()
                .zip(&widths)
                .any(|(cell, width)| spans_width(cell) > *width)
        });
        let border = self.theme.dim;
        let rule = |joint: &str| -> Line<'static> {
            let rule: Vec<String> = widths.iter().map(|width| "─".repeat(*width)).collect();
            Line::from(Span::styled(rule.join(joint), border))
        };
        for (index, row) in table.rows.iter().enumerate() {
            let header = index < table.header_rows;
            // Body rows are ruled apart only when a cell wraps: then they could not be
            // told apart otherwise.
            if wraps && index > table.header_rows {
                self.emit_fitted(rule("─┼─").spans, room);
            }
            let cells: Vec<Vec<Line<'static>>> = widths
                .iter()
                .enumerate()
                .map(|(column, width)| {
                    let cell = row.get(column).map(Vec::as_slice).unwrap_or_default();
                    let mut lines = wrap_line(
                        &Line::from(cell.to_vec()),
                        u16::try_from(*width).unwrap_or(u16::MAX),
                    );
                    if header {
                        for line in &mut lines {
                            for span in &mut line.spans {
                                span.style = span.style.patch(self.theme.strong);
                            }
                        }
                    }
                    lines
                })
                .collect();
            let height = cells.iter().map(Vec::len).max().unwrap_or(1).max(1);
            for line in 0..height {
                let spans = self.table_line(&table, &widths, &cells, line, border);
                self.emit_fitted(spans, room);
            }
            if index + 1 == table.header_rows {
                self.emit_fitted(rule("─┼─").spans, room);
            }
        }
    }

    /// Row `line` of a table row whose cells are wrapped into `cells`: each cell's line
    /// (or nothing) padded to its column as the column is aligned.
    fn table_line(
        &self,
        table: &Table,
        widths: &[usize],
        cells: &[Vec<Line<'static>>],
        line: usize,
        border: Style,
    ) -> Vec<Span<'static>> {
        let mut spans: Vec<Span<'static>> = Vec::new();
        for (column, width) in widths.iter().enumerate() {
            if column > 0 {
                spans.push(Span::styled(" │ ", border));
            }
            let content: Vec<Span<'static>> = cells
                .get(column)
                .and_then(|lines| lines.get(line))
                .map(|line| line.spans.clone())
                .unwrap_or_default();
            let used = spans_width(&content);
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
        // A wrapped row's later lines may end in empty cells: no trailing blanks.
        while let Some(last) = spans.last_mut() {
            let kept = last.content.trim_end().len();
            if kept > 0 {
                last.content.to_mut().truncate(kept);
                break;
            }
            spans.pop();
        }
        spans
    }

    /// A table too wide for its columns to get a few characters each, as a list: each
    /// body row's cells as `header: value` lines (wrapped, continuation lines indented),
    /// rows ruled apart. A table with nothing but its header lists the header's cells.
    fn emit_table_as_list(&mut self, table: &Table, room: usize) {
        let headers: &[Vec<Span<'static>>] = match table.header_rows {
            0 => &[],
            _ => table.rows.first().map(Vec::as_slice).unwrap_or_default(),
        };
        let body = table.rows.get(table.header_rows..).unwrap_or_default();
        let rule = Line::from(Span::styled(
            "─".repeat(room.min(FEW_COLUMNS * 2)),
            self.theme.dim,
        ));
        if body.is_empty() {
            for header in headers {
                self.emit_wrapped(header.clone(), room);
            }
            return;
        }
        for (index, row) in body.iter().enumerate() {
            if index > 0 {
                self.emit(rule.clone());
            }
            for (column, cell) in row.iter().enumerate() {
                let mut spans: Vec<Span<'static>> = match headers.get(column) {
                    Some(header) if spans_width(header) > 0 => header
                        .iter()
                        .map(|span| Span::styled(span.content.clone(), span.style.patch(self.theme.strong)))
                        .collect(),
                    _ => vec![Span::styled(format!("column {}", column + 1), self.theme.strong)],
                };
                spans.push(Span::styled(": ", self.theme.dim));
                spans.extend(cell.iter().cloned());
                self.emit_wrapped(spans, room);
            }
        }
    }

    /// Emits `spans` in `room`, or word-wrapped with the lines after the first indented
    /// two columns (all wrapped two columns short, so the indented ones fit too).
    fn emit_wrapped(&mut self, spans: Vec<Span<'static>>, room: usize) {
        if spans_width(&spans) <= room {
            self.emit(Line::from(spans));
            return;
        }
        let width = u16::try_from(room.saturating_sub(2).max(1)).unwrap_or(u16::MAX);
        for (index, line) in wrap_line(&Line::from(spans), width).into_iter().enumerate() {
            if index == 0 {
                self.emit(line);
            } else {
                let mut spans = vec![Span::raw("  ")];
                spans.extend(line.spans);
                self.emit(Line::from(spans));
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
/// squeeze the short ones. No column goes below [`FEW_COLUMNS`] (or its natural width)
/// while the budget allows.
pub(super) fn fit_columns(natural: &[usize], budget: usize) -> Vec<usize> {
    let total: usize = natural.iter().sum();
    if total <= budget || natural.is_empty() {
        return natural.to_vec();
    }
    let share = (budget / natural.len()).max(FEW_COLUMNS);
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
