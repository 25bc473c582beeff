//! The status bar: project, worker, activity and key hints.

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::{Color, Style};
use ratatui::text::{Line, Span};

use crate::tui::app::{App, Focus};

pub fn render(app: &App, area: Rect, buf: &mut Buffer) {
    let base = Style::default().bg(Color::DarkGray).fg(Color::White);
    buf.set_style(area, base);
    let project = app.host().project().root().display().to_string();
    let mut spans = vec![
        Span::styled(" context-pilot ", base.fg(Color::Black).bg(Color::Cyan)),
        Span::styled(format!(" {} ", shorten(&project, 40)), base),
        Span::styled(format!("│ worker {} ", app.host().worker()), base),
    ];
    // What needs the person's attention comes first, so a narrow terminal still shows it.
    let urgent = base.fg(Color::LightMagenta);
    if app.reload.is_some() {
        spans.push(Span::styled("│ reload pending ", urgent));
    }
    if app.dialog.as_ref().is_some_and(|d| d.hidden) {
        spans.push(Span::styled("│ checkpoint waiting: Ctrl-K ", urgent));
    }
    if let Some(left) = &app.agent.work_left {
        spans.push(Span::styled(
            format!("│ {left} "),
            base.fg(Color::White).bg(Color::Red),
        ));
    }
    if let Some(flash) = &app.flash {
        spans.push(Span::styled(
            format!("│ {flash} "),
            base.fg(Color::LightYellow),
        ));
    }
    if let Some(run) = app.workflow.as_ref().filter(|w| w.exit.is_none()) {
        spans.push(Span::styled(
            format!("│ {} ", clip(&run.status, 50)),
            base.fg(Color::LightCyan),
        ));
    }
    if app.agent.running() {
        // "agent working" always shows while a turn runs; the detail follows it.
        let text = match app.agent.status.as_deref() {
            Some(status) => format!("│ agent working · {} ", clip(status, 40)),
            None => "│ agent working… Esc cancels ".to_owned(),
        };
        spans.push(Span::styled(text, base.fg(Color::Yellow)));
    }
    if !app.jobs.is_empty() {
        spans.push(Span::styled(
            format!("│ {} running ", app.jobs.len()),
            base.fg(Color::Yellow),
        ));
    }
    if app.agent.provider.is_some() {
        spans.push(Span::styled(
            format!("│ {} ", app.agent.usage.summary()),
            base,
        ));
    }
    let hints = if app.palette.is_some() {
        "Enter run · Tab complete · ↑↓ pick · Esc close"
    } else if app.focus == Focus::Sidebar {
        "↑↓/1-9 panel · Tab input · PgUp/PgDn scroll · Ctrl-P palette · Ctrl-C quit"
    } else {
        "Enter send · Tab panels · Alt-1..9 panel · Ctrl-P or : palette · Ctrl-C quit"
    };
    spans.push(Span::styled(format!("│ {hints}"), base.fg(Color::Gray)));
    buf.set_line(area.x, area.y, &Line::from(spans), area.width);
}

fn clip(text: &str, max: usize) -> String {
    if text.chars().count() <= max {
        return text.to_owned();
    }
    format!("{}…", text.chars().take(max - 1).collect::<String>())
}

/// Keeps the end of a long path, which is the part that tells projects apart.
fn shorten(path: &str, max: usize) -> String {
    let count = path.chars().count();
    if count <= max {
        return path.to_owned();
    }
    let tail: String = path.chars().skip(count - (max - 1)).collect();
    format!("…{tail}")
}
