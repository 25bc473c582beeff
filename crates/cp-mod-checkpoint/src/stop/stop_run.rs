//! The project's stop run: the tests a stop runs itself, as a console of the console server,
//! kept track of so that none outlives its stop for long.
//!
//! A stop that runs its tests holds the owner lock (`run/locks/stop-run.owner`) while it waits
//! for them, and keeps the run's key (the tree and the commands, as a warm run's) in
//! `state/stop-run.json` and its console's id in `state/stop-run.console`. When the stop's
//! process is gone before the run ended (the agent or its hook was killed), the lock is free
//! and the run is an *orphan*: it may finish, once, in its console, and the next stop on the
//! same tree takes its verdict instead of running the suite again; a stop on another tree, a
//! new edit, or the end of a session (the TUI, a `run`, an MCP server) ends it at once, its
//! whole process group.

use std::fs::File;
use std::path::PathBuf;

use cp_base::Project;
use serde::{Deserialize, Serialize};

use cp_mod_console::ConsoleClient;

use super::TEST_SESSION_LABEL;
use super::state::write_replace;

const RECORD: &str = "stop-run.json";
const CONSOLE: &str = "stop-run.console";
const OWNER: &str = "stop-run.owner";

/// What a stop's run tests.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct StopRunRecord {
    /// The key of the tree and the commands ([`super::warm`]'s `run_key`).
    pub(crate) key: String,
    /// When it started, in milliseconds since the Unix epoch.
    pub(crate) started_at_ms: u64,
}

/// A stop's run whose stop is gone.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Orphan {
    pub(crate) record: StopRunRecord,
    /// Its console, when it started one.
    pub(crate) console: Option<String>,
}

impl Orphan {
    /// The orphan with its console found, when its stop was killed after the console started
    /// but before it wrote the console's id down: the first test console that started at or
    /// after the run was recorded, running or ended (its verdict may still be taken). Only one
    /// stop records a run at a time (the owner lock), so that console is the run's.
    fn with_console_found(mut self, project: &Project) -> Self {
        if self.console.is_none() {
            self.console = ConsoleClient::for_project(project.root())
                .and_then(|client| client.list())
                .map_err(|e| tracing::debug!("stop gate: cannot list the consoles: {e}"))
                .ok()
                .and_then(|consoles| {
                    consoles
                        .into_iter()
                        .filter(|c| {
                            c.label.as_deref() == Some(TEST_SESSION_LABEL)
                                && c.started_at_ms >= self.record.started_at_ms
                        })
                        .min_by_key(|c| c.started_at_ms)
                })
                .map(|c| c.id.to_string());
        }
        self
    }
}

/// The stop run's files in a project.
pub(crate) struct StopRunFiles {
    record: PathBuf,
    console: PathBuf,
    owner: PathBuf,
}

/// Held by the stop whose run it is; dropping it (or the process ending) lets the run go.
pub(crate) struct Owner {
    _lock: File,
}

impl StopRunFiles {
    pub(crate) fn new(project: &Project) -> Self {
        let state = project.dir().join("state");
        Self {
            record: state.join(RECORD),
            console: state.join(CONSOLE),
            owner: project.locks_dir().join(OWNER),
        }
    }

    /// Where the console runner writes the run's console id.
    pub(crate) fn console_path(&self) -> PathBuf {
        self.console.clone()
    }

    /// The owner lock, when no stop holds it; `None` when one does (or it cannot be had).
    fn try_own(&self) -> Option<Owner> {
        if let Some(dir) = self.owner.parent() {
            std::fs::create_dir_all(dir).ok()?;
        }
        let file = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .open(&self.owner)
            .ok()?;
        file.try_lock().ok()?;
        Some(Owner { _lock: file })
    }

    /// The run left by a stop that is gone, taken out of the record (the caller ends it or
    /// takes its verdict); `None` when there is none or its stop still waits for it.
    pub(crate) fn take_orphan(&self) -> Option<Orphan> {
        if !self.record.exists() {
            return None;
        }
        let _owner = self.try_own()?;
        let record = std::fs::read(&self.record)
            .ok()
            .and_then(|bytes| serde_json::from_slice::<StopRunRecord>(&bytes).ok());
        let console = std::fs::read_to_string(&self.console)
            .ok()
            .map(|id| id.trim().to_owned())
            .filter(|id| !id.is_empty());
        self.remove();
        record.map(|record| Orphan { record, console })
    }

    /// Records a run of `key` starting now and holds it; `None` when another stop holds the
    /// owner lock (its run is not tracked then).
    pub(crate) fn claim(&self, key: &str) -> Option<Owner> {
        let owner = self.try_own()?;
        let record = StopRunRecord {
            key: key.to_owned(),
            started_at_ms: cp_base::now_ms(),
        };
        let _ = std::fs::remove_file(&self.console);
        let saved = serde_json::to_vec(&record)
            .map_err(std::io::Error::other)
            .and_then(|bytes| write_replace(&self.record, &bytes));
        if let Err(e) = saved {
            tracing::warn!("stop gate: the stop run is not recorded: {e}");
        }
        Some(owner)
    }

    /// The run ended with its stop: nothing to track.
    pub(crate) fn finish(&self, owner: Owner) {
        self.remove();
        drop(owner);
    }

    fn remove(&self) {
        let _ = std::fs::remove_file(&self.record);
        let _ = std::fs::remove_file(&self.console);
    }
}

/// Ends the project's orphaned stop run, if there is one (its console's whole process group).
pub(crate) fn end_orphan(project: &Project) {
    if let Some(orphan) = StopRunFiles::new(project).take_orphan()
        && let Some(console) = orphan.with_console_found(project).console
    {
        tracing::info!("stop gate: ending the test run of a stop that is gone ({console})");
        super::console_runner::end_console(project.root(), &console);
    }
}

/// What a stop that took over an orphan's verdict says of it.
const ADOPTED_NOTE: &str = "ran for an earlier stop on this very tree whose session ended before \
                            the result; this stop took their verdict instead of running them again";

impl super::StopGate {
    /// Runs `runs` for a stop whose tree and commands have the key `key`, tracked as the
    /// project's stop run. An orphan of this very key and one command is waited for and its
    /// verdict taken (the suite runs once); any other orphan is ended first.
    pub(super) fn run_fresh(
        &self,
        project: &Project,
        runs: Vec<super::testing::PlannedTestRun>,
        key: &str,
    ) -> Vec<super::TestOutcome> {
        let durations = super::durations::Durations::new(project);
        let files = StopRunFiles::new(project);
        if let Some(orphan) = files.take_orphan() {
            let orphan = orphan.with_console_found(project);
            match (orphan.record.key == key, runs.as_slice(), &orphan.console) {
                (true, [run], Some(console)) => {
                    let started = orphan.record.started_at_ms;
                    let mut outcome = self.run_one_via(run.clone(), &durations, |spec| {
                        self.runner
                            .adopt(console, spec, started)
                            .unwrap_or_else(|| Err(std::io::Error::other("no console runner")))
                    });
                    if outcome.exit.is_some() {
                        outcome.note = Some(ADOPTED_NOTE.into());
                        return vec![outcome];
                    }
                    tracing::info!("stop gate: the orphaned test run gave no verdict; running");
                    super::console_runner::end_console(project.root(), console);
                }
                (_, _, Some(console)) => {
                    super::console_runner::end_console(project.root(), console);
                }
                _ => {}
            }
        }
        let Some(owner) = files.claim(key) else {
            return self.run_planned(runs, &durations);
        };
        let console_file = files.console_path();
        let outcomes = runs
            .into_iter()
            .map(|run| {
                self.run_one_via(run, &durations, |spec| {
                    let mut spec = spec.clone();
                    spec.console_file = Some(console_file.clone());
                    self.runner.run(&spec)
                })
            })
            .collect();
        files.finish(owner);
        outcomes
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_run_is_an_orphan_only_once_its_stop_let_go() {
        let dir = tempfile::tempdir().unwrap();
        let project = Project::at(dir.path());
        let files = StopRunFiles::new(&project);
        assert!(files.take_orphan().is_none());
        let owner = files.claim("k1").unwrap();
        std::fs::write(files.console_path(), "abc\n").unwrap();
        assert!(files.take_orphan().is_none(), "its stop still holds it");
        drop(owner);
        let orphan = files.take_orphan().unwrap();
        assert_eq!(orphan.record.key, "k1");
        assert_eq!(orphan.console.as_deref(), Some("abc"));
        assert!(files.take_orphan().is_none(), "taken once");
        let owner = files.claim("k2").unwrap();
        files.finish(owner);
        assert!(files.take_orphan().is_none(), "a finished run is no orphan");
    }
}
