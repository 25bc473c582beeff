//! Markdown as styled terminal lines: headings, bold, italics, lists, quotes, links, tables,
//! `inline code` and fenced code with syntax colour.
//!
//! `writer::render` is pure (`&str`, width → lines). [`MarkdownCache`], the way in from the
//! rest of the TUI, remembers its results, because the conversation is drawn every frame and
//! highlighting code is not free.
//!
//! ```ignore
//! let lines = MarkdownCache::default().render("# Plan\n\n- **one**\n- `two`", 80);
//! ```

mod cache;
mod highlight;
mod table;
mod writer;

#[cfg(test)]
mod tests;

pub use cache::MarkdownCache;
