//! The processes a test started, seen through `/proc`: those below a process, those whose
//! command line holds a tag, and whether one still runs.

/// Every process below `pid` now, from /proc's parent links.
pub fn descendants_of(pid: i32) -> Vec<i32> {
    let mut parents = Vec::new();
    for child in all_pids() {
        let Ok(stat) = std::fs::read_to_string(format!("/proc/{child}/stat")) else {
            continue;
        };
        // The parent is the second field after the command name.
        if let Some(parent) = after_name(&stat).split_whitespace().nth(1)
            && let Ok(parent) = parent.parse::<i32>()
        {
            parents.push((child, parent));
        }
    }
    let mut found = vec![pid];
    let mut index = 0;
    while index < found.len() {
        let parent = found[index];
        found.extend(
            parents
                .iter()
                .filter(|(_, p)| *p == parent)
                .map(|(c, _)| *c),
        );
        index += 1;
    }
    found.remove(0);
    found
}

/// Whether process `pid` exists and is not a zombie.
pub fn running(pid: i32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .is_ok_and(|stat| after_name(&stat).split_whitespace().next() != Some("Z"))
}

/// Processes whose command line holds `needle`, anywhere on the machine.
pub fn processes_with(needle: &str) -> Vec<(i32, String)> {
    let mut found = Vec::new();
    for pid in all_pids() {
        let Ok(cmdline) = std::fs::read(format!("/proc/{pid}/cmdline")) else {
            continue;
        };
        let cmdline = String::from_utf8_lossy(&cmdline).replace('\0', " ");
        if cmdline.contains(needle) && running(pid) {
            found.push((pid, cmdline));
        }
    }
    found
}

/// The id of every process on the machine now.
fn all_pids() -> Vec<i32> {
    std::fs::read_dir("/proc")
        .unwrap()
        .flatten()
        .filter_map(|entry| entry.file_name().to_string_lossy().parse().ok())
        .collect()
}

/// The fields of a `/proc/<pid>/stat` after the command name (which may hold spaces and
/// parentheses: it ends at the last `)`).
fn after_name(stat: &str) -> &str {
    &stat[stat.rfind(')').unwrap() + 1..]
}
