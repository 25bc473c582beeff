//! The last hook errors in `.context-pilot/logs/context-pilot.log`: what `context-pilot hook`
//! logged at WARN or ERROR (its target is `cp_tui::hook`). Errors older than the last hook
//! that ran cleanly are history, shown but not failed.

use std::io::{Read as _, Seek as _, SeekFrom};

use cp_base::Project;

use super::Check;

const GROUP: &str = "hooks";

/// How much of the log's end is read.
const TAIL_BYTES: u64 = 256 * 1024;

/// How many of the last errors are shown.
const SHOWN: usize = 3;

pub(super) fn checks(project: &Project) -> Vec<Check> {
    let path = project.logs_dir().join("context-pilot.log");
    let Some(text) = tail(&path) else {
        return vec![Check::ok(
            GROUP,
            "hook log: no log yet (no hook has run here)",
        )];
    };
    let mut errors: Vec<&str> = Vec::new();
    let mut runs = 0_usize;
    let mut failed_last = false;
    for (level, message) in text.lines().filter_map(hook_line) {
        runs += 1;
        failed_last = matches!(level, "WARN" | "ERROR");
        if failed_last {
            errors.push(message);
        }
    }
    if errors.is_empty() {
        return vec![Check::ok(
            GROUP,
            if runs == 0 {
                "hook log: no hook has run here".to_owned()
            } else {
                "hook log: no hook errors".to_owned()
            },
        )];
    }
    let start = errors.len().saturating_sub(SHOWN);
    let last = errors[start..].join(" | ");
    let what = format!(
        "hook log: {} hook error(s) in {}; the last: {last}",
        errors.len(),
        path.display()
    );
    if failed_last {
        vec![Check::fail(
            GROUP,
            what,
            "fix what the message names; the agent shows the same on its stderr",
        )]
    } else {
        vec![Check::info(
            GROUP,
            what,
            Some("the hooks ran cleanly since".into()),
        )]
    }
}

/// The log targets of `context-pilot hook`: its own crate, the deliveries it carries to the
/// next hook call, and the crate the hook lived in before (logs written by older versions).
const HOOK_TARGETS: [&str; 4] = [
    "cp_hook",
    "cp_host::carry",
    "cp_host::outbox",
    "cp_tui::hook",
];

/// The level and the message of a line `context-pilot hook` logged, e.g. `2026-… WARN
/// cp_hook: hook: … event="stop"` gives `("WARN", "hook: … event=\"stop\"")`.
fn hook_line(line: &str) -> Option<(&str, &str)> {
    let rest = line
        .trim_start_matches(|c: char| !c.is_whitespace())
        .trim_start();
    let (level, rest) = rest.split_once(char::is_whitespace)?;
    let rest = rest.trim_start();
    let (target, message) = rest.split_once(": ")?;
    HOOK_TARGETS
        .iter()
        .any(|hook| {
            target
                .strip_prefix(hook)
                .is_some_and(|rest| rest.is_empty() || rest.starts_with("::"))
        })
        .then_some((level, message.trim()))
}

/// The end of the log, from a line start.
fn tail(path: &std::path::Path) -> Option<String> {
    let mut file = std::fs::File::open(path).ok()?;
    let len = file.metadata().ok()?.len();
    let from = len.saturating_sub(TAIL_BYTES);
    file.seek(SeekFrom::Start(from)).ok()?;
    let mut bytes = Vec::new();
    file.read_to_end(&mut bytes).ok()?;
    let text = String::from_utf8_lossy(&bytes).into_owned();
    Some(if from > 0 {
        text.split_once('\n')
            .map_or_else(String::new, |(_, rest)| rest.to_owned())
    } else {
        text
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hook_lines_are_told_from_others() {
        let warn = "2026-11-26T09:00:00.000001Z  WARN cp_tui::hook: hook: ignored a malformed payload event=\"stop\"";
        assert_eq!(
            hook_line(warn),
            Some(("WARN", "hook: ignored a malformed payload event=\"stop\""))
        );
        let info = "2026-11-26T09:00:00.000001Z  INFO cp_tui::hook: hook event=\"stop\"";
        assert_eq!(hook_line(info).map(|(l, _)| l), Some("INFO"));
        let other = "2026-11-26T09:00:00.000001Z  WARN cp_tui::tui::app: something";
        assert_eq!(hook_line(other), None);
        let now = "2026-11-27T09:00:00.000001Z  WARN cp_hook::edit: hook: a callback failed";
        assert_eq!(hook_line(now).map(|(l, _)| l), Some("WARN"));
        let tui = "2026-11-27T09:00:00.000001Z  WARN cp_tui::app: something";
        assert_eq!(hook_line(tui), None);
        let lookalike = "2026-11-27T09:00:00.000001Z  WARN cp_hooks: something";
        assert_eq!(hook_line(lookalike), None);
    }
}
