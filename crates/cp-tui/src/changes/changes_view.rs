//! Draws the Changes panel: the file list with change kinds and `+N −M`, the selected file's
//! diff (green added and red removed lines, syntax colour, hunk headers, new-file line
//! numbers, comments under their lines), the prompt at its foot, and the commit dialog.
//! Only the rows on screen are drawn; their layout is made when the state changes.

use cp_base::theme;
use cp_git::{FileDiff, LineKind};
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::{Color, Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Clear, Paragraph, Widget};

use super::rows::Row;
use super::snapshot::kind_word;
use super::{Changes, Pane, PromptKind, visible_from};
use crate::hit_map::{HitMap, Target};

pub use cp_base::theme::{ADDED_BG, REMOVED_BG};
/// Columns of the line-number gutter.
const GUTTER: usize = 6;

impl Changes {
    /// Draws the panel into `area` (inside its border), the commit dialog over it when
    /// open; `focused` when it has the keys. The file rows and diff rows drawn are recorded
    /// in `hits`, for clicks (not under the commit dialog).
    pub fn render(&self, area: Rect, buf: &mut Buffer, focused: bool, hits: &mut HitMap) {
        render(self, area, buf, focused, hits);
        render_commit(self, area, buf);
        if self.prompt.is_some() {
            // A prompt being typed (a comment is on a row) keeps its place.
            hits.cover(area);
        }
    }
}

/// Draws the panel into `area` (inside its border); `focused` when it has the keys.
fn render(changes: &Changes, area: Rect, buf: &mut Buffer, focused: bool, hits: &mut HitMap) {
    if area.height == 0 || area.width == 0 {
        return;
    }
    let mut y = area.y;
    let bottom = area.bottom();
    let prompt_row = changes
        .prompt
        .as_ref()
        .filter(|p| p.kind != PromptKind::Commit)
        .map(|_| bottom - 1);
    let end = prompt_row.unwrap_or(bottom);
    if let Some(error) = &changes.error {
        // Git's lines stay apart on the one row.
        let words: Vec<&str> = error
            .lines()
            .map(str::trim)
            .filter(|l| !l.is_empty())
            .collect();
        let line = Line::styled(
            format!("git: {}", words.join(" · ")),
            Style::default().fg(theme::FAILURE),
        );
        buf.set_line(area.x, y, &line, area.width);
        y += 1;
    } else if let Some(done) = &changes.done {
        let line = Line::styled(done.clone(), Style::default().fg(theme::SUCCESS));
        buf.set_line(area.x, y, &line, area.width);
        y += 1;
    } else if let Some(base) = &changes.snapshot.base {
        let short: String = base.chars().take(7).collect();
        let line = Line::styled(
            format!("The phase's changes since {short} (committed or not)"),
            Style::default().fg(theme::ACCENT),
        );
        buf.set_line(area.x, y, &line, area.width);
        y += 1;
    }
    let files = &changes.snapshot.files;
    if files.is_empty() {
        let text = if changes.loaded_once {
            "No uncommitted changes."
        } else {
            "Reading the changes…"
        };
        if y < end {
            buf.set_line(
                area.x,
                y,
                &Line::styled(text, Style::default().fg(theme::MUTED)),
                area.width,
            );
        }
    } else {
        y = render_list(
            changes,
            Rect::new(area.x, y, area.width, end.saturating_sub(y)),
            buf,
            focused,
            hits,
        );
        if let Some(file) = changes.selected_file()
            && y < end
        {
            buf.set_line(area.x, y, &title_line(file, area.width), area.width);
            y += 1;
            let diff = Rect::new(area.x, y, area.width, end.saturating_sub(y));
            render_diff(
                changes,
                file,
                diff,
                buf,
                focused && changes.pane == Pane::Diff,
                hits,
            );
        }
    }
    if let (Some(row), Some(prompt)) = (prompt_row, &changes.prompt) {
        let label = match prompt.kind {
            PromptKind::Comment { .. } => "comment (Enter saves, Esc drops): ",
            PromptKind::Search | PromptKind::Commit => {
                "search (Enter: next match; empty: the last search): "
            }
        };
        let line = Line::from(vec![
            Span::styled(label, Style::default().fg(theme::ACCENT)),
            Span::raw(prompt.edit.text().to_owned()),
            Span::styled("▏", Style::default().fg(theme::ACCENT)),
        ]);
        buf.set_line(area.x, row, &line, area.width);
    }
}

/// The number of file rows shown in an area `height` rows high.
pub fn list_height(files: usize, height: u16) -> u16 {
    let files = u16::try_from(files).unwrap_or(u16::MAX);
    files.min((height / 3).max(3))
}

/// Draws the file list; returns the row below it.
fn render_list(
    changes: &Changes,
    area: Rect,
    buf: &mut Buffer,
    focused: bool,
    hits: &mut HitMap,
) -> u16 {
    let files = &changes.snapshot.files;
    let kind_width = changes.snapshot.kind_width;
    let height = list_height(files.len(), area.height).min(area.height);
    let first = visible_from(0, changes.file, usize::from(height));
    for (row, (index, file)) in files
        .iter()
        .enumerate()
        .skip(first)
        .take(usize::from(height))
        .enumerate()
    {
        let selected = index == changes.file;
        let base = if selected {
            Style::default()
                .fg(theme::ON_HIGHLIGHT)
                .bg(if focused && changes.pane == Pane::List {
                    theme::ACCENT
                } else {
                    theme::SUBDUED
                })
        } else {
            Style::default()
        };
        let fold = if changes.folded.contains(&file.path) {
            "▸ "
        } else {
            "  "
        };
        let comments = changes
            .comments
            .iter()
            .filter(|c| c.path == file.path && !c.sent)
            .count();
        let mut spans = vec![
            Span::styled(fold, base),
            Span::styled(
                format!("{:<width$} ", kind_word(file), width = kind_width),
                base.fg(kind_colour(file, selected)),
            ),
            Span::styled(display_path(file), base),
            Span::styled(
                format!("  +{}", file.added),
                base.fg(if selected {
                    theme::ON_HIGHLIGHT
                } else {
                    theme::SUCCESS
                }),
            ),
            Span::styled(
                format!(" −{}", file.removed),
                base.fg(if selected {
                    theme::ON_HIGHLIGHT
                } else {
                    theme::FAILURE
                }),
            ),
        ];
        if comments > 0 {
            spans.push(Span::styled(
                format!("  {comments}✎"),
                base.fg(if selected {
                    theme::ON_HIGHLIGHT
                } else {
                    theme::ATTENTION
                }),
            ));
        }
        let y = area.y + u16::try_from(row).unwrap_or(0);
        buf.set_style(Rect::new(area.x, y, area.width, 1), base);
        buf.set_line(area.x, y, &Line::from(spans), area.width);
        hits.push(
            Rect::new(area.x, y, area.width, 1),
            Target::ChangesFile(index),
        );
    }
    area.y + height
}

/// The one row a summarised file shows: what it is and what `l` does, or, once asked for,
/// that it is being read (or cannot be).
fn summary_text(file: &FileDiff, loaded: bool) -> String {
    let Some(summary) = file.summary else {
        return String::new();
    };
    let what = summary.describe();
    match (summary, loaded) {
        (cp_git::Summary::Binary, false) => {
            format!("{what} not shown · l shows its sizes and changed bytes")
        }
        (cp_git::Summary::Unread, false) => format!("{what} · l reads it"),
        (cp_git::Summary::Binary | cp_git::Summary::Unread, true) => format!("{what} · reading…"),
        (_, true) => format!("{what}: too large to read here"),
        (_, false) => format!("{what} not shown · l shows it anyway"),
    }
}

fn kind_colour(file: &FileDiff, selected: bool) -> Color {
    if selected {
        return theme::ON_HIGHLIGHT;
    }
    if file.conflicted {
        return theme::CONFLICT;
    }
    if file.submodule {
        return theme::INFO;
    }
    match file.kind {
        cp_git::DiffKind::New => theme::SUCCESS,
        cp_git::DiffKind::Deleted => theme::FAILURE,
        cp_git::DiffKind::Renamed | cp_git::DiffKind::TypeChanged => theme::ASK,
        cp_git::DiffKind::Modified => theme::ATTENTION,
    }
}

fn display_path(file: &FileDiff) -> String {
    match &file.old_path {
        Some(old) => format!("{old} → {}", file.path),
        None => file.path.clone(),
    }
}

/// `── path · modified · +3 −1 ──────`
fn title_line(file: &FileDiff, width: u16) -> Line<'static> {
    let text = format!(
        "── {} · {} · +{} −{} ",
        display_path(file),
        kind_word(file),
        file.added,
        file.removed
    );
    let rule = usize::from(width).saturating_sub(text.chars().count());
    Line::styled(
        format!("{text}{}", "─".repeat(rule)),
        Style::default().fg(theme::MUTED),
    )
}

fn render_diff(
    changes: &Changes,
    file: &FileDiff,
    area: Rect,
    buf: &mut Buffer,
    focused: bool,
    hits: &mut HitMap,
) {
    let height = usize::from(area.height);
    let first = visible_from(changes.scroll, changes.cursor, height);
    let styled = changes.snapshot.styled.get(changes.file);
    for (offset, row) in changes.rows.iter().skip(first).take(height).enumerate() {
        let index = first + offset;
        let y = area.y + u16::try_from(offset).unwrap_or(0);
        let cursor = focused && index == changes.cursor;
        let line = match *row {
            Row::Header(h) => Line::styled(
                file.hunks[h].header.clone(),
                Style::default().fg(theme::ACCENT),
            ),
            Row::Line(h, l) => {
                let code = styled
                    .and_then(Option::as_deref)
                    .and_then(|s| s.get(h))
                    .and_then(|s| s.get(l))
                    .filter(|spans| !spans.is_empty());
                diff_line(changes, file, h, l, code, changes.hscroll)
            }
            Row::Comment(i) => comment_line(changes, i),
            Row::Folded => Line::styled(
                format!("▸ folded ({} lines) · Enter unfolds", file.line_count()),
                Style::default().fg(theme::MUTED),
            ),
            Row::Summary => Line::styled(
                summary_text(file, changes.loaded.contains(&file.path)),
                Style::default().fg(theme::ATTENTION),
            ),
            Row::Empty => Line::styled("(no content changes)", Style::default().fg(theme::MUTED)),
        };
        buf.set_line(area.x, y, &line, area.width);
        hits.push(Rect::new(area.x, y, area.width, 1), Target::DiffRow(index));
        if cursor {
            let width = u16::try_from(GUTTER).unwrap_or(6).min(area.width);
            buf.set_style(
                Rect::new(area.x, y, width, 1),
                Style::default().add_modifier(Modifier::REVERSED),
            );
        }
    }
}

fn diff_line(
    changes: &Changes,
    file: &FileDiff,
    h: usize,
    l: usize,
    code: Option<&Vec<Span<'static>>>,
    hscroll: usize,
) -> Line<'static> {
    let line = &file.hunks[h].lines[l];
    let (colour, bg) = match line.kind {
        LineKind::Added => (theme::SUCCESS, Some(ADDED_BG)),
        LineKind::Removed => (theme::FAILURE, Some(REMOVED_BG)),
        LineKind::Context => (theme::MUTED, None),
    };
    let number = line
        .new
        .map_or_else(|| " ".repeat(GUTTER - 1), |n| format!("{n:>5}"));
    let mark = changes
        .comments
        .iter()
        .filter(|c| c.path == file.path && c.is_on(line))
        .map(|c| c.sent)
        .min();
    let (mark, mark_style) = match mark {
        Some(false) => ("●", Style::default().fg(theme::ATTENTION)),
        Some(true) => ("✓", Style::default().fg(theme::MUTED)),
        None => (" ", Style::default()),
    };
    let mut spans = vec![
        Span::styled(number, Style::default().fg(colour)),
        Span::styled(mark, mark_style),
        Span::styled(
            line.kind.marker().to_string(),
            Style::default().fg(colour).add_modifier(Modifier::BOLD),
        ),
    ];
    let plain;
    let code = if let Some(code) = code {
        code.as_slice()
    } else {
        plain = [Span::styled(
            line.text.replace('\t', "    "),
            crate::markdown::highlight::PLAIN_CODE,
        )];
        &plain[..]
    };
    spans.extend(skip_columns(code, hscroll));
    let mut out = Line::from(spans);
    if let Some(bg) = bg {
        for span in out.spans.iter_mut().skip(2) {
            span.style = span.style.bg(bg);
        }
    }
    out
}

/// `spans` without their first `columns` display columns (a wide character cut in two
/// becomes a space, so the columns after it stay where they were).
fn skip_columns(spans: &[Span<'static>], columns: usize) -> Vec<Span<'static>> {
    if columns == 0 {
        return spans.to_vec();
    }
    let mut left = columns;
    let mut out = Vec::with_capacity(spans.len());
    for span in spans {
        if left == 0 {
            out.push(span.clone());
            continue;
        }
        let mut kept = String::new();
        for c in span.content.chars() {
            let width = unicode_width::UnicodeWidthChar::width(c).unwrap_or(0);
            if left == 0 {
                kept.push(c);
            } else if width > left {
                kept.extend(std::iter::repeat_n(' ', width - left));
                left = 0;
            } else {
                left -= width;
            }
        }
        if !kept.is_empty() {
            out.push(Span::styled(kept, span.style));
        }
    }
    out
}

fn comment_line(changes: &Changes, index: usize) -> Line<'static> {
    let Some(comment) = changes.comments.get(index) else {
        return Line::default();
    };
    let (label, style) = if comment.sent {
        ("✓ sent: ", Style::default().fg(theme::MUTED))
    } else {
        ("● ", Style::default().fg(theme::ATTENTION))
    };
    Line::from(vec![
        Span::raw(" ".repeat(GUTTER + 1)),
        Span::styled(format!("└ {label}{}", comment.text), style),
    ])
}

/// Files the commit dialog names before it says how many more.
const COMMIT_LISTED: usize = 8;

/// The commit dialog over `area`: the message, exactly the files the commit takes, what it
/// leaves out, and what Enter and Esc do.
fn render_commit(changes: &Changes, area: Rect, buf: &mut Buffer) {
    let Some(prompt) = changes
        .prompt
        .as_ref()
        .filter(|p| p.kind == PromptKind::Commit)
    else {
        return;
    };
    let dim = Style::default().fg(theme::MUTED);
    let snapshot = &changes.snapshot;
    let files = &snapshot.files;
    let mut text = vec![Line::from(vec![
        Span::raw(prompt.edit.text().to_owned()),
        Span::styled("▏", Style::default().fg(theme::ACCENT)),
    ])];
    if let (Some(subject), Some(pending)) = (&changes.prepared_subject, &snapshot.pending)
        && prompt.edit.text() == subject
    {
        text.push(Line::styled(
            format!(
                "git's message for the {} (MERGE_MSG); Enter commits it whole",
                pending.operation
            ),
            dim,
        ));
    }
    text.push(Line::default());
    text.push(Line::styled(
        format!(
            "Commits exactly these {} file(s), as the work tree has them (hooks run):",
            files.len()
        ),
        dim,
    ));
    let width = snapshot.kind_width;
    for file in files.iter().take(COMMIT_LISTED) {
        text.push(Line::from(vec![
            Span::styled(
                format!("  {:<width$} ", kind_word(file)),
                Style::default().fg(kind_colour(file, false)),
            ),
            Span::raw(display_path(file)),
        ]));
    }
    if files.len() > COMMIT_LISTED {
        text.push(Line::styled(
            format!("  … and {} more", files.len() - COMMIT_LISTED),
            dim,
        ));
    }
    if !snapshot.nested.is_empty() {
        text.push(Line::styled(
            format!(
                "Not committed: {} (a repository of its own)",
                snapshot
                    .nested
                    .iter()
                    .map(|n| format!("{n}/"))
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
            dim,
        ));
    }
    text.push(Line::styled("Enter commits · Esc cancels", dim));
    let width = area.width.saturating_sub(8).clamp(20, 90).min(area.width);
    let wanted = u16::try_from(text.len() + 2).unwrap_or(u16::MAX);
    let height = wanted.min(area.height);
    let popup = Rect {
        x: area.x + (area.width - width) / 2,
        y: area.y + (area.height - height) / 2,
        width,
        height,
    };
    Clear.render(popup, buf);
    Paragraph::new(text)
        .block(
            Block::default()
                .borders(Borders::ALL)
                .border_style(Style::default().fg(theme::ACCENT))
                .title(" Commit message "),
        )
        .render(popup, buf);
}
