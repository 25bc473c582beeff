//! The run's side of a merge test on another place: [`HostTester`] wraps the run's own
//! [`TreeTester`] and sends each tree to a host with a free slot (the run's machine when
//! none is free). The candidate goes as git objects ([`Place::send`]), the test runs there
//! (`context-pilot test-tree --json`), and its `result` counts only for the tree it names:
//! the queue compares it with the candidate's ([`TreeTest::believed`]) before it believes
//! it, and only the run's machine moves the run's branch.
//!
//! A link that drops during a test (ssh's keepalives go unanswered) is waited for: the run
//! asks the host again every second, for up to its `reconnect_secs`, and once it answers,
//! sends the tree and tests it there again (the host ends the test it had once it finds the
//! run gone). A host that does not come back in time is left out of the rest of the run, and
//! the test goes to another host with a free slot, else runs here. A host that refuses the
//! tree is left out too, and the tree is tested here (another host would refuse it as well).
//! The run's lines say each of these.

use std::path::Path;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use cp_orchestrate::{HostRun, TreeTest, TreeTester, TreeUnderTest};

use crate::place::{Job, Place};
use crate::serve::test_ref;
use crate::wire::{TestEvent, TestRequest};
use crate::{RemoteError, project_key};

struct Slot {
    place: Arc<dyn Place>,
    slots: usize,
    reconnect: Duration,
    busy: usize,
    /// Why it takes no more work in this run.
    out: Option<String>,
}

/// A place the run may test on, with its number of slots and how long the run waits for it
/// after its link dropped.
pub struct Placed {
    pub place: Arc<dyn Place>,
    pub slots: usize,
    pub reconnect: Duration,
}

/// How many times one test waits for its host's link to come back.
const MAX_RECONNECTS: u32 = 3;

/// A [`TreeTester`] that tests on hosts.
pub struct HostTester {
    slots: Mutex<Vec<Slot>>,
    here: Arc<dyn TreeTester>,
    key: String,
}

impl HostTester {
    /// Tests on `places` (each with its number of slots) the trees of the project at `root`,
    /// and with `here` when no place has a free slot.
    pub fn new(root: &Path, places: Vec<Placed>, here: Arc<dyn TreeTester>) -> Self {
        Self {
            slots: Mutex::new(
                places
                    .into_iter()
                    .map(|p| Slot {
                        place: p.place,
                        slots: p.slots,
                        reconnect: p.reconnect,
                        busy: 0,
                        out: None,
                    })
                    .collect(),
            ),
            here,
            key: project_key(root),
        }
    }

    /// Checks every place before a run: it answers, has `context-pilot` and git, and trusts
    /// the project at `commit` of the repository at `repo`.
    pub fn check(&self, repo: &Path, commit: &str) -> Result<(), RemoteError> {
        let slots = self.slots.lock().unwrap_or_else(PoisonError::into_inner);
        for slot in slots.iter() {
            let name = slot.place.name().to_owned();
            slot.place
                .send(repo, &self.key, commit, &test_ref(commit))?;
            let request = TestRequest {
                project: self.key.clone(),
                commit: commit.to_owned(),
                changed: Vec::new(),
                check_only: true,
            };
            let (events, stderr) = converse(slot.place.as_ref(), &request, None)?;
            match events.last() {
                Some(TestEvent::Ready { .. }) => {}
                Some(TestEvent::Refused { reason, .. }) => {
                    return Err(RemoteError::Refused {
                        host: name,
                        reason: reason.clone(),
                    });
                }
                Some(TestEvent::Error { message }) => {
                    return Err(RemoteError::NoResult {
                        host: name,
                        detail: message.clone(),
                    });
                }
                _ => return Err(no_result(&name, &stderr)),
            }
        }
        Ok(())
    }

    fn take_slot(&self) -> Option<usize> {
        let mut slots = self.slots.lock().unwrap_or_else(PoisonError::into_inner);
        let (at, slot) = slots
            .iter_mut()
            .enumerate()
            .filter(|(_, s)| s.out.is_none() && s.busy < s.slots)
            .min_by_key(|(_, s)| s.busy)?;
        slot.busy += 1;
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

    /// The place in slot `at`, and how long the run waits for it after its link dropped.
    fn place(&self, at: usize) -> Option<(Arc<dyn Place>, Duration)> {
        let slots = self.slots.lock().unwrap_or_else(PoisonError::into_inner);
        slots
            .get(at)
            .map(|slot| (Arc::clone(&slot.place), slot.reconnect))
    }

    fn test_on(&self, at: usize, tree: &TreeUnderTest<'_>) -> Result<TreeTest, RemoteError> {
        let Some((place, _)) = self.place(at) else {
            return Err(RemoteError::Serve("no such host".into()));
        };
        let place = place.as_ref();
        let name = place.name().to_owned();
        let sent = Instant::now();
        place.send(tree.root, &self.key, tree.commit, &test_ref(tree.commit))?;
        let transfer = sent.elapsed();
        let request = TestRequest {
            project: self.key.clone(),
            commit: tree.commit.to_owned(),
            changed: tree.changed.to_vec(),
            check_only: false,
        };
        let (events, stderr) = converse(place, &request, Some(tree.cancel))?;
        match events.into_iter().last() {
            Some(TestEvent::Result {
                tree: checked,
                test,
                ..
            }) => Ok(TreeTest {
                host: Some(HostRun {
                    host: name,
                    tree: checked,
                    transfer_ms: millis(transfer),
                }),
                ..test
            }),
            Some(TestEvent::Refused { reason, .. }) => {
                Err(RemoteError::Refused { host: name, reason })
            }
            Some(TestEvent::Error { message }) => Err(RemoteError::NoResult {
                host: name,
                detail: message,
            }),
            _ => Err(no_result(&name, &stderr)),
        }
    }
}

impl TreeTester for HostTester {
    fn test_tree(&self, tree: &TreeUnderTest<'_>) -> TreeTest {
        let Some(mut at) = self.take_slot() else {
            return self.here.test_tree(tree);
        };
        let mut reconnects = 0;
        loop {
            let e = match self.test_on(at, tree) {
                Ok(test) => {
                    self.give_back(at, None);
                    return test;
                }
                Err(e) => e,
            };
            let back = !tree.cancel.is_cancelled()
                && e.is_link_loss()
                && reconnects < MAX_RECONNECTS
                && self.reconnect(at, tree, &e);
            if back {
                reconnects += 1;
                continue;
            }
            // Stopped (before or while the run waited for the host): the test is no longer
            // wanted, and the host, which may yet come back, stays in the run.
            if tree.cancel.is_cancelled() {
                self.give_back(at, None);
                return TreeTest {
                    note: Some("stopped".into()),
                    ..TreeTest::default()
                };
            }
            self.give_back(at, Some(e.to_string()));
            // A refusal is the tree's (its configuration): another host would refuse it too.
            let next = if matches!(e, RemoteError::Refused { .. }) {
                None
            } else {
                self.take_slot()
            };
            let Some((next, place)) = next.and_then(|n| Some((n, self.place(n)?.0))) else {
                say(&format!(
                    "{e}; this host takes no more work in this run, and the tree is tested here"
                ));
                return self.here.test_tree(tree);
            };
            say(&format!(
                "{e}; this host takes no more work in this run, and the tree is tested on host {} \
                 instead",
                place.name()
            ));
            at = next;
            reconnects = 0;
        }
    }
}

impl HostTester {
    /// Waits for the host of slot `at`, whose link dropped (`lost`) while it tested `tree`,
    /// to answer again, for up to its `reconnect_secs`; whether it does.
    fn reconnect(&self, at: usize, tree: &TreeUnderTest<'_>, lost: &RemoteError) -> bool {
        let Some((place, window)) = self.place(at) else {
            return false;
        };
        if window.is_zero() {
            return false;
        }
        let short = tree.commit.get(..12).unwrap_or(tree.commit);
        say(&format!(
            "{lost}; waiting up to {} s for it to answer again, to test {short} there",
            window.as_secs()
        ));
        let deadline = Instant::now() + window;
        loop {
            if tree.cancel.is_cancelled() {
                return false;
            }
            let left = deadline.saturating_duration_since(Instant::now());
            if place.answers(left.max(Duration::from_secs(1))) {
                say(&format!(
                    "host {} answers again: testing {short} there again",
                    place.name()
                ));
                return true;
            }
            if Instant::now() >= deadline {
                return false;
            }
            std::thread::sleep(RETRY_PAUSE.min(deadline.saturating_duration_since(Instant::now())));
        }
    }
}

/// The pause between two tries to reach a host whose link dropped.
const RETRY_PAUSE: Duration = Duration::from_secs(1);

/// A line for the person (the run's standard error) and the log.
fn say(line: &str) {
    tracing::warn!("{line}");
    eprintln!("context-pilot: {line}");
}

/// Sends `request`, reads every event until the job ends (or `cancel` is set: the job is
/// ended), and returns them with the end of its standard error.
fn converse(
    place: &dyn Place,
    request: &TestRequest,
    cancel: Option<&cp_base::CancelToken>,
) -> Result<(Vec<TestEvent>, String), RemoteError> {
    let mut job: Job = place.start(&["test-tree", "--json"])?;
    let line = serde_json::to_string(request)
        .map_err(|e| RemoteError::Serve(format!("cannot write the request: {e}")))?;
    job.send_line(&line)?;
    let done = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let watcher = cancel.map(|cancel| {
        let cancel = cancel.clone();
        let done = Arc::clone(&done);
        let pid = job.id();
        std::thread::spawn(move || {
            while !done.load(std::sync::atomic::Ordering::SeqCst) {
                if cancel.is_cancelled() {
                    // Ends the connection: the other side sees its input close and stops.
                    let _ = std::process::Command::new("kill")
                        .arg(pid.to_string())
                        .status();
                    return;
                }
                std::thread::sleep(Duration::from_millis(100));
            }
        })
    });
    let mut events = Vec::new();
    let mut ended = false;
    while let Some(line) = job.next_line() {
        let Ok(event) = serde_json::from_str::<TestEvent>(&line) else {
            tracing::debug!(host = place.name(), "{line}");
            continue;
        };
        if event == TestEvent::Alive {
            continue;
        }
        ended = matches!(
            event,
            TestEvent::Result { .. }
                | TestEvent::Refused { .. }
                | TestEvent::Error { .. }
                | TestEvent::Ready { .. }
        );
        events.push(event);
        if ended {
            break;
        }
    }
    let (status, stderr) = job.finish();
    done.store(true, std::sync::atomic::Ordering::SeqCst);
    if let Some(watcher) = watcher {
        let _ = watcher.join();
    }
    if !ended {
        if let Some(e) = crate::place::classify(place.name(), &stderr) {
            return Err(e);
        }
        match status.and_then(|s| s.code()) {
            Some(127) => {
                return Err(RemoteError::NoContextPilot {
                    host: place.name().to_owned(),
                });
            }
            // ssh's own failure (a run ended on purpose is killed: no code): ssh's
            // keepalives went unanswered, or the connection broke.
            Some(SSH_FAILED) if cancel.is_none_or(|c| !c.is_cancelled()) => {
                return Err(RemoteError::LinkLost {
                    host: place.name().to_owned(),
                    detail: last_line(&stderr),
                });
            }
            _ => {}
        }
    }
    Ok((events, stderr))
}

/// The exit code of ssh when ssh itself failed (not the command it ran).
const SSH_FAILED: i32 = 255;

/// The last line of `text` that says something.
fn last_line(text: &str) -> String {
    text.lines()
        .rev()
        .find(|l| !l.trim().is_empty())
        .unwrap_or("no line")
        .trim()
        .trim_end_matches('.')
        .to_owned()
}

fn no_result(host: &str, stderr: &str) -> RemoteError {
    RemoteError::NoResult {
        host: host.to_owned(),
        detail: if stderr.trim().is_empty() {
            "no result line".into()
        } else {
            stderr.trim().to_owned()
        },
    }
}

fn millis(d: Duration) -> u64 {
    u64::try_from(d.as_millis()).unwrap_or(u64::MAX)
}

/// The places of the `hosts` configuration.
pub fn ssh_places(hosts: &[crate::HostConfig]) -> Vec<Placed> {
    hosts
        .iter()
        .map(|h| Placed {
            place: Arc::new(crate::SshPlace::new(h.name(), &h.ssh)),
            slots: h.slots,
            reconnect: Duration::from_secs(h.reconnect_secs),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use std::process::Command;
    use std::sync::atomic::{AtomicUsize, Ordering};

    use cp_base::CancelToken;

    use super::*;

    /// A host whose link drops in every test (ssh ends with 255), and whose run is stopped
    /// while it waits for the host to answer again.
    struct Dropping {
        cancel: CancelToken,
    }

    impl Place for Dropping {
        fn name(&self) -> &'static str {
            "dropping"
        }

        fn send(&self, _: &Path, _: &str, _: &str, _: &str) -> Result<(), RemoteError> {
            Ok(())
        }

        fn fetch(&self, _: &Path, _: &str, _: &str) -> Result<(), RemoteError> {
            Ok(())
        }

        fn start(&self, _args: &[&str]) -> Result<Job, RemoteError> {
            // It reads the request first: a job gone before the request is written fails
            // on the write (a broken pipe), not as a dropped link.
            let mut command = Command::new("sh");
            command.args(["-c", "read -r request; exit 255"]);
            Job::spawn("dropping", command)
        }

        fn answers(&self, _within: Duration) -> bool {
            self.cancel.cancel();
            false
        }
    }

    #[derive(Default)]
    struct Here {
        calls: AtomicUsize,
    }

    impl TreeTester for Here {
        fn test_tree(&self, _tree: &TreeUnderTest<'_>) -> TreeTest {
            self.calls.fetch_add(1, Ordering::SeqCst);
            TreeTest::default()
        }
    }

    #[test]
    fn a_test_stopped_while_its_host_is_waited_for_keeps_the_host_and_runs_nowhere() {
        let cancel = CancelToken::new();
        let here = Arc::new(Here::default());
        let dir = tempfile::tempdir().unwrap();
        let tester = HostTester::new(
            dir.path(),
            vec![Placed {
                place: Arc::new(Dropping {
                    cancel: cancel.clone(),
                }),
                slots: 1,
                reconnect: Duration::from_secs(5),
            }],
            Arc::clone(&here) as Arc<dyn TreeTester>,
        );
        let test = tester.test_tree(&TreeUnderTest {
            root: dir.path(),
            commit: "0123456789abcdef",
            changed: &[],
            cancel: &cancel,
        });
        assert_eq!(test.note.as_deref(), Some("stopped"));
        assert_eq!(
            here.calls.load(Ordering::SeqCst),
            0,
            "a stopped test runs nowhere"
        );
        let slots = tester.slots.lock().unwrap();
        assert_eq!(slots[0].out, None, "the host stays in the run");
        assert_eq!(slots[0].busy, 0);
    }
}
