//! What the stop gate suggests as a commit message for the uncommitted changes: the
//! categories its last report sorted them into, and the first files.

use std::fmt::Write as _;

use super::report::StopReport;

/// Files named in a suggested message before it says how many more.
const NAMED_FILES: usize = 3;

/// A one-line commit message for `files` (the uncommitted paths), from the categories of
/// `report` when it has them, e.g. `Update code, tests: src/lib.rs, tests/cli.rs`.
///
/// ```
/// assert_eq!(
///     cp_mod_checkpoint::suggest_commit_message(None, &["a.rs", "b.rs", "c.rs", "d.rs"]),
///     "Update a.rs, b.rs, c.rs and 1 more file"
/// );
/// ```
pub fn suggest_commit_message(report: Option<&StopReport>, files: &[&str]) -> String {
    let categories: Vec<&str> = report
        .map(|r| {
            r.categories
                .iter()
                .filter(|c| {
                    c.name != "other"
                        && c.files.iter().any(|f| files.iter().any(|p| f.ends_with(p)))
                })
                .map(|c| c.name.as_str())
                .collect()
        })
        .unwrap_or_default();
    let mut named = files
        .iter()
        .take(NAMED_FILES)
        .copied()
        .collect::<Vec<_>>()
        .join(", ");
    let more = files.len().saturating_sub(NAMED_FILES);
    if more > 0 {
        let _ = write!(
            named,
            " and {more} more file{}",
            if more == 1 { "" } else { "s" }
        );
    }
    if categories.is_empty() {
        format!("Update {named}")
    } else {
        format!("Update {}: {named}", categories.join(", "))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stop::report::{CategoryFiles, StopPhase};

    #[test]
    fn the_message_names_the_categories_of_the_files_and_the_first_files() {
        let mut report = StopReport::new(StopPhase::First);
        report.categories = vec![
            CategoryFiles {
                name: "code".into(),
                instruction: None,
                gated: true,
                files: vec!["src/cli.rs".into()],
            },
            CategoryFiles {
                name: "docs".into(),
                instruction: None,
                gated: false,
                files: vec!["README.md".into()],
            },
            CategoryFiles {
                name: "other".into(),
                instruction: None,
                gated: false,
                files: vec!["x.bin".into()],
            },
        ];
        assert_eq!(
            suggest_commit_message(Some(&report), &["README.md", "src/cli.rs"]),
            "Update code, docs: README.md, src/cli.rs"
        );
        // A category whose files were committed since is not named.
        assert_eq!(
            suggest_commit_message(Some(&report), &["README.md"]),
            "Update docs: README.md"
        );
    }
}
