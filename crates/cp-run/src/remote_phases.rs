//! Workflow phases on the hosts of the `hosts` configuration.
//!
//! - The run's side ([`RemotePhases`], [`RemoteDriver`]): a phase in a worktree of its own
//!   goes to the host its `host:` names, else to a host with a free slot (the run's machine
//!   takes it when none is free). Its session there is the whole phase, restarts included
//!   (`context-pilot phase --json`, with the run's restart policy); each commit it makes is
//!   fetched into its worktree at once, and its end leaves the worktree's branch where the
//!   host's is, so the run merges it as it merges a phase that ran here. A host that is gone
//!   (its link does not come back within its `reconnect_secs`) or refuses the phase takes no
//!   more phases in this run, and the phase starts again, from the last commit it sent back,
//!   on another host with a free slot, else here. The headless lines of a phase on a host are
//!   prefixed `[phase@host]`; the Phases panel gets its host as [`PhaseNews::Placed`].
//! - The host's side ([`HostPhases`]): the phase's agent, made as on the run's machine but
//!   with this host's own agent configuration and credentials, its news sent as JSON.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use cp_base::{CancelToken, Level, WorkerId};
use cp_orchestrate::{
    DriverError, Handoff, PhaseAgent, RestartConfig, RestartEvent, SessionControl, SessionDriver,
    SessionEnd,
};
use cp_remote::{HostConfig, PhaseEnd, PhaseEvent, PhaseOutcome, PhaseRequest, Place, RemoteError};

use crate::phase_news::{Lines, PhaseNews, PhaseOutput, news_lines};

/// The name a phase's `host:` gives the run's own machine.
pub const LOCAL_HOST: &str = "local";

struct Slot {
    place: Arc<dyn Place>,
    slots: usize,
    reconnect: Duration,
    busy: usize,
    /// Why it takes no more phases in this run.
    out: Option<String>,
}

/// The hosts phases may run on, with their free slots.
pub struct RemotePhases {
    slots: Mutex<Vec<Slot>>,
    key: String,
    restart: RestartConfig,
}

impl RemotePhases {
    /// Phases of the project at `root` on `hosts`, run with the restart policy `restart`;
    /// `None` when there are no hosts.
    pub fn new(root: &Path, hosts: &[HostConfig], restart: RestartConfig) -> Option<Arc<Self>> {
        if hosts.is_empty() {
            return None;
        }
        let slots = cp_remote::ssh_places(hosts)
            .into_iter()
            .map(|p| Slot {
                place: p.place,
                slots: p.slots,
                reconnect: p.reconnect,
                busy: 0,
                out: None,
            })
            .collect();
        Some(Arc::new(Self {
            slots: Mutex::new(slots),
            key: cp_remote::project_key(root),
            restart,
        }))
    }

    /// Checks a workflow's `host:` names before anything runs: each is a host of the
    /// configuration, or `local`.
    pub fn check_names(
        hosts: &[HostConfig],
        workflow: &cp_orchestrate::Workflow,
    ) -> anyhow::Result<()> {
        for phase in &workflow.phases {
            if let Some(name) = &phase.host
                && name != LOCAL_HOST
                && !hosts.iter().any(|h| h.name() == name)
            {
                let known: Vec<&str> = hosts.iter().map(HostConfig::name).collect();
                anyhow::bail!(
                    "workflow phase '{}': host {name:?} is not in the `hosts` of \
                     .context-pilot/config.json ({}); name one of them, or `local`",
                    phase.id,
                    if known.is_empty() {
                        "there are none".to_owned()
                    } else {
                        known.join(", ")
                    }
                );
            }
        }
        Ok(())
    }

    /// A slot for a phase: on the host `named` (taken even when busy: the workflow asked for
    /// it), else on the host with the most free slots; `None`: the run's machine.
    fn take(&self, named: Option<&str>) -> Option<usize> {
        let mut slots = self.slots.lock().unwrap_or_else(PoisonError::into_inner);
        let at = match named {
            Some(LOCAL_HOST) => return None,
            Some(name) => slots
                .iter()
                .position(|s| s.out.is_none() && s.place.name() == name)?,
            None => {
                slots
                    .iter()
                    .enumerate()
                    .filter(|(_, s)| s.out.is_none() && s.busy < s.slots)
                    .max_by_key(|(at, s)| (s.slots - s.busy, std::cmp::Reverse(*at)))?
                    .0
            }
        };
        slots[at].busy += 1;
        Some(at)
    }

    fn give_back(&self, at: usize, out: Option<String>) {
        let mut slots = self.slots.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(slot) = slots.get_mut(at) {
            slot.busy = slot.busy.saturating_sub(1);
            if out.is_some() {
                slot.out = out;
            }
        }
    }

    /// Leaves the host of slot `at` out of the rest of the run, for `why` (its slot is
    /// given back already).
    fn leave_out(&self, at: usize, why: String) {
        let mut slots = self.slots.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(slot) = slots.get_mut(at) {
            slot.out = Some(why);
        }
    }

    fn place(&self, at: usize) -> Option<(Arc<dyn Place>, Duration)> {
        let slots = self.slots.lock().unwrap_or_else(PoisonError::into_inner);
        slots.get(at).map(|s| (Arc::clone(&s.place), s.reconnect))
    }
}

/// The agent of a phase placed on a host: its one session is the whole phase there, its
/// commits fetched back as they are made; the run's machine takes over when the host is gone.
pub(crate) struct RemoteDriver {
    phases: Arc<RemotePhases>,
    at: Option<usize>,
    root: PathBuf,
    phase: String,
    worker: WorkerId,
    agent: Option<String>,
    output: PhaseOutput,
    cancel: CancelToken,
    /// The agent here, for when no host is left.
    local: Box<dyn SessionDriver + Send>,
    /// The local agent took over.
    here: bool,
}

impl RemoteDriver {
    /// The driver of `spec` on the host of slot `at`, its news going to `output` and stopped
    /// by `cancel`, `local` standing by.
    pub(crate) fn new(
        phases: Arc<RemotePhases>,
        at: usize,
        spec: &PhaseAgent<'_>,
        (output, cancel): (PhaseOutput, CancelToken),
        local: Box<dyn SessionDriver + Send>,
    ) -> Self {
        Self {
            phases,
            at: Some(at),
            root: spec.root.to_path_buf(),
            phase: spec.phase.to_owned(),
            worker: spec.worker.clone(),
            agent: spec.agent.map(str::to_owned),
            output,
            cancel,
            local,
            here: false,
        }
    }

    /// Takes a slot for the phase (the workflow's `host:`, else a free one).
    pub(crate) fn slot(phases: &RemotePhases, spec: &PhaseAgent<'_>) -> Option<usize> {
        phases.take(spec.host)
    }

    fn say(&self, host: &str, line: &str) {
        match &self.output {
            PhaseOutput::Stdout => {
                Lines::new(&format!("{}@{host}", self.phase)).warning(line);
            }
            PhaseOutput::News(receive) => receive(
                &self.phase,
                PhaseNews::Notice {
                    level: Level::Warning,
                    text: line.to_owned(),
                },
            ),
        }
    }

    /// Runs the phase on the host of slot `at`.
    fn run_there(
        &self,
        at: usize,
        prompt: &str,
    ) -> Result<(PhaseOutcome, Duration, String), (RemoteError, Duration)> {
        let Some((place, reconnect)) = self.phases.place(at) else {
            return Err((
                RemoteError::Serve("no such host".into()),
                Duration::default(),
            ));
        };
        let host = place.name().to_owned();
        let repo = cp_git::Repository::at(&self.root);
        let (Ok(Some(branch)), Ok(commit)) = (repo.current_branch(), repo.head()) else {
            return Err((
                RemoteError::Serve(format!("cannot read the branch of {}", self.root.display())),
                reconnect,
            ));
        };
        let request = PhaseRequest {
            project: self.phases.key.clone(),
            commit,
            branch,
            phase: self.phase.clone(),
            worker: self.worker.as_str().to_owned(),
            prompt: prompt.to_owned(),
            agent: self.agent.clone(),
            restart: self.phases.restart.clone(),
        };
        if let PhaseOutput::News(receive) = &self.output {
            receive(&self.phase, PhaseNews::Placed { host: host.clone() });
        }
        let lines = Lines::new(&format!("{}@{host}", self.phase));
        let mut shown = |event: &PhaseEvent| self.show(&lines, &host, event);
        cp_remote::run_phase_on(
            place.as_ref(),
            &self.root,
            &request,
            &self.cancel,
            &mut shown,
        )
        .map(|(outcome, sent)| (outcome, sent, host))
        .map_err(|e| (e, reconnect))
    }

    /// One event of the phase on `host`: on the terminal (prefixed `[phase@host]`), or to the
    /// Phases panel.
    fn show(&self, lines: &Lines, host: &str, event: &PhaseEvent) {
        let news: Vec<PhaseNews> = match event {
            PhaseEvent::News { news } => serde_json::from_value::<PhaseNews>(news.clone())
                .ok()
                .filter(|n| !matches!(n, PhaseNews::Started { .. }))
                .into_iter()
                .collect(),
            PhaseEvent::Restart { restart } => match restart {
                RestartEvent::Committed {
                    commit: Some(commit),
                    ..
                } => vec![PhaseNews::Notice {
                    level: Level::Info,
                    text: format!(
                        "committed {} on {host}; fetched",
                        commit.get(..12).unwrap_or(commit)
                    ),
                }],
                RestartEvent::Committed { commit: None, .. } => Vec::new(),
                other => vec![PhaseNews::Notice {
                    level: Level::Info,
                    text: format!("↻ {other}"),
                }],
            },
            PhaseEvent::Started {
                commit, sent_ms, ..
            } => vec![PhaseNews::Notice {
                level: Level::Info,
                text: format!(
                    "started on host {host} from {} (sending took {} ms)",
                    commit.get(..12).unwrap_or(commit),
                    sent_ms.unwrap_or_default()
                ),
            }],
            PhaseEvent::Result { end, verdict, .. } => vec![PhaseNews::Notice {
                level: Level::Info,
                text: format!(
                    "ended on host {host}: {} (stop gate: {verdict})",
                    match end {
                        PhaseEnd::Completed => "completed",
                        PhaseEnd::Failed => "failed",
                        PhaseEnd::Stopped => "stopped",
                    }
                ),
            }],
            _ => Vec::new(),
        };
        for news in news {
            match &self.output {
                PhaseOutput::Stdout => news_lines(lines, news),
                PhaseOutput::News(receive) => receive(&self.phase, news),
            }
        }
    }

    /// The next host for the phase, once the one it had is gone: another with a free slot.
    fn next_slot(&mut self) -> Option<usize> {
        self.at = self.phases.take(None);
        self.at
    }
}

impl SessionDriver for RemoteDriver {
    fn run(&mut self, prompt: &str, control: &SessionControl) -> SessionEnd {
        let mut prompt = prompt.to_owned();
        while !self.here {
            let Some(at) = self.at else {
                self.here = true;
                break;
            };
            let started = Instant::now();
            match self.run_there(at, &prompt) {
                Ok((outcome, sent, host)) => {
                    self.phases.give_back(at, None);
                    self.at = None;
                    tracing::info!(
                        phase = %self.phase,
                        host,
                        sent_ms = sent.as_millis(),
                        elapsed_ms = started.elapsed().as_millis(),
                        "phase on a host ended"
                    );
                    match outcome {
                        PhaseOutcome::Ended {
                            end: PhaseEnd::Completed,
                            tokens,
                            ..
                        } => {
                            control.record_usage(tokens, 0);
                            return SessionEnd::Completed;
                        }
                        PhaseOutcome::Ended { error, .. } => {
                            return SessionEnd::Failed(format!(
                                "on host {host}: {}",
                                error.unwrap_or_else(|| "it failed".into())
                            ));
                        }
                        PhaseOutcome::Refused(reason) => {
                            let line = format!(
                                "host {host} refused the phase: {reason}; it takes no more \
                                 phases in this run, and phase {} runs here",
                                self.phase
                            );
                            self.say(&host, &line);
                            self.phases.leave_out(at, line);
                            self.here = true;
                        }
                    }
                }
                Err((e, reconnect)) => {
                    if self.cancel.is_cancelled() {
                        self.phases.give_back(at, None);
                        self.at = None;
                        return SessionEnd::Failed(format!("interrupted: {e}"));
                    }
                    let host = self
                        .phases
                        .place(at)
                        .map_or_else(String::new, |(p, _)| p.name().to_owned());
                    // Back in time: the phase starts there again from what it sent back (its
                    // slot stays taken).
                    if !self.wait_for(at, reconnect, &host, &e) {
                        let line = format!(
                            "{e}; host {host} takes no more phases in this run, and phase {} \
                             starts again from the last commit it sent back",
                            self.phase
                        );
                        self.say(&host, &line);
                        self.phases.give_back(at, Some(line));
                        self.next_slot();
                    }
                }
            }
            prompt = again(&prompt);
        }
        self.local.run(&prompt, control)
    }

    fn request_handoff(
        &mut self,
        request: &str,
        control: &SessionControl,
    ) -> Result<Option<Handoff>, DriverError> {
        if self.here {
            self.local.request_handoff(request, control)
        } else {
            // Its restarts happen on the host; a session here is never stopped for one.
            Ok(None)
        }
    }
}

/// A driver dropped before its phase ended on its host (the phase could not start) gives
/// its slot back.
impl Drop for RemoteDriver {
    fn drop(&mut self) {
        if let Some(at) = self.at.take() {
            self.phases.give_back(at, None);
        }
    }
}

impl RemoteDriver {
    /// Waits up to `reconnect` for the host of slot `at` to answer again after `lost`.
    fn wait_for(&self, at: usize, reconnect: Duration, host: &str, lost: &RemoteError) -> bool {
        if reconnect.is_zero() {
            return false;
        }
        self.say(
            host,
            &format!(
                "{lost}; waiting up to {} s for host {host} to answer again",
                reconnect.as_secs()
            ),
        );
        let Some((place, _)) = self.phases.place(at) else {
            return false;
        };
        let until = Instant::now() + reconnect;
        while Instant::now() < until && !self.cancel.is_cancelled() {
            if place.answers(Duration::from_secs(1)) {
                self.say(host, &format!("host {host} answers again"));
                return true;
            }
            std::thread::sleep(Duration::from_millis(500));
        }
        false
    }
}

/// The prompt of a phase that starts again elsewhere: what it sent back is on its branch.
fn again(prompt: &str) -> String {
    const NOTE: &str = "Your earlier session of this phase stopped on another machine; what \
                        it committed is on this branch already (see `git log`). Continue the \
                        task from there.";
    if prompt.starts_with(NOTE) {
        prompt.to_owned()
    } else {
        format!("{NOTE}\n\n{prompt}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hosts(json: &str) -> Vec<HostConfig> {
        serde_json::from_str(json).unwrap()
    }

    #[test]
    fn a_phase_goes_to_its_named_host_else_to_the_host_with_the_most_free_slots_else_here() {
        let hosts = hosts(r#"[{"ssh": "a", "slots": 2}, {"ssh": "b", "slots": 2}]"#);
        let phases =
            RemotePhases::new(Path::new("/src/app"), &hosts, RestartConfig::default()).unwrap();
        assert_eq!(phases.take(Some("b")), Some(1));
        assert_eq!(phases.take(Some(LOCAL_HOST)), None);
        // a has two free, b one: a; then one each: the first listed.
        assert_eq!(phases.take(None), Some(0));
        assert_eq!(phases.take(None), Some(0));
        assert_eq!(phases.take(None), Some(1));
        // None free: here; a named host is taken even when busy.
        assert_eq!(phases.take(None), None);
        assert_eq!(phases.take(Some("a")), Some(0));
        phases.give_back(1, None);
        assert_eq!(phases.take(None), Some(1));
        // A host left out takes nothing more, named or not.
        phases.give_back(1, Some("gone".into()));
        assert_eq!(phases.take(Some("b")), None);
        assert_eq!(phases.take(None), None);
        assert!(RemotePhases::new(Path::new("/src/app"), &[], RestartConfig::default()).is_none());
    }

    #[test]
    fn a_workflow_naming_an_unknown_host_is_refused_before_anything_runs() {
        let hosts = hosts(r#"[{"ssh": "me@10.0.0.7", "name": "big"}]"#);
        let workflow: cp_orchestrate::Workflow = serde_norway::from_str(
            "name: w\nphases:\n  - id: a\n    host: big\n    prompt: p\n  - id: b\n    \
             host: local\n    prompt: p\n",
        )
        .unwrap();
        RemotePhases::check_names(&hosts, &workflow).unwrap();
        let workflow: cp_orchestrate::Workflow =
            serde_norway::from_str("name: w\nphases:\n  - id: a\n    host: small\n    prompt: p\n")
                .unwrap();
        let e = RemotePhases::check_names(&hosts, &workflow)
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("'a'") && e.contains("\"small\"") && e.contains("big"),
            "{e}"
        );
    }

    #[test]
    fn a_phase_that_starts_again_elsewhere_is_told_so_once() {
        let once = again("Do it.");
        assert!(once.ends_with("Do it.") && once.contains("another machine"));
        assert_eq!(again(&once), once);
    }
}
