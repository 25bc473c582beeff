//! A panel per callback run that failed: its status and the end of its output.
//!
//! The runner thread fills the shared state when the run ends; rendering only reads it. The
//! full log stays in the console server's log file (`.context-pilot/run/consoles/`).

use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use cp_base::ratatui::buffer::Buffer;
use cp_base::ratatui::layout::Rect;
use cp_base::ratatui::style::{Color, Modifier, Style};
use cp_base::ratatui::text::Line;
use cp_base::ratatui::widgets::{Paragraph, Widget};
use cp_base::{Panel, PanelKind, PanelView};
use uuid::Uuid;

/// Output lines a run panel keeps.
pub const PANEL_LINES: usize = 400;
/// Output lines a run panel gives the model.
const LLM_LINES: usize = 40;

/// What a run panel shows.
#[derive(Debug, Clone, Default)]
pub struct RunView {
    pub name: String,
    pub status: String,
    pub console: Option<Uuid>,
    pub output: String,
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

    fn render(&self, area: Rect, buf: &mut Buffer, view: &PanelView) {
        let v = self.view();
        let mut lines = vec![Line::styled(
            format!("Callback '{}' run {}: {}", v.name, self.run_id, v.status),
            Style::default().fg(Color::Red).add_modifier(Modifier::BOLD),
        )];
        if let Some(console) = v.console {
            lines.push(Line::styled(
                format!("console {console}"),
                Style::default().fg(Color::DarkGray),
            ));
        }
        let body: Vec<&str> = v.output.lines().collect();
        let height = usize::from(area.height).saturating_sub(lines.len());
        // Anchored at the bottom like a terminal; `scroll` moves up from there.
        let end = body.len().saturating_sub(view.scroll);
        let start = end.saturating_sub(height);
        lines.extend(body[start..end].iter().map(|l| Line::raw((*l).to_owned())));
        Paragraph::new(lines).render(area, buf);
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
