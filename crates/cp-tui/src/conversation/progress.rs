//! Live progress of blocking work: a spinner, what runs, and for how long, e.g.
//! `⠹ running File_edit · 8s`; the conversation appends what the call waits for, e.g.
//! `· callback pytest`, from the modules' published activity. A pure function of the name,
//! the start and the current time, so it is drawn from a snapshot like everything else; the
//! event loop redraws each second while something runs.

use cp_base::theme;
use std::time::Instant;

use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};

/// Spinner frames; one per 100 ms of elapsed time.
const FRAMES: [&str; 10] = ["⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"];

/// The spinner frame and the elapsed time (`8s`, `2m05s`) for work running since `started`.
pub fn spinner_and_time(started: Instant, now: Instant) -> (&'static str, String) {
    let elapsed = now.saturating_duration_since(started);
    let frame = usize::try_from(elapsed.as_millis() / 100).unwrap_or(0) % FRAMES.len();
    let secs = elapsed.as_secs();
    let time = if secs >= 60 {
        format!("{}m{:02}s", secs / 60, secs % 60)
    } else {
        format!("{secs}s")
    };
    (FRAMES[frame], time)
}

/// The progress line for `name`, running since `started`, at `now`.
pub fn line(name: &str, started: Instant, now: Instant) -> Line<'static> {
    let (spinner, time) = spinner_and_time(started, now);
    Line::from(vec![
        Span::styled(
            format!("{spinner} "),
            Style::default()
                .fg(theme::ATTENTION)
                .add_modifier(Modifier::BOLD),
        ),
        Span::styled("running ", Style::default().fg(theme::MUTED)),
        Span::styled(
            name.to_owned(),
            Style::default().add_modifier(Modifier::BOLD),
        ),
        Span::styled(format!(" · {time}"), Style::default().fg(theme::ATTENTION)),
    ])
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use ratatui::buffer::Buffer;
    use ratatui::layout::Rect;
    use ratatui::widgets::{Paragraph, Widget};

    use super::*;

    fn draw(line: Line<'static>) -> Buffer {
        let mut buf = Buffer::empty(Rect::new(0, 0, 40, 1));
        Paragraph::new(line).render(buf.area, &mut buf);
        buf
    }

    #[test]
    fn progress_shows_spinner_name_and_elapsed_seconds() {
        let start = Instant::now();
        let at = |ms| draw(line("pytest", start, start + Duration::from_millis(ms)));
        let eight = at(8_250);
        assert_eq!(eight[(0, 0)].fg, theme::ATTENTION);
        assert!(eight[(10, 0)].modifier.contains(Modifier::BOLD));
        insta::assert_debug_snapshot!(eight);
        // The spinner turns and the seconds count.
        assert_ne!(at(100)[(0, 0)].symbol(), at(200)[(0, 0)].symbol());
        let text = |buf: Buffer| -> String {
            buf.content()
                .iter()
                .map(ratatui::buffer::Cell::symbol)
                .collect()
        };
        assert!(text(at(125_000)).contains("pytest · 2m05s"));
        // A clock that went backwards shows zero, not a panic.
        assert!(text(draw(line("x", start + Duration::from_secs(5), start))).contains("x · 0s"));
    }
}
