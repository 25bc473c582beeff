//! The remote side of `context-pilot test-tree --json`: the request is read from standard
//! input, the commit (sent before into this user's clone) is checked out in a worktree of its
//! own, the project's trust is checked there, the tests run, and the events go to standard
//! output. Standard input closing (the run stopped the test, or its link dropped) stops the
//! test; the worktree and every process the test started are gone before it returns.

use std::io::{BufRead, Write};
use std::path::{Path, PathBuf};

use cp_base::{CancelToken, Project, TrustState};
use cp_orchestrate::{TreeTest, TreeUnderTest};

use crate::RemoteError;
use crate::clone::{checked_key, clones_dir, git};
use crate::machine::host_name;
use crate::wire::{TestEvent, TestRequest};

/// How the serving side tests a tree and ends what the test left running.
pub trait Bench {
    /// Tests `tree` as the stop gate would.
    fn test(&self, tree: &TreeUnderTest<'_>) -> TreeTest;
    /// Ends what testing the tree at `root` left running (its consoles).
    fn end(&self, root: &Path);
}

/// Serves one request: reads it from `input`, writes events to `output`. Returns whether the
/// tree was tested green (or found ready).
pub fn serve_test_tree(
    mut input: Box<dyn BufRead + Send>,
    output: &mut (dyn Write + Send),
    bench: &dyn Bench,
) -> Result<bool, RemoteError> {
    let host = host_name();
    let mut line = String::new();
    input
        .read_line(&mut line)
        .map_err(|e| RemoteError::Serve(format!("cannot read the request: {e}")))?;
    let request: TestRequest = match serde_json::from_str(line.trim()) {
        Ok(request) => request,
        Err(e) => {
            let message = format!("the request is not valid: {e}");
            emit(output, &TestEvent::Error { message })?;
            return Ok(false);
        }
    };
    match check_out(&request.project, &request.commit, &host, None) {
        Ok(Prepared::Refused(reason)) => {
            emit(output, &TestEvent::Refused { host, reason })?;
            Ok(false)
        }
        Ok(Prepared::Tree(worktree, tree, clone)) => {
            let outcome = run(&request, &host, &worktree, &tree, input, output, bench);
            remove_tree(&clone, &worktree);
            let _ = git(
                &clone,
                &["update-ref", "-d", &test_ref(&request.commit)],
                false,
            );
            outcome
        }
        Err(e) => {
            emit(
                output,
                &TestEvent::Error {
                    message: e.to_string(),
                },
            )?;
            Ok(false)
        }
    }
}

/// The ref a candidate is sent as.
pub fn test_ref(commit: &str) -> String {
    format!("refs/context-pilot/tests/{commit}")
}

/// A tree checked out for a job, or why the host refuses it.
pub(crate) enum Prepared {
    /// Not trusted there: why, and what to do.
    Refused(String),
    /// The worktree, its tree's hash, the clone it belongs to.
    Tree(PathBuf, String, PathBuf),
}

/// Removes the worktree at `worktree` of `clone`.
pub(crate) fn remove_tree(clone: &Path, worktree: &Path) {
    let worktree_text = worktree.display().to_string();
    let _ = git(
        clone,
        &["worktree", "remove", "--force", &worktree_text],
        false,
    );
    let _ = std::fs::remove_dir_all(worktree);
    let _ = git(clone, &["worktree", "prune"], false);
}

/// Checks out `commit` (sent before into the clone of `project`) in a worktree of its own,
/// detached or on `branch` (made or moved there), and checks the project's trust there.
pub(crate) fn check_out(
    project: &str,
    commit: &str,
    host: &str,
    branch: Option<&str>,
) -> Result<Prepared, RemoteError> {
    let request = TestRequest {
        project: project.to_owned(),
        commit: commit.to_owned(),
        changed: Vec::new(),
        check_only: false,
    };
    let key = checked_key(&request.project)?;
    if !request.commit.bytes().all(|b| b.is_ascii_hexdigit()) || request.commit.len() < 7 {
        return Err(RemoteError::Serve(format!(
            "`{}` is not a commit id",
            request.commit
        )));
    }
    let clone = clones_dir()?.join(&key);
    git(Path::new("/"), &["--version"], false)?;
    if !clone.join(".git").is_dir() {
        return Err(RemoteError::Serve(format!(
            "no clone of project {key} here; the run sends the commit first"
        )));
    }
    let spec = format!("{}^{{tree}}", request.commit);
    git(&clone, &["rev-parse", "--verify", "--quiet", &spec], false).map_err(|_| {
        RemoteError::Serve(format!("commit {} did not arrive here", request.commit))
    })?;
    if git(&clone, &["rev-parse", "--verify", "--quiet", "HEAD"], false).is_err() {
        // The clone's own tree shows the first commit it got: what the person reviews and
        // trusts there.
        git(
            &clone,
            &["checkout", "--quiet", "--detach", &request.commit],
            false,
        )?;
    }
    let short = request.commit.get(..12).unwrap_or(&request.commit);
    let trees = clone.with_extension("trees");
    let worktree = trees.join(format!("{short}-{}", std::process::id()));
    std::fs::create_dir_all(&trees)
        .map_err(|e| RemoteError::Serve(format!("cannot make {}: {e}", trees.display())))?;
    let worktree_text = worktree.display().to_string();
    let _ = git(&clone, &["worktree", "prune"], false);
    let mut add = vec!["worktree", "add", "--quiet", "--force"];
    match branch {
        Some(branch) => add.extend(["-B", branch]),
        None => add.push("--detach"),
    }
    add.extend([worktree_text.as_str(), request.commit.as_str()]);
    git(&clone, &add, false)?;
    let tree = git(&worktree, &["rev-parse", "HEAD^{tree}"], false)?;
    let project = Project::at(&worktree);
    let state = project.trust_state();
    if !state.allows() {
        let _ = git(
            &clone,
            &["worktree", "remove", "--force", &worktree_text],
            false,
        );
        let _ = std::fs::remove_dir_all(&worktree);
        let store = project
            .trust_store()
            .path()
            .map_or_else(|| "nowhere".to_owned(), |p| p.display().to_string());
        return Ok(Prepared::Refused(format!(
            "the project is not trusted on {host} as it is at commit {short} ({}; trust is \
             read from {store}): review it there (`cd {} && git checkout --detach {}`) and run \
             `context-pilot trust` in that folder",
            why_untrusted(&state, &project, &clone),
            clone.display(),
            request.commit
        )));
    }
    Ok(Prepared::Tree(worktree, tree, clone))
}

/// Why the tree of `project` (a worktree of `clone`), whose trust `state` does not allow it,
/// is refused, in a few words. A worktree of a trusted clone is trusted while its
/// configuration is the one trusted there: one that is not holds another configuration.
fn why_untrusted(state: &TrustState, project: &Project, clone: &Path) -> String {
    let clone = std::fs::canonicalize(clone).unwrap_or_else(|_| clone.to_path_buf());
    let clone_trusted = matches!(project.trust_store().recorded(&clone), Ok(Some(_)));
    match state {
        TrustState::Unknown(e) => format!("its trust cannot be read there: {e}"),
        _ if clone_trusted => "what its .context-pilot configuration runs differs from what \
                               was trusted there"
            .into(),
        _ => "it was never trusted there".into(),
    }
}

fn run(
    request: &TestRequest,
    host: &str,
    worktree: &Path,
    tree: &str,
    mut input: Box<dyn BufRead + Send>,
    output: &mut (dyn Write + Send),
    bench: &dyn Bench,
) -> Result<bool, RemoteError> {
    if request.check_only {
        emit(
            output,
            &TestEvent::Ready {
                host: host.to_owned(),
                tree: tree.to_owned(),
            },
        )?;
        return Ok(true);
    }
    emit(
        output,
        &TestEvent::CheckedOut {
            host: host.to_owned(),
            commit: request.commit.clone(),
            tree: tree.to_owned(),
        },
    )?;
    let cancel = CancelToken::new();
    let stop = cancel.clone();
    // The input closing (the run stopped it, or the link is gone) stops the test.
    std::thread::spawn(move || {
        let mut rest = Vec::new();
        let _ = input.read_to_end(&mut rest);
        stop.cancel();
    });
    let done = CancelToken::new();
    let shared = std::sync::Mutex::new(&mut *output);
    let test = std::thread::scope(|scope| {
        // A line every few seconds: a connection whose other end is gone (a link that
        // dropped, then came back) is found by writing to it, and the test stops.
        scope.spawn(|| {
            while !done.is_cancelled() && !cancel.is_cancelled() {
                let mut out = shared
                    .lock()
                    .unwrap_or_else(std::sync::PoisonError::into_inner);
                if emit(&mut **out, &TestEvent::Alive).is_err() {
                    cancel.cancel();
                }
                drop(out);
                for _ in 0..HEARTBEAT_TICKS {
                    if done.is_cancelled() || cancel.is_cancelled() {
                        break;
                    }
                    std::thread::sleep(std::time::Duration::from_millis(100));
                }
            }
        });
        let test = bench.test(&TreeUnderTest {
            root: worktree,
            commit: &request.commit,
            changed: &request.changed,
            cancel: &cancel,
        });
        done.cancel();
        test
    });
    bench.end(worktree);
    for run in &test.runs {
        emit(output, &TestEvent::Command { run: run.clone() })?;
    }
    let passed = test.passed();
    emit(
        output,
        &TestEvent::Result {
            host: host.to_owned(),
            commit: request.commit.clone(),
            tree: tree.to_owned(),
            test,
        },
    )?;
    Ok(passed)
}

/// Tenths of a second between two `alive` lines.
const HEARTBEAT_TICKS: u32 = 30;

fn emit(output: &mut dyn Write, event: &TestEvent) -> Result<(), RemoteError> {
    let line = serde_json::to_string(event)
        .map_err(|e| RemoteError::Serve(format!("cannot write an event: {e}")))?;
    writeln!(output, "{line}")
        .and_then(|()| output.flush())
        .map_err(|e| RemoteError::Serve(format!("cannot write an event: {e}")))
}
