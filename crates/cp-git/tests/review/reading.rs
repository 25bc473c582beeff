//! What a reading lists: tracked and untracked changes, conflicts marked, submodules for what
//! they are, nested repositories and worktrees never, untracked files not at all when the
//! repository says so, and a large untracked tree read once.

use std::path::Path;

use cp_git::{DiffKind, ReadOptions, Summary};

use crate::util::{G, file, files, git, numbered, paths, repo, write};

#[test]
fn the_diff_lists_tracked_and_untracked_changes_with_numbers() {
    let dir = repo(&[
        ("a.txt", &numbered(30, "\n", |_| None)),
        ("b.txt", b"keep\n"),
    ]);
    let root = dir.path();
    let edit = |i| match i {
        3 => Some("line three".to_owned()),
        25 => Some("line 25\nline 25b".to_owned()),
        _ => None,
    };
    write(root, "a.txt", &numbered(30, "\n", edit));
    std::fs::remove_file(root.join("b.txt")).unwrap();
    write(root, "new.rs", b"fn main() {}\nfn two() {}");
    write(root, "blob.bin", &[0, 1, 2]);
    let listed = files(root);
    let names: Vec<(&str, DiffKind, usize, usize)> = listed
        .iter()
        .map(|f| (f.path.as_str(), f.kind, f.added, f.removed))
        .collect();
    assert_eq!(
        names,
        [
            ("a.txt", DiffKind::Modified, 2, 1),
            ("b.txt", DiffKind::Deleted, 0, 1),
            ("blob.bin", DiffKind::New, 0, 0),
            ("new.rs", DiffKind::New, 2, 0),
        ]
    );
    assert_eq!(listed[0].hunks.len(), 2);
    assert_eq!(listed[2].summary, Some(Summary::Binary));
    assert!(listed[3].untracked);
    assert_eq!(listed[3].hunks[0].lines[1].new, Some(2));
    assert!(listed[3].hunks[0].lines[1].no_newline);
}

#[test]
fn a_repository_without_commits_shows_everything_as_new() {
    let dir = tempfile::tempdir().unwrap();
    git(dir.path(), &["init", "-q"]);
    write(dir.path(), "x.txt", b"1\n2\n");
    git(dir.path(), &["add", "x.txt"]);
    write(dir.path(), "y.txt", b"3\n");
    let kinds: Vec<(String, DiffKind, usize)> = files(dir.path())
        .into_iter()
        .map(|f| (f.path, f.kind, f.added))
        .collect();
    assert_eq!(
        kinds,
        [
            ("x.txt".to_owned(), DiffKind::New, 2),
            ("y.txt".to_owned(), DiffKind::New, 1)
        ]
    );
}

#[test]
fn a_diff_from_a_base_includes_what_was_committed_since() {
    let dir = repo(&[("b.txt", b"keep\n")]);
    let root = dir.path();
    let base = G.head(root).unwrap();
    write(root, "b.txt", b"changed\n");
    git(root, &["commit", "-q", "-am", "phase"]);
    write(root, "c.txt", b"new\n");
    assert_eq!(paths(root), ["c.txt"], "only c.txt is uncommitted");
    let listed = G.diff_from(root, Some(&base)).unwrap();
    let names: Vec<&str> = listed.iter().map(|f| f.path.as_str()).collect();
    assert_eq!(names, ["b.txt", "c.txt"]);
    G.revert_file_to(root, &listed[0], Some(&base)).unwrap();
    assert_eq!(std::fs::read(root.join("b.txt")).unwrap(), b"keep\n");
}

/// A repository whose `sub` is a submodule (its source already gone: the clone is enough).
pub fn with_submodule() -> tempfile::TempDir {
    let source = repo(&[("s.txt", b"s\n")]);
    let dir = repo(&[("top.txt", b"top\n")]);
    let root = dir.path();
    git(
        root,
        &[
            "submodule",
            "add",
            "-q",
            source.path().to_str().unwrap(),
            "sub",
        ],
    );
    git(root, &["commit", "-q", "-m", "sub"]);
    dir
}

/// A commit inside the submodule `sub`: the outer repository sees its recorded commit change.
pub fn commit_inside(root: &Path) {
    let sub = root.join("sub");
    write(&sub, "t.txt", b"t\n");
    git(&sub, &["add", "t.txt"]);
    git(&sub, &["commit", "-q", "-m", "t"]);
}

#[test]
fn a_submodule_is_listed_for_its_commit_and_not_for_what_is_only_inside_it() {
    let dir = with_submodule();
    let root = dir.path();
    write(&root.join("sub"), "untracked.txt", b"u\n");
    assert!(files(root).is_empty(), "{:?}", paths(root));
    commit_inside(root);
    let sub = file(root, "sub");
    assert!(sub.submodule);
    assert_eq!(sub.kind, DiffKind::Modified);
    assert!(sub.hunks[0].lines[1].text.starts_with("Subproject commit "));
}

#[test]
fn nested_repositories_and_worktrees_are_named_and_never_listed() {
    let dir = repo(&[("a.txt", b"a\n")]);
    let root = dir.path();
    git(root, &["worktree", "add", "-q", "wt"]);
    write(root, "vendor/lib.c", b"int x;\n");
    git(&root.join("vendor"), &["init", "-q"]);
    git(&root.join("vendor"), &["add", "-A"]);
    git(&root.join("vendor"), &["commit", "-q", "-m", "vendored"]);
    write(root, "new.txt", b"n\n");
    let review = G.review(root, &ReadOptions::default()).unwrap();
    let listed: Vec<&str> = review.files.iter().map(|f| f.path.as_str()).collect();
    assert_eq!(listed, ["new.txt"]);
    assert_eq!(review.nested, ["vendor", "wt"]);
}

#[test]
fn untracked_files_are_not_listed_when_the_repository_says_so() {
    let dir = repo(&[(".bashrc", b"alias l=ls\n")]);
    let root = dir.path();
    git(root, &["config", "status.showUntrackedFiles", "no"]);
    write(root, ".ssh/id_rsa", b"secret\n");
    write(root, ".bashrc", b"alias l='ls -l'\n");
    let review = G.review(root, &ReadOptions::default()).unwrap();
    let listed: Vec<&str> = review.files.iter().map(|f| f.path.as_str()).collect();
    assert_eq!(listed, [".bashrc"]);
    assert!(review.untracked_hidden);
}

#[test]
fn an_unchanged_untracked_tree_is_not_read_again_and_one_reading_reads_a_bounded_amount() {
    let dir = repo(&[("a.txt", b"a\n")]);
    let root = dir.path();
    for i in 0..2_000 {
        write(
            root,
            &format!("node_modules/p{}/f{i}.js", i % 40),
            b"module.exports = 1;\n",
        );
    }
    // Files written just now are racy (their stat data could stay through a next write) and
    // are read every time; these age past that first (not a wait for anything to happen).
    std::thread::sleep(cp_base::racy::SUBSECOND_SLACK * 2);
    let first = G.review(root, &ReadOptions::default()).unwrap();
    assert_eq!(first.files.len(), 2_000);
    assert_eq!(first.read_files, 2_000);
    let options = ReadOptions {
        previous: &first.files,
        ..ReadOptions::default()
    };
    let second = G.review(root, &options).unwrap();
    assert_eq!((second.read_files, second.read_bytes), (0, 0));
    assert_eq!(second.files, first.files);
    // One file changed: only it is read.
    write(root, "node_modules/p0/f0.js", b"module.exports = 22;\n");
    let options = ReadOptions {
        previous: &second.files,
        ..ReadOptions::default()
    };
    assert_eq!(G.review(root, &options).unwrap().read_files, 1);

    // More new bytes than one reading reads: the rest is listed unread, read by the next.
    let big = vec![b'x'; 900 * 1024];
    for i in 0..12 {
        write(root, &format!("big/{i:02}.txt"), &big);
    }
    let third = G.review(root, &ReadOptions::default()).unwrap();
    assert!(
        third.read_bytes <= cp_git::READ_PER_READING,
        "{}",
        third.read_bytes
    );
    let unread = |files: &[cp_git::FileDiff]| {
        files
            .iter()
            .filter(|f| f.summary == Some(Summary::Unread))
            .count()
    };
    assert!(unread(&third.files) > 0);
    let options = ReadOptions {
        previous: &third.files,
        ..ReadOptions::default()
    };
    let fourth = G.review(root, &options).unwrap();
    assert_eq!(unread(&fourth.files), 0);
}

#[test]
fn a_binary_file_asked_for_shows_its_sizes_and_the_changed_bytes() {
    let old: Vec<u8> = (0..=255u8).cycle().take(600).collect();
    let dir = repo(&[("logo.png", &old), ("doc.dat", b"one\0\ntwo\n")]);
    let root = dir.path();
    git(root, &["config", "core.attributesFile", "/dev/null"]);
    let mut new = old.clone();
    new[300] ^= 0xff;
    write(root, "logo.png", &new);
    write(root, "doc.dat", b"one\0\nTWO\n");
    let load = ["logo.png".to_owned(), "doc.dat".to_owned()];
    let options = ReadOptions {
        load: &load,
        ..ReadOptions::default()
    };
    let review = G.review(root, &options).unwrap();
    let logo = review.files.iter().find(|f| f.path == "logo.png").unwrap();
    assert_eq!(logo.summary, Some(Summary::Binary));
    let hunk = &logo.hunks[0];
    assert_eq!(
        hunk.header,
        "@@ 600 bytes → 600 bytes · bytes differ from offset 0x12c · hex @@"
    );
    assert!(
        hunk.lines[0]
            .text
            .starts_with("00000120  20 21 22 23 24 25 26 27  28 29 2a 2b 2c")
    );
    let doc = review.files.iter().find(|f| f.path == "doc.dat").unwrap();
    assert!(
        doc.hunks[0].header.contains("shown as text"),
        "{}",
        doc.hunks[0].header
    );
    let changed: Vec<&str> = doc.hunks[0]
        .lines
        .iter()
        .filter(|l| l.kind != cp_git::LineKind::Context)
        .map(|l| l.text.as_str())
        .collect();
    assert_eq!(changed, ["two", "TWO"]);
    // Reverting a binary file asked for still reverts it whole.
    G.revert_hunk(root, logo, &logo.hunks[0]).unwrap();
    assert_eq!(std::fs::read(root.join("logo.png")).unwrap(), old);
}
