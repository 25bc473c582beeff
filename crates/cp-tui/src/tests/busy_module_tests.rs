//! Rendering never waits on a tool: while a tool holds its module, keys still move the
//! sidebar selection, ticks and close requests return, and frames draw from the published
//! snapshots.
//!
//! The proof is an order of facts, not a timing: the tool holds until the test releases it,
//! so everything the test does before releasing ran while the tool held its module. Only a
//! watchdog may release it otherwise (after a minute, so a frame that did wait on the module
//! ends the test with a failure instead of a hang), and then the test fails, however slow
//! the machine.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{self, Receiver, Sender};
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::Duration;

use cp_base::ratatui::buffer::Buffer;
use cp_base::ratatui::layout::Rect;
use cp_base::ratatui::widgets::{Paragraph, Widget};
use cp_base::{
    Module, Notifier, Panel, PanelKind, PanelView, Project, ToolDef, ToolEnv, ToolOutcome,
    ToolResult, WorkerId,
};
use crossterm::event::{Event, KeyCode, KeyEvent, KeyModifiers};
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use serde_json::{Value, json};

use crate::{App, AppEvent, dispatch, render};
use cp_host::Host;

/// A safety limit for waiting on background facts, not a speed assertion.
const WAIT: Duration = Duration::from_secs(60);

struct Text {
    id: &'static str,
    kind: PanelKind,
    body: &'static str,
}

impl Panel for Text {
    fn id(&self) -> String {
        self.id.into()
    }
    fn title(&self) -> String {
        self.id.into()
    }
    fn kind(&self) -> PanelKind {
        self.kind
    }
    fn render(&self, area: Rect, buf: &mut Buffer, _view: &PanelView) {
        Paragraph::new(self.body).render(area, buf);
    }
    fn llm_context(&self) -> String {
        self.body.into()
    }
}

/// A module whose tool blocks in its synchronous part (holding the module) until released.
struct Blocker {
    holding: Sender<()>,
    release: Arc<Mutex<Receiver<()>>>,
    log_open: bool,
}

impl Module for Blocker {
    fn id(&self) -> &'static str {
        "blocker"
    }
    fn tools(&self) -> Vec<ToolDef> {
        vec![ToolDef::new(
            "Block_hold",
            "Holds its module until the test releases it. Example: {}",
            json!({"type": "object"}),
        )]
    }
    fn call_tool(&mut self, _: &str, _: &Value, _: &ToolEnv) -> ToolOutcome {
        let _ = self.holding.send(());
        // Holds until released, or until the test's sender is gone (a failed test).
        let released = self.release.lock().is_ok_and(|rx| rx.recv().is_ok());
        ToolResult::ok(if released { "released" } else { "test ended" }).into()
    }
    fn panels(&self) -> Vec<Arc<dyn Panel>> {
        let mut panels: Vec<Arc<dyn Panel>> = vec![Arc::new(Text {
            id: "blocker",
            kind: PanelKind::Fixed,
            body: "blocker panel body",
        })];
        if self.log_open {
            panels.push(Arc::new(Text {
                id: "blocker:log",
                kind: PanelKind::Dynamic,
                body: "blocker log body",
            }));
        }
        panels
    }
    fn close_panel(&mut self, panel_id: &str) -> bool {
        let closed = self.log_open && panel_id == "blocker:log";
        self.log_open &= !closed;
        closed
    }
}

fn key(app: &mut App, code: KeyCode) {
    key_with(app, code, KeyModifiers::NONE);
}

fn key_with(app: &mut App, code: KeyCode, modifiers: KeyModifiers) {
    dispatch(
        app,
        AppEvent::Term(Event::Key(KeyEvent::new(code, modifiers))),
    );
}

fn draw(terminal: &mut Terminal<TestBackend>, app: &App) -> String {
    terminal.draw(|frame| render(app, frame)).unwrap();
    terminal.backend().to_string()
}

#[test]
fn a_tool_that_holds_its_module_does_not_delay_frames_keys_ticks_or_closes() {
    let (holding_tx, holding) = mpsc::channel();
    let (release, release_rx) = mpsc::channel();
    let env = ToolEnv::new(
        Project::at("/home/dev/demo"),
        WorkerId::default(),
        Notifier::new(),
    );
    let host = Host::builder(env)
        .module(Box::new(Blocker {
            holding: holding_tx,
            release: Arc::new(Mutex::new(release_rx)),
            log_open: true,
        }))
        .build();
    let (tx, events) = mpsc::channel();
    let mut app = App::new(host, tx, crate::AgentState::default());
    let mut terminal = Terminal::new(TestBackend::new(100, 24)).unwrap();

    app.run_tools(vec![cp_base::ToolCall::new("t", "Block_hold", json!({}))]);
    holding.recv_timeout(WAIT).expect("the tool starts holding");

    // The watchdog releases the tool only if the test has not within WAIT: a frame or key
    // that waits on the module then returns, and the check below fails instead of hanging.
    let (test_done, watchdog_stop) = mpsc::channel::<()>(); // dropped when the test is done
    let released_by_watchdog = Arc::new(AtomicBool::new(false));
    let watchdog = {
        let release = release.clone();
        let flag = Arc::clone(&released_by_watchdog);
        thread::spawn(move || {
            if let Err(mpsc::RecvTimeoutError::Timeout) = watchdog_stop.recv_timeout(WAIT) {
                flag.store(true, Ordering::SeqCst);
                let _ = release.send(());
            }
        })
    };

    // Everything below happens while the tool holds its module.
    key(&mut app, KeyCode::Tab); // focus the sidebar
    key(&mut app, KeyCode::Down); // conversation → blocker
    assert_eq!(app.selected(), "blocker");
    let screen = draw(&mut terminal, &app);
    assert!(
        screen.contains("blocker panel body"),
        "the selected panel draws from its snapshot:\n{screen}"
    );

    key(&mut app, KeyCode::Down); // blocker → Changes
    key(&mut app, KeyCode::Down); // Changes → blocker:log
    assert_eq!(app.selected(), "blocker:log");
    app.tick();
    key(&mut app, KeyCode::Delete); // close (sidebar focus): queued
    let screen = draw(&mut terminal, &app);
    assert!(screen.contains("blocker log body"), "{screen}");
    assert_eq!(app.selected(), "blocker:log", "not closed yet");
    drop(test_done);
    watchdog.join().unwrap();
    assert!(
        !released_by_watchdog.load(Ordering::SeqCst),
        "keys, a tick, a close or a frame waited for the tool that held its module"
    );
    // Other work of the app (the agent CLIs looked for at start, say) may have reported
    // meanwhile; the batch may not.
    let meanwhile: Vec<AppEvent> = events.try_iter().collect();
    assert!(
        !meanwhile
            .iter()
            .any(|e| matches!(e, AppEvent::BatchDone { .. })),
        "the tool still holds its module: all of the above ran meanwhile"
    );
    for event in meanwhile {
        app.handle(event);
    }

    // Released: the batch ends, and the next tick performs the queued close.
    release.send(()).unwrap();
    super::until_batch_done(&mut app, &events);
    app.tick();
    assert_eq!(app.selected(), "conversation");
    let screen = draw(&mut terminal, &app);
    assert!(!screen.contains("blocker:log"), "{screen}");
}
