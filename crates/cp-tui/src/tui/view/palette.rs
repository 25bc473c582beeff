//! The command palette popup: the query line, matching tools with descriptions, and errors.

use ratatui::Frame;
use ratatui::layout::{Position, Rect};
use ratatui::style::{Color, Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Clear, Paragraph, Wrap};

use crate::tui::palette::{Palette, Param};
use crate::tui::view_model::ViewModel;

/// One line per parameter: name, type, required or optional, allowed values, what it is.
/// Parameters already typed as `name=` are dimmed, so the ones left stand out.
fn param_lines(params: &[Param], palette: &Palette) -> Vec<Line<'static>> {
    let typed = palette.query.text();
    let width = params.iter().map(|p| p.name.len()).max().unwrap_or(0);
    params
        .iter()
        .map(|p| {
            let done = typed.contains(&format!("{}=", p.name))
                || typed.contains(&format!("\"{}\"", p.name));
            let name_style = match (done, p.required) {
                (true, _) => Style::default().fg(Color::DarkGray),
                (false, true) => Style::default()
                    .fg(Color::Cyan)
                    .add_modifier(Modifier::BOLD),
                (false, false) => Style::default().fg(Color::Cyan),
            };
            let need = if p.required { "required" } else { "optional" };
            let mut spans = vec![
                Span::styled(format!("  {:<width$} ", p.name), name_style),
                Span::styled(
                    format!("{} · {need}", p.kind),
                    Style::default().fg(Color::Gray),
                ),
            ];
            if !p.choices.is_empty() {
                spans.push(Span::styled(
                    format!(" · one of {}", p.choices.join("|")),
                    Style::default().fg(Color::Yellow),
                ));
            }
            if !p.summary.is_empty() {
                spans.push(Span::styled(
                    format!(" — {}", p.summary),
                    Style::default().fg(Color::DarkGray),
                ));
            }
            Line::from(spans)
        })
        .collect()
}

pub fn render(app: &ViewModel<'_>, area: Rect, frame: &mut Frame) {
    let Some((palette, tools)) = &app.palette else {
        return;
    };
    let matches = palette.matches(tools);
    let width = area.width.saturating_sub(8).clamp(20, 100);
    let height = area.height.saturating_sub(4).clamp(6, 24);
    let popup = super::centered(area, width, height);
    frame.render_widget(Clear, popup);
    let block = Block::default()
        .borders(Borders::ALL)
        .border_style(Style::default().fg(Color::Cyan))
        .title(" Command palette — ToolName key=value … or ToolName {json} ");
    let inner = block.inner(popup);
    frame.render_widget(block, popup);
    if inner.height < 3 {
        return;
    }

    let query = Line::from(vec![
        Span::styled("› ", Style::default().fg(Color::Cyan)),
        Span::raw(palette.query.text().replace('\n', " ")),
    ]);
    frame
        .buffer_mut()
        .set_line(inner.x, inner.y, &query, inner.width);
    let before = palette.query.before_cursor().replace('\n', " ");
    let cursor_x = inner.x
        + 2
        + u16::try_from(unicode_width::UnicodeWidthStr::width(before.as_str())).unwrap_or(0);
    frame.set_cursor_position(Position {
        x: cursor_x.min(inner.right().saturating_sub(1)),
        y: inner.y,
    });

    let mut y = inner.y + 1;
    if let Some(error) = &palette.error {
        frame.buffer_mut().set_line(
            inner.x,
            y,
            &Line::styled(format!("✗ {error}"), Style::default().fg(Color::Red)),
            inner.width,
        );
        y += 1;
    }
    let selected = palette.selected.min(matches.len().saturating_sub(1));
    let list_height = usize::from(inner.bottom().saturating_sub(y));
    // Keep the highlighted tool visible, with its parameters and description below the list.
    let params = matches
        .get(selected)
        .map(|tool| param_lines(&crate::tui::palette::params(&tool.parameters), palette))
        .unwrap_or_default();
    let detail_rows = (params.len() + 4).min(list_height / 2);
    let rows = list_height.saturating_sub(detail_rows);
    let first = selected.saturating_sub(rows.saturating_sub(1));
    for (i, tool) in matches.iter().enumerate().skip(first).take(rows) {
        let style = if i == selected {
            Style::default()
                .fg(Color::Black)
                .bg(Color::Cyan)
                .add_modifier(Modifier::BOLD)
        } else {
            Style::default()
        };
        let summary = tool.description.split(". ").next().unwrap_or_default();
        let line = Line::from(vec![
            Span::styled(format!("{:<22}", tool.name), style),
            Span::styled(format!(" {summary}"), Style::default().fg(Color::Gray)),
        ]);
        frame.buffer_mut().set_line(inner.x, y, &line, inner.width);
        y += 1;
    }
    if matches.is_empty() {
        frame.buffer_mut().set_line(
            inner.x,
            y,
            &Line::styled("no matching tool", Style::default().fg(Color::DarkGray)),
            inner.width,
        );
    }
    if let Some(tool) = matches.get(selected) {
        let mut detail = Rect {
            x: inner.x,
            y: inner
                .bottom()
                .saturating_sub(u16::try_from(detail_rows).unwrap_or(0)),
            width: inner.width,
            height: u16::try_from(detail_rows).unwrap_or(0),
        };
        for line in params.iter().take(detail_rows.saturating_sub(1)) {
            frame
                .buffer_mut()
                .set_line(detail.x, detail.y, line, detail.width);
            detail.y += 1;
            detail.height = detail.height.saturating_sub(1);
        }
        frame.render_widget(
            Paragraph::new(tool.description.as_str())
                .wrap(Wrap { trim: true })
                .style(Style::default().fg(Color::DarkGray)),
            detail,
        );
    }
}
