//! Tabs in text shown on screen. A terminal buffer has no tab stops: ratatui gives a `\t`
//! no width, so `     1\tcode` (a `File_read` line) would draw as `     1code`. Expanding
//! the tabs to spaces keeps the text's columns as a terminal would show them.

use unicode_width::UnicodeWidthChar;

/// Columns between tab stops, as in a terminal.
const TAB_STOP: usize = 8;

/// `line` with every tab replaced by the spaces up to the next tab stop, counting columns
/// from the start of `line` (wide characters count their display width).
pub fn expand_tabs(line: &str) -> String {
    if !line.contains('\t') {
        return line.to_owned();
    }
    let mut out = String::with_capacity(line.len() + TAB_STOP);
    let mut column = 0;
    for c in line.chars() {
        if c == '\t' {
            let spaces = TAB_STOP - column % TAB_STOP;
            out.extend(std::iter::repeat_n(' ', spaces));
            column += spaces;
        } else {
            out.push(c);
            column += c.width().unwrap_or(0);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::expand_tabs;

    #[test]
    fn tabs_reach_the_next_tab_stop() {
        // `File_read`'s line number field is 6 wide; the tab brings the code to column 8.
        assert_eq!(expand_tabs("     1\tdef f():"), "     1  def f():");
        assert_eq!(expand_tabs("    12\t\tx"), "    12          x");
        assert_eq!(expand_tabs("\tx"), "        x");
        assert_eq!(expand_tabs("日本\tx"), "日本    x");
        assert_eq!(expand_tabs("no tabs"), "no tabs");
    }
}
