//! A cheap, cloneable cancel flag shared between the UI thread (Esc), a provider call and
//! the tool batch's blocking work (callback runs held by the batch).

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

/// Set by the UI (e.g. on Esc). A provider call checks it while waiting for the network and
/// returns promptly (within about 50 ms); a batch's blocking callback runs are killed.
#[derive(Debug, Clone, Default)]
pub struct CancelToken(Arc<AtomicBool>);

impl CancelToken {
    /// A token that is not cancelled.
    pub fn new() -> Self {
        Self::default()
    }

    /// Requests cancellation. Every clone sees it.
    pub fn cancel(&self) {
        self.0.store(true, Ordering::SeqCst);
    }

    /// The flag itself, for a signal handler to set (`signal_hook::flag::register`): a
    /// signal then cancels like [`CancelToken::cancel`].
    pub fn shared_flag(&self) -> Arc<AtomicBool> {
        Arc::clone(&self.0)
    }

    /// True once [`CancelToken::cancel`] was called on any clone.
    pub fn is_cancelled(&self) -> bool {
        self.0.load(Ordering::SeqCst)
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
}
