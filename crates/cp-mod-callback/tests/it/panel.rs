//! Snapshots of the Callbacks panel: the table, the editor, the empty state.

#![allow(clippy::unwrap_used, reason = "test code")]

use cp_base::ratatui::Terminal;
use cp_base::ratatui::backend::TestBackend;
use cp_base::{Panel, PanelView};
use cp_mod_callback::{
    CallbackDef, CallbackId, CallbackSection, CallbacksPanel, EditorView, with_header,
};

fn def(
    id: u64,
    name: &str,
    description: &str,
    pattern: &[&str],
    timeout: Option<u64>,
) -> CallbackDef {
    CallbackDef {
        id: CallbackId(id),
        name: name.into(),
        description: description.into(),
        pattern: pattern.iter().map(|p| (*p).to_owned()).collect(),
        blocking: timeout.is_some(),
        timeout,
        success_message: None,
        cwd: None,
        one_at_a_time: false,
        once_per_batch: true,
    }
}

fn sample() -> CallbacksPanel {
    let mut section = CallbackSection {
        next_id: 4,
        definitions: vec![
            def(
                1,
                "cargo-check",
                "cargo check after Rust edits",
                &["*.rs", "!target/"],
                Some(300),
            ),
            def(
                2,
                "docs-build",
                "rebuild the docs site",
                &["docs/**/*.md"],
                None,
            ),
            def(
                3,
                "prettier",
                "format TypeScript in place with prettier --write",
                &["src/**/*.ts"],
                Some(30),
            ),
        ],
        ..CallbackSection::default()
    };
    section.set_active("main", CallbackId(1), true);
    section.set_active("main", CallbackId(3), true);
    section.set_active("other", CallbackId(2), true);
    CallbacksPanel {
        worker: "main".into(),
        section,
        editor: None,
        problem: None,
        watching: 0,
        running: Vec::new(),
        failing: Vec::new(),
    }
}

fn render(panel: &CallbacksPanel, width: u16, height: u16) -> String {
    let mut terminal = Terminal::new(TestBackend::new(width, height)).unwrap();
    terminal
        .draw(|frame| panel.render(frame.area(), frame.buffer_mut(), &PanelView::default()))
        .unwrap();
    terminal.backend().to_string()
}

#[test]
fn table() {
    let panel = sample();
    assert_eq!(panel.badge().as_deref(), Some("2/3"));
    let busy = CallbacksPanel {
        watching: 2,
        ..sample()
    };
    assert_eq!(busy.badge().as_deref(), Some("2/3 (2 running)"));
    insta::assert_snapshot!("table", render(&panel, 100, 8));
    insta::assert_snapshot!("table_narrow", render(&panel, 60, 8));
    insta::assert_snapshot!("table_llm_context", panel.llm_context());
}

#[test]
fn a_callback_whose_latest_run_failed_shows_in_the_badge_and_the_panel() {
    let panel = CallbacksPanel {
        failing: vec!["cargo-check".into()],
        watching: 1,
        ..sample()
    };
    let badge = panel.badge().unwrap();
    assert_eq!(badge, "2/3 ✗1 (1 running)");
    // The sidebar colours a badge holding `✗` red (cp-tui `outcome_style::badge_color`).
    assert!(badge.contains('✗'));
    let screen = render(&panel, 100, 8);
    assert!(
        screen.contains("✗ Latest run failed: cargo-check"),
        "{screen}"
    );
    let mut terminal = Terminal::new(TestBackend::new(100, 8)).unwrap();
    terminal
        .draw(|frame| panel.render(frame.area(), frame.buffer_mut(), &PanelView::default()))
        .unwrap();
    let buf = terminal.backend().buffer();
    assert_eq!(buf[(0, 0)].fg, cp_base::theme::FAILURE);
    // Passing again clears it.
    assert_eq!(sample().badge().as_deref(), Some("2/3"));
}

#[test]
fn editor_open() {
    let mut panel = sample();
    let def = panel.section.definitions[0].clone();
    panel.editor = Some(EditorView {
        def,
        script: Some(with_header("cargo check --quiet 2>&1")),
    });
    insta::assert_snapshot!("editor", render(&panel, 100, 28));
    insta::assert_snapshot!("editor_llm_context", panel.llm_context());
}

#[test]
fn empty_state() {
    let panel = CallbacksPanel {
        worker: "main".into(),
        ..CallbacksPanel::default()
    };
    assert_eq!(panel.badge().as_deref(), Some("0/0"));
    insta::assert_snapshot!("empty", render(&panel, 80, 8));
    insta::assert_snapshot!("empty_llm_context", panel.llm_context());
}

#[test]
fn paused_worker() {
    let mut panel = sample();
    panel.section.paused.insert("main".into());
    assert_eq!(panel.badge().as_deref(), Some("0/3"));
    insta::assert_snapshot!("paused", render(&panel, 100, 6));
}
