//! The run's side of a phase on another place: the phase's commit goes as git objects
//! ([`Place::send`]), `context-pilot phase --json` runs it there, and each of its commits is
//! fetched back into the phase's worktree as soon as the place says it made one (the
//! worktree's branch moves forward to it), so a lost link loses at most the uncommitted tail.
//! The phase's branch then holds the same commits as if it had run here, and the run merges it
//! as any other.

use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use cp_base::CancelToken;
use cp_orchestrate::RestartEvent;

use crate::RemoteError;
use crate::place::{Job, Place};
use crate::wire::{PhaseEnd, PhaseEvent, PhaseRequest};

/// How a phase on a place ended, as far as the run is concerned.
#[derive(Debug, Clone, PartialEq)]
pub enum PhaseOutcome {
    /// It ran to its end there; its last commit is in the worktree.
    Ended {
        end: PhaseEnd,
        error: Option<String>,
        verdict: String,
        head: String,
        restarts: u32,
        tokens: u64,
    },
    /// The place will not run it (not trusted there, or another reason).
    Refused(String),
}

/// The ref a phase's start is sent as.
pub fn phase_ref(branch: &str) -> String {
    format!("refs/context-pilot/phases/{branch}")
}

/// Runs `request` on `place`: sends its commit from the worktree at `tree` (on the phase's
/// branch), runs it there, and fast-forwards the worktree to each commit the place made.
/// `shown` sees every event as it comes; `cancel` ends the phase there (the connection
/// closes). Returns how it ended, with how long sending took; an error when the place could
/// not be reached or the link was lost before the end.
pub fn run_phase_on(
    place: &dyn Place,
    tree: &Path,
    request: &PhaseRequest,
    cancel: &CancelToken,
    shown: &mut dyn FnMut(&PhaseEvent),
) -> Result<(PhaseOutcome, Duration), RemoteError> {
    let sending = Instant::now();
    place.send(
        tree,
        &request.project,
        &request.commit,
        &phase_ref(&request.branch),
    )?;
    let sent = sending.elapsed();
    let mut job: Job = place.start(&["phase", "--json"])?;
    let line = serde_json::to_string(request)
        .map_err(|e| RemoteError::Serve(format!("cannot write the request: {e}")))?;
    job.send_line(&line)?;
    let done = Arc::new(AtomicBool::new(false));
    let watcher = {
        let cancel = cancel.clone();
        let done = Arc::clone(&done);
        let pid = job.id();
        std::thread::spawn(move || {
            while !done.load(Ordering::SeqCst) {
                if cancel.is_cancelled() {
                    // Ends the connection: the other side sees its input close and stops.
                    let _ = Command::new("kill").arg(pid.to_string()).status();
                    return;
                }
                std::thread::sleep(Duration::from_millis(100));
            }
        })
    };
    let outcome = follow(place, tree, request, &mut job, sent, shown);
    let (status, stderr) = job.finish();
    done.store(true, Ordering::SeqCst);
    let _ = watcher.join();
    match outcome {
        Ok(Some(outcome)) => Ok((outcome, sent)),
        Err(e) => Err(e),
        Ok(None) => {
            if let Some(e) = crate::place::classify(place.name(), &stderr) {
                return Err(e);
            }
            if status.and_then(|s| s.code()) == Some(127) {
                return Err(RemoteError::NoContextPilot {
                    host: place.name().to_owned(),
                });
            }
            Err(RemoteError::LinkLost {
                host: place.name().to_owned(),
                detail: stderr
                    .lines()
                    .rev()
                    .find(|l| !l.trim().is_empty())
                    .unwrap_or("the connection ended before the phase did")
                    .trim()
                    .to_owned(),
            })
        }
    }
}

/// Reads the job's events to its result; `None` when it ended without one.
fn follow(
    place: &dyn Place,
    tree: &Path,
    request: &PhaseRequest,
    job: &mut Job,
    sent: Duration,
    shown: &mut dyn FnMut(&PhaseEvent),
) -> Result<Option<PhaseOutcome>, RemoteError> {
    while let Some(line) = job.next_line() {
        let Ok(mut event) = serde_json::from_str::<PhaseEvent>(&line) else {
            tracing::debug!(host = place.name(), "{line}");
            continue;
        };
        if event == PhaseEvent::Alive {
            continue;
        }
        if let PhaseEvent::Started { sent_ms, .. } = &mut event {
            *sent_ms = Some(u64::try_from(sent.as_millis()).unwrap_or(u64::MAX));
        }
        shown(&event);
        match event {
            PhaseEvent::Restart {
                restart:
                    RestartEvent::Committed {
                        commit: Some(commit),
                        ..
                    },
            } => bring_back(place, tree, request, &commit)?,
            PhaseEvent::Result {
                end,
                error,
                verdict,
                head,
                restarts,
                tokens,
                ..
            } => {
                if !head.is_empty() {
                    bring_back(place, tree, request, &head)?;
                }
                return Ok(Some(PhaseOutcome::Ended {
                    end,
                    error,
                    verdict,
                    head,
                    restarts,
                    tokens,
                }));
            }
            PhaseEvent::Refused { reason, .. } => return Ok(Some(PhaseOutcome::Refused(reason))),
            PhaseEvent::Error { message } => {
                return Err(RemoteError::NoResult {
                    host: place.name().to_owned(),
                    detail: message,
                });
            }
            _ => {}
        }
    }
    Ok(None)
}

/// Fetches the phase's branch from the place and moves the worktree's branch forward to
/// `commit` (already there when an earlier fetch brought it).
fn bring_back(
    place: &dyn Place,
    tree: &Path,
    request: &PhaseRequest,
    commit: &str,
) -> Result<(), RemoteError> {
    if git(tree, &["cat-file", "-e", &format!("{commit}^{{commit}}")]).is_err() {
        place.fetch(
            tree,
            &request.project,
            &format!("refs/heads/{}", request.branch),
        )?;
    }
    git(tree, &["merge", "--ff-only", "--quiet", commit]).map(drop)
}

fn git(dir: &Path, args: &[&str]) -> Result<String, RemoteError> {
    let mut command = Command::new("git");
    crate::place::clean_env(&mut command);
    let out = command
        .args(args)
        .current_dir(dir)
        .stdin(Stdio::null())
        .output()
        .map_err(|e| crate::clone::no_git(&e))?;
    if out.status.success() {
        Ok(String::from_utf8_lossy(&out.stdout).trim().to_owned())
    } else {
        Err(RemoteError::Serve(format!(
            "git {} failed in {}: {}",
            args.join(" "),
            dir.display(),
            String::from_utf8_lossy(&out.stderr).trim()
        )))
    }
}
