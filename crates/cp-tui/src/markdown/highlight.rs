//! Syntax colour for fenced code blocks, with syntect's bundled grammars and theme.
//!
//! The grammars and the theme load once, on the first code block, and are shared after that.
//! A language syntect does not know, or a line it cannot parse, falls back to plain code
//! colour: highlighting is decoration and never loses text.
//!
//! Highlighting is a state machine run line by line, so a block that grows (an answer
//! streaming a long code block, laid out again for each token) resumes where it stopped: the
//! state after the last complete line of the few blocks highlighted last is kept, with their
//! lines, and only what was added is highlighted.
//!
//! A frame must not wait for a long block: when more than [`INLINE_LINES`] lines are new, they
//! are shown in plain code colour and highlighted on a thread of its own (`cp-highlight`; the
//! latest request wins). When it is done the block is kept as above, the [`generation`]
//! moves on and the waker set by [`set_waker`] is called; the caller lays out again what it
//! showed plain (it learns which through [`take_shown_plain`]), now in colour.

use cp_base::theme;
use std::cell::Cell;
use std::panic::AssertUnwindSafe;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Condvar, LazyLock, Mutex, OnceLock, PoisonError};

use ratatui::style::{Color, Modifier, Style};
use ratatui::text::Span;
use syntect::highlighting::{
    FontStyle, HighlightIterator, HighlightState, Highlighter, Theme, ThemeSet,
};
use syntect::parsing::{ParseState, ScopeStack, SyntaxReference, SyntaxSet};
use syntect::util::LinesWithEndings;

/// The theme used for code; its background is ignored so the terminal's own shows through.
const THEME: &str = "base16-ocean.dark";

/// Colour of code that is not highlighted (unknown language, no language).
pub const PLAIN_CODE: Style = Style::new().fg(theme::CODE);

static SYNTAXES: LazyLock<SyntaxSet> = LazyLock::new(SyntaxSet::load_defaults_newlines);
static THEME_SET: LazyLock<Theme> = LazyLock::new(|| {
    ThemeSet::load_defaults()
        .themes
        .remove(THEME)
        .unwrap_or_default()
});

/// Loads the grammars and the theme, so the first code block on screen does not wait for it.
pub fn warm_up() {
    LazyLock::force(&SYNTAXES);
    LazyLock::force(&THEME_SET);
}

/// Code blocks whose highlighting state is kept, to resume them.
const KEPT_BLOCKS: usize = 4;

/// The blocks highlighted last, oldest first.
static KEPT: Mutex<Vec<Highlighted>> = Mutex::new(Vec::new());

/// A code block highlighted up to the end of a complete line, and the state there.
struct Highlighted {
    language: String,
    /// The code highlighted: whole lines, with their line endings.
    text: String,
    parse: ParseState,
    highlight: HighlightState,
    lines: Vec<Vec<Span<'static>>>,
}

/// New lines highlighted on the caller's thread; a block with more new lines is shown plain
/// until the `cp-highlight` thread has coloured it.
pub const INLINE_LINES: usize = 200;

/// Moves on each time the `cp-highlight` thread has finished a block.
static GENERATION: AtomicU64 = AtomicU64::new(0);

/// The block waiting for the `cp-highlight` thread (language, code): only the latest.
static REQUEST: Mutex<Option<(String, String)>> = Mutex::new(None);
/// Whether the `cp-highlight` thread has a block to highlight or is highlighting one.
static BUSY: AtomicBool = AtomicBool::new(false);
/// Wakes the `cp-highlight` thread when a request arrives, and tests when a block is done.
static SIGNAL: Condvar = Condvar::new();
/// Whether the `cp-highlight` thread runs (started on the first request).
static WORKER: OnceLock<bool> = OnceLock::new();
/// Called when the `cp-highlight` thread has finished a block (the event loop redraws).
static WAKER: OnceLock<Box<dyn Fn() + Send + Sync>> = OnceLock::new();

thread_local! {
    /// Whether this thread was given plain lines for a block still being highlighted.
    static SHOWN_PLAIN: Cell<bool> = const { Cell::new(false) };
}

/// How many blocks the `cp-highlight` thread has finished: when it moves on, what was shown
/// plain can be laid out again in colour.
pub fn generation() -> u64 {
    GENERATION.load(Ordering::Acquire)
}

/// Whether the background highlighting has work left (the bench waits for it to finish).
pub fn busy() -> bool {
    BUSY.load(Ordering::Acquire)
}

/// Whether this thread was given plain lines for a block still being highlighted since the
/// last call (and clears it).
pub fn take_shown_plain() -> bool {
    SHOWN_PLAIN.with(|c| c.replace(false))
}

/// Sets what to call when the `cp-highlight` thread has finished a block (once).
pub fn set_waker(waker: impl Fn() + Send + Sync + 'static) {
    let _ = WAKER.set(Box::new(waker));
}

/// The code's lines as styled spans, one `Vec` per line (without line endings). More than
/// [`INLINE_LINES`] new lines come back plain and are highlighted in the background.
pub fn highlight(code: &str, language: &str) -> Vec<Vec<Span<'static>>> {
    highlight_within(code, language, INLINE_LINES, 0)
}

/// The lines of [`highlight`] from line `from` on (a growing block laid out in pieces asks
/// for the lines it has not laid out yet).
pub fn highlight_from(code: &str, language: &str, from: usize) -> Vec<Vec<Span<'static>>> {
    highlight_within(code, language, INLINE_LINES, from)
}

/// All of `code` highlighted on the calling thread, for work that already runs off the UI
/// thread (the Changes panel's reading of a diff): no line comes back plain, and neither the
/// kept blocks of the conversation nor the `cp-highlight` thread's request are touched.
pub fn highlight_here(code: &str, language: &str) -> Vec<Vec<Span<'static>>> {
    let Some((_, syntax)) = syntax_for(language) else {
        return plain(code, 0);
    };
    let highlighter = Highlighter::new(&THEME_SET);
    let mut parse = ParseState::new(syntax);
    let mut state = HighlightState::new(&highlighter, ScopeStack::new());
    LinesWithEndings::from(code)
        .map(|line| highlight_line(&mut parse, &mut state, line, &highlighter))
        .collect()
}

/// The fence's language token (`rust,ignore` → `rust`) and its grammar, when there is one.
fn syntax_for(language: &str) -> Option<(&str, &'static SyntaxReference)> {
    let language = language.split([',', ' ']).next().unwrap_or_default().trim();
    if language.is_empty() {
        return None;
    }
    SYNTAXES
        .find_syntax_by_token(language)
        .map(|syntax| (language, syntax))
}

/// [`highlight_from`], with at most `inline` new lines highlighted on this thread.
fn highlight_within(
    code: &str,
    language: &str,
    inline: usize,
    from: usize,
) -> Vec<Vec<Span<'static>>> {
    let Some((language, syntax)) = syntax_for(language) else {
        return plain(code, from);
    };
    let highlighter = Highlighter::new(&THEME_SET);
    let kept = take_kept(language, code);
    let done = kept.as_ref().map_or(0, |b| b.text.len());
    if code[done..].matches('\n').count() > inline && request(language, code) {
        SHOWN_PLAIN.with(|c| c.set(true));
        let coloured = kept.as_ref().map_or(&[][..], |b| &b.lines[..]);
        let mut out = coloured.get(from..).unwrap_or_default().to_vec();
        out.extend(plain(&code[done..], from.saturating_sub(coloured.len())));
        if let Some(block) = kept {
            keep(block);
        }
        return out;
    }
    let mut block = kept.unwrap_or_else(|| Highlighted {
        language: language.to_owned(),
        text: String::new(),
        parse: ParseState::new(syntax),
        highlight: HighlightState::new(&highlighter, ScopeStack::new()),
        lines: Vec::new(),
    });
    // Complete lines move the kept state on; a last line still being written is highlighted
    // on a copy of it.
    let rest = &code[block.text.len()..];
    let complete = rest.rfind('\n').map_or(0, |i| i + 1);
    for line in LinesWithEndings::from(&rest[..complete]) {
        let spans = highlight_line(&mut block.parse, &mut block.highlight, line, &highlighter);
        block.lines.push(spans);
    }
    block.text.push_str(&rest[..complete]);
    let mut out = block.lines.get(from..).unwrap_or_default().to_vec();
    let partial = &rest[complete..];
    if !partial.is_empty() && from <= block.lines.len() {
        let (mut parse, mut highlight) = (block.parse.clone(), block.highlight.clone());
        out.push(highlight_line(
            &mut parse,
            &mut highlight,
            partial,
            &highlighter,
        ));
    }
    keep(block);
    out
}

/// Asks the `cp-highlight` thread to highlight `code` (replacing a request it has not taken
/// yet); false when the thread cannot run, and the caller must highlight it itself.
fn request(language: &str, code: &str) -> bool {
    let running = *WORKER.get_or_init(|| {
        let spawned = std::thread::Builder::new()
            .name("cp-highlight".into())
            .spawn(work);
        if let Err(e) = &spawned {
            tracing::warn!("cannot start the syntax highlighting thread: {e}");
        }
        spawned.is_ok()
    });
    if running {
        let mut slot = REQUEST.lock().unwrap_or_else(PoisonError::into_inner);
        *slot = Some((language.to_owned(), code.to_owned()));
        BUSY.store(true, Ordering::Release);
        SIGNAL.notify_all();
    }
    running
}

/// The `cp-highlight` thread: highlights the latest request, keeps it, tells the waker.
fn work() {
    loop {
        let (language, code) = {
            let mut slot = REQUEST.lock().unwrap_or_else(PoisonError::into_inner);
            loop {
                if let Some(request) = slot.take() {
                    break request;
                }
                slot = SIGNAL.wait(slot).unwrap_or_else(PoisonError::into_inner);
            }
        };
        // A grammar that panics costs this block its colours, not the thread: the block
        // stays plain (no new generation, so nothing asks for it again in a loop).
        let done = std::panic::catch_unwind(AssertUnwindSafe(|| {
            highlight_within(&code, &language, usize::MAX, usize::MAX);
        }));
        if done.is_ok() {
            GENERATION.fetch_add(1, Ordering::AcqRel);
        } else {
            tracing::warn!("syntax highlighting of a {language} block failed");
        }
        // Tests wait on the same signal for the generation to move on.
        let slot = REQUEST.lock().unwrap_or_else(PoisonError::into_inner);
        if slot.is_none() {
            BUSY.store(false, Ordering::Release);
        }
        SIGNAL.notify_all();
        drop(slot);
        if let Some(waker) = WAKER.get() {
            waker();
        }
    }
}

/// Waits until the generation is past `seen` (tests: the background block is done).
#[cfg(test)]
pub fn wait_past(seen: u64) {
    let slot = REQUEST.lock().unwrap_or_else(PoisonError::into_inner);
    let (_slot, waited) = SIGNAL
        .wait_timeout_while(slot, std::time::Duration::from_secs(120), |_| {
            generation() <= seen
        })
        .unwrap_or_else(PoisonError::into_inner);
    assert!(
        !waited.timed_out(),
        "the highlighting thread did not finish"
    );
}

/// One line's spans, moving the states on.
fn highlight_line(
    parse: &mut ParseState,
    highlight: &mut HighlightState,
    line: &str,
    highlighter: &Highlighter<'_>,
) -> Vec<Span<'static>> {
    match parse.parse_line(line, &SYNTAXES) {
        Ok(ops) => HighlightIterator::new(highlight, &ops, line, highlighter)
            .filter_map(|(style, text)| {
                let text = clean(text);
                (!text.is_empty()).then(|| Span::styled(text, to_style(style)))
            })
            .collect(),
        // A grammar that fails on this line: show it plain and carry on.
        Err(e) => {
            tracing::debug!("syntax highlighting failed: {e}");
            vec![Span::styled(clean(line), PLAIN_CODE)]
        }
    }
}

/// The kept block `code` continues (the longest, in the same language), taken out.
fn take_kept(language: &str, code: &str) -> Option<Highlighted> {
    let mut kept = KEPT.lock().unwrap_or_else(PoisonError::into_inner);
    let at = kept
        .iter()
        .enumerate()
        .filter(|(_, b)| b.language == language && code.starts_with(b.text.as_str()))
        .max_by_key(|(_, b)| b.text.len())
        .map(|(i, _)| i)?;
    Some(kept.remove(at))
}

/// Keeps `block` as the newest, forgetting the oldest beyond the bound.
fn keep(block: Highlighted) {
    let mut kept = KEPT.lock().unwrap_or_else(PoisonError::into_inner);
    if kept.len() >= KEPT_BLOCKS {
        kept.remove(0);
    }
    kept.push(block);
}

/// The code's lines from line `from` on, in plain code colour.
fn plain(code: &str, from: usize) -> Vec<Vec<Span<'static>>> {
    code.lines()
        .skip(from)
        .map(|line| vec![Span::styled(clean(line), PLAIN_CODE)])
        .collect()
}

/// Drops the line ending and expands tabs, which a terminal cell grid cannot hold.
fn clean(text: &str) -> String {
    text.trim_end_matches(['\n', '\r']).replace('\t', "    ")
}

fn to_style(style: syntect::highlighting::Style) -> Style {
    let fg = style.foreground;
    let mut out = Style::default().fg(Color::Rgb(fg.r, fg.g, fg.b));
    if style.font_style.contains(FontStyle::BOLD) {
        out = out.add_modifier(Modifier::BOLD);
    }
    if style.font_style.contains(FontStyle::ITALIC) {
        out = out.add_modifier(Modifier::ITALIC);
    }
    if style.font_style.contains(FontStyle::UNDERLINE) {
        out = out.add_modifier(Modifier::UNDERLINED);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn highlighting_here_colours_a_long_block_at_once_and_asks_no_thread() {
        let code = "let x = \"a\";\n".repeat(INLINE_LINES * 3);
        let lines = highlight_here(&code, "rust");
        assert_eq!(lines.len(), INLINE_LINES * 3);
        let colours: std::collections::HashSet<_> =
            lines.iter().flatten().map(|span| span.style.fg).collect();
        assert!(colours.len() > 1, "{colours:?}");
        assert_eq!(lines, highlight_within(&code, "rust", usize::MAX, 0));
        assert!(!take_shown_plain(), "some lines came back plain");
    }

    #[test]
    fn a_known_language_gets_several_colours_and_keeps_its_text() {
        let lines = highlight("fn main() {\n\tlet x = \"hi\";\n}\n", "rust");
        assert_eq!(lines.len(), 3);
        let text: Vec<String> = lines
            .iter()
            .map(|l| l.iter().map(|s| s.content.as_ref()).collect())
            .collect();
        assert_eq!(text, ["fn main() {", "    let x = \"hi\";", "}"]);
        let colours: std::collections::HashSet<_> =
            lines.iter().flatten().filter_map(|s| s.style.fg).collect();
        assert!(colours.len() >= 3, "{colours:?}");
    }

    /// `code` highlighted whole, line by line with syntect's own loop, as a reference.
    fn whole_block(code: &str) -> Vec<Vec<Span<'static>>> {
        let mut whole = Vec::new();
        let mut highlighter = syntect::easy::HighlightLines::new(
            SYNTAXES.find_syntax_by_token("rust").unwrap(),
            &THEME_SET,
        );
        for line in LinesWithEndings::from(code) {
            let spans: Vec<Span<'static>> = highlighter
                .highlight_line(line, &SYNTAXES)
                .unwrap()
                .into_iter()
                .filter_map(|(style, text)| {
                    let text = clean(text);
                    (!text.is_empty()).then(|| Span::styled(text, to_style(style)))
                })
                .collect();
            whole.push(spans);
        }
        whole
    }

    /// Highlights `code` until it comes back coloured, waiting for the background thread.
    fn coloured(code: &str) -> Vec<Vec<Span<'static>>> {
        loop {
            let seen = generation();
            let lines = highlight(code, "rust");
            if !take_shown_plain() {
                return lines;
            }
            wait_past(seen);
        }
    }

    #[test]
    fn a_growing_block_resumes_and_gives_what_a_whole_one_gives() {
        // A block comment open across lines: the state carried between lines matters.
        let code = "/* a comment\n   still */ fn f() -> u8 {\n    let s = \"x\";\n    1\n}\n";
        let whole = whole_block(code);
        for end in 1..=code.len() {
            let lines = highlight(&code[..end], "rust");
            let full_lines = code[..end].split_inclusive('\n').count();
            assert_eq!(lines.len(), full_lines, "after {end} bytes");
            // Every complete line is what the whole block gives.
            let complete = code[..end].matches('\n').count();
            assert_eq!(lines[..complete], whole[..complete], "after {end} bytes");
        }
        assert_eq!(highlight(code, "rust"), whole);
    }

    #[test]
    fn a_long_block_is_plain_first_then_exactly_what_a_whole_one_gives() {
        // A raw string open across many lines, so each line's colour depends on those before.
        let mut code = String::from("/* the table\n");
        for i in 0..3 * INLINE_LINES {
            let _ = std::fmt::Write::write_fmt(
                &mut code,
                format_args!("   row {i} */ fn f{i}() -> u8 {{ let s = \"{i}\"; 1 }} /*\n"),
            );
        }
        code.push_str("*/\nfn end() {}\n");
        take_shown_plain();
        let first = highlight(&code, "rust");
        assert!(
            take_shown_plain(),
            "a long block is not highlighted on the caller's thread"
        );
        assert_eq!(first, plain(&code, 0));
        let whole = whole_block(&code);
        assert_eq!(coloured(&code), whole);
        // Growing it by fewer lines than the bound resumes from where it stopped (unless
        // other tests' blocks pushed it out of the few kept).
        let grown = format!("{code}let x = 1;\n/* open");
        let lines = coloured(&grown);
        assert_eq!(lines[..whole.len()], whole[..]);
        assert_eq!(lines[whole.len()..], whole_block(&grown)[whole.len()..]);
    }

    #[test]
    fn an_unknown_language_is_plain_code() {
        let lines = highlight("a\nb", "no-such-language");
        assert_eq!(lines.len(), 2);
        assert!(lines.iter().flatten().all(|s| s.style == PLAIN_CODE));
    }
}
