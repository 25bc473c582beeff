//! Remembers rendered markdown by text and width, so a frame redraws without re-parsing.

use std::collections::HashMap;
use std::hash::{DefaultHasher, Hash, Hasher};
use std::sync::{Mutex, PoisonError};

use ratatui::text::Line;

use super::writer::render;

/// Past this many entries the cache starts over (a long session's old texts are rarely drawn).
const CAPACITY: usize = 512;

/// Rendered markdown by (text, width). Interior mutability, so rendering can stay `&self`.
#[derive(Debug, Default)]
pub struct MarkdownCache {
    entries: Mutex<HashMap<u64, Vec<Line<'static>>>>,
}

impl MarkdownCache {
    /// The lines of `text` at `width`, rendered now or remembered from before.
    pub fn render(&self, text: &str, width: u16) -> Vec<Line<'static>> {
        let mut hasher = DefaultHasher::new();
        (text, width).hash(&mut hasher);
        let key = hasher.finish();
        // A poisoned lock only means a panic elsewhere mid-insert: the map is still usable.
        let mut entries = self.entries.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(lines) = entries.get(&key) {
            return lines.clone();
        }
        let lines = render(text, width);
        if entries.len() >= CAPACITY {
            entries.clear();
        }
        entries.insert(key, lines.clone());
        lines
    }
}

/// A copy starts empty: the cache is a derived value, not state.
impl Clone for MarkdownCache {
    fn clone(&self) -> Self {
        Self::default()
    }
}
