//! Markdown as styled terminal lines: headings, bold, italics, lists, quotes, links, tables,
//! `inline code` and fenced code with syntax colour.
//!
//! [`render`] is pure (`&str`, width → lines). Highlighting code is not free, so its caller
//! keeps what it rendered: the conversation lays out each entry once per width
//! (`conversation/conversation_layout.rs`), and an answer that grows in pieces ([`finished_len`] says
//! where the finished blocks end; `conversation/answer_rows.rs`).
//!
//! ```ignore
//! let lines = render("# Plan\n\n- **one**\n- `two`", 80);
//! ```
//!
//! A long code block is shown plain at first and coloured off the UI thread
//! (`highlight.rs`): [`take_shown_plain`] tells the caller that what it just rendered holds
//! such a block, [`highlight_generation`] moves on when colours arrive, and the waker set by
//! [`set_highlight_waker`] asks for a frame.

mod blocks;
mod fence;
pub(crate) mod highlight;
mod table;
mod writer;

#[cfg(test)]
mod markdown_tests;

pub use blocks::finished_len;
pub use fence::Fence;
#[cfg(test)]
pub use highlight::wait_past as wait_for_highlight_past;
pub use highlight::{
    busy as highlighting, generation as highlight_generation, set_waker as set_highlight_waker,
    take_shown_plain,
};
pub use writer::{code_block_lines, render, render_after_blocks};

/// Loads the syntax grammars off the UI thread (call once at start; never blocks the caller).
pub fn warm_up_in_background() {
    let spawned = std::thread::Builder::new()
        .name("cp-syntax".into())
        .spawn(highlight::warm_up);
    if let Err(e) = spawned {
        tracing::debug!("cannot load syntax grammars in the background: {e}");
    }
}
