//! The input line at the bottom of the main area.

use cp_base::theme;
use ratatui::Frame;
use ratatui::layout::{Position, Rect};
use ratatui::style::Style;
use ratatui::widgets::{Block, Borders, Paragraph};

use crate::input::InputBox;

/// Rows the input box needs: its lines plus borders, at most 8 lines.
pub fn height(input: &InputBox, _width: u16) -> u16 {
    let lines = input.text().split('\n').count().clamp(1, 8);
    u16::try_from(lines).unwrap_or(8) + 2
}

/// Draws the message box; `focused` (it has the keys) colours its border and shows the cursor.
pub fn render(input: &InputBox, focused: bool, area: Rect, frame: &mut Frame) {
    let block = Block::default()
        .borders(Borders::ALL)
        .border_style(Style::default().fg(if focused { theme::ACCENT } else { theme::MUTED }))
        .title(" Message (Enter send · Alt-Enter newline) ");
    let inner = block.inner(area);
    let text = input.text();
    let (cursor_row, cursor_col) = input.cursor_row_col();
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
