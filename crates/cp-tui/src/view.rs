//! Drawing the screen. Everything here is a pure function of a [`ViewModel`]: no I/O, no
//! mutation, and no way to reach a module (the view model holds only published snapshots).

use cp_base::Panel as _;
use cp_base::theme;
use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::{Color, Modifier, Style};
use ratatui::widgets::{Block, Borders, Clear, Paragraph, Wrap};

use crate::help::help_view;
use crate::hit_map::{HitMap, Target};
use crate::input::input_view;
use crate::palette::palette_view;
use crate::panels::{Focus, sidebar_view};
use crate::popup::{Confirm, centered};
use crate::search::search_view;
use crate::status_bar;
use crate::view_model::ViewModel;
use crate::workflow::dialog_view;

/// Sidebar width in columns on a wide terminal.
const SIDEBAR_WIDTH: u16 = 26;
/// Sidebar width below [`WIDE`] columns, e.g. on an 80×24 terminal, so the panel and the
/// conversation keep most of the width.
const NARROW_SIDEBAR_WIDTH: u16 = 18;
/// From this width on the sidebar takes its full width.
const WIDE: u16 = 100;

/// The sidebar's width on a `total`-column terminal: full when wide, narrower below 100
/// columns, and never more than a third of the screen.
fn sidebar_width(total: u16) -> u16 {
    let width = if total >= WIDE {
        SIDEBAR_WIDTH
    } else {
        NARROW_SIDEBAR_WIDTH
    };
    width.min(total / 3)
}

/// Where the parts of the screen go.
struct Areas {
    side: Rect,
    panel: Rect,
    input: Rect,
    status: Rect,
}

fn layout(app: &ViewModel<'_>, area: Rect) -> Areas {
    let [body, status_row] = Layout::vertical([
        Constraint::Min(3),
        Constraint::Length(status_bar::height(area.width)),
    ])
    .areas(area);
    let sidebar_width = sidebar_width(body.width);
    let [side, main] =
        Layout::horizontal([Constraint::Length(sidebar_width), Constraint::Min(10)]).areas(body);
    let input_height = input_view::height(app.input, main.width);
    let [panel, input] =
        Layout::vertical([Constraint::Min(1), Constraint::Length(input_height)]).areas(main);
    Areas {
        side,
        panel,
        input,
        status: status_row,
    }
}

/// The area the selected panel draws into (inside its border) on a screen of `area`, so the
/// app can bound scrolling by what the panel can show there.
pub fn panel_inner_area(app: &ViewModel<'_>, area: Rect) -> Rect {
    Block::default()
        .borders(Borders::ALL)
        .inner(layout(app, area).panel)
}

/// Draws the whole screen.
pub fn draw(app: &ViewModel<'_>, frame: &mut Frame) {
    draw_and_map(app, frame);
}

/// Draws the whole screen and returns where it drew what, for mouse clicks.
pub fn draw_and_map(app: &ViewModel<'_>, frame: &mut Frame) -> HitMap {
    let mut hits = HitMap::default();
    let area = frame.area();
    let Areas {
        side,
        panel: panel_area,
        input: input_area,
        status: status_row,
    } = layout(app, area);

    sidebar_view::render(
        &app.sidebar,
        app.selected,
        app.focus,
        side,
        frame.buffer_mut(),
        &mut hits,
    );
    hits.push(panel_area, Target::PanelArea);
    render_panel(app, panel_area, frame, &mut hits);
    let input_focused = app.focus == Focus::Input && app.palette.is_none() && app.confirm.is_none();
    input_view::render(app.input, input_focused, input_area, frame);
    hits.push(input_area, Target::Input);
    status_bar::render(app, status_row, frame.buffer_mut());
    // Overlays are modal: each covers the screen, so clicks reach only what it records.
    if let Some((palette, tools)) = &app.palette {
        palette_view::render(palette, tools, area, frame);
        hits.cover(area);
    }
    if let Some(dialog) = app.dialog.filter(|d| !d.hidden) {
        hits.cover(area);
        dialog_view::render(dialog, area, frame, &mut hits);
    }
    if let Some(confirm) = app.confirm {
        render_confirm(confirm, area, frame);
        hits.cover(area);
    }
    if let Some(keys) = app.help {
        help_view::render(keys, &app.help_rows, area, frame);
        hits.cover(area);
    }
    hits
}

/// Draws the selected panel; a panel with rows of its own to click records them in `hits`.
fn render_panel(app: &ViewModel<'_>, area: Rect, frame: &mut Frame, hits: &mut HitMap) {
    let title = app
        .sidebar
        .iter()
        .find(|e| e.id == app.selected)
        .map_or_else(|| app.selected.to_owned(), |e| e.title.clone());
    let focused = app.focus == Focus::Sidebar;
    let border = if focused { theme::ACCENT } else { theme::MUTED };
    let block = Block::default()
        .borders(Borders::ALL)
        .border_style(Style::default().fg(border))
        .title(format!(" {title} "));
    let inner = block.inner(area);
    frame.render_widget(block, area);
    let buf = frame.buffer_mut();
    if app.selected == app.conversation.id() {
        app.conversation.render(inner, buf, &app.panel_view);
    } else if app.selected == crate::changes::ID {
        app.changes.render(inner, buf, focused, hits);
        return;
    } else if app.selected == crate::phases::ID {
        if let Some(run) = app.workflow {
            let now = std::time::Instant::now();
            run.phases.render(inner, buf, now, app.panel_view.scroll);
        }
        return;
    } else if let Some(panel) = &app.panel {
        panel.render(inner, buf, &app.panel_view);
    } else {
        render_gone(inner, frame);
        return;
    }
    if let Some(search) = app.search {
        search_view::render(search, inner, frame.buffer_mut());
    }
}

fn render_gone(inner: Rect, frame: &mut Frame) {
    let gone = Paragraph::new("This panel is gone. Pick another one in the sidebar.")
        .style(Style::default().fg(theme::MUTED));
    frame.render_widget(gone, inner);
}

fn render_confirm(confirm: &Confirm, area: Rect, frame: &mut Frame) {
    if let Confirm::Trust(what) = confirm {
        render_trust(what, area, frame);
        return;
    }
    if let Confirm::Revert(what) = confirm {
        render_revert(what, area, frame);
        return;
    }
    let text = match confirm {
        Confirm::QuitWhileBusy | Confirm::Trust(_) | Confirm::Revert(_) => {
            "Work is still running. Quit anyway? (y/n)"
        }
    };
    let width = (u16::try_from(text.len()).unwrap_or(60) + 4).min(area.width);
    let popup = centered(area, width, 3);
    frame.render_widget(Clear, popup);
    frame.render_widget(
        Paragraph::new(text)
            .wrap(Wrap { trim: true })
            .style(Style::default().add_modifier(Modifier::BOLD))
            .block(Block::default().borders(Borders::ALL).title(" Quit? ")),
        popup,
    );
}

/// The trust question: what trusting the project allows, and the two answers.
fn render_trust(what: &str, area: Rect, frame: &mut Frame) {
    let popup = centered(
        area,
        area.width.saturating_sub(4),
        area.height.saturating_sub(2),
    );
    frame.render_widget(Clear, popup);
    frame.render_widget(
        Paragraph::new(format!("y: trust this project · n: not now\n\n{what}"))
            .wrap(Wrap { trim: false })
            .block(
                Block::default()
                    .borders(Borders::ALL)
                    .title(" Trust this project? (y = trust, n = not now) "),
            ),
        popup,
    );
}

/// The revert question: what will be lost, and the two answers.
fn render_revert(what: &str, area: Rect, frame: &mut Frame) {
    let lines = u16::try_from(what.lines().count()).unwrap_or(u16::MAX);
    let popup = centered(
        area,
        area.width.saturating_sub(8).max(20),
        lines.saturating_add(2),
    );
    frame.render_widget(Clear, popup);
    let text: Vec<ratatui::text::Line<'_>> = what
        .lines()
        .map(|line| {
            let colour = match line.chars().next() {
                Some('+') => theme::SUCCESS,
                Some('-') => theme::FAILURE,
                _ => Color::Reset,
            };
            ratatui::text::Line::styled(line, Style::default().fg(colour))
        })
        .collect();
    frame.render_widget(
        Paragraph::new(text).block(
            Block::default()
                .borders(Borders::ALL)
                .border_style(Style::default().fg(theme::FAILURE))
                .title(" Revert? (y = revert, n = keep) "),
        ),
        popup,
    );
}
