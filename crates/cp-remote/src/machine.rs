//! This machine, as a host names itself in what it reports.

/// This machine's name, as a `result` gives it: the kernel's host name, else
/// `/etc/hostname`, else `localhost`.
pub fn host_name() -> String {
    cp_orchestrate::machine_name()
}
