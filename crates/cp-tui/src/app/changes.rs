//! The Changes panel's commands and events: moving, folding, searching, commenting, sending
//! the comments to the agent, and reading the changes again when the work tree may have
//! changed. Reverting and committing are in `git_actions.rs`.

use crate::background::{self, Job, Reporter};
use crate::changes::comments::{self, ReviewComment};
use crate::changes::jobs::{self, Act, Refresh};
use crate::changes::msg::{Action as GitAction, ChangesMsg};
use crate::changes::{self, Pane, Prompt, PromptKind};
use crate::conversation::Entry;
use crate::events::AppEvent;
use crate::input::line_edit::{EditOp, LineEdit};
use crate::keymap::{Action, ReviewKey};
use crate::panels::Focus;

use super::App;

impl App {
    /// Whether the Changes panel has the keys (selected, engaged, with the sidebar focused).
    pub(super) fn changes_focused(&self) -> bool {
        self.changes.engaged && self.changes_selected()
    }

    /// Whether the panel's prompt (a comment, a search, the commit message) is open and
    /// shown: a prompt left behind when another panel was selected takes no keys.
    pub(super) fn review_prompt_open(&self) -> bool {
        self.changes.prompt.is_some() && self.ui.nav.selected() == changes::ID
    }

    /// Whether the Changes panel is the one shown, with the sidebar focused.
    pub(super) fn changes_selected(&self) -> bool {
        self.ui.focus == Focus::Sidebar && self.ui.nav.selected() == changes::ID
    }

    /// Gives the keys to the Changes panel (Enter or a click on it).
    pub(super) fn engage_changes(&mut self) {
        self.changes.engaged = true;
        self.keep_review_cursor_visible();
    }

    /// Runs one key of the Changes panel.
    pub(super) fn review_key(&mut self, key: ReviewKey) {
        let c = &mut self.changes;
        c.done = None;
        match key {
            ReviewKey::Up => c.move_by(-1),
            ReviewKey::Down => c.move_by(1),
            ReviewKey::NextHunk => c.jump_hunk(true),
            ReviewKey::PrevHunk => c.jump_hunk(false),
            ReviewKey::SwitchPane => {
                c.pane = match c.pane {
                    Pane::List => Pane::Diff,
                    Pane::Diff => Pane::List,
                };
            }
            ReviewKey::ToList => c.left(),
            ReviewKey::ToDiff => c.right(),
            ReviewKey::Fold => c.toggle_fold(),
            ReviewKey::Load => {
                if c.load_anyway() {
                    self.changes_may_have_changed();
                }
            }
            ReviewKey::Search => {
                c.prompt = Some(Prompt {
                    kind: PromptKind::Search,
                    edit: LineEdit::default(),
                });
            }
            ReviewKey::Comment => self.open_comment(),
            ReviewKey::Clear => self.clear_comment(),
            ReviewKey::Send => self.send_comments(),
            ReviewKey::Revert => self.ask_revert(),
            ReviewKey::Commit => self.open_commit(),
        }
        self.keep_review_cursor_visible();
    }

    fn keep_review_cursor_visible(&mut self) {
        let inner = crate::view::panel_inner_area(&self.view_model(), self.ui.size);
        let files = self.changes.snapshot.files.len();
        let list = crate::changes::changes_view::list_height(files, inner.height);
        // The status row, the list, the file's title row (and a prompt row).
        let used =
            2 + list + u16::from(self.changes.error.is_some() || self.changes.done.is_some());
        let height = inner.height.saturating_sub(used);
        self.changes.keep_cursor_visible(usize::from(height));
    }

    /// PgUp/PgDn in the panel: ten rows of the diff.
    pub(super) fn review_page(&mut self, lines: usize, up: bool) {
        self.changes.pane = Pane::Diff;
        let delta = isize::try_from(lines).unwrap_or(10);
        self.changes.move_by(if up { -delta } else { delta });
        self.keep_review_cursor_visible();
    }

    fn open_comment(&mut self) {
        let c = &mut self.changes;
        if c.pane == Pane::List {
            c.pane = Pane::Diff;
        }
        match c.cursor_line() {
            Some((hunk, line)) => {
                c.prompt = Some(Prompt {
                    kind: PromptKind::Comment { hunk, line },
                    edit: LineEdit::default(),
                });
            }
            None => self.ui.flash = Some("Move to a diff line to comment on it (↓, n).".into()),
        }
    }

    /// `x`: drops the comment under the cursor (or on its line).
    fn clear_comment(&mut self) {
        let c = &mut self.changes;
        let index = match c.rows.get(c.cursor) {
            Some(changes::rows::Row::Comment(i)) => Some(*i),
            Some(changes::rows::Row::Line(h, l)) => c.selected_file().and_then(|f| {
                let line = &f.hunks[*h].lines[*l];
                c.comments
                    .iter()
                    .position(|cm| cm.path == f.path && cm.is_on(line))
            }),
            _ => None,
        };
        if let Some(i) = index {
            c.comments.remove(i);
            c.relayout();
            self.life.autosave.mark();
        }
    }

    /// Types into the panel's prompt; Enter finishes it, Esc drops it.
    pub(super) fn apply_review_prompt(&mut self, action: Action) {
        let Some(prompt) = self.changes.prompt.as_mut() else {
            return;
        };
        let op = match action {
            Action::Submit => {
                let prompt = self.changes.prompt.take();
                if let Some(prompt) = prompt {
                    self.finish_prompt(&prompt);
                }
                return;
            }
            Action::Back => {
                self.changes.prompt = None;
                return;
            }
            Action::Char(c) => EditOp::Insert(c),
            Action::Paste(s) => EditOp::InsertStr(s.replace('\n', " ")),
            Action::Backspace => EditOp::Backspace,
            Action::Delete => EditOp::Delete,
            Action::Left => EditOp::Left,
            Action::Right => EditOp::Right,
            Action::Home => EditOp::LineStart,
            Action::End => EditOp::LineEnd,
            Action::Edit(op) => op,
            Action::Quit => {
                self.changes.prompt = None;
                self.request_quit();
                return;
            }
            _ => return,
        };
        prompt.edit.apply(op);
    }

    fn finish_prompt(&mut self, prompt: &Prompt) {
        let text = prompt.edit.text().trim().to_owned();
        match prompt.kind {
            PromptKind::Comment { hunk, line } => {
                if text.is_empty() {
                    return;
                }
                let c = &mut self.changes;
                let comment = c
                    .selected_file()
                    .and_then(|file| ReviewComment::new(file, file.hunks.get(hunk)?, line, text));
                if let Some(comment) = comment {
                    c.comments.push(comment);
                    c.relayout();
                    self.life.autosave.mark();
                }
            }
            PromptKind::Search => {
                // An empty search finds the last one again.
                let text = if text.is_empty() {
                    self.changes.last_search.clone()
                } else {
                    text
                };
                self.changes.last_search.clone_from(&text);
                if !self.changes.search(&text) {
                    self.ui.flash = Some(format!("No change contains `{text}`."));
                }
                self.keep_review_cursor_visible();
            }
            PromptKind::Commit => {
                let prepared = self.changes.prepared_subject.take();
                let message = if prepared.as_deref() == Some(text.as_str()) {
                    cp_git::CommitMessage::Prepared
                } else {
                    cp_git::CommitMessage::Typed(text)
                };
                let files = self.changes.snapshot.files.clone();
                self.start_git(GitAction::Commit { message, files });
            }
        }
    }

    /// F3: the Changes panel with the keys; at an approval gate (hidden meanwhile, F2 shows
    /// it), the comments sent from there become the feedback of its repeat option.
    pub(super) fn review_changes(&mut self) {
        self.select(changes::ID);
        self.ui.focus = Focus::Sidebar;
        self.changes.engaged = true;
        if let Some(dialog) = &mut self.modal.dialog {
            dialog.hidden = true;
            self.changes.scoped = true;
            self.ui.flash = Some(if dialog.repeat_choice().is_some() {
                "Review the phase's changes: S sends your comments as its feedback (the phase runs again)."
                    .into()
            } else {
                "Review the phase's changes; F2 shows the approval gate again.".into()
            });
        }
        self.changes_may_have_changed();
    }

    /// A workflow phase starts: remember where its changes begin (read off the UI thread).
    pub(super) fn phase_started(&mut self) {
        let job = jobs::PhaseBase {
            dir: self.host.project().root().to_path_buf(),
        };
        // A job that cannot start was reported; the review then shows HEAD's diff.
        let _ = background::spawn(job, &self.tx);
    }

    /// `S`: sends every open comment to the agent as one message (once its turn ends, if it
    /// is working); at an approval gate, as the feedback of its repeat option.
    fn send_comments(&mut self) {
        if self.changes.open_comments() == 0 {
            self.ui.flash = Some("No open comments to send (c comments on a line).".into());
            return;
        }
        if let Some(dialog) = &self.modal.dialog {
            let Some(choice) = dialog.repeat_choice() else {
                self.ui.flash = Some(
                    "This approval gate has no option that repeats the phase with feedback.".into(),
                );
                return;
            };
            let text = comments::message(self.changes.comments.iter().filter(|c| !c.sent));
            if let Some(dialog) = self.modal.dialog.take() {
                dialog.answer_with(choice, text);
            }
            self.mark_comments_sent();
            self.ui.flash = Some("Review comments sent: the phase runs again with them.".into());
            return;
        }
        if !self.agent.has_agent() {
            self.ui.flash = Some("No agent to send the comments to: configure a provider.".into());
            return;
        }
        if self.agent.running() || self.workflow_turn().is_some() {
            self.changes.send_queued = true;
            return;
        }
        self.deliver_comments();
    }

    /// Sends the open comments now, as the person's next message.
    fn deliver_comments(&mut self) {
        self.changes.send_queued = false;
        let text = comments::message(self.changes.comments.iter().filter(|c| !c.sent));
        self.mark_comments_sent();
        self.conversation.push(Entry::User(text.clone()));
        self.push_user_text(text);
        self.start_turn();
        self.ui.flash = Some("Review comments sent to the agent.".into());
        self.life.autosave.mark();
    }

    fn mark_comments_sent(&mut self) {
        for comment in &mut self.changes.comments {
            comment.sent = true;
        }
        self.changes.relayout();
        self.life.autosave.mark();
    }

    /// Sends comments queued while the agent worked, once it is idle.
    pub(super) fn send_queued_comments(&mut self) {
        if self.changes.send_queued
            && !self.agent.running()
            && self.workflow_turn().is_none()
            && self.changes.open_comments() > 0
        {
            self.deliver_comments();
        }
    }

    /// Starts reading the changes when one is wanted or due.
    pub(super) fn refresh_changes(&mut self) {
        let active = self.busy() || self.ui.nav.selected() == changes::ID;
        if !self.changes.refresh_due(active) {
            return;
        }
        // At an approval gate the diff is the phase's; once the gate is answered, HEAD's.
        self.changes.scoped &= self.modal.dialog.is_some();
        let (dir, base) = self.review_scope();
        let load = self.changes.loaded.iter().cloned().collect();
        let selected = self.changes.selected_file().map(|f| f.path.clone());
        let refresh = &mut self.changes.refresh;
        refresh.generation += 1;
        let job = Refresh {
            dir,
            generation: refresh.generation,
            previous: std::sync::Arc::clone(&self.changes.snapshot),
            base,
            load,
            selected,
        };
        refresh.wanted = false;
        refresh.last = Some(std::time::Instant::now());
        if background::spawn(job, &self.tx).is_ok() {
            self.changes.refresh.running = Some(self.changes.refresh.generation);
        }
    }

    /// Which tree the Changes panel reads, and from which commit: at an approval gate, the
    /// phase's (its own worktree and base when it ran beside others, else the project's tree
    /// since the phase started); otherwise the project's tree against `HEAD`.
    pub(super) fn review_scope(&self) -> (std::path::PathBuf, Option<String>) {
        let project = self.host.project().root().to_path_buf();
        if !self.changes.scoped {
            return (project, None);
        }
        let request = self.modal.dialog.as_ref().map(|d| &d.request);
        if let Some(request) = request
            && let Some(tree) = &request.worktree
        {
            return (tree.clone(), request.base_commit.clone());
        }
        (project, self.changes.phase_base.clone())
    }

    /// The work tree may have changed: read it again (after the running reading, if any).
    pub(super) fn changes_may_have_changed(&mut self) {
        self.changes.refresh.wanted = true;
        self.refresh_changes();
    }

    pub(super) fn apply_changes(&mut self, msg: ChangesMsg) {
        match msg {
            ChangesMsg::Loaded { generation, result } => {
                if self.changes.refresh.running == Some(generation) {
                    self.changes.refresh.running = None;
                    if let Some(started) = self.changes.refresh.last {
                        self.changes.refresh.took = started.elapsed();
                    }
                }
                match result {
                    Ok(snapshot) => {
                        let before = self.changes.comments.len();
                        self.changes.set_snapshot(snapshot);
                        if self.changes.comments.len() != before {
                            self.life.autosave.mark();
                        }
                        if self
                            .changes
                            .error
                            .as_deref()
                            .is_some_and(|e| e.starts_with("reading"))
                        {
                            self.changes.error = None;
                        }
                    }
                    Err(e) => self.changes.error = Some(format!("reading the changes: {e}")),
                }
                if self.changes.refresh.wanted {
                    self.refresh_changes();
                }
            }
            ChangesMsg::PhaseBase(head) => self.changes.phase_base = head,
            ChangesMsg::Done { action, result } => {
                self.changes.acting = false;
                match result {
                    Ok(done) => {
                        self.changes.error = None;
                        if matches!(action, GitAction::Commit { .. }) {
                            self.committed(&done);
                        }
                        self.ui.flash = Some(done.clone());
                        self.changes.done = Some(done);
                    }
                    Err(e) => {
                        self.changes.done = None;
                        self.changes.error = Some(e.to_string());
                    }
                }
                self.changes_may_have_changed();
            }
        }
    }
}

// The Changes panel's work (`changes/jobs.rs`) as background jobs: each ends with its
// `ChangesMsg`, carried to the event loop.

impl Job for Refresh {
    fn thread_name(&self) -> String {
        format!("cp-changes-{}", self.generation)
    }

    fn what(&self) -> &'static str {
        "reading the changes"
    }

    fn run(self, _progress: &Reporter) -> Option<AppEvent> {
        Some(AppEvent::Changes(self.read()))
    }
}

impl Job for jobs::PhaseBase {
    fn thread_name(&self) -> String {
        "cp-changes-base".to_owned()
    }

    fn what(&self) -> &'static str {
        "reading the phase's base commit"
    }

    fn run(self, _progress: &Reporter) -> Option<AppEvent> {
        Some(AppEvent::Changes(self.read()))
    }
}

impl Job for Act {
    fn thread_name(&self) -> String {
        "cp-changes-git".to_owned()
    }

    fn what(&self) -> &'static str {
        "the git action"
    }

    fn run(self, _progress: &Reporter) -> Option<AppEvent> {
        Some(AppEvent::Changes(self.perform()))
    }
}
