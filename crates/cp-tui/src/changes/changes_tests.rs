//! Screen tests of the Changes panel: the file list, the diff with its colours, a folded
//! file, a summarised large diff, a comment (marked, counted, saved), and the keys.

use cp_base::theme;
use std::fmt::Write as _;
use std::path::PathBuf;
use std::sync::Arc;

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use ratatui::buffer::Buffer;

use crate::changes::changes_view::{ADDED_BG, REMOVED_BG};
use crate::changes::snapshot::Snapshot;
use crate::changes::{self, Pane};
use crate::keymap::map_key;
use crate::tests::app;
use crate::{Action, App, render};

const DIFF: &str = "diff --git a/src/lib.rs b/src/lib.rs
index 1111111..2222222 100644
--- a/src/lib.rs
+++ b/src/lib.rs
@@ -1,5 +1,6 @@
 fn main() {
-    let x = 1;
+    let count = 1;
+    println!(\"{count}\");
 }
 
@@ -20,3 +21,3 @@ fn helper() {
 fn helper() {
-    old();
+    new();
 }
diff --git a/notes.md b/notes.md
new file mode 100644
index 0000000..3333333
--- /dev/null
+++ b/notes.md
@@ -0,0 +1,2 @@
+# Notes
+remember the milk
";

fn snapshot(diff: &str) -> Arc<Snapshot> {
    Arc::new(Snapshot::new(
        PathBuf::from("/home/dev/demo"),
        cp_git::parse_diff(diff),
    ))
}

/// An app showing the Changes panel with `diff`, the panel having the keys.
fn review_app(diff: &str) -> App {
    let mut app = app(false);
    app.changes.set_snapshot(snapshot(diff));
    app.changes.select_file(0);
    app.apply(Action::FocusNext);
    app.select(changes::ID);
    app.apply(Action::Submit); // Enter gives the panel the keys
    assert_eq!(app.key_context(), crate::KeyContext::Changes);
    app
}

fn key(app: &mut App, code: KeyCode) {
    let event = KeyEvent::new(code, KeyModifiers::NONE);
    if let Some(action) = map_key(event, app.key_context()) {
        app.apply(action);
    }
}

fn keys(app: &mut App, text: &str) {
    for c in text.chars() {
        key(app, KeyCode::Char(c));
    }
}

fn frame(app: &App) -> Buffer {
    let mut terminal = Terminal::new(TestBackend::new(100, 24)).unwrap();
    terminal.draw(|frame| render(app, frame)).unwrap();
    terminal.backend().buffer().clone()
}

fn text(buffer: &Buffer) -> String {
    let area = buffer.area;
    let mut out = String::new();
    for y in 0..area.height {
        let row: String = (0..area.width)
            .map(|x| buffer[(x, y)].symbol().to_owned())
            .collect();
        let _ = writeln!(out, "{row:?}");
    }
    out
}

/// The first cell at or after column `from` on the row holding `needle`.
fn cell_of<'a>(buffer: &'a Buffer, needle: &str, column_of: &str) -> &'a ratatui::buffer::Cell {
    let area = buffer.area;
    for y in 0..area.height {
        let row: String = (0..area.width).map(|x| buffer[(x, y)].symbol()).collect();
        if row.contains(needle) {
            let chars: Vec<char> = row.chars().collect();
            let target: Vec<char> = column_of.chars().collect();
            let x = chars
                .windows(target.len())
                .position(|w| w == target.as_slice())
                .unwrap();
            return &buffer[(u16::try_from(x).unwrap(), y)];
        }
    }
    panic!("no row with {needle:?}:\n{}", text(buffer));
}

/// The row holding `needle`.
fn row_text(buffer: &Buffer, needle: &str) -> String {
    let area = buffer.area;
    (0..area.height)
        .map(|y| {
            (0..area.width)
                .map(|x| buffer[(x, y)].symbol())
                .collect::<String>()
        })
        .find(|row| row.contains(needle))
        .unwrap_or_else(|| panic!("no row with {needle:?}:\n{}", text(buffer)))
}

/// An app showing `diff` whose reading is changed by `edit` first.
fn review_app_with(diff: &str, edit: impl FnOnce(&mut Snapshot)) -> App {
    let mut app = review_app(diff);
    let mut snapshot = Snapshot::new(PathBuf::from("/home/dev/demo"), cp_git::parse_diff(diff));
    edit(&mut snapshot);
    app.changes.set_snapshot(Arc::new(snapshot));
    app
}

#[test]
fn the_commit_dialog_lists_exactly_the_files_it_commits_and_what_it_leaves_out() {
    let mut app = review_app_with(DIFF, |s| s.nested = vec!["vendor".into(), "wt".into()]);
    keys(&mut app, "C");
    let buffer = frame(&app);
    let screen = text(&buffer);
    assert!(
        screen.contains("Commits exactly these 2 file(s)"),
        "{screen}"
    );
    assert!(row_text(&buffer, "src/lib.rs").contains("modified src/lib.rs"));
    assert!(row_text(&buffer, "  new      notes.md").contains("notes.md"));
    assert!(screen.contains("Not committed: vendor/, wt/"), "{screen}");
    assert!(!screen.contains("git add -A"), "{screen}");
}

#[test]
fn during_a_merge_the_dialog_offers_git_s_message_and_conflicts_are_refused_by_name() {
    let pending = cp_git::Pending {
        operation: "merge",
        message: Some("Merge branch 'other'\n\n# Conflicts:\n#\tsrc/lib.rs\n".into()),
        message_file: PathBuf::from("/home/dev/demo/.git/MERGE_MSG"),
    };
    let mut app = review_app_with(DIFF, |s| s.pending = Some(pending.clone()));
    keys(&mut app, "C");
    let screen = text(&frame(&app));
    assert!(screen.contains("Merge branch 'other'"), "{screen}");
    assert!(
        screen.contains("git's message for the merge (MERGE_MSG)"),
        "{screen}"
    );
    app.apply(Action::Back);

    let mut app = review_app_with(DIFF, |s| {
        s.pending = Some(pending);
        s.files[0].conflicted = true;
    });
    keys(&mut app, "C");
    assert!(app.changes.prompt.is_none(), "no commit dialog");
    let buffer = frame(&app);
    let row = row_text(&buffer, "git:");
    assert!(row.contains("unresolved conflicts in src/lib.rs"), "{row}");
    assert!(row_text(&buffer, "conflicted").contains("conflicted src/lib.rs"));
    // Nor is a conflicted file reverted: the panel says why and asks nothing.
    keys(&mut app, "r");
    assert!(app.changes.pending.is_none());
    let row = row_text(&frame(&app), "git:");
    assert!(row.contains("unresolved merge conflict"), "{row}");
}

#[test]
fn a_binary_file_says_what_l_shows_and_then_its_sizes_and_bytes() {
    let diff = "diff --git a/logo.png b/logo.png
index 1111111..2222222 100644
Binary files a/logo.png and b/logo.png differ
";
    let mut app = review_app(diff);
    let screen = text(&frame(&app));
    assert!(
        screen.contains("binary file not shown · l shows its sizes and changed bytes"),
        "{screen}"
    );
    keys(&mut app, "l");
    assert!(app.changes.loaded.contains("logo.png"));
    assert!(app.changes.refresh.wanted || app.changes.refresh.running.is_some());
    assert!(text(&frame(&app)).contains("binary file · reading…"));
}

#[test]
fn the_panel_lists_the_files_and_shows_the_diff_in_colour() {
    let app = review_app(DIFF);
    let buffer = frame(&app);
    insta::assert_snapshot!(text(&buffer));
    // Added lines: a green marker on a green background; removed: red on red.
    let plus = cell_of(&buffer, "let count", "+");
    assert_eq!(plus.fg, theme::SUCCESS);
    assert_eq!(plus.bg, ADDED_BG);
    let code = cell_of(&buffer, "let count", "count");
    assert_eq!(code.bg, ADDED_BG);
    assert_ne!(code.fg, theme::SUCCESS, "the code keeps its syntax colour");
    let minus = cell_of(&buffer, "let x", "-");
    assert_eq!(minus.fg, theme::FAILURE);
    assert_eq!(minus.bg, REMOVED_BG);
    // The sidebar counts the changed files.
    assert!(
        text(&buffer).contains("Changes              2"),
        "{}",
        text(&buffer)
    );
}

#[test]
fn a_folded_file_shows_one_line_and_a_marker_in_the_list() {
    let mut app = review_app(DIFF);
    key(&mut app, KeyCode::Enter);
    assert!(app.changes.folded.contains("src/lib.rs"));
    insta::assert_snapshot!(text(&frame(&app)));
    key(&mut app, KeyCode::Enter);
    assert!(app.changes.folded.is_empty());
}

#[test]
fn a_long_diff_is_a_summary_until_loaded() {
    let mut lines = String::new();
    for i in 1..=5_001 {
        let _ = writeln!(lines, "+line {i}");
    }
    let diff = format!(
        "diff --git a/big.txt b/big.txt\nnew file mode 100644\n--- /dev/null\n+++ b/big.txt\n@@ -0,0 +1,5001 @@\n{lines}"
    );
    let mut files = cp_git::parse_diff(&diff);
    files[0].summary = Some(cp_git::Summary::ManyLines(5_001));
    let mut app = app(false);
    app.changes
        .set_snapshot(Arc::new(Snapshot::new(PathBuf::from("/x"), files)));
    app.apply(Action::FocusNext);
    app.select(changes::ID);
    app.apply(Action::Submit);
    insta::assert_snapshot!(text(&frame(&app)));
    keys(&mut app, "l");
    let screen = text(&frame(&app));
    assert!(screen.contains("line 1 "), "{screen}");
    assert!(!screen.contains("not shown"), "{screen}");
}

#[test]
fn a_comment_is_marked_counted_and_saved() {
    let mut app = review_app(DIFF);
    // Into the diff, on the first change: `-    let x = 1;`, then down to the added line.
    key(&mut app, KeyCode::Tab);
    assert_eq!(app.changes.pane, Pane::Diff);
    key(&mut app, KeyCode::Down);
    keys(&mut app, "c");
    assert_eq!(app.key_context(), crate::KeyContext::Text);
    keys(&mut app, "name it total");
    // Readline keys work in the comment: Ctrl-W deletes the last word.
    let ctrl_w = KeyEvent::new(KeyCode::Char('w'), KeyModifiers::CONTROL);
    let action = map_key(ctrl_w, app.key_context()).unwrap();
    app.apply(action);
    keys(&mut app, "sum");
    key(&mut app, KeyCode::Enter);
    let buffer = frame(&app);
    insta::assert_snapshot!(text(&buffer));
    assert_eq!(app.changes.comments.len(), 1);
    let comment = &app.changes.comments[0];
    assert_eq!(comment.location(), "src/lib.rs:2");
    assert_eq!(comment.text, "name it sum");
    assert_eq!(app.changes.badge().as_deref(), Some("2 · 1✎"));
    // The comment is part of the saved state, so it survives a reload and a restart.
    assert_eq!(app.saved_state().review_comments.len(), 1);
    let mut restored = crate::tests::app(false);
    restored.apply_saved_state(app.saved_state());
    assert_eq!(restored.changes.comments, app.changes.comments);
    // `x` on the line drops it.
    keys(&mut app, "x");
    assert!(app.changes.comments.is_empty());
}

#[test]
fn hunk_keys_move_between_hunks_and_files_and_search_finds_text() {
    let mut app = review_app(DIFF);
    keys(&mut app, "n");
    assert_eq!(app.changes.pane, Pane::Diff);
    assert_eq!(app.changes.cursor_hunk(), Some(1));
    keys(&mut app, "n");
    assert_eq!(app.changes.file, 1, "past the last hunk: the next file");
    keys(&mut app, "p");
    assert_eq!(app.changes.file, 0);
    assert_eq!(app.changes.cursor_hunk(), Some(1));
    keys(&mut app, "/milk");
    key(&mut app, KeyCode::Enter);
    assert_eq!(app.changes.file, 1);
    let (h, l) = app.changes.cursor_line().unwrap();
    assert_eq!(
        app.changes.selected_file().unwrap().hunks[h].lines[l].text,
        "remember the milk"
    );
    key(&mut app, KeyCode::Left);
    assert_eq!(app.changes.pane, Pane::List);
    key(&mut app, KeyCode::Up);
    assert_eq!(app.changes.file, 0);
    // Digits still pick another panel.
    keys(&mut app, "1");
    assert_eq!(app.selected(), "conversation");
}

#[test]
fn revert_asks_first_showing_what_will_be_lost() {
    let mut app = review_app(DIFF);
    keys(&mut app, "n");
    keys(&mut app, "r");
    let Some(crate::popup::Confirm::Revert(question)) = &app.modal.confirm else {
        panic!("no question: {:?}", app.modal.confirm);
    };
    assert!(question.contains("hunk 2 of src/lib.rs"), "{question}");
    assert!(question.contains("-    old();\n+    new();"), "{question}");
    // No: nothing runs.
    app.apply(Action::No);
    assert!(app.changes.pending.is_none());
    assert!(!app.changes.acting);
}

#[test]
fn the_help_overlay_lists_the_panels_keys() {
    let mut app = review_app(DIFF);
    key(&mut app, KeyCode::F(1));
    let rows = crate::keymap::help_rows(crate::KeyContext::Changes, crate::app::commands::doc);
    for label in ["n", "p", "c", "S", "r", "C", "Enter", "/", "l"] {
        assert!(
            rows.iter().any(|(k, _)| *k == label),
            "{label} missing: {rows:?}"
        );
    }
    assert!(app.modal.help.is_some());
}

#[test]
fn at_an_approval_gate_f3_reviews_and_s_sends_the_comments_as_repeat_feedback() {
    let mut app = app(false);
    app.changes.set_snapshot(snapshot(DIFF));
    app.changes.select_file(0);
    let (reply, answers) = std::sync::mpsc::channel();
    app.modal.dialog = Some(crate::workflow::dialog::ApprovalDialog::new(
        crate::tests::approval_request(),
        reply,
    ));
    key(&mut app, KeyCode::F(3));
    assert_eq!(app.selected(), changes::ID);
    assert!(app.modal.dialog.as_ref().is_some_and(|d| d.hidden));
    keys(&mut app, "/helper");
    key(&mut app, KeyCode::Enter);
    keys(&mut app, "crename it");
    key(&mut app, KeyCode::Enter);
    keys(&mut app, "S");
    let answer = answers.try_recv().unwrap().unwrap();
    assert_eq!(answer.choice, 1, "the option that repeats the phase");
    let feedback = answer.feedback.unwrap();
    assert!(feedback.contains("src/lib.rs:21"), "{feedback}");
    assert!(feedback.contains("Comment: rename it"), "{feedback}");
    assert!(app.modal.dialog.is_none());
    assert!(app.changes.comments.iter().all(|c| c.sent));
}

#[test]
fn comments_sent_while_the_agent_works_wait_for_its_turn_to_end_and_the_status_bar_says_so() {
    let mut app = review_app(DIFF);
    // Without an agent nothing is sent.
    keys(&mut app, "/helper");
    key(&mut app, KeyCode::Enter);
    keys(&mut app, "crename it");
    key(&mut app, KeyCode::Enter);
    keys(&mut app, "S");
    assert!(!app.changes.comments[0].sent);
    // An agent that is working: the comments are queued, and the status bar says so.
    let config = cp_llm::test_support::anthropic_config("http://127.0.0.1:9");
    let provider: Arc<dyn cp_llm::Provider> = Arc::from(cp_llm::connect(config));
    let agent = app.parts_for_test().2;
    *agent = crate::AgentState::new(Some(provider), None);
    agent.turn = Some(crate::agent::running_turn::RunningTurn {
        cancel: cp_llm::CancelToken::new(),
        stop: cp_orchestrate::StopHandle::default(),
    });
    keys(&mut app, "S");
    assert!(app.changes.send_queued);
    assert!(!app.changes.comments[0].sent);
    let screen = text(&frame(&app));
    assert!(screen.contains("review comments wait"), "{screen}");
    // The turn ends: the comments go as the person's next message.
    app.handle(crate::AppEvent::Agent(cp_agent::AgentEvent::Finished(
        cp_agent::TurnEnd::Done,
    )));
    assert!(!app.changes.send_queued);
    assert!(app.changes.comments[0].sent);
    let (conversation, _, agent) = app.parts_for_test();
    let sent = conversation
        .entries()
        .iter()
        .rev()
        .find_map(|e| match e {
            crate::Entry::User(text) => Some(text.clone()),
            _ => None,
        })
        .expect("the comments as a message");
    assert!(sent.contains("src/lib.rs:21"), "{sent}");
    assert!(sent.contains("Comment: rename it"), "{sent}");
    assert!(agent.running(), "the next turn started");
    agent.turn = None;
}

#[test]
fn a_failing_git_shows_its_words_in_red_at_the_top_of_the_panel() {
    let mut app = review_app(DIFF);
    app.handle(crate::AppEvent::Changes(
        crate::changes::msg::ChangesMsg::Done {
            action: crate::changes::msg::Action::Commit {
                message: cp_git::CommitMessage::Typed("x".into()),
                files: Vec::new(),
            },
            result: Err(cp_git::ReviewError::Git {
                args: "commit -q".into(),
                stderr: "lint says no\nsee the hook's log".into(),
            }),
        },
    ));
    let buffer = frame(&app);
    let cell = cell_of(&buffer, "lint says no", "git:");
    assert_eq!(cell.fg, theme::FAILURE);
    // Git's lines stay apart on the one row.
    assert!(
        row_text(&buffer, "git:").contains("lint says no · see the hook's log"),
        "{}",
        row_text(&buffer, "git:")
    );
    assert!(!app.changes.acting);
}

#[test]
fn a_new_reading_reuses_the_highlighting_of_unchanged_files() {
    let first = snapshot(DIFF);
    let again = Snapshot::reusing(PathBuf::from("/x"), cp_git::parse_diff(DIFF), &first);
    assert_eq!(again.styled, first.styled);
    let changed = DIFF.replace("remember the milk", "remember the bread");
    let third = Snapshot::reusing(PathBuf::from("/x"), cp_git::parse_diff(&changed), &first);
    assert_eq!(third.styled[0], first.styled[0], "src/lib.rs is the same");
    assert_ne!(third.styled[1], first.styled[1], "notes.md changed");
}

#[test]
fn in_the_sidebar_j_passes_over_the_panel_enter_gives_it_the_keys_esc_takes_them_back() {
    let mut app = app(true);
    app.changes.set_snapshot(snapshot(DIFF));
    app.apply(Action::FocusNext);
    app.apply(Action::SelectPanel(2)); // Checkpoint
    key(&mut app, KeyCode::Down);
    assert_eq!(app.selected(), changes::ID);
    assert_eq!(app.key_context(), crate::KeyContext::Sidebar);
    key(&mut app, KeyCode::Down);
    assert_eq!(app.selected(), "console:a", "the dynamic panels follow it");
    key(&mut app, KeyCode::Up);
    key(&mut app, KeyCode::Enter);
    assert_eq!(app.key_context(), crate::KeyContext::Changes);
    key(&mut app, KeyCode::Down);
    assert_eq!(app.selected(), changes::ID, "j moves in the panel now");
    key(&mut app, KeyCode::Esc);
    assert_eq!(app.key_context(), crate::KeyContext::Sidebar);
    assert_eq!(app.selected(), changes::ID);
}

/// Draws `app` as [`frame`] does, handing it the frame's hit map for clicks.
fn frame_and_map(app: &mut App) -> Buffer {
    let mut terminal = Terminal::new(TestBackend::new(100, 24)).unwrap();
    let mut hits = None;
    terminal
        .draw(|frame| hits = Some(crate::render_and_map(app, frame)))
        .unwrap();
    app.set_hit_map(hits.unwrap());
    terminal.backend().buffer().clone()
}

/// The cell where `needle` starts, right of the sidebar.
fn at(buffer: &Buffer, needle: &str) -> (u16, u16) {
    for y in 0..buffer.area.height {
        let row: String = (0..buffer.area.width)
            .map(|x| buffer[(x, y)].symbol().to_owned())
            .collect();
        if let Some(found) = row.find(needle) {
            let column = u16::try_from(row[..found].chars().count()).unwrap();
            if column > 26 {
                return (column, y);
            }
        }
    }
    panic!("no {needle:?}:\n{}", text(buffer));
}

#[test]
fn a_click_selects_a_file_of_the_list_or_a_line_of_the_diff() {
    let mut app = review_app(DIFF);
    // The panel does not have the keys: a click gives them back.
    app.apply(Action::FocusNext);
    let buffer = frame_and_map(&mut app);
    let (column, row) = at(&buffer, "notes.md");
    app.apply(Action::Click { column, row });
    assert_eq!(app.key_context(), crate::KeyContext::Changes);
    assert_eq!((app.changes.file, app.changes.pane), (1, Pane::List));
    let buffer = frame_and_map(&mut app);
    let (column, row) = at(&buffer, "remember the milk");
    app.apply(Action::Click { column, row });
    assert_eq!(app.changes.pane, Pane::Diff);
    let file = app.changes.selected_file().unwrap();
    let changes::rows::Row::Line(h, l) = app.changes.rows[app.changes.cursor] else {
        panic!("the cursor is not on a line: {:?}", app.changes.rows);
    };
    assert_eq!(file.hunks[h].lines[l].text, "remember the milk");
}

#[test]
fn right_in_the_diff_scrolls_a_long_line_and_left_scrolls_back_then_leaves() {
    let tail = "the end of a very long line";
    let long = format!("+let s = \"{}{tail}\";\n", "x".repeat(120));
    let diff = format!(
        "diff --git a/long.rs b/long.rs\nnew file mode 100644\nindex 0000000..4444444\n--- /dev/null\n+++ b/long.rs\n@@ -0,0 +1,1 @@\n{long}"
    );
    let mut app = review_app(&diff);
    assert!(!text(&frame(&app)).contains(tail));
    key(&mut app, KeyCode::Right);
    assert_eq!((app.changes.pane, app.changes.hscroll), (Pane::Diff, 0));
    key(&mut app, KeyCode::Right);
    assert_eq!(app.changes.hscroll, changes::HSCROLL_STEP);
    let mut shown = text(&frame(&app));
    for _ in 0..20 {
        if shown.contains(tail) {
            break;
        }
        key(&mut app, KeyCode::Right);
        shown = text(&frame(&app));
    }
    assert!(shown.contains(tail), "{shown}");
    // The gutter (line number, marker) stays while the code moves.
    assert!(shown.contains("    1 +xxxx"), "{shown}");
    // Never past the widest line.
    for _ in 0..40 {
        key(&mut app, KeyCode::Right);
    }
    assert!(app.changes.hscroll < long.len(), "{}", app.changes.hscroll);
    while app.changes.hscroll > 0 {
        key(&mut app, KeyCode::Left);
        assert_eq!(app.changes.pane, Pane::Diff);
    }
    key(&mut app, KeyCode::Left);
    assert_eq!(app.changes.pane, Pane::List);
}

#[test]
fn a_reading_highlights_a_bounded_number_of_new_lines_the_selected_file_first() {
    let file = |name: &str| {
        let mut out = format!(
            "diff --git a/{name} b/{name}\nnew file mode 100644\n--- /dev/null\n+++ b/{name}\n@@ -0,0 +1,3000 @@\n"
        );
        for i in 0..3_000 {
            let _ = writeln!(out, "+let x{i} = {i};");
        }
        out
    };
    let diff = format!("{}{}{}", file("a.rs"), file("b.rs"), file("c.rs"));
    let review = |previous: &Snapshot, selected| {
        let reading = cp_git::Review {
            files: cp_git::parse_diff(&diff),
            ..cp_git::Review::default()
        };
        Snapshot::of_review(PathBuf::from("/x"), reading, previous, selected)
    };
    let done = |s: &Snapshot| s.styled.iter().map(Option::is_some).collect::<Vec<_>>();
    let first = review(&Snapshot::default(), Some("c.rs"));
    assert_eq!(done(&first), [false, false, true]);
    let second = review(&first, Some("c.rs"));
    assert_eq!(done(&second), [true, false, true]);
    assert!(std::sync::Arc::ptr_eq(
        second.styled[2].as_ref().unwrap(),
        first.styled[2].as_ref().unwrap()
    ));
    assert_eq!(done(&review(&second, None)), [true, true, true]);
}
