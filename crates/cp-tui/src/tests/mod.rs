//! Snapshot tests of whole screens, rendered with ratatui's `TestBackend`.

mod busy_module_tests;
mod editor_tests;
mod mouse_tests;

use std::sync::{Arc, mpsc};

use cp_base::ratatui::buffer::Buffer;
use cp_base::ratatui::layout::Rect;
use cp_base::ratatui::widgets::{Paragraph, Widget};
use cp_base::theme;
use cp_base::{
    Module, Notifier, Panel, PanelKind, PanelView, Project, ToolDef, ToolEnv, ToolOutcome,
    ToolResult, WorkerId,
};
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use serde_json::{Value, json};

use crate::{Action, App, render};
use cp_host::Host;
use cp_mod_files::FilesModule;

struct TextPanel {
    id: &'static str,
    title: &'static str,
    badge: Option<&'static str>,
    kind: PanelKind,
    body: &'static str,
}

impl Panel for TextPanel {
    fn id(&self) -> String {
        self.id.into()
    }
    fn title(&self) -> String {
        self.title.into()
    }
    fn kind(&self) -> PanelKind {
        self.kind
    }
    fn badge(&self) -> Option<String> {
        self.badge.map(str::to_owned)
    }
    fn render(&self, area: Rect, buf: &mut Buffer, _view: &PanelView) {
        Paragraph::new(self.body).render(area, buf);
    }
    fn llm_context(&self) -> String {
        self.body.into()
    }
}

/// A module with two fixed and two dynamic panels, standing in for callbacks and consoles.
struct PanelsModule(Vec<Arc<TextPanel>>);

impl Module for PanelsModule {
    fn id(&self) -> &'static str {
        "panels"
    }
    fn tools(&self) -> Vec<ToolDef> {
        vec![ToolDef::new(
            "Demo_fail",
            "Always fails. Example: {}",
            json!({"type": "object"}),
        )]
    }
    fn call_tool(&mut self, _: &str, _: &Value, _: &ToolEnv) -> ToolOutcome {
        ToolResult::error("Demo_fail: this tool always fails").into()
    }
    fn panels(&self) -> Vec<Arc<dyn Panel>> {
        self.0
            .iter()
            .map(|p| Arc::clone(p) as Arc<dyn Panel>)
            .collect()
    }
}

/// Hands `app` what arrives on `events` until a tool batch started from the UI finishes
/// (the app's other work may report first, the more so on a busy machine).
pub(crate) fn until_batch_done(app: &mut App, events: &mpsc::Receiver<crate::AppEvent>) {
    loop {
        let event = events
            .recv_timeout(std::time::Duration::from_secs(60))
            .expect("the batch finishes");
        let done = matches!(event, crate::AppEvent::BatchDone { .. });
        app.handle(event);
        if done {
            return;
        }
    }
}

pub(crate) fn app(with_panels: bool) -> App {
    let env = ToolEnv::new(
        Project::at("/home/dev/demo"),
        WorkerId::default(),
        Notifier::new(),
    );
    let mut builder = Host::builder(env).module(Box::new(FilesModule));
    if with_panels {
        let panels = vec![
            TextPanel {
                id: "callbacks",
                title: "Callbacks",
                badge: Some("2/3"),
                kind: PanelKind::Fixed,
                body: "CB1 cargo-check  *.rs  blocking  active",
            },
            TextPanel {
                id: "console:a",
                title: "cargo build",
                badge: Some("run"),
                kind: PanelKind::Dynamic,
                body: "   Compiling demo v0.1.0",
            },
            TextPanel {
                id: "checkpoint",
                title: "Checkpoint",
                badge: None,
                kind: PanelKind::Fixed,
                body: "No checkpoint yet.",
            },
            TextPanel {
                id: "console:b",
                title: "npm test",
                badge: Some("exit 1"),
                kind: PanelKind::Dynamic,
                body: "1 failing",
            },
        ];
        builder = builder.module(Box::new(PanelsModule(
            panels.into_iter().map(Arc::new).collect(),
        )));
    }
    let (tx, _rx) = mpsc::channel();
    App::new(builder.build(), tx, crate::AgentState::default())
}

fn draw(app: &App) -> String {
    let mut terminal = Terminal::new(TestBackend::new(100, 24)).unwrap();
    terminal.draw(|frame| render(app, frame)).unwrap();
    terminal.backend().to_string()
}

#[test]
fn empty_screen() {
    insta::assert_snapshot!(draw(&app(false)));
}

#[test]
fn sidebar_with_several_panels() {
    let mut app = app(true);
    app.apply(Action::FocusNext);
    app.apply(Action::SelectPanel(4)); // the first console, after the Changes panel
    insta::assert_snapshot!(draw(&app));
}

#[test]
fn palette_lists_tools() {
    let mut app = app(true);
    app.apply(Action::OpenPalette);
    for c in "file".chars() {
        app.apply(Action::Char(c));
    }
    app.apply(Action::Down);
    insta::assert_snapshot!(draw(&app));
}

#[test]
fn error_result() {
    let mut app = app(false);
    // A missing required parameter: validation rejects the call before the tool runs.
    let results = cp_base::run_batch(
        app.host().registry(),
        &[cp_base::ToolCall::new(
            "1",
            "File_write",
            json!({"file_path": "a.txt"}),
        )],
        app.host().env(),
    );
    app.parts_for_test().0.push(crate::Entry::Tool {
        name: "File_write".into(),
        args: r#"{"file_path":"a.txt"}"#.into(),
        result: results.into_iter().next(),
        expanded: true,
    });
    insta::assert_snapshot!(draw(&app));
}

pub(crate) fn approval_request() -> cp_orchestrate::ApprovalRequest {
    use cp_orchestrate::{Action as Step, Choice};
    cp_orchestrate::ApprovalRequest {
        worktree: None,
        base_commit: None,
        run_id: "feature-20261122T040000Z".into(),
        phase_id: "review".into(),
        iteration: 1,
        approval: false,
        prompt: "Review finished. How do you want to go on?".into(),
        files: vec![
            "docs/features/undo/plan.md".into(),
            "docs/features/undo/review.md".into(),
        ],
        choices: vec![
            Choice {
                label: "Done".into(),
                with_feedback: false,
                action: Step::Continue,
            },
            Choice {
                label: "Review again".into(),
                with_feedback: true,
                action: Step::RepeatPhase,
            },
            Choice {
                label: "Abort".into(),
                with_feedback: false,
                action: Step::Abort,
            },
        ],
    }
}

#[test]
fn approval_dialog_with_feedback() {
    let mut app = app(false);
    let (reply, answers) = mpsc::channel();
    *app.parts_for_test().1 = Some(crate::workflow::dialog::ApprovalDialog::new(
        approval_request(),
        reply,
    ));
    app.apply(Action::Down);
    app.apply(Action::Submit); // "Review again" takes feedback: the focus moves there
    for c in "tighten the tests".chars() {
        app.apply(Action::Char(c));
    }
    insta::assert_snapshot!(draw(&app));
    app.apply(Action::Submit);
    let answer = answers.recv().unwrap().unwrap();
    assert_eq!(answer.choice, 1);
    assert_eq!(answer.feedback.as_deref(), Some("tighten the tests"));
    assert!(app.parts_for_test().1.is_none());
}

#[test]
fn abort_asks_for_confirmation_in_the_dialog() {
    let mut app = app(false);
    let (reply, answers) = mpsc::channel();
    *app.parts_for_test().1 = Some(crate::workflow::dialog::ApprovalDialog::new(
        approval_request(),
        reply,
    ));
    app.apply(Action::Char('3')); // Abort
    app.apply(Action::Submit);
    let screen = draw(&app);
    assert!(
        screen.contains("aborts the workflow run. Enter confirms"),
        "{screen}"
    );
    insta::assert_snapshot!(screen);
    assert!(answers.try_recv().is_err(), "nothing answered yet");
    app.apply(Action::Submit);
    assert_eq!(answers.recv().unwrap().unwrap().choice, 2);
}

/// The "approval waiting" sign shows once while a hidden approval gate waits, and goes with it.
#[test]
fn approval_waiting_shows_once_and_goes_when_the_workflow_ends() {
    use crate::events::WorkflowMsg;
    let mut app = app(false);
    let (reply, _answers) = mpsc::channel();
    app.handle(crate::AppEvent::Workflow(WorkflowMsg::Ask(
        Box::new(approval_request()),
        reply,
    )));
    app.apply(Action::Back); // hides the dialog
    let waiting = |app: &App| draw(app).to_lowercase().matches("approval waiting").count();
    assert_eq!(waiting(&app), 1);
    app.handle(crate::AppEvent::Workflow(WorkflowMsg::Finished(Ok(0))));
    assert_eq!(waiting(&app), 0);
    assert!(app.parts_for_test().1.is_none());
}

#[test]
fn a_reload_leaves_one_marker_and_a_flash() {
    let mut app = app(false);
    app.note_reloaded(Some(std::time::Duration::from_millis(120)));
    let screen = draw(&app);
    assert!(
        screen.contains("↻ Reloaded: context-pilot") && screen.contains("in 120 ms"),
        "{screen}"
    );
    assert!(screen.contains(" reloaded │"), "{screen}");
    // A second reload with nothing in between replaces the marker instead of adding one.
    app.note_reloaded(None);
    let markers = app
        .parts_for_test()
        .0
        .entries()
        .iter()
        .filter(|e| matches!(e, crate::Entry::System(t) if t.starts_with("↻ Reloaded:")))
        .count();
    assert_eq!(markers, 1);
    app.parts_for_test().0.push_system("something happened");
    app.note_reloaded(None);
    let markers = app
        .parts_for_test()
        .0
        .entries()
        .iter()
        .filter(|e| matches!(e, crate::Entry::System(t) if t.starts_with("↻ Reloaded:")))
        .count();
    assert_eq!(markers, 2);
}

/// An app with a provider (never contacted) and two recorded requests' usage.
fn app_with_usage() -> App {
    let mut app = app(false);
    let config = cp_llm::test_support::anthropic_config("http://127.0.0.1:9");
    let provider: std::sync::Arc<dyn cp_llm::Provider> =
        std::sync::Arc::from(cp_llm::connect(config));
    let agent = app.parts_for_test().2;
    *agent = crate::AgentState::new(Some(provider), None);
    let usage = cp_llm::Usage {
        input_tokens: 1_000,
        output_tokens: 500,
        cache_read_tokens: 20_000,
        cache_creation_tokens: 2_000,
    };
    agent.usage.record(&usage);
    agent.usage.start_turn();
    agent.usage.record(&usage);
    app
}

fn draw_at(app: &App, width: u16) -> String {
    let mut terminal = Terminal::new(TestBackend::new(width, 24)).unwrap();
    terminal.draw(|frame| render(app, frame)).unwrap();
    terminal.backend().to_string()
}

#[test]
fn status_bar_shows_model_cache_and_cost_at_80_columns() {
    let screen = draw_at(&app_with_usage(), 80);
    assert!(screen.contains("sonnet-4-5"), "{screen}");
    assert!(
        screen.contains("86% cached ~$0.024/turn ~$0.048/session"),
        "{screen}"
    );
    // Issue 17: at 80×24 the bar still says how to open help and the palette, and which
    // token figures are the turn's.
    assert!(screen.contains("turn in 23.0k out 500"), "{screen}");
    assert!(screen.contains("F1 help · Ctrl-P palette"), "{screen}");
    insta::assert_snapshot!(screen);
}

/// Issue 17: a long step of the turn (the stop gate's test run) shows a spinner and its
/// elapsed seconds in the status bar, not a static text.
#[test]
fn status_bar_shows_how_long_the_stop_gate_has_run() {
    let mut app = app_with_usage();
    let agent = app.parts_for_test().2;
    agent.turn = Some(crate::agent::running_turn::RunningTurn {
        cancel: cp_llm::CancelToken::new(),
        stop: cp_orchestrate::StopHandle::default(),
    });
    agent.status = Some("running the stop gate…".into());
    agent.status_since = std::time::Instant::now().checked_sub(std::time::Duration::from_secs(8));
    let screen = draw_at(&app, 120);
    assert!(
        screen.contains("running the stop gate… · 8s")
            || screen.contains("running the stop gate… · 9s"),
        "{screen}"
    );
}

#[test]
fn status_bar_shows_model_cache_and_cost_at_120_columns() {
    let screen = draw_at(&app_with_usage(), 120);
    assert!(screen.contains("claude-sonnet-4-5"), "{screen}");
    insta::assert_snapshot!(screen);
}

/// Applies the actions the keymap gives for these key presses, in the app's key context.
fn press(app: &mut App, keys: &[(crossterm::event::KeyCode, crossterm::event::KeyModifiers)]) {
    for (code, mods) in keys {
        let event = crossterm::event::KeyEvent::new(*code, *mods);
        if let Some(action) = crate::map_key(event, app.key_context()) {
            app.apply(action);
        }
    }
}

#[test]
fn help_overlay_lists_the_keys_of_the_focus() {
    use crossterm::event::{KeyCode, KeyModifiers};
    let mut app = app(true);
    // `?` on an empty input opens help for typing; Esc closes it.
    press(&mut app, &[(KeyCode::Char('?'), KeyModifiers::NONE)]);
    let screen = draw_at(&app, 100);
    assert!(screen.contains("Keys: typing"), "{screen}");
    assert!(screen.contains("Ctrl-W"), "{screen}");
    assert!(app.view_model().input.is_empty(), "the ? was not typed");
    insta::assert_snapshot!(screen);
    press(&mut app, &[(KeyCode::Esc, KeyModifiers::NONE)]);
    assert!(app.modal.help.is_none());
    // In the sidebar, F1 lists the sidebar's keys, closing a panel among them.
    press(
        &mut app,
        &[
            (KeyCode::Tab, KeyModifiers::NONE),
            (KeyCode::F(1), KeyModifiers::NONE),
        ],
    );
    let screen = draw_at(&app, 100);
    assert!(screen.contains("Keys: sidebar"), "{screen}");
    insta::assert_snapshot!("help_overlay_sidebar", screen);
    // Closing a panel is among them, further down.
    press(&mut app, &[(KeyCode::Down, KeyModifiers::NONE); 6]);
    let screen = draw_at(&app, 100);
    assert!(screen.contains("close the selected panel"), "{screen}");
    press(&mut app, &[(KeyCode::Up, KeyModifiers::NONE); 6]);
    // A typed `?` in a non-empty input is just a character.
    press(
        &mut app,
        &[
            (KeyCode::Esc, KeyModifiers::NONE),
            (KeyCode::Tab, KeyModifiers::NONE),
            (KeyCode::Char('w'), KeyModifiers::NONE),
            (KeyCode::Char('?'), KeyModifiers::NONE),
        ],
    );
    assert_eq!(app.view_model().input.text(), "w?");
    assert!(app.modal.help.is_none());
}

#[test]
fn ctrl_w_in_the_message_deletes_a_word_and_closes_nothing() {
    use crossterm::event::{KeyCode, KeyModifiers};
    let mut app = app(true);
    // A dynamic panel is selected while the input has the keys.
    press(
        &mut app,
        &[
            (KeyCode::Tab, KeyModifiers::NONE),
            (KeyCode::Char('5'), KeyModifiers::NONE),
            (KeyCode::Tab, KeyModifiers::NONE),
        ],
    );
    assert_eq!(app.selected(), "console:a");
    for c in "fix the flaky test".chars() {
        app.apply(Action::Char(c));
    }
    press(&mut app, &[(KeyCode::Char('w'), KeyModifiers::CONTROL)]);
    assert_eq!(app.view_model().input.text(), "fix the flaky ");
    assert_eq!(
        app.selected(),
        "console:a",
        "Ctrl-W must not close the panel"
    );
    press(
        &mut app,
        &[
            (KeyCode::Char('b'), KeyModifiers::ALT),
            (KeyCode::Char('k'), KeyModifiers::CONTROL),
            (KeyCode::Char('a'), KeyModifiers::CONTROL),
            (KeyCode::Char('>'), KeyModifiers::NONE),
        ],
    );
    assert_eq!(app.view_model().input.text(), ">fix the ");
    press(&mut app, &[(KeyCode::Char('u'), KeyModifiers::CONTROL)]);
    assert_eq!(
        app.view_model().input.text(),
        "fix the ",
        "Ctrl-U deletes back to the line start"
    );
    press(
        &mut app,
        &[
            (KeyCode::Char('e'), KeyModifiers::CONTROL),
            (KeyCode::Char('u'), KeyModifiers::CONTROL),
        ],
    );
    assert!(app.view_model().input.is_empty());
}

#[test]
fn palette_shows_each_parameter_and_which_are_left_to_type() {
    let mut app = app(false);
    app.apply(Action::OpenPalette);
    for c in "File_edit file_path=a.txt ".chars() {
        app.apply(Action::Char(c));
    }
    let mut terminal = Terminal::new(TestBackend::new(100, 24)).unwrap();
    terminal.draw(|frame| render(&app, frame)).unwrap();
    let buf = terminal.backend().buffer();
    let cell_of = |needle: &str| {
        for y in 0..buf.area.height {
            let row: String = (0..buf.area.width).map(|x| buf[(x, y)].symbol()).collect();
            if let Some(byte) = row.find(needle) {
                let x = u16::try_from(row[..byte].chars().count()).unwrap();
                return buf[(x, y)].clone();
            }
        }
        panic!("{needle:?} not shown:\n{}", terminal.backend());
    };
    // Typed already: dim. Still to type and required: cyan. Types and need are spelled out.
    assert_eq!(cell_of("file_path   string").fg, theme::MUTED);
    assert_eq!(cell_of("old_string  string · required").fg, theme::ACCENT);
    assert_eq!(cell_of("replace_all boolean · optional").fg, theme::ACCENT);
}
