//! The commit gate's policy (issue 15): blocks counted per agent session across processes,
//! the limit that lets the agent stop and tells the person what is left, and red tests that
//! run again on every later stop. Each stop builds a fresh `StopGate`, as each hook
//! call is a new process.

use crate::util::{Repo, Suite, is_pass, preset, reason, status_suite};
use cp_base::WorkerId;
use cp_mod_checkpoint::{StopGate, StopGateConfig, StopOutcome, StopPhase};

fn app() -> Repo {
    Repo::with_commit(&[
        ("src/app/core.py", "def run():\n    return 1\n"),
        ("README.md", "# app\n"),
    ])
}

/// A stop of `session` by a new checkpoint instance (a new hook process).
fn stop(repo: &Repo, config: &StopGateConfig, session: &str) -> StopOutcome {
    let checkpoint = repo.checkpoint(&repo.project(), config.clone());
    crate::util::stop_in(&checkpoint, &repo.project(), session)
}

#[test]
fn the_gate_lets_the_agent_stop_after_max_blocks_and_says_what_is_left() {
    let repo = app();
    let suite = Suite::new();
    let config = StopGateConfig {
        max_blocks: 2,
        ..preset(&suite.passing(), 10)
    };
    repo.write("src/app/core.py", "def run():\n    return 2\n");

    let first = stop(&repo, &config, "claude-1");
    assert!(reason(&first).contains("Stop gate: verify"));
    assert_eq!(first.report.blocks, 1);
    let second = stop(&repo, &config, "claude-1");
    assert!(reason(&second).starts_with("Commit your changes before stopping"));
    assert_eq!(second.report.blocks, 2);
    assert_eq!(second.report.phase, StopPhase::Second);

    // The third stop in a row: the agent may stop, the person is told what is left.
    let third = stop(&repo, &config, "claude-1");
    assert!(is_pass(&third), "{third:?}");
    let notice = third.notice.as_deref().expect("a notice for the person");
    assert!(notice.contains("blocked it 2 time(s) in a row"), "{notice}");
    assert!(notice.contains("src/app/core.py"), "{notice}");
    assert!(
        notice.contains("Last test run: Tests passed: 5 passed"),
        "{notice}"
    );
    assert_eq!(third.report.gave_up.as_deref(), Some(notice));
    let saved = StopGate::last_report(&repo.project(), &WorkerId::new("w1").unwrap()).unwrap();
    assert_eq!(saved.gave_up.as_deref(), Some(notice), "the panel sees it");
    assert_eq!(
        suite.runs(),
        1,
        "green tests of an unchanged tree do not rerun"
    );

    // The count was reset: the same session's next stop starts over (nothing new: passes).
    let later = stop(&repo, &config, "claude-1");
    assert!(is_pass(&later) && later.notice.is_none(), "{later:?}");
}

#[test]
fn blocks_are_counted_per_session() {
    let repo = app();
    let suite = Suite::new();
    let config = StopGateConfig {
        max_blocks: 2,
        ..preset(&suite.passing(), 10)
    };
    repo.write("src/app/core.py", "def run():\n    return 2\n");
    reason(&stop(&repo, &config, "gemini-a"));
    reason(&stop(&repo, &config, "gemini-a"));
    // Another session has its own count.
    repo.write("src/app/core.py", "def run():\n    return 3\n");
    let other = stop(&repo, &config, "gemini-b");
    assert_eq!(other.report.blocks, 1, "{other:?}");
    assert!(is_pass(&stop(&repo, &config, "gemini-a")));
    assert!(!is_pass(&stop(&repo, &config, "gemini-b")));
}

#[test]
fn a_clean_stop_resets_the_count() {
    let repo = app();
    let suite = Suite::new();
    let config = StopGateConfig {
        max_blocks: 2,
        ..preset(&suite.passing(), 10)
    };
    repo.write("src/app/core.py", "def run():\n    return 2\n");
    reason(&stop(&repo, &config, "s"));
    reason(&stop(&repo, &config, "s"));
    repo.commit_all("work");
    let clean = stop(&repo, &config, "s");
    assert!(is_pass(&clean) && clean.notice.is_none(), "{clean:?}");
    // A new change in the same session gets the full budget again.
    repo.write("src/app/core.py", "def run():\n    return 3\n");
    assert_eq!(stop(&repo, &config, "s").report.blocks, 1);
    assert_eq!(stop(&repo, &config, "s").report.blocks, 2);
}

#[test]
fn a_failed_run_runs_again_on_every_later_stop_until_it_passes() {
    let repo = app();
    let suite = Suite::new();
    let config = StopGateConfig {
        max_blocks: 5,
        ..preset(&status_suite(&suite, &repo), 10)
    };
    repo.write("status.txt", "red\n");
    repo.commit_all("status");
    repo.write("src/app/core.py", "def run():\n    return 2\n");

    let first = stop(&repo, &config, "s");
    assert!(reason(&first).contains("Tests FAILED"), "{first:?}");
    assert_eq!(suite.runs(), 1);

    // The agent changes nothing and says all is well: the tests run again, still red.
    let second = stop(&repo, &config, "s");
    let msg = reason(&second);
    assert_eq!(suite.runs(), 2, "a failed run must run again");
    assert!(msg.contains("Tests FAILED"), "{msg}");
    assert!(msg.contains("test_run"), "{msg}");

    // Committing red code does not get past red tests either.
    repo.commit_all("red");
    let committed = stop(&repo, &config, "s");
    assert_eq!(suite.runs(), 3);
    assert!(reason(&committed).contains("Tests FAILED"), "{committed:?}");

    // Once the tests pass and everything is committed, the agent may stop.
    repo.write("status.txt", "green\n");
    repo.commit_all("fixed");
    let fixed = stop(&repo, &config, "s");
    assert_eq!(suite.runs(), 4);
    assert!(is_pass(&fixed) && fixed.notice.is_none(), "{fixed:?}");
    assert!(fixed.report.tests.first().unwrap().passed);
    // The panel's source, the saved report, follows the clean stop.
    let saved = StopGate::last_report(&repo.project(), &WorkerId::new("w1").unwrap()).unwrap();
    assert!(saved.tests.first().unwrap().passed, "{saved:?}");
    assert!(
        saved.message.is_none() && saved.gave_up.is_none(),
        "{saved:?}"
    );

    // A new session starts with the result known: green, nothing changed, no rerun.
    assert!(is_pass(&stop(&repo, &config, "s2")));
    assert_eq!(suite.runs(), 4);
}

#[test]
fn red_tests_are_in_the_notice_when_the_limit_is_reached() {
    let repo = app();
    let suite = Suite::new();
    let config = StopGateConfig {
        max_blocks: 1,
        ..preset(&suite.failing(), 10)
    };
    repo.write("src/app/core.py", "def run():\n    return 2\n");
    reason(&stop(&repo, &config, "s"));
    let last = stop(&repo, &config, "s");
    assert!(is_pass(&last));
    let notice = last.notice.unwrap();
    assert!(
        notice.contains("Last test run: Tests FAILED (exit code 1)"),
        "{notice}"
    );
    assert_eq!(suite.runs(), 2, "the red run ran again before giving up");
}

#[test]
fn files_are_listed_with_their_change_in_words() {
    let repo = Repo::with_commit(&[
        ("src/app/core.py", "a = 1\n"),
        ("src/app/gone.py", "b = 1\n"),
    ]);
    let suite = Suite::new();
    let config = preset(&suite.passing(), 10);
    repo.write("src/app/core.py", "a = 2\n");
    repo.remove("src/app/gone.py");
    repo.write("src/app/fresh.py", "c = 1\n");
    let outcome = stop(&repo, &config, "s");
    let msg = reason(&outcome);
    assert!(msg.contains("  modified src/app/core.py"), "{msg}");
    assert!(msg.contains("  deleted src/app/gone.py"), "{msg}");
    assert!(msg.contains("  new src/app/fresh.py"), "{msg}");
    assert!(!msg.contains("M  src"), "{msg}");
}

#[test]
fn without_the_commit_gate_only_red_tests_hold_the_stop() {
    let repo = app();
    let suite = Suite::new();
    let config = StopGateConfig {
        max_blocks: 3,
        ..preset(&status_suite(&suite, &repo), 10)
    };
    repo.write("status.txt", "green\n");
    repo.commit_all("status");
    let checkpoint = |repo: &Repo| repo.checkpoint(&repo.project(), config.clone());
    let phase_stop = |repo: &Repo| {
        checkpoint(repo).evaluate(&cp_orchestrate::StopInput {
            project: repo.project(),
            worker: WorkerId::new("w1").unwrap(),
            session: "phase".into(),
            gate_commits: false,
            base: None,
        })
    };
    repo.write("src/app/core.py", "def run():\n    return 2\n");
    assert!(reason(&phase_stop(&repo)).contains("Tests passed"));
    // Uncommitted, green: a workflow phase (which commits itself) may stop.
    assert!(is_pass(&phase_stop(&repo)));

    repo.write("status.txt", "red\n");
    repo.write("src/app/core.py", "def run():\n    return 3\n");
    reason(&phase_stop(&repo));
    let again = phase_stop(&repo);
    assert!(reason(&again).contains("Tests FAILED"), "{again:?}");
}

#[test]
fn a_commit_noted_by_the_changes_panel_clears_the_saved_reports_uncommitted_files() {
    let repo = app();
    let suite = Suite::new();
    let config = StopGateConfig {
        max_blocks: 1,
        ..preset(&suite.passing(), 10)
    };
    repo.write("src/app/core.py", "def run():\n    return 2\n");
    let worker = WorkerId::new("w1").unwrap();
    let first = stop(&repo, &config, "claude-1");
    assert!(!is_pass(&first));
    let saved = StopGate::last_report(&repo.project(), &worker).unwrap();
    assert_eq!(saved.uncommitted_gated, ["src/app/core.py"]);
    StopGate::note_commit(&repo.project(), &worker);
    let saved = StopGate::last_report(&repo.project(), &worker).unwrap();
    assert!(saved.uncommitted_gated.is_empty(), "{saved:?}");
    assert!(
        saved.files.is_empty() && saved.message.is_none(),
        "{saved:?}"
    );
    // Without a saved state there is nothing to note, and nothing is written.
    let other = WorkerId::new("w2").unwrap();
    StopGate::note_commit(&repo.project(), &other);
    assert!(StopGate::last_report(&repo.project(), &other).is_none());
}
