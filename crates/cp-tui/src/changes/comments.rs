//! Review comments: a person's remark on one line of the diff, kept in the saved state, and
//! the one message that carries every open comment to the agent.

use std::fmt::Write as _;

use cp_git::{DiffLine, FileDiff, Hunk, LineKind};
use serde::{Deserialize, Serialize};

/// Hunk lines sent with a comment, the commented line among them.
pub const CONTEXT_LINES: usize = 6;

/// A comment on one line of the diff.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ReviewComment {
    /// The file, relative to the repository's root.
    pub path: String,
    /// The line's number: in the new file, or in the old one for a removed line.
    pub line: u32,
    /// Whether `line` counts in the old file (a removed line).
    #[serde(default)]
    pub old_side: bool,
    /// The commented line as it was (a comment whose line changed is dropped once sent).
    pub code: String,
    /// Up to [`CONTEXT_LINES`] hunk lines around it, each with its `+`/`-`/` ` marker.
    pub context: Vec<String>,
    pub text: String,
    /// Sent to the agent (kept, marked, until the line changes or the person clears it).
    #[serde(default)]
    pub sent: bool,
}

impl ReviewComment {
    /// A comment on line `index` of `hunk` of `file`; `None` on a line without a number.
    pub fn new(file: &FileDiff, hunk: &Hunk, index: usize, text: String) -> Option<Self> {
        let line = hunk.lines.get(index)?;
        let (number, old_side) = match line.kind {
            LineKind::Removed => (line.old?, true),
            _ => (line.new?, false),
        };
        // Three lines before it where the hunk has them, the rest after.
        let end = (index.saturating_sub(CONTEXT_LINES / 2) + CONTEXT_LINES).min(hunk.lines.len());
        let start = end.saturating_sub(CONTEXT_LINES);
        let context = hunk.lines[start..end]
            .iter()
            .map(|l| format!("{}{}", l.kind.marker(), l.text))
            .collect();
        Some(Self {
            path: file.path.clone(),
            line: number,
            old_side,
            code: line.text.clone(),
            context,
            text,
            sent: false,
        })
    }

    /// Whether this comment points at `line` of its file.
    pub fn is_on(&self, line: &DiffLine) -> bool {
        let number = if self.old_side {
            (line.kind == LineKind::Removed)
                .then_some(line.old)
                .flatten()
        } else {
            (line.kind != LineKind::Removed)
                .then_some(line.new)
                .flatten()
        };
        number == Some(self.line) && line.text == self.code
    }

    /// `path:line` (`path:-line` for a line of the old file).
    pub fn location(&self) -> String {
        if self.old_side {
            format!("{}:-{} (removed line)", self.path, self.line)
        } else {
            format!("{}:{}", self.path, self.line)
        }
    }
}

/// Drops the sent comments whose line is no longer in the diff as it was.
pub fn drop_stale(comments: &mut Vec<ReviewComment>, files: &[FileDiff]) -> bool {
    let before = comments.len();
    comments.retain(|c| {
        !c.sent
            || files
                .iter()
                .filter(|f| f.path == c.path)
                .any(|f| f.hunks.iter().flat_map(|h| &h.lines).any(|l| c.is_on(l)))
    });
    comments.len() != before
}

/// The one message that sends `comments` to the agent.
pub fn message<'a>(comments: impl IntoIterator<Item = &'a ReviewComment>) -> String {
    let comments: Vec<&ReviewComment> = comments.into_iter().collect();
    let mut out = format!(
        "Review comments on your uncommitted changes ({}). Address each one:\n",
        comments.len()
    );
    for comment in comments {
        let _ = writeln!(out, "\n{}", comment.location());
        out.push_str("```diff\n");
        for line in &comment.context {
            let _ = writeln!(out, "{line}");
        }
        out.push_str("```\n");
        let _ = writeln!(out, "Comment: {}", comment.text);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn file() -> FileDiff {
        let diff = "diff --git a/src/a.rs b/src/a.rs\n--- a/src/a.rs\n+++ b/src/a.rs\n@@ -1,9 +1,9 @@\n 1\n 2\n 3\n 4\n-5\n+five\n 6\n 7\n 8\n 9\n";
        cp_git::parse_diff(diff).remove(0)
    }

    #[test]
    fn a_comment_carries_its_location_at_most_six_lines_and_its_text() {
        let file = file();
        let hunk = &file.hunks[0];
        let comment = ReviewComment::new(&file, hunk, 5, "spell it as a digit".into()).unwrap();
        assert_eq!(comment.location(), "src/a.rs:5");
        assert_eq!(comment.context, [" 3", " 4", "-5", "+five", " 6", " 7"]);
        let text = message([&comment]);
        assert!(text.contains("src/a.rs:5\n```diff\n 3\n"), "{text}");
        assert!(text.contains("Comment: spell it as a digit"), "{text}");
        let removed = ReviewComment::new(&file, hunk, 4, "why?".into()).unwrap();
        assert_eq!(removed.location(), "src/a.rs:-5 (removed line)");
    }

    #[test]
    fn a_sent_comment_goes_when_its_line_changes_an_open_one_stays() {
        let file = file();
        let mut sent = ReviewComment::new(&file, &file.hunks[0], 5, "a".into()).unwrap();
        sent.sent = true;
        let open = ReviewComment::new(&file, &file.hunks[0], 5, "b".into()).unwrap();
        let mut comments = vec![sent, open];
        assert!(!drop_stale(&mut comments, std::slice::from_ref(&file)));
        assert_eq!(comments.len(), 2);
        assert!(drop_stale(&mut comments, &[]));
        assert_eq!(comments.len(), 1);
        assert!(!comments[0].sent);
    }
}
