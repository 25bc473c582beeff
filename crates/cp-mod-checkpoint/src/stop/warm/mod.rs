//! Warm runs: the stop gate's tests run while the agent thinks, and a stop on the very same
//! tree takes their verdict without waiting.
//!
//! - **Asked for by every edit.** The edit paths (the built-in agent's batches, the agent
//!   CLIs' after-edit hooks, the MCP file tools: all through the checkpoint module's batch
//!   hook) call [`WarmLauncher::request`], which asks the project's console server for a
//!   console running `context-pilot warm-run`, without waiting for its answer (the server
//!   acts on the request after the hook process has exited). The console is *exclusive* by its label: the
//!   server first ends the one before, its whole process tree, so a new edit cancels a run
//!   that has not finished and there is never more than one. It runs *niced* (19, and its
//!   session's autogroup), so the agent's own work keeps the CPU. Being the server's, it
//!   outlives the hook process that asked for it.
//! - **The run** ([`warm_run`]) waits out the quiet time (`checkpoint.warm.quiet_ms`), lists
//!   the tree as the stop gate does, plans the same test commands a stop would, and keys the
//!   run by the tree's fingerprint and the commands with their environment ([`key`]). It
//!   runs them (the output shows in its console), fingerprints the tree again, and keeps the
//!   verdict under the key only when nothing changed meanwhile ([`record`]). It tells what
//!   happens as [`WarmNews`], which the `warm-run` command prints.
//! - **At a stop** ([`StopGate::run_tests_warm`](super::StopGate)) a kept verdict whose key is
//!   the tree's now is the verdict, with no wait; a run still testing this very tree is
//!   waited for; anything else is ended and the tests run afresh. A verdict of another tree
//!   is never used: a different file, commit, command or environment is a different key.
//! - **Nothing is left running**: each stop settles the warm run (it is used, or ended), and
//!   [`cancel_warm_run`] ends it when the TUI, a `run` or an MCP session ends; the console
//!   server ends its consoles when it shuts down.

mod at_stop;
mod key;
mod news;
mod record;
mod run;
mod tree;

use std::path::{Path, PathBuf};
use std::sync::Mutex;

use cp_base::{BatchChanges, Project, WorkerId};
use cp_mod_console::{ConsoleClient, SpawnSpec};

use super::console_runner::end_console;

pub use super::report::WarmUse;
pub use news::WarmNews;
pub use record::{WarmPhase, WarmRun};
pub use run::{base_run, warm_run};

pub(crate) use record::RecordFile;

use super::StopGateConfig;

/// Label of a warm run's console.
pub const WARM_LABEL: &str = "checkpoint:warm";

/// The hidden subcommand of the `context-pilot` binary that a warm console runs.
pub const WARM_SUBCOMMAND: &str = "warm-run";

/// The niceness warm runs get: the lowest priority.
const WARM_NICE: u8 = 19;

/// Environment variables a warm run takes from the edit that asked for it: the agent's `PATH`
/// (the tests' environment is part of a verdict's key) and where the person's configuration
/// (the trust store) is.
const PASSED_ENV: [&str; 3] = ["PATH", "HOME", "XDG_CONFIG_HOME"];

/// The project's newest warm run, for the Checkpoint panel.
pub fn current_warm_run(project: &Project) -> Option<WarmRun> {
    RecordFile::new(project).load().current
}

/// The file the panel follows for [`current_warm_run`].
pub fn warm_record_path(project: &Project) -> PathBuf {
    RecordFile::new(project).path().to_path_buf()
}

/// Starts warm runs for the edit paths, as consoles of the project's server running
/// `EXE warm-run` (`EXE` being the `context-pilot` binary).
#[derive(Debug)]
pub struct WarmLauncher {
    exe: PathBuf,
    /// Variables set for the warm run over what this process has (see [`PASSED_ENV`]).
    env: Vec<(String, String)>,
    /// The last project's client, kept so a long-lived host connects once.
    client: Mutex<Option<ConsoleClient>>,
}

impl WarmLauncher {
    /// A launcher whose consoles run `exe warm-run`.
    pub fn new(exe: impl Into<PathBuf>) -> Self {
        Self {
            exe: exe.into(),
            env: Vec::new(),
            client: Mutex::new(None),
        }
    }

    /// Sets `name` to `value` for the warm runs, over what this process has: a host whose
    /// edits run in another environment than its own (a benchmark's own trust store).
    #[must_use]
    pub fn with_env(mut self, name: impl Into<String>, value: impl Into<String>) -> Self {
        self.env.push((name.into(), value.into()));
        self
    }

    /// After `batch` changed files of `project` (made by `worker`'s agent), asks the console
    /// server to start a warm run, ending the one before. Does nothing when warm runs are
    /// off or the batch changed nothing. Never fails the edit: problems are logged.
    pub fn request_for_batch(&self, project: &Project, worker: &WorkerId, batch: &BatchChanges) {
        if batch.is_empty() {
            return;
        }
        match StopGateConfig::load(project) {
            Ok(config) if config.warm.enabled => {}
            Ok(_) => return,
            // The stop gate will say what is wrong with its section.
            Err(e) => {
                tracing::debug!("no warm run: {e}");
                return;
            }
        }
        let change = describe(batch);
        if let Err(e) = self.request(project, worker, &change, false) {
            tracing::warn!("no warm run after {change}: {e}");
        }
    }

    /// At the start of a session: asks for a base run ([`base_run`]), which tests the tree of
    /// HEAD's commit when nothing is uncommitted and keeps each command's verdict for the
    /// session's stops, so failures that predate the session are told from new ones. Does
    /// nothing when warm runs are off or a warm run waits or runs (it is not ended for this).
    /// Never fails the caller: problems are logged.
    pub fn request_base(&self, project: &Project, worker: &WorkerId) {
        match StopGateConfig::load(project) {
            Ok(config) if config.warm.enabled => {}
            Ok(_) => return,
            Err(e) => {
                tracing::debug!("no base run: {e}");
                return;
            }
        }
        let busy = RecordFile::new(project)
            .load()
            .current
            .is_some_and(|run| run.phase.is_active());
        if busy {
            tracing::debug!("no base run: a warm run is under way");
            return;
        }
        if let Err(e) = self.request(project, worker, run::BASE_CHANGE, true) {
            tracing::warn!("no base run: {e}");
        }
    }

    fn request(
        &self,
        project: &Project,
        worker: &WorkerId,
        change: &str,
        base: bool,
    ) -> Result<(), cp_mod_console::ConsoleError> {
        let root = project.root();
        let mut argv: Vec<String> = vec![
            self.exe.display().to_string(),
            "--project".into(),
            root.display().to_string(),
            "--worker".into(),
            worker.as_str().to_owned(),
            WARM_SUBCOMMAND.into(),
            "--change".into(),
            change.to_owned(),
            "--asked-at-ms".into(),
            cp_base::now_ms().to_string(),
        ];
        if base {
            argv.push("--base".into());
        }
        argv.shrink_to_fit();
        let mut spec = SpawnSpec::exec(argv, root)
            .label(WARM_LABEL)
            .exclusive()
            .nice(WARM_NICE)
            .description(format!("warm run of the stop gate's tests, after {change}"));
        for name in PASSED_ENV {
            if let Some(value) = std::env::var_os(name).and_then(|v| v.into_string().ok()) {
                spec = spec.env(name, value);
            }
        }
        for (name, value) in &self.env {
            spec = spec.env(name.clone(), value.clone());
        }
        // The run of a stop that is gone tests a tree this edit changed: it ends now.
        super::stop_run::end_orphan(project);
        // Not waited for: the server ends the warm console before and starts this one after
        // the edit's hook process has gone on (or exited).
        self.client_for(root)?.spawn_unanswered(spec)
    }

    fn client_for(&self, root: &Path) -> Result<ConsoleClient, cp_mod_console::ConsoleError> {
        let mut cached = self
            .client
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if let Some(client) = cached.as_ref()
            && client.project_root() == root.canonicalize().as_deref().unwrap_or(root)
        {
            return Ok(client.clone());
        }
        let client = ConsoleClient::for_project(root)?;
        *cached = Some(client.clone());
        Ok(client)
    }
}

/// What changed, for the panel: the batch's first edit and how many more.
fn describe(batch: &BatchChanges) -> String {
    let labels: Vec<&str> = batch
        .calls
        .iter()
        .filter(|c| !c.changes.is_empty())
        .map(|c| c.label.as_str())
        .collect();
    match labels.as_slice() {
        [] => "an edit".to_owned(),
        [one] => bounded(one),
        [first, rest @ ..] => format!("{} and {} more", bounded(first), rest.len()),
    }
}

/// At most 120 characters of `text`.
fn bounded(text: &str) -> String {
    const MAX: usize = 120;
    if text.chars().count() <= MAX {
        text.to_owned()
    } else {
        let cut: String = text.chars().take(MAX - 1).collect();
        format!("{cut}…")
    }
}

/// Ends the project's warm run, if one waits or runs (its whole process tree), and marks
/// every warm run asked for until now as unwanted; `why` is shown in the panel. Ends the test
/// run of a stop that is gone too. For the end of a session: the TUI, a `run`, an MCP server.
pub fn cancel_warm_run(project: &Project, why: &str) {
    super::stop_run::end_orphan(project);
    let file = RecordFile::new(project);
    if !file.path().exists() {
        return;
    }
    let console = file.update(|record| {
        record.wanted_after_ms = cp_base::now_ms();
        let current = record.current.as_mut()?;
        if !current.phase.is_active() {
            return None;
        }
        current.phase = WarmPhase::Cancelled {
            why: why.to_owned(),
        };
        current.console.clone()
    });
    if let Some(console) = console {
        end_console(project.root(), &console);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use cp_base::{CallChanges, ChangeKind, FileChange};

    fn call(label: &str, changes: usize) -> CallChanges {
        CallChanges {
            call_index: 0,
            tool: "File_edit".into(),
            label: label.into(),
            changes: (0..changes)
                .map(|i| FileChange::new(format!("f{i}.py"), ChangeKind::Modified))
                .collect(),
        }
    }

    #[test]
    fn a_batch_is_described_by_its_first_edit() {
        let batch = BatchChanges {
            calls: vec![call("File_read a.py", 0), call("File_edit src/a.py", 1)],
        };
        assert_eq!(describe(&batch), "File_edit src/a.py");
        let batch = BatchChanges {
            calls: vec![
                call("Edit a.py", 1),
                call("Write b.py", 2),
                call("Edit c.py", 1),
            ],
        };
        assert_eq!(describe(&batch), "Edit a.py and 2 more");
        let long = "x".repeat(500);
        assert_eq!(
            describe(&BatchChanges {
                calls: vec![call(&long, 1)]
            })
            .chars()
            .count(),
            120
        );
    }
}
