//! Terminal output to plain text: drop escape sequences, apply `\r` and backspace the way a
//! terminal would show the final state of a line (progress bars collapse to their last frame).

/// Converts raw PTY output to plain text lines.
pub fn plain_text(bytes: &[u8]) -> String {
    let text = String::from_utf8_lossy(bytes);
    let mut out = String::with_capacity(text.len());
    let mut line: Vec<char> = Vec::new();
    let mut col = 0usize;
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\u{1b}' => skip_escape(&mut chars),
            '\r' => col = 0,
            '\n' => {
                out.extend(line.drain(..));
                out.push('\n');
                col = 0;
            }
            '\u{8}' => col = col.saturating_sub(1),
            '\t' => put(&mut line, &mut col, '\t'),
            c if c.is_control() => {}
            c => put(&mut line, &mut col, c),
        }
    }
    out.extend(line);
    out
}

/// The last `lines` lines of plain text (trailing blank lines ignored).
pub fn last_lines(bytes: &[u8], lines: usize) -> String {
    let text = plain_text(bytes);
    let trimmed = text.trim_end_matches(['\n', ' ']);
    let all: Vec<&str> = trimmed.lines().collect();
    let start = all.len().saturating_sub(lines);
    all[start..]
        .iter()
        .map(|l| l.trim_end())
        .collect::<Vec<_>>()
        .join("\n")
}

/// `text` in a fenced block for a tool result, or `(no output)` when it is empty.
pub(crate) fn fenced(text: &str) -> String {
    if text.is_empty() {
        "(no output)".to_owned()
    } else {
        format!("```\n{text}\n```")
    }
}

fn put(line: &mut Vec<char>, col: &mut usize, c: char) {
    if *col < line.len() {
        line[*col] = c;
    } else {
        line.push(c);
    }
    *col += 1;
}

/// Skips one escape sequence after ESC: CSI (`ESC [ … final`), OSC/DCS/APC/PM strings
/// (terminated by BEL or `ESC \`), or a two-character escape.
fn skip_escape(chars: &mut std::iter::Peekable<std::str::Chars<'_>>) {
    match chars.next() {
        Some('[') => {
            for c in chars.by_ref() {
                if ('\u{40}'..='\u{7e}').contains(&c) {
                    break;
                }
            }
        }
        Some(']' | 'P' | '_' | '^' | 'X') => {
            while let Some(c) = chars.next() {
                if c == '\u{7}' {
                    break;
                }
                if c == '\u{1b}' && chars.peek() == Some(&'\\') {
                    chars.next();
                    break;
                }
            }
        }
        Some('(' | ')' | '*' | '+' | '#' | '%') => {
            chars.next();
        }
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strips_colours_and_titles() {
        let raw = b"\x1b[1;31merror\x1b[0m: bad\r\n\x1b]0;title\x07ok\r\n";
        assert_eq!(plain_text(raw), "error: bad\nok\n");
    }

    #[test]
    fn carriage_return_keeps_last_frame() {
        let raw = b"progress 10%\rprogress 99%\rdone        \r\nnext";
        assert_eq!(last_lines(raw, 5), "done\nnext");
    }

    #[test]
    fn backspace_overwrites() {
        assert_eq!(plain_text(b"abc\x08\x08XY"), "aXY");
    }

    #[test]
    fn last_lines_counts_from_the_end() {
        let raw = b"1\n2\n3\n4\n\n";
        assert_eq!(last_lines(raw, 2), "3\n4");
        assert_eq!(last_lines(raw, 10), "1\n2\n3\n4");
        assert_eq!(last_lines(b"", 3), "");
    }
}
