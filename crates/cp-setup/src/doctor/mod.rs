//! `context-pilot doctor [--json]`: what is wrong with this machine and this project, one line
//! a check, with the fix for each that fails. Exits 1 when any check fails.
//!
//! One file a group of checks: `install` (this binary's version, commit and channel, as
//! `--version` says), `tools` (git, bash), `agents` (each agent CLI, on `PATH` or
//! at config's `agent.command`, against its minimum version), `wiring` (whether `init` wired each agent into the project
//! and the binary it names still runs, and what the agent itself must trust), `trust` (the
//! project's trust and what it would let run), `gate` (git works in the project, the test
//! command the stop gate will run and whether its runner is installed), `provider` (key,
//! model list, model), `console`
//! (the console server), `modes` (`run/`, `logs/`, `state/`), `hook_log` (the last hook
//! errors). Doctor only reads: it creates no `.context-pilot/`, starts no server.
//!
//! ```no_run
//! let project = cp_base::Project::discover(std::path::Path::new("."))?;
//! let report = cp_setup::doctor::run(&project);
//! print!("{}", report.text());
//! std::process::exit(i32::from(report.failed()));
//! # Ok::<(), std::io::Error>(())
//! ```

mod agents;
mod console;
mod gate;
mod hook_log;
mod install;
mod modes;
mod provider;
mod tools;
mod trust;
mod wiring;

use std::fmt::Write as _;

use cp_base::Project;
use serde::Serialize;

/// How one check came out.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Status {
    /// Works.
    Ok,
    /// Broken: doctor exits 1, and the line says the fix.
    Fail,
    /// Neither: something optional that is absent (an agent not installed, not wired).
    Info,
}

/// One check's result.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Check {
    /// The group it belongs to, e.g. `agents`.
    pub group: &'static str,
    pub status: Status,
    /// What was checked and found.
    pub what: String,
    /// What to do about it (always set for a failure; a hint for an `Info`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fix: Option<String>,
}

impl Check {
    pub fn ok(group: &'static str, what: impl Into<String>) -> Self {
        Self {
            group,
            status: Status::Ok,
            what: what.into(),
            fix: None,
        }
    }

    pub fn fail(group: &'static str, what: impl Into<String>, fix: impl Into<String>) -> Self {
        Self {
            group,
            status: Status::Fail,
            what: what.into(),
            fix: Some(fix.into()),
        }
    }

    pub fn info(group: &'static str, what: impl Into<String>, hint: Option<String>) -> Self {
        Self {
            group,
            status: Status::Info,
            what: what.into(),
            fix: hint,
        }
    }

    /// `✓ what`, `✗ what — fix: …`, `· what (hint)`.
    pub fn line(&self) -> String {
        match (self.status, &self.fix) {
            (Status::Ok, _) => format!("✓ {}", self.what),
            (Status::Fail, Some(fix)) => format!("✗ {} — fix: {fix}", self.what),
            (Status::Fail, None) => format!("✗ {}", self.what),
            (Status::Info, Some(hint)) => format!("· {} ({hint})", self.what),
            (Status::Info, None) => format!("· {}", self.what),
        }
    }
}

/// Every check's result, in the order they ran.
#[derive(Debug, Clone, Serialize)]
pub struct Report {
    /// The project checked.
    pub project: String,
    /// No check failed.
    pub ok: bool,
    pub checks: Vec<Check>,
}

impl Report {
    /// Whether any check failed.
    pub fn failed(&self) -> bool {
        !self.ok
    }

    /// One line a check, and a summary.
    pub fn text(&self) -> String {
        let mut out = format!("Context Pilot doctor: {}\n", self.project);
        for check in &self.checks {
            let _ = writeln!(out, "{}", check.line());
        }
        let failed = self
            .checks
            .iter()
            .filter(|c| c.status == Status::Fail)
            .count();
        if failed == 0 {
            out.push_str("No problems found.\n");
        } else {
            let _ = writeln!(out, "{failed} problem(s) found.");
        }
        out
    }

    /// The same as JSON: `{"project", "ok", "checks": [{"group", "status", "what", "fix"}]}`.
    pub fn json(&self) -> String {
        serde_json::to_string_pretty(self).unwrap_or_default() + "\n"
    }
}

/// Runs every check on `project` and this machine.
pub fn run(project: &Project) -> Report {
    let mut checks = install::checks();
    checks.extend(tools::checks());
    let (configured, config_check) = agents::configured_command(project);
    checks.extend(config_check);
    let presence = agents::look_for(configured.as_ref());
    checks.extend(agents::checks(&presence, configured.as_ref()));
    checks.extend(wiring::checks(project, &presence));
    checks.extend(trust::checks(project));
    checks.extend(gate::checks(project));
    checks.extend(provider::checks(project, &presence));
    checks.extend(console::checks(project));
    checks.extend(modes::checks(project));
    checks.extend(hook_log::checks(project));
    Report {
        project: project.root().display().to_string(),
        ok: checks.iter().all(|c| c.status != Status::Fail),
        checks,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_say_the_fix_of_a_failure_and_json_holds_the_same() {
        let report = Report {
            project: "/work/app".into(),
            ok: false,
            checks: vec![
                Check::ok("tools", "git 2.43.0"),
                Check::fail("console", "no server answers", "remove the socket"),
                Check::info("agents", "Gemini CLI: not on PATH", Some("npm i".into())),
            ],
        };
        let text = report.text();
        assert!(text.contains("\n✓ git 2.43.0\n"), "{text}");
        assert!(
            text.contains("\n✗ no server answers — fix: remove the socket\n"),
            "{text}"
        );
        assert!(
            text.contains("\n· Gemini CLI: not on PATH (npm i)\n"),
            "{text}"
        );
        assert!(text.ends_with("1 problem(s) found.\n"), "{text}");
        let json: serde_json::Value = serde_json::from_str(&report.json()).unwrap();
        assert_eq!(json["ok"], false);
        assert_eq!(json["checks"][1]["status"], "fail");
        assert_eq!(json["checks"][1]["fix"], "remove the socket");
        assert!(json["checks"][0].get("fix").is_none());
    }
}
