//! The one way a test waits for a durable fact: poll it until it holds, or fail naming what
//! never came.

use std::time::{Duration, Instant};

/// How often a condition is polled: often enough to add no noticeable delay, seldom enough
/// not to compete with what the test waits for.
const POLL: Duration = Duration::from_millis(20);

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
pub fn eventually_some<T>(
    what: &str,
    timeout: Duration,
    mut probe: impl FnMut() -> Option<T>,
) -> T {
    let deadline = Instant::now() + timeout;
    loop {
        if let Some(value) = probe() {
            return value;
        }
        assert!(
            Instant::now() < deadline,
            "waited {timeout:?} for {what}; it never came"
        );
        std::thread::sleep(POLL);
    }
}

/// Polls `condition` until it holds.
///
/// # Panics
///
/// After `timeout`, with `what` in the message.
pub fn eventually(what: &str, timeout: Duration, mut condition: impl FnMut() -> bool) {
    eventually_some(what, timeout, || condition().then_some(()));
}
