//! The one way a test waits for a durable fact: poll it until it holds, or fail naming what
//! never came (and, when the test can say more, what there was instead).
//!
//! [`within`] is the only polling loop of the workspace's tests; everything else here, and
//! every wait helper of a crate's tests, is built on it.

use std::time::{Duration, Instant};

/// How often a condition is polled: often enough to add no noticeable delay, seldom enough
/// not to compete with what the test waits for.
const POLL: Duration = Duration::from_millis(20);

/// Polls `probe` until it gives a value, for at most `timeout`; `None` when it never did.
///
/// For a wait whose end is not a failure of its own: the test then kills what it waited for,
/// or lets the assertions that follow say what went wrong. The probe runs at least once, and
/// once more when `timeout` has passed.
///
/// ```
/// use std::time::Duration;
/// let mut polls = 0;
/// let third = cp_e2e::within(Duration::from_secs(5), || {
///     polls += 1;
///     (polls == 3).then_some(polls)
/// });
/// assert_eq!(third, Some(3));
/// assert_eq!(cp_e2e::within(Duration::ZERO, || None::<()>), None);
/// ```
pub fn within<T>(timeout: Duration, probe: impl FnMut() -> Option<T>) -> Option<T> {
    within_every(timeout, POLL, probe)
}

/// [`within`], pausing `every` between probes instead of the usual 20 ms. A zero pause only
/// yields the thread: for a test that must catch a moment while it lasts (a write under way).
///
/// ```
/// use std::time::Duration;
/// let mut polls = 0;
/// let hundredth = cp_e2e::within_every(Duration::from_secs(5), Duration::ZERO, || {
///     polls += 1;
///     (polls == 100).then_some(polls)
/// });
/// assert_eq!(hundredth, Some(100));
/// ```
pub fn within_every<T>(
    timeout: Duration,
    every: Duration,
    mut probe: impl FnMut() -> Option<T>,
) -> Option<T> {
    let deadline = Instant::now() + timeout;
    loop {
        if let Some(value) = probe() {
            return Some(value);
        }
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return None;
        }
        if every.is_zero() {
            std::thread::yield_now();
        } else {
            std::thread::sleep(every.min(left));
        }
    }
}

/// Polls `probe` until it gives a value, and returns it; panics after `timeout` with `what`
/// (the fact that never came) in the message.
///
/// # Panics
///
/// When `timeout` passes first: that is the test's failure.
///
/// ```
/// use std::time::Duration;
/// let mut polls = 0;
/// let n = cp_e2e::eventually_some("three polls", Duration::from_secs(5), || {
///     polls += 1;
///     (polls == 3).then_some(polls)
/// });
/// assert_eq!(n, 3);
/// ```
pub fn eventually_some<T>(what: &str, timeout: Duration, probe: impl FnMut() -> Option<T>) -> T {
    eventually_some_with(what, timeout, probe, String::new)
}

/// [`eventually_some`], with `explain` adding what the test can tell at the timeout (the run
/// record, the screen, the processes left) to the failure message. It runs only then.
///
/// # Panics
///
/// When `timeout` passes first, with `what` and the explanation in the message.
///
/// ```
/// use std::time::Duration;
/// let lines = ["starting", "ready on port 8080"];
/// let port = cp_e2e::eventually_some_with(
///     "the server's port",
///     Duration::from_secs(5),
///     || lines.iter().find_map(|l| l.strip_prefix("ready on port ")),
///     || format!("its log:\n{}", lines.join("\n")),
/// );
/// assert_eq!(port, "8080");
/// ```
pub fn eventually_some_with<T>(
    what: &str,
    timeout: Duration,
    probe: impl FnMut() -> Option<T>,
    explain: impl FnOnce() -> String,
) -> T {
    within(timeout, probe).unwrap_or_else(|| {
        let explanation = explain();
        let sep = if explanation.is_empty() { "" } else { "\n" };
        panic!("waited {timeout:?} for {what}; it never came{sep}{explanation}")
    })
}

/// Polls `condition` until it holds.
///
/// # Panics
///
/// After `timeout`, with `what` in the message.
///
/// ```
/// use std::time::{Duration, Instant};
/// let soon = Instant::now() + Duration::from_millis(50);
/// cp_e2e::eventually("50 ms to pass", Duration::from_secs(5), || Instant::now() >= soon);
/// ```
pub fn eventually(what: &str, timeout: Duration, condition: impl FnMut() -> bool) {
    eventually_with(what, timeout, condition, String::new);
}

/// [`eventually`], with `explain` adding what the test can tell at the timeout to the failure
/// message.
///
/// # Panics
///
/// After `timeout`, with `what` and the explanation in the message.
///
/// ```
/// use std::time::Duration;
/// let log = "started";
/// let failure = std::panic::catch_unwind(|| {
///     cp_e2e::eventually_with(
///         "the run to finish",
///         Duration::from_millis(50),
///         || log.contains("finished"),
///         || format!("its log: {log}"),
///     );
/// })
/// .unwrap_err();
/// assert_eq!(
///     failure.downcast_ref::<String>().unwrap(),
///     "waited 50ms for the run to finish; it never came\nits log: started"
/// );
/// ```
pub fn eventually_with(
    what: &str,
    timeout: Duration,
    mut condition: impl FnMut() -> bool,
    explain: impl FnOnce() -> String,
) {
    eventually_some_with(what, timeout, || condition().then_some(()), explain);
}
