//! A top-level fenced code block still being written, read line by line so an answer that
//! streams into it lays out only its new lines (`conversation/answer_rows.rs`).
//!
//! Only the plain case is read: a fence at the start of a line (three or more backticks or
//! tildes) with a simple language name; anything else is left to the whole-text renderer.
//! Inside an open fence every line is code until a closing fence, and text that comes later
//! cannot change a line before it, so each complete code line can be laid out once.

use pulldown_cmark::{Event, Parser, Tag, TagEnd};

use super::writer::OPTIONS;

/// The opening line of a fenced code block.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Fence {
    /// The opening line, with its line feed.
    line: String,
    marker: u8,
    len: usize,
    /// The info string, as the renderer hands it to the highlighter.
    pub language: String,
}

impl Fence {
    /// The fence `text` starts with, when its first line is complete and plain; with the
    /// length of that line (its line feed included).
    pub fn opening(text: &str) -> Option<(Self, usize)> {
        let end = text.find('\n')?;
        let line = &text[..end];
        let marker = *line.as_bytes().first()?;
        if marker != b'`' && marker != b'~' {
            return None;
        }
        let len = line.bytes().take_while(|&b| b == marker).count();
        let info = line[len..].trim_matches([' ', '\t']);
        let plain_info = info
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b" _+-.#,".contains(&b));
        (len >= 3 && plain_info).then(|| {
            let fence = Self {
                line: text[..=end].to_owned(),
                marker,
                len,
                language: info.to_owned(),
            };
            (fence, end + 1)
        })
    }

    /// The code the renderer reads from `line`, the block's last line still being written
    /// (no line feed), or `None` when it reads none (the line is the closing fence, or blank
    /// so far). The block's lines before it do not change how it is read, so it is read
    /// after the opening line alone.
    pub fn partial_code(&self, line: &str) -> Option<String> {
        if line.is_empty() {
            return None;
        }
        let text = format!("{}{line}", self.line);
        let mut code = String::new();
        let mut inside = false;
        for event in Parser::new_ext(&text, OPTIONS) {
            match event {
                Event::Start(Tag::CodeBlock(_)) => inside = true,
                Event::End(TagEnd::CodeBlock) => inside = false,
                Event::Text(text) if inside => code.push_str(&text),
                _ => {}
            }
        }
        (!code.is_empty()).then_some(code)
    }

    /// Whether `line` (without its line feed; perhaps not complete yet) closes this fence:
    /// up to three spaces, at least as many markers, then only spaces or tabs.
    pub fn closed_by(&self, line: &str) -> bool {
        let rest = line.trim_start_matches(' ');
        if line.len() - rest.len() > 3 {
            return false;
        }
        let markers = rest.bytes().take_while(|&b| b == self.marker).count();
        markers >= self.len && rest[markers..].bytes().all(|b| b == b' ' || b == b'\t')
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_opening_fence_and_what_closes_it() {
        let (fence, len) = Fence::opening("```rust\nfn main() {}\n").unwrap_or_else(|| panic!());
        assert_eq!((fence.language.as_str(), len), ("rust", 8));
        assert!(fence.closed_by("```"));
        assert!(fence.closed_by("   ````  "));
        assert!(!fence.closed_by("    ```"));
        assert!(!fence.closed_by("``"));
        assert!(!fence.closed_by("```x"));
        assert!(!fence.closed_by("~~~"));
        assert_eq!(fence.partial_code("let x"), Some("let x".to_owned()));
        assert_eq!(fence.partial_code("``"), Some("``".to_owned()));
        assert_eq!(fence.partial_code("```"), None);
        // Not complete, not a fence, or an info string the renderer would rewrite.
        assert_eq!(Fence::opening("```rust"), None);
        assert_eq!(Fence::opening("``\n"), None);
        assert_eq!(Fence::opening("```a`b\n"), None);
        assert_eq!(Fence::opening("```a\\b\n"), None);
        assert_eq!(Fence::opening(" ```\n"), None);
    }
}
