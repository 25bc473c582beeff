//! The Phases panel's state from a run's events, and its drawing.

use super::*;
use cp_base::ratatui::buffer::Buffer;
use cp_base::ratatui::layout::Rect;
use cp_base::ratatui::style::Modifier;

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

/// A phase placed on a host shows it in the Host column, which appears once one is; the
/// others say they run here.
#[test]
fn a_phase_on_a_host_shows_its_host_the_others_here() {
    let now = Instant::now();
    let mut phases = phases(now);
    let mut buf = Buffer::empty(Rect::new(0, 0, 100, 16));
    phases.render(buf.area, &mut buf, now, 0);
    assert!(!text(&buf).contains("Host"), "{}", text(&buf));
    phases.news(
        "api",
        PhaseNews::Placed {
            host: "build-1".into(),
        },
        now,
    );
    let mut buf = Buffer::empty(Rect::new(0, 0, 100, 16));
    phases.render(buf.area, &mut buf, now, 0);
    let shown = text(&buf);
    let row = |id: &str| {
        shown
            .lines()
            .find(|l| l.trim_start_matches(['▸', ' ']).starts_with(id))
            .unwrap_or_default()
            .to_owned()
    };
    assert!(shown.contains("Host"), "{shown}");
    assert!(row("api").contains("build-1"), "{shown}");
    assert!(row("ui").contains("here"), "{shown}");
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
            outcome: TreeVerdict::Passed,
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
            outcome: TreeVerdict::Failed,
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
        lines[2].contains("↳ merged 0123456789ab, tested: python3 -m unittest: exit 0, 2 passed")
            && lines[2].ends_with("(3s)"),
        "{shown}"
    );
    assert!(
        lines[3].contains("feature") && lines[3].contains("running"),
        "{shown}"
    );
    assert!(
        lines[4].contains("↳ sent back after try 1 of 2: test_shout (test_feature.FeatureTest)")
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
                outcome: TreeVerdict::Passed,
                how: "the merge of phase feature was tested on this tree before it landed".into(),
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
