//! The Conversation panel's rows, laid out once per entry and width.
//!
//! A frame draws only the rows on screen. Walking up from the newest entry, it needs the
//! height of each entry down to the top of the window, and the rows of the few entries that
//! are visible. Both are kept per entry: the heights of every entry laid out so far (a few
//! bytes each), and the rows of at most [`KEPT_ROWS`] entries (those nearest the view). An
//! entry is laid out again only when it changes (the conversation says which) or the width
//! does. A running tool call, whose progress line changes every frame, is laid out each
//! frame and never kept. So a frame, a key or a streamed token costs what is on screen, not
//! what is in the history.

use std::collections::HashMap;
use std::sync::Arc;

use cp_base::ratatui::text::Line;

/// Entries whose laid-out rows are kept.
const KEPT_ROWS: usize = 256;

/// What the layout asks of the conversation: how many entries, which change every frame,
/// and one entry's rows at a width.
pub(crate) trait Rows {
    fn count(&self) -> usize;
    /// An entry laid out anew every frame (a running call's progress), never kept.
    fn volatile(&self, index: usize) -> bool;
    /// The entry's rows, wrapped to `width`, with the blank row that follows it.
    fn rows(&self, index: usize, width: u16) -> EntryRows;
}

/// An entry's rows, in shared pieces: an answer that grows keeps the pieces of its finished
/// part and lays out only the rest (`answer_rows.rs`); a frame copies only the rows it shows.
#[derive(Debug, Clone, Default)]
pub(crate) struct EntryRows {
    pieces: Vec<Arc<[Line<'static>]>>,
    count: usize,
}

impl EntryRows {
    pub(crate) fn push(&mut self, piece: Arc<[Line<'static>]>) {
        self.count += piece.len();
        self.pieces.push(piece);
    }

    /// How many rows.
    pub(crate) fn count(&self) -> usize {
        self.count
    }

    /// The rows, first to last.
    #[cfg(test)]
    pub(crate) fn iter(&self) -> impl Iterator<Item = &Line<'static>> {
        self.pieces.iter().flat_map(|piece| piece.iter())
    }

    /// Rows `skip..skip + take`, copied; whole pieces before them are stepped over.
    fn window(&self, mut skip: usize, take: usize) -> Vec<Line<'static>> {
        let mut out = Vec::with_capacity(take.min(self.count));
        for piece in &self.pieces {
            if out.len() == take {
                break;
            }
            if skip >= piece.len() {
                skip -= piece.len();
                continue;
            }
            let want = take - out.len();
            out.extend(piece.iter().skip(skip).take(want).cloned());
            skip = 0;
        }
        out
    }
}

impl From<Vec<Line<'static>>> for EntryRows {
    fn from(rows: Vec<Line<'static>>) -> Self {
        let mut out = Self::default();
        out.push(Arc::from(rows));
        out
    }
}

/// The kept heights and rows, for one width.
#[derive(Debug, Default)]
pub(crate) struct Layout {
    width: u16,
    heights: Vec<Option<usize>>,
    rows: HashMap<usize, EntryRows>,
}

/// The rows a frame shows, and the facts it learned on the way.
pub(crate) struct Window {
    pub rows: Vec<Line<'static>>,
}

impl Layout {
    /// Forgets entry `index` (it changed).
    pub(crate) fn forget(&mut self, index: usize) {
        if let Some(h) = self.heights.get_mut(index) {
            *h = None;
        }
        self.rows.remove(&index);
    }

    /// Forgets the rows of entry `index` but not its height: its text is the same and only
    /// its colours changed, so it is laid out again only when it is drawn.
    pub(crate) fn forget_rows(&mut self, index: usize) {
        self.rows.remove(&index);
    }

    /// Forgets everything (entries were removed or reordered).
    pub(crate) fn forget_all(&mut self) {
        self.heights.clear();
        self.rows.clear();
    }

    fn fit(&mut self, width: u16, count: usize) {
        if self.width != width {
            self.width = width;
            self.forget_all();
        }
        self.heights.resize(count, None);
    }

    /// The height of entry `index`, laying it out if needed (and keeping its rows, which
    /// are about to be drawn or were just computed anyway).
    fn height(&mut self, source: &impl Rows, index: usize) -> usize {
        self.height_keeping(source, index, true)
    }

    /// The height of entry `index`, laying it out if needed; its rows are kept only with
    /// `keep` (the total height of a long history needs every height, not every entry's rows:
    /// keeping them all until the end would hold the whole history laid out at once).
    fn height_keeping(&mut self, source: &impl Rows, index: usize, keep: bool) -> usize {
        if source.volatile(index) {
            return source.rows(index, self.width).count();
        }
        if let Some(h) = self.heights.get(index).copied().flatten() {
            return h;
        }
        let rows = source.rows(index, self.width);
        let h = rows.count();
        if let Some(slot) = self.heights.get_mut(index) {
            *slot = Some(h);
        }
        if keep {
            self.rows.insert(index, rows);
        }
        h
    }

    /// Rows `skip..skip + take` of entry `index`: only those are copied, so a frame of a
    /// long entry (a 1 MB tool result, a 5,000-line code block) costs the window, not the entry.
    fn rows_of(
        &mut self,
        source: &impl Rows,
        index: usize,
        skip: usize,
        take: usize,
    ) -> Vec<Line<'static>> {
        if source.volatile(index) {
            return source.rows(index, self.width).window(skip, take);
        }
        let width = self.width;
        let rows = self
            .rows
            .entry(index)
            .or_insert_with(|| source.rows(index, width));
        rows.window(skip, take)
    }

    /// Every row's count at `width`: lays out what was never laid out (once per width).
    pub(crate) fn total(&mut self, source: &impl Rows, width: u16) -> usize {
        let count = source.count();
        self.fit(width, count);
        // The rows kept are those of the newest entries, where the view usually is.
        let newest = count.saturating_sub(KEPT_ROWS);
        let total = (0..count)
            .map(|i| self.height_keeping(source, i, i >= newest))
            .sum();
        self.trim(count..count);
        total
    }

    /// The rows of a window `height` rows tall whose bottom is `scroll` rows above the last
    /// row (clamped to the top). With `reveal`, an entry whose top would be above the window
    /// moves the window up to it (Ctrl-O's expanded call).
    pub(crate) fn window(
        &mut self,
        source: &impl Rows,
        width: u16,
        height: usize,
        scroll: usize,
        reveal: Option<usize>,
    ) -> Window {
        let count = source.count();
        self.fit(width, count);
        // Walk up from the newest entry until the window's top is covered. Rows are counted
        // by depth: the number of rows after them (the last row has depth 0).
        let want = scroll.saturating_add(height);
        let mut below = 0usize;
        let mut first = count;
        while first > 0 && below < want {
            first -= 1;
            below += self.height(source, first);
        }
        // Fewer rows than asked for: the window is clamped to the top.
        let scroll = scroll.min(below.saturating_sub(height));
        let mut bottom = scroll; // rows between the window's bottom and the last row
        // The depth of the top of entry `first`: the rows from it to the end.
        let mut entry_top = below;
        if let Some(index) = reveal.filter(|&i| i < count && scroll == 0) {
            let top_of_entry: usize = (index..count).map(|i| self.height(source, i)).sum();
            if top_of_entry > height {
                bottom = top_of_entry - height;
            }
            if index < first {
                first = index;
                entry_top = top_of_entry;
            }
        }
        let top = bottom + height; // rows from the window's top to the last row
        // Collect the visible rows, walking down from `first` until below the window.
        let mut rows = Vec::with_capacity(height);
        let mut visible = Vec::new();
        for index in first..count {
            if entry_top <= bottom {
                break;
            }
            let h = self.height(source, index);
            let entry_bottom = entry_top - h;
            if entry_bottom < top && entry_top > bottom {
                let skip = entry_top.saturating_sub(top);
                let take = entry_top.min(top) - entry_bottom.max(bottom);
                rows.extend(self.rows_of(source, index, skip, take));
                visible.push(index);
            }
            entry_top = entry_bottom;
        }
        let lo = visible.first().copied().unwrap_or(0);
        let hi = visible.last().map_or(0, |&i| i + 1);
        self.trim(lo..hi);
        Window { rows }
    }

    /// Keeps the rows of at most [`KEPT_ROWS`] entries: those nearest `visible`.
    fn trim(&mut self, visible: std::ops::Range<usize>) {
        if self.rows.len() <= KEPT_ROWS {
            return;
        }
        let distance = |i: usize| {
            if i < visible.start {
                visible.start - i
            } else {
                i.saturating_sub(visible.end)
            }
        };
        let mut kept: Vec<usize> = self.rows.keys().copied().collect();
        kept.sort_unstable_by_key(|&i| distance(i));
        for index in kept.into_iter().skip(KEPT_ROWS) {
            self.rows.remove(&index);
        }
    }
}

#[cfg(test)]
mod tests {
    use std::cell::Cell;

    use super::*;

    /// Entry i has i % 3 + 1 rows, each naming its entry and row.
    struct Fake {
        count: usize,
        laid_out: Cell<usize>,
    }

    impl Rows for Fake {
        fn count(&self) -> usize {
            self.count
        }
        fn volatile(&self, _index: usize) -> bool {
            false
        }
        fn rows(&self, index: usize, _width: u16) -> EntryRows {
            self.laid_out.set(self.laid_out.get() + 1);
            // In pieces of one row, as a grown answer may be.
            let mut rows = EntryRows::default();
            for r in 0..=index % 3 {
                rows.push(Arc::from(vec![Line::from(format!("{index}.{r}"))]));
            }
            rows
        }
    }

    fn texts(w: &Window) -> Vec<String> {
        w.rows.iter().map(ToString::to_string).collect()
    }

    #[test]
    fn a_frame_lays_out_what_it_shows_once() {
        let fake = Fake {
            count: 10_000,
            laid_out: Cell::new(0),
        };
        let mut layout = Layout::default();
        let w = layout.window(&fake, 80, 4, 0, None);
        assert_eq!(texts(&w), ["9998.0", "9998.1", "9998.2", "9999.0"]);
        let first = fake.laid_out.get();
        assert!(first <= 3, "only the entries on screen: {first}");
        // The next frame, and scrolling back down, lay out nothing new.
        layout.window(&fake, 80, 4, 0, None);
        assert_eq!(fake.laid_out.get(), first);
        let up = layout.window(&fake, 80, 4, 2, None);
        assert_eq!(texts(&up), ["9997.0", "9997.1", "9998.0", "9998.1"]);
        // Scrolling past the top is clamped to it.
        let mut small = Layout::default();
        let three = Fake {
            count: 3,
            laid_out: Cell::new(0),
        };
        let w = small.window(&three, 80, 4, 100, None);
        assert_eq!(texts(&w), ["0.0", "1.0", "1.1", "2.0"]);
        assert_eq!(small.total(&three, 80), 6);
    }

    #[test]
    fn a_changed_entry_or_width_is_laid_out_again_and_rows_are_bounded() {
        let fake = Fake {
            count: 1_000,
            laid_out: Cell::new(0),
        };
        let mut layout = Layout::default();
        assert_eq!(layout.total(&fake, 80), 1_999);
        assert!(layout.rows.len() <= KEPT_ROWS);
        assert_eq!(fake.laid_out.get(), 1_000, "each entry once");
        layout.window(&fake, 80, 2, 0, None);
        let before = fake.laid_out.get();
        // Only the changed entry is laid out again.
        layout.forget(999);
        layout.window(&fake, 80, 2, 0, None);
        assert_eq!(fake.laid_out.get(), before + 1);
        // New colours: only the entry drawn is laid out again, not every height.
        layout.forget_rows(999);
        layout.forget_rows(10);
        assert_eq!(layout.total(&fake, 80), 1_999);
        layout.window(&fake, 80, 2, 0, None);
        assert_eq!(fake.laid_out.get(), before + 2);
        // A new width: the two entries on screen (999 and 998) are laid out again.
        layout.window(&fake, 81, 2, 0, None);
        assert_eq!(fake.laid_out.get(), before + 4);
    }
}
