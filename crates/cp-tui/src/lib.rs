//! The terminal UI: a sidebar of panels, the selected panel, an input line, a status bar and
//! a command palette, driven by one event loop that owns the [`App`] state.

mod agent;
mod agent_offer;
mod app;
mod background;
mod changes;
mod conversation;
mod editor;
mod events;
mod help;
mod hit_map;
mod input;
mod keymap;
mod markdown;
mod palette;
mod panels;
mod phases;
mod popup;
mod reexec;
mod saved_state;
mod search;
mod status_bar;
mod terminal;
mod view;
mod view_model;
mod workflow;

#[cfg(test)]
mod tests;

use std::sync::mpsc::{self, RecvTimeoutError};
use std::time::{Duration, Instant};

use crossterm::event::Event;

pub use agent::AgentState;
pub use agent::cli_agent::CliAgent;
pub use agent_offer::remembered_agent;
pub use app::App;
pub use app::keys_page::{KEYS_PAGE, keys_page};
pub use changes::snapshot::Snapshot as ChangesSnapshot;
pub use changes::{Changes, Pane as ChangesPane};
pub use conversation::{Conversation, Entry};
pub use events::{AppEvent, SignalKind};
pub use hit_map::HitMap;
pub use keymap::{Action, KeyContext, map_key, map_mouse};
/// Whether long code blocks are being highlighted in the background (the bench waits on it).
pub use markdown::highlighting;
pub use palette::{parse_arguments, parse_argv};
pub use panels::{Focus, SidebarEntry};
pub use saved_state::SavedState;

use cp_host::Host;

/// Draws `app`'s screen from its view model (published snapshots, never a module lock).
pub fn render(app: &App, frame: &mut ratatui::Frame) {
    view::draw(&app.view_model(), frame);
}

/// Draws like [`render`] and returns where the frame drew what, for mouse clicks.
fn render_and_map(app: &App, frame: &mut ratatui::Frame) -> hit_map::HitMap {
    view::draw_and_map(&app.view_model(), frame)
}

/// Modules get a tick this often, to pick up background results without busy polling.
const TICK: Duration = Duration::from_secs(1);
/// At most one repaint per this interval, so floods of events batch into one frame.
const FRAME: Duration = Duration::from_millis(16);

/// Runs the TUI until the user quits or a terminating signal arrives.
pub fn run(host: Host, agent: AgentState, resume: bool) -> anyhow::Result<()> {
    run_app(host, agent, resume, |_| {}).map(drop)
}

/// `context-pilot run FILE` in the TUI: the workflow runs while the TUI shows it; the
/// approval gates are a modal dialog. Returns the run's exit code (0 done, 2 aborted, 1 failed
/// or left unfinished).
pub fn run_workflow(
    host: Host,
    agent: AgentState,
    args: cp_orchestrate::RunArgs,
) -> anyhow::Result<i32> {
    let app = run_app(host, agent, false, |app| app.start_workflow(args))?;
    let run = app.into_workflow().unwrap_or_default();
    Ok(match run.exit {
        Some(Ok(code)) => code,
        Some(Err(e)) => {
            eprintln!("context-pilot: the workflow failed: {e}");
            1
        }
        None => {
            match run.run_id {
                Some(id) => eprintln!(
                    "context-pilot: the run stopped before it finished; resume it with: context-pilot run --resume {id}"
                ),
                None => eprintln!("context-pilot: the run stopped before it started"),
            }
            1
        }
    })
}

/// The TUI's life: start, the event loop, teardown. `setup` runs once the app exists (e.g. to
/// start a workflow).
fn run_app(
    host: Host,
    agent: AgentState,
    resume: bool,
    setup: impl FnOnce(&mut App),
) -> anyhow::Result<App> {
    // Started by a reload (also into `run --resume`, which has no --resume flag of its own).
    let reloaded = resume || reexec::elapsed_since_request().is_some();
    let (tx, rx) = mpsc::channel();
    events::spawn_signal_thread(tx.clone())?;
    let mut guard = terminal::TerminalGuard::enter()?;
    let input = events::spawn_input_thread(tx.clone());
    let mut app = start(host, agent, resume, reloaded, tx);
    setup(&mut app);
    // First start in an untrusted project with something to trust: ask (not after a reload).
    if !reloaded {
        app.ask_trust_if_needed();
    }
    tracing::info!(project = %app.host().project().root().display(), "TUI started");
    event_loop(&mut app, &mut guard, &rx, &input, reloaded)?;
    finish(&mut app, guard);
    Ok(app)
}

/// The app, with its background helpers started and its saved state restored.
fn start(
    host: Host,
    agent: AgentState,
    resume: bool,
    reloaded: bool,
    tx: mpsc::Sender<AppEvent>,
) -> App {
    let waker = tx.clone();
    host.notifier().set_waker(move || {
        let _ = waker.send(AppEvent::Notice);
    });
    markdown::warm_up_in_background();
    let waker = tx.clone();
    markdown::set_highlight_waker(move || {
        let _ = waker.send(AppEvent::Highlighted);
    });
    if let Some(provider) = &agent.provider {
        app::models::spawn_model_check(provider.config().clone(), &tx);
    }
    if !agent.has_agent() {
        // Off the UI thread: each installed agent's `--version` runs.
        let _ = background::spawn(agent_offer::agent_start::LookForAgents, &tx);
    }
    let mut app = App::new(host, tx, agent);
    app.restore_saved_state(resume);
    if reloaded {
        app.note_reloaded(reexec::elapsed_since_request());
    }
    app.tick();
    app.drain_notices();
    app
}

/// Draws when something changed, routes events, ticks, and carries out what the app asks of
/// the terminal (an external editor, a reload), until the app quits.
fn event_loop(
    app: &mut App,
    guard: &mut terminal::TerminalGuard,
    rx: &mpsc::Receiver<AppEvent>,
    input: &events::InputGate,
    reloaded: bool,
) -> anyhow::Result<()> {
    let mut last_tick = Instant::now();
    let mut dirty = true;
    let mut first_frame = true;
    while !app.should_quit() {
        if dirty {
            draw(app, guard)?;
            dirty = false;
            if std::mem::take(&mut first_frame) && reloaded {
                record_reload_time(app);
            }
        }
        let wait = TICK.saturating_sub(last_tick.elapsed());
        match rx.recv_timeout(wait) {
            Ok(event) => dirty |= dispatch_queued(app, event, rx),
            Err(RecvTimeoutError::Timeout) => {}
            Err(RecvTimeoutError::Disconnected) => break,
        }
        if last_tick.elapsed() >= TICK {
            dirty |= app.tick();
            last_tick = Instant::now();
        }
        if let Some(edit) = app.take_external_edit() {
            let edited = edit_externally(guard, input, &edit)?;
            app.finish_external_edit(&edit, edited);
            dirty = true;
        }
        dirty |= app.poll_reload_request();
        if let Some(requested_at) = app.reload_due() {
            // Returns only when the reload failed; on success this process is replaced.
            let why = reload_now(app, guard, requested_at);
            tracing::warn!("reload failed: {why}");
            app.reload_failed(&why.to_string());
            dirty = true;
        }
    }
    Ok(())
}

/// One frame; clicks are resolved against what it drew, and scrolling is bounded by it.
fn draw(app: &mut App, guard: &mut terminal::TerminalGuard) -> anyhow::Result<()> {
    let mut hits = hit_map::HitMap::default();
    let screen = guard
        .terminal
        .draw(|frame| hits = render_and_map(app, frame))?
        .area;
    app.set_hit_map(hits);
    app.set_screen(screen);
    Ok(())
}

/// Routes `first` and whatever else is queued, for at most a frame's time, so a flood of
/// events makes one frame. Returns whether the screen needs a redraw.
fn dispatch_queued(app: &mut App, first: AppEvent, rx: &mpsc::Receiver<AppEvent>) -> bool {
    let mut dirty = dispatch(app, first);
    let frame_end = Instant::now() + FRAME;
    while let Ok(event) = rx.try_recv() {
        dirty |= dispatch(app, event);
        if Instant::now() > frame_end {
            break;
        }
    }
    dirty
}

/// Winds the app down (its last frame drawn), saves its state and gives the terminal back;
/// then prints the session's token use and estimated cost.
fn finish(app: &mut App, mut guard: terminal::TerminalGuard) {
    app.wind_down(|app| {
        let _ = guard.terminal.draw(|frame| {
            render_and_map(app, frame);
        });
    });
    app.save_state_now();
    drop(guard);
    // The session is over: no warm run of its tests is wanted any more.
    cp_mod_checkpoint::cancel_warm_run(app.host().project(), "the TUI ended");
    tracing::info!("TUI exited");
    if app.agent().provider.is_some() && app.agent().usage.total_in > 0 {
        println!("context-pilot {}", app.agent().usage.session_summary());
    }
}

/// Routes one event into the app. Returns whether the screen needs a redraw.
fn dispatch(app: &mut App, event: AppEvent) -> bool {
    match event {
        AppEvent::Term(Event::Key(key)) => {
            if let Some(action) = map_key(key, app.key_context()) {
                app.apply(action);
            }
            true
        }
        AppEvent::Term(Event::Mouse(mouse)) => map_mouse(mouse).is_some_and(|action| {
            app.apply(action);
            true
        }),
        AppEvent::Term(Event::Paste(text)) => {
            app.apply(Action::Paste(text));
            true
        }
        AppEvent::Term(Event::Resize(..)) => true,
        AppEvent::Term(_) => false,
        other => {
            app.handle(other);
            true
        }
    }
}

/// Hands the terminal to `$EDITOR` for `edit`'s text and takes it back: the input thread
/// stops reading and full-screen mode is left while the editor runs, then both are restored
/// (a terminal that cannot be restored ends the TUI with that error).
fn edit_externally(
    guard: &mut terminal::TerminalGuard,
    input: &events::InputGate,
    edit: &cp_base::ExternalEdit,
) -> anyhow::Result<Result<Option<String>, editor::EditorError>> {
    let pause = input.pause();
    guard.suspend();
    let command = editor::editor_command();
    tracing::info!(editor = %command, what = %edit.what, "handing the terminal to the editor");
    let edited = editor::edit_text(&command, &edit.file_name, &edit.text);
    guard.resume()?;
    drop(pause);
    Ok(edited)
}

/// Checks the new binary, saves the TUI state and execs. Returns why it did not happen.
fn reload_now(
    app: &mut App,
    guard: &mut terminal::TerminalGuard,
    requested_at: std::time::SystemTime,
) -> reexec::ReloadError {
    let Some(exe) = reexec::exe_path() else {
        return reexec::ReloadError::UnknownExe;
    };
    if let Err(why) = reexec::check_binary(&exe) {
        return why;
    }
    app.save_state_now();
    tracing::info!(exe = %exe.display(), "reloading");
    guard.suspend();
    let paused = app.paused_workflow().map(|run_id| {
        (
            app.host().project().root().to_path_buf(),
            app.host().worker().to_string(),
            run_id.to_owned(),
        )
    });
    let args = reexec::resume_args(
        paused
            .as_ref()
            .map(|(root, worker, id)| (root.as_path(), worker.as_str(), id.as_str())),
        app.picked_agent().map(cp_agent_cli::AgentKind::as_str),
    );
    let source = reexec::exec(&exe, args, requested_at);
    let _ = guard.resume();
    reexec::ReloadError::Exec { exe, source }
}

/// Logs how long the reload took, from the request to the first frame of the new process.
fn record_reload_time(app: &App) {
    let Some(elapsed) = reexec::elapsed_since_request() else {
        return;
    };
    tracing::info!(ms = elapsed.as_secs_f64() * 1000.0, "reload: first frame");
    let line = format!("{:.1}\n", elapsed.as_secs_f64() * 1000.0);
    let path = app.host().project().logs_dir().join("reload-times.log");
    let _ = cp_base::private::open_options(&path)
        .create(true)
        .append(true)
        .open(&path)
        .and_then(|mut f| std::io::Write::write_all(&mut f, line.as_bytes()));
}
