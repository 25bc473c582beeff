//! Reverting hunks and files gives back HEAD's bytes, names the right file, and refuses what
//! it cannot do (a conflict, a submodule) without changing anything.

use std::os::unix::ffi::OsStrExt as _;

use cp_git::{DiffKind, ReviewError};

use crate::util::{G, file, files, git, numbered, repo, state, write};

#[test]
fn reverting_one_hunk_leaves_the_other_and_a_stale_hunk_changes_nothing() {
    let dir = repo(&[("a.txt", &numbered(30, "\n", |_| None))]);
    let root = dir.path();
    let edit = |i| match i {
        3 => Some("line three".to_owned()),
        25 => Some("line twenty-five".to_owned()),
        _ => None,
    };
    write(root, "a.txt", &numbered(30, "\n", edit));
    let a = file(root, "a.txt");
    G.revert_hunk(root, &a, &a.hunks[1]).unwrap();
    let now = std::fs::read(root.join("a.txt")).unwrap();
    let only_first = numbered(30, "\n", |i| (i == 3).then(|| "line three".to_owned()));
    assert_eq!(now, only_first);
    // The same hunk again no longer applies: git says so, and nothing changes.
    let err = G.revert_hunk(root, &a, &a.hunks[1]).unwrap_err();
    assert!(matches!(err, ReviewError::Git { .. }), "{err}");
    assert_eq!(std::fs::read(root.join("a.txt")).unwrap(), now);
}

#[test]
fn reverting_files_restores_or_deletes_them() {
    let dir = repo(&[("b.txt", b"keep\n")]);
    let root = dir.path();
    std::fs::remove_file(root.join("b.txt")).unwrap();
    write(root, "new.txt", b"x\n");
    for f in files(root) {
        G.revert_file(root, &f).unwrap();
    }
    assert_eq!(std::fs::read(root.join("b.txt")).unwrap(), b"keep\n");
    assert!(!root.join("new.txt").exists());
    assert!(files(root).is_empty());
}

/// Reverts every hunk of `path`, reading the diff again after each, as the panel does.
fn revert_all_hunks(root: &std::path::Path, path: &str) {
    loop {
        let Some(f) = files(root).into_iter().find(|f| f.path == path) else {
            return;
        };
        G.revert_hunk(root, &f, &f.hunks[0]).unwrap();
    }
}

#[test]
fn a_latin1_line_comes_back_byte_for_byte() {
    let head = b"first\ncaf\xe9 au lait\nlast\n";
    let dir = repo(&[("menu.txt", head)]);
    let root = dir.path();
    write(root, "menu.txt", b"first\ncaf\xe9 cr\xe8me\nlast\n");
    revert_all_hunks(root, "menu.txt");
    assert_eq!(std::fs::read(root.join("menu.txt")).unwrap(), head);
}

#[test]
fn a_crlf_file_rewritten_with_lf_gets_its_crlf_back() {
    let head = numbered(10, "\r\n", |_| None);
    let dir = repo(&[("win.txt", &head)]);
    let root = dir.path();
    write(root, "win.txt", &numbered(10, "\n", |_| None));
    assert_eq!(
        (file(root, "win.txt").added, file(root, "win.txt").removed),
        (10, 10)
    );
    revert_all_hunks(root, "win.txt");
    assert_eq!(std::fs::read(root.join("win.txt")).unwrap(), head);
    assert!(files(root).is_empty());
}

#[test]
fn a_crlf_file_with_some_lines_changed_reverts_hunk_by_hunk() {
    let head = numbered(30, "\r\n", |_| None);
    let dir = repo(&[("win.txt", &head)]);
    let root = dir.path();
    let edit = |i| match i {
        2 => Some("line two".to_owned()),
        20 => Some("line twenty".to_owned()),
        _ => None,
    };
    write(root, "win.txt", &numbered(30, "\r\n", edit));
    let f = file(root, "win.txt");
    assert_eq!(f.hunks.len(), 2);
    assert_eq!(f.hunks[0].lines[1].text, "line 2", "shown without the \\r");
    G.revert_hunk(root, &f, &f.hunks[1]).unwrap();
    G.revert_hunk(
        root,
        &file(root, "win.txt"),
        &file(root, "win.txt").hunks[0],
    )
    .unwrap();
    assert_eq!(std::fs::read(root.join("win.txt")).unwrap(), head);
}

#[test]
fn a_last_line_without_newline_comes_back() {
    let head = b"one\ntwo\nthree";
    let dir = repo(&[("end.txt", head)]);
    let root = dir.path();
    write(root, "end.txt", b"one\ntwo\nTHREE\n");
    revert_all_hunks(root, "end.txt");
    assert_eq!(std::fs::read(root.join("end.txt")).unwrap(), head);
}

#[test]
fn a_name_with_a_tab_reverts_that_file_and_not_its_neighbour() {
    let dir = repo(&[("tab\tname.txt", b"one\ntwo\n"), ("tab", b"neighbour\n")]);
    let root = dir.path();
    write(root, "tab\tname.txt", b"one\nTWO\n");
    let before = state(root);
    let f = file(root, "tab\tname.txt");
    G.revert_hunk(root, &f, &f.hunks[0]).unwrap();
    assert_eq!(
        std::fs::read(root.join("tab\tname.txt")).unwrap(),
        b"one\ntwo\n"
    );
    assert_eq!(std::fs::read(root.join("tab")).unwrap(), b"neighbour\n");
    assert!(files(root).is_empty(), "{before:?}");
}

#[test]
fn a_name_like_a_glob_reverts_only_itself() {
    let dir = repo(&[("a*.txt", b"star\n"), ("ab.txt", b"plain\n")]);
    let root = dir.path();
    write(root, "a*.txt", b"STAR\n");
    write(root, "ab.txt", b"PLAIN\n");
    G.revert_file(root, &file(root, "a*.txt")).unwrap();
    assert_eq!(std::fs::read(root.join("a*.txt")).unwrap(), b"star\n");
    assert_eq!(std::fs::read(root.join("ab.txt")).unwrap(), b"PLAIN\n");
}

#[test]
fn a_file_that_became_a_symlink_is_listed_once_and_comes_back_as_the_file() {
    let dir = repo(&[("tc.txt", b"hello\n"), ("a.py", b"print()\n")]);
    let root = dir.path();
    let clean = state(root);
    std::fs::remove_file(root.join("tc.txt")).unwrap();
    std::os::unix::fs::symlink("a.py", root.join("tc.txt")).unwrap();
    let listed = files(root);
    assert_eq!(listed.len(), 1, "{listed:?}");
    assert_eq!(listed[0].kind, DiffKind::TypeChanged);
    G.revert_file(root, &listed[0]).unwrap();
    let meta = std::fs::symlink_metadata(root.join("tc.txt")).unwrap();
    assert!(meta.is_file(), "{meta:?}");
    assert_eq!(std::fs::read(root.join("tc.txt")).unwrap(), b"hello\n");
    assert_eq!(state(root), clean);
}

#[test]
fn an_untracked_name_that_is_not_utf8_is_deleted() {
    let dir = repo(&[("keep.txt", b"k\n")]);
    let root = dir.path();
    let name = std::ffi::OsStr::from_bytes(b"caf\xe9.txt");
    std::fs::write(root.join(name), b"new\n").unwrap();
    let f = file(root, "caf\u{fffd}.txt");
    G.revert_file(root, &f).unwrap();
    assert!(!root.join(name).exists());
    assert!(files(root).is_empty());
}

#[test]
fn reverting_a_staged_hunk_unstages_it_too() {
    let head = numbered(30, "\n", |_| None);
    let dir = repo(&[("a.txt", &head)]);
    let root = dir.path();
    let clean = state(root);
    let edit = |i| match i {
        3 => Some("line three".to_owned()),
        25 => Some("line twenty-five".to_owned()),
        _ => None,
    };
    write(root, "a.txt", &numbered(30, "\n", edit));
    git(root, &["add", "a.txt"]);
    for _ in 0..2 {
        let f = file(root, "a.txt");
        G.revert_hunk(root, &f, &f.hunks[0]).unwrap();
    }
    assert_eq!(std::fs::read(root.join("a.txt")).unwrap(), head);
    assert_eq!(state(root), clean, "the index lost the hunks too");
}

#[test]
fn a_conflicted_file_and_a_submodule_are_not_reverted_and_say_why() {
    let dir = repo(&[("a.py", b"a\nb\n")]);
    let root = dir.path();
    git(root, &["checkout", "-q", "-b", "other"]);
    write(root, "a.py", b"a\nX\n");
    git(root, &["commit", "-q", "-am", "other"]);
    git(root, &["checkout", "-q", "-"]);
    write(root, "a.py", b"a\nY\n");
    git(root, &["commit", "-q", "-am", "mine"]);
    let _ = std::process::Command::new("git")
        .args(["-C", root.to_str().unwrap(), "merge", "other"])
        .output()
        .unwrap();
    let before = state(root);
    let a = file(root, "a.py");
    assert!(a.conflicted);
    let err = G.revert_file(root, &a).unwrap_err();
    assert!(matches!(err, ReviewError::Conflicted(_)), "{err}");
    let err = G.revert_hunk(root, &a, &a.hunks[0]).unwrap_err();
    assert!(
        err.to_string().contains("unresolved merge conflict"),
        "{err}"
    );
    assert_eq!(state(root), before);

    let sub = crate::reading::with_submodule();
    let root = sub.path();
    crate::reading::commit_inside(root);
    let before = state(root);
    let s = file(root, "sub");
    assert!(s.submodule, "{s:?}");
    let err = G.revert_file(root, &s).unwrap_err();
    assert!(err.to_string().contains("sub is a submodule"), "{err}");
    assert!(G.revert_hunk(root, &s, &s.hunks[0]).is_err());
    assert_eq!(state(root), before);
}

#[test]
fn with_autocrlf_a_hunk_reverts_to_the_checked_out_bytes() {
    let dir = repo(&[]);
    let root = dir.path();
    git(root, &["config", "core.autocrlf", "true"]);
    write(root, "w.txt", &numbered(30, "\r\n", |_| None));
    git(root, &["add", "w.txt"]);
    git(root, &["commit", "-q", "-m", "crlf"]);
    let head = std::fs::read(root.join("w.txt")).unwrap();
    let edit = |i| (i == 12).then(|| "line twelve".to_owned());
    write(root, "w.txt", &numbered(30, "\r\n", edit));
    let f = file(root, "w.txt");
    G.revert_hunk(root, &f, &f.hunks[0]).unwrap();
    assert_eq!(std::fs::read(root.join("w.txt")).unwrap(), head);
    assert!(files(root).is_empty());
}

/// With repeated lines, the reverse of the work tree's hunk also applies to an index that
/// never held it (at another offset): the index must stay as it was.
#[test]
fn reverting_an_unstaged_hunk_of_repeated_lines_leaves_the_index_alone() {
    let head = b"a\na\nb\nb\na\nb\na\na\nb\na\nb\n";
    let dir = repo(&[("f.txt", head)]);
    let root = dir.path();
    let clean = state(root);
    write(root, "f.txt", b"a\na\nb\nb\na\nb\na\na\nb\nb\na\nb\n");
    let f = file(root, "f.txt");
    G.revert_hunk(root, &f, &f.hunks[0]).unwrap();
    assert_eq!(std::fs::read(root.join("f.txt")).unwrap(), head);
    assert_eq!(state(root), clean, "the index was changed");
}
