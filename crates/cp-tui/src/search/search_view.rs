//! The `/` search on screen: the prompt on the panel's last row, and the query highlighted
//! wherever the panel drew it.

use cp_base::theme;
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};

use crate::search::Search;

/// Draws the prompt on the last row of `area` and highlights the query above it.
pub fn render(search: &Search, area: Rect, buf: &mut Buffer) {
    if area.height == 0 {
        return;
    }
    if let Some(query) = search.text() {
        highlight(buf, area, query);
    }
    let row = Rect {
        y: area.y + area.height - 1,
        height: 1,
        ..area
    };
    let hint = if search.editing {
        "  Enter find · Esc cancel"
    } else {
        "  n next · N previous · Esc forget"
    };
    let mut spans = vec![
        Span::styled("/", Style::default().fg(theme::ACCENT)),
        Span::raw(search.query.text().to_owned()),
    ];
    if search.editing {
        spans.push(Span::styled(
            " ",
            Style::default().add_modifier(Modifier::REVERSED),
        ));
    }
    spans.push(Span::styled(hint, Style::default().fg(theme::MUTED)));
    buf.set_style(row, Style::default().bg(theme::BAR));
    buf.set_line(row.x, row.y, &Line::from(spans), row.width);
}

/// Marks every on-screen occurrence of `query` (case-insensitive, cell by cell).
fn highlight(buf: &mut Buffer, area: Rect, query: &str) {
    let needle: Vec<String> = query.chars().map(|c| c.to_lowercase().collect()).collect();
    let style = Style::default()
        .fg(theme::ON_HIGHLIGHT)
        .bg(theme::ATTENTION);
    for y in area.top()..area.bottom() {
        let cells: Vec<String> = (area.left()..area.right())
            .map(|x| buf[(x, y)].symbol().to_lowercase())
            .collect();
        let mut x = 0;
        while x + needle.len() <= cells.len() {
            if cells[x..x + needle.len()] == needle[..] {
                for dx in 0..needle.len() {
                    let col = area.left() + u16::try_from(x + dx).unwrap_or(u16::MAX);
                    buf[(col, y)].set_style(style);
                }
                x += needle.len();
            } else {
                x += 1;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::keymap::Action;

    #[test]
    fn matches_are_highlighted_and_the_prompt_shows_the_query() {
        let area = Rect::new(0, 0, 30, 3);
        let mut buf = Buffer::empty(area);
        buf.set_string(0, 0, "an Error, then error again", Style::default());
        let mut search = Search::open();
        for c in "error".chars() {
            search.apply(Action::Char(c));
        }
        render(&search, area, &mut buf);
        assert_eq!(buf[(3, 0)].bg, theme::ATTENTION, "case-insensitive");
        assert_eq!(buf[(7, 0)].bg, theme::ATTENTION);
        assert_eq!(
            buf[(8, 0)].bg,
            cp_base::ratatui::style::Color::Reset,
            "the comma after it is not"
        );
        assert_eq!(buf[(15, 0)].bg, theme::ATTENTION);
        let prompt: String = (0..30).map(|x| buf[(x, 2)].symbol()).collect();
        assert!(prompt.starts_with("/error   Enter find"), "{prompt}");
    }
}
