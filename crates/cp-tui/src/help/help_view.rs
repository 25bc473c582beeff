//! The help overlay: every key of the current focus, from the keymap's table with the
//! commands' docs (the view model carries the rows).

use cp_base::theme;
use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Clear, Paragraph};
use unicode_width::UnicodeWidthStr;

use crate::help::Help;
use crate::keymap::KeyContext;

pub fn render(help: &Help, rows: &[(&str, &str)], area: Rect, frame: &mut Frame) {
    let key_width = rows.iter().map(|(keys, _)| keys.width()).max().unwrap_or(0);
    let widest = rows
        .iter()
        .map(|(_, what)| key_width + 2 + what.width())
        .max()
        .unwrap_or(0);
    let width = u16::try_from(widest + 4).unwrap_or(u16::MAX);
    let height = u16::try_from(rows.len() + 2).unwrap_or(u16::MAX);
    let popup = crate::popup::centered(area, width, height);
    let focus = match help.context {
        KeyContext::Text => "typing",
        KeyContext::Sidebar => "sidebar",
        KeyContext::Confirm => "question",
        KeyContext::Changes => "Changes panel",
    };
    let inner_rows = usize::from(popup.height.saturating_sub(2));
    let scroll = help.scroll.min(rows.len().saturating_sub(inner_rows));
    let more = if rows.len() > inner_rows {
        " · ↑↓ scroll"
    } else {
        ""
    };
    let block = Block::default()
        .borders(Borders::ALL)
        .border_style(Style::default().fg(theme::ACCENT))
        .title(format!(" Keys: {focus} · Esc closes{more} "));
    let key_style = Style::default()
        .fg(theme::ACCENT)
        .add_modifier(Modifier::BOLD);
    let lines: Vec<Line> = rows
        .iter()
        .skip(scroll)
        .map(|(keys, what)| {
            let pad = key_width.saturating_sub(keys.width()) + 2;
            Line::from(vec![
                Span::styled(format!(" {keys}"), key_style),
                Span::raw(" ".repeat(pad)),
                Span::raw(*what),
            ])
        })
        .collect();
    frame.render_widget(Clear, popup);
    frame.render_widget(Paragraph::new(lines).block(block), popup);
}
