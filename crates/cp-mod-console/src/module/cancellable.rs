//! Waits of the console tools that the person can cut short: Esc cancels the turn, and a
//! tool batch must not keep the turn going until `console_wait`'s `max_wait` or
//! `console_easy_bash`'s timeout runs out.

use std::time::{Duration, Instant};

use cp_base::CancelToken;

use crate::ConsoleError;
use crate::client::WaitOutcome;

/// How long one round of waiting lasts before the cancel flag is looked at again.
const ROUND: Duration = Duration::from_millis(100);

/// How a wait ended.
pub(super) struct Waited {
    /// The last answer of the server.
    pub(super) outcome: WaitOutcome,
    /// The cancel flag cut the wait short.
    pub(super) cancelled: bool,
}

/// Runs `wait_for` (a server wait with the given timeout) in short rounds until its
/// condition is met, the console ends, `limit` has passed or `cancel` is set.
pub(super) fn wait_in_rounds(
    limit: Duration,
    cancel: &CancelToken,
    wait_for: impl Fn(Duration) -> Result<WaitOutcome, ConsoleError>,
) -> Result<Waited, ConsoleError> {
    let started = Instant::now();
    loop {
        let left = limit.saturating_sub(started.elapsed());
        let outcome = wait_for(left.min(ROUND))?;
        let over = outcome.met || !outcome.info.status.is_running() || left <= ROUND;
        if over || cancel.is_cancelled() {
            return Ok(Waited {
                cancelled: !over,
                outcome,
            });
        }
    }
}
