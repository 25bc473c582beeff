//! File viewer panels: read-only views of project files a person asked to see (the files a
//! workflow checkpoint lists for review). A view follows its file: when the file's size or
//! modification time changes on disk, the next tick reads it again.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant, SystemTime};

#[cfg(feature = "draw")]
use cp_base::ratatui::buffer::Buffer;
#[cfg(feature = "draw")]
use cp_base::ratatui::layout::Rect;
#[cfg(feature = "draw")]
use cp_base::ratatui::style::Style;
#[cfg(feature = "draw")]
use cp_base::ratatui::text::{Line, Span};
#[cfg(feature = "draw")]
use cp_base::theme;
use cp_base::{Module, Panel, ToolDef, ToolEnv, ToolOutcome, ToolResult, ToolTable};
#[cfg(feature = "draw")]
use cp_base::{PanelView, ScrollExtent};
use serde_json::Value;

/// Longest file shown; the rest is cut with a note, so a huge file cannot stall rendering.
const MAX_BYTES: usize = 2 * 1024 * 1024;
/// How often the open files are checked for changes on disk (a `stat` each).
const RECHECK: Duration = Duration::from_millis(500);

/// What tells a changed file apart: its size and modification time.
type Stamp = Option<(u64, SystemTime)>;

/// One opened file, as last read.
#[derive(Debug, Clone)]
pub struct FileView {
    /// The project root the path is relative to.
    root: PathBuf,
    path: String,
    lines: Vec<String>,
    /// The file's stamp when it was read.
    stamp: Stamp,
}

/// The size and modification time of `path`, if it can be read.
fn stamp_of(path: &Path) -> Stamp {
    let meta = std::fs::metadata(path).ok()?;
    Some((meta.len(), meta.modified().ok()?))
}

impl Panel for FileView {
    fn id(&self) -> String {
        format!("file:{}", self.path)
    }

    fn title(&self) -> String {
        self.path.clone()
    }

    #[cfg(feature = "draw")]
    fn scroll_extent(&self, area: Rect) -> ScrollExtent {
        ScrollExtent::top(ScrollExtent::overflow(self.lines.len(), area.height))
    }

    #[cfg(feature = "draw")]
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
                    Style::default().fg(theme::MUTED),
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
    pub fn open(&self, root: &Path, relative: &str) -> Result<String, ViewerError> {
        let view = read_view(root, relative)?;
        let id = view.id();
        let mut views = self.lock();
        views.retain(|v| v.id() != id);
        views.push(Arc::new(view));
        Ok(id)
    }

    /// Reads again every open file whose stamp changed on disk; returns whether any did. A
    /// file that can no longer be read keeps its last content.
    pub fn refresh(&self) -> bool {
        let open: Vec<Arc<FileView>> = self.lock().clone();
        let fresh: Vec<FileView> = open
            .iter()
            .filter(|v| stamp_of(&v.root.join(&v.path)) != v.stamp)
            .filter_map(|v| read_view(&v.root, &v.path).ok())
            .collect();
        if fresh.is_empty() {
            return false;
        }
        let mut views = self.lock();
        for view in fresh {
            let id = view.id();
            // Replaced in place, so the sidebar keeps its order; a view closed meanwhile
            // stays closed.
            if let Some(slot) = views.iter_mut().find(|v| v.id() == id) {
                *slot = Arc::new(view);
            }
        }
        true
    }
}

/// Reads `relative` (inside `root`) into a view.
fn read_view(root: &Path, relative: &str) -> Result<FileView, ViewerError> {
    // Beneath the root without a race, regular files only (a FIFO named by a workflow's
    // `show_files` must not hang the TUI), and no more than is shown.
    let (confined, file) = cp_mod_files::open_regular(root, relative, "view")
        .map_err(|e| ViewerError::Open(Box::new(e)))?;
    // Taken before reading: a write during the read shows up at the next check.
    let stamp = file
        .metadata()
        .ok()
        .and_then(|m| Some((m.len(), m.modified().ok()?)));
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
    Ok(FileView {
        root: root.to_path_buf(),
        path: confined.relative,
        lines: text.lines().map(str::to_owned).collect(),
        stamp,
    })
}

/// The viewer's tools: none (files open from the UI). The table keeps the viewer dispatching
/// as every module does.
static TOOLS: ToolTable<fn(&mut ViewerModule) -> ToolOutcome> = ToolTable::new(&[]);

/// Lists the open file views in the sidebar; closing one removes it.
#[derive(Debug, Default)]
pub struct ViewerModule {
    viewer: Viewer,
    /// The list as of the last tick (the published panels).
    shown: Vec<Arc<FileView>>,
    /// When the files were last checked for changes on disk.
    checked: Option<Instant>,
}

impl ViewerModule {
    pub fn new(viewer: Viewer) -> Self {
        Self {
            viewer,
            shown: Vec::new(),
            checked: None,
        }
    }
}

impl Module for ViewerModule {
    fn id(&self) -> &'static str {
        "viewer"
    }

    fn tools(&self) -> Vec<ToolDef> {
        TOOLS.defs()
    }

    fn call_tool(&mut self, name: &str, _args: &Value, _env: &ToolEnv) -> ToolOutcome {
        match TOOLS.get(name) {
            Some(tool) => (tool.handler)(self),
            None => ToolResult::error(format!("viewer has no tool '{name}'")).into(),
        }
    }

    fn panels(&self) -> Vec<Arc<dyn Panel>> {
        self.shown
            .iter()
            .map(|v| Arc::clone(v) as Arc<dyn Panel>)
            .collect()
    }

    fn on_tick(&mut self, _env: &ToolEnv) -> bool {
        if !self.shown.is_empty() && self.checked.is_none_or(|t| t.elapsed() >= RECHECK) {
            self.checked = Some(Instant::now());
            self.viewer.refresh();
        }
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

    #[test]
    fn an_open_view_follows_its_file_on_disk() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        std::fs::write(root.join("plan.md"), "draft\n").unwrap();
        let viewer = Viewer::default();
        let id = viewer.open(&root, "plan.md").unwrap();
        assert!(!viewer.refresh(), "nothing changed yet");
        std::fs::write(root.join("plan.md"), "final plan\nwith a second line\n").unwrap();
        assert!(viewer.refresh());
        let lines = |viewer: &Viewer| {
            let views = viewer.lock();
            views.iter().find(|v| v.id() == id).unwrap().lines.clone()
        };
        assert_eq!(lines(&viewer), ["final plan", "with a second line"]);
        assert!(!viewer.refresh(), "read once per change");
        // A file that went away keeps its last content.
        std::fs::remove_file(root.join("plan.md")).unwrap();
        viewer.refresh();
        assert_eq!(lines(&viewer), ["final plan", "with a second line"]);
    }

    #[test]
    fn the_module_publishes_the_new_content_on_tick() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        std::fs::write(root.join("a.md"), "one\n").unwrap();
        let viewer = Viewer::default();
        viewer.open(&root, "a.md").unwrap();
        let mut module = ViewerModule::new(viewer);
        let env = ToolEnv::new(
            cp_base::Project::at(&root),
            cp_base::WorkerId::default(),
            cp_base::Notifier::new(),
        );
        assert!(module.on_tick(&env));
        std::fs::write(root.join("a.md"), "one\ntwo\n").unwrap();
        module.checked = None;
        assert!(module.on_tick(&env), "the change is published");
        let mut buf = Buffer::empty(Rect::new(0, 0, 10, 3));
        module.panels()[0].render(buf.area, &mut buf, &PanelView::default());
        let row = |y: u16| (0..10).map(|x| buf[(x, y)].symbol()).collect::<String>();
        assert_eq!(row(1).trim_end(), "2 two");
    }
}
