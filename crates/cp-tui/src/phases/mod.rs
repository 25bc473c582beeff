//! The Phases panel of a workflow run: one row per phase (its agent, status, context use and
//! tokens, elapsed time), under a phase in the merge queue a line saying where its merge
//! stands (waiting for its turn, testing the combined tree, sent back with the failing test,
//! merged, each with its time), the run's verdict on its branch, and, below, the selected
//! phase's own conversation (drawn as the Conversation panel is, see
//! `phase_conversation.rs`), when the phase has an agent of its own; a phase run by the TUI's
//! agent shows its work in the Conversation panel. Kept from the run's events on the UI
//! thread; drawing reads only this state.

mod phase_conversation;
#[cfg(test)]
mod phases_tests;
mod phases_view;

use std::time::{Duration, Instant};

use cp_base::ratatui::style::Color;
use cp_base::theme;
use cp_orchestrate::{Action, TreeVerdict, WorkflowEvent};

use crate::phases::phase_conversation::PhaseConversation;
use cp_run::PhaseNews;

/// The panel's id in the sidebar.
pub const ID: &str = "phases";

/// Where a phase stands, as the panel shows it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PhaseState {
    Waiting,
    Running,
    /// The stop gate runs the tests.
    Testing,
    /// The stop gate sent the agent back to work.
    Blocked,
    /// An approval gate (or a merge conflict, or a merge still red) waits for the person.
    Approval,
    /// Finished in its worktree; its merge waits for its turn in the merge queue.
    Queued,
    /// The merge queue tests the run's branch with its merge.
    TestingMerge,
    /// Its merge was red: it goes back to work.
    SentBack,
    /// Its merge landed, tested.
    Merged,
    /// Its merge stayed red and the person kept it aside.
    KeptAside,
    Done,
    Skipped,
    Failed,
}

impl PhaseState {
    fn label(self) -> &'static str {
        match self {
            Self::Waiting => "waiting",
            Self::Running => "running",
            Self::Testing => "testing",
            Self::Blocked => "blocked by the gate",
            Self::Approval => "approval",
            Self::Queued => "queued to merge",
            Self::TestingMerge => "testing merge",
            Self::SentBack => "sent back",
            Self::Merged => "merged",
            Self::KeptAside => "kept aside",
            Self::Done => "done",
            Self::Skipped => "skipped",
            Self::Failed => "failed",
        }
    }

    fn color(self) -> Color {
        match self {
            Self::Waiting | Self::Skipped | Self::KeptAside => theme::MUTED,
            Self::Running | Self::Testing | Self::Queued | Self::TestingMerge => theme::ACCENT,
            Self::Blocked | Self::Approval | Self::SentBack => theme::ATTENTION,
            Self::Done | Self::Merged => theme::SUCCESS,
            Self::Failed => theme::FAILURE,
        }
    }

    /// Its agent is at work (the clock runs).
    fn working(self) -> bool {
        matches!(self, Self::Running | Self::Testing | Self::Blocked)
    }
}

/// One phase's row and its conversation.
#[derive(Debug, Clone)]
pub struct PhaseRow {
    pub id: String,
    /// Its agent (`builtin`, `claude`, …); empty: not known.
    pub agent: String,
    pub state: PhaseState,
    /// The prompt size of its last request and the window, when known.
    pub context: Option<(u64, u64)>,
    /// Tokens of all its requests (prompt and output).
    pub tokens: u64,
    /// Time worked before `since`.
    pub elapsed: Duration,
    /// When its agent started working, while it works.
    pub since: Option<Instant>,
    /// Whether it has an agent of its own (its news come here), not the TUI's.
    pub own_agent: bool,
    /// Whether it works in a worktree of its own (then its branch is merged once done).
    pub own_tree: bool,
    /// The host of the `hosts` configuration it runs on; empty: the run's machine.
    pub host: String,
    /// Its agent's conversation, when it has an agent of its own.
    pub conversation: PhaseConversation,
    /// Where its merge stands in the merge queue, shown under its row.
    pub queue: Option<QueueNote>,
    /// The last test of its combined tree: what it said, and how long it took.
    last_test: Option<(String, Duration)>,
}

/// A line under a phase's row: where its merge stands, since when (and until when, once
/// that is over).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct QueueNote {
    pub text: String,
    pub since: Instant,
    pub until: Option<Instant>,
    /// Shown in red: a red merge.
    pub red: bool,
}

impl QueueNote {
    fn new(text: String, now: Instant) -> Self {
        Self {
            text,
            since: now,
            until: None,
            red: false,
        }
    }
}

impl PhaseRow {
    pub fn new(id: &str, agent: &str) -> Self {
        Self {
            id: id.to_owned(),
            agent: agent.to_owned(),
            state: PhaseState::Waiting,
            context: None,
            tokens: 0,
            elapsed: Duration::ZERO,
            since: None,
            own_agent: false,
            own_tree: false,
            host: String::new(),
            conversation: PhaseConversation::default(),
            queue: None,
            last_test: None,
        }
    }

    fn set(&mut self, state: PhaseState, now: Instant) {
        match (self.since, state.working()) {
            (None, true) => self.since = Some(now),
            (Some(since), false) => {
                self.elapsed += now.saturating_duration_since(since);
                self.since = None;
            }
            _ => {}
        }
        self.state = state;
    }

    fn usage(&mut self, context: u64, window: u64, tokens: u64) {
        self.context = (window > 0).then_some((context, window));
        self.tokens = self.tokens.saturating_add(tokens);
    }

    fn elapsed_at(&self, now: Instant) -> Duration {
        self.elapsed
            + self
                .since
                .map_or(Duration::ZERO, |s| now.saturating_duration_since(s))
    }
}

/// The phases of the run, in the workflow file's order (phases first heard of are appended).
#[derive(Debug, Clone, Default)]
pub struct Phases {
    pub rows: Vec<PhaseRow>,
    /// The selected row.
    pub selected: usize,
    /// How the run ended, once it has.
    pub ended: Option<String>,
    /// The run's last word on its branch (green or not, and how), once said.
    pub verdict: Option<String>,
}

impl Phases {
    /// The phases of `workflow`, all waiting; `agent` is the run's.
    pub fn of(workflow: &cp_orchestrate::Workflow, agent: &str) -> Self {
        Self {
            rows: workflow
                .phases
                .iter()
                .map(|p| PhaseRow::new(&p.id, p.agent.as_deref().unwrap_or(agent)))
                .collect(),
            selected: 0,
            ended: None,
            verdict: None,
        }
    }

    pub fn is_empty(&self) -> bool {
        self.rows.is_empty()
    }

    fn row(&mut self, id: &str) -> &mut PhaseRow {
        let index = if let Some(index) = self.rows.iter().position(|r| r.id == id) {
            index
        } else {
            self.rows.push(PhaseRow::new(id, ""));
            self.rows.len() - 1
        };
        &mut self.rows[index]
    }

    /// A workflow event.
    pub fn event(&mut self, event: &WorkflowEvent, now: Instant) {
        match event {
            WorkflowEvent::PhaseStarted { phase, .. } => {
                self.row(phase).set(PhaseState::Running, now);
            }
            WorkflowEvent::PhaseSkipped { phase } => self.row(phase).set(PhaseState::Skipped, now),
            WorkflowEvent::PhaseCompleted { phase, .. } => {
                let row = self.row(phase);
                if row.own_tree {
                    row.set(PhaseState::Queued, now);
                    row.queue = Some(QueueNote::new("waiting for its turn to merge".into(), now));
                } else {
                    row.set(PhaseState::Done, now);
                }
            }
            WorkflowEvent::PhaseFailed { phase, .. } => {
                self.row(phase).set(PhaseState::Failed, now);
            }
            WorkflowEvent::MergeConflict { phase, .. } => {
                self.row(phase).set(PhaseState::Approval, now);
            }
            WorkflowEvent::Merged { phase, commit, .. } => {
                let row = self.row(phase);
                let state = if row.own_tree {
                    PhaseState::Merged
                } else {
                    PhaseState::Done
                };
                row.set(state, now);
                let short = commit
                    .as_deref()
                    .map_or("nothing new", |c| c.get(..12).unwrap_or(c));
                row.queue = Some(match row.last_test.take() {
                    Some((summary, took)) => QueueNote {
                        text: format!("merged {short}, tested: {summary}"),
                        since: now.checked_sub(took).unwrap_or(now),
                        until: Some(now),
                        red: false,
                    },
                    None => QueueNote {
                        until: Some(now),
                        ..QueueNote::new(format!("merged {short}"), now)
                    },
                });
            }
            // Its work is set aside; it waits for the phase that runs again.
            WorkflowEvent::PhaseSuperseded { phase, .. } => {
                let row = self.row(phase);
                row.set(PhaseState::Waiting, now);
                row.queue = None;
            }
            WorkflowEvent::Decision { phase, action, .. } => {
                let row = self.row(phase);
                if row.state == PhaseState::Approval {
                    let next = match action {
                        Action::Abort => PhaseState::Failed,
                        _ if row.own_tree => PhaseState::Queued,
                        _ => PhaseState::Done,
                    };
                    row.set(next, now);
                }
            }
            WorkflowEvent::BranchVerdict { .. } => self.verdict = Some(event.to_string()),
            _ => self.queue_event(event, now),
        }
    }

    /// An event of the merge queue.
    fn queue_event(&mut self, event: &WorkflowEvent, now: Instant) {
        match event {
            WorkflowEvent::MergeTesting { phase, ahead_of } => {
                let row = self.row(phase);
                row.set(PhaseState::TestingMerge, now);
                let text = if ahead_of.is_empty() {
                    "testing the combined tree".to_owned()
                } else {
                    format!(
                        "testing the combined tree ahead of its turn, on {}",
                        ahead_of.join(", ")
                    )
                };
                row.queue = Some(QueueNote::new(text, now));
            }
            WorkflowEvent::MergeTested {
                phase,
                combined,
                outcome,
                summary,
                elapsed_ms,
            } => {
                let row = self.row(phase);
                let took = Duration::from_millis(*elapsed_ms);
                row.last_test = Some((summary.clone(), took));
                let tree = if *combined {
                    "combined tree"
                } else {
                    "the tree it left"
                };
                row.queue = Some(QueueNote {
                    text: format!("{tree} {}: {summary}", outcome.word()),
                    since: now.checked_sub(took).unwrap_or(now),
                    until: Some(now),
                    red: *outcome == TreeVerdict::Failed,
                });
            }
            WorkflowEvent::MergesRequeued { phases } => {
                for phase in phases {
                    let row = self.row(phase);
                    row.set(PhaseState::Queued, now);
                    row.queue = Some(QueueNote::new(
                        "to be tested again: a merge under it failed".into(),
                        now,
                    ));
                }
            }
            WorkflowEvent::SentBack {
                phase,
                attempt,
                allowed,
                failing,
                ..
            } => {
                let row = self.row(phase);
                row.set(PhaseState::SentBack, now);
                row.queue = Some(QueueNote {
                    red: true,
                    ..QueueNote::new(
                        format!(
                            "sent back after try {attempt} of {allowed}: {}",
                            failing.join(", ")
                        ),
                        now,
                    )
                });
            }
            WorkflowEvent::MergeRed {
                phase,
                attempts,
                failing,
            } => {
                let row = self.row(phase);
                row.set(PhaseState::Approval, now);
                row.queue = Some(QueueNote {
                    red: true,
                    ..QueueNote::new(
                        format!("still red after {attempts} tries: {}", failing.join(", ")),
                        now,
                    )
                });
            }
            WorkflowEvent::KeptAside { phase, branch } => {
                let row = self.row(phase);
                row.set(PhaseState::KeptAside, now);
                row.queue = Some(QueueNote {
                    until: Some(now),
                    ..QueueNote::new(format!("kept aside on {branch}"), now)
                });
            }
            _ => {}
        }
    }

    /// An approval gate of `phase` waits.
    pub fn asked(&mut self, phase: &str, now: Instant) {
        self.row(phase).set(PhaseState::Approval, now);
    }

    /// News from the agent of `phase`, an agent of its own.
    pub fn news(&mut self, phase: &str, news: PhaseNews, now: Instant) {
        let row = self.row(phase);
        row.own_agent = true;
        match &news {
            PhaseNews::Started { worktree } => row.own_tree = *worktree,
            PhaseNews::Placed { host } => row.host.clone_from(host),
            PhaseNews::Usage {
                context,
                window,
                tokens,
            } => row.usage(*context, *window, *tokens),
            PhaseNews::Testing => row.set(PhaseState::Testing, now),
            PhaseNews::Blocked => row.set(PhaseState::Blocked, now),
            PhaseNews::Text(_) | PhaseNews::ToolCall { .. } => {
                if row.state == PhaseState::Testing || row.state == PhaseState::Blocked {
                    row.set(PhaseState::Running, now);
                }
            }
            PhaseNews::ToolResult { .. } | PhaseNews::Notice { .. } => {}
        }
        row.conversation.apply(news);
    }

    /// A request of the TUI's own agent: it counts for the phase that agent runs (the
    /// working phase without an agent of its own), if any.
    pub fn main_usage(&mut self, context: u64, window: u64, tokens: u64) {
        if let Some(row) = self
            .rows
            .iter_mut()
            .rev()
            .find(|r| r.state.working() && !r.own_agent)
        {
            row.usage(context, window, tokens);
        }
    }

    /// The sidebar's badge: how many run, how many failed.
    pub fn badge(&self) -> Option<String> {
        let running = self.rows.iter().filter(|r| r.state.working()).count();
        let failed = self
            .rows
            .iter()
            .filter(|r| r.state == PhaseState::Failed)
            .count();
        match (running, failed) {
            (0, 0) => None,
            (r, 0) => Some(format!("{r}▶")),
            (0, f) => Some(format!("{f}✗")),
            (r, f) => Some(format!("{r}▶ {f}✗")),
        }
    }

    /// Moves the selected row one up (`false`) or down (`true`).
    pub fn move_selection(&mut self, down: bool) {
        let last = self.rows.len().saturating_sub(1);
        self.selected = if down {
            (self.selected + 1).min(last)
        } else {
            self.selected.saturating_sub(1)
        };
    }
}
