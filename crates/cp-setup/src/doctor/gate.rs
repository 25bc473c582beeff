//! The stop gate in this project: git works here (a repository git refuses, e.g. for
//! "dubious ownership", switches the gate off), which test command the gate will run and
//! why, and whether that command's runner is installed.

use cp_base::Project;
use cp_git::{Git, GitError};
use cp_mod_checkpoint::{StopGate, StopGateConfig};

use super::Check;

const GROUP: &str = "stop gate";

pub(super) fn checks(project: &Project) -> Vec<Check> {
    let git = Git { path_env: None };
    let repo = match git.repo_root(project.root()) {
        Ok(repo) => repo,
        Err(GitError::NotARepository(_)) => {
            return vec![Check::info(
                GROUP,
                "not a git repository: the stop gate has nothing to check here",
                Some("`git init` to have the agent's changes checked and tested".into()),
            )];
        }
        // Reported by the tools group.
        Err(GitError::Missing(_)) => return Vec::new(),
        Err(GitError::Failed { stderr, .. }) => {
            let first = stderr.lines().next().unwrap_or("no message").to_owned();
            let fix = match stderr
                .split_once("repository at '")
                .and_then(|(_, rest)| rest.split_once('\''))
            {
                Some((path, _)) => format!(
                    "if you trust the repository, `git config --global --add safe.directory {path}`"
                ),
                None => "make git work in the project (run `git status` to see why)".into(),
            };
            return vec![Check::fail(
                GROUP,
                format!("git refuses this project ({first}): the stop gate is off"),
                fix,
            )];
        }
    };
    let mut checks = vec![Check::ok(
        GROUP,
        format!("git works here (repository {})", repo.display()),
    )];
    let config = match StopGateConfig::load(project) {
        Ok(config) => config,
        Err(e) => {
            checks.push(Check::fail(
                GROUP,
                format!("the checkpoint section cannot be used: {e}"),
                "fix .context-pilot/config.json's \"checkpoint\" section",
            ));
            return checks;
        }
    };
    let gate = match StopGate::new(config) {
        Ok(gate) => gate,
        Err(e) => {
            checks.push(Check::fail(
                GROUP,
                format!("the checkpoint section is invalid: {e}"),
                "fix .context-pilot/config.json's \"checkpoint\" section",
            ));
            return checks;
        }
    };
    match gate.planned_tests(project, &repo) {
        Err(why) => checks.push(Check::info(GROUP, format!("tests: {why}"), None)),
        Ok(planned) => {
            let what = format!(
                "tests: `{}` in {} ({}; limit {}s)",
                planned.command,
                planned.dir.display(),
                planned.why,
                planned.timeout_secs
            );
            checks.push(match planned.missing_runner(None) {
                None => Check::ok(GROUP, format!("{what}; its runner is installed")),
                Some(missing) => Check::fail(
                    GROUP,
                    format!(
                        "{what}; not installed: {} ({})",
                        missing.tool, missing.evidence
                    ),
                    missing
                        .install
                        .unwrap_or_else(|| format!("install {}", missing.tool)),
                ),
            });
        }
    }
    checks
}
