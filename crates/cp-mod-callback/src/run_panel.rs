//! A panel per callback run that failed: its status and the end of its output.
//!
//! The runner thread fills the shared state when the run ends; rendering only reads it. The
//! full log stays in the console server's log file (`.context-pilot/run/consoles/`).

use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

#[cfg(feature = "draw")]
use cp_base::ratatui::buffer::Buffer;
#[cfg(feature = "draw")]
use cp_base::ratatui::layout::Rect;
#[cfg(feature = "draw")]
use cp_base::ratatui::style::{Modifier, Style};
#[cfg(feature = "draw")]
use cp_base::ratatui::text::Line;
#[cfg(feature = "draw")]
use cp_base::ratatui::widgets::{Paragraph, Widget};
#[cfg(feature = "draw")]
use cp_base::theme;
use cp_base::{Panel, PanelKind};
#[cfg(feature = "draw")]
use cp_base::{PanelView, ScrollExtent};
use cp_mod_console::TermScreen;
use uuid::Uuid;

/// The terminal view's lock; drawing works even if a thread panicked holding it.
#[cfg(feature = "draw")]
fn lock_screen(screen: &Mutex<TermScreen>) -> MutexGuard<'_, TermScreen> {
    screen.lock().unwrap_or_else(PoisonError::into_inner)
}

/// Output lines a run panel keeps as plain text (for the model and the report).
pub const PANEL_LINES: usize = 400;
/// Raw output a run panel draws as a terminal, at most.
pub const PANEL_RAW_BYTES: u64 = 256 * 1024;
/// Scrollback rows of that terminal view.
const TERMINAL_ROWS_KEPT: usize = 2_000;
/// Size of the terminal the output is replayed into: the script's console default.
const TERMINAL_ROWS: u16 = cp_mod_console::DEFAULT_ROWS;
const TERMINAL_COLS: u16 = cp_mod_console::DEFAULT_COLS;
/// Output lines a run panel gives the model.
const LLM_LINES: usize = 40;

/// What a run panel shows.
#[derive(Debug, Clone, Default)]
pub struct RunView {
    pub name: String,
    pub status: String,
    pub console: Option<Uuid>,
    pub output: String,
    /// The end of the raw output parsed as a terminal, so colours show (set at the end).
    pub terminal: Option<Arc<Mutex<TermScreen>>>,
    /// Listed in the sidebar (set when the run failed).
    pub visible: bool,
    pub finished: bool,
}

/// A callback run's panel. Clones share the same state.
#[derive(Debug, Clone)]
pub struct RunPanel {
    run_id: Uuid,
    state: Arc<Mutex<RunView>>,
}

impl RunPanel {
    pub fn new(run_id: Uuid, name: &str) -> Self {
        Self {
            run_id,
            state: Arc::new(Mutex::new(RunView {
                name: name.to_owned(),
                status: "queued".to_owned(),
                ..RunView::default()
            })),
        }
    }

    /// `callback-run:<run id>`.
    pub fn panel_id(run_id: Uuid) -> String {
        format!("callback-run:{run_id}")
    }

    pub fn run_id(&self) -> Uuid {
        self.run_id
    }

    /// Parses the end of the run's raw output for drawing; `skipped` bytes of output came
    /// before it (the panel says so).
    pub fn set_terminal(&self, raw: &[u8], skipped: u64) {
        let mut screen = TermScreen::new(TERMINAL_ROWS, TERMINAL_COLS, TERMINAL_ROWS_KEPT);
        screen.skipped(skipped);
        screen.feed(raw);
        self.view().terminal = Some(Arc::new(Mutex::new(screen)));
    }

    /// Header rows above the output.
    #[cfg(feature = "draw")]
    fn header(&self, v: &RunView) -> Vec<Line<'static>> {
        let mut lines = vec![Line::styled(
            format!("Callback '{}' run {}: {}", v.name, self.run_id, v.status),
            Style::default()
                .fg(theme::FAILURE)
                .add_modifier(Modifier::BOLD),
        )];
        if let Some(console) = v.console {
            lines.push(Line::styled(
                format!("console {console}"),
                Style::default().fg(theme::MUTED),
            ));
        }
        // Output left out (more than the panel draws, or than its scrollback keeps) is said
        // where it is always seen, not only at the top of the scrollback.
        if let Some(notice) = v
            .terminal
            .as_ref()
            .and_then(|screen| lock_screen(screen).dropped_notice())
        {
            lines.push(Line::styled(notice, Style::default().fg(theme::MUTED)));
        }
        lines
    }

    pub fn view(&self) -> MutexGuard<'_, RunView> {
        // Rendering must work even if a runner thread panicked while holding the lock.
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

impl Panel for RunPanel {
    fn id(&self) -> String {
        Self::panel_id(self.run_id)
    }

    fn title(&self) -> String {
        format!("Callback {}", self.view().name)
    }

    fn kind(&self) -> PanelKind {
        PanelKind::Dynamic
    }

    fn badge(&self) -> Option<String> {
        let v = self.view();
        Some(if v.finished { "failed" } else { "running" }.to_owned())
    }

    #[cfg(feature = "draw")]
    fn scroll_extent(&self, area: Rect) -> ScrollExtent {
        let v = self.view();
        let header = u16::try_from(self.header(&v).len()).unwrap_or(u16::MAX);
        let height = area.height.saturating_sub(header);
        let max = match &v.terminal {
            Some(screen) => lock_screen(screen).tail_max_scroll(height),
            None => ScrollExtent::overflow(v.output.lines().count(), height),
        };
        ScrollExtent::bottom(max)
    }

    #[cfg(feature = "draw")]
    fn find(&self, area: Rect, query: &str) -> Vec<usize> {
        let v = self.view();
        let header = u16::try_from(self.header(&v).len()).unwrap_or(u16::MAX);
        let height = area.height.saturating_sub(header);
        match &v.terminal {
            Some(screen) => lock_screen(screen).find_tail(query, height),
            None => ScrollExtent::offsets_of_matches(
                v.output.lines(),
                query,
                height,
                cp_base::Anchor::Bottom,
            ),
        }
    }

    #[cfg(feature = "draw")]
    fn render(&self, area: Rect, buf: &mut Buffer, view: &PanelView) {
        let v = self.view();
        let header = self.header(&v);
        let rows = u16::try_from(header.len())
            .unwrap_or(u16::MAX)
            .min(area.height);
        Paragraph::new(header).render(
            Rect {
                height: rows,
                ..area
            },
            buf,
        );
        let body = Rect {
            y: area.y + rows,
            height: area.height - rows,
            ..area
        };
        // Anchored at the bottom like a terminal; `scroll` moves up from there.
        if let Some(screen) = &v.terminal {
            lock_screen(screen).render_tail(body, buf, view.scroll);
            return;
        }
        let lines: Vec<&str> = v.output.lines().collect();
        let height = usize::from(body.height);
        let end = lines
            .len()
            .saturating_sub(view.scroll.min(lines.len().saturating_sub(height)));
        let start = end.saturating_sub(height);
        let text: Vec<Line> = lines[start..end]
            .iter()
            .map(|l| Line::raw((*l).to_owned()))
            .collect();
        Paragraph::new(text).render(body, buf);
    }

    fn llm_context(&self) -> String {
        let v = self.view();
        let body: Vec<&str> = v.output.lines().collect();
        let start = body.len().saturating_sub(LLM_LINES);
        format!(
            "Callback '{}' run {} {}{}. Last {} lines of output:\n```\n{}\n```\n",
            v.name,
            self.run_id,
            v.status,
            v.console
                .map(|c| format!(" (console {c})"))
                .unwrap_or_default(),
            body.len() - start,
            body[start..].join("\n")
        )
    }
}
