//! What `Git::status` lists in real repositories (issue 42, items 6 to 8): a nested
//! repository, a worktree made inside the project (by `git worktree add` or by Claude Code under
//! `.claude/worktrees/`) and a submodule with only untracked files inside are named for what
//! they are, never taken for the project's own new files; the repository's
//! `status.showUntrackedFiles` is honoured; and listing changes nothing in the repository.

#![expect(
    clippy::unwrap_used,
    reason = "test setup: a failed step must fail the test loudly"
)]

use std::path::Path;
use std::process::Command;

use cp_git::{ChangedFile, EntryKind, FileStatus, Git, SubmoduleChange};

fn git(dir: &Path, args: &[&str]) -> String {
    let out = Command::new("git")
        .arg("-C")
        .arg(dir)
        .args(args)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "git {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn init(dir: &Path) {
    git(dir, &["init", "-q", "-b", "main"]);
    git(dir, &["config", "user.name", "T"]);
    git(dir, &["config", "user.email", "t@example.invalid"]);
    git(dir, &["config", "commit.gpgsign", "false"]);
    // Submodules from a local path, as a test needs them.
    git(dir, &["config", "protocol.file.allow", "always"]);
}

fn write(root: &Path, path: &str, text: &str) {
    let full = root.join(path);
    std::fs::create_dir_all(full.parent().unwrap()).unwrap();
    std::fs::write(full, text).unwrap();
}

/// A repository with `app.py` committed.
fn project() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    init(dir.path());
    write(dir.path(), "app.py", "print(1)\n");
    git(dir.path(), &["add", "-A"]);
    git(dir.path(), &["commit", "-qm", "init"]);
    dir
}

/// What a person would compare to see that nothing was touched.
fn repository_state(root: &Path) -> (String, String) {
    (
        git(root, &["status", "--porcelain=v2", "-uall", "--ignored"]),
        git(root, &["ls-files", "-s"]),
    )
}

fn status(root: &Path) -> Vec<ChangedFile> {
    Git { path_env: None }.status(root).unwrap().files
}

fn listed(files: &[ChangedFile]) -> Vec<(String, &'static str, bool)> {
    files
        .iter()
        .map(|f| (f.display_path(), f.word(), f.is_own()))
        .collect()
}

#[test]
fn nested_repositories_and_worktrees_are_not_the_projects_files() {
    let dir = project();
    let root = dir.path();
    // A vendored project with a repository of its own.
    write(root, "vendor/lib/x.py", "x = 1\n");
    init(&root.join("vendor/lib"));
    // A worktree made inside the project, and one where Claude Code makes them.
    git(root, &["worktree", "add", "-q", "wt"]);
    git(
        root,
        &[
            "worktree",
            "add",
            "-q",
            "-b",
            "agent-1",
            ".claude/worktrees/agent-1",
        ],
    );
    // Real new files beside them, one in a new directory.
    write(root, "notes/todo.py", "t = 1\n");
    write(root, "new.py", "n = 1\n");
    write(root, "app.py", "print(2)\n");
    let before = repository_state(root);

    let files = status(root);
    assert_eq!(
        listed(&files),
        [
            (".claude/worktrees/agent-1/".to_owned(), "worktree", false),
            ("app.py".to_owned(), "modified", true),
            ("new.py".to_owned(), "new", true),
            ("notes/todo.py".to_owned(), "new", true),
            ("vendor/lib/".to_owned(), "nested repository", false),
            ("wt/".to_owned(), "worktree", false),
        ]
    );
    assert_eq!(
        repository_state(root),
        before,
        "listing changed the repository"
    );

    // The same with every untracked file asked for by the repository's own setting.
    git(root, &["config", "status.showUntrackedFiles", "all"]);
    assert_eq!(listed(&status(root)), listed(&files));
}

#[test]
fn a_submodule_with_only_untracked_files_inside_is_no_change_to_commit() {
    let upstream = project();
    let dir = project();
    let root = dir.path();
    git(
        root,
        &[
            "-c",
            "protocol.file.allow=always",
            "submodule",
            "add",
            "-q",
            upstream.path().to_str().unwrap(),
            "sub",
        ],
    );
    git(root, &["commit", "-qm", "add sub"]);
    write(root, "sub/scratch.txt", "notes\n");
    let before = repository_state(root);
    let files = status(root);
    assert_eq!(files.len(), 1, "{files:?}");
    assert_eq!(
        files[0].kind,
        EntryKind::Submodule(SubmoduleChange {
            untracked_content: true,
            ..SubmoduleChange::default()
        })
    );
    assert!(!files[0].is_own());
    assert_eq!(
        files[0].describe(),
        "submodule sub (untracked files inside)"
    );
    assert_eq!(repository_state(root), before);

    // A commit inside it is a change this repository records.
    git(&root.join("sub"), &["config", "user.name", "T"]);
    git(
        &root.join("sub"),
        &["config", "user.email", "t@example.invalid"],
    );
    git(&root.join("sub"), &["add", "scratch.txt"]);
    git(&root.join("sub"), &["commit", "-qm", "inside"]);
    let files = status(root);
    assert!(files[0].is_own(), "{files:?}");
    assert_eq!(files[0].describe(), "submodule sub (new commits)");

    // The repository's own setting to ignore the submodule is honoured.
    git(root, &["config", "submodule.sub.ignore", "all"]);
    assert!(status(root).is_empty());
}

#[test]
fn show_untracked_files_no_is_honoured_and_nothing_is_touched() {
    let dir = project();
    let root = dir.path();
    git(root, &["config", "status.showUntrackedFiles", "no"]);
    // A home directory under version control for its dotfiles.
    write(root, ".ssh/id_rsa", "-----BEGIN KEY-----\n");
    write(root, "Downloads/tax.pdf", "%PDF\n");
    write(root, "app.py", "print(3)\n");
    let before = repository_state(root);
    let files = status(root);
    assert_eq!(
        files
            .iter()
            .map(|f| (f.path.as_str(), f.status))
            .collect::<Vec<_>>(),
        [("app.py", FileStatus::Modified)]
    );
    assert_eq!(
        repository_state(root),
        before,
        "listing changed the repository"
    );
}

#[test]
fn where_head_is_comes_with_the_same_call() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    init(root);
    write(root, "a.py", "a\n");
    let unborn = Git { path_env: None }.status(root).unwrap();
    assert_eq!(unborn.head.commit, None);
    assert_eq!(unborn.head.branch.as_deref(), Some("main"));
    assert_eq!(listed(&unborn.files), [("a.py".to_owned(), "new", true)]);
    git(root, &["add", "-A"]);
    git(root, &["commit", "-qm", "first"]);
    let born = Git { path_env: None }.status(root).unwrap();
    assert_eq!(
        born.head.commit.as_deref(),
        Some(git(root, &["rev-parse", "HEAD"]).trim())
    );
    assert!(born.files.is_empty());
}

#[test]
fn the_top_and_the_status_asked_at_once_are_those_asked_one_after_the_other() {
    let dir = project();
    let root = dir.path().canonicalize().unwrap();
    write(&root, "notes/todo.py", "t = 1\n");
    write(&root, "src/deep/x.py", "x = 1\n");
    write(&root, "app.py", "print(2)\n");
    let git = Git { path_env: None };
    let one_by_one = (git.repo_root(&root).unwrap(), git.status(&root).unwrap());
    // From the top and from a directory inside: paths are the top's either way.
    for dir in [root.clone(), root.join("src/deep")] {
        let (top, status) = git.repo_status(&dir).unwrap();
        assert_eq!(top, one_by_one.0);
        assert_eq!(status, one_by_one.1);
    }
    assert_eq!(
        listed(&one_by_one.1.files),
        [
            ("app.py".to_owned(), "modified", true),
            ("notes/todo.py".to_owned(), "new", true),
            ("src/deep/x.py".to_owned(), "new", true),
        ]
    );
    // Outside any repository: said as such, as `repo_root` says it.
    let outside = tempfile::tempdir().unwrap();
    assert!(matches!(
        git.repo_status(outside.path()),
        Err(cp_git::GitError::NotARepository(_))
    ));
}
