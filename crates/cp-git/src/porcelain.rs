//! Reading `git status --porcelain=v2 -z --branch` output, byte for byte: where HEAD is,
//! and a [`ChangedFile`] for each record, paths never quoted.

use crate::changed_file::{ChangedFile, EntryKind, FileStatus, SubmoduleChange};
use crate::head::Head;

/// Parses `git status --porcelain=v2 -z --branch`: the `# branch.oid` and `# branch.head`
/// headers, and the records `1 XY sub mH mI mW hH hI path`, `2 XY sub … Xscore path\0orig`,
/// `u XY sub … path` and `? path`. An untracked directory keeps its trailing `/`.
pub fn parse_porcelain_v2(out: &[u8]) -> (Head, Vec<ChangedFile>) {
    let mut head = Head {
        commit: None,
        branch: None,
    };
    // Records are read as bytes: only a path becomes text (a record of a tracked file is
    // mostly object names, and there may be tens of thousands of records).
    let mut records = nul_separated(out);
    let mut files = Vec::new();
    while let Some(record) = records.next() {
        if let Some(header) = record.strip_prefix(b"# ") {
            let header = String::from_utf8_lossy(header);
            if let Some(oid) = header.strip_prefix("branch.oid ") {
                head.commit = (oid != "(initial)").then(|| oid.to_owned());
            } else if let Some(branch) = header.strip_prefix("branch.head ") {
                head.branch = (branch != "(detached)").then(|| branch.to_owned());
            }
            continue;
        }
        let parsed = match record.first() {
            Some(b'?') => record
                .strip_prefix(b"? ")
                .map(|path| ChangedFile::new(text(path), FileStatus::Untracked)),
            Some(b'1') => tracked::<8>(record, None),
            Some(b'2') => {
                let from = records.next().map(text);
                tracked::<9>(record, from)
            }
            Some(b'u') => tracked::<10>(record, None),
            // `!` (ignored) is never asked for; anything else is not a record we know.
            _ => None,
        };
        if let Some(file) = parsed {
            files.push(file);
        } else {
            tracing::debug!(record = %String::from_utf8_lossy(record), "unexpected git status record");
        }
    }
    (head, files)
}

/// The non-empty records of NUL-separated output.
pub(crate) fn nul_separated(out: &[u8]) -> impl Iterator<Item = &[u8]> {
    let mut rest = out;
    std::iter::from_fn(move || {
        while !rest.is_empty() {
            let end = memchr::memchr(0, rest).unwrap_or(rest.len());
            let record = rest.get(..end).unwrap_or_default();
            rest = rest.get(end + 1..).unwrap_or_default();
            if !record.is_empty() {
                return Some(record);
            }
        }
        None
    })
}

/// The first `n` space-separated fields of `record`, and the rest (which may hold spaces).
fn fields<const N: usize>(record: &[u8]) -> Option<([&[u8]; N], &[u8])> {
    let mut fields: [&[u8]; N] = [&[]; N];
    let mut rest = record;
    for field in &mut fields {
        let end = memchr::memchr(b' ', rest)?;
        *field = rest.get(..end)?;
        rest = rest.get(end + 1..)?;
    }
    Some((fields, rest))
}

/// A path as git wrote it, as text (bytes that are not UTF-8 become U+FFFD).
pub(crate) fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// A tracked entry: `N` space-separated fields (the kind of record, `XY`, the submodule
/// state, then modes and object names), then the path (which may hold spaces).
fn tracked<const N: usize>(record: &[u8], renamed_from: Option<String>) -> Option<ChangedFile> {
    let (fields, path) = fields::<N>(record)?;
    let [kind_of_record, xy, sub, ..] = fields.as_slice() else {
        return None;
    };
    let (&index, &tree) = (xy.first()?, xy.get(1)?);
    let status = if *kind_of_record == b"u" {
        FileStatus::Conflicted
    } else {
        status_of(index, tree)
    };
    let kind = match sub {
        [b'S', commit, modified, untracked] => EntryKind::Submodule(SubmoduleChange {
            new_commits: *commit == b'C',
            modified_content: *modified == b'M',
            untracked_content: *untracked == b'U',
            staged: index != b'.',
        }),
        _ => EntryKind::File,
    };
    Some(ChangedFile {
        path: text(path),
        status,
        renamed_from,
        kind,
    })
}

fn status_of(x: u8, y: u8) -> FileStatus {
    match (x, y) {
        (b'U', _) | (_, b'U') | (b'A', b'A') | (b'D', b'D') => FileStatus::Conflicted,
        (b'R', _) | (_, b'R') => FileStatus::Renamed,
        (b'C', _) | (_, b'C') => FileStatus::Copied,
        (b'D', _) | (_, b'D') => FileStatus::Deleted,
        (b'A', _) => FileStatus::Added,
        (b'T', _) | (_, b'T') => FileStatus::TypeChanged,
        _ => FileStatus::Modified,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_every_record_kind_without_quoting() {
        let raw = b"# branch.oid 1111111111111111111111111111111111111111\0# branch.head main\0\
1 .M N... 100644 100644 100644 aaaa aaaa src/a b.rs\0\
2 R. N... 100644 100644 100644 aaaa aaaa R100 new name.py\0old name.py\0\
? d\xc3\xa9j\xc3\xa0.txt\0\
1 .D N... 100644 100644 000000 aaaa aaaa gone.rs\0\
1 A. N... 000000 100644 100644 0000 aaaa added.rs\0\
u UU N... 100644 100644 100644 100644 aaaa bbbb cccc both.rs\0\
1 MD N... 100644 100644 000000 aaaa bbbb half.rs\0\
1 .T N... 100644 100644 120000 aaaa aaaa link\0\
1 .M S..U 160000 160000 160000 cccc cccc lib/sub\0\
? vendor/\0";
        let (head, files) = parse_porcelain_v2(raw);
        assert_eq!(
            head,
            Head {
                commit: Some("1111111111111111111111111111111111111111".into()),
                branch: Some("main".into())
            }
        );
        let got: Vec<(&str, FileStatus, Option<&str>)> = files
            .iter()
            .map(|f| (f.path.as_str(), f.status, f.renamed_from.as_deref()))
            .collect();
        assert_eq!(
            got,
            [
                ("src/a b.rs", FileStatus::Modified, None),
                ("new name.py", FileStatus::Renamed, Some("old name.py")),
                ("déjà.txt", FileStatus::Untracked, None),
                ("gone.rs", FileStatus::Deleted, None),
                ("added.rs", FileStatus::Added, None),
                ("both.rs", FileStatus::Conflicted, None),
                ("half.rs", FileStatus::Deleted, None),
                ("link", FileStatus::TypeChanged, None),
                ("lib/sub", FileStatus::Modified, None),
                ("vendor/", FileStatus::Untracked, None),
            ]
        );
        let sub = &files[8];
        assert_eq!(
            sub.kind,
            EntryKind::Submodule(SubmoduleChange {
                untracked_content: true,
                ..SubmoduleChange::default()
            })
        );
        assert!(
            !sub.is_own(),
            "only untracked files inside: no commit here records them"
        );
        assert_eq!(sub.describe(), "submodule lib/sub (untracked files inside)");
        assert!(files[..8].iter().all(ChangedFile::is_own));
    }

    #[test]
    fn an_unborn_or_detached_head_and_malformed_records() {
        let (head, files) =
            parse_porcelain_v2(b"# branch.oid (initial)\0# branch.head (detached)\0garbage\0\0");
        assert_eq!(
            head,
            Head {
                commit: None,
                branch: None
            }
        );
        assert!(files.is_empty());
    }

    #[test]
    fn a_submodule_with_new_commits_is_a_change_of_this_repository() {
        let (_, files) = parse_porcelain_v2(b"1 .M SC.U 160000 160000 160000 a a sub\0");
        assert!(files[0].is_own());
        assert_eq!(
            files[0].describe(),
            "submodule sub (new commits, untracked files inside)"
        );
        let (_, staged) = parse_porcelain_v2(b"1 M. S..U 160000 160000 160000 a b sub\0");
        assert!(staged[0].is_own(), "the index records a change");
    }
}
