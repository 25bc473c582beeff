//! Mouse clicks on whole screens: the frame is drawn with `TestBackend`, the click lands on a
//! cell found in the drawn buffer, and the app acts on what the frame's hit map says is there.

use std::sync::mpsc;

use ratatui::Terminal;
use ratatui::backend::TestBackend;
use ratatui::buffer::Buffer;

use crate::tests::{app, approval_request};
use crate::{Action, App, render_and_map};

/// Draws `app` at 100×30, hands it the frame's hit map, and returns the drawn buffer.
fn draw(app: &mut App) -> Buffer {
    let mut terminal = Terminal::new(TestBackend::new(100, 30)).unwrap();
    let mut hits = None;
    terminal
        .draw(|frame| hits = Some(render_and_map(app, frame)))
        .unwrap();
    app.set_hit_map(hits.unwrap());
    terminal.backend().buffer().clone()
}

/// The cell where `text` starts on screen (the first match, row by row), within columns
/// `from..to`.
fn find(buf: &Buffer, text: &str, from: u16, to: u16) -> (u16, u16) {
    for y in 0..buf.area.height {
        let row: String = (from..to.min(buf.area.width))
            .map(|x| buf[(x, y)].symbol().to_owned())
            .collect();
        if let Some(at) = row.find(text) {
            let column = from + u16::try_from(row[..at].chars().count()).unwrap();
            return (column, y);
        }
    }
    panic!("`{text}` is not on screen");
}

fn click(app: &mut App, (column, row): (u16, u16)) {
    app.apply(Action::Click { column, row });
}

#[test]
fn clicking_a_sidebar_entry_selects_its_panel_and_the_input_takes_the_focus_back() {
    let mut app = app(true);
    let buf = draw(&mut app);
    assert_eq!(app.selected(), "conversation");
    // The sidebar is the left 26 columns; the panel title would match in the main area.
    let row = find(&buf, "npm test", 0, 26);
    click(&mut app, row);
    assert_eq!(app.selected(), "console:b");
    assert_eq!(app.key_context(), crate::KeyContext::Sidebar);
    let buf = draw(&mut app);
    // The main area now shows the clicked panel, with its title in the border.
    find(&buf, " npm test ", 26, 100);
    find(&buf, "1 failing", 26, 100);
    let input = find(&buf, "Message", 26, 100);
    click(&mut app, (input.0, input.1 + 1));
    assert_eq!(app.key_context(), crate::KeyContext::Text);
    // A click on the panel area gives it the keys (scrolling, closing).
    click(&mut app, (60, 5));
    assert_eq!(app.key_context(), crate::KeyContext::Sidebar);
}

#[test]
fn the_hit_map_matches_every_sidebar_row_drawn() {
    let mut app = app(true);
    let buf = draw(&mut app);
    for (title, id) in [
        ("Conversation", "conversation"),
        ("Callbacks", "callbacks"),
        ("Checkpoint", "checkpoint"),
        ("cargo build", "console:a"),
        ("npm test", "console:b"),
    ] {
        let (column, row) = find(&buf, title, 0, 26);
        app.apply(Action::Click { column, row });
        assert_eq!(app.selected(), id, "clicking `{title}`");
        app.apply(Action::Click { column: 24, row });
        assert_eq!(
            app.selected(),
            id,
            "the whole row of `{title}` is clickable"
        );
    }
}

#[test]
fn clicking_a_dialog_option_chooses_it_and_the_screen_behind_is_not_clickable() {
    let mut app = app(true);
    let (reply, answers) = mpsc::channel();
    let mut request = approval_request();
    // A prompt that wraps over several rows: the options' rows follow the wrapping.
    request.prompt = "Review finished. ".repeat(20);
    *app.parts_for_test().1 = Some(crate::workflow::dialog::ApprovalDialog::new(request, reply));
    let buf = draw(&mut app);
    // The sidebar is under the dialog's cover: a click there changes nothing.
    let hidden = (1, 5);
    click(&mut app, hidden);
    assert_eq!(app.selected(), "conversation");
    // "Review again" takes feedback: a click on it moves the focus to the feedback line.
    let again = find(&buf, "Review again", 0, 100);
    click(&mut app, again);
    let dialog = app.parts_for_test().1.as_ref().unwrap();
    assert_eq!(dialog.selected, 1);
    assert_eq!(dialog.focus, crate::workflow::dialog::DialogFocus::Feedback);
    assert!(answers.try_recv().is_err());
    // "Done" answers at once.
    let buf = draw(&mut app);
    let done = find(&buf, "Done", 0, 100);
    click(&mut app, done);
    assert_eq!(answers.recv().unwrap().unwrap().choice, 0);
    assert!(app.parts_for_test().1.is_none());
}

#[test]
fn a_click_beside_every_target_does_nothing() {
    let mut app = app(true);
    draw(&mut app);
    // The status bar is not clickable.
    click(&mut app, (50, 29));
    assert_eq!(app.selected(), "conversation");
    assert_eq!(app.key_context(), crate::KeyContext::Text);
}
