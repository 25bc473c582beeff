//! The Callbacks panel: a table of every callback with this worker's activation, and the
//! editor below it when one is open. Rendering works on a snapshot the module refreshes, so
//! it does no I/O.

use std::fmt::Write as _;

#[cfg(feature = "draw")]
use cp_base::ratatui::buffer::Buffer;
#[cfg(feature = "draw")]
use cp_base::ratatui::layout::Rect;
#[cfg(feature = "draw")]
use cp_base::ratatui::style::{Modifier, Style};
#[cfg(feature = "draw")]
use cp_base::ratatui::text::{Line, Span};
#[cfg(feature = "draw")]
use cp_base::ratatui::widgets::{Paragraph, Widget, Wrap};
#[cfg(feature = "draw")]
use cp_base::theme;
use cp_base::{Panel, PanelKind};
#[cfg(feature = "draw")]
use cp_base::{PanelView, ScrollExtent};

use crate::model::{CallbackDef, CallbackSection};
use crate::script::numbered;

/// The panel id in the sidebar.
pub const PANEL_ID: &str = "callbacks";

/// The callback open in the editor, with its script as read from disk.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EditorView {
    pub def: CallbackDef,
    /// `None` when the script file is missing.
    pub script: Option<String>,
}

/// What the panel shows: a snapshot of the section for one worker.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CallbacksPanel {
    pub worker: String,
    pub section: CallbackSection,
    pub editor: Option<EditorView>,
    /// Why the config could not be read, shown instead of stale data being trusted.
    pub problem: Option<String>,
    /// Background runs in flight, whose results are still to come.
    pub watching: usize,
    /// Names of the callbacks whose latest run failed (or timed out, or could not start).
    /// Blocking callbacks running now, by name (the TUI's progress line names them).
    pub running: Vec<String>,
    pub failing: Vec<String>,
}

#[cfg(feature = "draw")]
fn pattern_text(def: &CallbackDef) -> String {
    def.pattern.join(" ")
}

/// Where the script runs: "the project root", or its directory relative to the root.
pub(crate) fn cwd_text(def: &CallbackDef) -> String {
    def.cwd
        .as_deref()
        .map_or_else(|| "the project root".to_owned(), |cwd| format!("`{cwd}`"))
}

fn blocking_text(def: &CallbackDef) -> String {
    match (def.blocking, def.timeout) {
        (true, Some(t)) => format!("yes ({t}s)"),
        (true, None) => "yes".to_owned(),
        (false, _) => "no".to_owned(),
    }
}

impl CallbacksPanel {
    fn active_text(&self, def: &CallbackDef) -> &'static str {
        match (
            self.section.is_active(&self.worker, def.id),
            self.section.is_paused(&self.worker),
        ) {
            (true, false) => "yes",
            (true, true) => "paused",
            (false, _) => "no",
        }
    }

    fn active_count(&self) -> usize {
        self.section.firing_for(&self.worker).count()
    }

    fn editor_fields(def: &CallbackDef) -> Vec<(&'static str, String)> {
        vec![
            ("Description", def.description.clone()),
            ("Pattern", def.pattern.join(", ")),
            ("Blocking", blocking_text(def)),
            (
                "Timeout",
                def.timeout
                    .map_or_else(|| "none".to_owned(), |t| format!("{t}s")),
            ),
            (
                "Success message",
                def.success_message
                    .clone()
                    .unwrap_or_else(|| "(none: passes are reported as passed)".to_owned()),
            ),
            ("Working dir", cwd_text(def)),
            ("One at a time", yes_no(def.one_at_a_time).to_owned()),
            ("Once per batch", yes_no(def.once_per_batch).to_owned()),
        ]
    }

    #[cfg(feature = "draw")]
    fn lines(&self, width: u16) -> Vec<Line<'static>> {
        let bold = Style::default().add_modifier(Modifier::BOLD);
        let dim = Style::default().fg(theme::MUTED);
        let mut lines = Vec::new();
        if let Some(problem) = &self.problem {
            lines.push(Line::styled(
                problem.clone(),
                Style::default().fg(theme::FAILURE),
            ));
            lines.push(Line::default());
        }
        if self.section.definitions.is_empty() {
            lines.push(Line::styled("No callbacks yet.", bold));
            lines.push(Line::default());
            for text in EMPTY_HELP {
                lines.push(Line::styled(*text, dim));
            }
            return lines;
        }
        if self.section.is_paused(&self.worker) {
            lines.push(Line::styled(
                format!("All callbacks are paused for worker {}.", self.worker),
                Style::default().fg(theme::ATTENTION),
            ));
        }
        if !self.failing.is_empty() {
            lines.push(Line::styled(
                format!(
                    "✗ Latest run failed: {} (its run panel shows the output)",
                    self.failing.join(", ")
                ),
                Style::default()
                    .fg(theme::FAILURE)
                    .add_modifier(Modifier::BOLD),
            ));
        }
        let header = ["ID", "Name", "Description", "Pattern", "Blocking", "Active"];
        let rows: Vec<[String; 6]> = self
            .section
            .definitions
            .iter()
            .map(|d| {
                [
                    d.id.to_string(),
                    d.name.clone(),
                    d.description.clone(),
                    pattern_text(d),
                    blocking_text(d),
                    self.active_text(d).to_owned(),
                ]
            })
            .collect();
        let widths = column_widths(&header, &rows, usize::from(width));
        lines.push(Line::styled(
            fit_row(&header.map(String::from), &widths),
            bold,
        ));
        for row in &rows {
            let style = match row[5].as_str() {
                "yes" => Style::default(),
                _ => dim,
            };
            lines.push(Line::styled(fit_row(row, &widths), style));
        }
        if let Some(editor) = &self.editor {
            lines.push(Line::default());
            lines.push(Line::from(vec![
                Span::styled(
                    format!("Editor: {} {}", editor.def.id, editor.def.name),
                    bold.fg(theme::ACCENT),
                ),
                // The TUI's key on this panel (cp-tui keymap), for a person reading it.
                Span::styled("  (e: edit the script in $EDITOR)", dim),
            ]));
            for (label, value) in Self::editor_fields(&editor.def) {
                lines.push(Line::from(vec![
                    Span::styled(format!("{label}: "), dim),
                    Span::raw(value),
                ]));
            }
            lines.push(Line::styled(
                format!(".context-pilot/scripts/{}.sh:", editor.def.name),
                dim,
            ));
            match &editor.script {
                Some(script) => {
                    for line in numbered(script).lines() {
                        lines.push(Line::raw(line.to_owned()));
                    }
                }
                None => lines.push(Line::styled(
                    "(script file missing: recreate it with script_content)",
                    Style::default().fg(theme::FAILURE),
                )),
            }
        }
        lines
    }
}

#[cfg(feature = "draw")]
const EMPTY_HELP: &[&str] = &[
    "A callback runs a script after the agent edits matching files,",
    "e.g. cargo check after *.rs edits. Create one with Callback_upsert:",
    r#"{"action": "create", "name": "cargo-check", "pattern": "*.rs","#,
    r#" "script_content": "cargo check 2>&1", "blocking": true, "timeout": 300}"#,
];

fn yes_no(b: bool) -> &'static str {
    if b { "yes" } else { "no" }
}

/// Column widths that fit `total`: every column gets its natural width; when that is too
/// wide, Description and Pattern give up space first.
#[cfg(feature = "draw")]
fn column_widths(header: &[&str; 6], rows: &[[String; 6]], total: usize) -> [usize; 6] {
    let mut widths = header.map(|h| h.chars().count());
    for row in rows {
        for (w, cell) in widths.iter_mut().zip(row) {
            *w = (*w).max(cell.chars().count());
        }
    }
    let gaps = 2 * (widths.len() - 1);
    let shrink_order = [2, 3, 1];
    for col in shrink_order {
        let used: usize = widths.iter().sum::<usize>() + gaps;
        if used <= total {
            break;
        }
        let excess = used - total;
        let min = header[col].chars().count().max(6);
        widths[col] = widths[col].saturating_sub(excess).max(min);
    }
    widths
}

#[cfg(feature = "draw")]
fn fit_row(row: &[String; 6], widths: &[usize; 6]) -> String {
    let mut out = String::new();
    for (i, (cell, &w)) in row.iter().zip(widths).enumerate() {
        if i > 0 {
            out.push_str("  ");
        }
        let text = cp_base::text::fit_end(cell, w);
        let pad = w.saturating_sub(text.chars().count());
        out.push_str(&text);
        if i + 1 < row.len() {
            out.extend(std::iter::repeat_n(' ', pad));
        }
    }
    out
}

fn md_cell(s: &str) -> String {
    s.replace('|', "\\|").replace('\n', " ")
}

impl Panel for CallbacksPanel {
    fn id(&self) -> String {
        PANEL_ID.to_owned()
    }

    fn title(&self) -> String {
        "Callbacks".to_owned()
    }

    fn kind(&self) -> PanelKind {
        PanelKind::Fixed
    }

    /// Active/defined counts, then `✗N` when N callbacks' latest runs failed (the sidebar
    /// draws a badge with `✗` in red), then the background runs in flight.
    fn activity(&self) -> Vec<String> {
        self.running
            .iter()
            .map(|name| format!("callback {name}"))
            .collect()
    }

    fn badge(&self) -> Option<String> {
        let mut badge = format!("{}/{}", self.active_count(), self.section.definitions.len());
        if !self.failing.is_empty() {
            let _ = write!(badge, " ✗{}", self.failing.len());
        }
        if self.watching > 0 {
            let _ = write!(badge, " ({} running)", self.watching);
        }
        Some(badge)
    }

    #[cfg(feature = "draw")]
    fn scroll_extent(&self, area: Rect) -> ScrollExtent {
        let rows = ScrollExtent::wrapped_rows(&self.lines(area.width), area.width);
        ScrollExtent::top(ScrollExtent::overflow(rows, area.height))
    }

    #[cfg(feature = "draw")]
    fn render(&self, area: Rect, buf: &mut Buffer, view: &PanelView) {
        let scroll = u16::try_from(view.scroll).unwrap_or(u16::MAX);
        Paragraph::new(self.lines(area.width))
            .wrap(Wrap { trim: false })
            .scroll((scroll, 0))
            .render(area, buf);
    }

    /// The script of the callback open in the editor; the edited text is applied with
    /// `Callback_upsert` (action update), so it gets that tool's checks.
    fn external_edit(&self) -> Option<cp_base::ExternalEdit> {
        let editor = self.editor.as_ref()?;
        let def = &editor.def;
        Some(cp_base::ExternalEdit {
            what: format!("{} {}'s script", def.id, def.name),
            file_name: format!("{}.sh", def.name),
            text: editor.script.clone().unwrap_or_default(),
            tool: crate::tools::UPSERT.to_owned(),
            arguments: serde_json::json!({"action": "update", "id": def.id.to_string()}),
            text_param: "script_content".to_owned(),
        })
    }

    fn llm_context(&self) -> String {
        let mut out = String::new();
        if let Some(problem) = &self.problem {
            let _ = writeln!(out, "**Problem:** {problem}\n");
        }
        if self.section.definitions.is_empty() {
            out.push_str(
                "No callbacks are defined. A callback runs a script after your edits to matching \
files (e.g. a build check after `*.rs` edits) and shows you the result with the edit. Create \
one with Callback_upsert, e.g. {\"action\": \"create\", \"name\": \"cargo-check\", \"pattern\": \
\"*.rs\", \"script_content\": \"cargo check 2>&1\", \"blocking\": true, \"timeout\": 300}.\n",
            );
            return out;
        }
        let _ = writeln!(
            out,
            "{} of {} callbacks active for you (worker `{}`).",
            self.active_count(),
            self.section.definitions.len(),
            self.worker
        );
        if self.section.is_paused(&self.worker) {
            out.push_str(
                "All callbacks are PAUSED for you; resume with Callback_toggle {\"id\": \"all\", \"active\": true}.\n",
            );
        }
        out.push_str("\n| ID | Name | Description | Pattern | Blocking | Active |\n");
        out.push_str("|---|---|---|---|---|---|\n");
        for d in &self.section.definitions {
            let patterns: Vec<String> = d.pattern.iter().map(|p| format!("`{p}`")).collect();
            let _ = writeln!(
                out,
                "| {} | {} | {} | {} | {} | {} |",
                d.id,
                md_cell(&d.name),
                md_cell(&d.description),
                md_cell(&patterns.join(" ")),
                blocking_text(d),
                self.active_text(d)
            );
        }
        if let Some(editor) = &self.editor {
            let _ = writeln!(out, "\n### Editor: {} {}\n", editor.def.id, editor.def.name);
            for (label, value) in Self::editor_fields(&editor.def) {
                let _ = writeln!(out, "- {label}: {value}");
            }
            let _ = writeln!(
                out,
                "\nScript `.context-pilot/scripts/{}.sh` (line numbers are not part of it):\n```",
                editor.def.name
            );
            match &editor.script {
                Some(s) => out.push_str(&numbered(s)),
                None => out.push_str("(missing: recreate it with script_content)\n"),
            }
            out.push_str("```\n");
        }
        out
    }
}
