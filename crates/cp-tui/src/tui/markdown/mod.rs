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

/// Loads the syntax grammars off the UI thread (call once at start; never blocks the caller).
pub fn warm_up_in_background() {
    let spawned = std::thread::Builder::new()
        .name("cp-syntax".into())
        .spawn(highlight::warm_up);
    if let Err(e) = spawned {
        tracing::debug!("cannot load syntax grammars in the background: {e}");
    }
}
