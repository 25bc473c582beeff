//! The commit gate's texts: what the agent is told while gated files are
//! uncommitted, and what the person is told when the block limit lets the agent stop.

use std::fmt::Write;

use super::report::StopReport;
use cp_git::{LISTED_FILES, ListedFile, thousands, write_bounded};

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

/// The message that blocks a second stop while gated files are uncommitted.
pub(crate) fn gate_message(uncommitted_gated: &[String]) -> String {
    let mut out = format!(
        "Commit your changes before stopping. {} file(s) that must be committed are still \
         uncommitted:\n",
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
    fn lists_every_file() {
        let msg = gate_message(&["src/a.py".into(), "config.yml".into()]);
        assert!(msg.starts_with("Commit your changes before stopping."));
        assert!(msg.contains("\n  src/a.py\n  config.yml\n"));
    }
}
