//! Markdown tables laid out as aligned columns: `a │ b`, a rule under the header row.

use cp_base::theme;
use ratatui::style::{Modifier, Style};
use ratatui::text::Span;
use unicode_width::UnicodeWidthStr;

/// One cell: its styled spans.
pub type Cell = Vec<Span<'static>>;

/// A table being collected from the parser's events.
#[derive(Debug, Default)]
pub struct Table {
    pub rows: Vec<Vec<Cell>>,
    /// How many leading rows are the header.
    pub header_rows: usize,
    pub row: Vec<Cell>,
    pub cell: Cell,
}

impl Table {
    pub fn end_cell(&mut self) {
        self.row.push(std::mem::take(&mut self.cell));
    }

    pub fn end_row(&mut self) {
        self.rows.push(std::mem::take(&mut self.row));
    }

    /// The table's rows, columns padded to the widest cell; the header bold.
    pub fn lines(&self) -> Vec<Vec<Span<'static>>> {
        let columns = self.rows.iter().map(Vec::len).max().unwrap_or(0);
        let widths: Vec<usize> = (0..columns)
            .map(|c| {
                self.rows
                    .iter()
                    .filter_map(|row| row.get(c))
                    .map(|cell| cell_width(cell))
                    .max()
                    .unwrap_or(0)
            })
            .collect();
        let border = Style::default().fg(theme::MUTED);
        let mut out = Vec::new();
        for (r, row) in self.rows.iter().enumerate() {
            let header = r < self.header_rows;
            let mut spans = Vec::new();
            for (c, width) in widths.iter().enumerate() {
                if c > 0 {
                    spans.push(Span::styled(" │ ", border));
                }
                let cell = row.get(c).map_or(&[][..], Vec::as_slice);
                for span in cell {
                    let mut span = span.clone();
                    if header {
                        span.style = span.style.add_modifier(Modifier::BOLD);
                    }
                    spans.push(span);
                }
                let pad = width.saturating_sub(cell_width(cell));
                if pad > 0 && c + 1 < columns {
                    spans.push(Span::raw(" ".repeat(pad)));
                }
            }
            out.push(spans);
            if header && r + 1 == self.header_rows {
                let rule: Vec<String> = widths.iter().map(|w| "─".repeat(*w)).collect();
                out.push(vec![Span::styled(rule.join("─┼─"), border)]);
            }
        }
        out
    }
}

fn cell_width(cell: &[Span<'_>]) -> usize {
    cell.iter().map(|s| s.content.width()).sum()
}
