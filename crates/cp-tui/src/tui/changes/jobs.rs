//! The Changes panel's background work: reading the diff (the latest request wins: one read
//! at a time, and a request made meanwhile runs once it ends), and the git actions (revert,
//! commit), each reporting a typed result over the event channel.

use std::path::PathBuf;
use std::sync::Arc;

use cp_git::{FileDiff, Git, MAX_SHOWN_LINES};
use ratatui::text::Span;

use crate::tui::background::{Job, Reporter};
use crate::tui::events::AppEvent;
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

/// What the Changes panel's background work reports.
#[derive(Debug)]
pub enum ChangesMsg {
    /// A reading of the changes (request `generation`), or why git could not give one.
    Loaded {
        generation: u64,
        result: Result<Arc<Snapshot>, String>,
    },
    /// The commit `HEAD` named when a workflow phase started (its diff's base).
    PhaseBase(Option<String>),
    /// A git action ended: what was done, or git's words on why not.
    Done {
        action: Action,
        result: Result<String, String>,
    },
}

/// Reads the changes of the repository holding `dir`.
pub struct Refresh {
    pub dir: PathBuf,
    pub generation: u64,
    /// The last reading, whose highlighting is reused for files that did not change.
    pub previous: Arc<Snapshot>,
    /// Diff against this commit instead of `HEAD` (a workflow phase's start).
    pub base: Option<String>,
}

impl Job for Refresh {
    fn thread_name(&self) -> String {
        format!("cp-changes-{}", self.generation)
    }

    fn what(&self) -> &'static str {
        "reading the changes"
    }

    fn run(self, _progress: &Reporter) -> Option<AppEvent> {
        let git = Git { path_env: None };
        let base = self.base.as_deref();
        let result = git
            .repo_root(&self.dir)
            .and_then(|root| Ok((git.diff_from(&root, base)?, root)))
            .map(|(files, root)| {
                let mut snapshot = Snapshot::reusing(root, files, &self.previous);
                snapshot.base.clone_from(&self.base);
                Arc::new(snapshot)
            })
            .map_err(|e| {
                let text = e.to_string();
                text.trim_end_matches("; the stop gate was skipped")
                    .to_owned()
            });
        Some(AppEvent::Changes(ChangesMsg::Loaded {
            generation: self.generation,
            result,
        }))
    }
}

/// A git action the person confirmed.
#[derive(Debug, Clone)]
pub enum Action {
    RevertHunk { file: FileDiff, hunk: usize },
    RevertFile(FileDiff),
    Commit(String),
}

impl Action {
    /// The action in words, for the panel and the status bar.
    pub fn describe(&self) -> String {
        match self {
            Self::RevertHunk { file, hunk } => {
                format!("reverted hunk {} of {}", hunk + 1, file.path)
            }
            Self::RevertFile(file) => format!("reverted {}", file.path),
            Self::Commit(_) => "committed".to_owned(),
        }
    }
}

/// Reads the commit `HEAD` names when a workflow phase starts.
pub struct PhaseBase {
    pub dir: PathBuf,
}

impl Job for PhaseBase {
    fn thread_name(&self) -> String {
        "cp-changes-base".to_owned()
    }

    fn what(&self) -> &'static str {
        "reading the phase's base commit"
    }

    fn run(self, _progress: &Reporter) -> Option<AppEvent> {
        let head = Git { path_env: None }.head(&self.dir);
        Some(AppEvent::Changes(ChangesMsg::PhaseBase(head)))
    }
}

/// Runs one git action in the repository at `root`.
pub struct Act {
    pub root: PathBuf,
    /// The commit a file is reverted to, when not `HEAD`.
    pub base: Option<String>,
    pub action: Action,
}

impl Job for Act {
    fn thread_name(&self) -> String {
        "cp-changes-git".to_owned()
    }

    fn what(&self) -> &'static str {
        "the git action"
    }

    fn run(self, _progress: &Reporter) -> Option<AppEvent> {
        let git = Git { path_env: None };
        let result = match &self.action {
            Action::RevertHunk { file, hunk } => match file.hunks.get(*hunk) {
                Some(h) => git
                    .revert_hunk(&self.root, file, h)
                    .map(|()| self.action.describe()),
                None => Ok(String::new()),
            },
            Action::RevertFile(file) => git
                .revert_file_to(&self.root, file, self.base.as_deref())
                .map(|()| self.action.describe()),
            Action::Commit(message) => git
                .commit_all(&self.root, message)
                .map(|head| format!("committed {head}")),
        };
        Some(AppEvent::Changes(ChangesMsg::Done {
            action: self.action,
            result: result.map_err(|e| e.to_string()),
        }))
    }
}
