//! The handoff turn of a Gemini CLI whose `--resume` is broken: a fresh session is told what
//! the stopped one did (its transcript, its tool history, the uncommitted diff) and asked
//! only for `Checkpoint_handoff`.

use std::fmt::Write as _;
use std::path::Path;
use std::process::{Command, Stdio};

use cp_orchestrate::ToolRecord;

use crate::transcript::Transcript;
use cp_base::text::fit_end;

/// Most of the diff a handoff prompt carries, in characters.
const DIFF_CHARS: usize = 16_000;
/// Most tool calls the history lists (the latest).
const HISTORY_LINES: usize = 40;

/// The prompt of the handoff session: who it speaks for, what that session did, then
/// `request` (the restart loop's handoff request).
pub(super) fn handoff_prompt(
    request: &str,
    transcript: &Transcript,
    history: &[ToolRecord],
    root: &Path,
) -> String {
    let mut out = String::from(
        "# Handoff for a stopped session\n\nAn agent session working in this project has just \
         been stopped because its context window is nearly full. You write its handoff: \
         below are its conversation as Context Pilot recorded it, its tool calls and the \
         uncommitted changes in git. Treat them as your own work. Do not change any file and \
         do not continue the task; only submit the handoff.\n\n## The stopped session's \
         conversation\n\n",
    );
    if transcript.is_empty() {
        out.push_str("(nothing was recorded)\n");
    } else {
        out.push_str(&transcript.to_markdown());
    }
    if !history.is_empty() {
        let skipped = history.len().saturating_sub(HISTORY_LINES);
        let _ = write!(out, "\n## Its tool calls ({}", history.len());
        if skipped > 0 {
            let _ = write!(out, "; the last {HISTORY_LINES}");
        }
        out.push_str(")\n\n");
        for record in &history[skipped..] {
            out.push_str(&record.list_item());
            out.push('\n');
        }
    }
    out.push_str("\n## Uncommitted changes (git)\n\n");
    out.push_str(&uncommitted(root));
    out.push_str("\n---\n\n");
    out.push_str(request);
    out
}

/// `git status --short` and `git diff HEAD`, shortened; what went wrong when git cannot say.
fn uncommitted(root: &Path) -> String {
    let status = git(root, &["status", "--short", "--untracked-files=all"]);
    let diff = git(root, &["diff", "HEAD", "--no-color", "--no-ext-diff"]);
    match (status, diff) {
        (Ok(status), Ok(_)) if status.trim().is_empty() => "(none)\n".to_owned(),
        (Ok(status), Ok(diff)) => format!(
            "```\n{}\n```\n\n```diff\n{}\n```\n",
            status.trim_end(),
            fit_end(diff.trim_end(), DIFF_CHARS)
        ),
        (Err(e), _) | (_, Err(e)) => format!("(git could not say: {e})\n"),
    }
}

fn git(root: &Path, args: &[&str]) -> Result<String, String> {
    let out = Command::new("git")
        .arg("-C")
        .arg(root)
        .args(args)
        .stdin(Stdio::null())
        .env("LC_ALL", "C")
        .output()
        .map_err(|e| format!("cannot run git: {e}"))?;
    if out.status.success() {
        Ok(String::from_utf8_lossy(&out.stdout).into_owned())
    } else {
        Err(format!(
            "`git {}` failed: {}",
            args.join(" "),
            String::from_utf8_lossy(&out.stderr).trim()
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn git_ok(root: &Path, args: &[&str]) {
        let out = Command::new("git")
            .arg("-C")
            .arg(root)
            .args(args)
            .env("GIT_AUTHOR_NAME", "t")
            .env("GIT_AUTHOR_EMAIL", "t@t")
            .env("GIT_COMMITTER_NAME", "t")
            .env("GIT_COMMITTER_EMAIL", "t@t")
            .output()
            .unwrap();
        assert!(out.status.success(), "{out:?}");
    }

    #[test]
    fn the_prompt_carries_the_conversation_the_tools_the_diff_and_then_the_request() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        git_ok(root, &["init", "-q"]);
        std::fs::write(root.join("app.sh"), "echo v1\n").unwrap();
        git_ok(root, &["add", "-A"]);
        git_ok(root, &["commit", "-qm", "init"]);
        std::fs::write(root.join("app.sh"), "echo v2\n").unwrap();
        std::fs::write(root.join("new.sh"), "echo new\n").unwrap();
        let mut transcript = Transcript::default();
        transcript.prompt("TASK: bump app.sh");
        transcript.tool_call("write_file", &serde_json::json!({"file_path": "app.sh"}));
        transcript.tool_result(false, "Wrote app.sh");
        let history = [ToolRecord::new("write_file", ["app.sh"])];
        let p = handoff_prompt("SUBMIT-NOW", &transcript, &history, root);
        let at = |needle: &str| p.find(needle).unwrap_or_else(|| panic!("{needle}: {p}"));
        assert!(at("TASK: bump app.sh") < at("- write_file `app.sh`"));
        assert!(at("?? new.sh") < at("+echo v2"));
        assert!(at("+echo v2") < at("SUBMIT-NOW"));
        assert!(p.ends_with("SUBMIT-NOW"));
    }
}
