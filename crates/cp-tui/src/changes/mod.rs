//! The Changes panel's state: the last reading of the work tree's diff (a snapshot a
//! background job made), the file list and the diff cursor, folds, review comments, and the
//! prompt open in the panel (a comment, a search, a commit message).
//!
//! The panel is the host's own, like the conversation: it is drawn from this state by
//! `changes_view.rs`, changed by `app/changes.rs`, and read by background jobs (`jobs.rs`).

#[cfg(test)]
mod changes_tests;
pub mod changes_view;
pub mod comments;
pub mod jobs;
pub mod msg;
pub mod rows;
pub mod snapshot;

use std::collections::BTreeSet;
use std::sync::Arc;
use std::time::{Duration, Instant};

use cp_git::{FileDiff, Hunk, LineKind};

use crate::input::line_edit::LineEdit;
use comments::ReviewComment;
use rows::Row;
use snapshot::Snapshot;

/// The sidebar id of the Changes panel.
pub const ID: &str = "changes";

/// Columns one → or ← scrolls the diff's lines by.
pub const HSCROLL_STEP: usize = 8;

/// While the agent works (or the panel is shown), the changes are read again this often.
pub const REFRESH_EVERY: Duration = Duration::from_secs(2);

/// A reading that took long waits this many times as long before the next timed one, so
/// reading a huge tree never takes more than a tenth of a core.
const SLOW_READING_FACTOR: u32 = 10;

/// Which half of the panel has the keys.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Pane {
    #[default]
    List,
    Diff,
}

/// What the one-line prompt at the panel's foot is for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PromptKind {
    /// A comment on line `line` of hunk `hunk` of the selected file.
    Comment {
        hunk: usize,
        line: usize,
    },
    Search,
    /// The commit message (a dialog over the panel).
    Commit,
}

/// A prompt being typed.
#[derive(Debug, Clone)]
pub struct Prompt {
    pub kind: PromptKind,
    pub edit: LineEdit,
}

/// When to read the changes again: one reading at a time, the latest request wins.
#[derive(Debug)]
pub struct RefreshState {
    /// A reading runs now (its generation).
    pub running: Option<u64>,
    /// Something changed since that reading started: read again when it ends.
    pub wanted: bool,
    pub generation: u64,
    /// When the last reading started.
    pub last: Option<Instant>,
    /// How long the last reading took.
    pub took: Duration,
}

impl Default for RefreshState {
    fn default() -> Self {
        Self {
            running: None,
            wanted: true,
            generation: 0,
            last: None,
            took: Duration::ZERO,
        }
    }
}

impl RefreshState {
    /// The time between timed readings: [`REFRESH_EVERY`], longer after a slow reading.
    pub fn interval(&self) -> Duration {
        REFRESH_EVERY.max(self.took * SLOW_READING_FACTOR)
    }
}

/// The Changes panel.
#[derive(Debug, Default)]
#[expect(
    clippy::struct_excessive_bools,
    reason = "independent flags of the panel (keys, first reading, queued send, git running), \
              not states of one machine"
)]
pub struct Changes {
    /// The panel has the keys (Enter, a click or F3 on it; Esc gives them back to the
    /// sidebar), so j/k in the sidebar pass over it like any other panel.
    pub engaged: bool,
    pub snapshot: Arc<Snapshot>,
    /// Git's words when the last reading or action failed (shown in red).
    pub error: Option<String>,
    /// What the last action did.
    pub done: Option<String>,
    /// Whether a reading has arrived at all.
    pub loaded_once: bool,
    /// The files the saved state counted: the badge until the first reading arrives (so a
    /// reload or a restart does not blink it).
    pub restored_files: Option<usize>,
    /// The selected file (index into the snapshot's files).
    pub file: usize,
    pub pane: Pane,
    /// The diff cursor: a row of `rows`.
    pub cursor: usize,
    /// The first diff row shown (kept so the cursor stays in view).
    pub scroll: usize,
    /// Columns of code scrolled off to the left in the diff (→ in the diff), so a line wider
    /// than the panel can be read to its end.
    pub hscroll: usize,
    /// The selected file's diff rows.
    pub rows: Vec<Row>,
    /// Folded files, by path.
    pub folded: BTreeSet<String>,
    /// Summarised files the person asked to see anyway, by path.
    pub loaded: BTreeSet<String>,
    pub comments: Vec<ReviewComment>,
    pub prompt: Option<Prompt>,
    /// The last search, for `/` then Enter again.
    pub last_search: String,
    /// `S` was pressed while the agent worked: the comments go when its turn ends.
    pub send_queued: bool,
    /// A revert waiting for the person's yes.
    pub pending: Option<msg::Action>,
    /// The commit dialog offers git's prepared message (a merge's): its first line, which
    /// Enter left unchanged commits with git's whole message.
    pub prepared_subject: Option<String>,
    /// A git action runs.
    pub acting: bool,
    /// The commit `HEAD` named when the workflow's current phase started.
    pub phase_base: Option<String>,
    /// Reviewing at an approval gate: the diff is the phase's, from `phase_base`.
    pub scoped: bool,
    pub refresh: RefreshState,
}

impl Changes {
    /// The sidebar badge: changed files, and open comments after a `·`.
    pub fn badge(&self) -> Option<String> {
        let files = if self.loaded_once {
            self.snapshot.files.len()
        } else {
            self.restored_files.unwrap_or(0)
        };
        let open = self.open_comments();
        match (files, open) {
            (0, 0) => None,
            (n, 0) => Some(n.to_string()),
            (n, c) => Some(format!("{n} · {c}✎")),
        }
    }

    /// Comments not yet sent.
    pub fn open_comments(&self) -> usize {
        self.comments.iter().filter(|c| !c.sent).count()
    }

    pub fn selected_file(&self) -> Option<&FileDiff> {
        self.snapshot.files.get(self.file)
    }

    /// The hunk and line under the diff cursor, if it is on a hunk line.
    pub fn cursor_line(&self) -> Option<(usize, usize)> {
        match self.rows.get(self.cursor)? {
            Row::Line(h, l) => Some((*h, *l)),
            _ => None,
        }
    }

    /// The hunk the diff cursor is in.
    pub fn cursor_hunk(&self) -> Option<usize> {
        match self.rows.get(self.cursor)? {
            Row::Header(h) | Row::Line(h, _) => Some(*h),
            Row::Comment(_) => self.rows[..self.cursor].iter().rev().find_map(|r| match r {
                Row::Line(h, _) => Some(*h),
                _ => None,
            }),
            _ => None,
        }
    }

    /// Takes a new reading: keeps the selected file (by path), drops the sent comments
    /// whose line changed, lays the diff out again.
    pub fn set_snapshot(&mut self, snapshot: Arc<Snapshot>) {
        let path = self.selected_file().map(|f| f.path.clone());
        self.snapshot = snapshot;
        self.loaded_once = true;
        self.file = path
            .and_then(|p| self.snapshot.files.iter().position(|f| f.path == p))
            .unwrap_or(self.file)
            .min(self.snapshot.files.len().saturating_sub(1));
        comments::drop_stale(&mut self.comments, &self.snapshot.files);
        self.relayout();
    }

    /// Lays out the selected file's rows again (after a change of file, fold, load or
    /// comments), keeping the cursor in range.
    pub fn relayout(&mut self) {
        self.rows = match self.selected_file() {
            Some(file) => rows::lay_out(
                file,
                self.folded.contains(&file.path),
                self.loaded.contains(&file.path),
                &self.comments,
            ),
            None => Vec::new(),
        };
        self.cursor = self.cursor.min(self.rows.len().saturating_sub(1));
    }

    /// Selects file `index` (clamped), with the diff cursor on its first change.
    pub fn select_file(&mut self, index: usize) {
        let last = self.snapshot.files.len().saturating_sub(1);
        let index = index.min(last);
        if index != self.file {
            self.file = index;
            self.cursor = 0;
            self.scroll = 0;
            self.hscroll = 0;
        }
        self.relayout();
        if self.cursor == 0 {
            self.cursor = self.first_change().unwrap_or(0);
        }
    }

    fn first_change(&self) -> Option<usize> {
        let file = self.selected_file()?;
        self.rows.iter().position(|r| match r {
            Row::Line(h, l) => file.hunks[*h].lines[*l].kind != LineKind::Context,
            _ => false,
        })
    }

    /// Moves by `delta` in the focused pane.
    pub fn move_by(&mut self, delta: isize) {
        match self.pane {
            Pane::List => self.select_file(self.file.saturating_add_signed(delta)),
            Pane::Diff => {
                self.cursor = self
                    .cursor
                    .saturating_add_signed(delta)
                    .min(self.rows.len().saturating_sub(1));
            }
        }
    }

    /// → : into the diff, then further right along its lines (never past the widest one).
    pub fn right(&mut self) {
        if self.pane == Pane::Diff {
            let widest = self.widest_line();
            self.hscroll = (self.hscroll + HSCROLL_STEP).min(widest.saturating_sub(1));
        } else {
            self.pane = Pane::Diff;
        }
    }

    /// ← : back towards the lines' start, then to the file list.
    pub fn left(&mut self) {
        if self.pane == Pane::Diff && self.hscroll > 0 {
            self.hscroll = self.hscroll.saturating_sub(HSCROLL_STEP);
        } else {
            self.pane = Pane::List;
        }
    }

    /// The display width of the selected file's widest diff line (tabs as four columns).
    fn widest_line(&self) -> usize {
        self.selected_file().map_or(0, |file| {
            file.hunks
                .iter()
                .flat_map(|h| &h.lines)
                .map(|l| {
                    unicode_width::UnicodeWidthStr::width(l.text.as_str())
                        + 3 * l.text.matches('\t').count()
                })
                .max()
                .unwrap_or(0)
        })
    }

    /// Moves the diff cursor to the next (or previous) hunk's header, into the next file's
    /// first hunk past the last one.
    pub fn jump_hunk(&mut self, forward: bool) {
        self.pane = Pane::Diff;
        let headers: Vec<usize> = self
            .rows
            .iter()
            .enumerate()
            .filter(|(_, r)| matches!(r, Row::Header(_)))
            .map(|(i, _)| i)
            .collect();
        let target = if forward {
            headers.iter().copied().find(|&i| i > self.cursor)
        } else {
            headers.iter().rev().copied().find(|&i| i < self.cursor)
        };
        match target {
            Some(i) => self.cursor = i,
            None if forward && self.file + 1 < self.snapshot.files.len() => {
                self.select_file(self.file + 1);
                self.cursor = 0;
            }
            None if !forward && self.file > 0 => {
                self.select_file(self.file - 1);
                self.cursor = self
                    .rows
                    .iter()
                    .rposition(|r| matches!(r, Row::Header(_)))
                    .unwrap_or(0);
            }
            None => {}
        }
    }

    /// Folds or unfolds the selected file.
    pub fn toggle_fold(&mut self) {
        if let Some(path) = self.selected_file().map(|f| f.path.clone())
            && !self.folded.remove(&path)
        {
            self.folded.insert(path);
        }
        self.cursor = 0;
        self.relayout();
    }

    /// Shows a summarised file's diff anyway; returns whether it must be read first (a
    /// binary file's bytes, a new file not read yet).
    pub fn load_anyway(&mut self) -> bool {
        let Some(file) = self.selected_file() else {
            return false;
        };
        let path = file.path.clone();
        let read = file.hunks.is_empty()
            && matches!(
                file.summary,
                Some(cp_git::Summary::Binary | cp_git::Summary::Unread)
            );
        self.loaded.insert(path);
        self.relayout();
        read
    }

    /// Moves to the next place that contains `query` (case-insensitive), after the cursor
    /// and in the files after the selected one; returns whether one was found.
    pub fn search(&mut self, query: &str) -> bool {
        let query = query.to_lowercase();
        if query.is_empty() {
            return false;
        }
        let files = self.snapshot.files.len();
        for step in 0..=files {
            let index = (self.file + step) % files.max(1);
            let Some(file) = self.snapshot.files.get(index) else {
                return false;
            };
            let from = if step == 0 { self.cursor + 1 } else { 0 };
            let rows = if index == self.file {
                self.rows.clone()
            } else {
                rows::lay_out(file, false, true, &self.comments)
            };
            let hit = rows.iter().enumerate().skip(from).find(|(_, r)| match r {
                Row::Line(h, l) => file.hunks[*h].lines[*l]
                    .text
                    .to_lowercase()
                    .contains(&query),
                _ => false,
            });
            if let Some((row, _)) = hit {
                if index != self.file {
                    self.folded.remove(&file.path.clone());
                    self.select_file(index);
                }
                self.cursor = row;
                self.pane = Pane::Diff;
                return true;
            }
            if step > 0 && file.path.to_lowercase().contains(&query) {
                self.select_file(index);
                return true;
            }
        }
        false
    }

    /// The hunk `hunk` of the selected file.
    pub fn hunk(&self, hunk: usize) -> Option<&Hunk> {
        self.selected_file()?.hunks.get(hunk)
    }

    /// Keeps the cursor within `height` rows of the shown window.
    pub fn keep_cursor_visible(&mut self, height: usize) {
        self.scroll = visible_from(self.scroll, self.cursor, height);
    }

    /// Whether a reading should start now: wanted, or due while `active` (the agent works or
    /// the panel is shown), and none running.
    pub fn refresh_due(&self, active: bool) -> bool {
        self.refresh.running.is_none()
            && (self.refresh.wanted
                || (active
                    && self
                        .refresh
                        .last
                        .is_none_or(|t| t.elapsed() >= self.refresh.interval())))
    }
}

/// The first row to show of a window of `height` rows that was at `scroll`, so `cursor` is
/// in it.
pub fn visible_from(scroll: usize, cursor: usize, height: usize) -> usize {
    if height == 0 {
        return scroll;
    }
    if cursor < scroll {
        cursor
    } else if cursor >= scroll + height {
        cursor + 1 - height
    } else {
        scroll
    }
}
