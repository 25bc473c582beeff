//! One reading of the work tree's changes with its code highlighted: what the Changes panel
//! draws from. Data only; the background work that makes it is `jobs.rs`.

use std::path::PathBuf;

use cp_git::{FileDiff, MAX_SHOWN_LINES};
use ratatui::text::Span;

use crate::tui::markdown::highlight;

/// Styled code of one file: per hunk, per line, its spans.
pub type StyledFile = Vec<Vec<Vec<Span<'static>>>>;

/// One reading of the work tree's changes, with the code already highlighted.
#[derive(Debug, Default)]
pub struct Snapshot {
    /// The repository's top directory.
    pub root: PathBuf,
    /// The commit the diff is against when not `HEAD` (a workflow phase's start).
    pub base: Option<String>,
    pub files: Vec<FileDiff>,
    /// `files[i]`'s highlighted lines (empty for a summarised file).
    pub styled: Vec<StyledFile>,
}

impl Snapshot {
    /// Builds a snapshot of `files`, highlighting every file shown in full.
    pub fn new(root: PathBuf, files: Vec<FileDiff>) -> Self {
        Self::reusing(root, files, &Self::default())
    }

    /// Builds a snapshot of `files`, taking the highlighting of each file whose diff is the
    /// same in `previous` from there (a reading every 2 s highlights only what changed).
    pub fn reusing(root: PathBuf, files: Vec<FileDiff>, previous: &Self) -> Self {
        let styled = files
            .iter()
            .map(|file| {
                previous
                    .files
                    .iter()
                    .position(|old| old == file)
                    .and_then(|i| previous.styled.get(i).cloned())
                    .unwrap_or_else(|| style_file(file))
            })
            .collect();
        Self {
            root,
            base: None,
            files,
            styled,
        }
    }
}

/// The language token syntect knows a file by: its extension, or its name (`Makefile`).
fn language(path: &str) -> &str {
    let name = path.rsplit('/').next().unwrap_or(path);
    name.rsplit_once('.').map_or(name, |(_, ext)| ext)
}

/// Highlights each hunk as one block (so a multi-line string keeps its colour).
pub fn style_file(file: &FileDiff) -> StyledFile {
    if file.line_count() > MAX_SHOWN_LINES {
        return Vec::new();
    }
    let language = language(&file.path);
    file.hunks
        .iter()
        .map(|hunk| {
            let mut code = String::new();
            for line in &hunk.lines {
                code.push_str(&line.text);
                code.push('\n');
            }
            let mut styled = highlight::highlight_here(&code, language);
            styled.resize_with(hunk.lines.len(), Vec::new);
            styled
        })
        .collect()
}
