//! Each agent CLI on `PATH`, with its version against its descriptor's minimum. An agent
//! that is not installed is not a problem; one too old to use is.

use cp_agent_cli::{Found, Presence};

use super::Check;

const GROUP: &str = "agents";

pub(super) fn checks(presence: &[Presence]) -> Vec<Check> {
    presence.iter().map(check).collect()
}

fn check(presence: &Presence) -> Check {
    let spec = presence.agent.spec();
    let name = spec.display_name;
    let (a, b, c) = spec.min_version;
    match &presence.found {
        Found::Missing => Check::info(
            GROUP,
            format!("{name}: `{}` is not on PATH", spec.program),
            Some(format!("optional; {}", spec.install)),
        ),
        Found::Usable(binary) => Check::ok(
            GROUP,
            format!(
                "{name}: {} at {} ({a}.{b}.{c} or newer needed)",
                binary.version,
                binary.path.display()
            ),
        ),
        found @ (Found::TooOld { .. } | Found::Unreadable { .. }) => {
            Check::fail(GROUP, format!("{name}: {found}"), spec.install)
        }
    }
}
