//! One warm run, as `context-pilot warm-run` does it inside its console: wait for the edits
//! to settle, key the tree and the commands, run the tests, and keep the verdict only when the
//! tree did not change under them. What happens is told as [`WarmNews`]; the command prints it.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant, SystemTime};

use cp_base::{Project, WorkerId, proctree};
use cp_mod_console::ConsoleClient;
use cp_orchestrate::StopInput;
use uuid::Uuid;

use super::super::categorize::CategorizedFile;
use super::super::durations::Durations;
use super::super::fingerprint::fingerprint;
use super::super::gate_files::GateFiles;
use super::super::report::{StopPhase, StopReport, TestOutcome, TestVerdict};
use super::super::runner::ProcessGroupRunner;
use super::super::state::{LastTests, StateFile};
use super::super::testing::PlannedTestRun;
use super::super::{STATE_FILE, StopGate, StopGateConfig};
use super::key::{base_key, run_key};
use super::news::WarmNews;
use super::record::{RecordFile, WarmPhase, WarmRun, WarmVerdict};
use super::tree::{commit_tree, head_commit, racy, tree_fingerprint};
use super::{WARM_LABEL, bounded};
use crate::error::CheckpointError;
use cp_git::ChangedFile;

/// The least a warm run's tests may take before they are cut off: a cold build of a compiled
/// project runs here, at low priority, while nobody waits.
const WARM_MIN_LIMIT_SECS: u64 = 600;

/// How often the listing is taken again while a file is racy, and how many times at most.
const RACY_PAUSE: Duration = Duration::from_millis(60);
const RACY_TRIES: usize = 50;

/// How long a warm run waits for the one before it (ended by the server) to be gone.
const PREDECESSOR_WAIT: Duration = Duration::from_secs(30);

/// The tree as the stop gate lists it, at one moment.
struct Listing {
    repo: PathBuf,
    files: Vec<CategorizedFile>,
    head: Option<String>,
    /// The stop gate's fingerprint of the changed set (what it keeps for "tested this tree").
    changed_set: String,
    /// That and HEAD: the tree.
    tree: String,
}

/// What `context-pilot warm-run` does in its console, for the edit `change` of `worker`,
/// asked for at `asked_at_ms` (milliseconds since the Unix epoch). What happened is kept in
/// the warm-run record, and told to `news` as it happens.
///
/// # Errors
/// The project's checkpoint configuration cannot be used.
pub fn warm_run(
    project: &Project,
    worker: &WorkerId,
    change: &str,
    asked_at_ms: u64,
    news: &dyn Fn(&WarmNews),
) -> Result<(), CheckpointError> {
    warm_run_as(project, worker, change, asked_at_ms, false, news)
}

/// What `context-pilot warm-run --base` does at the start of a session on a clean tree: the
/// tests of HEAD's commit, as a stop would plan them, each verdict kept under the commit's
/// tree hash ([`super::key::base_key`]) for the stops of sessions that begin there. Like any
/// warm run it is ended by the next edit; a verdict is kept only when the tree stayed clean.
///
/// # Errors
/// The project's checkpoint configuration cannot be used.
pub fn base_run(
    project: &Project,
    worker: &WorkerId,
    asked_at_ms: u64,
    news: &dyn Fn(&WarmNews),
) -> Result<(), CheckpointError> {
    warm_run_as(project, worker, BASE_CHANGE, asked_at_ms, true, news)
}

/// What a base run says it runs after, in the panel.
pub(crate) const BASE_CHANGE: &str = "the session's start (its base commit)";

fn warm_run_as(
    project: &Project,
    worker: &WorkerId,
    change: &str,
    asked_at_ms: u64,
    base: bool,
    news: &dyn Fn(&WarmNews),
) -> Result<(), CheckpointError> {
    let config = StopGateConfig::load(project)?;
    if !config.warm.enabled {
        return Ok(());
    }
    let quiet = Duration::from_millis(config.warm.quiet_ms);
    let gate = StopGate::new(config)?;
    let me = std::env::var(proctree::RUN_MARKER_ENV)
        .ok()
        .filter(|m| Uuid::parse_str(m).is_ok());
    let file = RecordFile::new(project);
    let run = Run {
        project,
        worker,
        file: &file,
        me: me.clone(),
        asked_at_ms,
        base,
        news,
    };
    let registered = file.update(|record| {
        if record.wanted_after_ms > asked_at_ms {
            return false;
        }
        record.current = Some(WarmRun {
            console: me.clone(),
            change: bounded(change),
            requested_at_ms: asked_at_ms,
            phase: WarmPhase::Waiting,
            used: None,
        });
        true
    });
    if !registered {
        news(&WarmNews::Superseded {
            change: change.to_owned(),
        });
        return Ok(());
    }
    news(&WarmNews::Settling {
        change: change.to_owned(),
        quiet,
    });
    std::thread::sleep(quiet);
    run.wait_for_predecessors(project.root());
    for attempt in 0..2 {
        if !run.still_wanted() {
            return Ok(());
        }
        match run.once(&gate) {
            Ok(Attempt::TreeChanged) if attempt == 0 => {
                news(&WarmNews::Again);
                std::thread::sleep(quiet);
            }
            Ok(Attempt::Finished | Attempt::TreeChanged) => return Ok(()),
            Err(why) => {
                news(&WarmNews::NoRun(why.to_string()));
                run.set_phase(WarmPhase::Skipped {
                    why: why.to_string(),
                });
                return Ok(());
            }
        }
    }
    Ok(())
}

/// Why a warm run tests nothing (the panel shows it).
#[derive(Debug, thiserror::Error)]
enum NoWarmRun {
    /// Git could not list the tree.
    #[error(transparent)]
    Git(#[from] cp_git::GitError),
    /// The files changed each time they were listed.
    #[error("files keep changing; the stop will test the tree")]
    KeepsChanging,
    /// Nothing changed that runs the tests.
    #[error("no change that runs the tests")]
    NothingToTest,
    /// The last stop's verdict is of this very tree.
    #[error("the last stop already tested this tree")]
    AlreadyTested,
    /// A base run found uncommitted changes: the tree is not the commit's.
    #[error("uncommitted changes: the tree is not its commit's, so it is no session's base")]
    NotClean,
    /// A base run found the base's verdict known already.
    #[error("the verdict of this commit's tree is known already")]
    BaseKnown,
    /// The stop gate would run no tests (its note says why, when it has one).
    #[error("{}", .0.as_deref().unwrap_or("the tests are off"))]
    NotPlanned(Option<String>),
}

/// How one attempt ended.
enum Attempt {
    /// With a verdict, or with a reason there is none (recorded).
    Finished,
    /// The tree changed while the tests ran: no verdict for either tree.
    TreeChanged,
}

/// The run's context.
struct Run<'a> {
    project: &'a Project,
    worker: &'a WorkerId,
    file: &'a RecordFile,
    /// This run's console, when it runs in one.
    me: Option<String>,
    asked_at_ms: u64,
    /// A base run: tests the clean tree of HEAD's commit, for later sessions' stops.
    base: bool,
    /// Who is told what happens.
    news: &'a dyn Fn(&WarmNews),
}

impl Run<'_> {
    /// Whether no stop or end of session came since the run was asked for, and it is still
    /// the project's newest.
    fn still_wanted(&self) -> bool {
        let record = self.file.load();
        record.wanted_after_ms <= self.asked_at_ms
            && record
                .current
                .as_ref()
                .is_some_and(|c| c.console == self.me && c.requested_at_ms == self.asked_at_ms)
    }

    /// Sets this run's phase, when it is still the newest.
    fn set_phase(&self, phase: WarmPhase) {
        self.file.update(|record| {
            if let Some(current) = record.current.as_mut()
                && current.console == self.me
                && current.requested_at_ms == self.asked_at_ms
            {
                current.phase = phase;
            }
        });
    }

    /// Waits until the warm runs this one replaced are gone (the server ends them in the
    /// background), so tests never run twice at once.
    fn wait_for_predecessors(&self, root: &Path) {
        let Ok(client) = ConsoleClient::for_project(root) else {
            return;
        };
        let Ok(consoles) = client.list() else {
            return;
        };
        for info in consoles {
            let mine = self.me.as_deref() == Some(info.id.to_string().as_str());
            if mine || info.label.as_deref() != Some(WARM_LABEL) || !info.status.is_running() {
                continue;
            }
            if let Ok(handle) = client.attach(info.id) {
                let _ = handle.wait_exit(PREDECESSOR_WAIT);
            }
        }
    }

    /// Lists the tree once no file is racy; `Err` says why it could not.
    fn listing(&self, gate: &StopGate) -> Result<Listing, NoWarmRun> {
        let repo = gate.git.repo_root(self.project.root())?;
        for _ in 0..RACY_TRIES {
            let taken = SystemTime::now();
            // The project's own files, as the stop lists them: not nested repositories,
            // worktrees or submodules.
            let status = gate.git.status(&repo)?;
            let head = status.head.commit;
            let changed: Vec<ChangedFile> = status
                .files
                .into_iter()
                .filter(ChangedFile::is_own)
                .collect();
            // Nor what the gate's own runs wrote: a run's `.coverage` changes no tree.
            let changed = GateFiles::new(self.project).without_gate_files(&repo, changed);
            if racy(&repo, taken, changed.iter()) {
                std::thread::sleep(RACY_PAUSE);
                continue;
            }
            let files = gate.categorizer.categorize(changed);
            let changed_set = fingerprint(&repo, head.as_deref(), &files);
            let tree = tree_fingerprint(&changed_set, head.as_deref());
            return Ok(Listing {
                repo,
                files,
                head,
                changed_set,
                tree,
            });
        }
        Err(NoWarmRun::KeepsChanging)
    }

    /// What a run whose tree is `listing` compares with (the last stop's outcomes), or why it
    /// tests nothing. A base run tests a clean tree only, with nothing before it.
    fn before<'a>(
        &self,
        listing: &Listing,
        report: &StopReport,
        last: Option<&'a LastTests>,
    ) -> Result<&'a [TestOutcome], NoWarmRun> {
        if self.base {
            return if listing.files.is_empty() {
                Ok(&[])
            } else {
                Err(NoWarmRun::NotClean)
            };
        }
        if !(report.code_changed && report.files.iter().any(|f| f.triggers_tests)) {
            return Err(NoWarmRun::NothingToTest);
        }
        if last.is_some_and(|t| t.fingerprint == listing.changed_set && !LastTests::failed(t)) {
            return Err(NoWarmRun::AlreadyTested);
        }
        Ok(last.map(|t| t.outcomes.as_slice()).unwrap_or_default())
    }

    /// A base run's key for each of `runs` under the commit's tree hash; empty for a warm run.
    fn base_keys(
        &self,
        gate: &StopGate,
        listing: &Listing,
        runs: &[PlannedTestRun],
    ) -> Result<Vec<String>, NoWarmRun> {
        if !self.base {
            return Ok(Vec::new());
        }
        let head = listing.head.as_deref().ok_or(NoWarmRun::NotClean)?;
        let tree = commit_tree(&gate.git, &listing.repo, head).ok_or(NoWarmRun::NotClean)?;
        let keys: Vec<String> = runs
            .iter()
            .map(|run| base_key(&tree, run, |cwd| gate.run_env(cwd)))
            .collect();
        let record = self.file.load();
        if keys.iter().all(|k| record.base(k).is_some()) {
            return Err(NoWarmRun::BaseKnown);
        }
        Ok(keys)
    }

    /// One attempt: list, plan, key, run, check the tree again.
    fn once(&self, gate: &StopGate) -> Result<Attempt, NoWarmRun> {
        let listing = self.listing(gate)?;
        let mut report = StopReport::new(StopPhase::First);
        report.set_files(listing.files.clone(), &gate.categorizer);
        let state = StateFile::new(self.project.state_dir(self.worker).join(STATE_FILE))
            .load()
            .unwrap_or_default();
        let before = self.before(&listing, &report, state.last_tests.as_ref())?;
        let input = StopInput {
            project: self.project.clone(),
            worker: self.worker.clone(),
            session: String::new(),
            gate_commits: false,
            base: None,
        };
        let runs = gate
            .plan_runs(&input, &listing.repo, before, &report)
            .map_err(NoWarmRun::NotPlanned)?;
        let key = run_key(&listing.tree, &runs, |cwd| gate.run_env(cwd));
        let base_keys = self.base_keys(gate, &listing, &runs)?;
        if !self.base
            && let Some(known) = self.file.load().verdict(&key)
        {
            self.set_phase(done(&key, &known.outcomes));
            (self.news)(&WarmNews::Known);
            return Ok(Attempt::Finished);
        }
        let commands: Vec<String> = runs.iter().map(|r| r.command.clone()).collect();
        self.set_phase(WarmPhase::Running {
            key: key.clone(),
            commands: commands.clone(),
            started_at_ms: cp_base::now_ms(),
        });
        (self.news)(&WarmNews::Testing {
            commands: commands.clone(),
        });
        // The console a warm run lives in is a terminal, where the tests show as they run;
        // anywhere else (a test calling it in-process) the output is the verdict's only.
        let runner = ProcessGroupRunner {
            echo: std::io::IsTerminal::is_terminal(&std::io::stdout()),
            ..ProcessGroupRunner::default()
        };
        let durations = Durations::new(self.project);
        let started = Instant::now();
        let outcomes: Vec<TestOutcome> = runs
            .into_iter()
            .map(|mut run| {
                run.timeout_secs = run.timeout_secs.max(WARM_MIN_LIMIT_SECS);
                gate.run_one(run, &durations, &runner)
            })
            .collect();
        let elapsed = started.elapsed();
        let after = self.listing(gate).map(|l| l.tree);
        if let Some(cut) = outcomes
            .iter()
            .find(|o| matches!(o.verdict(), TestVerdict::TimedOut | TestVerdict::Stopped))
        {
            let why = format!(
                "`{}` did not finish ({}); what it built stays built",
                cut.command,
                super::super::failure_reason(cut)
            );
            (self.news)(&WarmNews::NoVerdict(why.clone()));
            self.set_phase(WarmPhase::NoVerdict { why });
            return Ok(Attempt::Finished);
        }
        if after.as_ref().ok().map(String::as_str) != Some(listing.tree.as_str()) {
            self.set_phase(WarmPhase::NoVerdict {
                why: "the tree changed while the tests ran: no verdict for either tree".into(),
            });
            return Ok(Attempt::TreeChanged);
        }
        let phase = done(&key, &outcomes);
        let me = self.me.clone();
        let asked_at_ms = self.asked_at_ms;
        self.file.update(|record| {
            record.keep(WarmVerdict {
                key: key.clone(),
                outcomes: outcomes.clone(),
                finished_at_ms: cp_base::now_ms(),
            });
            record.keep_bases(&base_keys, &outcomes);
            if let Some(current) = record.current.as_mut()
                && current.console == me
                && current.requested_at_ms == asked_at_ms
            {
                current.phase = phase;
            }
        });
        let passed = outcomes.iter().all(|o| o.passed);
        (self.news)(&WarmNews::Done {
            elapsed,
            passed,
            head: listing.head.clone(),
        });
        Ok(Attempt::Finished)
    }
}

/// The finished phase of a run with `outcomes` under `key`.
fn done(key: &str, outcomes: &[TestOutcome]) -> WarmPhase {
    WarmPhase::Done {
        key: key.to_owned(),
        passed: outcomes.iter().all(|o| o.passed),
        elapsed_ms: outcomes.iter().map(|o| o.elapsed_ms).sum(),
    }
}

/// The tree's fingerprint now, for a stop: the changed set's and HEAD's.
pub(crate) fn stop_tree(gate: &StopGate, repo: &Path, changed_set: &str) -> String {
    let head = head_commit(&gate.git, repo).ok().flatten();
    tree_fingerprint(changed_set, head.as_deref())
}
