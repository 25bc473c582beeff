//! File viewer panels: read-only views of project files a person asked to see (the files a
//! workflow checkpoint lists for review).

use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use cp_base::ratatui::buffer::Buffer;
use cp_base::ratatui::layout::Rect;
use cp_base::ratatui::style::{Color, Style};
use cp_base::ratatui::text::{Line, Span};
use cp_base::{Module, Panel, PanelView, ScrollExtent, ToolDef, ToolEnv, ToolOutcome, ToolResult};
use serde_json::Value;

/// Longest file shown; the rest is cut with a note, so a huge file cannot stall rendering.
const MAX_BYTES: usize = 2 * 1024 * 1024;

/// One opened file, read when it was opened.
#[derive(Debug, Clone)]
pub struct FileView {
    path: String,
    lines: Vec<String>,
}

impl Panel for FileView {
    fn id(&self) -> String {
        format!("file:{}", self.path)
    }

    fn title(&self) -> String {
        self.path.clone()
    }

    fn scroll_extent(&self, area: Rect) -> ScrollExtent {
        ScrollExtent::top(ScrollExtent::overflow(self.lines.len(), area.height))
    }

    fn render(&self, area: Rect, buf: &mut Buffer, view: &PanelView) {
        let width = self.lines.len().to_string().len();
        for (row, (n, line)) in self
            .lines
            .iter()
            .enumerate()
            .skip(view.scroll)
            .take(usize::from(area.height))
            .enumerate()
        {
            let y = area.y + u16::try_from(row).unwrap_or(u16::MAX);
            let text = Line::from(vec![
                Span::styled(
                    format!("{:>width$} ", n + 1),
                    Style::default().fg(Color::DarkGray),
                ),
                Span::raw(line.clone()),
            ]);
            buf.set_line(area.x, y, &text, area.width);
        }
    }

    fn llm_context(&self) -> String {
        String::new()
    }
}

/// Why a file cannot be shown.
#[derive(Debug, thiserror::Error)]
pub enum ViewerError {
    /// Outside the root, not a regular file, or not there (the file tools' own message).
    #[error(transparent)]
    Open(#[from] Box<cp_mod_files::FileError>),
    #[error("cannot read {path}: {source}")]
    Read {
        path: String,
        source: std::io::Error,
    },
}

/// Shared list of open file views: the UI opens files, the module lists them as panels.
#[derive(Debug, Clone, Default)]
pub struct Viewer {
    views: Arc<Mutex<Vec<Arc<FileView>>>>,
}

impl Viewer {
    fn lock(&self) -> MutexGuard<'_, Vec<Arc<FileView>>> {
        self.views.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Opens `relative` (inside `root`) and returns its panel id, or why it cannot be shown.
    pub fn open(&self, root: &std::path::Path, relative: &str) -> Result<String, ViewerError> {
        // Beneath the root without a race, regular files only (a FIFO named by a workflow's
        // `show_files` must not hang the TUI), and no more than is shown.
        let (confined, file) = cp_mod_files::open_regular(root, relative, "view")
            .map_err(|e| ViewerError::Open(Box::new(e)))?;
        let mut bytes = Vec::new();
        std::io::Read::read_to_end(
            &mut std::io::Read::take(file, u64::try_from(MAX_BYTES).unwrap_or(u64::MAX) + 1),
            &mut bytes,
        )
        .map_err(|source| ViewerError::Read {
            path: relative.to_owned(),
            source,
        })?;
        let cut = bytes.len() > MAX_BYTES;
        let mut text = String::from_utf8_lossy(&bytes[..bytes.len().min(MAX_BYTES)]).into_owned();
        if cut {
            text.push_str("\n[… file cut at 2 MiB]");
        }
        let view = FileView {
            path: confined.relative,
            lines: text.lines().map(str::to_owned).collect(),
        };
        let id = view.id();
        let mut views = self.lock();
        views.retain(|v| v.id() != id);
        views.push(Arc::new(view));
        Ok(id)
    }
}

/// Lists the open file views in the sidebar; closing one removes it.
#[derive(Debug, Default)]
pub struct ViewerModule {
    viewer: Viewer,
    /// The list as of the last tick (the published panels).
    shown: Vec<Arc<FileView>>,
}

impl ViewerModule {
    pub fn new(viewer: Viewer) -> Self {
        Self {
            viewer,
            shown: Vec::new(),
        }
    }
}

impl Module for ViewerModule {
    fn id(&self) -> &'static str {
        "viewer"
    }

    fn tools(&self) -> Vec<ToolDef> {
        Vec::new()
    }

    fn call_tool(&mut self, name: &str, _args: &Value, _env: &ToolEnv) -> ToolOutcome {
        ToolResult::error(format!("viewer has no tool '{name}'")).into()
    }

    fn panels(&self) -> Vec<Arc<dyn Panel>> {
        self.shown
            .iter()
            .map(|v| Arc::clone(v) as Arc<dyn Panel>)
            .collect()
    }

    fn on_tick(&mut self, _env: &ToolEnv) -> bool {
        let current = self.viewer.lock().clone();
        let changed = current.len() != self.shown.len()
            || current
                .iter()
                .zip(&self.shown)
                .any(|(a, b)| a.path != b.path || a.lines != b.lines);
        self.shown = current;
        changed
    }

    fn close_panel(&mut self, panel_id: &str) -> bool {
        let mut views = self.viewer.lock();
        let before = views.len();
        views.retain(|v| v.id() != panel_id);
        let closed = views.len() < before;
        self.shown.clone_from(&views);
        closed
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_fifo_is_refused_without_hanging_and_a_file_opens() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        let fifo = root.join("pipe");
        let c_path = std::ffi::CString::new(fifo.as_os_str().as_encoded_bytes()).unwrap();
        // SAFETY: mkfifo(3) with a valid NUL-terminated path.
        assert_eq!(unsafe { libc::mkfifo(c_path.as_ptr(), 0o600) }, 0);
        std::fs::write(root.join("notes.md"), "one\ntwo\n").unwrap();
        let viewer = Viewer::default();
        let err = viewer.open(&root, "pipe").unwrap_err().to_string();
        assert!(err.contains("not a regular file"), "{err}");
        assert!(viewer.open(&root, "../outside.md").is_err());
        let id = viewer.open(&root, "notes.md").unwrap();
        let views = viewer.lock();
        let view = views.iter().find(|v| v.id() == id).unwrap();
        assert_eq!(view.lines, ["one", "two"]);
    }
}
