//! Markdown as styled terminal lines: headings, bold, italics, lists, quotes, links, tables,
//! `inline code` and fenced code with syntax colour.
//!
//! [`render`] is pure (`&str`, width → lines). Highlighting code is not free, so its caller
//! keeps what it rendered: the conversation lays out each entry once per width
//! (`conversation_layout.rs`), and an answer that grows in pieces ([`finished_len`] says
//! where the finished blocks end; `answer_rows.rs`).
//!
//! ```ignore
//! let lines = render("# Plan\n\n- **one**\n- `two`", 80);
//! ```

mod blocks;
pub(crate) mod highlight;
mod table;
mod writer;

#[cfg(test)]
mod tests;

pub use blocks::finished_len;
pub use writer::{render, render_after_blocks};

/// Loads the syntax grammars off the UI thread (call once at start; never blocks the caller).
pub fn warm_up_in_background() {
    let spawned = std::thread::Builder::new()
        .name("cp-syntax".into())
        .spawn(highlight::warm_up);
    if let Err(e) = spawned {
        tracing::debug!("cannot load syntax grammars in the background: {e}");
    }
}
