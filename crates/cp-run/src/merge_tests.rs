//! The merge queue's tests in `context-pilot run`: a tree (a phase's merge into the run's
//! branch, in the phase's worktree; or the project's own tree) is tested by the stop gate's
//! own planning and runners ([`StopGate::test_tree`]), on that tree's console server, and
//! stopped by the run's Ctrl-C. A phase's worktree is trusted as its repository is, while its
//! `.context-pilot/` says the same (`cp_base`'s worktree trust).

use cp_base::Project;
use cp_mod_checkpoint::{StopGate, TestExit, TestOutcome, TestVerdict};
use cp_orchestrate::{CommandRun, TreeTest, TreeUnderTest};

/// Tests `tree` with the stop gate's planning and runners, stopped by `cancel`; what the test
/// leaves running (its console server) stays until [`end_consoles`].
pub fn test_with_gate(tree: &TreeUnderTest<'_>, cancel: &cp_base::CancelToken) -> TreeTest {
    {
        let project = Project::at(tree.root);
        let gate = match StopGate::for_project(&project) {
            Ok(gate) => gate.with_cancel(cancel.clone()),
            // A configuration the gate cannot read cannot say the tree is green.
            Err(e) => {
                return TreeTest {
                    runs: vec![CommandRun {
                        command: "(the stop gate's configuration)".into(),
                        exit: format!("could not start: {e}"),
                        ..CommandRun::default()
                    }],
                    note: None,
                    host: None,
                };
            }
        };
        let tests = gate.test_tree(&project, tree.changed);
        TreeTest {
            runs: tests.runs.iter().map(command_run).collect(),
            note: tests.note,
            host: None,
        }
    }
}

/// Ends the consoles (and their server) a test of the tree at `root` left running.
pub fn end_consoles(root: &std::path::Path) {
    let stopped =
        cp_mod_console::ConsoleClient::for_project(root).and_then(|c| c.shutdown_server());
    if let Err(e) = stopped {
        tracing::warn!(tree = %root.display(), "cannot stop the test's consoles: {e}");
    }
}

/// One of the stop gate's test runs, as the merge queue's proof records it.
fn command_run(outcome: &TestOutcome) -> CommandRun {
    let (exit, exit_code) = match &outcome.exit {
        Some(TestExit::Code { code }) => (format!("exit {code}"), Some(*code)),
        Some(TestExit::Signal { signal }) => (format!("killed by signal {signal}"), None),
        Some(TestExit::TimedOut { after_secs }) => {
            (format!("timed out after {after_secs} s"), None)
        }
        Some(TestExit::Stopped { reason }) => (format!("stopped: {reason}"), None),
        None => (
            format!(
                "could not start: {}",
                outcome.error.as_deref().unwrap_or("no reason given")
            ),
            None,
        ),
    };
    let summary = outcome.summary.as_ref();
    CommandRun {
        project: outcome.project.clone(),
        command: outcome.command.clone(),
        exit,
        exit_code,
        // A run that tested nothing, or could not, is never a pass (the gate's own verdict).
        passed: outcome.verdict() == TestVerdict::Passed,
        tests_passed: summary.and_then(|s| s.passed),
        tests_failed: summary.and_then(|s| s.failed),
        errors: summary.and_then(|s| s.errors),
        elapsed_ms: outcome.elapsed_ms,
        failing: summary.map(|s| s.failing.clone()).unwrap_or_default(),
        tail: outcome.tail.clone(),
    }
}
