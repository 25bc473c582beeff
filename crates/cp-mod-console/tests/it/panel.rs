//! The console panel: snapshots of the rendering, and a panel following a real console.

#![allow(
    clippy::unwrap_used,
    reason = "test helpers outside #[test] fns also fail loudly on any unexpected error"
)]

use std::time::Duration;

use crate::util::Project;
use cp_base::ratatui::Terminal;
use cp_base::ratatui::backend::TestBackend;
use cp_base::ratatui::style::Color;
use cp_base::{Notifier, Panel, PanelView};
use cp_e2e::eventually;
use cp_mod_console::{ConsoleInfo, ConsolePanel, ConsoleStatus, SpawnSpec};

fn info(status: ConsoleStatus) -> ConsoleInfo {
    ConsoleInfo {
        id: uuid::Uuid::from_u128(0x1234),
        command: "cargo build".into(),
        cwd: "/project".into(),
        description: Some("build".into()),
        label: None,
        pid: Some(42),
        status,
        started_at_ms: 1_000_000,
        ended_at_ms: Some(1_003_200),
        output_len: 0,
        server_instance: uuid::Uuid::nil(),
        rows: 6,
        cols: 40,
    }
}

fn draw(panel: &ConsolePanel, view: PanelView) -> Terminal<TestBackend> {
    let mut terminal = Terminal::new(TestBackend::new(50, 8)).unwrap();
    terminal
        .draw(|f| panel.render(f.area(), f.buffer_mut(), &view))
        .unwrap();
    terminal
}

#[test]
fn renders_colours_and_carriage_return_redraws() {
    let output = b"\x1b[32mCompiling\x1b[0m foo\r\nprogress 10%\rprogress 100%\r\n\x1b[1;31merror\x1b[0m: bad\r\n";
    let panel = ConsolePanel::detached(info(ConsoleStatus::Exited { code: 1 }), output);
    let terminal = draw(&panel, PanelView::default());
    insta::assert_snapshot!(terminal.backend());
    // Colours survive: "Compiling" is green (ANSI 2), "error" red (ANSI 1), the rest plain.
    let buf = terminal.backend().buffer();
    assert_eq!(buf[(0, 1)].fg, Color::Indexed(2));
    assert_eq!(buf[(0, 3)].fg, Color::Indexed(1));
    assert_eq!(buf[(10, 1)].fg, Color::Reset);
}

#[test]
fn renders_the_alternate_screen_and_passthrough_marker() {
    let output = b"shell line\r\n\x1b[?1049h\x1b[H\x1b[2Jfull-screen app\x1b[3;1Hrow three";
    let panel = ConsolePanel::detached(info(ConsoleStatus::Running), output);
    let view = PanelView {
        scroll: 0,
        focused: true,
        passthrough: true,
    };
    let text = draw(&panel, view).backend().to_string();
    // Runtime of a running console depends on the clock: check the rest.
    assert!(text.contains("● running"), "{text}");
    assert!(text.contains("[typing → console]"), "{text}");
    assert!(text.contains("full-screen app"), "{text}");
    assert!(text.contains("row three"), "{text}");
    assert!(!text.contains("shell line"), "{text}");
}

#[test]
fn scrolls_back_without_changing_state() {
    let output = (1..=20).fold(String::new(), |acc, i| acc + &format!("line {i}\r\n"));
    let panel = ConsolePanel::detached(info(ConsoleStatus::Exited { code: 0 }), output.as_bytes());
    let scrolled = draw(
        &panel,
        PanelView {
            scroll: 5,
            ..PanelView::default()
        },
    );
    insta::assert_snapshot!(scrolled.backend());
    let bottom = draw(&panel, PanelView::default()).backend().to_string();
    assert!(bottom.contains("line 20"), "{bottom}");
    assert!(panel.llm_context().contains("line 20"));
    assert!(
        panel
            .llm_context()
            .starts_with("Console 00000000-0000-0000-0000-000000001234")
    );
}

#[test]
fn llm_context_is_bounded() {
    let output = "x".repeat(300).repeat(100) + "\r\n";
    let many: String = (0..100).map(|_| output.clone()).collect();
    let panel = ConsolePanel::detached(info(ConsoleStatus::Exited { code: 0 }), many.as_bytes());
    assert!(
        panel.llm_context().len() < 4300,
        "{}",
        panel.llm_context().len()
    );
}

#[test]
fn a_panel_follows_a_real_console_to_its_end() {
    let p = Project::new();
    let s = p
        .client
        .spawn(
            SpawnSpec::new(
                "printf '\\033[33mwarming\\033[0m\\n'; read x; echo \"done $x\"",
                &p.root,
            )
            .size(10, 60),
        )
        .unwrap();
    let notifier = Notifier::new();
    let panel = ConsolePanel::open(s.clone(), s.info().unwrap(), notifier.clone());
    eventually(
        "the panel to show \"warming\"",
        Duration::from_secs(30),
        || panel.screen_text().contains("warming"),
    );
    assert!(panel.accepts_input());
    s.send(b"ok\n").unwrap();
    eventually("the panel to show the end", Duration::from_secs(30), || {
        !panel.info().status.is_running() && panel.screen_text().contains("done ok")
    });
    assert_eq!(panel.info().status, ConsoleStatus::Exited { code: 0 });
    assert!(
        !notifier.drain().is_empty(),
        "the panel asks the host to redraw"
    );
    let text = draw(&panel, PanelView::default()).backend().to_string();
    assert!(text.contains("✔ exited 0"), "{text}");
}

#[test]
fn scrolling_is_bounded_by_the_retained_lines_and_dropped_ones_are_announced() {
    // 10,050 lines: the panel keeps 10,000 rows of history plus its 6-row screen.
    let output = (1..=10_050).fold(String::new(), |acc, i| acc + &format!("line {i}\r\n"));
    let panel = ConsolePanel::detached(info(ConsoleStatus::Exited { code: 0 }), output.as_bytes());
    let area = cp_base::ratatui::layout::Rect::new(0, 0, 50, 8);
    let extent = panel.scroll_extent(area);
    assert_eq!(extent, cp_base::ScrollExtent::bottom(10_000));
    let top = draw(
        &panel,
        PanelView {
            scroll: extent.max,
            ..PanelView::default()
        },
    );
    insta::assert_snapshot!(top.backend());
    // The notice is drawn dim, apart from the output.
    assert_eq!(top.backend().buffer()[(0, 1)].fg, cp_base::theme::MUTED);
    let text = top.backend().to_string();
    assert!(text.contains("… 45 earlier lines dropped"), "{text}");
    assert!(
        text.contains("\"line 46 "),
        "the first retained line: {text}"
    );
    // At the bottom there is no notice: only the newest lines.
    let bottom = draw(&panel, PanelView::default()).backend().to_string();
    assert!(!bottom.contains("dropped"), "{bottom}");
    assert!(bottom.contains("line 10050"), "{bottom}");
}
