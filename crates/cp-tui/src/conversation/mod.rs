//! The Conversation panel: what the user said, what the agent answered, the tool calls with
//! their results, and notifications.

pub(crate) mod answer_rows;
pub(crate) mod conversation_layout;
pub(crate) mod entry_lines;
#[cfg(test)]
mod long_output_tests;
pub(crate) mod outcome_style;
pub(crate) mod progress;
pub(crate) mod tabs;
pub(crate) mod wrap;

use std::collections::HashMap;
use std::sync::{Mutex, MutexGuard, PoisonError};
use std::time::Instant;

use cp_base::ratatui::buffer::Buffer;
use cp_base::ratatui::layout::Rect;
use cp_base::ratatui::text::Line;
use cp_base::theme;
use cp_base::{Level, Panel, PanelKind, PanelView, ScrollExtent, ToolResult};
use serde::{Deserialize, Serialize};

use crate::conversation::answer_rows::AnswerRows;
use crate::conversation::conversation_layout::{EntryRows, Layout, Rows};
use crate::conversation::entry_lines::{
    INDENT, Progress, block, labelled, report_block, tool_lines,
};
use crate::conversation::wrap::wrap_lines;
use crate::markdown;

/// One item of the conversation.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum Entry {
    User(String),
    Assistant(String),
    /// A tool call; `result` is `None` while it runs.
    Tool {
        name: String,
        args: String,
        result: Option<ToolResult>,
        expanded: bool,
    },
    Notice {
        level: Level,
        text: String,
    },
    /// Host messages (help, errors of the host itself).
    System(String),
}

/// The conversation's entries. They change only through its methods, which tell the layout
/// which entry to lay out again.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct Conversation {
    entries: Vec<Entry>,
    /// Each entry laid out once per width (see `conversation_layout.rs`).
    #[serde(skip)]
    layout: Derived<Layout>,
    /// The answers laid out last, in pieces, so streaming into one lays out only its end.
    #[serde(skip)]
    answers: Derived<AnswerRows>,
    /// Entries laid out with a long code block not yet coloured (see `markdown`).
    #[serde(skip)]
    shown_plain: Derived<ShownPlain>,
    /// When each running tool call (by entry index) started, for its progress line.
    #[serde(skip)]
    started: HashMap<usize, Instant>,
    /// The entry Ctrl-O just expanded or collapsed: while the view is at the bottom, its top
    /// is kept on screen, so the change is seen. New entries and scrolling end it.
    #[serde(skip)]
    reveal: Option<usize>,
    /// What the running calls wait for, by name (e.g. `callback pytest`), from the modules'
    /// published panels; shown on their progress lines.
    #[serde(skip)]
    activity: Vec<String>,
    /// Entries from this index on changed since the last save (0 for a new or restored
    /// conversation: all of it is new to the saved state's log).
    #[serde(skip)]
    unsaved_from: usize,
}

/// Entries laid out while their long code blocks were being highlighted in the background,
/// and the highlighting generation seen when they were last checked.
#[derive(Debug, Default)]
struct ShownPlain {
    entries: std::collections::HashSet<usize>,
    generation: u64,
}

/// What is derived from the entries (their layout), behind a lock so drawing can stay
/// `&self`. A copy starts empty: it is derived from the entries, not state.
#[derive(Debug, Default)]
struct Derived<T>(Mutex<T>);

impl<T: Default> Derived<T> {
    fn lock(&self) -> MutexGuard<'_, T> {
        // A poisoned lock only means a panic elsewhere mid-layout: forget it all and go on.
        self.0.lock().unwrap_or_else(|poisoned| {
            let mut derived = poisoned.into_inner();
            *derived = T::default();
            derived
        })
    }

    fn get_mut(&mut self) -> &mut T {
        self.0.get_mut().unwrap_or_else(PoisonError::into_inner)
    }
}

impl<T: Default> Clone for Derived<T> {
    fn clone(&self) -> Self {
        Self::default()
    }
}

/// Two conversations are equal when their entries are: the rest is derived or transient.
impl PartialEq for Conversation {
    fn eq(&self, other: &Self) -> bool {
        self.entries == other.entries
    }
}

impl Conversation {
    pub fn push(&mut self, entry: Entry) -> usize {
        let running = matches!(entry, Entry::Tool { result: None, .. });
        self.reveal = None;
        self.entries.push(entry);
        let index = self.entries.len() - 1;
        if running {
            self.started.insert(index, Instant::now());
        }
        index
    }

    /// The entries, oldest first.
    pub fn entries(&self) -> &[Entry] {
        &self.entries
    }

    /// Entry `index`, to change it (it is laid out again).
    pub fn entry_mut(&mut self, index: usize) -> Option<&mut Entry> {
        self.layout.get_mut().forget(index);
        self.unsaved_from = self.unsaved_from.min(index);
        self.entries.get_mut(index)
    }

    /// The newest entry, to change it (it is laid out again).
    pub fn last_entry_mut(&mut self) -> Option<&mut Entry> {
        let last = self.entries.len().checked_sub(1)?;
        self.entry_mut(last)
    }

    /// Replaces every entry (a restored or cleared conversation).
    pub fn set_entries(&mut self, entries: Vec<Entry>) {
        self.entries = entries;
        self.unsaved_from = 0;
        self.started.clear();
        self.reveal = None;
        self.layout.get_mut().forget_all();
    }

    /// Drops the `count` oldest entries (a bounded conversation); the rest move up by the
    /// number returned (`count`, or fewer when there are fewer entries).
    pub fn drop_oldest(&mut self, count: usize) -> usize {
        let count = count.min(self.entries.len());
        if count == 0 {
            return 0;
        }
        self.entries.drain(..count);
        self.started = std::mem::take(&mut self.started)
            .into_iter()
            .filter_map(|(index, started)| Some((index.checked_sub(count)?, started)))
            .collect();
        self.reveal = None;
        self.unsaved_from = 0;
        self.layout.get_mut().forget_all();
        *self.answers.get_mut() = AnswerRows::default();
        *self.shown_plain.get_mut() = ShownPlain::default();
        count
    }

    /// Takes every entry out, leaving the conversation empty.
    pub fn take_entries(&mut self) -> Vec<Entry> {
        let entries = std::mem::take(&mut self.entries);
        self.set_entries(Vec::new());
        entries
    }

    /// The entries that changed since the last call (from the index returned on), for the
    /// saved state; the rest are as last saved.
    pub fn take_unsaved(&mut self) -> (usize, Vec<Entry>) {
        let from = self.unsaved_from.min(self.entries.len());
        self.unsaved_from = self.entries.len();
        (from, self.entries[from..].to_vec())
    }

    /// The first `saved` entries are on disk as they are (a conversation just restored).
    pub fn mark_saved(&mut self, saved: usize) {
        self.unsaved_from = saved.min(self.entries.len());
    }

    pub fn push_system(&mut self, text: impl Into<String>) -> usize {
        self.push(Entry::System(text.into()))
    }

    /// Removes the no-provider help (a restored conversation's, once a provider is set up).
    pub fn drop_no_provider_help(&mut self) {
        if let Some(first) = self
            .entries
            .iter()
            .position(|e| matches!(e, Entry::System(text) if is_no_provider_help(text)))
        {
            self.unsaved_from = self.unsaved_from.min(first);
        }
        self.entries
            .retain(|e| !matches!(e, Entry::System(text) if is_no_provider_help(text)));
        self.started.clear();
        self.layout.get_mut().forget_all();
    }

    /// Puts `text` (the no-model screen's offer, which starts as the no-provider help does)
    /// in place of the no-provider help, or at the end when there is none.
    pub fn replace_no_provider_help(&mut self, text: String) {
        let at = self
            .entries
            .iter()
            .position(|e| matches!(e, Entry::System(old) if is_no_provider_help(old)));
        match at.and_then(|index| self.entry_mut(index)) {
            Some(entry) => *entry = Entry::System(text),
            None => {
                self.push(Entry::System(text));
            }
        }
    }

    /// Expands or collapses the most recent tool call, and keeps it in view.
    pub fn toggle_last_tool(&mut self) {
        let last = self
            .entries
            .iter()
            .rposition(|e| matches!(e, Entry::Tool { .. }));
        if let Some(index) = last
            && let Some(Entry::Tool { expanded, .. }) = self.entry_mut(index)
        {
            *expanded = !*expanded;
            self.reveal = Some(index);
        }
    }

    /// Sets what the running calls wait for; returns whether it changed.
    pub fn set_activity(&mut self, activity: Vec<String>) -> bool {
        let changed = self.activity != activity;
        self.activity = activity;
        changed
    }

    /// The person scrolled: the view follows the scroll offset again.
    pub fn clear_reveal(&mut self) {
        self.reveal = None;
    }

    /// The conversation as lines for a `width`-column area (before wrapping), with running
    /// calls' progress as of `now`.
    fn lines(&self, width: u16, now: Instant) -> Vec<Line<'static>> {
        (0..self.entries.len())
            .flat_map(|index| self.entry_lines(index, width, now))
            .collect()
    }

    /// One entry's lines (before wrapping), with the blank line that follows it.
    fn entry_lines(&self, index: usize, width: u16, now: Instant) -> Vec<Line<'static>> {
        let mut out = Vec::new();
        let Some(entry) = self.entries.get(index) else {
            return out;
        };
        match entry {
            Entry::User(text) => block(&mut out, "you", theme::ACCENT, text),
            Entry::Assistant(text) => {
                let body = markdown::render(text, width.saturating_sub(INDENT));
                labelled(&mut out, "agent", theme::SUCCESS, body);
            }
            Entry::System(text) => {
                report_block(&mut out, "·", theme::MUTED, text, false);
            }
            Entry::Notice { level, text } => {
                let color = match level {
                    Level::Error => theme::FAILURE,
                    Level::Warning => theme::ATTENTION,
                    Level::Success => theme::SUCCESS,
                    Level::Info => theme::INFO,
                };
                let bad = matches!(level, Level::Error | Level::Warning);
                report_block(&mut out, "notice", color, text, bad);
            }
            Entry::Tool {
                name,
                args,
                result,
                expanded,
            } => {
                let progress = self.started.get(&index).map(|&started| Progress {
                    started,
                    now,
                    waiting_for: &self.activity,
                });
                tool_lines(&mut out, name, args, result.as_ref(), *expanded, progress);
            }
        }
        out.push(Line::default());
        out
    }
}

impl Conversation {
    /// Lays out again, when next drawn, the entries shown with plain code once the
    /// background highlighting has coloured more blocks.
    fn colour_what_was_plain(&self) {
        let generation = markdown::highlight_generation();
        let entries = {
            let mut plain = self.shown_plain.lock();
            if plain.generation == generation || plain.entries.is_empty() {
                plain.generation = generation;
                return;
            }
            plain.generation = generation;
            std::mem::take(&mut plain.entries)
        };
        let mut layout = self.layout.lock();
        let mut answers = self.answers.lock();
        // Colour does not change a row's text, so the heights stand: only entries drawn
        // again are laid out again (laying out every one would ask for every long block's
        // colours, each pushing another out of the few kept).
        for index in entries {
            layout.forget_rows(index);
            answers.forget(index);
        }
    }
}

/// The conversation as the layout sees it, with running calls' progress as of `now`.
struct AsRows<'a> {
    conversation: &'a Conversation,
    now: Instant,
}

impl Rows for AsRows<'_> {
    fn count(&self) -> usize {
        self.conversation.entries.len()
    }

    fn volatile(&self, index: usize) -> bool {
        self.conversation.started.contains_key(&index)
            && matches!(
                self.conversation.entries.get(index),
                Some(Entry::Tool { result: None, .. })
            )
    }

    fn rows(&self, index: usize, width: u16) -> EntryRows {
        markdown::take_shown_plain();
        let rows = if let Some(Entry::Assistant(text)) = self.conversation.entries.get(index) {
            self.conversation.answers.lock().rows(index, text, width)
        } else {
            wrap_lines(self.conversation.entry_lines(index, width, self.now), width).into()
        };
        if markdown::take_shown_plain() {
            self.conversation.shown_plain.lock().entries.insert(index);
        }
        rows
    }
}

/// How to configure a provider; shown when none is configured.
pub const NO_PROVIDER_HELP: &str = "No LLM provider is configured, so there is no agent to talk to yet.\n\
To add one, set ANTHROPIC_API_KEY (Anthropic), or OPENAI_API_KEY and/or OPENAI_BASE_URL \
(OpenAI, Ollama, vLLM, llama.cpp); CP_MODEL names the model. The `llm` section of \
.context-pilot/config.json (or of ~/.config/context-pilot/config.json) can set provider, \
model and base_url; keys come from the environment only. Then start context-pilot again.\n\
Everything else works without one: Ctrl-P opens the command palette to run any tool, F1 lists \
the keys.";

/// Whether `text` is the no-provider help, of this version or an older one.
fn is_no_provider_help(text: &str) -> bool {
    text.starts_with("No LLM provider is configured")
}

impl Panel for Conversation {
    fn id(&self) -> String {
        "conversation".into()
    }

    fn title(&self) -> String {
        "Conversation".into()
    }

    fn kind(&self) -> PanelKind {
        PanelKind::Fixed
    }

    fn badge(&self) -> Option<String> {
        let running = self
            .entries
            .iter()
            .filter(|e| matches!(e, Entry::Tool { result: None, .. }))
            .count();
        (running > 0).then(|| format!("{running}…"))
    }

    fn scroll_extent(&self, area: Rect) -> ScrollExtent {
        self.colour_what_was_plain();
        let source = AsRows {
            conversation: self,
            now: Instant::now(),
        };
        let rows = self.layout.lock().total(&source, area.width);
        ScrollExtent::bottom(ScrollExtent::overflow(rows, area.height))
    }

    fn find(&self, area: Rect, query: &str) -> Vec<usize> {
        let lines = wrap_lines(self.lines(area.width, Instant::now()), area.width);
        let texts: Vec<String> = lines
            .iter()
            .map(|line| line.spans.iter().map(|s| s.content.as_ref()).collect())
            .collect();
        ScrollExtent::offsets_of_matches(
            texts.iter().map(String::as_str),
            query,
            area.height,
            cp_base::Anchor::Bottom,
        )
    }

    fn render(&self, area: Rect, buf: &mut Buffer, view: &PanelView) {
        self.colour_what_was_plain();
        let source = AsRows {
            conversation: self,
            now: Instant::now(),
        };
        // Anchored to the bottom: the newest entry is visible unless the user scrolled up.
        let window = self.layout.lock().window(
            &source,
            area.width,
            usize::from(area.height),
            view.scroll,
            self.reveal,
        );
        for (row, line) in window.rows.iter().enumerate() {
            let y = area.y + u16::try_from(row).unwrap_or(u16::MAX);
            buf.set_line(area.x, y, line, area.width);
        }
    }

    fn llm_context(&self) -> String {
        String::new()
    }
}

#[cfg(test)]
mod tests {
    use cp_base::ratatui::buffer::Buffer;
    use cp_base::ratatui::layout::Rect;
    use cp_base::ratatui::style::{Color, Modifier};
    use cp_base::{Panel, PanelView};

    use super::{Conversation, Entry};

    pub(crate) fn draw(conversation: &Conversation, width: u16, height: u16) -> Buffer {
        let mut buf = Buffer::empty(Rect::new(0, 0, width, height));
        conversation.render(buf.area, &mut buf, &PanelView::default());
        buf
    }

    pub(crate) fn rows(buf: &Buffer) -> Vec<String> {
        (0..buf.area.height)
            .map(|y| {
                (0..buf.area.width)
                    .map(|x| buf[(x, y)].symbol())
                    .collect::<String>()
                    .trim_end()
                    .to_owned()
            })
            .collect()
    }

    #[test]
    fn a_file_read_result_keeps_the_gap_between_line_number_and_code() {
        let mut conversation = Conversation::default();
        conversation.push(Entry::Tool {
            name: "File_read".into(),
            args: r#"{"path":"calc.py"}"#.into(),
            result: Some(cp_base::ToolResult::ok(
                "     1\tdef add(a, b):\n     2\t\treturn a + b\n",
            )),
            expanded: true,
        });
        let rows = rows(&draw(&conversation, 60, 4));
        assert!(
            rows.contains(&"       1  def add(a, b):".to_owned()),
            "{rows:#?}"
        );
        assert!(
            rows.contains(&"       2          return a + b".to_owned()),
            "{rows:#?}"
        );
    }

    #[test]
    fn the_agents_markdown_is_rendered_not_shown_raw() {
        let mut conversation = Conversation::default();
        conversation.push(Entry::User("is anything broken?".into()));
        conversation.push(Entry::Assistant(
            "**Nothing** is broken.\n\n- `calc.py` passes\n\n```python\nprint(1)\n```".into(),
        ));
        let buf = draw(&conversation, 40, 9);
        let rows = rows(&buf);
        assert!(
            rows.contains(&"agent › Nothing is broken.".to_owned()),
            "{rows:#?}"
        );
        assert!(rows.contains(&"  • calc.py passes".to_owned()), "{rows:#?}");
        assert!(rows.contains(&"    print(1)".to_owned()), "{rows:#?}");
        assert!(buf[(8, 2)].modifier.contains(Modifier::BOLD), "{buf:?}");
        assert_eq!(buf[(8, 2)].symbol(), "N");
        assert!(matches!(buf[(4, 6)].fg, Color::Rgb(..)), "{buf:?}");
        insta::assert_debug_snapshot!(buf);
    }

    fn tool(name: &str, text: &str) -> Entry {
        Entry::Tool {
            name: name.into(),
            args: r#"{"file_path":"calc.py"}"#.into(),
            result: Some(cp_base::ToolResult::ok(text)),
            expanded: false,
        }
    }

    /// The row holding `needle`, and the column where it starts.
    fn find(buf: &Buffer, needle: &str) -> (u16, u16) {
        for (y, row) in rows(buf).iter().enumerate() {
            if let Some(byte) = row.find(needle) {
                let x = row[..byte].chars().count();
                return (u16::try_from(x).unwrap(), u16::try_from(y).unwrap());
            }
        }
        panic!("{needle:?} not on screen: {:#?}", rows(buf));
    }

    #[test]
    fn failure_looks_like_failure_and_success_like_success() {
        let mut conversation = Conversation::default();
        conversation.push(tool(
            "File_edit",
            "Edited calc.py (1 replacement).\n\
Callback 'pytest' FAILED (exited with code 1) after 0.4s (run 1). Last lines of output:\n\
```\n\
collected 2 items\n\
tests/test_calc.py .F\n\
E       assert 3 == 4\n\
tests/test_calc.py:5: AssertionError\n\
FAILED tests/test_calc.py::test_add - assert 3 == 4\n\
==== 1 failed, 1 passed in 0.02s ====\n\
```\n\
Full output: panel `cb` (opened). The edit itself was applied.",
        ));
        conversation.push(tool(
            "File_edit",
            "Edited calc.py (1 replacement).\nCallback 'pytest' passed (run 2, 0.3s)",
        ));
        conversation.push(tool(
            "File_edit",
            "Edited calc.py (1 replacement).\nCallback 'slow' TIMED OUT after 5s and its process group was killed (run 3).",
        ));
        let buf = draw(&conversation, 72, 22);
        // The failed edit: a red ✗, never a green ✓, and its FAILED lines red.
        let (x, y) = find(&buf, "✗ File_edit");
        assert_eq!(buf[(x, y)].fg, cp_base::theme::FAILURE);
        let (x, y) = find(&buf, "Callback 'pytest' FAILED");
        assert_eq!(buf[(x, y)].fg, cp_base::theme::FAILURE);
        let (x, y) = find(&buf, "FAILED tests/test_calc.py");
        assert_eq!(buf[(x, y)].fg, cp_base::theme::FAILURE);
        // Collapsed, it still shows the failure summary and the first error.
        find(&buf, "E       assert 3 == 4");
        find(&buf, "1 failed, 1 passed");
        // The passing edit is green; the timed-out one yellow.
        let (x, y) = find(&buf, "✓ File_edit");
        assert_eq!(buf[(x, y)].fg, cp_base::theme::SUCCESS);
        let (x, y) = find(&buf, "Callback 'pytest' passed");
        assert_eq!(buf[(x, y)].fg, cp_base::theme::SUCCESS);
        let (x, y) = find(&buf, "⚠ File_edit");
        assert_eq!(buf[(x, y)].fg, cp_base::theme::ATTENTION);
        let (x, y) = find(&buf, "Callback 'slow' TIMED OUT");
        assert_eq!(buf[(x, y)].fg, cp_base::theme::ATTENTION);
        insta::assert_debug_snapshot!(buf);
    }

    #[test]
    fn a_running_call_shows_its_progress_and_a_finished_one_its_result() {
        let mut conversation = Conversation::default();
        let index = conversation.push(Entry::Tool {
            name: "File_edit".into(),
            args: "{}".into(),
            result: None,
            expanded: false,
        });
        let started = conversation.started[&index];
        let text: Vec<String> = conversation
            .lines(60, started + std::time::Duration::from_secs(8))
            .iter()
            .map(ToString::to_string)
            .collect();
        assert!(
            text.iter().any(|l| l.ends_with("running File_edit · 8s")),
            "{text:#?}"
        );
        // The blocking callback it waits for, as the callbacks panel publishes it.
        assert!(conversation.set_activity(vec!["callback pytest".into()]));
        assert!(!conversation.set_activity(vec!["callback pytest".into()]));
        let text: Vec<String> = conversation
            .lines(60, started + std::time::Duration::from_secs(9))
            .iter()
            .map(ToString::to_string)
            .collect();
        assert!(
            text.iter()
                .any(|l| l.ends_with("running File_edit · 9s · callback pytest")),
            "{text:#?}"
        );
        if let Some(Entry::Tool { result, .. }) = conversation.entry_mut(index) {
            *result = Some(cp_base::ToolResult::ok("Edited a.py."));
        }
        let text: Vec<String> = conversation
            .lines(60, started)
            .iter()
            .map(ToString::to_string)
            .collect();
        assert!(!text.iter().any(|l| l.contains("running")), "{text:#?}");
    }

    #[test]
    fn a_change_the_result_names_is_not_repeated_and_stale_help_goes() {
        let mut conversation = Conversation::default();
        conversation.push(Entry::System(
            "No LLM provider is configured, so (an older wording)".into(),
        ));
        let mut result = cp_base::ToolResult::ok("Created notes.txt (1 lines, 11 bytes).");
        result.changes = vec![
            cp_base::FileChange::new("notes.txt", cp_base::ChangeKind::Created),
            cp_base::FileChange::new("other.txt", cp_base::ChangeKind::Modified),
        ];
        conversation.push(Entry::Tool {
            name: "File_write".into(),
            args: "{}".into(),
            result: Some(result),
            expanded: true,
        });
        conversation.drop_no_provider_help();
        let text: Vec<String> = conversation
            .lines(60, std::time::Instant::now())
            .iter()
            .map(ToString::to_string)
            .collect();
        assert!(
            !text.iter().any(|l| l.contains("No LLM provider")),
            "{text:#?}"
        );
        assert!(
            !text.iter().any(|l| l.contains("created notes.txt")),
            "{text:#?}"
        );
        assert!(
            text.iter().any(|l| l.contains("modified other.txt")),
            "{text:#?}"
        );
        assert!(super::NO_PROVIDER_HELP.contains("CP_MODEL"));
        assert!(super::NO_PROVIDER_HELP.contains("`llm` section"));
    }

    #[test]
    fn ctrl_o_keeps_the_expanded_block_in_view() {
        let mut conversation = Conversation::default();
        let long = (1..=30)
            .map(|i| format!("line {i}"))
            .collect::<Vec<_>>()
            .join("\n");
        conversation.push(Entry::Tool {
            name: "File_read".into(),
            args: "{}".into(),
            result: Some(cp_base::ToolResult::ok(long)),
            expanded: false,
        });
        conversation.push(Entry::Assistant("a\n\nb\n\nc".into()));
        // Expanded, the block is taller than the view: its header stays on screen.
        conversation.toggle_last_tool();
        let shown = rows(&draw(&conversation, 40, 10));
        assert!(shown[0].contains("File_read"), "{shown:#?}");
        assert!(shown.iter().any(|r| r.contains("line 9")), "{shown:#?}");
        // Once scrolled (or new output), the view is anchored to the bottom again.
        conversation.clear_reveal();
        let shown = rows(&draw(&conversation, 40, 10));
        assert!(!shown.iter().any(|r| r.contains("File_read")), "{shown:#?}");
        assert!(shown.iter().any(|r| r.ends_with('c')), "{shown:#?}");
    }

    #[test]
    fn failed_reports_in_notices_are_red() {
        let mut conversation = Conversation::default();
        conversation.push(Entry::Notice {
            level: cp_base::Level::Warning,
            text: "Stop gate:\nTests FAILED (exit code 1) — `pytest`: 1 failed\n    FAILED tests/test_a.py::t"
                .into(),
        });
        conversation.push(Entry::Notice {
            level: cp_base::Level::Success,
            text: "Callback 'lint' passed (run 1, 0.1s)".into(),
        });
        let buf = draw(&conversation, 60, 8);
        let (x, y) = find(&buf, "Tests FAILED");
        assert_eq!(buf[(x, y)].fg, cp_base::theme::FAILURE);
        let (x, y) = find(&buf, "FAILED tests/");
        assert_eq!(buf[(x, y)].fg, cp_base::theme::FAILURE);
        let (x, y) = find(&buf, "Callback 'lint' passed");
        assert_eq!(buf[(x, y)].fg, cp_base::theme::SUCCESS);
    }
}
