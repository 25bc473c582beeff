//! A model of Anthropic's prompt cache, to measure how much of a session's input a request
//! layout would serve from cache (tests and the cache-share benchmark use it).
//!
//! The API caches the prompt in the order tools → system → messages. A breakpoint
//! (`cache_control`) on a block writes the prefix ending at that block; a later request reads
//! the longest prefix, ending at one of the 20 blocks up to one of its own breakpoints, that an
//! earlier request wrote. Tokens are estimated as bytes / 4.
//!
//! ```
//! use cp_llm::cache_model::{CacheModel, PromptView};
//! let body = serde_json::json!({"system": [{"type": "text", "text": "Be brief.",
//!     "cache_control": {"type": "ephemeral"}}], "messages": []});
//! let mut cache = CacheModel::default();
//! let view = PromptView::of_anthropic_body(&body);
//! assert_eq!(cache.serve(&view), 0); // first sight: written, not read
//! assert_eq!(cache.serve(&view), view.total_bytes()); // then read in full
//! ```

use std::collections::HashSet;

use serde_json::Value;

/// How many blocks before a breakpoint the API looks back for an earlier cache entry.
const LOOKBACK_BLOCKS: usize = 20;

/// A request's prompt as the cache sees it: blocks in cache order, each rendered without its
/// `cache_control` marker (which is not part of the cached content), and where the breakpoints
/// sit.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PromptView {
    /// Each block's canonical bytes, prefixed with its place (`tool`, `system`, `user#3`…).
    pub blocks: Vec<String>,
    /// Indices into `blocks` of the blocks carrying a breakpoint, ascending.
    pub breakpoints: Vec<usize>,
}

impl PromptView {
    /// The view of an Anthropic Messages request body.
    pub fn of_anthropic_body(body: &Value) -> Self {
        let mut view = Self {
            blocks: Vec::new(),
            breakpoints: Vec::new(),
        };
        for tool in body["tools"].as_array().into_iter().flatten() {
            view.push("tool", tool);
        }
        match &body["system"] {
            Value::String(text) => view.push("system", &Value::String(text.clone())),
            Value::Array(blocks) => blocks.iter().for_each(|b| view.push("system", b)),
            _ => {}
        }
        for (index, message) in body["messages"]
            .as_array()
            .into_iter()
            .flatten()
            .enumerate()
        {
            let place = format!("{}#{index}", message["role"].as_str().unwrap_or("?"));
            match &message["content"] {
                Value::Array(blocks) => blocks.iter().for_each(|b| view.push(&place, b)),
                other => view.push(&place, other),
            }
        }
        view
    }

    fn push(&mut self, place: &str, block: &Value) {
        let mut block = block.clone();
        let marked = block
            .as_object_mut()
            .and_then(|o| o.remove("cache_control"))
            .is_some();
        if marked {
            self.breakpoints.push(self.blocks.len());
        }
        self.blocks.push(format!("{place}:{block}\n"));
    }

    /// The bytes of the prompt through block `last` (inclusive).
    pub fn prefix_bytes(&self, last: usize) -> String {
        self.blocks
            .iter()
            .take(last + 1)
            .map(String::as_str)
            .collect()
    }

    /// The bytes of the whole prompt.
    pub fn total_bytes(&self) -> usize {
        self.blocks.iter().map(String::len).sum()
    }

    /// The prefix through the last breakpoint: what the next request should repeat exactly.
    pub fn stable_prefix(&self) -> String {
        self.breakpoints
            .last()
            .map(|&last| self.prefix_bytes(last))
            .unwrap_or_default()
    }
}

/// The cache entries written so far (prefixes ending at a breakpoint).
#[derive(Debug, Default)]
pub struct CacheModel {
    entries: HashSet<String>,
}

impl CacheModel {
    /// Serves one request: returns how many of its bytes are read from cache, then writes the
    /// prefixes at its breakpoints.
    pub fn serve(&mut self, view: &PromptView) -> usize {
        let mut best = 0;
        for &breakpoint in &view.breakpoints {
            let first = breakpoint.saturating_sub(LOOKBACK_BLOCKS - 1);
            for end in (first..=breakpoint).rev() {
                let prefix = view.prefix_bytes(end);
                if self.entries.contains(&prefix) {
                    best = best.max(prefix.len());
                    break;
                }
            }
        }
        for &breakpoint in &view.breakpoints {
            self.entries.insert(view.prefix_bytes(breakpoint));
        }
        best
    }
}

/// The cache view of `request` as the Anthropic provider would send it.
pub fn anthropic_view(request: &super::types::Request) -> PromptView {
    // The body is typed data, so encoding and parsing it back cannot fail; `Null` would
    // give an empty view.
    let body = super::anthropic::request_body(request)
        .and_then(|bytes| serde_json::from_slice(&bytes))
        .unwrap_or(serde_json::Value::Null);
    PromptView::of_anthropic_body(&body)
}
