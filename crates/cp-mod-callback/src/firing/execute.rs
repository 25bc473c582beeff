//! Running a run's script in a console and watching it end: a fresh run
//! ([`execute`]) or one started by an earlier process and re-attached after a reload
//! ([`reattach`]). Both end in a [`RunReport`] to deliver.

use std::path::Path;
use std::time::{Duration, Instant};

use cp_base::{CancelToken, now_ms};
use cp_mod_console::{ConsoleHandle, ConsoleStatus, KillCause, SpawnSpec};

use super::active::{ActiveRun, Reattach};
use super::error::RunError;
use super::fingerprint::{modified_since, snapshot};
use super::runtime::Runtime;
use crate::env;
use crate::report::{RunOutcome, RunReport};
use crate::run_panel::{PANEL_LINES, PANEL_RAW_BYTES};
use crate::script::script_path;
use crate::validate::resolve_cwd;

/// Limit for a blocking run whose definition lacks a timeout (a hand-edited config).
pub(super) const FALLBACK_TIMEOUT_SECS: u64 = 600;
/// How long past its own timeout a run may take to be reported (kill grace, log flush).
pub(super) const REPORT_GRACE: Duration = Duration::from_secs(30);

/// Starts the script of `run` and waits for it to end.
pub(super) fn execute(runtime: &Runtime, run: &ActiveRun) -> RunReport {
    let started = Instant::now();
    let root = runtime.project.root();
    let before = snapshot(root, &run.files);
    runtime.watched.took_snapshot(run.run_id, &before);
    let mut report = run.report(None, RunOutcome::Passed);
    report.outcome = match spawn_and_wait(runtime, run, &mut report) {
        Ok(outcome) => outcome,
        Err(e) => RunOutcome::NotStarted {
            reason: e.to_string(),
        },
    };
    report.modified = modified_since(root, &run.files, &before);
    report.elapsed = started.elapsed();
    run.show_output(&report.tail);
    report
}

/// Waits for a run started by an earlier process (`from`) and reports it as [`execute`]
/// would have.
pub(super) fn reattach(runtime: &Runtime, run: &ActiveRun, from: &Reattach) -> RunReport {
    let mut report = run.report(Some(from.console), RunOutcome::Passed);
    run.show_running();
    // Background runs have no fallback timeout; the server enforces the one they have.
    let timeout = run.def.timeout;
    let deadline = timeout.and_then(|t| {
        let end_ms = from.started_at_ms.saturating_add(t.saturating_mul(1000));
        deadline_after(Duration::from_millis(end_ms.saturating_sub(now_ms())))
    });
    let mut ended_at_ms = None;
    report.outcome = match runtime
        .client()
        .and_then(|c| c.attach(from.console).map_err(RunError::Attach))
    {
        Ok(console) => {
            let outcome = await_run(&console, run, (timeout, deadline), None, &mut report);
            ended_at_ms = console.info().ok().and_then(|i| i.ended_at_ms);
            outcome
        }
        Err(e) => RunOutcome::Failed {
            status: format!(
                "lost: its console {} cannot be found after the reload ({e})",
                from.console
            ),
        },
    };
    if let Some(before) = &from.before {
        report.modified = modified_since(runtime.project.root(), &run.files, before);
    }
    let end = ended_at_ms.unwrap_or_else(now_ms);
    report.elapsed = Duration::from_millis(end.saturating_sub(from.started_at_ms));
    run.show_output(&report.tail);
    report
}

fn spawn_and_wait(
    runtime: &Runtime,
    run: &ActiveRun,
    report: &mut RunReport,
) -> Result<RunOutcome, RunError> {
    let def = &run.def;
    let root = runtime.project.root();
    // Resolved now, not when it was written: a directory may since have become a symlink
    // that leads out of the project.
    let cwd = resolve_cwd(root, def.cwd.as_deref()).map_err(RunError::Cwd)?;
    let argv = script_argv(&script_path(&runtime.project, &def.name))?;
    let timeout = def
        .timeout
        .or(def.blocking.then_some(FALLBACK_TIMEOUT_SECS));
    let nul_list = env::write_nul_list(&runtime.project, run.run_id, &run.files)
        .map_err(RunError::FileList)?;
    let mut spec = SpawnSpec::exec(argv, cwd)
        .env("CP_CHANGED_FILES", env::newline_list(&run.files))
        .env("CP_CHANGED_FILES0", nul_list.to_string_lossy())
        .env("CP_PROJECT_ROOT", root.to_string_lossy())
        .env("CP_CALLBACK_NAME", def.name.clone())
        .env("CP_RUN_ID", run.run_id.to_string())
        .label(format!("callback:{}", def.id))
        .description(format!(
            "callback '{}' run {} for {}",
            def.name,
            run.run_id,
            summarize(&run.files)
        ));
    if let Some(t) = timeout {
        spec = spec.timeout(Duration::from_secs(t));
    }
    run.show_running();
    let client = runtime.client()?;
    let console = client.spawn(spec).map_err(RunError::Spawn)?;
    report.console = Some(console.id());
    runtime.watched.spawned(run.run_id, console.id());
    let deadline = timeout.and_then(|t| deadline_after(Duration::from_secs(t)));
    Ok(await_run(
        &console,
        run,
        (timeout, deadline),
        run.cancel.as_ref(),
        report,
    ))
}

/// Takes the end of the run's output: as a terminal shows it for the report, and for a run that did not
/// pass the raw bytes (colours kept) for its panel, the one place they show (a passing run's
/// panel is never listed).
fn take_output(console: &ConsoleHandle, run: &ActiveRun, report: &mut RunReport, passed: bool) {
    report.tail = console.tail(PANEL_LINES).unwrap_or_default();
    if passed {
        return;
    }
    match console.raw_tail(PANEL_RAW_BYTES) {
        Ok(raw) => run.show_terminal(&raw.bytes, raw.skipped),
        Err(e) => tracing::warn!("reading callback run {} output: {e}", run.run_id),
    }
}

/// The command line that runs `script`. The console runs the script directly, without a
/// `bash -c` around it: one bash start (about 1–2 ms) instead of two.
fn script_argv(script: &Path) -> Result<Vec<String>, RunError> {
    let script_arg = script.to_string_lossy().into_owned();
    match std::fs::metadata(script) {
        // A bash script (our default shebang) or a non-executable file runs under bash
        // directly, saving the `env` lookup; any other interpreter goes through its shebang.
        Ok(meta) if is_executable(&meta) && !runs_under_bash(script) => Ok(vec![script_arg]),
        Ok(_) => Ok(vec!["bash".to_owned(), script_arg]),
        Err(source) => Err(RunError::ScriptUnreadable {
            path: script.to_path_buf(),
            source,
        }),
    }
}

/// The moment a run that may take `timeout` must have reported by. `None` only if that is
/// beyond what the clock can represent (no valid timeout comes close).
pub(super) fn deadline_after(timeout: Duration) -> Option<Instant> {
    Instant::now().checked_add(timeout.saturating_add(REPORT_GRACE))
}

/// How often a cancellable run checks its cancel flag while it waits.
const CANCEL_POLL: Duration = Duration::from_millis(100);

/// Waits for a run's console to end (making sure it dies once past its deadline, or at once
/// when `cancel` is set), takes the end of its output and says how it went. Runs re-attached
/// after a reload wait here too. `limits` is the timeout in seconds and the deadline.
fn await_run(
    console: &ConsoleHandle,
    run: &ActiveRun,
    limits: (Option<u64>, Option<Instant>),
    cancel: Option<&CancelToken>,
    report: &mut RunReport,
) -> RunOutcome {
    let (timeout, deadline) = limits;
    let status = loop {
        let mut chunk = deadline.map_or(Duration::from_secs(3600), |d| {
            d.saturating_duration_since(Instant::now())
        });
        if cancel.is_some() {
            chunk = chunk.min(CANCEL_POLL);
        }
        match console.wait_exit(chunk) {
            Ok(w) if !w.info.status.is_running() => break w.info.status,
            Ok(_) if cancel.is_some_and(CancelToken::is_cancelled) => {
                // Esc: the whole process group goes (TERM, grace, KILL), and is reaped.
                if let Err(e) = console.kill() {
                    tracing::warn!("killing cancelled callback run {}: {e}", run.run_id);
                }
                take_output(console, run, report, false);
                return RunOutcome::Cancelled;
            }
            Ok(_) if deadline.is_some_and(|d| Instant::now() >= d) => {
                // The server should have killed it at its timeout; make sure.
                if let Err(e) = console.kill() {
                    tracing::warn!("killing timed-out callback run {}: {e}", run.run_id);
                }
                break ConsoleStatus::Killed {
                    cause: KillCause::Timeout,
                };
            }
            Ok(_) => {}
            Err(e) => {
                take_output(console, run, report, false);
                return RunOutcome::Failed {
                    status: format!("lost track of it: {e}"),
                };
            }
        }
    };
    let passed = status == ConsoleStatus::Exited { code: 0 };
    take_output(console, run, report, passed);
    match status {
        ConsoleStatus::Exited { code: 0 } => RunOutcome::Passed,
        ConsoleStatus::Killed {
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
