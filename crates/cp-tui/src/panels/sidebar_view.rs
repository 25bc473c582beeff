//! The sidebar: one row per panel, fixed ones first, each with its badge.

use cp_base::theme;
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Widget};

use crate::hit_map::{HitMap, Target};
use crate::panels::{Focus, SidebarEntry};

/// Draws the sidebar and records each row drawn in `hits`, so a click selects its panel.
pub fn render(
    entries: &[SidebarEntry],
    selected: &str,
    focus: Focus,
    area: Rect,
    buf: &mut Buffer,
    hits: &mut HitMap,
) {
    let focused = focus == Focus::Sidebar;
    let block = Block::default()
        .borders(Borders::ALL)
        .border_style(Style::default().fg(if focused { theme::ACCENT } else { theme::MUTED }))
        .title(" Panels ");
    let inner = block.inner(area);
    block.render(area, buf);
    let mut previous_kind = None;
    let mut y = inner.y;
    for (index, entry) in entries.iter().enumerate() {
        if y >= inner.bottom() {
            break;
        }
        // A thin rule between fixed and dynamic panels.
        if previous_kind.is_some_and(|k| k != entry.kind) && y + 1 < inner.bottom() {
            buf.set_line(
                inner.x,
                y,
                &Line::styled(
                    "─".repeat(usize::from(inner.width)),
                    Style::default().fg(theme::MUTED),
                ),
                inner.width,
            );
            y += 1;
        }
        previous_kind = Some(entry.kind);
        let is_selected = entry.id == selected;
        let style = if is_selected {
            Style::default()
                .fg(theme::ON_HIGHLIGHT)
                .bg(if focused {
                    theme::ACCENT
                } else {
                    theme::SUBDUED
                })
                .add_modifier(Modifier::BOLD)
        } else {
            Style::default()
        };
        let number = if index < 9 {
            format!("{} ", index + 1)
        } else {
            "  ".to_owned()
        };
        let badge_color = entry.badge.as_deref().map_or(
            theme::ATTENTION,
            crate::conversation::outcome_style::badge_color,
        );
        let badge = entry
            .badge
            .as_deref()
            .map(|b| format!(" {b}"))
            .unwrap_or_default();
        let room = usize::from(inner.width).saturating_sub(number.len() + badge.chars().count());
        let title: String = entry.title.chars().take(room).collect();
        let pad = " ".repeat(room.saturating_sub(title.chars().count()));
        let line = Line::from(vec![
            Span::styled(
                number,
                style.fg(if is_selected {
                    theme::ON_HIGHLIGHT
                } else {
                    theme::MUTED
                }),
            ),
            Span::styled(format!("{title}{pad}"), style),
            Span::styled(
                badge,
                style.fg(if is_selected {
                    theme::ON_HIGHLIGHT
                } else {
                    badge_color
                }),
            ),
        ]);
        buf.set_line(inner.x, y, &line, inner.width);
        hits.push(
            Rect::new(inner.x, y, inner.width, 1),
            Target::Panel(entry.id.clone()),
        );
        y += 1;
    }
}
