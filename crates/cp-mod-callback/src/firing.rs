//! Firing: runs planned callbacks through console sessions, in parallel, and reports back.
//!
//! Each run gets its own thread that spawns the script in a console session (the console
//! server owns the process, so the output survives this process), waits for it to end or
//! time out, and reports. Blocking runs report through a channel to the batch's hold; the
//! others post a notification. `one_at_a_time` runs go through the [`RunQueue`]: the thread
//! that finishes a run starts the pending one. Background runs in flight are recorded so a
//! reload can hand them to the next process ([`inflight`]).

mod inflight;

use std::collections::hash_map::DefaultHasher;
use std::collections::{BTreeMap, HashMap};
use std::hash::{Hash, Hasher};
use std::path::Path;
use std::sync::mpsc::{self, Receiver, Sender};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use cp_base::{
    BatchChanges, BatchResponse, CallNote, Level, Notification, Notifier, Panel, Project, ToolEnv,
};
use cp_mod_console::{
    ClientConfig, ConsoleClient, KillCause, SessionHandle, SessionStatus, SpawnSpec,
};
use uuid::Uuid;

use crate::env;
use crate::model::CallbackDef;
use crate::plan::PlannedRun;
use crate::queue::{Admission, Pending, RunQueue};
use crate::report::{RunOutcome, RunReport};
use crate::run_panel::{PANEL_LINES, RunPanel};
use crate::script::script_path;
use crate::validate::resolve_cwd;

/// Limit for a blocking run whose definition lacks a timeout (a hand-edited config).
const FALLBACK_TIMEOUT_SECS: u64 = 600;
/// How long past its own timeout a run may take to be reported (kill grace, log flush).
const REPORT_GRACE: Duration = Duration::from_secs(30);
/// Failed-run panels kept; older ones are dropped from the sidebar (their logs stay on disk).
const MAX_PANELS: usize = 20;

/// One part of a queued run: the panel created with it and a blocking batch waiting for it.
struct Waiter {
    panel: RunPanel,
    tx: Option<Sender<RunReport>>,
}

struct Shared {
    project: Project,
    console: ClientConfig,
    client: Mutex<Option<ConsoleClient>>,
    queue: RunQueue<Waiter>,
    inflight: inflight::Inflight,
}

impl Shared {
    fn client(&self) -> Result<ConsoleClient, String> {
        let mut slot = self.client.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(c) = slot.as_ref() {
            return Ok(c.clone());
        }
        let client = ConsoleClient::new(self.console.clone())
            .map_err(|e| format!("cannot reach the console server: {e}"))?;
        *slot = Some(client.clone());
        Ok(client)
    }
}

/// A run ready to execute.
struct Job {
    run_id: Uuid,
    def: CallbackDef,
    files: Vec<String>,
    triggers: Vec<String>,
    panel: RunPanel,
    waiters: Vec<Sender<RunReport>>,
    notifier: Notifier,
    /// Set for a run started by an earlier process: attach to its session instead.
    resume: Option<inflight::Resume>,
}

/// A blocking run the batch waits for.
struct Wait {
    name: String,
    run_id: Uuid,
    calls: Vec<usize>,
    rx: Receiver<RunReport>,
    limit: Duration,
    behind: Option<Uuid>,
}

/// The module's firing machinery: the shared run queue and the panels of failed runs.
pub struct Firing {
    shared: Arc<Shared>,
    panels: Vec<RunPanel>,
}

impl Firing {
    pub fn new(project: Project, console: ClientConfig) -> Self {
        Self {
            shared: Arc::new(Shared {
                project,
                console,
                client: Mutex::new(None),
                queue: RunQueue::default(),
                inflight: inflight::Inflight::default(),
            }),
            panels: Vec::new(),
        }
    }

    /// Panels of failed runs, oldest first.
    /// Clones of a run panel share the state its runner updates.
    pub fn panels(&self) -> impl Iterator<Item = Arc<dyn Panel>> {
        self.panels
            .iter()
            .filter(|p| p.view().visible)
            .map(|p| Arc::new(p.clone()) as Arc<dyn Panel>)
    }

    /// Drops a run panel from the sidebar.
    pub fn close_panel(&mut self, panel_id: &str) -> bool {
        let before = self.panels.len();
        self.panels.retain(|p| p.id() != panel_id);
        self.panels.len() != before
    }

    /// Keeps unfinished runs and the newest failed ones.
    fn prune(&mut self) {
        self.panels.retain(|p| {
            let v = p.view();
            !v.finished || v.visible
        });
        let visible = self.panels.iter().filter(|p| p.view().visible).count();
        let mut excess = visible.saturating_sub(MAX_PANELS);
        self.panels.retain(|p| {
            if excess > 0 && p.view().visible {
                excess -= 1;
                false
            } else {
                true
            }
        });
    }

    /// Starts the planned runs. Background runs get a note now; blocking runs come back as
    /// the response's hold, which returns each run's result for the call that triggered it.
    pub fn fire(
        &mut self,
        runs: Vec<PlannedRun>,
        batch: &BatchChanges,
        env: &ToolEnv,
    ) -> BatchResponse {
        self.prune();
        let labels: HashMap<usize, String> = batch
            .calls
            .iter()
            .map(|c| (c.call_index, c.label.clone()))
            .collect();
        let mut notes = Vec::new();
        let mut waits = Vec::new();
        for run in runs {
            let (note, wait) = self.start(run, &labels, &env.notifier);
            notes.extend(note);
            waits.extend(wait);
        }
        if waits.is_empty() {
            return BatchResponse { notes, hold: None };
        }
        BatchResponse {
            notes,
            hold: Some(Box::new(move || hold(waits, &labels))),
        }
    }

    /// Starts or queues one run. Returns the note for a background run and the wait for a
    /// blocking one.
    fn start(
        &mut self,
        run: PlannedRun,
        labels: &HashMap<usize, String>,
        notifier: &Notifier,
    ) -> (Option<CallNote>, Option<Wait>) {
        let Some(&last_call) = run.calls.last() else {
            return (None, None);
        };
        let run_id = Uuid::new_v4();
        let triggers: Vec<String> = run
            .calls
            .iter()
            .map(|c| {
                labels
                    .get(c)
                    .cloned()
                    .unwrap_or_else(|| format!("call {c}"))
            })
            .collect();
        let panel = RunPanel::new(run_id, &run.def.name);
        let (tx, rx) = if run.def.blocking {
            let (tx, rx) = mpsc::channel();
            (Some(tx), Some(rx))
        } else {
            (None, None)
        };
        let waiter = Waiter {
            panel: panel.clone(),
            tx,
        };
        let admission = if run.def.one_at_a_time {
            let trigger = triggers.join(" and ");
            self.shared
                .queue
                .admit(run.def.id, run_id, &run.files, &trigger, waiter)
        } else {
            Admission::Start(waiter)
        };
        let timeout = Duration::from_secs(run.def.timeout.unwrap_or(FALLBACK_TIMEOUT_SECS));
        let name = run.def.name.clone();
        let (note, shown_id, behind) = match admission {
            Admission::Start(waiter) => {
                self.panels.push(waiter.panel.clone());
                let job = Job {
                    run_id,
                    def: run.def.clone(),
                    files: run.files.clone(),
                    triggers,
                    panel: waiter.panel,
                    waiters: waiter.tx.into_iter().collect(),
                    notifier: notifier.clone(),
                    resume: None,
                };
                self.shared.inflight.begin(&job);
                let note = if inflight::spawn_chain(&self.shared, job) {
                    format!(
                        "Callback '{name}' started in background (run {run_id}); you will be notified when it finishes."
                    )
                } else {
                    format!(
                        "Callback '{name}' could NOT start (run {run_id}): Context Pilot cannot start another thread right now."
                    )
                };
                (note, run_id, None)
            }
            Admission::Queued {
                behind,
                run_id: pending,
                merged,
            } => {
                if !merged {
                    self.panels.push(panel);
                }
                let note = format!(
                    "Callback '{name}' is already running (run {behind}); this trigger is queued as run {pending}{} and starts when that one finishes. You will be notified.",
                    if merged {
                        ", merged with triggers queued earlier"
                    } else {
                        ""
                    }
                );
                (note, pending, Some(behind))
            }
        };
        match rx {
            Some(rx) => {
                // A queued run may first wait for the whole run ahead of it.
                let rounds = if behind.is_some() { 2 } else { 1 };
                let wait = Wait {
                    name,
                    run_id: shown_id,
                    calls: run.calls,
                    rx,
                    limit: timeout.saturating_add(REPORT_GRACE).saturating_mul(rounds),
                    behind,
                };
                (None, Some(wait))
            }
            None => (
                Some(CallNote {
                    call_index: last_call,
                    text: note,
                }),
                None,
            ),
        }
    }
}

/// Waits for every blocking run and turns the results into notes.
fn hold(waits: Vec<Wait>, labels: &HashMap<usize, String>) -> Vec<CallNote> {
    let mut notes = Vec::new();
    let started = Instant::now();
    for wait in waits {
        let Some(&last) = wait.calls.last() else {
            continue;
        };
        // The runs go on in parallel; each limit counts from the start of the hold.
        let left = wait.limit.saturating_sub(started.elapsed());
        let mut text = match wait.rx.recv_timeout(left) {
            Ok(report) => report.note(),
            Err(_) => format!(
                "Callback '{}' (run {}) did not report back within {}s; its output is in the console server's log for that run. The edit itself was applied.",
                wait.name,
                wait.run_id,
                wait.limit.as_secs()
            ),
        };
        if let Some(ahead) = wait.behind {
            text = format!("(waited for the earlier run {ahead} to finish first)\n{text}");
        }
        let last_label = labels.get(&last).cloned().unwrap_or_default();
        for &call in &wait.calls {
            if call != last {
                notes.push(CallNote {
                    call_index: call,
                    text: format!(
                        "Callback '{}' ran for this edit too; its result is reported with {last_label}.",
                        wait.name
                    ),
                });
            }
        }
        notes.push(CallNote {
            call_index: last,
            text,
        });
    }
    notes
}

/// Runs `job`, then whatever got queued behind it for the same callback.
fn run_chain(shared: &Shared, mut job: Job) {
    loop {
        let report = match job.resume.take() {
            Some(from) => inflight::resume(shared, &job, &from),
            None => execute(shared, &job),
        };
        // Delivering and moving on to the queued run happen in one step against a save.
        let next = shared.inflight.settle(job.run_id, || {
            deliver(&job, &report);
            if !job.def.one_at_a_time {
                return None;
            }
            shared
                .queue
                .finish(job.def.id)
                .map(|next| from_pending(&job, next))
        });
        match next {
            Some(next) => job = next,
            None => return,
        }
    }
}

fn from_pending(prev: &Job, pending: Pending<Waiter>) -> Job {
    let mut waiters = Vec::new();
    let mut panel = None;
    for w in pending.waiters {
        if panel.is_none() {
            panel = Some(w.panel);
        }
        waiters.extend(w.tx);
    }
    Job {
        run_id: pending.run_id,
        def: prev.def.clone(),
        files: pending.files.into_iter().collect(),
        triggers: pending.triggers.into_iter().collect(),
        panel: panel.unwrap_or_else(|| RunPanel::new(pending.run_id, &prev.def.name)),
        waiters,
        notifier: prev.notifier.clone(),
        resume: None,
    }
}

fn deliver(job: &Job, report: &RunReport) {
    let failed = !report.passed();
    {
        let mut view = job.panel.view();
        view.status = match &report.outcome {
            RunOutcome::Passed => "passed".to_owned(),
            RunOutcome::Failed { status } => format!("FAILED ({status})"),
            RunOutcome::TimedOut { after_secs } => {
                format!("TIMED OUT after {after_secs}s (process group killed)")
            }
            RunOutcome::NotStarted { reason } => format!("could not start: {reason}"),
        };
        view.console = report.console;
        view.finished = true;
        view.visible = failed;
    }
    if failed {
        job.notifier.open_panel(job.panel.id());
    }
    for tx in &job.waiters {
        // A hold that gave up waiting has dropped its receiver; nothing to do then.
        let _ = tx.send(report.clone());
    }
    if !job.def.blocking {
        let level = if failed { Level::Error } else { Level::Success };
        let mut note = Notification::new("callback", level, report.note());
        if failed {
            note = note.waking();
        }
        job.notifier.notify(note);
    }
    job.notifier.refresh();
}

/// Content fingerprints of the run's files, to see whether the script changed them.
fn snapshot(root: &Path, files: &[String]) -> BTreeMap<String, Option<u64>> {
    files
        .iter()
        .map(|f| {
            let print = std::fs::read(root.join(f)).ok().map(|bytes| {
                let mut h = DefaultHasher::new();
                bytes.hash(&mut h);
                h.finish()
            });
            (f.clone(), print)
        })
        .collect()
}

fn execute(shared: &Shared, job: &Job) -> RunReport {
    let started = Instant::now();
    let root = shared.project.root();
    let before = snapshot(root, &job.files);
    shared.inflight.took_snapshot(job.run_id, &before);
    let mut report = RunReport {
        run_id: job.run_id,
        console: None,
        callback: job.def.id,
        name: job.def.name.clone(),
        outcome: RunOutcome::Passed,
        elapsed: Duration::ZERO,
        tail: String::new(),
        files: job.files.clone(),
        modified: Vec::new(),
        triggers: job.triggers.clone(),
        success_message: job.def.success_message.clone(),
        panel_id: job.panel.id(),
    };
    match spawn_and_wait(shared, job, &mut report) {
        Ok(outcome) => report.outcome = outcome,
        Err(reason) => report.outcome = RunOutcome::NotStarted { reason },
    }
    env::remove_nul_list(&env::nul_list_path(&shared.project, job.run_id));
    let after = snapshot(root, &job.files);
    report.modified = before
        .iter()
        .filter(|(file, print)| after.get(*file) != Some(*print))
        .map(|(file, _)| file.clone())
        .collect();
    report.elapsed = started.elapsed();
    job.panel.view().output.clone_from(&report.tail);
    report
}

fn spawn_and_wait(
    shared: &Shared,
    job: &Job,
    report: &mut RunReport,
) -> Result<RunOutcome, String> {
    let def = &job.def;
    let root = shared.project.root();
    // Resolved now, not when it was written: a directory may since have become a symlink
    // that leads out of the project.
    let cwd = resolve_cwd(root, def.cwd.as_deref())
        .map_err(|e| format!("{e}; fix 'cwd' with Callback_upsert"))?;
    let script = script_path(&shared.project, &def.name);
    let script_arg = script.to_string_lossy().into_owned();
    // The session runs the script directly, without a `bash -c` around it: one bash start
    // (about 1–2 ms) instead of two.
    let argv = match std::fs::metadata(&script) {
        // A bash script (our default shebang) or a non-executable file runs under bash
        // directly, saving the `env` lookup; any other interpreter goes through its shebang.
        Ok(meta) if is_executable(&meta) && !runs_under_bash(&script) => vec![script_arg],
        Ok(_) => vec!["bash".to_owned(), script_arg],
        Err(e) => {
            return Err(format!(
                "its script {} cannot be read ({e}); recreate it with Callback_upsert script_content",
                script.display()
            ));
        }
    };
    let timeout = def
        .timeout
        .or(def.blocking.then_some(FALLBACK_TIMEOUT_SECS));
    let nul_list = env::write_nul_list(&shared.project, job.run_id, &job.files)
        .map_err(|e| format!("cannot write its list of changed files: {e}"))?;
    let mut spec = SpawnSpec::exec(argv, cwd)
        .env("CP_CHANGED_FILES", env::newline_list(&job.files))
        .env("CP_CHANGED_FILES0", nul_list.to_string_lossy())
        .env("CP_PROJECT_ROOT", root.to_string_lossy())
        .env("CP_CALLBACK_NAME", def.name.clone())
        .env("CP_RUN_ID", job.run_id.to_string())
        .label(format!("callback:{}", def.id))
        .description(format!(
            "callback '{}' run {} for {}",
            def.name,
            job.run_id,
            summarize(&job.files)
        ));
    if let Some(t) = timeout {
        spec = spec.timeout(Duration::from_secs(t));
    }
    "running".clone_into(&mut job.panel.view().status);
    let client = shared.client()?;
    let session = client
        .spawn(spec)
        .map_err(|e| format!("the console server could not start it: {e}"))?;
    report.console = Some(session.id());
    shared.inflight.spawned(job.run_id, session.id());
    let deadline = timeout.and_then(|t| deadline_after(Duration::from_secs(t)));
    Ok(await_run(&session, job.run_id, timeout, deadline, report))
}

/// The moment a run that may take `timeout` must have reported by. `None` only if that is
/// beyond what the clock can represent (no valid timeout comes close).
fn deadline_after(timeout: Duration) -> Option<Instant> {
    Instant::now().checked_add(timeout.saturating_add(REPORT_GRACE))
}

/// Waits for a run's session to end (making sure it dies once past `deadline`), takes the
/// end of its output and says how it went. Runs re-attached after a reload wait here too.
fn await_run(
    session: &SessionHandle,
    run_id: Uuid,
    timeout: Option<u64>,
    deadline: Option<Instant>,
    report: &mut RunReport,
) -> RunOutcome {
    let status = loop {
        let chunk = deadline.map_or(Duration::from_secs(3600), |d| {
            d.saturating_duration_since(Instant::now())
        });
        match session.wait_exit(chunk) {
            Ok(w) if !w.info.status.is_running() => break w.info.status,
            Ok(_) if deadline.is_some_and(|d| Instant::now() >= d) => {
                // The server should have killed it at its timeout; make sure.
                if let Err(e) = session.kill() {
                    tracing::warn!("killing timed-out callback run {run_id}: {e}");
                }
                break SessionStatus::Killed {
                    cause: KillCause::Timeout,
                };
            }
            Ok(_) => {}
            Err(e) => {
                report.tail = session.tail(PANEL_LINES).unwrap_or_default();
                return RunOutcome::Failed {
                    status: format!("lost track of it: {e}"),
                };
            }
        }
    };
    report.tail = session.tail(PANEL_LINES).unwrap_or_default();
    match status {
        SessionStatus::Exited { code: 0 } => RunOutcome::Passed,
        SessionStatus::Killed {
            cause: KillCause::Timeout,
        } => RunOutcome::TimedOut {
            after_secs: timeout.unwrap_or_default(),
        },
        other => RunOutcome::Failed {
            status: other.to_string(),
        },
    }
}

/// Whether the script's `#!` line names bash.
fn runs_under_bash(script: &Path) -> bool {
    use std::io::{BufRead, BufReader, Read};
    let Ok(file) = std::fs::File::open(script) else {
        return false;
    };
    let mut first = String::new();
    if BufReader::new(file.take(256))
        .read_line(&mut first)
        .is_err()
    {
        return false;
    }
    matches!(
        first.trim_end(),
        "#!/usr/bin/env bash" | "#!/bin/bash" | "#!/usr/bin/bash"
    )
}

#[cfg(unix)]
fn is_executable(meta: &std::fs::Metadata) -> bool {
    use std::os::unix::fs::PermissionsExt;
    meta.permissions().mode() & 0o111 != 0
}

#[cfg(not(unix))]
fn is_executable(_meta: &std::fs::Metadata) -> bool {
    false
}

fn summarize(files: &[String]) -> String {
    match files {
        [] => "no files".to_owned(),
        [one] => one.clone(),
        [first, rest @ ..] => format!("{first} and {} more", rest.len()),
    }
}
