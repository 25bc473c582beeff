//! The Phases panel of a workflow run: one row per phase (its agent, status, context use and
//! tokens, elapsed time), under a phase in the merge queue a line saying where its merge
//! stands (waiting for its turn, testing the combined tree, sent back with the failing test,
//! merged, each with its time), the run's verdict on its branch, and, below, the selected
//! phase's own conversation (drawn as the Conversation panel is, see
//! `phase_conversation.rs`), when the phase has an agent of its own; a phase run by the TUI's
//! agent shows its work in the Conversation panel. Kept from the run's events on the UI
//! thread; drawing reads only this state.

use cp_base::theme;
use std::time::{Duration, Instant};

use cp_base::ScrollExtent;
use cp_base::ratatui::buffer::Buffer;
use cp_base::ratatui::layout::Rect;
use cp_base::ratatui::style::{Color, Modifier, Style};
use cp_base::ratatui::text::{Line, Span};
use cp_base::ratatui::widgets::{Paragraph, Widget};
use cp_base::text::fit_end;
use cp_orchestrate::{Action, Outcome, WorkflowEvent};

use super::phase_conversation::PhaseConversation;
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
                    red: *outcome == Outcome::Failed,
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

    /// Draws the table and the selected phase's conversation (`scroll` rows up from its
    /// newest), its clocks read at `now`.
    pub fn render(&self, area: Rect, buf: &mut Buffer, now: Instant, scroll: usize) {
        let lines = self.table(now);
        let (table, below) = split(area, lines.len());
        Paragraph::new(lines).render(table, buf);
        let Some(row) = self.rows.get(self.selected) else {
            return;
        };
        if row.own_agent {
            row.conversation.render(below, buf, scroll);
        } else {
            Paragraph::new(Line::styled(
                "It runs alone, in the project's tree: its work shows in the conversation.",
                Style::default().fg(theme::MUTED),
            ))
            .render(below, buf);
        }
    }

    /// How far the selected phase's conversation scrolls in the panel's `area`.
    pub fn scroll_extent(&self, area: Rect) -> ScrollExtent {
        let (_, below) = split(area, self.table_height());
        self.rows
            .get(self.selected)
            .filter(|row| row.own_agent)
            .map_or(ScrollExtent::bottom(0), |row| {
                row.conversation.scroll_extent(below)
            })
    }

    /// Rows the table takes: its header, a row per phase and its queue line, the run's
    /// verdict and end, the rule.
    fn table_height(&self) -> usize {
        2 + self.rows.len()
            + self.rows.iter().filter(|r| r.queue.is_some()).count()
            + usize::from(self.verdict.is_some())
            + usize::from(self.ended.is_some())
    }

    /// The table of phases, and the rule above the selected phase's conversation.
    fn table(&self, now: Instant) -> Vec<Line<'static>> {
        let header = Style::default().add_modifier(Modifier::BOLD);
        let mut lines = vec![Line::styled(
            format!(
                "  {:<14} {:<9} {:<19} {:>7} {:>8} {:>7}",
                "Phase", "Agent", "Status", "Context", "Tokens", "Time"
            ),
            header,
        )];
        for (i, row) in self.rows.iter().enumerate() {
            let mark = if i == self.selected { "▸ " } else { "  " };
            let context = row.context.map_or_else(
                || "–".to_owned(),
                |(used, window)| format!("{}%", used.saturating_mul(100) / window.max(1)),
            );
            let tokens = if row.tokens == 0 {
                "–".to_owned()
            } else {
                short_count(row.tokens)
            };
            let agent = if row.agent.is_empty() {
                "run's"
            } else {
                &row.agent
            };
            let style = if i == self.selected {
                Style::default().add_modifier(Modifier::REVERSED)
            } else {
                Style::default()
            };
            lines.push(Line::from(vec![
                Span::styled(
                    format!("{mark}{:<14} {agent:<9} ", fit_end(&row.id, 14)),
                    style,
                ),
                Span::styled(
                    format!("{:<19}", row.state.label()),
                    Style::default().fg(row.state.color()),
                ),
                Span::raw(format!(
                    " {context:>7} {tokens:>8} {:>7}",
                    clock(row.elapsed_at(now))
                )),
            ]));
            if let Some(note) = &row.queue {
                let took = note
                    .until
                    .unwrap_or(now)
                    .saturating_duration_since(note.since);
                let color = if note.red {
                    theme::FAILURE
                } else {
                    theme::MUTED
                };
                lines.push(Line::styled(
                    format!("      ↳ {} ({})", note.text, clock(took)),
                    Style::default().fg(color),
                ));
            }
        }
        if let Some(verdict) = &self.verdict {
            lines.push(Line::styled(
                verdict.clone(),
                Style::default().add_modifier(Modifier::BOLD),
            ));
        }
        if let Some(ended) = &self.ended {
            lines.push(Line::styled(
                ended.clone(),
                Style::default().add_modifier(Modifier::BOLD),
            ));
        }
        let rule = self
            .rows
            .get(self.selected)
            .map_or_else(String::new, |row| {
                format!("── {} ── ([ ] another phase, PgUp/PgDn scroll)", row.id)
            });
        lines.push(Line::styled(rule, Style::default().fg(theme::MUTED)));
        lines
    }
}

/// The table's part of `area` (`rows` tall, or all of it) and the rest, below it.
fn split(area: Rect, rows: usize) -> (Rect, Rect) {
    let top = u16::try_from(rows).unwrap_or(u16::MAX).min(area.height);
    let table = Rect {
        height: top,
        ..area
    };
    let below = Rect {
        y: area.y + top,
        height: area.height - top,
        ..area
    };
    (table, below)
}

/// `12.3k`, `1.2M`.
fn short_count(n: u64) -> String {
    let tenths = |unit: u64| format!("{}.{}", n / unit, n % unit * 10 / unit);
    if n >= 1_000_000 {
        format!("{}M", tenths(1_000_000))
    } else if n >= 1000 {
        format!("{}k", tenths(1000))
    } else {
        n.to_string()
    }
}

/// `1m05s`, `42s`, `1h02m`.
fn clock(d: Duration) -> String {
    let s = d.as_secs();
    if s >= 3600 {
        format!("{}h{:02}m", s / 3600, s % 3600 / 60)
    } else if s >= 60 {
        format!("{}m{:02}s", s / 60, s % 60)
    } else {
        format!("{s}s")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use cp_base::ratatui::buffer::Buffer;

    fn text(buf: &Buffer) -> String {
        let area = buf.area;
        (0..area.height)
            .map(|y| {
                (0..area.width)
                    .map(|x| buf[(x, y)].symbol())
                    .collect::<String>()
                    .trim_end()
                    .to_owned()
            })
            .collect::<Vec<_>>()
            .join("\n")
    }

    fn phases(now: Instant) -> Phases {
        let mut phases = Phases {
            rows: vec![
                PhaseRow::new("plan", "builtin"),
                PhaseRow::new("api", "builtin"),
                PhaseRow::new("ui", "gemini"),
                PhaseRow::new("integrate", "builtin"),
            ],
            selected: 1,
            ended: None,
            verdict: None,
        };
        let started = |phase: &str| WorkflowEvent::PhaseStarted {
            phase: phase.into(),
            iteration: 1,
        };
        phases.event(&started("plan"), now);
        phases.event(
            &WorkflowEvent::PhaseCompleted {
                phase: "plan".into(),
                restarts: 0,
            },
            now,
        );
        phases.event(&started("api"), now);
        phases.event(&started("ui"), now);
        let worktree = PhaseNews::Started { worktree: true };
        phases.news("api", worktree.clone(), now);
        phases.news(
            "api",
            PhaseNews::Text("I write **api.rs**:\n\n- `get`\n".into()),
            now,
        );
        phases.news("api", PhaseNews::Text("- `put`".into()), now);
        phases.news(
            "api",
            PhaseNews::ToolCall {
                id: "c1".into(),
                name: "File_write".into(),
                args: r#"{"file_path":"api.rs"}"#.into(),
            },
            now,
        );
        phases.news(
            "api",
            PhaseNews::ToolResult {
                id: "c1".into(),
                result: cp_base::ToolResult::ok("Created api.rs (2 lines, 20 bytes)."),
            },
            now,
        );
        phases.news(
            "api",
            PhaseNews::Usage {
                context: 50_000,
                window: 200_000,
                tokens: 51_234,
            },
            now,
        );
        phases.news("api", PhaseNews::Testing, now);
        phases.news("ui", worktree, now);
        phases.news("ui", PhaseNews::Text("working".into()), now);
        phases.event(
            &WorkflowEvent::PhaseFailed {
                phase: "ui".into(),
                error: "tests fail".into(),
            },
            now,
        );
        phases
    }

    /// The selected phase's conversation is the Conversation panel's: its answer as
    /// markdown (bold, bullets), its tool call collapsed with the result's first line.
    #[test]
    fn the_panel_shows_each_phase_and_the_selected_ones_conversation() {
        let now = Instant::now();
        let phases = phases(now);
        assert_eq!(phases.badge().as_deref(), Some("1▶ 1✗"));
        let mut buf = Buffer::empty(Rect::new(0, 0, 80, 16));
        phases.render(buf.area, &mut buf, now + Duration::from_secs(65), 0);
        let shown = text(&buf);
        assert!(!shown.contains("**"), "markdown shown raw:\n{shown}");
        let bold = (0..buf.area.height).any(|y| {
            (0..buf.area.width).any(|x| {
                buf[(x, y)].symbol() == "a"
                    && buf[(x + 1, y)].symbol() == "p"
                    && buf[(x, y)].modifier.contains(Modifier::BOLD)
            })
        });
        assert!(bold, "api.rs is not bold:\n{shown}");
        insta::assert_snapshot!(shown);
    }

    #[test]
    fn the_selected_phases_conversation_scrolls_and_follows_its_bottom_otherwise() {
        let now = Instant::now();
        let mut phases = phases(now);
        for i in 0..40 {
            phases.news(
                "api",
                PhaseNews::Notice {
                    level: cp_base::Level::Info,
                    text: format!("note {i}"),
                },
                now,
            );
        }
        let area = Rect::new(0, 0, 80, 16);
        let extent = phases.scroll_extent(area);
        assert!(extent.max > 40, "{extent:?}");
        let mut buf = Buffer::empty(area);
        phases.render(area, &mut buf, now, 0);
        assert!(text(&buf).contains("note 39"), "{}", text(&buf));
        let mut buf = Buffer::empty(area);
        phases.render(area, &mut buf, now, extent.max);
        let top = text(&buf);
        assert!(top.contains("I write") && !top.contains("note 39"), "{top}");
        // The table stays on top either way.
        assert!(top.contains("integrate"), "{top}");
    }

    #[test]
    fn a_phase_alone_with_an_agent_of_its_own_is_done_once_complete_not_merging() {
        let now = Instant::now();
        let mut phases = phases(now);
        phases.event(
            &WorkflowEvent::PhaseStarted {
                phase: "integrate".into(),
                iteration: 1,
            },
            now,
        );
        phases.news("integrate", PhaseNews::Started { worktree: false }, now);
        phases.event(
            &WorkflowEvent::PhaseCompleted {
                phase: "integrate".into(),
                restarts: 0,
            },
            now,
        );
        assert_eq!(phases.rows[3].state, PhaseState::Done);
    }

    #[test]
    fn the_tui_agents_usage_counts_for_the_phase_it_runs() {
        let now = Instant::now();
        let mut phases = Phases {
            rows: vec![PhaseRow::new("one", "builtin"), PhaseRow::new("two", "")],
            ..Phases::default()
        };
        // No phase runs: nothing counts.
        phases.main_usage(10, 100, 12);
        phases.event(
            &WorkflowEvent::PhaseStarted {
                phase: "two".into(),
                iteration: 1,
            },
            now,
        );
        phases.main_usage(1_000, 200_000, 1_200);
        phases.main_usage(50_000, 200_000, 50_500);
        assert_eq!(phases.rows[0].tokens, 0);
        assert_eq!(phases.rows[1].tokens, 51_700);
        assert_eq!(phases.rows[1].context, Some((50_000, 200_000)));
        let mut buf = Buffer::empty(Rect::new(0, 0, 80, 6));
        phases.render(buf.area, &mut buf, now, 0);
        let shown = text(&buf);
        assert!(
            shown
                .lines()
                .any(|l| l.contains("two") && l.contains("25%") && l.contains("51.7k")),
            "{shown}"
        );
    }

    #[test]
    fn a_phase_that_ran_alone_points_to_the_conversation_and_the_selection_stays_in_bounds() {
        let now = Instant::now();
        let mut phases = phases(now);
        phases.move_selection(false);
        phases.move_selection(false);
        assert_eq!(phases.selected, 0);
        let mut buf = Buffer::empty(Rect::new(0, 0, 80, 8));
        phases.render(buf.area, &mut buf, now, 0);
        assert!(text(&buf).contains("It runs alone"), "{}", text(&buf));
        for _ in 0..9 {
            phases.move_selection(true);
        }
        assert_eq!(phases.selected, 3);
    }

    #[test]
    fn a_gate_answered_sends_a_parallel_phase_to_its_merge() {
        let now = Instant::now();
        let mut phases = phases(now);
        phases.asked("api", now);
        assert_eq!(phases.rows[1].state, PhaseState::Approval);
        phases.event(
            &WorkflowEvent::Decision {
                phase: "api".into(),
                label: "Continue".into(),
                action: Action::Continue,
            },
            now,
        );
        assert_eq!(phases.rows[1].state, PhaseState::Queued);
        phases.event(
            &WorkflowEvent::Merged {
                phase: "api".into(),
                branch: "cp/r/api".into(),
                commit: None,
            },
            now,
        );
        assert_eq!(phases.rows[1].state, PhaseState::Merged);
    }

    /// Phases rename and feature, each finished in its worktree, queued to merge.
    fn two_queued(now: Instant) -> Phases {
        let mut phases = Phases {
            rows: vec![
                PhaseRow::new("rename", "builtin"),
                PhaseRow::new("feature", "builtin"),
            ],
            ..Phases::default()
        };
        for phase in ["rename", "feature"] {
            phases.event(
                &WorkflowEvent::PhaseStarted {
                    phase: phase.into(),
                    iteration: 1,
                },
                now,
            );
            phases.news(phase, PhaseNews::Started { worktree: true }, now);
            phases.event(
                &WorkflowEvent::PhaseCompleted {
                    phase: phase.into(),
                    restarts: 0,
                },
                now,
            );
        }
        phases
    }

    /// Issue 37: the queue under each phase: waiting for its turn, testing the combined tree,
    /// sent back with the failing test, merged with its test, each with its time; and the
    /// run's verdict on its branch.
    #[test]
    fn the_merge_queue_shows_under_each_phase_with_its_time() {
        let now = Instant::now();
        let mut phases = two_queued(now);
        assert_eq!(phases.rows[1].state, PhaseState::Queued);
        for (phase, ahead_of) in [("rename", Vec::new()), ("feature", vec!["rename".into()])] {
            let testing = WorkflowEvent::MergeTesting {
                phase: phase.into(),
                ahead_of,
            };
            phases.event(&testing, now);
        }
        assert_eq!(phases.rows[1].state, PhaseState::TestingMerge);
        let later = now + Duration::from_secs(3);
        phases.event(
            &WorkflowEvent::MergeTested {
                phase: "rename".into(),
                combined: true,
                outcome: Outcome::Passed,
                summary: "python3 -m unittest: exit 0, 2 passed, 0.3 s".into(),
                elapsed_ms: 3000,
            },
            later,
        );
        phases.event(
            &WorkflowEvent::Merged {
                phase: "rename".into(),
                branch: "cp/r/rename".into(),
                commit: Some("0123456789abcdef".into()),
            },
            later,
        );
        phases.event(
            &WorkflowEvent::MergeTested {
                phase: "feature".into(),
                combined: true,
                outcome: Outcome::Failed,
                summary: "python3 -m unittest: exit 1, 1 failed, 0.3 s".into(),
                elapsed_ms: 3000,
            },
            later,
        );
        phases.event(
            &WorkflowEvent::SentBack {
                phase: "feature".into(),
                own_tree: true,
                attempt: 1,
                allowed: 2,
                failing: vec!["test_shout (test_feature.FeatureTest)".into()],
            },
            later,
        );
        phases.event(
            &WorkflowEvent::PhaseStarted {
                phase: "feature".into(),
                iteration: 1,
            },
            later,
        );
        let mut buf = Buffer::empty(Rect::new(0, 0, 100, 8));
        phases.render(buf.area, &mut buf, later + Duration::from_secs(7), 0);
        let shown = text(&buf);
        let lines: Vec<&str> = shown.lines().collect();
        assert!(
            lines[1].contains("rename") && lines[1].contains("merged"),
            "{shown}"
        );
        assert!(
            lines[2]
                .contains("↳ merged 0123456789ab, tested: python3 -m unittest: exit 0, 2 passed")
                && lines[2].ends_with("(3s)"),
            "{shown}"
        );
        assert!(
            lines[3].contains("feature") && lines[3].contains("running"),
            "{shown}"
        );
        assert!(
            lines[4]
                .contains("↳ sent back after try 1 of 2: test_shout (test_feature.FeatureTest)")
                && lines[4].ends_with("(7s)"),
            "{shown}"
        );
    }

    #[test]
    fn the_runs_verdict_on_its_branch_shows_below_the_phases() {
        let now = Instant::now();
        let mut phases = two_queued(now);
        phases.event(
            &WorkflowEvent::BranchVerdict {
                verdict: cp_orchestrate::BranchVerdict {
                    branch: "main".into(),
                    commit: "fedcba9876543210".into(),
                    tree: "t".into(),
                    outcome: Outcome::Passed,
                    how: "the merge of phase feature was tested on this tree before it landed"
                        .into(),
                },
                cost: cp_orchestrate::QueueCost::default(),
            },
            now,
        );
        let mut buf = Buffer::empty(Rect::new(0, 0, 120, 8));
        phases.render(buf.area, &mut buf, now, 0);
        assert!(
            text(&buf).contains("branch main is green at fedcba987654"),
            "{}",
            text(&buf)
        );
    }
}
