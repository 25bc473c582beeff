//! The remote side of `context-pilot phase --json`: the request is read from standard input,
//! the phase's commit (sent before into this user's clone) is checked out on the phase's
//! branch in a worktree of its own, the project's trust is checked there, and the phase runs
//! as it would on the run's machine: its agent (with this host's own credentials), callbacks,
//! stop gate and restart loop, auto-committing as configured. Each event goes to standard
//! output as one JSON line ([`PhaseEvent`]); a `committed` restart event tells the run the
//! branch has a commit to fetch, so a lost link loses at most the uncommitted tail. Standard
//! input closing (the run stopped the phase, or its link is gone) stops the agent; the
//! worktree and what it started are gone before this returns, and the branch stays in the
//! clone for the run to fetch.

use std::io::{BufRead, Write};
use std::path::Path;
use std::sync::{Arc, Mutex, PoisonError};

use cp_base::{CancelToken, Project, WorkerId};
use cp_orchestrate::{
    DriverError, PhaseAgent, RestartEvent, RestartLoop, RestartObserver, SessionDriver,
};

use crate::RemoteError;
use crate::machine::host_name;
use crate::phase::phase_ref;
use crate::serve::{Prepared, check_out, remove_tree};
use crate::wire::{PhaseEnd, PhaseEvent, PhaseRequest};

/// What the agent of a phase reports, as a JSON value of the front-end's own news.
pub type NewsSink = Arc<dyn Fn(serde_json::Value) + Send + Sync>;

/// How the serving side makes a phase's agent and ends what it left running.
pub trait PhaseBench {
    /// The agent for `spec` (its `stop` is set once the run is gone), reporting to `news`.
    fn driver(
        &self,
        spec: &PhaseAgent<'_>,
        news: NewsSink,
    ) -> Result<Box<dyn SessionDriver + Send>, DriverError>;
    /// Ends what the phase left running in the tree at `root` (its consoles).
    fn end(&self, root: &Path);
}

/// The output, shared by the phase's threads: one whole line at a time.
type Shared<'a> = Mutex<&'a mut (dyn Write + Send)>;

/// Serves one phase: reads its request from `input`, writes events to `output`. Returns
/// whether it completed.
pub fn serve_phase(
    mut input: Box<dyn BufRead + Send>,
    output: &mut (dyn Write + Send),
    bench: &dyn PhaseBench,
) -> Result<bool, RemoteError> {
    let host = host_name();
    let mut line = String::new();
    input
        .read_line(&mut line)
        .map_err(|e| RemoteError::Serve(format!("cannot read the request: {e}")))?;
    let request: PhaseRequest = match serde_json::from_str(line.trim()) {
        Ok(request) => request,
        Err(e) => {
            let message = format!("the request is not valid: {e}");
            emit(output, &PhaseEvent::Error { message })?;
            return Ok(false);
        }
    };
    let checked = checked_branch(&request.branch).and_then(|()| {
        check_out(
            &request.project,
            &request.commit,
            &host,
            Some(&request.branch),
        )
    });
    let clone = crate::clone::checked_key(&request.project)
        .and_then(|key| Ok(crate::clone::clones_dir()?.join(key)));
    let outcome = match checked {
        Ok(Prepared::Refused(reason)) => {
            emit(output, &PhaseEvent::Refused { host, reason })?;
            Ok(false)
        }
        Ok(Prepared::Tree(worktree, _, clone)) => {
            let outcome = run(&request, &host, &worktree, input, output, bench);
            bench.end(&worktree);
            remove_tree(&clone, &worktree);
            outcome
        }
        Err(e) => {
            let message = e.to_string();
            emit(output, &PhaseEvent::Error { message })?;
            Ok(false)
        }
    };
    // The run has what it fetched: the clone keeps nothing of the run.
    if let Ok(clone) = clone
        && clone.join(".git").is_dir()
        && checked_branch(&request.branch).is_ok()
    {
        let _ = crate::clone::git(&clone, &["branch", "-D", "--quiet", &request.branch], false);
        let _ = crate::clone::git(
            &clone,
            &["update-ref", "-d", &phase_ref(&request.branch)],
            false,
        );
    }
    outcome
}

/// A branch name the run may ask for: `cp/…` of letters, digits, `-`, `_`, `.` and `/`.
fn checked_branch(branch: &str) -> Result<(), RemoteError> {
    let fine = branch.starts_with("cp/")
        && !branch.contains("..")
        && !branch.ends_with('/')
        && !branch.to_ascii_lowercase().ends_with(".lock")
        && branch
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.' | '/'));
    if fine {
        Ok(())
    } else {
        Err(RemoteError::Serve(format!(
            "`{branch}` is not a phase branch (cp/<run>/<phase>)"
        )))
    }
}

fn run(
    request: &PhaseRequest,
    host: &str,
    worktree: &Path,
    mut input: Box<dyn BufRead + Send>,
    output: &mut (dyn Write + Send),
    bench: &dyn PhaseBench,
) -> Result<bool, RemoteError> {
    let shared: Shared<'_> = Mutex::new(output);
    send(
        &shared,
        &PhaseEvent::Started {
            host: host.to_owned(),
            commit: request.commit.clone(),
            branch: request.branch.clone(),
            sent_ms: None,
        },
    )?;
    let stop = CancelToken::new();
    let closed = stop.clone();
    // The input closing (the run stopped it, or the link is gone) stops the phase.
    std::thread::spawn(move || {
        let mut rest = Vec::new();
        let _ = input.read_to_end(&mut rest);
        closed.cancel();
    });
    let worker = WorkerId::new(request.worker.clone()).unwrap_or_default();
    let done = CancelToken::new();
    let verdict = Arc::new(Mutex::new(String::from("not run")));
    let result = std::thread::scope(|scope| {
        // A line every few seconds: a connection whose other end is gone is found by
        // writing to it, and the phase stops.
        scope.spawn(|| heartbeat(&shared, &done, &stop));
        let outcome = run_agent(request, worktree, &worker, &stop, &shared, &verdict, bench);
        done.cancel();
        outcome
    });
    let head = crate::clone::git(worktree, &["rev-parse", "HEAD"], false).unwrap_or_default();
    let verdict = verdict
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .clone();
    if let Err(e) = &result
        && let Some(why) = e.strip_prefix(NO_AGENT)
    {
        // A host that cannot make the agent (no credentials there, an agent CLI missing)
        // refuses the phase: the run takes it elsewhere.
        let reason = format!("it cannot start the phase's agent there: {why}");
        send(
            &shared,
            &PhaseEvent::Refused {
                host: host.to_owned(),
                reason,
            },
        )?;
        return Ok(false);
    }
    let (end, error, restarts, tokens) = match result {
        Ok(report) => (PhaseEnd::Completed, None, report.restarts, report.tokens),
        Err(_) if stop.is_cancelled() => (
            PhaseEnd::Stopped,
            Some("stopped: the run closed the connection".to_owned()),
            0,
            0,
        ),
        Err(e) => (PhaseEnd::Failed, Some(e), 0, 0),
    };
    let completed = end == PhaseEnd::Completed;
    let result = send(
        &shared,
        &PhaseEvent::Result {
            host: host.to_owned(),
            end,
            error,
            verdict: if completed && verdict == "testing" {
                "passed".to_owned()
            } else {
                verdict
            },
            head,
            restarts,
            tokens,
        },
    );
    // The run fetches the branch's last commit, then closes the connection; the branch
    // stays until then (a minute at most).
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    while result.is_ok() && !stop.is_cancelled() && std::time::Instant::now() < deadline {
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    result.map(|()| completed)
}

/// What the error of an agent that could not be made starts with.
const NO_AGENT: &str = "no agent: ";

/// Runs the phase's restart loop with the bench's agent; every step and every piece of news
/// becomes a line.
fn run_agent(
    request: &PhaseRequest,
    worktree: &Path,
    worker: &WorkerId,
    stop: &CancelToken,
    shared: &Shared<'_>,
    verdict: &Arc<Mutex<String>>,
    bench: &dyn PhaseBench,
) -> Result<cp_orchestrate::PhaseReport, String> {
    let spec = PhaseAgent {
        phase: &request.phase,
        root: worktree,
        worker,
        agent: request.agent.as_deref(),
        host: None,
        stop,
    };
    let (tx, rx) = std::sync::mpsc::channel::<serde_json::Value>();
    // `null` ends the writer below, whoever still holds a copy of the sink.
    let end = tx.clone();
    let sink: NewsSink = Arc::new(move |value| {
        if !value.is_null() {
            let _ = tx.send(value);
        }
    });
    let mut driver = bench
        .driver(&spec, sink)
        .map_err(|e| format!("{NO_AGENT}{e}"))?;
    let restart = RestartLoop::new(Project::at(worktree), request.restart.clone())
        .with_worker(worker.clone());
    std::thread::scope(|scope| {
        // The agent's news, written as it comes, in order.
        let writer = scope.spawn(move || {
            for value in rx {
                if value.is_null() {
                    break;
                }
                if let Some(state) = gate_state(&value) {
                    state.clone_into(&mut verdict.lock().unwrap_or_else(PoisonError::into_inner));
                }
                if send(shared, &PhaseEvent::News { news: value }).is_err() {
                    stop.cancel();
                }
            }
        });
        let mut observer = Forward { shared, stop };
        let result = restart
            .run_phase(
                &request.phase,
                &request.prompt,
                driver.as_mut(),
                &mut observer,
            )
            .map_err(|e| e.to_string());
        drop(driver);
        let _ = end.send(serde_json::Value::Null);
        let _ = writer.join();
        result
    })
}

/// What a piece of news says of the stop gate: `testing` (it runs), `blocked` (it sent the
/// agent back), `gave up`; `None`: nothing.
fn gate_state(news: &serde_json::Value) -> Option<&'static str> {
    match news.as_str() {
        Some("testing") => Some("testing"),
        Some("blocked") => Some("blocked"),
        _ => None,
    }
}

/// The restart loop's steps, as lines.
struct Forward<'a, 'b> {
    shared: &'a Shared<'b>,
    stop: &'a CancelToken,
}

impl RestartObserver for Forward<'_, '_> {
    fn on_event(&mut self, event: &RestartEvent) {
        let line = PhaseEvent::Restart {
            restart: event.clone(),
        };
        if send(self.shared, &line).is_err() {
            self.stop.cancel();
        }
    }
}

/// Tenths of a second between two `alive` lines.
const HEARTBEAT_TICKS: u32 = 30;

fn heartbeat(shared: &Shared<'_>, done: &CancelToken, stop: &CancelToken) {
    while !done.is_cancelled() {
        if send(shared, &PhaseEvent::Alive).is_err() {
            stop.cancel();
        }
        for _ in 0..HEARTBEAT_TICKS {
            if done.is_cancelled() {
                return;
            }
            std::thread::sleep(std::time::Duration::from_millis(100));
        }
    }
}

fn send(shared: &Shared<'_>, event: &PhaseEvent) -> Result<(), RemoteError> {
    let mut out = shared.lock().unwrap_or_else(PoisonError::into_inner);
    emit(&mut **out, event)
}

fn emit(output: &mut dyn Write, event: &PhaseEvent) -> Result<(), RemoteError> {
    let line = serde_json::to_string(event)
        .map_err(|e| RemoteError::Serve(format!("cannot write an event: {e}")))?;
    writeln!(output, "{line}")
        .and_then(|()| output.flush())
        .map_err(|e| RemoteError::Serve(format!("cannot write an event: {e}")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_phase_branches_are_made_there() {
        assert!(checked_branch("cp/20260101-1/a.b_c").is_ok());
        for bad in ["main", "cp/../x", "cp/a b", "-cp/x", "cp/x/", "cp/x.lock"] {
            assert!(checked_branch(bad).is_err(), "{bad}");
        }
    }
}
