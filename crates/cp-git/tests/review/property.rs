//! The revert property: any edit of any bytes (CRLF and LF lines, bytes that are not UTF-8,
//! a bare `\r`, no final newline; NUL-free, so git diffs it as text), reverted hunk by hunk
//! as the panel does it (reading the diff again after each), gives back HEAD's bytes
//! exactly, and leaves the index as HEAD has it.

use proptest::prelude::*;

use crate::util::{G, file, files, git, repo, write};

/// A line's bytes: a small alphabet, so lines repeat and hunks must land at the right one.
fn line() -> impl Strategy<Value = Vec<u8>> {
    prop::collection::vec(
        prop_oneof![
            4 => prop::sample::select(b"ab ".to_vec()),
            1 => Just(b'\r'),
            1 => 0x80u8..=0xff,
            1 => (1u8..=0x7f).prop_filter("not a newline", |b| *b != b'\n'),
        ],
        0..5,
    )
}

/// Lines with their ending (`true`: CRLF).
fn lines() -> impl Strategy<Value = Vec<(Vec<u8>, bool)>> {
    prop::collection::vec((line(), any::<bool>()), 0..30)
}

fn bytes_of(lines: &[(Vec<u8>, bool)], final_newline: bool) -> Vec<u8> {
    let mut out = Vec::new();
    for (text, crlf) in lines {
        out.extend_from_slice(text);
        out.extend_from_slice(if *crlf { b"\r\n" } else { b"\n" });
    }
    if !final_newline && out.last() == Some(&b'\n') {
        out.pop();
    }
    out
}

/// What happens to one line of the old file.
#[derive(Debug, Clone)]
enum Op {
    Keep,
    Delete,
    Replace(Vec<u8>, bool),
    InsertAfter(Vec<u8>, bool),
    ToggleEnding,
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        8 => Just(Op::Keep),
        1 => Just(Op::Delete),
        1 => (line(), any::<bool>()).prop_map(|(l, c)| Op::Replace(l, c)),
        1 => (line(), any::<bool>()).prop_map(|(l, c)| Op::InsertAfter(l, c)),
        1 => Just(Op::ToggleEnding),
    ]
}

fn edited(
    old: &[(Vec<u8>, bool)],
    ops: &[Op],
    prepend: &[(Vec<u8>, bool)],
) -> Vec<(Vec<u8>, bool)> {
    let mut out = prepend.to_vec();
    for (i, line) in old.iter().enumerate() {
        match ops.get(i).unwrap_or(&Op::Keep) {
            Op::Keep => out.push(line.clone()),
            Op::Delete => {}
            Op::Replace(text, crlf) => out.push((text.clone(), *crlf)),
            Op::InsertAfter(text, crlf) => {
                out.push(line.clone());
                out.push((text.clone(), *crlf));
            }
            Op::ToggleEnding => out.push((line.0.clone(), !line.1)),
        }
    }
    out
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: 48,
        failure_persistence: None,
        ..ProptestConfig::default()
    })]

    #[test]
    fn any_edit_reverted_hunk_by_hunk_gives_back_head_s_bytes(
        old in lines(),
        old_final in any::<bool>(),
        ops in prop::collection::vec(op(), 30),
        prepend in prop::collection::vec((line(), any::<bool>()), 0..2),
        new_final in any::<bool>(),
        picks in prop::collection::vec(any::<prop::sample::Index>(), 64),
    ) {
        let head = bytes_of(&old, old_final);
        let dir = repo(&[("f.txt", &head)]);
        let root = dir.path();
        let clean = git(root, &["ls-files", "-s"]);
        write(root, "f.txt", &bytes_of(&edited(&old, &ops, &prepend), new_final));
        for pick in &picks {
            if files(root).is_empty() {
                break;
            }
            let f = file(root, "f.txt");
            let hunk = &f.hunks[pick.index(f.hunks.len())];
            G.revert_hunk(root, &f, hunk)
                .map_err(|e| TestCaseError::fail(format!("{e}\nhunk: {:?}", hunk.raw)))?;
        }
        prop_assert!(files(root).is_empty(), "hunks left after {} reverts", picks.len());
        prop_assert_eq!(std::fs::read(root.join("f.txt")).unwrap(), head);
        prop_assert_eq!(git(root, &["ls-files", "-s"]), clean);
    }
}
