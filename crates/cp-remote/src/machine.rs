//! This machine, as a host names itself in what it reports.

/// This machine's name, as a `result` gives it: the kernel's host name, else
/// `/etc/hostname`, else `localhost`.
pub fn host_name() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .or_else(|_| std::fs::read_to_string("/etc/hostname"))
        .map(|n| n.trim().to_owned())
        .ok()
        .filter(|n| !n.is_empty())
        .unwrap_or_else(|| "localhost".into())
}
