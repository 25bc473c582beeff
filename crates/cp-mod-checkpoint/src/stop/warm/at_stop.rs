//! The stop gate's test step with warm runs: reuse, wait, or end the warm run and run afresh.

use std::path::Path;
use std::time::{Duration, Instant};

use cp_mod_console::ConsoleClient;
use cp_orchestrate::StopInput;
use uuid::Uuid;

use super::super::console_runner::end_console;
use super::super::durations::Durations;
use super::super::report::WarmUse;
use super::super::report::{StopReport, TestOutcome, TestVerdict};
use super::super::runner::TestExit;
use super::super::testing::PlannedTestRun;
use super::super::{StopGate, console_runner};
use super::key::{base_key, run_key};
use super::record::{RecordFile, WarmPhase};
use super::run::stop_tree;
use super::tree::commit_tree;

/// What a warm run of this very tree gave the stop.
enum Found {
    /// Its verdict, and how it was had.
    Verdict(Vec<TestOutcome>, WarmUse),
    /// It still runs after the stop's limit.
    StillRunning { waited_secs: u64 },
    /// The person cancelled the turn while the stop waited; the warm run was ended.
    Cancelled,
    /// Nothing usable: the tests run afresh.
    Nothing,
}

impl StopGate {
    /// The test step: the tests are due on the tree whose changed set fingerprints to
    /// `changed_set`. With warm runs on, a finished warm run of this very tree (same key:
    /// tree, commands, environment) is the verdict with no wait, one still testing it is
    /// waited for, up to the limit (then it goes on in the background and the message says
    /// so), and anything else is ended before the tests run afresh. A verdict is used once:
    /// a later stop on the same tree goes by the stop gate's own memory of it.
    pub(in super::super) fn run_tests_warm(
        &self,
        input: &StopInput,
        repo: &Path,
        before: &[TestOutcome],
        changed_set: &str,
        report: &mut StopReport,
    ) {
        let file = RecordFile::new(&input.project);
        if !self.config.warm.enabled {
            match self.plan_runs(input, repo, before, report) {
                Ok(runs) => {
                    let tree = stop_tree(self, repo, changed_set);
                    let key = run_key(&tree, &runs, |cwd| self.run_env(cwd));
                    report.tests = self.run_fresh(&input.project, runs.clone(), &key);
                    self.mark_predating(&file, input, repo, &runs, &mut report.tests);
                }
                Err(note) => report.tests_note = note,
            }
            return;
        }
        let runs = match self.plan_runs(input, repo, before, report) {
            Ok(runs) => runs,
            Err(note) => {
                report.tests_note = note;
                settle(&file, input.project.root(), false);
                return;
            }
        };
        let tree = stop_tree(self, repo, changed_set);
        let key = run_key(&tree, &runs, |cwd| self.run_env(cwd));
        let limit = runs
            .iter()
            .map(|r| r.timeout_secs)
            .max()
            .unwrap_or_default();
        match self.find(
            &file,
            input.project.root(),
            &key,
            Duration::from_secs(limit),
        ) {
            Found::Verdict(mut outcomes, used) => {
                for outcome in &mut outcomes {
                    outcome.warm = Some(used.clone());
                }
                tracing::info!("stop gate: the warm run's verdict of this tree ({used:?})");
                self.mark_predating(&file, input, repo, &runs, &mut outcomes);
                report.tests = outcomes;
                file.update(|record| {
                    record.verdicts.retain(|v| v.key != key);
                    if let Some(current) = record.current.as_mut() {
                        current.used = Some(used);
                    }
                });
                settle(&file, input.project.root(), false);
            }
            Found::StillRunning { waited_secs } => {
                report.tests = still_running(&runs, waited_secs, &Durations::new(&input.project));
                file.update(|record| {
                    if let Some(current) = record.current.as_mut() {
                        current.used = Some(WarmUse::StillRunning { waited_secs });
                    }
                });
                settle(&file, input.project.root(), true);
            }
            Found::Cancelled => {
                report.tests = runs
                    .iter()
                    .map(|run| stopped(run, "cancelled by the user (Esc) while a warm run of this tree was waited for"))
                    .collect();
                settle(&file, input.project.root(), false);
            }
            Found::Nothing => {
                // Whatever warm run there is tests another tree, or has not begun: end it
                // first, so the suite never runs twice at once.
                settle(&file, input.project.root(), false);
                report.tests = self.run_fresh(&input.project, runs.clone(), &key);
                self.mark_predating(&file, input, repo, &runs, &mut report.tests);
            }
        }
    }

    /// Names, in each red outcome of `runs`, the failures that already failed at the
    /// session's base, when the same command's verdict of the base commit's tree is known
    /// (a base run kept it). A base whose verdict is unknown, or was no plain failure of
    /// named tests, says nothing.
    fn mark_predating(
        &self,
        file: &RecordFile,
        input: &StopInput,
        repo: &Path,
        runs: &[PlannedTestRun],
        outcomes: &mut [TestOutcome],
    ) {
        if outcomes.iter().all(|o| o.passed) {
            return;
        }
        let Some(commit) = input.base.as_ref().and_then(|b| b.commit.as_deref()) else {
            return;
        };
        let Some(tree) = commit_tree(&self.git, repo, commit) else {
            return;
        };
        let record = file.load();
        for (run, outcome) in runs.iter().zip(outcomes.iter_mut()) {
            if outcome.passed {
                continue;
            }
            let key = base_key(&tree, run, |cwd| self.run_env(cwd));
            let Some(base) = record.base(&key) else {
                continue;
            };
            let base_failing: &[String] = match base.verdict() {
                TestVerdict::Passed => &[],
                TestVerdict::Failed => base.summary.as_ref().map_or(&[], |s| &s.failing),
                // An error or a cut-off run at the base names no test: nothing is known.
                _ => continue,
            };
            let failing = outcome.summary.as_ref().map_or(&[][..], |s| &s.failing);
            outcome.predating = Some(
                failing
                    .iter()
                    .filter(|name| base_failing.contains(name))
                    .cloned()
                    .collect(),
            );
        }
    }

    /// The warm run's answer for `key`: a kept verdict, or the run still testing that tree
    /// (waited for, up to the limit).
    fn find(&self, file: &RecordFile, root: &Path, key: &str, limit: Duration) -> Found {
        let record = file.load();
        if let Some(verdict) = record.verdict(key) {
            return Found::Verdict(
                verdict.outcomes.clone(),
                WarmUse::Reused {
                    finished_at_ms: verdict.finished_at_ms,
                },
            );
        }
        let Some(current) = record.current else {
            return Found::Nothing;
        };
        let testing_this_tree =
            matches!(&current.phase, WarmPhase::Running { key: k, .. } if k == key);
        let Some(console) = current
            .console
            .as_deref()
            .and_then(|c| Uuid::parse_str(c).ok())
            .filter(|_| testing_this_tree)
        else {
            return Found::Nothing;
        };
        let Ok(client) = ConsoleClient::for_project(root) else {
            return Found::Nothing;
        };
        let Ok(handle) = client.attach(console) else {
            return Found::Nothing;
        };
        let started = Instant::now();
        tracing::info!("stop gate: waiting for the warm run of this tree (console {console})");
        // The agent waits for it now: it no longer yields the CPU.
        if let Err(e) = handle.restore_priority() {
            tracing::debug!("warm run console {console}: priority not restored: {e}");
        }
        let waited = console_runner::wait_or_cancel(&handle, limit, &self.cancel);
        match waited {
            Ok((_, true)) => Found::Cancelled,
            Ok((info, false)) if info.status.is_running() => Found::StillRunning {
                waited_secs: started.elapsed().as_secs(),
            },
            Ok(_) => match file.load().verdict(key) {
                Some(verdict) => Found::Verdict(
                    verdict.outcomes.clone(),
                    WarmUse::Waited {
                        waited_ms: u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX),
                    },
                ),
                // It ended without a verdict (the tree changed under it, it was cut off).
                None => Found::Nothing,
            },
            Err(e) => {
                tracing::warn!("stop gate: cannot wait for the warm run: {e}");
                Found::Nothing
            }
        }
    }
}

/// After a stop: no warm run asked for until now is wanted any more, and the one waiting or
/// running is ended (its whole tree), unless `keep` (it tests this very tree and goes on in
/// the background).
fn settle(file: &RecordFile, root: &Path, keep: bool) {
    let console = file.update(|record| {
        record.wanted_after_ms = cp_base::now_ms();
        let current = record.current.as_mut()?;
        if keep || !current.phase.is_active() {
            return None;
        }
        current.phase = WarmPhase::Cancelled {
            why: "a stop tested the tree itself".into(),
        };
        current.console.clone()
    });
    if let Some(console) = console {
        end_console(root, &console);
    }
}

/// The outcomes of runs the stop stopped waiting for: timed out for this stop, with the warm
/// run going on.
fn still_running(
    runs: &[PlannedTestRun],
    waited_secs: u64,
    durations: &Durations,
) -> Vec<TestOutcome> {
    runs.iter()
        .map(|run| {
            let mut outcome = stopped(run, "");
            outcome.exit = Some(TestExit::TimedOut {
                after_secs: waited_secs,
            });
            outcome.error = None;
            outcome.elapsed_ms = waited_secs.saturating_mul(1000);
            outcome.usual_ms = durations.usual_ms(&run.command, &run.cwd);
            outcome.warm = Some(WarmUse::StillRunning { waited_secs });
            outcome
        })
        .collect()
}

/// An outcome of `run` that was stopped before it finished, for `reason`.
fn stopped(run: &PlannedTestRun, reason: &str) -> TestOutcome {
    TestOutcome {
        project: run.project.clone(),
        command: run.command.clone(),
        passed: false,
        exit: Some(TestExit::Stopped {
            reason: reason.to_owned(),
        }),
        error: None,
        summary: None,
        elapsed_ms: 0,
        tail: Vec::new(),
        note: None,
        why: Some(run.why.clone()),
        missing: None,
        usual_ms: None,
        warm: None,
        predating: None,
    }
}
