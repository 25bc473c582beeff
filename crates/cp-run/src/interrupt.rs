//! Ctrl-C and SIGTERM in a headless run of a workflow with `depends_on`. The first signal
//! stops the run gracefully: it cancels the run's token, so every phase's agent stops (the
//! built-in agent's request is cancelled; an agent CLI gets SIGINT, then its process group),
//! the phases are recorded as interrupted, and the run exits with 130 for `--resume`. A
//! second signal ends the run at once, with the same code, but leaves nothing behind: every
//! process the run started (agent CLIs with what left their group, console servers and their
//! consoles, git) and the console servers of the run's worktrees, whoever started them, are
//! killed first ([`proctree::end_at_once`]). The worktrees, branches and `context.json` stay
//! as they were, so `--resume` continues the run as after SIGKILL.

use std::path::{Path, PathBuf};
use std::sync::{Mutex, PoisonError};

use cp_base::{CancelToken, Project, proctree};
use cp_git::Repository;
use cp_mod_console::RunPaths;
use signal_hook::consts::{SIGINT, SIGTERM};

/// Where the phases' worktrees live, under the project's `.context-pilot/`.
const WORKTREES: &str = "worktrees";

/// Held by the end at once from its start until the process exits, and by the run's own end
/// from then on: the run cannot exit while the end at once kills (its graceful stop, which
/// that kill may unblock, would cut the kill short), and a signal after the run ended does
/// nothing more.
static ENDING: Mutex<()> = Mutex::new(());

/// Called when the run is done, before it exits: waits for an end at once in progress (which
/// then exits the process itself), and keeps a later signal from starting one.
pub(crate) fn settle_interrupts() {
    std::mem::forget(ENDING.lock().unwrap_or_else(PoisonError::into_inner));
}

/// Handles SIGINT and SIGTERM on a thread of their own from now on: the first cancels
/// `cancel`; the second ends every process of the run and then this one, with exit code 130.
pub(crate) fn interrupt_on_signals(cancel: &CancelToken, project: &Project) -> anyhow::Result<()> {
    let mut signals = signal_hook::iterator::Signals::new([SIGINT, SIGTERM])?;
    let cancel = cancel.clone();
    // Where the project lies in each worktree: the same subdirectory of the repository.
    let prefix = Repository::at(project.root()).prefix().unwrap_or_default();
    let trees = project.dir().join(WORKTREES);
    std::thread::Builder::new()
        .name("cp-run-signals".into())
        .spawn(move || {
            let mut seen = 0;
            for _ in signals.forever() {
                seen += 1;
                if seen == 1 {
                    cancel.cancel();
                    eprintln!(
                        "context-pilot: stopping every phase's agent (Ctrl-C again ends the run at \
                         once)"
                    );
                    continue;
                }
                end_at_once(&trees, &prefix);
            }
        })?;
    Ok(())
}

/// The second signal: ends every process of the run, then the run, with exit code 130.
fn end_at_once(trees: &Path, prefix: &str) -> ! {
    let _ending = ENDING.lock().unwrap_or_else(PoisonError::into_inner);
    let me = i32::try_from(std::process::id()).unwrap_or(0);
    let projects = worktree_projects(trees, prefix);
    let mut roots = vec![me];
    roots.extend(projects.iter().filter_map(|root| console_server(root)));
    // A console whose server is gone already (its parent lost) still carries its id.
    let markers: Vec<String> = projects.iter().flat_map(|root| consoles(root)).collect();
    if let proctree::TreeEnd::Survivors(left) = proctree::end_at_once(&roots, &markers) {
        eprintln!("context-pilot: {left} processes of the run survived SIGKILL");
    }
    eprintln!(
        "context-pilot: interrupted again: ended at once, with every agent and console of the \
         run; its worktrees and branches are kept, and `context-pilot run --resume <run id>` \
         continues it"
    );
    std::process::exit(cp_orchestrate::EXIT_INTERRUPTED);
}

/// The project's root in each of the run's worktrees: `<trees>/<run>/<phase>/<prefix>`.
fn worktree_projects(trees: &Path, prefix: &str) -> Vec<PathBuf> {
    std::fs::read_dir(trees)
        .into_iter()
        .flatten()
        .flatten()
        .flat_map(|run| {
            std::fs::read_dir(run.path())
                .into_iter()
                .flatten()
                .flatten()
        })
        .map(|phase| phase.path().join(prefix))
        .collect()
}

/// The console server of the project at `root`, from its pid file; a pid that is not a
/// console server now (reused) is left alone.
fn console_server(root: &Path) -> Option<i32> {
    let pid: i32 = std::fs::read_to_string(RunPaths::new(root).pid_file())
        .ok()?
        .trim()
        .parse()
        .ok()?;
    let command = std::fs::read(format!("/proc/{pid}/cmdline")).ok()?;
    command
        .split(|&b| b == 0)
        .any(|arg| arg == b"console-server")
        .then_some(pid)
}

/// The ids of the consoles of the project at `root` (the names of their log files): each
/// console's processes carry its id as their run marker.
fn consoles(root: &Path) -> Vec<String> {
    let dir = RunPaths::new(root).consoles_dir().to_path_buf();
    std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|entry| {
            let name = entry.file_name().to_string_lossy().into_owned();
            name.strip_suffix(".log").map(str::to_owned)
        })
        .collect()
}
