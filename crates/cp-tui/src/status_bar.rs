//! The status bar: what needs attention, the model and its token use and cost (saying which
//! figures are this turn's and which the session's), project, worker, and, always visible at
//! the right, how to open the help and the palette.
//!
//! Below [`COMPACT`] columns it takes two rows: the usage on the first, the rest on the
//! second, so an 80×24 terminal still shows every figure and the keys.

use cp_base::text::{fit_end, fit_start};
use cp_base::theme;
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::Style;
use ratatui::text::{Line, Span};
use unicode_width::UnicodeWidthStr;

use crate::panels::Focus;
use crate::view_model::ViewModel;

/// Below this width the model's name drops its `claude-` prefix.
const NARROW: u16 = 100;
/// Below this width the usage takes its compact form and the bar two rows.
const COMPACT: u16 = 140;

/// Rows the status bar needs at `width`.
pub fn height(width: u16) -> u16 {
    if width < COMPACT { 2 } else { 1 }
}

pub fn render(app: &ViewModel<'_>, area: Rect, buf: &mut Buffer) {
    let base = Style::default().bg(theme::MUTED).fg(theme::STRONG);
    buf.set_style(area, base);
    let label = Span::styled(" cp ", base.fg(theme::ON_HIGHLIGHT).bg(theme::ACCENT));
    let (model, usage) = usage_spans(app, area.width, base);
    let keys = Span::styled(format!(" {} ", key_hints(app)), base.fg(theme::SUBDUED));
    if area.height >= 2 {
        let first = Rect { height: 1, ..area };
        let second = Rect {
            y: area.y + 1,
            height: 1,
            ..area
        };
        // The model stays beside its usage when there is room, else it moves down.
        let model_on_top = area.width >= NARROW;
        let mut top = vec![label];
        let mut rest = urgent_spans(app, base);
        if model_on_top {
            top.extend(model);
        } else {
            rest.extend(model);
        }
        top.push(usage);
        buf.set_line(first.x, first.y, &Line::from(top), first.width);
        rest.extend(whereabouts(app, base));
        // The second row starts at the edge: its first separator becomes a space.
        if let Some(first) = rest.first_mut()
            && let Some(text) = first.content.strip_prefix('│')
        {
            first.content = text.to_owned().into();
        }
        right_aligned(buf, second, rest, &keys);
    } else {
        let label = Span::styled(" context-pilot ", label.style);
        let mut spans = vec![label];
        // What needs the person's attention first, then the model and usage; the project and
        // worker rarely change and are the first to be cut.
        spans.extend(urgent_spans(app, base));
        spans.extend(model);
        spans.push(usage);
        spans.extend(whereabouts(app, base));
        right_aligned(buf, area, spans, &keys);
    }
}

/// Draws `spans` from the left and `keys` at the right end; the keys win the space.
fn right_aligned(buf: &mut Buffer, row: Rect, spans: Vec<Span<'_>>, keys: &Span<'_>) {
    let keys_width = u16::try_from(keys.content.width()).unwrap_or(u16::MAX);
    let left_width = row.width.saturating_sub(keys_width);
    buf.set_line(row.x, row.y, &Line::from(spans), left_width);
    if keys_width <= row.width {
        buf.set_span(row.x + left_width, row.y, keys, keys_width);
    }
}

/// What needs attention: a pending reload, a hidden approval gate, work left, the flash, the
/// workflow's and the agent's activity.
fn urgent_spans(app: &ViewModel<'_>, base: Style) -> Vec<Span<'static>> {
    let urgent = base.fg(theme::URGENT);
    let mut spans = Vec::new();
    if app.reload_pending {
        spans.push(Span::styled("│ reload pending ", urgent));
    }
    if app.dialog.is_some_and(|d| d.hidden) {
        spans.push(Span::styled("│ approval waiting: F2 ", urgent));
    }
    if let Some(left) = &app.agent.work_left {
        spans.push(Span::styled(
            format!("│ {left} "),
            base.fg(theme::STRONG).bg(theme::FAILURE),
        ));
    }
    if app.review_queued {
        spans.push(Span::styled(
            "│ review comments wait for the agent's turn to end ",
            urgent,
        ));
    }
    if let Some(flash) = app.flash {
        spans.push(Span::styled(format!("│ {flash} "), base.fg(theme::FLASH)));
    }
    if let Some(run) = app.workflow.filter(|w| w.exit.is_none()) {
        spans.push(Span::styled(
            format!("│ {} ", fit_end(&run.status, 50)),
            base.fg(theme::LABEL),
        ));
    }
    if app.agent.running() {
        // "agent working" always shows while a turn runs; the detail follows it.
        let text = match (app.agent.status.as_deref(), app.agent.status_since) {
            // Long steps (the stop gate's test run) show a spinner and their seconds.
            (Some(status), Some(since)) => {
                let (spinner, time) = crate::conversation::progress::spinner_and_time(
                    since,
                    std::time::Instant::now(),
                );
                format!(
                    "│ agent working · {spinner} {} · {time} ",
                    fit_end(status, 40)
                )
            }
            (Some(status), None) => format!("│ agent working · {} ", fit_end(status, 40)),
            (None, _) => "│ agent working… Esc cancels ".to_owned(),
        };
        spans.push(Span::styled(text, base.fg(theme::ATTENTION)));
    }
    if app.running_jobs > 0 {
        spans.push(Span::styled(
            format!("│ {} running ", app.running_jobs),
            base.fg(theme::ATTENTION),
        ));
    }
    spans
}

/// The model (if any) and its token use, or that no model is configured.
fn usage_spans(
    app: &ViewModel<'_>,
    width: u16,
    base: Style,
) -> (Option<Span<'static>>, Span<'static>) {
    let model = match (&app.agent.provider, &app.agent.cli) {
        (Some(provider), _) => provider.config().model.clone(),
        (None, Some(cli)) => cli.label(),
        (None, None) => {
            let none = Span::styled("│ no model configured ", base.fg(theme::SUBDUED));
            return (None, none);
        }
    };
    let model = model.as_str();
    let narrow = width < NARROW;
    let model = if narrow {
        model.strip_prefix("claude-").unwrap_or(model)
    } else {
        model
    };
    let usage = if width < COMPACT {
        app.agent.usage.compact_summary()
    } else {
        app.agent.usage.summary()
    };
    let usage = Span::styled(format!("│ {usage} "), base);
    let model = Span::styled(format!("│ {model} "), base.fg(theme::LABEL));
    (Some(model), usage)
}

/// The project and worker.
fn whereabouts(app: &ViewModel<'_>, base: Style) -> Vec<Span<'static>> {
    let project = &app.project;
    vec![
        Span::styled(format!("│ {} ", fit_start(project, 40)), base),
        Span::styled(format!("│ worker {} ", app.worker), base),
    ]
}

/// The keys to remember in this focus, ending with help and the palette.
fn key_hints(app: &ViewModel<'_>) -> &'static str {
    if app.palette.is_some() {
        "Enter run · Esc close · F1 help"
    } else if app.focus == Focus::Sidebar
        && app.selected == crate::changes::ID
        && app.changes.engaged
    {
        "c comment · S send · r revert · C commit · Esc back · ? help"
    } else if app.focus == Focus::Sidebar && app.selected == crate::changes::ID {
        "Enter review keys · ? help · : palette"
    } else if app.focus == Focus::Sidebar && app.selected == crate::phases::ID {
        "[ ] another phase · ? help · : palette"
    } else if app.focus == Focus::Sidebar {
        "x close · ? help · : palette"
    } else {
        "F1 help · Ctrl-P palette"
    }
}
