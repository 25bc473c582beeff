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
        let columns: usize = line
            .spans
            .iter()
            .flat_map(|span| span.content.chars())
            .map(|c| c.width().unwrap_or(0))
            .sum();
        if columns <= width {
            // One row: the same line the cells below would give, without splitting it into
            // cells (a long code block has thousands of lines that fit).
            out.push(merged(line));
            continue;
        }
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

/// `line` as one row: empty spans dropped, neighbours of the same style joined (as
/// [`to_line`] builds rows from cells).
fn merged(line: Line<'static>) -> Line<'static> {
    let style = line.style;
    let mut spans: Vec<Span<'static>> = Vec::with_capacity(line.spans.len());
    for span in line.spans {
        if span.content.is_empty() {
            continue;
        }
        match spans.last_mut() {
            Some(last) if last.style == span.style => last.content.to_mut().push_str(&span.content),
            _ => spans.push(Span::styled(span.content, span.style)),
        }
    }
    Line::from(spans).style(style)
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
    fn a_line_that_fits_is_the_row_its_cells_would_give() {
        let red = Style::default().fg(cp_base::theme::FAILURE);
        let line = Line::from(vec![
            Span::raw(""),
            Span::styled("ab", red),
            Span::styled("c\td", red),
            Span::raw(" "),
            Span::raw("é漢"),
            Span::styled("", red),
        ])
        .style(Style::default().fg(cp_base::theme::INFO));
        let cells: Vec<(char, Style)> = line
            .spans
            .iter()
            .flat_map(|span| span.content.chars().map(move |c| (c, span.style)))
            .collect();
        let by_cells = to_line(&cells).style(line.style);
        assert_eq!(merged(line.clone()), by_cells);
        assert_eq!(wrap_lines(vec![line], 80), vec![by_cells]);
        assert_eq!(wrap_lines(vec![Line::default()], 80), vec![Line::default()]);
    }

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
