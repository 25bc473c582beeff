//! Finding an agent's binary (configured, else on `PATH`) and checking its version.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use crate::AgentError;
use crate::spec::AgentSpec;

impl AgentSpec {
    /// Whether `version` (as the CLI reported it) resumes sessions safely.
    pub fn resume_works(&self, version: &str) -> bool {
        match (self.resume_since, parse_version(version)) {
            (Some(first), Some(found)) => found >= first,
            _ => false,
        }
    }
}

/// A located, version-checked agent binary.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AgentBinary {
    /// The executable.
    pub path: PathBuf,
    /// The version it reported, e.g. `2.1.332`.
    pub version: String,
}

impl AgentBinary {
    /// The version as numbers, e.g. `(2, 1, 332)`.
    pub fn parsed_version(&self) -> Option<crate::Version> {
        parse_version(&self.version)
    }
}

impl AgentSpec {
    /// Finds the binary (`command` from config wins over `PATH`) and checks its version.
    pub fn locate(&self, command: Option<&str>) -> Result<AgentBinary, AgentError> {
        let path = match command {
            Some(command) => find_program(command),
            None => find_program(self.program),
        }
        .ok_or_else(|| AgentError::NotFound {
            agent: self.display_name,
            program: command.unwrap_or(self.program).to_owned(),
            install: self.install,
        })?;
        let version = self.version(&path)?;
        Ok(AgentBinary { path, version })
    }

    fn version(&self, path: &Path) -> Result<String, AgentError> {
        let failed = |detail: String| AgentError::Version {
            agent: self.display_name,
            path: path.to_owned(),
            detail,
            install: self.install,
        };
        let out = version_output(path).map_err(|e| failed(e.to_string()))?;
        let text = String::from_utf8_lossy(&out.stdout);
        if !out.status.success() {
            return Err(failed(format!("exit status {}", out.status)));
        }
        let Some(found) = parse_version(&text) else {
            return Err(failed(format!("unexpected output {:?}", text.trim())));
        };
        if found < self.min_version {
            let (a, b, c) = self.min_version;
            return Err(AgentError::TooOld {
                agent: self.display_name,
                path: path.to_owned(),
                found: format!("{}.{}.{}", found.0, found.1, found.2),
                needed: format!("{a}.{b}.{c}"),
                install: self.install,
            });
        }
        Ok(format!("{}.{}.{}", found.0, found.1, found.2))
    }
}

/// Runs `path --version`. A binary written a moment ago can be briefly "busy" (ETXTBSY: a
/// process forked elsewhere in this program still holds the writer's descriptor until it
/// execs), so that one error is retried for up to a second.
fn version_output(path: &Path) -> std::io::Result<std::process::Output> {
    let mut tries = 0;
    loop {
        match Command::new(path)
            .arg("--version")
            .stdin(Stdio::null())
            .output()
        {
            Err(e) if e.raw_os_error() == Some(libc::ETXTBSY) && tries < 50 => {
                tries += 1;
                std::thread::sleep(std::time::Duration::from_millis(20));
            }
            other => return other,
        }
    }
}

/// The first `X.Y.Z` in `text`, e.g. `(2, 1, 332)` in `2.1.332 (Claude Code)`.
pub fn parse_version(text: &str) -> Option<crate::Version> {
    text.split(|c: char| !(c.is_ascii_digit() || c == '.'))
        .find_map(|word| {
            let mut parts = word.split('.').map(str::parse::<u64>);
            match (parts.next(), parts.next(), parts.next()) {
                (Some(Ok(a)), Some(Ok(b)), Some(Ok(c))) => Some((a, b, c)),
                _ => None,
            }
        })
}

/// `program` itself when it names an executable path, else the first executable of that name
/// on `PATH`.
fn find_program(program: &str) -> Option<PathBuf> {
    let found = cp_base::find_program(program, std::env::var_os("PATH").as_deref())?;
    cp_base::is_executable_file(&found).then_some(found)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::claude::SPEC as CLAUDE;
    use crate::gemini::SPEC as GEMINI;

    #[test]
    fn resume_is_used_from_the_first_release_that_pairs_tool_results() {
        assert!(CLAUDE.resume_works("2.1.330 (Claude Code)"));
        // The pinned Gemini CLI sends a resumed session's tool results twice.
        assert!(!GEMINI.resume_works("0.61.0"));
        let fixed = AgentSpec {
            resume_since: Some((0, 70, 0)),
            ..GEMINI
        };
        assert!(!fixed.resume_works("0.69.9"));
        assert!(fixed.resume_works("0.70.0"));
        assert!(!fixed.resume_works("unknown"));
    }

    #[test]
    fn versions_are_read_from_either_cli() {
        assert_eq!(parse_version("2.1.330 (Claude Code)\n"), Some((2, 1, 330)));
        assert_eq!(parse_version("0.61.0\n"), Some((0, 61, 0)));
        assert_eq!(parse_version("v1.2\n"), None);
    }

    #[test]
    fn a_missing_binary_names_how_to_install_it() {
        let err = CLAUDE
            .locate(Some("/nonexistent/claude"))
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("npm install -g @anthropic-ai/claude-code"),
            "{err}"
        );
    }

    /// A fake CLI in `dir` that prints `version`.
    fn fake_cli(dir: &Path, name: &str, version: &str) -> String {
        let fake = dir.join(name);
        std::fs::write(&fake, format!("#!/bin/sh\necho '{version}'\n")).unwrap();
        std::fs::set_permissions(&fake, std::os::unix::fs::PermissionsExt::from_mode(0o755))
            .unwrap();
        fake.to_str().unwrap().to_owned()
    }

    #[test]
    fn an_old_version_is_refused_with_the_needed_one() {
        let dir = tempfile::tempdir().unwrap();
        let fake = fake_cli(dir.path(), "claude", "1.0.3 (Claude Code)");
        let err = CLAUDE.locate(Some(&fake)).unwrap_err().to_string();
        assert!(
            err.contains("1.0.3") && err.contains("2.0.31 or newer"),
            "{err}"
        );
    }

    #[test]
    fn the_measured_minimum_is_accepted_and_the_release_before_it_refused() {
        let dir = tempfile::tempdir().unwrap();
        for (cli, oldest, before) in [
            (CLAUDE, "2.0.31 (Claude Code)", "2.0.30 (Claude Code)"),
            (GEMINI, "0.41.0", "0.40.1"),
        ] {
            let fake = fake_cli(dir.path(), "oldest", oldest);
            assert!(cli.locate(Some(&fake)).is_ok(), "{} {oldest}", cli.name);
            let fake = fake_cli(dir.path(), "before", before);
            let err = cli.locate(Some(&fake)).unwrap_err();
            assert!(matches!(err, AgentError::TooOld { .. }), "{err}");
        }
    }
}
