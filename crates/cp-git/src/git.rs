//! Running git: one way to start it (a clean, predictable environment, `PATH` replaceable for
//! tests), and the errors of a git that is missing or fails.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// Why git could not tell us what changed. The stop gate fails open on all of these.
#[derive(Debug, thiserror::Error)]
pub enum GitError {
    /// The `git` program could not be started.
    #[error("git is not available ({0})")]
    Missing(std::io::Error),
    /// The project is not inside a git work tree.
    #[error("{0} is not inside a git work tree")]
    NotARepository(PathBuf),
    /// Git ran but failed.
    #[error("`git {args}` failed in {dir}: {stderr}")]
    Failed {
        /// The arguments given.
        args: String,
        /// Where it ran.
        dir: PathBuf,
        /// What git said: its standard error, then the end of its standard output.
        stderr: String,
    },
}

/// Runs git with a clean, predictable environment.
#[derive(Debug, Clone)]
pub struct Git {
    /// Replaces `PATH` for git (and lets tests hide git).
    pub path_env: Option<OsString>,
}

impl Git {
    pub(crate) fn run(&self, dir: &Path, args: &[&str]) -> Result<Vec<u8>, GitError> {
        self.run_with_input(dir, args, None)
    }

    /// Runs a git command whose exit code 1 means "no" (`merge-base --is-ancestor`,
    /// `rev-parse -q --verify`, `symbolic-ref -q`): `None` then; any other failure is an error.
    pub(crate) fn run_answer(
        &self,
        dir: &Path,
        args: &[&str],
    ) -> Result<Option<Vec<u8>>, GitError> {
        let out = self.output(dir, args, None, None)?;
        match out.status.code() {
            Some(0) => Ok(Some(out.stdout)),
            Some(1) if out.stderr.is_empty() => Ok(None),
            _ => Err(failed(dir, args, &out)),
        }
    }

    /// Runs git with `input` on its standard input (none: `/dev/null`).
    pub(crate) fn run_with_input(
        &self,
        dir: &Path,
        args: &[&str],
        input: Option<&[u8]>,
    ) -> Result<Vec<u8>, GitError> {
        self.run_with_index(dir, args, input, None)
    }

    /// Like [`Git::run_with_input`], with git's index file replaced by `index` when given (a
    /// commit built aside, so a refused one leaves the real index as it was).
    pub(crate) fn run_with_index(
        &self,
        dir: &Path,
        args: &[&str],
        input: Option<&[u8]>,
        index: Option<&Path>,
    ) -> Result<Vec<u8>, GitError> {
        let out = self.output(dir, args, input, index)?;
        succeeded(dir, args, out)
    }

    /// Runs git and returns what it did, whatever its exit status.
    pub(crate) fn output(
        &self,
        dir: &Path,
        args: &[&str],
        input: Option<&[u8]>,
        index: Option<&Path>,
    ) -> Result<std::process::Output, GitError> {
        let mut cmd = self.command(dir, args, input.is_some(), index);
        let mut child = cmd.spawn().map_err(GitError::Missing)?;
        if let (Some(input), Some(mut stdin)) = (input, child.stdin.take()) {
            // A git that exits early closes the pipe; its status says why.
            let _ = std::io::Write::write_all(&mut stdin, input);
        }
        child.wait_with_output().map_err(GitError::Missing)
    }

    /// The git command for `args` in `dir`, its output captured.
    pub(crate) fn command(
        &self,
        dir: &Path,
        args: &[&str],
        input: bool,
        index: Option<&Path>,
    ) -> Command {
        let mut cmd = Command::new("git");
        cmd.arg("-C")
            .arg(dir)
            .args(args)
            .stdin(if input { Stdio::piped() } else { Stdio::null() })
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            // Never take the index lock: an agent may be committing at the same moment.
            .env("GIT_OPTIONAL_LOCKS", "0")
            // English messages, so "not a git repository" can be recognized.
            .env("LC_ALL", "C")
            .env("LANGUAGE", "C")
            // Inherited repository overrides (from a git hook, say) would point `-C` elsewhere.
            .env_remove("GIT_DIR")
            .env_remove("GIT_WORK_TREE")
            .env_remove("GIT_INDEX_FILE");
        if let Some(index) = index {
            cmd.env("GIT_INDEX_FILE", index);
        }
        if let Some(path) = &self.path_env {
            cmd.env("PATH", path);
        }
        cmd
    }

    /// The top of the work tree containing `dir`.
    pub fn repo_root(&self, dir: &Path) -> Result<PathBuf, GitError> {
        top_of(dir, self.run(dir, &TOP))
    }
}

/// `git rev-parse --show-toplevel`.
pub(crate) const TOP: [&str; 2] = ["rev-parse", "--show-toplevel"];

/// What `git rev-parse --show-toplevel` in `dir` said, as the top's path.
pub(crate) fn top_of(dir: &Path, said: Result<Vec<u8>, GitError>) -> Result<PathBuf, GitError> {
    match said {
        Ok(out) => {
            let text = String::from_utf8_lossy(&out);
            Ok(PathBuf::from(text.trim_end_matches(['\n', '\r'])))
        }
        Err(GitError::Failed { stderr, .. }) if stderr.contains("not a git repository") => {
            Err(GitError::NotARepository(dir.to_path_buf()))
        }
        Err(e) => Err(e),
    }
}

/// The standard output of a git that succeeded, else its failure.
pub(crate) fn succeeded(
    dir: &Path,
    args: &[&str],
    out: std::process::Output,
) -> Result<Vec<u8>, GitError> {
    if out.status.success() {
        Ok(out.stdout)
    } else {
        Err(failed(dir, args, &out))
    }
}

/// At most this many of the last lines of a failed command's standard output are kept.
const SAID_LINES: usize = 20;

/// A failed git command, with its own words: standard error, then the end of standard output
/// (some refusals are printed there: `git commit`'s "nothing to commit" is).
fn failed(dir: &Path, args: &[&str], out: &std::process::Output) -> GitError {
    let mut said = String::from_utf8_lossy(&out.stderr).trim().to_owned();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let lines: Vec<&str> = stdout.trim().lines().collect();
    let tail = lines[lines.len().saturating_sub(SAID_LINES)..].join("\n");
    if !tail.is_empty() {
        if !said.is_empty() {
            said.push('\n');
        }
        said.push_str(&tail);
    }
    GitError::Failed {
        args: args.join(" "),
        dir: dir.to_path_buf(),
        stderr: said,
    }
}
