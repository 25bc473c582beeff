//! Fitting text into a number of terminal columns: the one place that shortens a line for a
//! status bar, a panel cell or a headless progress line.
//!
//! Widths are display columns (a CJK character or an emoji takes two), not characters, and a
//! width of 0 gives an empty string.

use unicode_width::UnicodeWidthChar;

/// The ellipsis that marks what was cut, one column wide.
const ELLIPSIS: char = '…';

/// `text` in at most `columns` display columns: the start kept, `…` at the end when cut.
///
/// ```
/// use cp_base::text::fit_end;
/// assert_eq!(fit_end("cargo test --workspace", 10), "cargo tes…");
/// assert_eq!(fit_end("short", 10), "short");
/// assert_eq!(fit_end("日本語のテキスト", 7), "日本語…");
/// assert_eq!(fit_end("anything", 0), "");
/// ```
#[must_use]
pub fn fit_end(text: &str, columns: usize) -> String {
    if width(text) <= columns {
        return text.to_owned();
    }
    let Some(room) = columns.checked_sub(1) else {
        return String::new();
    };
    let mut out = String::new();
    let mut used = 0;
    for c in text.chars() {
        let w = c.width().unwrap_or(0);
        if used + w > room {
            break;
        }
        used += w;
        out.push(c);
    }
    out.push(ELLIPSIS);
    out
}

/// `text` in at most `columns` display columns: the end kept (the part of a long path that
/// tells projects apart), `…` at the start when cut.
///
/// ```
/// use cp_base::text::fit_start;
/// assert_eq!(fit_start("/home/me/work/project", 9), "…/project");
/// assert_eq!(fit_start("anything", 0), "");
/// ```
#[must_use]
pub fn fit_start(text: &str, columns: usize) -> String {
    if width(text) <= columns {
        return text.to_owned();
    }
    let Some(room) = columns.checked_sub(1) else {
        return String::new();
    };
    let mut kept = Vec::new();
    let mut used = 0;
    for c in text.chars().rev() {
        let w = c.width().unwrap_or(0);
        if used + w > room {
            break;
        }
        used += w;
        kept.push(c);
    }
    std::iter::once(ELLIPSIS)
        .chain(kept.into_iter().rev())
        .collect()
}

/// The display columns `text` takes (control characters count as none).
#[must_use]
pub fn width(text: &str) -> usize {
    text.chars().map(|c| c.width().unwrap_or(0)).sum()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_wide_character_that_does_not_fit_is_left_out_whole() {
        assert_eq!(fit_end("ab日本", 4), "ab…");
        assert_eq!(fit_start("日本ab", 4), "…ab");
        assert!(width(&fit_end("日本語日本語", 5)) <= 5);
    }

    #[test]
    fn width_one_leaves_only_the_ellipsis() {
        assert_eq!(fit_end("abc", 1), "…");
        assert_eq!(fit_start("abc", 1), "…");
        assert_eq!(fit_end("a", 1), "a");
    }
}
