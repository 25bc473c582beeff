//! The command palette popup: the query line, matching tools with descriptions, and errors.

use cp_base::theme;
use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Position, Rect};
use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Clear, Paragraph, Wrap};

use crate::palette::{Palette, Param};

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
                (true, _) => Style::default().fg(theme::MUTED),
                (false, true) => Style::default()
                    .fg(theme::ACCENT)
                    .add_modifier(Modifier::BOLD),
                (false, false) => Style::default().fg(theme::ACCENT),
            };
            let need = if p.required { "required" } else { "optional" };
            let mut spans = vec![
                Span::styled(format!("  {:<width$} ", p.name), name_style),
                Span::styled(
                    format!("{} · {need}", p.kind),
                    Style::default().fg(theme::SUBDUED),
                ),
            ];
            if !p.choices.is_empty() {
                spans.push(Span::styled(
                    format!(" · one of {}", p.choices.join("|")),
                    Style::default().fg(theme::ATTENTION),
                ));
            }
            if !p.summary.is_empty() {
                spans.push(Span::styled(
                    format!(" — {}", p.summary),
                    Style::default().fg(theme::MUTED),
                ));
            }
            Line::from(spans)
        })
        .collect()
}

/// The palette popup: the query, an error when there is one, the matching tools and, at the
/// bottom, the highlighted tool's parameters and description.
pub fn render(palette: &Palette, tools: &[cp_base::ToolDef], area: Rect, frame: &mut Frame) {
    let Some(inner) = popup(area, frame) else {
        return;
    };
    let matches = palette.matches(tools);
    let selected = palette.selected.min(matches.len().saturating_sub(1));
    let params = matches
        .get(selected)
        .map(|tool| param_lines(&crate::palette::params(&tool.parameters), palette))
        .unwrap_or_default();
    let error_rows = u16::from(palette.error.is_some());
    // Keep the highlighted tool visible, with its parameters and description below the list.
    let below_query = inner.height.saturating_sub(1 + error_rows);
    let detail_rows = u16::try_from(params.len() + 4)
        .unwrap_or(u16::MAX)
        .min(below_query / 2);
    let [query_area, error_area, list_area, detail_area] = Layout::vertical([
        Constraint::Length(1),
        Constraint::Length(error_rows),
        Constraint::Fill(1),
        Constraint::Length(detail_rows),
    ])
    .areas(inner);
    render_query(palette, query_area, frame);
    if let Some(error) = &palette.error {
        let line = Line::styled(format!("✗ {error}"), Style::default().fg(theme::FAILURE));
        frame.render_widget(line, error_area);
    }
    render_list(&matches, selected, list_area, frame);
    if let Some(tool) = matches.get(selected) {
        render_detail(&params, &tool.description, detail_area, frame);
    }
}

/// Clears a centred popup and draws its border; returns the room inside, if there is enough.
fn popup(area: Rect, frame: &mut Frame) -> Option<Rect> {
    let width = area.width.saturating_sub(8).clamp(20, 100);
    let height = area.height.saturating_sub(4).clamp(6, 24);
    let popup = crate::popup::centered(area, width, height);
    frame.render_widget(Clear, popup);
    let block = Block::default()
        .borders(Borders::ALL)
        .border_style(Style::default().fg(theme::ACCENT))
        .title(" Command palette — ToolName key=value … or ToolName {json} ");
    let inner = block.inner(popup);
    frame.render_widget(block, popup);
    (inner.height >= 3).then_some(inner)
}

/// The query line, with the cursor where the person types.
fn render_query(palette: &Palette, area: Rect, frame: &mut Frame) {
    let query = Line::from(vec![
        Span::styled("› ", Style::default().fg(theme::ACCENT)),
        Span::raw(palette.query.text().replace('\n', " ")),
    ]);
    frame.render_widget(query, area);
    let before = palette.query.before_cursor().replace('\n', " ");
    let cursor_x = area.x
        + 2
        + u16::try_from(unicode_width::UnicodeWidthStr::width(before.as_str())).unwrap_or(0);
    frame.set_cursor_position(Position {
        x: cursor_x.min(area.right().saturating_sub(1)),
        y: area.y,
    });
}

/// The matching tools, one a row, scrolled so the highlighted one shows.
fn render_list(matches: &[&cp_base::ToolDef], selected: usize, area: Rect, frame: &mut Frame) {
    if matches.is_empty() {
        let line = Line::styled("no matching tool", Style::default().fg(theme::MUTED));
        frame.render_widget(line, area);
        return;
    }
    let rows = usize::from(area.height);
    let first = selected.saturating_sub(rows.saturating_sub(1));
    let lines: Vec<Line> = matches
        .iter()
        .enumerate()
        .skip(first)
        .take(rows)
        .map(|(i, tool)| {
            let style = if i == selected {
                Style::default()
                    .fg(theme::ON_HIGHLIGHT)
                    .bg(theme::ACCENT)
                    .add_modifier(Modifier::BOLD)
            } else {
                Style::default()
            };
            let summary = tool.description.split(". ").next().unwrap_or_default();
            Line::from(vec![
                Span::styled(format!("{:<22}", tool.name), style),
                Span::styled(format!(" {summary}"), Style::default().fg(theme::SUBDUED)),
            ])
        })
        .collect();
    frame.render_widget(Paragraph::new(lines), area);
}

/// The highlighted tool's parameters, then its description wrapped in what room is left.
fn render_detail(params: &[Line<'static>], description: &str, area: Rect, frame: &mut Frame) {
    let param_rows = u16::try_from(params.len())
        .unwrap_or(u16::MAX)
        .min(area.height.saturating_sub(1));
    let [params_area, description_area] =
        Layout::vertical([Constraint::Length(param_rows), Constraint::Fill(1)]).areas(area);
    frame.render_widget(Paragraph::new(params.to_vec()), params_area);
    frame.render_widget(
        Paragraph::new(description)
            .wrap(Wrap { trim: true })
            .style(Style::default().fg(theme::MUTED)),
        description_area,
    );
}
