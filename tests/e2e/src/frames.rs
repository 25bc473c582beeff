//! Every screen a [`TuiSession`](crate::TuiSession) showed since the test last typed, so a
//! wait for text finds it even if it scrolled away (or a dialog covered it) before the test
//! looked: what was drawn is a fact, the screen at one moment is not.

use std::collections::VecDeque;

/// Screens kept, at most (each is a copy of the screen's text, a few KiB).
const KEPT: usize = 1024;

/// The screens drawn, in order, each with its number.
#[derive(Debug, Default)]
pub struct FrameLog {
    frames: VecDeque<(u64, String)>,
    /// The number the next screen gets.
    next: u64,
    /// The number of the first screen drawn after the test last typed.
    since_input: u64,
}

impl FrameLog {
    /// Records `screen` when it differs from the last one recorded.
    pub fn record(&mut self, screen: String) {
        if self.frames.back().is_some_and(|(_, last)| *last == screen) {
            return;
        }
        if self.frames.len() == KEPT {
            self.frames.pop_front();
        }
        self.frames.push_back((self.next, screen));
        self.next += 1;
    }

    /// The test typed: later waits look at the screens drawn from now on.
    pub fn mark_input(&mut self) {
        self.since_input = self.next;
    }

    /// The first screen drawn since the test last typed that contains `needle`.
    pub fn find_since_input(&self, needle: &str) -> Option<String> {
        self.frames
            .iter()
            .filter(|(n, _)| *n >= self.since_input)
            .find(|(_, screen)| screen.contains(needle))
            .map(|(_, screen)| screen.clone())
    }
}

/// Where the frames in `bytes` end: just after each cursor hide or show, which the TUI's
/// renderer writes once at the end of every frame it draws. A read from the terminal may
/// hold several frames; the screen is recorded after each, so text one frame showed and the
/// next scrolled away within the same read is still seen.
pub fn frame_ends(bytes: &[u8]) -> Vec<usize> {
    const MARKS: [&[u8]; 2] = [b"\x1b[?25l", b"\x1b[?25h"];
    let mut ends: Vec<usize> = (0..bytes.len())
        .filter_map(|at| {
            MARKS
                .iter()
                .find(|mark| bytes[at..].starts_with(mark))
                .map(|mark| at + mark.len())
        })
        .collect();
    ends.sort_unstable();
    ends
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn frames_end_after_each_cursor_hide_or_show() {
        let bytes = b"\x1b[1;1Hone\x1b[?25l\x1b[1;1Htwo\x1b[?25h\x1b[3;4Hthree";
        let ends = frame_ends(bytes);
        assert_eq!(ends.len(), 2);
        assert!(bytes[..ends[0]].ends_with(b"one\x1b[?25l"));
        assert!(bytes[..ends[1]].ends_with(b"two\x1b[?25h"));
        assert_eq!(frame_ends(b"no frame end here"), Vec::<usize>::new());
    }

    #[test]
    fn text_drawn_after_the_input_is_found_though_it_is_gone() {
        let mut log = FrameLog::default();
        log.record("old: Created a.txt".into());
        log.mark_input();
        assert_eq!(
            log.find_since_input("Created"),
            None,
            "drawn before the input"
        );
        log.record("Created b.txt".into());
        log.record("Created b.txt".into());
        log.record("scrolled on".into());
        assert_eq!(
            log.find_since_input("Created b.txt").as_deref(),
            Some("Created b.txt")
        );
        assert_eq!(log.frames.len(), 3, "an unchanged screen is kept once");
    }

    #[test]
    fn the_log_keeps_the_latest_screens() {
        let mut log = FrameLog::default();
        for i in 0..KEPT + 10 {
            log.record(format!("screen {i}"));
        }
        assert_eq!(log.frames.len(), KEPT);
        assert_eq!(log.find_since_input("screen 5\n"), None);
        assert!(
            log.find_since_input(&format!("screen {}", KEPT + 9))
                .is_some()
        );
    }
}
