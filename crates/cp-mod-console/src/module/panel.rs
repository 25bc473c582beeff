//! `ConsolePanel`: a console rendered through a VT100 parser, with status, exit code and
//! runtime. A feeder thread (see `panel_feed.rs`) keeps its screen current; rendering only
//! reads that state.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

#[cfg(feature = "draw")]
use cp_base::ratatui::buffer::Buffer;
#[cfg(feature = "draw")]
use cp_base::ratatui::layout::Rect;
#[cfg(feature = "draw")]
use cp_base::ratatui::style::{Color, Modifier, Style};
#[cfg(feature = "draw")]
use cp_base::ratatui::text::{Line, Span};
#[cfg(feature = "draw")]
use cp_base::ratatui::widgets::{Paragraph, Widget};
#[cfg(feature = "draw")]
use cp_base::theme;
use cp_base::{Notifier, Panel, now_ms};
#[cfg(feature = "draw")]
use cp_base::{PanelView, ScrollExtent};
use uuid::Uuid;

use super::panel_feed::{self, PanelState, new_state};
use crate::client::ConsoleHandle;
use crate::console_info::{ConsoleInfo, ConsoleStatus, KillCause};
use crate::terminal::last_lines;

/// Most output an opening panel replays.
const REPLAY_BYTES: u64 = 4 * 1024 * 1024;
/// Lines and characters the model sees at most.
const LLM_LINES: usize = 40;
const LLM_CHARS: usize = 4000;

/// The panel of one console.
pub struct ConsolePanel {
    id: Uuid,
    handle: Option<ConsoleHandle>,
    state: Arc<Mutex<PanelState>>,
    stop: Arc<AtomicBool>,
}

impl std::fmt::Debug for ConsolePanel {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ConsolePanel")
            .field("id", &self.id)
            .finish_non_exhaustive()
    }
}

/// The panel id of a console: `console:<uuid>`.
pub fn console_panel_id(id: Uuid) -> String {
    format!("console:{id}")
}

impl ConsolePanel {
    /// A panel that follows `handle`'s output and status, posting `Refresh` on `notifier`
    /// when something changed (at most every ~30 ms).
    ///
    /// A long log is replayed from its last few MiB only: enough for the screen and the
    /// scrollback, without parsing hundreds of megabytes.
    pub fn open(handle: ConsoleHandle, info: ConsoleInfo, notifier: Notifier) -> Self {
        let mut first = new_state(info);
        first.offset = first.info.output_len.saturating_sub(REPLAY_BYTES);
        first.screen.skipped(first.offset);
        let state = Arc::new(Mutex::new(first));
        let stop = Arc::new(AtomicBool::new(false));
        panel_feed::start(
            handle.clone(),
            Arc::clone(&state),
            Arc::clone(&stop),
            notifier,
        );
        Self {
            id: handle.id(),
            handle: Some(handle),
            state,
            stop,
        }
    }

    /// A panel showing a fixed record and output, with no console behind it (replays,
    /// previews, snapshot tests).
    pub fn detached(info: ConsoleInfo, output: &[u8]) -> Self {
        let mut state = new_state(info);
        state.feed(output);
        Self {
            id: state.info.id,
            handle: None,
            state: Arc::new(Mutex::new(state)),
            stop: Arc::new(AtomicBool::new(true)),
        }
    }

    fn lock(&self) -> MutexGuard<'_, PanelState> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The console id.
    pub fn console_id(&self) -> Uuid {
        self.id
    }

    /// The console's handle, for sending input (None for a detached panel).
    pub fn handle(&self) -> Option<&ConsoleHandle> {
        self.handle.as_ref()
    }

    /// The console as the panel last saw it.
    pub fn info(&self) -> ConsoleInfo {
        self.lock().info.clone()
    }

    /// Offset in the console's output up to which the panel has read.
    pub fn shown_bytes(&self) -> u64 {
        self.lock().offset
    }

    /// The visible screen as plain text (for tests and copy).
    pub fn screen_text(&self) -> String {
        self.lock().screen.contents()
    }
}

impl Drop for ConsolePanel {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
    }
}

/// "1.2s", "3m04s", "2h05m".
fn short_duration(ms: u64) -> String {
    let secs = ms / 1000;
    if secs < 60 {
        format!("{}.{}s", secs, (ms % 1000) / 100)
    } else if secs < 3600 {
        format!("{}m{:02}s", secs / 60, secs % 60)
    } else {
        format!("{}h{:02}m", secs / 3600, (secs % 3600) / 60)
    }
}

/// Symbol and text of a status.
fn status_look(status: &ConsoleStatus) -> (&'static str, String) {
    match status {
        ConsoleStatus::Running => ("●", "running".into()),
        ConsoleStatus::Exited { code: 0 } => ("✔", "exited 0".into()),
        ConsoleStatus::Exited { code } => ("✘", format!("exited {code}")),
        ConsoleStatus::Signaled { signal } => ("✘", format!("killed by {signal}")),
        ConsoleStatus::Killed { cause } => (
            "✘",
            match cause {
                KillCause::Request => "killed".into(),
                KillCause::Timeout => "timed out, killed".into(),
                KillCause::Shutdown => "killed at server shutdown".into(),
            },
        ),
        ConsoleStatus::Lost { .. } => ("⚠", "lost (console server died)".into()),
    }
}

/// The colour a status is drawn in.
#[cfg(feature = "draw")]
fn status_colour(status: &ConsoleStatus) -> Color {
    match status {
        ConsoleStatus::Running => theme::ATTENTION,
        ConsoleStatus::Exited { code: 0 } => theme::SUCCESS,
        ConsoleStatus::Exited { .. }
        | ConsoleStatus::Signaled { .. }
        | ConsoleStatus::Killed { .. } => theme::FAILURE,
        ConsoleStatus::Lost { .. } => theme::ASK,
    }
}

impl Panel for ConsolePanel {
    fn id(&self) -> String {
        console_panel_id(self.id)
    }

    fn title(&self) -> String {
        let st = self.lock();
        let name = st
            .info
            .description
            .clone()
            .unwrap_or_else(|| st.info.command.clone());
        let mut title: String = name.chars().take(40).collect();
        if name.chars().count() > 40 {
            title.push('…');
        }
        title
    }

    fn badge(&self) -> Option<String> {
        Some(status_look(&self.lock().info.status).0.to_owned())
    }

    #[cfg(feature = "draw")]
    fn render(&self, area: Rect, buf: &mut Buffer, view: &PanelView) {
        if area.height == 0 || area.width == 0 {
            return;
        }
        let mut st = self.lock();
        let (symbol, text) = status_look(&st.info.status);
        let colour = status_colour(&st.info.status);
        let runtime = short_duration(
            st.info
                .runtime(now_ms())
                .as_millis()
                .try_into()
                .unwrap_or(u64::MAX),
        );
        // Markers come right after the status so a narrow panel still shows them.
        let mut spans = vec![Span::styled(
            format!("{symbol} {text}"),
            Style::default().fg(colour).add_modifier(Modifier::BOLD),
        )];
        if view.passthrough {
            spans.push(Span::raw(" "));
            spans.push(Span::styled(
                "[typing → console]",
                Style::default()
                    .fg(theme::ON_HIGHLIGHT)
                    .bg(theme::ATTENTION),
            ));
        } else if view.focused && st.info.status.is_running() {
            spans.push(Span::styled(
                " [keys → host]",
                Style::default().fg(theme::MUTED),
            ));
        }
        if view.scroll > 0 {
            spans.push(Span::styled(
                format!(" [scrolled up {}]", view.scroll),
                Style::default().fg(theme::ACCENT),
            ));
        }
        spans.push(Span::raw(format!(" · {runtime} · ")));
        spans.push(Span::styled(
            format!("$ {}", st.info.command),
            Style::default().add_modifier(Modifier::BOLD),
        ));
        if let Some(d) = &st.info.description {
            spans.push(Span::styled(
                format!(" — {d}"),
                Style::default().fg(theme::MUTED),
            ));
        }
        Paragraph::new(Line::from(spans)).render(Rect { height: 1, ..area }, buf);
        let mut body = Rect {
            y: area.y + 1,
            height: area.height - 1,
            ..area
        };
        if let Some(err) = &st.error
            && body.height > 0
        {
            Paragraph::new(Line::styled(
                format!("⚠ {err}"),
                Style::default().fg(theme::FAILURE),
            ))
            .render(Rect { height: 1, ..body }, buf);
            body.y += 1;
            body.height -= 1;
        }
        if body.height == 0 {
            return;
        }
        // Scrolling is view state owned by the host; the screen applies it for this draw only.
        st.screen
            .render(body, buf, view.scroll, view.passthrough && view.scroll == 0);
    }

    #[cfg(feature = "draw")]
    fn scroll_extent(&self, _area: Rect) -> ScrollExtent {
        // The screen's rows plus its history: at the largest offset the top row is the first
        // retained line, whatever the panel's height.
        ScrollExtent::bottom(self.lock().screen.scrollback_rows())
    }

    #[cfg(feature = "draw")]
    fn find(&self, _area: Rect, query: &str) -> Vec<usize> {
        self.lock().screen.find(query)
    }

    fn llm_context(&self) -> String {
        // Copied out, so the feed is not held up while the bytes are read as a terminal.
        let (bytes, info) = {
            let st = self.lock();
            let bytes: Vec<u8> = st.raw_tail.iter().copied().collect();
            (bytes, st.info.clone())
        };
        let mut tail = last_lines(&bytes, (info.rows, info.cols), LLM_LINES);
        if tail.len() > LLM_CHARS {
            let cut = tail.len() - LLM_CHARS;
            let cut = (cut..tail.len())
                .find(|&i| tail.is_char_boundary(i))
                .unwrap_or(tail.len());
            tail = format!("…{}", &tail[cut..]);
        }
        let runtime = short_duration(
            info.runtime(now_ms())
                .as_millis()
                .try_into()
                .unwrap_or(u64::MAX),
        );
        format!(
            "Console {} — `{}` — {} ({})\nLast lines:\n```\n{}\n```",
            info.id, info.command, info.status, runtime, tail
        )
    }

    fn accepts_input(&self) -> bool {
        self.handle.is_some() && self.lock().info.status.is_running()
    }
}
