//! What an agent wrote to stderr, kept short for an error message: its first lines, which
//! often say what went wrong (`Unknown arguments: session-id`) before a long usage text, and
//! its last lines, which say how it ended.

use std::collections::VecDeque;

/// Lines kept from the start.
const HEAD: usize = 3;
/// Lines kept from the end.
const TAIL: usize = 20;

/// The first [`HEAD`] and the last [`TAIL`] lines of a stream, and how many were between.
#[derive(Debug, Default)]
pub(crate) struct StderrExcerpt {
    head: Vec<String>,
    tail: VecDeque<String>,
    left_out: usize,
}

impl StderrExcerpt {
    pub(crate) fn push(&mut self, line: String) {
        if self.head.len() < HEAD {
            self.head.push(line);
            return;
        }
        if self.tail.len() == TAIL {
            self.tail.pop_front();
            self.left_out += 1;
        }
        self.tail.push_back(line);
    }

    /// The kept lines, with a marker where lines were left out.
    pub(crate) fn render(&self) -> String {
        let mut lines: Vec<String> = self.head.clone();
        if self.left_out > 0 {
            lines.push(format!("… ({} lines left out)", self.left_out));
        }
        lines.extend(self.tail.iter().cloned());
        lines.join("\n")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_short_stream_is_kept_whole() {
        let mut excerpt = StderrExcerpt::default();
        for line in ["one", "two"] {
            excerpt.push(line.to_owned());
        }
        assert_eq!(excerpt.render(), "one\ntwo");
    }

    #[test]
    fn the_first_lines_survive_a_long_usage_text() {
        let mut excerpt = StderrExcerpt::default();
        excerpt.push("Unknown arguments: session-id, sessionId".to_owned());
        for i in 0..100 {
            excerpt.push(format!("usage line {i}"));
        }
        let text = excerpt.render();
        assert!(text.starts_with("Unknown arguments: session-id"), "{text}");
        assert!(text.contains("… (78 lines left out)"), "{text}");
        assert!(text.ends_with("usage line 99"), "{text}");
        assert_eq!(text.lines().count(), HEAD + 1 + TAIL);
    }
}
