//! One workflow phase's own conversation, as the Phases panel shows it below the table: the
//! news of the phase's agent ([`PhaseNews`]) filed as the main Conversation panel's entries
//! (the answer as markdown, tool calls with their results, notices), drawn by the same
//! [`Conversation`]. Bounded: past [`KEPT_ENTRIES`] the oldest entries go.

use std::collections::HashMap;

use cp_base::ratatui::buffer::Buffer;
use cp_base::ratatui::layout::Rect;
use cp_base::{Panel as _, PanelView, ScrollExtent};

use crate::conversation::entry_lines::shorten_args;
use crate::conversation::{Conversation, Entry};
use cp_run::PhaseNews;

/// Entries kept per phase; past it the oldest [`DROPPED_AT_ONCE`] go (at once, so the
/// layout is redone once per that many entries, not once per entry).
pub const KEPT_ENTRIES: usize = 1000;
const DROPPED_AT_ONCE: usize = 200;

/// A phase's conversation, and what pairs its next news with its entries.
#[derive(Debug, Clone, Default)]
pub struct PhaseConversation {
    conversation: Conversation,
    /// The answer streaming in, by entry index.
    streaming: Option<usize>,
    /// Running tool calls' entries, by call id.
    calls: HashMap<String, usize>,
}

impl PhaseConversation {
    /// Files one piece of news. Usage, testing and blocked are the row's, not entries.
    pub fn apply(&mut self, news: PhaseNews) {
        match news {
            PhaseNews::Text(text) => {
                if let Some(Entry::Assistant(answer)) =
                    self.streaming.and_then(|i| self.conversation.entry_mut(i))
                {
                    answer.push_str(&text);
                    return;
                }
                self.streaming = Some(self.push(Entry::Assistant(text)));
            }
            PhaseNews::ToolCall { id, name, args } => {
                let index = self.push(Entry::Tool {
                    name,
                    args: shorten_args(&args),
                    result: None,
                    expanded: false,
                });
                self.calls.insert(id, index);
            }
            PhaseNews::ToolResult { id, result } => {
                if let Some(index) = self.calls.remove(&id)
                    && let Some(Entry::Tool { result: slot, .. }) =
                        self.conversation.entry_mut(index)
                {
                    *slot = Some(result);
                }
            }
            PhaseNews::Notice { level, text } => {
                self.push(Entry::Notice { level, text });
            }
            // A request ended: the next text is a new answer.
            PhaseNews::Usage { .. } => self.streaming = None,
            PhaseNews::Started { .. }
            | PhaseNews::Placed { .. }
            | PhaseNews::Testing
            | PhaseNews::Blocked => {}
        }
    }

    /// Appends `entry` (ending the streaming answer unless it is one), dropping the oldest
    /// entries past the bound; returns its index.
    fn push(&mut self, entry: Entry) -> usize {
        if !matches!(entry, Entry::Assistant(_)) {
            self.streaming = None;
        }
        if self.conversation.entries().len() >= KEPT_ENTRIES {
            self.drop_oldest(DROPPED_AT_ONCE);
        }
        self.conversation.push(entry)
    }

    fn drop_oldest(&mut self, count: usize) {
        let count = self.conversation.drop_oldest(count);
        self.streaming = self.streaming.and_then(|i| i.checked_sub(count));
        self.calls = std::mem::take(&mut self.calls)
            .into_iter()
            .filter_map(|(id, i)| Some((id, i.checked_sub(count)?)))
            .collect();
    }

    pub fn entries(&self) -> &[Entry] {
        self.conversation.entries()
    }

    pub fn is_empty(&self) -> bool {
        self.conversation.entries().is_empty()
    }

    /// How far it scrolls in `area`.
    pub fn scroll_extent(&self, area: Rect) -> ScrollExtent {
        self.conversation.scroll_extent(area)
    }

    /// Draws it in `area`, `scroll` rows up from its bottom (0: it follows the newest).
    pub fn render(&self, area: Rect, buf: &mut Buffer, scroll: usize) {
        let view = PanelView {
            scroll,
            ..PanelView::default()
        };
        self.conversation.render(area, buf, &view);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use cp_base::{Level, ToolResult};

    fn call(id: &str) -> PhaseNews {
        PhaseNews::ToolCall {
            id: id.into(),
            name: "File_write".into(),
            args: r#"{"file_path":"api.rs"}"#.into(),
        }
    }

    #[test]
    fn news_becomes_entries_an_answer_streams_and_a_result_finds_its_call() {
        let mut phase = PhaseConversation::default();
        phase.apply(PhaseNews::Text("Writing ".into()));
        phase.apply(PhaseNews::Text("**api.rs**.".into()));
        phase.apply(call("c1"));
        phase.apply(PhaseNews::Text("Then ".into()));
        phase.apply(PhaseNews::ToolResult {
            id: "c1".into(),
            result: ToolResult::ok("Created api.rs."),
        });
        phase.apply(PhaseNews::Usage {
            context: 1,
            window: 2,
            tokens: 3,
        });
        phase.apply(PhaseNews::Text("done.".into()));
        phase.apply(PhaseNews::Notice {
            level: Level::Warning,
            text: "Stop gate:\ncommit first".into(),
        });
        let entries = phase.entries();
        assert_eq!(entries.len(), 5, "{entries:#?}");
        assert_eq!(entries[0], Entry::Assistant("Writing **api.rs**.".into()));
        assert!(
            matches!(&entries[1], Entry::Tool { result: Some(r), .. } if r.text == "Created api.rs."),
            "{entries:#?}"
        );
        assert_eq!(entries[2], Entry::Assistant("Then ".into()));
        assert_eq!(entries[3], Entry::Assistant("done.".into()));
        assert!(matches!(
            &entries[4],
            Entry::Notice {
                level: Level::Warning,
                ..
            }
        ));
    }

    #[test]
    fn past_the_bound_the_oldest_entries_go_and_a_running_call_still_gets_its_result() {
        let mut phase = PhaseConversation::default();
        phase.apply(call("old"));
        phase.apply(call("kept"));
        for i in 0..KEPT_ENTRIES {
            phase.apply(PhaseNews::Notice {
                level: Level::Info,
                text: format!("note {i}"),
            });
        }
        assert!(
            phase.entries().len() <= KEPT_ENTRIES,
            "{}",
            phase.entries().len()
        );
        assert!(
            !phase
                .entries()
                .iter()
                .any(|e| matches!(e, Entry::Tool { .. })),
            "the two calls were the oldest"
        );
        assert_eq!(
            phase.entries().last(),
            Some(&Entry::Notice {
                level: Level::Info,
                text: format!("note {}", KEPT_ENTRIES - 1)
            })
        );
        // A call made after the drop still pairs with its result.
        phase.apply(call("new"));
        phase.apply(PhaseNews::ToolResult {
            id: "new".into(),
            result: ToolResult::ok("ok"),
        });
        assert!(matches!(
            phase.entries().last(),
            Some(Entry::Tool {
                result: Some(_),
                ..
            })
        ));
        // The dropped calls' results find nothing and change nothing.
        let before = phase.entries().to_vec();
        phase.apply(PhaseNews::ToolResult {
            id: "old".into(),
            result: ToolResult::ok("late"),
        });
        assert_eq!(phase.entries(), &before[..]);
    }
}
