//! The TUI's agent when it is the person's own Claude Code, Gemini CLI or Codex CLI (`context-pilot
//! --agent claude|gemini|codex`): each message runs one turn of the CLI on a worker thread, under
//! the smart-restart loop. The first turn starts a fresh session; later turns resume it.
//!
//! The same driver also runs the sessions of a workflow started in this TUI (`context-pilot
//! run WF --agent claude|gemini|codex`).
//!
//! The driver outlives the turns (it knows the session to resume): it waits in a slot between
//! turns and is lent ([`LentDriver`]) to the turn's or the workflow's thread, which gives it
//! back when done. The driver's progress goes to whichever turn is running, through a second
//! slot.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::Sender;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use cp_agent::{AgentEvent, TurnEnd};
use cp_agent_cli::{
    AgentConfig, AgentError, AgentKind, CliDriver, InteractiveDriver, Progress, ProgressEvent,
};
use cp_llm::{CancelToken, Message};
use cp_orchestrate::{
    DriverError, Handoff, RestartConfig, RestartLoop, SessionControl, SessionDriver, SessionEnd,
};

use crate::agent::cli_events::{Shown, show};
use crate::agent::cli_session_file;
use crate::agent::restartable::restart_observer;
use crate::background::{self, Job, Reporter};
use crate::events::{AppEvent, NotStarted};
use cp_base::{Project, WorkerId};
use cp_host::Host;
use cp_run::wiring_spec_of;

/// The phase name interactive turns use in handoffs, commits and logs.
const PHASE: &str = "chat";

/// Why a turn could not start.
#[derive(Debug, thiserror::Error)]
pub enum CliTurnError {
    #[error("the previous {0} turn still holds the agent")]
    Busy(&'static str),
    /// Already reported to the event loop (`AppEvent::NotStarted`).
    #[error(transparent)]
    NotStarted(#[from] NotStarted),
}

/// How often an idle agent's waiting background results are looked for.
const WAITING_POLL: Duration = Duration::from_secs(2);

/// Where the running turn's events go.
struct TurnSink {
    tx: Sender<AppEvent>,
    /// The agent's text of this turn, for the saved history.
    text: String,
}

impl TurnSink {
    fn forward(&mut self, agent: &str, event: &ProgressEvent) {
        if let ProgressEvent::Text(text) = event {
            if !self.text.is_empty() {
                self.text.push_str("\n\n");
            }
            self.text.push_str(text);
        }
        match show(agent, event) {
            Shown::Agent(event) => {
                let _ = self.tx.send(AppEvent::Agent(event));
            }
            // Not through the notifier: that would queue it for the agent, which has it.
            Shown::Notice(level, text) => {
                let _ = self.tx.send(AppEvent::AgentNotice(level, text));
            }
        }
    }
}

type Slot<T> = Arc<Mutex<Option<T>>>;

fn lock<T>(slot: &Slot<T>) -> std::sync::MutexGuard<'_, Option<T>> {
    slot.lock().unwrap_or_else(PoisonError::into_inner)
}

/// An agent CLI that runs the TUI's turns.
pub struct CliAgent {
    /// "Claude Code" or "Gemini CLI".
    name: &'static str,
    /// The version the binary reported.
    version: String,
    /// The model's context window, when known (for the status bar's context fill).
    window: u64,
    /// The time the agent gets to exit after SIGINT.
    grace: Duration,
    driver: Slot<Box<dyn InteractiveDriver>>,
    sink: Slot<TurnSink>,
    /// Looking for the idle agent's background results ([`CliAgent::poll_waiting`]): set
    /// while a look runs, and when the last one started.
    waiting: Arc<AtomicBool>,
    last_look: Mutex<Option<Instant>>,
}

impl CliAgent {
    /// Locates and checks the CLI of `kind` (never `Builtin`) and writes its wiring: a
    /// missing binary is an error naming how to install it.
    pub fn new(host: &Host, kind: AgentKind) -> Result<Self, AgentError> {
        Self::start(host.project(), host.worker(), kind)
    }

    /// [`CliAgent::new`] from the project and the worker alone, for a background job.
    pub fn start(
        project: &Project,
        worker: &WorkerId,
        kind: AgentKind,
    ) -> Result<Self, AgentError> {
        let config = AgentConfig::load(project)?;
        let sink: Slot<TurnSink> = Arc::default();
        let name = kind.cli().ok_or(AgentError::Builtin)?.spec().display_name;
        let progress_sink = Arc::clone(&sink);
        let progress: Progress = Box::new(move |event: &ProgressEvent| {
            if let Some(sink) = lock(&progress_sink).as_mut() {
                sink.forward(name, event);
            }
        });
        let grace = config.stop_grace();
        let driver = CliDriver::new(kind, config, wiring_spec_of(project, worker), progress)?;
        let window = driver.configured_window().unwrap_or(0);
        let version = driver.binary().version.clone();
        let mut driver: Box<dyn InteractiveDriver> = Box::new(driver);
        if let Some(id) = cli_session_file::load(project, worker, name) {
            tracing::info!(session = %id, "the conversation continues {name}'s saved session");
            driver.resume_session(id);
        }
        Ok(Self {
            name,
            version,
            window,
            grace,
            driver: Arc::new(Mutex::new(Some(driver))),
            sink,
            waiting: Arc::default(),
            last_look: Mutex::default(),
        })
    }

    /// Whether no turn or workflow holds the driver.
    pub fn is_idle(&self) -> bool {
        lock(&self.driver).is_some()
    }

    /// "Claude Code" or "Gemini CLI".
    pub fn name(&self) -> &'static str {
        self.name
    }

    /// Waits up to `timeout` for the driver to be back in its slot (no turn or workflow holds
    /// it); returns whether it is.
    pub fn wait_idle(&self, timeout: Duration) -> bool {
        let deadline = Instant::now() + timeout;
        while !self.is_idle() {
            if Instant::now() >= deadline {
                return false;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        true
    }

    /// The time the agent gets to exit after SIGINT (`agent.stop_grace_secs`).
    pub fn grace(&self) -> Duration {
        self.grace
    }

    /// `Claude Code 2.1.3` for the status bar.
    pub fn label(&self) -> String {
        format!("{} {}", self.name, self.version)
    }

    /// The model's context window, 0 when unknown.
    pub fn window(&self) -> u64 {
        self.window
    }

    /// Takes the driver from its slot for one turn or one workflow run: `cancel` (Esc)
    /// interrupts the agent, and its events go to `tx` until the returned driver drops.
    pub fn lend(
        &self,
        cancel: &CancelToken,
        tx: Sender<AppEvent>,
    ) -> Result<LentDriver, CliTurnError> {
        let mut driver = lock(&self.driver)
            .take()
            .ok_or(CliTurnError::Busy(self.name))?;
        driver.set_cancel(Some(cancel.clone()));
        *lock(&self.sink) = Some(TurnSink {
            tx,
            text: String::new(),
        });
        Ok(LentDriver {
            driver: Some(driver),
            slot: Arc::clone(&self.driver),
            sink: Arc::clone(&self.sink),
        })
    }

    /// Between turns, every [`WAITING_POLL`]: collects on a worker thread what the agent's
    /// hooks left for it (background runs that ended, the outbox; see
    /// `hook::collect_waiting`); it arrives as `AppEvent::Waiting`. Never while a turn or a
    /// workflow holds the driver, nor while the last look still runs.
    pub fn poll_waiting(&self, host: &Host, tx: &Sender<AppEvent>) {
        if !self.is_idle() || self.waiting.load(Ordering::SeqCst) {
            return;
        }
        {
            let mut last = self
                .last_look
                .lock()
                .unwrap_or_else(PoisonError::into_inner);
            if last.is_some_and(|at| at.elapsed() < WAITING_POLL) {
                return;
            }
            *last = Some(Instant::now());
        }
        self.waiting.store(true, Ordering::SeqCst);
        let job = WaitingJob {
            project: host.project().clone(),
            worker: host.worker().clone(),
            waiting: Arc::clone(&self.waiting),
        };
        // A look that cannot start was reported by `spawn`; the next tick may try again.
        if background::spawn(job, tx).is_err() {
            self.waiting.store(false, Ordering::SeqCst);
        }
    }

    /// Starts a turn for the person's latest message `prompt` (the UI's history, of `held`
    /// messages, ends with it); events arrive as `AppEvent::Agent`, the callbacks' and the
    /// stop gate's verdicts as notices.
    pub fn start_turn(
        &self,
        host: &Host,
        restart: RestartConfig,
        prompt: String,
        held: usize,
        cancel: &CancelToken,
        tx: &Sender<AppEvent>,
    ) -> Result<(), CliTurnError> {
        let mut driver = self.lend(cancel, tx.clone())?;
        driver.continue_session();
        let restart_loop = RestartLoop::new(host.project().clone(), restart)
            .with_worker(host.worker().clone())
            .without_completion_commit();
        let job = CliTurnJob {
            project: host.project().clone(),
            worker: host.worker().clone(),
            name: self.name,
            prompt,
            held,
            driver,
            restart_loop,
            cancel: cancel.clone(),
        };
        // A thread that cannot start drops the job, and the driver in it goes back.
        background::spawn(job, tx)?;
        Ok(())
    }
}

/// One look for what the idle agent's hooks left for it; ends with `AppEvent::Waiting` when
/// there is something.
struct WaitingJob {
    project: Project,
    worker: WorkerId,
    /// Set while the look runs; cleared when it ends.
    waiting: Arc<AtomicBool>,
}

impl Job for WaitingJob {
    fn thread_name(&self) -> String {
        "cp-cli-waiting".into()
    }

    fn what(&self) -> &'static str {
        "the look for the agent's background results"
    }

    fn run(self, _progress: &Reporter) -> Option<AppEvent> {
        let event = match cp_host::collect_waiting(&self.project, &self.worker) {
            Ok(notes) if notes.is_empty() => None,
            Ok(notes) => Some(AppEvent::Waiting(notes)),
            Err(e) => {
                tracing::warn!("cannot collect the agent's background results: {e}");
                None
            }
        };
        self.waiting.store(false, Ordering::SeqCst);
        event
    }
}

/// One turn of the agent CLI under the restart loop; ends with `AgentEvent::Finished`, after
/// saving the session id it reached and giving the driver back.
struct CliTurnJob {
    project: Project,
    worker: WorkerId,
    /// The agent's display name, for its saved session file.
    name: &'static str,
    prompt: String,
    /// The length of the UI's history when the turn started: the agent's answer follows it.
    held: usize,
    driver: LentDriver,
    restart_loop: RestartLoop,
    cancel: CancelToken,
}

impl Job for CliTurnJob {
    fn thread_name(&self) -> String {
        "cp-cli-turn".into()
    }

    fn what(&self) -> &'static str {
        "the agent's turn"
    }

    fn run(self, progress: &Reporter) -> Option<AppEvent> {
        let Self {
            project,
            worker,
            name,
            prompt,
            held,
            mut driver,
            restart_loop,
            cancel,
        } = self;
        let mut observer = restart_observer(progress.sender());
        let result = restart_loop.run_phase(PHASE, &prompt, &mut driver, &mut observer);
        if let Some(id) = driver.current_session()
            && let Err(e) = cli_session_file::save(&project, &worker, name, id)
        {
            tracing::warn!("cannot save the agent's session id: {e}");
        }
        let text = driver.give_back();
        if !text.is_empty() {
            progress.send(AppEvent::Agent(AgentEvent::Messages {
                from: held,
                tail: vec![Message::assistant_text(text)],
            }));
        }
        let end = match result {
            Ok(_) => TurnEnd::Done,
            Err(_) if cancel.is_cancelled() => TurnEnd::Cancelled,
            Err(e) => TurnEnd::Failed(e.to_string()),
        };
        Some(AppEvent::Agent(AgentEvent::Finished(end)))
    }
}

/// The agent CLI's driver, lent to one turn or one workflow run. Dropping it (however the run
/// ends, a panic included) puts the driver back in its slot and stops its events.
pub struct LentDriver {
    /// `Some` until given back.
    driver: Option<Box<dyn InteractiveDriver>>,
    slot: Slot<Box<dyn InteractiveDriver>>,
    sink: Slot<TurnSink>,
}

impl LentDriver {
    fn driver(&mut self) -> Result<&mut Box<dyn InteractiveDriver>, DriverError> {
        self.driver
            .as_mut()
            .ok_or_else(|| DriverError::new("the agent CLI's driver was already given back"))
    }

    fn continue_session(&mut self) {
        if let Ok(driver) = self.driver() {
            driver.continue_session();
        }
    }

    fn current_session(&self) -> Option<&str> {
        self.driver.as_ref()?.current_session()
    }

    /// Puts the driver back now; returns the agent's text of this turn.
    fn give_back(mut self) -> String {
        self.put_back()
    }

    fn put_back(&mut self) -> String {
        if let Some(mut driver) = self.driver.take() {
            driver.set_cancel(None);
            *lock(&self.slot) = Some(driver);
        }
        lock(&self.sink).take().map(|s| s.text).unwrap_or_default()
    }
}

impl SessionDriver for LentDriver {
    fn run(&mut self, prompt: &str, control: &SessionControl) -> SessionEnd {
        match self.driver() {
            Ok(driver) => driver.run(prompt, control),
            Err(e) => SessionEnd::Failed(e.to_string()),
        }
    }

    fn request_handoff(
        &mut self,
        request: &str,
        control: &SessionControl,
    ) -> Result<Option<Handoff>, DriverError> {
        self.driver()?.request_handoff(request, control)
    }
}

impl Drop for LentDriver {
    fn drop(&mut self) {
        self.put_back();
    }
}
