//! The yes/no questions shown over the screen.

/// A yes/no question shown over the screen.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Confirm {
    QuitWhileBusy,
    /// First start in an untrusted project: what trusting it allows (trust / not now).
    Trust(String),
    /// Revert a hunk or a file of the Changes panel: what will be lost.
    Revert(String),
}
