//! The stop gate's tests for a whole tree, outside any agent's turn: a workflow run's merge
//! queue asks it to test a combined tree (a phase merged into the run's branch) exactly as
//! the gate would test that tree after a turn that changed `changed`: the configured command
//! (in a trusted project), else the detected one, else one run per project of a monorepo
//! whose files changed, with the gate's timeouts. Nothing of the gate's per-session state is
//! read or written.

use cp_base::{Project, WorkerId};
use cp_git::{ChangedFile, FileStatus};
use cp_orchestrate::StopInput;

use super::StopGate;
use super::report::{StopPhase, StopReport, TestOutcome};

/// What testing a tree found: the runs, or why none ran.
#[derive(Debug, Clone, PartialEq)]
pub struct TreeTests {
    /// Each test command run, in order.
    pub runs: Vec<TestOutcome>,
    /// Why none ran, when none did.
    pub note: Option<String>,
}

impl StopGate {
    /// Plans and runs the tests of the tree at `project` as the gate would after a turn
    /// that changed `changed` (repository-relative paths): none when no changed file
    /// triggers tests (the note says so), else the configured or detected commands.
    pub fn test_tree(&self, project: &Project, changed: &[String]) -> TreeTests {
        let repo = match self.git.repo_root(project.root()) {
            Ok(repo) => repo,
            // A tree git cannot read is not one the tests could say anything of: a failed
            // run, so that the merge does not land as merely "not tested".
            Err(e) => {
                return TreeTests {
                    runs: vec![TestOutcome::not_started(
                        "(git, finding the repository)",
                        e.to_string(),
                    )],
                    note: None,
                };
            }
        };
        let files = changed
            .iter()
            .map(|path| ChangedFile::new(path.clone(), FileStatus::Modified))
            .collect();
        let mut report = StopReport::new(StopPhase::First);
        report.set_files(self.categorizer.categorize(files), &self.categorizer);
        let triggers = report.code_changed && report.files.iter().any(|f| f.triggers_tests);
        // No list of changes (nothing to compare with): the tree's own tests run.
        if !changed.is_empty() && !triggers {
            return TreeTests {
                runs: Vec::new(),
                note: Some("no changed file triggers the tests".into()),
            };
        }
        let input = StopInput {
            project: project.clone(),
            worker: WorkerId::default(),
            session: String::new(),
            gate_commits: false,
            // The tree is tested whole; what changed is given above.
            base: None,
        };
        self.run_tests(&input, &repo, &[], &mut report);
        TreeTests {
            runs: report.tests,
            note: report.tests_note,
        }
    }
}
