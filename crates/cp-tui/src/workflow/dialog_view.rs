//! The workflow's approval dialog.

use cp_base::theme;
use ratatui::Frame;
use ratatui::layout::{Position, Rect};
use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Clear, Paragraph, Wrap};

use crate::hit_map::{HitMap, Target};
use crate::workflow::dialog::{ApprovalDialog, DialogFocus};

/// The keys line, naming only what this approval gate has: its number of options, and Tab only
/// when there are files to pick or an option that takes feedback.
fn hint(request: &cp_orchestrate::ApprovalRequest) -> String {
    let count = request.choices.len().min(9);
    let digits = if count > 1 {
        format!("↑↓/1-{count} choose · ")
    } else {
        String::new()
    };
    let files = !request.files.is_empty();
    let feedback = request.choices.iter().any(|c| c.with_feedback);
    let tab = match (files, feedback) {
        (true, true) => "Tab files/feedback · ",
        (true, false) => "Tab files · ",
        (false, true) => "Tab feedback · ",
        (false, false) => "",
    };
    let review = if request
        .choices
        .iter()
        .any(|c| c.with_feedback && c.action == cp_orchestrate::Action::RepeatPhase)
    {
        "F3 review · "
    } else {
        ""
    };
    format!("{digits}Enter confirm · {tab}{review}Esc hide (F2 shows)")
}

/// Draws the dialog and records its files and options in `hits`, so a click picks one.
pub fn render(dialog: &ApprovalDialog, area: Rect, frame: &mut Frame, hits: &mut HitMap) {
    let request = &dialog.request;
    let width = area.width.saturating_sub(10).clamp(30, 90);
    let height = area.height.saturating_sub(4).clamp(8, 30);
    let popup = crate::popup::centered(area, width, height);
    frame.render_widget(Clear, popup);
    let title = format!(
        " Approval gate · phase {} · iteration {} ",
        request.phase_id, request.iteration
    );
    let block = Block::default()
        .borders(Borders::ALL)
        .border_style(Style::default().fg(theme::ASK))
        .title(title);
    let inner = block.inner(popup);
    frame.render_widget(block, popup);

    let bold = Style::default().add_modifier(Modifier::BOLD);
    let dim = Style::default().fg(theme::MUTED);
    let highlight = Style::default()
        .fg(theme::ON_HIGHLIGHT)
        .bg(theme::ASK)
        .add_modifier(Modifier::BOLD);
    let mut lines = vec![Line::styled(request.prompt.clone(), bold), Line::default()];
    // Which line shows which file or option, for the hit map.
    let mut clickable = Vec::new();
    if !request.files.is_empty() {
        lines.push(Line::styled(
            "Files to review (Tab to pick, Enter opens):",
            dim,
        ));
        for (i, file) in request.files.iter().enumerate() {
            let style = if dialog.focus == DialogFocus::Files && i == dialog.file {
                highlight
            } else {
                Style::default()
            };
            clickable.push((lines.len(), Target::DialogFile(i)));
            lines.push(Line::styled(format!("  {file}"), style));
        }
        lines.push(Line::default());
    }
    for (i, choice) in request.choices.iter().enumerate() {
        let selected = i == dialog.selected;
        let style = if selected && dialog.focus == DialogFocus::Options {
            highlight
        } else if selected {
            bold
        } else {
            Style::default()
        };
        let feedback = if choice.with_feedback {
            "  (+ feedback)"
        } else {
            ""
        };
        clickable.push((lines.len(), Target::DialogChoice(i)));
        lines.push(Line::from(vec![
            Span::styled(format!(" {} ", i + 1), dim),
            Span::styled(choice.label.clone(), style),
            Span::styled(feedback, dim),
        ]));
    }
    let feedback_row = if dialog.needs_feedback() {
        lines.push(Line::default());
        lines.push(Line::styled("Feedback (passed into the next phase):", dim));
        let style = if dialog.focus == DialogFocus::Feedback {
            Style::default().fg(theme::ASK)
        } else {
            Style::default()
        };
        let text = dialog.feedback.text().replace('\n', " ⏎ ");
        lines.push(Line::styled(format!("› {text}"), style));
        Some(lines.len() - 1)
    } else {
        None
    };
    lines.push(Line::default());
    lines.push(footer(dialog, dim));
    record_rows(&lines, clickable, inner, hits);
    frame.render_widget(Paragraph::new(lines).wrap(Wrap { trim: false }), inner);
    if let (Some(row), DialogFocus::Feedback) = (feedback_row, dialog.focus) {
        // The feedback is shown on one line, its line breaks as ` ⏎ `.
        let before = dialog.feedback.before_cursor().replace('\n', " ⏎ ");
        let col =
            2 + u16::try_from(unicode_width::UnicodeWidthStr::width(before.as_str())).unwrap_or(0);
        let y = inner.y + u16::try_from(row).unwrap_or(0);
        if y < inner.bottom() {
            frame.set_cursor_position(Position {
                x: (inner.x + col).min(inner.right().saturating_sub(1)),
                y,
            });
        }
    }
}

/// Records where each clickable line lands once the paragraph wraps it into `inner`:
/// ratatui wraps every line on its own, so a line's first row is the sum of the rows of the
/// lines before it, each counted with the same wrapping the paragraph draws with.
fn record_rows(
    lines: &[Line<'_>],
    clickable: Vec<(usize, Target)>,
    inner: Rect,
    hits: &mut HitMap,
) {
    let rows: Vec<usize> = lines
        .iter()
        .map(|line| {
            Paragraph::new(line.clone())
                .wrap(Wrap { trim: false })
                .line_count(inner.width)
        })
        .collect();
    for (index, target) in clickable {
        let top = rows[..index].iter().sum::<usize>();
        let y = inner
            .y
            .saturating_add(u16::try_from(top).unwrap_or(u16::MAX));
        if y >= inner.bottom() {
            continue;
        }
        let height = u16::try_from(rows[index])
            .unwrap_or(u16::MAX)
            .min(inner.bottom() - y);
        hits.push(Rect::new(inner.x, y, inner.width, height), target);
    }
}

/// The last line: the keys, or the question that confirms an abort.
fn footer(dialog: &ApprovalDialog, dim: Style) -> Line<'static> {
    let request = &dialog.request;
    if dialog.confirm_abort {
        let label = request
            .choices
            .get(dialog.selected)
            .map_or("Abort", |c| c.label.as_str());
        Line::styled(
            format!("“{label}” aborts the workflow run. Enter confirms · any other key goes back"),
            Style::default()
                .fg(theme::STRONG)
                .bg(theme::FAILURE)
                .add_modifier(Modifier::BOLD),
        )
    } else {
        Line::styled(hint(request), dim)
    }
}

#[cfg(test)]
mod tests {
    use cp_orchestrate::{Action as Step, ApprovalRequest, Choice};

    use super::hint;

    fn choice(label: &str, with_feedback: bool, action: Step) -> Choice {
        Choice {
            label: label.into(),
            with_feedback,
            action,
        }
    }

    #[test]
    fn the_hint_names_only_what_the_approval_gate_offers() {
        let mut request = ApprovalRequest {
            worktree: None,
            base_commit: None,
            run_id: "r".into(),
            phase_id: "p".into(),
            iteration: 1,
            approval: true,
            prompt: "Go on?".into(),
            files: Vec::new(),
            choices: vec![
                choice("Continue", false, Step::Continue),
                choice("Abort", false, Step::Abort),
            ],
        };
        assert_eq!(
            hint(&request),
            "↑↓/1-2 choose · Enter confirm · Esc hide (F2 shows)"
        );
        request.files.push("plan.md".into());
        request
            .choices
            .push(choice("Redo", true, Step::RepeatPhase));
        assert_eq!(
            hint(&request),
            "↑↓/1-3 choose · Enter confirm · Tab files/feedback · F3 review · Esc hide (F2 shows)"
        );
    }
}
