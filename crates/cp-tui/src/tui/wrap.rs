//! Hard-wrapping styled lines to a width, so panels can anchor and scroll by visual rows.

use cp_base::ratatui::text::{Line, Span};
use unicode_width::UnicodeWidthChar;

/// Splits each line into rows of at most `width` columns, keeping span styles.
pub fn wrap_lines(lines: Vec<Line<'static>>, width: u16) -> Vec<Line<'static>> {
    let width = usize::from(width.max(1));
    let mut out = Vec::with_capacity(lines.len());
    for line in lines {
        let mut row: Vec<Span<'static>> = Vec::new();
        let mut used = 0;
        for span in line.spans {
            let mut piece = String::new();
            for c in span.content.chars() {
                let w = c.width().unwrap_or(0);
                if used + w > width && used > 0 {
                    if !piece.is_empty() {
                        row.push(Span::styled(std::mem::take(&mut piece), span.style));
                    }
                    out.push(Line::from(std::mem::take(&mut row)).style(line.style));
                    used = 0;
                }
                piece.push(c);
                used += w;
            }
            if !piece.is_empty() {
                row.push(Span::styled(piece, span.style));
            }
        }
        out.push(Line::from(row).style(line.style));
    }
    out
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
