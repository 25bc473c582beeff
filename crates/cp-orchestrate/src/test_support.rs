//! A stand-in agent for workflow tests, here and, with the `test-support` feature, in the
//! front-ends' tests (`cp-run`'s headless runs): [`EchoDriver`].

use std::path::PathBuf;
use std::time::Duration;

use crate::{DriverError, Handoff, SessionControl, SessionDriver, SessionEnd, ToolRecord};
use cp_base::Project;

/// How long a hanging session blocks: a safety limit only, as the test that makes it hang
/// kills the process long before.
const HANG_LIMIT: Duration = Duration::from_secs(60);

/// A driver for workflows: every session appends a line to `work/<phase>.txt` (a real file
/// change, reported as a tool call) and completes. It can hang in one phase, after writing a
/// marker file, so a test can kill the process mid-phase.
pub struct EchoDriver {
    project: Project,
    /// `(phase, marker)`: in that phase, write `marker` and then block.
    pub hang: Option<(String, PathBuf)>,
    /// Phases whose session fails.
    pub fail: Vec<String>,
    /// `(phase, prompt)` of every session, in order.
    pub runs: Vec<(String, String)>,
}

impl EchoDriver {
    /// A driver working in `project`'s root.
    #[must_use]
    pub fn new(project: &Project) -> Self {
        Self {
            project: project.clone(),
            hang: None,
            fail: Vec::new(),
            runs: Vec::new(),
        }
    }

    /// The phases run, in order.
    #[must_use]
    pub fn phases(&self) -> Vec<&str> {
        self.runs.iter().map(|(p, _)| p.as_str()).collect()
    }

    /// The prompt of the `n`th session (0-based).
    ///
    /// # Panics
    /// When fewer than `n + 1` sessions ran.
    #[must_use]
    pub fn prompt(&self, n: usize) -> &str {
        &self.runs[n].1
    }

    /// Appends this run's line to `rel`, under the project root.
    fn append_line(&self, rel: &str) -> std::io::Result<()> {
        let path = self.project.root().join(rel);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent)?;
        }
        let mut text = std::fs::read_to_string(&path).unwrap_or_default();
        text += "run ";
        text += &self.runs.len().to_string();
        text.push('\n');
        std::fs::write(&path, text)
    }
}

impl SessionDriver for EchoDriver {
    fn run(&mut self, prompt: &str, control: &SessionControl) -> SessionEnd {
        let phase = control.phase_id().to_owned();
        self.runs.push((phase.clone(), prompt.to_owned()));
        let rel = format!("work/{phase}.txt");
        if let Err(e) = self.append_line(&rel) {
            return SessionEnd::Failed(format!("writing {rel}: {e}"));
        }
        control.record_usage(1_000, 200_000);
        control.record_tool_call(ToolRecord::new("File_write", [rel]));
        if let Some((hang_phase, marker)) = &self.hang
            && hang_phase == &phase
        {
            if let Err(e) = std::fs::write(marker, "hanging") {
                return SessionEnd::Failed(format!("writing {}: {e}", marker.display()));
            }
            std::thread::sleep(HANG_LIMIT);
            return SessionEnd::Failed("was not killed".into());
        }
        if self.fail.contains(&phase) {
            return SessionEnd::Failed(format!("provider error in {phase}"));
        }
        SessionEnd::Completed
    }

    fn request_handoff(
        &mut self,
        _request: &str,
        _control: &SessionControl,
    ) -> Result<Option<Handoff>, DriverError> {
        Ok(None)
    }
}
