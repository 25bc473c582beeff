//! One reading of the work tree's changes with its code highlighted: what the Changes panel
//! draws from. Data only; the background work that makes it is `jobs.rs`.
//!
//! A reading highlights what changed since the last one, and at most
//! [`HIGHLIGHT_PER_READING`] lines of it (the selected file first): the rest is drawn in
//! plain code colour and highlighted by the readings after, so a tree of 60,000 new files
//! never keeps a core busy.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::Arc;

use cp_git::{FileDiff, MAX_SHOWN_LINES, Pending, Review};
use ratatui::text::Span;

use crate::markdown::highlight;

/// Styled code of one file: per hunk, per line, its spans.
pub type StyledFile = Vec<Vec<Vec<Span<'static>>>>;

/// The change column is at least as wide as `modified`, so the usual list does not move.
const MIN_KIND_WIDTH: usize = 8;

/// Lines one reading highlights (files already highlighted are taken from the last one).
pub const HIGHLIGHT_PER_READING: usize = 5_000;

/// One reading of the work tree's changes, with the code already highlighted.
#[derive(Debug, Default)]
pub struct Snapshot {
    /// The repository's top directory.
    pub root: PathBuf,
    /// The commit the diff is against when not `HEAD` (a workflow phase's start).
    pub base: Option<String>,
    pub files: Vec<FileDiff>,
    /// `files[i]`'s highlighted lines (`None`: not highlighted yet, drawn plain).
    pub styled: Vec<Option<Arc<StyledFile>>>,
    /// Repositories and worktrees inside the work tree: never committed from here.
    pub nested: Vec<String>,
    /// The repository hides untracked files (`status.showUntrackedFiles=no`).
    pub untracked_hidden: bool,
    /// A merge, rebase or cherry-pick waiting for its commit.
    pub pending: Option<Pending>,
    /// The width of the file list's change column: its longest [`kind_word`].
    pub kind_width: usize,
}

/// A file's change in the panel's words: `conflicted`, `submodule`, else its kind's word.
pub fn kind_word(file: &FileDiff) -> &'static str {
    if file.conflicted {
        "conflicted"
    } else if file.submodule {
        "submodule"
    } else {
        file.kind.word()
    }
}

impl Snapshot {
    /// Builds a snapshot of `files`, highlighting every file shown in full.
    pub fn new(root: PathBuf, files: Vec<FileDiff>) -> Self {
        Self::reusing(root, files, &Self::default())
    }

    /// Builds a snapshot of `files`, taking the highlighting of each file whose diff is the
    /// same in `previous` from there (a reading every 2 s highlights only what changed).
    pub fn reusing(root: PathBuf, files: Vec<FileDiff>, previous: &Self) -> Self {
        let review = Review {
            files,
            ..Review::default()
        };
        Self::of_review(root, review, previous, None)
    }

    /// Builds a snapshot of a reading, highlighting what changed since `previous`: the file
    /// at `selected` first, then the others in order, up to [`HIGHLIGHT_PER_READING`] lines.
    pub fn of_review(
        root: PathBuf,
        review: Review,
        previous: &Self,
        selected: Option<&str>,
    ) -> Self {
        let before: HashMap<&str, usize> = previous
            .files
            .iter()
            .enumerate()
            .map(|(i, f)| (f.path.as_str(), i))
            .collect();
        let mut styled: Vec<Option<Arc<StyledFile>>> = review
            .files
            .iter()
            .map(|file| {
                let i = *before.get(file.path.as_str())?;
                (previous.files[i] == *file)
                    .then(|| previous.styled.get(i).cloned().flatten())
                    .flatten()
            })
            .collect();
        let order = review
            .files
            .iter()
            .position(|f| Some(f.path.as_str()) == selected)
            .into_iter()
            .chain(0..review.files.len());
        let mut budget = HIGHLIGHT_PER_READING;
        for i in order {
            let file = &review.files[i];
            if styled[i].is_some() {
                continue;
            }
            let lines = file.line_count();
            if lines > budget {
                continue;
            }
            budget -= lines;
            styled[i] = Some(Arc::new(style_file(file)));
        }
        let kind_width = review
            .files
            .iter()
            .map(|f| kind_word(f).len())
            .fold(MIN_KIND_WIDTH, usize::max);
        Self {
            root,
            base: None,
            kind_width,
            files: review.files,
            styled,
            nested: review.nested,
            untracked_hidden: review.untracked_hidden,
            pending: None,
        }
    }
}

/// The language token syntect knows a file by: its extension, or its name (`Makefile`).
fn language(path: &str) -> &str {
    let name = path.rsplit('/').next().unwrap_or(path);
    name.rsplit_once('.').map_or(name, |(_, ext)| ext)
}

/// Highlights each hunk as one block (so a multi-line string keeps its colour). A binary
/// file's bytes, a file too long to show and a submodule's commits are not highlighted.
pub fn style_file(file: &FileDiff) -> StyledFile {
    let not_code = file.summary == Some(cp_git::Summary::Binary) || file.submodule;
    if file.line_count() > MAX_SHOWN_LINES || not_code {
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
