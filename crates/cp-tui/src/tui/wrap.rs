//! Hard-wrapping styled lines to a width, so panels can anchor and scroll by visual rows.

use cp_base::ratatui::style::Style;
use cp_base::ratatui::text::{Line, Span};
use unicode_width::UnicodeWidthChar;

/// Splits each line into rows of at most `width` columns, breaking after spaces where it can
/// and inside words only when a word is wider than a row. Span styles are kept.
pub fn wrap_lines(lines: Vec<Line<'static>>, width: u16) -> Vec<Line<'static>> {
    let width = usize::from(width.max(1));
    let mut out = Vec::with_capacity(lines.len());
    for line in lines {
        let cells: Vec<(char, Style)> = line
            .spans
            .iter()
            .flat_map(|span| span.content.chars().map(move |c| (c, span.style)))
            .collect();
        let mut start = 0;
        loop {
            let (end, next) = row_end(&cells[start..], width);
            out.push(to_line(&cells[start..start + end]).style(line.style));
            if next == 0 || start + next >= cells.len() {
                break;
            }
            start += next;
        }
    }
    out
}

/// For the cells of one logical line, the end of the first row and where the next row starts.
fn row_end(cells: &[(char, Style)], width: usize) -> (usize, usize) {
    let mut used = 0;
    let mut last_space = None;
    for (i, (c, _)) in cells.iter().enumerate() {
        let w = c.width().unwrap_or(0);
        if used + w > width && i > 0 {
            return match last_space {
                // Break after the space; the space stays at the end of this row.
                Some(space) if space + 1 < i => (space + 1, space + 1),
                _ => (i, i),
            };
        }
        if *c == ' ' {
            last_space = Some(i);
        }
        used += w;
    }
    (cells.len(), 0)
}

fn to_line(cells: &[(char, Style)]) -> Line<'static> {
    let mut spans: Vec<Span<'static>> = Vec::new();
    for (c, style) in cells {
        match spans.last_mut() {
            Some(last) if last.style == *style => last.content.to_mut().push(*c),
            _ => spans.push(Span::styled(c.to_string(), *style)),
        }
    }
    Line::from(spans)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wraps_at_width_and_keeps_empty_lines() {
        let lines = vec![Line::from("abcdefgh"), Line::default(), Line::from("ab")];
        let rows: Vec<String> = wrap_lines(lines, 3)
            .iter()
            .map(ToString::to_string)
            .collect();
        assert_eq!(rows, vec!["abc", "def", "gh", "", "ab"]);
    }
}
