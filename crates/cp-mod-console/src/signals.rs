//! Signal names and numbers, one table for both directions: the server names the signal
//! that ended a console (`ConsoleStatus::Signaled`), and callers that need the number back
//! (the stop gate's test runner) read it from the same table.

/// The signals a console's command commonly dies of, by name.
const SIGNALS: [(&str, i32); 11] = [
    ("SIGHUP", libc::SIGHUP),
    ("SIGINT", libc::SIGINT),
    ("SIGQUIT", libc::SIGQUIT),
    ("SIGILL", libc::SIGILL),
    ("SIGABRT", libc::SIGABRT),
    ("SIGBUS", libc::SIGBUS),
    ("SIGFPE", libc::SIGFPE),
    ("SIGKILL", libc::SIGKILL),
    ("SIGSEGV", libc::SIGSEGV),
    ("SIGPIPE", libc::SIGPIPE),
    ("SIGTERM", libc::SIGTERM),
];

/// A readable name for a signal number: `SIGTERM`, or `signal 37` for one without a name
/// here.
///
/// ```
/// assert_eq!(cp_mod_console::signal_name(9), "SIGKILL");
/// assert_eq!(cp_mod_console::signal_name(37), "signal 37");
/// ```
pub fn signal_name(signal: i32) -> String {
    SIGNALS
        .iter()
        .find(|(_, number)| *number == signal)
        .map_or_else(
            || format!("signal {signal}"),
            |(name, _)| (*name).to_owned(),
        )
}

/// The number of a signal named by [`signal_name`] (`SIGSEGV`, `signal 37`); `None` for
/// anything else.
///
/// ```
/// assert_eq!(cp_mod_console::signal_number("SIGKILL"), Some(9));
/// assert_eq!(cp_mod_console::signal_number("signal 37"), Some(37));
/// assert_eq!(cp_mod_console::signal_number("mystery"), None);
/// ```
pub fn signal_number(name: &str) -> Option<i32> {
    SIGNALS
        .iter()
        .find(|(known, _)| *known == name)
        .map(|(_, number)| *number)
        .or_else(|| name.strip_prefix("signal ")?.trim().parse().ok())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_and_numbers_round_trip() {
        for signal in 1..64 {
            assert_eq!(signal_number(&signal_name(signal)), Some(signal));
        }
        assert_eq!(signal_name(libc::SIGSEGV), "SIGSEGV");
        assert_eq!(signal_number("SIGSEGV"), Some(libc::SIGSEGV));
        assert_eq!(signal_number("mystery"), None);
    }
}
