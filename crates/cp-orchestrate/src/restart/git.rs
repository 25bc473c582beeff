//! The git side of restarts: the clean-tree check before a run and the auto-commits.
//!
//! Real `git` subprocesses. Listing changes reuses the stop gate's `git status` code,
//! so both agree on what counts as a change (the host's runtime files never do).

use std::path::Path;
use std::process::{Command, Stdio};

use cp_base::Project;

use super::error::RestartError;
use cp_git::{ChangedFile, EntryKind, Git, GitError, Head};

/// Paths under `.context-pilot/` that belong to this machine and never go into a commit,
/// even in a project whose `.context-pilot/.gitignore` was not written yet; `runs` holds the
/// records a workflow run keeps writing (a commit of them would be left modified).
const RUNTIME_EXCLUDES: [&str; 4] = ["run", "state", "logs", "runs"];

fn map_git_error(e: GitError) -> RestartError {
    match e {
        GitError::Missing(io) => RestartError::GitMissing(io.to_string()),
        GitError::NotARepository(dir) => RestartError::NotARepository(dir),
        GitError::Failed { args, stderr, .. } => RestartError::Git { args, stderr },
    }
}

/// Every uncommitted change in the project's repository, minus paths starting with one of
/// `ignore` (relative to the repository root).
pub(crate) fn changed_files(
    project: &Project,
    ignore: &[String],
) -> Result<Vec<ChangedFile>, RestartError> {
    let git = Git { path_env: None };
    let repo = git.repo_root(project.root()).map_err(map_git_error)?;
    let files = git.changed_files(&repo).map_err(map_git_error)?;
    Ok(files
        .into_iter()
        // A nested repository, a worktree, a submodule with only untracked files inside:
        // not the project's changes.
        .filter(ChangedFile::is_own)
        .filter(|f| {
            !ignore
                .iter()
                .any(|prefix| f.path.starts_with(prefix.as_str()))
        })
        .collect())
}

/// Where HEAD of the project's repository is now; `None` without git or a repository
/// (logged: the stop gate then checks only what is uncommitted).
pub(crate) fn head_state(project: &Project) -> Option<Head> {
    let git = Git { path_env: None };
    git.repo_root(project.root())
        .and_then(|repo| git.head_state(&repo))
        .map_err(|e| tracing::info!("where HEAD is, unknown: {e}"))
        .ok()
}

/// The repository-relative form of a project-relative path prefix, for [`changed_files`].
pub(crate) fn repo_relative(project: &Project, project_relative: &str) -> String {
    let git = Git { path_env: None };
    let Ok(repo) = git.repo_root(project.root()) else {
        return project_relative.to_owned();
    };
    let repo = std::fs::canonicalize(&repo).unwrap_or(repo);
    let root = std::fs::canonicalize(project.root()).unwrap_or_else(|_| project.root().into());
    match root.strip_prefix(&repo) {
        Ok(sub) if !sub.as_os_str().is_empty() => {
            format!("{}/{project_relative}", sub.to_string_lossy())
        }
        _ => project_relative.to_owned(),
    }
}

/// Refuses a dirty tree (auto-commit would sweep the changes into its commits).
pub(crate) fn ensure_clean(project: &Project, ignore: &[String]) -> Result<(), RestartError> {
    let files = changed_files(project, ignore)?;
    if files.is_empty() {
        return Ok(());
    }
    let mut sample: Vec<String> = files
        .iter()
        .take(5)
        .map(ChangedFile::display_path)
        .collect();
    if files.len() > 5 {
        sample.push("…".into());
    }
    Err(RestartError::DirtyTree {
        count: files.len(),
        sample: sample.join(", "),
    })
}

fn git(root: &Path, args: &[&str]) -> Result<std::process::Output, RestartError> {
    Command::new("git")
        .arg("-C")
        .arg(root)
        .args(args)
        .stdin(Stdio::null())
        .env("LC_ALL", "C")
        .env_remove("GIT_DIR")
        .env_remove("GIT_WORK_TREE")
        .env_remove("GIT_INDEX_FILE")
        .output()
        .map_err(|e| RestartError::GitMissing(e.to_string()))
}

fn git_ok(root: &Path, args: &[&str]) -> Result<String, RestartError> {
    let out = git(root, args)?;
    if out.status.success() {
        Ok(String::from_utf8_lossy(&out.stdout).trim().to_owned())
    } else {
        let stderr = String::from_utf8_lossy(&out.stderr).trim().to_owned();
        if stderr.contains("not a git repository") {
            return Err(RestartError::NotARepository(root.to_path_buf()));
        }
        Err(RestartError::Git {
            args: args.join(" "),
            stderr,
        })
    }
}

/// Who auto-commits sign as.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Identity {
    /// Git's own (config or `GIT_AUTHOR_*` / `GIT_COMMITTER_*`).
    Git,
    /// `Context Pilot <context-pilot@localhost>`, for a git with none, when config allows.
    ContextPilot,
}

/// The name and email of [`Identity::ContextPilot`].
const CONTEXT_PILOT_NAME: &str = "Context Pilot";
const CONTEXT_PILOT_EMAIL: &str = "context-pilot@localhost";

/// The identity commits in `project` will have: git's, else Context Pilot's when
/// `allow_context_pilot`, else an error that says what to set.
pub(crate) fn commit_identity(
    project: &Project,
    allow_context_pilot: bool,
) -> Result<Identity, RestartError> {
    for var in ["GIT_AUTHOR_IDENT", "GIT_COMMITTER_IDENT"] {
        let out = git(project.root(), &["var", var])?;
        if out.status.success() {
            continue;
        }
        if allow_context_pilot {
            return Ok(Identity::ContextPilot);
        }
        let stderr = String::from_utf8_lossy(&out.stderr);
        // Git explains at length; its `fatal:` line is the point.
        let detail = stderr
            .lines()
            .find(|l| l.starts_with("fatal:"))
            .or_else(|| stderr.lines().find(|l| !l.trim().is_empty()))
            .unwrap_or("no user.name or user.email")
            .trim()
            .to_owned();
        return Err(RestartError::NoGitIdentity { detail });
    }
    Ok(Identity::Git)
}

/// `git add -A && git commit -m message` for the whole repository (minus the host's runtime
/// files), signed as `identity`. Returns the new commit's hash, or `None` when there was
/// nothing to commit.
pub(crate) fn commit_all(
    project: &Project,
    message: &str,
    identity: Identity,
) -> Result<Option<String>, RestartError> {
    let root = project.root();
    // A directory with a repository of its own (a vendored project, a worktree made inside the
    // project) stays out: `add -A` would record it as a gitlink no clone can fill, or fail on
    // one without a commit.
    let nested: Vec<String> = Git { path_env: None }
        .repo_root(root)
        .and_then(|repo| Git { path_env: None }.changed_files(&repo))
        .map_err(map_git_error)?
        .into_iter()
        .filter(|f| matches!(f.kind, EntryKind::NestedRepository | EntryKind::Worktree))
        .map(|f| format!(":(top,exclude){}", f.path))
        .collect();
    let mut add = vec!["add", "-A", "--", ":/"];
    add.extend(nested.iter().map(String::as_str));
    git_ok(root, &add)?;
    // Unstage the runtime directories in case no .gitignore hides them. (Excluding them with
    // `:(exclude)` pathspecs instead makes git fail when they *are* ignored, the usual case.)
    let runtime: Vec<String> = RUNTIME_EXCLUDES
        .iter()
        .map(|dir| format!("{}/{dir}", cp_base::STATE_DIR))
        .collect();
    let mut reset = vec!["reset", "-q", "--"];
    reset.extend(runtime.iter().map(String::as_str));
    git_ok(root, &reset)?;
    // Exit 0: nothing staged; 1: something to commit.
    let staged = git(root, &["diff", "--cached", "--quiet"])?;
    match staged.status.code() {
        Some(0) => return Ok(None),
        Some(1) => {}
        _ => {
            return Err(RestartError::Git {
                args: "diff --cached --quiet".into(),
                stderr: String::from_utf8_lossy(&staged.stderr).trim().to_owned(),
            });
        }
    }
    let name = format!("user.name={CONTEXT_PILOT_NAME}");
    let email = format!("user.email={CONTEXT_PILOT_EMAIL}");
    let mut commit = Vec::new();
    if identity == Identity::ContextPilot {
        commit.extend(["-c", name.as_str(), "-c", email.as_str()]);
    }
    commit.extend(["commit", "-q", "--no-verify", "-m", message]);
    git_ok(root, &commit)?;
    git_ok(root, &["rev-parse", "HEAD"]).map(Some)
}
