//! Notifications waiting for the agent's next turn.

use std::fmt::Write as _;
use std::sync::{Arc, Mutex, PoisonError};

use cp_base::Notification;

/// Shared between the UI thread (which receives notices) and the turn thread (which delivers
/// them with the next request).
#[derive(Debug, Clone, Default)]
pub struct AgentInbox {
    items: Arc<Mutex<Vec<Notification>>>,
}

impl AgentInbox {
    pub fn push(&self, notification: Notification) {
        self.items
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .push(notification);
    }

    pub fn take(&self) -> Vec<Notification> {
        std::mem::take(&mut *self.items.lock().unwrap_or_else(PoisonError::into_inner))
    }

    pub fn snapshot(&self) -> Vec<Notification> {
        self.items
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    pub fn is_empty(&self) -> bool {
        self.items
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .is_empty()
    }

    /// The notifications as one text block for the model.
    pub fn render(notifications: &[Notification]) -> String {
        let mut text = String::from("Background notifications since your last turn:");
        for n in notifications {
            let _ = write!(text, "\n- [{}] {}", n.source, n.text);
        }
        text
    }
}
