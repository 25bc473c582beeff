//! The selected file's diff as rows, laid out once each time the file, its fold, its load
//! or its comments change (never per frame); a frame draws only the rows it shows.

use cp_git::FileDiff;

use super::comments::ReviewComment;

/// One row of the diff pane.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Row {
    /// A hunk's `@@` header (index of the hunk).
    Header(usize),
    /// A hunk line: hunk, line.
    Line(usize, usize),
    /// A comment under its line (index into the comments).
    Comment(usize),
    /// The file is folded: one line says so.
    Folded,
    /// The diff is summarised (binary, too long, too large) until loaded.
    Summary,
    /// Nothing to show (an empty new file, a pure rename).
    Empty,
}

/// The rows of `file`'s diff.
pub fn lay_out(
    file: &FileDiff,
    folded: bool,
    loaded: bool,
    comments: &[ReviewComment],
) -> Vec<Row> {
    if folded {
        return vec![Row::Folded];
    }
    if file.summary.is_some() && (!loaded || file.hunks.is_empty()) {
        return vec![Row::Summary];
    }
    let mine: Vec<(usize, &ReviewComment)> = comments
        .iter()
        .enumerate()
        .filter(|(_, c)| c.path == file.path)
        .collect();
    let mut rows = Vec::with_capacity(file.line_count() + file.hunks.len());
    for (h, hunk) in file.hunks.iter().enumerate() {
        rows.push(Row::Header(h));
        for (l, line) in hunk.lines.iter().enumerate() {
            rows.push(Row::Line(h, l));
            if !mine.is_empty() {
                rows.extend(
                    mine.iter()
                        .filter(|(_, c)| c.is_on(line))
                        .map(|(i, _)| Row::Comment(*i)),
                );
            }
        }
    }
    if rows.is_empty() {
        rows.push(Row::Empty);
    }
    rows
}
