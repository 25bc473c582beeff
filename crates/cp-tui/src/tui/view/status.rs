//! The status bar: what needs attention, the model and its token use and cost, project,
//! worker, activity and key hints.

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::{Color, Style};
use ratatui::text::{Line, Span};

use crate::tui::app::{App, Focus};

/// Below this width the status bar's label shrinks to ` cp `.
const NARROW: u16 = 100;
/// Below this width the usage takes its compact form.
const COMPACT: u16 = 140;

pub fn render(app: &App, area: Rect, buf: &mut Buffer) {
    let base = Style::default().bg(Color::DarkGray).fg(Color::White);
    buf.set_style(area, base);
    let narrow = area.width < NARROW;
    let project = app.host().project().root().display().to_string();
    let whereabouts = [
        Span::styled(format!(" {} ", shorten(&project, 40)), base),
        Span::styled(format!("│ worker {} ", app.host().worker()), base),
    ];
    let label = if narrow { " cp " } else { " context-pilot " };
    let mut spans = vec![Span::styled(label, base.fg(Color::Black).bg(Color::Cyan))];
    // What needs the person's attention comes first, so a narrow terminal still shows it.
    let urgent = base.fg(Color::LightMagenta);
    if app.reload.is_some() {
        spans.push(Span::styled("│ reload pending ", urgent));
    }
    if app.dialog.as_ref().is_some_and(|d| d.hidden) {
        spans.push(Span::styled("│ checkpoint waiting: F2 ", urgent));
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
    if let Some(provider) = &app.agent.provider {
        let model = &provider.config().model;
        let model = if narrow {
            model.strip_prefix("claude-").unwrap_or(model)
        } else {
            model
        };
        let usage = if area.width < COMPACT {
            app.agent.usage.compact_summary()
        } else {
            app.agent.usage.summary()
        };
        spans.push(Span::styled(
            format!("│ {model} "),
            base.fg(Color::LightCyan),
        ));
        spans.push(Span::styled(format!("│ {usage} "), base));
    }
    // Model and usage first: the project and worker rarely change and may be cut.
    spans.extend(whereabouts);
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
