//! The Phases panel of a workflow run: one row per phase (its agent, status, context use and
//! tokens, elapsed time) and, below, the selected phase's own conversation (the progress lines
//! of its agent, when it runs in its own worktree beside others). Kept from the run's events
//! on the UI thread; drawing reads only this state.

use std::collections::VecDeque;
use std::time::{Duration, Instant};

use cp_base::ratatui::buffer::Buffer;
use cp_base::ratatui::layout::Rect;
use cp_base::ratatui::style::{Color, Modifier, Style};
use cp_base::ratatui::text::{Line, Span};
use cp_base::ratatui::widgets::{Paragraph, Widget};
use cp_orchestrate::{Action, WorkflowEvent};

use crate::run_phases::PhaseNews;

/// The panel's id in the sidebar.
pub const ID: &str = "phases";

/// Lines kept per phase; older ones are dropped.
const KEPT_LINES: usize = 2000;

/// Where a phase stands, as the panel shows it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PhaseState {
    Waiting,
    Running,
    /// The stop gate runs the tests.
    Testing,
    /// The stop gate sent the agent back to work.
    Blocked,
    /// An approval gate (or a merge conflict) waits for the person.
    Approval,
    /// Finished in its worktree; its branch is merged once the wave ends.
    Merging,
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
            Self::Merging => "merging",
            Self::Done => "done",
            Self::Skipped => "skipped",
            Self::Failed => "failed",
        }
    }

    fn color(self) -> Color {
        match self {
            Self::Waiting | Self::Skipped => Color::DarkGray,
            Self::Running | Self::Testing | Self::Merging => Color::Cyan,
            Self::Blocked | Self::Approval => Color::Yellow,
            Self::Done => Color::Green,
            Self::Failed => Color::Red,
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
    /// Whether it ran beside others (in its own worktree): then `lines` is its conversation.
    pub own_tree: bool,
    pub lines: VecDeque<String>,
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
            own_tree: false,
            lines: VecDeque::new(),
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
                let next = if row.own_tree {
                    PhaseState::Merging
                } else {
                    PhaseState::Done
                };
                row.set(next, now);
            }
            WorkflowEvent::PhaseFailed { phase, .. } => {
                self.row(phase).set(PhaseState::Failed, now);
            }
            WorkflowEvent::MergeConflict { phase, .. } => {
                self.row(phase).set(PhaseState::Approval, now);
            }
            WorkflowEvent::Merged { phase, .. } => self.row(phase).set(PhaseState::Done, now),
            // Its work is set aside; it waits for the phase that runs again.
            WorkflowEvent::PhaseSuperseded { phase, .. } => {
                self.row(phase).set(PhaseState::Waiting, now);
            }
            WorkflowEvent::Decision { phase, action, .. } => {
                let row = self.row(phase);
                if row.state == PhaseState::Approval {
                    let next = match action {
                        Action::Abort => PhaseState::Failed,
                        _ if row.own_tree => PhaseState::Merging,
                        _ => PhaseState::Done,
                    };
                    row.set(next, now);
                }
            }
            _ => {}
        }
    }

    /// An approval gate of `phase` waits.
    pub fn asked(&mut self, phase: &str, now: Instant) {
        self.row(phase).set(PhaseState::Approval, now);
    }

    /// News from the agent of `phase`, which runs in its own worktree.
    pub fn news(&mut self, phase: &str, news: PhaseNews, now: Instant) {
        let row = self.row(phase);
        row.own_tree = true;
        match news {
            PhaseNews::Line(line) => {
                if row.lines.len() == KEPT_LINES {
                    row.lines.pop_front();
                }
                row.lines.push_back(line);
                if row.state == PhaseState::Testing || row.state == PhaseState::Blocked {
                    row.set(PhaseState::Running, now);
                }
            }
            PhaseNews::Usage {
                context,
                window,
                tokens,
            } => {
                row.context = (window > 0).then_some((context, window));
                row.tokens = row.tokens.saturating_add(tokens);
            }
            PhaseNews::Testing => row.set(PhaseState::Testing, now),
            PhaseNews::Blocked => row.set(PhaseState::Blocked, now),
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

    /// Draws the table and the selected phase's conversation, its clocks read at `now`.
    pub fn render(&self, area: Rect, buf: &mut Buffer, now: Instant) {
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
                    format!("{mark}{:<14} {agent:<9} ", clip(&row.id, 14)),
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
        }
        if let Some(ended) = &self.ended {
            lines.push(Line::styled(
                ended.clone(),
                Style::default().add_modifier(Modifier::BOLD),
            ));
        }
        if let Some(row) = self.rows.get(self.selected) {
            lines.push(Line::styled(
                format!("── {} ── ([ ] another phase)", row.id),
                Style::default().fg(Color::DarkGray),
            ));
            let room = usize::from(area.height).saturating_sub(lines.len());
            if row.own_tree {
                let skip = row.lines.len().saturating_sub(room);
                lines.extend(row.lines.iter().skip(skip).map(|l| Line::raw(l.clone())));
            } else {
                lines.push(Line::styled(
                    "It runs alone, in the project's tree: its work shows in the conversation.",
                    Style::default().fg(Color::DarkGray),
                ));
            }
        }
        Paragraph::new(lines).render(area, buf);
    }
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

fn clip(text: &str, width: usize) -> String {
    if text.chars().count() <= width {
        text.to_owned()
    } else {
        let mut out: String = text.chars().take(width.saturating_sub(1)).collect();
        out.push('…');
        out
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
        phases.news("api", PhaseNews::Line("  → File_write api.rs".into()), now);
        phases.news("api", PhaseNews::Line("    ✓ wrote api.rs".into()), now);
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
        phases.news("ui", PhaseNews::Line("… working".into()), now);
        phases.event(
            &WorkflowEvent::PhaseFailed {
                phase: "ui".into(),
                error: "tests fail".into(),
            },
            now,
        );
        phases
    }

    #[test]
    fn the_panel_shows_each_phase_and_the_selected_ones_conversation() {
        let now = Instant::now();
        let phases = phases(now);
        assert_eq!(phases.badge().as_deref(), Some("1▶ 1✗"));
        let mut buf = Buffer::empty(Rect::new(0, 0, 80, 10));
        phases.render(buf.area, &mut buf, now + Duration::from_secs(65));
        insta::assert_snapshot!(text(&buf));
    }

    #[test]
    fn a_phase_that_ran_alone_points_to_the_conversation_and_the_selection_stays_in_bounds() {
        let now = Instant::now();
        let mut phases = phases(now);
        phases.move_selection(false);
        phases.move_selection(false);
        assert_eq!(phases.selected, 0);
        let mut buf = Buffer::empty(Rect::new(0, 0, 80, 8));
        phases.render(buf.area, &mut buf, now);
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
        assert_eq!(phases.rows[1].state, PhaseState::Merging);
        phases.event(
            &WorkflowEvent::Merged {
                phase: "api".into(),
                branch: "cp/r/api".into(),
                commit: None,
            },
            now,
        );
        assert_eq!(phases.rows[1].state, PhaseState::Done);
    }
}
