//! Committing exactly the listed files; a refused commit (a hook exits 1, a conflict) leaves
//! the index as it was; git's prepared message during a merge.

use std::path::Path;

use cp_git::{CommitMessage, ReadOptions, ReviewError};

use crate::util::{G, files, git, numbered, repo, state, write};

fn typed(text: &str) -> CommitMessage {
    CommitMessage::Typed(text.to_owned())
}

fn hook(root: &Path, name: &str, body: &str) {
    let path = root.join(".git/hooks").join(name);
    std::fs::write(&path, format!("#!/bin/sh\n{body}\n")).unwrap();
    let mut perms = std::fs::metadata(&path).unwrap().permissions();
    std::os::unix::fs::PermissionsExt::set_mode(&mut perms, 0o755);
    std::fs::set_permissions(&path, perms).unwrap();
}

/// What the last commit holds: `mode path` per entry changed, from `git show --raw`.
fn committed(root: &Path) -> Vec<String> {
    git(
        root,
        &["show", "--format=", "--raw", "--no-renames", "HEAD"],
    )
    .lines()
    .map(|l| {
        let (meta, path) = l.split_once('\t').unwrap();
        let mode = meta.split(' ').nth(1).unwrap();
        format!("{mode} {path}")
    })
    .collect()
}

#[test]
fn the_commit_takes_exactly_the_listed_files_never_a_nested_repository() {
    let dir = repo(&[("a.txt", b"a\n")]);
    let root = dir.path();
    git(root, &["worktree", "add", "-q", "wt"]);
    write(root, "vendor/lib.c", b"int x;\n");
    git(&root.join("vendor"), &["init", "-q"]);
    git(&root.join("vendor"), &["add", "-A"]);
    git(&root.join("vendor"), &["commit", "-q", "-m", "vendored"]);
    write(root, ".context-pilot/.gitignore", b"state/\n");
    write(root, "a.txt", b"A\n");
    write(root, "src/new.rs", b"fn f() {}\n");
    let review = G.review(root, &ReadOptions::default()).unwrap();
    let listed: Vec<&str> = review.files.iter().map(|f| f.path.as_str()).collect();
    assert_eq!(listed, ["a.txt", "src/new.rs"]);
    let head = G
        .commit_files(root, &review.files, &typed("Add new.rs"))
        .unwrap();
    assert!(head.ends_with("Add new.rs"), "{head}");
    assert_eq!(committed(root), ["100644 a.txt", "100644 src/new.rs"]);
    assert!(!git(root, &["ls-files", "-s"]).contains("160000"));
    assert!(files(root).is_empty());
    let status = git(root, &["status", "--porcelain=v2"]);
    assert!(
        !status.contains("a.txt") && !status.contains("new.rs"),
        "{status}"
    );
}

#[test]
fn a_refused_commit_leaves_a_partly_staged_index_exactly_as_it_was() {
    let dir = repo(&[("a.txt", &numbered(30, "\n", |_| None)), ("b.txt", b"b\n")]);
    let root = dir.path();
    let edit = |i| match i {
        3 => Some("line three".to_owned()),
        25 => Some("line twenty-five".to_owned()),
        _ => None,
    };
    write(root, "a.txt", &numbered(30, "\n", edit));
    git(root, &["add", "a.txt"]);
    // Then more edits after staging: a.txt is partly staged.
    write(
        root,
        "a.txt",
        &numbered(30, "\n", |i| {
            edit(i).or_else(|| (i == 14).then(|| "line fourteen".to_owned()))
        }),
    );
    write(root, "b.txt", b"B\n");
    write(root, "new.txt", b"n\n");
    hook(root, "pre-commit", "echo 'lint says no' >&2\nexit 1");
    let before = state(root);
    let head = G.head(root);
    let err = G
        .commit_files(root, &files(root), &typed("Try"))
        .unwrap_err();
    assert!(err.to_string().contains("lint says no"), "{err}");
    assert_eq!(state(root), before);
    assert_eq!(G.head(root), head);
    assert!(
        std::fs::read_dir(root.join(".git")).unwrap().all(|e| !e
            .unwrap()
            .file_name()
            .to_string_lossy()
            .starts_with("cp-commit-index")),
        "the index built aside is removed"
    );
    assert!(matches!(
        G.commit_files(root, &files(root), &typed("  ")),
        Err(ReviewError::EmptyMessage)
    ));
}

#[test]
fn a_staged_file_that_is_not_listed_stays_staged_and_uncommitted() {
    let dir = repo(&[("a.txt", b"a\n"), ("b.txt", b"b\n")]);
    let root = dir.path();
    write(root, "a.txt", b"A\n");
    write(root, "b.txt", b"B\n");
    git(root, &["add", "b.txt"]);
    let only_a: Vec<_> = files(root)
        .into_iter()
        .filter(|f| f.path == "a.txt")
        .collect();
    G.commit_files(root, &only_a, &typed("Only a")).unwrap();
    assert_eq!(committed(root), ["100644 a.txt"]);
    assert_eq!(git(root, &["diff", "--cached", "--name-only"]), "b.txt\n");
}

/// A merge of branch `other` into the current one with `a.py` in conflict.
fn conflicting_merge() -> tempfile::TempDir {
    let dir = repo(&[("a.py", b"a\nb\n"), ("c.txt", b"c\n")]);
    let root = dir.path();
    git(root, &["checkout", "-q", "-b", "other"]);
    write(root, "a.py", b"a\nX\n");
    write(root, "c.txt", b"c from other\n");
    git(root, &["commit", "-q", "-am", "other"]);
    git(root, &["checkout", "-q", "-"]);
    write(root, "a.py", b"a\nY\n");
    git(root, &["commit", "-q", "-am", "mine"]);
    let out = std::process::Command::new("git")
        .args(["-C", root.to_str().unwrap(), "merge", "other"])
        .output()
        .unwrap();
    assert!(!out.status.success(), "the merge conflicts");
    dir
}

#[test]
fn unresolved_conflicts_are_never_committed_and_git_s_merge_message_is_offered() {
    let dir = conflicting_merge();
    let root = dir.path();
    let before = state(root);
    let message = std::fs::read(root.join(".git/MERGE_MSG")).unwrap();
    let err = G
        .commit_files(root, &files(root), &typed("Merge"))
        .unwrap_err();
    assert!(
        matches!(&err, ReviewError::Unmerged(p) if p == &["a.py"]),
        "{err}"
    );
    assert!(err.to_string().contains("a.py"), "{err}");
    assert_eq!(state(root), before);
    assert_eq!(std::fs::read(root.join(".git/MERGE_MSG")).unwrap(), message);

    let pending = G.pending_operation(root).unwrap();
    assert_eq!(pending.operation, "merge");
    assert_eq!(pending.subject(), Some("Merge branch 'other'"));
    // Resolved by hand (not added): the panel's commit takes git's message.
    write(root, "a.py", b"a\nXY\n");
    git(root, &["add", "a.py"]);
    G.commit_files(root, &files(root), &CommitMessage::Prepared)
        .unwrap();
    let parents = git(root, &["log", "-1", "--format=%P"]);
    assert_eq!(parents.split_whitespace().count(), 2, "a merge commit");
    let body = git(root, &["log", "-1", "--format=%B"]);
    assert_eq!(body.trim(), "Merge branch 'other'");
    assert_eq!(git(root, &["show", "HEAD:c.txt"]), "c from other\n");
    assert!(G.pending_operation(root).is_none());
    assert_eq!(git(root, &["status", "--porcelain=v2"]), "");
}

/// Sets the modification time of `path` to `to`, to the nanosecond (`utimensat`).
fn set_mtime(path: &Path, to: std::time::SystemTime) {
    let file = std::fs::OpenOptions::new().write(true).open(path).unwrap();
    file.set_times(std::fs::FileTimes::new().set_modified(to))
        .unwrap();
}

/// `a.py` and `b.py` committed; then `a.py` rewritten with the same size and, to the
/// nanosecond, the modification time git recorded, in the same second as the index (its
/// time set to the file's, as when the commit and the rewrite share a second). Git's stat
/// data then says "unchanged"; only the racy rule makes it read the bytes. `core.trustctime`
/// off: the change time, which no tool sets back, cannot tell the two writes apart either.
fn racy_rewrite() -> tempfile::TempDir {
    let dir = repo(&[("a.py", b"x = 1\n"), ("b.py", b"y = 1\n")]);
    let root = dir.path();
    git(root, &["config", "core.trustctime", "false"]);
    let past = std::time::SystemTime::now() - std::time::Duration::from_secs(100);
    set_mtime(&root.join("a.py"), past);
    git(root, &["update-index", "--refresh"]);
    set_mtime(&root.join(".git/index"), past);
    write(root, "a.py", b"x = 2\n");
    set_mtime(&root.join("a.py"), past);
    dir
}

#[test]
fn a_same_size_rewrite_in_the_index_s_second_is_committed() {
    let dir = racy_rewrite();
    let root = dir.path();
    write(root, "b.py", b"y = 22\n");
    let listed = files(root);
    let names: Vec<&str> = listed.iter().map(|f| f.path.as_str()).collect();
    assert_eq!(names, ["a.py", "b.py"]);
    G.commit_files(root, &listed, &typed("Update a.py, b.py"))
        .unwrap();
    assert_eq!(git(root, &["show", "HEAD:a.py"]), "x = 2\n");
    assert_eq!(git(root, &["show", "HEAD:b.py"]), "y = 22\n");
    assert_eq!(git(root, &["status", "--porcelain"]), "");
}

#[test]
fn git_s_nothing_to_commit_on_stdout_is_shown() {
    let dir = repo(&[("a.py", b"x = 1\n")]);
    let root = dir.path();
    write(root, "a.py", b"x = 2\n");
    let listed = files(root);
    // Put back before the commit: the listed change is gone.
    write(root, "a.py", b"x = 1\n");
    let err = G
        .commit_files(root, &listed, &typed("Nothing"))
        .unwrap_err();
    assert!(err.to_string().contains("nothing to commit"), "{err}");
}

#[test]
fn a_commit_that_lacks_a_listed_file_says_so_and_names_it() {
    let dir = repo(&[("a.py", b"x = 1\n"), ("b.py", b"y = 1\n")]);
    let root = dir.path();
    write(root, "a.py", b"x = 2\n");
    write(root, "b.py", b"y = 2\n");
    // A hook that takes a.py back out of what is committed.
    hook(root, "pre-commit", "git reset -q HEAD -- a.py");
    let err = G
        .commit_files(root, &files(root), &typed("Both"))
        .unwrap_err();
    assert!(
        matches!(&err, ReviewError::Incomplete { files, .. } if files == &["a.py"]),
        "{err}"
    );
    assert!(err.to_string().contains("without a.py"), "{err}");
    assert_eq!(git(root, &["show", "HEAD:b.py"]), "y = 2\n");
}
