//! The TUI: render time per frame, idle CPU of the real binary, live reload time.

use std::fmt::Write as _;
use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use cp_base::ratatui::buffer::Buffer;
use cp_base::ratatui::layout::Rect;
use cp_base::ratatui::widgets::{Paragraph, Widget};
use cp_base::{
    Module, Notifier, Panel, PanelKind, PanelView, Project, ToolDef, ToolEnv, ToolOutcome,
    ToolResult, WorkerId,
};
use cp_e2e::TuiSession;
use cp_host::Host;
use cp_tui::{Action, AgentState, App, render};
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use serde_json::{Value, json};

use super::Options;
use super::stats::{Row, ms};

const WAIT: Duration = Duration::from_secs(30);

struct TextPanel {
    id: String,
    title: String,
    kind: PanelKind,
    body: String,
}

impl Panel for TextPanel {
    fn id(&self) -> String {
        self.id.clone()
    }
    fn title(&self) -> String {
        self.title.clone()
    }
    fn kind(&self) -> PanelKind {
        self.kind
    }
    fn badge(&self) -> Option<String> {
        Some("ok".into())
    }
    fn render(&self, area: Rect, buf: &mut Buffer, view: &PanelView) {
        Paragraph::new(self.body.as_str())
            .scroll((u16::try_from(view.scroll).unwrap_or(u16::MAX), 0))
            .render(area, buf);
    }
    fn llm_context(&self) -> String {
        self.body.clone()
    }
}

/// Twenty panels (two fixed, eighteen dynamic), each with 200 lines of console-like text.
struct PanelsModule(Vec<Arc<TextPanel>>);

impl Module for PanelsModule {
    fn id(&self) -> &'static str {
        "bench-panels"
    }
    fn tools(&self) -> Vec<ToolDef> {
        vec![ToolDef::new(
            "Bench_noop",
            "Does nothing. Example: {}",
            json!({"type": "object"}),
        )]
    }
    fn call_tool(&mut self, _: &str, _: &Value, _: &ToolEnv) -> ToolOutcome {
        ToolResult::ok("").into()
    }
    fn panels(&self) -> Vec<Arc<dyn Panel>> {
        self.0
            .iter()
            .map(|p| Arc::clone(p) as Arc<dyn Panel>)
            .collect()
    }
}

fn app(panels: usize) -> App {
    let mut body = String::new();
    for i in 0..200 {
        let _ = writeln!(
            body,
            "line {i:>4}: Compiling crate-{i} v0.{i}.0 (/work/src/crate-{i}) … ok"
        );
    }
    let panels = (0..panels)
        .map(|i| TextPanel {
            id: format!("bench:{i}"),
            title: format!("panel {i}"),
            kind: if i < 2 {
                PanelKind::Fixed
            } else {
                PanelKind::Dynamic
            },
            body: body.clone(),
        })
        .collect::<Vec<_>>();
    let env = ToolEnv::new(
        Project::at("/home/dev/bench"),
        WorkerId::default(),
        Notifier::new(),
    );
    let host = Host::builder(env)
        .module(Box::new(PanelsModule(
            panels.into_iter().map(Arc::new).collect(),
        )))
        .build();
    let (tx, _rx) = std::sync::mpsc::channel();
    App::new(host, tx, AgentState::default())
}

/// One `Terminal::draw` of the whole screen at 200×60, switching the selected panel each
/// frame so every frame paints new content.
pub fn render_time(opts: &Options) -> Vec<Row> {
    let frames = if opts.quick { 20 } else { 600 };
    let panels = 20;
    let mut app = app(panels);
    let mut terminal = Terminal::new(TestBackend::new(200, 60)).unwrap();
    app.apply(Action::FocusNext);
    terminal.draw(|frame| render(&app, frame)).unwrap();
    let mut samples = Vec::with_capacity(frames);
    for i in 0..frames {
        app.apply(Action::SelectPanel(1 + i % (panels + 1)));
        let t = Instant::now();
        terminal.draw(|frame| render(&app, frame)).unwrap();
        samples.push(ms(t.elapsed()));
    }
    let screen = terminal.backend().to_string();
    assert!(screen.contains("panel 19"), "all panels listed:\n{screen}");
    vec![
        Row::new(
            format!("TUI render per frame: 200×60, {panels} panels"),
            "ms",
            samples,
        )
        .note("ratatui `TestBackend`, `cp_tui::render`; the selected panel changes every frame"),
    ]
}

/// utime + stime of `pid`, in seconds.
pub(super) fn cpu_secs(pid: u32) -> f64 {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap();
    // Fields after the `(comm)`, which may hold spaces: state is field 3, utime 14, stime 15.
    let rest = &stat[stat.rfind(')').unwrap() + 2..];
    let fields: Vec<&str> = rest.split_whitespace().collect();
    let ticks: u64 = fields[11].parse::<u64>().unwrap() + fields[12].parse::<u64>().unwrap();
    // SAFETY: sysconf only reads a system constant.
    let per_sec = unsafe { libc::sysconf(libc::_SC_CLK_TCK) };
    ticks as f64 / per_sec as f64
}

fn start_tui(opts: &Options, repo: &Path) -> TuiSession {
    let tui = TuiSession::start_exe(&opts.exe, repo, &[], &[("CP_WORKER", "bench")]).unwrap();
    tui.wait_for("Conversation", WAIT).unwrap();
    tui
}

/// The real binary in a PTY, left alone: CPU time per second of wall time, in windows.
pub fn idle_cpu(opts: &Options) -> Vec<Row> {
    let (windows, window) = if opts.quick {
        (2, Duration::from_millis(500))
    } else {
        (5, Duration::from_secs(2))
    };
    let repo = cp_e2e::git_repo();
    let mut tui = start_tui(opts, repo.path());
    let pid = tui.pid().unwrap();
    // Let start-up work (session restore, first ticks) finish before measuring.
    std::thread::sleep(Duration::from_secs(1));
    let mut samples = Vec::new();
    for _ in 0..windows {
        let (cpu, t) = (cpu_secs(pid), Instant::now());
        std::thread::sleep(window);
        let used = cpu_secs(pid) - cpu;
        samples.push(used / t.elapsed().as_secs_f64() * 100.0);
    }
    tui.send(b"\x03");
    tui.wait_exit(WAIT).unwrap();
    let total = window.as_secs_f64() * f64::from(windows);
    vec![
        Row::new("TUI idle CPU (real binary in a PTY)", "% of a core", samples).note(format!(
            "{windows} windows of {:.1} s ({total:.0} s idle); utime+stime from /proc/<pid>/stat, 10 ms resolution",
            window.as_secs_f64()
        )),
    ]
}

fn reload_times(repo: &Path) -> Vec<f64> {
    std::fs::read_to_string(repo.join(".context-pilot/logs/reload-times.log"))
        .unwrap_or_default()
        .lines()
        .filter_map(|l| l.trim().parse().ok())
        .collect()
}

/// SIGUSR2 → first frame of the exec'd process, as the binary itself logs it.
pub fn reload(opts: &Options) -> Vec<Row> {
    let reloads = if opts.quick { 3 } else { 20 };
    let repo = cp_e2e::git_repo();
    let mut tui = start_tui(opts, repo.path());
    let pid = tui.pid().unwrap();
    for n in 1..=reloads {
        // SAFETY: kill(2) on the child process we started.
        let rc = unsafe { libc::kill(i32::try_from(pid).unwrap(), libc::SIGUSR2) };
        assert_eq!(rc, 0);
        cp_e2e::eventually(&format!("reload {n}"), WAIT, || {
            reload_times(repo.path()).len() >= n
        });
        tui.wait_for("Conversation", WAIT).unwrap();
    }
    assert_eq!(tui.pid(), Some(pid), "a reload keeps the pid");
    tui.send(b"\x03");
    tui.wait_exit(WAIT).unwrap();
    vec![
        Row::new(
            "live reload: SIGUSR2 → first frame of the new process",
            "ms",
            reload_times(repo.path()),
        )
        .note(
            "from `.context-pilot/logs/reload-times.log`; includes the `--version` check and exec",
        ),
    ]
}
