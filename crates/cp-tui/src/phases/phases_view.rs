//! Drawing the Phases panel: the table of phases with their queue lines, the run's verdict and
//! end, and below it the selected phase's conversation.

use std::time::{Duration, Instant};

use cp_base::ScrollExtent;
use cp_base::ratatui::buffer::Buffer;
use cp_base::ratatui::layout::Rect;
use cp_base::ratatui::style::{Modifier, Style};
use cp_base::ratatui::text::{Line, Span};
use cp_base::ratatui::widgets::{Paragraph, Widget};
use cp_base::text::fit_end;
use cp_base::theme;

use super::Phases;

impl Phases {
    /// Draws the table and the selected phase's conversation (`scroll` rows up from its
    /// newest), its clocks read at `now`.
    pub fn render(&self, area: Rect, buf: &mut Buffer, now: Instant, scroll: usize) {
        let lines = self.table(now);
        let (table, below) = split(area, lines.len());
        Paragraph::new(lines).render(table, buf);
        let Some(row) = self.rows.get(self.selected) else {
            return;
        };
        if row.own_agent {
            row.conversation.render(below, buf, scroll);
        } else {
            Paragraph::new(Line::styled(
                "It runs alone, in the project's tree: its work shows in the conversation.",
                Style::default().fg(theme::MUTED),
            ))
            .render(below, buf);
        }
    }

    /// How far the selected phase's conversation scrolls in the panel's `area`.
    pub fn scroll_extent(&self, area: Rect) -> ScrollExtent {
        let (_, below) = split(area, self.table_height());
        self.rows
            .get(self.selected)
            .filter(|row| row.own_agent)
            .map_or(ScrollExtent::bottom(0), |row| {
                row.conversation.scroll_extent(below)
            })
    }

    /// Rows the table takes: its header, a row per phase and its queue line, the run's
    /// verdict and end, the rule.
    fn table_height(&self) -> usize {
        2 + self.rows.len()
            + self.rows.iter().filter(|r| r.queue.is_some()).count()
            + usize::from(self.verdict.is_some())
            + usize::from(self.ended.is_some())
    }

    /// The table of phases, and the rule above the selected phase's conversation.
    fn table(&self, now: Instant) -> Vec<Line<'static>> {
        let header = Style::default().add_modifier(Modifier::BOLD);
        // The Host column, once a phase runs on a host of the `hosts` configuration.
        let hosts = self.rows.iter().any(|r| !r.host.is_empty());
        let host_head = if hosts {
            format!("{:<10} ", "Host")
        } else {
            String::new()
        };
        let mut lines = vec![Line::styled(
            format!(
                "  {:<14} {:<9} {host_head}{:<19} {:>7} {:>8} {:>7}",
                "Phase", "Agent", "Status", "Context", "Tokens", "Time"
            ),
            header,
        )];
        for (i, row) in self.rows.iter().enumerate() {
            let mark = if i == self.selected { "▸ " } else { "  " };
            let context = row.context.map_or_else(
                || "–".to_owned(),
                |(used, window)| format!("{}%", used.saturating_mul(100) / window.max(1)),
            );
            let tokens = if row.tokens == 0 {
                "–".to_owned()
            } else {
                short_count(row.tokens)
            };
            let agent = if row.agent.is_empty() {
                "run's"
            } else {
                &row.agent
            };
            let host = match (hosts, row.host.is_empty()) {
                (false, _) => String::new(),
                (true, true) => format!("{:<10} ", "here"),
                (true, false) => format!("{:<10} ", fit_end(&row.host, 10)),
            };
            let style = if i == self.selected {
                Style::default().add_modifier(Modifier::REVERSED)
            } else {
                Style::default()
            };
            lines.push(Line::from(vec![
                Span::styled(
                    format!("{mark}{:<14} {agent:<9} {host}", fit_end(&row.id, 14)),
                    style,
                ),
                Span::styled(
                    format!("{:<19}", row.state.label()),
                    Style::default().fg(row.state.color()),
                ),
                Span::raw(format!(
                    " {context:>7} {tokens:>8} {:>7}",
                    clock(row.elapsed_at(now))
                )),
            ]));
            if let Some(note) = &row.queue {
                let took = note
                    .until
                    .unwrap_or(now)
                    .saturating_duration_since(note.since);
                let color = if note.red {
                    theme::FAILURE
                } else {
                    theme::MUTED
                };
                lines.push(Line::styled(
                    format!("      ↳ {} ({})", note.text, clock(took)),
                    Style::default().fg(color),
                ));
            }
        }
        if let Some(verdict) = &self.verdict {
            lines.push(Line::styled(
                verdict.clone(),
                Style::default().add_modifier(Modifier::BOLD),
            ));
        }
        if let Some(ended) = &self.ended {
            lines.push(Line::styled(
                ended.clone(),
                Style::default().add_modifier(Modifier::BOLD),
            ));
        }
        let rule = self
            .rows
            .get(self.selected)
            .map_or_else(String::new, |row| {
                format!("── {} ── ([ ] another phase, PgUp/PgDn scroll)", row.id)
            });
        lines.push(Line::styled(rule, Style::default().fg(theme::MUTED)));
        lines
    }
}

/// The table's part of `area` (`rows` tall, or all of it) and the rest, below it.
fn split(area: Rect, rows: usize) -> (Rect, Rect) {
    let top = u16::try_from(rows).unwrap_or(u16::MAX).min(area.height);
    let table = Rect {
        height: top,
        ..area
    };
    let below = Rect {
        y: area.y + top,
        height: area.height - top,
        ..area
    };
    (table, below)
}

/// `12.3k`, `1.2M`.
fn short_count(n: u64) -> String {
    let tenths = |unit: u64| format!("{}.{}", n / unit, n % unit * 10 / unit);
    if n >= 1_000_000 {
        format!("{}M", tenths(1_000_000))
    } else if n >= 1000 {
        format!("{}k", tenths(1000))
    } else {
        n.to_string()
    }
}

/// `1m05s`, `42s`, `1h02m`.
fn clock(d: Duration) -> String {
    let s = d.as_secs();
    if s >= 3600 {
        format!("{}h{:02}m", s / 3600, s % 3600 / 60)
    } else if s >= 60 {
        format!("{}m{:02}s", s / 60, s % 60)
    } else {
        format!("{s}s")
    }
}
