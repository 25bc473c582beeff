//! The Changes panel's git actions: reverting the hunk or the file under the cursor, and
//! committing with the stop gate's suggested message, each confirmed first and run by a
//! background job (`changes::jobs::Act`).

use std::fmt::Write as _;

use crate::background;
use crate::changes::jobs::Act;
use crate::changes::msg::Action as GitAction;
use crate::changes::{Pane, Prompt, PromptKind};
use crate::input::line_edit::LineEdit;
use crate::popup::Confirm;

use super::App;

/// Lines of a hunk the revert question shows before it says how many more.
const SHOWN_LOST_LINES: usize = 12;

impl App {
    /// `r`: asks before reverting the hunk under the cursor, or on the file list the file.
    pub(super) fn ask_revert(&mut self) {
        let c = &self.changes;
        let Some(file) = c.selected_file().cloned() else {
            return;
        };
        // A conflict or a submodule is not the panel's to revert: say why, ask nothing.
        let refused = if file.conflicted {
            Some(cp_git::ReviewError::Conflicted(file.path.clone()))
        } else if file.submodule {
            Some(cp_git::ReviewError::Submodule(file.path.clone()))
        } else {
            None
        };
        if let Some(refused) = refused {
            self.changes.done = None;
            self.changes.error = Some(refused.to_string());
            return;
        }
        let hunk = match c.pane {
            Pane::Diff => c.cursor_hunk(),
            Pane::List => None,
        };
        // A hunk of git's own (not a binary file's bytes) of a modified tracked file.
        let by_hunk = !file.untracked
            && file.kind == cp_git::DiffKind::Modified
            && file.hunks.iter().all(|h| !h.raw.is_empty());
        let single_hunk = file.hunks.len() == 1 && by_hunk;
        let (action, question) = match hunk {
            Some(h) if by_hunk => {
                let lost = lost_lines(file.hunks[h].lines.iter());
                (
                    GitAction::RevertHunk {
                        file: Box::new(file.clone()),
                        hunk: h,
                    },
                    format!(
                        "Revert hunk {} of {}? These changes will be lost:\n\n{lost}",
                        h + 1,
                        file.path
                    ),
                )
            }
            _ => {
                let lost = lost_lines(file.hunks.iter().flat_map(|h| &h.lines));
                let what = match file.kind {
                    cp_git::DiffKind::New => format!("Delete the new file {}?", file.path),
                    _ if single_hunk => format!("Revert {}?", file.path),
                    _ => format!("Revert every change to {}?", file.path),
                };
                (
                    GitAction::RevertFile(Box::new(file.clone())),
                    format!("{what} These changes will be lost:\n\n{lost}"),
                )
            }
        };
        self.changes.pending = Some(action);
        self.modal.confirm = Some(Confirm::Revert(question));
    }

    /// The person's answer to the revert question.
    pub(super) fn answer_revert(&mut self, yes: bool) {
        match (self.changes.pending.take(), yes) {
            (Some(action), true) => self.start_git(action),
            _ => self.ui.flash = Some("Nothing reverted.".into()),
        }
    }

    /// `C`: the commit dialog, with the stop gate's suggested message, or during a merge,
    /// rebase or cherry-pick git's own. Unresolved conflicts are refused, named.
    pub(super) fn open_commit(&mut self) {
        let files = &self.changes.snapshot.files;
        if files.is_empty() {
            self.ui.flash = Some("Nothing to commit.".into());
            return;
        }
        let conflicted: Vec<String> = files
            .iter()
            .filter(|f| f.conflicted)
            .map(|f| f.path.clone())
            .collect();
        if !conflicted.is_empty() {
            self.changes.done = None;
            self.changes.error = Some(cp_git::ReviewError::Unmerged(conflicted).to_string());
            return;
        }
        let prepared = self
            .changes
            .snapshot
            .pending
            .as_ref()
            .and_then(|p| p.subject().map(str::to_owned));
        let mut edit = LineEdit::default();
        edit.set(
            prepared
                .clone()
                .unwrap_or_else(|| self.suggested_commit_message()),
        );
        self.changes.prepared_subject = prepared;
        self.changes.prompt = Some(Prompt {
            kind: PromptKind::Commit,
            edit,
        });
    }

    /// The stop gate's suggestion from its last report, else one from the changed files.
    pub(super) fn suggested_commit_message(&self) -> String {
        let report =
            cp_mod_checkpoint::StopGate::last_report(self.host.project(), self.host.worker());
        let files: Vec<&str> = self
            .changes
            .snapshot
            .files
            .iter()
            .map(|f| f.path.as_str())
            .collect();
        cp_mod_checkpoint::suggest_commit_message(report.as_ref(), &files)
    }

    pub(super) fn start_git(&mut self, action: GitAction) {
        if self.changes.acting {
            self.ui.flash = Some("A git action is still running.".into());
            return;
        }
        let job = Act {
            root: self.changes.snapshot.root.clone(),
            base: self.changes.snapshot.base.clone(),
            action,
        };
        if background::spawn(job, &self.tx).is_ok() {
            self.changes.acting = true;
        }
    }

    /// After a commit: the stop gate's state follows at once (the commit gate is satisfied),
    /// and the conversation says what was committed.
    pub(super) fn committed(&mut self, done: &str) {
        let mut text = String::new();
        let _ = write!(text, "Changes panel: {done}.");
        self.conversation.push_system(text);
        cp_mod_checkpoint::StopGate::note_commit(self.host.project(), self.host.worker());
        self.host.notifier().refresh();
        self.host.registry().try_republish();
    }
}

/// The changed lines of a hunk (or file) as the revert question shows them.
fn lost_lines<'a>(lines: impl Iterator<Item = &'a cp_git::DiffLine>) -> String {
    let changed: Vec<&cp_git::DiffLine> = lines
        .filter(|l| l.kind != cp_git::LineKind::Context)
        .collect();
    let mut out = String::new();
    for line in changed.iter().take(SHOWN_LOST_LINES) {
        let _ = writeln!(out, "{}{}", line.kind.marker(), line.text);
    }
    if changed.len() > SHOWN_LOST_LINES {
        let _ = writeln!(
            out,
            "… and {} more line(s)",
            changed.len() - SHOWN_LOST_LINES
        );
    }
    if changed.is_empty() {
        out.push_str("(an empty file)\n");
    }
    out.push_str("\ny: revert · n: keep");
    out
}
