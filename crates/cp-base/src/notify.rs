//! The notification queue: background work posts here, the host delivers to the agent and user.
//!
//! Posting never blocks on the host. The host installs a waker so that its event loop wakes up
//! when something arrives, instead of polling.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex, PoisonError};

use serde::{Deserialize, Serialize};

/// How a notification should be presented.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Level {
    Info,
    Success,
    Warning,
    Error,
}

/// A message from background work, for the agent's next turn and for the user.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Notification {
    /// Who posted it, e.g. `callback` or `console`.
    pub source: String,
    pub level: Level,
    pub text: String,
    /// Wake an idle agent for this (a failed background callback does).
    #[serde(default)]
    pub wake_agent: bool,
}

impl Notification {
    pub fn new(source: impl Into<String>, level: Level, text: impl Into<String>) -> Self {
        Self {
            source: source.into(),
            level,
            text: text.into(),
            wake_agent: false,
        }
    }

    #[must_use]
    pub fn waking(mut self) -> Self {
        self.wake_agent = true;
        self
    }
}

/// Something a module asks of the host from outside a tool call.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub enum Notice {
    Notify(Notification),
    /// Show this panel (a failed callback run opens its console).
    OpenPanel(String),
    /// Module state changed in the background; redraw.
    Refresh,
}

type Waker = Arc<dyn Fn() + Send + Sync>;

#[derive(Default)]
struct Inner {
    queue: VecDeque<Notice>,
    waker: Option<Waker>,
}

/// A cheap, cloneable handle to the host's notice queue.
#[derive(Clone, Default)]
pub struct Notifier {
    inner: Arc<Mutex<Inner>>,
}

impl std::fmt::Debug for Notifier {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Notifier").finish_non_exhaustive()
    }
}

impl Notifier {
    pub fn new() -> Self {
        Self::default()
    }

    /// Installs the function that wakes the host's event loop.
    pub fn set_waker(&self, waker: impl Fn() + Send + Sync + 'static) {
        self.lock().waker = Some(Arc::new(waker));
    }

    pub fn post(&self, notice: Notice) {
        let waker = {
            let mut inner = self.lock();
            inner.queue.push_back(notice);
            inner.waker.clone()
        };
        // Call the waker outside the lock: it may take other locks.
        if let Some(wake) = waker {
            wake();
        }
    }

    pub fn notify(&self, notification: Notification) {
        self.post(Notice::Notify(notification));
    }

    pub fn open_panel(&self, panel_id: impl Into<String>) {
        self.post(Notice::OpenPanel(panel_id.into()));
    }

    pub fn refresh(&self) {
        self.post(Notice::Refresh);
    }

    /// Takes everything queued so far, oldest first.
    pub fn drain(&self) -> Vec<Notice> {
        self.lock().queue.drain(..).collect()
    }

    /// Puts notices back at the front (e.g. undelivered ones restored after a reload).
    pub fn restore(&self, notices: Vec<Notice>) {
        let mut inner = self.lock();
        for notice in notices.into_iter().rev() {
            inner.queue.push_front(notice);
        }
    }

    pub fn is_empty(&self) -> bool {
        self.lock().queue.is_empty()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Inner> {
        // A panic elsewhere must not make notifications undeliverable.
        self.inner.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicUsize, Ordering};

    use super::*;

    #[test]
    fn posts_wake_the_host_and_drain_in_order() {
        let n = Notifier::new();
        let wakes = Arc::new(AtomicUsize::new(0));
        let w = wakes.clone();
        n.set_waker(move || {
            w.fetch_add(1, Ordering::SeqCst);
        });
        n.notify(Notification::new("t", Level::Info, "one"));
        n.open_panel("console:1");
        assert_eq!(wakes.load(Ordering::SeqCst), 2);
        let got = n.drain();
        assert_eq!(got.len(), 2);
        assert!(matches!(&got[0], Notice::Notify(x) if x.text == "one"));
        assert!(n.is_empty());
        n.restore(got);
        assert_eq!(n.drain().len(), 2);
    }
}
