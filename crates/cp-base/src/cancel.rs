//! A cheap, cloneable cancel flag shared between the UI thread (Esc), a provider call and
//! the tool batch's blocking work (callback runs held by the batch). A token may also watch
//! other tokens ([`CancelToken::joined`]): a workflow phase's agent stops on the run's Ctrl-C
//! or on its own stop.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

/// Set by the UI (e.g. on Esc). A provider call checks it while waiting for the network and
/// returns promptly (within about 50 ms); a batch's blocking callback runs are killed.
#[derive(Debug, Clone, Default)]
pub struct CancelToken {
    /// Set by [`CancelToken::cancel`] on this token or a clone.
    own: Arc<AtomicBool>,
    /// The flags of the tokens this one was joined from: any of them set cancels it too.
    watched: Arc<[Arc<AtomicBool>]>,
}

impl CancelToken {
    /// A token that is not cancelled.
    pub fn new() -> Self {
        Self::default()
    }

    /// Requests cancellation. Every clone sees it.
    pub fn cancel(&self) {
        self.own.store(true, Ordering::SeqCst);
    }

    /// A token cancelled when `self` or `other` is (or by its own [`cancel`](Self::cancel),
    /// which cancels neither of them).
    #[must_use]
    pub fn joined(&self, other: &CancelToken) -> CancelToken {
        let watched: Vec<Arc<AtomicBool>> = [self, other]
            .into_iter()
            .flat_map(|t| std::iter::once(Arc::clone(&t.own)).chain(t.watched.iter().cloned()))
            .collect();
        CancelToken {
            own: Arc::default(),
            watched: watched.into(),
        }
    }

    /// The flag itself, for a signal handler to set (`signal_hook::flag::register`): a
    /// signal then cancels like [`CancelToken::cancel`].
    pub fn shared_flag(&self) -> Arc<AtomicBool> {
        Arc::clone(&self.own)
    }

    /// True once [`CancelToken::cancel`] was called on any clone.
    pub fn is_cancelled(&self) -> bool {
        self.own.load(Ordering::SeqCst) || self.watched.iter().any(|f| f.load(Ordering::SeqCst))
    }
}

#[cfg(test)]
mod tests {
    use super::CancelToken;

    #[test]
    fn clones_share_the_flag() {
        let token = CancelToken::new();
        let clone = token.clone();
        assert!(!clone.is_cancelled());
        token.cancel();
        assert!(clone.is_cancelled());
    }

    #[test]
    fn a_joined_token_is_cancelled_by_either_side_and_cancels_neither() {
        let run = CancelToken::new();
        let phase = CancelToken::new();
        let both = run.joined(&phase);
        assert!(!both.is_cancelled());
        both.cancel();
        assert!(both.is_cancelled() && !run.is_cancelled() && !phase.is_cancelled());
        let again = run.joined(&phase).joined(&CancelToken::new());
        phase.cancel();
        assert!(again.is_cancelled() && !run.is_cancelled());
    }
}
