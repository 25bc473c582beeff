//! `context-pilot init` without an agent: wire every agent the project or this machine has.
//!
//! The agents are found by their settings folder in the project (`.claude/`, `.gemini/`,
//! `.codex/`: the folder of the files `init` writes for each, as its descriptor says), else
//! by their CLI on `PATH`. `init` shows what it found and asks once (y/N); `--yes` skips the
//! question. Without a terminal to ask on and without `--yes` it changes nothing, says why
//! and exits 2. Each agent is then wired as `context-pilot init NAME` wires it
//! ([`super::run`]).

use std::fmt::Write as _;
use std::io::{BufRead as _, IsTerminal as _, Write as _};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use cp_agent_cli::{AGENT_CLIS, AgentCli, look_for_agents};

use super::InitError;

/// The exit code when `init` would have to ask but cannot (stdin is not a terminal).
pub const EXIT_NOT_ASKED: u8 = 2;

/// An agent found, and where.
struct Found {
    agent: &'static dyn AgentCli,
    /// "`.claude/` in the project" or "`claude` 2.1.3 on PATH".
    how: String,
}

/// The settings folder of `agent` in a project: the folder of the files `init` writes for
/// it (e.g. `.claude` for `.claude/settings.json`).
fn settings_folder(agent: &dyn AgentCli) -> Option<PathBuf> {
    agent
        .project_settings("context-pilot", None)
        .into_iter()
        .find_map(|file| {
            let parent = file.path.parent()?;
            (!parent.as_os_str().is_empty()).then(|| parent.to_path_buf())
        })
}

/// The agents whose settings folder `root` has; else those whose CLI is on `PATH`.
fn find(root: &Path) -> Vec<Found> {
    let by_folder: Vec<Found> = AGENT_CLIS
        .iter()
        .filter_map(|agent| {
            let folder = settings_folder(*agent)?;
            root.join(&folder).is_dir().then(|| Found {
                agent: *agent,
                how: format!("{}/ in the project", folder.display()),
            })
        })
        .collect();
    if !by_folder.is_empty() {
        return by_folder;
    }
    look_for_agents()
        .into_iter()
        .filter(|presence| presence.found.installed())
        .map(|presence| Found {
            agent: presence.agent,
            how: format!(
                "`{}` {} on PATH",
                presence.agent.spec().program,
                presence.found
            ),
        })
        .collect()
}

/// Runs `init` without an agent and returns the exit code.
pub fn run(root: &Path, dry_run: bool, yes: bool) -> Result<ExitCode, InitError> {
    let found = find(root);
    if found.is_empty() {
        let folders: Vec<String> = AGENT_CLIS
            .iter()
            .filter_map(|agent| settings_folder(*agent))
            .map(|folder| format!("{}/", folder.display()))
            .collect();
        let names: Vec<&str> = AGENT_CLIS.iter().map(|agent| agent.spec().name).collect();
        eprintln!(
            "context-pilot init: no agent found: {} has no {} folder and no agent CLI is on PATH; \
             name one: `context-pilot init {}`. Nothing was changed.",
            root.display(),
            folders.join(", "),
            names.join("|")
        );
        return Ok(ExitCode::FAILURE);
    }
    let mut said = format!("Found in {}:\n", root.display());
    for f in &found {
        let _ = writeln!(said, "  {} ({})", f.agent.spec().display_name, f.how);
    }
    print!("{said}");
    if !dry_run && !yes {
        if !std::io::stdin().is_terminal() {
            eprintln!(
                "context-pilot init: not asking: stdin is not a terminal, so nothing was changed \
                 (exit {EXIT_NOT_ASKED}). Run `context-pilot init --yes` to wire them all, or \
                 `context-pilot init NAME` for one."
            );
            return Ok(ExitCode::from(EXIT_NOT_ASKED));
        }
        if !ask("Wire Context Pilot into them? [y/N] ") {
            println!("Nothing was changed.");
            return Ok(ExitCode::FAILURE);
        }
    }
    for f in &found {
        print!("{}", super::run(f.agent, root, dry_run, false)?);
    }
    Ok(ExitCode::SUCCESS)
}

/// Asks `question` on the terminal; only `y` or `yes` is yes.
fn ask(question: &str) -> bool {
    print!("{question}");
    let _ = std::io::stdout().flush();
    let mut answer = String::new();
    if std::io::stdin().lock().read_line(&mut answer).is_err() {
        return false;
    }
    matches!(answer.trim().to_ascii_lowercase().as_str(), "y" | "yes")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_agent_has_its_settings_folder_and_the_project_s_folders_win() {
        let folders: Vec<PathBuf> = AGENT_CLIS
            .iter()
            .filter_map(|a| settings_folder(*a))
            .collect();
        assert_eq!(
            folders,
            [".claude", ".gemini", ".codex"].map(PathBuf::from).to_vec()
        );
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join(".gemini")).unwrap();
        let found = find(dir.path());
        assert_eq!(found.len(), 1);
        assert_eq!(found[0].agent.spec().name, "gemini");
        assert_eq!(found[0].how, ".gemini/ in the project");
    }
}
