//! Long file lists, bounded: the first [`LISTED_FILES`] files one a line, the rest counted by
//! directory (`notes/: 1,950 new`; by top-level directory when there are many). A turn that touched thousands of files would
//! otherwise spend tens of thousands of tokens, and the person's patience, on a list nobody
//! reads; the Checkpoint panel still shows every file.

use std::collections::BTreeMap;
use std::fmt::Write as _;

/// Files listed one a line before the rest are grouped.
pub const LISTED_FILES: usize = 50;
/// Directory lines of the grouped rest; the directories past these are summed in one line.
const LISTED_GROUPS: usize = 20;

/// One file of a list: its path (for grouping), the word for its change (`new`,
/// `modified`, …, for the counts) and its line as listed (read for the first
/// [`LISTED_FILES`] only: the others may leave it empty).
pub struct ListedFile {
    pub path: String,
    pub kind: &'static str,
    pub line: String,
}

/// Writes `files`, each line indented by `indent`: every file when there are at most
/// [`LISTED_FILES`], else that many and then the rest counted by directory.
pub fn write_bounded(out: &mut String, files: &[ListedFile], indent: &str) {
    for file in files.iter().take(LISTED_FILES) {
        let _ = writeln!(out, "{indent}{}", file.line);
    }
    let rest = files.get(LISTED_FILES..).unwrap_or_default();
    if rest.is_empty() {
        return;
    }
    let _ = writeln!(
        out,
        "{indent}… and {} more, by directory:",
        thousands(rest.len())
    );
    // By each file's own directory when that gives few enough lines, else by top level.
    let mut groups = group_by(rest, |path| path.rsplit_once('/').map(|(dir, _)| dir));
    if groups.len() > LISTED_GROUPS {
        groups = group_by(rest, |path| path.split_once('/').map(|(top, _)| top));
    }
    let shown = groups.len().min(LISTED_GROUPS);
    for (dir, (_, kinds)) in groups.iter().take(shown) {
        let counts: Vec<String> = kinds
            .iter()
            .map(|(kind, n)| format!("{} {kind}", thousands(*n)))
            .collect();
        let name = if *dir == "." {
            "(top level)".to_owned()
        } else {
            format!("{dir}/")
        };
        let _ = writeln!(out, "{indent}  {name}: {}", counts.join(", "));
    }
    if groups.len() > shown {
        let files: usize = groups.values().skip(shown).map(|(n, _)| n).sum();
        let _ = writeln!(
            out,
            "{indent}  {} more directories: {} files",
            groups.len() - shown,
            thousands(files)
        );
    }
}

/// Directory → (files, change word → count), in path order; `.` for the top level.
type Groups<'a> = BTreeMap<&'a str, (usize, BTreeMap<&'static str, usize>)>;

fn group_by<'a>(
    files: &'a [ListedFile],
    dir_of: impl Fn(&'a str) -> Option<&'a str>,
) -> Groups<'a> {
    let dir = |file: &'a ListedFile| dir_of(&file.path).unwrap_or(".");
    let mut groups = Groups::new();
    // A directory's files mostly come one after another (lists are sorted by path): each
    // run of them is looked up in the map once.
    let mut files = files.iter().peekable();
    while let Some(first) = files.next() {
        let name = dir(first);
        let group = groups.entry(name).or_default();
        for file in std::iter::once(first).chain(std::iter::from_fn(|| {
            files.next_if(|next| dir(next) == name)
        })) {
            group.0 += 1;
            *group.1.entry(file.kind).or_default() += 1;
        }
    }
    groups
}

/// `1950` → `1,950`.
pub fn thousands(n: usize) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn file(path: &str, kind: &'static str) -> ListedFile {
        ListedFile {
            path: path.into(),
            kind,
            line: format!("{kind} {path}"),
        }
    }

    #[test]
    fn short_lists_are_whole() {
        let mut out = String::new();
        write_bounded(&mut out, &[file("a.rs", "new")], "  ");
        assert_eq!(out, "  new a.rs\n");
    }

    #[test]
    fn the_rest_is_counted_by_directory() {
        let mut files: Vec<ListedFile> = (0..2000)
            .map(|i| file(&format!("notes/n{i:04}.md"), "new"))
            .collect();
        files.push(file("src/lib.rs", "modified"));
        files.push(file("README.md", "modified"));
        let mut out = String::new();
        write_bounded(&mut out, &files, "  ");
        let lines: Vec<&str> = out.lines().collect();
        assert_eq!(lines.len(), 50 + 1 + 3, "{out}");
        assert_eq!(lines[50], "  … and 1,952 more, by directory:");
        assert_eq!(lines[51], "    (top level): 1 modified");
        assert_eq!(lines[52], "    notes/: 1,950 new");
        assert_eq!(lines[53], "    src/: 1 modified");
    }

    #[test]
    fn many_directories_are_summed() {
        let files: Vec<ListedFile> = (0..100)
            .map(|i| file(&format!("d{i:03}/f.rs"), "new"))
            .collect();
        let mut out = String::new();
        write_bounded(&mut out, &files, "");
        assert!(out.ends_with("  30 more directories: 30 files\n"), "{out}");
        assert_eq!(thousands(1_234_567), "1,234,567");
        assert_eq!(thousands(12), "12");
    }

    #[test]
    fn a_directory_split_by_another_is_one_group() {
        // Sorted by path, `a/c/` comes between `a/`'s own files, and the unsorted tail
        // returns to `a/`: each directory is still counted once, all its files together.
        let mut files: Vec<ListedFile> = (0..LISTED_FILES)
            .map(|i| file(&format!("first/f{i:02}.rs"), "new"))
            .collect();
        for (path, kind) in [
            ("a/b.rs", "modified"),
            ("a/c/d.rs", "new"),
            ("a/e.rs", "new"),
            ("z.rs", "new"),
            ("a/f.rs", "deleted"),
        ] {
            files.push(file(path, kind));
        }
        let mut out = String::new();
        write_bounded(&mut out, &files, "");
        let rest: Vec<&str> = out.lines().skip(LISTED_FILES + 1).collect();
        assert_eq!(
            rest,
            [
                "  (top level): 1 new",
                "  a/: 1 deleted, 1 modified, 1 new",
                "  a/c/: 1 new",
            ],
            "{out}"
        );
    }
}
