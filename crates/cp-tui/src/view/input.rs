//! The input line at the bottom of the main area.

use cp_base::theme;
use ratatui::Frame;
use ratatui::layout::{Position, Rect};
use ratatui::style::Style;
use ratatui::widgets::{Block, Borders, Paragraph};

use crate::navigation::Focus;
use crate::view_model::ViewModel;

/// Rows the input box needs: its lines plus borders, at most 8 lines.
pub fn height(app: &ViewModel<'_>, _width: u16) -> u16 {
    let lines = app.input.text().split('\n').count().clamp(1, 8);
    u16::try_from(lines).unwrap_or(8) + 2
}

pub fn render(app: &ViewModel<'_>, area: Rect, frame: &mut Frame) {
    let focused = app.focus == Focus::Input && app.palette.is_none() && app.confirm.is_none();
    let block = Block::default()
        .borders(Borders::ALL)
        .border_style(Style::default().fg(if focused { theme::ACCENT } else { theme::MUTED }))
        .title(" Message (Enter send · Alt-Enter newline) ");
    let inner = block.inner(area);
    let text = app.input.text();
    let (cursor_row, cursor_col) = app.input.cursor_row_col();
    let visible_rows = usize::from(inner.height.max(1));
    let first_row = cursor_row.saturating_sub(visible_rows - 1);
    let shown: Vec<&str> = text
        .split('\n')
        .skip(first_row)
        .take(visible_rows)
        .collect();
    frame.render_widget(Paragraph::new(shown.join("\n")).block(block), area);
    if focused {
        let x = inner.x
            + u16::try_from(cursor_col)
                .unwrap_or(0)
                .min(inner.width.saturating_sub(1));
        let y = inner.y + u16::try_from(cursor_row - first_row).unwrap_or(0);
        frame.set_cursor_position(Position { x, y });
    }
}
