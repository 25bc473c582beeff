//! The commit gate's texts: what the agent is told while gated files are
//! uncommitted, and what the person is told when the block limit lets the agent stop.

use std::fmt::Write;

use super::report::StopReport;
use cp_git::{FileStatus, LISTED_FILES, ListedFile, thousands, write_bounded};

/// Uncommitted paths as a bounded list's entries.
fn uncommitted(paths: &[String]) -> Vec<ListedFile> {
    paths
        .iter()
        .map(|path| ListedFile {
            path: path.clone(),
            kind: "uncommitted",
            line: path.clone(),
        })
        .collect()
}

/// The message that blocks a second stop while gated files are uncommitted. During a merge
/// with unresolved conflicts, resolving comes first: a commit cannot be made until then.
pub(crate) fn gate_message(report: &StopReport) -> String {
    let uncommitted_gated = &report.uncommitted_gated;
    let conflicted: Vec<String> = report
        .files
        .iter()
        .filter(|f| f.file.status == FileStatus::Conflicted)
        .map(|f| f.file.display_path())
        .collect();
    let mut out = String::new();
    if !conflicted.is_empty() {
        let _ = writeln!(
            out,
            "Resolve the merge conflicts before stopping: {} file(s) still have unresolved \
             conflicts:",
            conflicted.len()
        );
        write_bounded(&mut out, &uncommitted(&conflicted), "  ");
        out.push_str(
            "Edit each to settle its conflict markers and `git add` it (or abort the merge); \
             then commit (during a merge `git commit --no-edit` keeps git's prepared \
             message) and stop again.\n",
        );
        return out;
    }
    let _ = writeln!(
        out,
        "Commit your changes before stopping. {} file(s) that must be committed are still \
         uncommitted:",
        uncommitted_gated.len()
    );
    write_bounded(&mut out, &uncommitted(uncommitted_gated), "  ");
    out.push_str("Commit them (or revert what should not be kept), then stop again.\n");
    out
}

/// The notice for the person when the agent may stop after `blocks` blocks in a row:
/// the uncommitted files and the last test result.
pub(crate) fn limit_notice(report: &StopReport, blocks: u32) -> String {
    let mut out = format!(
        "Context Pilot: the agent stopped with work left after the stop gate blocked it \
         {blocks} time(s) in a row (checkpoint.max_blocks = {}).\n",
        report.max_blocks
    );
    if report.uncommitted_gated.is_empty() {
        out.push_str("Uncommitted files: none that must be committed.\n");
    } else {
        let files = &report.uncommitted_gated;
        let _ = write!(out, "Uncommitted files ({}):", thousands(files.len()));
        if files.len() <= LISTED_FILES {
            let _ = writeln!(out, " {}", files.join(", "));
        } else {
            out.push('\n');
            write_bounded(&mut out, &uncommitted(files), "  ");
        }
    }
    if report.tests.is_empty() {
        out.push_str("Last test run: none.\n");
    }
    for tests in &report.tests {
        let mut line = String::new();
        super::message::test_section(&mut line, tests);
        let first = line.lines().next().unwrap_or_default();
        let _ = writeln!(out, "Last test run: {first}");
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lists_every_file_and_during_a_conflict_says_to_resolve_first() {
        use crate::stop::categorize::CategorizedFile;
        use cp_git::ChangedFile;
        let file = |path: &str, status| CategorizedFile {
            file: ChangedFile::new(path, status),
            categories: Vec::new(),
            gated: true,
            code: true,
            triggers_tests: false,
        };
        let mut report = StopReport::new(super::super::report::StopPhase::Second);
        report.files = vec![
            file("src/a.py", FileStatus::Modified),
            file("config.yml", FileStatus::Added),
        ];
        report.uncommitted_gated = vec!["src/a.py".into(), "config.yml".into()];
        let msg = gate_message(&report);
        assert!(msg.starts_with("Commit your changes before stopping."));
        assert!(msg.contains("\n  src/a.py\n  config.yml\n"));

        report.files[0].file.status = FileStatus::Conflicted;
        let msg = gate_message(&report);
        assert!(
            msg.starts_with("Resolve the merge conflicts before stopping"),
            "{msg}"
        );
        assert!(msg.contains("\n  src/a.py\n"), "{msg}");
        assert!(!msg.contains("Commit them"), "{msg}");
    }
}
